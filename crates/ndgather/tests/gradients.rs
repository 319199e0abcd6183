//! Gradients and scatters: TensorFlow's values, the sparse forms, the adjoint identity and
//! finite differences on random cases, determinism across thread counts, and the op API.

use ndarray::{array, ArrayD, IxDyn};
use ndgather::grad::{gather_grad, gather_grad_sparse, gather_nd_grad, gather_nd_grad_sparse};
use ndgather::scatter::{scatter_nd, unsorted_segment_sum};
use ndgather::{BadIndices, Error, GatherNdOptions, GatherOptions};
use proptest::prelude::*;

/// An array from a nested list of integers, written as JSON (`[[1, 0], [2, 3]]`).
fn i32s(text: &str) -> ArrayD<i32> {
    fn walk(v: &serde_json::Value, depth: usize, shape: &mut Vec<usize>, out: &mut Vec<i32>) {
        match v {
            serde_json::Value::Array(items) => {
                if shape.len() == depth {
                    shape.push(items.len());
                }
                assert_eq!(shape[depth], items.len(), "ragged list");
                items.iter().for_each(|x| walk(x, depth + 1, shape, out));
            }
            x => out.push(x.as_i64().expect("an integer") as i32),
        }
    }
    let (mut shape, mut data) = (vec![], vec![]);
    walk(
        &serde_json::from_str(text).unwrap(),
        0,
        &mut shape,
        &mut data,
    );
    ArrayD::from_shape_vec(IxDyn(&shape), data).unwrap()
}

fn f64s(text: &str) -> ArrayD<f64> {
    i32s(text).mapv(f64::from)
}

#[test]
fn tensorflow_gather_gradients() {
    let ones = ArrayD::<f64>::ones(IxDyn(&[2, 3]));
    assert_eq!(
        gather_grad(&[2, 3], &array![2, 2, 0], &ones, 1, 0).unwrap(),
        f64s("[[1, 0, 2], [1, 0, 2]]")
    );
    let ones = ArrayD::<f64>::ones(IxDyn(&[2, 2]));
    assert_eq!(
        gather_grad(&[2, 3], &array![[2, 2], [0, 1]], &ones, 1, 1).unwrap(),
        f64s("[[0, 0, 2], [1, 1, 0]]")
    );
    // Negative axis and batch_dims.
    assert_eq!(
        gather_grad(&[2, 3], &array![[2, 2], [0, 1]], &ones, -1, -1).unwrap(),
        f64s("[[0, 0, 2], [1, 1, 0]]")
    );
    // Axis 0: rows repeat and add up (P [2,3], I [1,1,0]).
    let ones = ArrayD::<f64>::ones(IxDyn(&[3, 3]));
    assert_eq!(
        gather_grad(&[2, 3], &array![1, 1, 0], &ones, 0, 0).unwrap(),
        f64s("[[1, 1, 1], [2, 2, 2]]")
    );
}

#[test]
fn tensorflow_gather_nd_gradients() {
    let ones = ArrayD::<f64>::ones(IxDyn(&[3]));
    assert_eq!(
        gather_nd_grad(&[2, 3], &array![[1, 2], [1, 2], [0, 0]], &ones, 0).unwrap(),
        f64s("[[1, 0, 0], [0, 0, 2]]")
    );
    // testGradientsRank2Elements, testGradientsRank2Slices
    assert_eq!(
        gather_nd_grad(&[2, 2], &array![[0, 0], [1, 1]], &array![1.0, 2.0], 0).unwrap(),
        f64s("[[1, 0], [0, 2]]")
    );
    assert_eq!(
        gather_nd_grad(&[2, 2], &array![[1], [0]], &f64s("[[1, 2], [3, 4]]"), 0).unwrap(),
        f64s("[[3, 4], [1, 2]]")
    );
    // testGradientsRank3Elements
    let g = gather_nd_grad(
        &[2, 2, 2],
        &i32s("[[[0, 1], [1, 0]], [[0, 0], [1, 1]]]"),
        &f64s("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]"),
        0,
    )
    .unwrap();
    assert_eq!(g, f64s("[[[5, 6], [1, 2]], [[3, 4], [7, 8]]]"));
    // testGradientsRank7Elements
    let indices = i32s("[[[ [[[[0, 0, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0]]]], [[[[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 1]]]] ]]]");
    let grad = f64s("[[[ [[[[1, 2], [3, 4]]]], [[[[5, 6], [7, 8]]]] ]]]");
    let expected = f64s("[[[ [[[[5, 6], [1, 2]]]], [[[[3, 4], [7, 8]]]] ]]]");
    assert_eq!(
        gather_nd_grad(expected.shape(), &indices, &grad, 0).unwrap(),
        expected
    );
    // testGradientsRank2SlicesWithEmptySpace, dense and sparse.
    let indices = array![[2], [0], [5]];
    let grad = f64s(
        "[[1, 1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3, 3]]",
    );
    let mut expected = ArrayD::<f64>::zeros(IxDyn(&[6, 9]));
    for (row, v) in [(0, 2.0), (2, 1.0), (5, 3.0)] {
        expected.index_axis_mut(ndarray::Axis(0), row).fill(v);
    }
    assert_eq!(
        gather_nd_grad(&[6, 9], &indices, &grad, 0).unwrap(),
        expected
    );
    let sparse = gather_nd_grad_sparse(&[6, 9], &indices, &grad).unwrap();
    assert_eq!(sparse.indices, vec![2, 0, 5]);
    assert_eq!(sparse.to_dense().unwrap(), expected);
    // With batch_dims.
    let g = gather_nd_grad(&[2, 3], &array![[2], [2]], &array![1.0, 5.0], 1).unwrap();
    assert_eq!(g, f64s("[[0, 0, 1], [0, 0, 5]]"));
}

#[test]
fn sparse_gradients_for_embeddings() {
    let grad = f64s("[[1, 1, 1], [1, 1, 1], [1, 1, 1]]");
    let s = gather_grad_sparse(&[1_000_000, 3], &array![1, 1, 0], &grad).unwrap();
    assert_eq!(s.indices, vec![1, 1, 0]);
    assert_eq!(s.values.shape(), &[3, 3]);
    assert_eq!(s.dense_shape, vec![1_000_000, 3]);
    let merged = s.merge_duplicates().unwrap();
    assert_eq!(merged.indices, vec![0, 1]);
    assert_eq!(merged.values, f64s("[[1, 1, 1], [2, 2, 2]]"));
    let small = gather_grad_sparse(&[2, 3], &array![1, 1, 0], &grad).unwrap();
    assert_eq!(small.to_dense().unwrap(), f64s("[[1, 1, 1], [2, 2, 2]]"));
    assert!(matches!(
        gather_grad_sparse(&[2, 3], &array![2], &f64s("[[1, 1, 1]]")),
        Err(Error::BadIndex { .. })
    ));
    assert!(matches!(
        gather_nd_grad_sparse(&[2, 3], &array![[0, 1]], &array![1.0]),
        Err(Error::SparseNeedsRows { .. })
    ));
    assert!(matches!(
        gather_grad(&[2, 3], &array![1], &f64s("[[1, 1]]"), 0, 0),
        Err(Error::GradShapeMismatch { .. })
    ));
}

#[test]
fn scatter_ops_as_tensorflow() {
    // tf.scatter_nd's documented examples.
    let out = scatter_nd(
        &array![[4], [3], [1], [7]],
        &array![9, 10, 11, 12],
        &[8],
        BadIndices::Error,
    )
    .unwrap();
    assert_eq!(out, array![0, 11, 0, 10, 9, 0, 0, 12].into_dyn());
    let updates = f64s("[[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]], [[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]]");
    let out = scatter_nd(&array![[0], [2]], &updates, &[4, 4, 4], BadIndices::Error).unwrap();
    assert_eq!(
        out.index_axis(ndarray::Axis(0), 2),
        updates.index_axis(ndarray::Axis(0), 1)
    );
    assert_eq!(out.index_axis(ndarray::Axis(0), 1).sum(), 0.0);
    let err = scatter_nd(
        &array![[1], [7]],
        &array![1.0, 2.0],
        &[4],
        BadIndices::Error,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "indices[1] = [7] does not index into shape [4]"
    );
    assert_eq!(
        scatter_nd(
            &array![[1], [7]],
            &array![1.0, 2.0],
            &[4],
            BadIndices::Ignore
        )
        .unwrap(),
        array![0.0, 1.0, 0.0, 0.0].into_dyn()
    );
    assert!(matches!(
        scatter_nd(&array![[1]], &array![1.0, 2.0], &[4], BadIndices::Error),
        Err(Error::UpdatesShapeMismatch { .. })
    ));
    // tf.math.unsorted_segment_sum's documented example.
    let c = array![[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]];
    assert_eq!(
        unsorted_segment_sum(&c, &array![0, 1, 0], 2, BadIndices::Error).unwrap(),
        array![[5, 5, 5, 5], [5, 6, 7, 8]].into_dyn()
    );
    // Negative ids are dropped; ids too large are an error on the CPU, dropped under Ignore.
    assert_eq!(
        unsorted_segment_sum(&c, &array![0, -1, 0], 2, BadIndices::Error).unwrap(),
        array![[5, 5, 5, 5], [0, 0, 0, 0]].into_dyn()
    );
    let err = unsorted_segment_sum(&c, &array![0, 1, 5], 2, BadIndices::Error).unwrap_err();
    assert_eq!(err.to_string(), "segment_ids[2] = 5 is out of range [0, 2)");
    assert_eq!(
        unsorted_segment_sum(&c, &array![0, 1, 5], 2, BadIndices::Ignore).unwrap(),
        array![[1, 2, 3, 4], [5, 6, 7, 8]].into_dyn()
    );
    let err = unsorted_segment_sum(&c, &array![0, 1], 2, BadIndices::Error).unwrap_err();
    assert_eq!(
        err.to_string(),
        "data.shape = [3,4] does not start with segment_ids.shape = [2]"
    );
}

fn dot(a: &ArrayD<f64>, b: &ArrayD<f64>) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[derive(Debug, Clone)]
struct Case {
    params: Vec<usize>,
    indices: Vec<usize>,
    axis: usize,
    batch_dims: usize,
    seeds: Vec<u32>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=4)
        .prop_flat_map(|r| (prop::collection::vec(1usize..5, r), 0..r, 0usize..=2))
        .prop_flat_map(|(p, bd, extra)| {
            let r = p.len();
            (
                Just(p),
                Just(bd),
                bd..r,
                prop::collection::vec(0usize..4, extra),
            )
        })
        .prop_flat_map(|(p, bd, axis, extra)| {
            let mut i = p[..bd].to_vec();
            i.extend(extra);
            let n: usize = i.iter().product::<usize>() * 2 + p.iter().product::<usize>() + 64;
            (
                Just(p),
                Just(i),
                Just(axis),
                Just(bd),
                prop::collection::vec(any::<u32>(), n),
            )
        })
        .prop_map(|(params, indices, axis, batch_dims, seeds)| Case {
            params,
            indices,
            axis,
            batch_dims,
            seeds,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// ⟨gather(p), g⟩ = ⟨p, gather_grad(g)⟩, exactly (integer values keep every sum exact).
    #[test]
    fn gather_grad_is_the_adjoint(c in case()) {
        let mut s = c.seeds.iter().copied().cycle();
        let dim = c.params[c.axis];
        let indices = ArrayD::from_shape_simple_fn(IxDyn(&c.indices), || (s.next().unwrap() as usize % dim) as i64);
        let p = ArrayD::from_shape_simple_fn(IxDyn(&c.params), || (s.next().unwrap() % 17) as f64 - 8.0);
        let o = GatherOptions::new().axis(c.axis as i64).batch_dims(c.batch_dims as i64);
        let out = o.gather(&p, &indices).unwrap();
        let g = ArrayD::from_shape_simple_fn(IxDyn(out.shape()), || (s.next().unwrap() % 13) as f64 - 6.0);
        let grad = gather_grad(&c.params, &indices, &g, c.axis as i64, c.batch_dims as i64).unwrap();
        prop_assert_eq!(grad.shape(), p.shape());
        prop_assert_eq!(dot(&out, &g), dot(&p, &grad));
    }

    /// The same for gather_nd, over every index depth.
    #[test]
    fn gather_nd_grad_is_the_adjoint(c in case(), depth_seed in 0usize..8) {
        let bd = c.batch_dims;
        let depth = depth_seed % (c.params.len() - bd + 1);
        let mut ishape = c.indices.clone();
        ishape.truncate(bd.max(ishape.len().min(bd + 2)));
        ishape.push(depth);
        let mut s = c.seeds.iter().copied().cycle();
        let indices = ArrayD::from_shape_fn(IxDyn(&ishape), |ix| {
            let k = ix[ishape.len() - 1];
            (s.next().unwrap() as usize % c.params[bd + k]) as i64
        });
        let p = ArrayD::from_shape_simple_fn(IxDyn(&c.params), || (s.next().unwrap() % 17) as f64 - 8.0);
        let out = GatherNdOptions::new().batch_dims(bd as i64).gather_nd(&p, &indices).unwrap();
        let g = ArrayD::from_shape_simple_fn(IxDyn(out.shape()), || (s.next().unwrap() % 13) as f64 - 6.0);
        let grad = gather_nd_grad(&c.params, &indices, &g, bd as i64).unwrap();
        prop_assert_eq!(dot(&out, &g), dot(&p, &grad));
    }
}

/// Central differences of f(p) = ⟨gather(p), g⟩ against the gradient, element by element.
#[test]
fn finite_differences() {
    let p = ArrayD::from_shape_fn(IxDyn(&[3, 4, 2]), |ix| {
        (ix[0] * 8 + ix[1] * 2 + ix[2]) as f64 * 0.37 - 2.0
    });
    let indices = array![[3, 0, 3], [1, 1, 2]];
    let o = GatherOptions::new().axis(1);
    let out = o.gather(&p, &indices).unwrap();
    let g = ArrayD::from_shape_fn(IxDyn(out.shape()), |ix| {
        ((ix[0] + 2 * ix[1] + 3 * ix[2] + ix[3]) % 5) as f64 * 0.5 - 1.0
    });
    let grad = gather_grad(p.shape(), &indices, &g, 1, 0).unwrap();
    let f = |q: &ArrayD<f64>| dot(&o.gather(q, &indices).unwrap(), &g);
    let h = 1e-3;
    for (k, &analytic) in grad.iter().enumerate() {
        let (mut up, mut down) = (p.clone(), p.clone());
        up.as_slice_mut().unwrap()[k] += h;
        down.as_slice_mut().unwrap()[k] -= h;
        let numeric = (f(&up) - f(&down)) / (2.0 * h);
        assert!(
            (numeric - analytic).abs() < 1e-8,
            "element {k}: {numeric} vs {analytic}"
        );
    }
}

/// Bit-identical sums whatever the number of threads, equal to sums in index order.
#[test]
fn deterministic_across_thread_counts() {
    let rows = 50_000;
    let indices = ArrayD::from_shape_fn(IxDyn(&[rows]), |ix| ((ix[0] * 7919) % 97) as i64);
    let grad = ArrayD::from_shape_fn(IxDyn(&[rows, 8]), |ix| {
        ((ix[0] * 31 + ix[1]) as f32 * 0.1).sin() * 1e3
    });
    let mut expected = ArrayD::<f32>::zeros(IxDyn(&[97, 8]));
    for r in 0..rows {
        for c in 0..8 {
            expected[[indices[[r]] as usize, c]] += grad[[r, c]];
        }
    }
    let bits = |a: &ArrayD<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for threads in [1, 2, 3, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let g = pool.install(|| gather_grad(&[97, 8], &indices, &grad, 0, 0).unwrap());
        assert_eq!(bits(&g), bits(&expected), "{threads} threads");
        let nd = pool.install(|| {
            gather_nd_grad(
                &[97, 8],
                &indices.clone().insert_axis(ndarray::Axis(1)),
                &grad,
                0,
            )
            .unwrap()
        });
        assert_eq!(bits(&nd), bits(&expected), "{threads} threads (gather_nd)");
        let seg =
            pool.install(|| unsorted_segment_sum(&grad, &indices, 97, BadIndices::Error).unwrap());
        assert_eq!(
            bits(&seg),
            bits(&expected),
            "{threads} threads (segment sum)"
        );
    }
}

#[test]
fn gradients_through_the_op_api() {
    use ndgather::graph::{
        Constant, Feeds, Gather, GatherNd, GatherNdOpOptions, GatherOpOptions, Placeholder, Scope,
        Session,
    };
    use ndgather::shape::Shape;
    // Eager.
    let e = Scope::eager();
    let p = Constant::create(&e, ArrayD::<f64>::zeros(IxDyn(&[2, 3]))).unwrap();
    let i = Constant::create(&e, array![2i32, 2, 0].into_dyn()).unwrap();
    let a = Constant::scalar(&e, 1i32).unwrap();
    let op = Gather::create(&e, &p, &i, &a, GatherOpOptions::new()).unwrap();
    let up = Constant::create(&e, ArrayD::<f64>::ones(IxDyn(&[2, 3]))).unwrap();
    assert_eq!(
        op.grad(&e, &up).unwrap().value().unwrap(),
        f64s("[[1, 0, 2], [1, 0, 2]]")
    );
    let nd_i = Constant::create(&e, array![[1i64, 2], [1, 2], [0, 0]].into_dyn()).unwrap();
    let nd = GatherNd::create(&e, &p, &nd_i, GatherNdOpOptions::new()).unwrap();
    let up3 = Constant::create(&e, ArrayD::<f64>::ones(IxDyn(&[3]))).unwrap();
    assert_eq!(
        nd.grad(&e, &up3).unwrap().value().unwrap(),
        f64s("[[1, 0, 0], [0, 0, 2]]")
    );
    // Graph: params' shape known only when fed.
    let g = Scope::graph();
    let p = Placeholder::<f32>::create(&g, Shape::from_dims(vec![None, Some(3)])).unwrap();
    let i = Placeholder::<i32>::create(&g, Shape::from_dims(vec![None, Some(2)])).unwrap();
    let a = Constant::scalar(&g, 1i64).unwrap();
    let op = Gather::create(&g, &p, &i, &a, GatherOpOptions::new().batch_dims(1)).unwrap();
    let up = Placeholder::<f32>::create(&g, Shape::unknown()).unwrap();
    let grad = op.grad(&g, &up).unwrap();
    assert_eq!(grad.shape().to_string(), "[?,3]");
    let feeds = Feeds::new()
        .feed(&p, ArrayD::zeros(IxDyn(&[2, 3])))
        .unwrap()
        .feed(&i, array![[2, 2], [0, 1]].into_dyn())
        .unwrap()
        .feed(&up, ArrayD::ones(IxDyn(&[2, 2])))
        .unwrap();
    let got = Session::new(&g).run(&grad, &feeds).unwrap();
    assert_eq!(got, f64s("[[0, 0, 2], [1, 1, 0]]").mapv(|v| v as f32));
    // An upstream gradient of the wrong static shape is refused at creation.
    let bad = Constant::create(&g, ArrayD::<f32>::ones(IxDyn(&[5]))).unwrap();
    assert!(op.grad(&g, &bad).is_err());
}
