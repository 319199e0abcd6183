//! NumPy dtypes to the core's dtype table: which arrays are indices, each dispatched to its
//! Rust type by `ndgather::with_dtype!`, and which dtypes the door lends to ops by name. Gathers need no
//! table: they lend any dtype to the core as its bytes (`moved.rs`), which the core moves in
//! the unit it chooses.

use ndgather::{DType, Kind, TensorView};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Checks that `array` (whose dtype holds Python objects) is a plain object array: 8-byte
/// slots that each hold one reference. Records with object fields and NumPy's `StringDType`
/// also hold references, but not one per 8 bytes, so no object path may read them as
/// addresses.
pub(crate) fn object_array(name: &str, array: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    let dtype = array.dtype();
    if dtype.kind() == b'O' && dtype.itemsize() == 8 {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "{name} has dtype {dtype}, which holds Python objects: only arrays of dtype=object \
         (one object per element) are supported"
    )))
}

/// Runs `$body` with `$i` a read-only `ArrayViewD` of the integer array `$array` (a dtype of
/// the core's `index` role, native byte order), or returns a `TypeError`.
macro_rules! with_indices {
    ($array:expr, $i:ident => $body:expr) => {{
        let array: &Bound<'_, numpy::PyUntypedArray> = $array;
        let not_integer = || $crate::dtypes::not_integer("indices", array);
        match $crate::dtypes::dtype_of(array) {
            Some(dtype) => ndgather::with_dtype!(dtype, index T => (|| {
                let $i = $crate::raw::typed_view::<T>(array)?;
                $body
            })(), else Err(not_integer())),
            None => Err(not_integer()),
        }
    }};
}
pub(crate) use with_indices;

/// The dtype of a fixed-width NumPy array in native byte order (ml_dtypes' types too);
/// `None` for any other.
pub(crate) fn dtype_of(array: &Bound<'_, PyUntypedArray>) -> Option<DType> {
    let dtype = array.dtype();
    if dtype.is_native_byteorder() == Some(false) {
        return None;
    }
    table_dtype(&dtype)
}

/// The table's dtype of a NumPy dtype of any byte order; `None` for any other. NumPy's own
/// kinds go by kind and size, read from the descriptor without a call into Python (every
/// index and number dispatch asks); ml_dtypes' types by their name (ml_dtypes' names are the
/// table's) and size. Only ml_dtypes' own types are read by name: a subclass of `np.void`
/// named `float` has a dtype named `float64`, which may hold a Python object.
fn table_dtype(dtype: &Bound<'_, numpy::PyArrayDescr>) -> Option<DType> {
    let size = dtype.itemsize();
    let kind = match dtype.kind() {
        b'b' => Some(Kind::Bool),
        b'i' => Some(Kind::Int),
        b'u' => Some(Kind::Uint),
        b'f' => Some(Kind::Float),
        b'c' => Some(Kind::Complex),
        _ => None,
    };
    kind.and_then(|k| DType::of(k, size)).or_else(|| {
        if dtype.has_object() || dtype.has_fields() || dtype.has_subarray() {
            return None;
        }
        let module: String = dtype
            .getattr("type")
            .ok()?
            .getattr("__module__")
            .ok()?
            .extract()
            .ok()?;
        if module != "ml_dtypes" && !module.starts_with("ml_dtypes.") {
            return None;
        }
        let name: String = dtype.getattr("name").ok()?.extract().ok()?;
        DType::from_name(&name).filter(|d| d.size() == Some(size))
    })
}

/// A read-only view of an integer array (a dtype of the core's `index` role, native byte
/// order) as the core's dtype-erased view, or a `TypeError`.
pub(crate) fn index_view<'a>(
    what: &str,
    array: &'a Bound<'_, PyUntypedArray>,
) -> PyResult<TensorView<'a>> {
    match dtype_of(array) {
        Some(dtype) => ndgather::with_dtype!(dtype, index T => {
            crate::raw::typed_view::<T>(array).map(TensorView::from)
        }, else Err(not_integer(what, array))),
        None => Err(not_integer(what, array)),
    }
}

/// JAX's default fill element for `array`'s dtype, as bytes in its byte order: the core's
/// dtype table's (`DType::fill_bytes`); `None` for dtypes the table does not have.
pub(crate) fn default_fill(array: &Bound<'_, PyUntypedArray>) -> ndgather::Result<Option<Vec<u8>>> {
    let dtype = array.dtype();
    let swapped = dtype.is_native_byteorder() == Some(false);
    let Some(table) = table_dtype(&dtype) else {
        return Ok(None);
    };
    let mut bytes = table.fill_bytes(ndgather::FillValue::Default)?;
    if let (true, Some(b)) = (swapped, bytes.as_mut()) {
        // A complex number is two floats, each in the array's byte order.
        let parts = if table.kind() == Kind::Complex { 2 } else { 1 };
        let part = b.len() / parts;
        b.chunks_mut(part.max(1)).for_each(<[u8]>::reverse);
    }
    Ok(bytes)
}

pub(crate) fn not_integer(what: &str, array: &Bound<'_, PyUntypedArray>) -> PyErr {
    PyTypeError::new_err(format!(
        "{what} must be an array of integers ({}), got dtype {}",
        DType::names_where(DType::is_index),
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
