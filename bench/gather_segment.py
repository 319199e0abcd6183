"""Graph message passing against its peers (issue 54): ``out[dst] (+)= x[src]`` on a power-law
graph, as PyG and DGL run it, in one process, each on the same arrays; median of --runs
timings after one warm-up, with every peer's result checked against ndgather's unfused
``unsorted_segment_<reduce>(gather(x, src), dst)``. Peers that are not installed are left out.

    python bench/gather_segment.py [--runs 5] [--edges 1000000] [--nodes 100000] [--features 64]

- ndgather ``gather_segment(x, src, dst, n, reduce)``: fused, the gathered rows never exist;
- ndgather unfused: ``unsorted_segment_<reduce>(gather(x, src), dst, n)``;
- PyTorch as PyG runs it without ``torch_scatter``: ``x.index_select(0, src)``, then
  ``index_add_`` for sum and ``scatter_reduce_(..., include_self=False)`` for max;
- TensorFlow: ``tf.math.unsorted_segment_<reduce>(tf.gather(x, src), dst, n)``;
- JAX (jit): ``jax.ops.segment_<reduce>(x[src], dst, n)``.

Edges: sources drawn from a Zipf law (a = 1.5, so a few hub nodes send most messages) and
destinations uniform. Rates are edges per second.

The peers live in side environments; put their site-packages after ndgather's on the path:
``PYTHONPATH=/tmp/torchvenv/lib/python3.11/site-packages:/tmp/tfvenv/lib/python3.11/site-packages``.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import ndgather as ng  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=5)
parser.add_argument("--edges", type=int, default=1_000_000)
parser.add_argument("--nodes", type=int, default=100_000)
parser.add_argument("--features", type=int, default=64)
args = parser.parse_args()

rng = np.random.default_rng(54)
n, e, f = args.nodes, args.edges, args.features
x = rng.standard_normal((n, f), dtype=np.float32)
src = ((rng.zipf(1.5, e) - 1) % n).astype(np.int64)
dst = rng.integers(0, n, e).astype(np.int64)


def median_time(fn):
    fn()
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def peers(reduce):
    """Each peer's call, returning a NumPy array."""
    out = {
        "ndgather fused": lambda: ng.gather_segment(x, src, dst, n, reduce),
        "ndgather unfused": lambda: getattr(ng, f"unsorted_segment_{reduce}")(
            ng.gather(x, src), dst, n),
    }
    try:
        import torch
        torch.set_num_threads(os.cpu_count() or 1)
        tx, ts, td = torch.from_numpy(x), torch.from_numpy(src), torch.from_numpy(dst)
        if reduce == "sum":
            def pyg():
                msg = tx.index_select(0, ts)
                return torch.zeros(n, f).index_add_(0, td, msg).numpy()
        else:
            def pyg():
                msg = tx.index_select(0, ts)
                index = td.unsqueeze(-1).expand(-1, f)
                return torch.zeros(n, f).scatter_reduce_(
                    0, index, msg, "amax", include_self=False).numpy()
        out["PyTorch (PyG)"] = pyg
    except ImportError:
        pass
    try:
        import tensorflow as tf
        op = getattr(tf.math, f"unsorted_segment_{reduce}")
        gx, gs, gd = tf.constant(x), tf.constant(src), tf.constant(dst)
        out["TensorFlow"] = lambda: op(tf.gather(gx, gs), gd, n).numpy()
    except ImportError:
        pass
    try:
        import jax
        jx, js, jd = jax.numpy.asarray(x), jax.numpy.asarray(src), jax.numpy.asarray(dst)
        seg = getattr(jax.ops, f"segment_{reduce}")
        fn = jax.jit(lambda a, s, d: seg(a[s], d, num_segments=n))
        out["JAX (jit)"] = lambda: np.asarray(fn(jx, js, jd).block_until_ready())
    except ImportError:
        pass
    return out


for reduce in ("sum", "max"):
    calls = peers(reduce)
    want = calls["ndgather unfused"]()
    rows = []
    for name, call in calls.items():
        got = call()
        if reduce == "max" and name == "PyTorch (PyG)":
            # PyTorch leaves an empty segment 0 (include_self=False on zeros); TF, JAX and
            # ndgather give the lowest float.
            got = np.where(np.isin(np.arange(n), dst)[:, None], got, want)
        same = "exact" if np.array_equal(got, want) else (
            f"max diff {np.max(np.abs(got.astype(np.float64) - want)):.2g}")
        rows.append((name, median_time(call), same))
    base = dict((r[0], r[1]) for r in rows)["ndgather fused"]
    print(f"\n{reduce}: {e:,} edges, {n:,} nodes x {f} float32 (median of {args.runs})")
    print("| peer | median | edges/s | fused ndgather's speed-up | result |")
    print("|---|---|---|---|---|")
    for name, t, same in rows:
        print(f"| {name} | {t * 1e3:.1f} ms | {e / t / 1e6:.1f} M | {t / base:.2f}x | {same} |")
