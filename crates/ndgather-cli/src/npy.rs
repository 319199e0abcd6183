//! `.npy` data: parsed (NumPy format 1.0–3.0, C and Fortran order, either byte order) from
//! bytes wherever they lie (a mapped file, an archive member, standard input), and written.

use crate::error::CliError;
use crate::inplace::{data_len, plain_size, too_big, Buffer, ByteOrder, InPlace};
use crate::npy_header::{self, Header};
use crate::source::Loaded;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndgather::{DType, Tensor};
use npyz::{Deserialize, NpyFile, NpyHeader, TypeStr, WriterBuilder};
use std::io::{Cursor, Write};

/// The dtype of a `.npy` type string (`<f4`, `|S5`), and the size of one element in bytes:
/// the dtype table's descr (ml_dtypes' for the types NumPy lacks); `S` and `U` take a width.
fn element(descr: &str) -> Option<(DType, usize)> {
    if let Some(dtype) = DType::from_npy_descr(descr) {
        return Some((dtype, dtype.size()?));
    }
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    let dtype = DType::ALL
        .iter()
        .copied()
        .find(|d| d.size().is_none() && code.starts_with(d.npy_descr()))?;
    let width: usize = code[dtype.npy_descr().len()..].parse().ok()?;
    // A `U` character is 4 bytes of UCS-4.
    let units = if dtype == DType::String { 4 } else { 1 };
    Some((dtype, width.checked_mul(units)?))
}

/// Reads elements that are not plain numbers (bools, strings) with npyz, from a header of
/// our own making: npyz sees only the type string and the element count we checked, never
/// the file's header text.
fn owned<T: ndgather::TensorElement + Deserialize>(
    data: &[u8],
    header: &Header,
) -> Result<Tensor, String> {
    let text = self::header(&header.descr, &[header.count() as u64]);
    let npyz_header = NpyHeader::from_reader(Cursor::new(text))
        .map_err(|e| format!("unsupported dtype '{}': {e}", header.descr))?;
    let values = NpyFile::with_header(npyz_header, Cursor::new(data))
        .into_vec::<T>()
        .map_err(|e| format!("cannot read data: {e}"))?;
    let dims = if header.fortran {
        IxDyn(&header.shape).f()
    } else {
        IxDyn(&header.shape).into_shape_with_order()
    };
    ArrayD::from_shape_vec(dims, values)
        .map(T::into_tensor)
        .map_err(|e| format!("data does not fit the shape: {e}"))
}

/// Why bytes that lack the `.npy` magic are not read, naming the format they look like.
pub fn not_npy(bytes: &[u8]) -> String {
    let what = match crate::source::Format::sniff(bytes) {
        Some(format) => format!("it looks like {}; {}", format.name(), format.how_to_name()),
        None if looks_like_text(bytes) => "it looks like a text file (CSV?); ndgather reads \
            binary arrays: convert it, e.g. with python -c \"import numpy as np; \
            np.save('x.npy', np.loadtxt('x.csv', delimiter=','))\""
            .to_string(),
        None => "write it with numpy.save".to_string(),
    };
    format!("not a .npy file (no \\x93NUMPY magic): {what}")
}

fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(512)];
    !head.is_empty()
        && std::str::from_utf8(head)
            .is_ok_and(|t| t.chars().all(|c| !c.is_control() || c.is_whitespace()))
}

/// The header of the `.npy` data at the start of `bytes`, its dtype and element size, and
/// how many bytes the header and data take together.
fn layout(bytes: &[u8]) -> Result<(Header, DType, usize, usize), String> {
    let header = npy_header::read(bytes)?;
    let descr = &header.descr;
    if descr
        .trim_start_matches(['<', '>', '|', '='])
        .starts_with('O')
    {
        return Err("object arrays are not supported".to_string());
    }
    let (dtype, size) = element(descr).ok_or_else(|| format!("unsupported dtype '{descr}'"))?;
    // A string of no characters holds nothing: any count of them would be backed by no bytes.
    if size == 0 {
        return Err(format!("unsupported dtype '{descr}': elements of no bytes"));
    }
    let too_large = || too_big(&header.shape, format_args!("'{descr}'"));
    let needed = data_len(&header.shape, size).ok_or_else(too_large)?;
    let total = needed
        .checked_add(header.data_start)
        .ok_or_else(too_large)?;
    Ok((header, dtype, size, total))
}

/// How many bytes the `.npy` data that starts with `prefix` takes, header and data, as its
/// header says; `prefix` needs to hold the whole header (at most
/// [`npy_header::MAX_PREFIX`] bytes). For reading a compressed member no further than that.
pub fn declared_len(prefix: &[u8]) -> Result<usize, String> {
    layout(prefix).map(|(.., total)| total)
}

/// Parses the `.npy` data in `buffer[start..end]`: plain numbers are used where they lie
/// (see [`InPlace`]), bools and strings are read into memory. `label` names the data in
/// messages.
pub fn parse(label: &str, buffer: Buffer, start: usize, end: usize) -> Result<Loaded, CliError> {
    let fail = |reason: String| CliError::npy(label, reason);
    let bytes = buffer
        .get(start..end)
        .ok_or_else(|| fail("truncated".to_string()))?;
    let (header, dtype, size, total) = layout(bytes).map_err(fail)?;
    let offset = header.data_start;
    if total > bytes.len() {
        let (needed, available) = (total - offset, bytes.len() - offset);
        return Err(fail(format!(
            "data is shorter than the header says: shape {:?} of '{}' needs {needed} bytes, \
             the file has {available}",
            header.shape, header.descr
        )));
    }
    let data = &bytes[offset..total];
    debug_assert_eq!(data.len(), header.count() * size);
    if plain_size(dtype).is_some() {
        let order = ByteOrder::of(!header.descr.starts_with('>'));
        let Header { shape, fortran, .. } = header;
        let data = InPlace::new(buffer, start + offset, dtype, shape, fortran, order)?;
        return Ok(Loaded::InPlace(data));
    }
    let tensor = match dtype {
        DType::Bool => owned::<bool>(data, &header),
        DType::String => owned::<String>(data, &header),
        DType::Bytes => owned::<Vec<u8>>(data, &header),
        _ => Err(format!("{dtype} is plain, and read in place")),
    };
    tensor.map(Loaded::Owned).map_err(fail)
}

/// NumPy's type string of a tensor's dtype, for writing: the dtype table's (ml_dtypes' for
/// the types NumPy lacks), little-endian (`|` for NumPy's one-byte types), `S` and `U` at
/// the width of the longest element.
pub fn type_str(t: &Tensor) -> String {
    let width = |n: Option<usize>| n.unwrap_or(0).max(1);
    let dtype = t.dtype();
    match t {
        Tensor::Bytes(s) => format!("|S{}", width(s.iter().map(<[u8]>::len).max())),
        Tensor::String(s) => format!("<U{}", width(s.iter().map(|s| s.chars().count()).max())),
        // ml_dtypes' types keep `<` at one byte too.
        _ if dtype.size() == Some(1) && !dtype.is_float() => format!("|{}", dtype.npy_descr()),
        _ => format!("<{}", dtype.npy_descr()),
    }
}

/// Writes a tensor as C-order `.npy` data of type `descr` (from [`type_str`]); `label` names
/// the destination in messages. Fixed-width elements are written as their bytes (in the
/// machine's order, which is little-endian where ndgather is built), strings by npyz.
pub fn write(mut out: impl Write, label: &str, t: &Tensor, descr: &str) -> Result<(), CliError> {
    let shape: Vec<u64> = t.shape().iter().map(|&d| d as u64).collect();
    let io = |e| CliError::io(label, e);
    macro_rules! write_strings {
        ($a:expr, $row:ty) => {{
            let ts: TypeStr = descr
                .parse()
                .map_err(|e| CliError::Internal(format!("type string: {e}")))?;
            let mut w = npyz::WriteOptions::<$row>::new()
                .dtype(npyz::DType::Plain(ts))
                .shape(&shape)
                .writer(std::io::BufWriter::new(out))
                .begin_nd()
                .map_err(io)?;
            for v in $a.iter() {
                w.push(v).map_err(io)?;
            }
            w.finish().map_err(io)?;
        }};
    }
    match t {
        Tensor::Bytes(a) => write_strings!(a, [u8]),
        Tensor::String(a) => write_strings!(a, str),
        _ => {
            let bytes = t.to_bytes()?;
            let mut w = std::io::BufWriter::new(out.by_ref());
            w.write_all(&header(descr, &shape)).map_err(io)?;
            w.write_all(&bytes).map_err(io)?;
            w.flush().map_err(io)?;
        }
    }
    Ok(())
}

/// A `.npy` version 1.0 header for C-order data of type `descr` and `shape`, padded to 64
/// bytes with its newline, as `numpy.save` writes it.
fn header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut text = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + text.len() + 1;
    text.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    text.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(text.len() as u16).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// How many bytes of data [`write()`] writes for `t` as `ts` (for progress).
pub fn byte_len(t: &Tensor, descr: &str) -> u64 {
    element(descr).map_or(0, |(_, size)| size as u64 * t.len() as u64)
}
