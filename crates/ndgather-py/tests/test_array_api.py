"""The array API standard's indexing functions (2024.12), `take` and `take_along_axis`.

data-apis/array-api-tests is not on the package registry, so its two properties
(array_api_tests/test_indexing_functions.py at 55fcc60: `test_take`, `test_take_along_axis`)
are ported here with Hypothesis, checking ndgather's functions element by element against
Python indexing of the input, as that suite does. Then the policy names: "negative" is the
standard's rule, "wrap" is NumPy's and JAX's `mode="wrap"`.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ndgather as ng

#: The standard's dtypes.
DTYPES = st.sampled_from([np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                          np.uint16, np.uint32, np.uint64, np.float32, np.float64,
                          np.complex64, np.complex128])


def arrays():
    return DTYPES.flatmap(lambda d: hnp.arrays(
        d, hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)))


def same(a, b):
    """Equal values, NaN included (a NaN element must come out as the same NaN)."""
    return a == b or (a != a and b != b)


@settings(max_examples=300, deadline=None)
@given(x=arrays(), data=st.data())
def test_take(x, data):
    axis_st = st.integers(-x.ndim, max(x.ndim - 1, 0))
    if x.ndim == 1 and data.draw(st.booleans(), label="no axis"):
        kw = {}
    else:
        kw = {"axis": data.draw(axis_st, label="axis")}
    axis = kw.get("axis", 0)
    n_axis = axis if axis >= 0 else x.ndim + axis
    idx = data.draw(st.lists(st.integers(-x.shape[axis], x.shape[axis] - 1), min_size=1,
                             unique=True), label="indices")
    indices = np.asarray(idx, dtype=np.int64)

    out = ng.take(x, indices, **kw)

    assert out.dtype == x.dtype
    assert out.shape == x.shape[:n_axis] + (len(idx),) + x.shape[n_axis + 1:]
    for before in np.ndindex(x.shape[:n_axis]):
        for j, i in enumerate(idx):
            taken = x[before + (i,)]
            got = out[before + (j,)]
            for at in np.ndindex(taken.shape):
                assert same(got[at], taken[at]), (before, i, at)


@settings(max_examples=300, deadline=None)
@given(x=arrays(), data=st.data())
def test_take_along_axis(x, data):
    axis = data.draw(st.integers(-x.ndim, max(x.ndim - 1, 0)) | st.none(), label="axis")
    if axis is None:
        kw, n_axis = {}, x.ndim - 1
    else:
        kw, n_axis = {"axis": axis}, axis + x.ndim if axis < 0 else axis
    new_len = data.draw(st.integers(0, 2 * x.shape[n_axis]), label="new_len")
    idx_shape = x.shape[:n_axis] + (new_len,) + x.shape[n_axis + 1:]
    indices = data.draw(hnp.arrays(np.int64, idx_shape, elements=st.integers(
        -x.shape[n_axis], x.shape[n_axis] - 1)), label="indices")

    out = ng.take_along_axis(x, indices, **kw)

    assert out.dtype == x.dtype
    assert out.shape == idx_shape
    for ii in np.ndindex(x.shape[:n_axis]):
        for kk in np.ndindex(x.shape[n_axis + 1:]):
            a_1d = x[ii + (slice(None),) + kk]
            i_1d = indices[ii + (slice(None),) + kk]
            o_1d = out[ii + (slice(None),) + kk]
            for j in range(new_len):
                assert same(o_1d[j], a_1d[i_1d[j]]), (ii, kk, j)


def test_the_standards_rules_at_the_edges():
    x = np.array([10, 20, 30])
    np.testing.assert_array_equal(ng.take(x, np.array([-3, -1, 0, 2])), [10, 30, 10, 30])
    for bad in (-4, 3):
        with pytest.raises(IndexError, match=rf"indices\[0\] = {bad} is not in \[0, 3\)"):
            ng.take(x, np.array([bad]))
        with pytest.raises(ng.InvalidArgumentError):
            ng.take_along_axis(x, np.array([bad]))
    with pytest.raises(ValueError, match="needs an axis"):
        ng.take(np.zeros((2, 2)), np.array([0]))
    with pytest.raises(ValueError, match="must be 1-d"):
        ng.take(x, np.array([[0]]))
    np.testing.assert_array_equal(ng.take(np.zeros((2, 3)), np.array([2]), axis=-1),
                                  np.zeros((2, 1)))
    # take_along_axis's default axis is the last, as NumPy 2.3's and the standard's.
    a = np.array([[10, 30, 20], [60, 40, 50]])
    np.testing.assert_array_equal(ng.take_along_axis(a, np.argsort(a)), np.sort(a))


@pytest.mark.parametrize("n", [1, 3, 10])
def test_wrap_is_numpys_modulo(n):
    x = np.arange(n) * 10
    idx = np.array([-3 * n - 1, -n - 1, -n, -1, 0, n - 1, n, 2 * n + 1, 7 * n + 3])
    want = np.take(x, idx, mode="wrap")
    np.testing.assert_array_equal(ng.gather(x, idx, bad_indices="wrap"), want)
    np.testing.assert_array_equal(ng.take(x, idx, bad_indices="wrap"), want)
    np.testing.assert_array_equal(ng.gather_nd(x, idx[:, None], bad_indices="wrap"), want)
    np.testing.assert_array_equal(ng.take_along_axis(x, idx, bad_indices="wrap"), want)
    # JAX's mode="wrap" is compared in test_dlpack.py (in a child process).


def test_wrap_into_an_empty_dimension_is_an_error():
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0\] = 0 is not in \[0, 0\)"):
        ng.gather(np.zeros((0, 2)), np.array([0]), bad_indices="wrap")


def test_negative_is_the_old_rule():
    x = np.array([10, 20, 30])
    np.testing.assert_array_equal(ng.gather(x, np.array([-1, -3]), bad_indices="negative"),
                                  [30, 10])
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0\] = -4 is not in \[0, 3\)"):
        ng.gather(x, np.array([-4]), bad_indices="negative")
    with pytest.raises(ValueError, match="bad_indices must be one of"):
        ng.gather(x, np.array([0]), bad_indices="modulo")
