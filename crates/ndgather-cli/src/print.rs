//! Printing a tensor as NumPy prints an array, under a header line with shape and dtype.

use ndgather::{DType, Tensor};
use std::fmt::Write;

fn float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else if v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.0}.")
    } else {
        format!("{v}")
    }
}

fn escape(bytes: &[u8]) -> String {
    bytes
        .iter()
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect()
}

/// Each element as NumPy would print it.
fn elements(t: &Tensor) -> Vec<String> {
    match t {
        Tensor::Bool(a) => a
            .iter()
            .map(|&v| if v { "True" } else { "False" }.to_string())
            .collect(),
        Tensor::I8(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::I16(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::I32(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::I64(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::U8(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::U16(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::U32(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::U64(a) => a.iter().map(ToString::to_string).collect(),
        Tensor::F16(a) => a.iter().map(|v| float(v.to_f64())).collect(),
        Tensor::BF16(a) => a.iter().map(|v| float(v.to_f64())).collect(),
        Tensor::F32(a) => a.iter().map(|&v| float(v as f64)).collect(),
        Tensor::F64(a) => a.iter().map(|&v| float(v)).collect(),
        Tensor::C64(a) => a
            .iter()
            .map(|v| format!("{}{:+}j", float(v.re as f64), v.im))
            .collect(),
        Tensor::C128(a) => a
            .iter()
            .map(|v| format!("{}{:+}j", float(v.re), v.im))
            .collect(),
        Tensor::String(a) => a
            .iter()
            .map(|s| format!("{s:?}").replace('"', "'"))
            .collect(),
        Tensor::Bytes(a) => a.iter().map(|b| format!("b'{}'", escape(b))).collect(),
    }
}

/// NumPy's summarisation: above this many elements, only `EDGE` items at each end of every
/// axis are shown.
const THRESHOLD: usize = 1000;
const EDGE: usize = 3;

fn nest(
    out: &mut String,
    items: &[String],
    shape: &[usize],
    width: usize,
    depth: usize,
    summarize: bool,
) {
    let Some((&n, rest)) = shape.split_first() else {
        let _ = write!(
            out,
            "{:>width$}",
            items.first().map(String::as_str).unwrap_or("")
        );
        return;
    };
    let chunk = rest.iter().product::<usize>();
    let shown: Vec<Option<usize>> = if summarize && n > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain([None])
            .chain((n - EDGE..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    out.push('[');
    for (k, item) in shown.iter().enumerate() {
        if k > 0 {
            if rest.is_empty() {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(rest.len()));
                out.push_str(&" ".repeat(depth + 1));
            }
        }
        match item {
            Some(i) => nest(
                out,
                items.get(i * chunk..(i + 1) * chunk).unwrap_or(&[]),
                rest,
                width,
                depth + 1,
                summarize,
            ),
            None => out.push_str("..."),
        }
    }
    out.push(']');
}

/// `shape=(2, 3) dtype=float32` and the values, as NumPy's `print(array)`.
pub fn format(t: &Tensor) -> String {
    let shape = t.shape();
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let items = elements(t);
    let numeric = !matches!(t.dtype(), DType::String | DType::Bytes | DType::Bool);
    let width = if numeric {
        items.iter().map(String::len).max().unwrap_or(0)
    } else {
        0
    };
    let mut body = String::new();
    nest(&mut body, &items, shape, width, 0, items.len() > THRESHOLD);
    format!("shape={shape_text} dtype={}\n{body}", t.dtype())
}
