"""Type stub of ``ndgather``: TensorFlow's tf.gather / tf.gather_nd on NumPy arrays."""
from typing import Any, Literal, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

BadIndices = Literal["error", "ignore", "clamp", "wrap"]

class InvalidArgumentError(ValueError): ...

def gather(params: ArrayLike, indices: ArrayLike, validate_indices: Any = None,
           axis: Optional[int] = None, batch_dims: int = 0, name: Optional[str] = None, *,
           bad_indices: BadIndices = "error", out: Optional[np.ndarray] = None) -> np.ndarray: ...
def gather_nd(params: ArrayLike, indices: ArrayLike, batch_dims: int = 0,
              name: Optional[str] = None, *, bad_indices: BadIndices = "error",
              out: Optional[np.ndarray] = None) -> np.ndarray: ...
def gather_grad(params_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                axis: Optional[int] = None, batch_dims: int = 0) -> np.ndarray: ...
def gather_nd_grad(params_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                   batch_dims: int = 0) -> np.ndarray: ...
def scatter_nd(indices: ArrayLike, updates: ArrayLike, shape: Sequence[int], *,
               bad_indices: BadIndices = "error") -> np.ndarray: ...
def unsorted_segment_sum(data: ArrayLike, segment_ids: ArrayLike, num_segments: int, *,
                         bad_indices: BadIndices = "error") -> np.ndarray: ...
