"""The client's end of one shard server: its address, and its calls over either channel.

A :class:`_Server` takes rows through the server's own socket where it has one (keeping
its connections open for the next calls), else, or when that socket is full, through
Dask's channel, called on the server's worker directly.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import numpy as np
from distributed.protocol import to_serialize

from ._deadlines import _CALL_SECONDS, _on_loop
from ._shard_server import _close_on_loop
from ._shard_socket import Connection, ServerBusy


# How often a call that has not answered asks whether its server's worker is gone.
_WATCH_SECONDS = 0.5


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

    async def gone(self) -> bool:
        """Whether the server's worker is gone: the client has heard that the actor is lost
        (its future no longer finished), or the scheduler no longer has the worker (the
        actor may be made again elsewhere under the same key). A scheduler that does not
        answer in time says nothing."""
        state = self._client.futures.get(self.key)
        if state is None or state.status != "finished":
            return True
        try:
            known = await asyncio.wait_for(
                self._client.scheduler.ncores(workers=[self.address]), _WATCH_SECONDS)
        except (asyncio.TimeoutError, OSError):
            return False
        return self.address not in known

    async def call(self, method, *args):
        """On the client's event loop: ``method`` of the server, called on its worker
        directly, as a Dask ``Actor`` calls it for a client made with
        ``direct_to_workers=True``; by default an actor's calls hop through the scheduler,
        both ways. The caller bounds it in time.

        ``ConnectionResetError`` as soon as the client hears the worker is gone: Dask's own
        connection to a dead worker's address retries for its connect timeout (30 s) before
        it fails, which stalled a lookup that met a worker killed between two calls."""
        call = asyncio.ensure_future(self._call(method, *args))
        try:
            while True:
                done, _ = await asyncio.wait({call}, timeout=_WATCH_SECONDS)
                if done:
                    return call.result()
                if await self.gone():
                    raise ConnectionResetError(
                        f"shard server {self.key}: its worker {self.address} is gone")
        finally:
            call.cancel()

    async def _call(self, method, *args):
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
