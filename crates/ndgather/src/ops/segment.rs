//! TensorFlow's segment reductions: the sorted `tf.math.segment_{sum,mean,max,min,prod}` and
//! the unsorted `tf.math.unsorted_segment_{sum,mean,max,min,prod,sqrt_n}`, with TensorFlow
//! 2.21's checks in its order, its identities, messages and gradients (`segment_grad.rs`);
//! and the fused `gather_segment` (`gather_segment.rs`).
//!
//! Row `s` of the output reduces the rows of `data` whose segment id is `s`.
//! - Unsorted: into `num_segments` rows, each starting from the reduction's identity (0 for
//!   sums and means, 1 for products, the lowest finite value for max, the highest for min)
//!   and meeting its rows in order. Negative ids are dropped. The mean and sqrt_n are
//!   TensorFlow's Python compositions: the sum divided by the count (or its square root),
//!   counted in the dtype, at least 1; for integers Python's `/` makes the result float32
//!   (8- and 16-bit) or float64.
//! - Sorted: `last id + 1` rows; a gap between ids holds 0 (1 for prod); a segment of one
//!   row is that row; longer ones are reduced as Eigen does (`segment_arith.rs`), and the
//!   mean is their sum in order divided by the count.
//!
//! ```
//! use ndgather::ndarray::array;
//! use ndgather::segment::{Reduce, Segment};
//!
//! let data = array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]];
//! let max = Segment::unsorted(Reduce::Max, 3).reduce(&data, &array![1, 1, -1])?;
//! assert_eq!(max, array![[f32::MIN, f32::MIN], [3.0, 4.0], [f32::MIN, f32::MIN]].into_dyn());
//! let sums = Segment::sorted(Reduce::Sum).reduce(&data, &array![0i64, 0, 2])?;
//! assert_eq!(sums, array![[4.0f32, 6.0], [0.0, 0.0], [5.0, 6.0]].into_dyn());
//! # Ok::<(), ndgather::Error>(())
//! ```

use crate::engine::layout::{into_array, row_major};
use crate::mem::output;
use crate::ops::contract::{
    deliver, not_in_place, AttrDef, AttrKind, Attrs, Fact, Input, InputDef, InputKind, Inputs,
    Linear, OpDef, Parsed, Routed, Signature, Value,
};
use crate::ops::scatter::combine_rows;
use crate::ops::Out;
use crate::shape::plan::unravel;
use crate::shape::{checked_numel, Dim, Shape};
use crate::types::arith::{Arith, Number};
use crate::types::dtype::bytes_of;
use crate::types::dtype::{DType, Tensor, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::{BadIndices, IndexType};
use crate::with_tensor;
use ndarray::{ArrayBase, ArrayD, Data, Dimension};
use segment_arith::{eigen_rows, Steps};

mod gather_segment;
mod segment_arith;
mod segment_grad;

pub use gather_segment::GatherSegment;

/// How a segment's rows combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// Their sum.
    Sum,
    /// Their mean.
    Mean,
    /// Their maximum.
    Max,
    /// Their minimum.
    Min,
    /// Their product.
    Prod,
    /// Their sum divided by the square root of their count (unsorted only, as in TensorFlow).
    SqrtN,
}

impl Reduce {
    /// Every reduction.
    pub const ALL: [Reduce; 6] = [
        Reduce::Sum,
        Reduce::Mean,
        Reduce::Max,
        Reduce::Min,
        Reduce::Prod,
        Reduce::SqrtN,
    ];

    /// The name in TensorFlow's op names (`sqrt_n` for [`Reduce::SqrtN`]).
    pub fn name(self) -> &'static str {
        match self {
            Reduce::Sum => "sum",
            Reduce::Mean => "mean",
            Reduce::Max => "max",
            Reduce::Min => "min",
            Reduce::Prod => "prod",
            Reduce::SqrtN => "sqrt_n",
        }
    }

    /// The reduction of `name`.
    pub fn from_name(name: &str) -> Option<Reduce> {
        Reduce::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Whether the reduction is linear in the values reduced (a sum scaled by the segment's
    /// count or its square root): a max, a min or a product is not.
    pub(crate) fn is_linear(self) -> bool {
        matches!(self, Reduce::Sum | Reduce::Mean | Reduce::SqrtN)
    }
}

/// TensorFlow's dtype lists, as its messages print them.
const NUMBERS: &str = "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, \
                       qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64";
const REALS: &str =
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64";
const MAXIMUM: &str =
    "bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64";
const SQRT: &str = "bfloat16, half, float, double, complex64, complex128";

/// A segment reduction: its reduction, whether its ids are sorted (TensorFlow's
/// `segment_*`) or not (`unsorted_segment_*`, into `num_segments` rows), and the policy for
/// ids out of range (unsorted only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Segment {
    /// How a segment's rows combine.
    pub reduce: Reduce,
    /// Whether the ids are sorted (the output then has `last id + 1` rows).
    pub sorted: bool,
    /// The number of segments of an unsorted reduction (TensorFlow refuses a negative one
    /// when it runs).
    pub num_segments: i64,
    /// What an id out of `[0, num_segments)` does in an unsorted reduction: with
    /// [`BadIndices::Error`] a negative id is dropped and a too large one is an error, as
    /// TensorFlow on the CPU; [`BadIndices::Ignore`] drops both; `Clamp`, `Negative` and
    /// `Wrap` map them into range.
    pub bad_indices: BadIndices,
}

/// The geometry of a checked call: each row's segment (`None`: dropped), the rows, the
/// elements of a row, the output's shape.
pub(crate) struct SegmentPlan {
    pub(crate) targets: Vec<Option<usize>>,
    pub(crate) rows: usize,
    pub(crate) row_len: usize,
    pub(crate) out_shape: Vec<usize>,
}

impl Segment {
    /// The sorted reduction `tf.math.segment_<reduce>`.
    pub const fn sorted(reduce: Reduce) -> Segment {
        Segment {
            reduce,
            sorted: true,
            num_segments: 0,
            bad_indices: BadIndices::Error,
        }
    }

    /// The unsorted reduction `tf.math.unsorted_segment_<reduce>` into `num_segments` rows.
    pub const fn unsorted(reduce: Reduce, num_segments: i64) -> Segment {
        Segment {
            reduce,
            sorted: false,
            num_segments,
            bad_indices: BadIndices::Error,
        }
    }

    /// The same reduction with another policy for ids out of range.
    pub fn bad_indices(mut self, policy: BadIndices) -> Segment {
        self.bad_indices = policy;
        self
    }

    /// Whether the reduction takes `dtype`, and if not, TensorFlow's list of those it takes.
    fn allowed(&self, dtype: DType) -> std::result::Result<(), &'static str> {
        let number = dtype.is_number();
        let real = number && dtype.is_ordered();
        match (self.sorted, self.reduce) {
            (_, Reduce::Max | Reduce::Min) if !real => Err(REALS),
            _ if !number => Err(NUMBERS),
            _ => Ok(()),
        }
    }

    /// TensorFlow's refusal of `dtype` for this reduction.
    pub(crate) fn refusal(&self, dtype: DType) -> Error {
        Segment::no_kernel(dtype, self.allowed(dtype).err().unwrap_or(NUMBERS))
    }

    fn no_kernel(dtype: DType, allowed: &'static str) -> Error {
        Error::Segment {
            reason: format!(
                "Value for attr 'T' of {} is not in the list of allowed values: {allowed}",
                dtype.tf_short_name()
            ),
        }
    }

    /// TensorFlow's checks, in its order, and where each row goes.
    pub(crate) fn plan<I: IndexType>(
        &self,
        dtype: DType,
        data: &[usize],
        ids: &[usize],
        id: &[I],
    ) -> Result<SegmentPlan> {
        self.allowed(dtype)
            .map_err(|allowed| Segment::no_kernel(dtype, allowed))?;
        if self.sorted {
            self.plan_sorted(data, ids, id)
        } else {
            self.plan_unsorted(dtype, data, ids, id)
        }
    }

    /// The checks of [`Segment::plan`] that shapes alone decide, on what is known of them
    /// (a graph's static shapes), with the same errors.
    fn check_known(&self, data: &Shape, ids: &Shape) -> Result<()> {
        let bad = |reason: String| Err(Error::Segment { reason });
        if self.sorted {
            match (data.dims(), ids.dims()) {
                (Some([]), _) => bad("input must be at least rank 1".into()),
                (_, Some(i)) if i.len() != 1 => bad("segment_ids should be a vector.".into()),
                (Some([Some(a), ..]), Some([Some(b)])) if a != b => {
                    bad("segment_ids should be the same size as dimension 0 of input.".into())
                }
                _ => Ok(()),
            }
        } else {
            // In the order the run checks them: the raw kernels' shapes, then the count.
            let composed = matches!(self.reduce, Reduce::Mean | Reduce::SqrtN);
            if let (false, Some(d), Some(i)) = (composed, data.to_known(), ids.to_known()) {
                if !d.starts_with(&i) {
                    return Err(Error::SegmentIdsShape {
                        data: d,
                        segment_ids: i,
                    });
                }
            }
            if self.num_segments < 0 {
                return bad(format!(
                    "Input num_segments == {} must not be negative.",
                    self.num_segments
                ));
            }
            Ok(())
        }
    }

    fn plan_sorted<I: IndexType>(
        &self,
        data: &[usize],
        ids: &[usize],
        id: &[I],
    ) -> Result<SegmentPlan> {
        let bad = |reason: &str| Error::Segment {
            reason: reason.to_string(),
        };
        if data.is_empty() {
            return Err(bad("input must be at least rank 1"));
        }
        if ids.len() != 1 {
            return Err(bad("segment_ids should be a vector."));
        }
        if data[0] != ids[0] {
            return Err(bad(
                "segment_ids should be the same size as dimension 0 of input.",
            ));
        }
        let out_rows = match id.last() {
            None => 0,
            Some(last) => usize::try_from(last.to_i128() + 1)
                .ok()
                .filter(|&r| r > 0)
                .ok_or_else(|| bad("segment ids must be >= 0"))?,
        };
        check_sorted(id, out_rows)?;
        let targets = id
            .iter()
            .map(|i| usize::try_from(i.to_i128()).ok())
            .collect();
        let row_len = checked_numel(&data[1..]).ok_or_else(|| overflow(data))?;
        finish_plan(targets, ids[0], row_len, out_rows, &data[1..])
    }

    fn plan_unsorted<I: IndexType>(
        &self,
        dtype: DType,
        data: &[usize],
        ids: &[usize],
        id: &[I],
    ) -> Result<SegmentPlan> {
        let composed = matches!(self.reduce, Reduce::Mean | Reduce::SqrtN);
        let negative = || Error::Segment {
            reason: format!(
                "Input num_segments == {} must not be negative.",
                self.num_segments
            ),
        };
        let prefix = || {
            if data.starts_with(ids) {
                Ok(())
            } else {
                Err(Error::SegmentIdsShape {
                    data: data.to_vec(),
                    segment_ids: ids.to_vec(),
                })
            }
        };
        // The raw kernels check the shapes first; the Python compositions count the ids
        // first (an unsorted sum of ones), then reshape the count to data's rank.
        if !composed {
            prefix()?;
        }
        let out_rows = usize::try_from(self.num_segments).map_err(|_| negative())?;
        let rows = checked_numel(ids).ok_or_else(|| overflow(data))?;
        let targets: Vec<Option<usize>> = id
            .iter()
            .map(|&i| self.bad_indices.resolve(i, out_rows))
            .collect();
        let row_len = if composed {
            1
        } else {
            checked_numel(&data[ids.len()..]).ok_or_else(|| overflow(data))?
        };
        let is_error = |k: usize| {
            targets[k].is_none()
                && match self.bad_indices {
                    BadIndices::Error => id[k].to_i128() >= 0,
                    BadIndices::Negative => true,
                    _ => false,
                }
        };
        if row_len > 0 {
            if let Some(k) = (0..rows).find(|&k| is_error(k)) {
                return Err(Error::SegmentIdOutOfRange {
                    position: unravel(k, ids),
                    value: id[k].to_i128(),
                    num_segments: out_rows,
                });
            }
        }
        if composed {
            if ids.len() > data.len() {
                return Err(Error::Segment {
                    reason: format!(
                        "Dimension {} must be >= 0",
                        data.len() as i64 - ids.len() as i64
                    ),
                });
            }
            if !dtype.is_ordered() {
                return Err(Segment::no_kernel(dtype, MAXIMUM));
            }
            prefix()?;
            if self.reduce == Reduce::SqrtN && dtype.is_index() {
                return Err(Segment::no_kernel(dtype, SQRT));
            }
        }
        let row_len = checked_numel(&data[ids.len()..]).ok_or_else(|| overflow(data))?;
        finish_plan(targets, rows, row_len, out_rows, &data[ids.len()..])
    }

    /// The reduction on typed arrays (see the module's documentation). The unsorted mean
    /// of integers is a float array: take it from [`Segment::run_views`].
    ///
    /// # Errors
    /// TensorFlow's, as [`Error::Segment`], [`Error::SegmentIdsShape`] and
    /// [`Error::SegmentIdOutOfRange`]; [`Error::NoKernel`] for the unsorted mean
    /// of integers.
    pub fn reduce<T, I, SD, SI, DD, DI>(
        &self,
        data: &ArrayBase<SD, DD>,
        segment_ids: &ArrayBase<SI, DI>,
    ) -> Result<ArrayD<T>>
    where
        T: Number,
        I: IndexType,
        SD: Data<Elem = T>,
        SI: Data<Elem = I>,
        DD: Dimension,
        DI: Dimension,
    {
        let ids = row_major(segment_ids)?;
        let plan = self.plan(T::DTYPE, data.shape(), segment_ids.shape(), &ids)?;
        if !self.sorted && self.reduce == Reduce::Mean && T::true_div().is_some() {
            return Err(Error::NoKernel {
                op: "unsorted_segment_mean (typed)",
                dtype: T::DTYPE,
                supported: "floats; the mean of integers is a float array, from run_views".into(),
            });
        }
        let src = row_major(data)?;
        let row_len = plan.row_len;
        let out = self.reduce_rows(&plan, |k| &src[k * row_len..(k + 1) * row_len])?;
        into_array(&plan.out_shape, out)
    }

    /// The steps of the reduction in `T`, for an unsorted (`sorted: false`) or sorted run.
    pub(crate) fn steps<T: Arith>(&self) -> Result<Steps<T>> {
        let (lowest, highest) = if self.sorted {
            T::infinities()
        } else {
            T::bounds()
        };
        let missing = || Segment::no_kernel(T::DTYPE, REALS);
        let add: fn(T, T) -> T = T::plus;
        let mul: fn(T, T) -> T = T::times;
        let ([scalar, packet], identity) = match self.reduce {
            Reduce::Sum | Reduce::Mean | Reduce::SqrtN => ([add, add], T::ZERO),
            Reduce::Prod => ([mul, mul], T::ONE),
            Reduce::Max => (segment_arith::max_steps::<T>().ok_or_else(missing)?, lowest),
            Reduce::Min => (
                segment_arith::min_steps::<T>().ok_or_else(missing)?,
                highest,
            ),
        };
        Ok(Steps {
            scalar,
            packet,
            identity,
        })
    }

    /// The reduction of `plan`'s rows (`row(k)`, in `T`), without the integer mean's
    /// division.
    pub(crate) fn reduce_rows<'s, T: Arith + 's>(
        &self,
        plan: &SegmentPlan,
        row: impl Fn(usize) -> &'s [T] + Sync,
    ) -> Result<Vec<T>> {
        let steps = self.steps::<T>()?;
        let mut out = output::defaults::<T>(&plan.out_shape, bytes_of::<T>())?;
        let row_len = plan.row_len;
        if row_len == 0 {
            return Ok(out);
        }
        if self.sorted {
            self.sorted_rows(plan, &row, steps, &mut out);
            return Ok(out);
        }
        out.iter_mut().for_each(|o| *o = steps.identity);
        let (targets, rows) = (&plan.targets, plan.rows);
        let target = |k: usize| targets[k];
        // Each reduction's step named here, not through `steps.scalar`'s pointer: called
        // per element, the pointer could be neither inlined nor vectorised, about 1 ns an
        // element (bench/LOG.md, "Forward mode of a max; the segment reductions...").
        match self.reduce {
            Reduce::Sum | Reduce::Mean | Reduce::SqrtN => {
                combine_rows(&mut out, row_len, rows, row, target, |d, s| {
                    *d = T::plus(*d, *s)
                })
            }
            Reduce::Prod => combine_rows(&mut out, row_len, rows, row, target, |d, s| {
                *d = T::times(*d, *s)
            }),
            Reduce::Max => combine_rows(&mut out, row_len, rows, row, target, |d, s| {
                *d = segment_arith::tf_max(*d, *s)
            }),
            Reduce::Min => combine_rows(&mut out, row_len, rows, row, target, |d, s| {
                *d = segment_arith::tf_min(*d, *s)
            }),
        }
        if matches!(self.reduce, Reduce::Mean | Reduce::SqrtN) && T::true_div().is_none() {
            let counts = self.counts::<T>(plan)?;
            for (row, &n) in out.chunks_mut(row_len).zip(&counts) {
                let n = match self.reduce {
                    Reduce::SqrtN => {
                        T::root(n).ok_or_else(|| Segment::no_kernel(T::DTYPE, SQRT))?
                    }
                    _ => n,
                };
                row.iter_mut().for_each(|o| *o = T::tf_div(*o, n));
            }
        }
        Ok(out)
    }

    /// Each segment's row count as TensorFlow's composition computes it: ones summed in the
    /// dtype, then at least 1.
    pub(crate) fn counts<T: Arith>(&self, plan: &SegmentPlan) -> Result<Vec<T>> {
        let segments = plan.out_shape[0];
        let mut counts = output::filled(&[segments], T::ZERO)?;
        for t in plan.targets.iter().flatten() {
            counts[*t] = T::plus(counts[*t], T::ONE);
        }
        let max = segment_arith::max_steps::<T>().map(|[scalar, _]| scalar);
        Ok(counts
            .into_iter()
            .map(|n| match max {
                Some(max) => max(n, T::ONE),
                None => n,
            })
            .collect())
    }

    /// A sorted reduction: segment by segment (runs of one id), gaps filled with 0 (1 for
    /// prod).
    fn sorted_rows<'s, T: Arith + 's>(
        &self,
        plan: &SegmentPlan,
        row: &impl Fn(usize) -> &'s [T],
        steps: Steps<T>,
        out: &mut [T],
    ) {
        let row_len = plan.row_len;
        let gap = if self.reduce == Reduce::Prod {
            T::ONE
        } else {
            T::ZERO
        };
        out.iter_mut().for_each(|o| *o = gap);
        let mut start = 0;
        while start < plan.rows {
            let Some(s) = plan.targets[start] else {
                start += 1;
                continue;
            };
            let len = plan.targets[start..]
                .iter()
                .take_while(|t| **t == Some(s))
                .count();
            let dst = &mut out[s * row_len..(s + 1) * row_len];
            let rows = |k: usize| row(start + k);
            if len == 1 {
                dst.copy_from_slice(row(start));
            } else if self.reduce == Reduce::Mean {
                for (j, o) in dst.iter_mut().enumerate() {
                    let sum = (0..len).fold(T::ZERO, |a, k| T::plus(a, rows(k)[j]));
                    *o = T::tf_div(sum, T::count(len));
                }
            } else {
                eigen_rows(dst, len, rows, steps);
            }
            start += len;
        }
    }

    /// The reduction on dtype-erased views: data of a number dtype, ids of an integer dtype.
    /// The unsorted mean of integers is float32 (8- and 16-bit) or float64, as Python's `/`.
    ///
    /// # Errors
    /// As [`Segment::reduce`], and [`Error::IndicesNotInteger`].
    pub fn run_views(&self, data: &TensorView<'_>, segment_ids: &TensorView<'_>) -> Result<Tensor> {
        with_tensor!(TensorView, data, number d => {
            with_indices!(segment_ids, i => self.run_typed(d, i),
                else dtype => Err(Error::IndicesNotInteger { dtype }))
        }, else dtype => Err(self.refusal(dtype)))
    }

    fn run_typed<T: Arith, I: IndexType>(
        &self,
        data: &ndarray::ArrayViewD<'_, T>,
        segment_ids: &ndarray::ArrayViewD<'_, I>,
    ) -> Result<Tensor> {
        let ids = row_major(segment_ids)?;
        let plan = self.plan(T::DTYPE, data.shape(), segment_ids.shape(), &ids)?;
        let src = row_major(data)?;
        let row_len = plan.row_len;
        let out = self.reduce_rows(&plan, |k| &src[k * row_len..(k + 1) * row_len])?;
        match T::true_div() {
            Some(wide) if !self.sorted && self.reduce == Reduce::Mean => {
                let counts = self.counts::<T>(&plan)?;
                let mean = |k: usize| out[k].as_f64() / counts[k / row_len.max(1)].as_f64();
                if wide == DType::F32 {
                    let v = (0..out.len())
                        .map(|k| {
                            out[k].as_f64() as f32 / counts[k / row_len.max(1)].as_f64() as f32
                        })
                        .collect();
                    Ok(Tensor::from(into_array(&plan.out_shape, v)?))
                } else {
                    let v = (0..out.len()).map(mean).collect();
                    Ok(Tensor::from(into_array::<f64>(&plan.out_shape, v)?))
                }
            }
            _ => Ok(T::into_tensor(into_array(&plan.out_shape, out)?)),
        }
    }
}

/// The plan from checked targets.
fn finish_plan(
    targets: Vec<Option<usize>>,
    rows: usize,
    row_len: usize,
    out_rows: usize,
    inner: &[usize],
) -> Result<SegmentPlan> {
    let out_shape: Vec<usize> = std::iter::once(out_rows)
        .chain(inner.iter().copied())
        .collect();
    checked_numel(&out_shape).ok_or_else(|| Error::ShapeOverflow {
        what: "output",
        shape: out_shape.clone(),
    })?;
    Ok(SegmentPlan {
        targets,
        rows,
        row_len,
        out_shape,
    })
}

/// TensorFlow's walk over sorted ids, segment by segment: at each new segment the ids must
/// grow, and the segment must lie in `[0, out_rows)`.
fn check_sorted<I: IndexType>(id: &[I], out_rows: usize) -> Result<()> {
    let Some(first) = id.first() else {
        return Ok(());
    };
    let mut out = first.to_i128();
    for next in id[1..].iter().map(|i| Some(i.to_i128())).chain([None]) {
        if next == Some(out) {
            continue;
        }
        if next.is_some_and(|n| out >= n) {
            return Err(Error::Segment {
                reason: "segment ids are not increasing".into(),
            });
        }
        if out < 0 || out >= out_rows as i128 {
            return Err(Error::Segment {
                reason: format!(
                    "Segment id {out} out of range [0, {out_rows}), possibly because \
                     'segment_ids' input is not sorted."
                ),
            });
        }
        out = next.unwrap_or(out);
    }
    Ok(())
}

fn overflow(data: &[usize]) -> Error {
    Error::ShapeOverflow {
        what: "data",
        shape: data.to_vec(),
    }
}

const SORTED: Signature = Signature {
    inputs: &[
        InputDef::new("data", InputKind::Tensor, "the rows reduced"),
        InputDef::new(
            "segment_ids",
            InputKind::Tensor,
            "each row's segment, sorted, of an integer dtype",
        ),
    ],
    attrs: &[],
};

const UNSORTED: Signature = Signature {
    inputs: &[
        InputDef::new("data", InputKind::Tensor, "the rows reduced"),
        InputDef::new(
            "segment_ids",
            InputKind::Tensor,
            "each row's segment, a prefix of data's shape",
        ),
    ],
    attrs: &[
        AttrDef::required("num_segments", AttrKind::Int, "the output's rows").fed(),
        AttrDef::with_default(
            "bad_indices",
            AttrKind::Str(&["error", "ignore", "clamp", "negative", "wrap"]),
            "error",
            "what an id out of range does (negative ones are dropped under error)",
        ),
    ],
};

/// The registered values: five sorted reductions and six unsorted ones.
pub(crate) const SEGMENT_OPS: [Segment; 11] = [
    Segment::sorted(Reduce::Sum),
    Segment::sorted(Reduce::Mean),
    Segment::sorted(Reduce::Max),
    Segment::sorted(Reduce::Min),
    Segment::sorted(Reduce::Prod),
    Segment::unsorted(Reduce::Sum, 0),
    Segment::unsorted(Reduce::Mean, 0),
    Segment::unsorted(Reduce::Max, 0),
    Segment::unsorted(Reduce::Min, 0),
    Segment::unsorted(Reduce::Prod, 0),
    Segment::unsorted(Reduce::SqrtN, 0),
];

impl Segment {
    /// The op's registered name and its graph node's type, in TensorFlow's form.
    fn names(&self) -> (&'static str, &'static str) {
        match (self.sorted, self.reduce) {
            (true, Reduce::Sum) => ("segment_sum", "SegmentSum"),
            (true, Reduce::Mean) => ("segment_mean", "SegmentMean"),
            (true, Reduce::Max) => ("segment_max", "SegmentMax"),
            (true, Reduce::Min) => ("segment_min", "SegmentMin"),
            (true, Reduce::Prod) => ("segment_prod", "SegmentProd"),
            (true, Reduce::SqrtN) => ("segment_sqrt_n", "SegmentSqrtN"),
            (false, Reduce::Sum) => ("unsorted_segment_sum", "UnsortedSegmentSum"),
            (false, Reduce::Mean) => ("unsorted_segment_mean", "UnsortedSegmentMean"),
            (false, Reduce::Max) => ("unsorted_segment_max", "UnsortedSegmentMax"),
            (false, Reduce::Min) => ("unsorted_segment_min", "UnsortedSegmentMin"),
            (false, Reduce::Prod) => ("unsorted_segment_prod", "UnsortedSegmentProd"),
            (false, Reduce::SqrtN) => ("unsorted_segment_sqrt_n", "UnsortedSegmentSqrtN"),
        }
    }
}

impl OpDef for Segment {
    /// A sum, a mean or a sum over the square root of the count is linear in data.
    fn linear(&self) -> Option<Linear> {
        self.reduce.is_linear().then(|| Linear::of(&[0])).flatten()
    }

    /// A max, a min or a product moves its segment's row along the sum's routes.
    fn routed(&self) -> Option<Routed> {
        let sum = match self.sorted {
            true => "segment_sum",
            false => "unsorted_segment_sum",
        };
        match self.reduce {
            Reduce::Max | Reduce::Min => Routed::to(sum, true),
            Reduce::Prod => Routed::to(sum, false),
            _ => None,
        }
    }

    fn type_name(&self) -> &'static str {
        self.names().1
    }

    fn name(&self) -> &'static str {
        self.names().0
    }

    fn summary(&self) -> &'static str {
        if self.sorted {
            "tf.math.segment_*: rows reduced per sorted segment id"
        } else {
            "tf.math.unsorted_segment_*: rows reduced into num_segments segments"
        }
    }

    fn signature(&self) -> Signature {
        if self.sorted {
            SORTED
        } else {
            UNSORTED
        }
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        let mut op = *self;
        if !self.sorted {
            op.num_segments = a.int("num_segments", 0);
            op.bad_indices = a.policy(BadIndices::Error)?;
        }
        Ok(Box::new(op))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        self.infer_rows(inputs, usize::try_from(self.num_segments).ok())
    }

    /// `UnsortedSegmentSum`'s `num_segments` is an input tensor in TensorFlow: fed, it
    /// leaves the output's rows unknown.
    fn infer_fed(&self, inputs: &[Fact], fed: &[&str]) -> Result<Fact> {
        crate::ops::contract::check_fed(self, fed)?;
        let rows = usize::try_from(self.num_segments).ok();
        self.infer_rows(inputs, rows.filter(|_| fed.is_empty()))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        if let Out::InPlace(_) = out {
            return Err(not_in_place(self.name()));
        }
        let result = self.run_views(inputs.tensor(0)?, inputs.tensor(1)?)?;
        deliver(self.name(), result, out)
    }

    fn has_grad(&self) -> bool {
        true
    }

    fn grad(
        &self,
        inputs: &[Input<'_>],
        output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let output = crate::ops::contract::read_output(self.name(), output)?;
        let data = self.grad_views(inputs.tensor(0)?, inputs.tensor(1)?, output, upstream)?;
        Ok(vec![Some(data), None])
    }
}

impl Segment {
    /// The output's fact, of `rows` segments where known (the unsorted ops).
    fn infer_rows(&self, inputs: &[Fact], rows: Option<usize>) -> Result<Fact> {
        let [data, ids] = inputs else {
            return Err(crate::ops::contract::count_error(self, inputs.len()));
        };
        if let Some(d) = data.dtype {
            self.allowed(d)
                .map_err(|allowed| Segment::no_kernel(d, allowed))?;
        }
        self.check_known(&data.shape, &ids.shape)?;
        let shape = match (data.shape.dims(), ids.shape.rank()) {
            (Some(dims), Some(r)) if !self.sorted && r <= dims.len() => {
                let mut out: Vec<Dim> = vec![rows];
                out.extend_from_slice(&dims[r..]);
                Shape::from_dims(out)
            }
            (Some(dims), _) if self.sorted && !dims.is_empty() => {
                let mut out: Vec<Dim> = vec![None];
                out.extend_from_slice(&dims[1..]);
                Shape::from_dims(out)
            }
            _ => Shape::unknown(),
        };
        let dtype = match data.dtype {
            Some(d) if !self.sorted && self.reduce == Reduce::Mean && d.is_index() => {
                Some(if d.size() <= Some(2) {
                    DType::F32
                } else {
                    DType::F64
                })
            }
            other => other,
        };
        Ok(Fact::new(dtype, shape))
    }
}
