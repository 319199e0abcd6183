//! ndgather's op inside PyTorch's compiled graphs (issue 55): the C ABI that the kernels of
//! `ndgather._torch`'s library call. That library (`ndgather/_torch_op.cc`, compiled on
//! demand against the installed PyTorch and linked to this extension) gives the custom ops
//! `ndgather::op_native`, `op_native_with_grad` and `op_grad_native` CPU kernels in C++, and
//! the second its gradient formula, which `torch.compile`'s code calls with no Python body
//! between. The calls are TensorFlow's kernels' (`tf_kernel.rs`): the op by name, its
//! attributes as text, the arities and the tensors, each dtype by TensorFlow's number, all
//! checked before they are read. The forward result is allocated through a callback once the
//! op's inference gives its shape and dtype; the gradients, into buffers the kernel
//! allocated, by two queries of the dtype table and the registry.

use crate::kernel_call::{invalid, run_allocating, Failure};
use crate::tf_kernel::{allocated, answer, backward, parse, TfCall, TF_DTYPES};
use ndgather::registry;
use ndgather::DType;
use std::ffi::{c_char, c_void, CStr};
use std::panic::catch_unwind;

/// PyTorch's allocation of the result: a tensor of TensorFlow's dtype number `dtype` and
/// `rank` dimensions `dims`, its data in `*data`; 0, or nonzero where it failed.
pub type TorchAllocate = unsafe extern "C" fn(
    ctx: *mut c_void,
    dtype: i32,
    rank: i64,
    dims: *const i64,
    data: *mut *mut c_void,
) -> i32;

/// The class of a failure, by the number `_torch_op.cc` raises it with.
fn class(failure: &Failure) -> i32 {
    failure.2.builtin()
}

/// `ndgather::op_native`'s kernel: the op's result, in a tensor that `allocate` gives once
/// its shape and dtype are known. Returns 0, or the failure's class (see
/// `errors::Class::builtin`), its message in the call's error buffer.
///
/// # Safety
/// `call` must be null or point to a live `TfCall` whose pointers are live for the call, and
/// `allocate` must be the kernel's allocation for its context `ctx`.
#[no_mangle]
pub unsafe extern "C" fn ndgather_torch_forward(
    call: *const TfCall,
    ctx: *mut c_void,
    allocate: Option<TorchAllocate>,
) -> i32 {
    answer(call, class, |call| {
        let (name, arity, attrs) = parse(call)?;
        let args = call.args()?;
        let allocate = allocate.ok_or_else(|| invalid("ndgather: no allocation"))?;
        let mut alloc = |shape: &[usize], dtype: DType| {
            let code = (TF_DTYPES.iter().find(|(_, d)| *d == dtype))
                .map(|&(c, _)| c)
                .ok_or_else(|| invalid(format!("ndgather: no PyTorch tensor of {dtype}")))?;
            // SAFETY: the kernel's allocation, called with live dimensions for its context.
            let torch = |rank, dims, data: &mut _| unsafe { allocate(ctx, code, rank, dims, data) };
            allocated(shape, dtype, torch, |_| {
                Failure(
                    format!("ndgather: PyTorch could not allocate a result of shape {shape:?}"),
                    crate::kernel_call::INTERNAL,
                    crate::errors::Class::Memory,
                )
            })
        };
        run_allocating(&name, &arity, &attrs, &args, &mut alloc)
    })
}

/// `ndgather::op_grad_native`'s kernel: TensorFlow's gradient call (`NdgatherGrad`'s), the
/// gradients into the call's result buffers, which the kernel allocated, one per argument of
/// a dtype with a gradient ([`ndgather_kernel_has_grad`]). Returns 0, or the failure's class,
/// as [`ndgather_torch_forward`].
///
/// # Safety
/// `call` must be null or point to a live `TfCall` whose pointers are live for the call.
#[no_mangle]
pub unsafe extern "C" fn ndgather_torch_backward(call: *const TfCall) -> i32 {
    answer(call, class, backward)
}

/// Whether an input of TensorFlow's dtype number `code` gets a gradient (the dtype table's
/// `grad` role), for the C++ autograd kernel, which places the gradient op's results: 1 or 0,
/// or -1 for a number the ABI lacks.
#[no_mangle]
pub extern "C" fn ndgather_kernel_has_grad(code: i32) -> i32 {
    match TF_DTYPES.iter().find(|(c, _)| *c == code) {
        Some((_, dtype)) => i32::from(dtype.has_grad()),
        None => -1,
    }
}

/// Whether the gradient of the op named `name` (NUL-terminated) reads the op's output (a
/// max's does, a gather's not), for the C++ autograd kernel, which keeps the output only
/// then: 1 or 0, or -1 for a null pointer, a name that is not UTF-8, or an op the registry
/// lacks.
///
/// # Safety
/// `name` must be null or point to a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ndgather_kernel_grad_reads_output(name: *const c_char) -> i32 {
    if name.is_null() {
        return -1;
    }
    // SAFETY: a non-null `name` is a NUL-terminated string (the caller's promise).
    let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else {
        return -1;
    };
    let reads = catch_unwind(|| registry::find(name).map(|def| def.grad_reads_output()));
    match reads {
        Ok(Ok(reads)) => i32::from(reads),
        _ => -1,
    }
}

/// Where the call's op, with its attributes, is linear in every input of a dtype with a
/// gradient and its gradient is the transpose of its tangent's op (`OpDef::linear`, with
/// `adjoint`), so that the C++ autograd kernel of `<op>.grad` can differentiate the
/// gradient: the gradient is then linear in the upstream gradient, whose own gradient is
/// the tangent's op on the cotangents, and reads no input's value. The call's arguments are
/// the op's input tensors, only their dtypes read; `*linear` is set to 1 and the tangent op's
/// attributes are written into `attrs` (`attrs_len` bytes, NUL-terminated; `name=text`
/// lines separated by `;`), or `*linear` to 0 where the op is not so. Returns 0, or the
/// failure's class, its message in the call's error buffer.
///
/// # Safety
/// `call` must be null or point to a live `TfCall` whose pointers are live for the call;
/// `linear` must be a live `i32`; `attrs` must be null or point to `attrs_len` writable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ndgather_kernel_linear(
    call: *const TfCall,
    linear: *mut i32,
    attrs: *mut c_char,
    attrs_len: usize,
) -> i32 {
    answer(call, class, |call| {
        if linear.is_null() || attrs.is_null() || attrs_len == 0 {
            return Err(invalid("ndgather: no place for the linear fact"));
        }
        let (name, arity, given) = parse(call)?;
        let dtypes = call.arg_dtypes()?;
        let def = registry::find(&name)?.with_attrs(&given)?;
        let owners = arity
            .iter()
            .enumerate()
            .flat_map(|(k, &n)| std::iter::repeat_n(k, n));
        // (Linear in exactly the inputs with a gradient: those the kernel gives cotangents.)
        let fact = def.linear().filter(|fact| {
            fact.adjoint
                && owners
                    .zip(&dtypes)
                    .all(|(k, dtype)| dtype.has_grad() == fact.inputs.contains(&k))
        });
        let Some(fact) = fact else {
            // SAFETY: a live i32, as the caller promises.
            unsafe { linear.write(0) };
            return Ok(());
        };
        let mut lines: Vec<(String, String)> = (given.names())
            .filter_map(|n| Some((n.to_string(), given.get(n)?.text())))
            .collect();
        for (n, value) in &fact.tangent_attrs {
            match lines.iter_mut().find(|(given, _)| given == n) {
                Some(line) => line.1 = value.text(),
                None => lines.push((n.to_string(), value.text())),
            }
        }
        let text: Vec<String> = lines.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let text = text.join(";");
        if text.len() >= attrs_len || text.contains('\0') {
            let need = text.len() + 1;
            return Err(invalid(format!(
                "ndgather: {name}: the tangent's attributes take {need} bytes, past the \
                 {attrs_len} given"
            )));
        }
        // SAFETY: `attrs` holds `attrs_len` writable bytes, more than the text and its NUL;
        // `linear` is a live i32, as the caller promises.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), attrs.cast::<u8>(), text.len());
            attrs.add(text.len()).write(0);
            linear.write(1);
        }
        Ok(())
    })
}

/// The kernels' addresses: a check for `ndgather._torch` that this build of the extension has
/// the C ABI that `_torch_op.cc` calls.
#[pyo3::pyfunction]
pub(crate) fn torch_kernel() -> (usize, usize, usize, usize, usize) {
    (
        ndgather_torch_forward as *const () as usize,
        ndgather_torch_backward as *const () as usize,
        ndgather_kernel_has_grad as *const () as usize,
        ndgather_kernel_grad_reads_output as *const () as usize,
        ndgather_kernel_linear as *const () as usize,
    )
}
