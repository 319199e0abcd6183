//! Running a graph: feeds for placeholders, fetches of outputs.

use super::graph::{lock, NodeKind, Operand, Scope, SharedGraph};
use super::ops::axis_value;
use super::{OpError, OpResult};
use crate::array::GatherOptions;
use crate::shape::Shape;
use crate::tensor::{Tensor, TensorElement};
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
            .ok_or_else(|| OpError::Mode("a run of one fetch returned nothing".into()))
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
                    expected: T::DTYPE.name().to_string(),
                    found: found.name().to_string(),
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
        // The ops the fetches need, stopping at fed outputs.
        let mut needed = vec![false; graph.nodes.len()];
        let mut stack: Vec<usize> = fetches.to_vec();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut needed[n], true) || feeds.values.contains_key(&n) {
                continue;
            }
            stack.extend(graph.nodes[n].kind.inputs(&graph.nodes));
        }
        // Inputs precede their ops, so one pass in creation order evaluates everything.
        // Constants and feeds are borrowed, not copied per run; only computed values are owned.
        let mut values: HashMap<usize, Cow<'_, Tensor>> = HashMap::new();
        fn input<'v>(
            values: &'v HashMap<usize, Cow<'_, Tensor>>,
            n: usize,
        ) -> OpResult<&'v Tensor> {
            values
                .get(&n)
                .map(|v| &**v)
                .ok_or_else(|| OpError::Mode(format!("input {n} was not evaluated")))
        }
        for (n, node) in graph.nodes.iter().enumerate().filter(|&(n, _)| needed[n]) {
            let value = if let Some(fed) = feeds.values.get(&n) {
                Cow::Borrowed(fed)
            } else {
                Cow::Owned(match &node.kind {
                    NodeKind::Constant => {
                        let constant = node.value.as_ref();
                        values.insert(
                            n,
                            Cow::Borrowed(
                                constant.ok_or_else(|| {
                                    OpError::Mode("constant without value".into())
                                })?,
                            ),
                        );
                        continue;
                    }
                    NodeKind::Placeholder => {
                        return Err(OpError::MissingFeed {
                            name: node.name.clone(),
                            dtype: node.dtype.name().to_string(),
                            shape: node.shape.to_string(),
                        })
                    }
                    NodeKind::Gather {
                        params,
                        indices,
                        axis,
                        options,
                    } => {
                        let axis =
                            axis_value(input(&values, *axis)?).ok_or(OpError::AxisNotScalar)?;
                        let o = GatherOptions::new()
                            .axis(axis)
                            .batch_dims(options.batch_dims);
                        input(&values, *params)?.gather(input(&values, *indices)?, &o)?
                    }
                    NodeKind::GatherNd {
                        params,
                        indices,
                        options,
                    } => input(&values, *params)?
                        .gather_nd(input(&values, *indices)?, &options.eager())?,
                    NodeKind::EmbeddingLookup {
                        shards,
                        ids,
                        options,
                    } => {
                        let shards = shards
                            .iter()
                            .map(|&s| input(&values, s))
                            .collect::<OpResult<Vec<_>>>()?;
                        options
                            .lookup
                            .lookup_tensors(&shards, input(&values, *ids)?)?
                    }
                    NodeKind::EmbeddingLookupSparse {
                        shards,
                        sparse,
                        weights,
                        options,
                    } => {
                        let shards = shards
                            .iter()
                            .map(|&s| input(&values, s))
                            .collect::<OpResult<Vec<_>>>()?;
                        let [i, v, d] = *sparse;
                        let sparse = [input(&values, i)?, input(&values, v)?, input(&values, d)?];
                        let w = weights.map(|w| input(&values, w)).transpose()?;
                        options.lookup.lookup_sparse_tensors(
                            &shards,
                            sparse,
                            w,
                            options.combiner,
                        )?
                    }
                    NodeKind::GatherGrad { op, grad } | NodeKind::GatherNdGrad { op, grad } => {
                        let forward = &graph.nodes[*op].kind;
                        super::grad::grad_value(forward, input(&values, *grad)?, |n| {
                            input(&values, n)
                        })?
                    }
                })
            };
            values.insert(n, value);
        }
        // Results move out of the run; only a node fetched again later is copied.
        let mut results = Vec::with_capacity(fetches.len());
        for (k, &n) in fetches.iter().enumerate() {
            let value = if fetches[k + 1..].contains(&n) {
                input(&values, n)?.clone()
            } else {
                values
                    .remove(&n)
                    .ok_or_else(|| OpError::Mode(format!("fetch {n} was not evaluated")))?
                    .into_owned()
            };
            results.push(value);
        }
        Ok(results)
    }
}
