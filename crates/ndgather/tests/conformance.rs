//! Runs every case of `tests/data/tf_cases.jsonl` (produced by TensorFlow 2.21 on the CPU)
//! as its README defines passing: values bit for bit where TensorFlow gave a result; an error
//! where it failed, with TensorFlow's exact text where the message reports a bad index value.

use ndgather::registry::{self, Attr, Attrs, Input};
use ndgather::{with_dtype, Complex32, Complex64, DType, Error, FloatValue, Out, Tensor};
use serde_json::Value;

use crate::common;
use common::case_file::shape as shape_of;

/// A tensor from the file's `{"dtype", "shape", "data"}` form.
fn tensor(v: &Value) -> Tensor {
    let shape = shape_of(v);
    let data = v["data"].as_array().unwrap();
    let f = |x: &Value| x.as_f64().unwrap();
    let c = |x: &Value| (f(&x[0]), f(&x[1]));
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    macro_rules! ints {
        ($t:ty) => {
            Tensor::from_shape_vec(
                &shape,
                data.iter()
                    .map(|x| {
                        x.as_i64()
                            .map(|i| i as $t)
                            .unwrap_or_else(|| x.as_u64().unwrap() as $t)
                    })
                    .collect::<Vec<$t>>(),
            )
        };
    }
    let floats = with_dtype!(dtype, float T => Some(Tensor::from_shape_vec(
        &shape,
        data.iter().map(|x| <T as FloatValue>::from_f64(f(x))).collect(),
    )), else None);
    let t = match dtype {
        _ if floats.is_some() => floats.unwrap(),
        DType::Bool => {
            Tensor::from_shape_vec(&shape, data.iter().map(|x| x.as_bool().unwrap()).collect())
        }
        DType::I8 => ints!(i8),
        DType::I16 => ints!(i16),
        DType::I32 => ints!(i32),
        DType::I64 => ints!(i64),
        DType::U8 => ints!(u8),
        DType::U16 => ints!(u16),
        DType::U32 => ints!(u32),
        DType::U64 => ints!(u64),
        DType::C64 => Tensor::from_shape_vec(
            &shape,
            data.iter()
                .map(c)
                .map(|(r, i)| Complex32::new(r as f32, i as f32))
                .collect(),
        ),
        DType::C128 => Tensor::from_shape_vec(
            &shape,
            data.iter()
                .map(c)
                .map(|(r, i)| Complex64::new(r, i))
                .collect(),
        ),
        DType::String => Tensor::from_shape_vec(
            &shape,
            data.iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect(),
        ),
        DType::Bytes => Tensor::from_shape_vec(
            &shape,
            data.iter()
                .map(|x| x.as_str().unwrap().as_bytes().to_vec())
                .collect(),
        ),
        other => panic!("{other}: a float, built above"),
    };
    t.unwrap()
}

/// Equal dtype, shape and elements, floats compared by their bits.
fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    if a.dtype() != b.dtype() || a.shape() != b.shape() {
        return false;
    }
    match (a, b) {
        (Tensor::F16(x), Tensor::F16(y)) => {
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Tensor::BF16(x), Tensor::BF16(y)) => {
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Tensor::F32(x), Tensor::F32(y)) => {
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Tensor::F64(x), Tensor::F64(y)) => {
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Tensor::C64(x), Tensor::C64(y)) => x
            .iter()
            .zip(y)
            .all(|(p, q)| p.re.to_bits() == q.re.to_bits() && p.im.to_bits() == q.im.to_bits()),
        (Tensor::C128(x), Tensor::C128(y)) => x
            .iter()
            .zip(y)
            .all(|(p, q)| p.re.to_bits() == q.re.to_bits() && p.im.to_bits() == q.im.to_bits()),
        _ => a == b,
    }
}

fn run(case: &Value) -> Result<Tensor, Error> {
    let params = tensor(&case["params"]);
    let indices = tensor(&case["indices"]);
    // By name, through the registry, as every front end calls an op.
    let mut attrs = Attrs::new().with(
        "batch_dims",
        Attr::Int(case["batch_dims"].as_i64().unwrap()),
    );
    if let Some(axis) = case["axis"].as_i64() {
        attrs.insert("axis", Attr::Int(axis));
    }
    let op = registry::find(case["op"].as_str().unwrap())?.with_attrs(&attrs)?;
    let inputs = [Input::from(params.view()), Input::from(indices.view())];
    op.run(&inputs, Out::New)?
        .expect("a new output")
        .into_dense()
}

/// The numbers in `[a,b,c]` or `[a, b, c]`.
fn numbers(s: &str) -> Vec<i128> {
    s.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| x.trim().parse().unwrap())
        .collect()
}

fn flat(pos: &[usize], shape: &[usize]) -> usize {
    pos.iter().zip(shape).fold(0, |acc, (&p, &d)| acc * d + p)
}

/// TensorFlow builds gather_nd's batch_dims by prepending the batch coordinates to every
/// index vector of indices reshaped to `[batch, rows..]`; ndgather reports the vector as the
/// caller wrote it. The two name the same row when their flat positions agree and TF's
/// vector ends with ours.
fn same_bad_row_as_tf(case: &Value, tf: &str, ours: &Error) -> Result<(), String> {
    let Error::BadIndexVector {
        position, values, ..
    } = ours
    else {
        return Err(format!("expected a bad index vector, got {ours:?}"));
    };
    let bd = case["batch_dims"].as_u64().unwrap() as usize;
    let ishape = shape_of(&case["indices"]);
    let rows_shape = &ishape[..ishape.len() - 1];
    let (pos_part, rest) = tf
        .strip_prefix("indices")
        .unwrap()
        .split_once(" = ")
        .unwrap();
    let tf_values = numbers(rest.split(" does not").next().unwrap());
    let tf_pos: Vec<usize> = numbers(pos_part).into_iter().map(|x| x as usize).collect();
    let mut tf_shape = vec![rows_shape[..bd].iter().product::<usize>()];
    tf_shape.extend_from_slice(&rows_shape[bd..]);
    if tf_values[bd..] != values[..] || flat(&tf_pos, &tf_shape) != flat(position, rows_shape) {
        return Err(format!("TF: {tf}; ours: {ours}"));
    }
    Ok(())
}

fn check(case: &Value) -> Result<(), String> {
    let result = std::panic::catch_unwind(|| run(case)).map_err(|_| "panicked".to_string())?;
    match (&case["expected"], case["error"].as_str(), result) {
        (Value::Object(_), _, Ok(out)) => {
            let expected = tensor(&case["expected"]);
            if same_bits(&out, &expected) {
                Ok(())
            } else {
                Err(format!("expected {expected:?}, got {out:?}"))
            }
        }
        (Value::Object(_), _, Err(e)) => Err(format!("expected a result, got error: {e}")),
        (_, Some(_), Ok(out)) => Err(format!("expected an error, got {out:?}")),
        (_, Some(tf), Err(ours)) => {
            let reports_value =
                tf.contains(" is not in [0, ") || tf.contains("does not index into param shape");
            let bd = case["batch_dims"].as_i64().unwrap();
            if case["op"] == "gather_nd" && bd > 0 && reports_value {
                same_bad_row_as_tf(case, tf, &ours)
            } else if tf.starts_with("Input to reshape is a tensor with") {
                // TF fails inside a reshape when gather_nd's batch dimensions differ.
                match ours {
                    Error::BatchShapeMismatch { .. } => Ok(()),
                    other => Err(format!("expected a batch shape mismatch, got {other:?}")),
                }
            } else if ours.to_string() == tf {
                Ok(())
            } else {
                Err(format!("TF: {tf}\nours: {ours}"))
            }
        }
        _ => Err("case has neither expected nor error".to_string()),
    }
}

#[test]
fn every_tensorflow_case_passes() {
    let text = include_str!("data/tf_cases.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        count += 1;
        if let Err(why) = check(&case) {
            failures.push(format!("{}: {why}", case["id"]));
        }
    }
    assert_eq!(count, 1526, "the file should hold 1,526 cases");
    assert!(
        failures.is_empty(),
        "{} of {count} cases fail:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}
