"""The core's gradient of any op by name (``_core.run_grad``) and attributes read from text
(``_core.text_attrs``): what PyTorch's custom ops call (``ndgather._torch``), checked here
with NumPy alone, hostile calls included."""

import numpy as np
import pytest

import ndgather as ng
from ndgather import _core

PARAMS = np.arange(12, dtype=np.float32).reshape(4, 3)
IDS = np.array([3, 1, 3])


def test_a_gathers_gradient_equals_its_registered_grad_op():
    out = ng.gather(PARAMS, IDS)
    up = np.arange(9, dtype=np.float32).reshape(3, 3)
    dparams, dids = _core.run_grad("gather", [PARAMS, IDS], out, up, [], [])
    assert dids is None
    np.testing.assert_array_equal(dparams, ng.gather_grad([4, 3], IDS, up))
    # Attributes as text, as the custom op carries them.
    out = ng.gather(PARAMS, np.array([5, 0]), axis=1, bad_indices="clamp")
    up = np.ones((4, 2), np.float32)
    (d, _) = _core.run_grad("gather", [PARAMS, np.array([5, 0])], out, up,
                            ["axis", "bad_indices"], ["1", "clamp"])
    np.testing.assert_array_equal(d[:, [0, 2]], np.ones((4, 2)))


def test_a_lookups_gradient_is_one_per_shard():
    # "div" over shards of 3 and 2 rows: ids 0-2 the first's, 3-4 the second's.
    first, second = PARAMS[:3], PARAMS[3:4].repeat(2, axis=0)
    ids = np.array([4, 0, 4, 2])
    attrs = (["partition_strategy"], ["div"])
    out = ng.embedding_lookup([first, second], ids, partition_strategy="div")
    up = np.arange(12, dtype=np.float32).reshape(4, 3)
    d_first, d_second, d_ids = _core.run_grad("embedding_lookup", [[first, second], ids],
                                              out, up, *attrs)
    want_first, want_second = np.zeros_like(first), np.zeros_like(second)
    np.add.at(want_first, [0, 2], up[[1, 3]])
    np.add.at(want_second, [1, 1], up[[0, 2]])
    np.testing.assert_array_equal(d_first, want_first)
    np.testing.assert_array_equal(d_second, want_second)
    assert d_ids is None
    # Each entry is the sparse gradient op's, made dense.
    sparse = ng.embedding_lookup_grad([first, second], ids, up, partition_strategy="div")
    for dense, (rows, values, shape) in zip([d_first, d_second], sparse):
        want = np.zeros(shape, np.float32)
        np.add.at(want, rows, values)
        np.testing.assert_array_equal(dense, want)


def test_a_max_reads_its_output():
    data = np.array([1.0, 5.0, 5.0, 2.0], np.float32)
    ids = np.array([0, 0, 0, 1])
    out = ng.unsorted_segment_max(data, ids, 2)
    (d, _) = _core.run_grad("unsorted_segment_max", [data, ids], out,
                            np.array([4.0, 1.0], np.float32), ["num_segments"], ["2"])
    # TensorFlow splits a tie's gradient evenly.
    np.testing.assert_array_equal(d, [0.0, 2.0, 2.0, 1.0])


def test_text_attrs_reads_each_kind():
    got = _core.text_attrs("gather", ["axis", "bad_indices", "fill_value"],
                           ["-1", "fill", "bytes:00c0"])
    assert got == {"axis": -1, "bad_indices": "fill", "fill_value": b"\x00\xc0"}
    got = _core.text_attrs("scatter_nd", ["shape"], ["4,2"])
    assert got == {"shape": [4, 2]}
    with pytest.raises(ValueError, match="2 attribute names but 1 values"):
        _core.text_attrs("gather", ["axis", "batch_dims"], ["1"])
    assert _core.grad_reads_output("unsorted_segment_max")
    assert not _core.grad_reads_output("gather")


def test_hostile_calls_are_errors():
    out = ng.gather(PARAMS, IDS)
    up = np.ones_like(out)
    with pytest.raises(ValueError, match='attribute "axis" takes an integer'):
        _core.run_grad("gather", [PARAMS, IDS], out, up, ["axis"], ["one"])
    with pytest.raises(ValueError, match="2 attribute names but 1 values"):
        _core.run_grad("gather", [PARAMS, IDS], out, up, ["axis", "x"], ["1"])
    with pytest.raises(ValueError, match="gather_nd"):
        _core.run_grad("gahter", [PARAMS, IDS], out, up, [], [])
    with pytest.raises(Exception, match="colour"):
        _core.run_grad("gather", [PARAMS, IDS], out, up, ["colour"], ["red"])
    with pytest.raises(Exception, match="put_along_axis has no registered gradient"):
        _core.run_grad("put_along_axis", [PARAMS, IDS[:, None], PARAMS[:3]], out, up,
                       ["axis"], ["0"])
    with pytest.raises(Exception):
        _core.run_grad("gather", [PARAMS], out, up, [], [])
    with pytest.raises(Exception):
        _core.run_grad("gather", [PARAMS, IDS], out, np.ones((2, 2), np.float32), [], [])
    with pytest.raises(TypeError):
        _core.run_grad("gather", [PARAMS, IDS.astype(">i8")], out, up, [], [])
    bad_bool = np.array([2], np.uint8).view(np.bool_)
    with pytest.raises(Exception):
        _core.run_grad("gather", [bad_bool, np.array([0])], bad_bool, bad_bool, [], [])


def test_the_frameworks_name_the_ops_with_a_gradient_from_the_registry():
    from ndgather import _staged_call
    message = _staged_call.no_grad("put_along_axis")
    assert message.startswith("put_along_axis has no gradient in ndgather (the ops with one: ")
    named = message.split(": ", 1)[1].rstrip(")").split(", ")
    assert {"gather", "embedding_lookup", "embedding_bag", "scatter_reduce", "scatter_nd",
            "gather_segment"} <= set(named)
    assert "put_along_axis" not in named and "embedding_lookup_sparse" not in named
    assert all(_core.op_has_grad(n) for n in named)


def test_where_an_op_is_linear_the_frameworks_forward_mode_reads():
    """The registry's fact (``OpDef::linear``) as the front ends read it: the inputs the op
    is linear in, and its tangent's attributes (a fill the policy writes has a zero
    tangent); ``None`` where it is not linear, under the attributes given."""
    assert _core.op_linear("gather") == ([0], {}, True)
    assert _core.op_linear("gather", {"bad_indices": "fill", "fill_value": 7.5}) == (
        [0], {"fill_value": 0}, True)
    assert _core.op_linear("tensor_scatter_nd_add") == ([0, 2], {}, True)
    # (TensorFlow's gradient of an update gives every repeated index the slice's gradient.)
    assert _core.op_linear("tensor_scatter_nd_update") == ([0, 2], {}, False)
    assert _core.op_linear("embedding_bag", {"mode": "sum"}) == ([0], {}, True)
    assert _core.op_linear("gather_grad", {"params_shape": [3, 2]}) == ([1], {}, True)
    for name, attrs in [("tensor_scatter_nd_max", {}), ("embedding_bag", {"mode": "max"}),
                        ("embedding_lookup", {"max_norm": 1.0}),
                        ("scatter_reduce", {"dim": 0, "reduce": "prod"}),
                        ("unsorted_segment_max", {"num_segments": 2})]:
        assert _core.op_linear(name, attrs) is None, name
    with pytest.raises(ValueError, match="gahter"):
        _core.op_linear("gahter")
    with pytest.raises(TypeError, match='"axis" expected an integer'):
        _core.op_linear("gather", {"axis": "one"})


def test_op_routed_is_the_registrys_fact():
    """``_core.op_routed``: where an op is not linear but each element moves at most one of
    the output's (a max, a min, a product), the linear op along the same routes, the
    attributes that differ, the inputs whose tangents it takes, and whether the factors are
    constant (a max's, not a product's); ``None`` for a linear op and for one that is
    neither, under the attributes given. ``_core.op_multilinear``: the groups of inputs a
    weighted sum is linear in apart."""
    assert _core.op_routed("unsorted_segment_max", {"num_segments": 2}) == (
        "unsorted_segment_sum", {}, [0], True)
    assert _core.op_routed("segment_prod") == ("segment_sum", {}, [0], False)
    assert _core.op_routed("tensor_scatter_nd_min") == (
        "tensor_scatter_nd_add", {}, [0, 2], True)
    assert _core.op_routed("scatter_reduce", {"dim": 0, "reduce": "amax"}) == (
        "scatter_reduce", {"reduce": "sum"}, [0, 2], True)
    assert _core.op_routed("scatter_reduce", {"dim": 0, "reduce": "prod",
                                              "include_self": False}) == (
        "scatter_reduce", {"reduce": "sum"}, [0, 2], False)
    for name, attrs in [("gather", {}), ("embedding_bag", {"mode": "max"}),
                        ("embedding_lookup", {"max_norm": 1.0}),
                        ("scatter_reduce", {"dim": 0, "reduce": "amax",
                                            "include_self": False}),
                        ("gather_segment", {"num_segments": 2, "reduce": "max"})]:
        assert _core.op_routed(name, attrs) is None, name
    with pytest.raises(ValueError, match="gahter"):
        _core.op_routed("gahter")
    with pytest.raises(TypeError, match='"dim" expected an integer'):
        _core.op_routed("scatter_reduce", {"dim": "one", "reduce": "amax"})
    assert _core.op_multilinear("embedding_bag", {"mode": "sum"}) == [([0], {}), ([3], {})]
    assert _core.op_multilinear("embedding_lookup_sparse", {"combiner": "sum"}) == [
        ([0], {}), ([4], {})]
    for name, attrs in [("gather", {}), ("embedding_bag", {"mode": "mean"}),
                        ("embedding_bag", {"mode": "sum", "max_norm": 1.0}),
                        ("embedding_lookup_sparse", {"combiner": "mean"})]:
        assert _core.op_multilinear(name, attrs) == [], name
