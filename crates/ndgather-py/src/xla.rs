//! ndgather's ops inside XLA (issue 55): two handlers of XLA's FFI, which `ndgather._jax`
//! registers with JAX as the custom-call targets `ndgather` and `ndgather_grad`, run any op of
//! the registry by name on XLA's buffers: `jax.jit`, `jax.grad` and `jax.vmap` then run the
//! core itself, with no trip back to Python.
//!
//! A call names its op and gives the op's attributes as the custom call's own attributes
//! (`ndgather_op`, then each attribute by its name), and the number of buffers for each input
//! of the op's signature (`ndgather_arity`). Everything in the call frame is checked before it
//! is read: its struct sizes, the kinds and dtypes of buffers and attributes, dimensions and
//! their product, and that no result buffer shares memory with an argument (a direct
//! `jax.ffi.ffi_call` may alias them); the result's shape is the op's own check.

use crate::kernel_call::{invalid, items, run_call, Call, Failure, Raw};
use ndgather::registry::{self, Attr, Attrs};
use ndgather::shape::Shape;
use ndgather::DType;
use pyo3::prelude::*;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;

mod c_api;
pub(crate) use c_api::xla_layout;
use c_api::*;

/// The address of the forward handler, for `jax.ffi.pycapsule`.
#[pyfunction]
pub(crate) fn xla_handler() -> usize {
    forward as *const () as usize
}

/// The address of the gradient handler, for `jax.ffi.pycapsule`.
#[pyfunction]
pub(crate) fn xla_grad_handler() -> usize {
    backward as *const () as usize
}

extern "C" fn forward(frame: *mut CallFrame) -> *mut XlaError {
    entry(frame, Call::Forward)
}

extern "C" fn backward(frame: *mut CallFrame) -> *mut XlaError {
    entry(frame, Call::Backward)
}

fn entry(frame: *mut CallFrame, call: Call) -> *mut XlaError {
    if frame.is_null() {
        unusable("no call frame");
    }
    // SAFETY: a non-null frame is XLA's, live for the call; every struct of the C API begins
    // with its size, a `size_t`, which is read before anything else.
    if unsafe { frame.cast::<usize>().read() } < CALL_FRAME_SIZE {
        unusable("a call frame smaller than the handler reads");
    }
    // SAFETY: the frame is live and at least as large as `CallFrame` (checked above).
    let frame = unsafe { &*frame };
    // The metadata query comes first: older XLA versions ask it with no API table.
    if let Some(ext) = metadata_extension(frame.extension_start) {
        return match (metadata(ext), api_of(frame)) {
            (Ok(()), _) => null_mut(),
            (Err(f), Some(api)) => report(api, f),
            (Err(Failure(message, _)), None) => unusable(&message),
        };
    }
    let Some(api) = api_of(frame) else {
        unusable("a call frame with no usable API table");
    };
    if frame.stage != STAGE_EXECUTE {
        return report(
            api,
            invalid(format!(
                "ndgather: the handler runs at XLA's execute stage, not stage {}",
                frame.stage
            )),
        );
    }
    match catch_unwind(AssertUnwindSafe(|| execute(frame, call))) {
        Ok(Ok(())) => null_mut(),
        Ok(Err(f)) => report(api, f),
        Err(_) => report(
            api,
            Failure(
                "ndgather: internal error (a panic in the core; please report it)".into(),
                crate::kernel_call::INTERNAL,
            ),
        ),
    }
}

/// A call that cannot be answered: with no way to report an error, answering "no error"
/// would leave the results unwritten and the caller reading garbage, so the process stops.
/// XLA never makes such a call; only a hand-made pointer can.
fn unusable(why: &str) -> ! {
    eprintln!("ndgather: XLA's FFI handler was called with {why}; stopping the process");
    std::process::abort()
}

/// The frame's API table, if it has one large enough to report an error through.
fn api_of(frame: &CallFrame) -> Option<&Api> {
    if frame.api.is_null() {
        return None;
    }
    // SAFETY: a non-null API table is XLA's, live as long as XLA is; its size is read first.
    if unsafe { frame.api.cast::<usize>().read() } < API_SIZE {
        return None;
    }
    // SAFETY: as above, and at least as large as `Api`.
    let api = unsafe { &*frame.api };
    api.error_create.is_some().then_some(api)
}

/// The frame's metadata extension, if its first extension is one.
fn metadata_extension(ext: *mut ExtensionBase) -> Option<*mut ExtensionBase> {
    if ext.is_null() {
        return None;
    }
    // SAFETY: a non-null extension is XLA's, live for the call; its size is read first, and
    // its kind only where the base struct fits.
    let fits = unsafe { ext.cast::<usize>().read() } >= EXTENSION_BASE_SIZE;
    (fits && unsafe { (*ext).kind } == EXTENSION_METADATA).then_some(ext)
}

/// XLA's question, before the first call, of the handler's API version and traits.
fn metadata(ext: *mut ExtensionBase) -> Result<(), Failure> {
    // SAFETY: the extension is live and its base fits (`metadata_extension`); its own size
    // is read from the base before the larger struct is.
    if unsafe { (*ext).struct_size } < METADATA_EXTENSION_SIZE {
        return Err(invalid(
            "ndgather: XLA's metadata extension is smaller than expected",
        ));
    }
    // SAFETY: an extension of the metadata kind, of at least its size.
    let ext = unsafe { &*(ext as *const MetadataExtension) };
    if ext.metadata.is_null() {
        return Err(invalid(
            "ndgather: XLA's metadata extension has no metadata",
        ));
    }
    // SAFETY: the metadata is XLA's, live for the call; its size is read first.
    if unsafe { ext.metadata.cast::<usize>().read() } < METADATA_SIZE {
        return Err(invalid("ndgather: XLA's metadata is smaller than expected"));
    }
    // SAFETY: as above, and at least as large as `Metadata`; XLA reads it after the call.
    let meta = unsafe { &mut *ext.metadata };
    meta.api_version = ApiVersion {
        struct_size: API_VERSION_SIZE,
        extension_start: null_mut(),
        major_version: API_MAJOR,
        minor_version: API_MINOR,
    };
    meta.traits = 0;
    Ok(())
}

fn report(api: &Api, Failure(message, code): Failure) -> *mut XlaError {
    let Some(create) = api.error_create else {
        unusable("an API table with no XLA_FFI_Error_Create");
    };
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let mut args = ErrorCreateArgs {
        struct_size: ERROR_CREATE_ARGS_SIZE,
        extension_start: null_mut(),
        message: message.as_ptr(),
        errc: code,
    };
    // SAFETY: XLA's own function, called with its argument struct; it copies the message.
    let error = unsafe { create(&mut args) };
    if error.is_null() {
        unusable("an XLA_FFI_Error_Create that made no error");
    }
    error
}

/// One buffer of the frame: a live `XLA_FFI_Buffer`, checked.
fn raw(kind: i32, ptr: *mut c_void, what: &str) -> Result<Raw, Failure> {
    if kind != KIND_BUFFER || ptr.is_null() {
        return Err(invalid(format!("ndgather: {what} is not a buffer")));
    }
    // SAFETY: a buffer entry of the frame points to a live `XLA_FFI_Buffer`, which begins
    // with its size; the size is read before the struct is.
    if unsafe { ptr.cast::<usize>().read() } < BUFFER_SIZE {
        return Err(invalid(format!(
            "ndgather: {what}: a buffer smaller than expected"
        )));
    }
    // SAFETY: as above, and at least as large as `Buffer`.
    let b = unsafe { &*(ptr as *const Buffer) };
    let dtype = DTYPES
        .iter()
        .find(|(x, _, _)| *x == b.dtype)
        .map(|(_, _, d)| *d)
        .ok_or_else(|| {
            invalid(format!(
                "ndgather: {what}: XLA element type {} has no kernel",
                b.dtype
            ))
        })?;
    // SAFETY: the buffer's dims are `rank` live integers.
    let dims = unsafe { items(b.dims, b.rank, what)? };
    Raw::new(dtype, dims, b.data.cast(), what)
}

/// The call's attributes: the op's name, the buffers per input, and the op's own.
fn attributes(frame: &CallFrame) -> Result<(String, Vec<usize>, Attrs), Failure> {
    let a = &frame.attrs;
    if a.struct_size < ATTRS_SIZE {
        return Err(invalid(
            "ndgather: XLA's attributes are smaller than expected",
        ));
    }
    // SAFETY: the frame's attributes are `size` live types, names and values.
    let (types, names, values) = unsafe {
        (
            items(a.types, a.size, "attribute types")?,
            items(a.names, a.size, "attribute names")?,
            items(a.attrs, a.size, "attribute values")?,
        )
    };
    let (mut op, mut arity, mut attrs) = (None, None, Attrs::new());
    for ((&kind, &name), &value) in types.iter().zip(names).zip(values) {
        if name.is_null() || value.is_null() {
            return Err(invalid("ndgather: an attribute without a name or value"));
        }
        // SAFETY: a name is a live byte span.
        let name = unsafe { span(&*name) }?;
        let name = std::str::from_utf8(name)
            .map_err(|_| invalid("ndgather: an attribute name is not UTF-8"))?;
        let attr = attr(kind, value, name)?;
        match (name, attr) {
            ("ndgather_op", Attr::Str(s)) => op = Some(s.into_owned()),
            ("ndgather_arity", Attr::Ints(v)) => {
                arity = Some(
                    v.iter()
                        .map(|&n| usize::try_from(n))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|_| invalid(format!("ndgather: ndgather_arity {v:?}")))?,
                )
            }
            (n, _) if n.starts_with("ndgather_") => {
                return Err(invalid(format!(
                    "ndgather: attribute {n} is not one of the call's"
                )))
            }
            (n, a) => attrs = attrs.with(n.to_string(), a),
        }
    }
    let op = op.ok_or_else(|| invalid("ndgather: the call names no op (attribute ndgather_op)"))?;
    let arity = arity.ok_or_else(|| invalid("ndgather: the call gives no ndgather_arity"))?;
    Ok((op, arity, attrs))
}

/// The bytes of a span.
///
/// # Safety
/// `s` must describe `len` live bytes.
unsafe fn span(s: &ByteSpan) -> Result<&[u8], Failure> {
    // SAFETY: as the caller promises.
    unsafe { items(s.ptr.cast::<u8>(), s.len as i64, "an attribute's bytes") }
}

/// One attribute's value: an integer, float or bool scalar, a string, or an array of
/// integers (a shape) or of bytes (a fill element).
fn attr(kind: i32, value: *mut c_void, name: &str) -> Result<Attr, Failure> {
    let bad = || {
        invalid(format!(
            "ndgather: attribute {name} is of a kind the ops do not take"
        ))
    };
    Ok(match kind {
        ATTR_STRING => {
            // SAFETY: a string attribute is a live byte span.
            let bytes = unsafe { span(&*(value as *const ByteSpan)) }?;
            let s = std::str::from_utf8(bytes).map_err(|_| bad())?;
            Attr::Str(s.to_string().into())
        }
        ATTR_SCALAR => {
            // SAFETY: a scalar attribute is a live `XLA_FFI_Scalar` whose value is of its dtype.
            let s = unsafe { &*(value as *const Scalar) };
            if s.value.is_null() {
                return Err(bad());
            }
            // SAFETY: the value is one element of the scalar's dtype.
            unsafe {
                match s.dtype {
                    S64 => Attr::Int(*(s.value as *const i64)),
                    F64 => Attr::Float(*(s.value as *const f64)),
                    PRED => Attr::Bool(*(s.value as *const u8) != 0),
                    _ => return Err(bad()),
                }
            }
        }
        ATTR_ARRAY => {
            // SAFETY: an array attribute is a live `XLA_FFI_Array` of `size` elements of its
            // dtype.
            let a = unsafe { &*(value as *const Array) };
            let len = i64::try_from(a.size).map_err(|_| bad())?;
            unsafe {
                match a.dtype {
                    S64 => Attr::Ints(items(a.data as *const i64, len, name)?.to_vec()),
                    U8 => Attr::Bytes(items(a.data as *const u8, len, name)?.to_vec()),
                    _ => return Err(bad()),
                }
            }
        }
        _ => return Err(bad()),
    })
}

fn buffers(list: &Args, what: &str) -> Result<Vec<Raw>, Failure> {
    if list.struct_size < ARGS_SIZE {
        return Err(invalid(format!(
            "ndgather: XLA's {what} are smaller than expected"
        )));
    }
    // SAFETY: the frame's arguments (results) are `size` live kinds and pointers.
    let (kinds, ptrs) = unsafe {
        (
            items(list.types, list.size, what)?,
            items(list.args, list.size, what)?,
        )
    };
    kinds
        .iter()
        .zip(ptrs)
        .enumerate()
        .map(|(k, (&kind, &ptr))| raw(kind, ptr, &format!("{what} {k}")))
        .collect()
}

fn execute(frame: &CallFrame, call: Call) -> Result<(), Failure> {
    let (name, arity, attrs) = attributes(frame)?;
    let args = buffers(&frame.args, "argument")?;
    let rets = buffers(&frame.rets, "result")?;
    run_call(&name, &arity, &attrs, &args, &rets, call)
}

/// An input's dtype name and dimensions (a rank and dimensions, each where known); `None`
/// for an input left out.
type InputFact = Option<(String, Option<Vec<Option<usize>>>)>;

/// A result's dtype name and dimensions, where known.
type Inferred = (Option<String>, Option<Vec<Option<usize>>>);

/// The result's dtype name and shape for inputs of the given dtype names and shapes (one
/// entry per input of the op's signature: `None` for one left out, a list's first tensor for
/// a list; a shape of unknown rank `None`, an unknown dimension `None`), as the op infers
/// them: the abstract evaluation of `ndgather._jax`, the static shape of `ndgather._tf`. A
/// dimension the inputs' shapes leave open is `None`.
///
/// # Errors
/// The op's own, as `run_op` raises them.
#[pyfunction]
pub(crate) fn infer_op(
    name: &str,
    facts: Vec<InputFact>,
    attrs: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<Inferred> {
    let def = registry::find(name).map_err(crate::errors::to_py)?;
    let attrs = crate::door::attrs(name, def.signature().attrs, attrs)?;
    let op = def.with_attrs(&attrs).map_err(crate::errors::to_py)?;
    let facts = facts
        .into_iter()
        .map(|f| match f {
            None => Ok(registry::Fact::unknown()),
            Some((dtype, dims)) => DType::from_name(&dtype)
                .map(|d| {
                    let shape = dims.map_or_else(Shape::unknown, Shape::from_dims);
                    registry::Fact::new(Some(d), shape)
                })
                .ok_or_else(|| {
                    pyo3::exceptions::PyTypeError::new_err(format!("{name}: no dtype {dtype}"))
                }),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let fact = op.infer(&facts).map_err(crate::errors::to_py)?;
    Ok((
        fact.dtype.map(|d| d.name().to_string()),
        fact.shape.dims().map(|d| d.to_vec()),
    ))
}

/// The names of the dtypes with a gradient (the dtype table's `grad` role): the inputs whose
/// gradient the gradient handler writes, one result each.
#[pyfunction]
pub(crate) fn grad_dtypes() -> Vec<&'static str> {
    DType::ALL
        .iter()
        .filter(|d| d.has_grad())
        .map(|d| d.name())
        .collect()
}

/// Whether the registered op `name` has a gradient (`OpDef::grad`), which the gradient
/// handler runs.
///
/// # Errors
/// `ValueError` for a name the registry lacks.
#[pyfunction]
pub(crate) fn op_has_grad(name: &str) -> PyResult<bool> {
    Ok(registry::find(name)
        .map_err(crate::errors::to_py)?
        .has_grad())
}
