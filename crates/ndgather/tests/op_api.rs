//! The op-wrapper API (the seed pages' examples through it are in ndgather-cli's
//! doc_examples test, next to the examples): names and scopes, shape inference with unknown dimensions and rank, create-time and feed errors, and
//! chained gathers run many times.

use ndarray::{array, ArrayD};
use ndgather::graph::{
    Constant, Feeds, Gather, GatherNd, GatherNdOpOptions, GatherOpOptions, OpError, Operand,
    Output, Placeholder, Scope, Session,
};
use ndgather::shape::Shape;
use ndgather::{BadIndices, DType, Error, Tensor};

#[test]
fn names_are_unique_and_scoped() {
    let g = Scope::graph();
    let p = Constant::create(&g, array![1.0f32, 2.0].into_dyn()).unwrap();
    let i = Constant::create(&g, array![[0i64]].into_dyn()).unwrap();
    let names: Vec<String> = (0..3)
        .map(|_| {
            GatherNd::create(&g, &p, &i, GatherNdOpOptions::new())
                .unwrap()
                .output()
                .op_name()
        })
        .collect();
    assert_eq!(names, ["GatherNd", "GatherNd_1", "GatherNd_2"]);
    assert_eq!(p.output().op_name(), "Const");
    assert_eq!(i.output().op_name(), "Const_1");
    let named = GatherNd::create(&g.with_name("lookup"), &p, &i, GatherNdOpOptions::new()).unwrap();
    assert_eq!(named.output().op_name(), "lookup");
    let again = GatherNd::create(&g.with_name("lookup"), &p, &i, GatherNdOpOptions::new()).unwrap();
    assert_eq!(again.output().op_name(), "lookup_1");
    let outer = g.with_sub_scope("outer");
    let inner = outer.with_sub_scope("inner");
    assert_eq!(
        GatherNd::create(&inner, &p, &i, GatherNdOpOptions::new())
            .unwrap()
            .output()
            .op_name(),
        "outer/inner/GatherNd"
    );
    assert_eq!(
        GatherNd::create(&outer, &p, &i, GatherNdOpOptions::new())
            .unwrap()
            .output()
            .op_name(),
        "outer/GatherNd"
    );
    assert_eq!(
        GatherNd::create(&g.with_sub_scope("outer"), &p, &i, GatherNdOpOptions::new())
            .unwrap()
            .output()
            .op_name(),
        "outer_1/GatherNd"
    );
    let out = named.output();
    assert_eq!((out.index(), out.dtype()), (0, ndgather::DType::F32));
    assert_eq!(out.shape().to_string(), "[1]");
}

#[test]
fn shape_inference_with_unknowns() {
    let g = Scope::graph();
    // A placeholder [?, 2] gathered by indices [5, 1] along axis 0.
    let p = Placeholder::<f32>::create(&g, Shape::from_dims(vec![None, Some(2)])).unwrap();
    let i = Placeholder::<i32>::create(&g, Shape::known(&[5, 1])).unwrap();
    let a0 = Constant::scalar(&g, 0i32).unwrap();
    assert_eq!(
        Gather::create(&g, &p, &i, &a0, GatherOpOptions::new())
            .unwrap()
            .output()
            .shape()
            .to_string(),
        "[5,1,2]"
    );
    // testUnknownIndices: indices of unknown rank.
    let any = Placeholder::<i32>::create(&g, Shape::unknown()).unwrap();
    assert_eq!(
        Gather::create(&g, &p, &any, &a0, GatherOpOptions::new())
            .unwrap()
            .output()
            .shape(),
        Shape::unknown()
    );
    // testUnknownAxis: the axis is a placeholder; ranks known, dimensions not.
    let axis = Placeholder::<i32>::create(&g, Shape::known(&[])).unwrap();
    let p3 = Placeholder::<f32>::create(&g, Shape::known(&[4, 3, 2])).unwrap();
    let i1 = Placeholder::<i64>::create(&g, Shape::known(&[7])).unwrap();
    let out = Gather::create(&g, &p3, &i1, &axis, GatherOpOptions::new())
        .unwrap()
        .output();
    assert_eq!(out.shape().to_string(), "[?,?,?]");
    let feeds = Feeds::new()
        .feed(&axis, ArrayD::from_elem(ndarray::IxDyn(&[]), 1))
        .unwrap()
        .feed(&p3, ArrayD::zeros(ndarray::IxDyn(&[4, 3, 2])))
        .unwrap()
        .feed(&i1, array![0i64, 1, 2, 0, 1, 2, 0].into_dyn())
        .unwrap();
    assert_eq!(
        Session::new(&g).run(&out, &feeds).unwrap().shape(),
        &[4, 7, 2]
    );
    // gather_nd with an unknown depth gives an unknown shape; with a known one, the rule.
    let q = Placeholder::<f32>::create(&g, Shape::from_dims(vec![None, Some(3)])).unwrap();
    let rows = Placeholder::<i32>::create(&g, Shape::from_dims(vec![None, Some(1)])).unwrap();
    assert_eq!(
        GatherNd::create(&g, &q, &rows, GatherNdOpOptions::new())
            .unwrap()
            .output()
            .shape()
            .to_string(),
        "[?,3]"
    );
}

#[test]
fn invalid_combinations_fail_at_create() {
    let g = Scope::graph();
    let p = Placeholder::<f32>::create(&g, Shape::from_dims(vec![None, Some(3)])).unwrap();
    let i = Placeholder::<i32>::create(&g, Shape::known(&[4])).unwrap();
    let a2 = Constant::scalar(&g, 2i64).unwrap();
    let err = Gather::create(&g, &p, &i, &a2, GatherOpOptions::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Shape must be at least rank 3 but is rank 2"
    );
    let rows = Placeholder::<i32>::create(&g, Shape::known(&[4, 3])).unwrap();
    let err = GatherNd::create(&g, &p, &rows, GatherNdOpOptions::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "index innermost dimension length must be <= params rank; saw: 3 vs. 2"
    );
    let batched = Placeholder::<i32>::create(&g, Shape::known(&[5, 1])).unwrap();
    let p2 = Placeholder::<f32>::create(&g, Shape::known(&[4, 3])).unwrap();
    let a1 = Constant::scalar(&g, 1i32).unwrap();
    let err =
        Gather::create(&g, &p2, &batched, &a1, GatherOpOptions::new().batch_dims(1)).unwrap_err();
    assert_eq!(
        err,
        OpError::Gather(Error::BatchShapeMismatch {
            dim: 0,
            params_size: 4,
            indices_size: 5
        })
    );
    let vector_axis = Constant::create(&g, array![0i32].into_dyn()).unwrap();
    assert_eq!(
        Gather::create(&g, &p, &i, &vector_axis, GatherOpOptions::new()).unwrap_err(),
        OpError::FedShape {
            attr: "axis".into(),
            rank: 0,
            shape: "[1]".into()
        }
    );
    // Eager: bad index values fail at create too.
    let e = Scope::eager();
    let p = Constant::create(&e, array![1, 2, 3].into_dyn()).unwrap();
    let i = Constant::create(&e, array![[5i32]].into_dyn()).unwrap();
    assert_eq!(
        GatherNd::create(&e, &p, &i, GatherNdOpOptions::new())
            .unwrap_err()
            .to_string(),
        "indices[0] = [5] does not index into param shape [3]"
    );
    let ignored = GatherNd::create(
        &e,
        &p,
        &i,
        GatherNdOpOptions::new().bad_indices(BadIndices::Ignore),
    )
    .unwrap();
    assert_eq!(ignored.output().value().unwrap(), array![0].into_dyn());
    assert!(matches!(
        Placeholder::<f32>::create(&e, Shape::unknown()),
        Err(OpError::Mode(_))
    ));
    // Operands of another graph.
    let other = Scope::graph();
    let foreign = Constant::create(&other, array![[0i32]].into_dyn()).unwrap();
    let mine = Constant::create(&g, array![1.0f32].into_dyn()).unwrap();
    assert!(matches!(
        GatherNd::create(&g, &mine, &foreign, GatherNdOpOptions::new()),
        Err(OpError::ForeignOperand { .. })
    ));
}

#[test]
fn feed_errors() {
    let g = Scope::graph();
    let p = Placeholder::<f32>::create(&g, Shape::from_dims(vec![None, Some(2)])).unwrap();
    let i = Constant::create(&g, array![[1i32]].into_dyn()).unwrap();
    let out = GatherNd::create(&g, &p, &i, GatherNdOpOptions::new())
        .unwrap()
        .output();
    let session = Session::new(&g);
    // Missing feed.
    let err = session.run(&out, &Feeds::new()).unwrap_err();
    assert_eq!(err.to_string(), "You must feed a value for placeholder tensor 'Placeholder' with dtype float32 and shape [?,2]");
    // Wrong shape.
    let err = Feeds::new()
        .feed(&p, ArrayD::<f32>::zeros(ndarray::IxDyn(&[2, 3])))
        .unwrap_err();
    assert!(matches!(err, OpError::FeedShape { .. }), "{err}");
    let err = Feeds::new()
        .feed(&p, ArrayD::<f32>::zeros(ndarray::IxDyn(&[2])))
        .unwrap_err();
    assert!(matches!(err, OpError::FeedShape { .. }), "{err}");
    // A bad index found at run time.
    let err = session
        .run(
            &out,
            &Feeds::new()
                .feed(&p, ArrayD::zeros(ndarray::IxDyn(&[1, 2])))
                .unwrap(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "indices[0] = [1] does not index into param shape [1,2]"
    );
    // Feeds of another graph.
    let other = Scope::graph();
    let q = Placeholder::<f32>::create(&other, Shape::unknown()).unwrap();
    let err = session
        .run(
            &out,
            &Feeds::new().feed(&q, array![1.0f32].into_dyn()).unwrap(),
        )
        .unwrap_err();
    assert!(matches!(err, OpError::Mode(_)));
}

#[test]
fn chained_gathers_run_many_times() {
    let g = Scope::graph();
    let table = Placeholder::<f64>::create(&g, Shape::from_dims(vec![None, Some(3)])).unwrap();
    let rows = Placeholder::<i32>::create(&g, Shape::from_dims(vec![None])).unwrap();
    let a0 = Constant::scalar(&g, 0i32).unwrap();
    let a1 = Constant::scalar(&g, -1i64).unwrap();
    let picked = Gather::create(&g, &table, &rows, &a0, GatherOpOptions::new()).unwrap();
    let cols = Constant::create(&g, array![2i64, 0].into_dyn()).unwrap();
    let swapped = Gather::create(&g, &picked, &cols, &a1, GatherOpOptions::new()).unwrap();
    let nd_idx = Constant::create(&g, array![[0i32, 1], [1, 0]].into_dyn()).unwrap();
    let corners = GatherNd::create(&g, &swapped, &nd_idx, GatherNdOpOptions::new()).unwrap();
    assert_eq!(swapped.output().shape().to_string(), "[?,2]");
    assert_eq!(corners.output().shape().to_string(), "[2]");
    let session = Session::new(&g);
    for k in 0..5 {
        let t = ArrayD::from_shape_fn(ndarray::IxDyn(&[4, 3]), |ix| {
            (k * 100 + ix[0] * 10 + ix[1]) as f64
        });
        let feeds = Feeds::new()
            .feed(&table, t)
            .unwrap()
            .feed(&rows, array![3, (k % 4) as i32].into_dyn())
            .unwrap();
        let base = (k * 100) as f64;
        let r = (k % 4) as f64;
        let got = session.run(&corners, &feeds).unwrap();
        assert_eq!(
            got,
            array![base + 30.0, base + r * 10.0 + 2.0].into_dyn(),
            "run {k}"
        );
        let both = session
            .run_many(&[&picked as &dyn Operand<f64>, &swapped], &feeds)
            .unwrap();
        assert_eq!(both[0].shape(), &[2, 3]);
        assert_eq!(both[1].shape(), &[2, 2]);
    }
    // Missing one of two feeds fails, naming it.
    let t = ArrayD::zeros(ndarray::IxDyn(&[4, 3]));
    let err = session
        .run(&corners, &Feeds::new().feed(&table, t).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("'Placeholder_1'"), "{err}");
}

/// The op API's handles can cross threads (the graph is behind a mutex).
#[test]
fn handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Scope>();
    check::<Output<f32>>();
    check::<Session>();
    check::<Feeds>();
    check::<GatherNd<String>>();
    let g = Scope::graph();
    let c = Constant::create(&g, array![1.0f32, 2.0].into_dyn()).unwrap();
    let i = Constant::create(&g, array![[1i32]].into_dyn()).unwrap();
    let out = GatherNd::create(&g, &c, &i, GatherNdOpOptions::new())
        .unwrap()
        .output();
    let session = Session::new(&g);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                assert_eq!(
                    session.run(&out, &Feeds::new()).unwrap(),
                    array![2.0f32].into_dyn()
                )
            });
        }
    });
}

/// take_along_axis is a graph op through the one entry point: fed in a graph, run eagerly,
/// and differentiated, each equal to the typed function and its gradient.
#[test]
fn take_along_axis_is_a_graph_op_with_a_gradient() {
    use ndgather::graph::TakeAlongAxis;
    use ndgather::TakeAlongAxisOptions;
    let scores = array![[10.0f32, 30.0, 20.0], [60.0, 40.0, 50.0]].into_dyn();
    let top = array![[1i64, 2], [0, 2]].into_dyn();
    let options = TakeAlongAxisOptions::new(1);
    let want = options.take_along_axis(&scores, &top).unwrap();

    let g = Scope::graph();
    let arr = Placeholder::<f32>::create(&g, Shape::unknown_dims(2)).unwrap();
    let idx = Constant::create(&g, top.clone()).unwrap();
    let taken = TakeAlongAxis::create(&g, &arr, &idx, options).unwrap();
    assert_eq!(taken.output().shape().rank(), Some(2));
    let upstream = Constant::create(&g, array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()).unwrap();
    let grad = taken.grad(&g, &upstream).unwrap();
    let session = Session::new(&g);
    let feeds = Feeds::new().feed(&arr.output(), scores.clone()).unwrap();
    assert_eq!(session.run(&taken.output(), &feeds).unwrap(), want);
    let want_grad = options
        .grad(scores.shape(), &top, &array![[1.0f32, 2.0], [3.0, 4.0]])
        .unwrap();
    assert_eq!(session.run(&grad, &feeds).unwrap(), want_grad);
    assert_eq!(
        want_grad,
        array![[0.0f32, 1.0, 2.0], [3.0, 0.0, 4.0]].into_dyn()
    );

    let e = Scope::eager();
    let arr = Constant::create(&e, scores).unwrap();
    let idx = Constant::create(&e, top).unwrap();
    let taken = TakeAlongAxis::create(&e, &arr, &idx, options).unwrap();
    assert_eq!(taken.output().value().unwrap(), want);
    let bad = Constant::create(&e, array![[3i64]].into_dyn()).unwrap();
    let err = TakeAlongAxis::create(&e, &arr, &bad, options).unwrap_err();
    assert!(err.to_string().contains("3"), "{err}");
}

/// `Scope::gradients`, against TF Java 1.15's `tf.gradients` on the same graph (values
/// printed by TF Java 1.15.0: `p = [[1,2],[3,4],[5,6]]`, `z = gather_nd(p, [[2,1],[0,0],[2,1]])`,
/// `z2 = gather_nd(z, [[1],[1]])`).
#[test]
fn gradients_sum_every_path_as_tensorflow() {
    use ndgather::{DType, Tensor};
    let g = Scope::graph();
    let p = g.placeholder(DType::F32, Shape::unknown()).unwrap();
    let c = |t: ArrayD<i32>| g.constant(Tensor::from(t));
    let z = g
        .gather_nd(
            &p,
            &c(array![[2, 1], [0, 0], [2, 1]].into_dyn()),
            GatherNdOpOptions::new(),
        )
        .unwrap();
    let z2 = g
        .gather_nd(
            &z,
            &c(array![[1], [1]].into_dyn()),
            GatherNdOpOptions::new(),
        )
        .unwrap();
    let f = |t: ArrayD<f32>| g.constant(Tensor::from(t));
    let dx = [
        f(array![1.0, 10.0, 100.0].into_dyn()),
        f(array![1000.0, 10000.0].into_dyn()),
    ];
    let both = g
        .gradients(
            &[z.clone(), z2.clone()],
            std::slice::from_ref(&p),
            Some(&dx),
        )
        .unwrap();
    let alone = g
        .gradients(std::slice::from_ref(&z2), std::slice::from_ref(&p), None)
        .unwrap();
    let value = Tensor::from(array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn());
    let feeds = Feeds::new().feed_tensor(&p, &value).unwrap();
    let out = Session::new(&g)
        .run_tensors(&[both[0].clone(), alone[0].clone()], &feeds)
        .unwrap();
    assert_eq!(
        out[0],
        Tensor::from(array![[11010.0f32, 0.0], [0.0, 0.0], [0.0, 101.0]].into_dyn())
    );
    assert_eq!(
        out[1],
        Tensor::from(array![[2.0f32, 0.0], [0.0, 0.0], [0.0, 0.0]].into_dyn())
    );

    // TF's messages: an x no y depends on, an eager scope.
    let other = g.constant(Tensor::from(array![7.0f32].into_dyn()));
    let e = g
        .gradients(std::slice::from_ref(&z), &[other], None)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot compute the partial derivative for node 'Const_4' as it's unreachable from \
         the output node(s)."
    );
    let eager = Scope::eager();
    let one = eager.constant(Tensor::from(array![1.0f32].into_dyn()));
    let e = eager
        .gradients(std::slice::from_ref(&one), std::slice::from_ref(&one), None)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Gradients can be computed only in a graph execution environment"
    );
    // Integer params have no gradient; dx must match the ys.
    let ints = g.placeholder(DType::I32, Shape::unknown()).unwrap();
    let picked = g
        .gather_nd(&ints, &c(array![[0]].into_dyn()), GatherNdOpOptions::new())
        .unwrap();
    assert!(g.gradients(&[picked], &[ints], None).is_err());
    assert!(g
        .gradients(&[z.clone(), z2], std::slice::from_ref(&p), Some(&dx[..1]))
        .is_err());
}

/// `embedding_bag` as a graph op: static shapes, fed values, and the same result as the
/// core's function.
#[test]
fn embedding_bag_is_a_graph_op() {
    use ndgather::embedding_bag::{BagMode, EmbeddingBag};
    use ndgather::{DType, Tensor};
    let g = Scope::graph();
    let table = g
        .placeholder(DType::F64, Shape::from_dims(vec![None, Some(2)]))
        .unwrap();
    let input = g.placeholder(DType::I32, Shape::unknown()).unwrap();
    let offsets = g.constant(Tensor::from(array![0i32, 1, 1, 4].into_dyn()));
    let bag = EmbeddingBag::new(BagMode::Max).include_last_offset(true);
    let bags = g
        .embedding_bag(
            std::slice::from_ref(&table),
            &input,
            Some(&offsets),
            None,
            bag,
        )
        .unwrap();
    assert_eq!(bags.shape().to_string(), "[3,2]");
    assert_eq!(bags.op_type(), "EmbeddingBag");
    let t = array![[1.0f64, -1.0], [0.5, 3.0], [2.0, 0.0]].into_dyn();
    let ids = array![2i32, 0, 1, 0].into_dyn();
    let (tt, ti) = (Tensor::from(t.clone()), Tensor::from(ids.clone()));
    let feeds = Feeds::new()
        .feed_tensor(&table, &tt)
        .unwrap()
        .feed_tensor(&input, &ti)
        .unwrap();
    let out = Session::new(&g).run_tensors(&[bags], &feeds).unwrap();
    let want = bag
        .bag(
            &[t.view()],
            &ids.view(),
            Some(&array![0i32, 1, 1, 4].view()),
            None,
        )
        .unwrap();
    assert_eq!(out[0], Tensor::from(want.clone()));
    assert_eq!(want, array![[2.0, 0.0], [0.0, 0.0], [1.0, 3.0]].into_dyn());
    // Offsets of another dtype than the input's are refused when the op is made.
    let wide = g.constant(Tensor::from(array![0i64].into_dyn()));
    assert!(g
        .embedding_bag(&[table], &input, Some(&wide), None, bag)
        .is_err());
}

/// A Gather whose axis is fed when the graph runs: its value configures the op for the run,
/// the run into a caller's buffer and the gradient, and a fed axis that is not a scalar is
/// refused at run time.
#[test]
fn a_fed_axis_configures_the_run_and_the_gradient() {
    let g = Scope::graph();
    let axis = g.placeholder(DType::I64, Shape::unknown()).unwrap();
    let params = g.placeholder(DType::F64, Shape::unknown()).unwrap();
    let ids = g.constant(Tensor::from(array![2i32, 2, 0].into_dyn()));
    let rows = g
        .gather(&params, &ids, &axis, GatherOpOptions::new())
        .unwrap();
    assert_eq!(rows.op_type(), "GatherV2");
    let grads = g
        .gradients(
            std::slice::from_ref(&rows),
            std::slice::from_ref(&params),
            None,
        )
        .unwrap();
    let table = Tensor::from(array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]].into_dyn());
    let one = Tensor::from(ndarray::arr0(1i64).into_dyn());
    let feeds = Feeds::new()
        .feed_tensor(&axis, &one)
        .unwrap()
        .feed_tensor(&params, &table)
        .unwrap();
    let session = Session::new(&g);
    let out = session
        .run_tensors(&[rows.clone(), grads[0].clone()], &feeds)
        .unwrap();
    assert_eq!(
        out[0],
        Tensor::from(array![[3.0f64, 3.0, 1.0], [6.0, 6.0, 4.0]].into_dyn())
    );
    assert_eq!(
        out[1],
        Tensor::from(array![[1.0f64, 0.0, 2.0], [1.0, 0.0, 2.0]].into_dyn())
    );
    let mut into = ndarray::Array2::<f64>::zeros((2, 3));
    session
        .run_into(&rows, &feeds, into.view_mut().into_dyn().into())
        .unwrap();
    assert_eq!(into, array![[3.0, 3.0, 1.0], [6.0, 6.0, 4.0]]);
    let vector = Tensor::from(array![1i64].into_dyn());
    let feeds = Feeds::new()
        .feed_tensor(&axis, &vector)
        .unwrap()
        .feed_tensor(&params, &table)
        .unwrap();
    assert_eq!(
        session.run_tensors(&[rows], &feeds).unwrap_err(),
        OpError::FedShape {
            attr: "axis".into(),
            rank: 0,
            shape: "[1]".into()
        }
    );
    // A feed replaces a constant axis too, as in TensorFlow.
    let zero = g.constant(Tensor::from(ndarray::arr0(0i32).into_dyn()));
    let square = g.constant(Tensor::from(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()));
    let first = g.constant(Tensor::from(array![0i32].into_dyn()));
    let picked = g
        .gather(&square, &first, &zero, GatherOpOptions::new())
        .unwrap();
    let one = Tensor::from(ndarray::arr0(1i32).into_dyn());
    let fed = Feeds::new().feed_tensor(&zero, &one).unwrap();
    let session = Session::new(&g);
    let out = session
        .run_tensors(std::slice::from_ref(&picked), &fed)
        .unwrap();
    assert_eq!(out[0], Tensor::from(array![[1.0f32], [3.0]].into_dyn()));
    let out = session.run_tensors(&[picked], &Feeds::new()).unwrap();
    assert_eq!(out[0], Tensor::from(array![[1.0f32, 2.0]].into_dyn()));
}
