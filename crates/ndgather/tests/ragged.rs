//! Ragged gathers against TensorFlow's own results (`data/ragged_cases.json`, made by
//! `data/ragged_cases.py`): values and row splits bit for bit, TensorFlow's errors (class,
//! and message where TensorFlow's kernel reports the index as given), ndgather's errors
//! where TensorFlow reads past a row, the batch_dims > 0 gather_nd TensorFlow refuses
//! against TensorFlow's per-row results, and the other policies against a nested-list
//! reference.

mod common;

use common::case_file::{same, tensor};
use ndgather::{
    BadIndices, DType, GatherError, GatherNdOptions, GatherOptions, Op, Operand, Ragged,
    RaggedView, RowSplits, Tensor,
};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let text = include_str!("data/ragged_cases.json");
    let file: Value = serde_json::from_str(text).unwrap();
    file["cases"].as_array().unwrap().clone()
}

/// A case's operand: its values' tensor and its splits' tensors.
struct Owned {
    values: Tensor,
    splits: Vec<Tensor>,
}

fn owned(v: &Value) -> Owned {
    Owned {
        values: tensor(&v["values"]),
        splits: v["splits"].as_array().unwrap().iter().map(tensor).collect(),
    }
}

fn row_splits(t: &Tensor) -> RowSplits<'_> {
    match t {
        Tensor::I32(a) => RowSplits::from(a.as_slice().unwrap()),
        Tensor::I64(a) => RowSplits::from(a.as_slice().unwrap()),
        _ => panic!("splits of dtype {}", t.dtype()),
    }
}

fn operand(o: &Owned) -> Operand<'_> {
    if o.splits.is_empty() {
        return Operand::from(o.values.view());
    }
    let splits = o.splits.iter().map(row_splits).collect();
    Operand::Ragged(RaggedView::new(o.values.view(), splits).unwrap())
}

fn op_of(case: &Value) -> Op {
    let policy = BadIndices::from_name(case["policy"].as_str().unwrap()).unwrap();
    let bd = case["batch_dims"].as_i64().unwrap();
    match case["op"].as_str().unwrap() {
        "gather" => {
            let mut o = GatherOptions::new().batch_dims(bd).bad_indices(policy);
            if let Some(axis) = case["axis"].as_i64() {
                o = o.axis(axis);
            }
            Op::Gather(o)
        }
        _ => Op::GatherNd(GatherNdOptions::new().batch_dims(bd).bad_indices(policy)),
    }
}

fn run(case: &Value) -> Result<Ragged, GatherError> {
    let (p, i) = (owned(&case["params"]), owned(&case["indices"]));
    op_of(case).run_ragged(operand(&p), operand(&i))
}

/// TensorFlow's class for ndgather's error.
fn class(err: &GatherError) -> &'static str {
    match err {
        GatherError::RaggedValue(_) => "ValueError",
        _ => "InvalidArgumentError",
    }
}

/// The elements of a tensor as JSON values, row-major (NaN as "nan", as the file writes it).
fn elements(t: &Tensor) -> Vec<Value> {
    fn float(x: f64) -> Value {
        if x.is_nan() {
            Value::from("nan")
        } else {
            Value::from(x)
        }
    }
    match t {
        Tensor::F32(a) => a.iter().map(|&x| float(f64::from(x))).collect(),
        Tensor::F64(a) => a.iter().map(|&x| float(x)).collect(),
        Tensor::I16(a) => a.iter().map(|&x| Value::from(x)).collect(),
        Tensor::I32(a) => a.iter().map(|&x| Value::from(x)).collect(),
        Tensor::I64(a) => a.iter().map(|&x| Value::from(x)).collect(),
        Tensor::Bool(a) => a.iter().map(|&x| Value::from(x)).collect(),
        Tensor::String(s) => s.iter().map(Value::from).collect(),
        _ => panic!("no JSON for dtype {}", t.dtype()),
    }
}

/// Groups `items` into lists of `size` each.
fn chunks(items: Vec<Value>, size: usize, count: usize) -> Vec<Value> {
    let mut it = items.into_iter();
    (0..count)
        .map(|_| Value::Array(it.by_ref().take(size).collect()))
        .collect()
}

/// The result as nested lists, as TensorFlow's `to_list()` gives it.
fn nested(r: &Ragged) -> Value {
    let shape = r.values.shape().to_vec();
    let mut items = elements(&r.values);
    for k in (1..shape.len()).rev() {
        let count: usize = shape[..k].iter().product();
        items = chunks(items, shape[k], count);
    }
    for s in r.splits.iter().rev() {
        let s = s.to_vec();
        let mut it = items.into_iter();
        items = s
            .windows(2)
            .map(|w| Value::Array(it.by_ref().take((w[1] - w[0]) as usize).collect()))
            .collect();
    }
    if r.splits.is_empty() && shape.is_empty() {
        return items.pop().unwrap();
    }
    Value::Array(items)
}

fn splits_equal(got: &[RowSplits], want: &[Value]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            let w = tensor(w);
            let dtype_ok = g.dtype() == w.dtype();
            let w: Vec<i64> = match &w {
                Tensor::I32(a) => a.iter().map(|&x| i64::from(x)).collect(),
                Tensor::I64(a) => a.iter().copied().collect(),
                _ => unreachable!(),
            };
            dtype_ok && g.to_vec() == w
        })
}

/// Whether TensorFlow's message names the index as the caller wrote it: its ragged kernel
/// (a row gather at axis 0) and the ValueErrors. Elsewhere TensorFlow's Python adds each
/// row's start to the indices first, and reports the sum.
fn message_is_tfs(case: &Value) -> bool {
    let row_gather = case["op"] == "gather"
        && case["batch_dims"] == 0
        && case["axis"].as_i64().unwrap_or(0) == 0
        && !case["params"]["splits"].as_array().unwrap().is_empty();
    row_gather || case["error"]["class"] == "ValueError"
}

#[test]
fn tensorflow_results_bit_for_bit() {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (k, case) in cases().iter().enumerate() {
        let kind = case["kind"].as_str().unwrap();
        if kind != "tf" && kind != "mixed" {
            continue;
        }
        let got = run(case);
        if let Some(err) = case.get("error") {
            let e = match got {
                Err(e) => e,
                Ok(r) => panic!("case {k}: TF raised {err}, ndgather gave {:?}", nested(&r)),
            };
            assert_eq!(class(&e), err["class"], "case {k}: {e}");
            if message_is_tfs(case) {
                assert_eq!(e.to_string(), err["message"].as_str().unwrap(), "case {k}");
            }
            *counts.entry(format!("{kind} error")).or_default() += 1;
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("case {k}: {e}"));
        let want = &case["expected"];
        assert!(
            same(&got.values, &tensor(&want["values"])),
            "case {k}: values {:?} vs {}",
            got.values,
            want["values"]
        );
        assert!(
            splits_equal(&got.splits, want["splits"].as_array().unwrap()),
            "case {k}: splits {:?} vs {}",
            got.splits,
            want["splits"]
        );
        *counts.entry(kind.to_string()).or_default() += 1;
    }
    eprintln!("{counts:?}");
    assert!(
        counts["tf"] >= 300 && counts["tf error"] >= 500,
        "{counts:?}"
    );
}

#[test]
fn an_index_past_its_row_is_an_error_where_tensorflow_reads_on() {
    let mut n = 0;
    for (k, case) in cases().iter().enumerate() {
        if case["kind"] != "unchecked" {
            continue;
        }
        match run(case) {
            Err(e @ (GatherError::BadIndex { .. } | GatherError::RaggedBadIndexVector { .. })) => {
                assert!(e.to_string().starts_with("indices"), "case {k}: {e}")
            }
            other => panic!("case {k}: expected a bad index, got {other:?}"),
        }
        n += 1;
    }
    assert!(n >= 100, "{n}");
}

/// The batch_dims > 0 gather_nd TensorFlow refuses, and the policies beyond TensorFlow's,
/// as nested lists.
#[test]
fn refused_batch_gather_nd_and_policies_as_defined() {
    let mut n = 0;
    for (k, case) in cases().iter().enumerate() {
        if case["kind"] != "refused" && case["kind"] != "policy" {
            continue;
        }
        let got = run(case);
        if case["expected_error"] == true {
            assert!(got.is_err(), "case {k}: {:?}", got.map(|r| nested(&r)));
        } else {
            let got = got.unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(nested(&got), case["expected_list"], "case {k}: {case}");
        }
        n += 1;
    }
    assert!(n >= 300, "{n}");
}

#[test]
fn row_splits_are_checked_as_tensorflow_checks_them() {
    let values = Tensor::from(ndarray::array![1.0f32, 2.0, 3.0].into_dyn());
    let check = |splits: Vec<i64>| {
        RaggedView::new(values.view(), vec![RowSplits::from(splits)])
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(check(vec![0, 1, 3]), Ok(()));
    let zero = check(vec![1, 3]).unwrap_err();
    assert!(zero.starts_with("Arguments to from_row_splits do not form a valid RaggedTensor:zero"));
    let mono = check(vec![0, 2, 1, 3]).unwrap_err();
    assert!(mono
        .starts_with("Arguments to from_row_splits do not form a valid RaggedTensor:monotonic."));
    assert!(mono.contains("row_splits[2] = 1"), "{mono}");
    let last = check(vec![0, 2]).unwrap_err();
    assert!(last.starts_with("Arguments to _from_row_partition do not form a valid RaggedTensor"));
    assert!(check(vec![]).unwrap_err().contains("empty"));
    // A nested level must end at the next level's row count.
    let nested = RaggedView::new(
        values.view(),
        vec![
            RowSplits::from(vec![0i64, 3]),
            RowSplits::from(vec![0i64, 3]),
        ],
    );
    let err = nested.unwrap_err().to_string();
    assert!(
        err.contains("row_splits ends at 3, but the next level has 1 rows"),
        "{err}"
    );
    assert!(RaggedView::new(values.view(), vec![]).is_err());
}

#[test]
fn dtypes_of_the_table_and_records() {
    // Every dtype gathers its rows the same way.
    for &dtype in DType::ALL {
        let values = Tensor::zeros(dtype, &[5]).unwrap();
        let splits = [0i64, 2, 2, 5];
        let params = RaggedView::new(values.view(), vec![splits[..].into()]).unwrap();
        let indices = Tensor::from(ndarray::array![2i64, 0].into_dyn());
        let out = Op::Gather(GatherOptions::new())
            .run_ragged(params, indices.view())
            .unwrap();
        assert_eq!(out.values.shape(), &[5], "{dtype}");
        assert_eq!(out.splits[0].to_vec(), [0, 3, 5], "{dtype}");
    }
}

/// The gradient with respect to params' flat values against TensorFlow's (`GradientTape`
/// through `tf.gather` / `tf.gather_nd` on the RaggedTensor), bit for bit.
#[test]
fn gradients_equal_tensorflows() {
    let mut n = 0;
    for (k, case) in cases().iter().enumerate() {
        let Some(want) = case.get("grad_expected") else {
            continue;
        };
        let (p, i) = (owned(&case["params"]), owned(&case["indices"]));
        let upstream = tensor(&case["grad_upstream"]);
        let want = tensor(want);
        let op = op_of(case);
        let got = match &upstream {
            Tensor::F32(u) => {
                let g = op.ragged_grad(operand(&p), operand(&i), &u.view()).unwrap();
                let dense = g.to_dense().unwrap();
                Tensor::from(dense.into_shape_with_order(want.shape()).unwrap())
            }
            Tensor::F64(u) => {
                let g = op.ragged_grad(operand(&p), operand(&i), &u.view()).unwrap();
                let dense = g.to_dense().unwrap();
                Tensor::from(dense.into_shape_with_order(want.shape()).unwrap())
            }
            other => panic!("case {k}: upstream of dtype {}", other.dtype()),
        };
        assert!(same(&got, &want), "case {k}: {got:?} vs {want:?}");
        n += 1;
    }
    assert!(n >= 120, "{n}");
}
