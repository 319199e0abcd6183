"""Ragged gathers against their peers (issue 41), in one process, each on inputs converted to
its own form before timing; median of --runs timings after one warm-up. Peers that are not
installed are left out.

    python bench/ragged.py [--runs 7] [--cases rows,per_row]

Cases:
- rows: 1,000,000 random rows of a ragged float32 table of 10,000,000 values (1,000,000
  rows of 0 to 20 values): ndgather on an ``ng.Ragged`` and on a pyarrow ``ListArray`` (the
  result a ``ListArray``), ``tf.gather`` on a ``tf.RaggedTensor``, ``pyarrow.compute.take``
  and Polars' ``Series.gather`` (whole rows);
- per_row: per-row gathers (``batch_dims=1``) on 1,000,000 short rows (1 to 8 int64
  values), 0 to 4 indices per row: ndgather, ``tf.gather(rt, ragged_indices,
  batch_dims=1)`` and Polars' ``list.gather`` (pyarrow has no per-row take).

As the strings case is counted (bench/suite.json): bytes moved = 2 × the output's value
bytes + the index bytes read; the rate is also given as a share of ``np.copyto`` of an
output-sized buffer, measured in the same run.
"""
import argparse
import importlib
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import ndgather as ng  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=7)
parser.add_argument("--cases", default="rows,per_row")
args = parser.parse_args()

rng = np.random.default_rng(41)


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


tf = optional("tensorflow")
pa = optional("pyarrow")
pl = optional("polars")
pc = optional("pyarrow.compute") if pa else None


def timed(f, runs):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def ragged_table(rows, low, high, dtype):
    lengths = rng.integers(low, high + 1, rows)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.standard_normal(int(splits[-1])).astype(dtype) if dtype == np.float32 \
        else rng.integers(0, 1 << 40, int(splits[-1])).astype(dtype)
    return values, splits


def memcpy_time(nbytes, runs):
    src = np.ones(nbytes, np.uint8)
    dst = np.empty_like(src)
    return timed(lambda: np.copyto(dst, src), runs)


def report(name, moved, peers):
    copy = memcpy_time(moved // 2, args.runs)
    ours = min(t for n, t in peers.items() if n.startswith("ndgather"))
    print(f"\n{name}: {moved / 1e6:.1f} MB moved; np.copyto of the output's bytes "
          f"{copy * 1e3:.2f} ms")
    print("| implementation | median | GB/s | share of memcpy | ÷ ndgather's best |")
    print("|---|---|---|---|---|")
    for n, t in peers.items():
        print(f"| {n} | {t * 1e3:.2f} ms | {moved / t / 1e9:.2f} | {copy * 2 / t:.0%} "
              f"| {t / ours:.2f} |")


def rows_case():
    values, splits = ragged_table(1_000_000, 0, 20, np.float32)
    idx = rng.integers(0, len(splits) - 1, 1_000_000)
    rt = ng.Ragged(values, splits)
    out = ng.gather(rt, idx)
    moved = 2 * out.values.nbytes + idx.nbytes
    peers = {"ndgather (ng.Ragged)": timed(lambda: ng.gather(rt, idx), args.runs)}
    want = out.to_list()[:1000]
    if pa:
        la = pa.LargeListArray.from_arrays(pa.array(splits), pa.array(values))
        got = ng.gather(la, idx)
        assert got.to_pylist()[:1000] == want
        peers["ndgather (pyarrow ListArray)"] = timed(lambda: ng.gather(la, idx), args.runs)
        pidx = pa.array(idx)
        assert pc.take(la, pidx).to_pylist()[:1000] == want
        peers["pyarrow.compute.take"] = timed(lambda: pc.take(la, pidx), args.runs)
    if pl:
        s = pl.Series("a", la) if pa else None
        if s is not None:
            sidx = pl.Series(idx)
            assert s.gather(sidx).to_list()[:1000] == want
            peers["Polars Series.gather"] = timed(lambda: s.gather(sidx), args.runs)
    if tf:
        trt = tf.RaggedTensor.from_row_splits(values, splits)
        tidx = tf.constant(idx)
        assert tf.gather(trt, tidx)[:1000].to_list() == want
        peers["tf.gather (RaggedTensor)"] = timed(
            lambda: tf.gather(trt, tidx).flat_values._numpy(), args.runs)
    report("rows", moved, peers)


def per_row_case():
    values, splits = ragged_table(1_000_000, 1, 8, np.int64)
    lengths = np.diff(splits)
    counts = rng.integers(0, 5, len(lengths))
    isplits = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    row_of = np.repeat(np.arange(len(lengths)), counts)
    ivalues = (rng.random(int(isplits[-1])) * lengths[row_of]).astype(np.int64)
    rt, ri = ng.Ragged(values, splits), ng.Ragged(ivalues, isplits)
    out = ng.gather(rt, ri, batch_dims=1)
    moved = 2 * out.values.nbytes + ivalues.nbytes
    want = out.to_list()[:1000]
    peers = {"ndgather (ng.Ragged)": timed(lambda: ng.gather(rt, ri, batch_dims=1), args.runs)}
    if pa:
        la = pa.LargeListArray.from_arrays(pa.array(splits), pa.array(values))
        li = pa.LargeListArray.from_arrays(pa.array(isplits), pa.array(ivalues))
        assert ng.gather(la, li, batch_dims=1).to_pylist()[:1000] == want
        peers["ndgather (pyarrow ListArray)"] = timed(
            lambda: ng.gather(la, li, batch_dims=1), args.runs)
        if pl:
            frame = pl.DataFrame({"a": pl.Series(la), "i": pl.Series(li)})
            gather = pl.col("a").list.gather(pl.col("i"))
            assert frame.select(gather).to_series().to_list()[:1000] == want
            peers["Polars list.gather"] = timed(lambda: frame.select(gather), args.runs)
    if tf:
        trt = tf.RaggedTensor.from_row_splits(values, splits)
        tri = tf.RaggedTensor.from_row_splits(ivalues, isplits)
        assert tf.gather(trt, tri, batch_dims=1)[:1000].to_list() == want
        peers["tf.gather (RaggedTensor, batch_dims=1)"] = timed(
            lambda: tf.gather(trt, tri, batch_dims=1).flat_values._numpy(), args.runs)
    report("per_row", moved, peers)


for name in args.cases.split(","):
    {"rows": rows_case, "per_row": per_row_case}[name]()
