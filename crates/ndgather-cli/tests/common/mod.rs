//! Writing and reading `.npy` bytes by hand, so the tests control every header detail.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The bytes of a `.npy` file: `version` 1, 2 or 3; `descr` NumPy's type string.
pub fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8], version: u8) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape_text}, }}",
        if fortran { "True" } else { "False" }
    );
    npy_with_dict(&dict, version, data)
}

/// The bytes of a `.npy` file of `version` with `dict` as its header's text: padded with
/// spaces and a newline as NumPy pads it, unless it already ends in a newline.
pub fn npy_with_dict(dict: &str, version: u8, data: &[u8]) -> Vec<u8> {
    let mut dict = dict.to_string();
    let prefix = if version == 1 { 10 } else { 12 };
    if !dict.ends_with('\n') {
        while !(prefix + dict.len() + 1).is_multiple_of(64) {
            dict.push(' ');
        }
        dict.push('\n');
    }
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((dict.len() as u16).to_le_bytes());
    } else {
        out.extend((dict.len() as u32).to_le_bytes());
    }
    out.extend(dict.as_bytes());
    out.extend(data);
    out
}

/// The header dictionary text and the data bytes of a `.npy` file.
pub fn npy_parts(bytes: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let (len, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    (
        String::from_utf8(bytes[start..start + len].to_vec()).unwrap(),
        bytes[start + len..].to_vec(),
    )
}

/// The `descr` of a header dictionary.
pub fn descr_of(dict: &str) -> String {
    let rest = dict.split("'descr': '").nth(1).unwrap();
    rest.split('\'').next().unwrap().to_string()
}

/// The `shape` of a header dictionary.
pub fn shape_of(dict: &str) -> Vec<usize> {
    let rest = dict.split("'shape': (").nth(1).unwrap();
    rest.split(')')
        .next()
        .unwrap()
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect()
}

pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("ndgather").unwrap()
}

/// A sparse `.npy` file of `rows × cols` float32 zeros of byte order `descr`, and the data's
/// size: the OS gives zeros for the data without storing them.
pub fn sparse_npy(dir: &Path, descr: &str, rows: usize, cols: usize) -> (PathBuf, u64) {
    let header = npy_bytes(descr, false, &[rows, cols], &[], 1);
    let path = write(
        dir,
        &format!("big{descr}.npy").replace(['<', '>'], ""),
        &header,
    );
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len((header.len() + rows * cols * 4) as u64)
        .unwrap();
    (path, (rows * cols * 4) as u64)
}
