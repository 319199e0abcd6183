//! The package's dtype tables: which NumPy index dtypes map to which Rust integer, and which
//! numeric dtypes the summing ops (gradients and scatters) accept. Gathers need no table: they
//! move any dtype as units of bytes (`raw.rs`).

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Runs `$body` with `$i` a read-only `ArrayViewD` of the integer array `$array` (any
/// integer dtype, native byte order), or returns a `TypeError`.
macro_rules! with_indices {
    ($array:expr, $i:ident => $body:expr) => {{
        let array: &Bound<'_, numpy::PyUntypedArray> = $array;
        $crate::dtypes::with_indices!(@try array, $i => $body; i64, i32, i16, i8, u64, u32, u16, u8)
    }};
    (@try $array:ident, $i:ident => $body:expr; $($t:ty),*) => {
        (|| {
            $(
                if let Ok(typed) = $array.cast::<numpy::PyArrayDyn<$t>>() {
                    let guard = numpy::PyArrayMethods::try_readonly(typed)?;
                    let $i = guard.as_array();
                    return $body;
                }
            )*
            Err($crate::dtypes::not_integer("indices", $array))
        })()
    };
}
pub(crate) use with_indices;

/// Runs `$body` with `$T` the Rust type of the numeric array `$array` (a summable dtype in
/// native byte order), or returns a `TypeError`.
macro_rules! with_number_type {
    ($array:expr, $T:ident => $body:expr) => {{
        let array: &Bound<'_, numpy::PyUntypedArray> = $array;
        match $crate::dtypes::number_kind(array) {
            Some(('i', 1)) => {
                type $T = i8;
                $body
            }
            Some(('i', 2)) => {
                type $T = i16;
                $body
            }
            Some(('i', 4)) => {
                type $T = i32;
                $body
            }
            Some(('i', 8)) => {
                type $T = i64;
                $body
            }
            Some(('u', 1)) => {
                type $T = u8;
                $body
            }
            Some(('u', 2)) => {
                type $T = u16;
                $body
            }
            Some(('u', 4)) => {
                type $T = u32;
                $body
            }
            Some(('u', 8)) => {
                type $T = u64;
                $body
            }
            Some(('f', 2)) => {
                type $T = half::f16;
                $body
            }
            Some(('b', 2)) => {
                type $T = half::bf16;
                $body
            }
            Some(('f', 4)) => {
                type $T = f32;
                $body
            }
            Some(('f', 8)) => {
                type $T = f64;
                $body
            }
            Some(('c', 8)) => {
                type $T = num_complex::Complex32;
                $body
            }
            Some(('c', 16)) => {
                type $T = num_complex::Complex64;
                $body
            }
            _ => Err($crate::dtypes::not_number(array)),
        }
    }};
}
pub(crate) use with_number_type;

/// Runs `$body` with `$T` the Rust type of the floating-point array `$array` (float16,
/// bfloat16, float32, float64 in native byte order), or returns a `TypeError`.
macro_rules! with_float_type {
    ($array:expr, $T:ident => $body:expr) => {{
        let array: &Bound<'_, numpy::PyUntypedArray> = $array;
        match $crate::dtypes::number_kind(array) {
            Some(('f', 2)) => {
                type $T = half::f16;
                $body
            }
            Some(('b', 2)) => {
                type $T = half::bf16;
                $body
            }
            Some(('f', 4)) => {
                type $T = f32;
                $body
            }
            Some(('f', 8)) => {
                type $T = f64;
                $body
            }
            _ => Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "embedding tables must be float16, bfloat16, float32 or float64, got dtype {}",
                array.dtype()
            ))),
        }
    }};
}
pub(crate) use with_float_type;

/// `(kind, itemsize)` of a numeric dtype in native byte order: NumPy's kind character, or
/// `'b'` for ml_dtypes' `bfloat16`.
pub(crate) fn number_kind(array: &Bound<'_, PyUntypedArray>) -> Option<(char, usize)> {
    let dtype = array.dtype();
    if dtype.is_native_byteorder() == Some(false) {
        return None;
    }
    let kind = dtype.kind() as char;
    let size = dtype.itemsize();
    if matches!(kind, 'i' | 'u' | 'f' | 'c') {
        return Some((kind, size));
    }
    let name = dtype.getattr("name").ok()?;
    (size == 2 && name.extract::<String>().ok()? == "bfloat16").then_some(('b', 2))
}

pub(crate) fn not_integer(what: &str, array: &Bound<'_, PyUntypedArray>) -> PyErr {
    PyTypeError::new_err(format!(
        "{what} must be an array of integers (int8 to int64, uint8 to uint64), got dtype {}",
        array.dtype()
    ))
}

pub(crate) fn not_number(array: &Bound<'_, PyUntypedArray>) -> PyErr {
    PyTypeError::new_err(format!(
        "expected an array of numbers (int, uint, float16/32/64, bfloat16, complex64/128), got dtype {}",
        array.dtype()
    ))
}

/// Reads a shape given by the caller, refusing negative sizes.
pub(crate) fn dims(what: &str, values: &[i64]) -> PyResult<Vec<usize>> {
    values
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            crate::errors::InvalidArgumentError::new_err(format!(
                "{what} must not have negative sizes, got {values:?}"
            ))
        })
}

/// The shape of `array`, for error messages.
pub(crate) fn shape_of(array: &Bound<'_, PyUntypedArray>) -> Vec<usize> {
    array.shape().to_vec()
}
