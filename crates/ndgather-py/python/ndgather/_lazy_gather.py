"""Lazy gathers: :func:`gather` and :func:`gather_nd` on a ``dask.array.Array``.

The indices are checked at once (the core's checks and messages); the result is a lazy
dask array whose output blocks each read only the chunks of the input that their indices
touch.
"""

from __future__ import annotations

import math
from typing import Optional

import dask
import dask.array as da
import numpy as np
from numpy.typing import ArrayLike

from . import _core, _indices
from . import gather as _gather
from . import gather_nd as _gather_nd
from ._lookup_policy import LookupPolicy, _filling


# Output blocks of a lazy gather hold about this many bytes.
_BLOCK_BYTES = 64 << 20


def _known_shape(x):
    if any(math.isnan(d) for d in x.shape):
        raise ValueError(
            "the dask array has chunks of unknown size; call x.compute_chunk_sizes() first")
    return [int(d) for d in x.shape]


def _fill(count, trailing, dtype, policy):
    """``count`` slices as the policy (``"ignore"`` or ``"fill"``) leaves a bad index's."""
    empty = np.empty((0,) + trailing, dtype)
    return _gather(empty, np.full(count, -1, np.int64), bad_indices=policy)


def _assemble(item_shape, trailing, dtype, dropped, policy, pieces, *chunks):
    """One output block: slices of the touched ``chunks`` at the items' positions, the
    dropped ones as ``policy`` fills them."""
    count = math.prod(item_shape)
    out = (_fill(count, trailing, dtype, policy) if dropped
           else np.empty((count,) + trailing, dtype))
    for (positions, local), chunk in zip(pieces, chunks):
        out[positions] = _gather_nd(chunk, local)
    return out.reshape(item_shape + trailing)


def _group_by_chunk(linear, local, keep):
    """The chunks (linear ids) that the kept items fall in, and for each the items'
    positions, in order, with their coordinates inside the chunk."""
    kept = np.flatnonzero(keep)
    order = kept[np.argsort(linear[kept], kind="stable")]
    touched, starts = np.unique(linear[order], return_index=True)
    groups = np.split(order, starts[1:]) if len(order) else []
    return touched, [(g, local[g]) for g in groups]


def _take_items(x, coords, policy):
    """``gather_nd(x, coords)`` with ``batch_dims=0`` on a dask array, for checked
    coordinates (rows of -1: a default-filled slice). Output blocks split the leading item
    axis; each reads only the chunks its items fall in."""
    k = coords.shape[-1]
    item_shape = coords.shape[:-1]
    flat = coords.reshape(math.prod(item_shape), k)
    dropped = flat[:, 0] < 0 if k else np.zeros(len(flat), bool)
    grid = [len(c) for c in x.chunks[:k]]
    chunk_of = np.zeros((len(flat), k), np.int64)
    local = flat.copy()
    for d in range(k):
        bounds = np.cumsum((0,) + x.chunks[d])
        c = np.searchsorted(bounds[1:], flat[:, d], side="right")
        c[dropped] = 0
        chunk_of[:, d] = c
        local[:, d] -= bounds[c]
    linear = np.ravel_multi_index(chunk_of.T, grid) if k else np.zeros(len(flat), np.int64)
    trailing_chunks = x.chunks[k:]
    slice_bytes = max(1, math.prod(max(c, default=0) for c in trailing_chunks)) * x.dtype.itemsize
    per_lead = math.prod(item_shape[1:]) if item_shape else 1
    lead = item_shape[0] if item_shape else 1
    step = max(1, _BLOCK_BYTES // max(1, per_lead * slice_bytes))
    blocks = x.to_delayed(optimize_graph=False)
    out_blocks = []
    for start in range(0, max(lead, 1), step):
        stop = min(lead, start + step)
        lo, hi = start * per_lead, stop * per_lead
        block_items = ((stop - start),) + tuple(item_shape[1:]) if item_shape else ()
        keep = ~dropped[lo:hi]
        touched, pieces = _group_by_chunk(linear[lo:hi], local[lo:hi], keep)
        any_dropped = not keep.all()
        row = []
        for t in np.ndindex(*(len(c) for c in trailing_chunks)):
            trailing = tuple(c[i] for c, i in zip(trailing_chunks, t))
            deps = [blocks[np.unravel_index(u, grid) + t] for u in touched]
            task = dask.delayed(_assemble, pure=True)(
                block_items, trailing, x.dtype, any_dropped, _filling(policy), pieces, *deps)
            shape = block_items + trailing
            row.append(da.from_delayed(task, shape, dtype=x.dtype,
                                       meta=np.empty((0,) * len(shape), x.dtype)))
        out_blocks.append(row)
    n_item = len(item_shape)
    nested = [_nest(row, [len(c) for c in trailing_chunks]) for row in out_blocks]
    if n_item == 0:
        return da.block(nested[0]) if trailing_chunks else nested[0]
    return da.block(_lift(nested, n_item - 1))


def _nest(flat, dims):
    """A flat row-major list as nested lists of ``dims``."""
    if not dims:
        return flat[0]
    size = math.prod(dims[1:])
    return [_nest(flat[i * size:(i + 1) * size], dims[1:]) for i in range(dims[0])]


def _lift(blocks, depth):
    """Wraps each leading block ``depth`` times, for the item axes that are not split."""
    for _ in range(depth):
        blocks = [[b] for b in blocks]
    return blocks


def _batch_positions(coords, b):
    """Fills ``coords[..., d]`` for the batch axes ``d < b`` with each item's position there."""
    items = coords.ndim - 1
    for d in range(b):
        n = coords.shape[d]
        coords[..., d] = np.arange(n).reshape((n,) + (1,) * (items - 1 - d))


def gather(x: da.Array, indices: ArrayLike, axis: Optional[int] = None, batch_dims: int = 0,
           *, bad_indices: LookupPolicy = "error") -> da.Array:
    """:func:`ndgather.gather` on a ``dask.array.Array``, as a lazy dask array.

    ``indices`` is an in-memory array of integers. The result's ``compute()`` equals
    ``ndgather.gather(x.compute(), indices, axis, batch_dims)``; its tasks read only the
    chunks of ``x`` that the indices touch. Shapes and index values are checked now, with
    TensorFlow's messages.

    >>> import dask.array as da, numpy as np
    >>> from ndgather.distributed import gather
    >>> x = da.from_array(np.arange(12).reshape(4, 3), chunks=2)
    >>> gather(x, [3, 0], axis=0).compute()
    array([[ 9, 10, 11],
           [ 0,  1,  2]])
    """
    indices = _indices(indices)
    shape = _known_shape(x)
    _, pos, a, b = _core.resolve_gather(shape, indices, axis, batch_dims, bad_indices)
    # Move the gathered axis just after the batch axes: then each index picks a slice of the
    # trailing axes (outer and inner), as in gather_nd with the batch position prepended.
    order = list(range(b)) + [a] + list(range(b, a)) + list(range(a + 1, len(shape)))
    coords = np.empty(indices.shape + (b + 1,), np.int64)
    _batch_positions(coords, b)
    coords[..., b] = pos
    coords[pos < 0] = -1
    taken = _take_items(x.transpose(order), coords, bad_indices)
    q = indices.ndim - b
    back = (list(range(b)) + list(range(b + q, b + q + a - b)) + list(range(b, b + q))
            + list(range(b + q + a - b, taken.ndim)))
    return taken.transpose(back)


def gather_nd(x: da.Array, indices: ArrayLike, batch_dims: int = 0, *,
              bad_indices: LookupPolicy = "error") -> da.Array:
    """:func:`ndgather.gather_nd` on a ``dask.array.Array``, as a lazy dask array.

    ``indices`` is an in-memory array of integers; the result's ``compute()`` equals
    ``ndgather.gather_nd(x.compute(), indices, batch_dims)``, and its tasks read only the
    chunks that the index vectors fall in.

    >>> import dask.array as da, numpy as np
    >>> from ndgather.distributed import gather_nd
    >>> x = da.from_array(np.arange(12).reshape(4, 3), chunks=2)
    >>> gather_nd(x, [[3, 2], [0, 1]]).compute()
    array([11,  1])
    """
    indices = _indices(indices)
    shape = _known_shape(x)
    _, pos, _, b = _core.resolve_gather_nd(shape, indices, batch_dims, bad_indices)
    coords = np.empty(indices.shape[:-1] + (b + indices.shape[-1],), np.int64)
    _batch_positions(coords, b)
    coords[..., b:] = pos
    coords[(pos < 0).any(axis=-1)] = -1
    return _take_items(x, coords, bad_indices)
