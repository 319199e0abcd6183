//! The validated plan: a gather flattened to the geometry the copy kernels need.
//!
//! As in TensorFlow's kernels, every gather becomes `[batch, outer, gathered, inner]` →
//! `[batch, outer, n, inner]`, and every gather_nd becomes `batch × rows` index vectors of
//! `depth` components, each selecting a contiguous slice of `slice` elements. The plans are
//! built from fully known shapes through the shape rules of [`crate::shape`] (a gather with
//! nothing for the rule to refuse is planned directly, to the same plan), so a plan exists
//! only for a valid call.

use crate::shape::{self, checked_numel, Axis, AxisList, Shape};
use crate::types::error::{Error, Result};
use crate::types::index::IndexType;

fn numel(dims: &[usize], what: &'static str) -> Result<usize> {
    checked_numel(dims).ok_or_else(|| Error::ShapeOverflow {
        what,
        shape: dims.to_vec(),
    })
}

fn unresolved(params: &[usize], indices: &[usize]) -> Error {
    Error::InvalidShape {
        shape: params.iter().chain(indices).copied().collect(),
        reason: "shape rule left the geometry unresolved for known shapes".to_string(),
    }
}

/// `gather` as `[batch, outer, gathered, inner]` → `[batch, outer, n, inner]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GatherPlan {
    /// Product of the batch dimensions.
    pub batch: usize,
    /// Product of params' dimensions between the batch dimensions and `axis`.
    pub outer: usize,
    /// `params.shape[axis]`: the size of the gathered dimension.
    pub gathered: usize,
    /// Indices per batch element.
    pub n: usize,
    /// Product of params' dimensions after `axis`: elements per copied slice.
    pub inner: usize,
    /// The output's shape.
    pub out_shape: AxisList<usize>,
    /// Element count of the output.
    pub out_len: usize,
    /// indices.shape, for error positions.
    pub indices_shape: AxisList<usize>,
    /// Whether index values are looked at (TensorFlow skips them when no slice is copied).
    pub validate: bool,
    /// The axis gathered along (normalised).
    pub axis: usize,
    /// batch_dims (normalised).
    pub batch_dims: usize,
}

impl GatherPlan {
    /// Plans `gather` for known shapes, or returns the first error TensorFlow would report
    /// before looking at index values.
    pub(crate) fn new<I: IndexType>(
        params: &[usize],
        indices: &[usize],
        axis: Option<i64>,
        batch_dims: i64,
    ) -> Result<GatherPlan> {
        match GatherPlan::unbatched::<I>(params, indices, axis, batch_dims) {
            Some(plan) => Ok(plan),
            None => GatherPlan::ruled::<I>(params, indices, axis, batch_dims),
        }
    }

    /// [`GatherPlan::new`] through the shape rule, which checks and words every error.
    fn ruled<I: IndexType>(
        params: &[usize],
        indices: &[usize],
        axis: Option<i64>,
        batch_dims: i64,
    ) -> Result<GatherPlan> {
        let axis = axis.map_or(Axis::Default, Axis::Given);
        let rule = shape::gather_shape(
            &Shape::known(params),
            &Shape::known(indices),
            axis,
            batch_dims,
            I::TF_LIMIT,
        )?;
        let (Some(axis), Some(bd), Some(out_shape)) =
            (rule.axis, rule.batch_dims, rule.output.known_dims())
        else {
            return Err(unresolved(params, indices));
        };
        let batch = numel(&params[..bd], "params")?;
        let outer = numel(&params[bd..axis], "params")?;
        let inner = numel(&params[axis + 1..], "params")?;
        let n_total = numel(indices, "indices")?;
        let n = numel(&indices[bd..], "indices")?;
        let out_len = numel(&out_shape, "output")?;
        Ok(GatherPlan {
            batch,
            outer,
            gathered: params[axis],
            n,
            inner,
            out_shape,
            out_len,
            indices_shape: AxisList::from_slice(indices),
            validate: n_total > 0 && inner > 0 && outer > 0,
            axis,
            batch_dims: bd,
        })
    }
}

impl GatherPlan {
    /// The common call, planned without the rule's partly known shapes (which cost a tiny
    /// call a fifth of its time): no batch dimensions, an axis in range and sizes that fit,
    /// where the rule has nothing to refuse and its output is
    /// `params[..axis] + indices + params[axis + 1..]`. `None` leaves the call to the rule,
    /// which words any error (the tests compare the two plans on every shape up to rank 3).
    fn unbatched<I: IndexType>(
        params: &[usize],
        indices: &[usize],
        axis: Option<i64>,
        batch_dims: i64,
    ) -> Option<GatherPlan> {
        if batch_dims != 0 {
            return None;
        }
        let axis = shape::wrap_axis(axis.unwrap_or(0), params.len())?;
        let gathered = params[axis];
        if I::TF_LIMIT.is_some_and(|limit| gathered as u64 > limit.max) {
            return None;
        }
        let outer = checked_numel(&params[..axis])?;
        let inner = checked_numel(&params[axis + 1..])?;
        let n = checked_numel(indices)?;
        let out_shape: AxisList<usize> = params[..axis]
            .iter()
            .chain(indices)
            .chain(&params[axis + 1..])
            .copied()
            .collect();
        let out_len = checked_numel(&out_shape)?;
        Some(GatherPlan {
            batch: 1,
            outer,
            gathered,
            n,
            inner,
            out_shape,
            out_len,
            indices_shape: AxisList::from_slice(indices),
            validate: n > 0 && inner > 0 && outer > 0,
            axis,
            batch_dims: 0,
        })
    }

    /// The same gather on elements of `record` values each (a trailing axis of params):
    /// slices and the output grow by that factor, and the output gains the record axis.
    pub(crate) fn widen(mut self, record: usize) -> Result<GatherPlan> {
        self.out_shape.push(record);
        self.out_len = numel(&self.out_shape, "output")?;
        self.inner = numel(&[self.inner, record], "params")?;
        Ok(self)
    }
}

/// `gather_nd` as `batch × rows` index vectors of `depth` components, each selecting a slice
/// of `slice` contiguous elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GatherNdPlan {
    /// Product of the batch dimensions.
    pub batch: usize,
    /// Index vectors per batch element.
    pub rows: usize,
    /// Components per index vector.
    pub depth: usize,
    /// The dimensions the components index: `params.shape[batch_dims..batch_dims + depth]`.
    pub dims: AxisList<usize>,
    /// Element stride of each indexed dimension.
    pub strides: AxisList<usize>,
    /// Elements of params per batch element.
    pub batch_stride: usize,
    /// Elements per copied slice.
    pub slice: usize,
    /// The output's shape.
    pub out_shape: AxisList<usize>,
    /// Element count of the output.
    pub out_len: usize,
    /// `indices.shape[:-1]`, for error positions.
    pub rows_shape: AxisList<usize>,
    /// params.shape, for error messages.
    pub params_shape: AxisList<usize>,
    /// batch_dims.
    pub batch_dims: usize,
}

impl GatherNdPlan {
    /// Plans `gather_nd` for known shapes, or returns the first error TensorFlow would report
    /// before looking at index values.
    pub(crate) fn new<I: IndexType>(
        params: &[usize],
        indices: &[usize],
        batch_dims: i64,
    ) -> Result<GatherNdPlan> {
        let rule = shape::gather_nd_shape(
            &Shape::known(params),
            &Shape::known(indices),
            batch_dims,
            I::TF_LIMIT,
        )?;
        let (Some(depth), Some(out_shape), Some((_, rows_shape))) =
            (rule.depth, rule.output.to_known(), indices.split_last())
        else {
            return Err(unresolved(params, indices));
        };
        // The rule has checked 0 <= batch_dims < rank(indices) and batch_dims + depth <= rank(params).
        let bd = batch_dims as usize;
        let mut plan = GatherNdPlan::vectors(&params[bd..], depth, rows_shape)?;
        plan.batch = numel(&params[..bd], "params")?;
        plan.rows = numel(&rows_shape[bd..], "indices")?;
        plan.out_len = numel(&out_shape, "output")?;
        plan.out_shape = AxisList::from_vec(out_shape);
        plan.params_shape = AxisList::from_slice(params);
        plan.batch_dims = bd;
        Ok(plan)
    }

    /// The geometry of index vectors of `depth` components into the leading dimensions of
    /// `shape` (no batch dimensions), for shapes another rule has checked: where each vector's
    /// slice starts (`kernel::nd_offset`), and the dimensions each component must fit. The
    /// output fields are those of a gather of every slice: `tensor_scatter_nd_*` writes
    /// into `shape` by the same vectors.
    pub(crate) fn vectors(
        shape: &[usize],
        depth: usize,
        rows_shape: &[usize],
    ) -> Result<GatherNdPlan> {
        let mut strides = AxisList::from_elem(0, depth);
        let slice = numel(&shape[depth..], "params")?;
        let mut stride = slice;
        for k in (0..depth).rev() {
            strides[k] = stride;
            stride = stride.saturating_mul(shape[k]);
        }
        let rows = numel(rows_shape, "indices")?;
        Ok(GatherNdPlan {
            batch: 1,
            rows,
            depth,
            dims: AxisList::from_slice(&shape[..depth]),
            strides,
            batch_stride: numel(shape, "params")?,
            slice,
            out_shape: rows_shape.iter().chain(&shape[depth..]).copied().collect(),
            out_len: numel(&[rows, slice], "output")?,
            rows_shape: AxisList::from_slice(rows_shape),
            params_shape: AxisList::from_slice(shape),
            batch_dims: 0,
        })
    }
}

impl GatherNdPlan {
    /// The same gather_nd on elements of `record` values each (a trailing axis of params).
    pub(crate) fn widen(mut self, record: usize) -> Result<GatherNdPlan> {
        let scale = |x: usize| numel(&[x, record], "params");
        self.out_shape.push(record);
        self.out_len = numel(&self.out_shape, "output")?;
        self.slice = scale(self.slice)?;
        self.batch_stride = scale(self.batch_stride)?;
        for s in &mut self.strides {
            *s = scale(*s)?;
        }
        Ok(self)
    }
}

/// The row-major position of flat offset `flat` in `shape`.
pub(crate) fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut pos = vec![0; shape.len()];
    for (p, &d) in pos.iter_mut().zip(shape).rev() {
        if d > 0 {
            *p = flat % d;
            flat /= d;
        }
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape up to rank 3 of dimensions 0, 1, 3, 40,000 and 2^62 (sizes that overflow,
    /// and that `int16` indices cannot reach), every axis, batch_dims 0 and 1: where the short
    /// path plans a call, the rule plans the same; where the rule refuses one, the short path
    /// leaves it to the rule.
    #[test]
    fn the_unbatched_plan_is_the_rules() {
        fn shapes() -> Vec<Vec<usize>> {
            let dims = [0, 1, 3, 40_000, 1 << 62];
            let mut all = vec![vec![]];
            for rank in 1..=3 {
                let mut next = vec![];
                for s in all.iter().filter(|s| s.len() == rank - 1) {
                    for d in dims {
                        next.push([&s[..], &[d]].concat());
                    }
                }
                all.extend(next);
            }
            all
        }
        fn compare<I: IndexType>(params: &[usize], indices: &[usize]) -> usize {
            let mut short = 0;
            for batch_dims in [0, 1] {
                for axis in [None, Some(-4), Some(-1), Some(0), Some(1), Some(2), Some(3)] {
                    let quick = GatherPlan::unbatched::<I>(params, indices, axis, batch_dims);
                    let ruled = GatherPlan::ruled::<I>(params, indices, axis, batch_dims);
                    if let Some(plan) = quick {
                        short += 1;
                        assert_eq!(Ok(plan), ruled, "{params:?} {indices:?} {axis:?}");
                    }
                }
            }
            short
        }
        let (shapes, mut short) = (shapes(), 0);
        for p in &shapes {
            for i in shapes.iter().filter(|i| i.len() <= 2) {
                short += compare::<i16>(p, i) + compare::<i32>(p, i) + compare::<i64>(p, i);
                short += compare::<u64>(p, i);
            }
        }
        assert!(short > 10_000, "the short path planned only {short} calls");
    }
}
