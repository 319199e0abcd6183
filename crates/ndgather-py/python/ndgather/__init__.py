"""TensorFlow's ``tf.gather`` and ``tf.gather_nd`` on NumPy arrays.

The same results as TensorFlow 2.x bit for bit, the same checks and error messages, for
every NumPy dtype, reading arrays of any layout (memory maps included) without a copy and
releasing the GIL while the work runs.

>>> import ndgather as ng
>>> ng.gather(['p0', 'p1', 'p2', 'p3', 'p4', 'p5'], [2, 0, 2, 5])
array(['p2', 'p0', 'p2', 'p5'], dtype='<U2')
>>> ng.gather_nd([['a', 'b'], ['c', 'd']], [[0, 0], [1, 1]])
array(['a', 'd'], dtype='<U1')
>>> ng.gather([10, 11, 12], [[0], [5]])
Traceback (most recent call last):
    ...
ndgather.InvalidArgumentError: indices[1,0] = 5 is not in [0, 3)
"""

from __future__ import annotations

import numpy as np

from . import _core

__all__ = [
    "InvalidArgumentError",
    "gather",
    "gather_nd",
    "gather_grad",
    "gather_nd_grad",
    "take_along_axis",
    "take_along_axis_grad",
    "scatter_nd",
    "unsorted_segment_sum",
]

InvalidArgumentError = _core.InvalidArgumentError

_ndarray = np.ndarray


def _array(x):
    """``x`` as a NumPy array: arrays as they are (any layout, no copy)."""
    return x if type(x) is _ndarray else np.asarray(x)


def _indices(x):
    """Indices as an integer array the extension reads in place: native byte order and
    aligned (others are converted); an empty list means "no indices" rather than float64."""
    a = x if type(x) is _ndarray else np.asarray(x)
    if a.dtype.kind in "iu":
        if not (a.dtype.isnative and a.flags.aligned):
            a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    elif a.size == 0 and not isinstance(x, _ndarray):
        a = a.astype(np.intp)
    return a


def _numbers(x):
    """Numbers in native byte order, aligned, for the summing ops."""
    a = _array(x)
    if not (a.dtype.isnative and a.flags.aligned):
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    return a


def _out(out):
    if out is None or type(out) is _ndarray or isinstance(out, _ndarray):
        return out
    raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None,
           *, bad_indices="error", out=None):
    """Gather slices from ``params`` axis ``axis`` according to ``indices``.

    ``tf.gather`` on NumPy arrays: the output has shape
    ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]`` and
    ``params``' dtype, whatever it is (numbers, strings, datetimes, structured records,
    ``ml_dtypes.bfloat16``, Python objects).

    Args:
      params: the array to gather from; anything ``numpy.asarray`` accepts. Must be at
        least rank ``axis + 1``.
      indices: an array of any integer dtype, values in ``[0, params.shape[axis])``.
      validate_indices: deprecated in TensorFlow, does nothing (accepted for
        compatibility).
      axis: the axis of ``params`` to gather along; defaults to the first non-batch
        dimension (``batch_dims``). Negative counts from the end.
      batch_dims: the number of leading batch dimensions shared by ``params`` and
        ``indices``; negative counts from ``indices.ndim``.
      name: accepted for compatibility and ignored.
      bad_indices: what an index outside ``[0, params.shape[axis])`` does: ``"error"``
        (TensorFlow on the CPU: InvalidArgumentError naming the first bad index),
        ``"ignore"`` (TensorFlow on the GPU: its slice is zeros, empty strings, or None
        in object arrays), ``"clamp"`` (XLA: clamped into range), ``"wrap"`` (NumPy:
        negative indices count from the end).
      out: an array of the output's shape and ``params``' dtype to write into (any
        layout; it must not share memory with the inputs). It is returned.

    Returns:
      A new array that owns its buffer, or ``out``.

    Raises:
      InvalidArgumentError: a shape or index that TensorFlow refuses, with its message.
      TypeError: indices that are not integers, or an ``out`` of another dtype.
      MemoryError: an output too large to allocate.

    Examples:

    >>> import numpy as np, ndgather as ng
    >>> params = np.array([[0, 1.0, 2.0],
    ...                    [10.0, 11.0, 12.0],
    ...                    [20.0, 21.0, 22.0],
    ...                    [30.0, 31.0, 32.0]], dtype=np.float32)
    >>> ng.gather(params, indices=[3, 1])
    array([[30., 31., 32.],
           [10., 11., 12.]], dtype=float32)
    >>> ng.gather(params, indices=[2, 1], axis=1)
    array([[ 2.,  1.],
           [12., 11.],
           [22., 21.],
           [32., 31.]], dtype=float32)

    With ``batch_dims=1`` each row of ``indices`` picks from its own row of ``params``:

    >>> ng.gather([[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]],
    ...           [[2, 4], [0, 4], [1, 3]], axis=1, batch_dims=1)
    array([[1, 2],
           [3, 4],
           [5, 6]])

    Out-of-range indices:

    >>> ng.gather([10, 11, 12], [2, -1, 7], bad_indices="ignore")
    array([12,  0,  0])
    >>> ng.gather([10, 11, 12], [2, -1, 7], bad_indices="clamp")
    array([12, 10, 12])
    >>> ng.gather([10, 11, 12], [2, -1], bad_indices="wrap")
    array([12, 12])
    """
    return _core.gather(_array(params), _indices(indices), axis, batch_dims, bad_indices,
                        _out(out))


def gather_nd(params, indices, batch_dims=0, name=None, *, bad_indices="error", out=None):
    """Gather slices from ``params`` into an array with shape given by ``indices``.

    ``tf.gather_nd`` on NumPy arrays: ``indices[..., :]`` are index vectors into the
    leading dimensions of ``params`` (after ``batch_dims``); the output has shape
    ``indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]`` and ``params``'
    dtype.

    Args:
      params: the array to gather from; anything ``numpy.asarray`` accepts.
      indices: an array of any integer dtype, of rank at least 1.
      batch_dims: the number of leading batch dimensions (0 or more).
      name: accepted for compatibility and ignored.
      bad_indices: ``"error"``, ``"ignore"``, ``"clamp"`` or ``"wrap"``, as in
        :func:`gather`, applied to every component of an index vector.
      out: an array of the output's shape and ``params``' dtype to write into.

    Returns:
      A new array that owns its buffer, or ``out``.

    Raises:
      InvalidArgumentError: a shape or index vector that TensorFlow refuses.
      TypeError: indices that are not integers, or an ``out`` of another dtype.
      MemoryError: an output too large to allocate.

    Examples:

    >>> import ndgather as ng
    >>> ng.gather_nd(indices=[[1], [0]], params=[['a', 'b', 'c'], ['d', 'e', 'f']])
    array([['d', 'e', 'f'],
           ['a', 'b', 'c']], dtype='<U1')
    >>> params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]
    >>> ng.gather_nd(indices=[[0, 0, 1], [1, 0, 1]], params=params)
    array(['b0', 'b1'], dtype='<U2')
    >>> ng.gather_nd(batch_dims=1, indices=[[1], [0]], params=params)
    array([['c0', 'd0'],
           ['a1', 'b1']], dtype='<U2')
    >>> ng.gather_nd([[1, 2], [3, 4]], [[0, 2]])
    Traceback (most recent call last):
        ...
    ndgather.InvalidArgumentError: indices[0] = [0, 2] does not index into param shape [2,2]
    """
    return _core.gather_nd(_array(params), _indices(indices), batch_dims, bad_indices,
                           _out(out))


def gather_grad(params_shape, indices, grad, axis=None, batch_dims=0):
    """The gradient of :func:`gather` with respect to ``params``.

    Zeros of ``params_shape`` with each slice of ``grad`` (the upstream gradient, of the
    gather's output shape) added where it was gathered from; repeated indices add up, in
    the order of ``indices`` (deterministic).

    Args:
      params_shape: the shape of the gathered ``params``.
      indices: the gather's indices.
      grad: the upstream gradient: numbers (int, uint, float16/32/64, bfloat16, complex).
      axis: as in :func:`gather`.
      batch_dims: as in :func:`gather`.

    Returns:
      An array of ``params_shape`` and ``grad``'s dtype.

    >>> import numpy as np, ndgather as ng
    >>> ng.gather_grad((2, 3), [2, 2, 0], np.ones((2, 3)), axis=1)
    array([[1., 0., 2.],
           [1., 0., 2.]])
    """
    return _core.gather_grad(params_shape, _indices(indices), _numbers(grad), axis,
                             batch_dims)


def gather_nd_grad(params_shape, indices, grad, batch_dims=0):
    """The gradient of :func:`gather_nd` with respect to ``params``.

    Zeros of ``params_shape`` with each slice of ``grad`` added at its index vector
    (TensorFlow's ``scatter_nd``, with batch dimensions).

    >>> import numpy as np, ndgather as ng
    >>> ng.gather_nd_grad((2, 3), [[1, 2], [1, 2], [0, 0]], np.ones(3))
    array([[1., 0., 0.],
           [0., 0., 2.]])
    """
    return _core.gather_nd_grad(params_shape, _indices(indices), _numbers(grad),
                                batch_dims)


def take_along_axis(arr, indices, axis, *, bad_indices="error", out=None):
    """Take values from ``arr`` by matching 1-d index and data slices along ``axis``.

    ``numpy.take_along_axis`` (ONNX's ``GatherElements``): ``indices`` has ``arr``'s rank;
    each output element reads ``arr`` at its own position, except along ``axis``, where it
    reads at the index. On every other axis ``indices`` and ``arr`` broadcast as NumPy
    broadcasts (sizes equal, or one of them 1). The output has the broadcast shape, with
    ``indices``' size along ``axis``, and ``arr``'s dtype, whatever it is.

    Args:
      arr: the array to take from; anything ``numpy.asarray`` accepts.
      indices: an integer array of ``arr``'s rank.
      axis: the axis to take along; negative counts from the end. ``None`` takes from
        ``arr`` flattened (``indices`` must then be 1-d), as NumPy does.
      bad_indices: ``"error"`` (the default: InvalidArgumentError naming the first index
        outside ``[0, arr.shape[axis])``), ``"ignore"`` (zeros, empty strings or None),
        ``"clamp"``, or ``"wrap"`` (negative indices count from the end: NumPy's own
        behaviour).
      out: an array of the output's shape and ``arr``'s dtype to write into (any layout,
        not sharing memory with the inputs). It is returned.

    Returns:
      A new array that owns its buffer, or ``out``.

    Raises:
      InvalidArgumentError: ranks that differ, an axis out of range, shapes that do not
        broadcast, or a bad index under ``"error"``, ``"clamp"`` or ``"wrap"``.
      TypeError: indices that are not integers.

    NumPy's own examples:

    >>> import numpy as np, ndgather as ng
    >>> a = np.array([[10, 30, 20], [60, 40, 50]])
    >>> ng.take_along_axis(a, np.argsort(a, axis=1), axis=1)
    array([[10, 20, 30],
           [40, 50, 60]])
    >>> ng.take_along_axis(a, np.expand_dims(np.argmax(a, axis=1), axis=1), axis=1)
    array([[30],
           [60]])
    >>> ng.take_along_axis(a, [[-1]], axis=1, bad_indices="wrap")
    array([[20],
           [50]])
    """
    arr = _array(arr)
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    return _core.take_along_axis(arr, _indices(indices), axis, bad_indices, _out(out))


def take_along_axis_grad(arr_shape, indices, grad, axis, *, bad_indices="error"):
    """The gradient of :func:`take_along_axis` with respect to ``arr``.

    Zeros of ``arr_shape`` with each element of ``grad`` (the upstream gradient, of the
    output's shape) added where it was taken from, summed over repeats and over the axes
    ``arr`` was broadcast along, in row-major order (deterministic). Elements whose index
    the policy leaves filled get no gradient.

    >>> import numpy as np, ndgather as ng
    >>> ng.take_along_axis_grad((2, 3), [[2, 2], [0, 1]], np.array([[1., 2.], [3., 4.]]), axis=1)
    array([[0., 0., 3.],
           [3., 4., 0.]])
    """
    return _core.take_along_axis_grad(arr_shape, _indices(indices), _numbers(grad), axis,
                                      bad_indices)


def scatter_nd(indices, updates, shape, *, bad_indices="error"):
    """``tf.scatter_nd``: zeros of ``shape`` with ``updates`` added at ``indices``.

    Each index vector ``indices[..., :]`` names a slice of the output; repeated vectors
    add up (deterministically). ``bad_indices="ignore"`` drops out-of-range vectors, as
    TensorFlow's ``bad_indices_policy="IGNORE"``.

    >>> import numpy as np, ndgather as ng
    >>> ng.scatter_nd([[4], [3], [1], [7]], np.array([9, 10, 11, 12]), [8])
    array([ 0, 11,  0, 10,  9,  0,  0, 12])
    """
    return _core.scatter_nd(_indices(indices), _numbers(updates), shape, bad_indices)


def unsorted_segment_sum(data, segment_ids, num_segments, *, bad_indices="error"):
    """``tf.math.unsorted_segment_sum``: row ``k`` of the output sums the slices of
    ``data`` whose ``segment_ids`` are ``k``.

    ``segment_ids.shape`` must be a prefix of ``data.shape``; ids outside
    ``[0, num_segments)`` are an error (``bad_indices="ignore"`` drops them, as TensorFlow
    on the GPU).

    >>> import numpy as np, ndgather as ng
    >>> ng.unsorted_segment_sum(np.array([[1, 2], [3, 4], [5, 6]]), [0, 1, 0], 2)
    array([[6, 8],
           [3, 4]])
    """
    return _core.unsorted_segment_sum(_numbers(data), _indices(segment_ids), num_segments,
                                      bad_indices)
