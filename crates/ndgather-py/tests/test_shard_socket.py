"""The shard servers' socket (ndgather._shard_socket) without a cluster: the handshake, the
framing's bounds, and Hypothesis fuzzing of both parsers (the server's requests, the
client's replies). Any bytes, cut anywhere, with any claimed count, end in a clean close or
error: never a hang, a large allocation, or a row for a peer that did not prove itself.

The fuzz tests run Hypothesis's default number of examples here; for a long run (20,000
examples a test, about 2.5 minutes each on this project's machine; repeat with other seeds):

    NDGATHER_FUZZ_PROFILE=shard-fuzz-long .venv/bin/python -m pytest \\
        tests/test_shard_socket.py -k fuzz -p no:cacheprovider --hypothesis-seed=1 \\
        --hypothesis-show-statistics
"""
import asyncio
import os
import socket
import struct
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ndgather as ng
from ndgather import _shard_socket as ss

# The long run by hand (not in CI): many examples a test, no example database written;
# chosen by NDGATHER_FUZZ_PROFILE (pytest's --hypothesis-profile is read before this module).
settings.register_profile("shard-fuzz-long", max_examples=20_000, deadline=None,
                          database=None, suppress_health_check=list(HealthCheck))
if os.environ.get("NDGATHER_FUZZ_PROFILE"):
    settings.load_profile(os.environ["NDGATHER_FUZZ_PROFILE"])

SECRET = bytes(range(32))
SHARD = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)
ROW_BYTES = 12
# Allocations that one example may make at its peak: a few requests' ids and rows.
PEAK_BYTES = 4 << 20


class Writer:
    """A StreamWriter's part that the server uses, keeping what it is sent."""

    def __init__(self):
        self.data = bytearray()
        self.closed = False

    def write(self, data):
        if not self.closed:
            self.data += data

    async def drain(self):
        pass

    def close(self):
        self.closed = True


class Taken:
    """The server's gather, counting what reaches it."""

    def __init__(self):
        self.calls = []

    def __call__(self, ids, policy):
        self.calls.append((len(ids), policy))
        return ng.gather(SHARD, ids, bad_indices=policy)


def run(coroutine_fn, seconds=5.0):
    """``coroutine_fn()`` on a fresh event loop, within ``seconds`` (a hang fails), and the
    peak of Python's and NumPy's allocations while it ran."""
    tracemalloc.start()
    try:
        loop = asyncio.new_event_loop()
        try:
            result = loop.run_until_complete(asyncio.wait_for(coroutine_fn(), seconds))
        finally:
            loop.close()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def request(code, count, ids=b""):
    return ss.REQUEST.pack(code, count) + ids


def proof_for(greeting, client_nonce=b"c" * 32, secret=SECRET):
    return client_nonce + ss._mac(secret, b"client", greeting[len(ss.HELLO):], client_nonce)


async def serve_bytes(data, authenticated):
    """The server fed ``data`` then EOF, after a client's proof when ``authenticated``:
    what it wrote after its greeting (and proof), and what reached its gather."""
    reader, writer, taken = asyncio.StreamReader(), Writer(), Taken()
    task = asyncio.ensure_future(ss.serve(reader, writer, SECRET, taken, ROW_BYTES))
    await asyncio.sleep(0)
    greeting = bytes(writer.data)
    assert len(greeting) == len(ss.HELLO) + ss.NONCE_BYTES and greeting.startswith(ss.HELLO)
    if authenticated:
        reader.feed_data(proof_for(greeting))
    reader.feed_data(data)
    reader.feed_eof()
    await task
    assert writer.closed
    return bytes(writer.data[len(greeting) + (ss.MAC_BYTES if authenticated else 0):]), \
        taken.calls


def parse_replies(data):
    """Every reply in ``data``: (status, payload); each must be whole and within bounds."""
    replies, at = [], 0
    while at < len(data):
        status, length = ss.REPLY.unpack_from(data, at)
        at += ss.REPLY.size
        assert status <= len(ss._ERRORS)
        if status == 0:
            assert length % ROW_BYTES == 0 and length <= ss.MAX_REPLY_BYTES
        else:
            assert length <= ss.MAX_MESSAGE_BYTES
            data[at:at + length].decode("utf-8")
        replies.append((status, data[at:at + length]))
        at += length
    assert at == len(data)
    return replies


# Requests as a client might send them, or a broken or hostile one: any policy code, any
# claimed count (up to 2^64 - 1), the ids whole, cut short, or absent.
ids_bytes = st.lists(st.integers(-2**63, 2**63 - 1), max_size=12).map(
    lambda v: np.array(v, "<i8").tobytes())
one_request = st.builds(
    lambda code, count, ids, cut: request(code, len(ids) // 8 if count is None else count,
                                          ids[:cut]),
    st.integers(0, 255) | st.sampled_from(range(len(ss.POLICIES))),
    st.none() | st.integers(0, 2**64 - 1) | st.sampled_from([2**40, ss.MAX_IDS,
                                                            ss.MAX_IDS + 1, 2**64 - 1]),
    ids_bytes, st.integers(0, 200))
requests = st.lists(one_request, max_size=4).map(b"".join)
any_bytes = st.binary(max_size=600) | requests | st.tuples(requests, st.binary()).map(b"".join)


@pytest.mark.parametrize("policy", ss.POLICIES)
def test_a_valid_request_gets_its_rows(policy):
    ids = np.array([3, -1, 9, 12, 0], "<i8")
    out, calls = run(lambda: serve_bytes(request(ss.POLICIES.index(policy), len(ids),
                                                 ids.tobytes()), True))[0]
    try:
        want = ng.gather(SHARD, ids, bad_indices=policy)
    except ng.InvalidArgumentError as e:
        assert parse_replies(out) == [(ss._ERRORS.index(type(e)) + 1, str(e).encode())]
        return
    assert calls == [(5, policy)]
    assert parse_replies(out) == [(0, want.tobytes())]


@settings(deadline=None)
@given(any_bytes)
@example(proof_for(ss.HELLO + b"n" * 32) + request(2, 2**40))  # a guessed proof, then a claim
@example(request(2, 2**40) + b"\0" * 64)
@example(b"\0" * 64 + request(0, 4, np.arange(4, dtype="<i8").tobytes()))
def test_fuzz_a_peer_without_the_secret_gets_nothing(data):
    (out, calls), peak = run(lambda: serve_bytes(data, False))
    assert out == b"" and calls == [], "a peer that did not prove itself was answered"
    assert peak < PEAK_BYTES


@settings(deadline=None)
@given(any_bytes)
@example(request(2, 2**40))  # "clamp" with a count of 2^40: refused before anything is read
@example(request(2, 2**64 - 1, b"\0" * 16))
@example(request(2, ss.MAX_IDS, b"\0" * 16))  # within the cap, cut short
@example(request(6, 1, b"\0" * 8))  # no such policy
@example(request(0, 1, np.array([10], "<i8").tobytes()) + request(0, 0))  # error, then more
def test_fuzz_an_authenticated_peer_gets_bounded_replies(data):
    (out, calls), peak = run(lambda: serve_bytes(data, True))
    replies = parse_replies(out)
    assert len(calls) <= len(replies)
    assert all(n <= ss.max_ids(ROW_BYTES) for n, _ in calls)
    assert peak < PEAK_BYTES


ENDPOINT = ss.Endpoint("127.0.0.1", 0, SHARD.dtype.str, SHARD.shape[1:], SECRET, 4)


async def client_reads(data, ids):
    """A client's lookup of ``ids`` that gets ``data`` (then EOF) as its replies."""
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return await ss.Connection(reader, Writer()).take(ids, "error", ENDPOINT)


replies = st.lists(st.builds(
    lambda status, length, body, cut: ss.REPLY.pack(status, length) + body[:cut],
    st.integers(0, 255) | st.integers(0, len(ss._ERRORS)),
    st.integers(0, 2**64 - 1) | st.sampled_from([0, 12, 24, 48, 2**40]) | st.integers(0, 100),
    st.binary(max_size=120), st.integers(0, 120)), max_size=3).map(b"".join)


@settings(deadline=None)
@given(st.binary(max_size=300) | replies, st.integers(0, 9))
@example(ss.REPLY.pack(0, 2**60), 2)  # a claim of 2^60 bytes of rows
@example(ss.REPLY.pack(1, 2**63) + b"x", 2)  # an error message of 2^63 bytes
@example(ss.REPLY.pack(0, 24) + b"\0" * 24, 3)  # rows for 2 ids, 3 asked for
@example(ss.REPLY.pack(0, 36) + b"\0" * 36, 3)
def test_fuzz_the_client_reads_any_reply_cleanly(data, count):
    ids = np.arange(count)
    try:
        rows, peak = run(lambda: client_reads(data, ids))
    except (ConnectionError, *ss._ERRORS):
        return
    assert rows.shape == (count, 3) and peak < PEAK_BYTES


@settings(deadline=None)
@given(st.binary(max_size=200))
@example(ss.HELLO + b"n" * 32 + b"m" * 32)  # a greeting, then a proof made without the secret
@example(ss.BUSY.ljust(40, b"\0"))
def test_fuzz_the_client_trusts_no_server_without_the_secret(data):
    async def prove():
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        await ss.prove_client(reader, Writer(), SECRET)

    with pytest.raises((ConnectionError, EOFError)):
        run(prove)


def test_errors_cross_as_a_code_and_their_message():
    for kind in ss._ERRORS:
        data = ss.error_reply(kind("a message: é"))

        async def read():
            reader = asyncio.StreamReader()
            reader.feed_data(data)
            await ss.read_reply(reader, 12)

        with pytest.raises(kind) as e:
            run(read)
        assert type(e.value) is kind and str(e.value) == "a message: é"
    assert ss.error_reply(KeyError("k")) == ss.error_reply(RuntimeError("KeyError: 'k'"))


# --- on real sockets ------------------------------------------------------------------------

def on_loop(coroutine_fn, seconds=10.0):
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(coroutine_fn(), seconds))
    finally:
        loop.close()


class Listening:
    """A listener on 127.0.0.1 with the test's secret, closed with its connections on exit."""

    def __init__(self, taken):
        self.opened = []
        self.listener = ss.Listener(SECRET, taken, ROW_BYTES, self.opened.append,
                                    lambda w: None)

    async def __aenter__(self):
        port = await self.listener.start("127.0.0.1", None)
        return ss.Endpoint("127.0.0.1", port, "<f4", (3,), SECRET, 4)

    async def __aexit__(self, *exc):
        self.listener.server.close()
        for writer in self.opened:
            writer.close()
        await asyncio.sleep(0.05)  # the connections' tasks see their sockets closed


async def read_all(reader):
    data = b""
    while chunk := await reader.read(1 << 16):
        data += chunk
    return data


def test_a_client_gets_rows_in_requests_under_the_cap_and_keeps_its_connection():
    taken = Taken()

    async def scenario():
        async with Listening(taken) as endpoint:
            connection = await ss.Connection.open(endpoint, None)
            ids = np.array([9, 0, 3, 3, 1, 2, 8, 7, 5, 4, 6], np.int64)
            first = await connection.take(ids, "error", endpoint)
            second = await connection.take(ids[:2], "error", endpoint)
            connection.close()
        return ids, first, second

    ids, first, second = on_loop(scenario)
    np.testing.assert_array_equal(first, SHARD[ids])
    np.testing.assert_array_equal(second, SHARD[ids[:2]])
    assert [n for n, _ in taken.calls] == [4, 4, 3, 2], "requests of at most max_ids ids"


@pytest.mark.parametrize("policy", ss.POLICIES)
def test_a_stranger_with_the_port_and_a_wrong_secret_gets_no_rows(policy):
    taken = Taken()

    async def scenario():
        async with Listening(taken) as endpoint:
            # The old framing (the policy's name) and the new, for ids 0..3, on a wrong
            # proof.
            reader, writer = await asyncio.open_connection("127.0.0.1", endpoint.port)
            greeting = await reader.readexactly(40)
            writer.write(proof_for(greeting, secret=b"x" * 32) + request(
                ss.POLICIES.index(policy), 4, np.arange(4, dtype="<i8").tobytes()))
            writer.write(struct.pack("<BQ", len(policy), 4) + policy.encode()
                         + np.arange(4, dtype="<i8").tobytes())
            rest = await read_all(reader)
            writer.close()
            # A client with a wrong secret is refused too, and says why.
            wrong = endpoint._replace(secret=b"y" * 32)
            with pytest.raises(ConnectionError):
                await ss.Connection.open(wrong, None)
        return rest

    assert on_loop(scenario) == b""
    assert taken.calls == []


def test_silent_and_cut_short_peers_are_closed_while_others_are_served(monkeypatch):
    monkeypatch.setattr(ss, "HANDSHAKE_SECONDS", 0.2)
    monkeypatch.setattr(ss, "READ_SECONDS", 0.2)
    monkeypatch.setattr(ss, "IDLE_SECONDS", 0.4)
    taken = Taken()

    async def scenario():
        async with Listening(taken) as endpoint:
            silent = await asyncio.open_connection("127.0.0.1", endpoint.port)
            started = await ss.Connection.open(endpoint, None)
            started._writer.write(request(0, 3, b"\0" * 8))  # 1 id of 3, then silence
            idle = await ss.Connection.open(endpoint, None)
            served = await ss.Connection.open(endpoint, None)
            rows = await served.take(np.array([1]), "error", endpoint)
            begin = time.monotonic()
            closed = [await read_all(reader)
                      for reader in (silent[0], started._reader, idle._reader)]
            waited = time.monotonic() - begin
            silent[1].close()
            for c in (started, idle, served):
                c.close()
        return rows, closed, waited

    rows, closed, waited = on_loop(scenario)
    np.testing.assert_array_equal(rows, SHARD[[1]])
    assert closed[0].startswith(ss.HELLO) and len(closed[0]) == 40, "a greeting, then closed"
    assert closed[1:] == [b"", b""]
    assert waited < 2


def test_connections_over_the_cap_are_told_busy(monkeypatch):
    monkeypatch.setattr(ss, "MAX_CONNECTIONS", 2)
    taken = Taken()

    async def scenario():
        async with Listening(taken) as endpoint:
            held = [await ss.Connection.open(endpoint, None) for _ in range(2)]
            with pytest.raises(ss.ServerBusy, match="2 proven"):
                await ss.Connection.open(endpoint, None)
            held[0].close()
            await asyncio.sleep(0.1)
            again = await ss.Connection.open(endpoint, None)
            rows = await again.take(np.array([2]), "error", endpoint)
            held[1].close()
            again.close()
        return rows

    np.testing.assert_array_equal(on_loop(scenario), SHARD[[2]])


def test_strangers_in_the_handshake_cannot_take_the_proven_connections(monkeypatch):
    """Strangers who open connections and say nothing fill only the handshake's slots:
    proven connections are counted apart, and a client's new connection that hears BUSY
    takes its rows through Dask's channel instead of failing."""
    from ndgather.distributed import _Server

    monkeypatch.setattr(ss, "MAX_PENDING", 2)
    taken = Taken()
    through_dask = []

    async def call(method, ids, policy):
        through_dask.append((method, policy))
        return ng.gather(SHARD, ids, bad_indices=policy)

    async def scenario():
        async with Listening(taken) as endpoint:
            # More proven connections than the handshake's cap: each proved, so each counted
            # apart.
            proven = [await ss.Connection.open(endpoint, None) for _ in range(3)]
            strangers = [await asyncio.open_connection("127.0.0.1", endpoint.port)
                         for _ in range(2)]
            await asyncio.sleep(0.05)
            with pytest.raises(ss.ServerBusy, match="2 in the handshake"):
                await ss.Connection.open(endpoint, None)
            kept = await proven[0].take(np.array([3]), "error", endpoint)
            server = _Server(None, "tcp://127.0.0.1:0", "a-key")
            server.endpoint, server.call = endpoint, call
            fallen_back = await server.take(np.array([7, 12]), "clamp")
            for _, w in strangers:
                w.close()
            for c in proven:
                c.close()
        return kept, fallen_back

    kept, fallen_back = on_loop(scenario)
    np.testing.assert_array_equal(kept, SHARD[[3]])
    np.testing.assert_array_equal(fallen_back, SHARD[[7, 9]])
    assert through_dask == [("take", "clamp")]


def test_an_endpoints_repr_does_not_show_its_secret():
    endpoint = ss.Endpoint("127.0.0.1", 1, "<f4", (3,), SECRET, 4)
    assert repr(SECRET) not in repr(endpoint) and "secret" not in repr(endpoint)
    assert "127.0.0.1" in repr(endpoint) and str(endpoint) == repr(endpoint)


def test_a_connection_the_server_closed_while_idle_is_replaced(monkeypatch):
    """A server closes a connection idle for IDLE_SECONDS; the client's next lookup on it
    takes another, not an error."""
    from ndgather.distributed import _Server

    monkeypatch.setattr(ss, "IDLE_SECONDS", 0.1)
    taken = Taken()

    async def scenario():
        async with Listening(taken) as endpoint:
            server = _Server(None, "tcp://127.0.0.1:0", "a-key")
            server.endpoint = endpoint
            first = await server.take(np.array([4]), "error")
            await asyncio.sleep(0.3)
            second = await server.take(np.array([5]), "error")
            assert len(server._idle) == 1
            server._idle.pop().close()
        return first, second

    first, second = on_loop(scenario)
    np.testing.assert_array_equal(first, SHARD[[4]])
    np.testing.assert_array_equal(second, SHARD[[5]])
