//! PyTorch's `scatter_reduce` and NumPy's `put_along_axis` against their own results
//! (`data/along_scatter_cases.json`, made by `data/along_scatter_cases.py`), bit for bit, out
//! of place and in place; `scatter_reduce` against a one-element-at-a-time reference on
//! random shapes, reductions and policies.

use crate::common;

use common::case_file::{same, tensor};
use common::reference::resolve;
use common::write_ops::{run_in_place, run_new};
use ndarray::{ArrayD, IxDyn};
use ndgather::scatter_reduce::{Reduction, ScatterReduce};
use ndgather::{BadIndices, DType, Error, TakeAlongAxisOptions, Tensor};
use proptest::prelude::*;
use serde_json::Value;

fn cases(op: &str) -> Vec<Value> {
    let text = include_str!("data/along_scatter_cases.json");
    let file: Value = serde_json::from_str(text).unwrap();
    let all = file["cases"].as_array().unwrap();
    all.iter().filter(|c| c["op"] == op).cloned().collect()
}

fn op_of(case: &Value) -> Result<ScatterReduce, Error> {
    let reduce = Reduction::from_name(case["reduce"].as_str().unwrap())?;
    Ok(ScatterReduce::new(case["dim"].as_i64().unwrap(), reduce)
        .include_self(case["include_self"].as_bool().unwrap()))
}

/// PyTorch's class for each of ndgather's PyTorch errors.
fn class(err: &Error) -> &'static str {
    match err {
        Error::TorchIndex(_) => "IndexError",
        Error::TorchRuntime(_) => "RuntimeError",
        Error::TorchNotImplemented(_) => "NotImplementedError",
        _ => "another",
    }
}

/// Unsigned types wider than 8 bits and index dtypes other than int32 and int64, which
/// PyTorch's CPU kernel lacks and ndgather takes (checked against the reference below).
fn torch_lacks(case: &Value) -> bool {
    let dtype = case["input"]["dtype"].as_str().unwrap();
    let message = case["error"]["message"].as_str().unwrap_or("");
    (["uint16", "uint32", "uint64"].contains(&dtype) && message.contains("not implemented"))
        || message.contains("Expected dtype int32/int64 for index")
            && case["index"]["dtype"].as_str().unwrap().starts_with("int")
}

/// float16 or bfloat16 tensors equal bit for bit but for the payloads of NaNs, which
/// PyTorch's half-type kernel writes as its code path has them (`ops/scatter_reduce.rs`).
fn same_but_nan_payloads(a: &Tensor, b: &Tensor) -> bool {
    let (exponent, mantissa) = match a.dtype() {
        DType::F16 => (0x7c00u16, 0x03ffu16),
        DType::BF16 => (0x7f80, 0x007f),
        _ => return false,
    };
    let bits = |t: &Tensor| -> Vec<u16> {
        let bytes = t.to_bytes().unwrap();
        bytes
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let nan = |v: u16| v & exponent == exponent && v & mantissa != 0;
    a.shape() == b.shape()
        && b.dtype() == a.dtype()
        && bits(a)
            .iter()
            .zip(bits(b))
            .all(|(&x, y)| x == y || nan(x) && nan(y))
}

fn run(case: &Value, in_place: bool) -> Result<Tensor, Error> {
    let (mut input, index, src) = (
        tensor(&case["input"]),
        tensor(&case["index"]),
        tensor(&case["src"]),
    );
    let op = op_of(case)?;
    if in_place {
        let before = input.clone();
        let result = run_in_place(&op, input.view_mut(), &index.view(), &src.view());
        if result.is_err() {
            assert!(same(&input, &before), "written on error: {case}");
        }
        result.map(|_| input)
    } else {
        run_new(&op, input.view(), &index.view(), &src.view())
    }
}

#[test]
fn pytorch_scatter_reduce_cases() {
    let cases = cases("scatter_reduce");
    let (mut outputs, mut errors, mut beyond) = (0, 0, 0);
    for (n, case) in cases.iter().enumerate() {
        for in_place in [false, true] {
            let got = run(case, in_place);
            match (&got, case.get("output")) {
                (Ok(out), Some(expected)) => {
                    let expected = tensor(expected);
                    assert!(
                        same(out, &expected) || same_but_nan_payloads(out, &expected),
                        "case {n}: {out:?} vs {case}"
                    );
                    outputs += 1;
                }
                (Err(e), None) => {
                    let expected = &case["error"];
                    assert_eq!(class(e), expected["class"], "case {n}: {e}");
                    // PyTorch names its kernels and dtypes its own way where a dtype has none.
                    if expected["class"] != "NotImplementedError" {
                        assert_eq!(e.to_string(), expected["message"], "case {n}");
                    }
                    errors += 1;
                }
                (Ok(_), None) if torch_lacks(case) => beyond += 1,
                _ => panic!("case {n}: {got:?} vs {case}"),
            }
        }
    }
    assert!(outputs > 1_000 && errors > 100 && beyond > 100);
    println!(
        "{} PyTorch cases passed, out of place and in place: {outputs} outputs, {errors} errors, \
         {beyond} where PyTorch has no kernel for the dtype or the index dtype (checked below)",
        cases.len()
    );
}

/// PyTorch's autograd gradients of `scatter_reduce` (`ScatterReduceBackward0`) with respect
/// to input and src, bit for bit, for every reduction, both ways of include_self, the four
/// float dtypes, ties, zeros in products (one and two on an element) and duplicates.
#[test]
fn pytorch_scatter_reduce_gradients() {
    let cases = cases("scatter_reduce_grad");
    let mut checked = 0;
    for (n, case) in cases.iter().enumerate() {
        let (input, index, src) = (
            tensor(&case["input"]),
            tensor(&case["index"]),
            tensor(&case["src"]),
        );
        let op = op_of(case).unwrap();
        let output = run_new(&op, input.view(), &index.view(), &src.view()).unwrap();
        let inputs = [input.view().into(), index.view().into(), src.view().into()];
        let upstream = tensor(&case["upstream"]);
        let grads = ndgather::OpDef::grad(&op, &inputs, Some(&output.view()), &upstream.view())
            .unwrap_or_else(|e| panic!("case {n}: {e}"));
        for (got, want) in [(&grads[0], "d_input"), (&grads[2], "d_src")] {
            let (got, want) = (got.as_ref().unwrap(), tensor(&case[want]));
            assert!(
                same(got, &want) || same_but_nan_payloads(got, &want),
                "case {n} {want:?}: {got:?} vs {case}"
            );
            checked += 1;
        }
        assert!(grads[1].is_none());
    }
    assert!(checked > 300, "{checked}");
    // PyTorch differentiates no complex scatter_reduce, and says so.
    let z = |re: f64| ndgather::Complex64::new(re, 0.0);
    let c = Tensor::from(ndarray::array![z(1.0), z(2.0)].into_dyn());
    let index = Tensor::from(ndarray::array![0i64].into_dyn());
    let src = Tensor::from(ndarray::array![z(3.0)].into_dyn());
    let op = ScatterReduce::new(0, Reduction::Sum);
    let inputs = [c.view().into(), index.view().into(), src.view().into()];
    let err = ndgather::OpDef::grad(&op, &inputs, Some(&c.view()), &c.view()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "scatter_reduce does not support automatic differentiation for outputs with complex dtype."
    );
    // A bad index is the forward op's error in the gradient too, for every reduction.
    let x = Tensor::from(ndarray::array![1.0f32, 2.0, 3.0].into_dyn());
    let bad = Tensor::from(ndarray::array![0i64, 5].into_dyn());
    let src = Tensor::from(ndarray::array![1.0f32, 1.0].into_dyn());
    for reduce in ["sum", "prod", "mean", "amax", "amin"] {
        let op = ScatterReduce::new(0, Reduction::from_name(reduce).unwrap());
        let inputs = [x.view().into(), bad.view().into(), src.view().into()];
        let err = ndgather::OpDef::grad(&op, &inputs, Some(&x.view()), &x.view()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "index 5 is out of bounds for dimension 0 with size 3",
            "{reduce}"
        );
    }
}

#[test]
fn numpy_put_along_axis_cases() {
    let cases = cases("put_along_axis");
    let mut errors = 0;
    for (n, case) in cases.iter().enumerate() {
        let (mut arr, indices, values) = (
            tensor(&case["arr"]),
            tensor(&case["indices"]),
            tensor(&case["values"]),
        );
        let before = arr.clone();
        let axis = case["axis"].as_i64().unwrap();
        let options = TakeAlongAxisOptions::new(axis).bad_indices(BadIndices::Negative);
        let got = options.put_along_axis(arr.view_mut(), &indices.view(), &values.view());
        match case.get("output") {
            Some(expected) => {
                got.unwrap();
                assert!(same(&arr, &tensor(expected)), "case {n}: {case}");
            }
            None => {
                assert!(got.is_err(), "case {n}: {case}");
                assert!(same(&arr, &before), "case {n}: written on error");
                errors += 1;
            }
        }
    }
    assert!(cases.len() > 150 && errors >= 5);
    println!(
        "{} NumPy put_along_axis cases passed, {errors} of them errors",
        cases.len()
    );
}

/// An integer type for the reference: its wrapping from i64, its lowest and highest values.
type Width = (fn(i64) -> i64, i64, i64);

/// The reference: every position of `index` in row-major order, its target found from the
/// formula `out[.., index[p], ..] ∘= src[p]`, in i64 arithmetic wrapped to the width.
#[allow(clippy::too_many_arguments)]
fn reference(
    input: &ArrayD<i64>,
    index: &ArrayD<i64>,
    src: &ArrayD<i64>,
    dim: usize,
    reduce: Reduction,
    include_self: bool,
    policy: BadIndices,
    (wrap, lowest, highest): Width,
) -> ArrayD<i64> {
    let mut out = input.clone();
    let mut count = input.mapv(|_| i64::from(include_self));
    let targets: Vec<(IxDyn, Option<IxDyn>)> = index
        .indexed_iter()
        .map(|(p, &v)| {
            let t = resolve(policy, v, input.shape()[dim]).map(|t| {
                let mut t_pos = p.clone();
                t_pos[dim] = t;
                t_pos
            });
            (p, t)
        })
        .collect();
    if !include_self {
        for t in targets.iter().filter_map(|(_, t)| t.as_ref()) {
            out[t] = match reduce {
                Reduction::Prod => 1,
                Reduction::Amax => lowest,
                Reduction::Amin => highest,
                _ => 0,
            };
        }
    }
    for (p, t) in &targets {
        let Some(t) = t else { continue };
        let (a, v) = (out[t], src[p]);
        count[t] += 1;
        out[t] = wrap(match reduce {
            Reduction::Sum | Reduction::Mean => a.wrapping_add(v),
            Reduction::Prod => a.wrapping_mul(v),
            Reduction::Amax => a.max(v),
            Reduction::Amin => a.min(v),
        });
    }
    if reduce == Reduction::Mean {
        out.zip_mut_with(&count, |o, &c| *o = o.div_euclid(c.max(1)));
    }
    out
}

fn to_tensor(a: &ArrayD<i64>, dtype: DType) -> Tensor {
    match dtype {
        DType::U16 => Tensor::from(a.mapv(|v| v as u16)),
        _ => Tensor::from(a.mapv(|v| v as i32)),
    }
}

/// Random numbers for the shapes and values of a case (a linear congruential generator:
/// the test needs variety, not quality).
struct Lcg(u64);

impl Lcg {
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + ((self.0 >> 33) % (hi - lo) as u64) as i64
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn matches_the_reference(
        shape in prop::collection::vec(1usize..4, 1..4),
        seed in any::<u64>(),
        reduce in prop::sample::select(Reduction::ALL.to_vec()),
        include_self in any::<bool>(),
        policy in prop::sample::select(BadIndices::ALL.to_vec()),
        unsigned in any::<bool>(),
        narrow_index in any::<bool>(),
    ) {
        let mut rng = Lcg(seed);
        let rank = shape.len();
        let dim = rng.range(0, rank as i64) as usize;
        let mut ishape: Vec<usize> = shape.iter().map(|&d| rng.range(1, d as i64 + 1) as usize).collect();
        ishape[dim] = rng.range(1, 6) as usize;
        let sshape: Vec<usize> = ishape.iter().map(|&d| d + rng.range(0, 2) as usize).collect();
        let n = shape[dim] as i64;
        // Non-negative values, so that floor and Euclidean division agree for the mean.
        let (dtype, width): (DType, Width) = if unsigned {
            (DType::U16, (|v| v as u16 as i64, 0, u16::MAX.into()))
        } else {
            (DType::I32, (|v| v as i32 as i64, i32::MIN.into(), i32::MAX.into()))
        };
        let mut random = |s: &[usize], lo: i64, hi: i64| {
            let len = s.iter().product();
            ArrayD::from_shape_vec(IxDyn(s), (0..len).map(|_| rng.range(lo, hi)).collect()).unwrap()
        };
        let input = random(&shape, 0, 1000);
        let src = random(&sshape, 0, 1000);
        let index = random(&ishape, -n - 1, n + 2);
        let op = ScatterReduce::new(dim as i64, reduce).include_self(include_self).bad_indices(policy);
        let index_tensor = if narrow_index { Tensor::from(index.mapv(|v| v as i16)) } else { Tensor::from(index.clone()) };
        let got = run_new(&op, to_tensor(&input, dtype).view(), &index_tensor.view(), &to_tensor(&src, dtype).view());
        let src_part = src.slice_each_axis(|a| ndarray::Slice::from(0..ishape[a.axis.index()])).to_owned();
        let bad = index.iter().any(|&v| resolve(policy, v, shape[dim]).is_none());
        if bad && policy.errors() {
            prop_assert!(matches!(got, Err(Error::TorchRuntime(_))));
        } else {
            let want = reference(&input, &index, &src_part, dim, reduce, include_self, policy, width);
            prop_assert_eq!(got.unwrap(), to_tensor(&want, dtype));
        }
    }
}

#[test]
fn a_view_of_another_layout_is_written_in_place() {
    let mut input = ndarray::Array2::<f64>::zeros((3, 4));
    let mut view = input.view_mut().reversed_axes().into_dyn();
    let index = ndarray::array![[0i64, 1, 1, 0, 2]].into_dyn();
    let src = ndarray::array![[1.0f64, 2.0, 3.0, 4.0, 5.0]].into_dyn();
    let sum = ScatterReduce::new(1, Reduction::Sum);
    run_in_place(
        &sum,
        view.view_mut().into(),
        &index.view().into(),
        &src.view().into(),
    )
    .unwrap();
    assert_eq!(input.column(0).to_vec(), [5.0, 5.0, 5.0]);
    assert_eq!(input.sum(), 15.0);
}
