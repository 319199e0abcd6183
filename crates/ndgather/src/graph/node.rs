//! The nodes of a graph, and the one place where a node runs: [`NodeKind::run`], used by
//! eager scopes when an op is created and by sessions when a graph runs.

use super::op_error::{OpError, OpResult};
use crate::ops::contract::{Input, OpDef};
use crate::ops::Out;
use crate::shape::Shape;
use crate::types::dtype::{DType, FixedWidth, Tensor, TensorView, TensorViewMut};
use crate::types::error::Error;
use crate::types::value::FillValue;
use crate::with_tensor;
use std::sync::Arc;

/// What a node computes: an op of the registry, configured, with no arm of its own; or the
/// graph's own inputs and gradient plumbing.
#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Constant,
    Placeholder,
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
    /// An op of the registry, configured, on its inputs: [`Scope::op`](super::Scope::op)'s
    /// nodes, and the typed ops' (`Gather`, `EmbeddingLookup`, ...), which name the node's
    /// type as TensorFlow does (`type_name`). `fed`: attributes that other nodes' values
    /// give when the graph runs (`GatherV2`'s axis, an input tensor in TensorFlow).
    Registered {
        op: Arc<dyn OpDef>,
        inputs: Vec<Slot>,
        type_name: &'static str,
        fed: Option<Fed>,
    },
    /// The gradient of the `Registered` node `forward` with respect to the input tensor at
    /// `input` in its gradients (`Slot::grad_positions`), for the upstream gradient `grad`.
    RegisteredGrad {
        forward: usize,
        grad: usize,
        input: usize,
    },
}

/// The op configured from the values of a node's fed attributes, in the order of
/// [`Fed::attrs`]: each a scalar's one value or a vector's values.
pub(crate) type Configure = dyn Fn(&[Vec<i64>]) -> Result<Arc<dyn OpDef>, Error> + Send + Sync;

/// Attributes of a registered node that other nodes' values give at run time, as
/// TensorFlow takes them as input tensors: integers (`int32` or `int64`) read from `nodes`,
/// each a scalar (rank 0) or a vector (rank 1) as `attrs` says, and the op configured from
/// them.
#[derive(Clone)]
pub(crate) struct Fed {
    pub(crate) nodes: Vec<usize>,
    pub(crate) attrs: Vec<(&'static str, usize)>,
    pub(crate) configure: Arc<Configure>,
}

impl std::fmt::Debug for Fed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fed")
            .field("nodes", &self.nodes)
            .field("attrs", &self.attrs)
            .finish()
    }
}

/// The most values a vector that feeds an attribute may have: TensorFlow's most dimensions
/// of a shape.
const MAX_FED: usize = 254;

/// The error for a fed attribute's tensor of the wrong rank, of static shape `shape`.
pub(crate) fn fed_shape(attr: &str, rank: usize, shape: &Shape) -> OpError {
    OpError::FedShape {
        attr: attr.to_string(),
        rank,
        shape: shape.to_string(),
    }
}

/// The integers of `view`, a fed attribute's tensor of `rank` (0: a scalar).
pub(crate) fn fed_values(view: &TensorView<'_>, attr: &str, rank: usize) -> OpResult<Vec<i64>> {
    if view.shape().len() != rank {
        return Err(fed_shape(attr, rank, &Shape::known(view.shape())));
    }
    let len = view.shape().iter().product::<usize>();
    if len > MAX_FED {
        return Err(OpError::FedTooLong {
            attr: attr.to_string(),
            len,
            max: MAX_FED,
        });
    }
    match view {
        TensorView::I32(a) => Ok(a.iter().map(|&v| i64::from(v)).collect()),
        TensorView::I64(a) => Ok(a.iter().copied().collect()),
        other => Err(OpError::DType {
            expected: "int32 or int64".to_string(),
            found: other.dtype(),
        }),
    }
}

impl Fed {
    /// The op configured by the fed nodes' values.
    fn op<'v>(&self, values: &impl Values<'v>) -> OpResult<Arc<dyn OpDef>> {
        let given = self
            .nodes
            .iter()
            .zip(&self.attrs)
            .map(|(&n, &(attr, rank))| fed_values(&values.value(n)?, attr, rank))
            .collect::<OpResult<Vec<_>>>()?;
        Ok((self.configure)(&given)?)
    }
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

impl NodeKind {
    /// Whether a gradient of this node reads its output (see `OpDef::grad_reads_output`).
    fn grad_reads_output(&self) -> bool {
        match self {
            NodeKind::Registered { op, .. } => op.grad_reads_output(),
            _ => true,
        }
    }

    /// What TF calls the op type of a node (for messages, and Java's `Operation.type()`).
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            NodeKind::Constant => "Const",
            NodeKind::Placeholder => "Placeholder",
            NodeKind::AddN { .. } => "AddN",
            NodeKind::OnesLike { .. } => "OnesLike",
            NodeKind::Registered { type_name, .. } => type_name,
            NodeKind::RegisteredGrad { .. } => "RegisteredGrad",
        }
    }
}

impl NodeKind {
    /// The nodes whose values this one's evaluation reads (for a gradient: the upstream
    /// gradient, the forward op's inputs, and the forward op itself only where its gradient
    /// reads its output).
    pub(crate) fn inputs(&self, nodes: &[Node]) -> Vec<usize> {
        match self {
            NodeKind::Constant | NodeKind::Placeholder => vec![],
            // The forward node's own value where its gradient reads it: min and max compare
            // with it; a gather's gradient does not.
            NodeKind::RegisteredGrad { forward, grad, .. } => {
                let node = nodes.get(*forward);
                let reads = node.is_some_and(|f| f.kind.grad_reads_output());
                let inputs = node.map(|f| f.kind.inputs(nodes));
                [*grad]
                    .into_iter()
                    .chain(reads.then_some(*forward))
                    .chain(inputs.into_iter().flatten())
                    .collect()
            }
            NodeKind::AddN { inputs } => inputs.clone(),
            NodeKind::OnesLike { of } => vec![*of],
            NodeKind::Registered { inputs, fed, .. } => {
                let mut nodes = slot_nodes(inputs);
                nodes.extend(fed.iter().flat_map(|f| f.nodes.iter().copied()));
                nodes
            }
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
            NodeKind::Registered {
                op, inputs, fed, ..
            } => {
                let op = configured(op, fed, values)?;
                let inputs = input_values(inputs, values)?;
                let value = op
                    .run(&inputs, Out::New)?
                    .ok_or(Error::Internal("a run into a new output returns it"))?;
                value.into_dense()?
            }
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
        if let NodeKind::Registered {
            op, inputs, fed, ..
        } = self
        {
            let op = configured(op, fed, values)?;
            op.run(&input_values(inputs, values)?, Out::Into(out))?;
            return Ok(());
        }
        let value = self.run(nodes, values)?;
        Ok(assign(&value.view(), out)?)
    }
}

/// A registered node's op, configured by its fed attributes where it has any.
fn configured<'v>(
    op: &Arc<dyn OpDef>,
    fed: &Option<Fed>,
    values: &impl Values<'v>,
) -> OpResult<Arc<dyn OpDef>> {
    match fed {
        Some(fed) => fed.op(values),
        None => Ok(op.clone()),
    }
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
    /// Where the gradient of each of the slot's nodes is in `OpDef::grad`'s result, the slot's
    /// first entry at `first`; and the first entry of the next slot.
    pub(crate) fn grad_positions(&self, first: usize) -> (std::ops::Range<usize>, usize) {
        let entries = match self {
            Slot::List(v) => v.len(),
            Slot::One(_) | Slot::Absent => 1,
        };
        let end = first + entries;
        (first..end, end)
    }

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

/// The gradient of the registered node `forward` with respect to its input `input`, for the
/// upstream gradient node `grad`.
fn run_registered_grad<'v>(
    nodes: &[Node],
    forward: usize,
    grad: usize,
    input: usize,
    values: &impl Values<'v>,
) -> OpResult<Tensor> {
    let Some(NodeKind::Registered {
        op, inputs, fed, ..
    }) = nodes.get(forward).map(|n| &n.kind)
    else {
        return Err(OpError::Internal(format!(
            "node {forward} is not a registered op"
        )));
    };
    // Whether the output is read is the stored op's answer, as `inputs` gives it.
    let reads = op.grad_reads_output();
    let op = configured(op, fed, values)?;
    let args = input_values(inputs, values)?;
    let output = match reads {
        true => Some(values.value(forward)?),
        false => None,
    };
    let mut grads = op.grad(&args, output.as_ref(), &values.value(grad)?)?;
    grads.get_mut(input).and_then(Option::take).ok_or_else(|| {
        OpError::Mode(format!(
            "{} has no gradient with respect to its input tensor {input}",
            op.name()
        ))
    })
}
