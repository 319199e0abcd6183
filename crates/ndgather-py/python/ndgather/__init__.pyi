"""Type stub of ``ndgather``: TensorFlow's tf.gather / tf.gather_nd on NumPy arrays."""
from typing import Any, Literal, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

BadIndices = Literal["error", "ignore", "clamp", "wrap", "fill"]

class InvalidArgumentError(ValueError): ...

def gather(params: ArrayLike, indices: ArrayLike, validate_indices: Any = None,
           axis: Optional[int] = None, batch_dims: int = 0, name: Optional[str] = None, *,
           bad_indices: BadIndices = "error", fill_value: Any = None,
           out: Optional[np.ndarray] = None) -> np.ndarray: ...
def gather_nd(params: ArrayLike, indices: ArrayLike, batch_dims: int = 0,
              name: Optional[str] = None, *, bad_indices: BadIndices = "error",
              fill_value: Any = None, out: Optional[np.ndarray] = None) -> np.ndarray: ...
def gather_grad(params_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                axis: Optional[int] = None, batch_dims: int = 0, *,
                bad_indices: BadIndices = "error") -> np.ndarray: ...
def gather_nd_grad(params_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                   batch_dims: int = 0, *, bad_indices: BadIndices = "error") -> np.ndarray: ...
def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: Optional[int], *,
                    bad_indices: BadIndices = "error", fill_value: Any = None,
                    out: Optional[np.ndarray] = None) -> np.ndarray: ...
def take_along_axis_grad(arr_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                         axis: int, *, bad_indices: BadIndices = "error") -> np.ndarray: ...
Sparse = Any  # (indices, values, dense_shape), or an object with those attributes
IndexedSlices = tuple[np.ndarray, np.ndarray, list[int]]

def embedding_lookup(params: ArrayLike | Sequence[ArrayLike], ids: ArrayLike,
                     partition_strategy: Literal["mod", "div"] = "mod",
                     max_norm: Optional[float] = None) -> np.ndarray: ...
def embedding_lookup_grad(params: ArrayLike | Sequence[ArrayLike], ids: ArrayLike, grad: ArrayLike,
                          partition_strategy: Literal["mod", "div"] = "mod",
                          max_norm: Optional[float] = None) -> list[IndexedSlices]: ...
def embedding_lookup_sparse(params: ArrayLike | Sequence[ArrayLike], sp_ids: Sparse,
                            sp_weights: Optional[Sparse],
                            combiner: Literal["sum", "mean", "sqrtn"] = "mean",
                            partition_strategy: Literal["mod", "div"] = "mod",
                            max_norm: Optional[float] = None) -> np.ndarray: ...
def embedding_lookup_sparse_grad(params: ArrayLike | Sequence[ArrayLike], sp_ids: Sparse,
                                 sp_weights: Optional[Sparse], grad: ArrayLike,
                                 combiner: Literal["sum", "mean", "sqrtn"] = "mean",
                                 partition_strategy: Literal["mod", "div"] = "mod",
                                 max_norm: Optional[float] = None) -> list[IndexedSlices]: ...
def scatter_nd(indices: ArrayLike, updates: ArrayLike, shape: Sequence[int], *,
               bad_indices: BadIndices = "error") -> np.ndarray: ...
def unsorted_segment_sum(data: ArrayLike, segment_ids: ArrayLike, num_segments: int, *,
                         bad_indices: BadIndices = "error") -> np.ndarray: ...
def set_output_cache_limit(max_bytes: int) -> int: ...
