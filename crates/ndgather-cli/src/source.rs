//! An argument that names an array: a `.npy` file, a member of a `.npz` archive or a tensor
//! of a safetensors file (`FILE:NAME`), `-` for standard input, or an inline literal.

use crate::archive;
use crate::error::CliError;
use crate::inplace::{Buffer, InPlace};
use crate::npy;
use memmap2::Mmap;
use ndgather::registry::Input;
use ndgather::{Op, OpDef, Out, Tensor, TensorView};
use std::io::Read;
use std::path::Path;

/// The forms an array argument takes, for `--help` and for messages.
pub const FORMS: &str = "FILE.npy, ARCHIVE.npz:NAME, MODEL.safetensors:NAME, - (a .npy on \
                         standard input) or a literal such as [[1, 2], [3, 4]]";

/// An array, in memory or used where it lies.
pub enum Loaded {
    /// In memory.
    Owned(Tensor),
    /// Plain numbers in a mapped file or a buffer, not copied.
    InPlace(InPlace),
}

impl Loaded {
    /// The whole array in memory (a copy, for data in place).
    pub fn into_tensor(self) -> Result<Tensor, CliError> {
        match self {
            Loaded::Owned(t) => Ok(t),
            Loaded::InPlace(data) => data.to_tensor(),
        }
    }

    /// A view of the elements as their own type, if they can be viewed so where they lie
    /// (not for big-endian or misaligned data: see [`Loaded::copy`]).
    pub fn typed_view(&self) -> Option<TensorView<'_>> {
        match self {
            Loaded::Owned(t) => Some(t.view()),
            Loaded::InPlace(data) => data.typed(),
        }
    }

    /// The whole array in memory, copied.
    pub fn copy(&self) -> Result<Tensor, CliError> {
        match self {
            Loaded::Owned(t) => Ok(t.clone()),
            Loaded::InPlace(data) => data.to_tensor(),
        }
    }

    /// Runs `op` with this array as params.
    pub fn gather<'a>(&'a self, op: &Op, indices: &TensorView<'a>) -> Result<Tensor, CliError> {
        match self {
            Loaded::Owned(t) => run_new(op, &[Input::from(t.view()), Input::from(indices.clone())]),
            Loaded::InPlace(data) => data.gather(op, indices),
        }
    }

    /// How many bytes `op` reads from the array in place (and writes), by its shape rule:
    /// 0 for an array in memory.
    pub fn bytes_read_in_place(&self, op: &Op, indices: &[usize]) -> u64 {
        let Loaded::InPlace(data) = self else {
            return 0;
        };
        let out = op
            .out_shape(data.shape(), indices)
            .map_or(0, |s| s.iter().product());
        (out as u64).saturating_mul(data.element_size() as u64)
    }
}

/// The file formats an array can come from, told by their first bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// NumPy's `.npy`.
    Npy,
    /// NumPy's `.npz`: a zip archive of `.npy` members.
    Npz,
    /// A safetensors file: a little-endian header length, a JSON header, the data.
    Safetensors,
}

impl Format {
    /// The format of data that starts with `bytes`, if it is one of ours.
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"\x93NUMPY") {
            Some(Format::Npy)
        } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            Some(Format::Npz)
        } else if bytes.len() > 8 && bytes[8] == b'{' {
            Some(Format::Safetensors)
        } else {
            None
        }
    }

    /// The format's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Npy => "a .npy file",
            Format::Npz => "a .npz archive (a zip file)",
            Format::Safetensors => "a safetensors file",
        }
    }

    /// How to pass an array of this format.
    pub fn how_to_name(self) -> &'static str {
        match self {
            Format::Npy => "pass it as FILE.npy",
            Format::Npz => "pass one of its arrays as ARCHIVE.npz:NAME",
            Format::Safetensors => "pass one of its tensors as MODEL.safetensors:NAME",
        }
    }
}

/// Whether `text` can only be meant as a literal (it cannot be a sensible file name).
fn looks_literal(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with(['[', '\'', '"', '-', '+', '.'])
        || t.starts_with("b'")
        || t.starts_with("b\"")
        || t.chars().next().is_some_and(|c| c.is_ascii_digit())
        || matches!(t.trim(), "True" | "False" | "true" | "false")
}

fn map(path: &Path) -> Result<Mmap, CliError> {
    let file = std::fs::File::open(path).map_err(|e| CliError::io(path.display(), e))?;
    // SAFETY: the map is read-only, and ndgather reads it only as plain numbers (for which
    // every bit pattern is a value) or parses it as bytes. Another process truncating or
    // rewriting the file while it is mapped is outside what a memory map can guard against
    // (as with any reader of memory-mapped files).
    unsafe { Mmap::map(&file) }.map_err(|e| CliError::io(path.display(), e))
}

/// Reads a file of any of our formats; `member` names the array inside an archive.
fn open_file(path: &Path, member: Option<&str>) -> Result<Loaded, CliError> {
    let label = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| CliError::io(&label, e))?;
    if meta.len() == 0 {
        return Err(CliError::npy(&label, "the file is empty".to_string()));
    }
    let data = map(path)?;
    match (Format::sniff(&data), member) {
        (Some(Format::Npy), None) => {
            let end = data.len();
            npy::parse(&label, Buffer::Map(data), 0, end)
        }
        (Some(Format::Npz), _) => archive::npz_member(&label, Buffer::Map(data), member),
        (Some(Format::Safetensors), _) => {
            archive::safetensors_tensor(&label, Buffer::Map(data), member)
        }
        (Some(Format::Npy), Some(name)) => Err(CliError::npy(
            &label,
            format!("a .npy file holds one array: pass it without ':{name}'"),
        )),
        (None, _) => Err(CliError::npy(&label, npy::not_npy(&data))),
    }
}

/// Reads standard input: the bytes of a `.npy` file.
fn read_stdin() -> Result<Loaded, CliError> {
    let label = "<stdin>";
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::io(label, e))?;
    if bytes.is_empty() {
        return Err(CliError::npy(
            label,
            "nothing on standard input".to_string(),
        ));
    }
    let end = bytes.len();
    npy::parse(label, Buffer::Heap(bytes), 0, end)
}

/// Loads the array argument `arg` (`"params"` or `"indices"`) given as `text`.
pub fn load(arg: &'static str, text: &str) -> Result<Loaded, CliError> {
    if text == "-" {
        return read_stdin();
    }
    let path = Path::new(text);
    if path.is_file() {
        return open_file(path, None);
    }
    if path.is_dir() {
        return Err(CliError::npy(
            text,
            format!("is a directory; {arg} is one of {FORMS}"),
        ));
    }
    if let Some((file, member)) = text.rsplit_once(':') {
        if Path::new(file).is_file() {
            return open_file(Path::new(file), Some(member));
        }
    }
    if looks_literal(text) {
        return crate::literal::parse(text)
            .map(Loaded::Owned)
            .map_err(|source| CliError::Literal { arg, source });
    }
    Err(CliError::npy(
        text,
        format!("no such file; {arg} is one of {FORMS}"),
    ))
}

/// `op` on `inputs`, through the core's one door, into a new dense tensor.
pub(crate) fn run_new(op: &dyn OpDef, inputs: &[Input<'_>]) -> Result<Tensor, CliError> {
    let value = op
        .run(inputs, Out::New)?
        .ok_or_else(|| CliError::Internal("a run into a new output returned none".into()))?;
    Ok(value.into_dense()?)
}
