//! Attributes that tensors feed (`Scope::op_fed`), as TensorFlow takes `GatherV2`'s axis,
//! `UnsortedSegmentSum`'s `num_segments` and `ScatterNd`'s `shape` as inputs; and shapes
//! that depend on a constant's values (`embedding_lookup_sparse`'s `dense_shape`).

use ndarray::{arr0, array};
use ndgather::graph::{AnyOutput, Feeds, NodeInput, OpError, Scope, Session};
use ndgather::registry::{self, Attr, Attrs, Fact};
use ndgather::shape::Shape;
use ndgather::{DType, Error, Tensor};

fn t<T: ndgather::TensorElement>(a: ndarray::ArrayD<T>) -> Tensor {
    T::into_tensor(a)
}

fn segment_sum(scope: &Scope, n: &AnyOutput) -> Result<AnyOutput, OpError> {
    let data = scope.constant(t(array![1.0f32, 5.0, 2.0].into_dyn()));
    let ids = scope.constant(t(array![1i32, 1, 0].into_dyn()));
    let inputs: [NodeInput; 2] = [(&data).into(), (&ids).into()];
    let attrs = Attrs::new();
    scope.op_fed(
        "unsorted_segment_sum",
        &inputs,
        &attrs,
        &[("num_segments", n)],
    )
}

#[test]
fn a_placeholder_feeds_num_segments_when_the_graph_runs() {
    let g = Scope::graph();
    let n = g.placeholder(DType::I32, Shape::unknown()).unwrap();
    let sums = segment_sum(&g, &n).unwrap();
    assert_eq!(sums.shape().to_string(), "[?]");
    assert_eq!(sums.op_type(), "UnsortedSegmentSum");
    let session = Session::new(&g);
    for (rows, want) in [(2, vec![2.0f32, 6.0]), (4, vec![2.0, 6.0, 0.0, 0.0])] {
        let feeds = Feeds::new()
            .feed_tensor(&n, t(arr0(rows).into_dyn()))
            .unwrap();
        let out = session
            .run_tensors(std::slice::from_ref(&sums), &feeds)
            .unwrap();
        assert_eq!(out[0], t(ndarray::Array1::from(want).into_dyn()));
    }
    // The op's own check of the value fed, when it runs.
    let feeds = Feeds::new()
        .feed_tensor(&n, t(arr0(-1i32).into_dyn()))
        .unwrap();
    let err = session
        .run_tensors(std::slice::from_ref(&sums), &feeds)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Input num_segments == -1 must not be negative."
    );
    // A vector is not a scalar.
    let feeds = Feeds::new()
        .feed_tensor(&n, t(array![3i32].into_dyn()))
        .unwrap();
    let err = session.run_tensors(&[sums], &feeds).unwrap_err();
    assert_eq!(
        err.to_string(),
        "num_segments should be a scalar, not shape [1]"
    );
}

#[test]
fn a_constant_gives_the_static_shape_and_eager_runs_at_once() {
    let g = Scope::graph();
    let n = g.constant(t(arr0(3i64).into_dyn()));
    let sums = segment_sum(&g, &n).unwrap();
    assert_eq!(sums.shape().to_string(), "[3]");
    let out = Session::new(&g)
        .run_tensors(&[sums], &Feeds::new())
        .unwrap();
    assert_eq!(out[0], t(array![2.0f32, 6.0, 0.0].into_dyn()));

    let e = Scope::eager();
    let n = e.constant(t(arr0(2i32).into_dyn()));
    let sums = segment_sum(&e, &n).unwrap();
    assert_eq!(sums.value(), Some(t(array![2.0f32, 6.0].into_dyn())));
}

/// `scatter_nd` of constant `indices` and `updates` in `g`, its shape fed by a placeholder
/// vector of `len` values; the node and the placeholder.
fn scatter_nd_fed(
    g: &Scope,
    indices: Tensor,
    updates: Tensor,
    len: usize,
) -> (AnyOutput, AnyOutput) {
    let (indices, updates) = (g.constant(indices), g.constant(updates));
    let shape = g.placeholder(DType::I64, Shape::known(&[len])).unwrap();
    let inputs: [NodeInput; 2] = [(&indices).into(), (&updates).into()];
    let out = g
        .op_fed("scatter_nd", &inputs, &Attrs::new(), &[("shape", &shape)])
        .unwrap();
    (out, shape)
}

#[test]
fn a_vector_feeds_scatter_nd_shape() {
    let g = Scope::graph();
    let updates = t(array![5.0f64, 7.0].into_dyn());
    let (out, shape) = scatter_nd_fed(&g, t(array![[1i64], [3]].into_dyn()), updates, 1);
    assert_eq!(out.dtype(), DType::F64);
    assert!(out.shape().rank().is_none());
    let feeds = Feeds::new()
        .feed_tensor(&shape, t(array![5i64].into_dyn()))
        .unwrap();
    let value = Session::new(&g).run_tensors(&[out], &feeds).unwrap();
    assert_eq!(value[0], t(array![0.0f64, 5.0, 0.0, 7.0, 0.0].into_dyn()));
}

#[test]
fn fed_attributes_are_checked_when_the_node_is_built() {
    let g = Scope::graph();
    let data = g.constant(t(array![1.0f32, 5.0].into_dyn()));
    let ids = g.constant(t(array![0i32, 1].into_dyn()));
    let inputs: [NodeInput; 2] = [(&data).into(), (&ids).into()];
    let n = g.placeholder(DType::I32, Shape::unknown()).unwrap();
    let attr_error = |name: &str, attrs: &Attrs, fed: &AnyOutput| match g.op_fed(
        name,
        &inputs,
        attrs,
        &[("num_segments", fed)],
    ) {
        Err(OpError::Gather(Error::Attribute { attr, reason, .. })) => (attr, reason),
        other => panic!("{other:?}"),
    };
    // An op whose attribute no tensor may feed in TensorFlow either.
    let (attr, reason) = attr_error("segment_sum", &Attrs::new(), &n);
    assert_eq!(attr, "num_segments");
    assert!(reason.contains("not an attribute"), "{reason}");
    // Given twice.
    let twice = Attrs::new().with("num_segments", Attr::Int(2));
    let (_, reason) = attr_error("unsorted_segment_sum", &twice, &n);
    assert!(reason.contains("twice"), "{reason}");
    // Not an integer attribute.
    let err = g
        .op_fed(
            "unsorted_segment_sum",
            &inputs,
            &Attrs::new(),
            &[("bad_indices", &n)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("cannot be fed"), "{err}");
    // An integer attribute the op fixes when it is built.
    let axis = g.constant(t(arr0(0i32).into_dyn()));
    let err = g
        .op_fed(
            "gather_nd",
            &[(&data).into(), (&ids).into()],
            &Attrs::new(),
            &[("batch_dims", &axis)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("cannot be fed"), "{err}");
    // A float tensor, or one of the wrong rank.
    let float = g.placeholder(DType::F32, Shape::unknown()).unwrap();
    let err = segment_sum(&g, &float).unwrap_err();
    assert_eq!(
        err,
        OpError::DType {
            expected: "int32 or int64".into(),
            found: DType::F32
        }
    );
    let vector = g.placeholder(DType::I64, Shape::known(&[2])).unwrap();
    assert_eq!(
        segment_sum(&g, &vector).unwrap_err().to_string(),
        "num_segments should be a scalar, not shape [2]"
    );
    // A tensor of another graph.
    let other = Scope::graph().constant(t(arr0(2i32).into_dyn()));
    assert!(matches!(
        segment_sum(&g, &other).unwrap_err(),
        OpError::ForeignOperand { .. }
    ));
}

/// A vector longer than any shape is refused before its values are read as one.
#[test]
fn a_fed_vector_longer_than_any_shape_is_refused() {
    let g = Scope::graph();
    let updates = t(array![5.0f32].into_dyn());
    let (out, shape) = scatter_nd_fed(&g, t(array![[1i64]].into_dyn()), updates, 255);
    let long = t(ndarray::Array1::<i64>::ones(255).into_dyn());
    let feeds = Feeds::new().feed_tensor(&shape, &long).unwrap();
    let err = Session::new(&g).run_tensors(&[out], &feeds).unwrap_err();
    assert_eq!(
        err.to_string(),
        "shape has 255 values, more than the 254 dimensions a shape may have"
    );
}

/// Nodes are named as TF Java names them: `Gather` for `GatherV2`, by either door.
#[test]
fn gather_nodes_are_named_as_tf_java_names_them() {
    let g = Scope::graph();
    let params = g.constant(t(array![1.0f32, 2.0].into_dyn()));
    let ids = g.constant(t(array![1i32].into_dyn()));
    let axis = g.constant(t(arr0(0i32).into_dyn()));
    let typed = g
        .gather(
            &params,
            &ids,
            &axis,
            ndgather::graph::GatherOpOptions::new(),
        )
        .unwrap();
    let by_name = g
        .op_fed(
            "gather",
            &[(&params).into(), (&ids).into()],
            &Attrs::new(),
            &[("axis", &axis)],
        )
        .unwrap();
    assert_eq!(typed.op_name(), "Gather");
    assert_eq!(by_name.op_name(), "Gather_1");
    assert_eq!(by_name.op_type(), "GatherV2");
}

#[test]
fn the_typed_gather_feeds_its_axis_through_the_same_door() {
    let g = Scope::graph();
    let params = g.constant(t(array![[1i32, 2, 3], [4, 5, 6]].into_dyn()));
    let ids = g.constant(t(array![2i32, 0].into_dyn()));
    let axis = g.placeholder(DType::I64, Shape::known(&[])).unwrap();
    let rows = g
        .gather(
            &params,
            &ids,
            &axis,
            ndgather::graph::GatherOpOptions::new(),
        )
        .unwrap();
    // The axis is unknown: the rank is known, no dimension is.
    assert_eq!(rows.shape().to_string(), "[?,?]");
    let session = Session::new(&g);
    let run = |a: i64| {
        let feeds = Feeds::new()
            .feed_tensor(&axis, t(arr0(a).into_dyn()))
            .unwrap();
        session.run_tensors(std::slice::from_ref(&rows), &feeds)
    };
    assert_eq!(run(1).unwrap()[0], t(array![[3i32, 1], [6, 4]].into_dyn()));
    // Axis 0 has two rows: index 2 is TensorFlow's error when the value is fed.
    let err = run(0).unwrap_err().to_string();
    assert!(err.contains("indices[0] = 2 is not in [0, 2)"), "{err}");
}

#[test]
fn a_constant_dense_shape_gives_the_sparse_lookup_its_rows() {
    let op = registry::find("embedding_lookup_sparse").unwrap();
    let dense_shape = t(array![4i64, 3].into_dyn());
    let mut facts = vec![Fact::unknown(); 7];
    facts[0] = Fact::known(DType::F32, &[10, 8]);
    facts[3] = Fact::of(&dense_shape.view());
    assert_eq!(facts[3].values, Some(vec![4, 3]));
    let fact = op.infer(&facts).unwrap();
    assert_eq!(fact.shape.to_string(), "[4,8]");
    // Unknown values leave the rows unknown.
    facts[3] = Fact::known(DType::I64, &[2]);
    assert_eq!(op.infer(&facts).unwrap().shape.to_string(), "[?,8]");
    // A large tensor carries no values; a float none either.
    let big = t(ndarray::Array1::<i64>::zeros(Fact::MAX_VALUES + 1).into_dyn());
    assert_eq!(Fact::of(&big.view()).values, None);
    let float = t(array![1.0f32].into_dyn());
    assert_eq!(Fact::of(&float.view()).values, None);
    let huge = t(array![u64::MAX].into_dyn());
    assert_eq!(Fact::of(&huge.view()).values, None);
}

#[test]
fn the_typed_sparse_lookup_takes_its_shape_from_the_op() {
    use ndgather::graph::{Constant, EmbeddingLookupSparse, EmbeddingOpOptions, Placeholder};
    let g = Scope::graph();
    let table = Constant::create(&g, array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()).unwrap();
    let indices = Constant::create(&g, array![[0i64, 0], [2, 0]].into_dyn()).unwrap();
    let ids = Constant::create(&g, array![1i64, 0].into_dyn()).unwrap();
    let shape = Constant::create(&g, array![3i64, 1].into_dyn()).unwrap();
    let none: Option<&Constant<f32>> = None;
    let lookup = EmbeddingLookupSparse::create(
        &g,
        &[table.output()],
        (&indices, &ids, &shape),
        none,
        EmbeddingOpOptions::new(),
    )
    .unwrap();
    assert_eq!(lookup.output().shape().to_string(), "[3,2]");
    let fed = Placeholder::<i64>::create(&g, Shape::known(&[2])).unwrap();
    let lookup = EmbeddingLookupSparse::create(
        &g,
        &[table.output()],
        (&indices, &ids, &fed),
        none,
        EmbeddingOpOptions::new(),
    )
    .unwrap();
    assert_eq!(lookup.output().shape().to_string(), "[?,2]");
}
