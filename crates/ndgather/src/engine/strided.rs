//! Gathers that read params in place whatever its memory layout (transposed, strided,
//! reversed), for params much larger than the output: copying such params to row-major
//! order first (what the contiguous kernels need) would read all of it, e.g. a whole
//! memory-mapped file for a few rows.
//!
//! Each output slice is found by fixing the leading axes of a view of params (batch, outer
//! and gathered axes for gather; batch and indexed axes for gather_nd) and walking the rest
//! in logical order. That costs a little per slice, so [`suits`] keeps these loops for calls
//! whose params outweigh the output; the others copy params once and run the kernels.

use crate::engine::kernel::for_chunks_any;
use crate::mem::output::Slot;
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::index::{BadIndices, IndexType};
use ndarray::{ArrayViewD, Axis};

/// Params at least this many times larger than the output are read in place.
const IN_PLACE_MIN_RATIO: usize = 4;

/// Whether a non-contiguous params of `params_len` elements should be read in place for an
/// output of `out_len` elements, rather than copied to row-major order first.
pub(crate) fn suits(params_len: usize, out_len: usize) -> bool {
    params_len / IN_PLACE_MIN_RATIO > out_len
}

/// Writes `pos` as the row-major position of `flat` in `dims` (`pos.len() == dims.len()`).
fn unravel_into(mut flat: usize, dims: &[usize], pos: &mut [usize]) {
    for (p, &d) in pos.iter_mut().zip(dims).rev() {
        if d > 0 {
            *p = flat % d;
            flat /= d;
        }
    }
}

/// Copies the elements of `params` whose leading axes are at `fixed`, in logical order of the
/// remaining axes, into `dst`.
fn copy_slice<T: Clone + Default, O: Slot<T>>(
    params: &ArrayViewD<'_, T>,
    fixed: &[usize],
    dst: &mut [O],
) {
    let mut view = params.view();
    for (k, &p) in fixed.iter().enumerate() {
        view.collapse_axis(Axis(k), p);
    }
    debug_assert_eq!(view.len(), dst.len(), "a slice fills its output slots");
    for (d, x) in dst.iter_mut().zip(view.iter()) {
        d.put(x);
    }
}

/// `kernel::gather` on params of any layout: `params` has the plan's (possibly widened)
/// shape; `out` has exactly `plan.out_len` slots, every one of which is written. Returns
/// whether an index resolved to no slice (as `kernel::gather`).
#[must_use = "an unresolved index is an error under an erroring policy"]
pub(crate) fn gather<T, I, O>(
    params: &ArrayViewD<'_, T>,
    indices: &[I],
    plan: &GatherPlan,
    policy: BadIndices,
    out: &mut [O],
) -> bool
where
    T: Clone + Default + Sync,
    I: IndexType,
    O: Slot<T>,
{
    let (inner, outer, n, gathered) = (plan.inner, plan.outer, plan.n, plan.gathered);
    let (bd, axis) = (plan.batch_dims, plan.axis);
    let shape = params.shape();
    let item_bytes = inner * std::mem::size_of::<T>() + std::mem::size_of::<I>();
    for_chunks_any(out, inner, item_bytes, |first, chunk| {
        let mut fixed = vec![0; axis + 1];
        let mut unresolved = false;
        for (t, dst) in chunk.chunks_exact_mut(inner).enumerate() {
            let item = first + t;
            let (j, rest) = (item % n, item / n);
            let (o, b) = (rest % outer, rest / outer);
            match policy.resolve(indices[b * n + j], gathered) {
                Some(g) => {
                    unravel_into(b, &shape[..bd], &mut fixed[..bd]);
                    unravel_into(o, &shape[bd..axis], &mut fixed[bd..axis]);
                    fixed[axis] = g;
                    copy_slice(params, &fixed, dst);
                }
                None => {
                    unresolved = true;
                    dst.iter_mut().for_each(Slot::put_default);
                }
            }
        }
        unresolved
    })
}

/// `kernel::gather_nd` on params of any layout (see [`gather`]).
#[must_use = "an unresolved index is an error under an erroring policy"]
pub(crate) fn gather_nd<T, I, O>(
    params: &ArrayViewD<'_, T>,
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
    out: &mut [O],
) -> bool
where
    T: Clone + Default + Sync,
    I: IndexType,
    O: Slot<T>,
{
    let (slice, depth, rows, bd) = (plan.slice, plan.depth, plan.rows, plan.batch_dims);
    let shape = params.shape();
    let item_bytes = slice * std::mem::size_of::<T>() + depth * std::mem::size_of::<I>();
    for_chunks_any(out, slice, item_bytes, |first, chunk| {
        let mut fixed = vec![0; bd + depth];
        let mut unresolved = false;
        'items: for (t, dst) in chunk.chunks_exact_mut(slice).enumerate() {
            let item = first + t;
            unravel_into(item / rows, &shape[..bd], &mut fixed[..bd]);
            let vector = &indices[item * depth..(item + 1) * depth];
            for (k, (&i, &dim)) in vector.iter().zip(&plan.dims).enumerate() {
                match policy.resolve(i, dim) {
                    Some(p) => fixed[bd + k] = p,
                    None => {
                        unresolved = true;
                        dst.iter_mut().for_each(Slot::put_default);
                        continue 'items;
                    }
                }
            }
            copy_slice(params, &fixed, dst);
        }
        unresolved
    })
}
