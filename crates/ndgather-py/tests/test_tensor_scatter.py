"""ng.tensor_scatter_nd_* against TensorFlow's own results (the core's case file, made by
crates/ndgather/tests/data/tensor_scatter_cases.py), bit for bit, out of place and in place."""
import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

CASES = json.loads((pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data"
                    / "tensor_scatter_cases.json").read_text())["cases"]
FUNCTIONS = {k: getattr(ng, f"tensor_scatter_nd_{k}") for k in ("update", "add", "sub", "min",
                                                                   "max")}


def array(v):
    if "strings" in v:
        return np.array(v["strings"], dtype=object).reshape(v["shape"])
    dtype = ml_dtypes.bfloat16 if v["dtype"] == "bfloat16" else np.dtype(v["dtype"])
    return np.frombuffer(bytes.fromhex(v["hex"]), dtype=np.dtype(dtype).newbyteorder("<")) \
        .astype(dtype).reshape(v["shape"])


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# NumPy holds strings in object arrays, which these functions do not read.
NUMERIC = [k for k, c in enumerate(CASES) if "strings" not in c["tensor"]]


@pytest.mark.parametrize("k", NUMERIC)
def test_tensorflow_case(k):
    case = CASES[k]
    f = FUNCTIONS[case["kind"]]
    tensor, indices, updates = (array(case[n]) for n in ("tensor", "indices", "updates"))
    if "output" in case:
        expected = array(case["output"])
        assert same(f(tensor, indices, updates, bad_indices=case["bad_indices"]), expected)
        target = tensor.copy()
        assert f(target, indices, updates, bad_indices=case["bad_indices"], out=target) is target
        assert same(target, expected)
        return
    error = {"InvalidArgumentError": ng.InvalidArgumentError,
             "NotFoundError": ng.NotFoundError}[case["error"]["class"]]
    message = case["error"]["message"]
    if error is ng.NotFoundError:
        message = message[:message.index(", Tindices")]
    target = tensor.copy()
    with pytest.raises(error) as e:
        f(target, indices, updates, bad_indices=case["bad_indices"], out=target)
    assert str(e.value).startswith(message)
    assert same(target, tensor), "written on error"


def test_cases_cover_the_file():
    assert len(NUMERIC) > 1500


def test_memmap_in_place(tmp_path):
    path = tmp_path / "table.npy"
    np.save(path, np.arange(12, dtype=np.float64).reshape(6, 2))
    table = np.load(path, mmap_mode="r+")
    ng.tensor_scatter_nd_add(table, [[5], [0], [5]], [[1, 1], [2, 2], [3, 3]], out=table)
    table.flush()
    del table
    assert np.load(path).tolist() == [[2, 3], [2, 3], [4, 5], [6, 7], [8, 9], [14, 15]]


def test_out_of_another_array_and_unchanged_on_error():
    tensor = np.ones([3, 2], np.int32)
    out = np.full([3, 2], 7, np.int32)
    assert ng.tensor_scatter_nd_sub(tensor, [[2]], [[1, 2]], out=out) is out
    assert out.tolist() == [[1, 1], [1, 1], [0, -1]] and tensor.tolist() == [[1, 1]] * 3
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[1\] = \[3\]"):
        ng.tensor_scatter_nd_sub(tensor, [[2], [3]], [[1, 2], [3, 4]], out=out)
    assert out.tolist() == [[1, 1], [1, 1], [0, -1]]
    with pytest.raises(ValueError, match="shape"):
        ng.tensor_scatter_nd_sub(tensor, [[2]], [[1, 2]], out=np.zeros([2, 2], np.int32))


def test_strided_in_place_and_refusals():
    table = np.zeros([4, 6], np.float32)
    view = table[:, ::2]
    ng.tensor_scatter_nd_update(view, [[1]], [[1, 2, 3]], out=view)
    assert table[1].tolist() == [1, 0, 2, 0, 3, 0]
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ng.tensor_scatter_nd_add(frozen, [[0]], [1.0], out=frozen)
    shared = np.zeros(4, np.int64)
    with pytest.raises(ValueError, match="shares memory"):
        ng.tensor_scatter_nd_add(shared, shared[:2].reshape(2, 1), shared[2:], out=shared)
    with pytest.raises(ng.InvalidArgumentError, match="expected to be a float tensor but is a "
                                                      "double tensor"):
        ng.tensor_scatter_nd_add(np.zeros(3, np.float32), [[0]], np.ones(1))
    with pytest.raises(TypeError, match="datetime64"):
        ng.tensor_scatter_nd_update(np.zeros(3, "datetime64[s]"), [[0]], np.zeros(1, "datetime64[s]"))


@pytest.mark.parametrize("policy,expected", [("ignore", [0, 10, 0, 0]), ("fill", [0, 10, 0, 0]),
                                             ("clamp", [70, 10, 0, 20]),
                                             ("wrap", [0, 30, 0, 70])])
def test_policies(policy, expected):
    got = ng.tensor_scatter_nd_add(np.zeros(4, np.int64), [[1], [5], [-1], [-5]],
                                   [10, 20, 30, 40], bad_indices=policy)
    assert got.tolist() == expected


def test_tensorflow_order_of_adds():
    """The issue's example: a float64 101x4 table, 300 updates; TF's sequential order is
    np.add.at's, and differs from summing the updates first."""
    rng = np.random.default_rng(7)
    table = rng.standard_normal((101, 4))
    ids = rng.integers(0, 101, 300)
    updates = rng.standard_normal((300, 4)) * 1e3
    expected = table.copy()
    np.add.at(expected, ids, updates)
    got = ng.tensor_scatter_nd_add(table, ids.reshape(-1, 1), updates)
    assert same(got, expected)
