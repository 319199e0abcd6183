"""Ragged gathers from Python: every case of the core's file (TensorFlow 2.21's results, made
by crates/ndgather/tests/data/ragged_cases.py) through ng.Ragged, bit for bit; pyarrow list
arrays against pyarrow.compute.take; per-row gathers against Polars' list.gather; a live
tf.RaggedTensor where TensorFlow is installed."""
import json
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ndgather as ng
from ndgather import _ragged

CASES = json.loads((pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data"
                    / "ragged_cases.json").read_text())["cases"]
ERRORS = {"ValueError": ValueError, "InvalidArgumentError": ng.InvalidArgumentError}


def array(v):
    if "strings" in v:
        return np.array(v["strings"], dtype=str).reshape(v["shape"])
    dtype = np.dtype(v["dtype"])
    return np.frombuffer(bytes.fromhex(v["hex"]), dtype=dtype.newbyteorder("<")) \
        .astype(dtype).reshape(v["shape"])


def operand(v):
    values = array(v["values"])
    splits = [array(s) for s in v["splits"]]
    return ng.Ragged(values, splits) if splits else values


def call(case):
    fn = ng.gather if case["op"] == "gather" else ng.gather_nd
    kwargs = {"batch_dims": case["batch_dims"], "bad_indices": case["policy"]}
    if case["op"] == "gather" and case["axis"] is not None:
        kwargs["axis"] = case["axis"]
    return fn(operand(case["params"]), operand(case["indices"]), **kwargs)


def parts(result):
    if isinstance(result, ng.Ragged):
        return result.values, list(result.nested_row_splits)
    return result, []


def as_list(result):
    items = result.to_list() if isinstance(result, ng.Ragged) else result.tolist()

    def clean(x):
        if isinstance(x, list):
            return [clean(y) for y in x]
        if isinstance(x, bytes):
            return x.decode()
        if isinstance(x, float) and x != x:
            return "nan"
        return x
    return clean(items)


def message_is_tfs(case):
    row_gather = (case["op"] == "gather" and case["batch_dims"] == 0
                  and (case["axis"] or 0) == 0 and case["params"]["splits"])
    return row_gather or case["error"]["class"] == "ValueError"


@pytest.mark.parametrize("k", range(len(CASES)))
def test_case(k):
    case = CASES[k]
    if "error" in case:
        with pytest.raises(ERRORS[case["error"]["class"]]) as e:
            call(case)
        if message_is_tfs(case):
            assert str(e.value) == case["error"]["message"]
        return
    if case["kind"] == "unchecked" or case.get("expected_error"):
        with pytest.raises(ng.InvalidArgumentError):
            call(case)
        return
    got = call(case)
    if "expected" in case:
        values, splits = parts(got)
        want = case["expected"]
        want_values = array(want["values"])
        if want_values.dtype.kind == "U":  # strings: NumPy's width is params'
            assert values.shape == want_values.shape
            assert values.tolist() == want_values.tolist()
        else:
            assert values.dtype == want_values.dtype
            assert values.shape == want_values.shape
            assert values.tobytes() == want_values.tobytes()
        want_splits = [array(s) for s in want["splits"]]
        assert len(splits) == len(want_splits)
        for a, b in zip(splits, want_splits):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    else:
        assert as_list(got) == case["expected_list"]


def test_case_counts():
    kinds = {}
    for c in CASES:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    assert kinds["tf"] >= 800 and kinds["refused"] >= 90 and kinds["unchecked"] >= 100


# ---- pyarrow: whole rows, as pyarrow.compute.take gathers them.
def list_arrays():
    rng = np.random.default_rng(7)
    rows = [list(rng.integers(-50, 50, rng.integers(0, 5))) for _ in range(40)]
    yield pa.array(rows, type=pa.list_(pa.int32()))
    yield pa.array(rows, type=pa.large_list(pa.int64()))
    yield pa.array([[float(x) / 3 for x in r] for r in rows], type=pa.list_(pa.float64()))
    yield pa.array([[str(x) * 2 for x in r] for r in rows], type=pa.list_(pa.string()))
    yield pa.array(rows, type=pa.list_(pa.int16()))[5:30]  # sliced: offsets start past 0
    yield pa.array([[[1, 2], [3]], [], [[4, 5, 6]], [[7]]],
                   type=pa.list_(pa.list_(pa.int64())))
    yield pa.array([[[1, 2], [3, 4]], [], [[5, 6]]],
                   type=pa.list_(pa.list_(pa.float32(), 2)))
    yield pa.array([[1, 2], [3, 4], [5, 6]], type=pa.list_(pa.int8(), 2))


@pytest.mark.parametrize("k", range(8))
def test_arrow_rows_equal_pyarrow_take(k):
    array = list(list_arrays())[k]
    rng = np.random.default_rng(k)
    idx = rng.integers(0, len(array), 30)
    got = ng.gather(array, idx)
    want = pc.take(array, pa.array(idx))
    assert type(got) is type(want)
    assert got.type == want.type
    assert got.to_pylist() == want.to_pylist()


def test_arrow_values_are_read_in_place():
    array = pa.array([[1, 2], [], [3, 4, 5]], type=pa.list_(pa.int64()))[1:]
    values, splits, _ = _ragged._from_arrow(array)
    child = array.values
    assert values.ctypes.data == child.buffers()[1].address + 2 * 8
    assert splits[0].tolist() == [0, 0, 3]


def test_arrow_nulls_are_refused_with_a_hint():
    with pytest.raises(ValueError, match="fill_null"):
        ng.gather(pa.array([[1], None]), [0])


# ---- Per-row gathers: Polars' list.gather (negative indices count from the end there,
# which is the "negative" policy here).
def test_per_row_gather_equals_polars_list_gather():
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(3)
    rows = [list(rng.integers(0, 100, rng.integers(1, 6))) for _ in range(200)]
    picks = [list(rng.integers(-len(r), len(r), rng.integers(0, 4))) for r in rows]
    frame = pl.DataFrame({"a": rows, "i": picks})
    want = frame.select(pl.col("a").list.gather(pl.col("i"))).to_series().to_list()
    params = pa.array(rows, type=pa.list_(pa.int64()))
    indices = pa.array(picks, type=pa.list_(pa.int64()))
    got = ng.gather(params, indices, batch_dims=1, bad_indices="negative")
    assert got.to_pylist() == want
    with pytest.raises(ng.InvalidArgumentError, match="is not in"):
        ng.gather(params, indices, batch_dims=1)


def test_polars_series_in_and_out():
    pl = pytest.importorskip("polars")
    s = pl.Series("a", [[1, 2], [], [3, 4, 5]])
    got = ng.gather(s, [2, 0, 2])
    assert isinstance(got, pl.Series)
    assert got.to_list() == s.gather([2, 0, 2]).to_list()
    picks = pl.Series("i", [[1, 0], [], [2]])
    got = ng.gather(s, picks, batch_dims=1)
    want = pl.DataFrame({"a": s, "i": picks}).select(pl.col("a").list.gather(pl.col("i")))
    assert got.to_list() == want.to_series().to_list()
    # A Series that is not of lists is a dense operand, as before.
    assert ng.gather(pl.Series([10, 11, 12]), [2, 0]).tolist() == [12, 10]


def test_ragged_results_are_new():
    rt = ng.Ragged(np.arange(3.0), [0, 1, 3])
    with pytest.raises(TypeError, match="ragged"):
        ng.gather(rt, [0], out=np.zeros(1))


def test_ragged_type():
    rt = ng.Ragged.from_list([[1, 2], [], [3]])
    assert rt.to_list() == [[1, 2], [], [3]]
    assert rt == ng.Ragged(np.array([1, 2, 3]), [0, 2, 2, 3])
    assert rt.row_splits.dtype == np.int64
    assert ng.Ragged(np.zeros(2), np.array([0, 2], np.int32)).row_splits.dtype == np.int32
    with pytest.raises(ng.InvalidArgumentError, match="monotonic"):
        ng.Ragged(np.zeros(2), [0, 2, 1, 2])
    with pytest.raises(ng.InvalidArgumentError, match="_from_row_partition"):
        ng.Ragged(np.zeros(2), [0, 1])


def test_live_tensorflow_ragged_tensor():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed here")
    rt = tf.ragged.constant([[1.5, 2.5], [], [3.5, 4.5, 5.5]])
    for idx in ([2, 0], tf.ragged.constant([[2, 0], [1]])):
        got = ng.gather(rt, idx)
        want = tf.gather(rt, idx)
        assert isinstance(got, tf.RaggedTensor)
        assert got.to_list() == want.to_list()
    got = ng.gather_nd(rt, [[2, 1], [0, 0]])
    assert isinstance(got, tf.Tensor) and got.numpy().tolist() == [4.5, 1.5]


GRAD = [k for k, c in enumerate(CASES) if "grad_expected" in c]


@pytest.mark.parametrize("k", GRAD)
def test_gradient_equals_tensorflows(k):
    case = CASES[k]
    upstream = array(case["grad_upstream"])
    want = array(case["grad_expected"])
    kwargs = {"op": case["op"], "batch_dims": case["batch_dims"]}
    if case["op"] == "gather" and case["axis"] is not None:
        kwargs["axis"] = case["axis"]
    rows, values, shape = ng.ragged_gather_grad(operand(case["params"]),
                                                operand(case["indices"]), upstream, **kwargs)
    dense = np.zeros(shape, values.dtype)
    np.add.at(dense, rows, values)
    assert dense.reshape(want.shape).tobytes() == want.tobytes()


def test_gradient_counts():
    assert len(GRAD) >= 120
