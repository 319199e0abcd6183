"""Times ShardedTable.lookup on a 2-worker LocalCluster against the anchors a Dask user has.

A table of float32 rows of 64 (about 1 GB at the default 4M rows) in 8 ``.npy`` shards
("div"), memory-mapped by the workers. For 10k, 100k and 1M random ids, side by side in one
run (medians of --repeat runs after a warm-up):

- ``ShardedTable.lookup``;
- the same table as a ``dask.array`` (one chunk per shard file, persisted on the same
  cluster) indexed with ``x[ids]`` and computed: what a Dask user would write;
- one process calling ``ndgather.gather`` on the whole table (a memory map of the same
  files, concatenated in memory): the cost of distribution.

Every result is checked against the one-process answer. Needs the test command's .venv,
with the extension rebuilt for speed (the test command builds it in the `ci` profile):

    VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release -q -m crates/ndgather-py/Cargo.toml
    .venv/bin/python bench/sharded_lookup.py [--rows 4194304] [--dir /tmp/ng-shards] [--out f.json]
"""
import argparse
import json
import os
import statistics
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster, wait

import ndgather as ng
from ndgather.distributed import ShardedTable

WIDTH, SHARDS = 64, 8


def write_shards(directory, rows):
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, f"shard{p}.npy") for p in range(SHARDS)]
    sizes = [len(part) for part in np.array_split(np.empty(rows, np.int8), SHARDS)]
    rng = np.random.default_rng(0)
    for path, size in zip(paths, sizes):
        if not os.path.exists(path) or np.load(path, mmap_mode="r").shape != (size, WIDTH):
            np.save(path, rng.standard_normal((size, WIDTH), dtype=np.float32))
    return paths


def median_time(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=4 << 20)
    parser.add_argument("--dir", default="/tmp/ndgather-shards")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()

    paths = write_shards(args.dir, args.rows)
    whole = np.concatenate([np.load(p, mmap_mode="r") for p in paths])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        table = ShardedTable.from_npy(client, paths, partition_strategy="div")
        wait(table.shards)
        parts = [da.from_delayed(dask.delayed(np.load)(p, mmap_mode="r"),
                                 shape=np.load(p, mmap_mode="r").shape, dtype=np.float32)
                 for p in paths]
        x = da.concatenate(parts).persist()
        wait(x)
        rows = []
        for n in (10_000, 100_000, 1_000_000):
            ids = np.random.default_rng(n).integers(0, args.rows, size=n)
            want = ng.gather(whole, ids)
            assert np.array_equal(table.lookup(ids), want)
            assert np.array_equal(x[ids].compute(), want)
            row = {
                "ids": n,
                "sharded_lookup_s": median_time(lambda: table.lookup(ids), args.repeat),
                "dask_array_index_s": median_time(lambda: x[ids].compute(), args.repeat),
                "one_process_gather_s": median_time(lambda: ng.gather(whole, ids), args.repeat),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print("\n| ids | ShardedTable.lookup | dask.array x[ids] | one process ng.gather "
          "| lookup / dask.array | lookup / one process |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ours, anchor, one = (r["sharded_lookup_s"], r["dask_array_index_s"],
                             r["one_process_gather_s"])
        print(f"| {r['ids']:,} | {ours * 1e3:.1f} ms | {anchor * 1e3:.1f} ms | "
              f"{one * 1e3:.2f} ms | {ours / anchor:.2f} | {ours / one:.1f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": args.rows, "width": WIDTH, "shards": SHARDS, "results": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
