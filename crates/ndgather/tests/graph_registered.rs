//! The graph API's generic door, [`Scope::op`]: every registered op by name, eager and in a
//! graph, with the op's static shapes, its errors and its gradients (TF's segment
//! gradients through `Scope::gradients`, mixed with the typed gather's). The coverage walk
//! (`every_registered_op_is_a_node_...`) runs each op of the registry as a node, from an
//! example every op must have here.

use ndarray::{arr0, array};
use ndgather::graph::{Feeds, GatherOpOptions, NodeInput, OpError, Scope, Session};
use ndgather::registry::{self, Attr, Attrs, Input};
use ndgather::shape::Shape;
use ndgather::{DType, Error, Tensor};

fn segments(n: i64) -> Attrs {
    Attrs::new().with("num_segments", Attr::Int(n))
}

/// The core's own answer, through the registry without a graph.
fn direct(name: &str, attrs: &Attrs, inputs: &[Input<'_>]) -> Tensor {
    let op = registry::find(name).unwrap().with_attrs(attrs).unwrap();
    op.run(inputs, ndgather::Out::New)
        .unwrap()
        .unwrap()
        .into_dense()
        .unwrap()
}

#[test]
fn every_segment_op_runs_eagerly_as_the_core_runs_it() {
    let data = Tensor::from(array![[1.0f32, 2.0], [3.0, -4.0], [5.0, 6.0], [0.5, 0.25]].into_dyn());
    let ids = Tensor::from(array![0i32, 0, 2, 2].into_dyn());
    let scope = Scope::eager();
    let (d, i) = (scope.constant(data.clone()), scope.constant(ids.clone()));
    let mut ran = 0;
    for name in registry::names().filter(|n| n.contains("segment_") && *n != "gather_segment") {
        let attrs = if name.starts_with("unsorted") {
            segments(3)
        } else {
            Attrs::new()
        };
        let out = scope.op(name, &[(&d).into(), (&i).into()], &attrs).unwrap();
        let want = direct(name, &attrs, &[data.view().into(), ids.view().into()]);
        assert_eq!(out.value(), Some(want), "{name}");
        // The node's type in TensorFlow's form: unsorted_segment_max -> UnsortedSegmentMax.
        let camel: String = name
            .split('_')
            .map(|w| w[..1].to_uppercase() + &w[1..])
            .collect();
        assert_eq!(out.op_type(), camel);
        ran += 1;
    }
    assert_eq!(ran, 11);
}

#[test]
fn a_graph_infers_the_static_shape_and_a_session_runs_it() {
    let graph = Scope::graph();
    let data = graph
        .placeholder(DType::F64, Shape::from_dims(vec![None, Some(2)]))
        .unwrap();
    let ids = graph.constant(Tensor::from(array![1i64, 1, 0].into_dyn()));
    let out = graph
        .op(
            "unsorted_segment_sum",
            &[(&data).into(), (&ids).into()],
            &segments(4),
        )
        .unwrap();
    assert_eq!(out.shape().to_string(), "[4,2]");
    assert_eq!(out.op_name(), "UnsortedSegmentSum");
    assert_eq!(out.op_type(), "UnsortedSegmentSum");
    let value = Tensor::from(array![[1.0f64, 2.0], [10.0, 20.0], [100.0, 200.0]].into_dyn());
    let feeds = Feeds::new().feed_tensor(&data, &value).unwrap();
    let got = Session::new(&graph).run_tensors(&[out], &feeds).unwrap();
    assert_eq!(
        got[0],
        Tensor::from(array![[100.0f64, 200.0], [11.0, 22.0], [0.0, 0.0], [0.0, 0.0]].into_dyn())
    );
}

#[test]
fn gradients_flow_through_segment_ops_and_typed_gathers() {
    // loss = unsorted_segment_max(gather(params, ids), seg): the gradient reaches params
    // through both, as TensorFlow's registered gradients send it.
    let graph = Scope::graph();
    let params = graph.placeholder(DType::F32, Shape::unknown()).unwrap();
    let ids = graph.constant(Tensor::from(array![2i32, 0, 2, 1].into_dyn()));
    let axis = graph.constant(Tensor::from(arr0(0i32).into_dyn()));
    let rows = graph
        .gather(&params, &ids, &axis, GatherOpOptions::new())
        .unwrap();
    let seg = graph.constant(Tensor::from(array![0i32, 0, 1, 1].into_dyn()));
    let max = graph
        .op(
            "unsorted_segment_max",
            &[(&rows).into(), (&seg).into()],
            &segments(2),
        )
        .unwrap();
    let grads = graph
        .gradients(
            std::slice::from_ref(&max),
            std::slice::from_ref(&params),
            None,
        )
        .unwrap();
    let value = Tensor::from(array![1.0f32, 7.0, 3.0].into_dyn());
    let feeds = Feeds::new().feed_tensor(&params, &value).unwrap();
    let out = Session::new(&graph)
        .run_tensors(&[max, grads[0].clone()], &feeds)
        .unwrap();
    // rows = [3, 1, 3, 7]: segment 0 = max(3, 1) = 3 from params[2]; segment 1 =
    // max(3, 7) = 7 from params[1].
    assert_eq!(out[0], Tensor::from(array![3.0f32, 7.0].into_dyn()));
    assert_eq!(out[1], Tensor::from(array![0.0f32, 1.0, 1.0].into_dyn()));
}

#[test]
fn the_segment_gradient_equals_the_cores() {
    let data = Tensor::from(array![[2.0f64, 1.0], [2.0, 5.0], [3.0, 3.0]].into_dyn());
    let ids = Tensor::from(array![0i64, 0, 1].into_dyn());
    let up = Tensor::from(array![[1.0f64, 10.0], [100.0, 1000.0]].into_dyn());
    for name in ["segment_max", "segment_mean", "segment_prod", "segment_min"] {
        let graph = Scope::graph();
        let d = graph.constant(data.clone());
        let i = graph.constant(ids.clone());
        let u = graph.constant(up.clone());
        let out = graph
            .op(name, &[(&d).into(), (&i).into()], &Attrs::new())
            .unwrap();
        let grads = graph.gradients(&[out], &[d], Some(&[u])).unwrap();
        let got = Session::new(&graph)
            .run_tensors(&grads, &Feeds::new())
            .unwrap();
        let op = registry::find(name).unwrap();
        let inputs = [data.view().into(), ids.view().into()];
        let output = direct(name, &Attrs::new(), &inputs);
        let want = op.grad(&inputs, Some(&output.view()), &up.view()).unwrap();
        assert_eq!(Some(&got[0]), want[0].as_ref(), "{name}");
    }
}

#[test]
fn bad_calls_are_errors_that_say_why() {
    let scope = Scope::eager();
    let d = scope.constant(Tensor::from(array![1.0f32, 2.0].into_dyn()));
    let i = scope.constant(Tensor::from(array![0i32, 5].into_dyn()));
    let err = scope.op("segment_summ", &[], &Attrs::new()).unwrap_err();
    assert!(
        matches!(err, OpError::Gather(Error::UnknownOp { .. })),
        "{err}"
    );
    let err = scope
        .op("unsorted_segment_sum", &[(&d).into()], &segments(2))
        .unwrap_err();
    assert!(err.to_string().contains("2 inputs"), "{err}");
    let err = scope
        .op(
            "unsorted_segment_sum",
            &[NodeInput::List(vec![d.clone()]), (&i).into()],
            &segments(2),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("input \"data\": takes one tensor"),
        "{err}"
    );
    let err = scope
        .op(
            "unsorted_segment_sum",
            &[(&d).into(), (&i).into()],
            &Attrs::new(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("num_segments"), "{err}");
    // The op's own check, eagerly: id 5 is not below num_segments.
    let err = scope
        .op(
            "unsorted_segment_sum",
            &[(&d).into(), (&i).into()],
            &segments(2),
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("segment_ids[1] = 5 is out of range"),
        "{err}"
    );
    let other = Scope::eager().constant(Tensor::from(array![0i32, 0].into_dyn()));
    let err = scope
        .op(
            "unsorted_segment_sum",
            &[(&d).into(), (&other).into()],
            &segments(2),
        )
        .unwrap_err();
    assert!(matches!(err, OpError::ForeignOperand { .. }), "{err}");
}

#[test]
fn a_path_through_an_op_without_a_gradient_is_refused() {
    let graph = Scope::graph();
    let x = graph.placeholder(DType::F32, Shape::unknown()).unwrap();
    let index = graph.constant(Tensor::from(array![1i64, 1].into_dyn()));
    let values = graph.constant(Tensor::from(array![5.0f32, 6.0].into_dyn()));
    let attrs = Attrs::new().with("axis", Attr::Int(0));
    let out = graph
        .op(
            "put_along_axis",
            &[(&x).into(), (&index).into(), (&values).into()],
            &attrs,
        )
        .unwrap();
    let err = graph.gradients(&[out], &[x], None).unwrap_err();
    assert_eq!(err.to_string(), "No gradient defined for op: PutAlongAxis");
}

/// The fused gather_segment's gradient is the composition's, bit for bit, for every
/// reduction: `unsorted_segment_<reduce>(gather(x, src), dst)` differentiated by the graph
/// through both ops (ties in max and min, a zero in prod, an empty segment, a repeated
/// source).
#[test]
fn gather_segments_gradient_is_the_compositions() {
    let x = Tensor::from(array![[1.0f64, -2.0], [3.0, 0.0], [3.0, 0.5], [-1.5, 4.0]].into_dyn());
    let src = Tensor::from(array![0i64, 2, 1, 2, 3, 0].into_dyn());
    let dst = Tensor::from(array![1i64, 1, 1, 0, 0, 3].into_dyn());
    let up = Tensor::from(array![[1.0f64, 2.0], [-3.0, 0.25], [7.0, 8.0], [0.5, -1.0]].into_dyn());
    for reduce in ["sum", "mean", "max", "min", "prod", "sqrt_n"] {
        let graph = Scope::graph();
        let (xs, s, d, u) = (
            graph.constant(x.clone()),
            graph.constant(src.clone()),
            graph.constant(dst.clone()),
            graph.constant(up.clone()),
        );
        let attrs = segments(4).with("reduce", Attr::Str(reduce.into()));
        let fused = graph
            .op(
                "gather_segment",
                &[(&xs).into(), (&s).into(), (&d).into()],
                &attrs,
            )
            .unwrap();
        let rows = graph
            .op("gather", &[(&xs).into(), (&s).into()], &Attrs::new())
            .unwrap();
        let composed = graph
            .op(
                &format!("unsorted_segment_{reduce}"),
                &[(&rows).into(), (&d).into()],
                &segments(4),
            )
            .unwrap();
        let a = graph
            .gradients(
                &[fused],
                std::slice::from_ref(&xs),
                Some(std::slice::from_ref(&u)),
            )
            .unwrap();
        let b = graph
            .gradients(
                &[composed],
                std::slice::from_ref(&xs),
                Some(std::slice::from_ref(&u)),
            )
            .unwrap();
        let got = Session::new(&graph)
            .run_tensors(&[a[0].clone(), b[0].clone()], &Feeds::new())
            .unwrap();
        assert_eq!(got[0], got[1], "{reduce}");
    }
    // The forward op's checks hold in the gradient: src and dst of one dtype; x of a dtype
    // with a gradient.
    let op = registry::find("gather_segment")
        .unwrap()
        .with_attrs(&segments(4))
        .unwrap();
    let dst32 = Tensor::from(array![1i32, 1, 1, 0, 0, 3].into_dyn());
    let inputs = [x.view().into(), src.view().into(), dst32.view().into()];
    let out = Tensor::from(ndarray::Array2::<f64>::zeros((4, 2)).into_dyn());
    let err = op.grad(&inputs, Some(&out.view()), &up.view()).unwrap_err();
    assert!(
        err.to_string().contains("src and dst must have one dtype"),
        "{err}"
    );
    let ints = Tensor::from(array![[1i32, 2], [3, 4], [5, 6], [7, 8]].into_dyn());
    let inputs = [ints.view().into(), src.view().into(), dst.view().into()];
    let err = op
        .grad(&inputs, Some(&ints.view()), &ints.view())
        .unwrap_err();
    assert!(err.to_string().contains("T=DT_INT32"), "{err}");
}

#[test]
fn a_graph_refuses_what_the_static_shapes_already_show() {
    let graph = Scope::graph();
    let data = graph.constant(Tensor::from(
        array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]].into_dyn(),
    ));
    let ids = graph.constant(Tensor::from(array![0i32, 1, 2].into_dyn()));
    let err = graph
        .op(
            "unsorted_segment_sum",
            &[(&data).into(), (&ids).into()],
            &segments(2),
        )
        .unwrap_err();
    assert!(
        matches!(err, OpError::Gather(Error::SegmentIdsShape { .. })),
        "{err}"
    );
    let two = graph.constant(Tensor::from(array![0i32, 1].into_dyn()));
    let err = graph
        .op(
            "unsorted_segment_max",
            &[(&data).into(), (&two).into()],
            &segments(-1),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Input num_segments == -1 must not be negative."
    );
    let err = graph
        .op(
            "segment_sum",
            &[(&data).into(), (&ids).into()],
            &Attrs::new(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "segment_ids should be the same size as dimension 0 of input."
    );
    // A wrong kind of attribute is its own error (Python's TypeError).
    let err = graph
        .op(
            "unsorted_segment_sum",
            &[(&data).into(), (&two).into()],
            &Attrs::new().with("num_segments", Attr::Float(2.5)),
        )
        .unwrap_err();
    assert!(
        matches!(err, OpError::Gather(Error::AttributeKind { .. })),
        "{err}"
    );
}

/// `Scope::op` takes a call that leaves out optional inputs at the end, as the core's run
/// does: embedding_lookup_sparse with the 5 inputs it had before the weights' sparse form.
#[test]
fn optional_inputs_at_the_end_may_be_left_out() {
    let scope = Scope::eager();
    let table = scope.constant(Tensor::from(array![[1.0f32], [2.0], [4.0]].into_dyn()));
    let indices = scope.constant(Tensor::from(array![[0i64, 0], [1, 0]].into_dyn()));
    let ids = scope.constant(Tensor::from(array![2i64, 0].into_dyn()));
    let shape = scope.constant(Tensor::from(array![2i64, 1].into_dyn()));
    let attrs = Attrs::new().with("combiner", Attr::Str("sum".into()));
    let inputs = [
        NodeInput::List(vec![table]),
        (&indices).into(),
        (&ids).into(),
        (&shape).into(),
        NodeInput::Absent,
    ];
    let out = scope
        .op("embedding_lookup_sparse", &inputs, &attrs)
        .unwrap();
    assert_eq!(
        out.value(),
        Some(Tensor::from(array![[4.0f32], [1.0]].into_dyn()))
    );
    let err = scope
        .op("embedding_lookup_sparse", &inputs[..3], &attrs)
        .unwrap_err();
    assert!(err.to_string().contains("takes 4 to 7 inputs"), "{err}");
}

/// The lookups' gradients give a tensor per shard: a graph node, which has one output,
/// refuses them when it is built, saying why, in eager and graph scopes alike.
#[test]
fn an_op_of_several_results_is_refused_by_a_node() {
    for scope in [Scope::eager(), Scope::graph()] {
        let table = scope.constant(Tensor::from(array![[1.0f32], [2.0]].into_dyn()));
        let ids = scope.constant(Tensor::from(array![1i64].into_dyn()));
        let grad = scope.constant(Tensor::from(array![[1.0f32]].into_dyn()));
        let inputs = [
            NodeInput::List(vec![table.clone()]),
            (&ids).into(),
            (&grad).into(),
        ];
        let err = scope
            .op("embedding_lookup_grad", &inputs, &Attrs::new())
            .unwrap_err();
        assert!(err.to_string().contains("a tensor per shard"), "{err}");
    }
}

/// The typed sugar is `Scope::op`'s door: the op's inference gives the static shape (rank
/// kept where dimensions are not known) and the node's TensorFlow type.
#[test]
fn the_typed_sugar_takes_the_ops_inference_and_type() {
    use ndgather::embedding_bag::{BagMode, EmbeddingBag};
    let graph = Scope::graph();
    let table = graph.constant(Tensor::from(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()));
    let input = graph.placeholder(DType::I64, Shape::unknown()).unwrap();
    let offsets = graph.placeholder(DType::I64, Shape::unknown()).unwrap();
    let bag = EmbeddingBag::new(BagMode::Sum);
    let out = graph
        .embedding_bag(
            std::slice::from_ref(&table),
            &input,
            Some(&offsets),
            None,
            bag,
        )
        .unwrap();
    assert_eq!(out.shape().to_string(), "[?,2]");
    assert_eq!(out.op_type(), "EmbeddingBag");
    // Bags from a 2-d input's rows, or from the offsets (less the last where it ends the
    // input).
    let rows = graph
        .placeholder(DType::I64, Shape::from_dims(vec![Some(5), None]))
        .unwrap();
    let by_rows = graph
        .embedding_bag(std::slice::from_ref(&table), &rows, None, None, bag)
        .unwrap();
    assert_eq!(by_rows.shape().to_string(), "[5,2]");
    let four = graph
        .placeholder(DType::I64, Shape::from_dims(vec![Some(4)]))
        .unwrap();
    let last = bag.include_last_offset(true);
    let by_offsets = graph
        .embedding_bag(
            std::slice::from_ref(&table),
            &input,
            Some(&four),
            None,
            last,
        )
        .unwrap();
    assert_eq!(by_offsets.shape().to_string(), "[3,2]");
    // take_along_axis keeps indices' rank where dimensions are unknown.
    let along = graph
        .placeholder(DType::I64, Shape::from_dims(vec![None, Some(3)]))
        .unwrap();
    let taken = graph
        .take_along_axis(&table, &along, ndgather::TakeAlongAxisOptions::new(1))
        .unwrap();
    assert_eq!(taken.shape().rank(), Some(2));
    // Offsets of another dtype than the input's are refused when the node is built.
    let bad = graph.placeholder(DType::I32, Shape::unknown()).unwrap();
    let err = graph
        .embedding_bag(std::slice::from_ref(&table), &input, Some(&bad), None, bag)
        .unwrap_err();
    assert!(err.to_string().contains("int32"), "{err}");
    // By name, the same type as the sugar gives.
    let ids = graph.constant(Tensor::from(array![[1i64], [0]].into_dyn()));
    let nd = graph
        .op(
            "gather_nd",
            &[(&table).into(), (&ids).into()],
            &Attrs::new(),
        )
        .unwrap();
    assert_eq!(
        (nd.op_type(), nd.shape().to_string().as_str()),
        ("GatherNd", "[2,2]")
    );
    // Shards of two dtypes are refused, naming both.
    let doubles = graph.constant(Tensor::from(array![[1.0f64, 2.0]].into_dyn()));
    let err = graph
        .op(
            "embedding_lookup",
            &[NodeInput::List(vec![table, doubles]), (&ids).into()],
            &Attrs::new(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("float64"), "{err}");
}

/// The lookup's gradient through `Scope::gradients`: one dense gradient per shard, each the
/// upstream rows its ids read summed in order (TensorFlow's `IndexedSlices` made dense), as
/// `embedding_lookup_grad` gives them sparse.
#[test]
fn gradients_reach_each_shard_of_an_embedding_lookup() {
    let graph = Scope::graph();
    // "mod" over two shards: id k is row k / 2 of shard k % 2.
    let even = graph.constant(Tensor::from(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()));
    let odd = graph.constant(Tensor::from(
        array![[5.0f32, 6.0], [7.0, 8.0], [9.0, 10.0]].into_dyn(),
    ));
    let ids = graph.constant(Tensor::from(array![5i64, 0, 5, 3].into_dyn()));
    let up = graph.constant(Tensor::from(
        array![[1.0f32, 2.0], [10.0, 20.0], [100.0, 200.0], [1e3, 2e3]].into_dyn(),
    ));
    let shards = NodeInput::List(vec![even.clone(), odd.clone()]);
    let out = graph
        .op("embedding_lookup", &[shards, (&ids).into()], &Attrs::new())
        .unwrap();
    // One answer for one input cannot hold a gradient per shard: gradients() gives them.
    let err = graph.gradient(&out, &up).unwrap_err();
    assert!(err.to_string().contains("Scope::gradients"), "{err}");
    let grads = graph.gradients(&[out], &[odd, even], Some(&[up])).unwrap();
    let got = Session::new(&graph)
        .run_tensors(&grads, &Feeds::new())
        .unwrap();
    // ids 5 (twice) -> odd row 2, id 3 -> odd row 1, id 0 -> even row 0.
    assert_eq!(
        got[0],
        Tensor::from(array![[0.0f32, 0.0], [1e3, 2e3], [101.0, 202.0]].into_dyn())
    );
    assert_eq!(
        got[1],
        Tensor::from(array![[10.0f32, 20.0], [0.0, 0.0]].into_dyn())
    );
}

/// `scatter_nd`'s gradient is TensorFlow's `_ScatterNdGrad`: `gather_nd(grad, indices)` for
/// the updates (a repeated vector reads its slice twice); the upstream gradient must have
/// the output's shape.
#[test]
fn scatter_nds_gradient_gathers_the_upstream_slices() {
    let graph = Scope::graph();
    let indices = graph.constant(Tensor::from(array![[2i32], [0], [2]].into_dyn()));
    let updates = graph.constant(Tensor::from(
        array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn(),
    ));
    let up = graph.constant(Tensor::from(
        array![[1.0f32, 10.0], [100.0, 1e3], [1e4, 1e5]].into_dyn(),
    ));
    let attrs = Attrs::new().with("shape", Attr::Ints(vec![3, 2]));
    let out = graph
        .op(
            "scatter_nd",
            &[(&indices).into(), (&updates).into()],
            &attrs,
        )
        .unwrap();
    let grads = graph
        .gradients(&[out], std::slice::from_ref(&updates), Some(&[up]))
        .unwrap();
    let got = Session::new(&graph)
        .run_tensors(&grads, &Feeds::new())
        .unwrap();
    assert_eq!(
        got[0],
        Tensor::from(array![[1e4f32, 1e5], [1.0, 10.0], [1e4, 1e5]].into_dyn())
    );
    // Through the registry: an upstream gradient of another shape is refused.
    let op = registry::find("scatter_nd")
        .unwrap()
        .with_attrs(&attrs)
        .unwrap();
    let (i, u) = (
        Tensor::from(array![[2i32]].into_dyn()),
        Tensor::from(array![[1.0f32, 2.0]].into_dyn()),
    );
    let wrong = Tensor::from(array![[1.0f32, 2.0]].into_dyn());
    let err = op
        .grad(&[i.view().into(), u.view().into()], None, &wrong.view())
        .unwrap_err();
    assert!(matches!(err, Error::GradShapeMismatch { .. }), "{err}");
    // Updates the forward op would refuse (not the picked slices' shape) are refused here.
    let up = Tensor::from(array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn());
    let five = Tensor::from(array![1.0f32, 2.0, 3.0, 4.0, 5.0].into_dyn());
    let err = op
        .grad(&[i.view().into(), five.view().into()], None, &up.view())
        .unwrap_err();
    assert!(matches!(err, Error::GradShapeMismatch { .. }), "{err}");
}

/// One call of a registered op: its attributes and its inputs (a tensor, a list of them, or
/// none), small and valid.
enum In {
    T(Tensor),
    L(Vec<Tensor>),
    N,
}

/// A valid call of every registered op, by name (a new op needs one here: the walk below
/// fails without it).
fn example(name: &str) -> Option<(Attrs, Vec<In>)> {
    use In::{L, N, T};
    let f = |a: ndarray::ArrayD<f32>| T(Tensor::from(a));
    let i = |a: ndarray::ArrayD<i64>| T(Tensor::from(a));
    let p = || array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn();
    let int = |n: i64| Attr::Int(n);
    let ints = |v: &[i64]| Attr::Ints(v.to_vec());
    let a = Attrs::new;
    let sparse_ids = || {
        vec![
            i(array![[0i64, 0], [0, 1], [1, 0]].into_dyn()),
            i(array![2i64, 0, 1].into_dyn()),
            i(array![2i64, 2].into_dyn()),
        ]
    };
    Some(match name {
        "gather" => (a(), vec![f(p()), i(array![2i64, 0].into_dyn())]),
        "gather_nd" => (a(), vec![f(p()), i(array![[2i64, 1], [0, 0]].into_dyn())]),
        "take_along_axis" => (
            a().with("axis", int(1)),
            vec![f(p()), i(array![[1i64], [0], [1]].into_dyn())],
        ),
        "put_along_axis" => (
            a().with("axis", int(1)),
            vec![
                f(p()),
                i(array![[1i64], [0], [1]].into_dyn()),
                f(array![[9.0f32], [8.0], [7.0]].into_dyn()),
            ],
        ),
        "gather_grad" => (
            a().with("params_shape", ints(&[3, 2])),
            vec![
                i(array![2i64, 0].into_dyn()),
                f(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()),
                N,
            ],
        ),
        "gather_nd_grad" => (
            a().with("params_shape", ints(&[3, 2])),
            vec![
                i(array![[2i64, 1], [0, 0]].into_dyn()),
                f(array![1.0f32, 2.0].into_dyn()),
                N,
            ],
        ),
        "take_along_axis_grad" => (
            a().with("arr_shape", ints(&[3, 2])).with("axis", int(1)),
            vec![
                i(array![[1i64], [0], [1]].into_dyn()),
                f(array![[1.0f32], [2.0], [3.0]].into_dyn()),
            ],
        ),
        n if n.starts_with("tensor_scatter_nd_") => (
            a(),
            vec![
                f(p()),
                i(array![[1i64]].into_dyn()),
                f(array![[10.0f32, 20.0]].into_dyn()),
            ],
        ),
        "scatter_reduce" => (
            a().with("dim", int(0))
                .with("reduce", Attr::Str("amax".into())),
            vec![
                f(p()),
                i(array![[0i64, 0], [0, 0], [2, 0]].into_dyn()),
                f(p()),
            ],
        ),
        "scatter_nd" => (
            a().with("shape", ints(&[3, 2])),
            vec![
                i(array![[1i64]].into_dyn()),
                f(array![[10.0f32, 20.0]].into_dyn()),
            ],
        ),
        "embedding_lookup" => (
            a(),
            vec![L(vec![Tensor::from(p())]), i(array![2i64, 2].into_dyn())],
        ),
        "embedding_lookup_grad" => (
            a(),
            vec![
                L(vec![Tensor::from(p())]),
                i(array![2i64, 2].into_dyn()),
                f(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()),
            ],
        ),
        "embedding_lookup_sparse" => {
            let mut inputs = vec![L(vec![Tensor::from(p())])];
            inputs.extend(sparse_ids());
            (a(), inputs)
        }
        "embedding_lookup_sparse_grad" => {
            let mut inputs = vec![L(vec![Tensor::from(p())])];
            inputs.extend(sparse_ids());
            inputs.push(f(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()));
            (a(), inputs)
        }
        "embedding_bag" => (
            a().with("mode", Attr::Str("sum".into())),
            vec![
                L(vec![Tensor::from(p())]),
                i(array![[0i64, 2]].into_dyn()),
                N,
                N,
            ],
        ),
        "embedding_bag_grad" => (
            a().with("mode", Attr::Str("sum".into())),
            vec![
                L(vec![Tensor::from(p())]),
                i(array![[0i64, 2]].into_dyn()),
                f(array![[1.0f32, 2.0]].into_dyn()),
                N,
                N,
            ],
        ),
        n if n.starts_with("segment_") => (a(), vec![f(p()), i(array![0i64, 0, 1].into_dyn())]),
        n if n.starts_with("unsorted_segment_") => {
            (segments(2), vec![f(p()), i(array![1i64, 0, 1].into_dyn())])
        }
        "gather_segment" => (
            segments(2),
            vec![
                f(p()),
                i(array![2i64, 0, 1].into_dyn()),
                i(array![1i64, 1, 0].into_dyn()),
            ],
        ),
        _ => return None,
    })
}

#[test]
fn every_registered_op_is_a_node_or_refused_as_one_result_per_shard() {
    let (mut nodes, mut per_shard) = (0, 0);
    for name in registry::names() {
        let (attrs, given) = example(name).unwrap_or_else(|| panic!("no example of {name}"));
        let inputs: Vec<Input<'_>> = (given.iter())
            .map(|g| match g {
                In::T(t) => Input::from(t.view()),
                In::L(l) => Input::List(l.iter().map(Tensor::view).collect()),
                In::N => Input::None,
            })
            .collect();
        let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
        let want = op.run(&inputs, ndgather::Out::New).unwrap().unwrap();
        for scope in [Scope::eager(), Scope::graph()] {
            let node_inputs: Vec<NodeInput> = (given.iter())
                .map(|g| match g {
                    In::T(t) => NodeInput::One(scope.constant(t.clone())),
                    In::L(l) => {
                        NodeInput::List(l.iter().map(|t| scope.constant(t.clone())).collect())
                    }
                    In::N => NodeInput::Absent,
                })
                .collect();
            let out = scope.op(name, &node_inputs, &attrs);
            if !op.one_result() {
                let refused = matches!(&out, Err(OpError::Gather(Error::OpInput { reason, .. }))
                    if reason.contains("a tensor per shard"));
                assert!(refused, "{name}: {:?}", out.map(|o| o.shape()));
                continue;
            }
            let out = out.unwrap_or_else(|e| panic!("{name}: {e}"));
            let want = want.clone().into_dense().unwrap();
            let got = match scope.is_eager() {
                true => out.value().unwrap(),
                false => Session::new(&scope)
                    .run_tensors(&[out], &Feeds::new())
                    .unwrap()
                    .remove(0),
            };
            assert_eq!(got, want, "{name}");
        }
        match op.one_result() {
            true => nodes += 1,
            false => per_shard += 1,
        }
    }
    // Every op is one or the other; only the lookups' gradients (a tensor per shard) are
    // refused.
    assert_eq!(nodes + per_shard, registry::names().count());
    assert_eq!(per_shard, 3, "{nodes} ops as nodes, {per_shard} refused");
}
