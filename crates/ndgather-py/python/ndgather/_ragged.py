"""Ragged operands of ``ndgather.gather`` and ``ndgather.gather_nd``: ``ndgather.Ragged``,
``tf.RaggedTensor``, pyarrow's list arrays and Polars' list Series (imported through the
Arrow C Data Interface), each read as flat values plus row splits (views of its buffers, no
copy where the library lends them) and given back in its own form. The checks and the
gather are the core's."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _core


_SPLIT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _splits(s: ArrayLike) -> np.ndarray:
    """Row splits as the extension reads them: contiguous int32 or int64, native order."""
    if type(s) is np.ndarray and s.dtype in _SPLIT_DTYPES and s.flags.c_contiguous:
        return s
    a = np.asarray(s)
    if a.dtype not in (np.int32, np.int64):
        a = a.astype(np.int64)
    return np.ascontiguousarray(a)


class Ragged:
    """A ragged tensor: flat ``values`` and the row splits of each ragged dimension,
    outermost first, as TensorFlow's ``RaggedTensor`` lays it out (and Arrow's list arrays:
    the splits are their offsets). Row ``r`` of a level holds the next level's rows
    ``splits[r]:splits[r + 1]``; ``values`` may have uniform inner dimensions. Checked as
    TensorFlow's ``from_row_splits`` checks it; nothing is copied.

    Examples:
      >>> import numpy as np, ndgather as ng
      >>> rt = ng.Ragged(np.array([1, 2, 3, 4, 5]), [0, 2, 2, 5])
      >>> rt
      Ragged([[1, 2], [], [3, 4, 5]])
      >>> rt.nrows, rt.ragged_rank
      (3, 1)
      >>> ng.Ragged.from_list([[[1], [2, 3]], [[4]]]).nested_row_splits
      (array([0, 2, 3]), array([0, 1, 3, 4]))
      >>> ng.Ragged(np.array([1, 2]), [1, 2])
      Traceback (most recent call last):
      ...
      ndgather.InvalidArgumentError: Arguments to from_row_splits do not form a valid RaggedTensor:zero (row_splits[0] = 1, must be 0)
    """

    __slots__ = ("values", "nested_row_splits")

    values: np.ndarray
    nested_row_splits: tuple[np.ndarray, ...]

    def __init__(self, values: ArrayLike, row_splits: ArrayLike | Sequence[ArrayLike]):
        """``row_splits`` is one splits vector, or a sequence of them for several ragged
        dimensions (outermost first); int32 and int64 are kept, other integers become int64."""
        nested = (isinstance(row_splits, (list, tuple)) and len(row_splits) > 0
                  and not np.isscalar(row_splits[0]))
        splits = tuple(_splits(s) for s in (row_splits if nested else [row_splits]))
        values = np.asarray(values)
        _core.ragged_check(values, list(splits))
        self.values = values
        self.nested_row_splits = splits

    @classmethod
    def _result(cls, values: np.ndarray, splits: list[np.ndarray]) -> "Ragged":
        """A result of the core, whose splits it made: not checked again."""
        self = cls.__new__(cls)
        self.values = values
        self.nested_row_splits = tuple(splits)
        return self

    @classmethod
    def from_list(cls, rows: list, dtype: Any = None,
                  ragged_rank: Optional[int] = None) -> "Ragged":
        """The ragged tensor of nested lists, as ``tf.ragged.constant``: ragged in its first
        ``ragged_rank`` dimensions after the rows (by default every dimension but the
        values'), uniform below them.

        Examples:
          >>> import ndgather as ng
          >>> ng.Ragged.from_list([[[1, 2]], [], [[3, 4], [5, 6]]], ragged_rank=1).values.shape
          (3, 2)
        """
        depth, probe = 0, rows
        while isinstance(probe, (list, tuple)):
            depth += 1
            probe = next((x for x in probe if isinstance(x, (list, tuple)) and x),
                         probe[0] if probe else None)
        splits, level = [], list(rows)
        for _ in range(depth - 1 if ragged_rank is None else ragged_rank):
            lengths = [len(r) for r in level]
            splits.append(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
            level = [x for r in level for x in r]
        return cls(np.asarray(level, dtype=dtype), splits)

    @property
    def row_splits(self) -> np.ndarray:
        """The outermost splits."""
        return self.nested_row_splits[0]

    @property
    def flat_values(self) -> np.ndarray:
        """The values (TensorFlow's name)."""
        return self.values

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions."""
        return len(self.nested_row_splits)

    @property
    def nrows(self) -> int:
        """The number of rows."""
        return len(self.row_splits) - 1

    def to_list(self) -> list:
        """Nested lists, as ``tf.RaggedTensor.to_list``."""
        items = self.values.tolist()
        for s in reversed(self.nested_row_splits):
            items = [items[a:b] for a, b in zip(s[:-1].tolist(), s[1:].tolist())]
        return items

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Ragged) and self.ragged_rank == other.ragged_rank
                and all(np.array_equal(a, b) for a, b in
                        zip(self.nested_row_splits, other.nested_row_splits))
                and self.values.dtype == other.values.dtype
                and np.array_equal(self.values, other.values))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Ragged({self.to_list()!r})"


def _kind(x: Any) -> Optional[str]:
    """The ragged form of ``x``: "ragged", "tf", "arrow" or "polars"; None for anything
    else. Neither TensorFlow, pyarrow nor Polars is imported here: their types are known by
    name."""
    t = type(x)
    if t is np.ndarray or t is list or t is tuple:
        return None  # the common dense operands, at once
    if isinstance(x, Ragged):
        return "ragged"
    module = t.__module__ or ""
    if t.__name__ == "RaggedTensor" and module.startswith("tensorflow"):
        return "tf"
    if module.startswith("pyarrow") and t.__name__ in (
            "ListArray", "LargeListArray", "FixedSizeListArray", "ChunkedArray"):
        return "arrow"
    if module.startswith("polars") and t.__name__ == "Series" and x.dtype.is_nested():
        return "polars"
    return None


def is_ragged(x: Any) -> bool:
    """Whether ``x`` is one of the ragged forms the gathers take."""
    return _kind(x) is not None


def _from_arrow(a: Any) -> tuple[np.ndarray, list[np.ndarray], bool]:
    """An Arrow list array's values and offsets, views where Arrow's buffers allow (numbers
    without nulls); whether the outermost offsets are 64-bit."""
    import pyarrow as pa

    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    large = pa.types.is_large_list(a.type)
    splits = []
    while pa.types.is_list(a.type) or pa.types.is_large_list(a.type):
        if a.null_count:
            raise ValueError("null lists have no ragged form; fill them first "
                             "(pyarrow.compute.fill_null with an empty list)")
        offsets = a.offsets.to_numpy()
        base, end = int(offsets[0]), int(offsets[-1])
        splits.append(offsets - base if base else offsets)
        a = a.values.slice(base, end - base)
    inner = []
    while pa.types.is_fixed_size_list(a.type):
        if a.null_count:
            raise ValueError("null lists have no ragged form; fill them first")
        inner.append(a.type.list_size)
        a = a.flatten()
    if a.null_count:
        raise ValueError("null values have no ragged form; fill them first "
                         "(pyarrow.compute.fill_null)")
    values = a.to_numpy(zero_copy_only=False)
    n = len(values)
    for size in inner:
        n //= max(size, 1)
    return values.reshape([n] + inner), splits, large


def _to_arrow(values: np.ndarray, splits: list[np.ndarray]) -> Any:
    import pyarrow as pa

    inner = list(values.shape[1:])
    array = pa.array(values.reshape(-1))
    for size in reversed(inner):
        array = pa.FixedSizeListArray.from_arrays(array, size)
    for s in reversed(splits):
        kind = pa.LargeListArray if s.dtype == np.int64 else pa.ListArray
        array = kind.from_arrays(pa.array(s), array)
    return array


def _parts(x: Any, kind: Optional[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """An operand's values and splits (none for a dense one), the splits as the door reads
    them (a :class:`Ragged`'s are already, unless its attribute was set since)."""
    if kind == "ragged":
        return x.values, [_splits(s) for s in x.nested_row_splits]
    if kind == "tf":
        return (np.asarray(x.flat_values), [_splits(s) for s in x.nested_row_splits])
    if kind in ("arrow", "polars"):
        if kind == "polars":
            # Through the Arrow C Data Interface (the PyCapsule stream Polars exports).
            import pyarrow as pa

            x = pa.chunked_array(x)
        values, splits, _ = _from_arrow(x)
        return values, [_splits(s) for s in splits]
    return x, []


def _rebuild(kind: str, values: np.ndarray, splits: list[np.ndarray]) -> Any:
    """The result in the form of the operand it follows."""
    if kind == "tf":
        import tensorflow as tf

        if not splits:
            return tf.constant(values)
        return tf.RaggedTensor.from_nested_row_splits(values, splits, validate=False)
    if kind == "arrow":
        return _to_arrow(values, splits)
    if kind == "polars":
        import polars as pl

        return pl.Series(_to_arrow(values, splits))
    return Ragged._result(values, splits) if splits else values


def _operand(values: np.ndarray, splits: list) -> Any:
    """An operand as the door takes it: an array where dense, else a dict of its flat values
    and row splits."""
    if not splits:
        return values
    return {"values": values, "row_splits": splits}


def _operands(params: Any, indices: Any, as_array: Any, as_indices: Any) -> tuple:
    """The operands of a ragged call as the door takes them, params' flat values, and the
    form the result follows (params' where params is ragged, else indices')."""
    pk, ik = _kind(params), _kind(indices)
    pvalues, psplits = _parts(params, pk)
    ivalues, isplits = _parts(indices, ik)
    pvalues = as_array(pvalues)
    operands = [_operand(pvalues, psplits), _operand(as_indices(ivalues), isplits)]
    return operands, pvalues, psplits, pk or ik or "ragged"


def _attrs(axis: Optional[int], batch_dims: int, bad_indices: str) -> dict:
    attrs: dict = {"batch_dims": batch_dims, "bad_indices": bad_indices}
    if axis is not None:
        attrs["axis"] = axis
    return attrs


def call(op: str, params: Any, indices: Any, axis: Optional[int], batch_dims: int,
         bad_indices: str, fill_value: Any, as_array: Any, as_indices: Any,
         fill: Any) -> Any:
    """A gather with a ragged operand, its result in the form of the operand it follows."""
    operands, pvalues, _, form = _operands(params, indices, as_array, as_indices)
    attrs = _attrs(axis, batch_dims, bad_indices)
    attrs["fill_value"] = fill(bad_indices, fill_value, pvalues.dtype)
    r = _core.run_op(op, operands, attrs)
    # Dense operands (an Arrow fixed-size list is one) give a dense result.
    values, splits = r if isinstance(r, tuple) else (r, [])
    return _rebuild(form, values, splits)


def grad(op: str, params: Any, indices: Any, upstream: Any, axis: Optional[int],
         batch_dims: int, bad_indices: str, as_array: Any, as_indices: Any,
         as_numbers: Any) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The gradient of a ragged gather over params' flat values, as IndexedSlices: the
    registered gradient op, from params' flat values' shape and row splits."""
    operands, pvalues, psplits, _ = _operands(params, indices, as_array, as_indices)
    upstream_values, _ = _parts(upstream, _kind(upstream))
    attrs = _attrs(axis, batch_dims, bad_indices)
    attrs["params_shape"] = list(pvalues.shape)
    inputs = [operands[1], as_numbers(upstream_values), psplits]
    (slices,) = _core.run_op(op + "_grad", inputs, attrs)
    return slices
