//! Gathering a few rows from a params file much larger than what the process touches: the
//! file is memory-mapped (a native or big-endian `.npy`, a stored `.npz` member), so resident
//! memory stays far below the file's size.

mod common;

use common::{bin, npy_parts, sparse_npy};

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

fn gather_three_rows(params: &str, cols: usize) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npy");
    bin()
        .args([
            "gather",
            params,
            "[5, 100000, 131071]",
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let (_, data) = npy_parts(&std::fs::read(&out).unwrap());
    assert_eq!(data.len(), 3 * cols * 4);
}

/// The tests of this file share one process, and the peak RSS of its children covers every
/// child so far: each case is checked against its own file, and none may load its file.
#[test]
fn rows_from_large_files_stay_light() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (1usize << 17, 1024usize); // 512 MiB of f32
    for descr in ["<f4", ">f4"] {
        let (path, file_size) = sparse_npy(dir.path(), descr, rows, cols);
        gather_three_rows(path.to_str().unwrap(), cols);
        let rss = children_max_rss();
        assert!(
            rss < file_size / 8,
            "{descr}: peak RSS {rss} bytes for a {file_size}-byte file"
        );
    }
    // A stored member of a .npz archive (the zip crate writes the data; 256 MiB).
    let (rows, cols) = (1usize << 17, 512usize);
    let path = dir.path().join("big.npz");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    zip.start_file("table.npy", options).unwrap();
    use std::io::Write;
    zip.write_all(&common::npy_bytes("<f4", false, &[rows, cols], &[], 1))
        .unwrap();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..rows * cols * 4 / chunk.len() {
        zip.write_all(&chunk).unwrap();
    }
    zip.finish().unwrap();
    gather_three_rows(&format!("{}:table", path.display()), cols);
    let rss = children_max_rss();
    let size = (rows * cols * 4) as u64;
    assert!(
        rss < size / 4,
        "npz: peak RSS {rss} bytes for a {size}-byte member"
    );
}
