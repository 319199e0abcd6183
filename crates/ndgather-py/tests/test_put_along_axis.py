"""ng.put_along_axis against numpy.put_along_axis itself, on the same arrays: random shapes,
axes, broadcasting, repeated and negative indices, dtypes and layouts; NumPy's exception
classes; nothing written on error."""
import numpy as np
import pytest

import ndgather as ng

DTYPES = [np.float32, np.float64, np.int8, np.uint64, np.float16, np.complex128, np.bool_,
          "datetime64[s]", "m8[ms]"]


def random_case(rng):
    ndim = int(rng.integers(1, 4))
    shape = [int(d) for d in rng.integers(1, 5, ndim)]
    axis = int(rng.integers(-ndim, ndim))
    ishape = [d if rng.random() < 0.7 else 1 for d in shape]
    ishape[axis] = int(rng.integers(0, 6))
    # Indices in [-n, n): NumPy's rule; many repeat.
    n = shape[axis]
    indices = rng.integers(-n, n, ishape)
    result = np.broadcast_shapes(tuple(1 if k == axis % ndim else d for k, d in
                                       enumerate(shape)), tuple(ishape))
    result = list(result)
    result[axis] = ishape[axis]
    vshape = [d if rng.random() < 0.7 else 1 for d in result]
    return shape, axis, indices, vshape


@pytest.mark.parametrize("seed", range(300))
def test_random_against_numpy(seed):
    rng = np.random.default_rng(seed)
    shape, axis, indices, vshape = random_case(rng)
    dtype = np.dtype(DTYPES[seed % len(DTYPES)])
    arr = (rng.integers(0, 100, shape)).astype(dtype)
    values = (rng.integers(0, 100, vshape)).astype(dtype)
    want = arr.copy()
    np.put_along_axis(want, indices, values, axis)
    if seed % 3 == 0:  # a view of another layout
        big = np.zeros([d * 2 for d in shape], dtype)
        got = big[tuple(slice(None, None, 2) for _ in shape)]
        got[...] = arr
    else:
        got = arr.copy()
    assert ng.put_along_axis(got, indices, values, axis) is None
    assert np.array_equal(got, want)


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
    with pytest.raises(TypeError):
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
