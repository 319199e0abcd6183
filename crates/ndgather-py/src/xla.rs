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

use ndgather::registry::{self, Attr, Attrs, Input, Value};
use ndgather::OpDef;
use ndgather::{DType, Out, Tensor, TensorView, TensorViewMut};
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

#[derive(Clone, Copy)]
enum Call {
    /// The op's result into the one result buffer.
    Forward,
    /// The arguments are the op's inputs, its output and the upstream gradient; each result
    /// buffer is the gradient of one floating-point input buffer, in order.
    Backward,
}

/// A failure: its message, and whether it is the caller's (else XLA's or ours).
struct Failure(String, i32);

impl From<ndgather::Error> for Failure {
    fn from(e: ndgather::Error) -> Failure {
        Failure(e.to_string(), ERROR_INVALID_ARGUMENT)
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure(message.into(), ERROR_INVALID_ARGUMENT)
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
                ERROR_INTERNAL,
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

/// A slice of `len` items at `ptr`, empty for none; a null pointer with items is refused.
///
/// # Safety
/// `ptr` must point to `len` live items of `T` for `'a`.
unsafe fn items<'a, T>(ptr: *const T, len: i64, what: &str) -> Result<&'a [T], Failure> {
    let len =
        usize::try_from(len).map_err(|_| invalid(format!("ndgather: {what}: {len} of them")))?;
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(invalid(format!("ndgather: {what}: none given for {len}")));
    }
    // SAFETY: as the caller promises.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// One buffer of the call: its dtype, shape and bytes.
struct Raw {
    dtype: DType,
    shape: Vec<usize>,
    data: *mut u8,
    len: usize,
}

impl Raw {
    fn read(kind: i32, ptr: *mut c_void, what: &str) -> Result<Raw, Failure> {
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
        let shape = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| invalid(format!("ndgather: {what}: dimensions {dims:?}")))?;
        let size = dtype.size().unwrap_or(0);
        let len = shape
            .iter()
            .try_fold(size, |n, &d| n.checked_mul(d))
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| invalid(format!("ndgather: {what}: shape {shape:?} overflows")))?;
        if len > 0 && b.data.is_null() {
            return Err(invalid(format!(
                "ndgather: {what}: no data for shape {shape:?}"
            )));
        }
        Ok(Raw {
            dtype,
            shape,
            data: b.data.cast(),
            len,
        })
    }

    fn range(&self) -> std::ops::Range<usize> {
        self.data as usize..self.data as usize + self.len
    }

    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: XLA's buffer holds `len` bytes (its shape's elements) for the call.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// The buffer as a view, or as a checked copy for `bool` (any byte but 0 and 1 refused).
    fn tensor(&self) -> Result<Held<'_>, Failure> {
        Ok(match self.dtype {
            DType::Bool => Held::Owned(Tensor::from_bytes(DType::Bool, &self.shape, self.bytes())?),
            d => Held::View(TensorView::from_bytes(d, &self.shape, self.bytes())?),
        })
    }

    /// Writes `t` into the buffer: its dtype and shape must be the buffer's.
    fn write(&self, t: &Tensor) -> Result<(), Failure> {
        if t.dtype() != self.dtype || t.shape() != self.shape.as_slice() {
            return Err(invalid(format!(
                "ndgather: the result is {} of shape {:?}, the call's result buffer {} of shape {:?}",
                t.dtype(),
                t.shape(),
                self.dtype,
                self.shape
            )));
        }
        let bytes = t.to_bytes()?;
        if bytes.len() == self.len && self.len > 0 {
            // SAFETY: the result buffer holds `len` bytes and shares none with the arguments
            // (checked in `execute`); nothing else refers to it during the call.
            unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }.copy_from_slice(&bytes);
        }
        Ok(())
    }
}

enum Held<'a> {
    View(TensorView<'a>),
    Owned(Tensor),
}

impl Held<'_> {
    fn view(&self) -> TensorView<'_> {
        match self {
            Held::View(v) => v.reborrow(),
            Held::Owned(t) => t.view(),
        }
    }
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
        .map(|(k, (&kind, &ptr))| Raw::read(kind, ptr, &format!("{what} {k}")))
        .collect()
}

/// The op's inputs from the argument buffers, `arity[k]` buffers for its input `k`.
fn inputs<'a>(
    op: &dyn OpDef,
    arity: &[usize],
    held: &'a [Held<'_>],
) -> Result<Vec<Input<'a>>, Failure> {
    let defs = op.signature().inputs;
    if arity.len() > defs.len() || total(arity)? > held.len() {
        return Err(invalid(format!(
            "ndgather: {} takes {} inputs; the call gives arities {arity:?} for {} buffers",
            op.name(),
            defs.len(),
            held.len()
        )));
    }
    let mut next = 0;
    let mut out = Vec::with_capacity(arity.len());
    for (&n, def) in arity.iter().zip(defs) {
        let views: Vec<TensorView<'a>> = held[next..next + n].iter().map(Held::view).collect();
        next += n;
        out.push(match (def.kind, n) {
            (registry::InputKind::List | registry::InputKind::OptionalList, _) => {
                Input::List(views)
            }
            (_, 0) => Input::None,
            (_, 1) => Input::Tensor(views.into_iter().next().expect("one view")),
            (_, n) => {
                return Err(invalid(format!(
                    "ndgather: {}'s input {} takes one tensor, not {n}",
                    op.name(),
                    def.name
                )))
            }
        });
    }
    Ok(out)
}

/// The buffers the arities add up to (a sum that overflows is refused).
fn total(arity: &[usize]) -> Result<usize, Failure> {
    arity
        .iter()
        .try_fold(0usize, |sum, &n| sum.checked_add(n))
        .ok_or_else(|| invalid(format!("ndgather: ndgather_arity {arity:?} overflows")))
}

fn execute(frame: &CallFrame, call: Call) -> Result<(), Failure> {
    let (name, arity, attrs) = attributes(frame)?;
    let op = registry::find(&name)?.with_attrs(&attrs)?;
    let args = buffers(&frame.args, "argument")?;
    let rets = buffers(&frame.rets, "result")?;
    for r in &rets {
        if r.len > 0
            && args.iter().chain(&rets).filter(|o| o.len > 0).any(|o| {
                !std::ptr::eq(o, r)
                    && o.range().start < r.range().end
                    && r.range().start < o.range().end
            })
        {
            return Err(invalid(
                "ndgather: a result buffer shares memory with another buffer of the call",
            ));
        }
    }
    let held = args
        .iter()
        .map(Raw::tensor)
        .collect::<Result<Vec<_>, _>>()?;
    let given = total(&arity)?;
    match call {
        Call::Forward => {
            if given != held.len() || rets.len() != 1 {
                return Err(invalid(format!(
                    "ndgather: {name} is called with {} buffers for arities {arity:?} and {} results; one result is made",
                    held.len(),
                    rets.len()
                )));
            }
            let ret = &rets[0];
            let inputs = inputs(op.as_ref(), &arity, &held)?;
            if ret.dtype == DType::Bool {
                let value = op.run(&inputs, Out::New)?;
                return ret.write(&dense(&name, value)?);
            }
            // SAFETY: the result buffer holds its shape's elements and shares no memory with
            // the arguments (checked above); it is XLA's to write for the call.
            let bytes = if ret.len == 0 {
                &mut []
            } else {
                unsafe { std::slice::from_raw_parts_mut(ret.data, ret.len) }
            };
            let out = TensorViewMut::from_bytes(ret.dtype, &ret.shape, bytes)?;
            op.run(&inputs, Out::Into(out))?;
            Ok(())
        }
        Call::Backward => {
            // The op's inputs, then its output and the upstream gradient.
            if given.checked_add(2) != Some(held.len()) {
                return Err(invalid(format!(
                    "ndgather: {name}'s gradient takes its {given} input buffers, the output and the upstream gradient; the call gives {}",
                    held.len()
                )));
            }
            let inputs = inputs(op.as_ref(), &arity, &held[..given])?;
            if inputs.iter().any(|i| matches!(i, Input::List(_))) {
                return Err(invalid(format!(
                    "ndgather: {name}'s gradient under XLA takes single tensors only"
                )));
            }
            // One result per input buffer of a dtype with a gradient, in order: its gradient or
            // zeros. The count is checked before any work.
            let wanted: Vec<usize> = (0..given).filter(|&k| args[k].dtype.has_grad()).collect();
            if wanted.len() != rets.len() {
                return Err(invalid(format!(
                    "ndgather: {name}'s gradient has {} results, one per input with a gradient, not {}",
                    wanted.len(),
                    rets.len()
                )));
            }
            let (output, upstream) = (held[given].view(), held[given + 1].view());
            let grads = op.grad(&inputs, Some(&output), &upstream)?;
            let positions: Vec<usize> = {
                // The input of the signature each buffer belongs to (single tensors here).
                let mut p = Vec::new();
                for (k, &n) in arity.iter().enumerate() {
                    p.extend(std::iter::repeat_n(k, n));
                }
                p
            };
            for (&k, ret) in wanted.iter().zip(&rets) {
                match grads.get(positions[k]).and_then(Option::as_ref) {
                    Some(g) => ret.write(g)?,
                    None => ret.write(&Tensor::zeros(ret.dtype, &ret.shape)?)?,
                }
            }
            Ok(())
        }
    }
}

fn dense(name: &str, value: Option<Value>) -> Result<Tensor, Failure> {
    match value {
        Some(v) => Ok(v.into_dense()?),
        None => Err(invalid(format!("ndgather: {name} gave no new result"))),
    }
}

/// A result's dtype name and dimensions, where known.
type Inferred = (Option<String>, Option<Vec<Option<usize>>>);

/// The result's dtype name and shape for inputs of the given dtype names and shapes (one
/// entry per input of the op's signature: `None` for one left out, a list's first tensor for
/// a list), as the op infers them: the abstract evaluation of `ndgather._jax`. A dimension
/// the inputs' shapes leave open is `None`.
///
/// # Errors
/// The op's own, as `run_op` raises them.
#[pyfunction]
pub(crate) fn infer_op(
    name: &str,
    facts: Vec<Option<(String, Vec<usize>)>>,
    attrs: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<Inferred> {
    let def = registry::find(name).map_err(crate::errors::to_py)?;
    let attrs = crate::door::attrs(name, def.signature().attrs, attrs)?;
    let op = def.with_attrs(&attrs).map_err(crate::errors::to_py)?;
    let facts = facts
        .into_iter()
        .map(|f| match f {
            None => Ok(registry::Fact::unknown()),
            Some((dtype, shape)) => DType::from_name(&dtype)
                .map(|d| registry::Fact::known(d, &shape))
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
