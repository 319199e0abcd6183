"""Writes tensor_scatter_cases.json: TensorFlow's own results for tf.tensor_scatter_nd_update,
_add, _sub, _min and _max (every dtype they take, indices of depth 1 to the tensor's rank,
duplicate indices, NaNs, wrapping integers, the "IGNORE" policy) and TensorFlow's errors (bad
shapes, bad indices, dtypes without a kernel), with np.add.at's result beside every add of
duplicates and JAX's .at[].set/add/min/max beside the cases without duplicates or NaN. For
tests/tensor_scatter.rs and the Python package's tests. Run once where TensorFlow and JAX are
installed (not in CI):

    python crates/ndgather/tests/data/tensor_scatter_cases.py

Arrays are {"dtype", "shape", "hex"}: the little-endian bytes of the C-ordered array (so NaNs
and every bit survive), or {"dtype", "shape", "strings"} for TensorFlow's strings.
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

rng = np.random.default_rng(20261126)
cases = []
KINDS = {"update": tf.raw_ops.TensorScatterUpdate, "add": tf.raw_ops.TensorScatterAdd,
         "sub": tf.raw_ops.TensorScatterSub, "min": tf.raw_ops.TensorScatterMin,
         "max": tf.raw_ops.TensorScatterMax}
TF_DTYPES = {"bfloat16": tf.bfloat16}


def arr(a):
    a = np.asarray(a).copy(order="C")  # ascontiguousarray would make a scalar 1-d
    if a.dtype.kind in "SUO":
        return {"dtype": "string", "shape": list(a.shape),
                "strings": [x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()]}
    name = a.dtype.name
    return {"dtype": name, "shape": list(a.shape),
            "hex": a.astype(a.dtype.newbyteorder("<")).tobytes().hex()}


def values(dtype, shape, nan=False):
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype == "string":
        return np.array([f"s{int(v)}" for v in rng.integers(0, 50, n)], dtype=object).reshape(shape)
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if np_dtype.kind == "i"
                            else np.uint64).astype(np_dtype).reshape(shape)
    if np_dtype.kind == "c":
        v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        return (v * 100).astype(np_dtype).reshape(shape)
    v = (rng.standard_normal(n) * 100).astype(np_dtype)
    if nan and n > 0:
        v[rng.integers(0, n, max(1, n // 4))] = np.nan
    return v.reshape(shape)


def tf_tensor(a):
    if a.dtype == object:
        return tf.constant(a.astype(bytes))
    return tf.constant(a)


def run(kind, tensor, indices, updates, policy=""):
    case = {"kind": kind, "tensor": arr(tensor), "indices": arr(indices), "updates": arr(updates),
            "bad_indices": "ignore" if policy == "IGNORE" else "error"}
    try:
        t, u = tf_tensor(tensor), tf_tensor(updates)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([t, u])
            out = KINDS[kind](tensor=t, indices=tf.constant(indices), updates=u,
                              bad_indices_policy=policy)
        if tensor.dtype in (np.float32, np.float64) and policy == "" and tensor.size:
            # TF's registered gradients, for an upstream gradient of random values.
            upstream = values(tensor.dtype.name, list(tensor.shape))
            dt, du = tape.gradient(out, [t, u], output_gradients=tf.constant(upstream))
            case["grad"] = {"upstream": arr(upstream), "tensor": arr(dt.numpy()),
                            "updates": arr(du.numpy())}
        out = out.numpy()
        case["output"] = arr(out.astype(object) if out.dtype == object else out)
    except (tf.errors.InvalidArgumentError, tf.errors.NotFoundError) as e:
        message = e.message.split("\n")[0].split(" [Op:")[0]
        if message.startswith("{{function_node"):
            message = message.split("}} ", 1)[1]
        case["error"] = {"class": type(e).__name__, "message": message}
    return case


def with_peers(case, tensor, indices, updates):
    """np.add.at's result for an add, JAX's where its order cannot matter."""
    if "output" not in case or tensor.dtype == object:
        return case
    depth = indices.shape[-1]
    flat = tuple(np.moveaxis(indices.reshape(-1, depth), -1, 0))
    ups = updates.reshape((-1,) + tensor.shape[depth:])
    if case["kind"] == "add" and tensor.dtype.kind in "fc" and tensor.dtype.itemsize >= 4:
        t = tensor.copy()
        np.add.at(t, flat, ups)
        case["np_add_at"] = arr(t)
    unique = len(set(map(tuple, indices.reshape(-1, depth).tolist()))) == indices.reshape(-1, depth).shape[0]
    nan = tensor.dtype.kind == "f" and (np.isnan(tensor).any() or np.isnan(updates).any())
    in_range = all((0 <= f).all() and (f < d).all() for f, d in zip(flat, tensor.shape))
    jax_kinds = {"update": "set", "add": "add", "min": "min", "max": "max"}
    if (unique and not nan and in_range and case["kind"] in jax_kinds
            and tensor.dtype.name in ("float32", "float64", "int32", "int64")):
        x = jnp.asarray(tensor)
        method = getattr(x.at[flat], jax_kinds[case["kind"]])
        case["jax"] = arr(np.asarray(method(jnp.asarray(ups))))
    return case


def indices_for(shape, depth, n, dup, bad=False):
    dims = np.array(shape[:depth])
    idx = np.stack([rng.integers(0, max(d, 1), n) for d in dims], axis=-1) if n else \
        np.zeros((0, depth), np.int64)
    if dup and n > 2:
        idx[n // 2:] = idx[: n - n // 2]
        rng.shuffle(idx)
    if bad and n:
        k = rng.integers(0, n)
        j = rng.integers(0, depth)
        idx[k, j] = rng.choice([-1, dims[j], dims[j] + 5])
    return idx


SHAPES = [[7], [5, 3], [4, 3, 2], [6, 1, 4]]
NUMBERS = ["float32", "float64", "int32", "int64", "float16", "bfloat16", "int8", "uint8",
           "uint16", "uint32", "uint64", "int16", "complex64", "complex128"]
for kind in KINDS:
    for dtype in NUMBERS + ["bool", "string"]:
        for shape in SHAPES:
            for depth in range(1, len(shape) + 1):
                for dup in (False, True):
                    n = int(rng.integers(1, 9))
                    idx = indices_for(shape, depth, n, dup)
                    if rng.random() < 0.3 and n % 2 == 0:
                        idx = idx.reshape(2, n // 2, depth)
                    itype = rng.choice([np.int32, np.int64])
                    idx = idx.astype(itype)
                    tensor = values(dtype, shape, nan=kind in ("min", "max"))
                    updates = values(dtype, list(idx.shape[:-1]) + shape[depth:],
                                     nan=kind in ("min", "max"))
                    cases.append(with_peers(run(kind, tensor, idx, updates), tensor, idx, updates))
                    if dtype in ("float32", "int64") and depth == 1:
                        bad = indices_for(shape, depth, max(n, 2), dup, bad=True).astype(itype)
                        upd = values(dtype, [bad.shape[0]] + shape[depth:])
                        cases.append(run(kind, tensor, bad, upd))
                        cases.append(run(kind, tensor, bad, upd, policy="IGNORE"))

# Sums of many duplicates, where the order of the additions shows in the last bits.
for dtype in ("float32", "float64"):
    for rows, width, n in ((101, 4, 300), (16, 3, 1000), (3, 8, 64)):
        tensor = values(dtype, [rows, width])
        idx = rng.integers(0, rows, (n, 1)).astype(np.int64)
        updates = (rng.standard_normal((n, width)) * 10.0 ** rng.integers(-3, 4, (n, 1))).astype(dtype)
        for kind in ("add", "sub"):
            cases.append(with_peers(run(kind, tensor, idx, updates), tensor, idx, updates))
    tensor = np.zeros([101, 4], dtype)
    idx = rng.integers(0, 101, (300, 1)).astype(np.int64)
    updates = rng.integers(-1000, 1000, (300, 4)).astype(dtype) / np.array(7, dtype)
    cases.append(with_peers(run("add", tensor, idx, updates), tensor, idx, updates))

# Special values: NaNs, signed zeros, wrapping integers.
f = np.float32
cases.append(run("min", np.array([1, np.nan, 3, 0.0], f), np.array([[0], [1], [2], [3]]),
                 np.array([np.nan, 0, 2, -0.0], f)))
cases.append(run("max", np.array([1, np.nan, 3, -0.0], f), np.array([[0], [1], [2], [3]]),
                 np.array([np.nan, 0, 4, 0.0], f)))
cases.append(run("add", np.array([127, -128], np.int8), np.array([[0], [1]]),
                 np.array([1, -1], np.int8)))
cases.append(run("sub", np.array([0, 5], np.uint8), np.array([[0], [0]]),
                 np.array([1, 2], np.uint8)))

# Shapes and arguments TensorFlow refuses, and the empty cases it accepts.
z = np.zeros([4, 3], np.float32)
e = np.zeros
shape_cases = [
    (z, np.array([1, 3]), np.array([5, 6], np.float32)),
    (z, np.array([1]), np.array([7, 8, 9], np.float32)),
    (np.zeros([3, 2, 2], np.float32), np.array([1, 0]), np.array([7, 8], np.float32)),
    (z, np.array([[1], [5]]), np.ones([2, 3], np.float32)),
    (z, np.array([[1, 0], [5, 9]]), np.array([1, 2], np.float32)),
    (z, np.array([[1], [3]]), np.ones([2, 4], np.float32)),
    (z, np.array([[1], [3]]), np.ones([3, 3], np.float32)),
    (z, np.array([[1], [3]]), np.ones([2], np.float32)),
    (z, np.array([[1, 1, 1]]), np.ones([1], np.float32)),
    (z, np.array([[1], [2]]), np.ones([2, 3, 1], np.float32)),
    (e([0, 3], np.float32), np.array([[0]]), np.ones([1, 3], np.float32)),
    (e([0, 3], np.float32), e([0, 1], np.int32), e([0, 3], np.float32)),
    (np.float32(1.0), np.array([[0]]), np.array([1.0], np.float32)),
    (np.float32(1.0), e([0, 0], np.int32), e([0], np.float32)),
    (np.float32(1.0), e([1, 0], np.int32), np.array([5.0], np.float32)),
    (z, np.int32(1), np.array([1.0], np.float32)),
    (z, np.array([[1]]), np.float32(1.0)),
    (z, e([0, 1], np.int32), e([0, 3], np.float32)),
    (z, e([0, 1], np.int32), e([0, 4], np.float32)),
    (z, e([0, 1], np.int32), e([1, 3], np.float32)),
    (z, e([0, 3], np.int32), e([0], np.float32)),
    (z, e([1, 0], np.int32), np.ones([1, 4, 3], np.float32)),
    (z, e([2, 0], np.int32), np.ones([2, 4, 3], np.float32)),
    (z, np.array([[[1]], [[7]]]), np.ones([2, 1, 3], np.float32)),
    (z, np.array([[1, -1]]), np.array([1.0], np.float32)),
    (e([4, 0], np.float32), np.array([[1]]), e([1, 0], np.float32)),
    (z, np.array([[2 ** 31 + 1]], np.int64), np.ones([1, 3], np.float32)),
    (np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[1, 2]]), np.array([50.0], np.float32)),
]
for tensor, idx, updates in shape_cases:
    for kind in ("update", "add"):
        cases.append(run(kind, np.asarray(tensor), np.asarray(idx), np.asarray(updates)))
cases.append(run("add", z, np.array([[1]]), np.ones([1, 3], np.float64)))

path = pathlib.Path(__file__).with_suffix(".json")
path.write_text(json.dumps({"tensorflow": tf.__version__, "cases": cases}, indent=None) + "\n")
print(f"{len(cases)} cases ({sum('error' in c for c in cases)} errors) to {path}")
