//! Gradients of the ops with respect to params (TF's registered gradients of `GatherV2` and
//! `GatherNd`), as ops of the same scope.

use super::gather_ops::{Gather, GatherNd, TakeAlongAxis};
use super::node::NodeKind;
use super::op_error::{OpError, OpResult};
use super::scope::{lock, Operand, Output, Scope};
use crate::ops::scatter::Summable;
use crate::shape::Shape;
use crate::types::dtype::TensorElement;
use crate::types::error::GatherError;

mod sealed {
    pub trait Sealed {}
}

/// Element types with a gradient: the dtype table's `grad` role, the floating-point and
/// complex types (TensorFlow gives integer params no gradient).
pub trait GradElement: TensorElement + Summable + sealed::Sealed {}

macro_rules! impl_grad_elements {
    ({} $($v:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($r:ident)*];)*) => {$(
        crate::__if_role! {grad [$($r)*] {
            impl sealed::Sealed for $t {}
            impl GradElement for $t {}
        } else {}}
    )*};
}
crate::__dtype_table!([impl_grad_elements] {});

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

/// Adds the gradient node of the gather `op` for `upstream`, of params' static shape (and
/// in an eager scope, its value).
fn add_grad<T: GradElement>(
    scope: &Scope,
    op: Output<T>,
    upstream: Output<T>,
    name: &str,
) -> OpResult<Output<T>> {
    check_upstream(scope, &op, &upstream)?;
    let params_shape = {
        let g = lock(&scope.graph);
        // params is the first input of every op of the family.
        let params = g.nodes[op.node].kind.inputs(&g.nodes).first().copied();
        params.map_or(Shape::unknown(), |p| g.nodes[p].shape.clone())
    };
    let kind = NodeKind::Grad {
        op: op.node,
        grad: upstream.node,
    };
    let node = scope.add_op(name, kind, T::DTYPE, params_shape)?;
    Ok(scope.output(node))
}

impl<T: GradElement> Gather<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(scope, self.output(), upstream.as_output(), "GatherGrad")
    }
}

impl<T: GradElement> GatherNd<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(scope, self.output(), upstream.as_output(), "GatherNdGrad")
    }
}

impl<T: GradElement> TakeAlongAxis<T> {
    /// The gradient with respect to `arr` for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has `arr`'s shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(
            scope,
            self.output(),
            upstream.as_output(),
            "TakeAlongAxisGrad",
        )
    }
}
