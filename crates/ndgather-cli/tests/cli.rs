//! The built `ndgather` binary over real `.npy` files: every dtype, both byte orders, both
//! memory orders, every format version, every error class, and the printed form.

use crate::common;

use common::{bin, descr_of, npy_bytes, npy_parts, shape_of, write};
use predicates::prelude::*;

fn le<const N: usize>(values: &[[u8; N]]) -> Vec<u8> {
    values.concat()
}

/// (descr in, three elements' bytes, descr out, bytes of elements [2, 0] out)
fn dtype_table() -> Vec<(&'static str, Vec<u8>, &'static str, Vec<u8>)> {
    let f16 = |v: f32| half::f16::from_f32(v).to_le_bytes();
    vec![
        ("|b1", vec![1, 0, 1], "|b1", vec![1, 1]),
        ("|i1", vec![0xff, 2, 0x80], "|i1", vec![0x80, 0xff]),
        ("|u1", vec![7, 8, 9], "|u1", vec![9, 7]),
        (
            "<i2",
            le(&[
                (-2i16).to_le_bytes(),
                5i16.to_le_bytes(),
                i16::MAX.to_le_bytes(),
            ]),
            "<i2",
            le(&[i16::MAX.to_le_bytes(), (-2i16).to_le_bytes()]),
        ),
        (
            "<u2",
            le(&[
                1u16.to_le_bytes(),
                2u16.to_le_bytes(),
                u16::MAX.to_le_bytes(),
            ]),
            "<u2",
            le(&[u16::MAX.to_le_bytes(), 1u16.to_le_bytes()]),
        ),
        (
            "<i4",
            le(&[
                (-1i32).to_le_bytes(),
                0i32.to_le_bytes(),
                77i32.to_le_bytes(),
            ]),
            "<i4",
            le(&[77i32.to_le_bytes(), (-1i32).to_le_bytes()]),
        ),
        (
            ">i4",
            le(&[
                (-1i32).to_be_bytes(),
                0i32.to_be_bytes(),
                77i32.to_be_bytes(),
            ]),
            "<i4",
            le(&[77i32.to_le_bytes(), (-1i32).to_le_bytes()]),
        ),
        (
            "<u4",
            le(&[
                1u32.to_le_bytes(),
                2u32.to_le_bytes(),
                u32::MAX.to_le_bytes(),
            ]),
            "<u4",
            le(&[u32::MAX.to_le_bytes(), 1u32.to_le_bytes()]),
        ),
        (
            "<i8",
            le(&[
                i64::MIN.to_le_bytes(),
                0i64.to_le_bytes(),
                i64::MAX.to_le_bytes(),
            ]),
            "<i8",
            le(&[i64::MAX.to_le_bytes(), i64::MIN.to_le_bytes()]),
        ),
        (
            ">u8",
            le(&[
                1u64.to_be_bytes(),
                2u64.to_be_bytes(),
                u64::MAX.to_be_bytes(),
            ]),
            "<u8",
            le(&[u64::MAX.to_le_bytes(), 1u64.to_le_bytes()]),
        ),
        (
            "<f2",
            le(&[f16(0.5), f16(-1.0), f16(65504.0)]),
            "<f2",
            le(&[f16(65504.0), f16(0.5)]),
        ),
        (
            "<f4",
            le(&[
                1.5f32.to_le_bytes(),
                f32::NAN.to_le_bytes(),
                (-0.0f32).to_le_bytes(),
            ]),
            "<f4",
            le(&[(-0.0f32).to_le_bytes(), 1.5f32.to_le_bytes()]),
        ),
        (
            ">f8",
            le(&[
                0.1f64.to_be_bytes(),
                2.0f64.to_be_bytes(),
                f64::MIN_POSITIVE.to_be_bytes(),
            ]),
            "<f8",
            le(&[f64::MIN_POSITIVE.to_le_bytes(), 0.1f64.to_le_bytes()]),
        ),
        (
            "<c8",
            le(&[
                [1f32.to_le_bytes(), 2f32.to_le_bytes()]
                    .concat()
                    .try_into()
                    .unwrap(),
                [0u8; 8],
                [3f32.to_le_bytes(), (-4f32).to_le_bytes()]
                    .concat()
                    .try_into()
                    .unwrap(),
            ]),
            "<c8",
            [
                3f32.to_le_bytes(),
                (-4f32).to_le_bytes(),
                1f32.to_le_bytes(),
                2f32.to_le_bytes(),
            ]
            .concat(),
        ),
        (
            ">c16",
            [
                1f64.to_be_bytes(),
                2f64.to_be_bytes(),
                [0; 8],
                [0; 8],
                3f64.to_be_bytes(),
                4f64.to_be_bytes(),
            ]
            .concat(),
            "<c16",
            [
                3f64.to_le_bytes(),
                4f64.to_le_bytes(),
                1f64.to_le_bytes(),
                2f64.to_le_bytes(),
            ]
            .concat(),
        ),
        (
            "|S5",
            b"ab\0\0\0helloxyz\0\0".to_vec(),
            "|S3",
            b"xyzab\0".to_vec(),
        ),
        (
            "<U3",
            [utf32("ab", 3), utf32("héé", 3), utf32("x", 3)].concat(),
            "<U2",
            [utf32("x", 2), utf32("ab", 2)].concat(),
        ),
    ]
}

/// UTF-32LE, NUL-padded to `width` characters.
fn utf32(s: &str, width: usize) -> Vec<u8> {
    let mut chars: Vec<char> = s.chars().collect();
    chars.resize(width, '\0');
    chars
        .iter()
        .flat_map(|&c| (c as u32).to_le_bytes())
        .collect()
}

#[test]
fn every_dtype_round_trips_through_npy() {
    let dir = tempfile::tempdir().unwrap();
    for (version, (descr, data, out_descr, out_data)) in dtype_table().into_iter().enumerate() {
        let version = (version % 3) as u8 + 1;
        let params = write(
            dir.path(),
            "p.npy",
            &npy_bytes(descr, false, &[3], &data, version),
        );
        let out = dir.path().join("out.npy");
        bin()
            .args([
                "gather",
                params.to_str().unwrap(),
                "[2, 0]",
                "-o",
                out.to_str().unwrap(),
            ])
            .assert()
            .success();
        let (dict, bytes) = npy_parts(&std::fs::read(&out).unwrap());
        assert_eq!(descr_of(&dict), out_descr, "{descr}");
        assert_eq!(shape_of(&dict), vec![2], "{descr}");
        assert_eq!(bytes, out_data, "{descr}");
        // Indices from a .npy file too.
        let idx = write(
            dir.path(),
            "i.npy",
            &npy_bytes(
                "<i8",
                false,
                &[2],
                &[2i64.to_le_bytes(), 0i64.to_le_bytes()].concat(),
                version,
            ),
        );
        bin()
            .args([
                "gather",
                params.to_str().unwrap(),
                idx.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .assert()
            .success();
        assert_eq!(
            npy_parts(&std::fs::read(&out).unwrap()).1,
            out_data,
            "{descr} with .npy indices"
        );
    }
}

#[test]
fn fortran_order_and_big_endian_indices() {
    let dir = tempfile::tempdir().unwrap();
    // [[0, 1, 2], [10, 11, 12]] in column-major order.
    let data: Vec<u8> = [0i32, 10, 1, 11, 2, 12]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let params = write(
        dir.path(),
        "f.npy",
        &npy_bytes("<i4", true, &[2, 3], &data, 1),
    );
    let idx = write(
        dir.path(),
        "i.npy",
        &npy_bytes(">i2", false, &[2], &[0, 2, 0, 0], 2),
    );
    bin()
        .args([
            "gather",
            params.to_str().unwrap(),
            idx.to_str().unwrap(),
            "--axis",
            "1",
        ])
        .assert()
        .success()
        .stdout("shape=(2, 2) dtype=int32\n[[ 2  0]\n [12 10]]\n");
    bin()
        .args(["gather-nd", params.to_str().unwrap(), "[[1, 2], [0, 1]]"])
        .assert()
        .success()
        .stdout("shape=(2,) dtype=int32\n[12  1]\n");
}

#[test]
fn printing_and_option_forms() {
    let p = "[[0,1,2],[10,11,12]]";
    for axis in [["--axis", "-1"].as_slice(), ["--axis=-1"].as_slice()] {
        bin()
            .args(["gather", p, "[2, 0]"])
            .args(axis)
            .assert()
            .success()
            .stdout("shape=(2, 2) dtype=int32\n[[ 2  0]\n [12 10]]\n");
    }
    bin()
        .args([
            "gather",
            "[[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]]",
            "[[2, 4], [0, 4], [1, 3]]",
            "--batch-dims",
            "-1",
        ])
        .assert()
        .success()
        .stdout("shape=(3, 2) dtype=int32\n[[1 2]\n [3 4]\n [5 6]]\n");
    bin()
        .args(["gather", r#"[b"a", b"b"]"#, "1"])
        .assert()
        .success()
        .stdout("shape=() dtype=bytes\nb'b'\n");
    bin()
        .args(["gather", r#"["a","b"]"#, "[1, 1]"])
        .assert()
        .success()
        .stdout("shape=(2,) dtype=string\n['b' 'b']\n");
    bin()
        .args(["gather", "[1.5, 2.0]", "[1, 5]", "--bad-indices", "ignore"])
        .assert()
        .success()
        .stdout("shape=(2,) dtype=float32\n[2. 0.]\n");
    bin()
        .args(["gather", "[1, 2, 3]", "[-1]", "--bad-indices", "negative"])
        .assert()
        .success()
        .stdout("shape=(1,) dtype=int32\n[3]\n");
    bin()
        .args(["gather", "[1, 2, 3]", "[-4]", "--bad-indices", "negative"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "indices[0] = -4 is not in [0, 3)",
        ));
    // NumPy's mode="wrap": np.take([1, 2, 3], [7, -4], mode="wrap") is [2, 3].
    bin()
        .args(["gather", "[1, 2, 3]", "[7, -4]", "--bad-indices", "wrap"])
        .assert()
        .success()
        .stdout("shape=(2,) dtype=int32\n[2 3]\n");
    bin()
        .args(["gather", "[1, 2, 3]", "[9]", "--bad-indices", "clamp"])
        .assert()
        .success()
        .stdout("shape=(1,) dtype=int32\n[3]\n");
    bin()
        .args([
            "gather-nd",
            "[[0,1,2],[3,4,5]]",
            "[[1],[2]]",
            "--bad-indices=ignore",
        ])
        .assert()
        .success()
        .stdout("shape=(2, 3) dtype=int32\n[[3 4 5]\n [0 0 0]]\n");
}

#[test]
fn examples_command_runs_every_documented_example() {
    bin()
        .arg("examples")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "45 of 45 examples give the documented result",
        ))
        .stdout(predicate::str::contains(
            ">>> tf.gather(params, indices, axis=1, batch_dims=1)",
        ));
}

fn fails_with(args: &[&str], message: &str) {
    let out = bin().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(message),
        "{args:?}: expected '{message}' in {stderr}"
    );
}

#[test]
fn every_error_class_is_one_line_and_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, bytes: &[u8]| write(dir.path(), name, bytes).to_str().unwrap().to_string();
    let good = p("good.npy", &npy_bytes("<f4", false, &[3], &[0u8; 12], 1));
    fails_with(
        &["gather", &good, "[0, 5]"],
        "error: indices[1] = 5 is not in [0, 3)",
    );
    fails_with(
        &["gather", &good, "[0]", "--axis", "3"],
        "error: Shape must be at least rank 4 but is rank 1 (--axis 3 is out of range: for params of rank 1, --axis takes -1 to 0)",
    );
    fails_with(
        &[
            "gather",
            "[[1,2],[3,4]]",
            "[0]",
            "--axis",
            "1",
            "--batch-dims",
            "2",
        ],
        "Expected batch_dims in the range [-1, 1], but got 2",
    );
    fails_with(
        &[
            "gather",
            "[[1,2],[3,4]]",
            "[[0],[1]]",
            "--axis",
            "0",
            "--batch-dims",
            "1",
        ],
        "batch_dims (1) must be less than or equal to axis (0).",
    );
    fails_with(
        &[
            "gather-nd",
            "[[1,2,3],[4,5,6]]",
            "[[0],[1],[2]]",
            "--batch-dims",
            "1",
        ],
        "params.shape[0]: 2 should be equal to indices.shape[0]: 3",
    );
    fails_with(
        &["gather-nd", "[[1,2],[3,4]]", "[[0, 7]]"],
        "indices[0] = [0, 7] does not index into param shape [2,2]",
    );
    fails_with(
        &["gather-nd", "[[1,2],[3,4]]", "[0]", "--batch-dims", "-1"],
        "tf.gather_nd does not allow negative batch_dims.",
    );
    fails_with(
        &["gather", &good, "[0.5]"],
        "indices must be an integer tensor",
    );
    fails_with(
        &[
            "gather",
            &p("date.npy", &npy_bytes("<M8[D]", false, &[1], &[0; 8], 1)),
            "[0]",
        ],
        "",
    );
    fails_with(
        &[
            "gather",
            &p("obj.npy", &npy_bytes("|O", false, &[1], &[0; 8], 1)),
            "[0]",
        ],
        "object arrays are not supported",
    );
    fails_with(&["gather", &p("rec.npy", b"\x93NUMPY\x01\x00\x46\x00{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }      \n\0\0\0\0"), "[0]"], "");
    fails_with(
        &[
            "gather",
            &p("short.npy", &npy_bytes("<f4", false, &[10], &[0; 8], 1)),
            "[0]",
        ],
        "data is shorter than the header says",
    );
    let full = npy_bytes("<f4", false, &[3], &[0; 12], 1);
    fails_with(
        &["gather", &p("trunc.npy", &full[..20]), "[0]"],
        "bad header",
    );
    fails_with(
        &[
            "gather",
            &p("garbage.npy", b"this is not a numpy file at all"),
            "[0]",
        ],
        "not a .npy file (no \\x93NUMPY magic): it looks like a text file (CSV?)",
    );
    fails_with(
        &[
            "gather",
            &p(
                "huge.npy",
                &npy_bytes("<f8", false, &[1 << 40, 1 << 40], &[0; 8], 1),
            ),
            "[0]",
        ],
        "too large",
    );
    fails_with(
        &[
            "gather",
            &p("big2.npy", &npy_bytes("<f8", false, &[1 << 50], &[0; 8], 1)),
            "[0]",
        ],
        "data is shorter",
    );
    fails_with(&["gather", "missing.npy", "[0]"], "no such file");
    fails_with(
        &["gather", "[1, [2]]", "[0]"],
        "params: cannot read literal",
    );
    fails_with(&["gather", "[1, 2]", "[0,"], "indices: cannot read literal");
    fails_with(
        &["gather", "[1, 2]", "[0]", "-o", "/nonexistent-dir/out.npy"],
        "/nonexistent-dir/out.npy",
    );
    // A bad index in a memory-mapped params.
    let mapped = p("m.npy", &npy_bytes("<i8", false, &[2, 2], &[0; 32], 1));
    fails_with(
        &["gather-nd", &mapped, "[[1, 2]]"],
        "indices[0] = [1, 2] does not index into param shape [2,2]",
    );
}

#[test]
fn usage_errors_keep_status_2() {
    for args in [
        vec!["gather"],
        vec!["gather", "[1]", "[0]", "--bad-indices", "maybe"],
        vec!["frobnicate"],
        vec!["gather", "[1]", "[0]", "--axis", "x"],
    ] {
        bin().args(&args).assert().code(2);
    }
}

/// Data at an offset not aligned for its element type (a header NumPy would not write, but
/// the format allows) is read instead of mapped, with the same result.
#[test]
fn unaligned_data_is_read_not_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let mut dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }".to_string();
    while (10 + dict.len() + 1) % 8 != 4 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((dict.len() as u16).to_le_bytes());
    bytes.extend(dict.as_bytes());
    [1.5f64, 2.5, 3.5]
        .iter()
        .for_each(|v| bytes.extend(v.to_le_bytes()));
    let params = write(dir.path(), "odd.npy", &bytes);
    bin()
        .args(["gather", params.to_str().unwrap(), "[2, 0]"])
        .assert()
        .success()
        .stdout("shape=(2,) dtype=float64\n[3.5 1.5]\n");
}

/// `ndgather bench` times a suite case in both modes and says how it ran: the CLI makes its
/// main thread one of rayon's workers, so that each call splits its work where it runs.
#[test]
fn bench_times_both_modes_with_the_main_thread_in_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let suite = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/suite.json");
    let json = dir.path().join("tiny.json");
    bin()
        .args(["bench", suite, "--quick", "--cases", "tiny", "--runs", "1"])
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .stdout(predicate::str::contains("(the calling thread one of them)"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["calling_thread_in_pool"], true);
    assert!(report["threads"].as_u64().unwrap() >= 1);
    let cases = report["cases"].as_array().unwrap();
    let timed: Vec<(&str, &str)> = cases
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["mode"].as_str().unwrap()))
        .collect();
    assert_eq!(timed, [("tiny", "alloc"), ("tiny", "into")]);
    assert!(cases.iter().all(|c| c["median_s"].as_f64().unwrap() > 0.0));
}
