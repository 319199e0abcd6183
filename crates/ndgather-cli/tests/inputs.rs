//! The forms an array argument takes besides a plain `.npy` file: `.npz` members (stored and
//! compressed, written by NumPy and by the zip crate), safetensors tensors (written by the
//! safetensors crate, and by hand at a misaligned offset), big-endian and misaligned data,
//! standard input and output; and the errors that point to the right form.

use crate::common;

use assert_cmd::Command;
use common::{bin, npy_bytes, npy_parts, write};
use std::io::Write;
use std::path::Path;

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn stderr_of_failure(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn npz_members_written_by_numpy() {
    let npz = data("numpy.npz");
    // Stored members: np.savez's zip64 local headers put the data at odd offsets.
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{npz}:x"), "[7, 2]"])),
        "shape=(2,) dtype=int64\n[7 2]\n"
    );
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{npz}:y"), "[1]"])),
        "shape=(1, 3) dtype=float32\n[[0. 1. 0.]]\n"
    );
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{npz}:s"), "[1, 0]"])),
        "shape=(2,) dtype=string\n['bb' 'a']\n"
    );
    // A compressed member (np.savez_compressed) of big-endian float64, the only one: the
    // name may be left out.
    let compressed = data("numpy_compressed.npz");
    for arg in [format!("{compressed}:z"), compressed.clone()] {
        assert_eq!(
            stdout_of(bin().args(["gather", &arg, "[2, 0]"])),
            "shape=(2, 2) dtype=float64\n[[6.  7.5]\n [0.  1.5]]\n"
        );
    }
    // Indices from an archive too.
    assert_eq!(
        stdout_of(bin().args([
            "gather",
            "[10, 11, 12, 13, 14, 15, 16, 17, 18, 19]",
            &format!("{npz}:x")
        ])),
        "shape=(10,) dtype=int32\n[10 11 12 13 14 15 16 17 18 19]\n"
    );
}

#[test]
fn npz_members_written_by_the_zip_crate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.npz");
    let table = f32_bytes(&[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    for (name, method) in [
        ("stored", zip::CompressionMethod::Stored),
        ("deflated", zip::CompressionMethod::Deflated),
    ] {
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        zip.start_file(format!("{name}.npy"), options).unwrap();
        zip.write_all(&npy_bytes("<f4", false, &[3, 2], &table, 1))
            .unwrap();
    }
    zip.finish().unwrap();
    let p = path.to_str().unwrap();
    for name in ["stored", "deflated"] {
        assert_eq!(
            stdout_of(bin().args(["gather", &format!("{p}:{name}"), "[2]"])),
            "shape=(1, 2) dtype=float32\n[[4.5 5.5]]\n",
            "{name}"
        );
    }
    let err = stderr_of_failure(bin().args(["gather", p, "[0]"]));
    assert!(
        err.contains("holds 2 arrays: name one as") && err.contains("deflated, stored"),
        "{err}"
    );
    let err = stderr_of_failure(bin().args(["gather", &format!("{p}:nope"), "[0]"]));
    assert!(
        err.contains("has no array 'nope'; it has: deflated, stored"),
        "{err}"
    );
}

#[test]
fn safetensors_tensors_written_by_the_safetensors_crate() {
    use safetensors::tensor::{Dtype, TensorView};
    let dir = tempfile::tempdir().unwrap();
    let embed = f32_bytes(&(0..12).map(|i| i as f32 / 4.0).collect::<Vec<_>>());
    // bfloat16 1.0, 2.5, -0.1, 0.1.
    let bf16: Vec<u8> = [1.0f32, 2.5, -0.1, 0.1]
        .iter()
        .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
        .collect();
    let ids: Vec<u8> = [3i64, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let tensors = [
        (
            "embed.weight",
            TensorView::new(Dtype::F32, vec![4, 3], &embed).unwrap(),
        ),
        (
            "half",
            TensorView::new(Dtype::BF16, vec![2, 2], &bf16).unwrap(),
        ),
        ("ids", TensorView::new(Dtype::I64, vec![2], &ids).unwrap()),
    ];
    let path = dir.path().join("model.safetensors");
    safetensors::serialize_to_file(tensors, None, &path).unwrap();
    let p = path.to_str().unwrap();
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{p}:embed.weight"), &format!("{p}:ids")])),
        "shape=(2, 3) dtype=float32\n[[2.25 2.5  2.75]\n [0.   0.25 0.5 ]]\n"
    );
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{p}:half"), "[1, 0]"])),
        "shape=(2, 2) dtype=bfloat16\n[[-0.1  0.1]\n [ 1.   2.5]]\n"
    );
    assert_eq!(
        stdout_of(bin().args(["gather-nd", &format!("{p}:half"), "[[1, 1]]"])),
        "shape=(1,) dtype=bfloat16\n[0.1]\n"
    );
    let err = stderr_of_failure(bin().args(["gather", p, "[0]"]));
    assert!(
        err.contains("holds 3 arrays: name one as") && err.contains("embed.weight, half, ids"),
        "{err}"
    );
    // bfloat16 is written as ml_dtypes saves it (raw 2-byte elements, `<V2`), and read back.
    let out = dir.path().join("o.npy");
    let out = out.to_str().unwrap();
    stdout_of(bin().args(["gather", &format!("{p}:half"), "[1]", "-o", out]));
    let bytes = std::fs::read(out).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("'descr': '<V2'"));
    assert_eq!(
        stdout_of(bin().args(["gather", out, "[0]"])),
        "shape=(1, 2) dtype=bfloat16\n[[-0.1  0.1]]\n"
    );
}

#[test]
fn a_misaligned_safetensors_tensor_is_gathered_where_it_lies() {
    // One byte of u8, then a float32 tensor at data offset 1: not aligned for f32.
    let header = r#"{"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"F32","shape":[3,2],"data_offsets":[1,25]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.push(7);
    bytes.extend(f32_bytes(&[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]));
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "odd.safetensors", &bytes);
    let p = p.to_str().unwrap();
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{p}:w"), "[2, 0]"])),
        "shape=(2, 2) dtype=float32\n[[4.5 5.5]\n [0.5 1.5]]\n"
    );
    // Out-of-range ids are TensorFlow's error, in terms of the tensor (not its bytes).
    let err = stderr_of_failure(bin().args(["gather", &format!("{p}:w"), "[3]"]));
    assert!(err.contains("indices[0] = 3 is not in [0, 3)"), "{err}");
    assert_eq!(
        stdout_of(bin().args(["gather", &format!("{p}:w"), "1", "--axis", "-1"])),
        "shape=(3,) dtype=float32\n[1.5 3.5 5.5]\n"
    );
}

#[test]
fn big_endian_params_of_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            ">i2",
            [1i16, -2, 300]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
            "dtype=int16\n[300   1]",
        ),
        (
            ">u4",
            [1u32, 2, 70000]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
            "dtype=uint32\n[70000     1]",
        ),
        (
            ">f8",
            [0.1f64, 0.2, 0.3]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
            "dtype=float64\n[0.3 0.1]",
        ),
        (
            ">f2",
            [0x2e66u16, 0x3c00, 0xc100]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
            "dtype=float16\n[-2.5  0.1]",
        ),
        (
            ">c8",
            [1.0f32, 2.0, 3.0, -4.0, 0.5, 0.25]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
            "dtype=complex64\n[0.5+0.25j 1. +2.j  ]",
        ),
    ];
    for (descr, data, expected) in cases {
        // Mapped, and gathered as records of bytes that are swapped once gathered.
        let path = write(
            dir.path(),
            "be.npy",
            &npy_bytes(descr, false, &[3], &data, 1),
        );
        let out = stdout_of(bin().args(["gather", path.to_str().unwrap(), "[2, 0]"]));
        assert!(out.ends_with(&format!("{expected}\n")), "{descr}: {out}");
    }
}

#[test]
fn pipes_in_and_out() {
    let dir = tempfile::tempdir().unwrap();
    let table = npy_bytes(
        "<f4",
        false,
        &[3, 2],
        &f32_bytes(&[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]),
        1,
    );
    let ids = npy_bytes(
        "<i8",
        false,
        &[2],
        &[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        1,
    );
    let params = write(dir.path(), "t.npy", &table);
    let p = params.to_str().unwrap();
    // Indices from standard input.
    let out = bin()
        .args(["gather", p, "-"])
        .write_stdin(ids.clone())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "shape=(2, 2) dtype=float32\n[[4.5 5.5]\n [0.5 1.5]]\n"
    );
    // Params from standard input, the result as .npy on standard output.
    let out = bin()
        .args(["gather", "-", "[1]", "-o", "-"])
        .write_stdin(table.clone())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (dict, data) = npy_parts(&out.stdout);
    assert_eq!(common::descr_of(&dict), "<f4");
    assert_eq!(common::shape_of(&dict), vec![1, 2]);
    assert_eq!(data, f32_bytes(&[2.5, 3.5]));
    // The output of one run is the input of the next.
    let out2 = bin()
        .args(["gather", "-", "[0, 0]", "--axis", "1"])
        .write_stdin(out.stdout)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out2.stdout).unwrap(),
        "shape=(1, 2) dtype=float32\n[[2.5 2.5]]\n"
    );
    let err = stderr_of_failure(bin().args(["gather", "-", "-"]).write_stdin(ids.clone()));
    assert!(
        err.contains("only one of PARAMS and INDICES can be read from standard input"),
        "{err}"
    );
    let err = stderr_of_failure(bin().args(["gather", p, "-"]).write_stdin(Vec::new()));
    assert!(err.contains("<stdin>: nothing on standard input"), "{err}");
    let err = stderr_of_failure(
        bin()
            .args(["gather", p, "-"])
            .write_stdin(b"1,2\n".to_vec()),
    );
    assert!(
        err.contains("<stdin>: not a .npy file") && err.contains("text file (CSV?)"),
        "{err}"
    );
    // A file named `-o -` is not created.
    assert!(!Path::new("-").exists());
}

#[test]
fn errors_name_the_form_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let err = stderr_of_failure(bin().args(["gather", d, "[0]"]));
    assert!(
        err.contains("is a directory; params is one of FILE.npy, ARCHIVE.npz:NAME"),
        "{err}"
    );
    let err = stderr_of_failure(bin().args(["gather", "no/such.npy", "[0]"]));
    assert!(
        err.contains("no/such.npy: no such file; params is one of"),
        "{err}"
    );
    let csv = write(dir.path(), "t.csv", b"1,2,3\n4,5,6\n");
    let err = stderr_of_failure(bin().args(["gather", csv.to_str().unwrap(), "[0]"]));
    assert!(
        err.contains("it looks like a text file (CSV?)") && err.contains("np.loadtxt"),
        "{err}"
    );
    let npy = write(
        dir.path(),
        "one.npy",
        &npy_bytes("<f4", false, &[1], &[0; 4], 1),
    );
    let err =
        stderr_of_failure(bin().args(["gather", &format!("{}:x", npy.to_str().unwrap()), "[0]"]));
    assert!(
        err.contains("a .npy file holds one array: pass it without ':x'"),
        "{err}"
    );
    // An archive or a model read as something else says what it is.
    let npz_bytes = std::fs::read(data("numpy.npz")).unwrap();
    let err = stderr_of_failure(bin().args(["gather", "-", "[0]"]).write_stdin(npz_bytes));
    assert!(
        err.contains(
            "it looks like a .npz archive (a zip file); pass one of its arrays as ARCHIVE.npz:NAME"
        ),
        "{err}"
    );
    let out = bin()
        .args(["gather-nd", "[[1, 2]]", "[[0, 1]]", "--axis", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: gather-nd has no --axis"), "{err}");
    assert!(!err.contains("-- --axis"), "{err}");
    let err = stderr_of_failure(bin().args(["gather", "[[1, 2]]", "[0]", "--axis", "-3"]));
    assert!(
        err.contains("--axis -3 is out of range: for params of rank 2, --axis takes -2 to 1"),
        "{err}"
    );
}

#[test]
fn help_and_completions() {
    let help = stdout_of(bin().args(["gather", "--help"]));
    for form in [
        "FILE.npy",
        "ARCHIVE.npz:NAME",
        "MODEL.safetensors:NAME",
        "standard input",
        "--precision",
        "--full",
        "--threshold",
    ] {
        assert!(help.contains(form), "--help lacks {form}:\n{help}");
    }
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout_of(bin().args(["completions", shell]));
        assert!(
            script.contains("gather-nd") && script.contains("ndgather"),
            "{shell}"
        );
    }
}

#[test]
fn print_options() {
    let run = |args: &[&str]| {
        stdout_of(
            bin()
                .args(["gather", "[0.1, 0.123456789, 2.5]", "[0, 1, 2]"])
                .args(args),
        )
    };
    assert_eq!(
        run(&[]),
        "shape=(3,) dtype=float32\n[0.1        0.12345679 2.5       ]\n"
    );
    assert_eq!(
        run(&["--precision", "3"]),
        "shape=(3,) dtype=float32\n[0.1   0.123 2.5  ]\n"
    );
    let many = format!(
        "[{}]",
        (0..30)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let ids = format!(
        "[{}]",
        (0..30)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let summary = stdout_of(bin().args(["gather", &many, &ids, "--threshold", "10"]));
    assert!(summary.ends_with("[ 0  1  2 ... 27 28 29]\n"), "{summary}");
    let full = stdout_of(bin().args(["gather", &many, &ids, "--full", "--line-width", "40"]));
    assert!(full.lines().count() > 3 && !full.contains("..."), "{full}");
}

#[test]
fn take_along_axis_from_every_source() {
    let out = stdout_of(bin().args([
        "take-along-axis",
        "[[10, 30, 20], [60, 40, 50]]",
        "[[0, 2, 1], [1, 2, 0]]",
        "--axis",
        "1",
    ]));
    assert_eq!(out, "shape=(2, 3) dtype=int32\n[[10 20 30]\n [40 50 60]]\n");
    // From a big-endian file (records path), indices broadcast along axis 0.
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = [0.5f32, 1.5, 2.5, 3.5, 4.5, 5.5]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let p = write(
        dir.path(),
        "be.npy",
        &npy_bytes(">f4", false, &[2, 3], &data, 1),
    );
    let out = stdout_of(bin().args([
        "take-along-axis",
        p.to_str().unwrap(),
        "[[2, 0]]",
        "--axis",
        "-1",
    ]));
    assert_eq!(out, "shape=(2, 2) dtype=float32\n[[2.5 0.5]\n [5.5 3.5]]\n");
    let err = stderr_of_failure(bin().args([
        "take-along-axis",
        p.to_str().unwrap(),
        "[[3]]",
        "--axis",
        "1",
    ]));
    assert!(err.contains("indices[0,0] = 3 is not in [0, 3)"), "{err}");
    let err = stderr_of_failure(bin().args([
        "take-along-axis",
        p.to_str().unwrap(),
        "[[1]]",
        "--axis",
        "2",
    ]));
    assert!(err.contains("axis 2 is out of bounds for array of dimension 2 (for params of rank 2, --axis takes -2 to 1)"), "{err}");
}

#[test]
fn the_fill_policy() {
    let run = |args: &[&str]| stdout_of(bin().args(args));
    assert_eq!(
        run(&["gather", "[1.5, 2.5]", "[1, 7]", "--bad-indices", "fill"]),
        "shape=(2,) dtype=float32\n[2.5 nan]\n"
    );
    assert_eq!(
        run(&["gather", "[1, 2]", "[1, 7]", "--bad-indices", "fill"]),
        "shape=(2,) dtype=int32\n[          2 -2147483648]\n"
    );
    assert_eq!(
        run(&["gather", "[1, 2]", "[1, 7]", "--bad-indices=fill=-1"]),
        "shape=(2,) dtype=int32\n[ 2 -1]\n"
    );
    assert_eq!(
        run(&[
            "gather-nd",
            "[[1.0, 2.0]]",
            "[[0, 5]]",
            "--bad-indices",
            "fill=inf"
        ]),
        "shape=(1,) dtype=float32\n[inf]\n"
    );
    assert_eq!(
        run(&[
            "take-along-axis",
            "[[1, 2]]",
            "[[5, 0]]",
            "--axis",
            "1",
            "--bad-indices",
            "fill=7"
        ]),
        "shape=(1, 2) dtype=int32\n[[7 1]]\n"
    );
    // Through the records path: a big-endian file, the fill element swapped as the data is.
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = [0.5f64, 1.5].iter().flat_map(|v| v.to_be_bytes()).collect();
    let p = write(
        dir.path(),
        "be.npy",
        &npy_bytes(">f8", false, &[2], &data, 1),
    );
    assert_eq!(
        run(&[
            "gather",
            p.to_str().unwrap(),
            "[1, 9]",
            "--bad-indices",
            "fill=-0.25"
        ]),
        "shape=(2,) dtype=float64\n[ 1.5  -0.25]\n"
    );
    let err =
        stderr_of_failure(bin().args(["gather", "[1, 2]", "[7]", "--bad-indices", "fill=2.5"]));
    assert!(
        err.contains("fill value 2.5 does not fit elements of type i32"),
        "{err}"
    );
    let out = bin()
        .args(["gather", "[1]", "[0]", "--bad-indices", "ignore=3"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("only fill takes a value (fill=VALUE), not ignore"));
    let help = stdout_of(bin().args(["gather", "--help"]));
    assert!(help.contains("fill[=VALUE]"), "{help}");
}

#[test]
fn embedding_lookup_over_shard_files() {
    let dir = tempfile::tempdir().unwrap();
    // Rows 0..5 of a 1-column table split "div": [0, 1, 2] and [3, 4]; the second shard
    // big-endian (copied rather than mapped).
    let first = write(
        dir.path(),
        "a.npy",
        &npy_bytes("<f4", false, &[3, 1], &f32_bytes(&[0.0, 1.0, 2.0]), 1),
    );
    let be: Vec<u8> = [3.0f32, 4.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    let second = write(
        dir.path(),
        "b.npy",
        &npy_bytes(">f4", false, &[2, 1], &be, 1),
    );
    let (a, b) = (first.to_str().unwrap(), second.to_str().unwrap());
    let out = stdout_of(bin().args([
        "embedding-lookup",
        a,
        b,
        "--ids",
        "[[4, 0], [2, 3]]",
        "--partition-strategy",
        "div",
    ]));
    assert_eq!(
        out,
        "shape=(2, 2, 1) dtype=float32\n[[[4.]\n  [0.]]\n\n [[2.]\n  [3.]]]\n"
    );
    let err = stderr_of_failure(bin().args([
        "embedding-lookup",
        a,
        b,
        "--ids",
        "[5]",
        "--partition-strategy",
        "div",
    ]));
    assert!(err.contains("indices[0] = 5 is not in [0, 5)"), "{err}");
    let out = stdout_of(bin().args([
        "embedding-lookup",
        "[[3.0, 4.0]]",
        "--ids",
        "[0]",
        "--max-norm",
        "1",
    ]));
    assert_eq!(out, "shape=(1, 2) dtype=float32\n[[0.6 0.8]]\n");
}
