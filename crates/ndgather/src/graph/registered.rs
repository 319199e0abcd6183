//! Any op of the registry as a node: [`Scope::op`] finds it by name, and the node holds the
//! configured op value and its inputs, with no arm of its own. Static shapes come from the
//! op's `infer`, values from its `run` and gradients from its `grad`, so an op registered
//! in the core is an op of the graph API too.

use super::erased_ops::{AnyOutput, NodeInput};
use super::node::{fed_shape, fed_values, Configure, Fed, NodeKind, Slot};
use super::op_error::{OpError, OpResult};
use super::scope::{lock, Scope};
use crate::ops::contract::{Attr, AttrKind, Attrs, Fact, InputKind, OpDef};
use crate::ops::registry;
use crate::shape::Shape;
use crate::types::dtype::DType;
use crate::types::error::Error;
use std::sync::Arc;

impl Scope {
    /// The registered op `name` (see [`crate::registry`]) on `inputs`, in its signature's
    /// order, configured by `attrs`: the generic door of the graph API, on which the typed
    /// ops are sugar. Its static shape is the op's own inference; in an eager scope it runs
    /// at once. Its gradients come from the op ([`Scope::gradients`]).
    ///
    /// ```
    /// use ndgather::graph::{NodeInput, Scope};
    /// use ndgather::registry::{Attr, Attrs};
    /// use ndgather::{ndarray::array, Tensor};
    /// let scope = Scope::eager();
    /// let data = scope.constant(Tensor::from(array![1.0f32, 5.0, 2.0].into_dyn()));
    /// let ids = scope.constant(Tensor::from(array![1i32, 1, 0].into_dyn()));
    /// let attrs = Attrs::new().with("num_segments", Attr::Int(3));
    /// let out = scope.op("unsorted_segment_max", &[(&data).into(), (&ids).into()], &attrs)?;
    /// assert_eq!(
    ///     out.value(),
    ///     Some(Tensor::from(array![2.0f32, 5.0, f32::MIN].into_dyn()))
    /// );
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownOp`]; [`Error::Attribute`] for attributes the op does
    /// not take; [`Error::OpInput`] for inputs that do not match its signature;
    /// [`OpError::ForeignOperand`]; the op's own errors, from what is known at creation
    /// (and, eagerly, from its run).
    pub fn op(&self, name: &str, inputs: &[NodeInput], attrs: &Attrs) -> OpResult<AnyOutput> {
        self.op_fed(name, inputs, attrs, &[])
    }

    /// [`Scope::op`] with attributes that tensors give, as TensorFlow takes them as inputs
    /// (`GatherV2`'s `axis`, `UnsortedSegmentSum`'s `num_segments`, `ScatterNd`'s `shape`,
    /// marked [`AttrDef::fed`](crate::registry::AttrDef::fed)): each `(name, tensor)` of
    /// `fed` is an integer attribute given by a scalar, or a list attribute given by a
    /// vector, of `int32` or `int64`. A value known now (a constant)
    /// gives the static shape; in a graph the value is read when it runs, so a feed may
    /// replace it.
    ///
    /// ```
    /// use ndgather::graph::{Feeds, Scope, Session};
    /// use ndgather::registry::Attrs;
    /// use ndgather::{ndarray::{arr0, array}, shape::Shape, DType, Tensor};
    /// let graph = Scope::graph();
    /// let data = graph.constant(Tensor::from(array![1.0f32, 5.0, 2.0].into_dyn()));
    /// let ids = graph.constant(Tensor::from(array![1i32, 1, 0].into_dyn()));
    /// let n = graph.placeholder(DType::I64, Shape::known(&[]))?;
    /// let sums = graph.op_fed("unsorted_segment_sum", &[(&data).into(), (&ids).into()],
    ///     &Attrs::new(), &[("num_segments", &n)])?;
    /// assert_eq!(sums.shape().to_string(), "[?]");
    /// let feeds = Feeds::new().feed_tensor(&n, Tensor::from(arr0(3i64).into_dyn()))?;
    /// let out = Session::new(&graph).run_tensors(&[sums], &feeds)?;
    /// assert_eq!(out[0], Tensor::from(array![2.0f32, 6.0, 0.0].into_dyn()));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Scope::op`]; [`Error::Attribute`] for an attribute that is not the op's, that
    /// no tensor may feed (not [`AttrDef::fed`](crate::registry::AttrDef::fed)), or that is
    /// given twice; [`OpError::DType`] and [`OpError::FedShape`] for a
    /// tensor that is not an integer scalar (or vector); when run, the op's errors for the
    /// values fed.
    pub fn op_fed(
        &self,
        name: &str,
        inputs: &[NodeInput],
        attrs: &Attrs,
        fed: &[(&str, &AnyOutput)],
    ) -> OpResult<AnyOutput> {
        let def = registry::find(name)?;
        if fed.is_empty() {
            return self.op_value(Arc::from(def.with_attrs(attrs)?), inputs);
        }
        let signature = def.signature();
        let mut given = Vec::with_capacity(fed.len());
        for &(attr, tensor) in fed {
            let refuse = |reason: &str| Error::Attribute {
                op: def.name(),
                attr: attr.to_string(),
                reason: reason.to_string(),
            };
            let Some(a) = signature.attrs.iter().find(|a| a.name == attr) else {
                return Err(refuse("is not an attribute of the op").into());
            };
            let rank = match (a.fed, a.kind) {
                (true, AttrKind::Int) => 0,
                (true, AttrKind::Ints) => 1,
                _ => return Err(crate::ops::contract::not_fed(def.name(), attr).into()),
            };
            if attrs.get(attr).is_some() || given.iter().any(|(n, _, _)| *n == a.name) {
                return Err(refuse("is given twice").into());
            }
            given.push((a.name, rank, tensor.clone()));
        }
        let names: Vec<(&'static str, usize)> = given.iter().map(|&(n, r, _)| (n, r)).collect();
        let attrs = attrs.clone();
        let configure = move |values: &[Vec<i64>]| -> Result<Arc<dyn OpDef>, Error> {
            let mut all = attrs.clone();
            for (&(name, rank), v) in names.iter().zip(values) {
                let value = match rank {
                    0 => Attr::Int(v.first().copied().unwrap_or(0)),
                    _ => Attr::Ints(v.clone()),
                };
                all.insert(name, value);
            }
            Ok(Arc::from(def.with_attrs(&all)?))
        };
        self.op_with_fed(Arc::new(configure), given, inputs)
    }

    /// An op whose attributes `fed` (name, rank, tensor) the tensors give, configured by
    /// `configure`: [`Scope::op_fed`]'s work, and the typed `Gather`'s. Values known now
    /// configure the op at once in an eager scope, and give the static shape in a graph.
    pub(crate) fn op_with_fed(
        &self,
        configure: Arc<Configure>,
        fed: Vec<(&'static str, usize, AnyOutput)>,
        inputs: &[NodeInput],
    ) -> OpResult<AnyOutput> {
        let mut known = Vec::with_capacity(fed.len());
        let mut open = vec![];
        for (attr, rank, tensor) in &fed {
            if !Arc::ptr_eq(&tensor.graph, &self.graph) {
                return Err(OpError::ForeignOperand {
                    name: tensor.op_name(),
                });
            }
            if !matches!(tensor.dtype(), DType::I32 | DType::I64) {
                return Err(OpError::DType {
                    expected: "int32 or int64".to_string(),
                    found: tensor.dtype(),
                });
            }
            let shape = tensor.shape();
            if shape.rank().is_some_and(|r| r != *rank) {
                return Err(fed_shape(attr, *rank, &shape));
            }
            match tensor.value() {
                Some(v) => known.push(fed_values(&v.view(), attr, *rank)?),
                None => {
                    open.push(*attr);
                    known.push(vec![]);
                }
            }
        }
        let op = configure(&known)?;
        // An eager scope knows every value: the op is configured now, and nothing is fed.
        if self.is_eager() && open.is_empty() {
            return self.op_node(op, inputs, None, &[]);
        }
        let fed = Fed {
            nodes: fed.iter().map(|(_, _, t)| t.node).collect(),
            attrs: fed.iter().map(|&(a, r, _)| (a, r)).collect(),
            configure,
        };
        self.op_node(op, inputs, Some(fed), &open)
    }

    /// [`Scope::op`] on a configured op value, the typed sugar's door: the node has the op's
    /// TensorFlow type and the static shape its inference gives.
    pub(crate) fn op_value(&self, op: Arc<dyn OpDef>, inputs: &[NodeInput]) -> OpResult<AnyOutput> {
        self.op_node(op, inputs, None, &[])
    }

    /// A node of `op` on `inputs`, with its attributes `fed` by other nodes where given
    /// (`open`: those whose values are not known now), named after the op's node name.
    fn op_node(
        &self,
        op: Arc<dyn OpDef>,
        inputs: &[NodeInput],
        fed: Option<Fed>,
        open: &[&str],
    ) -> OpResult<AnyOutput> {
        if !op.one_result() {
            return Err(Error::OpInput {
                op: op.name(),
                input: String::new(),
                reason: "gives a tensor per shard, which a graph node (one output) cannot \
                         hold; run it eagerly, through the registry"
                    .into(),
            }
            .into());
        }
        let signature = op.signature();
        let defs = signature.inputs;
        if inputs.len() > defs.len() || inputs.len() < signature.least_inputs() {
            return Err(crate::ops::contract::count_error(op.as_ref(), inputs.len()).into());
        }
        // Optional inputs left out at the end are absent.
        let absent = std::iter::repeat_n(&NodeInput::Absent, defs.len() - inputs.len());
        let mut slots = Vec::with_capacity(defs.len());
        for (input, def) in inputs.iter().chain(absent).zip(defs) {
            let given = |o: &AnyOutput| -> OpResult<usize> {
                if Arc::ptr_eq(&o.graph, &self.graph) {
                    Ok(o.node)
                } else {
                    Err(OpError::ForeignOperand { name: o.op_name() })
                }
            };
            let slot = match (input, def.kind) {
                (
                    NodeInput::One(o),
                    InputKind::Tensor | InputKind::MaybeRagged | InputKind::Elements,
                ) => Slot::One(given(o)?),
                (NodeInput::One(o), InputKind::Optional) => Slot::One(given(o)?),
                (NodeInput::Absent, kind) if kind.may_be_none() => Slot::Absent,
                (NodeInput::List(v), InputKind::List | InputKind::OptionalList) => {
                    Slot::List(v.iter().map(given).collect::<OpResult<_>>()?)
                }
                _ => {
                    let wants = match def.kind {
                        InputKind::List => "a list of tensors",
                        InputKind::OptionalList => "a list of tensors or none",
                        InputKind::Optional => "a tensor or none",
                        _ => "one tensor",
                    };
                    return Err(Error::OpInput {
                        op: op.name(),
                        input: def.name.to_string(),
                        reason: format!("takes {wants}"),
                    }
                    .into());
                }
            };
            slots.push(slot);
        }
        let fact = {
            let g = lock(&self.graph);
            // A small integer constant's values are facts too (a `dense_shape`).
            let fact_of = |n: usize| match &g.nodes[n].value {
                Some(v) => Fact::of(&v.view()),
                None => Fact::new(Some(g.nodes[n].dtype), g.nodes[n].shape.clone()),
            };
            // A list's tensors share one dtype (an embedding table's shards); its fact is
            // the first's. (Row splits may mix int32 and int64.)
            let lists = slots
                .iter()
                .zip(defs)
                .filter(|(_, d)| d.kind == InputKind::List);
            for nodes in lists.map(|(s, _)| s.nodes()) {
                if let Some(&other) = nodes
                    .iter()
                    .find(|&&n| g.nodes[n].dtype != g.nodes[nodes[0]].dtype)
                {
                    return Err(OpError::DType {
                        expected: g.nodes[nodes[0]].dtype.to_string(),
                        found: g.nodes[other].dtype,
                    });
                }
            }
            let facts: Vec<Fact> = slots
                .iter()
                .map(|s| {
                    s.nodes()
                        .first()
                        .map_or_else(Fact::unknown, |&n| fact_of(n))
                })
                .collect();
            op.infer_fed(&facts, open)?
        };
        // A dtype the facts leave open is the first input's (the data, the table); a node
        // needs one, so that input cannot be left out or empty in a graph.
        let dtype = match (fact.dtype, inputs.first()) {
            (Some(d), _) => d,
            (None, Some(NodeInput::One(o))) => o.dtype(),
            (None, Some(NodeInput::List(v))) if !v.is_empty() => v[0].dtype(),
            _ => {
                return Err(Error::OpInput {
                    op: op.name(),
                    input: defs.first().map_or("", |d| d.name).to_string(),
                    reason: "is needed as a node's dtype: give it".into(),
                }
                .into())
            }
        };
        let (name, type_name) = (op.node_name(), op.type_name());
        self.add_registered(name, type_name, op, slots, fed, dtype, fact.shape)
    }

    /// Adds a node of the registered op `op` on `inputs` (with `fed` attributes), of
    /// TensorFlow's type `type_name`, `dtype` and static shape `shape`: the one way every op
    /// of a graph is made, [`Scope::op`]'s and the typed sugar's.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_registered(
        &self,
        default_name: &str,
        type_name: &'static str,
        op: Arc<dyn OpDef>,
        inputs: Vec<Slot>,
        fed: Option<Fed>,
        dtype: DType,
        shape: Shape,
    ) -> OpResult<AnyOutput> {
        let kind = NodeKind::Registered {
            op,
            inputs,
            type_name,
            fed,
        };
        let node = self.add_op(default_name, kind, dtype, shape)?;
        Ok(self.any_output(node))
    }

    /// The gradient nodes of the registered node `n` for the upstream gradient `total`: one
    /// per input that leads to an x and has a gradient's dtype.
    pub(crate) fn registered_grads(
        &self,
        n: usize,
        slots: &[Slot],
        total: &AnyOutput,
        leads: &[bool],
    ) -> OpResult<Vec<(usize, AnyOutput)>> {
        let (mut grads, mut first) = (vec![], 0);
        for slot in slots {
            let (positions, next) = slot.grad_positions(first);
            first = next;
            for (position, &input) in positions.zip(slot.nodes()) {
                let (dtype, shape) = {
                    let g = lock(&self.graph);
                    (g.nodes[input].dtype, g.nodes[input].shape.clone())
                };
                if !leads[input] || !dtype.has_grad() {
                    continue;
                }
                let kind = NodeKind::RegisteredGrad {
                    forward: n,
                    grad: total.node,
                    input: position,
                };
                let node = self.add_op("RegisteredGrad", kind, dtype, shape)?;
                grads.push((input, self.any_output(node)));
            }
        }
        Ok(grads)
    }
}
