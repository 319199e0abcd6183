//! The tensor_scatter_nd ops against TensorFlow's own results (`data/tensor_scatter_cases.json`,
//! made by `data/tensor_scatter_cases.py`), bit for bit, out of place and in place; and
//! against a sequential reference on 1, 2 and 4 threads.

use crate::common;

use common::case_file::{same, tensor};
use common::write_ops::{run_in_place, run_new};
use ndarray::{ArrayD, IxDyn};
use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
use ndgather::{BadIndices, Error, Tensor};
use proptest::prelude::*;
use serde_json::Value;

/// TensorFlow's message, or for an op it has no kernel for, its first words up to the dtype
/// (TensorFlow goes on to list its attributes and kernels).
fn matches(err: &Error, case: &Value) -> bool {
    let expected = case["error"]["message"].as_str().unwrap();
    let got = err.to_string();
    match case["error"]["class"].as_str().unwrap() {
        "NotFoundError" => {
            let dtype_end = expected.find(", Tindices").unwrap();
            matches!(err, Error::NoKernel { .. }) && got.starts_with(&expected[..dtype_end])
        }
        _ => got == expected,
    }
}

fn cases() -> Vec<Value> {
    let text = include_str!("data/tensor_scatter_cases.json");
    let file: Value = serde_json::from_str(text).unwrap();
    file["cases"].as_array().unwrap().clone()
}

/// A case's tensor, indices and updates.
fn inputs(case: &Value) -> (Tensor, Tensor, Tensor) {
    let t = |k: &str| tensor(&case[k]);
    (t("tensor"), t("indices"), t("updates"))
}

fn op_of(case: &Value) -> TensorScatter {
    let kind = ScatterKind::from_name(case["kind"].as_str().unwrap()).unwrap();
    let policy = BadIndices::from_name(case["bad_indices"].as_str().unwrap()).unwrap();
    TensorScatter::new(kind).bad_indices(policy)
}

#[test]
fn tensorflow_cases_out_of_place() {
    let cases = cases();
    let (mut passed, mut errors) = (0, 0);
    for (n, case) in cases.iter().enumerate() {
        let (t, i, u) = inputs(case);
        let got = run_new(&op_of(case), t.view(), &i.view(), &u.view());
        match (&got, case.get("output")) {
            (Ok(out), Some(expected)) => assert!(same(out, &tensor(expected)), "case {n}: {case}"),
            (Err(e), None) => {
                assert!(matches(e, case), "case {n}: {e} vs {}", case["error"]);
                errors += 1;
            }
            _ => panic!("case {n}: {got:?} vs {case}"),
        }
        passed += 1;
    }
    assert_eq!(passed, cases.len());
    assert!(errors > 300, "{errors} error cases");
    println!("{passed} TensorFlow cases passed, {errors} of them errors");
}

#[test]
fn tensorflow_cases_in_place_and_unchanged_on_error() {
    for (n, case) in cases().iter().enumerate() {
        let (mut t, i, u) = inputs(case);
        let before = inputs(case).0;
        let result = run_in_place(&op_of(case), t.view_mut(), &i.view(), &u.view());
        match case.get("output") {
            Some(expected) => {
                result.unwrap();
                assert!(same(&t, &tensor(expected)), "case {n}");
            }
            None => {
                assert!(result.is_err(), "case {n}: {case}");
                assert!(same(&t, &before), "case {n}: written on error");
            }
        }
    }
}

/// TensorFlow's registered gradients, for float32 and float64 cases, bit for bit.
#[test]
fn tensorflow_gradients() {
    let mut checked = std::collections::BTreeMap::new();
    for (n, case) in cases().iter().enumerate() {
        let Some(grad) = case.get("grad") else {
            continue;
        };
        let (t, i, u) = inputs(case);
        let op = op_of(case);
        let out = run_new(&op, t.view(), &i.view(), &u.view()).unwrap();
        let upstream = tensor(&grad["upstream"]);
        let (dt, du) = op
            .grad(
                &t.view(),
                &i.view(),
                &u.view(),
                &out.view(),
                &upstream.view(),
            )
            .unwrap();
        assert!(
            same(&dt, &tensor(&grad["tensor"])),
            "case {n}: {dt:?} vs {}",
            grad["tensor"]
        );
        assert!(
            same(&du, &tensor(&grad["updates"])),
            "case {n}: {du:?} vs {}",
            grad["updates"]
        );
        *checked
            .entry(case["kind"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    assert_eq!(checked.len(), 5, "{checked:?}");
    assert!(checked.values().all(|&c| c >= 30), "{checked:?}");
}

/// The same gradients through the op API: a graph of placeholders, `tensor_scatter` and
/// `gradients` (TF's `tf.gradients`), run by a session.
#[test]
fn tensorflow_gradients_through_a_graph() {
    use ndgather::graph::{Feeds, Scope, Session};
    use ndgather::shape::Shape;
    let mut checked = 0;
    for case in cases() {
        let Some(grad) = case.get("grad") else {
            continue;
        };
        let (t, i, u) = inputs(&case);
        let graph = Scope::graph();
        let tp = graph.placeholder(t.dtype(), Shape::unknown()).unwrap();
        let up = graph
            .placeholder(u.dtype(), Shape::known(u.shape()))
            .unwrap();
        let ic = graph.constant(i);
        let out = graph.tensor_scatter(&tp, &ic, &up, op_of(&case)).unwrap();
        let upstream = graph.constant(tensor(&grad["upstream"]));
        let grads = graph
            .gradients(
                std::slice::from_ref(&out),
                &[tp.clone(), up.clone()],
                Some(&[upstream]),
            )
            .unwrap();
        let feeds = Feeds::new()
            .feed_tensor(&tp, &t)
            .unwrap()
            .feed_tensor(&up, &u)
            .unwrap();
        let got = Session::new(&graph).run_tensors(&grads, &feeds).unwrap();
        assert!(same(&got[0], &tensor(&grad["tensor"])));
        assert!(same(&got[1], &tensor(&grad["updates"])));
        checked += 1;
    }
    assert!(checked >= 150, "{checked}");
}

/// TensorFlow's adds of duplicates equal np.add.at's and JAX's where the file has them: one
/// sequential order, the same bits.
#[test]
fn peers_agree_with_tensorflow() {
    let (mut add_at, mut jax) = (0, 0);
    for case in cases() {
        if let Some(np) = case.get("np_add_at") {
            assert!(same(&tensor(np), &tensor(&case["output"])));
            add_at += 1;
        }
        if let Some(j) = case.get("jax") {
            assert!(same(&tensor(j), &tensor(&case["output"])));
            jax += 1;
        }
    }
    assert!(
        add_at >= 50 && jax >= 50,
        "{add_at} np.add.at, {jax} JAX cases"
    );
}

/// The obviously correct scatter: one update after another.
fn sequential(kind: ScatterKind, table: &mut [f64], width: usize, ids: &[i64], ups: &[f64]) {
    for (k, &id) in ids.iter().enumerate() {
        let row = &mut table[id as usize * width..(id as usize + 1) * width];
        for (d, &s) in row.iter_mut().zip(&ups[k * width..(k + 1) * width]) {
            match kind {
                ScatterKind::Update => *d = s,
                ScatterKind::Add => *d += s,
                ScatterKind::Sub => *d -= s,
                ScatterKind::Min => *d = if s < *d { s } else { *d },
                ScatterKind::Max => *d = if *d < s { s } else { *d },
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Large enough to run in parallel, with heavy duplication: the same bits on 1, 2 and 4
    /// threads, equal to the sequential reference.
    #[test]
    fn threads_do_not_change_a_bit(
        kind in prop::sample::select(ScatterKind::ALL.to_vec()),
        rows in 1usize..300,
        width in 1usize..40,
        n in 2000usize..6000,
        seed in any::<u64>(),
    ) {
        let mut state = seed | 1;
        let mut next = move || { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state };
        let table: Vec<f64> = (0..rows * width).map(|_| (next() % 2000) as f64 / 7.0 - 100.0).collect();
        // A few hot ids take most updates.
        let ids: Vec<i64> = (0..n).map(|_| (next() % (1 + (next() % rows as u64))) as i64).collect();
        let ups: Vec<f64> = (0..n * width).map(|_| (next() % 100_000) as f64 / 3.0 - 10_000.0).collect();
        let mut expected = table.clone();
        sequential(kind, &mut expected, width, &ids, &ups);
        let t = Tensor::from(ArrayD::from_shape_vec(IxDyn(&[rows, width]), table).unwrap());
        let i = Tensor::from(ArrayD::from_shape_vec(IxDyn(&[n, 1]), ids).unwrap());
        let u = Tensor::from(ArrayD::from_shape_vec(IxDyn(&[n, width]), ups).unwrap());
        let op = TensorScatter::new(kind);
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let out = pool.install(|| run_new(&op, t.view(), &i.view(), &u.view())).unwrap();
            let out = out.as_array::<f64>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(&out, &expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }
    }
}

/// A caller's array of another layout (a transposed view) is written in place.
#[test]
fn in_place_on_a_strided_view() {
    let mut table = ndarray::Array2::<i32>::zeros((3, 4));
    let indices = ndarray::array![[1i64], [3], [1]].into_dyn();
    let updates = ndarray::array![[1i32, 2, 3], [4, 5, 6], [7, 8, 9]].into_dyn();
    let view = table.view_mut().reversed_axes().into_dyn();
    let add = TensorScatter::new(ScatterKind::Add);
    run_in_place(
        &add,
        view.into(),
        &indices.view().into(),
        &updates.view().into(),
    )
    .unwrap();
    assert_eq!(
        table,
        ndarray::array![[0, 8, 0, 4], [0, 10, 0, 5], [0, 12, 0, 6]]
    );
}

/// Every policy on index vectors out of range: `Error` refuses, `Ignore` and `Fill` drop,
/// `Clamp`, `Negative` and `Wrap` map into range.
#[test]
fn policies() {
    let run = |policy, ids: Vec<i64>| {
        let table = ArrayD::<i64>::zeros(IxDyn(&[4]));
        let n = ids.len();
        let i = ArrayD::from_shape_vec(IxDyn(&[n, 1]), ids).unwrap();
        let u =
            ArrayD::from_shape_vec(IxDyn(&[n]), (1..=n as i64).map(|v| v * 10).collect()).unwrap();
        let add = TensorScatter::new(ScatterKind::Add).bad_indices(policy);
        run_new(
            &add,
            table.view().into(),
            &i.view().into(),
            &u.view().into(),
        )
        .map(|t| {
            t.as_array::<i64>()
                .unwrap()
                .iter()
                .copied()
                .collect::<Vec<_>>()
        })
    };
    let ids = || vec![1, 5, -1, -5];
    assert_eq!(
        run(BadIndices::Error, ids()).unwrap_err().to_string(),
        "indices[1] = [5] does not index into shape [4]"
    );
    assert_eq!(run(BadIndices::Ignore, ids()).unwrap(), [0, 10, 0, 0]);
    assert_eq!(run(BadIndices::Fill, ids()).unwrap(), [0, 10, 0, 0]);
    assert_eq!(run(BadIndices::Clamp, ids()).unwrap(), [70, 10, 0, 20]);
    assert_eq!(run(BadIndices::Wrap, ids()).unwrap(), [0, 30, 0, 70]);
    assert_eq!(
        run(BadIndices::Negative, ids()).unwrap_err().to_string(),
        "indices[1] = [5] does not index into shape [4]"
    );
    assert_eq!(
        run(BadIndices::Negative, vec![1, -1, -4]).unwrap(),
        [30, 10, 0, 20]
    );
}

/// A gradient asked with an output or updates of shapes the forward op cannot have made (a
/// direct call of the gradient, as XLA's handler takes one) is an error, never a panic.
#[test]
fn gradients_refuse_outputs_and_updates_of_other_shapes() {
    let f = |shape: &[usize]| {
        let n: usize = shape.iter().product();
        Tensor::from(
            ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|k| k as f32).collect()).unwrap(),
        )
    };
    let (t, i) = (
        f(&[4, 2]),
        Tensor::from(ndarray::array![[1i64], [3]].into_dyn()),
    );
    for kind in [
        ScatterKind::Max,
        ScatterKind::Min,
        ScatterKind::Add,
        ScatterKind::Update,
    ] {
        let op = TensorScatter::new(kind);
        let good = run_new(&op, t.view(), &i.view(), &f(&[2, 2]).view()).unwrap();
        // An output (and upstream) of another shape than the tensor.
        let other = f(&[5, 2]);
        let err = op
            .grad(
                &t.view(),
                &i.view(),
                &f(&[2, 2]).view(),
                &other.view(),
                &other.view(),
            )
            .unwrap_err();
        assert!(
            matches!(err, Error::GradShapeMismatch { .. }),
            "{kind:?}: {err}"
        );
        // Updates of another shape than the index vectors pick.
        let got = op.grad(
            &t.view(),
            &i.view(),
            &f(&[3, 2]).view(),
            &good.view(),
            &good.view(),
        );
        if matches!(kind, ScatterKind::Max | ScatterKind::Min) {
            assert!(
                matches!(got.unwrap_err(), Error::GradShapeMismatch { .. }),
                "{kind:?}"
            );
        }
    }
}

/// Under the fill policy a bad index vector's update is dropped: its gradient is zero for
/// every kind, a min's and a max's too (not the NaN a gather would fill its slice with).
#[test]
fn a_dropped_updates_gradient_is_zero_under_the_fill_policy() {
    use ndgather::TensorView;
    let t = ArrayD::<f64>::zeros(IxDyn(&[4, 2]));
    let i = ArrayD::from_shape_vec(IxDyn(&[2, 1]), vec![1i64, 9]).unwrap();
    let u = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![5.0f64, -5.0, 6.0, 6.0]).unwrap();
    let up = ArrayD::<f64>::ones(IxDyn(&[4, 2]));
    for kind in [
        ScatterKind::Min,
        ScatterKind::Max,
        ScatterKind::Add,
        ScatterKind::Sub,
    ] {
        let op = TensorScatter::new(kind).bad_indices(BadIndices::Fill);
        let (tv, iv, uv) = (
            TensorView::from(t.view()),
            TensorView::from(i.view()),
            TensorView::from(u.view()),
        );
        let out = run_new(&op, tv.clone(), &iv, &uv).unwrap();
        let (dt, du) = op
            .grad(&tv, &iv, &uv, &out.view(), &TensorView::from(up.view()))
            .unwrap();
        let (Tensor::F64(dt), Tensor::F64(du)) = (dt, du) else {
            panic!("{kind:?}: f64")
        };
        assert!(dt.iter().all(|v| v.is_finite()), "{kind:?}: {dt}");
        assert_eq!(du.as_slice().unwrap()[2..], [0.0, 0.0], "{kind:?}: {du}");
    }
}
