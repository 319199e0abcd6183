//! What the tool does on a terminal: progress bars on standard error for long work (never
//! into a pipe or a log), and no `.npy` bytes written to it. (A file of its own: its big outputs must not count in another test's
//! measure of its children's memory.)

use crate::common;

use common::{bin, sparse_npy, write};

/// What a run shows on a pseudo-terminal (util-linux's `script` runs it on one and copies
/// what it shows), and whether it succeeded.
fn on_a_terminal(args: &[&str]) -> (bool, String) {
    let command = format!(
        "{} {}",
        assert_cmd::cargo::cargo_bin("ndgather").display(),
        args.join(" ")
    );
    let result = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&result.stdout).into_owned();
    (result.status.success(), shown)
}

fn under_a_terminal(args: &[&str]) -> String {
    let (ok, shown) = on_a_terminal(args);
    assert!(ok, "{shown}");
    shown
}

#[test]
fn npy_bytes_are_not_written_to_a_terminal() {
    let (ok, shown) = on_a_terminal(&["gather", "[1,2]", "[0]", "-o", "-"]);
    assert!(!ok);
    assert!(
        shown.contains("error: -o - writes .npy bytes, not text"),
        "{shown}"
    );
}

#[test]
fn progress_shows_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (1usize << 17, 1024usize);
    let (path, _) = sparse_npy(dir.path(), "<f4", rows, cols);
    // 80 000 rows: 312 MiB out, past the progress threshold.
    let ids: Vec<u8> = (0..80_000i64).flat_map(|i| i.to_le_bytes()).collect();
    let ids = write(
        dir.path(),
        "ids.npy",
        &common::npy_bytes("<i8", false, &[80_000], &ids, 1),
    );
    let out = dir.path().join("out.npy");
    let args = [
        "gather",
        path.to_str().unwrap(),
        ids.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let result = bin().args(args).output().unwrap();
    assert!(result.status.success());
    assert!(
        result.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let shown = under_a_terminal(&args);
    assert!(
        shown.contains("writing"),
        "no progress on a terminal: {shown:?}"
    );
    // Small work shows none, terminal or not.
    let small = [
        "gather",
        path.to_str().unwrap(),
        "[1,2]",
        "-o",
        out.to_str().unwrap(),
    ];
    let shown = under_a_terminal(&small);
    assert!(shown.is_empty(), "progress for small work: {shown:?}");
}
