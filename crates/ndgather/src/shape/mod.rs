//! Shape rules: one pure function per op, on shapes that may be partly unknown.
//!
//! The eager ops call the same functions with fully known shapes, so every check on
//! ranks, `axis`, `batch_dims` and batch dimensions lives here and only here. With unknown
//! dimensions (or an unknown rank) a function checks what it can and returns the most
//! precise output shape that the known parts allow.
//!
//! ```
//! use ndgather::shape::{gather_shape, Axis, Shape};
//!
//! // A placeholder of shape [?, 2] gathered by indices [5, 1] along axis 0.
//! let params = Shape::from_dims(vec![None, Some(2)]);
//! let indices = Shape::known(&[5, 1]);
//! let out = gather_shape(&params, &indices, Axis::Given(0), 0, None).unwrap();
//! assert_eq!(out.output.to_string(), "[5,1,2]");
//!
//! // An axis whose value is not known yet: the rank is still known.
//! let out = gather_shape(&Shape::known(&[3, 4]), &indices, Axis::Unknown, 0, None).unwrap();
//! assert_eq!(out.output.to_string(), "[?,?,?]");
//! ```

pub(crate) mod plan;

use crate::types::error::{Error, OpKind, Result};
use crate::types::index::IndexLimit;
use std::fmt;

/// A list of per-axis values held inline up to rank 4 (as ndarray's `IxDyn` holds them), so
/// that a call's shape checks and plans allocate nothing (a tiny call is mostly their cost):
/// the memory layer's own list.
pub(crate) use crate::mem::Axes as AxisList;

/// One dimension: `Some(size)`, or `None` where it is not known.
pub type Dim = Option<usize>;

/// A static shape: known rank with dimensions that may be unknown, or unknown rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape(Option<AxisList<Dim>>);

impl Shape {
    /// A fully known shape.
    pub fn known(dims: &[usize]) -> Shape {
        Shape(Some(dims.iter().map(|&d| Some(d)).collect()))
    }

    /// A shape of known rank whose dimensions may be unknown (`None`).
    pub fn from_dims(dims: Vec<Dim>) -> Shape {
        Shape(Some(AxisList::from_vec(dims)))
    }

    /// A shape of unknown rank.
    pub fn unknown() -> Shape {
        Shape(None)
    }

    /// A shape of known rank whose dimensions are all unknown.
    pub fn unknown_dims(rank: usize) -> Shape {
        Shape(Some(smallvec::smallvec![None; rank]))
    }

    /// The rank, if known.
    pub fn rank(&self) -> Option<usize> {
        self.0.as_ref().map(|d| d.len())
    }

    /// The dimensions, if the rank is known.
    pub fn dims(&self) -> Option<&[Dim]> {
        self.0.as_deref()
    }

    /// The dimensions as sizes, if every one is known.
    pub fn to_known(&self) -> Option<Vec<usize>> {
        self.0.as_ref()?.iter().copied().collect()
    }

    /// [`Self::to_known`] without an allocation for ranks up to 8.
    pub(crate) fn known_dims(&self) -> Option<AxisList<usize>> {
        self.0.as_ref()?.iter().copied().collect()
    }

    /// Whether every dimension is known.
    pub fn is_fully_known(&self) -> bool {
        self.to_known().is_some()
    }

    /// Whether a concrete shape fits this one (same rank, equal wherever known).
    pub fn accepts(&self, concrete: &[usize]) -> bool {
        match &self.0 {
            None => true,
            Some(dims) => {
                dims.len() == concrete.len()
                    && dims
                        .iter()
                        .zip(concrete)
                        .all(|(d, &c)| d.is_none_or(|d| d == c))
            }
        }
    }

    /// Element count when known; `Some(0)` as soon as one known dimension is 0.
    pub fn num_elements(&self) -> Option<usize> {
        let dims = self.0.as_ref()?;
        if dims.contains(&Some(0)) {
            return Some(0);
        }
        let known: Option<AxisList<usize>> = dims.iter().copied().collect();
        checked_numel(&known?)
    }
}

impl fmt::Display for Shape {
    /// TensorFlow's form: `[2,?]`, or `<unknown>` for an unknown rank.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("<unknown>"),
            Some(dims) => {
                f.write_str("[")?;
                for (k, d) in dims.iter().enumerate() {
                    if k > 0 {
                        f.write_str(",")?;
                    }
                    match d {
                        Some(d) => write!(f, "{d}")?,
                        None => f.write_str("?")?,
                    }
                }
                f.write_str("]")
            }
        }
    }
}

impl From<&[usize]> for Shape {
    fn from(dims: &[usize]) -> Shape {
        Shape::known(dims)
    }
}

/// The `axis` argument of gather.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// Not given: the first non-batch dimension, `batch_dims` (normalised).
    Default,
    /// A value, negative counting from the end.
    Given(i64),
    /// A value not known until run time (a graph's placeholder).
    Unknown,
}

/// What [`gather_shape`] learns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatherShape {
    /// The output's shape.
    pub output: Shape,
    /// The axis, normalised, where known.
    pub axis: Option<usize>,
    /// batch_dims, normalised, where known.
    pub batch_dims: Option<usize>,
}

/// What [`gather_nd_shape`] learns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatherNdShape {
    /// The output's shape.
    pub output: Shape,
    /// The index depth `indices.shape[-1]`, where known.
    pub depth: Option<usize>,
}

/// `axis` in `[-rank, rank)` as an axis in `[0, rank)`, a negative one counted from the end,
/// as TensorFlow, NumPy and PyTorch all count it; `None` outside. Each op words its own
/// error (TensorFlow's, NumPy's `AxisError`, PyTorch's `IndexError`).
pub(crate) fn wrap_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis.checked_add(r)? } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// Element count of a shape, `None` when it overflows `isize` (as ndarray requires, a zero
/// dimension does not excuse the others from fitting).
pub fn checked_numel(dims: &[usize]) -> Option<usize> {
    crate::mem::element_count(dims)
}

fn overflow_check(output: &Shape) -> Result<()> {
    if let Some(dims) = output.known_dims() {
        if checked_numel(&dims).is_none() {
            return Err(Error::ShapeOverflow {
                what: "output",
                shape: dims.to_vec(),
            });
        }
    }
    Ok(())
}

fn check_batch_dims_equal(params: &Shape, indices: &Shape, batch_dims: usize) -> Result<()> {
    if let (Some(p), Some(i)) = (params.dims(), indices.dims()) {
        for dim in 0..batch_dims.min(p.len()).min(i.len()) {
            if let (Some(ps), Some(is)) = (p[dim], i[dim]) {
                if ps != is {
                    return Err(Error::BatchShapeMismatch {
                        dim,
                        params_size: ps,
                        indices_size: is,
                    });
                }
            }
        }
    }
    Ok(())
}

/// A batch dimension of the output: params' size, or indices' where params' is unknown.
fn batch_dim(p: &[Dim], i: &[Dim], k: usize) -> Dim {
    p[k].or(i.get(k).copied().flatten())
}

/// The shape rule of `tf.gather(params, indices, axis, batch_dims)`.
///
/// Checks, in TensorFlow's order, whatever the known parts allow: params rank ≥ 1; `axis`
/// within `[-rank(params), rank(params))`; `batch_dims` within
/// `[-rank(indices), rank(indices)]`, below rank(params) and not after `axis`; equal batch
/// dimensions; params' gathered dimension within the index type's range (`index_limit`,
/// [`crate::IndexType::TF_LIMIT`]). The output is
/// `params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:]`.
pub fn gather_shape(
    params: &Shape,
    indices: &Shape,
    axis: Axis,
    batch_dims: i64,
    index_limit: Option<IndexLimit>,
) -> Result<GatherShape> {
    let params_rank = params.rank();
    if params_rank == Some(0) {
        return Err(Error::ParamsScalar { op: OpKind::Gather });
    }
    let indices_rank = indices.rank();

    // The axis, as TensorFlow's kernel sees it; by default the first non-batch dimension.
    let raw_axis = match axis {
        Axis::Given(a) => Some(a),
        Axis::Default if batch_dims < 0 => indices_rank.map(|r| batch_dims + r as i64),
        Axis::Default => Some(batch_dims),
        Axis::Unknown => None,
    };
    let mut axis_n = None;
    if let Some(a) = raw_axis {
        let out_of_range = |rank: usize| Error::AxisOutOfRange {
            axis: a,
            params_rank: rank,
        };
        if a == i64::MAX || a == i64::MIN {
            return Err(out_of_range(params_rank.unwrap_or(0)));
        }
        match params_rank {
            Some(r) => axis_n = Some(wrap_axis(a, r).ok_or_else(|| out_of_range(r))?),
            None if a >= 0 => axis_n = usize::try_from(a).ok(),
            None => {}
        }
    }

    let mut bd_n = if batch_dims == 0 { Some(0) } else { None };
    if batch_dims != 0 {
        match indices_rank {
            Some(r) => {
                let r_i = r as i64;
                if batch_dims < -r_i || batch_dims > r_i {
                    return Err(Error::BatchDimsOutOfRange {
                        batch_dims,
                        indices_rank: r,
                    });
                }
                bd_n = Some(if batch_dims < 0 {
                    (batch_dims + r_i) as usize
                } else {
                    batch_dims as usize
                });
            }
            None if batch_dims > 0 => bd_n = usize::try_from(batch_dims).ok(),
            None => {}
        }
        if let (Some(b), Some(r)) = (bd_n, params_rank) {
            if b >= r {
                return Err(Error::BatchDimsNotLessThanParamsRank {
                    op: OpKind::Gather,
                    batch_dims: b,
                    params_rank: r,
                });
            }
        }
        if let (Some(b), Some(a)) = (bd_n, axis_n) {
            if a < b {
                return Err(Error::AxisBeforeBatchDims {
                    batch_dims: b,
                    axis: a,
                });
            }
        }
        if let Some(b) = bd_n {
            check_batch_dims_equal(params, indices, b)?;
        }
    }

    if let (
        Some(a),
        Some(p),
        Some(IndexLimit {
            dtype: index_type,
            max,
        }),
    ) = (axis_n, params.dims(), index_limit)
    {
        if let Some(Some(size)) = p.get(a) {
            if *size as u64 > max {
                return Err(Error::IndexTypeTooSmall {
                    what: format!("params.shape[{a}]"),
                    index_type,
                    size: *size,
                    max,
                });
            }
        }
    }

    let output = match (params.dims(), indices.dims(), axis_n, bd_n) {
        (Some(p), Some(i), Some(a), Some(b)) => {
            let mut out: AxisList<Dim> = (0..a)
                .map(|k| if k < b { batch_dim(p, i, k) } else { p[k] })
                .collect();
            out.extend_from_slice(&i[b..]);
            out.extend_from_slice(&p[a + 1..]);
            Shape(Some(out))
        }
        (Some(p), Some(i), None, Some(b)) => Shape::unknown_dims(p.len() + i.len() - 1 - b),
        _ => Shape::unknown(),
    };
    overflow_check(&output)?;
    Ok(GatherShape {
        output,
        axis: axis_n,
        batch_dims: bd_n,
    })
}

/// The shape rule of `tf.gather_nd(params, indices, batch_dims)`.
///
/// Checks, in TensorFlow's order: `batch_dims` ≥ 0 and below both ranks; params and indices
/// at least vectors; batch dimensions equal (TensorFlow reshapes silently or fails in a
/// reshape; ndgather says which dimension differs); `batch_dims + indices.shape[-1]` at most
/// rank(params); params' element count within the index type's range; no rows requested from
/// an empty params. The output is
/// `indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]`.
pub fn gather_nd_shape(
    params: &Shape,
    indices: &Shape,
    batch_dims: i64,
    index_limit: Option<IndexLimit>,
) -> Result<GatherNdShape> {
    if batch_dims < 0 {
        return Err(Error::NegativeBatchDims { batch_dims });
    }
    let b = usize::try_from(batch_dims).unwrap_or(usize::MAX);
    let (params_rank, indices_rank) = (params.rank(), indices.rank());
    if b > 0 {
        if let Some(r) = indices_rank.filter(|&r| b >= r) {
            return Err(Error::BatchDimsNotLessThanIndicesRank {
                batch_dims: b,
                indices_rank: r,
            });
        }
        if let Some(r) = params_rank.filter(|&r| b >= r) {
            return Err(Error::BatchDimsNotLessThanParamsRank {
                op: OpKind::GatherNd,
                batch_dims: b,
                params_rank: r,
            });
        }
        check_batch_dims_equal(params, indices, b)?;
    } else {
        if params_rank == Some(0) {
            return Err(Error::ParamsScalar {
                op: OpKind::GatherNd,
            });
        }
        if indices_rank == Some(0) {
            return Err(Error::IndicesScalar);
        }
    }

    let depth = indices.dims().and_then(|i| i.last().copied().flatten());
    if let (Some(d), Some(r)) = (depth, params_rank) {
        let total = b.saturating_add(d);
        if total > r {
            return Err(Error::IndexDepthTooLarge {
                depth: total,
                params_rank: r,
            });
        }
    }

    if let (
        Some(IndexLimit {
            dtype: index_type,
            max,
        }),
        Some(Some(n)),
    ) = (index_limit, params.dims().map(|_| params.num_elements()))
    {
        if n as u64 > max {
            return Err(Error::IndexTypeTooSmall {
                what: "params.NumElements()".to_string(),
                index_type,
                size: n,
                max,
            });
        }
    }

    let output = match (params.dims(), indices.dims(), depth) {
        (Some(p), Some(i), Some(d)) if i.len() > b && b + d <= p.len() => {
            let lead = i.len() - 1;
            let mut out: AxisList<Dim> = (0..lead)
                .map(|k| if k < b { batch_dim(p, i, k) } else { i[k] })
                .collect();
            out.extend_from_slice(&p[b + d..]);
            Shape(Some(out))
        }
        _ => Shape::unknown(),
    };
    overflow_check(&output)?;

    // Rows requested (indices.shape[:-1]) from a params with no elements.
    let rows = indices
        .dims()
        .and_then(|i| i.split_last())
        .and_then(|(_, lead)| Shape(Some(lead.iter().copied().collect())).num_elements());
    if rows.is_some_and(|n| n > 0) && params.num_elements() == Some(0) {
        if let Some(params_shape) = params.to_known() {
            return Err(Error::EmptyParams { params_shape });
        }
    }
    Ok(GatherNdShape { output, depth })
}

/// What [`tensor_scatter_shape`] learns: the updates as `num_updates` index vectors of
/// `depth` components, each writing a slice of `slice` elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorScatterShape {
    /// How many index vectors (and slices of updates) there are.
    pub num_updates: usize,
    /// The components of each index vector: `indices.shape[-1]`.
    pub depth: usize,
    /// The elements of each slice: the product of `tensor.shape[depth:]`.
    pub slice: usize,
}

/// The shape rule of TensorFlow's `tensor_scatter_nd_*` ops, with TensorFlow's messages in
/// its order (the op's own checks, then those of its shared scatter code): `indices` and
/// `updates` of rank ≥ 1; nothing to scatter into an empty tensor; `updates.shape` equal to
/// `indices.shape[:-1] + tensor.shape[indices.shape[-1]:]`; `tensor` of rank ≥ 1.
///
/// ```
/// use ndgather::shape::tensor_scatter_shape;
/// let rule = tensor_scatter_shape(&[4, 3], &[2, 1], &[2, 3]).unwrap();
/// assert_eq!((rule.num_updates, rule.depth, rule.slice), (2, 1, 3));
/// let err = tensor_scatter_shape(&[4, 3], &[2, 1], &[2, 4]).unwrap_err();
/// assert_eq!(err.to_string(), "The inner 1 dimensions of output.shape=[4,3] must match the \
///     inner 1 dimensions of updates.shape=[2,4]");
/// ```
pub fn tensor_scatter_shape(
    tensor: &[usize],
    indices: &[usize],
    updates: &[usize],
) -> Result<TensorScatterShape> {
    use crate::types::error::shape_string as s;
    let refuse = |message: String| Err(Error::TensorScatterShape { message });
    let Some((&depth, outer)) = indices.split_last() else {
        return refuse("Indices shape must have rank at least one. Found:[]".to_string());
    };
    if updates.is_empty() {
        return refuse(format!(
            "Updates shape must have rank at least one. Found:{}",
            s(updates)
        ));
    }
    let count = |dims: &[usize]| dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    let (n_tensor, n_indices, n_updates) = (count(tensor), count(indices), count(updates));
    let none = |n: Option<usize>| n == Some(0);
    let valid_empty = (none(n_indices) && none(n_updates))
        || !(none(n_tensor) || none(n_indices) || none(n_updates));
    if !valid_empty {
        return refuse("Indices and updates specified for empty output shape".to_string());
    }
    if outer
        .iter()
        .enumerate()
        .any(|(k, &d)| updates.get(k) != Some(&d))
    {
        return refuse(format!(
            "Outer dimensions of indices and update must match. Indices shape: {}, updates \
             shape:{}",
            s(indices),
            s(updates)
        ));
    }
    let inner = &updates[outer.len().min(updates.len())..];
    if tensor.len().checked_sub(depth) != Some(inner.len()) {
        return refuse(format!(
            "Inner dimensions of output shape must match inner dimensions of updates shape. \
             Output: {} updates: {}",
            s(tensor),
            s(updates)
        ));
    }
    if inner != &tensor[depth..] {
        return refuse(format!(
            "The inner {} dimensions of output.shape={} must match the inner {} dimensions \
             of updates.shape={}",
            tensor.len() - depth,
            s(tensor),
            inner.len(),
            s(updates)
        ));
    }
    // TensorFlow's shared scatter code, which reads indices of rank 1 as vectors of one
    // component each.
    if tensor.is_empty() {
        return refuse("Output must be at least 1-D, got shape: []".to_string());
    }
    let (slice_dim, batch_dim) = match indices.len() {
        1 => (1, 1),
        r => (depth, r - 1),
    };
    if updates[0] != indices[0] {
        return refuse(format!(
            "Dimensions [0,1) of indices[shape={}] = {} must match dimensions [0,1) of \
             updates[shape={}] = {}",
            s(indices),
            indices[0],
            s(updates),
            updates[0]
        ));
    }
    let prefix = || {
        refuse(format!(
            "Dimensions [0,{batch_dim}) of indices[shape={}] must match dimensions \
             [0,{batch_dim}) of updates[shape={}]",
            s(indices),
            s(updates)
        ))
    };
    let suffix = || {
        refuse(format!(
            "Dimensions [{slice_dim},{}) of input[shape={}] must match dimensions \
             [{batch_dim},{}) of updates[shape={}]",
            tensor.len(),
            s(tensor),
            updates.len(),
            s(updates)
        ))
    };
    let Some(update_dims) = updates.len().checked_sub(batch_dim) else {
        return prefix();
    };
    if tensor.len() < slice_dim + update_dims || update_dims != tensor.len() - slice_dim {
        return suffix();
    }
    if updates[..batch_dim] != indices[..batch_dim] {
        return prefix();
    }
    if updates[batch_dim..] != tensor[slice_dim..] {
        return suffix();
    }
    let overflow = |what| Error::ShapeOverflow {
        what,
        shape: tensor.to_vec(),
    };
    let slice = checked_numel(&tensor[depth..]).ok_or_else(|| overflow("tensor"))?;
    checked_numel(tensor).ok_or_else(|| overflow("tensor"))?;
    let num_updates = checked_numel(outer).ok_or_else(|| overflow("indices"))?;
    Ok(TensorScatterShape {
        num_updates,
        depth,
        slice,
    })
}

#[cfg(test)]
mod tests {
    use super::wrap_axis;

    /// Every axis of every small rank, and the extremes, against the rule written out.
    #[test]
    fn wrap_axis_counts_negative_axes_from_the_end() {
        for rank in 0..5usize {
            for axis in -7i64..7 {
                let r = rank as i64;
                let expected = if (-r..0).contains(&axis) {
                    Some((axis + r) as usize)
                } else if (0..r).contains(&axis) {
                    Some(axis as usize)
                } else {
                    None
                };
                assert_eq!(wrap_axis(axis, rank), expected, "axis {axis}, rank {rank}");
            }
        }
        assert_eq!(wrap_axis(i64::MIN, 3), None);
        assert_eq!(wrap_axis(i64::MAX, usize::MAX), None);
        assert_eq!(wrap_axis(-1, usize::MAX), None);
    }
}
