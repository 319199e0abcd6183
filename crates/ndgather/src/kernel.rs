//! The copy kernels: one cheap pass that checks every index, then a loop that copies
//! contiguous slices of params into the output. They see only flat row-major slices and a
//! validated plan; shapes and options were dealt with before.

use crate::error::{GatherError, Result};
use crate::index::{BadIndices, IndexType};
use crate::plan::{unravel, GatherNdPlan, GatherPlan};

/// Where a kernel writes: a growing `Vec`, or a caller's slice.
pub(crate) trait Sink<T> {
    /// Appends a copy of `src`.
    fn copy(&mut self, src: &[T]);
    /// Appends `n` default values (the slice of an ignored bad index).
    fn fill_default(&mut self, n: usize);
}

impl<T: Clone + Default> Sink<T> for Vec<T> {
    #[inline]
    fn copy(&mut self, src: &[T]) {
        self.extend_from_slice(src);
    }
    #[inline]
    fn fill_default(&mut self, n: usize) {
        self.resize(self.len() + n, T::default());
    }
}

/// Writes into a caller's slice from the front; the plan guarantees it is exactly filled.
pub(crate) struct SliceSink<'a, T> {
    pub(crate) out: &'a mut [T],
    pub(crate) pos: usize,
}

impl<T: Clone + Default> Sink<T> for SliceSink<'_, T> {
    #[inline]
    fn copy(&mut self, src: &[T]) {
        let end = self.pos + src.len();
        self.out[self.pos..end].clone_from_slice(src);
        self.pos = end;
    }
    #[inline]
    fn fill_default(&mut self, n: usize) {
        let end = self.pos + n;
        self.out[self.pos..end].fill(T::default());
        self.pos = end;
    }
}

/// Finds the first bad index in row-major order, if the policy makes it an error.
pub(crate) fn check_gather<I: IndexType>(
    indices: &[I],
    plan: &GatherPlan,
    policy: BadIndices,
) -> Result<()> {
    if !plan.validate || !policy.errors() {
        return Ok(());
    }
    match indices
        .iter()
        .position(|&i| policy.resolve(i, plan.gathered).is_none())
    {
        None => Ok(()),
        Some(k) => Err(GatherError::BadIndex {
            position: unravel(k, &plan.indices_shape),
            value: indices[k].to_i128(),
            limit: plan.gathered,
        }),
    }
}

/// Copies the gathered slices, `[batch, outer, n, inner]` in row-major order.
pub(crate) fn gather<T, I, S>(
    params: &[T],
    indices: &[I],
    plan: &GatherPlan,
    policy: BadIndices,
    sink: &mut S,
) where
    T: Clone + Default,
    I: IndexType,
    S: Sink<T>,
{
    if plan.out_len == 0 {
        return;
    }
    let (inner, gathered) = (plan.inner, plan.gathered);
    for b in 0..plan.batch {
        let batch_indices = &indices[b * plan.n..(b + 1) * plan.n];
        for o in 0..plan.outer {
            let base = (b * plan.outer + o) * gathered;
            for &i in batch_indices {
                match policy.resolve(i, gathered) {
                    Some(g) => {
                        let start = (base + g) * inner;
                        sink.copy(&params[start..start + inner]);
                    }
                    None => sink.fill_default(inner),
                }
            }
        }
    }
}

/// The offset in params of index vector `row` of batch element `b`, or `None` if a
/// component is bad under the policy.
#[inline]
fn nd_offset<I: IndexType>(
    plan: &GatherNdPlan,
    b: usize,
    row: &[I],
    policy: BadIndices,
) -> Option<usize> {
    let mut offset = b * plan.batch_stride;
    for ((&i, &dim), &stride) in row.iter().zip(&plan.dims).zip(&plan.strides) {
        offset += policy.resolve(i, dim)? * stride;
    }
    Some(offset)
}

/// Finds the first bad index vector in row-major order, if the policy makes it an error.
pub(crate) fn check_gather_nd<I: IndexType>(
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
) -> Result<()> {
    if plan.out_len == 0 || plan.depth == 0 || !policy.errors() {
        return Ok(());
    }
    let bad = indices.chunks_exact(plan.depth).position(|row| {
        row.iter()
            .zip(&plan.dims)
            .any(|(&i, &dim)| policy.resolve(i, dim).is_none())
    });
    match bad {
        None => Ok(()),
        Some(r) => Err(GatherError::BadIndexVector {
            position: unravel(r, &plan.rows_shape),
            values: indices[r * plan.depth..(r + 1) * plan.depth]
                .iter()
                .map(|i| i.to_i128())
                .collect(),
            params_shape: plan.params_shape.clone(),
            batch_dims: plan.batch_dims,
        }),
    }
}

/// Copies the slice of every index vector, in row-major order.
pub(crate) fn gather_nd<T, I, S>(
    params: &[T],
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
    sink: &mut S,
) where
    T: Clone + Default,
    I: IndexType,
    S: Sink<T>,
{
    if plan.out_len == 0 {
        return;
    }
    for b in 0..plan.batch {
        for r in 0..plan.rows {
            let row_start = (b * plan.rows + r) * plan.depth;
            let row = &indices[row_start..row_start + plan.depth];
            match nd_offset(plan, b, row, policy) {
                Some(start) => sink.copy(&params[start..start + plan.slice]),
                None => sink.fill_default(plan.slice),
            }
        }
    }
}
