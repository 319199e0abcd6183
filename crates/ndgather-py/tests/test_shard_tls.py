"""Sharded lookups on a cluster with TLS (``Security.temporary()``): the shard servers'
own socket, wrapped in the cluster's SSL contexts, is the fast path there too; a peer
without the cluster's certificate, or with it but without the server's secret, gets no
rows; a killed worker and repeated ids behave as on plain TCP."""
import socket
import ssl

import dask
import numpy as np
import pytest
from dask.distributed import Client, LocalCluster
from test_distributed import stream_through_a_kill

import ndgather as ng
from ndgather.distributed import ShardedTable

pytest.importorskip("cryptography")  # Security.temporary() makes its certificate with it
from distributed.security import Security  # noqa: E402

POLICIES = ["error", "ignore", "clamp", "negative", "wrap", "fill"]


@pytest.fixture(scope="module")
def client():
    security = Security.temporary()
    with dask.config.set({"distributed.scheduler.work-stealing": False,
                          "distributed.deploy.lost-worker-timeout": "120s"}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=":0", security=security, protocol="tls")
        c = Client(cluster, security=security)
        yield c
        c.close()
        cluster.close()


def table_and_servers(client, rows=20000):
    table = np.random.default_rng(21).standard_normal((rows, 8)).astype(np.float32)
    sharded = ShardedTable.from_array(client, table, num_shards=2)
    np.testing.assert_array_equal(sharded.lookup([0, rows - 1]), table[[0, rows - 1]])
    return table, sharded, list(sharded._servers._actors.values())


def test_tls_lookups_take_the_socket_and_are_right(client):
    assert client.scheduler.address.startswith("tls://")
    table, sharded, servers = table_and_servers(client)
    for server in servers:
        assert server.endpoint is not None and isinstance(server.ssl_context, ssl.SSLContext)
    rng = np.random.default_rng(22)
    for policy in POLICIES:
        for count in (0, 7, 1000, 40000):  # 40,000 ids: through shared memory
            ids = rng.integers(-len(table) - 2, len(table) + 2, count)
            try:
                want = ng.gather(table, ids, bad_indices=policy)
            except ng.InvalidArgumentError as e:
                with pytest.raises(ng.InvalidArgumentError) as got:
                    sharded.lookup(ids, bad_indices=policy)
                assert str(got.value) == str(e)
                continue
            np.testing.assert_array_equal(sharded.lookup(ids, bad_indices=policy), want)


def test_tls_refuses_strangers(client):
    """Plain TCP on the TLS port gets nothing; TLS with the cluster's own certificate but
    without the server's secret gets the greeting and nothing else."""
    _, _, servers = table_and_servers(client)
    request = b"\x00" + (4).to_bytes(8, "little") + np.arange(4, dtype="<i8").tobytes()
    for server in servers:
        endpoint = server.endpoint
        with socket.create_connection((endpoint.host, endpoint.port), timeout=20) as s:
            s.sendall(bytes(64) + request)
            try:
                got = s.recv(1 << 16)
            except ConnectionResetError:
                got = b""
            assert b"NDGSHRD1" not in got
        raw = socket.create_connection((endpoint.host, endpoint.port), timeout=20)
        with server.ssl_context.wrap_socket(raw) as s:
            s.sendall(bytes(64) + request)
            data = b""
            while chunk := s.recv(1 << 16):
                data += chunk
        assert len(data) == 40 and data.startswith(b"NDGSHRD1")


def test_tls_the_same_ids_again_and_again(client):
    table, sharded, _ = table_and_servers(client)
    for count in (1000, 40000):
        ids = np.random.default_rng(23).integers(0, len(table), count)
        for _ in range(30):
            np.testing.assert_array_equal(sharded.lookup(ids), table[ids])


def test_tls_a_worker_killed_mid_stream_is_recovered(client):
    stream_through_a_kill(client, 1000)
