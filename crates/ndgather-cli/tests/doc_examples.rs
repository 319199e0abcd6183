//! Every worked example of the five seed pages, with its documented output, plus the
//! identities the pages state in prose or code; and every example through the op API.

use ndarray::{s, Array, ArrayD, Axis, IxDyn};
use ndgather::graph::{
    Constant, Feeds, Gather, GatherNd, GatherNdOpOptions, GatherOpOptions, Output, Placeholder,
    Scope, Session,
};
use ndgather::shape::Shape;
use ndgather::{gather, gather_nd, GatherNdOptions, GatherOptions, Tensor, TensorElement};
use ndgather_cli::examples::{self, Expected, Op};

#[test]
fn every_example_gives_the_documented_result() {
    let failures: Vec<String> = examples::ALL
        .iter()
        .filter_map(|e| e.check().err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_page_is_covered() {
    let count = |page: &str| examples::ALL.iter().filter(|e| e.page == page).count();
    assert_eq!(count("tf.gather (TF 2.14)"), 14);
    assert_eq!(count("tf.gather (TF r1.4)"), 5);
    assert_eq!(count("tf.gather_nd (TF 2.x)"), 16);
    assert_eq!(count("GatherNd (TF Java)"), 10);
    // Values examples really compare values.
    assert!(
        examples::ALL
            .iter()
            .filter(|e| matches!(e.expected, Expected::Values(_)))
            .count()
            >= 35
    );
}

/// `params[3]` and `tf.gather(params, 3)` agree: scalar indices drop the axis.
#[test]
fn scalar_index_is_plain_indexing() {
    let params =
        ArrayD::from_shape_vec(IxDyn(&[6]), (0..6).map(|k| format!("p{k}")).collect()).unwrap();
    let out = gather(&params, &ndarray::arr0(3)).unwrap();
    assert_eq!(out.ndim(), 0);
    assert_eq!(out[[]], params[[3]]);
}

/// "For any location in indices, result[:, :, a, b, :] == params[:, :, indices[a, b], :]".
#[test]
fn each_index_places_its_slice() {
    let params = Array::from_shape_fn((5, 6, 7, 8), |(a, b, c, d)| {
        (a * 1000 + b * 100 + c * 10 + d) as f32
    });
    let indices = Array::from_shape_fn((10, 11), |(a, b)| ((a * 11 + b) * 5 % 7) as i32);
    let result = GatherOptions::new()
        .axis(2)
        .gather(&params, &indices)
        .unwrap();
    assert_eq!(result.shape(), &[5, 6, 10, 11, 8]);
    for a in 0..10 {
        for b in 0..11 {
            let got = result.slice(s![.., .., a, b, ..]);
            let want = params.slice(s![.., .., indices[[a, b]] as usize, ..]);
            assert_eq!(got, want);
        }
    }
}

/// batch_dims=1 is an outer loop over the first axis (`manually_batched_gather`).
#[test]
fn batch_dims_is_an_outer_loop() {
    let params = ndarray::array![[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]];
    let indices = ndarray::array![[2, 4], [0, 4], [1, 3]];
    let batched = GatherOptions::new()
        .axis(1)
        .batch_dims(1)
        .gather(&params, &indices)
        .unwrap();
    let rows: Vec<ArrayD<i32>> = params
        .outer_iter()
        .zip(indices.outer_iter())
        .map(|(p, i)| GatherOptions::new().axis(0).gather(&p, &i).unwrap())
        .collect();
    let views: Vec<_> = rows.iter().map(|r| r.view()).collect();
    assert_eq!(batched, ndarray::stack(Axis(0), &views).unwrap());
}

/// The r1.4 page's three formulas, element by element, for every axis.
#[test]
fn r1_4_formulas() {
    let params = Array::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 100 + b * 10 + c) as i64);
    for axis in 0..3usize {
        let dim = params.shape()[axis];
        let o = GatherOptions::new().axis(axis as i64);
        // Scalar indices: rank(params) - 1.
        let out = o.gather(&params, &ndarray::arr0((dim - 1) as i32)).unwrap();
        assert_eq!(out, params.index_axis(Axis(axis), dim - 1).into_dyn());
        // Vector and higher-rank indices: the axis is replaced by indices' shape.
        let idx = Array::from_shape_fn((2, 2), |(i, j)| ((i + 2 * j) % dim) as i32);
        let out = o.gather(&params, &idx).unwrap();
        assert_eq!(out.ndim(), 4);
        for i in 0..2 {
            for j in 0..2 {
                let got = out.index_axis(Axis(axis), i);
                let got = got.index_axis(Axis(axis), j);
                assert_eq!(
                    got,
                    params
                        .index_axis(Axis(axis), idx[[i, j]] as usize)
                        .into_dyn()
                );
            }
        }
    }
}

/// gather_nd with batch_dims equals a separate gather_nd for each location in the batch.
#[test]
fn gather_nd_batch_dims_is_a_loop() {
    let params = Array::from_shape_fn((5, 7, 3), |(a, b, c)| (a * 100 + b * 10 + c) as f64);
    let indices = ndarray::array![[1], [0], [4], [2], [1]];
    let batched = GatherNdOptions::new()
        .batch_dims(1)
        .gather_nd(&params, &indices)
        .unwrap();
    assert_eq!(batched.shape(), &[5, 3]);
    for (k, (p, i)) in params.outer_iter().zip(indices.outer_iter()).enumerate() {
        assert_eq!(batched.index_axis(Axis(0), k), gather_nd(&p, &i).unwrap());
    }
}

/// The examples as JSON, for the Python package's tests
/// (`crates/ndgather-py/tests/data/doc_examples.json`): the file must match `examples::ALL`.
/// `NDGATHER_BLESS=1 cargo test -p ndgather-cli --test cli_suite doc_examples` rewrites it
/// after a change.
#[test]
fn python_copy_of_the_examples_is_current() {
    use examples::{Input, Op};
    use serde_json::{json, Value};
    let input = |i: &Input| match *i {
        Input::Literal(text) => json!({ "literal": text }),
        Input::Zeros(shape) => json!({ "zeros": shape }),
        Input::Iota(shape) => json!({ "iota": shape }),
        Input::Indices(shape, bound) => json!({ "indices": shape, "bound": bound }),
    };
    let cases: Vec<Value> = examples::ALL
        .iter()
        .map(|e| {
            let op = match e.op {
                Op::Gather { axis, batch_dims } => {
                    json!({ "op": "gather", "axis": axis, "batch_dims": batch_dims })
                }
                Op::GatherNd { batch_dims } => {
                    json!({ "op": "gather_nd", "axis": null, "batch_dims": batch_dims })
                }
            };
            let expected = match e.expected {
                Expected::Values(text) => json!({ "values": text }),
                Expected::Shape(shape) => json!({ "shape": shape }),
            };
            json!({ "page": e.page, "call": e.call, "call_options": op,
                    "params": input(&e.params), "indices": input(&e.indices),
                    "expected": expected })
        })
        .collect();
    let text = serde_json::to_string_pretty(&cases).unwrap() + "\n";
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ndgather-py/tests/data/doc_examples.json"
    );
    if std::env::var_os("NDGATHER_BLESS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == text,
        "{path} is out of date: run NDGATHER_BLESS=1 cargo test -p ndgather-cli --test cli_suite \
         doc_examples"
    );
}

/// Runs one documented example through the op API, eagerly and as a graph with placeholders
/// of unknown dimensions, and checks both against the documented result.
fn run_example<T: TensorElement + PartialEq + std::fmt::Debug>(
    ex: &examples::DocExample,
    params: ArrayD<T>,
    indices: ArrayD<i32>,
) {
    let expected = ex.check().unwrap().into_array::<T>().unwrap();
    // Eager.
    let scope = Scope::eager();
    let p = Constant::create(&scope, params.clone()).unwrap();
    let i = Constant::create(&scope, indices.clone()).unwrap();
    let eager: Output<T> = match ex.op {
        Op::Gather { axis, batch_dims } => {
            let axis = axis.unwrap_or(if batch_dims < 0 {
                batch_dims + indices.ndim() as i64
            } else {
                batch_dims
            });
            let a = Constant::scalar(&scope, axis).unwrap();
            Gather::create(
                &scope,
                &p,
                &i,
                &a,
                GatherOpOptions::new().batch_dims(batch_dims),
            )
            .unwrap()
            .output()
        }
        Op::GatherNd { batch_dims } => GatherNd::create(
            &scope,
            &p,
            &i,
            GatherNdOpOptions::new().batch_dims(batch_dims),
        )
        .unwrap()
        .output(),
    };
    assert_eq!(eager.value().unwrap(), expected, "{} (eager)", ex.call);
    // Graph, with placeholders whose dimensions are unknown until fed.
    let graph = Scope::graph();
    let p = Placeholder::<T>::create(&graph, Shape::unknown_dims(params.ndim())).unwrap();
    let i = Placeholder::<i32>::create(&graph, Shape::unknown_dims(indices.ndim())).unwrap();
    let out: Output<T> = match ex.op {
        Op::Gather { axis, batch_dims } => {
            let axis = axis.unwrap_or(if batch_dims < 0 {
                batch_dims + indices.ndim() as i64
            } else {
                batch_dims
            });
            let a = Constant::scalar(&graph, axis as i32).unwrap();
            Gather::create(
                &graph,
                &p,
                &i,
                &a,
                GatherOpOptions::new().batch_dims(batch_dims),
            )
            .unwrap()
            .output()
        }
        Op::GatherNd { batch_dims } => GatherNd::create(
            &graph,
            &p,
            &i,
            GatherNdOpOptions::new().batch_dims(batch_dims),
        )
        .unwrap()
        .output(),
    };
    assert!(
        out.shape().accepts(expected.shape()),
        "{}: static {} vs {:?}",
        ex.call,
        out.shape(),
        expected.shape()
    );
    let feeds = Feeds::new()
        .feed(&p, params)
        .unwrap()
        .feed(&i, indices)
        .unwrap();
    assert_eq!(
        Session::new(&graph).run(&out, &feeds).unwrap(),
        expected,
        "{} (graph)",
        ex.call
    );
}

#[test]
fn seed_examples_through_the_op_api() {
    let mut count = 0;
    for ex in examples::ALL {
        let (Ok(params), Ok(indices)) = (ex.params.tensor(), ex.indices.tensor()) else {
            panic!("{}", ex.call)
        };
        let indices = indices.into_array::<i32>().unwrap();
        match params {
            Tensor::String(p) => run_example(ex, p.to_array(), indices),
            Tensor::F32(p) => run_example(ex, p, indices),
            Tensor::I32(p) => run_example(ex, p, indices),
            other => panic!("unexpected dtype {}", other.dtype()),
        }
        count += 1;
    }
    assert_eq!(count, examples::ALL.len());
}
