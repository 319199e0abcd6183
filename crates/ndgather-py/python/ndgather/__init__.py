"""TensorFlow's gather family on NumPy arrays: the gathers, ``take_along_axis`` and
``put_along_axis``, the embedding lookups and ``embedding_bag``, the scatters, the segment
reductions, ragged operands and gradients.

The same results as TensorFlow 2.x bit for bit, the same checks and error messages, for
every NumPy dtype, reading arrays of any layout (memory maps included) without a copy and
releasing the GIL while the work runs.

Examples:
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

import contextlib
import sys
from typing import Any, Callable, Literal, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _core, _ragged, _staging, _torch
from ._staged_call import fill_bytes as _fill

#: Checked before a framework's module is asked, so that a caller without it pays a dict
#: lookup.
_modules = sys.modules
from ._ragged import Ragged

#: The package's version: the Rust crates', one for every front end (``CHANGELOG.md``).
__version__: str = _core.__version__

#: The bad-index policies, by the names every front end uses (the core's ``BadIndices``).
BadIndices = Literal["error", "ignore", "clamp", "negative", "wrap", "fill"]
BagMode = Literal["sum", "mean", "max"]
Reduce = Literal["sum", "prod", "mean", "amax", "amin"]
PartitionStrategy = Literal["mod", "div"]
Combiner = Literal["sum", "mean", "sqrtn"]
#: A ``tf.sparse.SparseTensor``'s parts ``(indices, values, dense_shape)``, or an object with
#: those attributes.
Sparse = Any
#: TensorFlow's ``IndexedSlices``: ``(indices, values, dense_shape)``.
IndexedSlices = tuple[np.ndarray, np.ndarray, list[int]]

__all__ = [
    "InvalidArgumentError",
    "IndexOutOfBoundsError",
    "take",
    "gather",
    "gather_nd",
    "Ragged",
    "gather_grad",
    "gather_nd_grad",
    "ragged_gather_grad",
    "take_along_axis",
    "take_along_axis_grad",
    "put_along_axis",
    "embedding_lookup",
    "embedding_lookup_grad",
    "embedding_lookup_sparse",
    "embedding_lookup_sparse_grad",
    "embedding_bag",
    "embedding_bag_grad",
    "scatter_nd",
    "segment_sum",
    "segment_mean",
    "segment_max",
    "segment_min",
    "segment_prod",
    "unsorted_segment_sum",
    "unsorted_segment_mean",
    "unsorted_segment_max",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
    "gather_segment",
    "tensor_scatter_nd_update",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_max",
    "scatter_reduce",
    "NotFoundError",
    "set_output_cache_limit",
]

InvalidArgumentError = _core.InvalidArgumentError
NotFoundError = _core.NotFoundError


class IndexOutOfBoundsError(InvalidArgumentError, IndexError):
    """An index outside its dimension, from the NumPy and array API functions (:func:`take`,
    :func:`take_along_axis`): an ``IndexError``, as NumPy raises, and an
    ``InvalidArgumentError``, with TensorFlow's message naming the index."""

_ndarray = np.ndarray

#: DLPack's device types, by number, for the message that refuses a device array.
_DLPACK_DEVICES = {2: "CUDA", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm",
                   12: "ExtDev", 13: "CUDA managed", 14: "oneAPI", 15: "WebGPU",
                   16: "Hexagon", 17: "MAIA"}
#: Host memory that NumPy reads: CPU, CUDA and ROCm pinned host memory.
_DLPACK_HOST = (1, 3, 11)


def _is_torch(x) -> bool:
    """Whether ``x`` is a PyTorch tensor, of a subclass too (one only PyTorch's own module
    names would be missed)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _foreign(x):
    """``x``, an object of another array library that speaks DLPack (a PyTorch tensor, a
    JAX array, a CuPy host array), as a NumPy view of its memory, any strides, no copy."""
    device, ordinal = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if device not in _DLPACK_HOST:
        where = _DLPACK_DEVICES.get(int(device), f"DLPack device type {int(device)}")
        raise TypeError(
            f"ndgather works on arrays in the CPU's memory; this {type(x).__name__} is on "
            f"{where} device {ordinal}: copy it to the CPU first (PyTorch: .cpu(), JAX: "
            f"jax.device_put(x, jax.devices('cpu')[0]), CuPy: .get())")
    if _is_torch(x):
        if x.is_neg() or x.is_conj():
            # PyTorch's DLPack export gives a negative view's memory as it is, not its values
            # (and refuses some conjugate ones): the values, copied.
            x = x.resolve_conj().resolve_neg()
        if x.dtype is sys.modules["torch"].bfloat16:
            # DLPack gives NumPy no bfloat16: the tensor's bits, as ml_dtypes' bfloat16.
            from . import _torch
            return _torch._numpy(x)
    return np.from_dlpack(x)


def _array(x):
    """``x`` as a NumPy array: arrays as they are (any layout, no copy), a flat Arrow array's
    values, DLPack objects viewed in place, anything else through ``numpy.asarray``."""
    if type(x) is _ndarray:
        return x
    if type(x) is list or type(x) is tuple:
        return np.asarray(x)  # no library's array: NumPy's conversion, as below
    library = _library(x)
    if library == "pyarrow" and hasattr(x, "null_count"):
        return _arrow_values(x)
    if library == "tensorflow" and getattr(x.dtype, "name", None) == "string":
        # TensorFlow's __dlpack__ stops the process on a string tensor.
        return x.numpy()
    if not isinstance(x, _ndarray) and hasattr(type(x), "__dlpack__"):
        return _foreign(x)
    return np.asarray(x)


def _arrow_values(x):
    """A flat Arrow array's values as NumPy holds them: numbers and bools as themselves, dates,
    times, timestamps and durations as NumPy's (a null as NaT), and every other type
    (strings, binary, decimals, intervals, nested types) as an object array of Python values;
    a null, where the values cannot hold one, as ``None``. Only those types are asked of
    ``to_numpy``: pyarrow's own conversion stops the process on some others."""
    types = sys.modules["pyarrow"].types
    t = x.type
    if types.is_temporal(t) and not types.is_interval(t):
        return x.to_numpy(zero_copy_only=False)
    if not x.null_count and (types.is_integer(t) or types.is_floating(t)
                             or types.is_boolean(t)):
        return x.to_numpy(zero_copy_only=False)
    return np.array(x.to_pylist(), dtype=object)


def _library(x) -> str:
    """The top-level module of ``x``'s type (``"torch"``, ``"jax"``, ``"jaxlib"``, ...)."""
    return type(x).__module__.partition(".")[0]


def _like(x, result):
    """``result``, a NumPy array, in the namespace of ``x`` (the array API's convention):
    a ``torch.Tensor`` for a PyTorch ``x`` (sharing ``result``'s memory), a ``jax.Array``
    for a JAX ``x`` (JAX shares only 64-byte-aligned memory and copies the rest), an array
    of any other library of the array API through its namespace's ``from_dlpack``, a flat
    Arrow array of ``x``'s type for a flat Arrow ``x`` (where the result has one dimension),
    NumPy for everything else."""
    if type(x) is _ndarray or isinstance(x, _ndarray):
        return result
    library = _library(x)
    if library == "torch":
        if result.dtype.name == "bfloat16":  # (no bfloat16 through DLPack, as in _foreign)
            from . import _torch
            return _torch._tensor(result)
        return sys.modules["torch"].from_dlpack(result)
    if library in ("jax", "jaxlib"):
        return sys.modules["jax"].dlpack.from_dlpack(result)
    if library == "pyarrow" and hasattr(x, "null_count") and result.ndim == 1:
        # x's type where the op kept the kind of its values; an op that changed it (a mean
        # of integers) gives the type pyarrow infers.
        kept = result.dtype.kind == "O" or result.dtype == _arrow_values(x[:0]).dtype
        return sys.modules["pyarrow"].array(result, type=x.type if kept else None,
                                            from_pandas=True)
    namespace = getattr(x, "__array_namespace__", None)
    if namespace is not None:
        return namespace().from_dlpack(result)
    return result


def _native(a):
    """`a` itself if its dtype is in native byte order and it is aligned, else a copy that is
    (np.ascontiguousarray would keep a contiguous array that is not aligned)."""
    if a.dtype.isnative and a.flags.aligned:
        return a
    return np.require(a, a.dtype.newbyteorder("="), ["C", "A"])


def _in_place(*arrays: np.ndarray) -> bool:
    """Whether the extension reads every array in place (native byte order, aligned): an
    error it raised for them is the caller's, else the converting path is taken."""
    return all(a.dtype.isnative and a.flags.aligned for a in arrays)


def _indices(x):
    """Indices as an integer array the extension reads in place: native byte order and
    aligned (others are converted); an empty list means "no indices" rather than float64."""
    a = x if type(x) is _ndarray else _array(x)
    if a.dtype.kind in "iu":
        a = _native(a)
    elif a.size == 0 and not isinstance(x, _ndarray):
        a = a.astype(np.intp)
    return a


def _numbers(x):
    """Numbers in native byte order, aligned, for the summing ops."""
    return _native(_array(x))


class _numpy_errors:
    """NumPy's classes for the NumPy functions: an index out of range is also an
    ``IndexError``, an axis out of range NumPy's ``AxisError`` with NumPy's message. (A
    class: ``contextlib.contextmanager`` costs a third of a tiny call.)"""

    __slots__ = ("axis", "ndim")

    def __init__(self, axis: int, ndim: int) -> None:
        self.axis, self.ndim = axis, ndim

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        if kind is not None and issubclass(kind, _core.BadIndexError):
            raise IndexOutOfBoundsError(str(error)) from None
        if kind is not None and issubclass(kind, _core.AxisError):
            raise np.exceptions.AxisError(self.axis, self.ndim) from None
        return False


def _flat_indices(indices: ArrayLike) -> None:
    """NumPy's precondition of ``axis=None`` in the along-axis functions, checked before the
    flattening that this wrapper does (and before the dtype, as NumPy checks it)."""
    if np.ndim(indices) != 1:
        raise ValueError("when axis=None, `indices` must have a single dimension.")


def _put_along_axis(target: np.ndarray, indices: ArrayLike, values: np.ndarray, axis: int,
                    bad_indices: str) -> None:
    """The registered ``put_along_axis``, writing ``target`` in place."""
    _core.run_op("put_along_axis", [None, _indices(indices), values],
                 {"axis": axis, "bad_indices": bad_indices}, target, True)


def _index_errors_first(target: np.ndarray, indices: ArrayLike, axis: int) -> None:
    """Raises the axis or indices error, if any, of a ``put_along_axis`` whose values could
    not be cast: NumPy checks those before it reads a value. The core's own checks run on
    no values, which cannot broadcast to a non-empty result, so nothing is written; that
    broadcast error is the values', and the caller raises the cast's instead."""
    with _numpy_errors(axis, target.ndim):
        try:
            _put_along_axis(target, indices, np.empty(0, target.dtype), axis, "error")
        except InvalidArgumentError as e:
            if not str(e).startswith("shape mismatch: value array"):
                raise


def _out(out):
    """``out`` as a NumPy array to write into: itself, or a writable view of a DLPack
    object's memory (JAX arrays are immutable, and a read-only DLPack tensor is refused by
    NumPy's view of it)."""
    if out is None or type(out) is _ndarray or isinstance(out, _ndarray):
        return out
    if _library(out) in ("jax", "jaxlib"):
        raise TypeError("out cannot be a JAX array: JAX arrays are immutable")
    if _is_torch(out):
        if out.is_neg() or out.is_conj():
            # (Its values are its memory's negated or conjugated: a write into the memory
            # would be read back changed, and one into a resolved copy lost.)
            raise ValueError(
                f"out is a {'negative' if out.is_neg() else 'conjugate'} view of a PyTorch "
                "tensor, whose memory is not its values: write into a tensor without the bit "
                "(.resolve_neg() / .resolve_conj() copy it), then copy the result back")
        from . import _torch
        _torch._no_tangents([out])  # the write would leave a dual tensor's tangent as it was
    if hasattr(type(out), "__dlpack__"):
        view = _foreign(out)
        if not view.flags.writeable:
            raise ValueError(f"out is read-only: this {type(out).__name__} cannot be written")
        return view
    raise TypeError(f"out must be an array (NumPy, or any library's through DLPack), got "
                    f"{type(out).__name__}")


def _result(x, out, result):
    """What a function returns: ``out`` as the caller gave it, or ``result`` in ``x``'s
    namespace."""
    return out if out is not None else _like(x, result)


def _no_out_for_ragged(out) -> None:
    if out is not None:
        raise TypeError("out is not taken with ragged operands: a ragged result is new")


def gather(params: ArrayLike, indices: ArrayLike, validate_indices: Any = None,
           axis: Optional[int] = None, batch_dims: int = 0, name: Optional[str] = None, *,
           bad_indices: BadIndices = "error", fill_value: Any = None,
           out: Optional[np.ndarray] = None) -> np.ndarray:
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
        in object arrays), ``"clamp"`` (XLA: clamped into range), ``"negative"`` (NumPy's
        indexing and the array API's: negative indices count from the end, ``-n`` is the
        first), ``"wrap"`` (NumPy's and JAX's ``mode="wrap"``: modulo the dimension),
        ``"fill"`` (JAX's ``mode="fill"``: the slice is ``fill_value``).
      fill_value: what ``"fill"`` writes, converted to ``params``' dtype by NumPy; by
        default JAX's: NaN for floating and complex dtypes, the minimum of signed integers,
        the maximum of unsigned ones, True for bool; empty strings, zeros or None for the
        other dtypes.
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
    >>> ng.gather([10, 11, 12], [2, -1], bad_indices="negative")
    array([12, 12])
    >>> ng.gather([10, 11, 12], [7, -4], bad_indices="wrap")
    array([11, 12])
    >>> ng.gather([1.5, 2.5], [1, 7], bad_indices="fill")
    array([2.5, nan])
    >>> ng.gather([10, 11, 12], [2, 7], bad_indices="fill", fill_value=-1)
    array([12, -1])

    Ragged operands, as ``tf.gather`` takes a ``tf.RaggedTensor``: ``params`` or
    ``indices`` may be an :class:`ndgather.Ragged`, a ``tf.RaggedTensor`` (read through its
    ``flat_values`` and ``row_splits``; TensorFlow is imported only for one), a pyarrow
    ``ListArray``, ``LargeListArray`` or ``FixedSizeListArray`` (its buffers read in place;
    null lists are refused) or a Polars ``Series`` of lists (through the Arrow C Data
    Interface). The result comes back in params' form (in indices' where
    params is dense), dense where nothing in it is ragged; ``out`` is not taken. An index
    inside a row is checked against that row's length, which TensorFlow does not do.

    >>> rt = ng.Ragged.from_list([[1, 2], [], [3, 4, 5]])
    >>> ng.gather(rt, [2, 0])
    Ragged([[3, 4, 5], [1, 2]])
    >>> ng.gather(rt, ng.Ragged.from_list([[1, 0], [], [2]]), batch_dims=1)
    Ragged([[2, 1], [], [5]])
    >>> ng.gather(rt, ng.Ragged.from_list([[2], [], [3]]), batch_dims=1)
    Traceback (most recent call last):
        ...
    ndgather.InvalidArgumentError: indices[0] = 2 is not in [0, 2)
    """
    if type(params) is _ndarray and type(indices) is _ndarray and out is None \
            and fill_value is None:
        # NumPy arrays as they are: the extension checks everything; only indices it cannot
        # read in place (another byte order, misaligned) take the path that converts them.
        try:
            return _core.gather(params, indices, axis, batch_dims, bad_indices, None, None)
        except (TypeError, ValueError):
            if _in_place(indices):
                raise
    if (fw := _staging.framework(params, indices)) is not None:
        fw.no_out("gather", out)
        params = fw.asarray(params)
        return fw.run("gather", [params, indices], {
            "axis": axis, "batch_dims": batch_dims, "bad_indices": bad_indices,
            "fill_value": fw.fill(bad_indices, fill_value, params)})
    if _ragged.is_ragged(params) or _ragged.is_ragged(indices):
        _no_out_for_ragged(out)
        return _ragged.call("gather", params, indices, axis, batch_dims, bad_indices,
                            fill_value, _array, _indices, _fill)
    p = _array(params)
    r = _core.gather(p, _indices(indices), axis, batch_dims, bad_indices,
                     _fill(bad_indices, fill_value, p.dtype), _out(out))
    return r if out is None and type(params) is _ndarray else _result(params, out, r)


def gather_nd(params: ArrayLike, indices: ArrayLike, batch_dims: int = 0,
              name: Optional[str] = None, *, bad_indices: BadIndices = "error",
              fill_value: Any = None, out: Optional[np.ndarray] = None) -> np.ndarray:
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
      bad_indices: ``"error"``, ``"ignore"``, ``"clamp"``, ``"negative"``, ``"wrap"`` or
        ``"fill"``, as
        in :func:`gather`, applied to every component of an index vector.
      fill_value: what ``"fill"`` writes, as in :func:`gather`.
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

    Ragged operands are taken as :func:`gather` takes them, and ``batch_dims > 0`` too,
    which TensorFlow refuses for them ("batch_dims != 0 is not supported for ragged gather
    yet"): the result is the ``batch_dims=0`` gather_nd of each batch row.

    >>> rt = ng.Ragged.from_list([[1, 2], [], [3, 4, 5]])
    >>> ng.gather_nd(rt, [[2, 1], [0, 0]])
    array([4, 1])
    >>> indices = ng.Ragged.from_list([[[1], [0]], [], [[2]]], ragged_rank=1)
    >>> ng.gather_nd(rt, indices, batch_dims=1)
    Ragged([[2, 1], [], [5]])
    """
    if type(params) is _ndarray and type(indices) is _ndarray and out is None \
            and fill_value is None:
        try:  # as in gather
            return _core.gather_nd(params, indices, batch_dims, bad_indices, None, None)
        except (TypeError, ValueError):
            if _in_place(indices):
                raise
    if (fw := _staging.framework(params, indices)) is not None:
        fw.no_out("gather_nd", out)
        params = fw.asarray(params)
        return fw.run("gather_nd", [params, indices], {
            "batch_dims": batch_dims, "bad_indices": bad_indices,
            "fill_value": fw.fill(bad_indices, fill_value, params)})
    if _ragged.is_ragged(params) or _ragged.is_ragged(indices):
        _no_out_for_ragged(out)
        return _ragged.call("gather_nd", params, indices, None, batch_dims, bad_indices,
                            fill_value, _array, _indices, _fill)
    p = _array(params)
    r = _core.gather_nd(p, _indices(indices), batch_dims, bad_indices,
                        _fill(bad_indices, fill_value, p.dtype), _out(out))
    return r if out is None and type(params) is _ndarray else _result(params, out, r)


def gather_grad(params_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                axis: Optional[int] = None, batch_dims: int = 0, *,
                bad_indices: BadIndices = "error",
                params_row_splits: Optional[Sequence[ArrayLike]] = None) -> Any:
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
      bad_indices: the forward gather's policy: indices it clamps or wraps pass their
        gradient to where they read; slices it fills (``"ignore"``, ``"fill"``) pass none.
      params_row_splits: for a ragged ``params``, its row splits (``params_shape`` is then
        its flat values' shape): the gradient is then that of :func:`ragged_gather_grad`.

    Returns:
      An array of ``params_shape`` and ``grad``'s dtype; for a ragged ``params``,
      ``(indices, values, dense_shape)`` over its flat values.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> ng.gather_grad((2, 3), [2, 2, 0], np.ones((2, 3)), axis=1)
      array([[1., 0., 2.],
             [1., 0., 2.]])
      >>> ng.gather_grad([3], [1, 1, 0], np.ones(5), params_row_splits=[[0, 1, 3]])
      (array([1, 2, 1, 2, 0]), array([1., 1., 1., 1., 1.]), [3])
    """
    return _read_grad("gather_grad", indices, grad, params_row_splits,
                      {"params_shape": list(params_shape), "axis": axis,
                       "batch_dims": batch_dims, "bad_indices": bad_indices})


def _read_grad(name: str, indices: ArrayLike, grad: ArrayLike,
               params_row_splits: Optional[Sequence[ArrayLike]], attrs: dict) -> Any:
    """A read op's gradient by name: dense, or over a ragged params' flat values."""
    if params_row_splits is None and type(indices) is _ndarray and type(grad) is _ndarray:
        try:  # NumPy arrays as they are, as in gather
            return _core.run_op(name, [indices, grad, None], attrs)
        except (TypeError, ValueError):
            if _in_place(indices, grad):
                raise
    splits = None
    if params_row_splits is not None:
        splits = [_ragged._splits(s) for s in params_row_splits]
    r = _core.run_op(name, [_indices(indices), _numbers(grad), splits], attrs)
    if isinstance(r, list):
        return r[0]
    return _like(grad, r)


def ragged_gather_grad(params: Any, indices: Any, grad: Any, *, op: str = "gather",
                       axis: Optional[int] = None, batch_dims: int = 0,
                       bad_indices: BadIndices = "error") -> IndexedSlices:
    """The gradient of a ragged :func:`gather` (``op="gather"``) or :func:`gather_nd`
    (``op="gather_nd"``) with respect to params' flat values, as TensorFlow's
    ``IndexedSlices`` ``(indices, values, dense_shape)``: row ``indices[k]`` of the flat
    values receives ``values[k]``, one row of the result's flat values; repeated rows add
    up. Where an index picks inside the values' inner dimensions, the rows are those of
    the values with their first dimensions merged (``dense_shape`` says how).

    Args:
      params: the gather's params, as :func:`gather` takes them.
      indices: the gather's indices.
      grad: the upstream gradient: the result's form (its flat values are used) or its flat
        values, of a number dtype.
      op: the gather's op, ``"gather"`` or ``"gather_nd"``.
      axis: the gather's axis.
      batch_dims: the gather's batch dimensions.
      bad_indices: the gather's policy. Slices a policy fills pass no gradient (their row is
        ``dense_shape[0]``, past the end).

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> rt = ng.Ragged(np.array([1.0, 2.0, 3.0]), [0, 1, 3])
      >>> rows, values, shape = ng.ragged_gather_grad(rt, [1, 1, 0], np.ones(5))
      >>> rows, values, shape
      (array([1, 2, 1, 2, 0]), array([1., 1., 1., 1., 1.]), [3])
      >>> np.bincount(rows, values, minlength=shape[0])
      array([1., 2., 2.])
    """
    return _ragged.grad(op, params, indices, grad, axis, batch_dims, bad_indices, _array,
                        _indices, _numbers)


def gather_nd_grad(params_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                   batch_dims: int = 0, *, bad_indices: BadIndices = "error",
                   params_row_splits: Optional[Sequence[ArrayLike]] = None) -> Any:
    """The gradient of :func:`gather_nd` with respect to ``params``.

    Zeros of ``params_shape`` with each slice of ``grad`` added at its index vector
    (TensorFlow's ``scatter_nd``, with batch dimensions). Given ``params_row_splits`` (a
    ragged ``params``, ``params_shape`` its flat values' shape; even ``[]``), the gradient
    over the flat values as ``(indices, values, dense_shape)``, as :func:`ragged_gather_grad`.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> ng.gather_nd_grad((2, 3), [[1, 2], [1, 2], [0, 0]], np.ones(3))
      array([[1., 0., 0.],
             [0., 0., 2.]])
    """
    return _read_grad("gather_nd_grad", indices, grad, params_row_splits,
                      {"params_shape": list(params_shape), "batch_dims": batch_dims,
                       "bad_indices": bad_indices})


def take(x: ArrayLike, indices: ArrayLike, /, *, axis: Optional[int] = None,
         bad_indices: BadIndices = "negative", fill_value: Any = None,
         out: Optional[np.ndarray] = None) -> Any:
    """The array API standard's ``take`` (2024.12): the elements of ``x`` along ``axis`` at
    ``indices``.

    ``indices`` is a 1-d integer array; ``axis`` may be left out only when ``x`` is 1-d.
    Negative indices count from the end, the standard's rule (data-apis/array-api#894):
    ``-n`` is the first and ``-n - 1`` is out of range. The result has ``x``'s dtype and
    shape with ``len(indices)`` along ``axis``, in ``x``'s namespace (a ``torch.Tensor``
    for a PyTorch ``x``, a ``jax.Array`` for a JAX one, NumPy otherwise).

    Args:
      x: the array to take from (NumPy, or any CPU array through DLPack).
      indices: a 1-d integer array.
      axis: the axis (negative counts from the end); required when ``x.ndim > 1``.
      bad_indices: what an index out of range does, as in :func:`gather`; by default
        ``"negative"``.
      fill_value: what ``"fill"`` writes.
      out: an array of the result's shape and ``x``'s dtype to write into; returned.

    Raises:
      IndexOutOfBoundsError: an index out of range (an ``IndexError``, as NumPy raises).
      ValueError: ``indices`` that are not 1-d, or no ``axis`` for an ``x`` of several
        dimensions.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> ng.take(np.array([10, 20, 30]), np.array([2, -3]))
      array([30, 10])
      >>> ng.take(np.array([[1, 2], [3, 4]]), np.array([1]), axis=1)
      array([[2],
             [4]])
      >>> ng.take(np.array([10, 20, 30]), np.array([-4]))
      Traceback (most recent call last):
          ...
      ndgather.IndexOutOfBoundsError: indices[0] = -4 is not in [0, 3)
    """
    if (fw := _staging.framework(x, indices)) is not None:
        fw.no_out("take", out)
        x, indices = fw.asarray(x), fw.asarray(indices)
        if len(indices.shape) != 1:
            raise ValueError(
                f"take's indices must be 1-d, got an array of {len(indices.shape)} dimensions")
        if axis is None and len(x.shape) != 1:
            raise ValueError(f"take needs an axis for an array of {len(x.shape)} dimensions")
        axis = 0 if axis is None else axis
        with _numpy_errors(axis, len(x.shape)):
            return fw.run("gather", [x, indices], {
                "axis": axis, "bad_indices": bad_indices,
                "fill_value": fw.fill(bad_indices, fill_value, x)})
    p = _array(x)
    i = _indices(indices)
    if i.ndim != 1:
        raise ValueError(f"take's indices must be 1-d, got an array of {i.ndim} dimensions")
    if axis is None:
        if p.ndim != 1:
            raise ValueError(f"take needs an axis for an array of {p.ndim} dimensions")
        axis = 0
    with _numpy_errors(axis, p.ndim):
        r = _core.gather(p, i, axis, 0, bad_indices, _fill(bad_indices, fill_value, p.dtype),
                         _out(out))
    return r if out is None and type(x) is _ndarray else _result(x, out, r)


def take_along_axis(arr: ArrayLike, indices: ArrayLike, /, axis: Optional[int] = -1, *,
                    bad_indices: BadIndices = "negative", fill_value: Any = None,
                    out: Optional[np.ndarray] = None) -> Any:
    """Take values from ``arr`` by matching 1-d index and data slices along ``axis``.

    ``numpy.take_along_axis`` (ONNX's ``GatherElements``), which is also the array API
    standard's (2024.12): ``indices`` has ``arr``'s rank; each output element reads ``arr``
    at its own position, except along ``axis``, where it reads at the index. On every other
    axis ``indices`` and ``arr`` broadcast as NumPy broadcasts (sizes equal, or one of them
    1). The output has the broadcast shape, with ``indices``' size along ``axis``, and
    ``arr``'s dtype, whatever it is, in ``arr``'s namespace (see :func:`take`).

    Args:
      arr: the array to take from; anything ``numpy.asarray`` accepts, or any CPU array
        through DLPack.
      indices: an integer array of ``arr``'s rank.
      axis: the axis to take along (by default the last, as NumPy 2.3 and the standard);
        negative counts from the end. ``None`` takes from ``arr`` flattened (``indices``
        must then be 1-d), as NumPy does.
      bad_indices: ``"negative"`` (the default: NumPy's rule, negative indices count from
        the end, others out of range raise), ``"error"`` (TensorFlow's: every index outside
        ``[0, arr.shape[axis])`` raises), ``"ignore"`` (zeros, empty strings or None),
        ``"clamp"``, ``"wrap"`` (modulo the dimension), or ``"fill"`` (JAX's
        ``mode="fill"``).
      fill_value: what ``"fill"`` writes (as in :func:`gather`; by default JAX's: NaN for
        floating types, the minimum or maximum of integers, True for bool).
      out: an array of the output's shape and ``arr``'s dtype to write into (any layout,
        not sharing memory with the inputs). It is returned.

    Returns:
      A new array that owns its buffer, or ``out``.

    Raises:
      IndexOutOfBoundsError: an index out of range (an ``IndexError``, as NumPy raises,
        and an ``InvalidArgumentError``).
      InvalidArgumentError: ranks that differ, an axis out of range, or shapes that do not
        broadcast.
      IndexError: indices that are not integers (NumPy's class and message).

    NumPy's own examples:

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> a = np.array([[10, 30, 20], [60, 40, 50]])
      >>> ng.take_along_axis(a, np.argsort(a, axis=1), axis=1)
      array([[10, 20, 30],
             [40, 50, 60]])
      >>> ng.take_along_axis(a, np.expand_dims(np.argmax(a, axis=1), axis=1), axis=1)
      array([[30],
             [60]])
      >>> ng.take_along_axis(a, [[-1]])
      array([[20],
             [50]])
      >>> ng.take_along_axis(a, [[9]], axis=1, bad_indices="fill", fill_value=0)
      array([[0],
             [0]])
    """
    if type(arr) is _ndarray and type(indices) is _ndarray and out is None \
            and fill_value is None and axis is not None:
        try:  # as in gather
            with _numpy_errors(axis, arr.ndim):
                return _core.take_along_axis(arr, indices, axis, bad_indices, None, None)
        except (TypeError, ValueError, IndexError):  # NumPy's class for indices of no integers
            if _in_place(indices):
                raise
    if (fw := _staging.framework(arr, indices)) is not None:
        fw.no_out("take_along_axis", out)
        arr = fw.asarray(arr)
        if axis is None:
            _flat_indices(indices)
            arr, axis = fw.flat(arr), 0
        return fw.run("take_along_axis", [arr, indices], {
            "axis": axis, "bad_indices": bad_indices,
            "fill_value": fw.fill(bad_indices, fill_value, arr)})
    p = _array(arr)
    if axis is None:
        _flat_indices(indices)
        p, axis = p.reshape(-1), 0
    with _numpy_errors(axis, p.ndim):
        r = _core.take_along_axis(p, _indices(indices), axis, bad_indices,
                                  _fill(bad_indices, fill_value, p.dtype), _out(out))
    return r if out is None and type(arr) is _ndarray else _result(arr, out, r)


def put_along_axis(arr: np.ndarray, indices: ArrayLike, values: ArrayLike,
                   axis: Optional[int], *, bad_indices: BadIndices = "negative") -> None:
    """Put values into ``arr`` by matching 1-d index and data slices along ``axis``.

    ``numpy.put_along_axis``, the write side of :func:`take_along_axis` (PyTorch's
    ``scatter_``): each element that ``take_along_axis(arr, indices, axis)`` would read is
    overwritten, in place, by the element of ``values`` at the same position; ``values``
    broadcasts to that shape and is cast to ``arr``'s dtype, as NumPy casts it. Where several
    positions name one element, the last in row-major order wins, as in NumPy. Every check runs
    before the first write: on error ``arr`` is unchanged.

    Args:
      arr: the array to write: a NumPy array (a ``numpy.memmap`` opened ``"r+"`` too), or any
        writable CPU array through DLPack.
      indices: an integer array of ``arr``'s rank.
      values: the values to put.
      axis: the axis to put along; ``None`` puts into ``arr`` flattened (``indices`` 1-d).
      bad_indices: as in :func:`take_along_axis`; ``"ignore"`` and ``"fill"`` drop the value
        of a bad index.

    Raises:
      IndexOutOfBoundsError: an index out of range (an ``IndexError``, as NumPy raises).
      InvalidArgumentError: ranks that differ, an axis out of range, shapes that do not
        broadcast (a ``ValueError``, as NumPy raises).
      IndexError: indices that are not integers (NumPy's class and message).
      TypeError: an ``arr`` that cannot be written.

    NumPy's own example:

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> a = np.array([[10, 30, 20], [60, 40, 50]])
      >>> ng.put_along_axis(a, np.expand_dims(np.argmax(a, axis=1), axis=1), 99, axis=1)
      >>> a
      array([[10, 99, 20],
             [99, 40, 50]])
    """
    a = _out(arr)
    if a is None:
        raise TypeError("put_along_axis needs an array to write into, got None")
    target = a
    if axis is None:
        _flat_indices(indices)
        # NumPy writes through arr.flat; a view that is not contiguous is written back.
        target, axis = a.reshape(-1), 0
    try:
        v = np.ascontiguousarray(np.asarray(values).astype(a.dtype, copy=False))
    except (TypeError, ValueError):
        _index_errors_first(target, indices, axis)
        raise
    if type(values) not in (int, float, complex, bool, list) \
            and np.may_share_memory(v, target):
        # NumPy reads every value before it writes one; a copy does the same here. (Python's
        # own numbers and lists convert to new arrays; a subclass may convert to a view.)
        v = v.copy()
    with _numpy_errors(axis, target.ndim):
        _put_along_axis(target, indices, v, axis, bad_indices)
    if target is not a and not np.may_share_memory(target, a):
        a[...] = target.reshape(a.shape)


def take_along_axis_grad(arr_shape: Sequence[int], indices: ArrayLike, grad: ArrayLike,
                         axis: int, *, bad_indices: BadIndices = "error") -> np.ndarray:
    """The gradient of :func:`take_along_axis` with respect to ``arr``.

    Zeros of ``arr_shape`` with each element of ``grad`` (the upstream gradient, of the
    output's shape) added where it was taken from, summed over repeats and over the axes
    ``arr`` was broadcast along, in row-major order (deterministic). Elements whose index
    the policy leaves filled get no gradient.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> ng.take_along_axis_grad((2, 3), [[2, 2], [0, 1]], np.array([[1., 2.], [3., 4.]]), axis=1)
      array([[0., 0., 3.],
             [3., 4., 0.]])
    """
    r = _core.run_op("take_along_axis_grad", [_indices(indices), _numbers(grad)],
                     {"arr_shape": list(arr_shape), "axis": axis, "bad_indices": bad_indices})
    return _like(grad, r)


def _first(params):
    """The table, or its first shard: what decides the namespace of a lookup's result."""
    return params[0] if isinstance(params, (list, tuple)) and params else params


def _shards(params):
    """An embedding table, or its shards, as a list of arrays of one float dtype."""
    if isinstance(params, (list, tuple)):
        return [_numbers(p) for p in params]
    return [_numbers(params)]


def _sparse(sp, what, dtype=None):
    """``(indices, values, dense_shape)`` of a SparseTensor-like triple (or an object with
    those attributes, such as ``tf.sparse.SparseTensor`` or ``scipy``'s COO arrays' parts)."""
    if sp is None:
        return None
    if hasattr(sp, "indices") and hasattr(sp, "values") and hasattr(sp, "dense_shape"):
        sp = (sp.indices, sp.values, sp.dense_shape)
    try:
        indices, values, dense_shape = sp
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be (indices, values, dense_shape), got {type(sp).__name__}")
    indices = np.require(indices, np.int64, ["C", "A"])
    values = _indices(values) if dtype is None else np.require(values, dtype, ["C", "A"])
    return indices, values, [int(d) for d in np.asarray(dense_shape).reshape(-1)]


def embedding_lookup(params: ArrayLike | Sequence[ArrayLike], ids: ArrayLike,
                     partition_strategy: PartitionStrategy = "mod",
                     max_norm: Optional[float] = None) -> np.ndarray:
    """``tf.nn.embedding_lookup``: the rows ``ids`` of a table, or of a table split in shards.

    Args:
      params: one table (an array of float16, bfloat16, float32 or float64), or a list of
        its shards along the first axis, all alike but in their first dimension.
      ids: integer ids into the whole table, of any shape.
      partition_strategy: how ids map to shards: ``"mod"`` (TensorFlow 1's default: id
        ``i`` is row ``i // n`` of shard ``i % n``) or ``"div"`` (contiguous ranges, the
        first ``rows % n`` one longer; TensorFlow 2's only strategy).
      max_norm: if given, each looked-up row is scaled down to this L2 norm when it is
        longer (``tf.clip_by_norm``).

    Returns:
      An array of shape ``ids.shape + params[0].shape[1:]``.

    Raises:
      InvalidArgumentError: an id outside the table (or outside its shard), or shards
        whose rows differ.
      NotFoundError: a table that is not float16, bfloat16, float32 or float64 (a
        ``TypeError``, in TensorFlow's words).

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> table = np.arange(10.0).reshape(5, 2)
      >>> ng.embedding_lookup(table, [[4], [0]])
      array([[[8., 9.]],
      <BLANKLINE>
             [[0., 1.]]])
      >>> shards = [table[0::2], table[1::2]]  # "mod": even ids, then odd ids
      >>> ng.embedding_lookup(shards, [3, 4], partition_strategy="mod")
      array([[6., 7.],
             [8., 9.]])
      >>> ng.embedding_lookup(table, [4], max_norm=5.0)
      array([[3.32181919, 3.73704659]])
    """
    attrs = {"partition_strategy": partition_strategy, "max_norm": max_norm}
    if type(params) is _ndarray and type(ids) is _ndarray:
        # One NumPy table as it is (the door checks it): the tiny call's path.
        try:
            return _core.run_op("embedding_lookup", [[params], ids], attrs)
        except (TypeError, ValueError):
            if _in_place(params, ids):
                raise
    if (fw := _staging.framework(params, ids)) is not None:
        return fw.run("embedding_lookup", [fw.shards(params), ids], attrs)
    r = _core.run_op("embedding_lookup", [_shards(params), _indices(ids)], attrs)
    return _like(_first(params), r)


def embedding_lookup_grad(params: ArrayLike | Sequence[ArrayLike], ids: ArrayLike,
                          grad: ArrayLike, partition_strategy: PartitionStrategy = "mod",
                          max_norm: Optional[float] = None) -> list[IndexedSlices]:
    """The gradient of :func:`embedding_lookup` with respect to each shard, as
    TensorFlow's ``IndexedSlices``: a list with one ``(indices, values, dense_shape)`` per
    shard, its rows those of the ids the shard served, in order (repeats add up).

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> [(i, v.tolist(), s) for i, v, s in ng.embedding_lookup_grad(np.zeros((3, 1)), [2, 0, 2], np.ones((3, 1)))]
      [(array([2, 0, 2]), [[1.0], [1.0], [1.0]], [3, 1])]
    """
    attrs = {"partition_strategy": partition_strategy, "max_norm": max_norm}
    if type(params) is _ndarray and type(ids) is _ndarray and type(grad) is _ndarray \
            and grad.dtype == params.dtype:
        try:  # one NumPy table as it is, as in embedding_lookup
            return _core.run_op("embedding_lookup_grad", [[params], ids, grad], attrs)
        except (TypeError, ValueError):
            if _in_place(params, ids, grad):
                raise
    shards = _shards(params)
    g = np.require(grad, shards[0].dtype, ["C", "A"])
    return _core.run_op("embedding_lookup_grad", [shards, _indices(ids), g], attrs)


def embedding_lookup_sparse(params: ArrayLike | Sequence[ArrayLike], sp_ids: Sparse,
                            sp_weights: Optional[Sparse], combiner: Combiner = "mean",
                            partition_strategy: PartitionStrategy = "mod",
                            max_norm: Optional[float] = None) -> np.ndarray:
    """``tf.nn.embedding_lookup_sparse``: for each row of a batch of sparse ids, the
    embeddings of its ids, times their weights, combined.

    Args:
      params: one table or its shards, as in :func:`embedding_lookup`.
      sp_ids: the ids as TensorFlow's ``SparseTensor``: ``(indices, values,
        dense_shape)``, ``indices`` an ``[n, 2]`` integer array in row-major order (row
        ``indices[k, 0]`` of the batch holds id ``values[k]``); or any object with those
        three attributes.
      sp_weights: the weights, in the same form and with the same indices, or ``None``
        for weights of 1.
      combiner: ``"sum"``, ``"mean"`` (the weighted sum over the sum of the weights; 0
        where they sum to 0) or ``"sqrtn"`` (over the square root of the sum of squared
        weights).
      partition_strategy: as in :func:`embedding_lookup`.
      max_norm: as in :func:`embedding_lookup`.

    Returns:
      An array of shape ``[dense_shape[0]] + params[0].shape[1:]``; rows without ids are
      zeros. (TensorFlow's kernel stops after the last row that has ids; this returns the
      shape its documentation gives.)

    The example of TensorFlow's documentation: params 10x20, ids and weights
    ``[0, 0]: 1 (2.0), [0, 1]: 3 (0.5), [1, 0]: 0 (1.0), [2, 3]: 1 (3.0)``:

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> params = np.random.default_rng(0).random((10, 20))
      >>> indices = [[0, 0], [0, 1], [1, 0], [2, 3]]
      >>> out = ng.embedding_lookup_sparse(params, (indices, [1, 3, 0, 1], [3, 4]),
      ...                                  (indices, [2.0, 0.5, 1.0, 3.0], [3, 4]))
      >>> bool(np.allclose(out[0], (params[1] * 2.0 + params[3] * 0.5) / (2.0 + 0.5)))
      True
      >>> bool(np.allclose(out[1], params[0]) and np.allclose(out[2], params[1]))
      True
    """
    shards = _shards(params)
    ids = _sparse(sp_ids, "sp_ids")
    weights = _sparse(sp_weights, "sp_weights", shards[0].dtype) or (None, None, None)
    i, v, shape = ids
    w_i, w_v, w_shape = weights
    as_shape = lambda d: None if d is None else np.asarray(d, np.int64)  # noqa: E731
    r = _core.run_op("embedding_lookup_sparse",
                     [shards, i, v, as_shape(shape), w_v, w_i, as_shape(w_shape)],
                     {"combiner": combiner, "partition_strategy": partition_strategy,
                      "max_norm": max_norm})
    return _like(_first(params), r)


def embedding_lookup_sparse_grad(params: ArrayLike | Sequence[ArrayLike], sp_ids: Sparse,
                                 sp_weights: Optional[Sparse], grad: ArrayLike,
                                 combiner: Combiner = "mean",
                                 partition_strategy: PartitionStrategy = "mod",
                                 max_norm: Optional[float] = None) -> list[IndexedSlices]:
    """The gradient of :func:`embedding_lookup_sparse` with respect to each shard: a list
    with one ``(indices, values, dense_shape)`` per shard, a row for each distinct id it
    served (in the order they first appear), each summing what the batch rows pass back.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> sp = ([[0, 0], [0, 1], [1, 0]], [2, 2, 0], [2, 2])
      >>> [(i, v.tolist()) for i, v, _ in ng.embedding_lookup_sparse_grad(np.zeros((3, 1)), sp, None, np.ones((2, 1)), "sum")]
      [(array([2, 0]), [[2.0], [1.0]])]
    """
    shards = _shards(params)
    i, v, shape = _sparse(sp_ids, "sp_ids")
    w_i, w_v, w_shape = _sparse(sp_weights, "sp_weights", shards[0].dtype) or (None, None, None)
    as_shape = lambda d: None if d is None else np.asarray(d, np.int64)  # noqa: E731
    g = np.require(grad, shards[0].dtype, ["C", "A"])
    return _core.run_op("embedding_lookup_sparse_grad",
                        [shards, i, v, as_shape(shape), g, w_v, w_i, as_shape(w_shape)],
                        {"combiner": combiner, "partition_strategy": partition_strategy,
                         "max_norm": max_norm})


def _common_ids(ids: np.dtype, offsets: np.dtype) -> Optional[np.dtype]:
    """The integer type that holds both ids and offsets of two integer types, as PyTorch
    promotes int32 and int64; ``None`` where they agree, are not both integers (the op
    refuses them), or no integer type holds both (uint64 beside a signed type)."""
    if ids == offsets or ids.kind not in "iu" or offsets.kind not in "iu":
        return None
    common = np.promote_types(ids, offsets)
    return common if common.kind in "iu" else None


def _bag_args(params, input, offsets, per_sample_weights):
    shards = _shards(params)
    ids = _indices(input)
    if offsets is not None:
        offsets = _indices(offsets)
        if (common := _common_ids(ids.dtype, offsets.dtype)) is not None:
            # Converted without loss (a cast to the ids' type could wrap a huge offset).
            ids, offsets = ids.astype(common), offsets.astype(common)
        elif ids.dtype.kind == "u" and offsets.dtype.kind == "i" \
                and (offsets.size == 0 or offsets.min() >= 0):
            offsets = offsets.astype(ids.dtype)  # uint64 ids: offsets that fit
    weights = None
    if per_sample_weights is not None:
        weights = np.require(_array(per_sample_weights), shards[0].dtype, ["A"])
    return shards, ids, offsets, weights


def embedding_bag(params: ArrayLike | Sequence[ArrayLike], input: ArrayLike,
                  offsets: Optional[ArrayLike] = None, *, mode: BagMode = "mean",
                  per_sample_weights: Optional[ArrayLike] = None,
                  include_last_offset: bool = False, padding_idx: Optional[int] = None,
                  max_norm: Optional[float] = None, partition_strategy: PartitionStrategy = "mod",
                  bad_indices: BadIndices = "error", sparse: bool = False) -> Any:
    """PyTorch's ``torch.nn.functional.embedding_bag``: the rows of each bag of ids, reduced.

    Bags are a 2-D ``input`` (each row a bag) or a 1-D ``input`` with ``offsets`` (each bag
    from its offset to the next; with ``include_last_offset``, the last offset ends the last
    bag, CSR's ``B + 1`` entries). ``mode`` is ``"sum"`` (weighted by ``per_sample_weights``
    if given, of ``input``'s shape), ``"mean"`` or ``"max"``. ``padding_idx`` ids are left out
    of every bag, and of mean's count; an empty bag is zeros. ``params`` is one table or a
    list of shards, split as ``embedding_lookup``'s (``partition_strategy``). Results equal
    PyTorch's CPU kernels' bit for bit (each bag reduced in order), and do not depend on the
    thread count.

    ``max_norm`` renormalises each looked-up row whose L2 norm exceeds it, as PyTorch's
    ``embedding_renorm_`` does (``row * max_norm / (norm + 1e-7)``, the norm summed as its
    vector kernel sums it), and gradients flow as PyTorch's do, not through the
    renormalisation. PyTorch also writes those rows into its weight; ``params`` is never
    written.

    With ``include_last_offset=True`` the last offset must be the number of ids, as PyTorch
    documents: its kernels read ids after it inconsistently, and ndgather refuses them.

    Args:
      params: a float table (float16, bfloat16, float32, float64), or a list of shards.
      input: the ids, 1-d with ``offsets`` or 2-d without.
      offsets: where each bag starts (1-d, from 0, non-decreasing).
      mode: ``"sum"``, ``"mean"`` or ``"max"``.
      per_sample_weights: a weight per id (``"sum"`` only).
      include_last_offset: whether ``offsets`` ends with the end of the last bag.
      padding_idx: the id left out of every bag (negative counts from the end).
      max_norm: renormalise each row whose L2 norm exceeds this one.
      partition_strategy: ``"mod"`` or ``"div"``, for shards.
      bad_indices: ``"error"`` (PyTorch's), ``"ignore"`` (a bad id is left out, as padding
        is), ``"clamp"``, ``"negative"`` or ``"wrap"``.
      sparse: PyTorch's: under autograd, each shard's gradient is a sparse COO tensor with a
        row per id the shard served (for ``torch.optim.SparseAdam`` or ``SGD``), in eager
        mode; ``torch.compile`` builds dense gradients only, so it refuses the call in one
        graph (``fullgraph=True``) and otherwise runs it eagerly. Not with ``"max"``.
        TensorFlow and JAX ignore it: their gradients are as without it. A
        ``per_sample_weights`` that requires grad gets its gradient from the dense
        computation, which also forms each shard's dense gradient.

    Returns:
      An array of shape ``[bags] + params.shape[1:]`` in ``params``' namespace.

    Raises:
      ValueError: inputs of the wrong rank, weights of the wrong shape, ``sparse`` with
        ``"max"`` (PyTorch's messages); with ``include_last_offset``, ids after the last
        offset.
      RuntimeError: offsets that do not start at 0, go past the input or decrease; ids out of
        range; a ``padding_idx`` outside the table (PyTorch's messages).
      NotImplementedError: weights outside ``"sum"``, as PyTorch.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> table = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]], dtype=np.float32)
      >>> ng.embedding_bag(table, [0, 2, 1, 2, 2], [0, 2, 2])
      array([[ 2.       , 20.       ],
             [ 0.       ,  0.       ],
             [ 2.6666667, 26.666666 ]], dtype=float32)
      >>> ng.embedding_bag(table, [[0, 1], [2, 2]], mode="max")
      array([[ 2., 20.],
             [ 3., 30.]], dtype=float32)
      >>> ng.embedding_bag(table, [0, 1, 2], [0, 1], mode="sum", per_sample_weights=[2, 1, 1])
      array([[ 2., 20.],
             [ 5., 50.]], dtype=float32)
    """
    attrs = {"mode": mode, "padding_idx": padding_idx,
             "include_last_offset": include_last_offset, "max_norm": max_norm,
             "partition_strategy": partition_strategy, "bad_indices": bad_indices}
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if type(params) is _ndarray and type(input) is _ndarray and offsets is None \
            and per_sample_weights is None:
        # One NumPy table and a 2-D input as they are (the door checks them).
        try:
            return _core.run_op("embedding_bag", [[params], input, None, None], attrs)
        except (TypeError, ValueError):
            if _in_place(params, input):
                raise
    if (fw := _staging.framework(params, input, offsets, per_sample_weights)) is not None:
        if offsets is not None and \
                (common := _common_ids(fw.dtype(input), fw.dtype(offsets))) is not None:
            input, offsets = fw.astype(input, common.name), fw.astype(offsets, common.name)
        return fw.run("embedding_bag", [fw.shards(params), input, offsets, per_sample_weights],
                      attrs, sparse_grad=sparse)
    shards, ids, offsets, weights = _bag_args(params, input, offsets, per_sample_weights)
    r = _core.run_op("embedding_bag", [shards, ids, offsets, weights], attrs)
    return _like(_first(params), r)


def embedding_bag_grad(params: ArrayLike | Sequence[ArrayLike], input: ArrayLike,
                       offsets: Optional[ArrayLike], grad: ArrayLike, *, mode: BagMode = "mean",
                       per_sample_weights: Optional[ArrayLike] = None,
                       include_last_offset: bool = False, padding_idx: Optional[int] = None,
                       max_norm: Optional[float] = None,
                       partition_strategy: PartitionStrategy = "mod",
                       bad_indices: BadIndices = "error", sparse: bool = False) -> list:
    """The gradient of :func:`embedding_bag` with respect to each shard of ``params``, for
    the upstream gradient ``grad`` (of the bags' output shape).

    With ``sparse=True``, one ``(indices, values, dense_shape)`` per shard, a row for each id
    the shard served in input order (padding has none), as PyTorch's ``sparse=True``
    gradient, bit for bit; otherwise one dense array per shard, those rows added in order.
    ``"max"`` passes each element's gradient to the first row holding the bag's maximum, as
    PyTorch does. PyTorch's dense gradient adds the rows through its BLAS, whose fused or
    unfused additions can differ from these in the last bits.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> table = np.zeros((3, 1))
      >>> ng.embedding_bag_grad(table, [0, 2, 2], [0, 1], np.ones((2, 1)), mode="mean")
      [array([[1.],
             [0.],
             [1.]])]
    """
    shards, ids, offsets, weights = _bag_args(params, input, offsets, per_sample_weights)
    g = np.require(_array(grad), shards[0].dtype, ["A"])
    parts = _core.run_op("embedding_bag_grad", [shards, ids, g, offsets, weights],
                         {"mode": mode, "padding_idx": padding_idx,
                          "include_last_offset": include_last_offset, "max_norm": max_norm,
                          "partition_strategy": partition_strategy,
                          "bad_indices": bad_indices, "sparse": sparse})
    if sparse:
        return parts
    return [_like(grad, p) for p in parts]


def _tensor_scatter(kind: str, tensor: ArrayLike, indices: ArrayLike, updates: ArrayLike,
                    bad_indices: BadIndices, out: Optional[np.ndarray]) -> np.ndarray:
    """The tensor_scatter_nd ops (see :func:`_write`)."""
    if (fw := _staging.framework(tensor, indices, updates)) is not None:
        fw.no_out(f"tensor_scatter_nd_{kind}", out)
        return fw.run(f"tensor_scatter_nd_{kind}", [tensor, indices, updates],
                        {"bad_indices": bad_indices})
    i = _indices(indices)
    if (r := _direct_write(f"tensor_scatter_nd_{kind}", tensor, i, updates,
                           {"bad_indices": bad_indices}, out)) is not None:
        return r  # indices given as a list, the arrays as they are
    return _write(tensor, updates, out, lambda t, u, in_place: _run_write(
        f"tensor_scatter_nd_{kind}", t, i, u, {"bad_indices": bad_indices}, in_place))


def _run_write(name: str, t: np.ndarray, i: np.ndarray, u: np.ndarray,
               attrs: dict[str, Any], in_place: bool) -> Optional[np.ndarray]:
    """The registered write op ``name`` through the core's one door: into a new array, or
    into ``t`` itself (then ``None``)."""
    if in_place:
        return _core.run_op(name, [None, i, u], attrs, t, True)
    return _core.run_op(name, [t, i, u], attrs)


def _direct_write(name: str, tensor: Any, indices: Any, updates: Any, attrs: dict[str, Any],
                  out: Any) -> Optional[np.ndarray]:
    """A write op on NumPy arrays as they are, into a new array or into ``tensor`` itself;
    ``None`` where the general path must convert them. The extension checks everything; only
    arrays it cannot read in place (another byte order, misaligned) take that path."""
    if type(tensor) is _ndarray and type(indices) is _ndarray \
            and type(updates) is _ndarray and (out is None or out is tensor):
        try:  # (the door called here: a function between costs a tenth of a tiny call)
            if out is None:
                return _core.run_op(name, [tensor, indices, updates], attrs)
            _core.run_op(name, [None, indices, updates], attrs, tensor, True)
            return out
        except (TypeError, ValueError):
            if _in_place(tensor, indices, updates):
                raise
    return None


def _write(tensor: ArrayLike, updates: ArrayLike, out: Optional[np.ndarray],
           run: Callable[[np.ndarray, np.ndarray, bool], Optional[np.ndarray]]) -> Any:
    """A write-side op: ``run(tensor, updates, in_place)`` into a new array, into ``tensor``
    itself when ``out`` is ``tensor`` (or a view with its memory and layout), or into
    another ``out`` (the result is made first, so ``out`` is unchanged on error)."""
    t = _array(tensor)
    # TensorFlow and PyTorch convert lists and scalars to the tensor's dtype; arrays keep
    # theirs.
    if isinstance(updates, _ndarray) or hasattr(type(updates), "__dlpack__"):
        u = _native(_array(updates))
    else:
        u = np.asarray(updates, dtype=t.dtype)
    if out is None:
        return _like(tensor, run(_native(t), u, False))
    o = _out(out)
    if o is t or _same_memory(o, t):
        run(o, u, True)
    else:
        if o.shape != t.shape or o.dtype != t.dtype:
            raise ValueError(f"out must have the tensor's shape {t.shape} and dtype {t.dtype}, "
                             f"got {o.shape} and {o.dtype}")
        np.copyto(o, run(_native(t), u, False))
    return out


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are views of the same elements, laid out alike."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


_SCATTER_DOC = """``tf.tensor_scatter_nd_{kind}``: ``tensor`` with {what}.

    Each index vector ``indices[..., :]`` names a slice of ``tensor`` (its first
    ``indices.shape[-1]`` dimensions); ``updates`` has shape
    ``indices.shape[:-1] + tensor.shape[indices.shape[-1]:]``. Updates are applied one at a
    time in the order of ``indices``, as TensorFlow's CPU kernel applies them{order}, and
    the result is the same on any number of threads.

    Args:
      tensor: the array to update ({dtypes}).
      indices: index vectors, an integer array of rank at least 1.
      updates: the slices; a list or scalar is converted to ``tensor``'s dtype, an array
        must have it.
      bad_indices: an index vector outside ``tensor``: ``"error"`` (TensorFlow on the CPU:
        nothing is written), ``"ignore"`` (TensorFlow's ``bad_indices_policy="IGNORE"``, as on
        the GPU) and ``"fill"`` (JAX's ``mode="drop"``) drop its update; ``"clamp"``,
        ``"negative"`` and ``"wrap"`` map it into range.
      out: where to write: ``tensor`` itself to update it in place (a ``numpy.memmap``
        opened ``"r+"`` is a table on disk), or another array of its shape and dtype. Every
        check runs before the first write, so on error ``out`` is unchanged.

    Returns:
      A new array in ``tensor``'s namespace, or ``out``.

    Raises:
      InvalidArgumentError: shapes or an index vector TensorFlow refuses, with its message,
        or updates of another dtype.
      NotFoundError: a dtype the op has no kernel for (TensorFlow's class and words).
      TypeError: indices that are not integers, or a dtype ndgather cannot read.

    Examples:

    >>> import numpy as np, ndgather as ng
    >>> table = np.zeros([4, 2], np.float32)
    >>> ng.tensor_scatter_nd_{kind}(table, [[1], [3], [1]], np.array([[1, 2], [3, 4], [5, 6]], np.float32))
    {example}
    """


_EXAMPLES = {
    "update": ("the slices at ``indices`` replaced by ``updates``",
               "; a repeated index vector keeps its last update (TensorFlow promises no "
               "order for them; its CPU kernel writes in index order)",
               "every dtype of the table",
               "array([[0., 0.],\n           [5., 6.],\n           [0., 0.],\n           [3., 4.]], dtype=float32)"),
    "add": ("``updates`` added at ``indices``",
            "; repeated index vectors add up, rounded after each addition as "
            "``np.add.at`` does",
            "a number: integers, floats or complex; integers wrap",
            "array([[0., 0.],\n           [6., 8.],\n           [0., 0.],\n           [3., 4.]], dtype=float32)"),
    "sub": ("``updates`` subtracted at ``indices``", "", "a number; integers wrap",
            "array([[ 0.,  0.],\n           [-6., -8.],\n           [ 0.,  0.],\n           [-3., -4.]], dtype=float32)"),
    "min": ("each element at ``indices`` the smaller of it and its updates",
            "; an update replaces an element only if it is smaller, so a NaN already there "
            "stays and a NaN update is ignored, as in TensorFlow",
            "an integer or real float",
            "array([[0., 0.],\n           [0., 0.],\n           [0., 0.],\n           [0., 0.]], dtype=float32)"),
    "max": ("each element at ``indices`` the larger of it and its updates",
            "; an update replaces an element only if it is larger, so a NaN already there "
            "stays and a NaN update is ignored, as in TensorFlow",
            "an integer or real float",
            "array([[0., 0.],\n           [5., 6.],\n           [0., 0.],\n           [3., 4.]], dtype=float32)"),
}


def _scatter_function(kind: str, what: str, order: str, dtypes: str, example: str):
    """``tensor_scatter_nd_<kind>``, with its documentation."""
    name = f"tensor_scatter_nd_{kind}"

    def scatter(tensor: ArrayLike, indices: ArrayLike, updates: ArrayLike, *,
                bad_indices: BadIndices = "error",
                out: Optional[np.ndarray] = None) -> np.ndarray:
        # NumPy arrays as they are, straight to the door (as `_direct_write` does; the call
        # between costs a twentieth of a tiny scatter).
        if type(tensor) is _ndarray and type(indices) is _ndarray \
                and type(updates) is _ndarray:
            try:
                if out is None:
                    return _core.run_op(name, (tensor, indices, updates),
                                        {"bad_indices": bad_indices})
                if out is tensor:
                    _core.run_op(name, (None, indices, updates), {"bad_indices": bad_indices},
                                 tensor, True)
                    return out
            except (TypeError, ValueError):
                if _in_place(tensor, indices, updates):
                    raise
        return _tensor_scatter(kind, tensor, indices, updates, bad_indices, out)
    scatter.__name__ = scatter.__qualname__ = name
    scatter.__doc__ = _SCATTER_DOC.format(kind=kind, what=what, order=order, dtypes=dtypes,
                                          example=example)
    return scatter


tensor_scatter_nd_update = _scatter_function("update", *_EXAMPLES["update"])
tensor_scatter_nd_add = _scatter_function("add", *_EXAMPLES["add"])
tensor_scatter_nd_sub = _scatter_function("sub", *_EXAMPLES["sub"])
tensor_scatter_nd_min = _scatter_function("min", *_EXAMPLES["min"])
tensor_scatter_nd_max = _scatter_function("max", *_EXAMPLES["max"])


def scatter_reduce(input: ArrayLike, dim: int, index: ArrayLike, src: ArrayLike,
                   reduce: Reduce, *, include_self: bool = True,
                   bad_indices: BadIndices = "error", out: Optional[np.ndarray] = None) -> Any:
    """PyTorch's ``torch.scatter_reduce``: ``input`` with each element of ``src`` reduced
    into it at the position ``index`` names along ``dim``.

    For a 2-d ``input`` and ``dim=0``, ``out[index[i][j]][j] ∘= src[i][j]``. ``index`` has
    ``input``'s rank and ``src``'s; along every dimension it is no larger than ``src``, and
    no larger than ``input`` except along ``dim``. Values meet their element in the order
    of ``index`` (row-major), so float results are PyTorch's CPU results bit for bit
    (float16 and bfloat16 reduce in float32 and round once, as PyTorch does; PyTorch's
    NaN payloads there differ by code path).

    Args:
      input: the array to reduce into: numbers or bool; a ``torch.Tensor`` comes back as
        one.
      dim: the dimension ``index`` points along (negative counts from the end).
      index: integer indices (PyTorch takes int32 and int64; ndgather any integer dtype).
      src: the values, of ``input``'s dtype (a list converts to it).
      reduce: ``"sum"``, ``"prod"``, ``"mean"`` (integers round toward −∞), ``"amax"`` or
        ``"amin"`` (NaN wins); bool sums are "or" and products "and".
      include_self: whether ``input``'s own elements take part; without, each element an
        index names starts from the reduction's identity.
      bad_indices: an index outside ``input``: ``"error"`` (PyTorch; nothing is written),
        ``"ignore"`` and ``"fill"`` drop its value, ``"clamp"``, ``"negative"`` and
        ``"wrap"`` map it into range.
      out: where to write: ``input`` itself for ``Tensor.scatter_reduce_`` (in place), or
        another array of its shape and dtype. Every check runs first, so on error ``out``
        is unchanged.

    Returns:
      A new array in ``input``'s namespace, or ``out``.

    Raises:
      RuntimeError: shapes, indices or dtypes PyTorch refuses, with PyTorch's message.
      IndexError: ``dim`` out of range.
      NotImplementedError: a reduction PyTorch has no kernel for (``"mean"`` of bool,
        ``"amax"``/``"amin"`` of complex numbers).

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> src = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
      >>> index = np.array([0, 1, 0, 1, 2, 1])
      >>> ng.scatter_reduce(np.array([1.0, 2.0, 3.0, 4.0]), 0, index, src, "sum")
      array([ 5., 14.,  8.,  4.])
      >>> ng.scatter_reduce(np.array([1.0, 2.0, 3.0, 4.0]), 0, index, src, "amax", include_self=False)
      array([3., 6., 5., 4.])
    """
    attrs = {"dim": dim, "reduce": reduce, "include_self": include_self,
             "bad_indices": bad_indices}
    if (r := _direct_write("scatter_reduce", input, index, src, attrs, out)) is not None:
        return r
    if (fw := _staging.framework(input, index, src)) is not None:
        fw.no_out("scatter_reduce", out)
        return fw.run("scatter_reduce", [input, index, src], attrs)
    i = _indices(index)
    if (r := _direct_write("scatter_reduce", input, i, src, attrs, out)) is not None:
        return r  # index given as a list, the arrays as they are
    return _write(input, src, out, lambda t, u, in_place: _run_write(
        "scatter_reduce", t, i, u, attrs, in_place))


def set_output_cache_limit(max_bytes: int) -> int:
    """Sets how many bytes of freed result arrays ndgather keeps for its next results, and
    returns the previous limit (1 GiB by default).

    A fresh result costs the OS's page faults and zeroing, often more than the gather
    itself. So when NumPy frees an array ndgather made (4 MiB or larger), its memory goes
    back to ndgather, and the next result of the same dtype and about the same size is
    written into it. At most 4 arrays and ``max_bytes`` are kept, the oldest dropped
    first; ``0`` keeps none and frees what is kept.

    Examples:
      >>> import ndgather as ng
      >>> previous = ng.set_output_cache_limit(0)
      >>> previous
      1073741824
      >>> ng.set_output_cache_limit(previous)
      0
    """
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be non-negative, got {max_bytes}")
    return _core.set_output_cache_limit(max_bytes)


from ._segment import (  # noqa: E402  (they call back into this module's helpers)
    gather_segment, scatter_nd, segment_max, segment_mean, segment_min, segment_prod,
    segment_sum, unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
    unsorted_segment_prod, unsorted_segment_sqrt_n, unsorted_segment_sum)

# PyTorch's custom ops, where torch is already imported: torch.compile must find them
# defined, not define them while it traces. A failure leaves them undefined (the functions
# then say so when they need them), never the import broken.
if "torch" in _modules:
    with contextlib.suppress(Exception):
        _torch.define()

# Inside tf.function, AutoGraph would rewrite each public function it sees called (and
# warn on syntax it cannot convert); they call TensorFlow's op themselves, so they are
# marked as AutoGraph marks its own helpers, to be called as they are.
for _name in __all__:
    if callable(_f := globals().get(_name)) and not isinstance(_f, type):
        _f.autograph_info__ = frozenset(("autograph_artifact",))
del _name, _f
