//! Small calls on C-contiguous operands held as bytes: what a Python or Java front end has (a
//! buffer and a shape), planned once and copied on the calling thread into an output that
//! the caller allocates.
//!
//! Below the size at which the kernels split work across threads, [`Op::run`]'s fixed costs
//! (typed views of both operands, the output's allocation and conversion, the thread
//! hand-off) outweigh the copy several times over. This path builds no view: it takes the
//! same plans, index checks and copy loops as [`Op::run`] (`Copies`), on the bytes as they
//! are, so its results and errors are the same.

use super::gather::{Copies, Source};
use super::Op;
use crate::engine::kernel;
use crate::mem::output::Pages;
use crate::mem::units::{self, Unit};
use crate::shape::checked_numel;
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::dtype::DType;
use crate::types::error::{Error, Result};
use crate::types::index::BadIndices;
use crate::types::value::FillValue;
use std::borrow::Cow;
use std::mem::MaybeUninit;

/// A C-contiguous operand as its bytes: its elements back to back in row-major order.
#[derive(Debug, Clone, Copy)]
pub struct ContiguousBytes<'a> {
    /// The elements' bytes: the product of `shape` times `itemsize` of them.
    pub data: &'a [u8],
    /// The shape.
    pub shape: &'a [usize],
    /// Bytes per element. A gather moves elements as bytes, so params may be of any dtype.
    pub itemsize: usize,
}

/// The plan of the call: the same types that [`Op::run`] plans with.
#[derive(Debug, Clone)]
enum SmallPlan {
    Gather(GatherPlan),
    GatherNd(GatherNdPlan),
}

/// A small gather, checked and planned by [`Op::small_call`]: allocate an output of
/// [`SmallCall::out_shape`] and [`SmallCall::run`] it.
#[derive(Debug, Clone)]
pub struct SmallCall<'a> {
    plan: SmallPlan,
    params: &'a [u8],
    indices: &'a [u8],
    index: DType,
    itemsize: usize,
    policy: BadIndices,
    fill: FillValue,
}

impl Op {
    /// Checks and plans the op on C-contiguous operands given as bytes, for a call small
    /// enough to copy on the calling thread into an output the caller allocates.
    ///
    /// Returns `Ok(None)` for a call this path does not take, which [`Op::run`] then runs:
    /// `take_along_axis`, an output of no elements, an output or index count at which the
    /// kernels split the work across threads, elements of no bytes, indices not of an integer dtype or not
    /// aligned for it, and the `Fill` policy with a fill value other than one element's
    /// bytes.
    ///
    /// ```
    /// use ndgather::{ContiguousBytes, DType, GatherOptions, Op};
    /// let params: Vec<u8> = (0..8).collect(); // a [4, 2] array of bytes
    /// let indices: Vec<u8> = [3i64, 1].iter().flat_map(|i| i.to_ne_bytes()).collect();
    /// let op = Op::Gather(GatherOptions::new());
    /// let call = op
    ///     .small_call(
    ///         ContiguousBytes { data: &params, shape: &[4, 2], itemsize: 1 },
    ///         ContiguousBytes { data: &indices, shape: &[2], itemsize: 8 },
    ///         DType::I64,
    ///     )
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(call.out_shape(), &[2, 2]);
    /// let mut out = [std::mem::MaybeUninit::new(0u8); 4];
    /// call.run(&mut out).unwrap();
    /// assert_eq!(out.map(|b| unsafe { b.assume_init() }), [6, 7, 2, 3]);
    /// ```
    ///
    /// # Errors
    /// [`Op::run`]'s shape errors, in its words; [`Error::Internal`] for operands whose bytes do not match their shape.
    pub fn small_call<'a>(
        &self,
        params: ContiguousBytes<'a>,
        indices: ContiguousBytes<'a>,
        index: DType,
    ) -> Result<Option<SmallCall<'a>>> {
        let matches = |operand: &ContiguousBytes<'_>| {
            checked_numel(operand.shape).and_then(|n| n.checked_mul(operand.itemsize))
                == Some(operand.data.len())
        };
        if !index.is_index() {
            return Ok(None);
        }
        if !matches(&params) || !matches(&indices) || index.size() != Some(indices.itemsize) {
            return Err(Error::Internal(
                "operand bytes do not match their shape and item size",
            ));
        }
        let aligned = (indices.data.as_ptr() as usize).is_multiple_of(indices.itemsize);
        let fill = self.fill_value();
        let fill_fits =
            matches!(fill, FillValue::Bytes { len, .. } if usize::from(len) == params.itemsize);
        if params.itemsize == 0
            || !aligned
            || (self.bad_indices() == BadIndices::Fill && !fill_fits)
        {
            return Ok(None);
        }
        let (p, i) = (params.shape, indices.shape);
        let plan = crate::with_dtype!(index, index I => match self {
            Op::Gather(o) => SmallPlan::Gather(GatherPlan::new::<I>(p, i, o.axis, o.batch_dims)?),
            Op::GatherNd(o) => SmallPlan::GatherNd(GatherNdPlan::new::<I>(p, i, o.batch_dims)?),
            Op::TakeAlongAxis(_) => return Ok(None),
        }, else return Err(Error::IndicesNotInteger { dtype: index }));
        let out_bytes = plan.out_len().saturating_mul(params.itemsize);
        let index_count = indices.data.len() / indices.itemsize;
        // An empty output is `Op::run`'s too: its loops would still walk every outer row of
        // params, which an empty params' other axes can make 2^40 long (a fuzzed hang).
        if out_bytes == 0 || kernel::may_split(out_bytes, index_count) {
            return Ok(None);
        }
        Ok(Some(SmallCall {
            plan,
            params: params.data,
            indices: indices.data,
            index,
            itemsize: params.itemsize,
            policy: self.bad_indices(),
            fill,
        }))
    }
}

impl SmallPlan {
    fn out_len(&self) -> usize {
        match self {
            SmallPlan::Gather(p) => p.out_len(),
            SmallPlan::GatherNd(p) => p.out_len(),
        }
    }
}

impl SmallCall<'_> {
    /// The output's shape: the caller allocates `out_shape().iter().product()` elements.
    pub fn out_shape(&self) -> &[usize] {
        match &self.plan {
            SmallPlan::Gather(p) => p.out_shape(),
            SmallPlan::GatherNd(p) => p.out_shape(),
        }
    }

    /// Copies into `out`, the output's bytes (C-contiguous, uninitialised), and writes
    /// every byte; then reports the first bad index that the policy makes an error, as
    /// [`Op::run`] does (`out` is then the caller's to drop).
    ///
    /// # Errors
    /// [`Error::BadIndex`] and [`Error::BadIndexVector`], as [`Op::run`];
    /// [`Error::Internal`] for an `out` of another length.
    pub fn run(&self, out: &mut [MaybeUninit<u8>]) -> Result<()> {
        if out.len() != self.plan.out_len().saturating_mul(self.itemsize) {
            return Err(Error::Internal("out does not hold the output's bytes"));
        }
        // The widest unit that every element's bytes, in params and in out, are aligned to.
        let bits = self.itemsize | self.params.as_ptr() as usize | out.as_ptr() as usize | 8;
        crate::with_unit!(1 << bits.trailing_zeros(), U => match &self.plan {
            SmallPlan::Gather(plan) => self.copy::<U, _>(plan, out),
            SmallPlan::GatherNd(plan) => self.copy::<U, _>(plan, out),
        })
    }

    /// The copy in units `U`, each element a record of `itemsize / size_of::<U>()` units.
    fn copy<U: Unit, P: Copies>(&self, plan: &P, out: &mut [MaybeUninit<u8>]) -> Result<()> {
        let internal = || Error::Internal("bytes aligned for their unit");
        let params = bytemuck::try_cast_slice::<u8, U>(self.params).map_err(|_| internal())?;
        let out = units::uninit_units::<U>(out).ok_or_else(internal)?;
        let record = self.itemsize / std::mem::size_of::<U>();
        // Elements of one unit copy with the plan as it is; only records widen a copy of it.
        let wide = if record > 1 {
            Cow::Owned(plan.clone().widen(record)?)
        } else {
            Cow::Borrowed(plan)
        };
        let fill = match (self.policy, self.fill) {
            (BadIndices::Fill, FillValue::Bytes { bytes, len }) => {
                Some(units::of_bytes::<U>(&bytes[..usize::from(len)]).ok_or_else(internal)?)
            }
            _ => None,
        };
        let source = Source::RowMajor(Cow::Borrowed(params));
        crate::with_dtype!(self.index, index I => {
            let indices = bytemuck::try_cast_slice::<u8, I>(self.indices).map_err(|_| internal())?;
            // `Copies::copy` writes every slot; as in a fresh `Op::run`, the index check
            // runs only if the copy met an index it could not resolve.
            let policy = (self.policy, fill.as_deref());
            if wide.copy(&source, indices, policy, out, Pages::Used) {
                plan.check(indices, self.policy)?;
            }
            Ok(())
        }, else Err(Error::IndicesNotInteger { dtype: self.index }))
    }
}
