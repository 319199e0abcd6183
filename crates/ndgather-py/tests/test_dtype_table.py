"""Every row of the core's dtype table through the Python front end: its name is NumPy's or
ml_dtypes', of its size, and a gather moves it and fills bad slices with JAX's default for it
(NaN for the floats, the minimum of signed integers, the maximum of unsigned ones, True). A
row the front end misses fails here."""
import ml_dtypes
import numpy as np
import pytest

import ndgather as ng
from ndgather import _core

FIXED = [(name, size, bytes(fill)) for name, size, fill in _core.dtype_table()
         if size is not None]


def numpy_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def jax_default(dt: np.dtype) -> bytes:
    """JAX's `mode="fill"` default, written out here from its documentation."""
    if dt == np.bool_:
        return np.array(True).tobytes()
    if dt.kind == "i":
        return np.array(np.iinfo(dt).min, dt).tobytes()
    if dt.kind == "u":
        return np.array(np.iinfo(dt).max, dt).tobytes()
    return np.array(np.nan).astype(dt).tobytes()


def test_the_table_has_the_float8_types():
    names = {name for name, _, _ in FIXED}
    assert {"float8_e4m3fn", "float8_e5m2", "bfloat16", "complex128"} <= names


@pytest.mark.parametrize("name,size,fill", FIXED, ids=[f[0] for f in FIXED])
def test_every_fixed_dtype_gathers_and_fills_as_jax(name, size, fill):
    dt = numpy_dtype(name)
    assert dt.itemsize == size
    raw = np.random.default_rng(0).integers(0, 2 if dt == np.bool_ else 256, 6 * size)
    params = raw.astype(np.uint8).view(dt).reshape(3, 2)
    out = ng.gather(params, [2, 0])
    assert out.dtype == dt
    assert out.tobytes() == params[[2, 0]].tobytes()
    filled = ng.gather(params, [5], bad_indices="fill")
    assert filled.tobytes() == jax_default(dt) * 2 == fill * 2
    along = ng.take_along_axis(params, np.array([[0, 7]]), axis=1, bad_indices="fill")
    assert along.tobytes() == b"".join(row[:1].tobytes() + jax_default(dt) for row in params)


@pytest.mark.parametrize("dtype", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
def test_float8_tables_take_fill_values_rounded_as_ml_dtypes(dtype):
    table = np.arange(8, dtype=np.float32).reshape(4, 2).astype(dtype)
    out = ng.gather_nd(table, [[3], [9]], bad_indices="fill", fill_value=1000.0)
    want = np.concatenate([table[3], np.array([1000.0, 1000.0]).astype(dtype)])
    assert out.reshape(-1).tobytes() == want.tobytes()
