//! `--ragged` on the built binary: every TensorFlow case of the core's ragged case file with a
//! result (`crates/ndgather/tests/data/ragged_cases.json`), through ragged `.npz` archives
//! and `.npy` files, the result read back bit for bit; TensorFlow's errors, as the core's
//! test checks them.

use crate::common;

use common::bin;
use ndgather::{DType, Ragged, RowSplits, Strings, Tensor};
use ndgather_cli::{npy, ragged, source};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|k| u8::from_str_radix(&s[k..k + 2], 16).unwrap())
        .collect()
}

fn tensor(v: &Value) -> Tensor {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    if let Some(strings) = v["strings"].as_array() {
        let strings: Vec<String> = strings.iter().map(|s| s.as_str().unwrap().into()).collect();
        let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), strings).unwrap();
        return Tensor::from(Strings::from(array));
    }
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    Tensor::from_bytes(dtype, &shape, &hex(v["hex"].as_str().unwrap())).unwrap()
}

fn splits(t: Tensor) -> RowSplits<'static> {
    match t {
        Tensor::I32(a) => RowSplits::from(a.into_raw_vec_and_offset().0),
        Tensor::I64(a) => RowSplits::from(a.into_raw_vec_and_offset().0),
        other => panic!("splits of dtype {}", other.dtype()),
    }
}

/// Writes an operand: a ragged one as a `.npz`, a dense one as a `.npy`; whether ragged.
fn write(dir: &Path, name: &str, v: &Value) -> (PathBuf, bool) {
    let values = tensor(&v["values"]);
    let parts: Vec<RowSplits> = v["splits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| splits(tensor(s)))
        .collect();
    if parts.is_empty() {
        let path = dir.join(format!("{name}.npy"));
        let file = std::fs::File::create(&path).unwrap();
        npy::write(file, name, &values, &npy::type_str(&values)).unwrap();
        return (path, false);
    }
    let path = dir.join(format!("{name}.npz"));
    let r = Ragged {
        values,
        splits: parts,
    };
    ragged::save(
        ndgather::registry::Value::Ragged(r),
        &path,
        |_, _| unreachable!(),
    )
    .unwrap();
    (path, true)
}

fn load(path: &str) -> Tensor {
    source::load("result", path).unwrap().into_tensor().unwrap()
}

fn same(a: &Tensor, b: &Tensor) -> bool {
    match (a.to_bytes(), b.to_bytes()) {
        (Ok(x), Ok(y)) => a.dtype() == b.dtype() && a.shape() == b.shape() && x == y,
        _ => a == b,
    }
}

#[test]
fn tensorflow_cases_through_the_binary() {
    let text = include_str!("../../ndgather/tests/data/ragged_cases.json");
    let file: Value = serde_json::from_str(text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mut results, mut errors) = (0, 0);
    for (k, case) in file["cases"].as_array().unwrap().iter().enumerate() {
        if case["kind"] != "tf" && case["kind"] != "mixed" {
            continue;
        }
        let (p, p_ragged) = write(dir.path(), &format!("p{k}"), &case["params"]);
        let (i, i_ragged) = write(dir.path(), &format!("i{k}"), &case["indices"]);
        let which: Vec<&str> = [("params", p_ragged), ("indices", i_ragged)]
            .iter()
            .filter(|w| w.1)
            .map(|w| w.0)
            .collect();
        let op = match case["op"].as_str().unwrap() {
            "gather" => "gather",
            _ => "gather-nd",
        };
        let mut cmd = bin();
        cmd.arg(op)
            .arg(&p)
            .arg(&i)
            .arg("--ragged")
            .arg(which.join(","));
        cmd.arg(format!("--batch-dims={}", case["batch_dims"]));
        if let Some(axis) = case["axis"].as_i64() {
            cmd.arg(format!("--axis={axis}"));
        }
        if let Some(err) = case.get("error") {
            let out = cmd.output().unwrap();
            assert!(!out.status.success(), "case {k}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let row_gather = case["op"] == "gather"
                && case["batch_dims"] == 0
                && case["axis"].as_i64().unwrap_or(0) == 0
                && p_ragged;
            if row_gather || err["class"] == "ValueError" {
                let message = err["message"].as_str().unwrap();
                assert!(stderr.contains(message), "case {k}: {stderr} vs {message}");
            }
            errors += 1;
            continue;
        }
        let want = &case["expected"];
        let ragged_out = !want["splits"].as_array().unwrap().is_empty();
        let out = dir
            .path()
            .join(format!("o{k}.{}", if ragged_out { "npz" } else { "npy" }));
        cmd.arg("-o").arg(&out);
        let status = cmd.output().unwrap();
        assert!(status.status.success(), "case {k}: {status:?}");
        let out = out.display().to_string();
        let (values, got_splits) = match ragged_out {
            false => (load(&out), vec![]),
            true => {
                let n = want["splits"].as_array().unwrap().len();
                let names = (0..n).map(|s| match s {
                    0 => format!("{out}:row_splits"),
                    s => format!("{out}:row_splits_{s}"),
                });
                (
                    load(&format!("{out}:values")),
                    names.map(|n| load(&n)).collect(),
                )
            }
        };
        assert!(
            same(&values, &tensor(&want["values"])),
            "case {k}: {values:?}"
        );
        for (g, w) in got_splits.iter().zip(want["splits"].as_array().unwrap()) {
            assert!(same(g, &tensor(w)), "case {k}: splits {g:?}");
        }
        results += 1;
    }
    eprintln!("{results} results and {errors} errors as TensorFlow's");
    assert!(results >= 320 && errors >= 500, "{results} {errors}");
}

#[test]
fn a_ragged_result_needs_an_npz() {
    let dir = tempfile::tempdir().unwrap();
    let r = Ragged {
        values: Tensor::from(ndarray::array![1.5f32, 2.5, 3.5].into_dyn()),
        splits: vec![RowSplits::from(vec![0i64, 1, 3])],
    };
    let p = dir.path().join("p.npz");
    ragged::save(
        ndgather::registry::Value::Ragged(r),
        &p,
        |_, _| unreachable!(),
    )
    .unwrap();
    bin()
        .args([
            "gather",
            p.to_str().unwrap(),
            "[1, 0]",
            "--ragged",
            "params",
            "-o",
        ])
        .arg(dir.path().join("out.npy"))
        .assert()
        .failure()
        .stderr(predicates::str::contains("write it to a .npz"));
    bin()
        .args(["gather", p.to_str().unwrap(), "[1, 0]", "--ragged", "params"])
        .assert()
        .success()
        .stdout("ragged_rank=1 values: shape=(3,) dtype=float32\nvalues:\n[2.5 3.5 1.5]\nrow_splits:\n[0 2 3]\n");
    bin()
        .args(["gather", "[1, 2]", "[0]", "--ragged", "params"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("is not a .npz file"));
}
