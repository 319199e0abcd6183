//! A call of an op of the registry on a framework's buffers, as a kernel of XLA
//! (`xla.rs`) or of TensorFlow (`tf_kernel.rs`) makes it: the op by name with its
//! attributes, `arity[k]` argument buffers for each input of its signature, and result
//! buffers that the framework allocated: the op's result, or the gradients of its inputs.

use crate::errors::{class_of, Class};
use ndgather::memory::{RawView, RawViewMut};
use ndgather::registry::{self, Attr, Attrs, Fact, Input, Value};
use ndgather::OpDef;
use ndgather::{DType, Out, Tensor, TensorView, TensorViewMut};

/// absl's status codes, which XLA's FFI and TensorFlow both use.
pub(crate) const INVALID_ARGUMENT: i32 = 3;
/// An error that is not the caller's.
pub(crate) const INTERNAL: i32 = 13;

#[derive(Clone, Copy)]
pub(crate) enum Call {
    /// The op's result into the one result buffer.
    Forward,
    /// The arguments are the op's inputs, its output and the upstream gradient; each result
    /// buffer is the gradient of one floating-point input buffer, in order.
    Backward,
}

/// A failure: its message, its status code (the caller's, or the framework's or ours), and
/// its class among Python's exceptions (where a framework raises it as one).
pub(crate) struct Failure(pub(crate) String, pub(crate) i32, pub(crate) Class);

impl From<ndgather::Error> for Failure {
    fn from(e: ndgather::Error) -> Failure {
        let class = class_of(&e);
        Failure(e.to_string(), INVALID_ARGUMENT, class)
    }
}

impl Failure {
    /// An error that is not the caller's, with status `code`.
    pub(crate) fn ours(message: impl Into<String>, code: i32) -> Failure {
        Failure(message.into(), code, Class::Runtime)
    }

    /// A panic caught at the boundary.
    pub(crate) fn panic() -> Failure {
        Failure::ours(
            "ndgather: internal error (a panic in the core; please report it)",
            INTERNAL,
        )
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> Failure {
    Failure(message.into(), INVALID_ARGUMENT, Class::Value)
}

/// A buffer's name in an error, written only when one is made: `what` and its position.
#[derive(Clone, Copy)]
pub(crate) struct Nth<'a>(pub(crate) &'a str, pub(crate) usize);

impl std::fmt::Display for Nth<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.0, self.1)
    }
}

/// A slice of `len` items at `ptr`, empty for none; a null pointer with items is refused.
///
/// # Safety
/// `ptr` must point to `len` live items of `T` for `'a`.
pub(crate) unsafe fn items<'a, T>(
    ptr: *const T,
    len: i64,
    what: impl std::fmt::Display,
) -> Result<&'a [T], Failure> {
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

/// A buffer's dimensions, inline up to rank 4 (a call allocates nothing for them).
pub(crate) type Axes = smallvec::SmallVec<[usize; 4]>;

/// A call's buffers, or their views, inline up to four.
pub(crate) type Few<T> = smallvec::SmallVec<[T; 4]>;

/// One buffer of the call: its dtype, shape and bytes.
pub(crate) struct Raw {
    pub(crate) dtype: DType,
    pub(crate) shape: Axes,
    data: *mut u8,
    pub(crate) len: usize,
}

/// The bytes of `shape`'s elements of `size` bytes each, where they fit `isize`: an empty
/// shape's are 0, however long its other axes (as the core counts them).
pub(crate) fn byte_len(shape: &[usize], size: usize) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    (shape.iter())
        .try_fold(size, |n, &d| n.checked_mul(d))
        .filter(|&n| isize::try_from(n).is_ok())
}

impl Raw {
    /// A buffer of `dtype`, dimensions `dims` and data at `data`, checked: dimensions that
    /// are not negative, a byte length that fits `isize`, data for a nonempty one.
    pub(crate) fn new(
        dtype: DType,
        dims: &[i64],
        data: *mut u8,
        what: impl std::fmt::Display,
    ) -> Result<Raw, Failure> {
        let shape = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Axes, _>>()
            .map_err(|_| invalid(format!("ndgather: {what}: dimensions {dims:?}")))?;
        let len = byte_len(&shape, dtype.size().unwrap_or(0))
            .ok_or_else(|| invalid(format!("ndgather: {what}: shape {shape:?} overflows")))?;
        if len > 0 && data.is_null() {
            return Err(invalid(format!(
                "ndgather: {what}: no data for shape {shape:?}"
            )));
        }
        Ok(Raw {
            dtype,
            shape,
            data,
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
        // SAFETY: the framework's buffer holds `len` bytes (its shape's elements) for the call.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// The buffer as a view, or as a checked copy for `bool` (any byte but 0 and 1 refused).
    pub(crate) fn tensor(&self) -> Result<Held<'_>, Failure> {
        Ok(match self.dtype {
            DType::Bool => Held::Owned(Tensor::from_bytes(DType::Bool, &self.shape, self.bytes())?),
            d => Held::View(TensorView::from_bytes(d, &self.shape, self.bytes())?),
        })
    }

    /// The buffer as records of `itemsize` bytes (its elements' bytes, whatever their dtype).
    fn records(&self, itemsize: usize) -> Result<Held<'_>, Failure> {
        RawView::of_bytes(self.bytes(), &self.shape, itemsize)
            .map(Held::Records)
            .ok_or_else(|| invalid("ndgather: an argument buffer as records"))
    }

    /// Writes `bytes`, the buffer's elements row-major, into the buffer.
    pub(crate) fn write_bytes(&self, bytes: &[u8]) -> Result<(), Failure> {
        if bytes.len() != self.len {
            return Err(invalid(format!(
                "ndgather: a result of {} bytes for a result buffer of {}",
                bytes.len(),
                self.len
            )));
        }
        if self.len > 0 {
            // SAFETY: the result buffer holds `len` bytes and shares none with the arguments
            // (checked in `run_call`); nothing else refers to it during the call.
            unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }.copy_from_slice(bytes);
        }
        Ok(())
    }

    /// Writes `t` into the buffer: its dtype and shape must be the buffer's.
    pub(crate) fn write(&self, t: &Tensor) -> Result<(), Failure> {
        if t.dtype() != self.dtype || t.shape() != self.shape.as_slice() {
            return Err(invalid(format!(
                "ndgather: the result is {} of shape {:?}, the call's result buffer {} of shape {:?}",
                t.dtype(),
                t.shape(),
                self.dtype,
                self.shape
            )));
        }
        self.write_bytes(&t.to_bytes()?)
    }
}

/// An argument buffer as the op reads it: a view, a checked copy, or records of bytes.
pub(crate) enum Held<'a> {
    View(TensorView<'a>),
    Owned(Tensor),
    Records(RawView<'a>),
}

impl Held<'_> {
    /// The buffer as a tensor; `None` for records, which only an op's moved input takes.
    pub(crate) fn view(&self) -> Option<TensorView<'_>> {
        match self {
            Held::View(v) => Some(v.reborrow()),
            Held::Owned(t) => Some(t.view()),
            Held::Records(_) => None,
        }
    }

    /// The buffer as an input of the op.
    fn input(&self) -> Input<'_> {
        match self {
            Held::Records(r) => Input::Records(r.clone()),
            held => held.view().map_or(Input::None, Input::Tensor),
        }
    }
}

/// The op's inputs from the argument buffers, `arity[k]` buffers for its input `k`.
fn inputs<'a>(
    op: &dyn OpDef,
    arity: &[usize],
    held: &'a [Held<'_>],
) -> Result<Few<Input<'a>>, Failure> {
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
    let mut out = Few::new();
    for (&n, def) in arity.iter().zip(defs) {
        let given = &held[next..next + n];
        next += n;
        out.push(match (def.kind, given) {
            (registry::InputKind::List | registry::InputKind::OptionalList, _) => Input::List(
                (given.iter().map(Held::view).collect::<Option<_>>())
                    .ok_or_else(|| invalid("ndgather: records in a list input"))?,
            ),
            (_, []) => Input::None,
            (_, [one]) => one.input(),
            (_, many) => {
                return Err(invalid(format!(
                    "ndgather: {}'s input {} takes one tensor, not {}",
                    op.name(),
                    def.name,
                    many.len()
                )))
            }
        });
    }
    Ok(out)
}

/// The buffers the arities add up to (a sum that overflows is refused).
pub(crate) fn total(arity: &[usize]) -> Result<usize, Failure> {
    arity
        .iter()
        .try_fold(0usize, |sum, &n| sum.checked_add(n))
        .ok_or_else(|| invalid(format!("ndgather: ndgather_arity {arity:?} overflows")))
}

/// Refuses result buffers that share memory with an argument or with each other: a result
/// is written while the arguments are read.
fn disjoint(args: &[Raw], rets: &[Raw]) -> Result<(), Failure> {
    for r in rets {
        if r.len > 0
            && args.iter().chain(rets).filter(|o| o.len > 0).any(|o| {
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
    Ok(())
}

/// Whether the configured op moves its first input's elements into its result as they are
/// (the gathers), so that a call may hand them over as records of bytes ([`run_call`]'s
/// `records`): not where a fill element is still to be made in their dtype (a fill value
/// given as a number, or the dtype's default), which records do not carry.
pub(crate) fn moves_records(def: &dyn OpDef, attrs: &Attrs) -> bool {
    let first = def.signature().inputs.first().map(|d| d.kind);
    let fill = attrs.get("bad_indices") == Some(&Attr::Str("fill".into()));
    let fill_in_bytes = matches!(attrs.get("fill_value"), Some(Attr::Bytes(_)));
    first == Some(registry::InputKind::Elements) && (!fill || fill_in_bytes)
}

/// Runs the call of the configured op `op` (`arity[k]` argument buffers for its input `k`)
/// on the buffers `args`, into the buffers `rets`: the op's result for
/// [`Call::Forward`], the gradients for [`Call::Backward`]. Every buffer is checked first,
/// and no result may share memory with another buffer. With `records` ([`moves_records`]),
/// the first input's elements go into the result as records of their bytes, where a tiny
/// call takes the core's small path.
pub(crate) fn run_call(
    op: &dyn OpDef,
    arity: &[usize],
    args: &[Raw],
    rets: &[Raw],
    (call, records): (Call, bool),
) -> Result<(), Failure> {
    let name = op.name();
    disjoint(args, rets)?;
    // The item size of the elements moved as records, where they are (never booleans, which
    // are read as checked copies).
    let moved = match (call, rets, args.first()) {
        (Call::Forward, [ret], Some(params))
            if records
                && arity.first() == Some(&1)
                && params.dtype == ret.dtype
                && ret.dtype != DType::Bool =>
        {
            ret.dtype.size()
        }
        _ => None,
    };
    let held = (args.iter().enumerate())
        .map(|(k, a)| match moved {
            Some(itemsize) if k == 0 => a.records(itemsize),
            _ => a.tensor(),
        })
        .collect::<Result<Few<_>, _>>()?;
    let given = total(arity)?;
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
            let inputs = inputs(op, arity, &held)?;
            if ret.dtype == DType::Bool {
                let value = op.run(&inputs, Out::New)?;
                return ret.write(&dense(name, value)?);
            }
            // SAFETY: the result buffer holds its shape's elements and shares no memory with
            // the arguments (checked above); it is the framework's to write for the call.
            let bytes = if ret.len == 0 {
                &mut []
            } else {
                unsafe { std::slice::from_raw_parts_mut(ret.data, ret.len) }
            };
            if let Some(itemsize) = moved {
                let target = RawViewMut::of_bytes(bytes, &ret.shape, itemsize)
                    .ok_or_else(|| invalid("ndgather: the result buffer as records"))?;
                op.run(&inputs, Out::IntoRecords(target))?;
                return Ok(());
            }
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
            let inputs = inputs(op, arity, &held[..given])?;
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
            let (output, upstream) = match (held[given].view(), held[given + 1].view()) {
                (Some(output), Some(upstream)) => (output, upstream),
                _ => return Err(invalid("ndgather: records for a gradient's buffers")),
            };
            let grads = op.grad(&inputs, Some(&output), &upstream)?;
            // Where each buffer's gradient is in the op's: one entry per input, a list
            // input's one per tensor (`OpDef::grad`).
            let (mut positions, mut first) = (Vec::with_capacity(given), 0);
            for (input, &n) in inputs.iter().zip(arity) {
                let entries = if matches!(input, Input::List(_)) {
                    n
                } else {
                    1
                };
                match input {
                    Input::List(_) => positions.extend(first..first + n),
                    _ => positions.extend(std::iter::repeat_n(first, n)),
                }
                first += entries;
            }
            for (&k, ret) in wanted.iter().zip(rets) {
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

/// A framework's allocation of a result buffer of a shape and dtype.
pub(crate) type Allocate<'a> = dyn FnMut(&[usize], DType) -> Result<Raw, Failure> + 'a;

/// The op's result for a framework that allocates it once its shape is known (a TensorFlow
/// or PyTorch kernel): `allocate(shape, dtype)` gives the result buffer. Where the arguments' shapes (and small
/// integer values, such as a `dense_shape`) fix the result's shape, the op writes into that
/// buffer; where its values do (the sorted segment reductions' rows), it runs into a new
/// tensor, which is copied there.
pub(crate) fn run_allocating(
    name: &str,
    arity: &[usize],
    attrs: &Attrs,
    args: &[Raw],
    allocate: &mut Allocate<'_>,
) -> Result<(), Failure> {
    let def = registry::find(name)?;
    let op = def.with_attrs(attrs)?;
    // (A gather's params go in as records, where a tiny call takes the core's small path.)
    let records = moves_records(def, attrs);
    let held = args
        .iter()
        .map(Raw::tensor)
        .collect::<Result<Vec<_>, _>>()?;
    if total(arity)? != held.len() {
        return Err(invalid(format!(
            "ndgather: {name} is called with {} buffers for arities {arity:?}",
            held.len()
        )));
    }
    let inputs = inputs(op.as_ref(), arity, &held)?;
    let facts: Vec<Fact> = inputs
        .iter()
        .map(|input| match input {
            Input::Tensor(v) => Fact::of(v),
            Input::List(v) => v.first().map_or_else(Fact::unknown, Fact::of),
            _ => Fact::unknown(),
        })
        .collect();
    let fact = op.infer(&facts)?;
    match (fact.shape.to_known(), fact.dtype) {
        (Some(shape), Some(dtype)) => {
            let ret = allocate(&shape, dtype)?;
            run_call(
                op.as_ref(),
                arity,
                args,
                std::slice::from_ref(&ret),
                (Call::Forward, records),
            )
        }
        _ => {
            let result = dense(name, op.run(&inputs, Out::New)?)?;
            let ret = allocate(result.shape(), result.dtype())?;
            disjoint(args, std::slice::from_ref(&ret))?;
            ret.write(&result)
        }
    }
}

/// The attributes of the op `name` from `(name, text)` pairs, each text read as its kind by
/// the core (as the JNI builder reads them): the attributes of a kernel's call, which
/// TensorFlow's and PyTorch's ops carry as strings. A name the op lacks is kept as a string,
/// for the op's own check to name.
pub(crate) fn text_attrs<'a>(
    name: &str,
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Attrs, Failure> {
    let def = registry::find(name)?;
    let mut attrs = Attrs::new();
    for (n, v) in pairs {
        let value = match def.signature().attrs.iter().find(|a| a.name == n) {
            Some(a) => a.parse(v).map_err(|what| {
                invalid(format!("{name}: attribute \"{n}\" takes {what}, got '{v}'"))
            })?,
            None => Attr::Str(v.to_string().into()),
        };
        attrs.insert(n.to_string(), value);
    }
    Ok(attrs)
}
