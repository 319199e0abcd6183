"""Serving latency of ShardedTable.lookup on a LocalCluster, beside the transport's floor.

Issue 43's setting: ``LocalCluster(n_workers=2, threads_per_worker=1)`` (worker processes), a
400,000 x 32 float32 table in 2 "mod" shards. Measured in one run, each against the same
random ids:

- ``ShardedTable.lookup``: p50, p90 and p99 latency for 1, 1,000 and 100,000 ids;
- the floor: a plain Dask actor call that receives the same ids and returns an array of the
  same size without gathering anything; and the same call made on the actor's worker
  directly (as lookups call their shard servers), without the scheduler's two hops;
- dask's own ``x[ids]`` on the table as a persisted ``dask.array`` (2 chunks), computed;
- throughput: lookups of 1,000 ids per second from 1, 4 and 8 client threads, every
  result checked;
- recovery: lookups of 1,000 ids in a stream while the worker holding a shard is killed
  (SIGKILL): the longest wait for a lookup, and every result checked;
- the shard servers' connections (issue 53: each proves that it holds the server's secret
  by HMAC-SHA256 before any row is sent): how many the latency runs opened, and lookups of
  1,000 ids that open a new connection each time, handshake included, beside the lookups
  that keep theirs open.

Needs the test command's .venv, with the extension built for speed:

    VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release -q -m crates/ndgather-py/Cargo.toml
    .venv/bin/python bench/serving.py [--rows 400000] [--calls 200] [--out f.json]
"""
import argparse
import json
import os
import signal
import threading
import time

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster, wait

from ndgather.distributed import ShardedTable, _Server

try:  # the authenticated socket (issue 53); absent from the code before it
    from ndgather import _shard_socket
except ImportError:
    _shard_socket = None

WIDTH = 32


class Floor:
    """The transport alone: takes ids, returns rows of the right size, gathers nothing."""

    def echo(self, ids):
        return np.zeros((len(ids), WIDTH), np.float32)


class CountConnections:
    """Counts the shard-server connections that the client opens while it is active."""

    def __init__(self):
        self.opened = 0

    def __enter__(self):
        if _shard_socket is not None:
            self._open = _shard_socket.Connection.open.__func__

            async def counted(cls, *args):
                self.opened += 1
                return await self._open(cls, *args)

            _shard_socket.Connection.open = classmethod(counted)
        return self

    def __exit__(self, *exc):
        if _shard_socket is not None:
            _shard_socket.Connection.open = classmethod(self._open)


def new_connection_each_time(table, ids):
    """A lookup after the client's open connections are closed: the handshake each time."""
    for server in table._servers._actors.values():
        while server._idle:
            server._idle.pop().close()
    return table.lookup(ids)


def percentiles(fn, calls):
    fn()  # warm-up
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    p50, p90, p99 = np.percentile(times, [50, 90, 99])
    return {"p50_ms": p50 * 1e3, "p90_ms": p90 * 1e3, "p99_ms": p99 * 1e3}


def throughput(table, table_np, threads, seconds, rng):
    """Lookups of 1,000 ids per second from `threads` client threads, each result checked."""
    ids = [rng.integers(0, len(table_np), 1000) for _ in range(64)]
    expected = [table_np[i] for i in ids]
    done, wrong = [0] * threads, [0] * threads
    stop = time.monotonic() + seconds

    def client_thread(k):
        n = 0
        while time.monotonic() < stop:
            j = (k * 7 + n) % len(ids)
            if not np.array_equal(table.lookup(ids[j]), expected[j]):
                wrong[k] += 1
            n += 1
        done[k] = n

    start = time.perf_counter()
    workers = [threading.Thread(target=client_thread, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return {"lookups_per_s": sum(done) / (time.perf_counter() - start), "wrong": sum(wrong)}


def recovery(client, table, table_np, rng, seconds=6.0):
    """Kills the worker holding shard 0 while one thread streams lookups; the longest
    lookup (the one that met the dead worker) and the count of wrong results."""
    ids = [rng.integers(0, len(table_np), 1000) for _ in range(16)]
    expected = [table_np[i] for i in ids]
    times, wrong, stop = [], [0], threading.Event()

    def stream():
        n = 0
        while not stop.is_set():
            start = time.perf_counter()
            ok = np.array_equal(table.lookup(ids[n % 16]), expected[n % 16])
            times.append(time.perf_counter() - start)
            wrong[0] += not ok
            n += 1

    victim = client.who_has(table.shards[:1])[table.shards[0].key][0]
    pid = client.run(os.getpid, workers=[victim])[victim]
    thread = threading.Thread(target=stream)
    thread.start()
    time.sleep(1.0)
    os.kill(pid, signal.SIGKILL)
    time.sleep(seconds)
    stop.set()
    thread.join()
    return {"longest_lookup_s": max(times), "lookups": len(times), "wrong": wrong[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    table_np = rng.standard_normal((args.rows, WIDTH), dtype=np.float32)
    results = {"rows": args.rows, "width": WIDTH, "latency": {}, "throughput": {}}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        table = ShardedTable.from_array(client, table_np, num_shards=2,
                                        partition_strategy="mod")
        wait(table.shards)
        floor_future = client.submit(Floor, actor=True)
        floor = floor_future.result()
        # The same actor called on its worker directly, as lookups call their servers (a
        # plain actor call from a default client hops through the scheduler both ways).
        direct = _Server(client, client.who_has([floor_future])[floor_future.key][0],
                         floor.key)
        x = da.from_array(table_np, chunks=(args.rows // 2, WIDTH)).persist()
        wait(x)
        connections = CountConnections()
        for n in (1, 1000, 100_000):
            ids = rng.integers(0, args.rows, n)
            calls = args.calls if n < 100_000 else max(args.calls // 4, 10)
            with connections:  # the first lookup opens one a server, kept for the rest
                assert np.array_equal(table.lookup(ids), table_np[ids])
                row = {"ShardedTable.lookup": percentiles(lambda: table.lookup(ids), calls)}
            row.update({
                "floor (actor call)": percentiles(lambda: floor.echo(ids).result(), calls),
                "direct actor call": percentiles(lambda: direct.call_sync("echo", ids), calls),
                "dask x[ids]": percentiles(lambda: x[ids].compute(), max(calls // 4, 10)),
            })
            if n == 1000 and _shard_socket is not None:
                row["lookup, new connection"] = percentiles(
                    lambda: new_connection_each_time(table, ids), calls)
            results["latency"][n] = row
            for what, p in row.items():
                print(f"{n:>7} ids  {what:22} p50 {p['p50_ms']:7.2f} ms  p90 {p['p90_ms']:7.2f} ms"
                      f"  p99 {p['p99_ms']:7.2f} ms")
        if _shard_socket is not None:
            results["connections_opened"] = connections.opened
            print(f"the lookups above opened {connections.opened} connections to the "
                  f"{len(table._servers._actors)} shard servers")
        for threads in (1, 4, 8):
            t = throughput(table, table_np, threads, args.seconds, rng)
            results["throughput"][threads] = t
            print(f"{threads} client threads: {t['lookups_per_s']:7.0f} lookups/s of 1,000 ids,"
                  f" {t['wrong']} wrong")
        r = recovery(client, table, table_np, rng)
        results["recovery"] = r
        print(f"a worker killed mid-stream: longest lookup {r['longest_lookup_s']:.2f} s, "
              f"{r['lookups']} lookups, {r['wrong']} wrong")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
