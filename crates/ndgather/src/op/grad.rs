//! Gradients of the ops with respect to params (TF's registered gradients of `GatherV2` and
//! `GatherNd`), as ops of the same scope.

use super::graph::{lock, NodeKind, Operand, Output, Scope};
use super::ops::{axis_value, Gather, GatherNd};
use super::{OpError, OpResult};
use crate::error::GatherError;
use crate::grad::{gather_grad, gather_nd_grad};
use crate::scatter::Summable;
use crate::shape::Shape;
use crate::tensor::{Tensor, TensorElement};
use half::{bf16, f16};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};

mod sealed {
    pub trait Sealed {}
}

/// Element types with a gradient: the floating-point and complex types (TensorFlow gives
/// integer params no gradient).
pub trait GradElement: TensorElement + Summable + sealed::Sealed {}

macro_rules! grad_elements {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl GradElement for $t {}
    )*};
}
grad_elements!(f16, bf16, f32, f64, Complex32, Complex64);

/// Runs `$call` with `$i` bound to the array inside an integer tensor.
macro_rules! with_index_array {
    ($indices:expr, $i:ident => $call:expr) => {
        match $indices {
            Tensor::I16($i) => $call,
            Tensor::I32($i) => $call,
            Tensor::I64($i) => $call,
            Tensor::U8($i) => $call,
            Tensor::U16($i) => $call,
            Tensor::U32($i) => $call,
            Tensor::U64($i) => $call,
            other => {
                return Err(GatherError::IndicesNotInteger {
                    dtype: other.dtype().name().to_string(),
                }
                .into())
            }
        }
    };
}

/// Runs `$call` with `$g` bound to the array inside a float or complex tensor.
macro_rules! with_grad_array {
    ($grad:expr, $g:ident => $call:expr) => {
        match $grad {
            Tensor::F16($g) => $call,
            Tensor::BF16($g) => $call,
            Tensor::F32($g) => $call,
            Tensor::F64($g) => $call,
            Tensor::C64($g) => $call,
            Tensor::C128($g) => $call,
            other => {
                return Err(OpError::DType {
                    expected: "a float or complex type".into(),
                    found: other.dtype().name().into(),
                })
            }
        }
    };
}

fn gather_grad_typed<T: GradElement>(
    shape: &[usize],
    indices: &Tensor,
    g: &ArrayD<T>,
    axis: i64,
    batch_dims: i64,
) -> OpResult<Tensor> {
    with_index_array!(indices, i => Ok(T::into_tensor(gather_grad(shape, i, g, axis, batch_dims)?)))
}

fn gather_nd_grad_typed<T: GradElement>(
    shape: &[usize],
    indices: &Tensor,
    g: &ArrayD<T>,
    batch_dims: i64,
) -> OpResult<Tensor> {
    with_index_array!(indices, i => Ok(T::into_tensor(gather_nd_grad(shape, i, g, batch_dims)?)))
}

/// The gradient of a `GatherV2` node, dtype-erased.
pub(crate) fn gather_grad_tensor(
    params_shape: &[usize],
    indices: &Tensor,
    grad: &Tensor,
    axis: &Tensor,
    batch_dims: i64,
) -> OpResult<Tensor> {
    let axis = axis_value(axis).ok_or(OpError::AxisNotScalar)?;
    with_grad_array!(grad, g => gather_grad_typed(params_shape, indices, g, axis, batch_dims))
}

/// The gradient of a `GatherNd` node, dtype-erased.
pub(crate) fn gather_nd_grad_tensor(
    params_shape: &[usize],
    indices: &Tensor,
    grad: &Tensor,
    batch_dims: i64,
) -> OpResult<Tensor> {
    with_grad_array!(grad, g => gather_nd_grad_typed(params_shape, indices, g, batch_dims))
}

fn check_upstream<T: TensorElement>(
    scope: &Scope,
    op: &Output<T>,
    upstream: &Output<T>,
) -> OpResult<()> {
    if !upstream.in_graph(scope) || !op.in_graph(scope) {
        return Err(OpError::ForeignOperand {
            name: upstream.op_name(),
        });
    }
    if let (Some(a), Some(b)) = (
        op.shape().dims().map(<[_]>::to_vec),
        upstream.shape().dims().map(<[_]>::to_vec),
    ) {
        let compatible = a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| x.is_none() || y.is_none() || x == y);
        if !compatible {
            return Err(GatherError::GradShapeMismatch {
                expected: a.iter().map(|d| d.unwrap_or(0)).collect(),
                found: b.iter().map(|d| d.unwrap_or(0)).collect(),
            }
            .into());
        }
    }
    Ok(())
}

/// The value of the gradient of the gather `forward` for the upstream value `upstream`,
/// reading the forward op's inputs through `value_of` (eager: the nodes' values; a session:
/// the values of the run).
pub(crate) fn grad_value<'a>(
    forward: &NodeKind,
    upstream: &Tensor,
    value_of: impl Fn(usize) -> OpResult<&'a Tensor>,
) -> OpResult<Tensor> {
    match forward {
        NodeKind::Gather {
            params,
            indices,
            axis,
            options,
        } => gather_grad_tensor(
            value_of(*params)?.shape(),
            value_of(*indices)?,
            upstream,
            value_of(*axis)?,
            options.batch_dims,
        ),
        NodeKind::GatherNd {
            params,
            indices,
            options,
        } => gather_nd_grad_tensor(
            value_of(*params)?.shape(),
            value_of(*indices)?,
            upstream,
            options.batch_dims,
        ),
        _ => Err(OpError::Mode(
            "gradient of an op that is not a gather".into(),
        )),
    }
}

/// Adds the gradient node of the gather `op` for `upstream`: params' static shape, and in an
/// eager scope its value.
fn add_grad<T: GradElement>(
    scope: &Scope,
    op: Output<T>,
    upstream: Output<T>,
    name: &str,
    kind: fn(usize, usize) -> NodeKind,
) -> OpResult<Output<T>> {
    check_upstream(scope, &op, &upstream)?;
    let (params_shape, value) = {
        let g = lock(&scope.graph);
        let forward = &g.nodes[op.node].kind;
        // params is the first input of both gathers.
        let params = forward.inputs(&g.nodes).first().copied();
        let shape = params.map_or(Shape::unknown(), |p| g.nodes[p].shape.clone());
        let value = match (scope.is_eager(), &g.nodes[upstream.node].value) {
            (true, Some(up)) => Some(grad_value(forward, up, |n| {
                g.nodes[n]
                    .value
                    .as_ref()
                    .ok_or_else(|| OpError::Mode("an eager input has no value".into()))
            })?),
            _ => None,
        };
        (shape, value)
    };
    let node = scope.add(
        name,
        kind(op.node, upstream.node),
        T::DTYPE,
        params_shape,
        value,
    );
    Ok(scope.output(node))
}

impl<T: GradElement> Gather<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(
            scope,
            self.output(),
            upstream.as_output(),
            "GatherGrad",
            |op, grad| NodeKind::GatherGrad { op, grad },
        )
    }
}

impl<T: GradElement> GatherNd<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(
            scope,
            self.output(),
            upstream.as_output(),
            "GatherNdGrad",
            |op, grad| NodeKind::GatherNdGrad { op, grad },
        )
    }
}
