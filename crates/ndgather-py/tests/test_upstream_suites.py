"""The upstream libraries' own tests of the ops ndgather mirrors, ported to ndgather.

* NumPy 2.4.6, ``numpy/lib/tests/test_shape_base.py``: ``TestTakeAlongAxis`` and
  ``TestPutAlongAxis`` (the copy shipped in NumPy's wheel), with ``take_along_axis`` and
  ``put_along_axis`` bound to ``ng.take_along_axis`` and ``ng.put_along_axis``.
* PyTorch, ``test/test_scatter_gather_ops.py`` (``TestScatterGather``, pytorch/pytorch@00d73471)
  and the scatter tests of ``test/test_torch.py`` that go through the reductions
  (``TestTorchDeviceType``), plus ``sample_inputs_scatter_reduce`` and
  ``error_inputs_scatter_and_scatter_add`` of
  ``torch/testing/_internal/common_methods_invocations.py`` (PyTorch 2.15.0), against
  ``ng.scatter_reduce``. The CPU cases only: ndgather runs on the CPU.
* The two examples of the issue, with NumPy's exact classes and messages.

Every ported test names the upstream test it comes from; where the port differs from the
upstream test, a comment says where and why. PyTorch is not imported: the expected values
are computed with NumPy by the upstream tests' own reference loops (checked against
``torch.scatter_reduce`` of PyTorch 2.15.0 on the CPU when this file was written) or written
out as the upstream test writes them.
"""
import functools
import itertools
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from numpy.exceptions import AxisError
from numpy.testing import assert_array_equal, assert_equal, assert_raises

import ndgather as ng

# The names NumPy's test module imports, bound to ndgather's functions.
take_along_axis = ng.take_along_axis
put_along_axis = ng.put_along_axis


# ---------------------------------------------------------------------------------------
# NumPy 2.4.6, numpy/lib/tests/test_shape_base.py
# ---------------------------------------------------------------------------------------

def _add_keepdims(func):
    """ hack in keepdims behavior into a function taking an axis """
    # Verbatim from numpy 2.4.6 numpy/lib/tests/test_shape_base.py.
    @functools.wraps(func)
    def wrapped(a, axis, **kwargs):
        res = func(a, axis=axis, **kwargs)
        if axis is None:
            axis = 0  # res is now a scalar, so we can insert this anywhere
        return np.expand_dims(res, axis=axis)
    return wrapped


class TestTakeAlongAxis:
    # numpy 2.4.6: TestTakeAlongAxis.test_argequivalent (verbatim but for the function
    # under test).
    def test_argequivalent(self):
        """ Test it translates from arg<func> to <func> """
        from numpy.random import rand
        a = rand(3, 4, 5)

        funcs = [
            (np.sort, np.argsort, {}),
            (_add_keepdims(np.min), _add_keepdims(np.argmin), {}),
            (_add_keepdims(np.max), _add_keepdims(np.argmax), {}),
            #(np.partition, np.argpartition, dict(kth=2)),
        ]

        for func, argfunc, kwargs in funcs:
            for axis in list(range(a.ndim)) + [None]:
                a_func = func(a, axis=axis, **kwargs)
                ai_func = argfunc(a, axis=axis, **kwargs)
                assert_equal(a_func, take_along_axis(a, ai_func, axis=axis))

    # numpy 2.4.6: TestTakeAlongAxis.test_invalid (verbatim but for the function under test).
    def test_invalid(self):
        """ Test it errors when indices has too few dimensions """
        a = np.ones((10, 10))
        ai = np.ones((10, 2), dtype=np.intp)

        # sanity check
        take_along_axis(a, ai, axis=1)

        # not enough indices
        assert_raises(ValueError, take_along_axis, a, np.array(1), axis=1)
        # bool arrays not allowed
        assert_raises(IndexError, take_along_axis, a, ai.astype(bool), axis=1)
        # float arrays not allowed
        assert_raises(IndexError, take_along_axis, a, ai.astype(float), axis=1)
        # invalid axis
        assert_raises(AxisError, take_along_axis, a, ai, axis=10)
        # invalid indices
        assert_raises(ValueError, take_along_axis, a, ai, axis=None)

    # numpy 2.4.6: TestTakeAlongAxis.test_invalid, one assertion per test. Port difference:
    # upstream is one function, which stops at its first failing assertion; split here so
    # that each of NumPy's checks reports on its own (the verbatim test is kept above).
    @pytest.mark.parametrize("case", ["not enough indices", "bool", "float", "axis=10",
                                      "axis=None"])
    def test_invalid_each(self, case):
        a = np.ones((10, 10))
        ai = np.ones((10, 2), dtype=np.intp)
        error, indices, axis = {
            "not enough indices": (ValueError, np.array(1), 1),
            "bool": (IndexError, ai.astype(bool), 1),
            "float": (IndexError, ai.astype(float), 1),
            "axis=10": (AxisError, ai, 10),
            "axis=None": (ValueError, ai, None),
        }[case]
        assert_raises(error, take_along_axis, a, indices, axis=axis)

    # numpy 2.4.6: TestTakeAlongAxis.test_empty (verbatim but for the function under test).
    def test_empty(self):
        """ Test everything is ok with empty results, even with inserted dims """
        a = np.ones((3, 4, 5))
        ai = np.ones((3, 0, 5), dtype=np.intp)

        actual = take_along_axis(a, ai, axis=1)
        assert_equal(actual.shape, ai.shape)

    # numpy 2.4.6: TestTakeAlongAxis.test_broadcast (verbatim but for the function under
    # test).
    def test_broadcast(self):
        """ Test that non-indexing dimensions are broadcast in both directions """
        a = np.ones((3, 4, 1))
        ai = np.ones((1, 2, 5), dtype=np.intp)
        actual = take_along_axis(a, ai, axis=1)
        assert_equal(actual.shape, (3, 2, 5))


class TestPutAlongAxis:
    # ng.put_along_axis writes into ``arr`` in place and returns None, as
    # numpy.put_along_axis does (its docstring), so the tests below are NumPy's unchanged
    # but for the functions under test.

    # numpy 2.4.6: TestPutAlongAxis.test_replace_max.
    def test_replace_max(self):
        a_base = np.array([[10, 30, 20], [60, 40, 50]])

        for axis in list(range(a_base.ndim)) + [None]:
            # we mutate this in the loop
            a = a_base.copy()

            # replace the max with a small value
            i_max = _add_keepdims(np.argmax)(a, axis=axis)
            put_along_axis(a, i_max, -99, axis=axis)

            # find the new minimum, which should max
            i_min = _add_keepdims(np.argmin)(a, axis=axis)

            assert_equal(i_min, i_max)

    # numpy 2.4.6: TestPutAlongAxis.test_broadcast.
    def test_broadcast(self):
        """ Test that non-indexing dimensions are broadcast in both directions """
        a = np.ones((3, 4, 1))
        ai = np.arange(10, dtype=np.intp).reshape((1, 2, 5)) % 4
        put_along_axis(a, ai, 20, axis=1)
        assert_equal(take_along_axis(a, ai, axis=1), 20)

    # numpy 2.4.6: TestPutAlongAxis.test_invalid.
    def test_invalid(self):
        """ Test invalid inputs """
        a_base = np.array([[10, 30, 20], [60, 40, 50]])
        indices = np.array([[0], [1]])
        values = np.array([[2], [1]])

        # sanity check
        a = a_base.copy()
        put_along_axis(a, indices, values, axis=0)
        assert np.all(a == [[2, 2, 2], [1, 1, 1]])

        # invalid indices
        a = a_base.copy()
        with assert_raises(ValueError) as exc:
            put_along_axis(a, indices, values, axis=None)
        assert "single dimension" in str(exc.exception)


# ---------------------------------------------------------------------------------------
# The issue's examples: NumPy's classes and exact messages (NumPy 2.4.6's
# numpy/lib/_shape_base_impl.py, checked by running NumPy).
# ---------------------------------------------------------------------------------------

NOT_INTEGER = "`indices` must be an integer array"
SINGLE_DIMENSION = "when axis=None, `indices` must have a single dimension."


@pytest.mark.parametrize("dtype", [bool, float], ids=["bool", "float"])
def test_issue_take_along_axis_non_integer_indices(dtype):
    a = np.ones((10, 10))
    ai = np.ones((10, 2), dtype=dtype)
    with pytest.raises(IndexError) as numpy_error:
        np.take_along_axis(a, ai, axis=1)
    assert str(numpy_error.value) == NOT_INTEGER
    with pytest.raises(IndexError) as error:
        ng.take_along_axis(a, ai, axis=1)
    assert str(error.value) == NOT_INTEGER


@pytest.mark.parametrize("dtype", [bool, float], ids=["bool", "float"])
def test_issue_put_along_axis_non_integer_indices(dtype):
    # The same check in NumPy (_make_along_axis_idx serves both functions).
    a = np.ones((10, 10))
    ai = np.ones((10, 2), dtype=dtype)
    with pytest.raises(IndexError) as numpy_error:
        np.put_along_axis(a.copy(), ai, 0.0, axis=1)
    assert str(numpy_error.value) == NOT_INTEGER
    b = a.copy()
    with pytest.raises(IndexError) as error:
        ng.put_along_axis(b, ai, 0.0, axis=1)
    assert str(error.value) == NOT_INTEGER
    assert_array_equal(b, a)


def test_issue_put_along_axis_none_with_2d_indices():
    a_base = np.array([[10, 30, 20], [60, 40, 50]])
    indices, values = np.array([[0], [1]]), np.array([[2], [1]])
    with pytest.raises(ValueError) as numpy_error:
        np.put_along_axis(a_base.copy(), indices, values, axis=None)
    assert type(numpy_error.value) is ValueError
    assert str(numpy_error.value) == SINGLE_DIMENSION
    a = a_base.copy()
    with pytest.raises(ValueError) as error:
        ng.put_along_axis(a, indices, values, axis=None)
    assert str(error.value) == SINGLE_DIMENSION
    assert_array_equal(a, a_base)


def test_issue_take_along_axis_none_with_2d_indices():
    # NumPy's take_along_axis has the same check and message as put_along_axis.
    a, ai = np.ones((10, 10)), np.ones((10, 2), dtype=np.intp)
    with pytest.raises(ValueError) as numpy_error:
        np.take_along_axis(a, ai, axis=None)
    assert str(numpy_error.value) == SINGLE_DIMENSION
    with pytest.raises(ValueError) as error:
        ng.take_along_axis(a, ai, axis=None)
    assert str(error.value) == SINGLE_DIMENSION


# ---------------------------------------------------------------------------------------
# PyTorch: test/test_scatter_gather_ops.py (pytorch/pytorch@00d73471), TestScatterGather
# ---------------------------------------------------------------------------------------

BF16 = np.dtype(ml_dtypes.bfloat16)
# get_all_dtypes(): get_all_int_dtypes() + get_all_fp_dtypes() + [bool] + complex.
INT_DTYPES = [np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.int64)]
FP_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
COMPLEX_DTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
BOOL = [np.dtype(bool)]


def _name(dtype):
    return "bfloat16" if dtype == BF16 else str(np.dtype(dtype))


def _rng(*key):
    """A generator seeded by the test's parameters. Port difference: upstream draws from
    Python's and PyTorch's global generators, a new case each run; a fixed seed per case
    keeps the port repeatable."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _fma(x, y, z):
    """x * y + z rounded once to float64 (math.fma, which Python has from 3.13)."""
    return float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))


def _torch_mul(a, v):
    """``a * v`` as PyTorch's CPU kernels compute it. Port difference: upstream's reference
    multiplies torch scalars; NumPy's complex128 product differs from PyTorch's in the last
    bit, because PyTorch's build contracts c10::complex<double>'s ``a*c - b*d`` and
    ``a*d + b*c`` into fused multiply-adds, so that product is computed so here (checked
    against PyTorch 2.15.0; NumPy's complex64 product is PyTorch's)."""
    if np.asarray(a).dtype == np.complex128:
        re = _fma(a.real, v.real, -(a.imag * v.imag))
        im = _fma(a.real, v.imag, a.imag * v.real)
        return np.complex128(complex(re, im))
    return a * v


def _torch_mean(total, counts, dtype):
    """``total / counts`` as PyTorch's ``div_`` (floating) or ``div_(rounding_mode="floor")``
    (integers) computes it in the dtype, a count of 0 dividing by 1."""
    counts = np.where(counts == 0, 1, counts)
    if dtype.kind == "c":
        # Port difference: c10::complex's division (Smith's, as PyTorch's ``/=`` of a
        # complex tensor by an integer one runs it), not NumPy's: for a real divisor c it
        # multiplies both parts by 1/c rounded, so it differs from NumPy's quotient in the
        # last bit.
        part = np.float32 if dtype == np.complex64 else np.float64
        scl = part(1) / counts.astype(part)
        zero = part(0)
        re = (total.real + total.imag * zero) * scl
        im = (total.imag - total.real * zero) * scl
        return (re + 1j * im).astype(dtype)
    if dtype.kind == "f" or dtype == BF16:
        # NumPy's float64 quotient, rounded once to the dtype, is the correctly rounded
        # quotient that PyTorch computes in the dtype (in float32 for float16 and bfloat16,
        # an innocuous double rounding).
        return (total / counts).astype(dtype)
    return np.floor_divide(total, counts.astype(dtype)).astype(dtype)


def make_tensor(shape, dtype, rng):
    """torch.testing.make_tensor's default values: integers in [-9, 10) ([0, 10) unsigned),
    floating and complex numbers (both parts) uniform in [-9, 9), bool either."""
    dtype = np.dtype(dtype)
    if dtype == bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -9, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-9, 9, size=shape) + 1j * rng.uniform(-9, 9, size=shape)) \
            .astype(dtype)
    return rng.uniform(-9, 9, size=shape).astype(np.float32 if dtype == BF16 else dtype) \
        .astype(dtype)


def _fill_indices(idx, dim, dim_size, elems_per_row, m, n, o, rng, unique_indices=True):
    """TestScatterGather._fill_indices: each row along dim gets elems_per_row indices
    (distinct when unique_indices)."""
    for i in range(1 if dim == 0 else m):
        for j in range(1 if dim == 1 else n):
            for k in range(1 if dim == 2 else o):
                ii = [i, j, k]
                ii[dim] = slice(0, idx.shape[dim] + 1)
                if unique_indices:
                    idx[tuple(ii)] = rng.permutation(dim_size)[0:elems_per_row]
                else:
                    idx[tuple(ii)] = rng.integers(0, dim_size, size=(elems_per_row,))


def scatter_base_case(dtype, reduction, include_self, unique_indices=False):
    """TestScatterGather._test_scatter_base's case for torch.Tensor.scatter_reduce_ and its
    expected result, by upstream's reference loop: ``(base, dim, idx, src, expected)``, or
    a string, the reason upstream skips the case (a signed sum or product that would
    overflow)."""
    rng = _rng("scatter_base", _name(dtype), reduction, include_self)
    m, n, o = (int(rng.integers(10, 21)) for _ in range(3))
    elems_per_row = int(rng.integers(1, 11))
    dim = int(rng.integers(0, 3))

    idx_size = [m, n, o]
    idx_size[dim] = elems_per_row
    idx = np.empty(tuple(idx_size), dtype=np.int64)
    _fill_indices(idx, dim, ([m, n, o])[dim], elems_per_row, m, n, o, rng, unique_indices)

    src_size = [int(rng.integers(1, 6)) + s for s in idx_size]
    src = make_tensor(tuple(src_size), dtype, rng)

    base = make_tensor((m, n, o), dtype, rng)
    # for signed integers, avoid undefined behavior in expected output
    use_int64_expected = (dtype in (np.int8, np.int16, np.int32)
                          and reduction in {"add", "sum", "multiply", "prod", "mean"})
    expected = base.astype(np.int64) if use_int64_expected else base.copy()

    counts = np.zeros(base.shape, dtype=np.int64) + include_self
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(idx_size[0]):
            for j in range(idx_size[1]):
                for k in range(idx_size[2]):
                    ii = [i, j, k]
                    ii[dim] = idx[i, j, k]
                    ii = tuple(ii)
                    value = src[i, j, k]
                    if use_int64_expected:
                        value = np.int64(value)
                    if (not include_self) and counts[ii] == 0:
                        expected[ii] = value
                    elif reduction in ("add", "sum", "mean"):
                        expected[ii] = expected[ii] + value
                    elif reduction in ("multiply", "prod"):
                        expected[ii] = _torch_mul(expected[ii], value)
                    elif reduction == "amax":
                        expected[ii] = max(expected[ii], value)
                    elif reduction == "amin":
                        expected[ii] = min(expected[ii], value)
                    counts[ii] += 1

    if use_int64_expected:
        iinfo = np.iinfo(dtype)
        if np.any((expected < iinfo.min) | (expected > iinfo.max)):
            return (f"Skipping scatter_reduce_ reference case with dtype={_name(dtype)} and "
                    f"reduction={reduction} because it would overflow {_name(dtype)}: "
                    f"observed expected range [{expected.min()}, {expected.max()}], "
                    f"allowed [{iinfo.min}, {iinfo.max}]")
        expected = expected.astype(dtype)

    if reduction == "mean":
        expected = _torch_mean(expected, counts, dtype)
    return base, dim, idx, src, expected


def _assert_same(actual, expected):
    """assertEqual(actual, expected) with atol=0, rtol=0: equal values, NaN equal to NaN
    (NumPy's assert_array_equal does not see ml_dtypes' bfloat16 NaNs, so bfloat16 is
    compared in float32, which holds every bfloat16 value)."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype == BF16:
        actual, expected = actual.astype(np.float32), expected.astype(np.float32)
    assert_array_equal(actual, expected)


def _assert_scatter_equal(actual, expected, dtype):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if dtype in (np.float16, BF16):
        # Upstream: "Some CUDA kernels ... use fp32 for internal accumulation ... small
        # differences": assertEqual(actual, expected, atol=0.04, rtol=0.05).
        np.testing.assert_allclose(actual.astype(np.float32), expected.astype(np.float32),
                                   atol=0.04, rtol=0.05)
    else:
        _assert_same(actual, expected)


def _test_scatter_base(dtype, reduction, include_self, unique_indices=False):
    """TestScatterGather._test_scatter_base with fn=torch.Tensor.scatter_reduce_ and
    is_scalar=False: ``fn(base.clone(), dim, idx, src, reduce=..., include_self=...)``
    becomes ng.scatter_reduce(base.copy(), ..., out=that copy), the in-place form."""
    case = scatter_base_case(dtype, reduction, include_self, unique_indices)
    if isinstance(case, str):
        pytest.skip(case)
    base, dim, idx, src, expected = case
    actual = base.copy()
    returned = ng.scatter_reduce(actual, dim, idx, src, reduction, include_self=include_self,
                                 out=actual)
    assert returned is actual
    _assert_scatter_equal(actual, expected, dtype)

    # Tests empty index
    rng = _rng("empty index", _name(dtype), reduction, include_self)
    dst = make_tensor((2, 2), dtype, rng)
    dst_before = dst.copy()
    idx = np.array((), dtype=np.int64)
    src = make_tensor((2, 2), dtype, rng)
    # Upstream: actual = fn(dst, 0, idx, src, reduce=reduction); assertEqual(actual, dst),
    # where fn writes into dst and returns it. Port difference: the value before the call is
    # compared too (upstream's actual *is* dst, so its assertion holds trivially), which is
    # what the test means: an empty index changes nothing.
    actual = ng.scatter_reduce(dst, 0, idx, src, reduction, out=dst)
    assert actual is dst
    assert_array_equal(actual, dst_before)


# Port difference, all five: upstream loops over DeterministicGuard(False/True) for sum and
# mean; ndgather has one CPU path, deterministic, so there is nothing to loop over.

# test_scatter_reduce_sum: @dtypes(*get_all_dtypes(include_half=True, include_bfloat16=True,
# include_bool=False))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", INT_DTYPES + FP_DTYPES + COMPLEX_DTYPES, ids=_name)
def test_scatter_reduce_sum(dtype, include_self):
    _test_scatter_base(dtype, "sum", include_self, unique_indices=False)


# test_scatter_reduce_prod: @dtypes(*get_all_dtypes(include_half=True, include_bfloat16=True))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", INT_DTYPES + FP_DTYPES + BOOL + COMPLEX_DTYPES, ids=_name)
def test_scatter_reduce_prod(dtype, include_self):
    _test_scatter_base(dtype, "prod", include_self, unique_indices=False)


# test_scatter_reduce_mean: @dtypes(*get_all_dtypes(include_half=True, include_bfloat16=True,
# include_bool=False))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", INT_DTYPES + FP_DTYPES + COMPLEX_DTYPES, ids=_name)
def test_scatter_reduce_mean(dtype, include_self):
    _test_scatter_base(dtype, "mean", include_self, unique_indices=False)


# test_scatter_reduce_amax: @dtypes(*get_all_dtypes(include_half=True, include_bfloat16=True,
# include_complex=False))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", INT_DTYPES + FP_DTYPES + BOOL, ids=_name)
def test_scatter_reduce_amax(dtype, include_self):
    _test_scatter_base(dtype, "amax", include_self, unique_indices=False)
    # simple test for nan/inf propagation
    if dtype.kind == "f" or dtype == BF16:
        input = np.zeros(3, dtype=dtype)
        src = np.array([1, np.nan, -np.inf, -np.inf, 2, np.inf], dtype=dtype)
        idx = np.array([0, 0, 1, 1, 2, 2])
        ng.scatter_reduce(input, 0, idx, src, "amax", include_self=include_self, out=input)
        expected_result = np.array([np.nan, -np.inf, np.inf], dtype=dtype)
        if include_self:
            expected_result[1] = 0
        _assert_same(input, expected_result)


# test_scatter_reduce_amin: @dtypes(*get_all_dtypes(include_half=True, include_bfloat16=True,
# include_complex=False))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", INT_DTYPES + FP_DTYPES + BOOL, ids=_name)
def test_scatter_reduce_amin(dtype, include_self):
    _test_scatter_base(dtype, "amin", include_self, unique_indices=False)
    # simple test for nan/inf propagation
    if dtype.kind == "f" or dtype == BF16:
        input = np.zeros(3, dtype=dtype)
        src = np.array([1, np.nan, -2, -np.inf, np.inf, np.inf], dtype=dtype)
        idx = np.array([0, 0, 1, 1, 2, 2])
        ng.scatter_reduce(input, 0, idx, src, "amin", include_self=include_self, out=input)
        expected_result = np.array([np.nan, -np.inf, np.inf], dtype=dtype)
        if include_self:
            expected_result[2] = 0
        _assert_same(input, expected_result)


# PyTorch's assertEqual default tolerances (torch.testing._comparison), as (rtol, atol).
_DEFAULT_TOL = {np.dtype(np.float16): (1e-3, 1e-5), BF16: (1.6e-2, 1e-5),
                np.dtype(np.float32): (1.3e-6, 1e-5), np.dtype(np.float64): (1e-7, 1e-7)}


def _assert_torch_equal(actual, expected):
    """self.assertEqual(actual, expected) for floating arrays: PyTorch's default tolerance
    for the dtype, NaNs equal."""
    rtol, atol = _DEFAULT_TOL[np.dtype(actual.dtype)]
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


# test_scatter_expanded_index: @onlyCPU @dtypes(torch.float32, torch.float64, torch.bfloat16,
# torch.float16). Port differences: an expanded index is np.broadcast_to's view (stride 0,
# as Tensor.expand makes); upstream's first check, input.scatter_add(0, idx, src), is of
# scatter_add, which ndgather does not have (its "sum" below is the same reduction).
@pytest.mark.parametrize("dtype", FP_DTYPES, ids=_name)
def test_scatter_expanded_index(dtype):
    rng = _rng("expanded index", _name(dtype))

    def helper(input_size, idx_size):
        input = rng.standard_normal(input_size).astype(np.float32).astype(dtype)
        input2 = input.copy()

        shape = [1] * len(input_size)
        shape[0] = idx_size
        dim_size = input_size[0]
        idx = rng.integers(0, dim_size, size=shape)

        # The fast path on scatter when index is expanded
        # will depend on sorted index where the collected src indice
        # for each row in input will be mapped to rowptrs in a CSR format.
        # Create some empty rows by masking:
        mask = (idx > 1) * (idx < 4)
        idx[mask] = 0

        expanded_shape = input_size
        expanded_shape[0] = idx_size
        idx = np.broadcast_to(idx, expanded_shape)
        idx2 = np.ascontiguousarray(idx)
        src = rng.standard_normal(expanded_shape).astype(np.float32).astype(dtype)

        for reduce in ["sum", "prod", "mean", "amax", "amin"]:
            for include_self in [True, False]:
                out = ng.scatter_reduce(input, 0, idx, src, reduce, include_self=include_self)
                out2 = ng.scatter_reduce(input2, 0, idx2, src, reduce,
                                         include_self=include_self)
                _assert_torch_equal(out, out2)

    helper([50, 17], 100)
    helper([50, 1], 100)
    helper([50, 8, 7], 100)
    helper([50, 3, 4, 5], 100)


# ---------------------------------------------------------------------------------------
# PyTorch: test/test_torch.py, TestTorchDeviceType, the scatter tests with a reduction.
# They call the older Tensor.scatter_(dim, index, src, reduce="add" | "multiply"), which for
# a tensor src is scatter_reduce_ with "sum" | "prod" and include_self=True (the same CPU
# kernel); the ports call ng.scatter_reduce so. Dtypes: @dtypesIfCPU(
# *all_types_and_complex_and(torch.half, torch.bool, torch.bfloat16)).
# ---------------------------------------------------------------------------------------

CPU_DTYPES = INT_DTYPES + [np.dtype(np.float32), np.dtype(np.float64)] + COMPLEX_DTYPES \
    + [np.dtype(np.float16), np.dtype(bool), BF16]
_LEGACY = {"add": "sum", "multiply": "prod"}


def _scatter_(input, dim, index, src, reduce):
    """input.scatter_(dim, index, src, reduce=reduce) through ng.scatter_reduce."""
    return ng.scatter_reduce(input, dim, index, src, _LEGACY[reduce], include_self=True,
                             out=input)


# test_torch.py: test_scatter_reduce_operations_to_large_input
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=_name)
def test_scatter_reduce_operations_to_large_input(dtype):
    index = np.array([[1], [2]], dtype=np.int64)
    test_data = [
        (np.zeros((4, 4), dtype=dtype),
         np.ones((2, 2), dtype=dtype),
         np.array([[0, 0, 0, 0],
                   [1, 0, 0, 0],
                   [1, 0, 0, 0],
                   [0, 0, 0, 0]], dtype=dtype), "add"),
        (np.tile(np.array([2], dtype=dtype), (4, 4)),
         np.tile(np.array([6], dtype=dtype), (2, 2)),
         np.array([[2, 2, 2, 2],
                   [12, 2, 2, 2],
                   [12, 2, 2, 2],
                   [2, 2, 2, 2]], dtype=dtype), "multiply"),
    ]

    for input, src, result, operation in test_data:
        _scatter_(input, 0, index, src, reduce=operation)
        assert_array_equal(input, result)


# test_torch.py: test_scatter_reduce_scalar. Port difference: upstream's src is a Python
# number, scatter_'s scalar overload, which writes it at every position index names;
# scatter_reduce (PyTorch's and ndgather's) takes a tensor src, so the number becomes an
# array of index's shape holding it.
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=_name)
def test_scatter_reduce_scalar(dtype):
    index = np.array([[1], [2]], dtype=np.int64)
    test_data = [
        (np.zeros((4, 4), dtype=dtype), 1,
         np.array([[0, 0, 0, 0],
                   [1, 0, 0, 0],
                   [1, 0, 0, 0],
                   [0, 0, 0, 0]], dtype=dtype), "add"),
        (np.tile(np.array([2], dtype=dtype), (4, 4)), 2,
         np.array([[2, 2, 2, 2],
                   [4, 2, 2, 2],
                   [4, 2, 2, 2],
                   [2, 2, 2, 2]], dtype=dtype), "multiply"),
    ]

    for input, src, result, operation in test_data:
        _scatter_(input, 0, index, np.full(index.shape, src, dtype=dtype), reduce=operation)
        assert_array_equal(input, result)


# test_torch.py: test_scatter_reduce_non_unique_index
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=_name)
def test_scatter_reduce_non_unique_index(dtype):
    height = 2
    width = 2
    index = np.zeros((height, width), dtype=np.int64)
    test_data = [
        (np.ones((height, width), dtype=dtype),
         np.ones((height, width), dtype=dtype),
         np.tile(np.array([[3], [1]], dtype=dtype), (1, width)), "add"),
        (np.tile(np.array([2], dtype=dtype), (height, width)),
         np.tile(np.array([2], dtype=dtype), (height, width)),
         np.tile(np.array([[8], [2]], dtype=dtype), (1, width)), "multiply"),
    ]

    for input, src, result, operation in test_data:
        _scatter_(input, 0, index, src, reduce=operation)
        assert_array_equal(input, result,
                           err_msg=f"result: {result} input: {input} method: {operation}")


# ---------------------------------------------------------------------------------------
# PyTorch 2.15.0: torch/testing/_internal/common_methods_invocations.py
# ---------------------------------------------------------------------------------------

S, M = 5, 10  # opinfo/core.py


def gather_variable(shape, index_dim, max_indices, rng, duplicate=False):
    """common_methods_invocations.gather_variable."""
    assert len(shape) == 2 and index_dim < 2
    batch_dim = 1 - index_dim
    index = np.zeros(shape, dtype=np.int64)
    for i in range(shape[index_dim]):
        np.moveaxis(index, index_dim, 0)[i] = rng.permutation(max_indices)[:shape[batch_dim]]
    if duplicate:
        np.moveaxis(index, batch_dim, 0)[0] = np.moveaxis(index, batch_dim, 0)[1]
    return index


def _reference(inp, dim, index, src, reduce, include_self):
    """The reference of _test_scatter_base, for any rank (upstream's loop is for rank 3),
    computed in the dtype."""
    out = np.array(inp, copy=True).reshape(inp.shape or (1,))
    index, src = index.reshape(index.shape or (1,)), src.reshape(src.shape or (1,))
    dim %= out.ndim
    counts = np.zeros(out.shape, np.int64) + include_self
    with np.errstate(over="ignore", invalid="ignore"):
        for p in itertools.product(*(range(d) for d in index.shape)):
            t = p[:dim] + (int(index[p]),) + p[dim + 1:]
            value = src[p]
            if not include_self and counts[t] == 0:
                out[t] = value
            elif reduce in ("sum", "mean"):
                out[t] = out[t] + value
            elif reduce == "prod":
                out[t] = _torch_mul(out[t], value)
            elif reduce == "amax":
                out[t] = max(out[t], value)
            else:
                out[t] = min(out[t], value)
            counts[t] += 1
    if reduce == "mean":
        out = _torch_mean(out, counts, out.dtype)
    return out.reshape(inp.shape)


def sample_inputs_scatter_reduce(dtype, reduce):
    """sample_inputs_scatter_reduce (requires_grad=False): (input, dim, index, src, reduce,
    include_self)."""
    rng = _rng("sample_inputs_scatter_reduce", _name(dtype), reduce)

    def make_arg(shape):
        return make_tensor(shape, dtype, rng)

    def gather(shape, index_dim, max_indices):
        return gather_variable(shape, index_dim, max_indices, rng)

    zero = np.array(0, dtype=np.int64)
    test_cases = (
        ((M, S), 0, lambda: gather((S, S), 1, M), (S, S)),
        ((M, S), 1, lambda: gather((S, S), 0, S), (S, S)),
        ((M, S), -1, lambda: gather((S, S), 0, S), (S, S)),
        ((M, S), 0, lambda: gather((M, S // 2), 1, M), (M, S // 2)),
        ((M, S), 1, lambda: gather((M, S // 2), 0, S), (M, S // 2)),
        ((M, S), -1, lambda: gather((M, S // 2), 0, S), (M, S // 2)),
        ((), 0, lambda: zero.copy(), ()),
    )
    for (inp_shape, dim, index, src_shape), include_self in itertools.product(
            test_cases, [False, True, False]):
        yield make_arg(inp_shape), dim, index(), make_arg(src_shape), reduce, include_self


# The OpInfo entries scatter_reduce.{sum,prod,mean,amin,amax}: dtypes=all_types_and(
# torch.float16, torch.bfloat16[, torch.bool]); bool for all but mean.
OPINFO_DTYPES = {r: INT_DTYPES + [np.dtype(np.float32), np.dtype(np.float64),
                                  np.dtype(np.float16), BF16] + ([] if r == "mean" else BOOL)
                 for r in ("sum", "prod", "mean", "amin", "amax")}


# PyTorch's OpInfo tests (test/test_ops.py) run every sample through the function and its
# in-place variant (test_variant_consistency_eager) and compare against a reference. Port
# difference: the reference here is _test_scatter_base's loop (PyTorch's OpInfo has no
# reference function for scatter_reduce; test_ops checks it against the CPU kernel itself,
# against which these expected values were checked); the gradient-only sample (prod with
# requires_grad) is not taken: ndgather has no autograd.
@pytest.mark.parametrize("reduce,dtype", [(r, d) for r, ds in OPINFO_DTYPES.items()
                                          for d in ds], ids=lambda v: _name(v)
                         if isinstance(v, np.dtype) else v)
def test_opinfo_samples_scatter_reduce(reduce, dtype):
    for inp, dim, index, src, reduce, include_self in sample_inputs_scatter_reduce(dtype,
                                                                                  reduce):
        expected = _reference(inp, dim, index, src, reduce, include_self)
        out = ng.scatter_reduce(inp, dim, index, src, reduce, include_self=include_self)
        inplace = inp.copy()
        ng.scatter_reduce(inplace, dim, index, src, reduce, include_self=include_self,
                          out=inplace)
        _assert_scatter_equal(out, expected, dtype)
        assert_array_equal(inplace, out)


# error_inputs_scatter_and_scatter_add: the OpInfo error inputs of torch.scatter and
# torch.scatter_add. Port difference: they are applied to scatter_reduce, which runs the
# same checks (scatter_gather_dtype_check and scatter_shape_check in ATen's
# ScatterGatherChecks.h), with the same classes and messages (checked on PyTorch 2.15.0's
# torch.scatter_reduce for each reduction).
def error_inputs_scatter_and_scatter_add(rng):
    # Error when self.dtype != src.dtype (and src is not a scalar)
    src = make_tensor((2, 5), np.float32, rng)
    idx = np.array(((0, 1), (1, 2)), dtype=np.int64)
    dst = np.zeros((3, 5), dtype=np.float64)
    yield (dst, 0, idx, src), "Expected self.dtype to be equal to src.dtype"

    # Index and destination must have the same number of dimensions
    src = make_tensor((2, 5), np.float32, rng)
    idx = np.array(((0, 1), (1, 2)), dtype=np.int64)
    dst = np.zeros((3, 5, 3), dtype=np.float32)
    yield (dst, 0, idx, src), \
        "Index tensor must have the same number of dimensions as self tensor"

    # Index and src must have the same number of dimensions when src is not a scalar
    src = make_tensor((2, 5, 2), np.float32, rng)
    idx = np.array(((34, 1), (1, 2)), dtype=np.int64)
    dst = np.zeros((3, 5), dtype=np.float32)
    yield (dst, 0, idx, src), \
        "Index tensor must have the same number of dimensions as src tensor"

    # Index out of bounds (the CPU case)
    src = make_tensor((2, 5), np.float32, rng)
    idx = np.array(((34, 1), (1, 2)), dtype=np.int64)
    dst = np.zeros((3, 5), dtype=np.float32)
    yield (dst, 0, idx, src), "index 34 is out of bounds for dimension 0 with size 3"


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_error_inputs_scatter(reduce):
    # test_ops.py's test_errors: assertRaisesRegex(error_type=RuntimeError, error_regex).
    for (dst, dim, idx, src), error_regex in error_inputs_scatter_and_scatter_add(
            _rng("errors", reduce)):
        before = dst.copy()
        with pytest.raises(RuntimeError, match=error_regex):
            ng.scatter_reduce(dst, dim, idx, src, reduce)
        with pytest.raises(RuntimeError, match=error_regex):
            ng.scatter_reduce(dst, dim, idx, src, reduce, out=dst)
        assert_array_equal(dst, before)
