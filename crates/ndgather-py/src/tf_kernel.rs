//! ndgather's ops inside TensorFlow (issue 55): the C ABI that the custom op library of
//! `ndgather._tf` calls. That library (`ndgather/_tf_op.cc`, compiled on demand against the
//! installed TensorFlow and linked to this extension) registers the ops `NdgatherOp` and
//! `NdgatherGrad`; their CPU kernels hand TensorFlow's tensors to these two functions, which
//! run any op of the registry by name, as XLA's handlers do (`xla.rs`).
//!
//! A call names its op, gives the op's attributes as names and text (each read as its kind
//! by the core, as the JNI builder reads them), the number of argument tensors for each input
//! of the op's signature, and the tensors. Everything is checked before it is read: the
//! struct's size, pointers, dtypes, dimensions and their product, and that no result shares
//! memory with an argument.

use crate::kernel_call::{
    byte_len, invalid, items, run_allocating, run_call, text_attrs, Call, Failure, Nth, Raw,
};
use ndgather::registry::{self, Attrs};
use ndgather::DType;
use std::ffi::{c_char, c_void, CStr};
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One tensor of a call: TensorFlow's `DataType`, its rank, dimensions and data.
#[repr(C)]
pub struct TfBuffer {
    dtype: i32,
    rank: i64,
    dims: *const i64,
    data: *mut c_void,
}

/// A call of an op (`_tf_op.cc` lays out the same struct).
#[repr(C)]
pub struct TfCall {
    struct_size: usize,
    op: *const c_char,
    attr_names: *const *const c_char,
    attr_values: *const *const c_char,
    attrs: i64,
    arity: *const i64,
    arities: i64,
    args: *const TfBuffer,
    n_args: i64,
    /// The gradients' buffers (`NdgatherGrad`); none for `NdgatherOp`, whose result is
    /// allocated through the callback.
    rets: *const TfBuffer,
    n_rets: i64,
    /// `NdgatherOp`'s result dtype (its `Tout`).
    out_dtype: i32,
    /// Where a failure's message is written, NUL-terminated and cut to `error_len` bytes.
    error: *mut c_char,
    error_len: usize,
}

impl TfCall {
    /// The call's argument buffers.
    pub(crate) fn args(&self) -> Result<Vec<Raw>, Failure> {
        buffers(self.args, self.n_args, "argument")
    }

    /// The dtypes of the call's arguments, their dimensions and data not read (a query of
    /// the op's facts, whose caller may have no data to give).
    pub(crate) fn arg_dtypes(&self) -> Result<Vec<DType>, Failure> {
        // SAFETY: the call's buffers are `n_args` live structs (the kernel's own arrays).
        let list = unsafe { items(self.args, self.n_args, "argument")? };
        (list.iter().enumerate())
            .map(|(k, b)| dtype_of(b.dtype, Nth("argument", k)))
            .collect()
    }
}

/// TensorFlow's allocation of `NdgatherOp`'s result: its data for `rank` dimensions `dims`
/// in `*data`; 0, or the status code of a failure (whose message TensorFlow keeps).
pub type TfAllocate = unsafe extern "C" fn(
    ctx: *mut c_void,
    rank: i64,
    dims: *const i64,
    data: *mut *mut c_void,
) -> i32;

/// TensorFlow's `DataType` numbers (`types.proto`) of the dtypes that have kernels here.
pub(crate) const TF_DTYPES: &[(i32, DType)] = &[
    (1, DType::F32),
    (2, DType::F64),
    (3, DType::I32),
    (4, DType::U8),
    (5, DType::I16),
    (6, DType::I8),
    (8, DType::C64),
    (9, DType::I64),
    (10, DType::Bool),
    (14, DType::BF16),
    (17, DType::U16),
    (18, DType::C128),
    (19, DType::F16),
    (22, DType::U32),
    (23, DType::U64),
    (24, DType::F8E5M2),
    (25, DType::F8E4M3),
];

/// The dtype of TensorFlow's `DataType` number `code`.
pub(crate) fn dtype_of(code: i32, what: impl Display) -> Result<DType, Failure> {
    TF_DTYPES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|&(_, d)| d)
        .ok_or_else(|| {
            invalid(format!(
                "ndgather: {what} is of TensorFlow's DataType {code}, which has no kernel here \
                 (strings, resources, variants and quantized types are not read by the op)"
            ))
        })
}

/// The buffers `buffers[..n]` of the call.
fn buffers(buffers: *const TfBuffer, n: i64, what: &str) -> Result<Vec<Raw>, Failure> {
    // SAFETY: the call's buffers are `n` live structs (the kernel's own arrays).
    let list = unsafe { items(buffers, n, what)? };
    list.iter()
        .enumerate()
        .map(|(k, b)| {
            // (Its name is written only into an error.)
            let what = Nth(what, k);
            let dtype = dtype_of(b.dtype, what)?;
            // SAFETY: a buffer's dims are `rank` live integers.
            let dims = unsafe { items(b.dims, b.rank, what)? };
            Raw::new(dtype, dims, b.data.cast(), what)
        })
        .collect()
}

/// The text of a NUL-terminated string of the call.
///
/// # Safety
/// `s` must be null or point to a live NUL-terminated string.
unsafe fn text<'a>(s: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if s.is_null() {
        return Err(invalid(format!("ndgather: {what} is missing")));
    }
    // SAFETY: as the caller promises.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| invalid(format!("ndgather: {what} is not UTF-8")))
}

/// The call's op name, arities and attributes, each attribute's text read as its kind.
pub(crate) fn parse(call: &TfCall) -> Result<(String, Vec<usize>, Attrs), Failure> {
    // SAFETY: the kernel's strings and arrays, live for the call.
    let name = unsafe { text(call.op, "the op's name")? }.to_string();
    let arity = unsafe { items(call.arity, call.arities, "the arities")? }
        .iter()
        .map(|&n| usize::try_from(n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| invalid(format!("ndgather: {name}: negative arities")))?;
    let (names, values) = unsafe {
        (
            items(call.attr_names, call.attrs, "attribute names")?,
            items(call.attr_values, call.attrs, "attribute values")?,
        )
    };
    let pairs = names
        .iter()
        .zip(values)
        // SAFETY: each name and value is a live NUL-terminated string.
        .map(|(&n, &v)| unsafe {
            Ok((
                text(n, "an attribute's name")?,
                text(v, "an attribute's value")?,
            ))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let attrs = text_attrs(&name, pairs)?;
    Ok((name, arity, attrs))
}

/// Runs `work` on the call, writing a failure's message into its error buffer: 0, or the
/// failure's number by `code` (TensorFlow's status code; PyTorch's kernel, its class).
pub(crate) fn answer(
    call: *const TfCall,
    code: fn(&Failure) -> i32,
    work: impl FnOnce(&TfCall) -> Result<(), Failure>,
) -> i32 {
    if call.is_null() {
        return code(&invalid("ndgather: no call"));
    }
    // SAFETY: a non-null call is the kernel's, live for the call; its size is read first.
    if unsafe { call.cast::<usize>().read() } < std::mem::size_of::<TfCall>() {
        return code(&invalid("ndgather: a call of another layout"));
    }
    // SAFETY: as above, and at least as large as `TfCall`.
    let call = unsafe { &*call };
    let failure = match catch_unwind(AssertUnwindSafe(|| work(call))) {
        Ok(Ok(())) => return 0,
        Ok(Err(f)) => f,
        Err(_) => Failure::panic(),
    };
    if !call.error.is_null() && call.error_len > 0 {
        let bytes = failure.0.as_bytes();
        // Cut where a character begins, so that the message stays UTF-8.
        let mut n = bytes.len().min(call.error_len - 1);
        while !failure.0.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: the kernel's error buffer holds `error_len` bytes; `n + 1` of them are
        // written, the last a NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), call.error.cast::<u8>(), n);
            call.error.add(n).write(0);
        }
    }
    code(&failure)
}

/// TensorFlow's status code of a failure.
fn status(failure: &Failure) -> i32 {
    failure.1
}

/// A result buffer of `shape` and `dtype` from a framework's allocation: `allocate(rank,
/// dims, &mut data)` gives 0, or a code that `failed` makes the failure.
pub(crate) fn allocated(
    shape: &[usize],
    dtype: DType,
    allocate: impl FnOnce(i64, *const i64, &mut *mut c_void) -> i32,
    failed: impl FnOnce(i32) -> Failure,
) -> Result<Raw, Failure> {
    // The core's error for a size past the address space, before the framework is asked.
    if byte_len(shape, dtype.size().unwrap_or(1)).is_none() {
        return Err(ndgather::Error::ShapeOverflow {
            what: "output",
            shape: shape.to_vec(),
        }
        .into());
    }
    let dims = shape
        .iter()
        .map(|&d| i64::try_from(d))
        .collect::<Result<Vec<i64>, _>>()
        .map_err(|_| invalid(format!("ndgather: a result of shape {shape:?}")))?;
    let mut data = std::ptr::null_mut();
    match allocate(dims.len() as i64, dims.as_ptr(), &mut data) {
        0 => Raw::new(dtype, &dims, data.cast(), "the result"),
        code => Err(failed(code)),
    }
}

/// `NdgatherOp`'s kernel: the op's result, in a tensor that `allocate` gives once its shape
/// is known.
///
/// # Safety
/// `call` must be null or point to a live `TfCall` whose pointers are live for the call, and
/// `allocate` must be TensorFlow's allocation for the kernel's context `ctx`.
#[no_mangle]
pub unsafe extern "C" fn ndgather_tf_forward(
    call: *const TfCall,
    ctx: *mut c_void,
    allocate: Option<TfAllocate>,
) -> i32 {
    answer(call, status, |call| {
        let (name, arity, attrs) = parse(call)?;
        let args = call.args()?;
        let dtype = dtype_of(call.out_dtype, "the result")?;
        let allocate = allocate.ok_or_else(|| invalid("ndgather: no allocation"))?;
        let mut alloc = |shape: &[usize], _inferred: DType| {
            // SAFETY: TensorFlow's allocation, called with live dimensions for its context.
            let tf = |rank, dims, data: &mut _| unsafe { allocate(ctx, rank, dims, data) };
            allocated(shape, dtype, tf, |code| {
                Failure::ours("ndgather: TensorFlow could not allocate", code)
            })
        };
        run_allocating(&name, &arity, &attrs, &args, &mut alloc)
    })
}

/// `NdgatherGrad`'s kernel: the gradient of each argument of a dtype with a gradient, in
/// order, into the call's result buffers; the arguments are the op's inputs, then its output
/// and the upstream gradient.
///
/// # Safety
/// `call` must be null or point to a live `TfCall` whose pointers are live for the call.
#[no_mangle]
pub unsafe extern "C" fn ndgather_tf_backward(call: *const TfCall) -> i32 {
    answer(call, status, backward)
}

/// A gradient call's work (TensorFlow's and PyTorch's): the gradients into the call's result
/// buffers, one per argument of a dtype with a gradient.
pub(crate) fn backward(call: &TfCall) -> Result<(), Failure> {
    let (name, arity, attrs) = parse(call)?;
    let args = call.args()?;
    let rets = buffers(call.rets, call.n_rets, "result")?;
    let op = registry::find(&name)?.with_attrs(&attrs)?;
    run_call(op.as_ref(), &arity, &args, &rets, (Call::Backward, false))
}

/// The address of the two functions: a check for `ndgather._tf` that this build of the
/// extension has them, and for the ABI test that they are the exported ones.
#[pyo3::pyfunction]
pub(crate) fn tf_kernels() -> (usize, usize) {
    (
        ndgather_tf_forward as *const () as usize,
        ndgather_tf_backward as *const () as usize,
    )
}
