"""ng.put_along_axis against numpy.put_along_axis itself, on the same arrays: dtypes outside
the committed case file, layouts, NumPy's exception classes, nothing written on error."""
import numpy as np
import pytest

import ndgather as ng


@pytest.mark.parametrize("dtype", ["datetime64[s]", "m8[ms]", np.uint16])
def test_dtypes_outside_the_case_file(dtype):
    # The committed case file (test_scatter_reduce.py reads it) holds NumPy's results for
    # the table's dtypes; these are moved as plain units of their size.
    arr = np.arange(12).astype(dtype).reshape(3, 4)
    indices, values = np.array([[0, 3], [1, 1], [-1, 2]]), np.arange(6).astype(dtype)
    want = arr.copy()
    np.put_along_axis(want, indices, values.reshape(3, 2), 1)
    ng.put_along_axis(arr, indices, values.reshape(3, 2), 1)
    assert np.array_equal(arr, want)


def test_axis_none_and_a_transposed_array():
    a = np.arange(12.0).reshape(3, 4).T
    want = a.copy()
    np.put_along_axis(want, np.array([1, 5, -1]), np.array([-1.0, -2.0, -3.0]), None)
    ng.put_along_axis(a, np.array([1, 5, -1]), np.array([-1.0, -2.0, -3.0]), None)
    assert np.array_equal(a, want)


def test_numpys_errors_and_nothing_written():
    a = np.arange(6).reshape(2, 3)
    before = a.copy()
    with pytest.raises(IndexError):
        np.put_along_axis(a.copy(), np.array([[0], [3]]), 1, axis=1)
    with pytest.raises(IndexError, match=r"indices\[1,0\] = 3 is not in \[0, 3\)"):
        ng.put_along_axis(a, np.array([[0], [3]]), 1, axis=1)
    assert np.array_equal(a, before)
    with pytest.raises(ValueError):
        ng.put_along_axis(a, np.array([0, 1]), 1, axis=1)
    with pytest.raises(ValueError, match="could not be broadcast"):
        ng.put_along_axis(a, np.array([[0, 1], [1, 2]]), np.array([1, 2, 3]), axis=1)
    assert np.array_equal(a, before)
    with pytest.raises(IndexError, match="^`indices` must be an integer array$"):  # NumPy's
        ng.put_along_axis(a, np.array([[0.5]]), 1, axis=1)


def test_policies_and_memmap(tmp_path):
    a = np.zeros(4, np.int64)
    ng.put_along_axis(a, np.array([1, 9]), np.array([5, 6]), 0, bad_indices="ignore")
    assert a.tolist() == [0, 5, 0, 0]
    ng.put_along_axis(a, np.array([9]), np.array([7]), 0, bad_indices="clamp")
    assert a.tolist() == [0, 5, 0, 7]
    path = tmp_path / "t.npy"
    np.save(path, np.zeros((2, 3), np.float32))
    m = np.load(path, mmap_mode="r+")
    ng.put_along_axis(m, np.array([[2], [0]]), np.float32(4), axis=1)
    m.flush()
    del m
    assert np.load(path).tolist() == [[0, 0, 4], [4, 0, 0]]


def test_values_that_cannot_be_cast_come_after_numpys_index_checks():
    """NumPy checks the axis and the indices before it reads a value; a value it cannot
    cast is the error only where those pass. Nothing is written either way."""
    cases = [(np.array([[0.5]]), "abc", 1), (np.array([[0]]), None, 7),
             (np.array([[0]]), "abc", 1), (np.array([[9]]), "abc", 1),
             (np.array([0, 1]), "abc", 1), (np.zeros((2, 0), np.intp), "abc", 1)]
    for indices, values, axis in cases:
        a, b = np.zeros((2, 3), int), np.zeros((2, 3), int)
        with pytest.raises(Exception) as ours:
            ng.put_along_axis(a, indices, values, axis)
        with pytest.raises(Exception) as numpys:
            np.put_along_axis(b, indices, values, axis)
        assert isinstance(ours.value, type(numpys.value)), (ours.value, numpys.value)
        assert not a.any()


def test_by_name_a_dtype_outside_the_table_moves_only_through_moved_inputs():
    # put_along_axis moves its values without reading them: datetimes and objects go in as
    # units of their size (objects with their references counted).
    a = np.arange(4).astype("datetime64[s]")
    v = np.array(["2001-01-01"], dtype="datetime64[s]")
    ng._core.run_op("put_along_axis", [None, np.array([2]), v], {"axis": 0}, a, True)
    assert a[2] == v[0] and a[0] == np.datetime64(0, "s")
    flags = np.zeros(5, dtype=bool)
    ng.put_along_axis(flags, np.array([1, 3]), True, axis=0)
    assert flags.tolist() == [False, True, False, True, False]


OBJECTS = lambda: np.array([1, 2, 3], dtype=object)  # noqa: E731
DATES = lambda: np.arange(3).astype("datetime64[s]")  # noqa: E731


@pytest.mark.parametrize("target", [OBJECTS, DATES], ids=["objects", "datetimes"])
@pytest.mark.parametrize("op", ["tensor_scatter_nd_update", "tensor_scatter_nd_add",
                                "tensor_scatter_nd_max", "put_along_axis", "scatter_reduce"])
def test_integers_never_go_into_objects_or_datetimes(target, op):
    # An op that reads or combines its updates takes no array the core cannot read, and
    # one that moves them takes only the target's own dtype: uint64 "updates" into objects
    # would be stored as addresses.
    t = target()
    before = t.copy()
    u64 = np.array([1], dtype=np.uint64)
    inputs = {"put_along_axis": [None, np.array([0]), u64],
              "scatter_reduce": [None, np.array([0]), u64]}.get(op, [None, np.array([[0]]), u64])
    attrs = {"put_along_axis": {"axis": 0},
             "scatter_reduce": {"dim": 0, "reduce": "sum"}}.get(op)
    with pytest.raises(TypeError):
        ng._core.run_op(op, inputs, attrs, t, True)
    assert t.tolist() == before.tolist()
    # The same dtype into a reading op is refused too.
    if op != "put_along_axis":
        with pytest.raises(TypeError):
            ng._core.run_op(op, inputs[:2] + [t[:1].copy()], attrs, t, True)
        assert t.tolist() == before.tolist()


def test_indices_of_strings_get_numpys_errors():
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match="must be an integer array"):
        ng.put_along_axis(a, np.array([["a"]]), 1.0, axis=1)
    with pytest.raises(np.exceptions.AxisError):
        ng.put_along_axis(a, np.array([["a"]]), 1.0, axis=5)
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_indices_of_the_targets_own_dtype_are_not_read_as_integers():
    flags = np.zeros(3, dtype=bool)
    with pytest.raises(IndexError):
        ng.put_along_axis(flags, np.array([True]), True, axis=0)
    assert not flags.any()
    objs = np.array([1, 2, 3], dtype=object)
    for indices in (np.array(["a"]), np.array([0], dtype=object)):
        with pytest.raises(IndexError, match="must be an integer array"):
            ng.put_along_axis(objs, indices, 5, axis=0)
    assert objs.tolist() == [1, 2, 3]
    # Integers of the other byte order are integers: the door says what it lacks.
    a = np.zeros(3)
    with pytest.raises(TypeError, match="byte order"):
        ng._core.run_op("put_along_axis", [None, np.array([0], ">i8"), np.ones(1)],
                        {"axis": 0}, a, True)


def test_a_void_subclass_named_like_a_number_is_not_that_number():
    # NumPy names np.void subclasses after the class: this dtype is "float64" and holds a
    # Python object, which must never be read or written as a float.
    class float(np.void):  # noqa: A001
        pass

    dt = np.dtype((float, [("a", "O")]))
    assert dt.name == "float64" and dt.hasobject
    t = np.zeros(2, dtype=dt)
    t["a"] = [object(), object()]
    before = [id(x) for x in t["a"]]
    with pytest.raises(TypeError):
        ng._core.run_op("tensor_scatter_nd_update",
                        [None, np.array([[0]]), np.array([1.5])], None, t, True)
    with pytest.raises(TypeError):
        ng._core.run_op("put_along_axis", [None, np.array([0]), np.array([1.5])],
                        {"axis": 0}, t, True)
    assert [id(x) for x in t["a"]] == before
    ints = np.dtype((type("int", (np.void,), {}), [("a", "O")]))
    with pytest.raises((TypeError, IndexError)):
        ng.gather(np.arange(3.0), np.zeros(1, dtype=ints))
