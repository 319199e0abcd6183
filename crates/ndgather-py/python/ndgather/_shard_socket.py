"""The shard servers' own socket: an authenticated, bounded binary framing for lookups.

A shard server (``ndgather.distributed``) listens on a port of its worker's host. The port
is no secret, so every connection must first prove that it holds the server's random
secret, which the client got through Dask's own channel (the actor call that asked for the
address). Both ends prove it, by a challenge and response (HMAC-SHA256 over both sides'
nonces): a peer that cannot is closed before it is sent any row, and a client never reads
rows from a server that does not hold the secret. On a cluster with TLS the socket is
wrapped in the cluster's own SSL contexts first. On plain TCP only the handshake is
authenticated: what follows is neither encrypted nor signed, so a relay in the middle can
read or change rows, as it can every message of Dask's own plain TCP. Across hosts, use TLS.

Connections that have not proved themselves yet are capped apart from proven ones, so a
stranger who holds many handshakes open (each ends after :data:`HANDSHAKE_SECONDS`) can
only make a client's new connection hear ``BUSY``; the client then takes its rows through
Dask's channel instead.

The framing, all integers little-endian:

- greeting (server): ``HELLO`` and the server's nonce, or ``BUSY`` (padded to the same
  length) when the server has its cap of connections open, and closes;
- proof (client): its nonce and ``HMAC(secret, "client" + server nonce + client nonce)``;
- proof (server): ``HMAC(secret, "server" + server nonce + client nonce)``;
- request: the policy's code (one byte) and the id count (8 bytes), then the ids (int64);
- reply: 0 and the rows' byte count, then the rows; or an error's code and the length of
  its UTF-8 message, then the message.

Nothing on the socket is unpickled. Every size is bounded before anything is read or
allocated: the id count of a request (:func:`max_ids`), the rows of a reply (their length
must be the count times the row's bytes), an error message (:data:`MAX_MESSAGE_BYTES`); and
every read has a deadline.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import ssl
import struct
from typing import Callable, NamedTuple, Optional, Tuple

import numpy as np

from . import InvalidArgumentError, NotFoundError, _core

#: The policies, by their code on the wire.
POLICIES = ("error", "ignore", "clamp", "negative", "wrap", "fill")
_POLICY_CODES = {p: i for i, p in enumerate(POLICIES)}

HELLO = b"NDGSHRD1"
BUSY = b"NDGBUSY1"
NONCE_BYTES = 32
MAC_BYTES = hashlib.sha256().digest_size
SECRET_BYTES = 32
_GREETING_BYTES = len(HELLO) + NONCE_BYTES
REQUEST = struct.Struct("<BQ")
REPLY = struct.Struct("<BQ")
_IDS = np.dtype("<i8")

#: The most ids one request may carry (32 MiB of ids); a client splits a larger lookup.
MAX_IDS = 1 << 22
#: The most bytes of rows one reply may carry; fewer ids per request for wide rows.
MAX_REPLY_BYTES = 1 << 28
#: The longest error message a client reads.
MAX_MESSAGE_BYTES = 1 << 16
#: Proven connections a server keeps open at once; one more is told ``BUSY`` and closed.
MAX_CONNECTIONS = 64
#: Connections still in the handshake at once; one more is told ``BUSY`` and closed.
MAX_PENDING = 64
#: Seconds a new connection has to prove that it holds the secret.
HANDSHAKE_SECONDS = 10.0
#: Seconds the rest of a request (its ids) has to arrive once its header has, and a reply
#: has to be taken by the client.
READ_SECONDS = 30.0
#: Seconds a server keeps a connection that sends no request.
IDLE_SECONDS = 300.0

# Errors a server's gather may raise, by their code on the wire (the code is the place in
# this tuple plus one; the core's bad-index and bad-axis errors are InvalidArgumentError's
# subclasses of the same name). Any other goes as the first class here that it is an
# instance of, else as a RuntimeError that names its class.
_ERRORS: Tuple[type, ...] = (InvalidArgumentError, ValueError, TypeError, IndexError,
                             OverflowError, MemoryError, NotFoundError, RuntimeError,
                             _core.BadIndexError, _core.AxisError)


class Endpoint(NamedTuple):
    """What a client needs to call a server on its socket: its address, the rows' dtype
    (``dtype.str``) and shape, the server's secret, and the most ids a request may carry."""

    host: str
    port: int
    dtype: str
    row_shape: Tuple[int, ...]
    secret: bytes
    max_ids: int

    def __repr__(self) -> str:
        # Never the secret: an endpoint ends up in logs and tracebacks.
        return (f"Endpoint(host={self.host!r}, port={self.port}, dtype={self.dtype!r}, "
                f"row_shape={self.row_shape!r}, max_ids={self.max_ids})")


def new_secret() -> bytes:
    """A server's secret: random, made when it opens its socket."""
    return os.urandom(SECRET_BYTES)


def max_ids(row_bytes: int) -> int:
    """The most ids a request may carry for rows of ``row_bytes`` bytes: at most
    :data:`MAX_IDS`, and at most :data:`MAX_REPLY_BYTES` of rows."""
    return max(1, min(MAX_IDS, MAX_REPLY_BYTES // max(row_bytes, 1)))


def _mac(secret: bytes, side: bytes, server_nonce: bytes, client_nonce: bytes) -> bytes:
    return hmac.new(secret, side + server_nonce + client_nonce, hashlib.sha256).digest()


def error_reply(error: BaseException) -> bytes:
    """An error as a reply: its class's code and its message in UTF-8 (cut to the cap)."""
    kind = type(error)
    known = kind if kind in _ERRORS else next((k for k in _ERRORS if isinstance(error, k)),
                                              None)
    if known is not None:
        code, message = _ERRORS.index(known) + 1, str(error)
    else:
        code, message = _ERRORS.index(RuntimeError) + 1, f"{kind.__name__}: {error}"
    data = message.encode("utf-8", "replace")[:MAX_MESSAGE_BYTES]
    return REPLY.pack(code, len(data)) + data


def _error(code: int, data: bytes) -> Exception:
    return _ERRORS[code - 1](data.decode("utf-8", "replace"))


async def within(awaitable, seconds: float):
    """``awaitable``, or ``TimeoutError`` (the builtin, an ``OSError``) after ``seconds``."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError as e:  # not the builtin before Python 3.11
        raise TimeoutError(f"no answer in {seconds:g} s") from e


async def cancelled_after(future: asyncio.Future, seconds: float):
    """``future``'s result, or ``TimeoutError`` once it is cancelled after ``seconds``: a
    timer, where ``asyncio.wait_for`` would add a task and a turn of the loop to each call,
    a cost of the same order as a whole small lookup (bench/LOG.md, "Serving latency")."""
    fired = []

    def expire():
        fired.append(True)
        future.cancel()

    handle = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        return await future
    except asyncio.CancelledError:
        if fired:
            raise TimeoutError(f"no answer in {seconds:g} s") from None
        raise
    finally:
        handle.cancel()


class _Timer:
    """A connection's deadline for its current phase (handshake, idle, request): past it the
    connection is aborted, so that whatever read or drain is pending ends at once. One timer
    a phase, not a task a read."""

    def __init__(self, writer: asyncio.StreamWriter):
        self._writer = writer
        self._handle: Optional[asyncio.TimerHandle] = None

    def start(self, seconds: float) -> None:
        self.stop()
        self._handle = asyncio.get_running_loop().call_later(seconds, self._expire)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()

    def _expire(self) -> None:
        transport = getattr(self._writer, "transport", None)
        if transport is not None:
            transport.abort()  # unlike close(), it does not wait for a peer to read
        else:
            self._writer.close()


# --- the server ---------------------------------------------------------------------------

async def _prove_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        secret: bytes) -> bool:
    """The server's side of the handshake: whether the peer proved that it holds
    ``secret`` (and was then sent the server's proof)."""
    nonce = os.urandom(NONCE_BYTES)
    writer.write(HELLO + nonce)
    proof = await reader.readexactly(NONCE_BYTES + MAC_BYTES)
    client_nonce = proof[:NONCE_BYTES]
    if not hmac.compare_digest(proof[NONCE_BYTES:], _mac(secret, b"client", nonce,
                                                          client_nonce)):
        return False
    writer.write(_mac(secret, b"server", nonce, client_nonce))
    return True


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, secret: bytes,
                take: Callable[[np.ndarray, str], np.ndarray], row_bytes: int,
                proven: Callable[[], None] = lambda: None) -> None:
    """One client connection of a server: the handshake, then requests answered in turn
    until the client closes, goes silent, or breaks the framing. ``take(ids, policy)``
    gathers the rows of ``ids``; nothing reaches it before the peer has proved itself, and
    ``proven()`` is called once it has."""
    timer = _Timer(writer)
    try:
        timer.start(HANDSHAKE_SECONDS)
        if not await _prove_server(reader, writer, secret):
            return
        proven()
        limit = max_ids(row_bytes)
        while True:
            timer.start(IDLE_SECONDS)
            header = await reader.readexactly(REQUEST.size)
            timer.start(READ_SECONDS)  # for the ids, the gather and the reply's drain
            code, count = REQUEST.unpack(header)
            if code >= len(POLICIES) or count > limit:
                # The peer speaks another framing: it is told why, and closed, before any
                # of what it claims is read.
                problem = (f"policy code {code} is not one of 0..{len(POLICIES) - 1}"
                           if code >= len(POLICIES) else
                           f"a request of {count} ids is over the cap of {limit}")
                writer.write(error_reply(ValueError(problem)))
                await writer.drain()
                return
            body = await reader.readexactly(count * _IDS.itemsize)
            ids = np.frombuffer(body, _IDS)
            try:
                rows = np.ascontiguousarray(take(ids, POLICIES[code]))
                if rows.nbytes != count * row_bytes:
                    raise RuntimeError(f"the gather gave {rows.nbytes} bytes of rows for "
                                       f"{count} ids of {row_bytes} bytes")
                writer.write(REPLY.pack(0, rows.nbytes))
                writer.write(memoryview(rows).cast("B"))
            except Exception as e:  # noqa: BLE001 - the caller raises it
                writer.write(error_reply(e))
            await writer.drain()
    except (EOFError, OSError):
        pass  # the client went away or broke off, or its timer aborted it (ssl.SSLError
        # is an OSError too)
    finally:
        timer.stop()
        writer.close()


class Listener:
    """A server's socket: its connections served by :func:`serve`, at most
    :data:`MAX_PENDING` in the handshake and :data:`MAX_CONNECTIONS` proven at once."""

    def __init__(self, secret: bytes, take: Callable[[np.ndarray, str], np.ndarray],
                 row_bytes: int, opened: Callable, closed: Callable):
        self._secret, self._take, self._row_bytes = secret, take, row_bytes
        self._opened, self._closed = opened, closed  # told of each connection's writer
        self._pending = 0
        self._count = 0  # proven
        self.server: Optional[asyncio.AbstractServer] = None

    async def start(self, host: str, ssl_context: Optional[ssl.SSLContext]) -> int:
        """Listens on a free port of ``host``, and returns the port."""
        self.server = await asyncio.start_server(
            self._connected, host, 0, ssl=ssl_context,
            ssl_handshake_timeout=HANDSHAKE_SECONDS if ssl_context is not None else None)
        return self.server.sockets[0].getsockname()[1]

    async def _connected(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        if self._pending >= MAX_PENDING or self._count >= MAX_CONNECTIONS:
            writer.write(BUSY.ljust(_GREETING_BYTES, b"\0"))
            writer.close()
            return
        self._pending += 1
        state = {"proven": False}

        def proven() -> None:
            state["proven"] = True
            self._pending -= 1
            self._count += 1

        self._opened(writer)
        try:
            await serve(reader, writer, self._secret, self._take, self._row_bytes, proven)
        finally:
            if state["proven"]:
                self._count -= 1
            else:
                self._pending -= 1
            self._closed(writer)


# --- the client ---------------------------------------------------------------------------

async def read_reply(reader: asyncio.StreamReader, nbytes: int) -> bytes:
    """One reply: its ``nbytes`` of rows, or the server's error raised. A reply of another
    length, an unknown code or a message over the cap is a ``ConnectionError``."""
    status, length = REPLY.unpack(await reader.readexactly(REPLY.size))
    if status == 0:
        if length != nbytes:
            raise ConnectionError(f"the reply holds {length} bytes of rows; the request "
                                  f"asked for {nbytes}")
        return await reader.readexactly(length)
    if status > len(_ERRORS):
        raise ConnectionError(f"the reply has the unknown code {status}")
    if length > MAX_MESSAGE_BYTES:
        raise ConnectionError(f"the reply's error message of {length} bytes is over the "
                              f"cap of {MAX_MESSAGE_BYTES}")
    raise _error(status, await reader.readexactly(length))


class ServerBusy(ConnectionRefusedError):
    """The server has its cap of connections open: its rows are to be asked for through
    Dask's channel instead."""


async def prove_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       secret: bytes) -> None:
    """The client's side of the handshake; a ``ConnectionError`` unless the server proves
    that it holds ``secret``."""
    greeting = await reader.readexactly(_GREETING_BYTES)
    if greeting.startswith(BUSY):
        raise ServerBusy(f"the shard server has its cap of connections open ("
                         f"{MAX_CONNECTIONS} proven, or {MAX_PENDING} in the handshake)")
    if not greeting.startswith(HELLO):
        raise ConnectionError("the peer is not a shard server of this protocol")
    server_nonce, client_nonce = greeting[len(HELLO):], os.urandom(NONCE_BYTES)
    writer.write(client_nonce + _mac(secret, b"client", server_nonce, client_nonce))
    proof = await reader.readexactly(MAC_BYTES)
    if not hmac.compare_digest(proof, _mac(secret, b"server", server_nonce, client_nonce)):
        raise ConnectionError("the peer on the shard server's port does not hold its secret")


class Connection:
    """A client's connection to one server, proven both ways, for one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader, self._writer = reader, writer

    @classmethod
    async def open(cls, endpoint: Endpoint,
                   ssl_context: Optional[ssl.SSLContext]) -> Connection:
        reader, writer = await asyncio.open_connection(endpoint.host, endpoint.port,
                                                       ssl=ssl_context)
        try:
            await prove_client(reader, writer, endpoint.secret)
        except BaseException as e:
            writer.close()
            if isinstance(e, EOFError):
                raise ConnectionResetError("the shard server closed its socket in the "
                                           "handshake") from e
            raise
        return cls(reader, writer)

    def close(self) -> None:
        self._writer.close()

    async def take(self, ids: np.ndarray, policy: str, endpoint: Endpoint) -> np.ndarray:
        """The rows of ``ids`` (local to the shard) under ``policy``, in requests of at most
        ``endpoint.max_ids`` ids. The connection is closed on any error: the framing may be
        out of step."""
        ids = np.ascontiguousarray(ids, _IDS)
        dtype = np.dtype(endpoint.dtype)
        row_shape = tuple(endpoint.row_shape)
        row_bytes = int(np.prod(row_shape, dtype=np.int64)) * dtype.itemsize
        step = endpoint.max_ids
        pieces = [ids[i:i + step] for i in range(0, len(ids), step)] or [ids]
        code = _POLICY_CODES[policy]
        try:
            for piece in pieces:
                self._writer.write(REQUEST.pack(code, len(piece)))
                self._writer.write(memoryview(piece).cast("B"))
            replies = [await read_reply(self._reader, len(p) * row_bytes) for p in pieces]
        except BaseException as e:
            self.close()
            if isinstance(e, EOFError):
                raise ConnectionResetError("the shard server closed its socket") from e
            raise
        data = replies[0] if len(replies) == 1 else b"".join(replies)
        return np.frombuffer(data, dtype).reshape((len(ids),) + row_shape)
