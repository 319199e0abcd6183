"""ng.gather / ng.gather_nd against NumPy over every kind of dtype and memory layout, every
bad-index policy, and out= of any layout."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

DTYPES = ["?", "i1", "u1", "i2", "u2", ">i2", "i4", "u4", "<i8", ">u8", "f2", "f4", ">f4", "f8",
          "c8", "c16", ">c16", "S1", "S5", "U1", "U3", "M8[ns]", "m8[s]", "V7", "V16",
          [("a", "i1"), ("b", "<f4")], [("x", "u2"), ("y", "S3")], ml_dtypes.bfloat16, "O"]
INDEX_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", ">i4"]


def make(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    n = int(np.prod(shape))
    if d.kind == "O":
        return np.array([bytes(rng.integers(97, 123, size=rng.integers(0, 6)).astype(np.uint8))
                         for _ in range(n)], dtype=object).reshape(shape)
    return np.frombuffer(rng.bytes(n * d.itemsize), dtype=d).reshape(shape).copy()


def layouts(a):
    """The same logical array in several memory layouts (all views, no copies)."""
    yield "C", a
    yield "F", np.asfortranarray(a)
    yield "transposed", a.transpose(2, 0, 1)
    yield "strided", a[::2, :, 1:]
    yield "negative", a[::-1, :, ::-2]
    big = np.zeros((a.shape[0], a.shape[1] * 2, a.shape[2] + 1), dtype=a.dtype)
    big[:, ::2, :-1] = a
    yield "padded", big[:, ::2, :-1]
    if a.dtype.itemsize > 1 and a.dtype.kind != "O":
        raw = np.zeros(a.nbytes + 1, dtype=np.uint8)[1:]  # misaligned
        m = raw.view(a.dtype).reshape(a.shape)
        m[...] = a
        yield "misaligned", m


def same(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
    if x.dtype.kind == "O":
        assert x.tolist() == y.tolist()
    else:
        assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_equals_np_take_for_every_dtype_and_layout(dtype):
    base = make(dtype, (6, 5, 4))
    rng = np.random.default_rng(1)
    for name, params in layouts(base):
        for axis in range(3):
            idx = rng.integers(0, params.shape[axis], size=(3, 2))
            expected = np.take(params, idx, axis=axis)
            same(ng.gather(params, idx, axis=axis), expected)
            out = np.empty(expected.shape[::-1], dtype=params.dtype).T  # Fortran-ordered out
            assert ng.gather(params, idx, axis=axis, out=out) is out
            same(out, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_nd_equals_numpy_indexing(dtype):
    base = make(dtype, (6, 5, 4))
    rng = np.random.default_rng(2)
    for name, params in layouts(base):
        for depth in range(1, 4):
            idx = np.stack([rng.integers(0, params.shape[k], size=(2, 3)) for k in range(depth)], -1)
            expected = params[tuple(np.moveaxis(idx, -1, 0))]
            same(ng.gather_nd(params, idx), expected)
            out = np.empty_like(expected)
            ng.gather_nd(params, idx, out=out)
            same(out, expected)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_every_integer_index_dtype(index_dtype):
    params = make("f4", (7, 7))
    idx = np.array([[6, 0], [3, 3]], dtype=index_dtype)
    wide = idx.astype(np.int64)
    same(ng.gather(params, idx), np.take(params, wide, axis=0))
    same(ng.gather_nd(params, idx), params[wide[..., 0], wide[..., 1]])


def reference(params, indices, axis, policy):
    """An obviously correct gather under a bad-index policy (1 index at a time)."""
    n = params.shape[axis]
    out = []
    for i in indices.ravel().tolist():
        if 0 <= i < n:
            out.append(np.take(params, i, axis=axis))
        elif policy == "ignore":
            out.append(np.zeros_like(np.take(params, 0, axis=axis)))
        elif policy == "clamp":
            out.append(np.take(params, min(max(i, 0), n - 1), axis=axis))
        elif policy == "negative" and -n <= i < 0:
            out.append(np.take(params, i + n, axis=axis))
        elif policy == "wrap" and n > 0:
            out.append(np.take(params, i % n, axis=axis))
        else:
            return None
    stacked = np.stack(out, axis=axis) if out else np.take(params, indices.ravel(), axis=axis)
    return stacked.reshape(params.shape[:axis] + indices.shape + params.shape[axis + 1:])


@pytest.mark.parametrize("policy", ["error", "ignore", "clamp", "negative", "wrap"])
def test_policies_against_a_reference(policy):
    rng = np.random.default_rng(3)
    for trial in range(60):
        params = make(["i4", "f8", "U2", "c8"][trial % 4], (4, 5, 3), seed=trial)
        axis = trial % 3
        n = params.shape[axis]
        idx = rng.integers(-n - 2, n + 2, size=rng.integers(0, 4, size=2))
        want = reference(params, idx, axis, policy)
        if want is None:
            with pytest.raises(ng.InvalidArgumentError, match=r"is not in \[0, "):
                ng.gather(params, idx, axis=axis, bad_indices=policy)
        else:
            same(ng.gather(params, idx, axis=axis, bad_indices=policy), want)


def test_ignore_gives_none_in_object_arrays_and_empty_strings():
    objs = np.array([b"a", b"bb"], dtype=object)
    assert ng.gather(objs, [1, 5, 0], bad_indices="ignore").tolist() == [b"bb", None, b"a"]
    strs = np.array(["ab", "c"])
    assert ng.gather(strs, [7, 0], bad_indices="ignore").tolist() == ["", "ab"]


def test_object_results_hold_the_same_objects_with_references():
    import sys
    item = object()
    params = np.array([item, None], dtype=object)
    before = sys.getrefcount(item)
    out = ng.gather(params, [0, 0, 0])
    assert all(x is item for x in out)
    assert sys.getrefcount(item) == before + 3
    target = np.array([1, 2, 3], dtype=object)
    ng.gather(params, [1, 0, 0], out=target)
    assert target[0] is None and target[1] is item
    del out, target
    assert sys.getrefcount(item) == before


def test_object_results_into_a_target_that_is_not_c_ordered():
    """A fresh object output is stored as one flat run of slots; a caller's target in
    another order is walked in its logical order, with the same reference counting."""
    import sys
    item = object()
    params = np.array([b"a", item, None], dtype=object)
    target = np.full((3, 2), b"old", dtype=object).T
    assert not target.flags.c_contiguous
    before = sys.getrefcount(item)
    ng.gather(params, [[0, 1, 2], [1, 1, 0]], out=target)
    assert target.tolist() == [[b"a", item, None], [item, item, b"a"]]
    assert sys.getrefcount(item) == before + 3

def test_nested_lists_and_scalars_as_numpy_asarray_reads_them():
    assert ng.gather(["p0", "p1", "p2", "p3"], [2, 0]).tolist() == ["p2", "p0"]
    assert ng.gather([1.5, 2.5], 1).shape == ()
    assert ng.gather(np.arange(3), []).shape == (0,)


# Small calls get an array NumPy allocates (the core's small-call path); large ones the
# core's own buffer.
@pytest.mark.parametrize("rows", [4, 100_000])
def test_result_owns_its_buffer_and_is_writeable(rows):
    params = np.arange(rows * 3.0).reshape(rows, 3)
    out = ng.gather(params, np.array([3, 1] * (rows // 4)))
    assert out.flags.c_contiguous and out.flags.writeable and out.flags.aligned
    out[0, 0] = -1
    assert params[3, 0] == 9.0
    view = out[1]
    del out
    assert view.tolist() == [3.0, 4.0, 5.0]


def test_empty_and_zero_size_elements():
    same(ng.gather(np.zeros((0, 3), "f4"), np.zeros((0,), "i4")), np.zeros((0, 3), "f4"))
    same(ng.gather(np.zeros((4, 0)), [3, 1]), np.zeros((2, 0)))
    zero_width = np.zeros(3, dtype=[])
    assert ng.gather(zero_width, [2, 0]).shape == (2,)
    # Elements of itemsize 0 make an empty output, whose copy reads no index: a bad index is
    # still an error, fresh or into a buffer, as NumPy's take_along_axis refuses it.
    for dtype in [[], "V0"]:
        params = np.zeros(3, dtype=dtype)
        for call in [
            lambda: ng.gather(params, [1, 5]),
            lambda: ng.gather(params, [1, 5], out=np.zeros(2, dtype=dtype)),
            lambda: ng.gather_nd(params, [[1], [5]]),
            lambda: ng.take_along_axis(params, np.array([1, 5]), 0),
        ]:
            with pytest.raises(ng.InvalidArgumentError, match="5"):
                call()


def test_empty_arrays_at_any_address_and_shape():
    # NumPy calls an empty array aligned whatever its address (a slice of a byte buffer, as
    # pickle and Dask make them); its zero lengths may sit between longer axes. Both once
    # broke a precondition of ndarray's views (seen only with debug assertions on, as in the
    # test command's `ci` build).
    raw = np.zeros(17, np.uint8)
    for dtype in ["i4", "i8", "u2"]:
        empty = raw[1:1 + np.dtype(dtype).itemsize].view(dtype)[:0]
        same(ng.gather(np.arange(5.0), empty), np.zeros((0,)))
        same(ng.gather_nd(np.arange(5.0), empty.reshape(0, 1)), np.zeros((0,)))
    for dtype in ["f4", "O", "S3"]:
        params = np.zeros((3, 4, 0, 1, 1), dtype)
        same(ng.gather(params, np.zeros((1, 0, 4), "i8"), axis=3),
             np.zeros((3, 4, 0, 1, 0, 4, 1), dtype))
        out = np.zeros((3, 4, 0, 2, 1), dtype)
        assert ng.gather(params, [0, 0], axis=3, out=out) is out


def test_empty_params_of_any_strides_give_the_ops_error():
    # An empty array's strides may be anything (here 7 bytes apart, from an odd address):
    # no element is read, so they never make an internal error.
    buf = np.zeros(16, np.uint8)
    for dtype in ["V6", "S6", "i2"]:
        itemsize = np.dtype(dtype).itemsize
        params = np.ndarray((0, 3), dtype, buffer=buf, offset=1, strides=(21, itemsize + 1))
        with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0\] = 0 is not in \[0, 0\)"):
            ng.gather(params, [0])
        same(ng.gather(params, np.zeros(0, "i8"), axis=1), np.zeros((0, 0), dtype))


def misaligned(values, dtype):
    """`values` in a C-ordered array of `dtype` one byte past an aligned address."""
    values = np.asarray(values, dtype)
    m = np.zeros(values.nbytes + 1, np.uint8)[1:].view(dtype).reshape(values.shape)
    m[...] = values
    assert not m.flags.aligned and m.flags.c_contiguous
    return m


def test_misaligned_indices_and_numbers_are_read_right():
    # np.ascontiguousarray keeps such an array as it is (it is contiguous): the package must
    # copy it to an aligned one before the extension views it.
    idx = misaligned([2, 0, 1], "i8")
    same(ng.gather(np.arange(5.0), idx), np.array([2.0, 0.0, 1.0]))
    same(ng.gather_nd(np.arange(5.0), idx.reshape(3, 1)), np.array([2.0, 0.0, 1.0]))
    grad = misaligned([1.0, 2.0, 3.0], "f8")
    same(ng.gather_grad([4], idx, grad), np.array([2.0, 3.0, 1.0, 0.0]))
    same(ng.embedding_lookup_grad(np.zeros((3, 1)), idx, misaligned([[1.0]] * 3, "f8"))[0][1],
         np.ones((3, 1)))
    # A lookup of one NumPy table and ids: misaligned or big-endian, read right.
    table = np.arange(6.0).reshape(3, 2)
    same(ng.embedding_lookup(misaligned(table, "f8"), idx), table[[2, 0, 1]])
    same(ng.embedding_lookup(table.astype(">f8"), idx.astype(">i8")), table[[2, 0, 1]])
    bags = np.array([[2, 0], [1, 1]])
    want = ng.embedding_bag(table, bags, mode="sum")
    same(want, np.array([[4.0, 6.0], [4.0, 6.0]]))
    same(ng.embedding_bag(misaligned(table, "f8"), misaligned(bags, "i8"), mode="sum"), want)
    same(ng.embedding_bag(table.astype(">f8"), bags.astype(">i8"), mode="sum"), want)
