"""The sharded embedding table: its construction, routing of ids to shards, and versions.

:class:`ShardedTable` splits a table into shards held by a Dask cluster's workers (with
TensorFlow's ``embedding_lookup`` partition strategies), looks ids up through its shards'
servers (``_table_servers``), and makes new versions by scatter updates, each shard a
Dask task of the previous one. The tasks that make and update shards on the workers are
here too.
"""

from __future__ import annotations

import math
import time
from typing import Optional, Sequence

import numpy as np
from distributed import Client
from distributed.comm import CommClosedError
from numpy.typing import ArrayLike

from . import InvalidArgumentError, PartitionStrategy, _core, _indices
from . import embedding_bag as _embedding_bag
from . import gather as _gather
from . import _tensor_scatter
from ._deadlines import _NOTICE_SECONDS, _RECOVERY_SECONDS
from ._lookup_policy import LookupPolicy, _filling
from ._shared_memory import _SHARED_MIN_BYTES
from ._table_servers import _Servers


PARTITION_STRATEGIES = ("mod", "div")


def _strategy(name):
    if name not in PARTITION_STRATEGIES:
        raise ValueError(f"partition_strategy must be 'mod' or 'div', got {name!r}")
    return name


def _shard_rows(total, num_shards, strategy):
    """Rows per shard as TensorFlow's ``embedding_lookup`` assigns ``total`` ids (the core's
    ``PartitionStrategy::shard_rows``)."""
    return _core.shard_rows(total, num_shards, strategy)


def _npy_header(path):
    """(shape, dtype) of a ``.npy`` file, read from its header only."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return array.shape, array.dtype


def _load_npy(path, shape, dtype):
    """A shard file, memory-mapped; refuses a file changed since the table was made."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    if array.shape != shape or array.dtype != dtype:
        raise InvalidArgumentError(
            f"shard file {path} now holds {array.dtype} {array.shape}, "
            f"but the table was made from {dtype} {shape}")
    return array


def _own(rows):
    return rows


def _inverse(groups):
    """Where each position's row is once the rows of ``groups`` (arrays of positions that
    together name each position once) lie back to back."""
    order = np.concatenate(groups) if len(groups) != 1 else groups[0]
    inverse = np.empty(len(order), np.int64)
    inverse[order] = np.arange(len(order))
    return inverse


def _scatter_rows(shard, kind, local_ids, updates):
    """A copy of ``shard`` with ``updates`` applied to rows ``local_ids`` by
    ``tensor_scatter_nd_<kind>``: one at a time, in the order given, as TensorFlow applies
    them."""
    out = np.array(shard)
    _tensor_scatter(kind, out, local_ids.reshape(-1, 1), updates, "error", out)
    return out


class ShardedTable:
    """An embedding table of ``rows`` rows in shards held by the workers of a Dask cluster.

    Make one with :meth:`from_npy` (shard files, memory-mapped on the workers) or
    :meth:`from_array`; read it with :meth:`lookup`; update it with :meth:`scatter_add` and its
    siblings (:meth:`scatter_update`, :meth:`scatter_sub`, :meth:`scatter_min`,
    :meth:`scatter_max`).

    Partition strategies are those of TensorFlow's ``embedding_lookup`` for ``n`` shards:

    - ``"mod"``: id ``i`` is row ``i // n`` of shard ``i % n``.
    - ``"div"``: each shard holds a contiguous range of ids. :meth:`from_array` splits as
      TensorFlow does (the first ``rows % n`` shards one row more); :meth:`from_npy` takes the
      ranges from the files' row counts, which is TensorFlow's assignment whenever the files
      were split that way.
    """

    def __init__(self, client, shards, shard_rows, row_shape, dtype, partition_strategy,
                 servers=None):
        self._client = client
        self._servers = servers if servers is not None else _Servers(client)
        self._shards = list(shards)
        self._shard_rows = list(shard_rows)
        self._row_shape = tuple(row_shape)
        self._dtype = np.dtype(dtype)
        self._strategy = partition_strategy
        self._offsets = np.cumsum([0] + self._shard_rows)

    # construction

    @classmethod
    def from_npy(cls, client: Client, paths: Sequence[str],
                 partition_strategy: PartitionStrategy = "div") -> ShardedTable:
        """A table whose shards are ``.npy`` files, in order, memory-mapped by the workers.

        The files must be readable at these paths by every worker that may load them (a
        shared or replicated file system on a real cluster). Their headers are read on the
        workers first: a missing file, a row shape or dtype that differs between shards, or
        row counts that ``"mod"`` cannot hold are errors before any shard is loaded. A lost
        shard is loaded again from its file.

        >>> import numpy as np, tempfile, os
        >>> from dask.distributed import Client, LocalCluster
        >>> from ndgather.distributed import ShardedTable
        >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=":0"))
        >>> d = tempfile.mkdtemp()
        >>> paths = [os.path.join(d, f"shard{p}.npy") for p in range(2)]
        >>> np.save(paths[0], np.array([[0, 0], [1, 1]])); np.save(paths[1], np.array([[2, 2]]))
        >>> ShardedTable.from_npy(client, paths).lookup([2, 0])
        array([[2, 2],
               [0, 0]])
        >>> client.close()
        """
        strategy = _strategy(partition_strategy)
        paths = [str(p) for p in paths]
        if not paths:
            raise ValueError("from_npy needs at least one shard file")
        headers = client.gather([client.submit(_npy_header, p, pure=False) for p in paths])
        shape0, dtype0 = headers[0]
        for path, (shape, dtype) in zip(paths, headers):
            if len(shape) < 1:
                raise InvalidArgumentError(f"shard file {path} holds a scalar; shards need rows")
            if dtype != dtype0 or shape[1:] != shape0[1:]:
                raise InvalidArgumentError(
                    f"shard file {path} holds rows of {dtype} {list(shape[1:])}, but "
                    f"{paths[0]} holds rows of {dtype0} {list(shape0[1:])}: all shards must "
                    "hold rows of one shape and dtype")
        rows = [shape[0] for shape, _ in headers]
        if strategy == "mod" and rows != _shard_rows(sum(rows), len(rows), "mod"):
            raise InvalidArgumentError(
                f"shard row counts {rows} cannot hold a 'mod' partition of {sum(rows)} ids, "
                f"which needs {_shard_rows(sum(rows), len(rows), 'mod')}")
        shards = [client.submit(_load_npy, p, h[0], h[1], pure=False)
                  for p, h in zip(paths, headers)]
        return cls(client, shards, rows, shape0[1:], dtype0, strategy)

    @classmethod
    def from_array(cls, client: Client, array: ArrayLike, num_shards: int = 8,
                   partition_strategy: PartitionStrategy = "mod") -> ShardedTable:
        """A table split from an array in memory into ``num_shards`` shards on the workers.

        Each shard is a task that holds its rows, so the scheduler can recompute it if its
        worker is lost (at the cost of keeping a copy in the scheduler: for tables larger than
        the client's memory, use :meth:`from_npy`).
        """
        strategy = _strategy(partition_strategy)
        array = np.asarray(array)
        if array.ndim < 1:
            raise InvalidArgumentError("a table needs rows: got a scalar")
        if isinstance(num_shards, bool) or not isinstance(num_shards, (int, np.integer)):
            raise TypeError(f"num_shards must be an int, got {type(num_shards).__name__}")
        if num_shards < 1:
            raise ValueError(f"num_shards must be at least 1, got {num_shards}")
        n = int(num_shards)
        rows = _shard_rows(len(array), n, strategy)
        if strategy == "mod":
            parts = [np.ascontiguousarray(array[p::n]) for p in range(n)]
        else:
            cuts = np.cumsum([0] + rows)
            parts = [np.ascontiguousarray(array[cuts[p]:cuts[p + 1]]) for p in range(n)]
        shards = [client.submit(_own, part, pure=False) for part in parts]
        return cls(client, shards, rows, array.shape[1:], array.dtype, strategy)

    # what it is

    @property
    def shape(self) -> tuple[int, ...]:
        """The whole table's shape: ``(rows,) + row shape``."""
        return (int(self._offsets[-1]),) + self._row_shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def num_shards(self) -> int:
        return len(self._shards)

    @property
    def partition_strategy(self) -> PartitionStrategy:
        return self._strategy

    @property
    def shards(self) -> list:
        """The shards' Dask futures, in order (for ``client.who_has`` and the like)."""
        return list(self._shards)

    def __repr__(self):
        return (f"ShardedTable(shape={self.shape}, dtype={self._dtype}, "
                f"num_shards={self.num_shards}, partition_strategy={self._strategy!r})")

    # routing

    def _route(self, ids, bad_indices):
        """Checks ``ids`` against the whole table (the core's checks and messages) and
        returns, over ``ids`` flattened: each id's shard, its row in that shard, and the
        output shape. Ids whose rows the policy leaves default-filled go to shard 0 as -1."""
        out_shape, rows, _, _ = _core.resolve_gather(list(self.shape), _indices(ids), 0, 0,
                                                     bad_indices)
        # Each row's shard and place in it: the core's routing (PartitionStrategy::route).
        shard, local = _core.route_rows(self._strategy, self._shard_rows, rows.ravel())
        return shard, local, tuple(out_shape)

    @staticmethod
    def _by_shard(shard, n):
        """Positions of ``shard`` grouped by shard, each group in its original order."""
        key = shard.astype(np.uint16 if n <= 1 << 16 else np.int64)
        order = np.argsort(key, kind="stable")  # a radix sort for 16-bit keys
        bounds = np.searchsorted(key[order], np.arange(n + 1), side="left")
        return [(p, order[bounds[p]:bounds[p + 1]]) for p in range(n)
                if bounds[p + 1] > bounds[p]]

    # reading and writing

    def lookup(self, ids: ArrayLike, bad_indices: LookupPolicy = "error") -> np.ndarray:
        """The rows that ``ids`` name, as ``ndgather.gather(whole_table, ids)`` would give.

        ``ids`` of any shape and integer dtype; the result is a NumPy array of shape
        ``ids.shape + row shape``, rows in the order of ``ids``. ``bad_indices`` as in
        :func:`ndgather.gather` over the whole table: an error names the first bad id in
        row-major order, with TensorFlow's message, before any work is sent. A lookup that
        cannot be answered within ``_RECOVERY_SECONDS`` (120 s: time for Dask to bring a
        lost worker's shards back) raises ``TimeoutError``.
        """
        shard, local, out_shape = self._route(ids, bad_indices)
        groups = self._by_shard(shard, self.num_shards)
        wanted = [(p, pos, local[pos]) for p, pos in groups]
        policies = [_filling(bad_indices) if (w < 0).any() else "error" for _, _, w in wanted]
        row_bytes = math.prod(self._row_shape) * self._dtype.itemsize
        deadline = time.monotonic() + _RECOVERY_SECONDS
        while True:
            try:
                # Each shard's server is called directly, all at once: no task, no
                # scheduler, no key.
                parts = [(self._shards[p], w, policy)
                         for (p, _, w), policy in zip(wanted, policies)]
                if shard.size * row_bytes >= _SHARED_MIN_BYTES:
                    # Many rows: written by servers on this host into shared memory, then
                    # put in place by one gather.
                    buffer = self._servers.fetch_shared(parts, row_bytes, deadline)
                    if buffer is not None:
                        rows = buffer.rows(shard.size, self._row_shape, self._dtype)
                        out = _gather(rows, _inverse([pos for _, pos, _ in wanted]))
                        del rows
                        self._servers.give_back(buffer)
                        return out.reshape(out_shape)
                # Otherwise with the ids of concurrent lookups, each answer put in place.
                out = np.empty((shard.size,) + self._row_shape, self._dtype)
                for (_, pos, _), rows in zip(wanted, self._servers.fetch(parts, deadline)):
                    out[pos] = rows
                return out.reshape(out_shape)
            except (OSError, RuntimeError) as e:
                # A server whose worker was lost is made again, and the lookup repeated.
                broken = isinstance(e, (ConnectionError, CommClosedError, EOFError,
                                        TimeoutError))
                if time.monotonic() > deadline or not self._servers.forget_lost(
                        deadline, _NOTICE_SECONDS if broken else 0):
                    raise

    def embedding_bag(self, input: ArrayLike, offsets: Optional[ArrayLike] = None, *,
                      mode: str = "mean", per_sample_weights: Optional[ArrayLike] = None,
                      include_last_offset: bool = False, padding_idx: Optional[int] = None,
                      max_norm: Optional[float] = None,
                      bad_indices: LookupPolicy = "error") -> np.ndarray:
        """:func:`ndgather.embedding_bag` over this table: equal to it on the whole table, bit
        for bit, with every check (PyTorch's messages) made before any work is sent. Only the
        rows the bags use are fetched (one :meth:`lookup`); the bags are reduced here.
        """
        ids = _indices(input)
        if ids.ndim == 2 and offsets is None:  # fixed-length bags, as offsets
            offsets = np.arange(ids.shape[0], dtype=np.int64) * ids.shape[1]
            ids = ids.reshape(-1)
        # Every check, on a table of the same rows and no columns: nothing is computed.
        _embedding_bag(np.empty((self.shape[0], 0), self._dtype), ids, offsets, mode=mode,
                       per_sample_weights=per_sample_weights,
                       include_last_offset=include_last_offset, padding_idx=padding_idx,
                       bad_indices=bad_indices)
        total = self.shape[0]
        # Each id's row under the policy (the core's resolution); -1 for an id "ignore"
        # leaves out.
        _, rows, _, _ = _core.resolve_gather([total], ids, 0, 0, bad_indices)
        kept = rows >= 0
        if padding_idx is not None:
            kept &= rows != padding_idx % total
        # The kept ids, in order, and each bag's start among them.
        before = np.concatenate([[0], np.cumsum(kept)])
        local_offsets = None if offsets is None else before[np.asarray(offsets, np.int64)]
        fetched = self.lookup(rows[kept]).reshape((int(kept.sum()),) + self._row_shape)
        # A row no id reads stands for padding_idx, so that the reduction takes PyTorch's
        # path with a padding_idx exactly when the caller gave one.
        table = np.concatenate([fetched, np.zeros((1,) + self._row_shape, self._dtype)])
        weights = None if per_sample_weights is None else \
            np.asarray(per_sample_weights).reshape(-1)[kept]
        return _embedding_bag(table, np.arange(len(fetched), dtype=np.int64), local_offsets,
                              mode=mode, per_sample_weights=weights,
                              include_last_offset=include_last_offset,
                              padding_idx=None if padding_idx is None else len(fetched),
                              max_norm=max_norm)

    def _scatter(self, kind: str, ids: ArrayLike, updates: ArrayLike) -> ShardedTable:
        """A new version with ``updates`` applied by ``tensor_scatter_nd_<kind>``."""
        # The updates have the shape a lookup of `ids` returns.
        shard, local, want = self._route(ids, "error")
        updates = np.asarray(updates)
        if updates.shape != want:
            raise InvalidArgumentError(
                f"updates must have shape ids.shape + the row shape = {list(want)}, "
                f"got {list(updates.shape)}")
        if updates.dtype != self._dtype:
            if not np.can_cast(updates.dtype, self._dtype, "same_kind"):
                raise TypeError(f"updates of dtype {updates.dtype} cannot be applied to a "
                                f"table of {self._dtype}")
            updates = updates.astype(self._dtype)
        updates = updates.reshape((shard.size,) + self._row_shape)
        shards = list(self._shards)
        # Grouped by shard, each group in the order of `ids`: every row meets its updates
        # in that order, as in one tensor_scatter_nd call on the whole table.
        for p, pos in self._by_shard(shard, self.num_shards):
            shards[p] = self._client.submit(_scatter_rows, shards[p], kind, local[pos],
                                            updates[pos])
        return ShardedTable(self._client, shards, self._shard_rows, self._row_shape,
                            self._dtype, self._strategy, self._servers.keeping(shards))

    def scatter_update(self, ids: ArrayLike, updates: ArrayLike) -> ShardedTable:
        """A new table: this one with the row that ``ids[k]`` names replaced by
        ``updates[k]``; a repeated id keeps its last update. As :meth:`scatter_add`."""
        return self._scatter("update", ids, updates)

    def scatter_add(self, ids: ArrayLike, updates: ArrayLike) -> ShardedTable:
        """A new table: this one with ``updates[k]`` added to the row that ``ids[k]`` names.

        ``updates`` has shape ``ids.shape + row shape``. Updates are applied one at a time in
        the order of ``ids``, as ``tf.tensor_scatter_nd_add`` and ``tf.Variable.scatter_add``
        apply them (and ``np.add.at``), so the result equals TensorFlow's bit for bit, on
        every run and every cluster. Rows no id names are unchanged, bit for bit. Only shards
        that receive updates get a new version; this table is left as it was.
        """
        return self._scatter("add", ids, updates)

    def scatter_sub(self, ids: ArrayLike, updates: ArrayLike) -> ShardedTable:
        """A new table: ``updates`` subtracted, as :meth:`scatter_add` adds them."""
        return self._scatter("sub", ids, updates)

    def scatter_min(self, ids: ArrayLike, updates: ArrayLike) -> ShardedTable:
        """A new table: each named row the element-wise minimum of it and its updates, as
        ``tf.tensor_scatter_nd_min`` (integer and real float tables)."""
        return self._scatter("min", ids, updates)

    def scatter_max(self, ids: ArrayLike, updates: ArrayLike) -> ShardedTable:
        """A new table: each named row the element-wise maximum of it and its updates, as
        ``tf.tensor_scatter_nd_max`` (integer and real float tables)."""
        return self._scatter("max", ids, updates)

    def to_numpy(self) -> np.ndarray:
        """The whole table as one NumPy array (for tests and small tables)."""
        parts = self._client.gather(self._shards)
        if self._strategy == "div":
            return np.concatenate([np.asarray(p) for p in parts])
        out = np.empty(self.shape, self._dtype)
        for p, part in enumerate(parts):
            out[p::self.num_shards] = part
        return out
