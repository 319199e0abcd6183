//! The scatter ops that gradients of gathers are made of: [`scatter_nd`] (TensorFlow's
//! `tf.scatter_nd`) and [`unsorted_segment_sum`] (`tf.math.unsorted_segment_sum`).
//!
//! Both add rows of their input into zeros; duplicates add up. They are parallel and
//! deterministic: each thread owns a range of output rows and adds into it in the order of
//! the input, so every output element receives its additions in the same order whatever the
//! number of threads, and the sums are bit-identical.
//!
//! ```
//! use ndarray::array;
//! use ndgather::scatter::{scatter_nd, unsorted_segment_sum};
//! use ndgather::BadIndices;
//!
//! let out = scatter_nd(&array![[4], [3], [1], [7]], &array![9.0, 10.0, 11.0, 12.0], &[8], BadIndices::Error).unwrap();
//! assert_eq!(out, array![0.0, 11.0, 0.0, 10.0, 9.0, 0.0, 0.0, 12.0].into_dyn());
//! let sums = unsorted_segment_sum(&array![[1, 2], [3, 4], [5, 6]], &array![0, 1, 0], 2, BadIndices::Error).unwrap();
//! assert_eq!(sums, array![[6, 8], [3, 4]].into_dyn());
//! ```

use crate::engine::kernel;
use crate::engine::layout::{into_array, row_major};
use crate::mem::output;
use crate::shape::checked_numel;
use crate::shape::plan::{unravel, GatherNdPlan};
use crate::types::arith::{Arith, Number};
use crate::types::dtype::bytes_of;
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use ndarray::{ArrayBase, ArrayD, Data, Dimension};
use rayon::prelude::*;

/// Work (source elements) below which a scatter stays on the calling thread.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;

/// Adds source row `k` (of `row_len` elements) into output row `target(k)` for every `k` in
/// order, skipping rows whose target is `None`. Deterministic whatever the threading.
pub(crate) fn scatter_add<T: Arith>(
    out: &mut [T],
    row_len: usize,
    src: &[T],
    target: impl Fn(usize) -> Option<usize> + Sync,
) {
    scatter_rows(out, row_len, src, target, |d, s| *d = d.plus(*s));
}

/// Combines source row `k` (of `row_len` elements) into output row `target(k)`, element by
/// element with `combine(destination, source)`, for every `k` in order, skipping rows whose
/// target is `None`. Each thread owns a range of output rows and walks every source in
/// order, so each output row meets its sources in their order whatever the number of
/// threads: the result is the sequential one, bit for bit.
pub(crate) fn scatter_rows<T: Clone + Send + Sync>(
    out: &mut [T],
    row_len: usize,
    src: &[T],
    target: impl Fn(usize) -> Option<usize> + Sync,
    combine: impl Fn(&mut T, &T) + Sync,
) {
    if row_len == 0 {
        return;
    }
    let sources = src.len() / row_len;
    combine_rows(
        out,
        row_len,
        sources,
        |k| &src[k * row_len..(k + 1) * row_len],
        target,
        combine,
    );
}

/// [`scatter_rows`] with source row `k` read by `row(k)`: the fused gather of
/// `gather_segment`, whose sources are rows of another tensor, never copied out.
pub(crate) fn combine_rows<'s, T: Clone + Send + Sync + 's>(
    out: &mut [T],
    row_len: usize,
    sources: usize,
    row: impl Fn(usize) -> &'s [T] + Sync,
    target: impl Fn(usize) -> Option<usize> + Sync,
    combine: impl Fn(&mut T, &T) + Sync,
) {
    if row_len == 0 || out.is_empty() {
        return;
    }
    let combine_into = |lo: usize, chunk: &mut [T]| {
        let hi = lo + chunk.len() / row_len;
        for k in 0..sources {
            if let Some(t) = target(k).filter(|t| (lo..hi).contains(t)) {
                let dst = &mut chunk[(t - lo) * row_len..(t - lo + 1) * row_len];
                for (d, s) in dst.iter_mut().zip(row(k)) {
                    combine(d, s);
                }
            }
        }
    };
    let rows = out.len() / row_len;
    // (The size first: asking rayon for its thread count outside a pool builds its global
    // one, which a small call, run where it is called, must not.)
    if sources.saturating_mul(row_len) < PARALLEL_MIN_ELEMENTS || rows < 2 {
        combine_into(0, out);
        return;
    }
    let threads = rayon::current_num_threads();
    if threads < 2 {
        combine_into(0, out);
        return;
    }
    in_row_tasks(out, row_len, rows.div_ceil(threads), &combine_into);
}

/// Runs `f(first_row, chunk)` over `out` in parallel, in chunks of `per_task` rows; on a `dyn`
/// closure, so that rayon's split is compiled once per element type rather than once per
/// combiner, source and target (it was most of the CLI binary's rayon code).
fn in_row_tasks<T: Send>(
    out: &mut [T],
    row_len: usize,
    per_task: usize,
    f: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    out.par_chunks_mut(per_task * row_len)
        .enumerate()
        .for_each(|(c, chunk)| f(c * per_task, chunk));
}

/// The target row of index vector `r` under `plan` (rows of `plan.slice` elements).
pub(crate) fn nd_target<I: IndexType>(
    plan: &GatherNdPlan,
    indices: &[I],
    r: usize,
    policy: BadIndices,
) -> Option<usize> {
    let row = &indices[r * plan.depth..(r + 1) * plan.depth];
    kernel::nd_offset(plan, r / plan.rows.max(1), row, policy)
        .map(|offset| offset / plan.slice.max(1))
}

/// `tf.scatter_nd(indices, updates, shape)`: zeros of `shape` with each slice of `updates`
/// added at its index vector; duplicates add up. Bad index vectors follow `policy`
/// (`Ignore` drops them, as TensorFlow's `bad_indices_policy="IGNORE"`).
pub fn scatter_nd<T, I, SI, SU, DI, DU>(
    indices: &ArrayBase<SI, DI>,
    updates: &ArrayBase<SU, DU>,
    shape: &[usize],
    policy: BadIndices,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SU: Data<Elem = T>,
    DI: Dimension,
    DU: Dimension,
{
    scatter_nd_batched(indices, updates, shape, 0, policy)
}

/// [`scatter_nd`] with leading batch dimensions shared by `shape` and `indices` (the adjoint
/// of gather_nd with `batch_dims`).
pub(crate) fn scatter_nd_batched<T, I, SI, SU, DI, DU>(
    indices: &ArrayBase<SI, DI>,
    updates: &ArrayBase<SU, DU>,
    shape: &[usize],
    batch_dims: i64,
    policy: BadIndices,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SU: Data<Elem = T>,
    DI: Dimension,
    DU: Dimension,
{
    let plan = GatherNdPlan::new::<I>(shape, indices.shape(), batch_dims)?;
    if updates.shape() != plan.out_shape.as_slice() {
        return Err(Error::UpdatesShapeMismatch {
            expected: plan.out_shape.to_vec(),
            found: updates.shape().to_vec(),
        });
    }
    let idx = row_major(indices)?;
    kernel::check_gather_nd(&idx, &plan, policy).map_err(|e| match e {
        Error::BadIndexVector {
            position, values, ..
        } => Error::BadScatterIndex {
            position,
            values,
            shape: shape.to_vec(),
        },
        other => other,
    })?;
    let src = row_major(updates)?;
    let mut out = output::defaults::<T>(shape, bytes_of::<T>())?;
    scatter_add(&mut out, plan.slice, &src, |r| {
        nd_target(&plan, &idx, r, policy)
    });
    into_array(shape, out)
}

/// `tf.math.unsorted_segment_sum(data, segment_ids, num_segments)`: row `s` of the output
/// is the sum of the rows of `data` whose segment id is `s`; `segment_ids.shape` must begin
/// `data.shape`. Out-of-range ids: with `BadIndices::Error`, negative ids are dropped and ids
/// of `num_segments` or more are an error (TensorFlow on the CPU); with `Ignore`, all are
/// dropped (TensorFlow on the GPU); `Clamp`, `Negative` and `Wrap` map them into range.
pub fn unsorted_segment_sum<T, I, SD, SI, DD, DI>(
    data: &ArrayBase<SD, DD>,
    segment_ids: &ArrayBase<SI, DI>,
    num_segments: usize,
    policy: BadIndices,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SD: Data<Elem = T>,
    SI: Data<Elem = I>,
    DD: Dimension,
    DI: Dimension,
{
    let (dshape, ishape) = (data.shape(), segment_ids.shape());
    if !dshape.starts_with(ishape) {
        return Err(Error::SegmentIdsShape {
            data: dshape.to_vec(),
            segment_ids: ishape.to_vec(),
        });
    }
    let mut out_shape = vec![num_segments];
    out_shape.extend_from_slice(&dshape[ishape.len()..]);
    let row_len = checked_numel(&dshape[ishape.len()..]).ok_or_else(|| Error::ShapeOverflow {
        what: "data",
        shape: dshape.to_vec(),
    })?;
    let ids = row_major(segment_ids)?;
    let target = |k: usize| policy.resolve(ids[k], num_segments);
    // Ids without a target are dropped, but for TF's CPU errors (ids too large under `Error`)
    // and `Negative`'s leftovers; rows of no elements are never an error.
    let is_error = |k: usize| {
        row_len > 0
            && target(k).is_none()
            && match policy {
                BadIndices::Error => ids[k].to_i128() >= 0,
                BadIndices::Negative => true,
                BadIndices::Ignore | BadIndices::Clamp | BadIndices::Wrap | BadIndices::Fill => {
                    false
                }
            }
    };
    if let Some(k) = (0..ids.len()).find(|&k| is_error(k)) {
        return Err(Error::SegmentIdOutOfRange {
            position: unravel(k, ishape),
            value: ids[k].to_i128(),
            num_segments,
        });
    }
    let src = row_major(data)?;
    let mut out = output::defaults::<T>(&out_shape, bytes_of::<T>())?;
    scatter_add(&mut out, row_len, &src, target);
    into_array(&out_shape, out)
}
