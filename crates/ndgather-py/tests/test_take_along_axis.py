"""ng.take_along_axis against numpy.take_along_axis, bit for bit: every kind of dtype and
layout, broadcasting both ways, every axis; the policies; errors; out=; the gradient against
numpy.add.at."""
import itertools

import numpy as np
import pytest

import ndgather as ng
from test_dtypes_layouts import DTYPES, INDEX_DTYPES, layouts, make


def same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if a.dtype.kind == "O":
        assert a.tolist() == b.tolist()
    else:
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_layout_like_numpy(dtype):
    a = make(dtype, (4, 6, 5), seed=1)
    rng = np.random.default_rng(2)
    for (name, view), axis in itertools.product(layouts(a), range(3)):
        shape = list(view.shape)
        shape[axis] = 7
        idx = rng.integers(0, view.shape[axis], size=shape)
        same(ng.take_along_axis(view, idx, axis), np.take_along_axis(view, idx, axis))
        same(ng.take_along_axis(view, idx, axis - 3), np.take_along_axis(view, idx, axis))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_broadcasting_both_ways_and_every_index_dtype(index_dtype):
    rng = np.random.default_rng(3)
    for trial in range(200):
        rank = rng.integers(1, 5)
        arr_shape = rng.integers(1, 5, size=rank)
        idx_shape = arr_shape.copy()
        axis = int(rng.integers(0, rank))
        for d in range(rank):
            r = rng.integers(0, 4)
            if d == axis:
                idx_shape[d] = rng.integers(0, 5)
            elif r == 0:
                idx_shape[d] = 1
            elif r == 1:
                arr_shape[d] = 1
        arr = rng.standard_normal(arr_shape).astype(np.float32)
        high = min(arr_shape[axis], np.iinfo(np.dtype(index_dtype)).max)
        idx = rng.integers(0, high, size=idx_shape).astype(index_dtype)
        same(ng.take_along_axis(arr, idx, axis), np.take_along_axis(arr, idx, axis))


def test_policies():
    a = np.array([[10, 30, 20], [60, 40, 50]])
    idx = np.array([[2, -1, 3], [0, -4, 1]])
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0,1\] = -1 is not in \[0, 3\)"):
        ng.take_along_axis(a, idx, 1, bad_indices="error")
    np.testing.assert_array_equal(ng.take_along_axis(a, idx, 1, bad_indices="ignore"),
                                  [[20, 0, 0], [60, 0, 40]])
    np.testing.assert_array_equal(ng.take_along_axis(a, idx, 1, bad_indices="clamp"),
                                  [[20, 10, 20], [60, 60, 40]])
    # NumPy's rule by default: negative indices from the end, an IndexError past either end.
    with pytest.raises(IndexError, match=r"indices\[0,2\] = 3 is not in \[0, 3\)"):
        ng.take_along_axis(a, idx, 1)
    with pytest.raises(IndexError):
        np.take_along_axis(a, idx, 1)
    ok = np.array([[2, -1], [0, -3]])
    same(ng.take_along_axis(a, ok, 1), np.take_along_axis(a, ok, 1))
    same(ng.take_along_axis(a, ok, 1, bad_indices="negative"), np.take_along_axis(a, ok, 1))
    # "wrap" is modulo the dimension, as np.take(mode="wrap").
    same(ng.take_along_axis(a, idx, 1, bad_indices="wrap"), np.take_along_axis(a, idx % 3, 1))
    s = np.array([["a", "bb"], ["c", "d"]])
    same(ng.take_along_axis(s, [[5], [1]], 1, bad_indices="ignore"), np.array([[""], ["d"]], "U2"))


def test_errors_and_axis_none():
    a = np.arange(6).reshape(2, 3)
    cases = [
        (([1], 1), "`indices` and `arr` must have the same number of dimensions"),
        (([[1]], 2), "axis 2 is out of bounds for array of dimension 2"),
        (([[1]] * 3, 1), "shape mismatch: indices of shape \\[3,1\\] cannot be broadcast"),
    ]
    for (idx, axis), message in cases:
        with pytest.raises(ValueError, match=message):  # AxisError for the axis (NumPy's)
            ng.take_along_axis(a, idx, axis)
    # NumPy's class and words for indices that are not integers.
    with pytest.raises(IndexError, match="^`indices` must be an integer array$"):
        ng.take_along_axis(a, [[0.5]], 1)
    same(ng.take_along_axis(a, [5, 0], None), np.take_along_axis(a, np.array([5, 0]), None))


def test_out_of_any_layout():
    a = np.arange(24.0).reshape(4, 6)
    idx = np.random.default_rng(4).integers(0, 6, size=(4, 3))
    out = np.zeros((3, 4)).T  # column-major
    assert ng.take_along_axis(a, idx, 1, out=out) is out
    same(np.ascontiguousarray(out), np.take_along_axis(a, idx, 1))


def test_grad_like_numpy_add_at():
    rng = np.random.default_rng(5)
    for trial in range(100):
        arr_shape = tuple(rng.integers(1, 4, size=3))
        axis = int(rng.integers(0, 3))
        idx_shape = list(arr_shape)
        idx_shape[axis] = int(rng.integers(0, 5))
        b = int(rng.integers(0, 3))
        if b != axis:
            idx_shape[b] = 1
        idx = rng.integers(0, arr_shape[axis], size=idx_shape)
        out_shape = np.broadcast_shapes(
            tuple(1 if d == axis else n for d, n in enumerate(arr_shape)), tuple(idx_shape))
        out_shape = tuple(idx_shape[d] if d == axis else n for d, n in enumerate(out_shape))
        grad = rng.standard_normal(out_shape)
        expected = np.zeros(arr_shape)
        # numpy.take_along_axis's own fancy index, then add.at sums repeats
        fancy = list(np.ix_(*[np.arange(n) for n in out_shape]))
        fancy[axis] = np.broadcast_to(idx, out_shape)
        fancy = [np.broadcast_to(f, out_shape) % max(arr_shape[d], 1) if d != axis else f
                 for d, f in enumerate(fancy)]
        np.add.at(expected, tuple(fancy), grad)
        got = ng.take_along_axis_grad(arr_shape, idx, grad, axis)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_non_integer_indices_with_object_params_are_numpys_errors():
    """Object arrays take their own path; its indices follow NumPy's rule too: the axis is
    checked first (AxisError), then the dtype (IndexError)."""
    objects = np.array([[1, "a", None], [2.5, (), 3]], dtype=object)
    for indices in (np.array([[0.5]]), np.array([[True]]), np.array([["a"]])):
        with pytest.raises(IndexError, match="^`indices` must be an integer array$"):
            ng.take_along_axis(objects, indices, 1)
        with pytest.raises(np.exceptions.AxisError):
            ng.take_along_axis(objects, indices, 5)
    with pytest.raises(IndexError, match="^`indices` must be an integer array$"):
        ng.put_along_axis(objects, np.array([[0.5]]), None, 1)
