//! Arrays that an op moves without reading (the inputs of kind `Elements`: gather's params,
//! take_along_axis's arr): lent to the core as their bytes (`Input::Records`), whatever
//! NumPy's dtype, and the result made an array of that dtype again. What the core cannot
//! know of such an array is its NumPy dtype, so three conversions happen here: the fill
//! element's bytes in that dtype, the output's dtype check, and object arrays, whose
//! elements are references that Python counts.

use crate::errors::to_py;
use crate::host::NumpyHost;
use crate::output::{self, array_from_vec};
use crate::raw::{typed_view, Raw};
use crate::{door, dtypes, into_vec, policy};
use ndgather::registry::{Attr, Attrs, Input};
use ndgather::{BadIndices, FillValue, OpDef, Out, Tensor, TensorView};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The policy and fill value for `params`. Under `"fill"` the Python layer gives a fill
/// element's bytes (NumPy made them, in params' own dtype and byte order), or none for JAX's
/// default, which the core's dtype table gives for the dtypes it has (in params' byte
/// order). Without bytes (strings, records, datetimes) and for object arrays, bad slices
/// are zeros, empty or None, as under `"ignore"`: records of units cannot take a typed
/// default.
pub(crate) fn fill_policy(
    name: &str,
    fill: Option<Vec<u8>>,
    params: &Bound<'_, PyUntypedArray>,
) -> PyResult<(BadIndices, FillValue)> {
    let policy = policy(name)?;
    if policy != BadIndices::Fill {
        return Ok((policy, FillValue::Default));
    }
    let dtype = params.dtype();
    if dtype.has_object() {
        dtypes::object_array("params", params)?;
        if fill.is_some() {
            return Err(PyTypeError::new_err(
                "object arrays fill bad slices with None; fill_value is not supported for them",
            ));
        }
        return Ok((BadIndices::Ignore, FillValue::Default));
    }
    let fill = match fill {
        Some(bytes) => Some(bytes),
        None => dtypes::default_fill(params).map_err(to_py)?,
    };
    match fill {
        Some(bytes) => FillValue::bytes(&bytes)
            .map(|v| (BadIndices::Fill, v))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "a fill_value of dtype {dtype} takes {} bytes; at most 16 are supported",
                    bytes.len()
                ))
            }),
        None => Ok((BadIndices::Ignore, FillValue::Default)),
    }
}

/// Settles `bad_indices="fill"` in a generic attribute map as [`fill_policy`] does, a number
/// given as `fill_value` made an element's bytes by NumPy first.
pub(crate) fn settle_fill(attrs: &mut Attrs, params: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    if attrs.get("bad_indices") != Some(&Attr::Str("fill".into())) {
        return Ok(());
    }
    let bytes = match attrs.get("fill_value").cloned() {
        Some(Attr::Bytes(bytes)) => Some(bytes),
        Some(Attr::Float(v)) => Some(numpy_bytes(params, v)?),
        Some(Attr::Int(v)) => Some(numpy_bytes(params, v)?),
        Some(other) => {
            return Err(PyTypeError::new_err(format!(
                "fill_value must be a number or an element's bytes, not {other}"
            )))
        }
        None => None,
    };
    let (policy, fill) = fill_policy("fill", bytes, params)?;
    attrs.insert("bad_indices", Attr::Str(policy.name().into()));
    if let FillValue::Bytes { bytes, len } = fill {
        attrs.insert(
            "fill_value",
            Attr::Bytes(bytes[..usize::from(len)].to_vec()),
        );
    }
    Ok(())
}

/// `value` as one element of `params`' dtype, made by NumPy.
fn numpy_bytes<'py>(
    params: &Bound<'py, PyUntypedArray>,
    value: impl IntoPyObject<'py>,
) -> PyResult<Vec<u8>> {
    let numpy = params.py().import("numpy")?;
    numpy
        .call_method1("asarray", (value, params.dtype()))?
        .call_method0("tobytes")?
        .extract()
}

/// Checks that `out` has params' dtype: the core sees only their item sizes.
pub(crate) fn check_out(
    params: &Bound<'_, PyUntypedArray>,
    out: &Bound<'_, PyUntypedArray>,
) -> PyResult<()> {
    let dtype = params.dtype();
    if out.dtype().is_equiv_to(&dtype) {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "out has dtype {}, but the result has params' dtype {dtype}",
        out.dtype()
    )))
}

/// A new result of records (units, the record axis last) as an array of params' dtype.
pub(crate) fn to_numpy<'py>(
    params: &Bound<'py, PyUntypedArray>,
    result: Tensor,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = result.shape();
    let shape = shape[..shape.len().saturating_sub(1)].to_vec();
    let descr = params.dtype();
    ndgather::with_tensor!(Tensor, result, fixed a => array_from_vec(params.py(), &descr, &shape, into_vec(a)),
        else dtype => Err(PyValueError::new_err(format!("internal error: records of {dtype}"))))
}

/// Checks object arrays before their addresses are moved: only whole references (a record
/// holding one among other bytes is refused), each 8-byte aligned in `params` and in `out`
/// (a field of a packed record is not).
pub(crate) fn check_objects(
    what: &str,
    params: &Bound<'_, PyUntypedArray>,
    out: Option<&Bound<'_, PyUntypedArray>>,
) -> PyResult<()> {
    dtypes::object_array(what, params)?;
    let aligned = |a: &Bound<'_, PyUntypedArray>| Raw::of(a).raw().unit_size() >= 8;
    if !aligned(params) || out.is_some_and(|o| !aligned(o)) {
        return Err(PyTypeError::new_err(
            "an object array whose references are not 8-byte aligned (a field of a packed \
             record) cannot be gathered or written; copy it first",
        ));
    }
    Ok(())
}

/// An object array's result: the addresses the op moved (read with the GIL held since, so
/// no element was freed) as new references, stored into `out` or a new object array (see
/// `output::store_objects` for the order that keeps the counts right).
pub(crate) fn objects<'py>(
    py: Python<'py>,
    addresses: Tensor,
    out: Option<&Bound<'py, PyUntypedArray>>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = addresses.shape();
    let shape = shape[..shape.len().saturating_sub(1)].to_vec();
    let addresses = addresses.into_array::<u64>().map_err(to_py)?;
    let objects = output::object_references(py, into_vec(addresses));
    let target = match out {
        Some(out) if out.shape() != &shape[..] => {
            return Err(to_py(ndgather::Error::OutputShapeMismatch {
                given: dtypes::shape_of(out),
                expected: shape,
            }))
        }
        Some(out) => out.clone(),
        None => output::null_object_array(py, &shape),
    };
    output::store_objects(py, &target, objects)?;
    Ok(target.into_any())
}

/// Runs `op`, whose inputs are the array it moves (`params`) and integer `indices`: `params`
/// lent as its bytes, into a new array of its dtype (one NumPy allocates, where the core
/// runs the call with the GIL held) or into `out`. `not_integer` is the error for indices of
/// a dtype the core's table lacks (NumPy's words for take_along_axis, TensorFlow's for the
/// others); the core words the others.
pub(crate) fn run<'py>(
    py: Python<'py>,
    op: &dyn OpDef,
    (params, indices): (&Bound<'py, PyUntypedArray>, &Bound<'py, PyUntypedArray>),
    out: Option<&Bound<'py, PyUntypedArray>>,
    not_integer: impl FnOnce() -> PyErr,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(out) = out {
        check_out(params, out)?;
        // Before any path, objects' included: a store into memory that is still to be read
        // would read what it wrote.
        let o = Raw::of(out);
        if o.may_overlap(&Raw::of(params)) || o.may_overlap(&Raw::of(indices)) {
            return Err(PyValueError::new_err(
                "out shares memory with params or indices; pass a separate array",
            ));
        }
    }
    let objects = params.dtype().has_object();
    if objects {
        check_objects(op.signature().inputs[0].name, params, out)?;
    }
    // Indices that are not integers are refused before anything runs, in the op's words.
    let index = match dtypes::dtype_of(indices) {
        Some(dtype) if dtype.is_index() => {
            ndgather::with_dtype!(dtype, index T => typed_view::<T>(indices).map(TensorView::from),
                else Err(not_integer()))?
        }
        _ => return Err(not_integer()),
    };
    let inputs = [Input::Records(Raw::of(params).raw()), Input::Tensor(index)];
    if objects {
        // With the GIL held from the read of the addresses to the references taken.
        let mut host = NumpyHost::new(py, None, false);
        let value = op.run_hosted(&inputs, Out::New, &mut host).map_err(to_py)?;
        return self::objects(py, door::dense(value)?, out);
    }
    let mut host = NumpyHost::new(py, Some(params.dtype()), true);
    let Some(target) = out else {
        let value = op.run_hosted(&inputs, Out::New, &mut host).map_err(to_py)?;
        return match (host.take_array(), value) {
            (Some(array), None) => Ok(array),
            (None, value) => to_numpy(params, door::dense(value)?),
            (Some(_), Some(_)) => Err(PyValueError::new_err("internal error: two results")),
        };
    };
    let records = Raw::of(target).raw_mut()?;
    op.run_hosted(&inputs, Out::IntoRecords(records), &mut host)
        .map_err(to_py)?;
    Ok(target.clone().into_any())
}
