//! Drives the CLI over a sample of the TensorFlow conformance cases: inputs written as
//! `.npy`, the output `.npy` compared byte for byte with TensorFlow's result; once with
//! params in the machine's byte order (viewed as their type), once big-endian (gathered as
//! records of bytes, swapped after).

use crate::common;

use common::{bin, descr_of, npy_bytes, npy_parts, shape_of, write};
use serde_json::Value;

/// NumPy's type string and little-endian bytes of a case's tensor.
fn encode(t: &Value) -> (String, Vec<usize>, Vec<u8>) {
    let shape: Vec<usize> = t["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data = t["data"].as_array().unwrap();
    let f = |x: &Value| x.as_f64().unwrap();
    let int = |x: &Value| {
        x.as_i64()
            .map(|v| v as i128)
            .unwrap_or_else(|| x.as_u64().unwrap() as i128)
    };
    let mut bytes = Vec::new();
    let descr = match t["dtype"].as_str().unwrap() {
        "bool" => {
            data.iter()
                .for_each(|x| bytes.push(x.as_bool().unwrap() as u8));
            "|b1".to_string()
        }
        "string" => {
            let width = data
                .iter()
                .map(|x| x.as_str().unwrap().chars().count())
                .max()
                .unwrap_or(0)
                .max(1);
            for x in data {
                let mut chars: Vec<char> = x.as_str().unwrap().chars().collect();
                chars.resize(width, '\0');
                chars
                    .iter()
                    .for_each(|&c| bytes.extend((c as u32).to_le_bytes()));
            }
            format!("<U{width}")
        }
        "float16" => {
            data.iter()
                .for_each(|x| bytes.extend(half::f16::from_f64(f(x)).to_le_bytes()));
            "<f2".into()
        }
        "float32" => {
            data.iter()
                .for_each(|x| bytes.extend((f(x) as f32).to_le_bytes()));
            "<f4".into()
        }
        "float64" => {
            data.iter().for_each(|x| bytes.extend(f(x).to_le_bytes()));
            "<f8".into()
        }
        "complex64" => {
            data.iter().for_each(|x| {
                bytes.extend((f(&x[0]) as f32).to_le_bytes());
                bytes.extend((f(&x[1]) as f32).to_le_bytes());
            });
            "<c8".into()
        }
        "complex128" => {
            data.iter().for_each(|x| {
                bytes.extend(f(&x[0]).to_le_bytes());
                bytes.extend(f(&x[1]).to_le_bytes());
            });
            "<c16".into()
        }
        int_type => {
            let (code, size) = match int_type {
                "int8" => ("|i1", 1),
                "uint8" => ("|u1", 1),
                "int16" => ("<i2", 2),
                "uint16" => ("<u2", 2),
                "int32" => ("<i4", 4),
                "uint32" => ("<u4", 4),
                "int64" => ("<i8", 8),
                "uint64" => ("<u8", 8),
                other => panic!("dtype {other}"),
            };
            data.iter()
                .for_each(|x| bytes.extend(&int(x).to_le_bytes()[..size]));
            code.into()
        }
    };
    (descr, shape, bytes)
}

/// The same array big-endian, where byte order matters for its type.
fn big_endian(descr: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let Some(rest) = descr.strip_prefix('<') else {
        return (descr.to_string(), bytes.to_vec());
    };
    let size: usize = rest[1..].parse().unwrap();
    let part = if rest.starts_with('c') {
        size / 2
    } else {
        size
    };
    if rest.starts_with('U') {
        return (descr.to_string(), bytes.to_vec());
    }
    let mut swapped = bytes.to_vec();
    swapped.chunks_exact_mut(part).for_each(<[u8]>::reverse);
    (format!(">{rest}"), swapped)
}

#[test]
fn a_sample_of_the_tensorflow_cases_through_the_cli() {
    run_sample(false);
}

#[test]
fn the_sample_with_big_endian_params() {
    run_sample(true);
}

fn run_sample(swap_params: bool) {
    let dir = tempfile::tempdir().unwrap();
    let text = include_str!("../../ndgather/tests/data/tf_cases.jsonl");
    let mut checked = 0;
    for (k, line) in text.lines().enumerate() {
        if k % 7 != 0 {
            continue;
        }
        let case: Value = serde_json::from_str(line).unwrap();
        let (pd, ps, pb) = encode(&case["params"]);
        let (pd, pb) = if swap_params {
            big_endian(&pd, &pb)
        } else {
            (pd, pb)
        };
        let (id, is, ib) = encode(&case["indices"]);
        let params = write(dir.path(), "p.npy", &npy_bytes(&pd, false, &ps, &pb, 1));
        let indices = write(dir.path(), "i.npy", &npy_bytes(&id, false, &is, &ib, 1));
        let out = dir.path().join("out.npy");
        let _ = std::fs::remove_file(&out);
        let op = if case["op"] == "gather" {
            "gather"
        } else {
            "gather-nd"
        };
        let mut cmd = bin();
        cmd.args([
            op,
            params.to_str().unwrap(),
            indices.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        cmd.arg(format!("--batch-dims={}", case["batch_dims"]));
        if let Some(axis) = case["axis"].as_i64() {
            cmd.arg(format!("--axis={axis}"));
        }
        let result = cmd.output().unwrap();
        let id_ = &case["id"];
        match case["error"].as_str() {
            None => {
                assert!(
                    result.status.success(),
                    "{id_}: {}",
                    String::from_utf8_lossy(&result.stderr)
                );
                let (dict, data) = npy_parts(&std::fs::read(&out).unwrap());
                let (ed, es, eb) = encode(&case["expected"]);
                assert_eq!((descr_of(&dict), shape_of(&dict)), (ed, es), "{id_}");
                assert_eq!(data, eb, "{id_}");
            }
            Some(tf) => {
                assert_eq!(result.status.code(), Some(1), "{id_}");
                let stderr = String::from_utf8(result.stderr).unwrap();
                let batched_nd = op == "gather-nd" && case["batch_dims"].as_i64().unwrap() > 0;
                if tf.contains(" is not in [0, ") || (tf.contains("does not index") && !batched_nd)
                {
                    assert_eq!(stderr, format!("error: {tf}\n"), "{id_}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 200, "{checked}");
}
