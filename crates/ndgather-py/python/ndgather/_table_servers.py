"""The shard servers of one version of a sharded table: made, reached, and made again.

:class:`_Servers` makes each shard's server on first use (asking for its socket), fetches
a lookup's rows from them (batched with concurrent lookups', or written into shared
memory where every server shares the client's host), keeps the servers of shards that a
new version shares, and forgets those lost with their workers, to be made again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from typing import Optional

from distributed.comm import parse_address

from ._deadlines import _on_loop, _remaining
from ._lookup_batcher import _Batcher
from ._shard_client import _Server
from ._shard_server import _ShardServer
from ._shared_memory import _probe_buffer, _SharedBuffer


async def _await_written(requests, buffer):
    """On the client's event loop: every ``(server, ids, policy)`` call that writes into
    ``buffer``, each at the end of the one before, sent at once, then awaited together."""
    place, offsets = (buffer.key, buffer.path, buffer.nbytes, buffer.identity), [0]
    for _, ids, _ in requests:
        offsets.append(offsets[-1] + len(ids) * buffer.row_bytes)
    await asyncio.gather(*(server.call("take_into", ids, policy, place, offset)
                           for (server, ids, policy), offset in zip(requests, offsets)))


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
