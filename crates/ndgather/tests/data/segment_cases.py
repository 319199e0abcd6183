"""Writes segment_cases.json: TensorFlow's own results for the segment reductions,
tf.math.unsorted_segment_sum, _max, _min, _prod (the raw UnsortedSegment* kernels), _mean and
_sqrt_n (composed in Python by TensorFlow) and tf.math.segment_sum, _mean, _max, _min, _prod
(the raw Segment* kernels): every dtype they take, int32 and int64 segment ids and num_segments,
data of rank 1 to 3, ids of rank 2 for the unsorted ops, empty segments (the identity TensorFlow
writes), negative ids, NaNs, signed zeros, wrapping integers, integer means, and TensorFlow's
errors (ids out of range, bad shapes, unsorted or negative sorted ids, dtypes without a kernel),
with TensorFlow's registered gradient beside the float32/float64 results. Sums of many rows in
one segment pin TensorFlow's accumulation order: each such case says which recomputation
(sequential in row order, NumPy's pairwise sum, a float64 sum rounded once, or Eigen's four
accumulators, see eigen_sum) gives its bits; segments of 16 rows and more in rows wider than a
SIMD packet show the sorted kernels' order with NaNs and signed zeros too. For
tests/segment.rs and the Python package's tests. Run once where TensorFlow is installed (not in
CI):

    python crates/ndgather/tests/data/segment_cases.py

Arrays are {"dtype", "shape", "hex"}: the little-endian bytes of the C-ordered array (so NaNs
and every bit survive). A case is {"op", "data", "segment_ids", "num_segments" and
"num_segments_dtype" (unsorted ops only; "num_segments_shape" where it is not a scalar), then
"output" or "error" ({"class", "message"}: the message's first line), and for most
float32/float64 results "grad": {"upstream", "data"} (or "grad_error").
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

rng = np.random.default_rng(20261127)
cases = []
UNSORTED = {
    "unsorted_segment_sum": tf.raw_ops.UnsortedSegmentSum,
    "unsorted_segment_max": tf.raw_ops.UnsortedSegmentMax,
    "unsorted_segment_min": tf.raw_ops.UnsortedSegmentMin,
    "unsorted_segment_prod": tf.raw_ops.UnsortedSegmentProd,
    "unsorted_segment_mean": tf.math.unsorted_segment_mean,
    "unsorted_segment_sqrt_n": tf.math.unsorted_segment_sqrt_n,
}
SORTED = {
    "segment_sum": tf.raw_ops.SegmentSum,
    "segment_mean": tf.raw_ops.SegmentMean,
    "segment_max": tf.raw_ops.SegmentMax,
    "segment_min": tf.raw_ops.SegmentMin,
    "segment_prod": tf.raw_ops.SegmentProd,
}
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "complex64", "complex128", "bool"]


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def arr(a):
    a = np.asarray(a).copy(order="C")  # ascontiguousarray would make a scalar 1-d
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "hex": a.astype(a.dtype.newbyteorder("<")).tobytes().hex()}


def values(dtype, shape, op="", nan=False):
    """Random data: full-range integers for sum/max/min (so sums wrap), small ones for
    products and means; floats with some NaNs where asked."""
    n = int(np.prod(shape))
    dt = np_dtype(dtype)
    small = op.endswith(("prod", "mean", "sqrt_n"))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = (info.min, int(info.max)) if not small else \
            ((-4, 4) if "prod" in op else (-100, 100)) if dt.kind == "i" else \
            ((0, 4) if "prod" in op else (0, 200))
        return rng.integers(lo, hi + 1, n, dtype=np.int64 if dt.kind == "i" else np.uint64
                            ).astype(dt).reshape(shape)
    scale = 2.0 if "prod" in op else 100.0
    if dt.kind == "c":
        v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        return (v * scale).astype(dt).reshape(shape)
    v = (rng.standard_normal(n) * scale).astype(dt)
    if nan and n > 0:
        v[rng.integers(0, n, max(1, n // 5))] = np.nan
    return v.reshape(shape)


def message(e):
    text = e.message if isinstance(e, tf.errors.OpError) else str(e)
    text = text.split("\n")[0].split(" [Op:")[0]
    if text.startswith("{{function_node"):
        text = text.split("}} ", 1)[1]
    return text


def call(op, data, ids, num_segments, ns_dtype):
    if op in SORTED:
        return SORTED[op](data=data, segment_ids=ids)
    ns = tf.constant(num_segments, dtype=ns_dtype)
    return UNSORTED[op](data=data, segment_ids=ids, num_segments=ns)


def run(op, data, ids, num_segments=None, ns_dtype="int32", grad=True):
    data, ids = np.asarray(data), np.asarray(ids)
    case = {"op": op, "data": arr(data), "segment_ids": arr(ids)}
    if op in UNSORTED:
        if np.ndim(num_segments):
            case["num_segments_shape"] = list(np.shape(num_segments))
            case["num_segments"] = int(np.ravel(num_segments)[0])
        else:
            case["num_segments"] = int(num_segments)
        case["num_segments_dtype"] = ns_dtype
    float_data = data.dtype in (np.float32, np.float64) and grad
    try:
        d = tf.constant(data)
        with tf.GradientTape() as tape:
            if float_data:
                tape.watch(d)
            out = call(op, d, tf.constant(ids), num_segments, ns_dtype)
        case["output"] = arr(out.numpy())
    except (tf.errors.OpError, ValueError, TypeError) as e:
        case["error"] = {"class": type(e).__name__, "message": message(e)}
        return case
    if float_data:
        # TF's registered gradient, for an upstream gradient of random values.
        upstream = values(data.dtype.name, list(out.shape))
        try:
            g = tape.gradient(out, d, output_gradients=tf.constant(upstream))
            if g is None:
                case["grad_error"] = {"class": "None", "message": "no gradient"}
            else:
                g = tf.convert_to_tensor(g).numpy()
                case["grad"] = {"upstream": arr(upstream), "data": arr(g)}
        except (tf.errors.OpError, ValueError, TypeError, LookupError) as e:
            case["grad_error"] = {"class": type(e).__name__, "message": message(e)}
    return case


def unsorted_ids(ids_shape, negatives):
    ns = int(rng.integers(1, 6))
    ids = rng.integers(0, ns, ids_shape)
    if negatives and ids.size:
        ids.ravel()[rng.integers(0, ids.size, max(1, ids.size // 4))] = rng.choice([-1, -3])
    return ids, ns + int(rng.integers(0, 3))  # segments past the last id stay empty


def sorted_ids(n):
    if n == 0:
        return np.zeros([0], np.int64)
    ids = np.sort(rng.integers(0, n + 2, n))
    if rng.random() < 0.5:
        ids -= ids[0]  # no leading gap
    return ids


# Every op with every dtype; a dtype without a kernel is recorded once per op.
DATA_SHAPES = [[6], [5, 3], [4, 2, 3], [7, 9]]
for op in list(UNSORTED) + list(SORTED):
    for dtype in DTYPES:
        # [7, 9]: rows wider than one SIMD packet, for the floats where that shows.
        layouts = [(shape, 1) for shape in DATA_SHAPES
                   if shape != [7, 9] or np_dtype(dtype).kind in "fcV"]
        if op in UNSORTED:
            layouts += [([3, 2, 4], 2), ([2, 3], 2)]
        for k, (shape, ids_rank) in enumerate(layouts):
            itype = np.int32 if k % 2 == 0 else np.int64
            data = values(dtype, shape, op, nan=op.endswith(("max", "min")))
            if op in UNSORTED:
                ids, ns = unsorted_ids(shape[:ids_rank], negatives=k % 3 != 0)
                case = run(op, data, ids.astype(itype), ns, "int64" if k % 2 else "int32")
            else:
                case = run(op, data, sorted_ids(shape[0]).astype(itype))
            cases.append(case)
            if "error" in case and k == 0:
                break  # no kernel for this dtype: once is enough

# Unsorted ops: empty data, no segments, scalars, and the errors (some with two faults, to
# show which check comes first).
f32 = np.float32
z = np.arange(8, dtype=f32).reshape(4, 2)
unsorted_special = [
    (z, [0, 3, 1, 0], 3),                 # id == num_segments
    (z, [0, 7, 1, 0], 3),                 # id > num_segments
    (z, [0, -1, 1, 5], 3),                # negative dropped, then out of range
    (np.zeros([2, 3, 2], f32), [[0, 1, 2], [1, 3, 0]], 3),  # rank-2 ids out of range
    (z, [0, 1, 1], 3),                    # ids shape not a prefix
    (z, [[0, 1], [1, 0], [0, 0], [1, 1]], 3),  # ids shape == data shape: scalar rows
    (z, [[0, 1, 2], [1, 0, 0], [0, 0, 0], [1, 1, 1]], 3),  # [4, 3] vs [4, 2]
    (np.arange(4, dtype=f32), [[0], [1], [0], [1]], 2),  # ids rank above data rank
    (z, [0, 1, 1], 1),                    # not a prefix and out of range
    (z, [0, 1, 1, 0], -1),                # negative num_segments
    (z, [0, 1, 1], -1),                   # negative num_segments and not a prefix
    (z, [-1, -1, -2, -1], 0),             # no segments, all ids dropped
    (z, [0, -1, -1, -1], 0),              # no segments, one id in use
    (np.zeros([0, 3], f32), np.zeros([0], np.int32), 3),  # empty data
    (np.zeros([0, 3], f32), np.zeros([0], np.int32), 0),
    (np.zeros([3, 0], f32), [0, 2, 2], 3),  # rows of width 0
    (np.zeros([3, 0], f32), [0, 5, 2], 3),  # rows of width 0, id out of range
    (f32(5.0), np.int32(1), 3),           # scalar data, scalar id
    (f32(5.0), np.int32(3), 3),
    (np.arange(4, dtype=f32), [-5, -100, 1, -2147483648], 2),  # large negatives dropped
]
for op in UNSORTED:
    for data, ids, ns in unsorted_special:
        for itype in (np.int32, np.int64):
            cases.append(run(op, data, np.asarray(ids).astype(itype), ns))
    big = np.array([0, 2 ** 31 + 1, 1, 0], np.int64)
    cases.append(run(op, z, big, 3, "int64"))
    cases.append(run(op, z, np.array([0, 1, 1, 0], np.int32), np.array([3]), "int32"))

# Sorted ops: gaps, empty data, and the errors.
sorted_special = [
    (z, [2, 2, 3, 5]),                    # leading gap, gap at 4: output has 6 rows
    (np.arange(4, dtype=f32), [0, 0, 0, 0]),
    (np.arange(4, dtype=f32), [3, 3, 3, 3]),
    (z, [0, 2, 1, 3]),                    # not increasing
    (z, [0, 0, 1, 0]),                    # not increasing at the end
    (z, [-1, 0, 0, 1]),                   # negative first
    (z, [-2, -1, 0, 1]),                  # negative, increasing
    (z, [1, 0, -1, -1]),                  # decreasing into negatives
    (z, [0, 0, 1]),                       # too short
    (z, [0, 0, 1, 1, 2]),                 # too long
    (z, [1, 0, 0]),                       # too short and not increasing
    (z, [-1, 0, 0]),                      # too short and negative
    (np.zeros([2, 2, 3], f32), [[0, 0], [1, 1]]),  # ids not a vector
    (np.zeros([2, 2, 3], f32), [[0, 0, 1]]),       # not a vector, wrong size
    (np.zeros([4], f32), np.int32(0)),    # scalar ids
    (f32(1.0), np.int32(0)),              # scalar data
    (f32(1.0), [0]),                      # scalar data, one id
    (np.zeros([0, 3], f32), np.zeros([0], np.int32)),  # empty data
    (np.zeros([0], f32), np.zeros([0], np.int32)),
    (np.zeros([3, 0], f32), [0, 0, 2]),   # rows of width 0
    (np.zeros([3, 0], f32), [0, 2, 1]),   # rows of width 0, not increasing
]
for op in SORTED:
    for data, ids in sorted_special:
        for itype in (np.int32, np.int64):
            cases.append(run(op, data, np.asarray(ids).astype(itype)))

# Empty segments in every dtype that has a kernel: the identity each op writes.
for op in list(UNSORTED) + list(SORTED):
    for dtype in DTYPES:
        data = values(dtype, [3, 2], op)
        if op in UNSORTED:
            case = run(op, data, np.array([1, 1, 3], np.int32), 5)
        else:
            case = run(op, data, np.array([1, 1, 3], np.int32))
        if "output" in case:
            cases.append(case)

# NaNs in max and min: which wins, first or later, in rows of width 1 and of width 9 (SIMD).
nan, inf = np.nan, np.inf
for dtype in ("float32", "float64", "float16", "bfloat16"):
    dt = np_dtype(dtype)
    cols = [[nan, 1], [1, nan], [nan, nan], [1, 2], [2, nan, 1], [nan, 1, 2], [1, 2, nan],
            [0.0, -0.0], [-0.0, 0.0], [-inf], [inf], [-inf, -inf], [inf, nan], [nan, -inf]]
    for width in (1, 9) if dtype in ("float32", "float64") else (1,):
        for col in cols:
            data = np.repeat(np.array(col, dt)[:, None], width, axis=1)
            if width == 1:
                data = data[:, 0]
            ids = np.zeros(len(col), np.int32)
            for op in ("unsorted_segment_max", "unsorted_segment_min", "segment_max",
                       "segment_min"):
                cases.append(run(op, data, ids, 1) if op in UNSORTED else run(op, data, ids))
# NaN beside numbers in one row of width 9: lanes differ.
row = np.array([[nan, 1, 2, nan, 4, 5, 6, 7, nan], [1, nan, 3, nan, 2, 9, -1, nan, 8]], f32)
for op in ("unsorted_segment_max", "unsorted_segment_min", "segment_max", "segment_min"):
    ids = np.zeros(2, np.int64)
    cases.append(run(op, row, ids, 1) if op in UNSORTED else run(op, row, ids))
    cases.append(run(op, row[::-1], ids, 1) if op in UNSORTED else run(op, row[::-1], ids))

# Wrapping integers, and integer means.
wrap = [("int8", [127, 1]), ("int8", [-128, -1]), ("uint8", [255, 2]), ("int16", [32767, 1]),
        ("uint16", [65535, 1]), ("int32", [2 ** 31 - 1, 1]), ("uint32", [2 ** 32 - 1, 1]),
        ("int64", [2 ** 63 - 1, 1]), ("uint64", [2 ** 64 - 1, 1]),
        ("int8", [16, 16]), ("int8", [-128, -1]), ("uint8", [16, 17]), ("int32", [65536, 65536]),
        ("int32", [-2 ** 31, -1]), ("int64", [2 ** 32, 2 ** 32]),
        ("uint64", [2 ** 32, 2 ** 32 + 1])]
for dtype, col in wrap:
    data = np.array(col, dtype)
    ids = np.zeros(2, np.int32)
    for op in ("unsorted_segment_sum", "unsorted_segment_prod", "segment_sum", "segment_prod",
               "unsorted_segment_mean", "segment_mean"):
        cases.append(run(op, data, ids, 1) if op in UNSORTED else run(op, data, ids))
means = [[1, 2], [-1, -2], [7, 0, 0], [-7, 0, 0], [5, 5, 6], [3], [100, 27, 0, 0]]
for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    for col in means:
        if np_dtype(dtype).kind == "u" and min(col) < 0:
            continue
        data = np.array(col, dtype)
        ids = np.zeros(len(col), np.int64)
        for op in ("unsorted_segment_mean", "unsorted_segment_sqrt_n", "segment_mean"):
            cases.append(run(op, data, ids, 2) if op in UNSORTED else run(op, data, ids))

# Accumulation order: many rows of large and small magnitudes summed into one segment. The
# sorted kernels reduce a segment with Eigen: columns in whole SIMD packets (PACKET lanes, TF's
# AVX build) of a segment of 16 or more rows use four accumulators (rows 4k, 4k+1, 4k+2, 4k+3),
# folded as ((a0 + a1) + a2) + a3, then the last rows % 4 rows; other columns, shorter segments
# and the mean go row by row. "eigen" below is that recomputation.
PACKET = {"float32": 8, "float64": 4, "float16": 8, "bfloat16": 8}


def eigen_sum(d2, dt):
    rows, width = d2.shape
    out = sequential_sum(d2, dt)
    v = width // PACKET[dt.name] * PACKET[dt.name]
    if rows >= 16 and v:
        acc = [np.zeros(v, dt) for _ in range(4)]
        for j in range(rows // 4 * 4):
            acc[j % 4] = (acc[j % 4] + d2[j, :v]).astype(dt)
        a = acc[0]
        for k in (1, 2, 3):
            a = (a + acc[k]).astype(dt)
        for j in range(rows // 4 * 4, rows):
            a = (a + d2[j, :v]).astype(dt)
        out[:v] = a
    return out


def sequential_sum(d2, dt):
    acc = np.zeros(d2.shape[1], dt)
    for r in d2:
        acc = (acc + r).astype(dt)
    return acc


order_notes = {}
for dtype in ("float32", "float64", "float16", "bfloat16"):
    dt = np_dtype(dtype)
    for rows, width in ((64, 1), (64, 5), (20, 16), (19, 9), (1000, 1)):
        if rows == 1000 and dtype != "float32":
            continue
        mags = 10.0 ** rng.integers(-4, 5 if dt.itemsize >= 4 else 3, (rows, 1))
        data = (rng.standard_normal((rows, width)) * mags).astype(dt)
        if width == 1:
            data = data[:, 0]
        d2 = data.reshape(rows, -1)
        recomputed = {
            "sequential": sequential_sum(d2, dt),
            "pairwise": np.array([np.sum(np.ascontiguousarray(col)) for col in d2.T], dt),
            "float64_once": d2.astype(np.float64).sum(axis=0).astype(dt),
            "eigen": eigen_sum(d2, dt)}
        for op in ("segment_sum", "unsorted_segment_sum", "segment_mean", "unsorted_segment_mean",
                   "unsorted_segment_sqrt_n"):
            if rows == 1000 and "sum" not in op:
                continue
            ids = np.zeros(rows, np.int32)
            if op in UNSORTED:
                case = run(op, data, ids, 1, grad=False)
            else:
                case = run(op, data, ids, grad=False)
            out = np.frombuffer(bytes.fromhex(case["output"]["hex"]), dt)
            out = out.reshape(-1, d2.shape[1])[0]
            matches = []
            for name, s in recomputed.items():
                if op.endswith("mean"):
                    s = (s / dt.type(rows)).astype(dt)
                elif op.endswith("sqrt_n"):
                    s = (s / np.sqrt(dt.type(rows))).astype(dt)
                if s.tobytes() == out.tobytes():
                    matches.append(name)
            case["matches"] = matches
            order_notes.setdefault(f"{op} {dtype}", []).append(
                {"rows": rows, "width": width, "matches": matches})
            cases.append(case)

# Long segments (16 rows and more) in rows wider than a packet, with NaNs and signed zeros: the
# sorted kernels' four accumulators, against the unsorted kernels' row order.
for dtype in ("float32", "float64", "float16", "bfloat16"):
    dt = np_dtype(dtype)
    for rows, width in ((16, 8), (19, 9), (33, 5)) if dt.itemsize >= 4 else ((19, 9),):
        ids = np.sort(np.r_[np.zeros(rows - 4, np.int64), rng.integers(1, 4, 4)])
        for op in ("sum", "prod", "mean", "max", "min"):
            if op == "prod":
                data = rng.choice([0.5, 2.0, -1.0, 1.5, -0.75, 3.0, 1.25], (rows, width)).astype(dt)
            else:
                data = values(dtype, [rows, width])
            if op in ("max", "min"):
                m = rng.random((rows, width))
                data[m < 0.1] = np.nan
                data[(m > 0.1) & (m < 0.2)] = 0.0
                data[(m > 0.2) & (m < 0.3)] = -0.0
                data[:, 0] = np.nan  # a column of NaNs only
            cases.append(run("segment_" + op, data, ids, grad=False))
            uop = "unsorted_segment_" + op
            cases.append(run(uop, data, ids, 4, grad=False))

# Signed zeros in sums: sorted ops copy a one-row segment, everything else adds to +0.
for data, ids in ((np.array([-0.0, -0.0, -0.0], f32), [0, 0, 1]),
                  (np.full([3, 9], -0.0, f32), [0, 0, 1])):
    for op in ("segment_sum", "unsorted_segment_sum", "segment_mean", "unsorted_segment_mean",
               "segment_prod", "unsorted_segment_prod"):
        ids = np.array(ids, np.int32)
        cases.append(run(op, data, ids, 2) if op in UNSORTED else run(op, data, ids))

# Means of many rows in half precision: the unsorted mean counts rows by summing ones in the
# data's dtype (stuck at 256 in bfloat16, 2048 in float16); the sorted mean counts in integers.
for dtype, rows in (("bfloat16", 300), ("float16", 2100)):
    data = np.ones(rows, np_dtype(dtype))
    data[::3] = 0.5
    ids = np.zeros(rows, np.int32)
    for op in ("unsorted_segment_mean", "segment_mean"):
        cases.append(run(op, data, ids, 1, grad=False) if op in UNSORTED else run(op, data, ids))

path = pathlib.Path(__file__).with_suffix(".json")
path.write_text(json.dumps({
    "tensorflow": tf.__version__,
    "notes": {"accumulation": order_notes,
              "matches": "which recomputation gives the output's bits: sequential in row order "
                         "in the dtype, NumPy's pairwise sum per column, or a float64 sum rounded "
                         "once; for means the sum is divided by the row count in the dtype, for "
                         "sqrt_n by sqrt(count)"},
    "cases": cases}, indent=None) + "\n")
print(f"{len(cases)} cases ({sum('error' in c for c in cases)} errors) to {path}")
