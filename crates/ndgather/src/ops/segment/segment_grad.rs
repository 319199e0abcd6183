//! TensorFlow's registered gradients of the segment reductions (`math_grad.py`), with
//! respect to `data`, element by element in the dtype's own arithmetic:
//! - sum: the upstream row of each row's segment (0 for a dropped id);
//! - mean and sqrt_n: that row divided by the segment's count (or its square root);
//! - max and min: shared among the elements equal to the result, `grad / num_selected`;
//! - prod: `grad · prod / x`, or where `x` is 0 the product of the other values, and 0 in
//!   a segment with more than one zero. The unsorted ops read segment 0 for a dropped id
//!   there, and multiply by its 0 gradient, as TensorFlow's clipped gather does.

use crate::engine::layout::{into_array, row_major};
use crate::mem::output;
use crate::ops::segment::{Reduce, Segment, SegmentPlan};
use crate::shape::plan::unravel;
use crate::types::arith::Arith;
use crate::types::dtype::{Tensor, TensorElement, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::IndexType;
use crate::with_tensor;
use ndarray::ArrayViewD;

impl Segment {
    /// The gradient with respect to `data` for the upstream gradient `upstream` of
    /// `output`, the op's result on `data` and `segment_ids`.
    ///
    /// # Errors
    /// [`Error::NoKernel`] for a dtype without gradients; [`Error::InputDType`]
    /// for an output or upstream gradient of another dtype than `data`;
    /// [`Error::GradShapeMismatch`]; the op's own checks.
    pub(crate) fn grad_views(
        &self,
        data: &TensorView<'_>,
        segment_ids: &TensorView<'_>,
        output: &TensorView<'_>,
        upstream: &TensorView<'_>,
    ) -> Result<Tensor> {
        for (k, other) in [output.dtype(), upstream.dtype()].into_iter().enumerate() {
            if other != data.dtype() {
                return Err(Error::InputDType {
                    op: "SegmentReductionGrad",
                    input: k + 1,
                    expected: data.dtype(),
                    found: other,
                });
            }
        }
        with_tensor!(TensorView, data, grad x => {
            let output = crate::ops::typed_like(x, output)?;
            let upstream = crate::ops::typed_like(x, upstream)?;
            with_indices!(segment_ids, i => {
                self.grad_typed(x, i, &output, &upstream).map(TensorElement::into_tensor)
            }, else dtype => Err(Error::IndicesNotInteger { dtype }))
        }, else dtype => Err(crate::ops::contract::no_grad_kernel("SegmentReductionGrad", dtype)))
    }

    fn grad_typed<T: Arith, I: IndexType>(
        &self,
        data: &ArrayViewD<'_, T>,
        segment_ids: &ArrayViewD<'_, I>,
        output: &ArrayViewD<'_, T>,
        upstream: &ArrayViewD<'_, T>,
    ) -> Result<ndarray::ArrayD<T>> {
        let ids = row_major(segment_ids)?;
        let plan = self.plan(T::DTYPE, data.shape(), segment_ids.shape(), &ids)?;
        for given in [output.shape(), upstream.shape()] {
            if given != plan.out_shape.as_slice() {
                return Err(Error::GradShapeMismatch {
                    expected: plan.out_shape.clone(),
                    found: given.to_vec(),
                });
            }
        }
        let (w, segments) = (plan.row_len, plan.out_shape[0]);
        // TensorFlow gathers with ids clipped to 0, which fails when there is no segment.
        if !self.sorted && segments == 0 && plan.rows > 0 && w > 0 {
            return Err(Error::BadIndex {
                position: unravel(0, segment_ids.shape()),
                value: 0,
                limit: 0,
            });
        }
        let (x, out, up) = (row_major(data)?, row_major(output)?, row_major(upstream)?);
        let seg = |k: usize| plan.targets[k];
        let mut d = output::filled(&[plan.rows, w], T::ZERO)?;
        match self.reduce {
            Reduce::Sum => each(&mut d, w, |k, j| seg(k).map_or(T::ZERO, |s| up[s * w + j])),
            Reduce::Mean | Reduce::SqrtN => {
                let counts = self.grad_counts::<T>(&plan)?;
                each(&mut d, w, |k, j| {
                    seg(k).map_or(T::ZERO, |s| T::tf_div(up[s * w + j], counts[s]))
                })
            }
            Reduce::Max | Reduce::Min => {
                let selected =
                    |k: usize, j: usize| seg(k).is_some_and(|s| x[k * w + j] == out[s * w + j]);
                let mut chosen = output::filled(&[segments, w], T::ZERO)?;
                for k in 0..plan.rows {
                    for j in 0..w {
                        if let (true, Some(s)) = (selected(k, j), seg(k)) {
                            chosen[s * w + j] = T::plus(chosen[s * w + j], T::ONE);
                        }
                    }
                }
                each(&mut d, w, |k, j| match seg(k) {
                    Some(s) if selected(k, j) => T::tf_div(up[s * w + j], chosen[s * w + j]),
                    _ => T::ZERO,
                })
            }
            Reduce::Prod => self.prod_grad(&plan, &x, &out, &up, &mut d)?,
        }
        into_array(data.shape(), d)
    }

    /// The counts the mean and sqrt_n divide by: the sorted mean's ones summed per segment,
    /// the unsorted composition's at least 1, square-rooted for sqrt_n.
    fn grad_counts<T: Arith>(&self, plan: &SegmentPlan) -> Result<Vec<T>> {
        let counts = if self.sorted {
            let mut c = output::filled(&[plan.out_shape[0]], T::ZERO)?;
            for s in plan.targets.iter().flatten() {
                c[*s] = T::plus(c[*s], T::ONE);
            }
            c
        } else {
            self.counts::<T>(plan)?
        };
        if self.reduce != Reduce::SqrtN {
            return Ok(counts);
        }
        counts
            .into_iter()
            .map(|n| T::root(n).ok_or(Error::Internal("sqrt_n takes floats only")))
            .collect()
    }

    /// `_SegmentProdGrad` and `_UnsortedSegmentProdGrad`.
    fn prod_grad<T: Arith>(
        &self,
        plan: &SegmentPlan,
        x: &[T],
        out: &[T],
        up: &[T],
        d: &mut [T],
    ) -> Result<()> {
        let w = plan.row_len;
        let zero = T::ZERO;
        let mut zeros = output::filled(&[plan.out_shape[0], w], 0usize)?;
        for k in 0..plan.rows {
            if let Some(s) = plan.targets[k] {
                for j in 0..w {
                    zeros[s * w + j] += usize::from(x[k * w + j] == zero);
                }
            }
        }
        let non_zero: Vec<T> = x
            .iter()
            .map(|&v| if v == zero { T::ONE } else { v })
            .collect();
        let non_zero_prod = self.reduce_rows(plan, |k| &non_zero[k * w..(k + 1) * w])?;
        // The unsorted op gathers with negative ids clipped to segment 0.
        let clipped = |k: usize| plan.targets[k].unwrap_or(0);
        each(d, w, |k, j| {
            let (s, v) = (clipped(k), x[k * w + j]);
            let partial = if v == zero {
                non_zero_prod[s * w + j]
            } else if self.sorted {
                T::quotient(out[s * w + j], non_zero[k * w + j])
            } else {
                T::quotient(out[s * w + j], v)
            };
            let grad = match plan.targets[k] {
                Some(s) if zeros[s * w + j] <= 1 => up[s * w + j],
                _ => zero,
            };
            T::times(grad, partial)
        });
        Ok(())
    }
}

/// Writes `f(row, column)` into every element of `d`, rows of `w`.
fn each<T>(d: &mut [T], w: usize, f: impl Fn(usize, usize) -> T) {
    if w == 0 {
        return;
    }
    for (k, row) in d.chunks_mut(w).enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = f(k, j);
        }
    }
}
