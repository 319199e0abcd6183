//! Gradients of gather and gather_nd with respect to params, as TensorFlow's
//! `_GatherV2Grad` and `_GatherNdGrad` compute them: the upstream gradient scattered back
//! into params' shape, duplicates summed. Dense forms for every axis, `batch_dims` and index
//! depth; sparse forms ([`IndexedSlices`]) for the embedding case, so that a table of a
//! million rows is not materialised for a batch that touches a thousand.
//!
//! ```
//! use ndarray::{array, Array2};
//! use ndgather::grad::{gather_grad, gather_nd_grad};
//!
//! // params [2,3], axis 1, indices [2,2,0], upstream ones.
//! let g = gather_grad(&[2, 3], &array![2, 2, 0], &Array2::<f64>::ones((2, 3)), 1, 0).unwrap();
//! assert_eq!(g, array![[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]].into_dyn());
//! // gather_nd with indices [[1,2],[1,2],[0,0]].
//! let g = gather_nd_grad(&[2, 3], &array![[1, 2], [1, 2], [0, 0]], &array![1.0, 1.0, 1.0], 0).unwrap();
//! assert_eq!(g, array![[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]].into_dyn());
//! ```

use crate::engine::kernel;
use crate::engine::layout::into_array;
use crate::engine::layout::row_major;
use crate::mem::output::defaults as zeros;
use crate::ops::scatter::{scatter_add, scatter_nd_batched};
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::arith::Number;
use crate::types::dtype::bytes_of;
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

/// An upstream gradient of the forward output's shape, or [`Error::GradShapeMismatch`].
pub(crate) fn check_grad(found: &[usize], expected: &[usize]) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::GradShapeMismatch {
            expected: expected.to_vec(),
            found: found.to_vec(),
        })
    }
}

/// The gradient of `gather(params, indices, axis, batch_dims)` with respect to params, for
/// upstream gradient `grad` (of the gather's output shape): zeros of `params_shape` with each
/// slice of `grad` added where it was gathered from. `axis` and `batch_dims` may be negative;
/// `axis` may be `None` for gather's default, the first non-batch dimension.
pub fn gather_grad<T, I, SI, SG, DI, DG>(
    params_shape: &[usize],
    indices: &ArrayBase<SI, DI>,
    grad: &ArrayBase<SG, DG>,
    axis: impl Into<Option<i64>>,
    batch_dims: i64,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SG: Data<Elem = T>,
    DI: Dimension,
    DG: Dimension,
{
    let plan = GatherPlan::new::<I>(params_shape, indices.shape(), axis.into(), batch_dims)?;
    gather_grad_planned(&plan, params_shape, indices, grad, BadIndices::Error)
}

/// [`gather_grad`] on a plan, under `policy`: indices it resolves (clamped, wrapped) get
/// their slices' gradient, and bad ones it fills (`Ignore`, `Fill`) none.
pub(crate) fn gather_grad_planned<T, I, SI, SG, DI, DG>(
    plan: &GatherPlan,
    params_shape: &[usize],
    indices: &ArrayBase<SI, DI>,
    grad: &ArrayBase<SG, DG>,
    policy: BadIndices,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SG: Data<Elem = T>,
    DI: Dimension,
    DG: Dimension,
{
    check_grad(grad.shape(), &plan.out_shape)?;
    let idx = row_major(indices)?;
    kernel::check_gather(&idx, plan, policy)?;
    let src = row_major(grad)?;
    let mut out = zeros::<T>(params_shape, bytes_of::<T>())?;
    let (outer, n, gathered) = (plan.outer, plan.n.max(1), plan.gathered);
    // Source row k is grad item (b, o, j); its target is params row (b, o, indices[b, j]).
    scatter_add(&mut out, plan.inner, &src, |k| {
        let (j, rest) = (k % n, k / n);
        let (o, b) = (rest % outer.max(1), rest / outer.max(1));
        let g = policy.resolve(idx[b * n + j], gathered)?;
        Some((b * outer + o) * gathered + g)
    });
    into_array(params_shape, out)
}

/// The gradient of `gather_nd(params, indices, batch_dims)` with respect to params: zeros of
/// `params_shape` with each slice of `grad` added at its index vector (TensorFlow's
/// `scatter_nd`, with batch dimensions).
pub fn gather_nd_grad<T, I, SI, SG, DI, DG>(
    params_shape: &[usize],
    indices: &ArrayBase<SI, DI>,
    grad: &ArrayBase<SG, DG>,
    batch_dims: i64,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SG: Data<Elem = T>,
    DI: Dimension,
    DG: Dimension,
{
    gather_nd_grad_with(params_shape, indices, grad, batch_dims, BadIndices::Error)
}

/// [`gather_nd_grad`] under `policy` (see [`gather_grad_planned`]).
pub(crate) fn gather_nd_grad_with<T, I, SI, SG, DI, DG>(
    params_shape: &[usize],
    indices: &ArrayBase<SI, DI>,
    grad: &ArrayBase<SG, DG>,
    batch_dims: i64,
    policy: BadIndices,
) -> Result<ArrayD<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SG: Data<Elem = T>,
    DI: Dimension,
    DG: Dimension,
{
    let plan = GatherNdPlan::new::<I>(params_shape, indices.shape(), batch_dims)?;
    check_grad(grad.shape(), &plan.out_shape)?;
    scatter_nd_batched(indices, grad, params_shape, batch_dims, policy)
}

/// A sparse gradient, as TensorFlow's `IndexedSlices`: row `indices[k]` of a tensor of
/// `dense_shape` receives `values[k]`; rows may repeat, and then add up.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedSlices<T> {
    /// The rows touched, in the order of the gather.
    pub indices: Vec<usize>,
    /// One slice per index: shape `[indices.len()] + dense_shape[1:]`.
    pub values: ArrayD<T>,
    /// The shape of the dense tensor.
    pub dense_shape: Vec<usize>,
}

impl<T: Number> IndexedSlices<T> {
    /// The dense tensor (duplicates summed in order).
    pub fn to_dense(&self) -> Result<ArrayD<T>> {
        let row_len = self.values.len() / self.indices.len().max(1);
        let src = row_major(&self.values)?;
        let mut out = zeros::<T>(&self.dense_shape, bytes_of::<T>())?;
        let rows = self.dense_shape.first().copied().unwrap_or(0);
        scatter_add(&mut out, row_len, &src, |k| {
            Some(self.indices[k]).filter(|&r| r < rows)
        });
        into_array(&self.dense_shape, out)
    }

    /// The same gradient with each row once: indices sorted, duplicates' values summed in
    /// the order they came.
    pub fn merge_duplicates(&self) -> Result<IndexedSlices<T>> {
        let mut unique = self.indices.clone();
        unique.sort_unstable();
        unique.dedup();
        let row_len = self.values.len() / self.indices.len().max(1);
        let mut shape = vec![unique.len()];
        shape.extend_from_slice(self.values.shape().get(1..).unwrap_or(&[]));
        let src = row_major(&self.values)?;
        let mut out = zeros::<T>(&shape, bytes_of::<T>())?;
        scatter_add(&mut out, row_len, &src, |k| {
            unique.binary_search(&self.indices[k]).ok()
        });
        Ok(IndexedSlices {
            indices: unique,
            values: into_array(&shape, out)?,
            dense_shape: self.dense_shape.clone(),
        })
    }
}

fn sparse<T: Number, SG: Data<Elem = T>, DG: Dimension>(
    rows: Vec<usize>,
    grad: &ArrayBase<SG, DG>,
    params_shape: &[usize],
) -> Result<IndexedSlices<T>> {
    let mut shape = vec![rows.len()];
    shape.extend_from_slice(&params_shape[1..]);
    let values = row_major(grad)?.into_owned();
    Ok(IndexedSlices {
        indices: rows,
        values: ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(|e| Error::InvalidShape {
            shape,
            reason: e.to_string(),
        })?,
        dense_shape: params_shape.to_vec(),
    })
}

/// The gradient of `gather(params, indices)` along axis 0 without batch dimensions, in sparse
/// form (TensorFlow's `_GatherGrad`): the rows gathered and the upstream slices, unsummed.
pub fn gather_grad_sparse<T, I, SI, SG, DI, DG>(
    params_shape: &[usize],
    indices: &ArrayBase<SI, DI>,
    grad: &ArrayBase<SG, DG>,
) -> Result<IndexedSlices<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SG: Data<Elem = T>,
    DI: Dimension,
    DG: Dimension,
{
    let plan = GatherPlan::new::<I>(params_shape, indices.shape(), Some(0), 0)?;
    check_grad(grad.shape(), &plan.out_shape)?;
    let idx = row_major(indices)?;
    kernel::check_gather(&idx, &plan, BadIndices::Error)?;
    let rows = idx
        .iter()
        .map(|&i| i.checked_index(plan.gathered).unwrap_or(0))
        .collect();
    sparse(rows, grad, params_shape)
}

/// The gradient of `gather_nd(params, indices)` for rank-2 indices of depth 1 (rows of
/// params), in sparse form (TensorFlow's `_GatherNdGrad` fast path).
pub fn gather_nd_grad_sparse<T, I, SI, SG, DI, DG>(
    params_shape: &[usize],
    indices: &ArrayBase<SI, DI>,
    grad: &ArrayBase<SG, DG>,
) -> Result<IndexedSlices<T>>
where
    T: Number,
    I: IndexType,
    SI: Data<Elem = I>,
    SG: Data<Elem = T>,
    DI: Dimension,
    DG: Dimension,
{
    if indices.ndim() != 2 || indices.shape()[1] != 1 {
        return Err(Error::SparseNeedsRows {
            indices_shape: indices.shape().to_vec(),
        });
    }
    let plan = GatherNdPlan::new::<I>(params_shape, indices.shape(), 0)?;
    check_grad(grad.shape(), &plan.out_shape)?;
    let idx = row_major(indices)?;
    kernel::check_gather_nd(&idx, &plan, BadIndices::Error)?;
    let dim = params_shape.first().copied().unwrap_or(0);
    let rows = idx
        .iter()
        .map(|&i| i.checked_index(dim).unwrap_or(0))
        .collect();
    sparse(rows, grad, params_shape)
}
