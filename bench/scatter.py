"""The write side against its peers (issue 42): ndgather's tensor_scatter_nd_add, in place
and into a new array, beside tf.tensor_scatter_nd_add, np.add.at, JAX's .at[].add and ONNX
Runtime's ScatterND(reduction="add"), in one process, each on the same arrays; median of
--runs timings after one warm-up. Peers that are not installed are left out.

    python bench/scatter.py [--runs 5] [--cases big,zipf,tiny]

Cases:
- big: 1,000,000 updates of 64 float32 into a 1 GiB table (4,194,304 rows), in place for
  ndgather and NumPy (the others make a new table: TensorFlow, JAX and ONNX Runtime have no
  in-place form in eager code);
- zipf: 100,000 updates of 64 float32 into a 100,000-row table, ids drawn from a Zipf law
  (a = 1.2), so a few rows take most updates;
- tiny: one update of 4 float32 into a 16 x 4 table.

Rates are updated rows per second; for big, also as a share of physlim.c's independent
random 8-byte reads per second over 1 GiB (give it with --random-reads, in millions).
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
parser.add_argument("--cases", default="big,zipf,tiny")
parser.add_argument("--random-reads", type=float, default=None,
                    help="physlim.c's independent random reads, millions per second")
args = parser.parse_args()

rng = np.random.default_rng(42)


def case(name):
    if name == "big":
        rows, width, n = 4_194_304, 64, 1_000_000
        ids = rng.integers(0, rows, n)
    elif name == "zipf":
        rows, width, n = 100_000, 64, 100_000
        ids = (rng.zipf(1.2, n) - 1) % rows
    else:
        rows, width, n = 16, 4, 1
        ids = rng.integers(0, rows, n)
    table = rng.standard_normal((rows, width), dtype=np.float32)
    updates = rng.standard_normal((n, width), dtype=np.float32)
    return table, ids.astype(np.int64).reshape(-1, 1), updates


def timed(f, runs, reset=None):
    times = []
    for k in range(runs + 1):
        if reset:
            reset()
        t = time.perf_counter()
        r = f()
        if hasattr(r, "block_until_ready"):
            r.block_until_ready()
        times.append(time.perf_counter() - t)
        del r
    return statistics.median(times[1:])


def peers(table, ids, updates):
    """Name -> a call that returns its result (a new table) from the same inputs."""
    out = {}
    try:
        import tensorflow as tf
        t, i, u = tf.constant(table), tf.constant(ids), tf.constant(updates)
        out["tf.tensor_scatter_nd_add"] = lambda: tf.tensor_scatter_nd_add(t, i, u)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jt, ji, ju = jnp.asarray(table), jnp.asarray(ids[:, 0]), jnp.asarray(updates)
        add = jax.jit(lambda t, i, u: t.at[i].add(u))
        out["jax .at[].add (jit)"] = lambda: add(jt, ji, ju)
    except ImportError:
        pass
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
        node = helper.make_node("ScatterND", ["t", "i", "u"], ["o"], reduction="add")
        graph = helper.make_graph(
            [node], "scatter",
            [helper.make_tensor_value_info("t", TensorProto.FLOAT, list(table.shape)),
             helper.make_tensor_value_info("i", TensorProto.INT64, list(ids.shape)),
             helper.make_tensor_value_info("u", TensorProto.FLOAT, list(updates.shape))],
            [helper.make_tensor_value_info("o", TensorProto.FLOAT, list(table.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        feeds = {"t": table, "i": ids, "u": updates}
        out["onnxruntime ScatterND"] = lambda: session.run(None, feeds)[0]
    except ImportError:
        pass
    return out


print(f"{'case':6} {'what':34} {'median':>10} {'rows/s':>10} {'ndgather in place vs':>22}")
for name in args.cases.split(","):
    table, ids, updates = case(name)
    runs = args.runs if name != "tiny" else 2000
    work = table.copy()
    results = {}
    # In place: the same table each run (the updates accumulate; the work is the same).
    results["ndgather in place"] = timed(
        lambda: ng.tensor_scatter_nd_add(work, ids, updates, out=work), runs)
    results["ndgather new array"] = timed(lambda: ng.tensor_scatter_nd_add(table, ids, updates),
                                          runs)
    flat = ids[:, 0]
    results["np.add.at in place"] = timed(lambda: np.add.at(work, flat, updates), runs)
    for peer, f in peers(table, ids, updates).items():
        results[peer] = timed(f, runs)
    base = results["ndgather in place"]
    for what, t in results.items():
        rate = len(ids) / t
        print(f"{name:6} {what:34} {t * 1e3:8.3f} ms {rate / 1e6:8.2f} M {t / base:20.2f}x")
    if name == "big" and args.random_reads:
        share = len(ids) / base / (args.random_reads * 1e6)
        print(f"{name:6} ndgather in place: {share:.0%} of physlim's random reads/s "
              f"({args.random_reads:.0f} M/s)")
    del table, work
