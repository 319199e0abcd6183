//! Files that try to hurt the CLI, and the files it writes: an `.npz` member that inflates
//! far past what its `.npy` header implies, headers longer than NumPy reads, headers in
//! double quotes (which NumPy reads), shapes whose product overflows, and `-o` onto a
//! symlink or onto a disk that fills up midway.

use crate::common;

use common::{bin, npy_bytes, write};
use std::io::Write;
use std::path::Path;

/// The CLI's one-line error for `args`, which must fail with exit status 1 (not a panic's
/// 101 or a signal).
fn error_of(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

fn stdout_of(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// A `.npy` file's bytes with `dict` as its header text (version 1.0).
fn npy_with_dict(dict: &str, data: &[u8]) -> Vec<u8> {
    common::npy_with_dict(dict, 1, data)
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A `.npz` archive in `dir` whose one member `a.npy`, compressed by `method`, is `member`.
fn npz_of(
    dir: &Path,
    name: &str,
    member: &[u8],
    method: zip::CompressionMethod,
) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    zip.start_file("a.npy", options).unwrap();
    zip.write_all(member).unwrap();
    zip.finish().unwrap();
    path
}

/// A `.npz` archive in `dir` whose one member `a.npy`, deflated, is `member`.
fn deflated_npz(dir: &Path, name: &str, member: &[u8]) -> std::path::PathBuf {
    npz_of(dir, name, member, zip::CompressionMethod::Deflated)
}

#[test]
fn an_npz_member_that_inflates_past_its_header_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // Four int32s, then 64 MiB of zeros that deflate to almost nothing: a zip bomb.
    let mut member = npy_bytes("<i4", false, &[4], &i32_bytes(&[1, 2, 3, 4]), 1);
    member.resize(member.len() + (64 << 20), 0);
    let path = deflated_npz(dir.path(), "bomb.npz", &member);
    assert!(std::fs::metadata(&path).unwrap().len() < 1 << 20);
    let arg = format!("{}:a", path.display());
    let err = error_of(&["gather", &arg, "[0]"]);
    assert!(
        err.contains("inflates to more than the 144 bytes its .npy header implies"),
        "{err}"
    );
}

#[test]
fn an_npz_member_inflated_to_its_header_size_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let member = npy_bytes("<i4", false, &[4], &i32_bytes(&[1, 2, 3, 4]), 1);
    let path = deflated_npz(dir.path(), "fine.npz", &member);
    let arg = format!("{}:a", path.display());
    assert!(stdout_of(&["gather", &arg, "[3, 0]"]).ends_with("[4 1]\n"));
}

#[test]
fn a_header_longer_than_numpy_reads_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // 100 kB of header: a valid dict, padded.
    let dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    let long = format!("{dict}{}", " ".repeat(100_000));
    let data = i32_bytes(&[5, 6]);
    let long = write(
        dir.path(),
        "long.npy",
        &common::npy_with_dict(&long, 2, &data),
    );
    let err = error_of(&["gather", long.to_str().unwrap(), "[1]"]);
    assert!(
        err.contains("more than the 10000 that NumPy reads"),
        "{err}"
    );
    // NumPy's own limit is inclusive: a header of exactly 10,000 bytes is read.
    let edge = format!("{dict}{}\n", " ".repeat(10_000 - 1 - dict.len()));
    let bytes = common::npy_with_dict(&edge, 2, &data);
    let edge = write(dir.path(), "edge.npy", &bytes);
    assert!(stdout_of(&["gather", edge.to_str().unwrap(), "[1]"]).ends_with("[6]\n"));
}

#[test]
fn a_header_in_double_quotes_reads_as_numpy_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    // `np.load` reads this file as int32 [7, 8, 9] (checked with NumPy 2.4).
    let dict = r#"{"descr": "<i4", "fortran_order": False, "shape": (3,)}"#;
    let path = write(
        dir.path(),
        "dq.npy",
        &npy_with_dict(dict, &i32_bytes(&[7, 8, 9])),
    );
    let out = stdout_of(&["gather", path.to_str().unwrap(), "[2, 0]"]);
    assert_eq!(out, "shape=(2,) dtype=int32\n[9 7]\n");
    // And what NumPy refuses, refused: a list for the shape, an extra key.
    for (name, dict) in [
        (
            "list.npy",
            r#"{"descr": "<i4", "fortran_order": False, "shape": [3]}"#,
        ),
        (
            "extra.npy",
            r#"{"descr": "<i4", "fortran_order": False, "shape": (3,), "x": 1}"#,
        ),
    ] {
        let path = write(
            dir.path(),
            name,
            &npy_with_dict(dict, &i32_bytes(&[7, 8, 9])),
        );
        let err = error_of(&["gather", path.to_str().unwrap(), "[0]"]);
        assert!(err.contains("bad header"), "{err}");
    }
}

#[test]
fn a_shape_whose_product_overflows_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for (name, dict) in [
        // 2^32 · 2^32 · 2 overflows u64, in double quotes that a text search for 'shape' missed.
        (
            "dq.npy",
            r#"{"descr": "<i4", "fortran_order": False, "shape": (4294967296, 4294967296, 2)}"#,
        ),
        // A zero makes the count 0, but NumPy refuses the rest's product too.
        (
            "zero.npy",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }",
        ),
        (
            "u64.npy",
            "{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551616,), }",
        ),
    ] {
        let path = write(dir.path(), name, &npy_with_dict(dict, &[0; 16]));
        let err = error_of(&["gather", path.to_str().unwrap(), "[0]"]);
        assert!(err.contains("too large"), "{name}: {err}");
    }
}

#[test]
fn strings_of_no_bytes_are_refused_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    // A billion billion empty strings would need no data bytes at all.
    let dict = "{'descr': '|S0', 'fortran_order': False, 'shape': (1000000000000000000,), }";
    let path = write(dir.path(), "s0.npy", &npy_with_dict(dict, &[]));
    let err = error_of(&["gather", path.to_str().unwrap(), "[0]"]);
    assert!(err.contains("elements of no bytes"), "{err}");
}

/// The files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn output_onto_a_symlink_replaces_the_link_not_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "precious.txt", b"keep me");
    let link = dir.path().join("out.npy");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    stdout_of(&["gather", "[1, 2, 3]", "[2]", "-o", link.to_str().unwrap()]);
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.is_file(), "the link is now the output file");
    assert!(std::fs::read(&link).unwrap().starts_with(b"\x93NUMPY"));
    assert_eq!(listing(dir.path()), ["out.npy", "precious.txt"]);
}

#[cfg(unix)]
#[test]
fn output_to_a_device_is_written_in_place() {
    stdout_of(&["gather", "[1, 2, 3]", "[2]", "-o", "/dev/null"]);
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file(), "/dev/null is still a device");
}

#[cfg(unix)]
#[test]
fn a_write_that_fails_midway_leaves_the_old_file() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB of output, onto a file system that refuses more than 64 KiB per file.
    let params = write(
        dir.path(),
        "params.npy",
        &npy_bytes("<f4", false, &[256, 1024], &vec![0; 1 << 20], 1),
    );
    let indices = (0..256)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let out = write(dir.path(), "out.npy", b"the old result");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ndgather"));
    cmd.args(["gather", params.to_str().unwrap(), &format!("[{indices}]")]);
    cmd.args(["-o", out.to_str().unwrap()]);
    // SAFETY: setrlimit and signal are async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64 << 10,
                rlim_max: 64 << 10,
            };
            // A write past the limit then fails with EFBIG instead of killing the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let run = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("out.npy"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"the old result");
    assert_eq!(
        listing(dir.path()),
        ["out.npy", "params.npy"],
        "no temporary file is left"
    );
}

/// A safetensors file's bytes: its JSON header (no data).
fn safetensors_bytes(header: &str) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header.as_bytes());
    out
}

#[test]
fn an_empty_array_too_big_for_its_item_size_is_refused_as_numpy_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    // Each has no elements, but the product of the other dimensions times 8 bytes passes
    // isize::MAX: NumPy says "array is too big", and strides over it overflow.
    let headers = [
        "{'descr':'<f8','fortran_order':False,'shape':(0,2147483648,2147483648)}",
        "{'descr':'>f8','fortran_order':False,'shape':(0,4611686018427387904)}",
        "{'descr':'<f8','fortran_order':True,'shape':(4611686018427387904,0)}",
    ];
    let mut args = Vec::new();
    for (i, dict) in headers.into_iter().enumerate() {
        let bytes = npy_with_dict(dict, &[]);
        args.push(
            write(dir.path(), &format!("z{i}.npy"), &bytes)
                .display()
                .to_string(),
        );
        let stored = zip::CompressionMethod::Stored;
        let npz = npz_of(dir.path(), &format!("z{i}.npz"), &bytes, stored);
        args.push(format!("{}:a", npz.display()));
        let npz = deflated_npz(dir.path(), &format!("zd{i}.npz"), &bytes);
        args.push(format!("{}:a", npz.display()));
    }
    let st = safetensors_bytes(
        r#"{"a":{"dtype":"F64","shape":[0,4611686018427387904],"data_offsets":[0,0]}}"#,
    );
    let st = write(dir.path(), "z.safetensors", &st);
    args.push(format!("{}:a", st.display()));
    for arg in &args {
        let err = error_of(&["gather", arg, "[0]"]);
        assert!(err.contains("array is too big"), "{arg}: {err}");
    }
    // One byte an element: the same shape fits, and reads as an empty array.
    let dict = "{'descr':'|u1','fortran_order':False,'shape':(0,4611686018427387904)}";
    let fits = write(dir.path(), "u1.npy", &npy_with_dict(dict, &[]));
    let out = stdout_of(&["gather", fits.to_str().unwrap(), "[]"]);
    assert!(
        out.starts_with("shape=(0, 4611686018427387904) dtype=uint8"),
        "{out}"
    );
}

#[test]
fn a_header_of_more_than_64_dimensions_is_refused_as_numpy_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let too_many = write(
        dir.path(),
        "d65.npy",
        &npy_bytes("<f8", false, &[1; 65], &[0; 8], 1),
    );
    let err = error_of(&["gather", too_many.to_str().unwrap(), "[0]"]);
    assert!(
        err.contains("maximum supported dimension for an ndarray is currently 64, found 65"),
        "{err}"
    );
    // 64 dimensions are read and printed as NumPy prints them.
    let most = write(
        dir.path(),
        "d64.npy",
        &npy_bytes("<i4", false, &[1; 64], &i32_bytes(&[7]), 1),
    );
    let out = stdout_of(&["gather", most.to_str().unwrap(), "[0]"]);
    assert!(
        out.ends_with(&format!("\n{}7{}\n", "[".repeat(64), "]".repeat(64))),
        "{out}"
    );
}

#[test]
fn arrays_nested_deeper_than_the_line_is_wide_print() {
    // `print(np.ones((1,) * 7, int))` under `np.set_printoptions(linewidth=3)`.
    let out = stdout_of(&["gather", "[[[[[[[1]]]]]]]", "[0]", "--line-width", "3"]);
    assert_eq!(
        out,
        "shape=(1, 1, 1, 1, 1, 1, 1) dtype=int32\n[[[[[[[1]]]]]]]\n"
    );
    // And with more elements: each goes on its own line, as NumPy puts them
    // (`np.arange(6).reshape(1, 1, 2, 3)` at `linewidth=3`).
    let out = stdout_of(&[
        "gather",
        "[[[[0, 1, 2], [3, 4, 5]]]]",
        "[0]",
        "--line-width",
        "3",
    ]);
    assert!(
        out.ends_with("\n[[[[0\n    1\n    2]\n   [3\n    4\n    5]]]]\n"),
        "{out}"
    );
    // A gather of 64-deep params by 64-deep indices has rank 127: more levels than the
    // default 75 characters.
    let deep = |x: &str| format!("{}{x}{}", "[".repeat(64), "]".repeat(64));
    let out = stdout_of(&["gather", &deep("1"), &deep("0")]);
    assert!(
        out.ends_with(&format!("\n{}1{}\n", "[".repeat(127), "]".repeat(127))),
        "{out}"
    );
}

#[test]
fn a_file_cut_off_after_the_magic_is_a_truncated_header() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("v1.npy", &b"\x93NUMPY\x01\x00"[..]),
        ("v2.npy", &b"\x93NUMPY\x02\x00\x10\x00"[..]),
        ("magic.npy", &b"\x93NUMPY"[..]),
    ] {
        let path = write(dir.path(), name, bytes);
        let err = error_of(&["gather", path.to_str().unwrap(), "[0]"]);
        assert!(err.contains("bad header: truncated"), "{name}: {err}");
        assert!(!err.contains("not a .npy file"), "{name}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn output_onto_a_symlink_under_dev_replaces_the_link_not_its_target() {
    // /dev/shm is a folder anyone may write to, under /dev but holding no devices.
    let Ok(shared) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("no /dev/shm here: nothing to check");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let victim = write(dir.path(), "victim.txt", b"victim2\n");
    let link = shared.path().join("l");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    stdout_of(&["gather", "[[1, 2]]", "[0]", "-o", link.to_str().unwrap()]);
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim2\n");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert!(std::fs::read(&link).unwrap().starts_with(b"\x93NUMPY"));
}

#[cfg(unix)]
#[test]
fn output_to_a_fifo_or_to_stdout_redirected_to_a_file_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    // `-o /dev/stdout` with standard output sent to a file: the file gets the array, and
    // /dev/stdout (a symlink to /proc/self/fd/1) is left as it is.
    let out = dir.path().join("out.npy");
    let run = std::process::Command::new(assert_cmd::cargo::cargo_bin("ndgather"))
        .args(["gather", "[1, 2, 3]", "[2]", "-o", "/dev/stdout"])
        .stdout(std::fs::File::create(&out).unwrap())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(std::fs::read(&out).unwrap().starts_with(b"\x93NUMPY"));
    assert!(std::fs::symlink_metadata("/dev/stdout")
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(listing(dir.path()), ["out.npy"]);
    // A FIFO is written, not replaced by a file.
    let fifo = dir.path().join("fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `name` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    stdout_of(&["gather", "[1, 2, 3]", "[2]", "-o", fifo.to_str().unwrap()]);
    assert!(reader.join().unwrap().starts_with(b"\x93NUMPY"));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_permission_bits() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for mode in [0o600, 0o640, 0o604, 0o755] {
        let path = write(dir.path(), "priv.npy", b"old");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        stdout_of(&["gather", "[[1, 2]]", "[0]", "-o", path.to_str().unwrap()]);
        assert!(std::fs::read(&path).unwrap().starts_with(b"\x93NUMPY"));
        let now = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(now, mode, "{mode:o} became {now:o}");
    }
    assert_eq!(listing(dir.path()), ["priv.npy"]);
}

#[test]
fn an_output_name_near_the_length_limit_is_written() {
    let dir = tempfile::tempdir().unwrap();
    // 250 characters: most systems allow 255 in a name, which the temporary file's needs
    // to fit in too.
    let name = format!("{}.npy", "a".repeat(246));
    let path = dir.path().join(&name);
    stdout_of(&["gather", "[[1, 2]]", "[0]", "-o", path.to_str().unwrap()]);
    assert!(std::fs::read(&path).unwrap().starts_with(b"\x93NUMPY"));
    assert_eq!(listing(dir.path()), [name]);
}

#[test]
fn an_output_error_names_the_output_not_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nofolder").join("x.npy");
    let err = error_of(&["gather", "[[1, 2]]", "[0]", "-o", path.to_str().unwrap()]);
    assert_eq!(
        err,
        format!(
            "error: {}: No such file or directory (os error 2)\n",
            path.display()
        )
    );
}
