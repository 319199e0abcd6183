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

/// The static shape of an op's params, and in an eager scope the values the gradient needs.
fn forward_inputs(scope: &Scope, op: usize) -> (Shape, NodeKind, Vec<Option<Tensor>>) {
    let g = lock(&scope.graph);
    let kind = g.nodes[op].kind.clone();
    let value = |n: usize| g.nodes[n].value.clone();
    match &kind {
        NodeKind::Gather {
            params,
            indices,
            axis,
            ..
        } => (
            g.nodes[*params].shape.clone(),
            kind.clone(),
            vec![value(*indices), value(*axis)],
        ),
        NodeKind::GatherNd {
            params, indices, ..
        } => (
            g.nodes[*params].shape.clone(),
            kind.clone(),
            vec![value(*indices)],
        ),
        _ => (Shape::unknown(), kind.clone(), vec![]),
    }
}

impl<T: GradElement> Gather<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        let (op, up) = (self.output(), upstream.as_output());
        check_upstream(scope, &op, &up)?;
        let (params_shape, kind, inputs) = forward_inputs(scope, op.node);
        let NodeKind::Gather { options, .. } = kind else {
            return Err(OpError::Mode("not a Gather node".into()));
        };
        let value = match (
            scope.is_eager(),
            params_shape.to_known(),
            &inputs[..],
            up.value(),
        ) {
            (true, Some(shape), [Some(indices), Some(axis)], Some(g)) => Some(gather_grad_tensor(
                &shape,
                indices,
                &T::into_tensor(g),
                axis,
                options.batch_dims,
            )?),
            _ => None,
        };
        let node = scope.add(
            "GatherGrad",
            NodeKind::GatherGrad {
                op: op.node,
                grad: up.node,
            },
            T::DTYPE,
            params_shape,
            value,
        );
        Ok(scope.output(node))
    }
}

impl<T: GradElement> GatherNd<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        let (op, up) = (self.output(), upstream.as_output());
        check_upstream(scope, &op, &up)?;
        let (params_shape, kind, inputs) = forward_inputs(scope, op.node);
        let NodeKind::GatherNd { options, .. } = kind else {
            return Err(OpError::Mode("not a GatherNd node".into()));
        };
        let value = match (
            scope.is_eager(),
            params_shape.to_known(),
            &inputs[..],
            up.value(),
        ) {
            (true, Some(shape), [Some(indices)], Some(g)) => Some(gather_nd_grad_tensor(
                &shape,
                indices,
                &T::into_tensor(g),
                options.batch_dims,
            )?),
            _ => None,
        };
        let node = scope.add(
            "GatherNdGrad",
            NodeKind::GatherNdGrad {
                op: op.node,
                grad: up.node,
            },
            T::DTYPE,
            params_shape,
            value,
        );
        Ok(scope.output(node))
    }
}
