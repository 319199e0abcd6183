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

import asyncio
import collections
import concurrent.futures
import math
import mmap
import os
import threading
import time
import weakref
from typing import Any, Coroutine, List, Literal, Optional, Sequence, Tuple

import numpy as np

try:
    import dask
    import dask.array as da
    from distributed import Client
    from distributed.comm import CommClosedError, get_address_host, parse_address
    from distributed.protocol import to_serialize
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError(
        "ndgather.distributed needs dask and distributed: pip install 'dask[array]' distributed"
    ) from e

from numpy.typing import ArrayLike

from . import InvalidArgumentError, PartitionStrategy, _core, _indices
from . import embedding_bag as _embedding_bag
from . import gather as _gather
from . import gather_nd as _gather_nd
from . import _tensor_scatter
from . import _shard_socket
from ._shard_socket import Connection, Endpoint, ServerBusy

__all__ = ["ShardedTable", "gather", "gather_nd"]

PARTITION_STRATEGIES = ("mod", "div")
#: The policies a sharded lookup or a lazy gather takes (``"fill"`` is for arrays in memory).
LookupPolicy = Literal["error", "ignore", "clamp", "negative", "wrap"]

# Output blocks of a lazy gather hold about this many bytes.
_BLOCK_BYTES = 64 << 20
# How long a lookup may take, end to end, while Dask recovers a lost worker's shards: past
# it the lookup raises TimeoutError.
_RECOVERY_SECONDS = 120
# The longest one attempt waits on a server (a batch of socket calls, an actor call), so
# that a server that went silent leaves time to make it again.
_CALL_SECONDS = 30
# How long a lookup whose connection to a server broke waits for the scheduler to see that
# the server's worker is gone (it may not have yet, on a loaded machine) before it takes
# the error as the server's own.
_NOTICE_SECONDS = 10
# Lookups whose rows take at least this many bytes come back through shared memory where
# every server shares the client's host: below it, a message costs no more.
_SHARED_MIN_BYTES = 1 << 20
# Shared buffers a server keeps mapped (the most recent ones), so that a buffer the client
# reuses is not mapped again for each lookup.
_SERVER_MAPS = 4


def _strategy(name):
    if name not in PARTITION_STRATEGIES:
        raise ValueError(f"partition_strategy must be 'mod' or 'div', got {name!r}")
    return name


def _shard_rows(total, num_shards, strategy):
    """Rows per shard as TensorFlow's ``embedding_lookup`` assigns ``total`` ids (the core's
    ``PartitionStrategy::shard_rows``)."""
    return _core.shard_rows(total, num_shards, strategy)


# --- what runs on the workers -------------------------------------------------------------

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


def _take(shard, local_ids, bad_indices):
    return _gather(shard, local_ids, bad_indices=bad_indices)


def _map_shared(path: str, nbytes: int, identity: Tuple[int, int]) -> mmap.mmap:
    """``nbytes`` of the memory file at ``path``, mapped shared and writable, if it is still
    the file ``identity`` (its device and inode) names: a client's descriptor number is
    reused once the client closes it, and a server called for a buffer the client has
    since dropped must not write into the next file that took its number. Only a memory
    file (``memfd``) is written: never a file on disk, whatever its identity."""
    if not os.readlink(path).startswith("/memfd:"):
        raise RuntimeError(f"{path} is not a memory file of the client's")
    fd = os.open(path, os.O_RDWR)
    try:
        found = os.fstat(fd)
        if (found.st_dev, found.st_ino) != tuple(identity):
            raise RuntimeError(f"the client's memory file at {path} is not the one this call "
                               "was for: the client has dropped it")
        return mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


class _Sockets:
    """A worker's shard-server sockets (listeners and client connections), closed with the
    worker (a Dask worker extension: ``Worker.close`` calls ``close``), which would otherwise
    wait on connections its clients left open."""

    NAME = "ndgather-shard-sockets"

    def __init__(self):
        self._open = weakref.WeakSet()

    def add(self, socket):
        self._open.add(socket)

    def discard(self, socket):
        self._open.discard(socket)

    def close(self):
        for socket in list(self._open):
            socket.close()


def _close_on_loop(loop, closable):
    """``closable.close()`` on ``loop``'s thread, unless the loop is closed already."""
    try:
        loop.call_soon_threadsafe(closable.close)
    except RuntimeError:
        pass  # the loop is closed, and its sockets with it


class _ShardServer:
    """One shard's rows, held by a Dask actor on the worker that holds the shard, so that a
    lookup goes from the client to that worker and back without the scheduler."""

    def __init__(self, shard):
        self._shard = shard
        self._maps = collections.OrderedDict()  # shared buffer's key -> its mapping
        self._listener = None  # the server's own socket, once a client asks for it
        self._endpoint = None

    def __del__(self):
        if self._listener is not None:
            _close_on_loop(self._listener.server.get_loop(), self._listener.server)

    async def listen(self) -> Optional[Endpoint]:
        """Opens the server's own socket on its worker's host, once, and returns its
        :class:`~ndgather._shard_socket.Endpoint`: address, rows' dtype and shape, and the
        server's secret, which only this reply (Dask's own channel) carries. Lookups of a
        client on TCP or TLS (the worker's own SSL context) then send ids and receive rows
        in a fixed binary framing, without Dask's messages around them. ``None`` for rows of
        Python objects, which have no bytes to send."""
        if self._shard.dtype.hasobject:
            return None
        if self._endpoint is None:
            from distributed import get_worker
            worker = get_worker()
            host = get_address_host(worker.address)
            context = None
            if parse_address(worker.address)[0] == "tls":
                context = worker.security.get_listen_args("worker").get("ssl_context")
            sockets = worker.extensions.setdefault(_Sockets.NAME, _Sockets())
            secret = _shard_socket.new_secret()
            row_bytes = math.prod(self._shard.shape[1:]) * self._shard.dtype.itemsize
            listener = _shard_socket.Listener(
                secret, lambda ids, policy: _take(self._shard, ids, policy), row_bytes,
                sockets.add, sockets.discard)
            port = await listener.start(host, context)
            sockets.add(listener.server)
            if self._endpoint is not None:  # a concurrent call opened one first
                listener.server.close()
                return self._endpoint
            self._listener = listener
            self._endpoint = Endpoint(host, port, self._shard.dtype.str,
                                      tuple(self._shard.shape[1:]), secret,
                                      _shard_socket.max_ids(row_bytes))
        return self._endpoint

    async def take(self, local_ids, bad_indices):
        # A coroutine runs on the worker's event loop, with no hop to the actor's thread:
        # a gather is short, and releases the GIL.
        return _take(self._shard, local_ids, bad_indices)

    async def shares_memory_with(self, path: str, identity: Tuple[int, int],
                                 token: bytes) -> bool:
        """Whether this worker can map the client's memory file at ``path`` (the client's
        own host and process namespace): it must be the file ``identity`` names, and read
        ``token``."""
        try:
            with _map_shared(path, len(token), identity) as m:
                return m[:len(token)] == token
        except (OSError, ValueError, RuntimeError):
            return False

    async def take_into(self, local_ids, bad_indices, buffer, offset):
        """The rows of ``local_ids`` written into the client's shared ``buffer`` (its key,
        path, size and file identity) at byte ``offset``, instead of sent back."""
        key, path, nbytes, identity = buffer
        mapping = self._maps.pop(key, None) or _map_shared(path, nbytes, identity)
        self._maps[key] = mapping
        while len(self._maps) > _SERVER_MAPS:
            self._maps.popitem(last=False)[1].close()
        rows = (len(local_ids),) + self._shard.shape[1:]
        view = np.ndarray(rows, self._shard.dtype, mapping, offset)
        _gather(self._shard, local_ids, bad_indices=bad_indices, out=view)


def _remaining(deadline: float, attempt: bool = True) -> float:
    """Seconds left until ``deadline`` (``time.monotonic``), for one attempt at most
    ``_CALL_SECONDS``; ``TimeoutError`` once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(f"the lookup did not finish in {_RECOVERY_SECONDS} s")
    return min(left, _CALL_SECONDS) if attempt else left


def _on_loop(client: Client, coroutine: Coroutine, seconds: float) -> Any:
    """``coroutine`` run on the client's event loop from another thread, given ``seconds``:
    ``TimeoutError`` then, even if the loop never runs it (closed or stopped)."""
    future = asyncio.run_coroutine_threadsafe(_shard_socket.within(coroutine, seconds),
                                              client.loop.asyncio_loop)
    try:
        return future.result(seconds + 1)  # the coroutine's own deadline comes first
    except concurrent.futures.TimeoutError as e:  # not the builtin before Python 3.11
        future.cancel()
        raise TimeoutError(f"the client's event loop gave no answer in {seconds:g} s") from e


class _Server:
    """A shard server's address: the worker that holds its actor, and the actor's key."""

    def __init__(self, client, address, key):
        self._client, self.address, self.key = client, address, key
        self.endpoint = None  # the server's own socket (`Endpoint`), where it has one
        self.ssl_context = None  # the cluster's, on TLS
        self._idle = []  # open connections to it (`Connection`), for the next calls

    def __del__(self):
        for connection in self._idle:
            _close_on_loop(self._client.loop.asyncio_loop, connection)

    async def take(self, ids: np.ndarray, policy: str) -> np.ndarray:
        """On the client's event loop: the rows of ``ids`` (local to the shard), through the
        server's own socket where it has one, else through :meth:`call`. The caller bounds
        it in time."""
        if self.endpoint is None:
            return await self.call("take", ids, policy)
        while True:
            kept = bool(self._idle)
            try:
                connection = self._idle.pop() if kept else \
                    await Connection.open(self.endpoint, self.ssl_context)
            except ServerBusy:
                # Its socket is full (of strangers' handshakes, say): Dask's channel, which
                # needs no socket of the server's, still answers.
                return await self.call("take", ids, policy)
            try:
                rows = await connection.take(ids, policy, self.endpoint)
            except ConnectionResetError as e:
                if kept:
                    continue  # the server closed it while it was idle: another, or a new one
                raise ConnectionResetError(f"shard server {self.key}: {e}") from e
            self._idle.append(connection)
            return rows

    async def call(self, method, *args):
        """On the client's event loop: ``method`` of the server, called on its worker
        directly, as a Dask ``Actor`` calls it for a client made with
        ``direct_to_workers=True``; by default an actor's calls hop through the scheduler,
        both ways. The caller bounds it in time."""
        try:
            reply = await self._client.rpc(self.address).actor_execute(
                function=method, actor=self.key, args=[to_serialize(a) for a in args],
                kwargs={})
        except KeyError as e:  # a worker at that address no longer holds the server
            raise RuntimeError(f"shard server {self.key} is gone from {self.address}") from e
        if reply["status"] != "OK":
            raise reply["exception"]
        return reply["result"]

    def call_sync(self, method: str, *args, seconds: Optional[float] = None) -> Any:
        """:meth:`call` from any thread but the client's event loop, given ``seconds``."""
        return _on_loop(self._client, self.call(method, *args),
                        _CALL_SECONDS if seconds is None else seconds)


class _Call:
    """One lookup's calls of its shards: ``(shard key, server, ids, policy)`` parts, the
    lookup's deadline and, once answered, their rows or the error."""

    def __init__(self, parts: list, deadline: float):
        self.parts, self.deadline = parts, deadline
        self.rows = self.error = None
        self.batch = None  # the batch that carries it, once sent
        self.settled = False  # answered (under the batcher's lock); `done` is set after
        self.done = threading.Event()


class _Batch:
    """Calls sent together, and the future of their answer."""

    def __init__(self, calls: List[_Call]):
        self.calls = calls
        self.future: Optional[concurrent.futures.Future] = None


class _Batcher:
    """Lookups from concurrent callers, sent together: a lookup that arrives while a batch
    is in flight waits, and the answer of that batch sends every waiting lookup's ids at
    once, from the client's event loop (one call per shard, awaited together).

    Every caller is answered by its deadline: with its rows, the batch's error, or a
    ``TimeoutError``, even if the batch's future never resolves (the loop closed or
    stopped, its task destroyed); the batch after it is then sent."""

    def __init__(self, loop):
        self._loop = loop  # the client's asyncio loop
        self._lock = threading.Lock()
        self._waiting = []
        self._in_flight = None  # the batch being answered

    def run(self, parts: list, deadline: float) -> list:
        call = _Call(parts, deadline)
        with self._lock:
            self._waiting.append(call)
            batch = self._next() if self._in_flight is None else None
        if batch is not None:
            self._send(batch)
        if not call.done.wait(max(0.0, deadline - time.monotonic())):
            self._expire(call)
        if call.error is not None:
            raise call.error
        return call.rows

    def _next(self) -> Optional[_Batch]:
        """The waiting calls as the batch in flight (the lock held), or ``None``."""
        self._in_flight = _Batch(self._waiting) if self._waiting else None
        self._waiting = []
        for c in self._in_flight.calls if self._in_flight else ():
            c.batch = self._in_flight
        return self._in_flight

    def _send(self, batch: _Batch) -> None:
        """Sends ``batch`` (no lock held: a future already done runs its callback at once):
        the parts of its lookups merged by shard and policy, given until the latest of
        their deadlines (at most ``_CALL_SECONDS``)."""
        groups, coroutine = {}, None
        try:
            for c in batch.calls:
                for key, server, ids, policy in c.parts:
                    groups.setdefault((key, policy), (server, policy, []))[2].append(ids)
            requests = [(server, ids[0] if len(ids) == 1 else np.concatenate(ids), policy)
                        for server, policy, ids in groups.values()]
            seconds = _remaining(max(c.deadline for c in batch.calls))
            coroutine = _await_all(requests, seconds)
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        except BaseException as e:  # noqa: BLE001 - the batch's callers raise it
            if coroutine is not None:
                coroutine.close()  # never scheduled (the loop is closed)
            future = concurrent.futures.Future()
            future.set_exception(e)
        batch.future = future
        future.add_done_callback(lambda f: self._answer(batch, list(groups), f))

    def _answer(self, batch: _Batch, keys: list, future: concurrent.futures.Future) -> None:
        """Hands each lookup its rows (or the error), then sends the next batch."""
        rows, error = {}, None
        try:
            answers = dict(zip(keys, future.result()))
            starts = dict.fromkeys(keys, 0)
            for c in batch.calls:
                rows[c] = []
                for key, _, ids, policy in c.parts:
                    start = starts[(key, policy)]
                    rows[c].append(answers[(key, policy)][start:start + len(ids)])
                    starts[(key, policy)] = start + len(ids)
        except concurrent.futures.CancelledError:
            error = RuntimeError("the lookup's batch was cancelled")
        except BaseException as e:  # noqa: BLE001 - the batch's callers raise it
            error = e
        self._settle(batch.calls, rows, error)

    def _expire(self, call: _Call) -> None:
        """``call``'s deadline has passed with no answer: it raises ``TimeoutError``; a
        batch none of whose calls waits any more gives way to the next."""
        self._settle([call], {}, TimeoutError(
            f"the lookup got no answer from the shard servers by its deadline "
            f"({_RECOVERY_SECONDS} s)"))

    def _settle(self, calls: List[_Call], rows: dict, error: Optional[BaseException]) -> None:
        """Answers those of ``calls`` not answered yet (rows, else ``error``); once every
        call of the batch in flight is answered, the next batch goes."""
        with self._lock:
            answered = [c for c in calls if not c.settled]
            for c in answered:
                c.settled = True
                c.rows, c.error = rows.get(c), None if c in rows else error
                if c.batch is None:  # expired before it was sent
                    self._waiting.remove(c)
            following = None
            if self._in_flight is not None and all(c.settled for c in self._in_flight.calls):
                following = self._next()
        for c in answered:
            c.done.set()
        # A batch whose callers all gave up is not cancelled from here: its coroutine ends at
        # its own deadline, on the loop, if the loop runs at all.
        if following is not None:
            self._send(following)


async def _await_all(requests: list, seconds: float) -> list:
    """On the client's event loop: every ``(server, ids, policy)`` call sent at once, then
    awaited together, for at most ``seconds``."""
    return await _shard_socket.cancelled_after(
        asyncio.gather(*(server.take(ids, policy) for server, ids, policy in requests)),
        seconds)


async def _await_written(requests, buffer):
    """On the client's event loop: every ``(server, ids, policy)`` call that writes into
    ``buffer``, each at the end of the one before, sent at once, then awaited together."""
    place, offsets = (buffer.key, buffer.path, buffer.nbytes, buffer.identity), [0]
    for _, ids, _ in requests:
        offsets.append(offsets[-1] + len(ids) * buffer.row_bytes)
    await asyncio.gather(*(server.call("take_into", ids, policy, place, offset)
                           for (server, ids, policy), offset in zip(requests, offsets)))


class _SharedBuffer:
    """A memory file of the client's (``memfd``) that servers on the client's host map
    through ``/proc/<pid>/fd``, write their rows into, and the client reads in place: the
    rows cross no socket. It is anonymous, so it is freed with the last mapping of it,
    even if the client dies."""

    def __init__(self, nbytes, row_bytes):
        self.nbytes, self.row_bytes = max(nbytes, 1), row_bytes  # mmap takes no 0 bytes
        fd = os.memfd_create("ndgather-lookup")
        try:
            os.ftruncate(fd, self.nbytes)
            self.map = mmap.mmap(fd, self.nbytes)
        except BaseException:
            os.close(fd)
            raise
        self.key = os.urandom(16).hex()  # servers key their mappings by it
        self.path = f"/proc/{os.getpid()}/fd/{fd}"
        # What a server checks before it writes: the path names a descriptor number,
        # which the next memory file takes once this one is closed.
        found = os.fstat(fd)
        self.identity = (found.st_dev, found.st_ino)
        #: Unmaps and closes the file (once; at the latest when the buffer is collected).
        self.close = weakref.finalize(self, _close_shared, self.map, fd)

    def rows(self, count, row_shape, dtype):
        """The first ``count`` rows, as the servers wrote them."""
        return np.ndarray((count,) + row_shape, dtype, self.map)


def _close_shared(mapping, fd):
    mapping.close()
    os.close(fd)


# A buffer that tells whether a server shares the client's memory: its first bytes, a
# random token, must read the same from the server (made at the first large lookup).
_probe_lock = threading.Lock()
_probe = None


def _probe_buffer():
    """This process's probe: its buffer and token (a forked child makes its own)."""
    global _probe
    with _probe_lock:
        if _probe is None or _probe[0] != os.getpid():
            buffer, token = _SharedBuffer(64, 0), os.urandom(32)
            buffer.map[:len(token)] = token
            _probe = (os.getpid(), buffer, token)
        return _probe[1:]


class _Servers:
    """The shard servers of one version of a table, made on first use; a new version keeps
    the servers of the shards it shares (:meth:`keeping`), and a server goes when no version
    holds it. A server whose worker is lost is made again against its shard, which Dask
    recomputes from its file or lineage."""

    def __init__(self, client, futures=None, actors=None):
        self._client = client
        self._lock = threading.Lock()
        self._futures = dict(futures or {})  # shard key -> the future of its actor
        self._actors = dict(actors or {})  # shard key -> its server (`_Server`), once made
        self._batcher = _Batcher(client.loop.asyncio_loop)
        self._shares = {}  # shard key -> whether its server maps the client's memory
        self._free = []  # shared buffers no lookup is using, for the next ones

    def keeping(self, shards):
        """Servers for a version made of ``shards``: this version's, for the shards both
        have."""
        keys = {s.key for s in shards}
        with self._lock:
            kept = _Servers(self._client,
                            {k: f for k, f in self._futures.items() if k in keys},
                            {k: a for k, a in self._actors.items() if k in keys})
            kept._shares = {k: s for k, s in self._shares.items() if k in keys}
            return kept

    def get(self, shard, deadline: float) -> _Server:
        """``shard``'s server, made and asked for its socket first if need be, by
        ``deadline``."""
        with self._lock:
            actor = self._actors.get(shard.key)
            if actor is not None:
                return actor
            future = self._futures.get(shard.key)
            if future is None:
                # Placed by Dask beside the shard it depends on.
                future = self._client.submit(_ShardServer, shard, actor=True, pure=False)
                self._futures[shard.key] = future
        # A future's result is a round trip through the client's event loop: the server
        # is kept once it is known.
        try:
            # All the time left: Dask may be recomputing the shard the server needs.
            actor = future.result(timeout=_remaining(deadline, attempt=False))
        except (concurrent.futures.TimeoutError, asyncio.TimeoutError) as e:
            raise TimeoutError(f"the server of shard {shard.key} was not made in time") from e
        held = self._who_has([future], deadline).get(future.key)
        if not held:
            raise RuntimeError(f"the server of shard {shard.key} is not on any worker")
        server = _Server(self._client, held[0], actor.key)
        scheme = parse_address(server.address)[0]
        if scheme in ("tcp", "tls"):
            # Other transports (inproc, UCX) keep Dask's comm for every call.
            server.endpoint = server.call_sync("listen", seconds=_remaining(deadline))
            if scheme == "tls":
                server.ssl_context = self._client.security.get_connection_args(
                    "client").get("ssl_context")
        with self._lock:
            if self._futures.get(shard.key) is future:
                self._actors[shard.key] = server
        return server

    def _who_has(self, futures: list, deadline: float) -> dict:
        """``client.who_has(futures)``, by ``deadline``."""
        keys = [f.key for f in futures]
        return _on_loop(self._client, self._client.scheduler.who_has(keys=keys),
                        _remaining(deadline))

    def fetch(self, parts: list, deadline: float) -> list:
        """The rows of each ``(shard, ids, policy)`` part, batched with concurrent callers',
        by ``deadline``."""
        servers = [(shard.key, self.get(shard, deadline), ids, policy)
                   for shard, ids, policy in parts]
        return self._batcher.run(servers, deadline)

    def fetch_shared(self, parts: list, row_bytes: int,
                     deadline: float) -> Optional[_SharedBuffer]:
        """The rows of each ``(shard, ids, policy)`` part, written by the servers into one
        shared buffer, back to back in the parts' order; ``None`` unless every server shares
        the client's memory (``os.memfd_create`` and ``/proc``: Linux, one host). The caller
        reads the rows, then gives the buffer back."""
        if not hasattr(os, "memfd_create"):
            return None
        servers = [(shard, self.get(shard, deadline)) for shard, _, _ in parts]
        if not all(self._shares_memory(shard, server, deadline) for shard, server in servers):
            return None
        nbytes = sum(len(ids) for _, ids, _ in parts) * row_bytes
        with self._lock:
            fits = [b for b in self._free if b.nbytes >= nbytes and b.row_bytes == row_bytes]
            buffer = min(fits, key=lambda b: b.nbytes) if fits else None
            if buffer is not None:
                self._free.remove(buffer)
        if buffer is None:
            buffer = _SharedBuffer(nbytes, row_bytes)
        requests = [(server, ids, policy) for (_, server), (_, ids, policy) in zip(servers, parts)]
        try:
            _on_loop(self._client, _await_written(requests, buffer), _remaining(deadline))
        except BaseException:
            # Dropped, not reused: a server may still write to it. The next buffer may take
            # its descriptor's number, but a server checks the file's identity first.
            buffer.close()
            raise
        return buffer

    def give_back(self, buffer):
        """Keeps ``buffer`` for a later lookup (the two largest are kept)."""
        with self._lock:
            self._free = sorted(self._free + [buffer], key=lambda b: -b.nbytes)[:2]

    def _shares_memory(self, shard, server, deadline):
        shares = self._shares.get(shard.key)
        if shares is None:
            buffer, token = _probe_buffer()
            shares = bool(server.call_sync("shares_memory_with", buffer.path, buffer.identity,
                                           token, seconds=_remaining(deadline)))
            self._shares[shard.key] = shares
        return shares

    def forget_lost(self, deadline: float, patience: float = 0) -> bool:
        """Whether any server is gone with its worker, asking the scheduler again for up to
        ``patience`` seconds; those are forgotten, to be made again against their shards (a
        failed batch may be another lookup's shard's doing)."""
        with self._lock:
            futures = dict(self._futures)
        if not futures:
            return False
        until = min(deadline, time.monotonic() + patience)
        while True:
            held = self._who_has(list(futures.values()), deadline)
            gone = [key for key, f in futures.items()
                    if f.status != "finished" or not held.get(f.key)]
            if gone or time.monotonic() >= until:
                break
            time.sleep(0.1)
        with self._lock:
            for key in gone:
                if self._futures.get(key) is futures[key]:
                    del self._futures[key]
                    self._actors.pop(key, None)
                    self._shares.pop(key, None)
        return bool(gone)


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


# --- sharded tables -----------------------------------------------------------------------

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


# --- lazy gathers on dask arrays ----------------------------------------------------------

def _known_shape(x):
    if any(math.isnan(d) for d in x.shape):
        raise ValueError(
            "the dask array has chunks of unknown size; call x.compute_chunk_sizes() first")
    return [int(d) for d in x.shape]


def _filling(policy):
    """How a dropped index's slice is filled: JAX's fill values under ``"fill"``, else
    zeros (``"ignore"``; the other policies drop nothing)."""
    return "fill" if policy == "fill" else "ignore"


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
