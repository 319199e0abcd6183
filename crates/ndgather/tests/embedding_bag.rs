//! `embedding_bag` against PyTorch's own results (`data/embedding_bag_cases.json`, written by
//! `data/embedding_bag_cases.py` with torch): every mode, per-sample weights, padding_idx,
//! empty bags, include_last_offset, 2-D inputs, float32 and float64; the gradients; PyTorch's
//! errors. Then properties against a small reference: shards equal the whole table, thread
//! counts do not change a bit, and the policies.

use ndarray::{Array1, ArrayD, ArrayView1, IxDyn};
use ndgather::embedding::{PartitionStrategy, Real};
use ndgather::embedding_bag::{BagMode, EmbeddingBag};
use ndgather::{BadIndices, Error};
use serde_json::Value;

use crate::common;
use common::case_file::{floats, ints};

fn options(case: &Value) -> EmbeddingBag {
    EmbeddingBag::new(BagMode::from_name(case["mode"].as_str().unwrap()).unwrap())
        .padding_idx(case["padding_idx"].as_i64())
        .include_last_offset(case["include_last_offset"].as_bool().unwrap())
        .max_norm(case.get("max_norm").and_then(Value::as_f64))
}

fn as_f64<T: Real>(a: impl IntoIterator<Item = T>) -> Vec<f64> {
    a.into_iter()
        .map(|v| num_traits::cast(v.widen()).unwrap())
        .collect()
}

/// The largest difference, in units of the last place of `T` at the largest expected
/// magnitude (a sum near zero carries the rounding of its larger terms).
fn ulps<T: Real>(got: &[f64], expected: &[f64]) -> f64 {
    let unit = if std::mem::size_of::<T>() == 4 {
        2f64.powi(-23)
    } else {
        2f64.powi(-52)
    };
    let largest = expected.iter().fold(1e-30f64, |m, e| m.max(e.abs()));
    got.iter()
        .zip(expected)
        .map(|(g, e)| (g - e).abs() / (largest * unit))
        .fold(0.0, f64::max)
}

fn run_case<T: Real>(case: &Value, report: &mut Vec<String>) {
    let weight = floats::<T>(&case["weight"]);
    let input = ints(&case["input"]);
    let offsets = case["offsets"]
        .as_array()
        .map(|o| Array1::from_iter(o.iter().map(|v| v.as_i64().unwrap())));
    let psw =
        (!case["per_sample_weights"].is_null()).then(|| floats::<T>(&case["per_sample_weights"]));
    let bag = options(case);
    let shards = [weight.view()];
    let offsets_view = offsets.as_ref().map(|o| o.view());
    let psw_view = psw.as_ref().map(|p| p.view());
    let out = bag
        .bag(
            &shards,
            &input.view(),
            offsets_view.as_ref(),
            psw_view.as_ref(),
        )
        .unwrap();
    let want = floats::<T>(&case["output"]);
    assert_eq!(out.shape(), want.shape());
    // Forward: bit for bit.
    assert_eq!(
        as_f64(out.iter().copied()),
        as_f64(want.iter().copied()),
        "{} {}",
        case["mode"],
        case["weight"]["dtype"]
    );
    let upstream = floats::<T>(&case["upstream"]);
    let grads = bag
        .bag_grad(
            &shards,
            &input.view(),
            offsets_view.as_ref(),
            psw_view.as_ref(),
            &upstream.view(),
        )
        .unwrap();
    // Sparse: PyTorch's per-occurrence rows, bit for bit.
    if let Some(sparse) = case.get("sparse_grad") {
        let indices: Vec<usize> = sparse["indices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(grads[0].indices, indices, "sparse gradient rows");
        let values = floats::<T>(&sparse["values"]);
        assert_eq!(
            as_f64(grads[0].values.iter().copied()),
            as_f64(values.iter().copied())
        );
    }
    // Dense: "max" bit for bit; sums of several rows within a few ulps, since PyTorch adds
    // them with its BLAS's axpy (fused or not by the BLAS build), ndgather in input order.
    let dense = grads[0].to_dense().unwrap();
    let want = floats::<T>(&case["dense_grad"]);
    let (got, want) = (as_f64(dense.iter().copied()), as_f64(want.iter().copied()));
    if case["mode"] == "max" {
        assert_eq!(got, want, "max gradient");
    } else {
        let u = ulps::<T>(&got, &want);
        assert!(u <= 8.0, "dense gradient {u} ulps off");
        report.push(format!("{u:.1}"));
    }
    // per_sample_weights: a dot product per id, PyTorch's by its BLAS (in its order), within
    // a few ulps; padding ids 0.
    if let (Some(p), Some(want)) = (psw_view.as_ref(), case.get("weights_grad")) {
        let got = bag
            .weights_grad(
                &shards,
                &input.view(),
                offsets_view.as_ref(),
                p,
                &upstream.view(),
            )
            .unwrap();
        let want = floats::<T>(want);
        assert_eq!(got.shape(), want.shape());
        let u = ulps::<T>(&as_f64(got.iter().copied()), &as_f64(want.iter().copied()));
        assert!(u <= 8.0, "per_sample_weights gradient {u} ulps off");
        report.push(format!("weights {u:.1}"));
    }
}

#[test]
fn every_case_agrees_with_pytorch() {
    let all: Value = serde_json::from_str(include_str!("data/embedding_bag_cases.json")).unwrap();
    let mut report = Vec::new();
    let cases = all["cases"].as_array().unwrap();
    for case in cases {
        match case["weight"]["dtype"].as_str().unwrap() {
            "float32" => run_case::<f32>(case, &mut report),
            "float64" => run_case::<f64>(case, &mut report),
            other => panic!("{other}"),
        }
    }
    assert!(cases.len() >= 100, "{}", cases.len());
    let weights = report.iter().filter(|r| r.starts_with("weights")).count();
    assert!(
        weights >= 20,
        "{weights} cases with per_sample_weights' gradient"
    );
    eprintln!(
        "{} cases; dense gradient ulps (sum, mean): {report:?}",
        cases.len()
    );
}

fn call(
    bag: EmbeddingBag,
    input: ArrayD<i64>,
    offsets: Option<Vec<i64>>,
    psw: Option<ArrayD<f32>>,
) -> Result<ArrayD<f32>, Error> {
    let w = ArrayD::<f32>::zeros(IxDyn(&[6, 3]));
    let offsets = offsets.map(Array1::from);
    let o: Option<ArrayView1<i64>> = offsets.as_ref().map(|o| o.view());
    let p = psw.as_ref().map(|p| p.view());
    bag.bag(&[w.view()], &input.view(), o.as_ref(), p.as_ref())
}

#[test]
fn pytorchs_errors_with_its_messages() {
    let all: Value = serde_json::from_str(include_str!("data/embedding_bag_cases.json")).unwrap();
    let v = |x: Vec<i64>| ArrayD::from_shape_vec(IxDyn(&[x.len()]), x).unwrap();
    let sum = EmbeddingBag::new(BagMode::Sum);
    let ones = |n: usize| Some(ArrayD::<f32>::ones(IxDyn(&[n])));
    for e in all["errors"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let got = match name {
            "offsets_not_from_zero" => call(sum, v(vec![1, 2]), Some(vec![1]), None),
            "offsets_past_the_end" => call(sum, v(vec![1, 2]), Some(vec![0, 3]), None),
            "id_out_of_range" => call(sum, v(vec![1, 7]), Some(vec![0]), None),
            "negative_id" => call(sum, v(vec![-1]), Some(vec![0]), None),
            "weights_outside_sum" => call(
                EmbeddingBag::new(BagMode::Mean),
                v(vec![1, 2]),
                Some(vec![0]),
                ones(2),
            ),
            "weights_of_another_shape" => call(sum, v(vec![1, 2]), Some(vec![0]), ones(3)),
            "padding_idx_out_of_range" => {
                call(sum.padding_idx(Some(6)), v(vec![1]), Some(vec![0]), None)
            }
            "input_2d_with_offsets" => call(
                sum,
                ArrayD::from_shape_vec(IxDyn(&[1, 2]), vec![1, 2]).unwrap(),
                Some(vec![0]),
                None,
            ),
            "input_1d_without_offsets" => call(sum, v(vec![1, 2]), None, None),
            "input_3d" => call(sum, ArrayD::zeros(IxDyn(&[1, 1, 1])), None, None),
            "include_last_offset_without_offsets" => call(
                sum.include_last_offset(true),
                v(vec![1, 2]),
                Some(vec![]),
                None,
            ),
            other => panic!("no call for {other}"),
        };
        let err = got.expect_err(name);
        let class = match err {
            Error::TorchValue(_) => "ValueError",
            Error::TorchRuntime(_) => "RuntimeError",
            Error::TorchNotImplemented(_) => "NotImplementedError",
            ref other => panic!("{name}: {other:?}"),
        };
        assert_eq!(class, e["class"], "{name}");
        // PyTorch prints shapes as torch.Size([..]) and names the offsets' Python type; the
        // rest of each message is its own.
        let want = e["message"]
            .as_str()
            .unwrap()
            .replace("torch.Size(", "")
            .replace("])", "]");
        let want = want.split(" However, found offsets").next().unwrap();
        assert_eq!(err.to_string(), want, "{name}");
    }
}

#[test]
fn empty_bags_are_zeros_and_a_2d_input_of_empty_bags_is_too() {
    let w = ArrayD::from_shape_fn(IxDyn(&[4, 2]), |ix| (ix[0] * 2 + ix[1]) as f64);
    for mode in [BagMode::Sum, BagMode::Mean, BagMode::Max] {
        let input = ArrayD::<i64>::zeros(IxDyn(&[3, 0]));
        let out = EmbeddingBag::new(mode)
            .bag(&[w.view()], &input.view(), None, None)
            .unwrap();
        assert_eq!(out, ArrayD::<f64>::zeros(IxDyn(&[3, 2])));
    }
}

#[test]
fn decreasing_offsets_are_an_error_that_names_them() {
    let e = call(
        EmbeddingBag::new(BagMode::Sum),
        ArrayD::from_shape_vec(IxDyn(&[3]), vec![1, 2, 3]).unwrap(),
        Some(vec![0, 2, 1]),
        None,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "offsets must not decrease, but offsets[2] = 1 is less than offsets[1] = 2"
    );
}

#[test]
fn ids_after_the_last_offset_are_refused() {
    // PyTorch 2.15's CPU kernels, include_last_offset=True, ids [0, 1, 2, 3, 4], offsets
    // [0, 2, 3]: FBGEMM's float32 sum leaves ids 3 and 4 out, the generic kernel (float64,
    // or a padding_idx) takes them into bag 1, a mean divides bag 1's one row by 3, a max
    // takes rows 3 and 4, and the float32 dense gradient reads uninitialised memory.
    let w = ArrayD::from_shape_fn(IxDyn(&[6, 2]), |ix| (ix[0] * 2 + ix[1]) as f32);
    let ids = ArrayD::from_shape_vec(IxDyn(&[5]), vec![0i64, 1, 2, 3, 4]).unwrap();
    let bag = |mode, offsets: Vec<i64>| {
        let offsets = Array1::from(offsets);
        EmbeddingBag::new(mode).include_last_offset(true).bag(
            &[w.view()],
            &ids.view(),
            Some(&offsets.view()),
            None,
        )
    };
    for mode in [BagMode::Sum, BagMode::Mean, BagMode::Max] {
        let e = bag(mode, vec![0, 2, 3]).unwrap_err();
        assert!(matches!(e, Error::TorchValue(_)), "{e:?}");
        assert!(
            e.to_string()
                .contains("must be the number of ids (5), got 3"),
            "{e}"
        );
    }
    // Ending the offsets with the number of ids is PyTorch's contract, and is taken.
    let max = bag(BagMode::Max, vec![0, 2, 5]).unwrap();
    assert_eq!(max.into_raw_vec_and_offset().0, vec![2.0, 3.0, 8.0, 9.0]);
}

#[test]
fn max_norm_renormalises_as_pytorch_and_leaves_the_rest() {
    // Rows of norm 5 and 0 against max_norm 2.5, 0 and NaN (PyTorch 2.15: a norm that does
    // not exceed max_norm leaves its row as it is, so a zero row and a NaN max_norm do too).
    let w = ndarray::array![[3.0f32, 4.0], [0.0, 0.0]].into_dyn();
    let ids = ArrayD::from_shape_vec(IxDyn(&[2]), vec![0i64, 1]).unwrap();
    let offsets = Array1::from(vec![0i64, 1]);
    let bag = |m: f64| {
        let out = EmbeddingBag::new(BagMode::Sum)
            .max_norm(Some(m))
            .bag(&[w.view()], &ids.view(), Some(&offsets.view()), None)
            .unwrap();
        out.iter().copied().collect::<Vec<f32>>()
    };
    let scale = (2.5 / (5.0 + 1e-7)) as f32;
    assert_eq!(bag(2.5), [3.0 * scale, 4.0 * scale, 0.0, 0.0]);
    assert_eq!(bag(0.0), [0.0, 0.0, 0.0, 0.0]);
    assert_eq!(bag(f64::NAN), [3.0, 4.0, 0.0, 0.0]);
    assert_eq!(bag(5.0), [3.0, 4.0, 0.0, 0.0]);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The obvious definition: for each bag, its rows (by the policy, padding left out),
    /// reduced in order in f64 (the test's values are small integers, so every order gives
    /// the same exact result).
    fn reference(
        table: &ArrayD<f64>,
        ids: &[i64],
        offsets: &[usize],
        mode: BagMode,
        padding: Option<i64>,
        policy: BadIndices,
    ) -> Option<Vec<Vec<f64>>> {
        let (rows, d) = (table.shape()[0] as i64, table.shape()[1]);
        let ends = offsets.iter().skip(1).copied().chain([ids.len()]);
        let mut out = Vec::new();
        for (&s, e) in offsets.iter().zip(ends) {
            let mut members: Vec<Vec<f64>> = Vec::new();
            for &id in &ids[s..e] {
                let resolved = match policy {
                    _ if (0..rows).contains(&id) => Some(id),
                    BadIndices::Clamp if rows > 0 => Some(id.clamp(0, rows - 1)),
                    BadIndices::Wrap if rows > 0 => Some(id.rem_euclid(rows)),
                    BadIndices::Negative if id < 0 && id + rows >= 0 => Some(id + rows),
                    BadIndices::Ignore => None,
                    _ => return None,
                };
                match resolved {
                    Some(r) if Some(r) != padding => {
                        members.push((0..d).map(|c| table[[r as usize, c]]).collect())
                    }
                    _ => {} // padding, or a bad id "ignore" leaves out
                }
            }
            let n = members.len() as f64;
            let row = (0..d)
                .map(|c| {
                    let col = members.iter().map(|m| m[c]);
                    match mode {
                        _ if members.is_empty() => 0.0,
                        BagMode::Sum => col.sum(),
                        BagMode::Mean => col.sum::<f64>() / n,
                        BagMode::Max => col.fold(f64::NEG_INFINITY, f64::max),
                    }
                })
                .collect();
            out.push(row);
        }
        Some(out)
    }

    fn split(full: &ArrayD<f64>, n: usize) -> Vec<ArrayD<f64>> {
        (0..n)
            .map(|p| {
                let ids: Vec<usize> = (0..full.shape()[0]).filter(|i| i % n == p).collect();
                full.select(ndarray::Axis(0), &ids)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn bags_equal_the_reference_on_any_shards_and_threads(
            rows in 1usize..12, shards in 1usize..4,
            ids in proptest::collection::vec(-14i64..14, 0..30),
            cuts in proptest::collection::vec(0usize..30, 0..6),
            mode in prop_oneof![Just(BagMode::Sum), Just(BagMode::Mean), Just(BagMode::Max)],
            padding in proptest::option::of(0i64..12),
            policy in prop_oneof![Just(BadIndices::Error), Just(BadIndices::Ignore),
                                  Just(BadIndices::Clamp), Just(BadIndices::Negative),
                                  Just(BadIndices::Wrap)],
        ) {
            let padding = padding.filter(|&p| (p as usize) < rows);
            let full = ArrayD::from_shape_fn(IxDyn(&[rows, 3]), |ix| (ix[0] * 7 % 5) as f64 - ix[1] as f64);
            let mut offsets: Vec<usize> = cuts.into_iter().map(|c| c.min(ids.len())).collect();
            offsets.push(0);
            offsets.sort_unstable();
            let want = reference(&full, &ids, &offsets, mode, padding, policy);
            let parts = split(&full, shards.min(rows));
            let views: Vec<_> = parts.iter().map(|s| s.view()).collect();
            let input = ArrayD::from_shape_vec(IxDyn(&[ids.len()]), ids.clone()).unwrap();
            let off = Array1::from_iter(offsets.iter().map(|&o| o as i64));
            let bag = EmbeddingBag::new(mode).padding_idx(padding).bad_indices(policy)
                .partition_strategy(PartitionStrategy::Mod);
            let mut results = Vec::new();
            for threads in [1, 2, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                results.push(pool.install(|| bag.bag(&views, &input.view(), Some(&off.view()), None)));
            }
            match want {
                None => prop_assert!(results.iter().all(Result::is_err)),
                Some(want) => {
                    let got = results[0].as_ref().unwrap();
                    let got: Vec<Vec<f64>> = got.outer_iter().map(|r| r.iter().copied().collect()).collect();
                    prop_assert_eq!(got, want);
                    for r in &results[1..] {
                        prop_assert_eq!(r.as_ref().unwrap(), results[0].as_ref().unwrap());
                    }
                }
            }
        }
    }
}

/// A negative `max_norm` is PyTorch's here, as given (each row scaled by it over its norm, so
/// its sign flips), where TensorFlow's lookups take 0.
#[test]
fn a_negative_max_norm_flips_a_row_as_pytorchs_renorm() {
    let table = ndarray::array![[3.0f64, 4.0], [6.0, 8.0]].into_dyn();
    let input = ndarray::array![[1i64], [0]].into_dyn();
    let out = EmbeddingBag::new(BagMode::Sum)
        .max_norm(Some(-1.0))
        .bag(&[table.view()], &input.view(), None, None)
        .unwrap();
    // PyTorch 2.15's values: each row times -1 / (norm + 1e-7).
    assert_eq!(
        out.iter().copied().collect::<Vec<_>>(),
        [
            -0.5999999940000001,
            -0.7999999920000002,
            -0.5999999880000002,
            -0.7999999840000003
        ]
    );
}

/// PyTorch 2.15's bfloat16 bags: without a padding_idx its FBGEMM kernel rounds the float
/// sum to bfloat16 ties away from zero (and a mean divides that rounded sum); with one, its
/// generic kernel rounds ties to even. Rows -1.2578125, -0.9765625 and -1.4296875 sum to
/// -3.6640625, halfway between -3.65625 and -3.671875.
#[test]
fn a_bfloat16_sum_rounds_as_pytorchs_kernels() {
    use half::bf16;
    let w = ArrayD::from_shape_vec(
        IxDyn(&[4, 1]),
        [-1.2578125f32, -0.9765625, -1.4296875, 0.0]
            .map(bf16::from_f32)
            .to_vec(),
    )
    .unwrap();
    let ids = ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![0i64, 1, 2]).unwrap();
    let bag = |mode, padding: Option<i64>| {
        let out = EmbeddingBag::new(mode)
            .padding_idx(padding)
            .bag(&[w.view()], &ids.view(), None, None)
            .unwrap();
        out[[0, 0]].to_f32()
    };
    assert_eq!(bag(BagMode::Sum, None), -3.671875);
    assert_eq!(bag(BagMode::Sum, Some(3)), -3.65625);
    // The mean: the rounded sum over 3, rounded to even: -1.2239583 -> -1.2265625 and
    // -1.21875 -> -1.21875 (PyTorch's).
    assert_eq!(
        bag(BagMode::Mean, None),
        bf16::from_f32(-3.671875 / 3.0).to_f32()
    );
    assert_eq!(
        bag(BagMode::Mean, Some(3)),
        bf16::from_f32(-3.65625 / 3.0).to_f32()
    );
}
