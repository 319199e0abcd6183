//! TensorFlow's segment reductions, through the registry, against TensorFlow 2.21's own
//! results (`data/segment_cases.json`, made by `data/segment_cases.py`): outputs bit for
//! bit, errors word for word, gradients bit for bit; and the fused `gather_segment` against
//! the unfused composition and a small sequential reference, on 1, 2 and 4 threads.

use crate::common;

use common::case_file::{same, tensor};
use ndgather::ndarray::{Array1, Array2, ArrayD, IxDyn};
use ndgather::registry::{self, Attr, Attrs, Input};
use ndgather::segment::{GatherSegment, Reduce};
use ndgather::{Out, Tensor};
use proptest::prelude::*;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let text = include_str!("data/segment_cases.json");
    let file: Value = serde_json::from_str(text).unwrap();
    file["cases"].as_array().unwrap().clone()
}

/// The case's op with its attributes, or `None` for a num_segments that is not a scalar
/// (TensorFlow takes a tensor there; ndgather an integer attribute).
fn op_of(case: &Value) -> Option<Box<dyn ndgather::OpDef>> {
    let name = case["op"].as_str().unwrap();
    let op = registry::find(name).unwrap();
    let mut attrs = Attrs::new();
    if case.get("num_segments_shape").is_some() {
        return None;
    }
    if name.starts_with("unsorted") {
        attrs.insert("num_segments", Attr::Int(case["num_segments"].as_i64()?));
    }
    Some(op.with_attrs(&attrs).unwrap())
}

fn run(op: &dyn ndgather::OpDef, data: &Tensor, ids: &Tensor) -> ndgather::Result<Tensor> {
    let inputs = [Input::from(data.view()), Input::from(ids.view())];
    op.run(&inputs, Out::New)?.unwrap().into_dense()
}

#[test]
fn tensorflow_cases() {
    let (mut outputs, mut errors, mut grads, mut skipped) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (n, case) in cases().iter().enumerate() {
        let Some(op) = op_of(case) else {
            skipped += 1;
            continue;
        };
        let (data, ids) = (tensor(&case["data"]), tensor(&case["segment_ids"]));
        let got = run(op.as_ref(), &data, &ids);
        match (&got, case.get("output"), case.get("error")) {
            (Ok(out), Some(expected), _) if same(out, &tensor(expected)) => outputs += 1,
            (Err(e), None, Some(expected)) if e.to_string() == expected["message"] => errors += 1,
            _ => failures.push(format!(
                "case {n} {}: got {:?}, expected {}",
                case["op"],
                got.as_ref().map(|t| format!("{t:?}")),
                case.get("output")
                    .map(|o| format!("{:?}", tensor(o)))
                    .unwrap_or_else(|| case["error"].to_string())
            )),
        }
        if let (Some(grad), Ok(out)) = (case.get("grad"), &got) {
            let upstream = tensor(&grad["upstream"]);
            let inputs = [Input::from(data.view()), Input::from(ids.view())];
            match op.grad(&inputs, Some(&out.view()), &upstream.view()) {
                Ok(g)
                    if g[0]
                        .as_ref()
                        .is_some_and(|d| same(d, &tensor(&grad["data"]))) =>
                {
                    grads += 1
                }
                other => failures.push(format!(
                    "case {n} {} grad: got {other:?}, expected {:?}",
                    case["op"],
                    tensor(&grad["data"])
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures (of {outputs} outputs, {errors} errors, {grads} grads right):\n{}",
        failures.len(),
        failures[..failures.len().min(25)].join("\n")
    );
    assert!(outputs > 1500 && errors > 380 && grads > 500 && skipped < 10);
}

/// `unsorted_segment_<reduce>(gather(x, src), dst)`, unfused, through the registry.
fn composed(x: &Tensor, src: &Tensor, dst: &Tensor, reduce: Reduce, n: usize) -> Tensor {
    let gather = registry::find("gather").unwrap();
    let rows = gather
        .run(&[Input::from(x.view()), Input::from(src.view())], Out::New)
        .unwrap()
        .unwrap()
        .into_dense()
        .unwrap();
    let op = registry::find(&format!("unsorted_segment_{}", reduce.name()))
        .unwrap()
        .with_attrs(&Attrs::new().with("num_segments", Attr::Int(n as i64)))
        .unwrap();
    run(op.as_ref(), &rows, dst).unwrap()
}

/// The obviously correct reference of a fused sum: a loop over edges.
fn reference_sum(x: &Array2<f32>, src: &[i64], dst: &[i64], n: usize) -> ArrayD<f32> {
    let mut out = Array2::<f32>::zeros((n, x.ncols()));
    for (&s, &d) in src.iter().zip(dst) {
        if d >= 0 {
            for j in 0..x.ncols() {
                out[[d as usize, j]] += x[[s as usize, j]];
            }
        }
    }
    out.into_dyn()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn gather_segment_is_the_composition(
        nodes in 1usize..40,
        width in 0usize..20,
        edges in prop::collection::vec((0usize..1000, -1i64..30), 0..300),
        n in 0usize..30,
        reduce in prop::sample::select(vec![Reduce::Sum, Reduce::Mean, Reduce::Max, Reduce::Min, Reduce::Prod, Reduce::SqrtN]),
        threads in prop::sample::select(vec![1usize, 2, 4]),
    ) {
        let x = Array2::from_shape_fn((nodes, width), |(i, j)| ((i * 31 + j * 7) % 13) as f32 * 0.37 - 1.5);
        let src: Vec<i64> = edges.iter().map(|(s, _)| (s % nodes) as i64).collect();
        let dst: Vec<i64> = edges.iter().map(|(_, d)| if *d >= n as i64 { -1 } else { *d }).collect();
        let (xt, st, dt) = (
            Tensor::from(x.clone().into_dyn()),
            Tensor::from(Array1::from(src.clone()).into_dyn()),
            Tensor::from(Array1::from(dst.clone()).into_dyn()),
        );
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let fused = pool.install(|| GatherSegment::new(reduce, n).run_views(&xt.view(), &st.view(), &dt.view())).unwrap();
        prop_assert!(same(&fused, &composed(&xt, &st, &dt, reduce, n)));
        if reduce == Reduce::Sum {
            prop_assert!(same(&fused, &Tensor::from(reference_sum(&x, &src, &dst, n))));
        }
    }
}

#[test]
fn gather_segment_refuses_bad_sources_and_shapes() {
    let x = Tensor::from(ArrayD::from_shape_vec(IxDyn(&[2, 1]), vec![1.0f32, 2.0]).unwrap());
    let ids = |v: Vec<i64>| Tensor::from(Array1::from(v).into_dyn());
    let op = GatherSegment::new(Reduce::Sum, 2);
    let err = op
        .run_views(&x.view(), &ids(vec![0, 2]).view(), &ids(vec![0, 1]).view())
        .unwrap_err();
    assert_eq!(err.to_string(), "indices[1] = 2 is not in [0, 2)");
    let err = op
        .run_views(&x.view(), &ids(vec![0]).view(), &ids(vec![0, 1]).view())
        .unwrap_err();
    assert!(err.to_string().contains("vectors of one length"), "{err}");
    let err = op
        .run_views(&x.view(), &ids(vec![0, 1]).view(), &ids(vec![0, 2]).view())
        .unwrap_err();
    assert_eq!(err.to_string(), "segment_ids[1] = 2 is out of range [0, 2)");
}

/// A complex product's gradient divides the product by each element as complex numbers
/// (it divided by the real part only, as a mean divides by its count): for z = [1+i, 2i] in
/// one segment, d(z0·z1)/dz = [z1, z0].
#[test]
fn a_complex_products_gradient_divides_by_each_element() {
    use num_complex::Complex64;
    let z = Tensor::from(
        ndgather::ndarray::array![Complex64::new(1.0, 1.0), Complex64::new(0.0, 2.0)].into_dyn(),
    );
    let ids = Tensor::from(ndgather::ndarray::array![0i64, 0].into_dyn());
    let one = Tensor::from(ndgather::ndarray::array![Complex64::new(1.0, 0.0)].into_dyn());
    for (name, attrs) in [
        ("segment_prod", Attrs::new()),
        (
            "unsorted_segment_prod",
            Attrs::new().with("num_segments", Attr::Int(1)),
        ),
    ] {
        let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
        let out = run(op.as_ref(), &z, &ids).unwrap();
        let inputs = [Input::from(z.view()), Input::from(ids.view())];
        let grads = op.grad(&inputs, Some(&out.view()), &one.view()).unwrap();
        let want = ndgather::ndarray::array![Complex64::new(0.0, 2.0), Complex64::new(1.0, 1.0)];
        assert_eq!(grads[0], Some(Tensor::from(want.into_dyn())), "{name}");
    }
}

/// The quotient is scaled, as Eigen's complex division is: 1e25 and 1e-25 in one segment of
/// complex64 have a product of 1, and gradients 1e-25 and 1e25, not 0 and inf.
#[test]
fn a_complex_products_gradient_neither_overflows_nor_underflows() {
    use num_complex::Complex32;
    let z = Tensor::from(
        ndgather::ndarray::array![Complex32::new(1e25, 0.0), Complex32::new(0.0, 1e-25)].into_dyn(),
    );
    let ids = Tensor::from(ndgather::ndarray::array![0i64, 0].into_dyn());
    let one = Tensor::from(ndgather::ndarray::array![Complex32::new(1.0, 0.0)].into_dyn());
    let op = registry::find("segment_prod").unwrap();
    let out = run(op, &z, &ids).unwrap();
    let inputs = [Input::from(z.view()), Input::from(ids.view())];
    let grads = op.grad(&inputs, Some(&out.view()), &one.view()).unwrap();
    let g = grads[0].clone().unwrap().into_array::<Complex32>().unwrap();
    assert!((g[0] - Complex32::new(0.0, 1e-25)).norm() <= 1e-31, "{g}");
    assert!((g[1] - Complex32::new(1e25, 0.0)).norm() <= 1e19, "{g}");
}
