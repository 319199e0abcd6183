"""Writes embedding_cases.json: TensorFlow's own results for tf.compat.v1.nn.embedding_lookup
and embedding_lookup_sparse (one table and shards, "mod" and "div", max_norm, every combiner,
with and without weights, rows without ids, weights summing to zero) and their gradients
with respect to the shards, for tests/embedding.rs. Run once with tensorflow-cpu (not in CI):

    python crates/ndgather/tests/data/embedding_cases.py
"""
import json
import pathlib

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(20261122)
cases = []


def arr(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.astype(np.float64).ravel().tolist()
            if a.dtype.kind == "f" else a.ravel().tolist()}


def table(rows, dim, dtype, shards):
    full = rng.standard_normal((rows, dim)).astype(dtype)
    return full, shards


def split(full, n, strategy):
    rows = full.shape[0]
    ids = np.arange(rows)
    if strategy == "mod":
        return [full[ids % n == p] for p in range(n)]
    per, extras = divmod(rows, n)
    out, at = [], 0
    for p in range(n):
        k = per + (1 if p < extras else 0)
        out.append(full[at:at + k])
        at += k
    return out


def grads(fn, shards, out_shape):
    vs = [tf.Variable(s) for s in shards]
    upstream = rng.standard_normal(out_shape).astype(shards[0].dtype)
    with tf.GradientTape() as tape:
        y = fn(vs)
    gs = tape.gradient(y, vs, output_gradients=tf.constant(upstream))
    dense = [tf.convert_to_tensor(g).numpy() if g is not None else np.zeros_like(s)
             for g, s in zip(gs, shards)]
    return upstream, dense


for dtype in ["float32", "float64", "float16"]:
    for n, strategy in [(1, "mod"), (3, "mod"), (3, "div"), (4, "div")]:
        for max_norm in [None, 1.5]:
            full = rng.standard_normal((13, 5)).astype(dtype) * 2
            shards = split(full, n, strategy)
            ids = rng.integers(0, 13, size=(4, 3))
            fn = lambda ps: tf.compat.v1.nn.embedding_lookup(ps, ids, partition_strategy=strategy, max_norm=max_norm)
            out = fn(shards).numpy()
            upstream, dense = grads(fn, shards, out.shape)
            cases.append({"op": "lookup", "strategy": strategy, "max_norm": max_norm,
                          "shards": [arr(s) for s in shards], "ids": arr(ids), "expected": arr(out),
                          "upstream": arr(upstream), "grads": [arr(g) for g in dense]})

for dtype in ["float32", "float64", "float16", "bfloat16"]:
    for n, strategy in [(1, "mod"), (2, "mod"), (3, "div")]:
        for combiner in ["sum", "mean", "sqrtn"]:
            for weighted in [False, True]:
                for max_norm in [None, 2.0]:
                    np_dtype = "float32" if dtype == "bfloat16" else dtype
                    full = (rng.standard_normal((11, 4)) * 2).astype(np_dtype)
                    if dtype == "bfloat16":
                        full = tf.cast(tf.cast(full, tf.bfloat16), tf.float32).numpy()
                    shards = split(full, n, strategy)
                    # batch of 6 rows: row 1 and the last row without ids; row 3 with 12 ids
                    counts = [2, 0, 5, 12, 1, 0]
                    indices = np.array([[r, k] for r, c in enumerate(counts) for k in range(c)])
                    values = rng.integers(0, 11, size=len(indices))
                    weights = rng.random(len(indices)).astype(np_dtype) * 2 - 0.5
                    if weighted:
                        weights[:2] = [1.5, -1.5]  # row 0's weights sum to zero
                    dense_shape = [6, 12]
                    sp_ids = tf.sparse.SparseTensor(indices, values, dense_shape)
                    tf_dtype = tf.bfloat16 if dtype == "bfloat16" else tf.as_dtype(np_dtype)

                    def fn(ps, weighted=weighted, combiner=combiner, max_norm=max_norm, strategy=strategy):
                        ps = [tf.cast(p, tf_dtype) for p in ps]
                        spw = tf.sparse.SparseTensor(indices, tf.cast(weights, tf_dtype), dense_shape) if weighted else None
                        y = tf.compat.v1.nn.embedding_lookup_sparse(ps, sp_ids, spw, partition_strategy=strategy,
                                                                    combiner=combiner, max_norm=max_norm)
                        return tf.cast(y, tf.float64)
                    out = fn(shards).numpy()
                    upstream, dense = grads(fn, shards, out.shape)
                    cases.append({"op": "lookup_sparse", "dtype": dtype, "strategy": strategy,
                                  "combiner": combiner, "max_norm": max_norm,
                                  "shards": [arr(s) for s in shards], "indices": arr(indices),
                                  "values": arr(values), "dense_shape": dense_shape,
                                  "weights": arr(weights) if weighted else None,
                                  "expected": arr(out), "upstream": arr(upstream),
                                  "grads": [arr(g) for g in dense]})

out = pathlib.Path(__file__).with_name("embedding_cases.json")
out.write_text(json.dumps({"tensorflow": tf.__version__, "cases": cases}))
print(len(cases), "cases, TensorFlow", tf.__version__)
