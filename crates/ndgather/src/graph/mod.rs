//! TensorFlow's op-wrapper API (as in TF Java's `org.tensorflow.op`), for Rust.
//!
//! Ops are created in a [`Scope`], which is either **eager** (each op runs when it is created,
//! and its [`Output`] holds the value) or **graph** (ops are recorded, with static shapes
//! inferred at creation by the same shape rules as the eager functions; values come from a
//! [`Session`] that runs the graph with feeds for its placeholders).
//!
//! | TF Java | ndgather |
//! |---|---|
//! | `EagerSession` / `Graph` + `OpScope` | [`Scope::eager`] / [`Scope::graph`] |
//! | `scope.withName("x")`, `scope.withSubScope("s")` | [`Scope::with_name`], [`Scope::with_sub_scope`] |
//! | `Operand<T>`, `asOutput()` | [`Operand`], [`Operand::as_output`] |
//! | `Output<T>` (`op()`, `index()`, `dataType()`, `shape()`) | [`Output`] ([`Output::op_name`], [`Output::index`], [`Output::dtype`], [`Output::shape`]) |
//! | `Constant.create(scope, …)` | [`Constant::create`] |
//! | `Placeholder.create(scope, TFloat32.class, Placeholder.shape(…))` | [`Placeholder::create`] |
//! | `Gather.create(scope, params, indices, axis, Gather.batchDims(1L))` | [`Gather::create`] with [`GatherOpOptions::batch_dims`] |
//! | `GatherNd.create(scope, params, indices, GatherNd.badIndicesPolicy("IGNORE"))` | [`GatherNd::create`] with [`GatherNdOpOptions::bad_indices`] (one name across ndgather's front ends) |
//! | `op.output()` | [`Gather::output`], [`GatherNd::output`] |
//! | `session.runner().feed(p, t).fetch(o).run()` | [`Session::run`] with [`Feeds`] |
//! | the registered gradients of `GatherV2` / `GatherNd` | [`Gather::grad`], [`GatherNd::grad`] |
//! | `g.opBuilder("UnsortedSegmentMax", name)…build()` | [`Scope::op`] by TF's type or the registered name (`"unsorted_segment_max"`) with [`NodeInput`]s and [`crate::registry::Attrs`]; the node's type is TensorFlow's |
//! | an op's input tensor that TF's shape depends on (`GatherV2`'s axis, `num_segments`, `ScatterNd`'s shape) | [`Scope::op_fed`]: the attribute fed by a tensor, read when the graph runs |
//! | (beyond TF Java) NumPy's `take_along_axis` | [`TakeAlongAxis::create`], [`TakeAlongAxis::grad`] |
//!
//! [`Scope::op`] is the generic door (TF Java's `GraphOperationBuilder`): any op of
//! [`crate::registry`] by name, with its inputs and attributes, its static shape from the
//! op's own inference and its gradient from the op, so the segment reductions and
//! `gather_segment` are graph ops with gradients without a line of their own here. Every
//! node of an op holds the op's value from the registry and its inputs, with no arm of its
//! own: the typed ops ([`Scope::gather_nd`], [`Scope::embedding_bag`], ...) are sugar over
//! the same door, so the op's inference checks their inputs and gives the static shape, and
//! its [`crate::OpDef::type_name`] the node's type, as TensorFlow names it (`GatherNd`).
//! An attribute that TensorFlow takes as an input tensor (`GatherV2`'s axis, `num_segments`,
//! `ScatterNd`'s shape) is fed by a node ([`Scope::op_fed`]): in a graph it is read when the
//! graph runs, so a feed may replace even a constant one; the static shape is inferred from
//! a constant, as TensorFlow infers it, and a small integer constant's values are facts too
//! (an [`EmbeddingLookupSparse::create`]'s `dense_shape` gives its rows). Beyond TF
//! Java, `GatherNd` takes `batch_dims` (Python's `tf.gather_nd` has it), and
//! [`crate::BadIndices::Clamp`], [`crate::BadIndices::Negative`] and [`crate::BadIndices::Wrap`] are
//! accepted as policies.
//!
//! ```
//! use ndarray::array;
//! use ndgather::graph::{Constant, Feeds, Gather, GatherNd, GatherNdOpOptions, GatherOpOptions, Placeholder, Scope, Session};
//! use ndgather::shape::Shape;
//!
//! // Eager: ops run at once.
//! let scope = Scope::eager();
//! let params = Constant::create(&scope, array![["a", "b"], ["c", "d"]].mapv(String::from).into_dyn())?;
//! let indices = Constant::create(&scope, array![[0i32, 0], [1, 1]].into_dyn())?;
//! let op = GatherNd::create(&scope, &params, &indices, GatherNdOpOptions::new())?;
//! assert_eq!(op.output().value().unwrap(), array!["a", "d"].mapv(String::from).into_dyn());
//!
//! // Graph: shapes at creation, values from a session.
//! let graph = Scope::graph();
//! let p = Placeholder::<f32>::create(&graph, Shape::from_dims(vec![None, Some(2)]))?;
//! let i = Constant::create(&graph, array![[3i64], [1]].into_dyn())?;
//! let axis = Constant::scalar(&graph, 0i32)?;
//! let rows = Gather::create(&graph, &p, &i, &axis, GatherOpOptions::new())?;
//! assert_eq!(rows.output().shape().to_string(), "[2,1,2]");
//! let session = Session::new(&graph);
//! let feed = array![[0.0f32, 1.0], [10.0, 11.0], [20.0, 21.0], [30.0, 31.0]].into_dyn();
//! let out = session.run(&rows.output(), &Feeds::new().feed(&p, feed)?)?;
//! assert_eq!(out, array![[[30.0, 31.0]], [[10.0, 11.0]]].into_dyn());
//! # Ok::<(), ndgather::graph::OpError>(())
//! ```
//!
//! Types are checked by the compiler where Rust can tell: feeding a placeholder of `f32` with
//! integers, or passing float indices, does not compile.
//!
//! ```compile_fail
//! use ndgather::graph::{Feeds, Placeholder, Scope};
//! let graph = Scope::graph();
//! let p = Placeholder::<f32>::create(&graph, ndgather::shape::Shape::unknown()).unwrap();
//! let feeds = Feeds::new().feed(&p, ndarray::array![1i32, 2].into_dyn());
//! ```
//!
//! ```compile_fail
//! use ndgather::graph::{Constant, GatherNd, GatherNdOpOptions, Scope};
//! let scope = Scope::eager();
//! let p = Constant::create(&scope, ndarray::array![1.0f32, 2.0].into_dyn()).unwrap();
//! let i = Constant::create(&scope, ndarray::array![[0.0f32]].into_dyn()).unwrap();
//! let op = GatherNd::create(&scope, &p, &i, GatherNdOpOptions::new());
//! ```

mod embedding_ops;
mod erased_ops;
mod gather_ops;
mod grad_ops;
mod node;
mod op_error;
mod registered;
mod scope;
mod session;

pub use embedding_ops::{EmbeddingLookup, EmbeddingLookupSparse, EmbeddingOpOptions};
pub use erased_ops::AnyOutput;
pub use erased_ops::NodeInput;
pub use gather_ops::{
    AxisType, Constant, Gather, GatherNd, GatherNdOpOptions, GatherOpOptions, Placeholder,
    TakeAlongAxis,
};
pub use grad_ops::GradElement;
pub use op_error::{OpError, OpResult};
pub use scope::{Operand, Output, Scope};
pub use session::{Feeds, Session};
