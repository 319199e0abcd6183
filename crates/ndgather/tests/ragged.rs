//! Ragged gathers against TensorFlow's own results (`data/ragged_cases.json`, made by
//! `data/ragged_cases.py`): values and row splits bit for bit, TensorFlow's errors (class,
//! and message where TensorFlow's kernel reports the index as given), ndgather's errors
//! where TensorFlow reads past a row, the batch_dims > 0 gather_nd TensorFlow refuses
//! against TensorFlow's per-row results, and the other policies against a nested-list
//! reference.

use crate::common;
use common::Rng;

use common::case_file::{same, tensor};
use ndgather::grad::IndexedSlices;
use ndgather::registry::{self, Attr, Attrs, Input};
use ndgather::{
    ArrayElement, BadIndices, DType, Error, GatherNdOptions, GatherOptions, Op, OpDef, Out, Ragged,
    RaggedView, RowSplits, Tensor,
};
use serde_json::Value;

/// A ragged gather and its gradient through the registered ops' `run`, the one door of every
/// front end: the result as ragged (a dense one has no splits), the gradient as typed
/// slices (none where both operands are dense: that gradient is dense).
trait RunRagged {
    fn run_ragged<'a>(
        &self,
        params: impl Into<Input<'a>>,
        indices: impl Into<Input<'a>>,
    ) -> Result<Ragged, Error>;

    fn ragged_grad<'a, T: ArrayElement>(
        &self,
        params: impl Into<Input<'a>>,
        indices: impl Into<Input<'a>>,
        upstream: &ndarray::ArrayViewD<'a, T>,
    ) -> Result<Option<IndexedSlices<T>>, Error>;
}

impl RunRagged for Op {
    fn run_ragged<'a>(
        &self,
        params: impl Into<Input<'a>>,
        indices: impl Into<Input<'a>>,
    ) -> Result<Ragged, Error> {
        match OpDef::run(self, &[params.into(), indices.into()], Out::New)? {
            Some(registry::Value::Ragged(r)) => Ok(r),
            Some(registry::Value::Dense(values)) => Ok(Ragged {
                values,
                splits: vec![],
            }),
            other => panic!("a ragged gather gave {other:?}"),
        }
    }

    fn ragged_grad<'a, T: ArrayElement>(
        &self,
        params: impl Into<Input<'a>>,
        indices: impl Into<Input<'a>>,
        upstream: &ndarray::ArrayViewD<'a, T>,
    ) -> Result<Option<IndexedSlices<T>>, Error> {
        use std::borrow::Cow;
        let borrowed = |s: &RowSplits<'a>| -> ndgather::TensorView<'a> {
            match s {
                RowSplits::I32(Cow::Borrowed(v)) => ndarray::ArrayView1::from(*v).into_dyn().into(),
                RowSplits::I64(Cow::Borrowed(v)) => ndarray::ArrayView1::from(*v).into_dyn().into(),
                _ => panic!("the tests' splits are borrowed"),
            }
        };
        // Splits given only for a ragged params (given, they ask for the sparse form).
        let (shape, splits) = match params.into() {
            Input::Tensor(t) => (t.shape().to_vec(), Input::None),
            Input::Ragged(r) => (
                r.values().shape().to_vec(),
                Input::List(r.splits().iter().map(borrowed).collect()),
            ),
            other => panic!("params {other:?}"),
        };
        let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let (name, options) = match self {
            Op::Gather(o) => {
                let mut a = Attrs::new().with("batch_dims", Attr::Int(o.batch_dims));
                if let Some(axis) = o.axis {
                    a = a.with("axis", Attr::Int(axis));
                }
                (
                    "gather_grad",
                    a.with("bad_indices", Attr::Str(o.bad_indices.name().into())),
                )
            }
            Op::GatherNd(o) => (
                "gather_nd_grad",
                Attrs::new()
                    .with("batch_dims", Attr::Int(o.batch_dims))
                    .with("bad_indices", Attr::Str(o.bad_indices.name().into())),
            ),
            _ => panic!("no ragged take_along_axis"),
        };
        let op =
            registry::find(name)?.with_attrs(&options.with("params_shape", Attr::Ints(shape)))?;
        let inputs = [
            indices.into(),
            T::into_view(upstream.clone()).into(),
            splits,
        ];
        match op.run(&inputs, Out::New)? {
            Some(registry::Value::Sparse(mut g)) => {
                let g = g.remove(0);
                let values = T::from_tensor_owned(g.values).unwrap_or_else(|_| panic!("dtype"));
                Ok(Some(IndexedSlices {
                    indices: g.indices,
                    values,
                    dense_shape: g.dense_shape,
                }))
            }
            Some(registry::Value::Dense(_)) => Ok(None),
            other => panic!("a ragged gradient gave {other:?}"),
        }
    }
}

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

fn operand(o: &Owned) -> Input<'_> {
    if o.splits.is_empty() {
        return Input::from(o.values.view());
    }
    let splits = o.splits.iter().map(row_splits).collect();
    Input::Ragged(RaggedView::new(o.values.view(), splits).unwrap())
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

fn run(case: &Value) -> Result<Ragged, Error> {
    let (p, i) = (owned(&case["params"]), owned(&case["indices"]));
    op_of(case).run_ragged(operand(&p), operand(&i))
}

/// TensorFlow's class for ndgather's error.
fn class(err: &Error) -> &'static str {
    match err {
        Error::RaggedValue(_) => "ValueError",
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
            Err(e @ (Error::BadIndex { .. } | Error::RaggedBadIndexVector { .. })) => {
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
fn every_dtype_gathers_its_rows() {
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
                let g = op
                    .ragged_grad(operand(&p), operand(&i), &u.view())
                    .unwrap()
                    .unwrap();
                let dense = g.to_dense().unwrap();
                Tensor::from(dense.into_shape_with_order(want.shape()).unwrap())
            }
            Tensor::F64(u) => {
                let g = op
                    .ragged_grad(operand(&p), operand(&i), &u.view())
                    .unwrap()
                    .unwrap();
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

// ---- Random calls against a nested-list reference: the definition of each gather, with
// every index checked against its own row and the policies applied.

/// Random row splits: `ragged_rank` levels over `rows` rows, rows of 0 to `max` each; and
/// the number of values they end at.
fn random_splits(
    rng: &mut Rng,
    mut rows: usize,
    ragged_rank: usize,
    max: usize,
) -> (Vec<Vec<i64>>, usize) {
    let mut splits = vec![];
    for _ in 0..ragged_rank {
        let mut s = vec![0i64];
        for _ in 0..rows {
            s.push(s.last().unwrap() + rng.below(max + 1) as i64);
        }
        rows = *s.last().unwrap() as usize;
        splits.push(s);
    }
    (splits, rows)
}

/// A random ragged tensor of `i32`: rows, then `ragged_rank` ragged levels, then an inner
/// uniform dimension of 2 or none; as (values, splits).
fn random_ragged(rng: &mut Rng, ragged_rank: usize, inner: bool) -> (Tensor, Vec<Vec<i64>>) {
    let first = 1 + rng.below(4);
    let (splits, rows) = random_splits(rng, first, ragged_rank, 3);
    let width = if inner { 2 } else { 1 };
    let data: Vec<i32> = (0..rows * width).map(|k| k as i32 * 10 + 1).collect();
    let shape = if inner { vec![rows, 2] } else { vec![rows] };
    (Tensor::from_shape_vec(&shape, data).unwrap(), splits)
}

fn as_nested(values: &Tensor, splits: &[Vec<i64>]) -> Value {
    nested(&Ragged {
        values: values.clone(),
        splits: splits.iter().map(|s| RowSplits::from(s.clone())).collect(),
    })
}

fn resolve(i: i64, n: usize, policy: BadIndices) -> Result<Option<usize>, ()> {
    let n = n as i64;
    if (0..n).contains(&i) {
        return Ok(Some(i as usize));
    }
    match policy {
        BadIndices::Clamp if n > 0 => Ok(Some(if i < 0 { 0 } else { n as usize - 1 })),
        BadIndices::Negative if (-n..0).contains(&i) => Ok(Some((i + n) as usize)),
        BadIndices::Wrap if n > 0 => Ok(Some(i.rem_euclid(n) as usize)),
        BadIndices::Ignore | BadIndices::Fill => Ok(None),
        _ => Err(()),
    }
}

/// What a filled index gives: an empty row where the slice is ragged, else the slice's
/// shape of the fill value (`inner`: the slice is one row of 2 values, else a value).
fn filled(ragged: bool, inner: bool, policy: BadIndices) -> Value {
    let v = Value::from(if policy == BadIndices::Fill {
        i32::MIN
    } else {
        0
    });
    match (ragged, inner) {
        (true, _) => Value::Array(vec![]),
        (false, true) => Value::Array(vec![v.clone(), v]),
        (false, false) => v,
    }
}

type Slice = (bool, bool);

fn ref_gather(
    p: &Value,
    i: &Value,
    axis: usize,
    bd: usize,
    policy: BadIndices,
    slice: Slice,
) -> Result<Value, ()> {
    let rows = |v: &Value| v.as_array().unwrap().clone();
    if bd > 0 {
        let (ps, is) = (rows(p), rows(i));
        if ps.len() != is.len() {
            return Err(());
        }
        let out: Result<Vec<_>, _> = ps
            .iter()
            .zip(&is)
            .map(|(a, b)| ref_gather(a, b, axis - 1, bd - 1, policy, slice))
            .collect();
        return out.map(Value::Array);
    }
    if axis > 0 {
        let out: Result<Vec<_>, _> = rows(p)
            .iter()
            .map(|a| ref_gather(a, i, axis - 1, 0, policy, slice))
            .collect();
        return out.map(Value::Array);
    }
    fn pick(p: &[Value], x: &Value, policy: BadIndices, slice: Slice) -> Result<Value, ()> {
        match x {
            Value::Array(xs) => xs
                .iter()
                .map(|y| pick(p, y, policy, slice))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            v => Ok(match resolve(v.as_i64().unwrap(), p.len(), policy)? {
                Some(k) => p[k].clone(),
                None => filled(slice.0, slice.1, policy),
            }),
        }
    }
    pick(&rows(p), i, policy, slice)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
    #[test]
    fn gathers_equal_the_nested_list_reference(seed in 1u64..u64::MAX) {
        let mut rng = Rng(seed);
        let ragged_rank = 1 + rng.below(2);
        let inner = rng.below(2) == 1;
        let (values, splits) = random_ragged(&mut rng, ragged_rank, inner);
        let params = as_nested(&values, &splits);
        let rank = 1 + ragged_rank + usize::from(inner);
        let policy = BadIndices::ALL[rng.below(BadIndices::ALL.len())];
        // batch_dims 0 (any axis, dense indices of rank 1 or 2) or 1 (ragged indices per row).
        let bd = rng.below(2);
        let axis = bd + rng.below(rank - bd);
        let high = 5i64;
        let (index_values, index_splits) = if bd == 0 {
            let shape = if rng.below(2) == 0 { vec![3] } else { vec![2, 2] };
            let n: usize = shape.iter().product();
            let data: Vec<i64> = (0..n).map(|_| rng.below(2 * high as usize) as i64 - 2).collect();
            (Tensor::from_shape_vec(&shape, data).unwrap(), vec![])
        } else {
            let nrows = splits[0].len() - 1;
            let mut s = vec![0i64];
            for _ in 0..nrows {
                s.push(s.last().unwrap() + rng.below(3) as i64);
            }
            let n = *s.last().unwrap() as usize;
            let data: Vec<i64> = (0..n).map(|_| rng.below(2 * high as usize) as i64 - 2).collect();
            (Tensor::from_shape_vec(&[n], data).unwrap(), vec![s])
        };
        let indices = as_nested(&index_values, &index_splits);
        // The slice an index picks: ragged where params' next dimension is.
        let slice = (axis < ragged_rank, inner && axis == ragged_rank);
        let want = ref_gather(&params, &indices, axis, bd, policy, slice);
        let p = RaggedView::new(values.view(), splits.iter().map(|s| RowSplits::from(&s[..])).collect()).unwrap();
        let i: Input = if index_splits.is_empty() {
            Input::from(index_values.view())
        } else {
            Input::Ragged(RaggedView::new(index_values.view(), vec![RowSplits::from(&index_splits[0][..])]).unwrap())
        };
        let op = Op::Gather(GatherOptions::new().axis(axis as i64).batch_dims(bd as i64).bad_indices(policy));
        let got = op.run_ragged(p, i);
        match (got, want) {
            (Ok(r), Ok(w)) => proptest::prop_assert_eq!(nested(&r), w),
            (Err(_), Err(())) => {}
            (got, want) => proptest::prop_assert!(false, "got {:?}, want {:?}", got.map(|r| nested(&r)), want),
        }
    }
}

/// More rows than the walk takes at a time (4,096): the chunks' levels join as one.
#[test]
fn many_rows_walk_in_chunks_as_one() {
    let mut rng = Rng(99);
    let rows = 9_000;
    for (ragged_rank, axis) in [(1, 1), (2, 1), (2, 2)] {
        let (splits, level) = random_splits(&mut rng, rows, ragged_rank, 3);
        let values = Tensor::from_shape_vec(&[level], (0..level as i32).collect()).unwrap();
        let (mut isplits, n) = random_splits(&mut rng, rows, 1, 2);
        let isplits = isplits.remove(0);
        let ivalues: Vec<i64> = (0..n).map(|_| rng.below(3) as i64).collect();
        let ivalues = Tensor::from_shape_vec(&[n], ivalues).unwrap();
        for policy in [BadIndices::Error, BadIndices::Ignore] {
            let want = ref_gather(
                &as_nested(&values, &splits),
                &as_nested(&ivalues, std::slice::from_ref(&isplits)),
                axis,
                1,
                policy,
                (axis < ragged_rank, false),
            );
            let p = RaggedView::new(
                values.view(),
                splits.iter().map(|s| RowSplits::from(&s[..])).collect(),
            )
            .unwrap();
            let i = RaggedView::new(ivalues.view(), vec![RowSplits::from(&isplits[..])]).unwrap();
            let op = Op::Gather(
                GatherOptions::new()
                    .axis(axis as i64)
                    .batch_dims(1)
                    .bad_indices(policy),
            );
            match (op.run_ragged(p, i), want) {
                (Ok(r), Ok(w)) => assert_eq!(nested(&r), w, "{ragged_rank} {axis} {policy:?}"),
                (Err(e), Err(())) => assert!(matches!(e, Error::BadIndex { .. }), "{e}"),
                (got, want) => panic!("{:?} vs {want:?}", got.map(|r| nested(&r))),
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]
    /// Any call, valid or not (dense or ragged operands of any rank, scalars, empty rows,
    /// any axis, batch_dims and index values): a result or an error, never a panic.
    #[test]
    fn any_call_is_a_result_or_an_error(seed in 1u64..u64::MAX) {
        let upstream = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[2]));
        let mut rng = Rng(seed);
        let (rank, inner) = (rng.below(3), rng.below(2) == 1);
        let (values, splits) = random_ragged(&mut rng, rank, inner);
        let params = if splits.is_empty() {
            Input::from(values.view())
        } else {
            Input::Ragged(RaggedView::new(values.view(), splits.iter().map(|s| RowSplits::from(&s[..])).collect()).unwrap())
        };
        let scalar = Tensor::from_shape_vec(&[], vec![1.5f32]).unwrap();
        let ragged_indices = rng.below(2) == 0;
        let rows = rng.below(4);
        let (isplits, flat) = random_splits(&mut rng, rows, 1, 2);
        let shape: Vec<usize> = match ragged_indices {
            true => vec![flat],
            false => (0..rng.below(4)).map(|_| rng.below(4)).collect(),
        };
        let n: usize = shape.iter().product();
        let data: Vec<i64> = (0..n).map(|_| rng.below(12) as i64 - 6).collect();
        let index_values = Tensor::from_shape_vec(&shape, data).unwrap();
        let indices = match ragged_indices {
            true => Input::Ragged(RaggedView::new(index_values.view(), vec![RowSplits::from(&isplits[0][..])]).unwrap()),
            false => Input::from(index_values.view()),
        };
        let (axis, bd) = (rng.below(7) as i64 - 3, rng.below(5) as i64 - 2);
        let policy = BadIndices::ALL[rng.below(BadIndices::ALL.len())];
        let ops = [
            Op::Gather(GatherOptions::new().axis(axis).batch_dims(bd).bad_indices(policy)),
            Op::Gather(GatherOptions::new().batch_dims(bd).bad_indices(policy)),
            Op::GatherNd(GatherNdOptions::new().batch_dims(bd).bad_indices(policy)),
        ];
        for op in ops {
            let _ = op.run_ragged(params.clone(), indices.clone());
            let _ = op.run_ragged(Input::from(scalar.view()), indices.clone());
            let _ = op.ragged_grad(params.clone(), indices.clone(), &upstream.view());
        }
    }
}

#[test]
fn scalar_params_are_refused_in_each_ops_words() {
    let scalar = Tensor::from_shape_vec(&[], vec![1.5f32]).unwrap();
    let idx = Tensor::from_shape_vec(&[2, 0], Vec::<i64>::new()).unwrap();
    let nd = Op::GatherNd(GatherNdOptions::new());
    let err = nd.run_ragged(scalar.view(), idx.view()).unwrap_err();
    assert_eq!(err.to_string(), "params must be at least a vector");
    let err = Op::Gather(GatherOptions::new()).run_ragged(scalar.view(), idx.view());
    assert_eq!(
        err.unwrap_err().to_string(),
        "params must be at least 1 dimensional"
    );
}

/// A zero-element operand may claim 2^40 rows: a dense result with no elements comes back
/// without walking them, and a ragged one whose splits would need terabytes is an error
/// (found by the `ragged` fuzz target as a hang).
#[test]
fn billions_of_empty_rows_answer_at_once() {
    let params = Tensor::from_shape_vec(&[3, 3, 3], (0..27).collect::<Vec<i16>>()).unwrap();
    let idx = Tensor::from_shape_vec(&[1 << 40, 0, 0], Vec::<i64>::new()).unwrap();
    let out = Op::Gather(GatherOptions::new())
        .run_ragged(params.view(), idx.view())
        .unwrap();
    assert!(out.splits.is_empty());
    assert_eq!(out.values.shape(), &[1 << 40, 0, 0, 3, 3]);
    // Two dense operands are TensorFlow's dense gather: with empty slices (inner_size 0)
    // no index is checked, under any policy, and nothing walks the 2^40 rows.
    let params = Tensor::from_shape_vec(&[1 << 40, 0, 0], Vec::<f32>::new()).unwrap();
    let zero = Tensor::from_shape_vec(&[], vec![0i64]).unwrap();
    for policy in [BadIndices::Fill, BadIndices::Error] {
        let o = GatherOptions::new().axis(1).bad_indices(policy);
        let out = Op::Gather(o)
            .run_ragged(params.view(), zero.view())
            .unwrap();
        assert_eq!(out.values.shape(), &[1 << 40, 0]);
    }
    // Two dense operands' gradient is the dense one: no element, nothing walked.
    let upstream = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[1 << 40, 0]));
    let fill = GatherOptions::new().axis(1).bad_indices(BadIndices::Fill);
    let dense = Op::Gather(fill).ragged_grad(params.view(), zero.view(), &upstream.view());
    assert!(dense.unwrap().is_none());

    let values = Tensor::from_shape_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let splits = [0i64, 1, 4];
    let ragged = RaggedView::new(values.view(), vec![splits[..].into()]).unwrap();
    let idx = Tensor::from_shape_vec(&[1 << 40, 0], Vec::<i64>::new()).unwrap();
    let err = Op::Gather(GatherOptions::new())
        .run_ragged(ragged.clone(), idx.view())
        .unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    // The gradient's slices would need one index per row, 8 TiB: refused at once.
    let upstream = ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[0]));
    let err = Op::Gather(GatherOptions::new())
        .ragged_grad(ragged, idx.view(), &upstream.view())
        .unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
}
