//! The nodes of a graph, and the one place where a node runs: [`NodeKind::run`], used by
//! eager scopes when an op is created and by sessions when a graph runs.

use super::op_error::{OpError, OpResult};
use crate::ops::contract::{Input, OpDef};
use crate::ops::embedding::{Combiner, EmbeddingLookupOptions};
use crate::ops::embedding_bag::EmbeddingBag;
use crate::ops::tensor_scatter::TensorScatter;
use crate::ops::{Op, Out};
use crate::shape::Shape;
use crate::types::dtype::{DType, FixedWidth, Tensor, TensorView, TensorViewMut};
use crate::types::error::Error;
use crate::types::value::FillValue;
use crate::with_tensor;
use std::sync::Arc;

/// What a node computes. Options are the core's own.
#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Constant,
    Placeholder,
    /// An op of the gather family, run by the core's one entry point ([`Op::run`]); a
    /// Gather node's axis comes from its `axis` operand.
    Op {
        op: Op,
        params: usize,
        indices: usize,
        axis: Option<usize>,
    },
    /// The gradient of the `Op` node `op` for the upstream gradient `grad`.
    Grad {
        op: usize,
        grad: usize,
    },
    EmbeddingLookup {
        shards: Vec<usize>,
        ids: usize,
        lookup: EmbeddingLookupOptions,
    },
    /// PyTorch's `embedding_bag` over the shards' values.
    EmbeddingBag {
        shards: Vec<usize>,
        input: usize,
        offsets: Option<usize>,
        weights: Option<usize>,
        bag: EmbeddingBag,
    },
    /// TensorFlow's `tensor_scatter_nd_*`: `tensor` with `updates` applied at `indices`.
    TensorScatter {
        op: TensorScatter,
        tensor: usize,
        indices: usize,
        updates: usize,
    },
    /// A gradient of the `TensorScatter` node `forward` for the upstream gradient `grad`:
    /// with respect to its tensor, or (`updates`) to its updates.
    TensorScatterGrad {
        forward: usize,
        grad: usize,
        updates: bool,
    },
    /// The sum of several tensors of one dtype and shape (TF's `AddN`): a gradient reached
    /// along several paths.
    AddN {
        inputs: Vec<usize>,
    },
    /// A tensor of ones of `of`'s dtype and shape (TF's `OnesLike`): the upstream gradient
    /// of an output that `Scope::gradients` starts from.
    OnesLike {
        of: usize,
    },
    EmbeddingLookupSparse {
        shards: Vec<usize>,
        /// The ids' `indices`, `values` and `dense_shape`.
        sparse: [usize; 3],
        weights: Option<usize>,
        lookup: EmbeddingLookupOptions,
        combiner: Combiner,
    },
    /// Any op of the registry, configured, on its inputs ([`Scope::op`](super::Scope::op)).
    Registered {
        op: Arc<dyn OpDef>,
        inputs: Vec<Slot>,
    },
    /// The gradient of the `Registered` node `forward` with respect to its input `input`,
    /// for the upstream gradient `grad`.
    RegisteredGrad {
        forward: usize,
        grad: usize,
        input: usize,
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
    fn value(&self, node: usize) -> OpResult<TensorView<'v>>;
}

impl<'v, F: Fn(usize) -> Option<TensorView<'v>>> Values<'v> for F {
    fn value(&self, node: usize) -> OpResult<TensorView<'v>> {
        self(node).ok_or_else(|| OpError::Internal(format!("node {node} has no value yet")))
    }
}

/// What TF calls the op type of a node that has no gradient, for the message.
impl NodeKind {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            NodeKind::Constant => "Const",
            NodeKind::Placeholder => "Placeholder",
            NodeKind::Op { op, .. } => match op {
                Op::Gather(_) => "GatherV2",
                Op::GatherNd(_) => "GatherNd",
                Op::TakeAlongAxis(_) => "TakeAlongAxis",
            },
            NodeKind::Grad { .. } => "GatherGrad",
            NodeKind::TensorScatter { op, .. } => op.kind.tf_op(),
            NodeKind::TensorScatterGrad { .. } => "TensorScatterGrad",
            NodeKind::AddN { .. } => "AddN",
            NodeKind::OnesLike { .. } => "OnesLike",
            NodeKind::EmbeddingLookup { .. } => "EmbeddingLookup",
            NodeKind::EmbeddingBag { .. } => "EmbeddingBag",
            NodeKind::EmbeddingLookupSparse { .. } => "EmbeddingLookupSparse",
            NodeKind::Registered { op, .. } => op.name(),
            NodeKind::RegisteredGrad { .. } => "RegisteredGrad",
        }
    }
}

/// `options.grad(shape, indices, upstream)` for a tensor `upstream` of a dtype with a
/// gradient (the dtype table's `grad` role) and index tensor `indices`, dtype-erased.
macro_rules! grad_of {
    ($options:expr, $shape:expr, $indices:expr, $upstream:expr) => {
        with_tensor!(TensorView, $upstream, grad g => with_tensor!(TensorView, $indices,
            index i => Tensor::from($options.grad($shape, i, g)?),
            else dtype => return Err(Error::IndicesNotInteger { dtype }.into())),
        else found => return Err(OpError::DType { expected: DType::names_where(DType::has_grad), found }))
    };
}

impl NodeKind {
    /// The nodes whose values this one's evaluation reads (for a gradient: the upstream
    /// gradient and the forward op's inputs, not the forward op itself).
    pub(crate) fn inputs(&self, nodes: &[Node]) -> Vec<usize> {
        match self {
            NodeKind::Constant | NodeKind::Placeholder => vec![],
            NodeKind::Op {
                params,
                indices,
                axis,
                ..
            } => [*params, *indices].into_iter().chain(*axis).collect(),
            NodeKind::Grad { op, grad } => {
                let forward = nodes.get(*op).map(|f| f.kind.inputs(nodes));
                std::iter::once(*grad)
                    .chain(forward.into_iter().flatten())
                    .collect()
            }
            NodeKind::EmbeddingLookup { shards, ids, .. } => {
                shards.iter().copied().chain([*ids]).collect()
            }
            NodeKind::EmbeddingBag {
                shards,
                input,
                offsets,
                weights,
                ..
            } => shards
                .iter()
                .chain([input])
                .chain(offsets)
                .chain(weights)
                .copied()
                .collect(),
            NodeKind::TensorScatter {
                tensor,
                indices,
                updates,
                ..
            } => vec![*tensor, *indices, *updates],
            // The forward node's own value too: min and max compare with it, and a
            // registered op's gradient may read its output.
            NodeKind::TensorScatterGrad { forward, grad, .. }
            | NodeKind::RegisteredGrad { forward, grad, .. } => {
                let inputs = nodes.get(*forward).map(|f| f.kind.inputs(nodes));
                [*grad, *forward]
                    .into_iter()
                    .chain(inputs.into_iter().flatten())
                    .collect()
            }
            NodeKind::AddN { inputs } => inputs.clone(),
            NodeKind::OnesLike { of } => vec![*of],
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
            NodeKind::Registered { inputs, .. } => slot_nodes(inputs),
        }
    }

    /// Runs the node on its inputs' values. Constants and placeholders have no computation:
    /// their values are the graph's or the feeds', and asking here is an internal error.
    pub(crate) fn run<'v>(&self, nodes: &[Node], values: &impl Values<'v>) -> OpResult<Tensor> {
        let shards = |ids: &[usize]| -> OpResult<Vec<TensorView<'v>>> {
            ids.iter().map(|&s| values.value(s)).collect()
        };
        Ok(match self {
            NodeKind::Constant | NodeKind::Placeholder => {
                return Err(OpError::Internal(
                    "constants and placeholders are not computed".into(),
                ))
            }
            NodeKind::Op {
                op,
                params,
                indices,
                axis,
            } => {
                let op = with_axis(*op, *axis, values)?;
                let out = op.run(values.value(*params)?, &values.value(*indices)?, Out::New)?;
                out.ok_or(Error::Internal("a run into a new output returns it"))?
            }
            NodeKind::Grad { op, grad } => {
                let forward = nodes
                    .get(*op)
                    .ok_or_else(|| OpError::Internal(format!("no forward node {op}")))?;
                forward.kind.grad(&values.value(*grad)?, values)?
            }
            NodeKind::EmbeddingLookup {
                shards: s,
                ids,
                lookup,
            } => lookup.lookup_views(&shards(s)?, &values.value(*ids)?)?,
            NodeKind::EmbeddingBag {
                shards: s,
                input,
                offsets,
                weights,
                bag,
            } => {
                let offsets = offsets.map(|o| values.value(o)).transpose()?;
                let weights = weights.map(|w| values.value(w)).transpose()?;
                bag.bag_views(
                    &shards(s)?,
                    &values.value(*input)?,
                    offsets.as_ref(),
                    weights.as_ref(),
                )?
            }
            NodeKind::TensorScatter {
                op,
                tensor,
                indices,
                updates,
            } => op.run(
                values.value(*tensor)?,
                &values.value(*indices)?,
                &values.value(*updates)?,
            )?,
            NodeKind::TensorScatterGrad {
                forward,
                grad,
                updates: of_updates,
            } => {
                let Some(NodeKind::TensorScatter {
                    op,
                    tensor,
                    indices,
                    updates,
                }) = nodes.get(*forward).map(|f| &f.kind)
                else {
                    return Err(OpError::Internal(format!(
                        "node {forward} is not a tensor scatter"
                    )));
                };
                let (dt, du) = op.grad(
                    &values.value(*tensor)?,
                    &values.value(*indices)?,
                    &values.value(*updates)?,
                    &values.value(*forward)?,
                    &values.value(*grad)?,
                )?;
                if *of_updates {
                    du
                } else {
                    dt
                }
            }
            NodeKind::AddN { inputs } => add_n(&shards(inputs)?)?,
            NodeKind::OnesLike { of } => {
                let of = values.value(*of)?;
                let one = of
                    .dtype()
                    .fill_bytes(FillValue::float(1.0))?
                    .ok_or(Error::NotFixedWidth { dtype: of.dtype() })?;
                Tensor::from_bytes(
                    of.dtype(),
                    of.shape(),
                    &one.repeat(of.shape().iter().product()),
                )?
            }
            NodeKind::EmbeddingLookupSparse {
                shards: s,
                sparse: [i, v, d],
                weights,
                lookup,
                combiner,
            } => {
                let sparse = [values.value(*i)?, values.value(*v)?, values.value(*d)?];
                let w = weights.map(|w| values.value(w)).transpose()?;
                lookup.lookup_sparse_views(&shards(s)?, sparse, [None, w, None], *combiner)?
            }
            NodeKind::Registered { op, inputs } => run_registered(op.as_ref(), inputs, values)?,
            NodeKind::RegisteredGrad {
                forward,
                grad,
                input,
            } => run_registered_grad(nodes, *forward, *grad, *input, values)?,
        })
    }

    /// Runs the node into `out`, a caller's array of its dtype and shape: a gather op writes
    /// there directly, any other node is computed and copied in. On error `out` is
    /// unchanged.
    pub(crate) fn run_into<'v>(
        &self,
        nodes: &[Node],
        values: &impl Values<'v>,
        out: TensorViewMut<'_>,
    ) -> OpResult<()> {
        if let NodeKind::Op {
            op,
            params,
            indices,
            axis,
        } = self
        {
            let op = with_axis(*op, *axis, values)?;
            op.run(
                values.value(*params)?,
                &values.value(*indices)?,
                Out::Into(out),
            )?;
            return Ok(());
        }
        let value = self.run(nodes, values)?;
        Ok(assign(&value.view(), out)?)
    }

    /// The gradient of this gather with respect to params, for the upstream value
    /// `upstream`, reading the gather's inputs from `values`.
    fn grad<'v>(&self, upstream: &TensorView<'_>, values: &impl Values<'v>) -> OpResult<Tensor> {
        let NodeKind::Op {
            op,
            params,
            indices,
            axis,
        } = self
        else {
            return Err(OpError::Internal(
                "a gradient node whose forward op is not a gather".into(),
            ));
        };
        let params = values.value(*params)?;
        let shape = params.shape();
        let indices = &values.value(*indices)?;
        Ok(match with_axis(*op, *axis, values)? {
            Op::Gather(o) => grad_of!(o, shape, indices, upstream),
            Op::GatherNd(o) => grad_of!(o, shape, indices, upstream),
            Op::TakeAlongAxis(o) => grad_of!(o, shape, indices, upstream),
        })
    }
}

/// A Gather node's op with its axis: the value of its `axis` node, a scalar of `i32` or
/// `i64` (TensorFlow's `Taxis`); other ops as they are.
fn with_axis<'v>(op: Op, axis: Option<usize>, values: &impl Values<'v>) -> OpResult<Op> {
    let (Op::Gather(options), Some(axis)) = (op, axis) else {
        return Ok(op);
    };
    let axis = match values.value(axis)? {
        TensorView::I32(a) if a.ndim() == 0 => a.first().map(|&v| i64::from(v)),
        TensorView::I64(a) if a.ndim() == 0 => a.first().copied(),
        _ => None,
    };
    Ok(Op::Gather(
        options.axis(axis.ok_or(OpError::AxisNotScalar)?),
    ))
}

/// Copies `value` into `out`, a caller's array of its dtype and shape (left unchanged on
/// error).
pub(crate) fn assign(value: &TensorView<'_>, out: TensorViewMut<'_>) -> Result<(), Error> {
    if out.dtype() != value.dtype() {
        return Err(Error::DTypeMismatch {
            expected: value.dtype(),
            found: out.dtype(),
        });
    }
    with_tensor!(TensorView, value, fixed v => assign_typed(v, out),
        else dtype => Err(Error::NotFixedWidth { dtype }))
}

fn assign_typed<T: FixedWidth>(
    value: &ndarray::ArrayViewD<'_, T>,
    out: TensorViewMut<'_>,
) -> Result<(), Error> {
    let mut out = T::from_view_mut(out).ok_or(Error::Internal(
        "an output of the checked dtype has that dtype",
    ))?;
    if out.shape() != value.shape() {
        return Err(Error::OutputShapeMismatch {
            given: out.shape().to_vec(),
            expected: value.shape().to_vec(),
        });
    }
    out.assign(value);
    Ok(())
}

/// The sum of tensors of one dtype (with a gradient) and shape, added in order.
fn add_n(values: &[TensorView<'_>]) -> Result<Tensor, Error> {
    let (first, rest) = values
        .split_first()
        .ok_or(Error::Internal("AddN of no tensors"))?;
    let mut sum = first.to_tensor();
    let dtype = sum.dtype();
    with_tensor!(Tensor, &mut sum, grad a => add_into(a, rest)?,
        else dtype => return Err(Error::NotFixedWidth { dtype }));
    debug_assert_eq!(sum.dtype(), dtype);
    Ok(sum)
}

fn add_into<T: FixedWidth + std::ops::AddAssign>(
    sum: &mut ndarray::ArrayD<T>,
    rest: &[TensorView<'_>],
) -> Result<(), Error> {
    for v in rest {
        let v = T::from_view(v).ok_or(Error::DTypeMismatch {
            expected: T::DTYPE,
            found: v.dtype(),
        })?;
        if v.shape() != sum.shape() {
            return Err(Error::GradShapeMismatch {
                expected: sum.shape().to_vec(),
                found: v.shape().to_vec(),
            });
        }
        sum.zip_mut_with(&v, |s, &x| *s += x);
    }
    Ok(())
}

/// A registered node's input: node ids.
#[derive(Debug, Clone)]
pub(crate) enum Slot {
    One(usize),
    List(Vec<usize>),
    Absent,
}

impl Slot {
    pub(crate) fn nodes(&self) -> &[usize] {
        match self {
            Slot::One(n) => std::slice::from_ref(n),
            Slot::List(v) => v,
            Slot::Absent => &[],
        }
    }
}

/// The node ids that `slots` read.
pub(crate) fn slot_nodes(slots: &[Slot]) -> Vec<usize> {
    slots
        .iter()
        .flat_map(|s| s.nodes().iter().copied())
        .collect()
}

/// The values of `slots`, as the op's `run` and `grad` take them.
fn input_values<'v>(slots: &[Slot], values: &impl Values<'v>) -> OpResult<Vec<Input<'v>>> {
    slots
        .iter()
        .map(|s| {
            Ok(match s {
                Slot::One(n) => Input::Tensor(values.value(*n)?),
                Slot::List(v) => Input::List(
                    v.iter()
                        .map(|&n| values.value(n))
                        .collect::<OpResult<_>>()?,
                ),
                Slot::Absent => Input::None,
            })
        })
        .collect()
}

/// Runs a registered node on its inputs' values.
fn run_registered<'v>(
    op: &dyn OpDef,
    slots: &[Slot],
    values: &impl Values<'v>,
) -> OpResult<Tensor> {
    let inputs = input_values(slots, values)?;
    let value = op
        .run(&inputs, Out::New)?
        .ok_or(Error::Internal("a run into a new output returns it"))?;
    Ok(value.into_dense()?)
}

/// The gradient of the registered node `forward` with respect to its input `input`, for the
/// upstream gradient node `grad`.
fn run_registered_grad<'v>(
    nodes: &[Node],
    forward: usize,
    grad: usize,
    input: usize,
    values: &impl Values<'v>,
) -> OpResult<Tensor> {
    let Some(NodeKind::Registered { op, inputs }) = nodes.get(forward).map(|n| &n.kind) else {
        return Err(OpError::Internal(format!(
            "node {forward} is not a registered op"
        )));
    };
    let args = input_values(inputs, values)?;
    let output: TensorView<'_> = values.value(forward)?;
    let mut grads = op.grad(&args, &output, &values.value(grad)?)?;
    grads.get_mut(input).and_then(Option::take).ok_or_else(|| {
        OpError::Mode(format!(
            "{} has no gradient with respect to its input '{}'",
            op.name(),
            op.signature().inputs.get(input).map_or("?", |d| d.name)
        ))
    })
}
