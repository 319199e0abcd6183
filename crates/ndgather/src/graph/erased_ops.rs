//! The op API for callers that know element types only at run time (the Java binding):
//! outputs without a Rust element type, and the gather ops on them. The typed API
//! ([`super::Gather::create`], …) is sugar over these, so both check shapes and name errors
//! the same way.

use super::embedding_ops::EmbeddingOpOptions;
use super::gather_ops::{GatherNdOpOptions, GatherOpOptions};
use super::node::NodeKind;
use super::op_error::{OpError, OpResult};
use super::scope::{lock, Scope, SharedGraph};
use super::session::{Feeds, Session, Value};
use crate::ops::contract::OpDef;
use crate::ops::lookup_ops::LookupSparse;
use crate::ops::take_along_axis::TakeAlongAxisOptions;
use crate::ops::Op;
use crate::shape::Shape;
use crate::types::dtype::{DType, Tensor, TensorView, TensorViewMut};
use crate::types::error::Error;
use std::borrow::Cow;
use std::sync::Arc;

/// The symbolic handle of an op's output, its element type known at run time.
#[derive(Debug, Clone)]
pub struct AnyOutput {
    pub(crate) graph: SharedGraph,
    pub(crate) node: usize,
}

impl AnyOutput {
    /// The name of the op this is an output of.
    pub fn op_name(&self) -> String {
        lock(&self.graph).nodes[self.node].name.clone()
    }

    /// The type of the op this is an output of, by TensorFlow's name where it has one
    /// (`GatherV2`, `GatherNd`, `Const`, `Placeholder`, `AddN`, ...).
    pub fn op_type(&self) -> &'static str {
        lock(&self.graph).nodes[self.node].kind.type_name()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        lock(&self.graph).nodes[self.node].dtype
    }

    /// The static shape (fully known in eager mode).
    pub fn shape(&self) -> Shape {
        lock(&self.graph).nodes[self.node].shape.clone()
    }

    /// The value: every output of an eager scope has one, and so does a graph's constant.
    pub fn value(&self) -> Option<Tensor> {
        lock(&self.graph).nodes[self.node].value.clone()
    }

    /// Whether `self` and `other` are outputs of the same graph.
    pub fn same_graph(&self, other: &AnyOutput) -> bool {
        Arc::ptr_eq(&self.graph, &other.graph)
    }
}

/// One input of [`Scope::op`](Scope::op), as the op's signature takes it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum NodeInput {
    /// One tensor.
    One(AnyOutput),
    /// A list of tensors (an embedding table's shards).
    List(Vec<AnyOutput>),
    /// An optional input left out.
    Absent,
}

impl From<&AnyOutput> for NodeInput {
    fn from(output: &AnyOutput) -> NodeInput {
        NodeInput::One(output.clone())
    }
}

impl Scope {
    pub(crate) fn any_output(&self, node: usize) -> AnyOutput {
        AnyOutput {
            graph: self.graph.clone(),
            node,
        }
    }

    /// A constant holding `value` (TF Java's `Constant.create`).
    ///
    /// ```
    /// use ndgather::graph::Scope;
    /// use ndgather::{ndarray::array, Tensor};
    /// let scope = Scope::eager();
    /// let c = scope.constant(Tensor::from(array![1.5f32, 2.5].into_dyn()));
    /// assert_eq!(c.shape().to_string(), "[2]");
    /// ```
    pub fn constant(&self, value: Tensor) -> AnyOutput {
        let (dtype, shape) = (value.dtype(), Shape::known(value.shape()));
        let node = self.add_input("Const", NodeKind::Constant, dtype, shape, Some(value));
        self.any_output(node)
    }

    /// A placeholder of `dtype` and static shape `shape` (graphs only).
    pub fn placeholder(&self, dtype: DType, shape: Shape) -> OpResult<AnyOutput> {
        if self.is_eager() {
            return Err(OpError::Mode(
                "placeholders exist only in graphs: an eager scope has nothing to feed them"
                    .to_string(),
            ));
        }
        let node = self.add_input("Placeholder", NodeKind::Placeholder, dtype, shape, None);
        Ok(self.any_output(node))
    }

    /// `GatherV2` on outputs of any dtype: the axis operand must be a scalar of int32 or
    /// int64, as TensorFlow's `Taxis`. It feeds the op's `axis` ([`Scope::op_fed`]).
    pub fn gather(
        &self,
        params: &AnyOutput,
        indices: &AnyOutput,
        axis: &AnyOutput,
        options: GatherOpOptions,
    ) -> OpResult<AnyOutput> {
        let options = options.gather;
        let configure = move |axis: &[Vec<i64>]| -> Result<Arc<dyn OpDef>, Error> {
            let axis = axis.first().and_then(|a| a.first()).copied().unwrap_or(0);
            Ok(Arc::new(Op::Gather(options.axis(axis))))
        };
        self.op_with_fed(
            Arc::new(configure),
            vec![("axis", 0, axis.clone())],
            &[params.into(), indices.into()],
        )
    }

    /// `GatherNd` on outputs of any dtype.
    pub fn gather_nd(
        &self,
        params: &AnyOutput,
        indices: &AnyOutput,
        options: GatherNdOpOptions,
    ) -> OpResult<AnyOutput> {
        let op = Arc::new(Op::GatherNd(options.gather_nd));
        self.op_value(op, &[params.into(), indices.into()])
    }

    /// `TakeAlongAxis` on outputs of any dtype.
    pub fn take_along_axis(
        &self,
        arr: &AnyOutput,
        indices: &AnyOutput,
        options: TakeAlongAxisOptions,
    ) -> OpResult<AnyOutput> {
        let op = Arc::new(Op::TakeAlongAxis(options));
        self.op_value(op, &[arr.into(), indices.into()])
    }
}

impl Scope {
    /// `EmbeddingLookup` on outputs of any dtype: `ids` of an index dtype into `shards` of
    /// one floating-point dtype (the table's `real` role).
    ///
    /// # Errors
    /// [`OpError::ForeignOperand`]; [`OpError::DType`] for shards of several dtypes; the
    /// op's inference's ([`Error::IndicesNotInteger`], [`Error::NoKernel`] for a table that
    /// is not of floats, [`Error::OpInput`] for no shards); in an eager scope, the op's own.
    pub fn embedding_lookup(
        &self,
        shards: &[AnyOutput],
        ids: &AnyOutput,
        options: EmbeddingOpOptions,
    ) -> OpResult<AnyOutput> {
        let inputs = [NodeInput::List(shards.to_vec()), ids.into()];
        self.op_value(Arc::new(options.lookup), &inputs)
    }

    /// `EmbeddingLookupSparse` on outputs of any dtype: the ids as a `SparseTensor`'s parts
    /// (`indices`, `values`, `dense_shape`), optional weights per id. A constant
    /// `dense_shape` gives the output's rows now.
    ///
    /// # Errors
    /// As [`Scope::embedding_lookup`].
    pub fn embedding_lookup_sparse(
        &self,
        shards: &[AnyOutput],
        sp_ids: (&AnyOutput, &AnyOutput, &AnyOutput),
        weights: Option<&AnyOutput>,
        options: EmbeddingOpOptions,
    ) -> OpResult<AnyOutput> {
        let inputs = [
            NodeInput::List(shards.to_vec()),
            sp_ids.0.into(),
            sp_ids.1.into(),
            sp_ids.2.into(),
            weights.map_or(NodeInput::Absent, NodeInput::from),
        ];
        let op = LookupSparse {
            lookup: options.lookup,
            combiner: options.combiner,
        };
        self.op_value(Arc::new(op), &inputs)
    }
}

impl Scope {
    /// PyTorch's `embedding_bag` on outputs of any dtype: `shards` of one floating-point
    /// dtype, `input` (2-D, or 1-D with `offsets` of its dtype) of an index dtype, optional
    /// per-sample weights of the shards' dtype; the options in `bag`.
    ///
    /// ```
    /// use ndgather::embedding_bag::{BagMode, EmbeddingBag};
    /// use ndgather::graph::Scope;
    /// use ndgather::{ndarray::array, Tensor};
    /// let scope = Scope::eager();
    /// let table = scope.constant(Tensor::from(array![[1.0f32], [2.0], [4.0]].into_dyn()));
    /// let input = scope.constant(Tensor::from(array![0i64, 2, 1].into_dyn()));
    /// let offsets = scope.constant(Tensor::from(array![0i64, 2].into_dyn()));
    /// let bags = scope.embedding_bag(&[table], &input, Some(&offsets), None,
    ///     EmbeddingBag::new(BagMode::Sum))?;
    /// assert_eq!(bags.value(), Some(Tensor::from(array![[5.0f32], [2.0]].into_dyn())));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// [`OpError::ForeignOperand`]; [`OpError::DType`] for shards of several dtypes; the
    /// op's inference's ([`Error::IndicesNotInteger`], [`Error::NoKernel`] for a table that
    /// is not of floats, [`Error::DTypeMismatch`] for weights or offsets of another dtype,
    /// [`Error::OpInput`] for no shards); in an eager scope, the op's own.
    pub fn embedding_bag(
        &self,
        shards: &[AnyOutput],
        input: &AnyOutput,
        offsets: Option<&AnyOutput>,
        per_sample_weights: Option<&AnyOutput>,
        bag: crate::embedding_bag::EmbeddingBag,
    ) -> OpResult<AnyOutput> {
        let optional = |o: Option<&AnyOutput>| o.map_or(NodeInput::Absent, NodeInput::from);
        let inputs = [
            NodeInput::List(shards.to_vec()),
            input.into(),
            optional(offsets),
            optional(per_sample_weights),
        ];
        self.op_value(Arc::new(bag), &inputs)
    }
}

impl Scope {
    /// TensorFlow's `tensor_scatter_nd_update`, `_add`, `_sub`, `_min` or `_max` (`op.kind`)
    /// on outputs of any dtype: `tensor` with `updates` (its dtype) applied at `indices` (an
    /// index dtype); the output has `tensor`'s dtype and shape. Its gradients are
    /// [`Scope::tensor_scatter_grad`]'s, and [`Scope::gradients`] flows through it.
    ///
    /// ```
    /// use ndgather::graph::Scope;
    /// use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
    /// use ndgather::{ndarray::array, Tensor};
    /// let scope = Scope::eager();
    /// let tensor = scope.constant(Tensor::from(array![1.0f32, 1.0, 1.0].into_dyn()));
    /// let indices = scope.constant(Tensor::from(array![[2i64], [2]].into_dyn()));
    /// let updates = scope.constant(Tensor::from(array![5.0f32, 6.0].into_dyn()));
    /// let out = scope.tensor_scatter(&tensor, &indices, &updates, TensorScatter::new(ScatterKind::Add))?;
    /// assert_eq!(out.value(), Some(Tensor::from(array![1.0f32, 1.0, 12.0].into_dyn())));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    ///
    /// # Errors
    /// [`OpError::ForeignOperand`]; the core's dtype errors ([`Error::NoKernel`],
    /// [`Error::InputDType`], [`Error::IndicesNotInteger`]); in an eager scope,
    /// the op's own.
    pub fn tensor_scatter(
        &self,
        tensor: &AnyOutput,
        indices: &AnyOutput,
        updates: &AnyOutput,
        op: crate::tensor_scatter::TensorScatter,
    ) -> OpResult<AnyOutput> {
        self.op_value(
            Arc::new(op),
            &[tensor.into(), indices.into(), updates.into()],
        )
    }
}

/// A fed value borrowed: read where it lies.
impl<'a> From<&'a Tensor> for Cow<'a, Tensor> {
    fn from(t: &'a Tensor) -> Cow<'a, Tensor> {
        Cow::Borrowed(t)
    }
}

/// A fed value given.
impl From<Tensor> for Cow<'_, Tensor> {
    fn from(t: Tensor) -> Self {
        Cow::Owned(t)
    }
}

impl<'a> Feeds<'a> {
    /// Feeds `value` to `output`: its dtype must be the output's, its shape must fit the
    /// output's static shape. A borrowed value (`&tensor`) is read where it lies.
    ///
    /// ```
    /// use ndgather::graph::{Feeds, GatherOpOptions, Scope, Session};
    /// use ndgather::{ndarray::array, shape::Shape, DType, Tensor};
    /// let graph = Scope::graph();
    /// let table = graph.placeholder(DType::F32, Shape::unknown())?;
    /// let ids = graph.constant(Tensor::from(array![1i32].into_dyn()));
    /// let axis = graph.constant(Tensor::from(ndgather::ndarray::arr0(0i32).into_dyn()));
    /// let rows = graph.gather(&table, &ids, &axis, GatherOpOptions::new())?;
    /// let value = Tensor::from(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn());
    /// let feeds = Feeds::new().feed_tensor(&table, &value)?;
    /// let out = Session::new(&graph).run_tensors(&[rows], &feeds)?;
    /// assert_eq!(out[0], Tensor::from(array![[3.0f32, 4.0]].into_dyn()));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    pub fn feed_tensor(
        self,
        output: &AnyOutput,
        value: impl Into<Cow<'a, Tensor>>,
    ) -> OpResult<Feeds<'a>> {
        let value = value.into();
        if value.dtype() != output.dtype() {
            return Err(OpError::DType {
                expected: output.dtype().to_string(),
                found: value.dtype(),
            });
        }
        let value = match value {
            Cow::Owned(t) => Value::Owned(t),
            Cow::Borrowed(t) => Value::Borrowed(t.view()),
        };
        self.feed_node(&output.graph, output.node, value)
    }

    /// Feeds a view to `output`: memory read where it lies for the run, such as a JVM's
    /// direct buffer or a mapped file ([`TensorView::from_bytes`]). Checked as
    /// [`Feeds::feed_tensor`] checks.
    ///
    /// ```
    /// use ndgather::graph::{Feeds, GatherOpOptions, Scope, Session};
    /// use ndgather::{ndarray::array, shape::Shape, DType, Tensor};
    /// let graph = Scope::graph();
    /// let table = graph.placeholder(DType::I32, Shape::unknown())?;
    /// let ids = graph.constant(Tensor::from(array![2i32, 0].into_dyn()));
    /// let axis = graph.constant(Tensor::from(ndgather::ndarray::arr0(0i32).into_dyn()));
    /// let rows = graph.gather(&table, &ids, &axis, GatherOpOptions::new())?;
    /// let values = array![10i32, 20, 30];
    /// let feeds = Feeds::new().feed_view(&table, values.view().into_dyn().into())?;
    /// let out = Session::new(&graph).run_tensors(&[rows], &feeds)?;
    /// assert_eq!(out[0], Tensor::from(array![30i32, 10].into_dyn()));
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    pub fn feed_view(self, output: &AnyOutput, value: TensorView<'a>) -> OpResult<Feeds<'a>> {
        if value.dtype() != output.dtype() {
            return Err(OpError::DType {
                expected: output.dtype().to_string(),
                found: value.dtype(),
            });
        }
        self.feed_node(&output.graph, output.node, Value::Borrowed(value))
    }
}

impl Session {
    /// Evaluates `fetches` in one run, with `feeds`: values of any dtype.
    pub fn run_tensors(&self, fetches: &[AnyOutput], feeds: &Feeds) -> OpResult<Vec<Tensor>> {
        if let Some(o) = fetches.iter().find(|o| !self.owns(&o.graph)) {
            return Err(OpError::ForeignOperand { name: o.op_name() });
        }
        let nodes: Vec<usize> = fetches.iter().map(|o| o.node).collect();
        self.evaluate(&nodes, feeds)
    }

    /// Evaluates `fetch` into `out`, a caller's array of its dtype and shape, any layout:
    /// the last op writes its result there, with no output of its own (a memory-mapped file,
    /// a JVM's direct buffer). On error `out` is unchanged.
    ///
    /// ```
    /// use ndgather::graph::{Feeds, GatherOpOptions, Scope, Session};
    /// use ndgather::{ndarray::{array, Array1}, DType, Tensor};
    /// let graph = Scope::graph();
    /// let table = graph.constant(Tensor::from(array![10i32, 20, 30].into_dyn()));
    /// let ids = graph.constant(Tensor::from(array![2i32, 0].into_dyn()));
    /// let axis = graph.constant(Tensor::from(ndgather::ndarray::arr0(0i32).into_dyn()));
    /// let rows = graph.gather(&table, &ids, &axis, GatherOpOptions::new())?;
    /// let mut out = Array1::<i32>::zeros(2);
    /// Session::new(&graph).run_into(&rows, &Feeds::new(), out.view_mut().into_dyn().into())?;
    /// assert_eq!(out, array![30, 10]);
    /// // The wrong shape is an error, and the buffer is unchanged.
    /// let mut three = Array1::<i32>::zeros(3);
    /// let session = Session::new(&graph);
    /// assert!(session.run_into(&rows, &Feeds::new(), three.view_mut().into_dyn().into()).is_err());
    /// assert_eq!(three, array![0, 0, 0]);
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    pub fn run_into(
        &self,
        fetch: &AnyOutput,
        feeds: &Feeds,
        out: TensorViewMut<'_>,
    ) -> OpResult<()> {
        if !self.owns(&fetch.graph) {
            return Err(OpError::ForeignOperand {
                name: fetch.op_name(),
            });
        }
        self.evaluate_into(fetch.node, feeds, out)
    }
}
