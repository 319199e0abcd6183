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

use crate::kernel_call::{invalid, items, moves_records, run_call, Call, Failure, Few, Nth, Raw};
use ndgather::registry::{self, Attr, Attrs};
use ndgather::shape::Shape;
use ndgather::DType;
use ndgather::OpDef;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::rc::Rc;

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
            (Err(Failure(message, ..)), None) => unusable(&message),
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
        Err(_) => report(api, Failure::panic()),
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

fn report(api: &Api, Failure(message, code, _): Failure) -> *mut XlaError {
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
fn raw(kind: i32, ptr: *mut c_void, what: Nth<'_>) -> Result<Raw, Failure> {
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

/// Each attribute of the call as its kind, its name and its value's pointer, checked to be
/// there.
fn each_attr(
    frame: &CallFrame,
    mut f: impl FnMut(i32, &str, *mut c_void) -> Result<(), Failure>,
) -> Result<(), Failure> {
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
    for ((&kind, &name), &value) in types.iter().zip(names).zip(values) {
        if name.is_null() || value.is_null() {
            return Err(invalid("ndgather: an attribute without a name or value"));
        }
        // SAFETY: a name is a live byte span.
        let name = unsafe { span(&*name) }?;
        let name = std::str::from_utf8(name)
            .map_err(|_| invalid("ndgather: an attribute name is not UTF-8"))?;
        f(kind, name, value)?;
    }
    Ok(())
}

/// The call's attributes: the op's name, the buffers per input, and the op's own.
fn attributes(frame: &CallFrame) -> Result<(String, Vec<usize>, Attrs), Failure> {
    let (mut op, mut arity, mut attrs) = (None, None, Attrs::new());
    each_attr(frame, |kind, name, value| {
        match (name, attr(kind, value, name)?) {
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
            (n, a) => attrs.insert(n.to_string(), a),
        }
        Ok(())
    })?;
    let op = op.ok_or_else(|| invalid("ndgather: the call names no op (attribute ndgather_op)"))?;
    let arity = arity.ok_or_else(|| invalid("ndgather: the call gives no ndgather_arity"))?;
    Ok((op, arity, attrs))
}

/// A call site's op, configured from its attributes, kept by their bytes (`key`).
struct Configured {
    key: Vec<u8>,
    op: Box<dyn OpDef>,
    arity: Vec<usize>,
    /// Whether its first input's elements go into the result as records (`moves_records`).
    records: bool,
}

/// How many call sites' ops a thread keeps (`RECENT`).
const RECENT_SITES: usize = 16;

thread_local! {
    /// The ops of this thread's recent call sites, the last used first: a call site's attributes are the
    /// same on every call, and parsing and configuring them cost more than a tiny gather.
    static RECENT: RefCell<Vec<Rc<Configured>>> = const { RefCell::new(Vec::new()) };
    /// The key of the call at hand, its buffer kept between calls.
    static KEY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The call's op, configured: a recent call's with the same attributes, byte for byte, or
/// one parsed and configured now (and kept).
fn configured(frame: &CallFrame) -> Result<Rc<Configured>, Failure> {
    let found = KEY.with_borrow_mut(|key| {
        key.clear();
        each_attr(frame, |kind, name, value| {
            let (tag, bytes) = attr_bytes(kind, value, name)?;
            for part in [&kind.to_ne_bytes()[..], &tag.to_ne_bytes()[..]] {
                key.extend_from_slice(part);
            }
            for part in [name.as_bytes(), bytes] {
                key.extend_from_slice(&part.len().to_ne_bytes());
                key.extend_from_slice(part);
            }
            Ok(())
        })?;
        // A hit moves to the front: the least recently used site is the one dropped.
        Ok::<_, Failure>(RECENT.with_borrow_mut(|recent| {
            let at = recent.iter().position(|c| c.key == *key)?;
            recent[..=at].rotate_right(1);
            recent.first().cloned()
        }))
    })?;
    if let Some(c) = found {
        return Ok(c);
    }
    let (name, arity, attrs) = attributes(frame)?;
    let def = registry::find(&name)?;
    let op = def.with_attrs(&attrs)?;
    let records = moves_records(def, &attrs);
    let key = KEY.with_borrow(Vec::clone);
    let c = Rc::new(Configured {
        key,
        op,
        arity,
        records,
    });
    RECENT.with_borrow_mut(|recent| {
        recent.insert(0, c.clone());
        recent.truncate(RECENT_SITES);
    });
    Ok(c)
}

/// The bytes of a span.
///
/// # Safety
/// `s` must describe `len` live bytes.
unsafe fn span(s: &ByteSpan) -> Result<&[u8], Failure> {
    // SAFETY: as the caller promises.
    unsafe { items(s.ptr.cast::<u8>(), s.len as i64, "an attribute's bytes") }
}

/// One attribute's value as its bytes, with its dtype (0 for a string): a string, an integer,
/// float or bool scalar, or an array of integers (a shape) or of bytes (a fill element).
fn attr_bytes<'a>(kind: i32, value: *mut c_void, name: &str) -> Result<(i32, &'a [u8]), Failure> {
    let bad = || {
        invalid(format!(
            "ndgather: attribute {name} is of a kind the ops do not take"
        ))
    };
    // The bytes live for the call (`'a`, the caller's), and are read before it returns.
    Ok(match kind {
        ATTR_STRING => {
            // SAFETY: a string attribute is a live byte span.
            (0, unsafe { span(&*(value as *const ByteSpan)) }?)
        }
        ATTR_SCALAR => {
            // SAFETY: a scalar attribute is a live `XLA_FFI_Scalar` whose value is of its dtype.
            let s = unsafe { &*(value as *const Scalar) };
            let size = match s.dtype {
                S64 | F64 => 8,
                PRED => 1,
                _ => return Err(bad()),
            };
            // SAFETY: the value is one element of the scalar's dtype, `size` bytes.
            (s.dtype, unsafe { items(s.value as *const u8, size, name)? })
        }
        ATTR_ARRAY => {
            // SAFETY: an array attribute is a live `XLA_FFI_Array` of `size` elements of its
            // dtype.
            let a = unsafe { &*(value as *const Array) };
            let width = match a.dtype {
                S64 => 8,
                U8 => 1,
                _ => return Err(bad()),
            };
            let len = a
                .size
                .checked_mul(width)
                .and_then(|n| i64::try_from(n).ok())
                .ok_or_else(bad)?;
            // SAFETY: the array's `size` elements of `width` bytes each.
            (a.dtype, unsafe { items(a.data as *const u8, len, name)? })
        }
        _ => return Err(bad()),
    })
}

/// One attribute's value: an integer, float or bool scalar, a string, or an array of
/// integers (a shape) or of bytes (a fill element).
fn attr(kind: i32, value: *mut c_void, name: &str) -> Result<Attr, Failure> {
    let (dtype, bytes) = attr_bytes(kind, value, name)?;
    let bad = |what: &str| invalid(format!("ndgather: attribute {name} {what}"));
    let word = |b: &[u8]| <[u8; 8]>::try_from(b).map_err(|_| bad("is not one element"));
    Ok(match (kind, dtype) {
        (ATTR_STRING, _) => Attr::Str(
            std::str::from_utf8(bytes)
                .map_err(|_| bad("is not UTF-8"))?
                .to_string()
                .into(),
        ),
        (ATTR_SCALAR, S64) => Attr::Int(i64::from_ne_bytes(word(bytes)?)),
        (ATTR_SCALAR, F64) => Attr::Float(f64::from_ne_bytes(word(bytes)?)),
        (ATTR_SCALAR, PRED) => Attr::Bool(bytes.first().is_some_and(|&b| b != 0)),
        (ATTR_ARRAY, S64) => Attr::Ints(
            bytes
                .chunks_exact(8)
                .map(|c| word(c).map(i64::from_ne_bytes))
                .collect::<Result<_, _>>()?,
        ),
        (ATTR_ARRAY, U8) => Attr::Bytes(bytes.to_vec()),
        _ => return Err(bad("is of a kind the ops do not take")),
    })
}

fn buffers(list: &Args, what: &str) -> Result<Few<Raw>, Failure> {
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
        .map(|(k, (&kind, &ptr))| raw(kind, ptr, Nth(what, k)))
        .collect()
}

fn execute(frame: &CallFrame, call: Call) -> Result<(), Failure> {
    let site = configured(frame)?;
    let args = buffers(&frame.args, "argument")?;
    let rets = buffers(&frame.rets, "result")?;
    let records = matches!(call, Call::Forward) && site.records;
    run_call(site.op.as_ref(), &site.arity, &args, &rets, (call, records))
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
