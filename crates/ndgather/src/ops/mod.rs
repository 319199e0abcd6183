//! The ops as values: [`Op`] is the three gathers with their options, and [`Op::run`] their
//! dtype-erased run, which their [`OpDef::run`] (the one door of every front end) calls. Each op's own file holds its options, its shape checks
//! and its typed `ndarray` functions; this module routes a run to them.
//!
//! The strategy is chosen inside the run: a small call on params given as raw bytes
//! (`Input::Records`) with contiguous operands, into a new output, takes the
//! path for small calls (`small_call.rs`: the same plans, checks and copy loops, on the
//! calling thread, without the views' walks), into a host's memory under `run_hosted`; any
//! other the kernels'.
//!
//! A run dispatches once on the indices' dtype and once on params' *width*: a fixed-width
//! element is moved as units of its alignment (`crate::mem::units`), so a float32 and an int32
//! gather run the same compiled copy. Values matter only for fill values, which are made
//! in params' own dtype before the copy.

pub(crate) mod contract;
pub mod embedding;
pub mod embedding_bag;
pub(crate) mod gather;
pub mod grad;
pub(crate) mod lookup_grads;
pub(crate) mod lookup_ops;
pub(crate) mod ragged_gather;
pub(crate) mod read_grads;
pub(crate) mod read_ops;
pub mod registry;
pub mod scatter;
pub mod scatter_reduce;
pub mod segment;
pub(crate) mod small_call;
pub(crate) mod take_along_axis;
pub mod tensor_scatter;
pub(crate) mod write_ops;

use crate::engine::fill;
use crate::engine::kernel;
use crate::engine::layout::Elements;
use crate::engine::layout::{into_array, row_major};
use crate::mem::output;
use crate::mem::raw_view::{RawView, RawViewMut};
use crate::mem::units::{self, with_unit_of, Unit};
use crate::ops::contract::OpDef;
use crate::ops::small_call::{Small, Target};
use crate::shape::{gather_nd_shape, gather_shape, Axis, Shape};
use crate::types::dtype::bytes_of;
use crate::types::dtype::{FixedWidth, Tensor, TensorView, TensorViewMut};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::{BadIndices, IndexType};
use crate::types::strings::{StringElement, Strings};
use crate::types::value::{self, FillValue};
use crate::with_tensor;
use gather::{GatherNdOptions, GatherOptions};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn};
use take_along_axis::TakeAlongAxisOptions;

/// An op of the gather family with its options: an op value, which every front end runs
/// through the one door, [`OpDef::run`] (as the registry's `gather`, `gather_nd` and
/// `take_along_axis` do).
///
/// ```
/// use ndgather::registry::Input;
/// use ndgather::{ndarray::array, GatherOptions, Op, OpDef, Out, Tensor};
///
/// let params = Tensor::from(array![[1.5f32, 2.5], [3.5, 4.5], [5.5, 6.5]].into_dyn());
/// let indices = Tensor::from(array![2i64, 0].into_dyn());
/// let op = Op::Gather(GatherOptions::new());
/// let inputs = [Input::from(params.view()), Input::from(indices.view())];
/// let out = op.run(&inputs, Out::New)?.unwrap().into_dense()?;
/// assert_eq!(out, Tensor::from(array![[5.5f32, 6.5], [1.5, 2.5]].into_dyn()));
///
/// // Into a caller's buffer: nothing is returned, and the buffer is unchanged on error.
/// let mut buffer = ndgather::ndarray::Array2::<f32>::zeros((2, 2));
/// op.run(&inputs, Out::Into(buffer.view_mut().into_dyn().into()))?;
/// assert_eq!(buffer, array![[5.5, 6.5], [1.5, 2.5]]);
/// # Ok::<(), ndgather::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// `tf.gather(params, indices, axis, batch_dims)`.
    Gather(GatherOptions),
    /// `tf.gather_nd(params, indices, batch_dims)`.
    GatherNd(GatherNdOptions),
    /// NumPy's `take_along_axis(arr, indices, axis)`.
    TakeAlongAxis(TakeAlongAxisOptions),
}

/// Where an op's run ([`OpDef::run`]) writes its result.
#[derive(Debug)]
#[non_exhaustive]
pub enum Out<'a> {
    /// A new tensor, returned; its memory is a buffer given back to [`crate::memory::recycle`]
    /// where one fits, else fresh pages.
    New,
    /// A new tensor that may take over `tensor`'s memory, which its owner no longer needs
    /// (an intermediate result): the memory is given to [`crate::memory::recycle`] first, where the
    /// output finds it if it fits.
    Reuse(Tensor),
    /// A caller's array of the output's shape and params' dtype, any layout: written in
    /// place, nothing returned, and left unchanged on error.
    Into(TensorViewMut<'a>),
    /// A caller's array of records (elements of params' size as their bytes) of the
    /// output's shape, for params given as records
    /// ([`crate::registry::Input::Records`]): as [`Out::Into`]. Only the ops that move
    /// elements take it.
    IntoRecords(RawViewMut<'a>),
    /// For the ops that write into a tensor (`tensor_scatter_nd_*`, `scatter_reduce`,
    /// `put_along_axis`): that tensor itself, updated in place, given here instead of as the
    /// first input (which is then [`crate::registry::Input::None`]). Every check runs first,
    /// so on error it is unchanged. The other ops refuse it.
    InPlace(TensorViewMut<'a>),
}

/// params as an op reads it: a tensor, or a tensor of records, whose last axis holds each
/// element's values (the bytes of a NumPy structured element, a misaligned or byte-swapped
/// element read from a file). Axes, checks and messages are those of the tensor without
/// the record axis; the output has the record axis appended.
#[derive(Debug, Clone)]
pub(crate) struct Params<'a>(Form<'a>);

/// How params is held: a tensor (of records or not), or elements as their bytes.
#[derive(Debug, Clone)]
enum Form<'a> {
    View { view: TensorView<'a>, records: bool },
    Raw(RawView<'a>),
}

impl<'a> Params<'a> {
    /// The shape of the elements, without the record axis.
    pub(crate) fn shape(&self) -> &[usize] {
        match &self.0 {
            Form::View { view, records } => {
                let shape = view.shape();
                &shape[..shape.len() - usize::from(*records)]
            }
            Form::Raw(raw) => raw.shape(),
        }
    }

    /// Elements of any fixed size as their bytes, moved in the widest unit their size and
    /// layout allow: the result is a tensor of those units with the record axis appended.
    pub(crate) fn raw(view: RawView<'a>) -> Params<'a> {
        Params(Form::Raw(view))
    }

    /// The view and whether it holds records: raw elements as records of the widest unit
    /// their layout allows.
    pub(crate) fn view(&self) -> Result<(TensorView<'a>, bool)> {
        match &self.0 {
            Form::View { view, records } => Ok((view.clone(), *records)),
            // A shape no array can have, whatever the unit (see `Op::run_raw`), is refused.
            Form::Raw(raw) => {
                raw.fits_arrays("params")?;
                crate::with_unit!(raw.unit_size(), U => raw
                    .units::<U>()
                    .map(|v| (TensorView::from(v), true))
                    .ok_or(Error::Internal("records viewed in the unit their layout allows")))
            }
        }
    }

    /// A tensor of records: `view`'s last axis holds each element's values.
    pub(crate) fn records(view: TensorView<'a>) -> Params<'a> {
        Params(Form::View {
            view,
            records: true,
        })
    }
}

impl<'a> From<TensorView<'a>> for Params<'a> {
    fn from(view: TensorView<'a>) -> Params<'a> {
        Params(Form::View {
            view,
            records: false,
        })
    }
}

impl<'a> From<&'a Tensor> for Params<'a> {
    fn from(tensor: &'a Tensor) -> Params<'a> {
        Params::from(tensor.view())
    }
}

impl Op {
    /// Runs the op on params of any dtype and indices of an integer dtype, into `out`.
    /// Returns the new tensor for [`Out::New`] and [`Out::Reuse`], `None` for [`Out::Into`].
    ///
    /// # Errors
    /// The op's own (see [`GatherOptions::gather`], [`GatherNdOptions::gather_nd`],
    /// [`TakeAlongAxisOptions::take_along_axis`]); [`Error::IndicesNotInteger`] (for
    /// take_along_axis NumPy's [`Error::AlongIndicesNotInteger`], after its axis check);
    /// [`Error::DTypeMismatch`] for an output of another dtype than params';
    /// [`Error::OutputShapeMismatch`]; [`Error::NotFixedWidth`] for records or
    /// a caller's output of strings.
    pub(crate) fn run<'p>(
        &self,
        params: impl Into<Params<'p>>,
        indices: &TensorView<'_>,
        out: Out<'_>,
    ) -> Result<Option<Tensor>> {
        let (view, records) = match params.into().0 {
            Form::View { view, records } => (view, records),
            Form::Raw(raw) => return self.run_raw(raw, indices, out),
        };
        let out = match out {
            Out::New => None,
            Out::Reuse(tensor) => {
                tensor.recycle();
                None
            }
            Out::Into(target) => Some(target),
            Out::IntoRecords(_) => return Err(contract::not_records(self.name())),
            Out::InPlace(_) => return Err(contract::not_in_place(self.name())),
        };
        if let Some(target) = &out {
            if target.dtype() != view.dtype() {
                return Err(Error::DTypeMismatch {
                    expected: view.dtype(),
                    found: target.dtype(),
                });
            }
        }
        if !indices.dtype().is_index() {
            return Err(match self {
                // The record axis is not an axis of the tensor.
                Op::TakeAlongAxis(o) => {
                    o.non_integer_indices(view.shape().len().saturating_sub(usize::from(records)))
                }
                _ => Error::IndicesNotInteger {
                    dtype: indices.dtype(),
                },
            });
        }
        with_tensor!(TensorView, &view, fixed p => self.run_fixed(p.clone(), records, indices, out),
            else dtype => {
            if records || out.is_some() {
                return Err(Error::NotFixedWidth { dtype });
            }
            with_indices!(indices, i => self.run_strings(&view, i).map(Some),
                else dtype => Err(Error::IndicesNotInteger { dtype }))
        })
    }

    /// Params as records of the widest unit that it, and a caller's records output, allow.
    fn run_raw(
        &self,
        raw: RawView<'_>,
        indices: &TensorView<'_>,
        out: Out<'_>,
    ) -> Result<Option<Tensor>> {
        let out = match out {
            Out::Reuse(old) => {
                old.recycle();
                Out::New
            }
            out => out,
        };
        let mut out = out;
        match &mut out {
            Out::New => {
                if let Small::Fresh(result) = self.small(&raw, indices, Target::Fresh)? {
                    return Ok(Some(result));
                }
            }
            // A caller's row-major records of params' size and the output's shape (records
            // laid out otherwise, and the errors of any other, are the general path's).
            Out::IntoRecords(target) if target.itemsize() == raw.itemsize() => {
                let shape = crate::shape::AxisList::from_slice(target.shape());
                if let Some(bytes) = target.contiguous_bytes_mut() {
                    if let Small::Hosted = self.small(&raw, indices, Target::Into(bytes, &shape))? {
                        return Ok(None);
                    }
                }
            }
            _ => {}
        }
        // A shape no array can have (lent memory of no elements, or a broadcast of zero
        // strides, can claim one), whatever the unit: refused before any view of it.
        raw.fits_arrays("params")?;
        if let Out::IntoRecords(target) = &out {
            if target.itemsize() != raw.itemsize() {
                return Err(self.record_size_error(raw.itemsize(), Some(target.itemsize())));
            }
            target.fits_arrays("output")?;
        }
        // Records take a fill value as one element's bytes. Any other is taken as records of
        // bytes take it, made in a byte (none given: JAX's default for uint8, 255), whatever
        // unit their layout allows, so both paths agree on it.
        let fill_bytes = match self.fill_value() {
            FillValue::Bytes { len, .. } => usize::from(len) == raw.itemsize(),
            _ => false,
        };
        let unit = match &out {
            _ if self.bad_indices() == BadIndices::Fill && !fill_bytes => 1,
            Out::IntoRecords(target) => raw.unit_size().min(target.unit_size()),
            _ => raw.unit_size(),
        };
        let misfit = || Error::Internal("records viewed in a unit their layout allows");
        crate::with_unit!(unit, U => {
            let view = TensorView::from(raw.units::<U>().ok_or_else(misfit)?);
            let out = match out {
                Out::IntoRecords(target) => {
                    Out::Into(TensorViewMut::from(target.into_units::<U>().ok_or_else(misfit)?))
                }
                Out::Into(_) => return Err(self.record_size_error(raw.itemsize(), None)),
                other => other,
            };
            self.run(Params::records(view), indices, out)
        })
    }

    /// The error for an output that is not records of params' size (`None`: a typed one).
    fn record_size_error(&self, expected: usize, found: Option<usize>) -> Error {
        let found = found.map_or("a typed tensor".to_string(), |n| {
            format!("{n}-byte records")
        });
        Error::OpInput {
            op: self.name(),
            input: "out".into(),
            reason: format!(
                "params are {expected}-byte records, out is {found}; out takes params' dtype"
            ),
        }
    }

    /// The op's bad-index policy.
    pub fn bad_indices(&self) -> BadIndices {
        match self {
            Op::Gather(o) => o.bad_indices,
            Op::GatherNd(o) => o.bad_indices,
            Op::TakeAlongAxis(o) => o.bad_indices,
        }
    }

    /// The value the `Fill` policy writes.
    pub fn fill_value(&self) -> FillValue {
        match self {
            Op::Gather(o) => o.fill_value,
            Op::GatherNd(o) => o.fill_value,
            Op::TakeAlongAxis(o) => o.fill_value,
        }
    }

    /// The same op with another fill value.
    pub fn with_fill_value(self, value: FillValue) -> Op {
        match self {
            Op::Gather(o) => Op::Gather(o.fill_value(value)),
            Op::GatherNd(o) => Op::GatherNd(o.fill_value(value)),
            Op::TakeAlongAxis(o) => Op::TakeAlongAxis(o.fill_value(value)),
        }
    }

    /// The same op with another bad-index policy.
    pub fn with_bad_indices(self, policy: BadIndices) -> Op {
        match self {
            Op::Gather(o) => Op::Gather(o.bad_indices(policy)),
            Op::GatherNd(o) => Op::GatherNd(o.bad_indices(policy)),
            Op::TakeAlongAxis(o) => Op::TakeAlongAxis(o.bad_indices(policy)),
        }
    }

    /// The output's shape for params and indices of these shapes, by the op's shape rule.
    ///
    /// ```
    /// use ndgather::{GatherNdOptions, Op};
    /// assert_eq!(Op::GatherNd(GatherNdOptions::new()).out_shape(&[4, 5, 6], &[3, 2]).unwrap(), [3, 6]);
    /// ```
    ///
    /// # Errors
    /// The op's shape errors.
    pub fn out_shape(&self, params: &[usize], indices: &[usize]) -> Result<Vec<usize>> {
        let (p, i) = (Shape::known(params), Shape::known(indices));
        let shape = match self {
            Op::Gather(o) => {
                let axis = o.axis.map_or(Axis::Default, Axis::Given);
                gather_shape(&p, &i, axis, o.batch_dims, None)?.output
            }
            Op::GatherNd(o) => gather_nd_shape(&p, &i, o.batch_dims, None)?.output,
            Op::TakeAlongAxis(o) => return o.out_shape(params, indices),
        };
        shape.to_known().ok_or_else(|| Error::ShapeOverflow {
            what: "output",
            shape: params.to_vec(),
        })
    }

    /// The op on typed views: into a fresh array, or into `out`.
    fn typed<T: crate::Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
        out: Option<ArrayViewMutD<'_, T>>,
    ) -> Result<Option<ArrayD<T>>> {
        Ok(match (self, out) {
            (Op::Gather(o), None) => Some(o.fresh(params, elements, indices, fill)?),
            (Op::GatherNd(o), None) => Some(o.fresh(params, elements, indices, fill)?),
            (Op::TakeAlongAxis(o), None) => Some(o.fresh(params, elements, indices, fill)?),
            (Op::Gather(o), Some(out)) => o
                .write(params, elements, indices, fill, out)
                .map(|_| None)?,
            (Op::GatherNd(o), Some(out)) => o
                .write(params, elements, indices, fill, out)
                .map(|_| None)?,
            (Op::TakeAlongAxis(o), Some(out)) => o
                .write(params, elements, indices, fill, out)
                .map(|_| None)?,
        })
    }

    /// A string tensor: its own gather of spans and bytes.
    fn run_strings<I: IndexType>(
        &self,
        params: &TensorView<'_>,
        indices: &ArrayViewD<'_, I>,
    ) -> Result<Tensor> {
        with_tensor!(TensorView, params, strings s => s.run_op(*self, indices).map(Tensor::from),
            else dtype => Err(Error::NotFixedWidth { dtype }))
    }

    /// A fixed-width tensor, moved as units of its alignment: what depends on `T` is only
    /// the views, the fill value and the result's type; the copy is [`Self::run_units`]'.
    fn run_fixed<T: FixedWidth>(
        &self,
        params: ArrayViewD<'_, T>,
        records: bool,
        indices: &TensorView<'_>,
        out: Option<TensorViewMut<'_>>,
    ) -> Result<Option<Tensor>> {
        with_unit_of!(T, U => self.run_fixed_as::<T, U>(params, records, indices, out))
    }

    fn run_fixed_as<T: FixedWidth, U: Unit>(
        &self,
        params: ArrayViewD<'_, T>,
        records: bool,
        indices: &TensorView<'_>,
        out: Option<TensorViewMut<'_>>,
    ) -> Result<Option<Tensor>> {
        if records && params.ndim() == 0 {
            return Err(Error::InvalidShape {
                shape: vec![],
                reason: "params of records needs a trailing record axis".to_string(),
            });
        }
        let width = if records {
            params.shape()[params.ndim() - 1]
        } else {
            1
        };
        let per = std::mem::size_of::<T>() / std::mem::size_of::<U>();
        // A record of several elements is one record of units where its elements are
        // adjacent; any other layout is made row-major first.
        let params = if records && per > 1 && !last_axis_packed(params.strides(), width) {
            params.as_standard_layout()
        } else {
            params.into()
        };
        let Some(unit_params) = units::view::<T, U>(params.view(), records) else {
            return Err(Error::Internal("a unit of T's alignment fits T"));
        };
        // One element's units, repeated over a record: the fill pass cycles through it.
        let fill = match self.bad_indices() {
            BadIndices::Fill => Some(self.fill_units::<T, U>(width * per)?),
            _ => None,
        };
        let elements = if per == 1 && !records {
            Elements::Plain
        } else {
            Elements::Records
        };
        let Some(target) = out else {
            let result = self.run_units(&unit_params, elements, indices, fill.as_deref(), None)?;
            let Some(result) = result else {
                return Err(Error::Internal("a fresh run returned no output"));
            };
            return tensor_of_units::<T, U>(result, per, records).map(Some);
        };
        let Some(target) = T::from_view_mut(target) else {
            return Err(Error::Internal("output dtype checked against params"));
        };
        let expected = || self.out_shape_of(params.shape(), indices.shape(), records);
        let apart = records && per > 1 && !last_axis_packed(target.strides(), width);
        if apart || !units::writable::<T>() {
            // A caller's records laid out apart, or elements not every unit is (bool): a fresh
            // result, then assigned (after every check, so the caller's array is unchanged on
            // error).
            let expected = expected()?;
            if target.shape() != expected.as_slice() {
                return Err(output_mismatch(target.shape(), &expected, records));
            }
            let fresh = self.run_fixed_as::<T, U>(params.view(), records, indices, None)?;
            let fresh = fresh.and_then(|t| T::from_tensor_owned(t).ok());
            let Some(fresh) = fresh else {
                return Err(Error::Internal("a fresh run returned no output"));
            };
            let mut target = target;
            target.assign(&fresh);
            return Ok(None);
        }
        let shape = target.raw_dim();
        let Some(unit_target) = units::view_mut::<T, U>(target, records) else {
            return Err(Error::Internal("a unit of T's alignment fits T"));
        };
        let run = self.run_units(
            &unit_params,
            elements,
            indices,
            fill.as_deref(),
            Some(unit_target),
        );
        match run {
            Err(Error::OutputShapeMismatch { .. }) => Err(output_mismatch(
                ndarray::Dimension::slice(&shape),
                &expected()?,
                records,
            )),
            other => other.map(|_| None),
        }
    }

    /// The copy on units, for indices of any integer dtype.
    fn run_units<U: Unit>(
        &self,
        params: &ArrayViewD<'_, U>,
        elements: Elements,
        indices: &TensorView<'_>,
        fill: Option<&[U]>,
        out: Option<ArrayViewMutD<'_, U>>,
    ) -> Result<Option<ArrayD<U>>> {
        with_indices!(indices, i => self.typed(params, elements, i, fill, out),
            else dtype => Err(Error::IndicesNotInteger { dtype }))
    }

    /// The output's element shape (plus the record axis, for records) for `params`.
    fn out_shape_of(
        &self,
        shape: &[usize],
        indices: &[usize],
        records: bool,
    ) -> Result<Vec<usize>> {
        let (elements, record) = match (records, shape.split_last()) {
            (true, Some((&w, rest))) => (rest, Some(w)),
            _ => (shape, None),
        };
        let mut out = self.out_shape(elements, indices)?;
        out.extend(record);
        Ok(out)
    }

    /// The `Fill` policy's record in units: the fill element, made in params' dtype `T`
    /// (or given as bytes), repeated to `len` units.
    fn fill_units<T: FixedWidth, U: Unit>(&self, len: usize) -> Result<Vec<U>> {
        let value = self.fill_value();
        let one: Vec<U> = match value {
            FillValue::Bytes { bytes, len: n } => {
                let bytes = &bytes[..usize::from(n)];
                // (Bytes that are no element of `T`, a bool's 2, are refused as other values.)
                match units::of_bytes::<U>(bytes) {
                    Some(u) if u.len() == len && T::DTYPE.holds_values(bytes) => u,
                    _ => return Err(value::refuse::<T>(value)),
                }
            }
            _ => units::of_value::<T, U>(&fill::element::<T>(value)?),
        };
        Ok(one.iter().copied().cycle().take(len).collect())
    }
}

/// Whether a record axis of `width` elements has its elements adjacent (stride 1).
fn last_axis_packed(strides: &[isize], width: usize) -> bool {
    width <= 1 || strides.last() == Some(&1)
}

/// A result of units as a tensor of `T`: `per` units an element, the record axis kept for
/// records.
fn tensor_of_units<T: FixedWidth, U: Unit>(
    result: ArrayD<U>,
    per: usize,
    records: bool,
) -> Result<Tensor> {
    let dim = if per > 1 || records {
        let mut shape = crate::shape::AxisList::from_slice(result.shape());
        let last = shape.pop().unwrap_or(0);
        if records {
            shape.push(last / per.max(1));
        }
        IxDyn(&shape)
    } else {
        // One unit an element: the same shape, no vector made for it.
        result.raw_dim()
    };
    let (data, offset) = result.into_raw_vec_and_offset();
    debug_assert_eq!(
        offset.unwrap_or(0),
        0,
        "fresh outputs start at their buffer"
    );
    // The units are a fresh output of the copy: units of params' elements (of dtype `T`), of
    // the fill element made in `T`, or zeros, `per` to an element in order.
    let elements = units::into_elements::<T, U>(data)
        .ok_or(Error::Internal("a copy's units are elements of its dtype"))?;
    ArrayD::from_shape_vec(dim, elements)
        .map(T::into_tensor)
        .map_err(|_| Error::Internal("a result's shape and length agree"))
}

/// The shapes of a mismatched output, in elements.
fn output_mismatch(given: &[usize], expected: &[usize], records: bool) -> Error {
    let strip = |s: &[usize]| {
        if records {
            s[..s.len().saturating_sub(1)].to_vec()
        } else {
            s.to_vec()
        }
    };
    Error::OutputShapeMismatch {
        given: strip(given),
        expected: strip(expected),
    }
}

/// The string dtypes' ops: the fixed-width op on the tensor's spans (every shape rule, index
/// check and policy is the fixed-width one), then the bytes copied by the engine.
impl<T: StringElement> Strings<T> {
    /// `op` on this tensor: the op on its spans, which marks the slices the policy fills
    /// ([`Span::FILL`](crate::types::strings::Span)), then their bytes copied into a new
    /// tensor.
    pub(crate) fn run_op<I: IndexType>(
        &self,
        op: Op,
        indices: &ArrayViewD<'_, I>,
    ) -> Result<Strings<T>> {
        let fill = (op.bad_indices(), op.fill_value());
        let spans_fill = fill::record(op.bad_indices(), FillValue::Default, 1)?;
        let spans = op.with_fill_value(FillValue::Default).typed(
            &self.spans_view()?,
            Elements::Plain,
            indices,
            spans_fill.as_deref(),
            None,
        );
        let spans = spans.and_then(|s| s.ok_or(Error::Internal("a new output")));
        self.copy_gathered(fill, spans)
    }
}

/// `other` as an array of the element type of `like` (an array of the dtype `other` was
/// checked to have): the second input of an op, typed by the dispatch on its first.
pub(crate) fn typed_like<
    'a,
    T: crate::types::dtype::ArrayElement,
    S: ndarray::RawData<Elem = T>,
>(
    _like: &ndarray::ArrayBase<S, IxDyn>,
    other: &TensorView<'a>,
) -> Result<ArrayViewD<'a, T>> {
    T::from_view(other).ok_or(Error::Internal("dtypes checked equal"))
}

/// A row-major copy of `t` in a fresh output, copied in parallel chunks: the new array of
/// the out-of-place form of a write-side op is mostly this copy, and its page faults. Through `row_major`, not
/// `to_owned`: ndarray copies an empty view with its own strides, which a view lent by
/// another library need not have made standard.
pub(crate) fn fresh_copy<T: Clone + Default + Send + Sync + 'static>(
    t: &ArrayViewD<'_, T>,
) -> Result<ArrayD<T>> {
    let src = row_major(t)?;
    let out = output::fresh(src.len(), t.shape(), bytes_of::<T>(), |slots, _| {
        kernel::for_chunks(slots, 1, std::mem::size_of::<T>(), |first, chunk| {
            for (slot, value) in chunk.iter_mut().zip(&src[first..]) {
                slot.write(value.clone());
            }
        })
    })?;
    into_array(t.shape(), out)
}
