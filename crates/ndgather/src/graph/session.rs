//! Running a graph: feeds for placeholders, fetches of outputs.

use super::node::{Node, NodeKind};
use super::op_error::{OpError, OpResult};
use super::scope::{lock, Operand, Scope, SharedGraph};
use crate::shape::Shape;
use crate::types::dtype::{Tensor, TensorElement, TensorView};
use ndarray::ArrayD;
use std::collections::HashMap;
use std::sync::Arc;

/// Values for a run: placeholders' (or any outputs') values by node, owned or borrowed for
/// `'a` (a borrowed value is read where it lies, never copied).
#[derive(Debug, Clone, Default)]
pub struct Feeds<'a> {
    values: HashMap<usize, Value<'a>>,
    graph: Option<SharedGraph>,
}

/// A node's value in a run: computed by it (owned), or borrowed where it lies (a feed, a
/// constant, a view of memory another runtime lent).
#[derive(Debug, Clone)]
pub(crate) enum Value<'a> {
    Owned(Tensor),
    Borrowed(TensorView<'a>),
}

impl Value<'_> {
    pub(crate) fn view(&self) -> TensorView<'_> {
        match self {
            Value::Owned(t) => t.view(),
            Value::Borrowed(v) => v.reborrow(),
        }
    }

    fn into_owned(self) -> Tensor {
        match self {
            Value::Owned(t) => t,
            Value::Borrowed(v) => v.to_tensor(),
        }
    }
}

impl<'a> Feeds<'a> {
    /// No feeds.
    pub fn new() -> Feeds<'a> {
        Feeds::default()
    }

    /// Feeds `value` to `output` (a placeholder, usually). The value's shape must fit the
    /// output's static shape; the dtype is checked by the compiler.
    pub fn feed<T: TensorElement>(
        self,
        output: &impl Operand<T>,
        value: ArrayD<T>,
    ) -> OpResult<Feeds<'a>> {
        let o = output.as_output();
        self.feed_node(&o.graph, o.node, Value::Owned(T::into_tensor(value)))
    }

    /// Feeds `value` to node `node` of `graph`, its shape checked against the node's.
    pub(crate) fn feed_node(
        mut self,
        graph: &SharedGraph,
        node: usize,
        value: Value<'a>,
    ) -> OpResult<Feeds<'a>> {
        let (name, expected) = {
            let g = lock(graph);
            (g.nodes[node].name.clone(), g.nodes[node].shape.clone())
        };
        if let Some(g) = &self.graph {
            if !Arc::ptr_eq(g, graph) {
                return Err(OpError::ForeignOperand { name });
            }
        }
        let shape = value.view().shape().to_vec();
        if !expected.accepts(&shape) {
            return Err(OpError::FeedShape {
                name,
                expected: expected.to_string(),
                found: Shape::known(&shape).to_string(),
            });
        }
        self.graph = Some(graph.clone());
        self.values.insert(node, value);
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
        let outs: Vec<_> = fetches.iter().map(|f| f.as_output().erase()).collect();
        self.run_tensors(&outs, feeds)?
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

    /// Whether `graph` is this session's.
    pub(crate) fn owns(&self, graph: &SharedGraph) -> bool {
        Arc::ptr_eq(graph, &self.graph)
    }

    pub(crate) fn evaluate(&self, fetches: &[usize], feeds: &Feeds) -> OpResult<Vec<Tensor>> {
        let graph = lock(&self.graph);
        let mut values = self.values(&graph.nodes, fetches, feeds)?;
        // Results move out of the run; only a node fetched again later is copied.
        let mut results = Vec::with_capacity(fetches.len());
        for (k, &n) in fetches.iter().enumerate() {
            let value = if fetches[k + 1..].contains(&n) {
                values.get(&n).map(|v| v.view().to_tensor())
            } else {
                values.remove(&n).map(Value::into_owned)
            };
            results.push(
                value.ok_or_else(|| OpError::Internal(format!("fetch {n} was not evaluated")))?,
            );
        }
        Ok(results)
    }

    /// Evaluates `fetch` into `out`, a caller's array of its dtype and shape: the last op
    /// writes there directly (an op of the registry; a constant's, a placeholder's or a
    /// gradient's value is copied in). On error `out` is unchanged.
    pub(crate) fn evaluate_into(
        &self,
        fetch: usize,
        feeds: &Feeds,
        out: crate::types::dtype::TensorViewMut<'_>,
    ) -> OpResult<()> {
        let graph = lock(&self.graph);
        let node = graph
            .nodes
            .get(fetch)
            .ok_or_else(|| OpError::Internal(format!("no node {fetch}")))?;
        if out.dtype() != node.dtype {
            return Err(OpError::DType {
                expected: node.dtype.to_string(),
                found: out.dtype(),
            });
        }
        let computed = !feeds.values.contains_key(&fetch)
            && !matches!(node.kind, NodeKind::Constant | NodeKind::Placeholder);
        if computed {
            let inputs = node.kind.inputs(&graph.nodes);
            let values = self.values(&graph.nodes, &inputs, feeds)?;
            let lookup = |m: usize| values.get(&m).map(Value::view);
            node.kind.run_into(&graph.nodes, &lookup, out)
        } else {
            let values = self.values(&graph.nodes, &[fetch], feeds)?;
            let value = values
                .get(&fetch)
                .ok_or_else(|| OpError::Internal(format!("fetch {fetch} was not evaluated")))?;
            Ok(super::node::assign(&value.view(), out)?)
        }
    }

    /// The values of the nodes `fetches` need, each computed once, and at least the
    /// fetches'.
    fn values<'g>(
        &self,
        nodes: &'g [Node],
        fetches: &[usize],
        feeds: &'g Feeds,
    ) -> OpResult<HashMap<usize, Value<'g>>> {
        if let Some(g) = &feeds.graph {
            if !Arc::ptr_eq(g, &self.graph) {
                return Err(OpError::Mode("the feeds are for another graph".to_string()));
            }
        }
        let needed = needed(nodes, fetches, feeds);
        // Inputs precede their ops, so one pass in creation order evaluates everything.
        // Constants and feeds are borrowed, not copied per run; only computed values are owned.
        let mut values: HashMap<usize, Value<'g>> = HashMap::new();
        let mut readers = readers(nodes, &needed, feeds);
        for (n, node) in nodes.iter().enumerate().filter(|&(n, _)| needed[n]) {
            let value = match (feeds.values.get(&n), &node.kind) {
                (Some(fed), _) => Value::Borrowed(fed.view()),
                (None, NodeKind::Constant) => {
                    Value::Borrowed(node.value.as_ref().map(Tensor::view).ok_or_else(|| {
                        OpError::Internal(format!("constant '{}' without a value", node.name))
                    })?)
                }
                (None, NodeKind::Placeholder) => return Err(missing_feed(node)),
                (None, kind) => {
                    let lookup = |m: usize| values.get(&m).map(Value::view);
                    let value = kind.run(nodes, &lookup)?;
                    // A computed input that no later op reads and no fetch asks for is dead:
                    // its memory goes to the pool of fresh outputs, for this run's later ops
                    // and the next run's.
                    for m in kind.inputs(nodes) {
                        readers[m] -= 1;
                        if readers[m] == 0 && !fetches.contains(&m) {
                            if let Some(Value::Owned(dead)) = values.remove(&m) {
                                dead.recycle();
                            }
                        }
                    }
                    Value::Owned(value)
                }
            };
            values.insert(n, value);
        }
        Ok(values)
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

/// How many of the ops a run evaluates read each node's value (an op reading one input twice
/// counts twice).
fn readers(nodes: &[Node], needed: &[bool], feeds: &Feeds) -> Vec<usize> {
    let mut readers = vec![0; nodes.len()];
    let evaluated = |&(n, node): &(usize, &Node)| {
        needed[n]
            && !feeds.values.contains_key(&n)
            && !matches!(node.kind, NodeKind::Constant | NodeKind::Placeholder)
    };
    for (_, node) in nodes.iter().enumerate().filter(evaluated) {
        for m in node.kind.inputs(nodes) {
            readers[m] += 1;
        }
    }
    readers
}

fn missing_feed(node: &Node) -> OpError {
    OpError::MissingFeed {
        name: node.name.clone(),
        dtype: node.dtype,
        shape: node.shape.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{Constant, Feeds, Gather, GatherOpOptions, Placeholder, Scope, Session};
    use crate::shape::Shape;
    use ndarray::{Array1, ArrayD, IxDyn};

    /// A graph `rows = gather(table, all rows reversed)`, `picked = gather(rows, [0, 1, 2])`
    /// and `again` (the same as `picked`, a second reader of `rows`), of `u16` rows of 2 (a
    /// type and size no other unit test's outputs have, as the pool is process-wide): `rows`
    /// is a 6 MB intermediate.
    fn chain() -> (Scope, Placeholder<u16>, [Gather<u16>; 3], ArrayD<u16>) {
        let n = 1_500_007;
        let graph = Scope::graph();
        let table = Placeholder::<u16>::create(&graph, Shape::unknown()).unwrap();
        let all = Array1::from_iter((0..n as i64).rev()).into_dyn();
        let all = Constant::create(&graph, all).unwrap();
        let first = Constant::create(&graph, Array1::from(vec![0i64, 1, 2]).into_dyn()).unwrap();
        let axis = Constant::scalar(&graph, 0i32).unwrap();
        let options = GatherOpOptions::new;
        let rows = Gather::create(&graph, &table, &all, &axis, options()).unwrap();
        let picked = Gather::create(&graph, &rows.output(), &first, &axis, options()).unwrap();
        let again = Gather::create(&graph, &rows.output(), &first, &axis, options()).unwrap();
        let values = ArrayD::from_shape_fn(IxDyn(&[n, 2]), |ix| (ix[0] * 2 + ix[1]) as u16);
        (graph, table, [rows, picked, again], values)
    }

    #[test]
    fn a_dead_intermediate_goes_to_the_output_pool() {
        let _alone = crate::mem::recycle::pool_test_lock();
        let (graph, table, [rows, picked, again], values) = chain();
        let len = values.len();
        let feeds = Feeds::new().feed(&table, values.clone()).unwrap();
        let out = Session::new(&graph).run(&picked.output(), &feeds).unwrap();
        let n = len / 2;
        let expected =
            ndarray::Array2::from_shape_fn((3, 2), |(r, c)| ((n - 1 - r) * 2 + c) as u16);
        assert_eq!(out, expected.into_dyn());
        let kept = crate::mem::recycle::take::<u16>(len).expect("the intermediate's buffer");
        assert!(kept.capacity() >= len);
        // Fetched, the intermediate is the caller's: nothing goes to the pool.
        let both = Session::new(&graph)
            .run_many(&[&rows.output(), &picked.output()], &feeds)
            .unwrap();
        assert_eq!(both[0].shape(), values.shape());
        assert!(crate::mem::recycle::take::<u16>(len).is_none());
        // Read by two ops, it lives until the second has run.
        let two = Session::new(&graph)
            .run_many(&[&picked.output(), &again.output()], &feeds)
            .unwrap();
        assert_eq!(two[0], two[1]);
        assert_eq!(two[0], out);
        assert!(crate::mem::recycle::take::<u16>(len).is_some());
    }
}
