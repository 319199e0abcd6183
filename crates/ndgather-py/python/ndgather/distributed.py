"""Gathers over tables and arrays larger than one machine, on Dask's distributed engine.

Two front ends over ``dask`` and ``distributed`` (not a scheduler of ndgather's own):

- :class:`ShardedTable`: an embedding table split into shards that live on the workers of a
  ``dask.distributed`` cluster, with TensorFlow's ``embedding_lookup`` partition strategies.
  :meth:`ShardedTable.lookup` sends each shard only the ids it holds, straight to a server
  on the worker that holds the shard (a Dask actor: no task, no scheduler on the way); each
  server runs one :func:`ndgather.gather` and sends back only the rows gathered. Lookups
  from concurrent threads share their round trips. On TCP and TLS a server answers on a
  socket of its own, in a fixed binary framing (``ndgather._shard_socket``: every connection
  proves that it holds the server's secret, and every size is bounded); servers on the
  client's host write the rows of a large lookup (1 MiB or more) into shared memory instead.
  A server lost with its worker is made again against its shard, and the lookup repeated;
  a lookup has a deadline, and raises ``TimeoutError`` rather than wait past it.
  :meth:`ShardedTable.scatter_add` makes a new version of the table; shards are immutable and
  every version is a Dask task of the previous one, so a shard lost with its worker is
  recomputed from its file or lineage.
- :func:`gather` and :func:`gather_nd` on a ``dask.array.Array``: lazy arrays whose tasks
  read only the chunks that the indices touch.

Every check runs before any work is sent, in the core (TensorFlow's messages as in
:func:`ndgather.gather`). The same code runs on a ``LocalCluster`` and on a cluster started
with ``dask scheduler`` and ``dask worker tcp://HOST:8786``.

>>> import numpy as np
>>> from dask.distributed import Client, LocalCluster
>>> from ndgather.distributed import ShardedTable
>>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=":0"))
>>> table = ShardedTable.from_array(client, np.arange(10.0).reshape(5, 2), num_shards=2)
>>> table.lookup([4, 0, 4])
array([[8., 9.],
       [0., 1.],
       [8., 9.]])
>>> table.scatter_add([0, 0], np.ones((2, 2))).lookup([0])
array([[2., 3.]])
>>> client.close()
"""

from __future__ import annotations

try:
    # The modules below import these; checked here first, so that a missing one is named.
    import dask.array  # noqa: F401
    import distributed.comm  # noqa: F401
    import distributed.protocol  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError(
        "ndgather.distributed needs dask and distributed: pip install 'dask[array]' distributed"
    ) from e

# The code lives in private modules, one concern each (their docstrings say which), so that
# this module is only the public names.
from ._lazy_gather import gather, gather_nd
from ._lookup_policy import LookupPolicy  # noqa: F401 - public, outside __all__ as before
from ._sharded_table import PARTITION_STRATEGIES, ShardedTable  # noqa: F401 - as above

# Private names that tests and bench/ import from here, kept as the same objects. To patch
# one for the code that uses it, patch it where it lives: rebinding it here changes nothing.
from ._lookup_batcher import _Batcher  # noqa: F401
from ._shard_client import _Server  # noqa: F401
from ._shard_server import _ShardServer, _take  # noqa: F401
from ._shared_memory import _map_shared, _probe_buffer, _SharedBuffer  # noqa: F401

__all__ = ["ShardedTable", "gather", "gather_nd"]
