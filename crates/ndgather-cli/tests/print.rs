//! Printing against NumPy's own `str(array)`: every case of `data/print_cases.jsonl`
//! (written by `data/print_cases.py` with NumPy), every dtype NumPy has, special values,
//! every float16 value, summaries, line wrapping and the print options.

use half::f16;
use ndgather::{Complex32, Complex64, Tensor, TensorElement};
use ndgather_cli::print::{array_str, PrintOptions};
use serde_json::Value;

fn from_le<T: TensorElement + bytemuck::Pod>(shape: &[usize], hex: &str) -> Tensor {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    Tensor::from_shape_vec(shape, bytemuck::pod_collect_to_vec::<u8, T>(&bytes)).unwrap()
}

fn tensor(case: &Value) -> Tensor {
    let shape: Vec<usize> = case["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let dtype = case["dtype"].as_str().unwrap();
    let strings = || -> Vec<&str> {
        case["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect()
    };
    if dtype.starts_with("<U") {
        let values = strings().into_iter().map(String::from).collect();
        return Tensor::from_shape_vec(&shape, values).unwrap();
    }
    if dtype.starts_with("|S") {
        let values = strings()
            .into_iter()
            .map(|h| {
                (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                    .collect::<Vec<u8>>()
            })
            .collect();
        return Tensor::from_shape_vec(&shape, values).unwrap();
    }
    let hex = case["hex"].as_str().unwrap();
    match dtype {
        "|b1" => {
            let bytes = from_le::<u8>(&shape, hex).into_array::<u8>().unwrap();
            Tensor::from(bytes.mapv(|b| b != 0))
        }
        "|i1" => from_le::<i8>(&shape, hex),
        "<i2" => from_le::<i16>(&shape, hex),
        "<i4" => from_le::<i32>(&shape, hex),
        "<i8" => from_le::<i64>(&shape, hex),
        "|u1" => from_le::<u8>(&shape, hex),
        "<u2" => from_le::<u16>(&shape, hex),
        "<u4" => from_le::<u32>(&shape, hex),
        "<u8" => from_le::<u64>(&shape, hex),
        "<f2" => from_le::<f16>(&shape, hex),
        "<f4" => from_le::<f32>(&shape, hex),
        "<f8" => from_le::<f64>(&shape, hex),
        "<c8" => from_le::<Complex32>(&shape, hex),
        "<c16" => from_le::<Complex64>(&shape, hex),
        other => panic!("dtype {other} has no case here"),
    }
}

#[test]
fn every_case_prints_as_numpy_prints_it() {
    let text = include_str!("data/print_cases.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let t = tensor(&case);
        let options = PrintOptions {
            precision: case["precision"].as_u64().unwrap() as usize,
            threshold: case["threshold"].as_u64().unwrap() as usize,
            line_width: case["linewidth"].as_u64().unwrap() as usize,
            ..PrintOptions::default()
        };
        let got = array_str(&t, &options);
        let mut expected = case["str"].as_str().unwrap();
        // NumPy 2 prints a 0-d bytes array as the repr of its scalar type; we print the
        // bytes as NumPy 1 did (and as every other element type prints).
        if let Some(inner) = expected.strip_prefix("np.bytes_(") {
            expected = inner.strip_suffix(')').unwrap();
        }
        count += 1;
        if got != expected {
            let (n, (e, g)) = expected
                .lines()
                .zip(got.lines())
                .enumerate()
                .find(|(_, (e, g))| e != g)
                .unwrap_or((0, (expected, &got)));
            failures.push(format!(
                "{} {:?} p={} t={} w={}: line {n}\n  numpy: {:.300}\n  ours:  {:.300}",
                case["dtype"],
                case["shape"],
                options.precision,
                options.threshold,
                options.line_width,
                e,
                g
            ));
        }
    }
    assert!(count > 300, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} cases differ:\n{}",
        failures.len(),
        failures[..failures.len().min(15)].join("\n")
    );
}
