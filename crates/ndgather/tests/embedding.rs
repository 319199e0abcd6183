//! Embedding lookups against TensorFlow 2.21's own results (`data/embedding_cases.json`,
//! written by `data/embedding_cases.py` with tensorflow-cpu): one table and shards, "mod"
//! and "div", max_norm, every combiner with and without weights, rows without ids, weights
//! that sum to zero, f16/bf16/f32/f64; the gradients with respect to the shards.

use half::{bf16, f16};
use ndarray::{Array1, Array2, ArrayD, IxDyn};
use ndgather::embedding::{Combiner, EmbeddingLookupOptions, PartitionStrategy, Real, SparseIds};
use serde_json::Value;

use crate::common;
use common::case_file::{floats, ints};

/// How far `got` is from TensorFlow's `expected`, in units of `T`'s precision at the value.
fn ulps<T: Real>(got: f64, expected: f64) -> f64 {
    if got == expected || (got.is_nan() && expected.is_nan()) {
        return 0.0;
    }
    let eps = T::narrow(num_traits::cast(expected.abs().max(1e-30)).unwrap()).widen();
    let eps: f64 = num_traits::cast(eps).unwrap();
    let unit = match std::mem::size_of::<T>() {
        2 if std::any::type_name::<T>().contains("bf16") => 2f64.powi(-8),
        2 => 2f64.powi(-11),
        4 => 2f64.powi(-24),
        _ => 2f64.powi(-53),
    };
    (got - expected).abs() / (eps * unit).max(f64::MIN_POSITIVE)
}

struct Tally {
    exact: usize,
    worst: f64,
}

/// Compares element by element, in ulps of each expected value; with `by_largest`, in
/// ulps of the largest (for sums whose order TensorFlow does not fix, where a small
/// element can carry the rounding of large terms).
fn compare<T: Real>(got: &[T], expected: &[f64], tally: &mut Tally, what: &str, by_largest: bool) {
    assert_eq!(got.len(), expected.len(), "{what}");
    let largest = expected.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    for (g, &e) in got.iter().zip(expected) {
        let g: f64 = num_traits::cast(g.widen()).unwrap();
        let u = if by_largest && g != e {
            ulps::<T>(largest + (g - e).abs(), largest)
        } else {
            ulps::<T>(g, e)
        };
        if u == 0.0 {
            tally.exact += 1;
        }
        tally.worst = tally.worst.max(u);
        let limit = if by_largest { 16.0 } else { 4.0 };
        assert!(u <= limit, "{what}: {g} vs TensorFlow's {e} ({u} ulps)");
    }
}

fn dense<T: Real>(slices: &[ndgather::grad::IndexedSlices<T>]) -> Vec<Vec<T>> {
    slices
        .iter()
        .map(|s| s.to_dense().unwrap().iter().copied().collect())
        .collect()
}

fn run_case<T: Real>(case: &Value, exact_required: bool, tally: &mut Tally) {
    let shards: Vec<ArrayD<T>> = case["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(floats::<T>)
        .collect();
    let views: Vec<_> = shards.iter().map(|s| s.view()).collect();
    let strategy = PartitionStrategy::from_name(case["strategy"].as_str().unwrap()).unwrap();
    let lookup = EmbeddingLookupOptions::new()
        .partition_strategy(strategy)
        .max_norm(case["max_norm"].as_f64());
    let expected: Vec<f64> = case["expected"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let grads: Vec<Vec<f64>> = case["grads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect();
    let mut local = Tally {
        exact: 0,
        worst: 0.0,
    };
    // Where TensorFlow's order is not reproduced, within 16 ulps of the row's largest value.
    let loose = !exact_required;
    let what = format!(
        "{} {} {:?} {:?} {:?}",
        case["op"],
        std::any::type_name::<T>(),
        case["strategy"],
        case["combiner"],
        case["max_norm"]
    );
    if case["op"] == "lookup" {
        let ids = ints(&case["ids"]);
        let out = lookup.lookup(&views, &ids).unwrap();
        compare(out.as_slice().unwrap(), &expected, &mut local, &what, false);
        let upstream = floats::<T>(&case["upstream"]);
        let g = lookup.lookup_grad(&views, &ids, &upstream).unwrap();
        for (got, want) in dense(&g).iter().zip(&grads) {
            compare(got, want, &mut local, &format!("{what} grad"), loose);
        }
    } else {
        let indices: Array2<i64> = ints(&case["indices"]).into_dimensionality().unwrap();
        let values: Array1<i64> = ints(&case["values"]).into_dimensionality().unwrap();
        let dense_shape: Vec<usize> = case["dense_shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let weights: Option<Array1<T>> = (!case["weights"].is_null())
            .then(|| floats::<T>(&case["weights"]).into_dimensionality().unwrap());
        let sp_ids = SparseIds::new(indices.view(), values.view(), &dense_shape).unwrap();
        let sp_weights = weights
            .as_ref()
            .map(|w| SparseIds::new(indices.view(), w.view(), &dense_shape).unwrap());
        let combiner = Combiner::from_name(case["combiner"].as_str().unwrap()).unwrap();
        let out = lookup
            .lookup_sparse(&views, &sp_ids, sp_weights.as_ref(), combiner)
            .unwrap();
        // TensorFlow stops after the last row with ids; the documented shape has them all.
        let out = out.as_slice().unwrap();
        let (head, tail) = out.split_at(expected.len());
        compare(head, &expected, &mut local, &what, loose);
        assert!(
            tail.iter().all(|v| num_traits::Zero::is_zero(&v.widen())),
            "{what}: rows without ids are zeros"
        );
        let mut upstream = floats::<T>(&case["upstream"]).into_raw_vec_and_offset().0;
        upstream.resize(out.len(), T::narrow(num_traits::cast(0.0).unwrap()));
        let upstream = ArrayD::from_shape_vec(
            IxDyn(&[dense_shape[0], out.len() / dense_shape[0]]),
            upstream,
        )
        .unwrap();
        let g = lookup
            .lookup_sparse_grad(&views, &sp_ids, sp_weights.as_ref(), combiner, &upstream)
            .unwrap();
        for (got, want) in dense(&g).iter().zip(&grads) {
            compare(got, want, &mut local, &format!("{what} grad"), loose);
        }
    }
    if exact_required {
        assert_eq!(local.worst, 0.0, "{what}: not bit-exact");
    }
    tally.exact += local.exact;
    tally.worst = tally.worst.max(local.worst);
}

#[test]
fn every_case_agrees_with_tensorflow() {
    let text = include_str!("data/embedding_cases.json");
    let all: Value = serde_json::from_str(text).unwrap();
    let mut tally = Tally {
        exact: 0,
        worst: 0.0,
    };
    let mut count = 0;
    for case in all["cases"].as_array().unwrap() {
        let dtype = case["dtype"]
            .as_str()
            .unwrap_or_else(|| case["shards"][0]["dtype"].as_str().unwrap());
        // Bit-exact where TensorFlow's arithmetic order is reproducible: no max_norm (Eigen's
        // reduce_sum), not weighted sqrtn (Eigen's pow), f32/f64 (half types round once).
        let weighted_sqrtn = case["combiner"] == "sqrtn" && !case["weights"].is_null();
        let exact =
            case["max_norm"].is_null() && !weighted_sqrtn && matches!(dtype, "float32" | "float64");
        match dtype {
            "float32" => run_case::<f32>(case, exact, &mut tally),
            "float64" => run_case::<f64>(case, exact, &mut tally),
            "float16" => run_case::<f16>(case, exact, &mut tally),
            "bfloat16" => run_case::<bf16>(case, exact, &mut tally),
            other => panic!("{other}"),
        }
        count += 1;
    }
    assert!(count > 150, "{count}");
    eprintln!(
        "{count} cases; {} values bit-exact; worst {} ulps",
        tally.exact, tally.worst
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The full table split as the strategy splits it: shard `p` holds the ids it serves, in
    /// order (the simple reference of the partition rule).
    fn split(full: &ArrayD<f64>, n: usize, strategy: PartitionStrategy) -> Vec<ArrayD<f64>> {
        let rows = full.shape()[0];
        let owner = |id: usize| match strategy {
            PartitionStrategy::Mod => id % n,
            PartitionStrategy::Div => {
                let (per, extras) = (rows / n, rows % n);
                if id < extras * (per + 1) {
                    id / (per + 1)
                } else {
                    extras + (id - extras * (per + 1)) / per.max(1)
                }
            }
        };
        (0..n)
            .map(|p| {
                let ids: Vec<usize> = (0..rows).filter(|&i| owner(i) == p).collect();
                full.select(ndarray::Axis(0), &ids)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn sharded_lookups_equal_the_whole_table(
            rows in 1usize..20, n in 1usize..5, div in any::<bool>(),
            ids in proptest::collection::vec(0usize..40, 0..12),
        ) {
            let strategy = if div { PartitionStrategy::Div } else { PartitionStrategy::Mod };
            let full = ArrayD::from_shape_fn(IxDyn(&[rows, 3]), |ix| (ix[0] * 10 + ix[1]) as f64);
            let shards = split(&full, n.min(rows), strategy);
            let views: Vec<_> = shards.iter().map(|s| s.view()).collect();
            let ids = Array1::from_vec(ids.into_iter().map(|i| i as i64).collect());
            let lookup = EmbeddingLookupOptions::new().partition_strategy(strategy);
            match lookup.lookup(&views, &ids) {
                Ok(out) => {
                    for (k, &id) in ids.iter().enumerate() {
                        prop_assert_eq!(out.index_axis(ndarray::Axis(0), k), full.index_axis(ndarray::Axis(0), id as usize));
                    }
                }
                Err(e) => prop_assert!(ids.iter().any(|&i| i as usize >= rows), "{}", e),
            }
        }

        #[test]
        fn sparse_sums_equal_a_row_by_row_reference(
            counts in proptest::collection::vec(0usize..12, 1..6),
            seed in any::<u64>(),
        ) {
            let full = ArrayD::from_shape_fn(IxDyn(&[7, 2]), |ix| (ix[0] * 3 + ix[1]) as f64);
            let mut indices = vec![];
            let mut values = vec![];
            let mut s = seed;
            for (r, &c) in counts.iter().enumerate() {
                for k in 0..c {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    indices.extend([r as i64, k as i64]);
                    values.push(((s >> 33) % 7) as i64);
                }
            }
            let indices = Array2::from_shape_vec((values.len(), 2), indices).unwrap();
            let values = Array1::from_vec(values);
            let dense_shape = [counts.len(), 12];
            let sp = SparseIds::new(indices.view(), values.view(), &dense_shape).unwrap();
            let out = EmbeddingLookupOptions::new().lookup_sparse(&[full.view()], &sp, None, Combiner::Sum).unwrap();
            for r in 0..counts.len() {
                let mut expected = [0.0; 2];
                for (k, &id) in values.iter().enumerate() {
                    if indices[[k, 0]] as usize == r {
                        expected[0] += full[[id as usize, 0]];
                        expected[1] += full[[id as usize, 1]];
                    }
                }
                prop_assert_eq!(out[[r, 0]], expected[0]);
                prop_assert_eq!(out[[r, 1]], expected[1]);
            }
        }
    }
}

#[test]
fn errors_say_what_is_wrong() {
    let t = ndarray::array![[1.0f32], [2.0], [3.0]].into_dyn();
    let u = ndarray::array![[1.0f32, 2.0]].into_dyn();
    let one = [t.view()];
    let lookup = EmbeddingLookupOptions::new();
    let e = |r: ndgather::Result<ArrayD<f32>>| r.unwrap_err().to_string();
    assert_eq!(
        e(lookup.lookup(&one, &ndarray::array![0, 3])),
        "indices[1] = 3 is not in [0, 3)"
    );
    assert_eq!(
        e(lookup.lookup(&[], &ndarray::array![0])),
        "Need at least one param"
    );
    assert!(e(lookup.lookup(&[t.view(), u.view()], &ndarray::array![0]))
        .contains("shard 1 has shape [1, 2]"));
    // "mod" with a first shard shorter than the second: id 4 would be its row 2.
    let short = ndarray::array![[0.0f32], [2.0]].into_dyn();
    let long = ndarray::array![[1.0f32], [3.0], [5.0]].into_dyn();
    assert_eq!(
        e(lookup.lookup(&[short.view(), long.view()], &ndarray::array![[5, 4]])),
        "indices[0,1] = 4 is row 2 of shard 0, which has no such row (the shards hold 5 rows; check the partition strategy)"
    );
    let idx = Array2::from_shape_vec((2, 2), vec![1i64, 0, 0, 0]).unwrap();
    let vals = Array1::from_vec(vec![0i64, 1]);
    assert_eq!(
        SparseIds::new(idx.view(), vals.view(), &[2, 2])
            .unwrap_err()
            .to_string(),
        "invalid SparseTensor: indices are not in row-major order: row 0 at [1] comes after row 1"
    );
    assert!(SparseIds::new(idx.view(), vals.view(), &[1, 2])
        .unwrap_err()
        .to_string()
        .contains("indices[0, 0] = 1 is not in [0, 1)"));
}

/// `max_norm`'s gradient as TensorFlow's gradients of `clip_by_norm` compute it: a row whose
/// norm equals `max_norm` is differentiated through the norm too (`tf.maximum`'s gradient
/// goes to its first argument on a tie), and a row within the norm gets `(g / c) * c`.
/// The expected values are TensorFlow 2.21's, float64, through `tf.GradientTape` of
/// `tf.compat.v1.nn.embedding_lookup(t, [0], max_norm=c)`.
#[test]
fn max_norms_gradient_at_a_tie_goes_through_the_norm() {
    let grad_of = |row: [f64; 2], c: f64, g: [f64; 2]| {
        let table = ndarray::array![row].into_dyn();
        let up = ndarray::array![g].into_dyn();
        let slices = EmbeddingLookupOptions::new()
            .max_norm(Some(c))
            .lookup_grad(&[table.view()], &ndarray::array![0i64], &up)
            .unwrap();
        slices[0].values.iter().copied().collect::<Vec<f64>>()
    };
    let tie = grad_of([3.0, 4.0], 5.0, [1.0, 0.0]);
    assert_eq!(tie, [0.6400000000000001, -0.48]);
    // Within the norm: the division's gradient and the product's, (g / 7) * 7.
    let within = grad_of([3.0, 4.0], 7.0, [0.1, 1.0]);
    assert_eq!(within, [(0.1f64 / 7.0) * 7.0, (1.0f64 / 7.0) * 7.0]);
    // A negative max_norm is 0, as clip_by_norm's maximum(clip_norm, 0): rows and gradients
    // of zeros (TensorFlow: [[0, 0]] and [0, 0]).
    assert_eq!(grad_of([1e-4, 0.0], -1.0, [1.0, 1.0]), [0.0, 0.0]);
    let table = ndarray::array![[3.0f64, 4.0]].into_dyn();
    let rows = EmbeddingLookupOptions::new()
        .max_norm(Some(-1.0))
        .lookup(&[table.view()], &ndarray::array![0i64])
        .unwrap();
    assert_eq!(rows.iter().copied().collect::<Vec<_>>(), [0.0, 0.0]);
}
