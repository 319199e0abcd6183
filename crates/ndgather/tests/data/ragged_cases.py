"""Writes ragged_cases.json: TensorFlow's own results for tf.gather and tf.gather_nd on
tf.RaggedTensor params and/or indices (every axis and batch_dims TensorFlow takes, ragged
ranks 1 and 2, uniform inner dimensions, empty rows, int32 and int64 row splits and indices,
numbers, bools and strings), TensorFlow's errors (class and message), and, for what
TensorFlow refuses or does not check, the definition ndgather keeps instead:

- "refused": gather_nd with batch_dims > 0 (TensorFlow: "batch_dims != 0 is not supported
  for ragged gather yet"). The expected result is the batch_dims=0 gather_nd of each batch
  row, each computed by TensorFlow itself and stacked.
- "unchecked": an index inside a row that is past the row's end. TensorFlow reads the next
  row's values (or another row's); ndgather reports the index. The expected error is
  ndgather's, and TensorFlow's result is kept beside it.
- "policy": the bad-index policies beyond TensorFlow's, from a small nested-list reference.

For tests/ragged.rs and the Python package's tests. Run once where TensorFlow is installed
(not in CI):

    python crates/ndgather/tests/data/ragged_cases.py

Arrays are {"dtype", "shape", "hex"} (little-endian bytes, C order) or {"dtype", "shape",
"strings"}; a ragged operand is {"values": array, "splits": [array, ...]}.
"""
import json
import pathlib

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(20261126)


def arr(a):
    a = np.asarray(a)
    if a.dtype == object or a.dtype.kind in "SU":
        strings = [x.decode() if isinstance(x, bytes) else str(x) for x in a.reshape(-1)]
        return {"dtype": "string", "shape": list(a.shape), "strings": strings}
    a = a.copy(order="C")
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "hex": a.astype(a.dtype.newbyteorder("<")).tobytes().hex()}


def operand(x):
    if isinstance(x, tf.RaggedTensor):
        return {"values": arr(x.flat_values.numpy()),
                "splits": [arr(s.numpy()) for s in x.nested_row_splits]}
    return {"values": arr(np.asarray(x)), "splits": []}


def result(x):
    if isinstance(x, tf.RaggedTensor):
        return {"values": arr(x.flat_values.numpy()),
                "splits": [arr(s.numpy()) for s in x.nested_row_splits]}
    return {"values": arr(x.numpy()), "splits": []}


def to_list(x):
    if isinstance(x, tf.RaggedTensor):
        return x.to_list()
    return np.asarray(x).tolist()


# ---- The nested-list reference: the definition, with every index checked.
class Bad(Exception):
    pass


def resolve(i, n, policy):
    if 0 <= i < n:
        return i
    if policy == "clamp" and n > 0:
        return 0 if i < 0 else n - 1
    if policy == "negative" and -n <= i < 0:
        return i + n
    if policy == "wrap" and n > 0:
        return i % n
    if policy in ("ignore", "fill"):
        return None
    raise Bad(i)


def filled(shape, ragged_first, value):
    """The slice a filled index gives: an empty row where the slice's first dimension is
    ragged, else the slice's shape of `value`."""
    if ragged_first:
        return []
    if shape:
        return [filled(shape[1:], False, value) for _ in range(shape[0])]
    return value


def ref_gather(p, i, axis, bd, policy, slice_, value):
    """tf.gather by its definition on nested lists; `slice_` is (shape, ragged) of what a
    filled index gives."""
    if bd > 0:
        if len(p) != len(i):
            raise Bad("batch")
        return [ref_gather(a, b, axis - 1, bd - 1, policy, slice_, value)
                for a, b in zip(p, i)]
    if axis > 0:
        return [ref_gather(a, i, axis - 1, 0, policy, slice_, value) for a in p]

    def pick(x):
        if isinstance(x, list):
            return [pick(y) for y in x]
        k = resolve(x, len(p), policy)
        if k is None:
            return filled(slice_[0], slice_[1], value)
        return p[k]
    return pick(i)


def ref_gather_nd(p, i, bd, nest, policy, slice_, value):
    """tf.gather_nd by its definition on nested lists (any batch_dims: each batch row's
    batch_dims=0 gather_nd); `nest` is the list depth above the index vectors."""
    if bd > 0:
        if len(p) != len(i):
            raise Bad("batch")
        return [ref_gather_nd(a, b, bd - 1, nest - 1, policy, slice_, value)
                for a, b in zip(p, i)]

    def walk(x, level):
        if level > 0:
            return [walk(y, level - 1) for y in x]
        row = p
        for v in x:
            k = resolve(v, len(row), policy)
            if k is None:
                return filled(slice_[0], slice_[1], value)
            row = row[k]
        return row
    return walk(i, nest)


# ---- Operands.
def ragged(values, *splits, dtype=np.int64):
    return tf.RaggedTensor.from_nested_row_splits(
        values, [np.asarray(s, dtype) for s in splits])


def params_list():
    out = []
    f = np.arange(1, 10, dtype=np.float32) * 1.5
    out.append(("rr1 f32", ragged(f[:6], [0, 2, 2, 5, 6])))
    out.append(("rr1 f32 int32 splits", ragged(f[:6], [0, 2, 2, 5, 6], dtype=np.int32)))
    out.append(("rr1 i64 inner", ragged(np.arange(12, dtype=np.int64).reshape(6, 2),
                                       [0, 1, 3, 3, 6])))
    out.append(("rr2 f64 inner", ragged(np.arange(12.0).reshape(6, 2), [0, 1, 3],
                                       [0, 2, 2, 6])))
    out.append(("rr2 i32", ragged(np.arange(10, dtype=np.int32), [0, 2, 3, 4],
                                  [0, 3, 3, 5, 10])))
    out.append(("rr1 bool", ragged(np.array([True, False, True, True, False]),
                                   [0, 1, 1, 3, 5])))
    out.append(("rr1 string", ragged(np.array([b"a", b"bc", b"", b"def", b"g"]),
                                     [0, 3, 3, 5])))
    out.append(("rr1 empty rows", ragged(np.zeros(0, np.float32), [0, 0, 0])))
    out.append(("rr1 inner 2x2", ragged(np.arange(20, dtype=np.int16).reshape(5, 2, 2),
                                        [0, 2, 5])))
    out.append(("dense f32", tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))))
    out.append(("dense 3d i32", tf.constant(np.arange(24, dtype=np.int32).reshape(2, 3, 4))))
    return out


def random_indices(shape, high, bad):
    lo, hi = (-2, high + 2) if bad else (0, max(high, 1))
    return rng.integers(lo, hi, size=shape)


def ragged_indices(rows, high, bad, itype, stype, inner=None):
    lengths = rng.integers(0, 4, size=rows)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(stype)
    n = int(splits[-1])
    shape = (n,) if inner is None else (n, inner)
    vals = random_indices(shape, high, bad).astype(itype)
    return tf.RaggedTensor.from_row_splits(vals, splits)


def rows_of(p):
    return int(p.nrows()) if isinstance(p, tf.RaggedTensor) else int(p.shape[0])


def rank_of(x):
    return x.shape.rank


def is_ragged_dim(x, d):
    return isinstance(x, tf.RaggedTensor) and 1 <= d <= x.ragged_rank


def slice_from(x, d):
    """(shape, ragged) of x's slice from dimension d on."""
    if is_ragged_dim(x, d):
        return (None, True)
    return (list(x.shape[d:]), False)


def clean(x):
    """A nested list for JSON: bytes as text, NaN as "nan"."""
    if isinstance(x, list):
        return [clean(y) for y in x]
    if isinstance(x, bytes):
        return x.decode()
    if isinstance(x, float) and x != x:
        return "nan"
    if isinstance(x, (np.generic,)):
        return clean(x.item())
    return x


def default_of(p):
    dt = p.dtype
    if dt == tf.string:
        return ""
    if dt == tf.bool:
        return False
    return 0.0 if dt.is_floating else 0


def fill_of(p):
    dt = p.dtype
    if dt == tf.string:
        return ""
    if dt == tf.bool:
        return True
    if dt.is_floating:
        return float("nan")
    return int(dt.min)


def run_tf(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - TF's errors are what the file records
        msg = str(e).split("\n")[0]
        if "}} " in msg:
            msg = msg.split("}} ", 1)[1]
        msg = msg.split(" [Op:")[0]
        return None, {"class": type(e).__name__, "message": msg}


cases = []


def gradient(p, fn):
    """TensorFlow's gradient with respect to params' flat values of sum(result * w), w the
    weights 1, 2, 3, … over the result's flat values (sums of small integers: exact in
    any order); for float params."""
    flat = p.flat_values if isinstance(p, tf.RaggedTensor) else p
    if not flat.dtype.is_floating:
        return {}
    v = tf.Variable(flat)
    with tf.GradientTape() as tape:
        q = p.with_flat_values(v) if isinstance(p, tf.RaggedTensor) else tf.convert_to_tensor(v)
        out = fn(q)
        o = out.flat_values if isinstance(out, tf.RaggedTensor) else out
        w = tf.reshape(tf.range(1, tf.size(o) + 1, dtype=o.dtype), tf.shape(o))
        loss = tf.reduce_sum(o * w)
    g = tape.gradient(loss, v)
    g = tf.zeros_like(flat) if g is None else tf.convert_to_tensor(g)
    return {"grad_upstream": arr(w.numpy()), "grad_expected": arr(g.numpy())}



def add(kind, op, p, i, axis, bd, policy="error", extra=None):
    case = {"kind": kind, "op": op, "params": operand(p), "indices": operand(i),
            "axis": axis, "batch_dims": bd, "policy": policy}
    case.update(extra or {})
    cases.append(case)
    return case


def mixed(p, i):
    """Whether both operands are ragged with row splits of different dtypes, which
    TensorFlow refuses and ndgather takes (its result's splits are int64); TensorFlow's
    result is then that of both operands' splits cast to int64."""
    both = isinstance(p, tf.RaggedTensor) and isinstance(i, tf.RaggedTensor)
    return both and p.row_splits.dtype != i.row_splits.dtype


def as64(x):
    return x.with_row_splits_dtype(tf.int64) if isinstance(x, tf.RaggedTensor) else x


def gather_case(p, i, axis, bd):
    kind = "tf"
    if mixed(p, i):
        _, refusal = run_tf(lambda: tf.gather(p, i, axis=axis, batch_dims=bd))
        assert "mismatched row_splits dtypes" in refusal["message"], refusal
        out, err = run_tf(lambda: tf.gather(as64(p), as64(i), axis=axis, batch_dims=bd))
        kind = "mixed"
    else:
        out, err = run_tf(lambda: tf.gather(p, i, axis=axis, batch_dims=bd))
    if err is not None:
        # TF's own errors: kept as TF's.
        add(kind, "gather", p, i, axis, bd, extra={"error": err})
        return
    n = rank_of(p)
    ax = (axis if axis is not None else bd)
    ax = ax + n if ax < 0 else ax
    bdn = bd + rank_of(i) if bd < 0 else bd
    try:
        ref = ref_gather(to_list(p), to_list(i), ax, bdn, "error", slice_from(p, ax + 1), 0)
    except Bad:
        add("unchecked", "gather", p, i, axis, bd, extra={"tf_result": result(out)})
        return
    assert ref == to_list(out), (ref, to_list(out))
    add(kind, "gather", p, i, axis, bd, extra={"expected": result(out),
                                              "tf_type": type(out).__name__,
                                              **gradient(p, lambda q: tf.gather(
                                                  *((as64(q), as64(i)) if kind == "mixed"
                                                    else (q, i)),
                                                  axis=axis, batch_dims=bd))})


def gather_nd_case(p, i, bd=0):
    depth = int(i.shape[-1]) if not isinstance(i, tf.RaggedTensor) else int(
        i.flat_values.shape[-1])
    nest = rank_of(i) - 1
    try:
        ref = ref_gather_nd(to_list(p), to_list(i), bd, nest, "error",
                            slice_from(p, bd + depth), 0)
    except Bad:
        ref = None
    if bd > 0:
        # TensorFlow refuses; the expected result is each batch row's batch_dims=0
        # gather_nd, by TensorFlow.
        _, refusal = run_tf(lambda: tf.gather_nd(p, i, batch_dims=bd))
        assert refusal and "not supported for ragged gather" in refusal["message"], refusal
        if ref is None:
            add("refused", "gather_nd", p, i, None, bd,
                extra={"tf_refusal": refusal, "expected_error": True})
            return
        rows, notes = [], []
        for b in range(rows_of(p)):
            row, err = run_tf(lambda: tf.gather_nd(p[b], i[b]))
            if err is not None:
                # TensorFlow's dense gather_nd refuses any index into an empty row, even
                # of depth 0 (which copies it whole); ragged gather_nd at batch_dims=0
                # copies it, and so does ndgather here.
                assert "params is empty" in err["message"] and depth == 0, err
                notes.append(err["message"])
                rows.append(ref[b])
            else:
                rows.append(to_list(row))
        assert rows == ref, (rows, ref)
        add("refused", "gather_nd", p, i, None, bd,
            extra={"tf_refusal": refusal, "expected_list": clean(rows),
                   "tf_row_errors": notes})
        return
    kind = "mixed" if mixed(p, i) else "tf"
    out, err = run_tf(lambda: tf.gather_nd(as64(p), as64(i)) if kind == "mixed"
                      else tf.gather_nd(p, i))
    if err is not None:
        add(kind, "gather_nd", p, i, None, bd, extra={"error": err})
        return
    if ref is None:
        add("unchecked", "gather_nd", p, i, None, bd, extra={"tf_result": result(out)})
        return
    assert ref == to_list(out), (ref, to_list(out))
    add(kind, "gather_nd", p, i, None, bd, extra={"expected": result(out),
                                                 "tf_type": type(out).__name__,
                                                 **gradient(p, lambda q: tf.gather_nd(
                                                     *((as64(q), as64(i)) if kind == "mixed"
                                                       else (q, i))))})


for name, p in params_list():
    n = rank_of(p)
    rows = rows_of(p)
    for itype in (np.int32, np.int64):
        # Row gathers: dense indices of rank 0, 1, 2, and ragged indices.
        for shape in [(), (3,), (2, 2), (0,)]:
            for bad in (False, True):
                idx = random_indices(shape, rows, bad).astype(itype)
                if isinstance(p, tf.RaggedTensor):
                    gather_case(p, tf.constant(idx), None, 0)
        for bad in (False, True):
            gather_case(p, ragged_indices(3, rows, bad, itype, np.int64), None, 0)
        # Every axis, dense indices.
        for axis in range(-n, n) if isinstance(p, tf.RaggedTensor) else []:
            for bad in (False, False, True):
                pos = axis + n
                dim = 3
                idx = random_indices((2,), dim, bad).astype(itype)
                gather_case(p, tf.constant(idx), axis, 0)
        # batch_dims=1, per-row gathers with ragged or dense indices, every axis >= 1.
        for axis in range(1, n):
            for bad in (False, True):
                ri = ragged_indices(rows, 3, bad, itype, np.int64)
                gather_case(p, ri, axis, 1)
                if isinstance(p, tf.RaggedTensor):
                    di = random_indices((rows, 2), 3, bad).astype(itype)
                    gather_case(p, tf.constant(di), axis, 1)
        # batch_dims=2 where params has a second batch dimension.
        if isinstance(p, tf.RaggedTensor) and n >= 3:
            inner_rows = p.values.nrows() if p.ragged_rank >= 2 else None
            if inner_rows is not None:
                lens = p.row_lengths().numpy()
                ilen = p.values.row_lengths().numpy()
                vals = [rng.integers(0, 3, size=(rng.integers(0, 3),)) for _ in ilen]
                inner = tf.RaggedTensor.from_row_lengths(
                    np.concatenate(vals + [np.zeros(0, np.int64)]).astype(itype),
                    [len(v) for v in vals])
                ri = tf.RaggedTensor.from_row_lengths(inner, lens)
                gather_case(p, ri, None, 2)
        # gather_nd, every depth, dense and ragged indices.
        for depth in range(0, n + 1):
            for bad in (False, True):
                high = 3
                idx = random_indices((3, depth), high, bad).astype(itype)
                if isinstance(p, tf.RaggedTensor):
                    gather_nd_case(p, tf.constant(idx))
                if depth >= 1:
                    if isinstance(p, tf.RaggedTensor):
                        idx2 = random_indices((2, 2, depth), high, bad).astype(itype)
                        gather_nd_case(p, tf.constant(idx2))
                    ri = ragged_indices(2, high, bad, itype, np.int64, inner=depth)
                    gather_nd_case(p, ri)
        # batch_dims=1 (TensorFlow refuses).
        if isinstance(p, tf.RaggedTensor):
            for depth in range(0, n):
                for bad in (False, True):
                    idx = random_indices((rows, 2, depth), 3, bad).astype(itype)
                    gather_nd_case(p, tf.constant(idx), bd=1)

# TensorFlow's ValueErrors.
p0 = params_list()[0][1]
for axis, bd, idx in [(2, 0, [0]), (-3, 0, [0]), (0, 1, [[0], [0], [0], [0]]),
                      (None, 2, [0]), (None, 1, [[0], [0], [0]])]:
    gather_case(p0, tf.constant(np.array(idx, np.int64)), axis, bd)
for idx in [tf.ragged.constant([[0], [0, 1]], dtype=tf.int64), tf.constant(np.int64(0))]:
    out, err = run_tf(lambda: tf.gather_nd(p0, idx))
    add("tf", "gather_nd", p0, idx, None, 0, extra={"error": err})

# The policies beyond TensorFlow's: the nested-list reference.
def policy_case(op, p, i, axis, bd, policy, fn):
    try:
        add("policy", op, p, i, axis, bd, policy, extra={"expected_list": clean(fn())})
    except Bad:
        add("policy", op, p, i, axis, bd, policy, extra={"expected_error": True})


for name, p in params_list():
    if not isinstance(p, tf.RaggedTensor):
        continue
    rows = rows_of(p)
    n = rank_of(p)
    for policy in ["ignore", "clamp", "negative", "wrap", "fill"]:
        value = default_of(p) if policy == "ignore" else fill_of(p)
        idx = np.array([rows + 1, -1, 0, -rows - 1], np.int64)
        policy_case("gather", p, tf.constant(idx), 0, 0, policy, lambda: ref_gather(
            to_list(p), idx.tolist(), 0, 0, policy, slice_from(p, 1), value))
        ri = ragged_indices(rows, 3, True, np.int64, np.int64)
        policy_case("gather", p, ri, 1, 1, policy, lambda: ref_gather(
            to_list(p), to_list(ri), 1, 1, policy, slice_from(p, 2), value))
        for depth in range(1, n + 1):
            idx = random_indices((4, depth), 3, True)
            policy_case("gather_nd", p, tf.constant(idx), None, 0, policy,
                        lambda: ref_gather_nd(to_list(p), idx.tolist(), 0, 1, policy,
                                              slice_from(p, depth), value))


path = pathlib.Path(__file__).with_name("ragged_cases.json")
path.write_text(json.dumps({"tensorflow": tf.__version__, "cases": cases}, allow_nan=True))
kinds = {}
for c in cases:
    key = c["kind"] + ("/error" if "error" in c else "")
    kinds[key] = kinds.get(key, 0) + 1
print(len(cases), "cases:", kinds)
