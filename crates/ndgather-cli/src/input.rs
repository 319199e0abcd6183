//! An argument that names an array: a `.npy` file, or an inline literal.

use crate::error::CliError;
use crate::npy::{self, Loaded};
use std::path::Path;

/// Whether `text` can only be meant as a literal (it cannot be a sensible file name).
fn looks_literal(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with(['[', '\'', '"', '-', '+', '.'])
        || t.starts_with("b'")
        || t.starts_with("b\"")
        || t.chars().next().is_some_and(|c| c.is_ascii_digit())
        || matches!(t.trim(), "True" | "False" | "true" | "false")
}

/// Loads an array argument: an existing file is read as `.npy` (params memory-mapped where
/// possible), anything else that looks like a literal is parsed as one.
pub fn load(arg: &'static str, text: &str, map: bool) -> Result<Loaded, CliError> {
    let path = Path::new(text);
    if path.is_file() {
        return npy::read(path, map);
    }
    if looks_literal(text) {
        return ndgather::literal::parse(text)
            .map(Loaded::Owned)
            .map_err(|source| CliError::Literal { arg, source });
    }
    Err(CliError::io(
        path,
        std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
    ))
}
