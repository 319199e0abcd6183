"""The segment reductions and gather_segment through ndgather's one door (`_core.run_op`):
against TensorFlow's own results (the core's case file, made by
crates/ndgather/tests/data/segment_cases.py) bit for bit and word for word, live against
TensorFlow where it is installed, and gather_segment against its unfused composition."""
import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

CASES = json.loads((pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data"
                    / "segment_cases.json").read_text())["cases"]
SCALAR = [k for k, c in enumerate(CASES) if "num_segments_shape" not in c]


def array(v: dict) -> np.ndarray:
    dtype = ml_dtypes.bfloat16 if v["dtype"] == "bfloat16" else np.dtype(v["dtype"])
    return np.frombuffer(bytes.fromhex(v["hex"]), dtype=np.dtype(dtype).newbyteorder("<")) \
        .astype(dtype).reshape(v["shape"])


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def call(case: dict):
    f = getattr(ng, case["op"])
    data, ids = array(case["data"]), array(case["segment_ids"])
    if case["op"].startswith("unsorted"):
        return f(data, ids, case["num_segments"])
    return f(data, ids)


@pytest.mark.parametrize("k", SCALAR)
def test_tensorflow_case(k: int) -> None:
    case = CASES[k]
    if "output" in case:
        assert same(call(case), array(case["output"])), case
    else:
        with pytest.raises(ng.InvalidArgumentError) as info:
            call(case)
        assert str(info.value) == case["error"]["message"]


def test_gather_segment_equals_its_composition() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((50, 8)).astype(np.float32)
    src = rng.integers(0, 50, 400)
    dst = rng.integers(-1, 20, 400)
    for reduce in ("sum", "mean", "max", "min", "prod", "sqrt_n"):
        fused = ng.gather_segment(x, src, dst, 20, reduce)
        unfused = getattr(ng, f"unsorted_segment_{reduce}")(ng.gather(x, src), dst, 20)
        assert same(fused, unfused), reduce
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0\] = 50 is not in \[0, 50\)"):
        ng.gather_segment(x, [50], [0], 1)


def test_the_door_refuses_bad_calls_with_clear_errors() -> None:
    with pytest.raises(ng.InvalidArgumentError, match="no op named"):
        ng._core.run_op("segment_summ", [np.ones(2), np.zeros(2, np.int64)])
    with pytest.raises(ng.InvalidArgumentError, match="unknown attribute"):
        ng._core.run_op("segment_sum", [np.ones(2), np.zeros(2, np.int64)], {"axis": 1})
    with pytest.raises(ng.InvalidArgumentError, match="takes 2 inputs"):
        ng._core.run_op("segment_sum", [np.ones(2)])
    with pytest.raises(TypeError, match="must be a NumPy array"):
        ng._core.run_op("segment_sum", [np.ones(2), "ids"])
    with pytest.raises(TypeError, match="dtype object"):
        ng._core.run_op("segment_sum", [np.ones(2, object), np.zeros(2, np.int64)])
    with pytest.raises(ng.InvalidArgumentError, match="is required"):
        ng._core.run_op("unsorted_segment_sum", [np.ones(2), np.zeros(2, np.int64)])


def test_out_and_in_place_through_the_door() -> None:
    out = np.full(2, -1.0)
    assert ng._core.run_op("unsorted_segment_sum", [np.array([1.0, 2.0, 3.0]),
                                                    np.array([1, 0, 1])],
                           {"num_segments": 2}, out) is None
    assert out.tolist() == [2.0, 4.0]
    wrong = np.full(3, -1.0)
    with pytest.raises(ng.InvalidArgumentError):
        ng._core.run_op("unsorted_segment_sum", [np.ones(3), np.array([1, 0, 1])],
                        {"num_segments": 2}, wrong)
    assert wrong.tolist() == [-1.0, -1.0, -1.0]
    t = np.zeros(3, np.int32)
    ng._core.run_op("tensor_scatter_nd_add", [None, np.array([[1]]), np.array([5], np.int32)],
                    {}, t, True)
    assert t.tolist() == [0, 5, 0]
    flags = np.zeros(3, bool)
    ng._core.run_op("tensor_scatter_nd_update", [None, np.array([[2]]), np.array([True])],
                    {}, flags, True)
    assert flags.tolist() == [False, False, True]
    with pytest.raises(ValueError, match="shares memory"):
        ng._core.run_op("unsorted_segment_sum", [out, np.array([0, 1])], {"num_segments": 2}, out)


def test_live_against_tensorflow() -> None:
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    data = rng.standard_normal((30, 5)).astype(np.float32)
    ids = np.sort(rng.integers(0, 8, 30))
    for reduce in ("sum", "mean", "max", "min", "prod"):
        want = getattr(tf.math, f"segment_{reduce}")(data, ids).numpy()
        assert same(getattr(ng, f"segment_{reduce}")(data, ids), want), reduce
        want = getattr(tf.math, f"unsorted_segment_{reduce}")(data, ids[::-1], 9).numpy()
        assert same(getattr(ng, f"unsorted_segment_{reduce}")(data, ids[::-1], 9), want), reduce


def test_hostile_sizes_are_errors_not_aborts() -> None:
    # Working buffers sized by num_segments or a dense shape, with outputs of no elements.
    with pytest.raises((MemoryError, ng.InvalidArgumentError)):
        ng.unsorted_segment_mean(np.ones((2, 0), np.int8), [0, 1], 2**40)
    with pytest.raises((MemoryError, ng.InvalidArgumentError)):
        ng._core.run_op("unsorted_segment_mean", [np.ones((2, 0), np.int64), np.array([0, 1])],
                        {"num_segments": 2**62})
    with pytest.raises((MemoryError, ng.InvalidArgumentError)):
        ng.gather_segment(np.ones((2, 0), np.int32), [0, 1], [0, 1], 2**40, "mean")
    # Five inputs: the weights' sparse form, added since, is left out.
    with pytest.raises((MemoryError, ng.InvalidArgumentError), match="too large|memory"):
        ng._core.run_op("embedding_lookup_sparse", [[np.ones((3, 4))], np.array([[0, 0]]),
                                                    np.array([1]), np.array([2**62, 1]), None])


def test_bool_in_place_goes_through_the_cores_checks() -> None:
    t = np.array([True, False, False])
    with pytest.raises(ng.InvalidArgumentError, match="writes a new output"):
        ng._core.run_op("gather", [np.array([False, True, True]), np.array([2, 1, 0])],
                        out=t, in_place=True)
    with pytest.raises(ng.InvalidArgumentError, match="give its input as none"):
        ng._core.run_op("tensor_scatter_nd_update",
                        [np.ones(4, bool), np.array([[1]]), np.array([False])],
                        out=np.zeros(4, bool), in_place=True)
    assert t.tolist() == [True, False, False]


def test_gather_segment_checks_do_not_depend_on_the_reduction() -> None:
    for reduce in ("sum", "mean"):
        with pytest.raises(ng.InvalidArgumentError, match="vectors of one length"):
            ng._core.run_op("gather_segment", [np.arange(6).reshape(3, 2), np.array([[0, 2, 1]]),
                                               np.array([[1, 1, 0]])],
                            {"num_segments": 2, "reduce": reduce})
    with pytest.raises(ng.InvalidArgumentError, match="one dtype"):
        ng.gather_segment(np.ones((3, 2)), np.array([0], np.int32), np.array([0], np.int64), 1)


def test_attributes_of_numpy_and_odd_python_types() -> None:
    with pytest.raises(TypeError):
        ng.scatter_nd(np.array([[1]]), np.array([1.0]), [4.5])
    with pytest.raises(TypeError, match="sequence of integers"):
        ng.scatter_nd(np.array([[1]]), np.array([1.0]), 4)
    with pytest.raises(OverflowError, match="int64"):
        ng.unsorted_segment_sum(np.ones(2), [0, 1], 2**64)
    got = ng._core.run_op("scatter_reduce", [np.zeros(2), np.array([0, 0]), np.ones(2)],
                          {"dim": np.int64(0), "reduce": "sum", "include_self": np.bool_(False)})
    assert got.tolist() == [2.0, 0.0]
