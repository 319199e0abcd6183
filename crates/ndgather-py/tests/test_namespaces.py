"""Results in the namespace of their input (issue 55): every library of the array API through
its namespace's ``from_dlpack`` (here ``array_api_strict``, the standard's own minimal
namespace, whose arrays refuse to mix with NumPy's), and flat Arrow arrays of every type,
strings, binary and bool included, answered with an Arrow array of their type."""

import numpy as np
import pytest

import ndgather as ng

xp = pytest.importorskip("array_api_strict")
pa = pytest.importorskip("pyarrow")


def test_array_api_arrays_come_back_in_their_namespace():
    x = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=xp.float32)
    ids = xp.asarray([2, 0, 2])
    r = ng.gather(x, ids, axis=1)
    assert isinstance(r, type(x))
    # The namespace's own functions read it: the standard's take.
    assert bool(xp.all(r == xp.take(x, ids, axis=1)))
    assert r.dtype == xp.float32
    t = ng.take(x, xp.asarray([1]), axis=0)
    assert isinstance(t, type(x)) and bool(xp.all(t == x[1:2, :]))
    a = ng.take_along_axis(x, xp.asarray([[2], [0]]), axis=1)
    assert bool(xp.all(a == xp.asarray([[3.0], [4.0]], dtype=xp.float32)))
    s = ng.unsorted_segment_sum(x, xp.asarray([1, 1]), 2)
    assert isinstance(s, type(x)) and bool(xp.all(s[1, :] == x[0, :] + x[1, :]))


@pytest.mark.parametrize("values, arrow_type", [
    (["a", "bcd", "", "ef"], "string"),
    (["a", "bcd", "", "ef"], "large_string"),
    ([b"x", b"", b"yz\x00", b"w"], "binary"),
    ([True, False, False, True], "bool_"),
    ([1, -2, 3, 2**40], "int64"),
    ([0.5, -1.5, 2.0, 1e30], "float32"),
    ([1, 2, 3, 4], "uint8"),
    ([0, 10, 20, 30], "date32"),
])
def test_flat_arrow_arrays_of_every_type(values, arrow_type):
    a = pa.array(values, type=getattr(pa, arrow_type)())
    got = ng.gather(a, [3, 1, 1])
    assert isinstance(got, pa.Array) and got.type == a.type
    assert got.to_pylist() == a.take(pa.array([3, 1, 1])).to_pylist()


def test_arrow_nulls_move_with_their_slots():
    a = pa.array([1, None, 3], pa.int64())
    assert ng.gather(a, [1, 2, 1, 0]).to_pylist() == [None, 3, None, 1]
    s = pa.array(["x", None, "zz"])
    assert ng.gather(s, [2, 1], bad_indices="clamp").to_pylist() == ["zz", None]
    # A bad index under "fill" is a null, as an object array's default.
    assert ng.gather(s, [0, 9], bad_indices="fill").to_pylist() == ["x", None]


def test_the_issues_own_example_and_a_chunked_array():
    assert ng.gather(pa.array(["a", "bcd", "", "ef"]), [3, 1]).to_pylist() == ["ef", "bcd"]
    c = pa.chunked_array([["a", "b"], ["c"]])
    assert ng.gather(c, [2, 0]).to_pylist() == ["c", "a"]


def test_an_arrow_result_of_more_dimensions_is_numpy():
    got = ng.gather(pa.array([1.5, 2.5]), [[1], [0]])
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, [[2.5], [1.5]])


def test_arrow_types_numpy_cannot_take_are_read_as_objects():
    # pyarrow's own to_numpy stops the process on an interval array: never asked.
    a = pa.array([(1, 2, 3), None], pa.month_day_nano_interval())
    got = ng.gather(a, [1, 0])
    assert got.type == a.type and got.to_pylist() == [None, a[0].as_py()]
    # Nanosecond timestamps with nulls: NaT in NumPy, a null again in Arrow.
    t = pa.array([1, None, 3], pa.timestamp("ns"))
    got = ng.gather(t, [1, 2])
    assert got.type == t.type and got.cast(pa.int64()).to_pylist() == [None, 3]


def test_an_op_that_changes_the_kind_gives_the_type_pyarrow_infers():
    got = ng.unsorted_segment_mean(pa.array([1, 2, 4]), [0, 0, 1], 2)
    assert got.type == pa.float64() and got.to_pylist() == [1.5, 4.0]
