//! Gathering a few rows from a params file much larger than what the process touches: the
//! file is memory-mapped, so resident memory stays far below the file's size.

mod common;

use common::{bin, npy_parts, write};

/// Peak resident memory of the waited-for children of this process, in bytes.
fn children_max_rss() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given, which points to
    // zeroed memory of the right size and alignment; zeroed is a valid `rusage`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: initialised above (zeroed, then written by getrusage).
    let usage = unsafe { usage.assume_init() };
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn rows_from_a_large_file_stay_light() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (1usize << 17, 1024usize); // 512 MiB of f32
    let header = common::npy_bytes("<f4", false, &[rows, cols], &[], 1);
    let path = write(dir.path(), "big.npy", &header);
    // A sparse file: the OS gives zeros for the data without storing them.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len((header.len() + rows * cols * 4) as u64)
        .unwrap();
    drop(file);
    let out = dir.path().join("out.npy");
    bin()
        .args([
            "gather",
            path.to_str().unwrap(),
            "[5, 100000, 131071]",
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let (_, data) = npy_parts(&std::fs::read(&out).unwrap());
    assert_eq!(data.len(), 3 * cols * 4);
    let file_size = (rows * cols * 4) as u64;
    let rss = children_max_rss();
    assert!(
        rss < file_size / 8,
        "peak RSS {rss} bytes for a {file_size}-byte file"
    );
}
