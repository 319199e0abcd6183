//! The nodes of a graph, and the one place where a node runs: [`NodeKind::run`], used by
//! eager scopes when an op is created and by sessions when a graph runs.

use super::error::{OpError, OpResult};
use crate::dtype::{DType, Tensor};
use crate::embedding::{Combiner, EmbeddingLookup};
use crate::error::GatherError;
use crate::ops::gather::{GatherNdOptions, GatherOptions};
use crate::shape::Shape;
use crate::with_tensor;

/// What a node computes. Options are the core's own.
#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Constant,
    Placeholder,
    Gather {
        params: usize,
        indices: usize,
        axis: usize,
        /// The options but the axis, which comes from the `axis` operand.
        options: GatherOptions,
    },
    GatherNd {
        params: usize,
        indices: usize,
        options: GatherNdOptions,
    },
    /// The gradient of the Gather node `op` for the upstream gradient `grad`.
    GatherGrad {
        op: usize,
        grad: usize,
    },
    /// The gradient of the GatherNd node `op` for the upstream gradient `grad`.
    GatherNdGrad {
        op: usize,
        grad: usize,
    },
    EmbeddingLookup {
        shards: Vec<usize>,
        ids: usize,
        lookup: EmbeddingLookup,
    },
    EmbeddingLookupSparse {
        shards: Vec<usize>,
        /// The ids' `indices`, `values` and `dense_shape`.
        sparse: [usize; 3],
        weights: Option<usize>,
        lookup: EmbeddingLookup,
        combiner: Combiner,
    },
}

/// One op of a graph, with its single output.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) kind: NodeKind,
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
    /// Constants' values, and every eager op's result.
    pub(crate) value: Option<Tensor>,
}

/// The value of a node, looked up by id: an eager node's own, or a session run's.
pub(crate) trait Values<'v> {
    fn value(&self, node: usize) -> OpResult<&'v Tensor>;
}

impl<'v, F: Fn(usize) -> Option<&'v Tensor>> Values<'v> for F {
    fn value(&self, node: usize) -> OpResult<&'v Tensor> {
        self(node).ok_or_else(|| OpError::Internal(format!("node {node} has no value yet")))
    }
}

/// `options.grad(shape, indices, upstream)` for a tensor `upstream` of a dtype with a
/// gradient (the dtype table's `grad` role) and index tensor `indices`, dtype-erased.
macro_rules! grad_of {
    ($options:expr, $shape:expr, $indices:expr, $upstream:expr) => {
        with_tensor!(Tensor, $upstream, grad g => with_tensor!(Tensor, $indices,
            index i => Tensor::from($options.grad($shape, i, g)?),
            else dtype => return Err(GatherError::IndicesNotInteger { dtype }.into())),
        else found => return Err(OpError::DType { expected: DType::names_where(DType::has_grad), found }))
    };
}

impl NodeKind {
    /// The nodes whose values this one's evaluation reads (for a gradient: the upstream
    /// gradient and the forward op's inputs, not the forward op itself).
    pub(crate) fn inputs(&self, nodes: &[Node]) -> Vec<usize> {
        match self {
            NodeKind::Constant | NodeKind::Placeholder => vec![],
            NodeKind::Gather {
                params,
                indices,
                axis,
                ..
            } => vec![*params, *indices, *axis],
            NodeKind::GatherNd {
                params, indices, ..
            } => vec![*params, *indices],
            NodeKind::GatherGrad { op, grad } | NodeKind::GatherNdGrad { op, grad } => {
                let forward = nodes.get(*op).map(|f| f.kind.inputs(nodes));
                std::iter::once(*grad)
                    .chain(forward.into_iter().flatten())
                    .collect()
            }
            NodeKind::EmbeddingLookup { shards, ids, .. } => {
                shards.iter().copied().chain([*ids]).collect()
            }
            NodeKind::EmbeddingLookupSparse {
                shards,
                sparse,
                weights,
                ..
            } => shards
                .iter()
                .chain(sparse)
                .chain(weights)
                .copied()
                .collect(),
        }
    }

    /// Runs the node on its inputs' values. Constants and placeholders have no computation:
    /// their values are the graph's or the feeds', and asking here is an internal error.
    pub(crate) fn run<'v>(&self, nodes: &[Node], values: &impl Values<'v>) -> OpResult<Tensor> {
        let shards = |ids: &[usize]| -> OpResult<Vec<&'v Tensor>> {
            ids.iter().map(|&s| values.value(s)).collect()
        };
        Ok(match self {
            NodeKind::Constant | NodeKind::Placeholder => {
                return Err(OpError::Internal(
                    "constants and placeholders are not computed".into(),
                ))
            }
            NodeKind::Gather {
                params,
                indices,
                axis,
                options,
            } => {
                let options = with_axis(options, *axis, values)?;
                values
                    .value(*params)?
                    .gather(values.value(*indices)?, &options)?
            }
            NodeKind::GatherNd {
                params,
                indices,
                options,
            } => values
                .value(*params)?
                .gather_nd(values.value(*indices)?, options)?,
            NodeKind::GatherGrad { op, grad } | NodeKind::GatherNdGrad { op, grad } => {
                let forward = nodes
                    .get(*op)
                    .ok_or_else(|| OpError::Internal(format!("no forward node {op}")))?;
                forward.kind.grad(values.value(*grad)?, values)?
            }
            NodeKind::EmbeddingLookup {
                shards: s,
                ids,
                lookup,
            } => lookup.lookup_tensors(&shards(s)?, values.value(*ids)?)?,
            NodeKind::EmbeddingLookupSparse {
                shards: s,
                sparse: [i, v, d],
                weights,
                lookup,
                combiner,
            } => {
                let sparse = [values.value(*i)?, values.value(*v)?, values.value(*d)?];
                let w = weights.map(|w| values.value(w)).transpose()?;
                lookup.lookup_sparse_tensors(&shards(s)?, sparse, w, *combiner)?
            }
        })
    }

    /// The gradient of this gather with respect to params, for the upstream value
    /// `upstream`, reading the gather's inputs from `values`.
    fn grad<'v>(&self, upstream: &Tensor, values: &impl Values<'v>) -> OpResult<Tensor> {
        match self {
            NodeKind::Gather {
                params,
                indices,
                axis,
                options,
            } => {
                let options = with_axis(options, *axis, values)?;
                let shape = values.value(*params)?.shape();
                Ok(grad_of!(options, shape, values.value(*indices)?, upstream))
            }
            NodeKind::GatherNd {
                params,
                indices,
                options,
            } => {
                let shape = values.value(*params)?.shape();
                Ok(grad_of!(options, shape, values.value(*indices)?, upstream))
            }
            _ => Err(OpError::Internal(
                "a gradient node whose forward op is not a gather".into(),
            )),
        }
    }
}

/// A Gather node's options with its axis: the value of the `axis` node, a scalar of `i32`
/// or `i64` (TensorFlow's `Taxis`).
fn with_axis<'v>(
    options: &GatherOptions,
    axis: usize,
    values: &impl Values<'v>,
) -> OpResult<GatherOptions> {
    let axis = match values.value(axis)? {
        Tensor::I32(a) if a.ndim() == 0 => a.first().map(|&v| i64::from(v)),
        Tensor::I64(a) if a.ndim() == 0 => a.first().copied(),
        _ => None,
    };
    Ok(options.axis(axis.ok_or(OpError::AxisNotScalar)?))
}
