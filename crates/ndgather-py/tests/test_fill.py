"""bad_indices="fill" (JAX's mode="fill") in ng.gather, ng.gather_nd, ng.take_along_axis:
JAX's documented fill values per dtype, fill_value converted by NumPy, every dtype kind and
layout through the records path, and on Dask (ShardedTable.lookup, lazy gather)."""
import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

# jax.numpy.take's documentation: "fill" returns NaN for inexact types, the largest
# negative value for signed types, the largest positive value for unsigned types, and True
# for booleans.
JAX_DEFAULTS = [("f2", np.nan), ("f4", np.nan), (">f8", np.nan), ("c8", np.nan),
                (ml_dtypes.bfloat16, np.nan), ("i1", -128), ("<i8", np.iinfo(np.int64).min),
                (">i4", np.iinfo(np.int32).min), ("u1", 255), ("u4", 2**32 - 1), ("?", True)]


@pytest.mark.parametrize("dtype,expected", JAX_DEFAULTS, ids=str)
def test_jax_defaults(dtype, expected):
    params = np.arange(6).reshape(3, 2).astype(dtype)
    for out in [ng.gather(params, [2, 7], bad_indices="fill"),
                ng.gather_nd(params, [[2], [-1]], bad_indices="fill"),
                ng.take_along_axis(params, [[0], [5], [1]], 1, bad_indices="fill")]:
        bad = out[1]
        want = np.full(bad.shape, expected, dtype=params.dtype)
        assert bad.dtype == params.dtype
        np.testing.assert_array_equal(bad.astype("f8") if dtype == ml_dtypes.bfloat16 else bad,
                                      want.astype("f8") if dtype == ml_dtypes.bfloat16 else want)
    good = ng.gather(params, [2], bad_indices="fill")
    np.testing.assert_array_equal(good, params[[2]])


def test_fill_value_and_layouts():
    a = np.asfortranarray(np.arange(12.0, dtype=">f4").reshape(3, 4))[:, ::-1]
    out = ng.gather(a, [1, 9], axis=1, bad_indices="fill", fill_value=-2.5)
    np.testing.assert_array_equal(out, np.stack([a[:, 1], np.full(3, -2.5, "f4")], axis=1))
    s = np.array(["ab", "cd"])
    np.testing.assert_array_equal(ng.gather(s, [1, 5], bad_indices="fill"), ["cd", ""])
    np.testing.assert_array_equal(ng.gather(s, [5], bad_indices="fill", fill_value="z"), ["z"])
    o = np.array([object(), "x"], dtype=object)
    assert ng.gather(o, [3], bad_indices="fill")[0] is None
    with pytest.raises(TypeError, match="object arrays fill bad slices with None"):
        ng.gather(o, [3], bad_indices="fill", fill_value=1)
    with pytest.raises(ValueError, match='fill_value needs bad_indices="fill"'):
        ng.gather([1, 2], [0], fill_value=3)
    with pytest.raises((OverflowError, ValueError)):
        ng.gather(np.array([1, 2], "u1"), [7], bad_indices="fill", fill_value=-1)
    out = np.zeros(2)
    assert ng.gather([1.0, 2.0], [1, 4], bad_indices="fill", fill_value=7, out=out) is out
    np.testing.assert_array_equal(out, [2.0, 7.0])


def test_on_dask():
    pytest.importorskip("distributed")
    import dask.array as da
    from ndgather.distributed import gather

    x = da.from_array(np.arange(12.0).reshape(4, 3), chunks=2)
    got = gather(x, [3, 9], axis=0, bad_indices="fill").compute()
    np.testing.assert_array_equal(got[0], [9.0, 10.0, 11.0])
    assert np.isnan(got[1]).all()


def test_gradients_through_filled_slices_are_zero():
    idx = [1, 9, -1, 1]
    g = np.array([1.0, 5.0, 7.0, 2.0])
    np.testing.assert_array_equal(ng.gather_grad((3,), idx, g, bad_indices="fill"), [0.0, 3.0, 0.0])
    np.testing.assert_array_equal(ng.gather_grad((3,), [1, -1, 1], np.array([1.0, 7.0, 2.0]),
                                                 bad_indices="negative"), [0.0, 3.0, 7.0])
    np.testing.assert_array_equal(ng.gather_grad((3,), idx, g, bad_indices="clamp"), [7.0, 3.0, 5.0])
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[1\] = 9 is not in \[0, 3\)"):
        ng.gather_grad((3,), idx, g)
    nd = ng.gather_nd_grad((2, 2), [[0, 1], [5, 0]], np.array([1.0, 9.0]), bad_indices="fill")
    np.testing.assert_array_equal(nd, [[0.0, 1.0], [0.0, 0.0]])
    t = ng.take_along_axis_grad((1, 2), [[1, 4]], np.array([[3.0, 9.0]]), 1, bad_indices="fill")
    np.testing.assert_array_equal(t, [[0.0, 3.0]])


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">c8", ">c16", ">i2", ">u4", ">f2"])
def test_default_fill_in_either_byte_order_is_the_cores(dtype):
    """The default fill element comes from the core's dtype table, in params' byte order."""
    native = np.dtype(dtype).newbyteorder("=")
    for dt in (np.dtype(dtype), native):
        params = np.arange(6).astype(dt)
        out = ng.gather(params, [1, 9], bad_indices="fill")
        assert out.dtype == dt
        assert out[0] == 1
        if dt.kind in "fc":
            assert np.isnan(out[1])
        elif dt.kind == "i":
            assert out[1] == np.iinfo(dt).min
        else:
            assert out[1] == np.iinfo(dt).max
