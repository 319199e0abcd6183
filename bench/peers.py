#!/usr/bin/env python3
"""Peer timings for tf.gather / tf.gather_nd on the CPU: NumPy, TensorFlow (eager), JAX (jit), onnxruntime.

Usage (from anywhere):
    TF_CPP_MIN_LOG_LEVEL=3 python peers.py --out results.json [--quick]
        [--cases embed,tiny] [--peers numpy,tf,jax,ort] [--runs 9] [--memcpy-gbps 32.7]
    python peers.py --merge run1.json run2.json --out merged.json   # pool samples of runs

The suite is read from bench/suite.json (shared with the Rust harness).  For every case the inputs are
built once with a fixed seed (NumPy), each implementation gets its inputs converted *before* timing,
is warmed up (JAX: compiled), checked against the NumPy result, then timed: median of --runs samples
taken with time.perf_counter, each sample forcing the result (TF: EagerTensor._numpy(), a zero-copy
view -- eager CPU kernels are synchronous; JAX: block_until_ready(); ORT: run_with_ort_values).
Calls that take < 5 ms are repeated inside a sample so that one sample lasts >= ~20 ms.  Samples are
taken in --blocks alternating blocks per implementation (see run_blocks), so drifts of a shared, noisy
machine hit all peers alike.  Minor page faults per call (fresh output pages) and cores used (process CPU time / wall time) are recorded.
Before each block the harness waits (up to --quiet-wait s) until other processes use < 0.25 cores; each
sample records the background load of its block and the reported median uses the quiet samples.
Variants (numpy_fancy, jax_idx, numpy_flat, ...) and per-case copy anchors (copy_fresh / copy_prealloc:
np.copy of an output-sized buffer) are timed too but not counted as 'best'.

Effective GB/s = bytes_moved / median time, bytes_moved = 2*output_bytes + index_bytes (see suite.json).
"""
import argparse
import gc
import json
import os
import platform
import resource
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PRIMARY = ["numpy", "tf", "jax", "ort"]
pc = time.perf_counter
QUIET = 0.25  # a block counts as quiet if other processes used < QUIET cores during it
# Untimed calls at the start of each block, for at least this long: after the quiet wait's sleep a
# thread pool's workers first share a CPU with the caller for some tens of ms (seen as 1.6x slower
# samples of a 2-thread call until the scheduler moves them apart; bench/LOG.md, "Block warm-up").
WARM_S = 0.1


# ----------------------------------------------------------------------------------------------
# background-load guard: the machine is shared; another tenant process sometimes hogs one of the 2 cores
# for tens of seconds, which mostly hurts the multi-threaded peers (TF, ORT).
# ----------------------------------------------------------------------------------------------
_CLK = os.sysconf("SC_CLK_TCK")


def _sys_busy_s():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / _CLK  # user nice system irq softirq steal


def _own_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def bg_mark():
    return (_sys_busy_s(), _own_cpu_s(), pc())


def bg_since(m):
    """Cores used by *other* processes since mark m."""
    dt = pc() - m[2]
    return max(0.0, ((_sys_busy_s() - m[0]) - (_own_cpu_s() - m[1])) / dt) if dt > 0 else 0.0


def wait_quiet(max_wait_s, window_s=0.2):
    """Sleep in windows until other processes use < QUIET cores (or max_wait_s passed).
    Returns (mark taken at the start of the last window, seconds waited beyond the first window)."""
    t0 = pc()
    while True:
        m = bg_mark()
        time.sleep(window_s)
        if bg_since(m) < QUIET or pc() - t0 > max_wait_s:
            return m, pc() - t0 - window_s


# ----------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------
def build_inputs(case, sizes):
    rng = np.random.default_rng(case["seed"])
    pshape = tuple(sizes["params_shape"])
    ishape = tuple(sizes["indices_shape"])
    pdt = case["params"]["dtype"]
    idt = np.dtype(case["indices"]["dtype"])
    # params
    if pdt == "string":
        n = pshape[0]
        lo, hi = case["params"]["min_len"], case["params"]["max_len"]
        alpha = np.frombuffer(case["params"]["alphabet"].encode(), np.uint8)
        lens = rng.integers(lo, hi + 1, size=n)
        blob = alpha[rng.integers(0, len(alpha), size=int(lens.sum()))].tobytes()
        offs = np.concatenate([[0], np.cumsum(lens)])
        params = np.empty(n, dtype=object)
        params[:] = [blob[offs[k]:offs[k + 1]] for k in range(n)]
        lens_arr = lens
    else:
        params = rng.random(size=pshape, dtype=np.float64 if pdt == "float64" else np.float32)
        params = params.astype(pdt, copy=False)
        lens_arr = None
    # indices
    high = sizes["index_high"]
    if case["op"] in ("gather", "take_along_axis"):
        indices = rng.integers(0, high, size=ishape, dtype=idt)
    else:
        depth = ishape[-1]
        assert isinstance(high, list) and len(high) == depth
        indices = np.empty(ishape, dtype=idt)
        for k in range(depth):
            indices[..., k] = rng.integers(0, high[k], size=ishape[:-1], dtype=idt)
    if case["indices"].get("sorted"):
        indices = np.sort(indices, axis=None).reshape(ishape)
    indices = np.ascontiguousarray(indices)
    return params, indices, lens_arr


def out_shape(case, pshape, ishape):
    bd = case.get("batch_dims", 0)
    if case["op"] == "take_along_axis":
        return tuple(ishape)
    if case["op"] == "gather":
        ax = case["axis"]
        return tuple(pshape[:ax]) + tuple(ishape[bd:]) + tuple(pshape[ax + 1:])
    return tuple(ishape[:-1]) + tuple(pshape[bd + ishape[-1]:])


# ----------------------------------------------------------------------------------------------
# implementations: each returns list of (name, label, primary, fn, to_numpy) or raises/returns []
# ----------------------------------------------------------------------------------------------
def impl_numpy(case, p, i):
    op, bd = case["op"], case.get("batch_dims", 0)
    res = []
    ident = lambda r: r
    if case["params"]["dtype"] == "string":
        res.append(("numpy", "np.take (object array of bytes)", True, lambda: np.take(p, i, axis=0), ident))
        lens = max(len(s) for s in p)
        pS = p.astype(f"S{lens}")
        res.append(("numpy_S", f"np.take (fixed-width S{lens})", False, lambda: np.take(pS, i, axis=0),
                    lambda r: r.astype(object)))
        try:
            pT = np.array([s.decode() for s in p], dtype=np.dtypes.StringDType())
            res.append(("numpy_StringDType", "np.take (StringDType, utf-8)", False, lambda: np.take(pT, i, axis=0),
                        lambda r: np.array([s.encode() for s in r], dtype=object)))
        except Exception:
            pass
        return res
    if op == "take_along_axis":
        ax = case["axis"]
        res.append(("numpy", f"np.take_along_axis(axis={ax})", True,
                    lambda: np.take_along_axis(p, i, axis=ax), ident))
        return res
    if op == "gather":
        ax = case["axis"]
        if bd == 0:
            res.append(("numpy", f"np.take(axis={ax})", True, lambda: np.take(p, i, axis=ax), ident))
            if ax == 0:
                res.append(("numpy_fancy", "p[i]", False, lambda: p[i], ident))
        elif bd == 1 and ax == 1 and p.ndim == 2 and i.ndim == 2:
            res.append(("numpy", "np.take_along_axis(axis=1)", True, lambda: np.take_along_axis(p, i, axis=1), ident))
        else:
            raise NotImplementedError
    else:
        depth = i.shape[-1]
        if bd == 0:
            res.append(("numpy", "p[i[...,0], i[...,1], ...]", True,
                        lambda: p[tuple(i[..., k] for k in range(depth))], ident))
            strides = np.array([int(np.prod(p.shape[k + 1:depth])) for k in range(depth)], dtype=np.int64)
            flatp = p.reshape((-1,) + p.shape[depth:])

            def flat():
                f = i[..., 0].astype(np.int64) * strides[0]
                for k in range(1, depth):
                    f += i[..., k] * strides[k]
                return np.take(flatp, f, axis=0)
            res.append(("numpy_flat", "np.take(p.reshape, linearised idx)", False, flat, ident))
        elif bd == 1:
            B = p.shape[0]
            ar = np.arange(B).reshape((B,) + (1,) * (i.ndim - 2))
            res.append(("numpy", "p[arange(B)[:,None], i[...,0], ...]", True,
                        lambda: p[(ar,) + tuple(i[..., k] for k in range(depth))], ident))
        else:
            raise NotImplementedError
    return res


def impl_tf(case, p, i):
    import tensorflow as tf
    op, bd = case["op"], case.get("batch_dims", 0)
    with tf.device("/CPU:0"):
        tp = tf.constant(p)
        ti = tf.constant(i)
    if case["params"]["dtype"] == "string":
        # eager CPU ops are synchronous; _numpy() would build 1M Python bytes objects, so not called.
        force = lambda t: t
        conv = lambda t: t.numpy()
    else:
        force = lambda t: t._numpy()
        conv = lambda r: np.asarray(r)
    res = []
    if op == "take_along_axis":
        ax = case["axis"]
        tnp = tf.experimental.numpy
        res.append(("tf", f"tf.experimental.numpy.take_along_axis(axis={ax})", True,
                    lambda: force(tnp.take_along_axis(tp, ti, axis=ax)), conv))
        if ax == 1 and p.ndim == 2:
            res.append(("tf_gather", "tf.gather(axis=1, batch_dims=1)", False,
                        lambda: force(tf.gather(tp, ti, axis=1, batch_dims=1)), conv))
        return res
    if op == "gather":
        ax = case["axis"]
        res.append(("tf", f"tf.gather(axis={ax}, batch_dims={bd})", True,
                    lambda: force(tf.gather(tp, ti, axis=ax, batch_dims=bd)), conv))
        if case["name"] == "tiny":
            axt = tf.constant(ax)
            res.append(("tf_raw", "tf.raw_ops.GatherV2", False,
                        lambda: force(tf.raw_ops.GatherV2(params=tp, indices=ti, axis=axt, batch_dims=bd)), conv))
            res.append(("tf_numpy", "tf.gather(...).numpy() (copying)", False,
                        lambda: tf.gather(tp, ti, axis=ax, batch_dims=bd).numpy(), conv))
    else:
        res.append(("tf", f"tf.gather_nd(batch_dims={bd})", True,
                    lambda: force(tf.gather_nd(tp, ti, batch_dims=bd)), conv))
    return res


_jax_ready = False


def impl_jax(case, p, i):
    global _jax_ready
    import jax
    if not _jax_ready:
        jax.config.update("jax_enable_x64", True)  # keep i64 indices / f64 params as they are
        jax.config.update("jax_platforms", "cpu")
        _jax_ready = True
    import jax.numpy as jnp
    if case["params"]["dtype"] == "string":
        return []
    op, bd = case["op"], case.get("batch_dims", 0)
    jp = jax.device_put(p)
    ji = jax.device_put(i)
    jp.block_until_ready(); ji.block_until_ready()
    fns = []
    if op == "take_along_axis":
        ax = case["axis"]
        fns.append(("jax", f"jit(jnp.take_along_axis(axis={ax})) [default mode]", True,
                    jax.jit(lambda a, b: jnp.take_along_axis(a, b, axis=ax))))
        fns.append(("jax_pib", f"jit(jnp.take_along_axis(axis={ax}, mode='promise_in_bounds'))", False,
                    jax.jit(lambda a, b: jnp.take_along_axis(a, b, axis=ax, mode="promise_in_bounds"))))
    elif op == "gather":
        ax = case["axis"]
        if bd == 0:
            fns.append(("jax", f"jit(jnp.take(axis={ax})) [default mode=fill]", True,
                        jax.jit(lambda a, b: jnp.take(a, b, axis=ax))))
            sl = (slice(None),) * ax
            fns.append(("jax_idx", f"jit(p[{':, ' * ax}i]) [indexing: promise_in_bounds]", False,
                        jax.jit(lambda a, b: a[sl + (b,)])))
        elif bd == 1 and ax == 1 and p.ndim == 2:
            fns.append(("jax", "jit(jnp.take_along_axis(axis=1)) [default mode]", True,
                        jax.jit(lambda a, b: jnp.take_along_axis(a, b, axis=1))))
            fns.append(("jax_pib", "jit(jnp.take_along_axis(mode='promise_in_bounds'))", False,
                        jax.jit(lambda a, b: jnp.take_along_axis(a, b, axis=1, mode="promise_in_bounds"))))
        else:
            raise NotImplementedError
    else:
        depth = i.shape[-1]
        if bd == 0:
            fns.append(("jax", "jit(p[i[...,0], i[...,1]]) [promise_in_bounds]", True,
                        jax.jit(lambda a, b: a[tuple(b[..., k] for k in range(depth))])))
        elif bd == 1:
            B = p.shape[0]
            shp = (B,) + (1,) * (i.ndim - 2)
            fns.append(("jax", "jit(p[arange(B)[:,None], i[...,0]])", True,
                        jax.jit(lambda a, b: a[(jnp.arange(B).reshape(shp),) + tuple(b[..., k] for k in range(depth))])))
        else:
            raise NotImplementedError
    res = []
    for name, label, prim, f in fns:
        f.lower(jp, ji).compile()  # compile outside timing (warm-up call hits the cache as well)
        res.append((name, label, prim, (lambda f=f: f(jp, ji).block_until_ready()), lambda r: np.asarray(r)))
    return res


def impl_ort(case, p, i):
    import onnxruntime as ort
    from onnx import helper, TensorProto
    if case["params"]["dtype"] == "string":
        return []  # ORT python cannot bind string tensors without per-call conversion
    op, bd = case["op"], case.get("batch_dims", 0)
    tmap = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
            np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64}
    label_extra = ""
    if op == "take_along_axis":
        ax = case["axis"]
        node = helper.make_node("GatherElements", ["p", "i"], ["y"], axis=ax)
        label = f"GatherElements(axis={ax})"
    elif op == "gather":
        ax = case["axis"]
        if bd == 0:
            node = helper.make_node("Gather", ["p", "i"], ["y"], axis=ax)
            label = f"Gather(axis={ax})"
        elif bd == 1 and ax == 1 and p.ndim == 2:
            node = helper.make_node("GatherElements", ["p", "i"], ["y"], axis=1)
            label = "GatherElements(axis=1)"
        else:
            raise NotImplementedError
    else:
        node = helper.make_node("GatherND", ["p", "i"], ["y"], batch_dims=bd)
        label = f"GatherND(batch_dims={bd})"
        if i.dtype != np.int64:  # ONNX GatherND only takes int64 indices
            i = i.astype(np.int64)
            label_extra = " [idx pre-cast to int64]"
    g = helper.make_graph([node], "g",
                          [helper.make_tensor_value_info("p", tmap[p.dtype], None),
                           helper.make_tensor_value_info("i", tmap[i.dtype], None)],
                          [helper.make_tensor_value_info("y", tmap[p.dtype], None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = os.cpu_count()
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    vals = (ort.OrtValue.ortvalue_from_numpy(p), ort.OrtValue.ortvalue_from_numpy(i))
    # C-level entry point of InferenceSession.run_with_ort_values: the Python wrapper adds ~45 us/call of
    # input validation (ownership checks); the public io_binding path costs the same ~3.5 us as this.
    cfeeds = {"p": vals[0]._ortvalue, "i": vals[1]._ortvalue}
    ro = ort.RunOptions()
    # the default argument keeps the numpy buffers (wrapped zero-copy, e.g. the int64 cast) alive
    fn = lambda keep=(vals, p, i): sess._sess.run_with_ort_values(cfeeds, ["y"], ro)
    return [("ort", label + label_extra, True, fn, lambda r: r[0].numpy())]


def impl_ndgather(case, p, i):
    """This package (ndgather's Python API), timed in the same process as the peers."""
    import ndgather as ng
    op, bd = case["op"], case.get("batch_dims", 0)
    if op == "take_along_axis":
        ax = case["axis"]
        return [("ndgather", f"ng.take_along_axis(axis={ax})", True,
                 lambda: ng.take_along_axis(p, i, ax), lambda r: r)]
    if op == "gather":
        ax = case["axis"]
        return [("ndgather", f"ng.gather(axis={ax}, batch_dims={bd})", True,
                 lambda: ng.gather(p, i, axis=ax, batch_dims=bd), lambda r: r)]
    return [("ndgather", f"ng.gather_nd(batch_dims={bd})", True,
             lambda: ng.gather_nd(p, i, batch_dims=bd), lambda r: r)]


IMPLS = {"numpy": impl_numpy, "tf": impl_tf, "jax": impl_jax, "ort": impl_ort, "ndgather": impl_ndgather}


def copy_anchors(out_bytes):
    """Per-case memcpy references of the output size (NumPy, 1 thread)."""
    src = np.ones(out_bytes, dtype=np.uint8)
    dst = np.empty_like(src)
    return [("copy_fresh", "np.copy of output-sized buffer (fresh alloc: page faults incl.)", False,
             lambda: np.copy(src), None),
            ("copy_prealloc", "np.copyto into preallocated output-sized buffer", False,
             lambda: np.copyto(dst, src), None)]


# ----------------------------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------------------------
def prepare(fn, runs, slow_budget_s):
    """Warm-up and calibration: returns the per-implementation timing plan."""
    gc.collect()
    t0 = pc(); r = fn(); first = pc() - t0
    del r
    note = None
    if first < 5e-3:
        t0 = pc()
        for _ in range(20):
            fn()
        est = (pc() - t0) / 20
        inner = max(1, int(0.02 / max(est, 1e-8)))
    else:
        inner = 1
        if first * (runs + 1) > slow_budget_s:
            runs = max(3, int(slow_budget_s / first))
            note = f"slow ({first:.1f} s/call): only {runs} runs"
        fn()  # second warm-up
    return {"runs": runs, "inner": inner, "first_call_s": first, "note": note, "samples_s": [], "bg_cores": [],
            "minflt": 0, "waited_s": 0.0, "cpu_s": 0.0, "wall_s": 0.0}


def run_blocks(plans, fns, blocks, quiet_wait_s):
    """Samples are taken in `blocks` blocks per implementation, the blocks of the implementations of a case
    alternating (rotating order).  Each block: wait until the machine is quiet (other processes < QUIET
    cores; this also lets other runtimes' spinning pool threads park), untimed warm-up calls for WARM_S, then its
    share of the timed samples back to back.  The background load during the block is recorded with each
    sample; the reported median uses only quiet samples when there are enough of them."""
    names = list(plans)
    gc.collect()
    for b in range(blocks):
        order = names[b % len(names):] + names[:b % len(names)]
        for k in order:
            pl = plans[k]
            todo = -(-pl["runs"] * (b + 1) // blocks) - len(pl["samples_s"])
            if todo <= 0:
                continue
            fn, inner = fns[k], pl["inner"]
            mark, waited = wait_quiet(quiet_wait_s)
            pl["waited_s"] += waited
            w0 = pc()
            fn()
            while pc() - w0 < WARM_S:
                fn()
            gc.disable()
            try:
                block = []
                c0, w0 = _own_cpu_s(), pc()
                for _ in range(todo):
                    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    t0 = pc()
                    for _ in range(inner):
                        fn()
                    block.append((pc() - t0) / inner)
                    pl["minflt"] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
                pl["cpu_s"] += _own_cpu_s() - c0
                pl["wall_s"] += pc() - w0
                bg = bg_since(mark)
            finally:
                gc.enable()
            pl["samples_s"] += block
            pl["bg_cores"] += [round(bg, 3)] * len(block)
    for pl in plans.values():
        pl["minflt_per_call"] = pl.pop("minflt") / (len(pl["samples_s"]) * pl["inner"])
        pl["cores_used"] = pl.pop("cpu_s") / max(pl.pop("wall_s"), 1e-9)  # own CPU time / wall time
        summarise(pl)


def summarise(pl):
    """median_s = median of the quiet samples when at least half (and >= 3) of them are quiet, else of all."""
    sm, bgs = pl["samples_s"], pl["bg_cores"]
    quiet = [t for t, g in zip(sm, bgs) if g < QUIET]
    pl["median_all_s"] = statistics.median(sm)
    pl["n_quiet"] = len(quiet)
    use = quiet if len(quiet) >= max(3, (len(sm) + 1) // 2) else sm
    pl["noisy"] = use is sm and len(quiet) < len(sm)
    pl["median_s"] = statistics.median(use)
    pl["min_s"] = min(sm)


def pick_best(entry, memcpy_gbps):
    prim = {k: v for k, v in entry["results"].items() if k in PRIMARY and "median_s" in v}
    if prim:
        best = min(prim, key=lambda k: prim[k]["median_s"])
        entry["best"] = best
        entry["best_gbps"] = prim[best]["gbps"]
        if memcpy_gbps:
            entry["best_frac_of_memcpy"] = prim[best]["gbps"] / memcpy_gbps


def merge(paths, out_path, memcpy_gbps):
    """Pool the samples of several runs of the same suite (e.g. two full runs minutes apart) and recompute
    the medians, so that slow drifts of the shared machine are averaged out."""
    runs = [json.load(open(p)) for p in paths]
    base = runs[0]
    base["meta"]["merged_from"] = [os.path.basename(p) for p in paths]
    base["meta"]["memcpy_gbps"] = memcpy_gbps or base["meta"].get("memcpy_gbps")
    for ci, e in enumerate(base["cases"]):
        for k, r in e["results"].items():
            if "median_s" not in r:
                continue
            others = [o["cases"][ci]["results"].get(k, {}) for o in runs[1:]]
            others = [o for o in others if "median_s" in o]
            n0 = len(r["samples_s"]) * r["inner"]
            tot_calls, flt, cores = n0, r["minflt_per_call"] * n0, r["cores_used"] * n0
            for o in others:
                assert o["label"] == r["label"]
                n = len(o["samples_s"]) * o["inner"]
                r["samples_s"] = r["samples_s"] + o["samples_s"]
                r["bg_cores"] = r["bg_cores"] + o["bg_cores"]
                r["waited_s"] += o["waited_s"]
                r["correct"] = r["correct"] if o["correct"] is None else bool(r["correct"] in (None, True) and o["correct"])
                tot_calls += n; flt += o["minflt_per_call"] * n; cores += o["cores_used"] * n
            r["runs"] = len(r["samples_s"])
            r["per_run_median_s"] = [r["median_s"]] + [o["median_s"] for o in others]
            r["minflt_per_call"] = flt / tot_calls
            r["cores_used"] = cores / tot_calls
            summarise(r)
            mv = e["bytes_moved"] if not k.startswith("copy_") else 2 * e["out_bytes"]
            r["gbps"] = mv / r["median_s"] / 1e9
        pick_best(e, base["meta"]["memcpy_gbps"])
    with open(out_path, "w") as f:
        json.dump(base, f, indent=1)
    return base


def check(ref, got, is_string):
    if got is None:
        return None
    try:
        got = np.asarray(got)
        if got.shape != ref.shape:
            return False
        if is_string:
            return bool(np.all(got.astype(object) == ref))
        return bool(np.array_equal(got, ref))
    except Exception:
        return False


def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f}us"
    return f"{s * 1e3:.3g}ms" if s < 1 else f"{s * 1e3:.0f}ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default=os.path.join(HERE, "suite.json"))
    ap.add_argument("--out", required=True, help="JSON results path")
    ap.add_argument("--quick", action="store_true", help="use the 'quick' (smaller) sizes")
    ap.add_argument("--cases", default="", help="comma-separated subset of case names")
    ap.add_argument("--peers", default="numpy,tf,jax,ort")
    ap.add_argument("--runs", type=int, default=9, help="timed samples per implementation (median reported)")
    ap.add_argument("--blocks", type=int, default=3, help="the runs are taken in this many alternating blocks")
    ap.add_argument("--quiet-wait", type=float, default=30.0,
                    help="max seconds to wait before each block for other processes to go idle")
    ap.add_argument("--slow-budget", type=float, default=60.0, help="seconds per implementation before runs are cut")
    ap.add_argument("--memcpy-gbps", type=float, default=None,
                    help="machine memcpy GB/s (read+write) from physlim; adds a %%-of-memcpy column")
    ap.add_argument("--no-variants", action="store_true", help="time only the primary implementation per peer")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--merge", nargs="+", metavar="RUN.json",
                    help="do not run: pool the samples of these result files (same suite/sizes) into --out")
    args = ap.parse_args()
    if args.merge:
        out = merge(args.merge, args.out, args.memcpy_gbps)
        print_table(out, PRIMARY)
        print(f"\nwrote {args.out} (merged {len(args.merge)} runs)")
        return

    suite = json.load(open(args.suite))
    want = [c for c in args.cases.split(",") if c]
    peers = [p for p in args.peers.split(",") if p]
    size_key = "quick" if args.quick else "full"

    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "size": size_key, "runs": args.runs, "blocks": args.blocks,
            "quiet_threshold_cores": QUIET,
            "python": sys.version.split()[0], "numpy": np.__version__, "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "memcpy_gbps": args.memcpy_gbps}
    try:
        meta["cpu"] = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
        meta["thp"] = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip()
    except Exception:
        pass
    for mod, peer in (("tensorflow", "tf"), ("jax", "jax"), ("jaxlib", "jax"), ("onnxruntime", "ort")):
        if peer in peers:
            try:
                meta[mod] = __import__(mod).__version__
            except Exception as e:
                meta[mod] = f"unavailable: {e}"

    results = []
    for case in suite["cases"]:
        if want and case["name"] not in want:
            continue
        sizes = case[size_key]
        t_build = pc()
        p, i, lens = build_inputs(case, sizes)
        is_string = case["params"]["dtype"] == "string"
        oshape = out_shape(case, p.shape, i.shape)
        ref = impl_numpy(case, p, i)[0][3]()
        assert ref.shape == oshape, (ref.shape, oshape)
        if is_string:
            flat = i.reshape(-1)
            out_bytes = int(lens[flat].sum())
        else:
            out_bytes = int(ref.nbytes)
        idx_bytes = int(i.nbytes)
        moved = 2 * out_bytes + idx_bytes
        entry = {"name": case["name"], "op": case["op"], "axis": case.get("axis"), "batch_dims": case.get("batch_dims", 0),
                 "params_shape": list(p.shape), "params_dtype": case["params"]["dtype"],
                 "indices_shape": list(i.shape), "indices_dtype": str(i.dtype), "out_shape": list(oshape),
                 "out_bytes": out_bytes, "index_bytes": idx_bytes, "bytes_moved": moved, "results": {}}
        print(f"\n== {case['name']}: {case['op']} params {list(p.shape)} {case['params']['dtype']} idx {list(i.shape)} "
              f"{i.dtype} -> out {list(oshape)}; bytes moved {moved / 1e6:.1f} MB (inputs built in {pc() - t_build:.1f}s)",
              flush=True)
        impls = []
        for peer in peers:
            try:
                got = IMPLS[peer](case, p, i)
                if not got:
                    entry["results"][peer] = {"na": "not supported (strings)" if is_string else "not supported"}
                impls += [x for x in got if x[2] or not args.no_variants]
            except Exception as e:
                entry["results"][peer] = {"na": f"{type(e).__name__}: {str(e)[:200]}"}
                print(f"   {peer:<18} N/A  {type(e).__name__}: {str(e)[:200]}", flush=True)
        if not is_string and not args.no_variants:
            impls += copy_anchors(out_bytes)
        plans, fns, labels = {}, {}, {}
        for name, label, primary, fn, conv in impls:
            try:
                ok = None
                if conv is not None and not args.no_check:
                    ok = check(ref, conv(fn()), is_string)
                pl = prepare(fn, args.runs, args.slow_budget)
            except Exception as e:
                entry["results"][name] = {"na": f"{type(e).__name__}: {str(e)[:200]}", "label": label}
                print(f"   {name:<18} FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
                continue
            pl.update({"label": label, "primary": primary, "correct": ok})
            plans[name], fns[name] = pl, fn
        run_blocks(plans, fns, args.blocks, args.quiet_wait)
        for name, r in plans.items():
            mv = moved if not name.startswith("copy_") else 2 * out_bytes
            r["gbps"] = mv / r["median_s"] / 1e9
            entry["results"][name] = r
            extra = f"  {r['note']}" if r["note"] else ""
            if r["n_quiet"] < len(r["samples_s"]):
                extra += f"  quiet {r['n_quiet']}/{len(r['samples_s'])}{' NOISY' if r['noisy'] else ''}"
            reps = f"x{r['runs']}" + ("" if r["inner"] == 1 else f"x{r['inner']}")
            print(f"   {name:<18} {fmt_time(r['median_s']):>10} (min {fmt_time(r['min_s']):>9})  {r['gbps']:7.2f} GB/s"
                  f"  {reps:<9} pf/call {r['minflt_per_call']:8.1f}  cores {r['cores_used']:4.2f}  ok={r['correct']}"
                  f"  [{r['label']}]{extra}", flush=True)
        del fns
        gc.collect()
        pick_best(entry, args.memcpy_gbps)
        results.append(entry)
        del p, i, ref, impls
        gc.collect()

    meta["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    out = {"meta": meta, "cases": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print_table(out, peers)
    print(f"\npeak RSS {meta['peak_rss_gib']:.2f} GiB; wrote {args.out}")


def print_table(out, peers):
    cols = [p for p in PRIMARY if p in peers]
    mc = out["meta"].get("memcpy_gbps")
    hdr = f"{'case':<11} {'MB moved':>9} | " + " | ".join(f"{c + ' time':>10} {'GB/s':>6}" for c in cols) + " | best"
    if mc:
        hdr += f"  (%memcpy {mc:g} GB/s)"
    print("\n" + hdr)
    print("-" * len(hdr))
    for e in out["cases"]:
        row = f"{e['name']:<11} {e['bytes_moved'] / 1e6:9.1f} | "
        cells = []
        for c in cols:
            r = e["results"].get(c)
            if r is None or "median_s" not in r:
                cells.append(f"{'n/a':>10} {'':>6}")
            else:
                cells.append(f"{fmt_time(r['median_s']):>10} {r['gbps']:6.2f}")
        row += " | ".join(cells) + f" | {e.get('best', '-')}"
        if mc and "best_gbps" in e:
            row += f"  {100 * e['best_gbps'] / mc:5.1f}%"
        print(row)
    variants = [(e["name"], k, v) for e in out["cases"] for k, v in e["results"].items()
                if k not in PRIMARY and "median_s" in v]
    if variants:
        print("\nvariants / per-case copy anchors:")
        for name, k, v in variants:
            print(f"  {name:<11} {k:<18} {fmt_time(v['median_s']):>10} {v['gbps']:6.2f} GB/s  [{v['label']}]")


if __name__ == "__main__":
    main()
