"""What runs on a worker: the shard server, a Dask actor that serves one shard's rows.

:class:`_ShardServer` gathers rows of its shard for lookups, called through Dask's channel,
on its own socket (``_shard_socket``'s framing; :meth:`_ShardServer.listen` opens it), or
writing into the client's shared memory (:meth:`_ShardServer.take_into`). A worker's shard
sockets are closed with the worker (:class:`_Sockets`); a finalizer closes a socket on its
own loop's thread (:func:`_close_on_loop`, which the client's end uses too).
"""

from __future__ import annotations

import collections
import math
import weakref
from typing import Optional, Tuple

import numpy as np
from distributed.comm import get_address_host, parse_address

from . import gather as _gather
from . import _shard_socket
from ._shard_socket import Endpoint
from ._shared_memory import _map_shared


# Shared buffers a server keeps mapped (the most recent ones), so that a buffer the client
# reuses is not mapped again for each lookup.
_SERVER_MAPS = 4


def _take(shard, local_ids, bad_indices):
    return _gather(shard, local_ids, bad_indices=bad_indices)


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
