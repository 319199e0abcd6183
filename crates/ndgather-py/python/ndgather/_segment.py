"""TensorFlow's segment reductions and the fused ``gather_segment``, through the core's
registry (``_core.run_op``). Semantics, identities, messages and gradients are TensorFlow
2.21's; see ``ndgather.segment`` in the Rust documentation."""
from __future__ import annotations

import operator
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from . import _core, _staging
# The package's converters, defined before it imports this module (an import inside each
# call would cost about 0.3 us a call).
from . import _indices, _like, _numbers

_ndarray = np.ndarray

SegmentPolicy = Literal["error", "ignore", "clamp", "negative", "wrap"]


# Each op below calls the door itself, its name made once: a helper between them and the
# door costs a tenth of a tiny call.
def _sorted(reduce: str):
    name = f"segment_{reduce}"

    def op(data: ArrayLike, segment_ids: ArrayLike) -> np.ndarray:
        if type(data) is not _ndarray and (fw := _staging.readable(data, segment_ids)):
            return fw.run(name, [data, segment_ids])
        try:
            return _like(data, _core.run_op(name, [_numbers(data), _indices(segment_ids)]))
        except Exception:
            # JAX's tracers have no memory; checked only here, off the tiny call's path.
            if (fw := _staging.framework(data, segment_ids)) is None:
                raise
        return fw.run(name, [data, segment_ids])
    return op


def _unsorted(reduce: str):
    name = f"unsorted_segment_{reduce}"

    def op(data: ArrayLike, segment_ids: ArrayLike, num_segments: int, *,
           bad_indices: SegmentPolicy = "error") -> np.ndarray:
        attrs = {"num_segments": num_segments, "bad_indices": bad_indices}
        if type(data) is not _ndarray and (fw := _staging.readable(data, segment_ids)):
            return fw.run(name, [data, segment_ids], attrs)
        try:
            return _like(data, _core.run_op(name, [_numbers(data), _indices(segment_ids)],
                                            attrs))
        except Exception:
            if (fw := _staging.framework(data, segment_ids)) is None:
                raise
        return fw.run(name, [data, segment_ids], attrs)
    return op


def _named(op, name: str, doc: str):
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    op.__module__ = "ndgather"
    return op


segment_sum = _named(_sorted("sum"), "segment_sum", """``tf.math.segment_sum``: row ``s`` sums
the rows of ``data`` whose sorted ``segment_ids`` are ``s``; the output has ``last id + 1``
rows, and a gap holds 0.

>>> import numpy as np, ndgather as ng
>>> ng.segment_sum(np.array([[1, 2], [3, 4], [5, 6]]), [0, 0, 2])
array([[4, 6],
       [0, 0],
       [5, 6]])
""")
segment_mean = _named(_sorted("mean"), "segment_mean", """``tf.math.segment_mean``: the
mean of each sorted segment's rows (integer division for integers); a gap holds 0.

>>> import numpy as np, ndgather as ng
>>> ng.segment_mean(np.array([1.0, 2.0, 6.0]), [0, 0, 1])
array([1.5, 6. ])
""")
segment_max = _named(_sorted("max"), "segment_max", """``tf.math.segment_max``: the
maximum of each sorted segment's rows; a gap holds 0.

>>> import numpy as np, ndgather as ng
>>> ng.segment_max(np.array([1.0, 5.0, 2.0]), [0, 0, 2])
array([5., 0., 2.])
""")
segment_min = _named(_sorted("min"), "segment_min", """``tf.math.segment_min``: the
minimum of each sorted segment's rows; a gap holds 0.

>>> import numpy as np, ndgather as ng
>>> ng.segment_min(np.array([1.0, 5.0, 2.0]), [0, 0, 1])
array([1., 2.])
""")
segment_prod = _named(_sorted("prod"), "segment_prod", """``tf.math.segment_prod``: the
product of each sorted segment's rows; a gap holds 1.

>>> import numpy as np, ndgather as ng
>>> ng.segment_prod(np.array([2, 3, 4]), [0, 0, 2])
array([6, 1, 4])
""")
unsorted_segment_sum = _named(_unsorted("sum"), "unsorted_segment_sum", """
``tf.math.unsorted_segment_sum``: row ``k`` of the output sums the slices of ``data``
whose ``segment_ids`` are ``k``.

``segment_ids.shape`` must be a prefix of ``data.shape``; negative ids are dropped and ids
of ``num_segments`` or more are an error (``bad_indices="ignore"`` drops them, as
TensorFlow on the GPU).

>>> import numpy as np, ndgather as ng
>>> ng.unsorted_segment_sum(np.array([[1, 2], [3, 4], [5, 6]]), [0, 1, 0], 2)
array([[6, 8],
       [3, 4]])
""")
unsorted_segment_mean = _named(_unsorted("mean"), "unsorted_segment_mean", """
``tf.math.unsorted_segment_mean``: each segment's sum divided by its count (at least 1),
counted in ``data``'s dtype; for integers Python's ``/`` makes the result float32 (8- and
16-bit) or float64, as TensorFlow's.

>>> import numpy as np, ndgather as ng
>>> ng.unsorted_segment_mean(np.array([1, 2, 6], dtype=np.int32), [0, 0, 1], 3)
array([1.5, 6. , 0. ])
""")
unsorted_segment_max = _named(_unsorted("max"), "unsorted_segment_max", """
``tf.math.unsorted_segment_max``: the maximum of each segment's rows; an empty segment
holds the dtype's lowest value, as TensorFlow's.

>>> import numpy as np, ndgather as ng
>>> ng.unsorted_segment_max(np.array([1, 5, 2], dtype=np.int8), [0, 0, 2], 3)
array([   5, -128,    2], dtype=int8)
""")
unsorted_segment_min = _named(_unsorted("min"), "unsorted_segment_min", """
``tf.math.unsorted_segment_min``: the minimum of each segment's rows; an empty segment
holds the dtype's highest value.

>>> import numpy as np, ndgather as ng
>>> ng.unsorted_segment_min(np.array([1, 5, 2], dtype=np.uint8), [0, 0, 2], 3)
array([  1, 255,   2], dtype=uint8)
""")
unsorted_segment_prod = _named(_unsorted("prod"), "unsorted_segment_prod", """
``tf.math.unsorted_segment_prod``: the product of each segment's rows; an empty segment
holds 1.

>>> import numpy as np, ndgather as ng
>>> ng.unsorted_segment_prod(np.array([2, 3, 4]), [1, 1, -1], 2)
array([1, 6])
""")
unsorted_segment_sqrt_n = _named(_unsorted("sqrt_n"), "unsorted_segment_sqrt_n", """
``tf.math.unsorted_segment_sqrt_n``: each segment's sum divided by the square root of its
count (at least 1); floating-point dtypes only.

>>> import numpy as np, ndgather as ng
>>> ng.unsorted_segment_sqrt_n(np.array([3.0, 1.0, 4.0, 1.0]), [0, 0, 0, 0], 1)
array([4.5])
""")


def gather_segment(x: ArrayLike, src: ArrayLike, dst: ArrayLike, num_segments: int,
                   reduce: Literal["sum", "mean", "max", "min", "prod", "sqrt_n"] = "sum",
                   ) -> np.ndarray:
    """Graph message passing, fused: row ``dst[e]`` of the output reduces row ``src[e]`` of
    ``x`` for every edge ``e``; exactly ``unsorted_segment_<reduce>(gather(x, src), dst,
    num_segments)``, bit for bit, without the gathered rows in memory.

    >>> import numpy as np, ndgather as ng
    >>> x = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]], dtype=np.float32)
    >>> ng.gather_segment(x, [0, 2, 1], [1, 1, 0], 2)
    array([[ 2., 20.],
           [ 4., 40.]], dtype=float32)
    """
    attrs = {"num_segments": num_segments, "reduce": reduce}
    if (fw := _staging.framework(x, src, dst)) is not None:
        return fw.run("gather_segment", [x, src, dst], attrs)
    return _like(x, _core.run_op("gather_segment", [_numbers(x), _indices(src), _indices(dst)],
                                 attrs))


def scatter_nd(indices: ArrayLike, updates: ArrayLike, shape: Any, *,
               bad_indices: Literal["error", "ignore"] = "error") -> np.ndarray:
    """``tf.scatter_nd``: zeros of ``shape`` with ``updates`` added at ``indices``.

    Each index vector ``indices[..., :]`` names a slice of the output; repeated vectors
    add up (deterministically). ``bad_indices="ignore"`` drops out-of-range vectors, as
    TensorFlow's ``bad_indices_policy="IGNORE"``.

    >>> import numpy as np, ndgather as ng
    >>> ng.scatter_nd([[4], [3], [1], [7]], np.array([9, 10, 11, 12]), [8])
    array([ 0, 11,  0, 10,  9,  0,  0, 12])
    """
    if isinstance(shape, (int, np.integer)):
        raise TypeError(f"shape must be a sequence of integers, not {type(shape).__name__}")
    dims = [operator.index(d) for d in shape]
    attrs = {"shape": dims, "bad_indices": bad_indices}
    if (fw := _staging.framework(indices, updates)) is not None:
        return fw.run("scatter_nd", [indices, updates], attrs)
    return _like(updates, _core.run_op("scatter_nd", [_indices(indices), _numbers(updates)],
                                       attrs))
