//! Scopes, the graph they add to, and the typed handles of op outputs.

use crate::shape::Shape;
use crate::types::dtype::{DType, Tensor, TensorElement};
use ndarray::ArrayD;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

use super::node::{Node, NodeKind};
use super::op_error::OpResult;

/// The ops of one graph (or of one eager context), in creation order: an op's inputs always
/// come before it.
#[derive(Debug, Default)]
pub(crate) struct GraphData {
    pub(crate) nodes: Vec<Node>,
    names: HashMap<String, usize>,
}

impl GraphData {
    /// TensorFlow's unique names: `name`, then `name_1`, `name_2`, …
    fn unique(&mut self, name: &str) -> String {
        let mut candidate = name.to_string();
        while let Some(count) = self.names.get(&candidate).copied() {
            self.names.insert(candidate.clone(), count + 1);
            candidate = format!("{name}_{count}");
        }
        self.names.insert(candidate.clone(), 1);
        candidate
    }
}

pub(crate) type SharedGraph = Arc<Mutex<GraphData>>;

pub(crate) fn lock(g: &SharedGraph) -> MutexGuard<'_, GraphData> {
    // A panic while the lock was held cannot leave a half-added node (nodes are pushed
    // whole), so a poisoned lock is still usable.
    g.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where ops are created: an eager context or a graph, a name scope, and the name of the
/// next op.
#[derive(Debug, Clone)]
pub struct Scope {
    pub(crate) graph: SharedGraph,
    eager: bool,
    prefix: String,
    name: Option<String>,
}

impl Scope {
    /// An eager scope: each op runs when created; its output holds the value.
    pub fn eager() -> Scope {
        Scope {
            graph: SharedGraph::default(),
            eager: true,
            prefix: String::new(),
            name: None,
        }
    }

    /// A graph scope: ops are recorded, and a [`super::Session`] runs them.
    pub fn graph() -> Scope {
        Scope {
            eager: false,
            ..Scope::eager()
        }
    }

    /// Whether ops run at creation.
    pub fn is_eager(&self) -> bool {
        self.eager
    }

    /// The same scope, naming the next op `name` (made unique as TensorFlow does).
    pub fn with_name(&self, name: &str) -> Scope {
        Scope {
            name: Some(name.to_string()),
            ..self.clone()
        }
    }

    /// A nested name scope: ops created in it are named `prefix/name/Op`. The sub-scope's own
    /// name is made unique, so two sub-scopes of one name do not share ops' names.
    pub fn with_sub_scope(&self, name: &str) -> Scope {
        let full = lock(&self.graph).unique(&format!("{}{name}", self.prefix));
        Scope {
            prefix: format!("{full}/"),
            name: None,
            ..self.clone()
        }
    }

    /// Adds a node with its value, if any: a constant's (or an eager op's), or none for a
    /// placeholder (or a graph's op). Returns its id.
    pub(crate) fn add_input(
        &self,
        default_name: &str,
        kind: NodeKind,
        dtype: DType,
        shape: Shape,
        value: Option<Tensor>,
    ) -> usize {
        let mut g = lock(&self.graph);
        let base = self.name.as_deref().unwrap_or(default_name);
        let name = g.unique(&format!("{}{base}", self.prefix));
        g.nodes.push(Node {
            name,
            kind,
            dtype,
            shape,
            value,
        });
        g.nodes.len() - 1
    }

    /// Adds an op of static shape `shape`; in an eager scope it runs now (the value's shape
    /// replaces the static one). Returns its id.
    pub(crate) fn add_op(
        &self,
        default_name: &str,
        kind: NodeKind,
        dtype: DType,
        shape: Shape,
    ) -> OpResult<usize> {
        let value = if self.eager {
            let g = lock(&self.graph);
            let nodes = &g.nodes;
            Some(kind.run(nodes, &|n: usize| {
                nodes
                    .get(n)
                    .and_then(|m| m.value.as_ref())
                    .map(Tensor::view)
            })?)
        } else {
            None
        };
        let shape = value.as_ref().map_or(shape, |v| Shape::known(v.shape()));
        Ok(self.add_input(default_name, kind, dtype, shape, value))
    }

    pub(crate) fn output<T: TensorElement>(&self, node: usize) -> Output<T> {
        Output {
            graph: self.graph.clone(),
            node,
            _t: PhantomData,
        }
    }
}

/// The symbolic handle of an op's output, of element type `T`.
#[derive(Debug)]
pub struct Output<T> {
    pub(crate) graph: SharedGraph,
    pub(crate) node: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Output<T> {
    fn clone(&self) -> Self {
        Output {
            graph: self.graph.clone(),
            node: self.node,
            _t: PhantomData,
        }
    }
}

impl<T: TensorElement> Output<T> {
    fn with_node<R>(&self, f: impl FnOnce(&Node) -> R) -> R {
        f(&lock(&self.graph).nodes[self.node])
    }

    /// The name of the op this is an output of.
    pub fn op_name(&self) -> String {
        self.with_node(|n| n.name.clone())
    }

    /// Which output of the op (the ops here have one: 0).
    pub fn index(&self) -> usize {
        0
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// The static shape (fully known in eager mode).
    pub fn shape(&self) -> Shape {
        self.with_node(|n| n.shape.clone())
    }

    /// The value: every output of an eager scope has one, and so does a graph's constant.
    pub fn value(&self) -> Option<ArrayD<T>> {
        self.with_node(|n| {
            n.value
                .as_ref()
                .and_then(|t| t.to_array::<T>().map(|a| a.into_owned()))
        })
    }

    /// The same output, its element type known at run time only.
    pub fn erase(&self) -> super::AnyOutput {
        super::AnyOutput {
            graph: self.graph.clone(),
            node: self.node,
        }
    }
}

/// Anything that gives an [`Output`]: outputs themselves and the ops.
pub trait Operand<T: TensorElement> {
    /// The symbolic handle of the tensor.
    fn as_output(&self) -> Output<T>;
}

impl<T: TensorElement> Operand<T> for Output<T> {
    fn as_output(&self) -> Output<T> {
        self.clone()
    }
}
