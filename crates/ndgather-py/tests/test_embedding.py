"""ng.embedding_lookup(_sparse) and their gradients against TensorFlow 2.21's own results
(the core's crates/ndgather/tests/data/embedding_cases.json, written with tensorflow-cpu),
through the Python front end: every dtype (bfloat16 through ml_dtypes), shards, strategies,
max_norm, combiners, weights; plus the SparseTensor forms and the errors."""
import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

DATA = pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data" / "embedding_cases.json"
CASES = json.loads(DATA.read_text())["cases"]
DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
          "float64": np.float64}
BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def arr(v, dtype=None):
    a = np.array(v["data"], dtype=np.float64 if dtype is None else dtype)
    return a.reshape(v["shape"])


def close(got, expected, dtype, exact):
    got = np.asarray(got, dtype=np.float64).ravel()
    expected = np.asarray(expected, dtype=np.float64).ravel()
    if exact:
        np.testing.assert_array_equal(got, expected)
    else:  # within 16 ulps of the largest value
        scale = max(np.abs(expected).max(initial=0.0), 1e-30) * 2.0 ** -BITS[dtype]
        assert np.all(np.abs(got - expected) <= 16 * scale), (got, expected)


def dense(slices):
    out = []
    for indices, values, shape in slices:  # summed in their own dtype, as TensorFlow does
        d = np.zeros(shape, dtype=values.dtype)
        for i, v in zip(indices, values):
            d[i] = d[i] + v
        out.append(d)
    return out


@pytest.mark.parametrize("k", range(len(CASES)))
def test_tensorflow_case(k):
    case = CASES[k]
    dtype = case.get("dtype") or case["shards"][0]["dtype"]
    t = DTYPES[dtype]
    shards = [arr(s).astype(t) for s in case["shards"]]
    weighted_sqrtn = case.get("combiner") == "sqrtn" and case.get("weights") is not None
    exact = case["max_norm"] is None and not weighted_sqrtn and dtype in ("float32", "float64")
    kw = dict(partition_strategy=case["strategy"], max_norm=case["max_norm"])
    upstream = arr(case["upstream"]).astype(t)
    if case["op"] == "lookup":
        ids = np.array(case["ids"]["data"]).reshape(case["ids"]["shape"])
        close(ng.embedding_lookup(shards, ids, **kw), arr(case["expected"]), dtype, exact)
        grads = ng.embedding_lookup_grad(shards, ids, upstream, **kw)
    else:
        indices = np.array(case["indices"]["data"]).reshape(case["indices"]["shape"])
        sp_ids = (indices, case["values"]["data"], case["dense_shape"])
        sp_w = None if case["weights"] is None else (indices, arr(case["weights"]).astype(t), case["dense_shape"])
        out = ng.embedding_lookup_sparse(shards, sp_ids, sp_w, case["combiner"], **kw)
        expected = arr(case["expected"])
        assert out.dtype == t and out.shape[0] == case["dense_shape"][0]
        close(out[:len(expected)], expected, dtype, exact)
        assert not out[len(expected):].any()  # rows without ids
        pad = np.zeros((out.shape[0] - len(upstream),) + upstream.shape[1:], dtype=t)
        grads = ng.embedding_lookup_sparse_grad(shards, sp_ids, sp_w, np.concatenate([upstream, pad]),
                                                case["combiner"], **kw)
    for got, want in zip(dense(grads), case["grads"]):
        close(got, arr(want), dtype, exact)


def test_sparse_tensor_objects_and_errors():
    class Sparse:  # anything with indices / values / dense_shape, as tf.sparse.SparseTensor
        indices = [[0, 0], [1, 0]]
        values = [2, 0]
        dense_shape = [2, 1]
    table = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(ng.embedding_lookup_sparse(table, Sparse(), None, "sum"),
                                  [[4.0, 5.0], [0.0, 1.0]])
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
        ng.embedding_lookup(table, [0, 3])
    with pytest.raises(ng.InvalidArgumentError, match="row-major order"):
        ng.embedding_lookup_sparse(table, ([[1, 0], [0, 0]], [0, 1], [2, 1]), None)
    with pytest.raises(ng.InvalidArgumentError, match="same indices"):
        ng.embedding_lookup_sparse(table, ([[0, 0]], [0], [1, 1]), ([[0, 1]], [1.0], [1, 2]))
    with pytest.raises(ng.InvalidArgumentError, match="same indices"):
        ng.embedding_lookup_sparse(table, ([[0, 0]], [0], [1, 1]), ([[0, 0]], [1.0], [2, 1]))
    with pytest.raises(ValueError, match="must be one of 'mean', 'sqrtn' or 'sum', got max"):
        ng.embedding_lookup_sparse(table, ([[0, 0]], [0], [1, 1]), None, "max")
    with pytest.raises(ValueError, match="partition_strategy"):
        ng.embedding_lookup([table, table], [0], partition_strategy="hash")
    with pytest.raises(ng.NotFoundError, match="embedding_lookup takes embedding tables of float16"):
        ng.embedding_lookup(np.arange(4).reshape(2, 2), [0])
    with pytest.raises(ng.InvalidArgumentError, match="Need at least one param"):
        ng.embedding_lookup([], [0])


def test_by_name_lookups_keep_what_the_bindings_took() -> None:
    """The lookups reached by name take ids of any integer dtype, a call written before the
    weights' sparse form was added, and say what is wrong in the op's own words."""
    table = np.arange(6.0).reshape(3, 2)
    for dtype in (np.int8, np.uint8, np.int16, np.uint64):
        ids = np.array([2, 0], dtype)
        np.testing.assert_array_equal(ng.embedding_lookup(table, ids), table[[2, 0]])
        sp = ([[0, 0], [1, 0]], np.array([2, 0], dtype), [2, 1])
        np.testing.assert_array_equal(ng.embedding_lookup_sparse(table, sp, None, "sum"),
                                      table[[2, 0]])
    # Five inputs, as before sp_weights_indices and sp_weights_dense_shape existed.
    five = [[table], np.array([[0, 0], [1, 0]]), np.array([2, 0]), np.array([2, 1]), None]
    np.testing.assert_array_equal(
        ng._core.run_op("embedding_lookup_sparse", five, {"combiner": "sum"}), table[[2, 0]])
    with pytest.raises(ng.InvalidArgumentError, match="takes 4 to 7 inputs"):
        ng._core.run_op("embedding_lookup_sparse", five[:3], {"combiner": "sum"})
    with pytest.raises(ng.InvalidArgumentError, match="same indices and dense_shape"):
        ng.embedding_lookup_sparse(table, ([[0, 0]], [0], [1, 2]), ([[0, 0]], [1.0], [2, 2]))
    with pytest.raises(ng.InvalidArgumentError, match=r"must not have negative sizes, got \[1, -2\]"):
        ng.embedding_lookup_sparse(table, ([[0, 0]], [0], [1, -2]), None)
    # PyTorch's class and words.
    with pytest.raises(ValueError, match="^mode has to be one of sum, mean or max$"):
        ng.embedding_bag(table, [[0, 1]], mode="avg")
    with pytest.raises(ng.NotFoundError, match="gather_grad takes"):
        ng.gather_grad((3,), [0], np.array([True]))
