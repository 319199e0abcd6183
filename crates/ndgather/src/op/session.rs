//! Running a graph: feeds for placeholders, fetches of outputs.

use super::error::{OpError, OpResult};
use super::graph::{lock, Operand, Scope, SharedGraph};
use super::node::{Node, NodeKind};
use crate::dtype::{Tensor, TensorElement};
use crate::shape::Shape;
use ndarray::ArrayD;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// Values for a run: placeholders' (or any outputs') values by node.
#[derive(Debug, Clone, Default)]
pub struct Feeds {
    values: HashMap<usize, Tensor>,
    graph: Option<SharedGraph>,
}

impl Feeds {
    /// No feeds.
    pub fn new() -> Feeds {
        Feeds::default()
    }

    /// Feeds `value` to `output` (a placeholder, usually). The value's shape must fit the
    /// output's static shape; the dtype is checked by the compiler.
    pub fn feed<T: TensorElement>(
        mut self,
        output: &impl Operand<T>,
        value: ArrayD<T>,
    ) -> OpResult<Feeds> {
        let o = output.as_output();
        if let Some(g) = &self.graph {
            if !Arc::ptr_eq(g, &o.graph) {
                return Err(OpError::ForeignOperand { name: o.op_name() });
            }
        }
        let expected = o.shape();
        if !expected.accepts(value.shape()) {
            return Err(OpError::FeedShape {
                name: o.op_name(),
                expected: expected.to_string(),
                found: Shape::known(value.shape()).to_string(),
            });
        }
        self.graph = Some(o.graph.clone());
        self.values.insert(o.node, T::into_tensor(value));
        Ok(self)
    }
}

/// Runs the ops of a graph scope.
#[derive(Debug, Clone)]
pub struct Session {
    graph: SharedGraph,
}

impl Session {
    /// A session over the graph of `scope`.
    pub fn new(scope: &Scope) -> Session {
        Session {
            graph: scope.graph.clone(),
        }
    }

    /// Evaluates `fetch`, running only the ops it needs, with `feeds`. Nothing is kept from
    /// one run to the next.
    pub fn run<T: TensorElement>(
        &self,
        fetch: &impl Operand<T>,
        feeds: &Feeds,
    ) -> OpResult<ArrayD<T>> {
        let mut results = self.run_many(&[fetch as &dyn Operand<T>], feeds)?;
        results
            .pop()
            .ok_or_else(|| OpError::Internal("a run of one fetch returned nothing".into()))
    }

    /// Evaluates several fetches in one run (shared ops run once).
    pub fn run_many<T: TensorElement>(
        &self,
        fetches: &[&dyn Operand<T>],
        feeds: &Feeds,
    ) -> OpResult<Vec<ArrayD<T>>> {
        let outs: Vec<_> = fetches.iter().map(|f| f.as_output()).collect();
        if let Some(o) = outs.iter().find(|o| !Arc::ptr_eq(&o.graph, &self.graph)) {
            return Err(OpError::ForeignOperand { name: o.op_name() });
        }
        let nodes: Vec<usize> = outs.iter().map(|o| o.node).collect();
        self.evaluate(&nodes, feeds)?
            .into_iter()
            .map(|t| {
                let found = t.dtype();
                t.into_array::<T>().map_err(|_| OpError::DType {
                    expected: T::DTYPE.to_string(),
                    found,
                })
            })
            .collect()
    }

    fn evaluate(&self, fetches: &[usize], feeds: &Feeds) -> OpResult<Vec<Tensor>> {
        if let Some(g) = &feeds.graph {
            if !Arc::ptr_eq(g, &self.graph) {
                return Err(OpError::Mode("the feeds are for another graph".to_string()));
            }
        }
        let graph = lock(&self.graph);
        let needed = needed(&graph.nodes, fetches, feeds);
        // Inputs precede their ops, so one pass in creation order evaluates everything.
        // Constants and feeds are borrowed, not copied per run; only computed values are owned.
        let mut values: HashMap<usize, Cow<'_, Tensor>> = HashMap::new();
        for (n, node) in graph.nodes.iter().enumerate().filter(|&(n, _)| needed[n]) {
            let value = match (feeds.values.get(&n), &node.kind) {
                (Some(fed), _) => Cow::Borrowed(fed),
                (None, NodeKind::Constant) => {
                    Cow::Borrowed(node.value.as_ref().ok_or_else(|| {
                        OpError::Internal(format!("constant '{}' without a value", node.name))
                    })?)
                }
                (None, NodeKind::Placeholder) => return Err(missing_feed(node)),
                (None, kind) => {
                    let lookup = |m: usize| values.get(&m).map(|v| &**v);
                    Cow::Owned(kind.run(&graph.nodes, &lookup)?)
                }
            };
            values.insert(n, value);
        }
        // Results move out of the run; only a node fetched again later is copied.
        let mut results = Vec::with_capacity(fetches.len());
        for (k, &n) in fetches.iter().enumerate() {
            let value = if fetches[k + 1..].contains(&n) {
                values.get(&n).map(|v| Tensor::clone(v))
            } else {
                values.remove(&n).map(Cow::into_owned)
            };
            results.push(
                value.ok_or_else(|| OpError::Internal(format!("fetch {n} was not evaluated")))?,
            );
        }
        Ok(results)
    }
}

/// Which nodes the fetches need, stopping at fed outputs.
fn needed(nodes: &[Node], fetches: &[usize], feeds: &Feeds) -> Vec<bool> {
    let mut needed = vec![false; nodes.len()];
    let mut stack: Vec<usize> = fetches.to_vec();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut needed[n], true) || feeds.values.contains_key(&n) {
            continue;
        }
        stack.extend(nodes[n].kind.inputs(nodes));
    }
    needed
}

fn missing_feed(node: &Node) -> OpError {
    OpError::MissingFeed {
        name: node.name.clone(),
        dtype: node.dtype,
        shape: node.shape.to_string(),
    }
}
