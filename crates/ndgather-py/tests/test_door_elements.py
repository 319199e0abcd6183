"""The ops that move elements by name through the one door (`_core.run_op`): params of any
NumPy dtype (records, strings, datetimes, other byte orders, objects) lent as bytes, and the
same results, errors and reference counts as the functions `ng.gather`, `ng.gather_nd` and
`ng.take_along_axis`."""
import sys

import numpy as np
import pytest

import ndgather as ng

run_op = ng._core.run_op

PARAMS = [
    np.arange(12, dtype="f4").reshape(4, 3),
    np.arange(12, dtype=">i8").reshape(4, 3),
    np.array([["ab", "c", "def"]] * 4, dtype="U3"),
    np.array([[b"x", b"yz", b""]] * 4, dtype="S2"),
    np.arange(12).astype("datetime64[s]").reshape(4, 3),
    np.zeros((4, 3), dtype=[("a", "u1"), ("b", "<f8")]),
    np.arange(24, dtype="u1").reshape(4, 6)[:, ::2],
    np.arange(12, dtype="c8").reshape(4, 3)[::-1],
]


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: str(p.dtype))
def test_the_door_gathers_any_dtype_as_the_functions_do(params):
    indices = np.array([3, 0, 3])
    got = run_op("gather", [params, indices])
    assert got.dtype == params.dtype and got.tobytes() == np.take(params, indices, 0).tobytes()
    # A small contiguous call is written into an array NumPy allocated (no Rust owner).
    assert got.base is None or not params.flags.c_contiguous
    got = run_op("gather", [params, np.array([2, 0])], {"axis": 1})
    assert got.tobytes() == ng.gather(params, [2, 0], axis=1).tobytes()
    got = run_op("gather_nd", [params, np.array([[1, 2], [3, 0]])])
    assert got.tobytes() == ng.gather_nd(params, [[1, 2], [3, 0]]).tobytes()
    along = np.array([[2, 1, 0]] * 4)
    got = run_op("take_along_axis", [params, along], {"axis": 1})
    assert got.tobytes() == np.take_along_axis(params, along, 1).tobytes()
    out = np.empty((3, 3), params.dtype)
    assert run_op("gather", [params, indices], out=out) is None
    assert out.tobytes() == np.take(params, indices, 0).tobytes()


def test_the_fill_policy_settles_by_the_dtype():
    f = np.arange(4, dtype="f4")
    got = run_op("gather", [f, np.array([1, 9])], {"bad_indices": "fill"})
    assert got[0] == 1 and np.isnan(got[1])
    got = run_op("gather", [f, np.array([9])], {"bad_indices": "fill", "fill_value": -2.5})
    assert got.tolist() == [-2.5]
    swapped = np.arange(4, dtype=">f8")
    got = run_op("gather", [swapped, np.array([9])], {"bad_indices": "fill"})
    assert got.dtype == swapped.dtype and np.isnan(got[0])
    strings = np.array(["ab", "c"])
    got = run_op("gather", [strings, np.array([1, 5])], {"bad_indices": "fill"})
    assert got.tolist() == ["c", ""]
    with pytest.raises(ValueError, match="at most 16 are supported"):
        run_op("gather", [np.zeros(2, "U5"), np.array([0])],
               {"bad_indices": "fill", "fill_value": b"x" * 20})


def test_objects_keep_their_counts_and_refuse_what_holds_them_among_bytes():
    token = object()
    params = np.array([token, None, "s"], dtype=object)
    before = sys.getrefcount(token)
    got = run_op("gather", [params, np.array([0, 0, 2])])
    assert got.tolist() == [token, token, "s"]
    assert sys.getrefcount(token) == before + 2
    del got
    assert sys.getrefcount(token) == before
    got = run_op("gather", [params, np.array([0, 7])], {"bad_indices": "fill"})
    assert got.tolist() == [token, None]
    with pytest.raises(TypeError, match="holds Python objects"):
        run_op("gather", [np.zeros(2, dtype=[("o", "O"), ("i", "i4")]), np.array([0])])
    with pytest.raises(TypeError, match="fill_value is not supported"):
        run_op("gather", [params, np.array([0])], {"bad_indices": "fill", "fill_value": 1})


def test_the_doors_errors_are_the_functions():
    p = np.arange(6, dtype="f4").reshape(3, 2)
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 3\)"):
        run_op("gather", [p, np.array([0, 5])])
    with pytest.raises(TypeError, match="indices must be an array of integers"):
        run_op("gather", [p, np.array(["a"])])
    with pytest.raises(TypeError, match="indices must be an array of integers"):
        run_op("gather", [p, np.array([0.5])])
    with pytest.raises(IndexError, match="`indices` must be an integer array"):
        run_op("take_along_axis", [p, np.array([["x"]])], {"axis": 1})
    with pytest.raises(TypeError, match="out has dtype float64"):
        run_op("gather", [p, np.array([0])], out=np.empty((1, 2)))
    with pytest.raises(ValueError, match="shares memory"):
        run_op("gather", [p, np.array([0])], out=p[:1])
    with pytest.raises(ValueError, match="read-only"):
        out = np.empty((1, 2), "f4")
        out.flags.writeable = False
        run_op("gather", [p, np.array([0])], out=out)
    with pytest.raises(ng.InvalidArgumentError, match="only the ops that write into a tensor"):
        run_op("gather", [p, np.array([0])], out=np.empty((1, 2), "f4"), in_place=True)
    # A refused out is unchanged.
    out = np.full((2, 2), 7, "f4")
    with pytest.raises(ng.InvalidArgumentError):
        run_op("gather", [p, np.array([0, 9])], out=out)
    assert (out == 7).all()


@pytest.mark.parametrize("params", PARAMS[:6], ids=lambda p: str(p.dtype))
def test_a_ragged_operand_through_the_door_gathers_any_dtype(params):
    # params' rows 0..3 as a ragged tensor of rows [0], [1, 2], [], [3]
    ragged = {"values": params, "row_splits": [np.array([0, 1, 3, 3, 4])]}
    values, splits = run_op("gather", [ragged, np.array([1, 3, 1])])
    assert values.dtype == params.dtype
    assert values.tobytes() == params[[1, 2, 3, 1, 2]].tobytes()
    assert [s.tolist() for s in splits] == [[0, 2, 3, 5]]
    # ragged indices into dense params: a ragged result of params' rows
    idx = {"values": np.array([3, 0, 0]), "row_splits": [np.array([0, 1, 3], dtype="i4")]}
    values, splits = run_op("gather", [params, idx])
    assert values.tobytes() == params[[3, 0, 0]].tobytes()
    assert [s.tolist() for s in splits] == [[0, 1, 3]]


def test_ragged_objects_keep_their_counts():
    item = object()
    params = np.array([item, None, item], dtype=object)
    before = sys.getrefcount(item)
    values, _ = run_op("gather", [{"values": params, "row_splits": [np.array([0, 2, 3])]},
                                  np.array([1, 0, 1])])
    assert list(values) == [item, item, None, item]
    assert sys.getrefcount(item) == before + 3
    del values
    assert sys.getrefcount(item) == before


@pytest.mark.parametrize("bad", [
    {"row_splits": [np.array([0, 1])]},                      # no values
    {"values": np.zeros(1)},                                 # no row_splits
    {"values": [1.0], "row_splits": [np.array([0, 1])]},     # values not an array
    {"values": np.zeros(1), "row_splits": 3},                # splits not a sequence
    {"values": np.zeros(1), "row_splits": [[0, 1]]},         # a split not an array
])
def test_a_malformed_ragged_operand_is_a_type_error(bad):
    with pytest.raises(TypeError, match="ragged params is a dict"):
        run_op("gather", [bad, np.array([0])])


@pytest.mark.parametrize("splits", [
    np.array([0.0, 1.0]), np.array([[0, 1]]), np.array([0, 5, 1, 0])[::2],
    np.array([0, 2]),  # past the values' rows
    np.array([1, 1]),  # not starting at 0
])
def test_bad_row_splits_are_refused_before_anything_runs(splits):
    for call in (
        lambda: run_op("gather", [{"values": np.zeros(1), "row_splits": [splits]},
                                  np.array([0])]),
        lambda: run_op("gather_grad", [np.array([0]), np.ones(1), [splits]],
                       {"params_shape": [1]}),
    ):
        with pytest.raises((TypeError, ValueError)) as e:
            call()
        assert "internal" not in str(e.value), e.value


def test_a_ragged_result_goes_into_no_out_buffer():
    ragged = {"values": np.zeros(3), "row_splits": [np.array([0, 1, 3])]}
    with pytest.raises(ValueError, match="out is not taken"):
        run_op("gather", [ragged, np.array([0])], out=np.zeros(1))


def test_the_lookups_gradients_by_name_are_the_functions():
    table = np.arange(6.0).reshape(3, 2)
    shards = [table[0::2], table[1::2]]
    grad = np.arange(6.0).reshape(3, 2)
    by_name = run_op("embedding_lookup_grad", [shards, np.array([2, 1, 2]), grad])
    functions = ng.embedding_lookup_grad(shards, [2, 1, 2], grad)
    assert len(by_name) == len(functions) == 2
    for (i, v, s), (fi, fv, fs) in zip(by_name, functions):
        assert i.tolist() == fi.tolist() and v.tobytes() == fv.tobytes() and s == fs
    assert by_name[1][0].tolist() == [0] and by_name[1][2] == [1, 2]
    dense = ng.embedding_bag_grad(table, [0, 2, 2], [0, 1], np.ones((2, 2)), mode="sum")
    assert [d.tolist() for d in dense] == [[[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]]
    with pytest.raises(ValueError, match="several tensors"):
        run_op("embedding_lookup_grad", [shards, np.array([0]), np.ones((1, 2))],
               out=np.zeros((1, 2)))


def test_ragged_gather_grad_of_dense_operands_is_still_sparse():
    # An Arrow fixed-size list or a plain array: both operands dense, IndexedSlices back.
    rows, values, shape = ng.ragged_gather_grad(np.array([1.0, 2.0, 3.0]), [1, 1, 0],
                                                np.ones(3))
    assert rows.tolist() == [1, 1, 0] and values.tolist() == [1.0] * 3 and shape == [3]
    # The same through gather_grad: an empty splits list asks for the sparse form.
    rows, _, shape = ng.gather_grad([1], [0, 0], np.ones(2), params_row_splits=[])
    assert rows.tolist() == [0, 0] and shape == [1]
    assert ng.gather_grad([1], [0, 0], np.ones(2)).tolist() == [2.0]


def test_a_ragged_gradient_of_an_overflowing_shape_is_an_error():
    with pytest.raises(ng.InvalidArgumentError):
        ng.gather_grad([2**40, 2**40], [0], np.ones(1), params_row_splits=[[0, 1]])


def test_ragged_operands_must_be_arrays_or_ragged_dicts():
    ragged = {"values": np.array([0]), "row_splits": [np.array([0, 1])]}
    for bad in ([None, ragged], [[], ragged], [ragged, None]):
        with pytest.raises((TypeError, ValueError)) as e:
            run_op("gather", bad)
        assert "internal" not in str(e.value)


class _Index:
    """An integer that is no Python int (NumPy's scalars and others with ``__index__``)."""

    def __index__(self) -> int:
        return 1


def test_attributes_of_every_python_kind_read_as_the_op_takes_them():
    # The door reads Python's own types on a fast path, and anything else by its protocol:
    # both must give the same op.
    data = np.arange(8, dtype="f4").reshape(4, 2)
    ids = np.array([0, 1, 0, 1])
    want = run_op("unsorted_segment_sum", [data, ids], {"num_segments": 2})
    for n in (2, np.int64(2), np.uint8(2)):
        got = run_op("unsorted_segment_sum", (data, ids), {"num_segments": n})
        np.testing.assert_array_equal(got, want)
    grad = np.ones((2, 2), "f4")
    class Shape(list):
        pass

    for shape in ([4, 2], (4, 2), [np.int64(4), 2], Shape([4, 2]), np.array([4, 2])):
        got = run_op("gather_grad", [np.array([3, 1]), grad, None], {"params_shape": shape})
        assert got.shape == (4, 2) and got[3].tolist() == [1, 1] and got[0].tolist() == [0, 0]
    taken = run_op("take_along_axis", [data, np.array([[1], [0], [1], [0]])], {"axis": _Index()})
    np.testing.assert_array_equal(taken[:, 0], [1, 2, 5, 6])
    # A choice given as a str subclass is still the choice.
    policy = type("Policy", (str,), {})("ignore")
    got = run_op("unsorted_segment_sum", [data, np.array([0, 9, 0, 1])],
                 {"num_segments": 2, "bad_indices": policy})
    np.testing.assert_array_equal(got, [[4, 6], [6, 7]])
    with pytest.raises(ng.InvalidArgumentError, match="bad_indices"):
        run_op("unsorted_segment_sum", [data, ids], {"num_segments": 2, "bad_indices": "nope"})
    with pytest.raises(TypeError, match="params_shape"):
        run_op("gather_grad", [np.array([3]), grad[:1], None], {"params_shape": [4, "2"]})
    with pytest.raises(OverflowError, match="int64"):
        run_op("unsorted_segment_sum", [data, ids], {"num_segments": 2**70})
    with pytest.raises(ng.InvalidArgumentError, match="unknown attribute"):
        run_op("unsorted_segment_sum", [data, ids], {"num_segments": 2, "nope": 1.5})


def test_inputs_are_a_list_or_tuple():
    data = np.arange(4, dtype="f4")
    with pytest.raises(TypeError, match="inputs must be a list"):
        run_op("segment_sum", data)
    with pytest.raises(TypeError, match="inputs must be a list"):
        run_op("segment_sum", iter([data, np.array([0, 0, 1, 1])]))
    np.testing.assert_array_equal(run_op("segment_sum", (data, np.array([0, 0, 1, 1]))), [1, 5])


def test_bool_inputs_each_read_from_their_own_copy():
    # Two bool arrays with a non-bool between them: each view must be made from its own
    # checked copy (a swap would write the tensor's values as the updates).
    tensor = np.array([True, False, True, False])
    updates = np.array([False, True])
    got = run_op("tensor_scatter_nd_update", [tensor, np.array([[0], [1]]), updates])
    np.testing.assert_array_equal(got, [False, True, True, False])
    assert got.dtype == bool
