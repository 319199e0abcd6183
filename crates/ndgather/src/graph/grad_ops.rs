//! Gradients of the ops with respect to params (TF's registered gradients of `GatherV2` and
//! `GatherNd`), as ops of the same scope.

use super::gather_ops::{Gather, GatherNd, TakeAlongAxis};
use super::node::{slot_nodes, NodeKind, Slot};
use super::op_error::{OpError, OpResult};
use super::scope::{lock, Operand, Output, Scope};
use super::AnyOutput;
use crate::shape::Shape;
use crate::types::arith::Arith;
use crate::types::dtype::{DType, TensorElement};
use crate::types::error::Error;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// Element types with a gradient: the dtype table's `grad` role, the floating-point and
/// complex types (TensorFlow gives integer params no gradient).
pub trait GradElement: TensorElement + Arith + sealed::Sealed {}

macro_rules! impl_grad_elements {
    ({} $($v:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($r:ident)*];)*) => {$(
        crate::__if_role! {grad [$($r)*] {
            impl sealed::Sealed for $t {}
            impl GradElement for $t {}
        } else {}}
    )*};
}
crate::__dtype_table!([impl_grad_elements] {});

impl Scope {
    /// The gradient of the op `op` (an output of this scope: a `gather`, `gather_nd` or
    /// `take_along_axis`, or any op with a gradient) with respect to its first input (the
    /// gathers' params), for the upstream gradient `upstream` of `op`'s dtype and shape:
    /// TF's registered gradient, as an op whose output has that input's shape. The dtype
    /// must have a gradient (floating point or complex, as in TensorFlow).
    ///
    /// ```
    /// use ndgather::graph::{GatherOpOptions, Scope};
    /// use ndgather::{ndarray::{arr0, array}, Tensor};
    /// let scope = Scope::eager();
    /// let params = scope.constant(Tensor::from(array![1.0f32, 2.0, 3.0].into_dyn()));
    /// let ids = scope.constant(Tensor::from(array![2i32, 2, 0].into_dyn()));
    /// let axis = scope.constant(Tensor::from(arr0(0i32).into_dyn()));
    /// let rows = scope.gather(&params, &ids, &axis, GatherOpOptions::new())?;
    /// let upstream = scope.constant(Tensor::from(array![1.0f32, 10.0, 100.0].into_dyn()));
    /// let grad = scope.gradient(&rows, &upstream)?;
    /// assert_eq!(grad.value(), Some(Tensor::from(array![100.0f32, 0.0, 11.0].into_dyn())));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// [`OpError::ForeignOperand`]; [`OpError::DType`] for a dtype without a gradient or an
    /// upstream of another dtype; [`Error::GradShapeMismatch`] for an upstream whose
    /// static shape is not `op`'s; [`OpError::Mode`] for an op without a gradient.
    pub fn gradient(&self, op: &AnyOutput, upstream: &AnyOutput) -> OpResult<AnyOutput> {
        self.input_grad(op, upstream, 0)
    }

    /// The gradient node of the registered node `op` with respect to its input `input`, for
    /// the upstream gradient `upstream` of `op`'s dtype and shape.
    fn input_grad(
        &self,
        op: &AnyOutput,
        upstream: &AnyOutput,
        input: usize,
    ) -> OpResult<AnyOutput> {
        for o in [op, upstream] {
            if !Arc::ptr_eq(&o.graph, &self.graph) {
                return Err(OpError::ForeignOperand { name: o.op_name() });
            }
        }
        let (name, shape, position) = {
            let g = lock(&self.graph);
            let forward = &g.nodes[op.node];
            let (slot, position) = match &forward.kind {
                NodeKind::Registered { op, inputs, .. } if op.has_grad() => {
                    let before = inputs.iter().take(input);
                    let position = before.fold(0, |first, s| s.grad_positions(first).1);
                    (inputs.get(input), position)
                }
                _ => (None, 0),
            };
            let of = match slot {
                Some(Slot::One(of)) => of,
                // A table's shards: one gradient each, which this one-tensor answer cannot hold.
                Some(Slot::List(_)) => {
                    return Err(OpError::Mode(format!(
                    "'{}' ({}) reads a list of tensors; Scope::gradients gives each one's gradient",
                    forward.name,
                    forward.kind.type_name()
                )))
                }
                _ => {
                    return Err(OpError::Mode(format!(
                        "'{}' ({}) has no gradient here",
                        forward.name,
                        forward.kind.type_name()
                    )))
                }
            };
            if !forward.dtype.has_grad() {
                return Err(OpError::DType {
                    expected: DType::names_where(DType::has_grad),
                    found: forward.dtype,
                });
            }
            check_upstream(forward, &g.nodes[upstream.node])?;
            let name = format!("{}Grad", forward.kind.type_name());
            (name, g.nodes[*of].shape.clone(), position)
        };
        let kind = NodeKind::RegisteredGrad {
            forward: op.node,
            grad: upstream.node,
            input: position,
        };
        let node = self.add_op(&name, kind, op.dtype(), shape)?;
        Ok(self.any_output(node))
    }
}

impl Scope {
    /// TensorFlow's registered gradients of a [`Scope::tensor_scatter`] output `op`, for the
    /// upstream gradient `upstream` of its dtype and shape: `[d tensor, d updates]`, two ops
    /// of this scope of the tensor's and the updates' shapes (see
    /// [`TensorScatter::grad`](crate::tensor_scatter::TensorScatter::grad)).
    ///
    /// ```
    /// use ndgather::graph::Scope;
    /// use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
    /// use ndgather::{ndarray::array, Tensor};
    /// let scope = Scope::eager();
    /// let tensor = scope.constant(Tensor::from(array![1.0f32, 1.0, 1.0].into_dyn()));
    /// let indices = scope.constant(Tensor::from(array![[2i64], [0]].into_dyn()));
    /// let updates = scope.constant(Tensor::from(array![5.0f32, 6.0].into_dyn()));
    /// let out = scope.tensor_scatter(&tensor, &indices, &updates, TensorScatter::new(ScatterKind::Update))?;
    /// let upstream = scope.constant(Tensor::from(array![1.0f32, 2.0, 3.0].into_dyn()));
    /// let [dt, du] = scope.tensor_scatter_grad(&out, &upstream)?;
    /// assert_eq!(dt.value(), Some(Tensor::from(array![0.0f32, 2.0, 0.0].into_dyn())));
    /// assert_eq!(du.value(), Some(Tensor::from(array![3.0f32, 1.0].into_dyn())));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// [`OpError::ForeignOperand`]; [`OpError::Mode`] for an `op` that is not a tensor
    /// scatter; [`OpError::DType`] for an upstream of another dtype;
    /// [`Error::GradShapeMismatch`] for one of another static shape; in an eager
    /// scope, the gradient's own.
    pub fn tensor_scatter_grad(
        &self,
        op: &AnyOutput,
        upstream: &AnyOutput,
    ) -> OpResult<[AnyOutput; 2]> {
        let scatter = {
            let g = lock(&op.graph);
            match &g.nodes[op.node].kind {
                NodeKind::Registered { op, .. } => op.name().starts_with("tensor_scatter_nd_"),
                _ => false,
            }
        };
        if !scatter {
            return Err(OpError::Mode(format!(
                "'{}' is not a tensor scatter",
                op.op_name()
            )));
        }
        // The tensor's (input 0) and the updates' (input 2); indices have none.
        Ok([
            self.input_grad(op, upstream, 0)?,
            self.input_grad(op, upstream, 2)?,
        ])
    }
}

impl Scope {
    /// TensorFlow's `tf.gradients(ys, xs, grad_ys)` (TF Java's `Gradients` op): for each of
    /// `xs`, the sum over `ys` of the partial derivatives, with `grad_ys` (one per `y`, each
    /// of its dtype and shape; ones where `None`) as the upstream gradients. Gradients flow
    /// through every op whose value has a gradient (`OpDef::grad`: the gather family's
    /// params, the tensor and the updates of tensor scatters, the segment reductions' data),
    /// along its inputs of a float or complex dtype; paths that meet are added (`AddN`).
    /// Graphs only, as in TensorFlow.
    ///
    /// ```
    /// use ndgather::graph::{GatherOpOptions, Scope};
    /// use ndgather::{ndarray::{arr0, array}, shape::Shape, DType, Tensor};
    /// let graph = Scope::graph();
    /// let params = graph.placeholder(DType::F64, Shape::unknown())?;
    /// let ids = graph.constant(Tensor::from(array![2i32, 2, 0].into_dyn()));
    /// let axis = graph.constant(Tensor::from(arr0(0i32).into_dyn()));
    /// let rows = graph.gather(&params, &ids, &axis, GatherOpOptions::new())?;
    /// let grads = graph.gradients(&[rows], &[params.clone()], None)?;
    /// # let value = Tensor::from(array![1.0f64, 2.0, 3.0].into_dyn());
    /// # let feeds = ndgather::graph::Feeds::new().feed_tensor(&params, &value)?;
    /// # let out = ndgather::graph::Session::new(&graph).run_tensors(&grads, &feeds)?;
    /// # assert_eq!(out[0], Tensor::from(array![1.0f64, 0.0, 2.0].into_dyn()));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// [`OpError::Mode`] in an eager scope, for `grad_ys` of another length than `ys`, for
    /// an `x` that no `y` depends on through params (TF's "unreachable" message), and for a
    /// path through an op with no gradient; [`OpError::DType`] and
    /// [`Error::GradShapeMismatch`] for a `grad_ys` of another dtype or static shape than
    /// its `y`.
    pub fn gradients(
        &self,
        ys: &[AnyOutput],
        xs: &[AnyOutput],
        grad_ys: Option<&[AnyOutput]>,
    ) -> OpResult<Vec<AnyOutput>> {
        if self.is_eager() {
            return Err(OpError::Mode(
                "Gradients can be computed only in a graph execution environment".into(),
            ));
        }
        for o in ys.iter().chain(xs).chain(grad_ys.unwrap_or(&[])) {
            if !Arc::ptr_eq(&o.graph, &self.graph) {
                return Err(OpError::ForeignOperand { name: o.op_name() });
            }
        }
        if let Some(d) = grad_ys {
            if d.len() != ys.len() {
                return Err(OpError::Mode(format!(
                    "dx must have one gradient per y: {} for {} outputs",
                    d.len(),
                    ys.len()
                )));
            }
        }
        let is_x = |n: usize| xs.iter().any(|x| x.node == n);
        // Which nodes lead to an x: through the inputs of a gradient's dtype for the ops
        // with one (indices and axes have none), through any input for the others, so that a
        // path through one is reported.
        let (kinds, leads) = {
            let g = lock(&self.graph);
            let mut leads = vec![false; g.nodes.len()];
            for (n, node) in g.nodes.iter().enumerate() {
                let inputs = match &node.kind {
                    // Through the inputs that can have a gradient (indices and ids cannot).
                    NodeKind::Registered { op, inputs, .. } if op.has_grad() => {
                        let all = slot_nodes(inputs);
                        all.into_iter()
                            .filter(|&m| g.nodes[m].dtype.has_grad())
                            .collect()
                    }
                    kind => kind.inputs(&g.nodes),
                };
                leads[n] = is_x(n) || inputs.iter().any(|&m| leads[m]);
            }
            let kinds: Vec<(NodeKind, String)> = g
                .nodes
                .iter()
                .map(|n| (n.kind.clone(), n.name.clone()))
                .collect();
            (kinds, leads)
        };
        let mut pending: Vec<Vec<AnyOutput>> = vec![Vec::new(); kinds.len()];
        for (k, y) in ys.iter().enumerate() {
            let upstream = match grad_ys {
                Some(d) => d[k].clone(),
                None => {
                    let node = self.add_op(
                        "OnesLike",
                        NodeKind::OnesLike { of: y.node },
                        y.dtype(),
                        y.shape(),
                    )?;
                    self.any_output(node)
                }
            };
            pending[y.node].push(upstream);
        }
        let mut found: Vec<Option<AnyOutput>> = vec![None; kinds.len()];
        for n in (0..kinds.len()).rev() {
            if pending[n].is_empty() || !leads[n] {
                continue;
            }
            let total = self.add_n(std::mem::take(&mut pending[n]))?;
            if is_x(n) {
                found[n] = Some(total.clone());
            }
            match &kinds[n].0 {
                NodeKind::Constant | NodeKind::Placeholder => {}
                NodeKind::Registered { op, inputs, .. } if op.has_grad() => {
                    {
                        let g = lock(&self.graph);
                        check_upstream(&g.nodes[n], &g.nodes[total.node])?;
                    }
                    for (input, g) in self.registered_grads(n, inputs, &total, &leads)? {
                        pending[input].push(g);
                    }
                }
                kind if !is_x(n) => {
                    return Err(OpError::Mode(format!(
                        "No gradient defined for op: {}",
                        kind.type_name()
                    )))
                }
                _ => {}
            }
        }
        xs.iter()
            .map(|x| {
                found[x.node].clone().ok_or_else(|| {
                    OpError::Mode(format!(
                        "Cannot compute the partial derivative for node '{}' as it's \
                         unreachable from the output node(s).",
                        kinds[x.node].1
                    ))
                })
            })
            .collect()
    }

    /// The sum of gradients that reached one node (the gradient itself when alone).
    fn add_n(&self, mut grads: Vec<AnyOutput>) -> OpResult<AnyOutput> {
        if grads.len() == 1 {
            return Ok(grads.remove(0));
        }
        let (dtype, shape) = (grads[0].dtype(), grads[0].shape());
        for g in &grads[1..] {
            if g.dtype() != dtype {
                return Err(OpError::DType {
                    expected: dtype.to_string(),
                    found: g.dtype(),
                });
            }
        }
        let inputs = grads.iter().map(|g| g.node).collect();
        let node = self.add_op("AddN", NodeKind::AddN { inputs }, dtype, shape)?;
        Ok(self.any_output(node))
    }
}

/// Checks that an upstream gradient has the op output's dtype, and a static shape that can
/// be its.
fn check_upstream(forward: &super::node::Node, up: &super::node::Node) -> OpResult<()> {
    if up.dtype != forward.dtype {
        return Err(OpError::DType {
            expected: forward.dtype.to_string(),
            found: up.dtype,
        });
    }
    check_shapes(&forward.shape, &up.shape)
}

/// Checks that an upstream gradient's static shape can be the op output's.
fn check_shapes(op: &Shape, upstream: &Shape) -> OpResult<()> {
    if let (Some(a), Some(b)) = (op.dims(), upstream.dims()) {
        let compatible = a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.is_none() || y.is_none() || x == y);
        if !compatible {
            return Err(Error::GradShapeMismatch {
                expected: a.iter().map(|d| d.unwrap_or(0)).collect(),
                found: b.iter().map(|d| d.unwrap_or(0)).collect(),
            }
            .into());
        }
    }
    Ok(())
}

/// The typed ops' gradient: [`Scope::gradient`] on their outputs.
fn add_grad<T: GradElement>(
    scope: &Scope,
    op: Output<T>,
    upstream: Output<T>,
) -> OpResult<Output<T>> {
    let grad = scope.gradient(&op.erase(), &upstream.erase())?;
    Ok(scope.output(grad.node))
}

impl<T: GradElement> Gather<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(scope, self.output(), upstream.as_output())
    }
}

impl<T: GradElement> GatherNd<T> {
    /// The gradient with respect to params for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has params' shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(scope, self.output(), upstream.as_output())
    }
}

impl<T: GradElement> TakeAlongAxis<T> {
    /// The gradient with respect to `arr` for the upstream gradient `upstream` (of this
    /// op's output shape): an op whose output has `arr`'s shape.
    pub fn grad(&self, scope: &Scope, upstream: &impl Operand<T>) -> OpResult<Output<T>> {
        add_grad(scope, self.output(), upstream.as_output())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GatherOpOptions;
    use crate::tensor_scatter::{ScatterKind, TensorScatter};
    use crate::types::dtype::Tensor;
    use ndarray::{arr0, array};

    /// A gather's gradient reads the gather's inputs, not its output, so a graph does not
    /// compute the gather to differentiate it; a tensor_scatter_nd_max's reads its output.
    #[test]
    fn a_gradient_reads_the_forward_output_only_where_it_needs_it() {
        let g = Scope::graph();
        let params = g.placeholder(DType::F32, Shape::unknown()).unwrap();
        let ids = g.constant(Tensor::from(array![0i32].into_dyn()));
        let axis = g.constant(Tensor::from(arr0(0i32).into_dyn()));
        let rows = g
            .gather(&params, &ids, &axis, GatherOpOptions::new())
            .unwrap();
        let up = g.constant(Tensor::from(array![1.0f32].into_dyn()));
        let grad = g.gradient(&rows, &up).unwrap();
        let indices = g.constant(Tensor::from(array![[0i64]].into_dyn()));
        let max = TensorScatter::new(ScatterKind::Max);
        let scattered = g.tensor_scatter(&params, &indices, &up, max).unwrap();
        let [dt, _] = g.tensor_scatter_grad(&scattered, &up).unwrap();
        let graph = lock(&g.graph);
        let reads = |n: usize| graph.nodes[n].kind.inputs(&graph.nodes);
        assert!(!reads(grad.node).contains(&rows.node));
        assert!(reads(grad.node).contains(&params.node));
        assert!(reads(dt.node).contains(&scattered.node));
    }
}
