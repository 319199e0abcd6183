//! `.npy` data: parsed (NumPy format 1.0–3.0, C and Fortran order, either byte order) from
//! bytes wherever they lie (a mapped file, an archive member, standard input), and written.

use crate::error::CliError;
use crate::inplace::{plain_size, Buffer, ByteOrder, InPlace};
use crate::source::Loaded;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndgather::{shape::checked_numel, DType, Tensor};
use npyz::{Deserialize, Endianness, NpyFile, NpyHeader, Order, TypeStr, WriterBuilder};
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

/// The `'descr'` of a header's text, if it is one type string (not a record's list).
fn descr_of(text: &str) -> Option<&str> {
    let rest = text.split("'descr':").nth(1)?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    rest[1..].split(quote).next()
}

/// The header as npyz reads it: a type string npyz does not know (ml_dtypes' `<f1` for
/// float8_e5m2; NumPy cannot read it either) is replaced by raw bytes of its size, which
/// are as long, so the data's offset stays; the dtype comes from [`element`].
fn npyz_header<'a>(bytes: &'a [u8], descr: &str) -> std::borrow::Cow<'a, [u8]> {
    let size = DType::from_npy_descr(descr).and_then(DType::size);
    match size {
        Some(size) if descr.parse::<TypeStr>().is_err() => {
            let raw = format!("|V{size}");
            let (from, to) = (format!("'{descr}'"), format!("'{raw}'"));
            if raw.len() == descr.len() {
                let at = bytes.windows(from.len()).position(|w| w == from.as_bytes());
                if let Some(at) = at {
                    let mut patched = bytes.to_vec();
                    patched[at..at + to.len()].copy_from_slice(to.as_bytes());
                    return patched.into();
                }
            }
            bytes.into()
        }
        _ => bytes.into(),
    }
}

fn owned<T: ndgather::TensorElement + Deserialize>(
    data: &[u8],
    header: NpyHeader,
    shape: &[usize],
    fortran: bool,
) -> Result<Tensor, String> {
    let values = NpyFile::with_header(header, Cursor::new(data))
        .into_vec::<T>()
        .map_err(|e| format!("cannot read data: {e}"))?;
    let dims = if fortran {
        IxDyn(shape).f()
    } else {
        IxDyn(shape).into_shape_with_order()
    };
    ArrayD::from_shape_vec(dims, values)
        .map(T::into_tensor)
        .map_err(|e| format!("data does not fit the shape: {e}"))
}

/// The header's length and where it starts, after checking the magic bytes and version.
fn header_bounds(bytes: &[u8]) -> Result<(usize, usize), String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(not_npy(bytes));
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => {
            return Err(format!(
                "bad header: unsupported format version {v}.{}",
                bytes[7]
            ))
        }
    };
    if start + len > bytes.len() {
        return Err(format!(
            "bad header: header of {len} bytes does not fit in {} bytes",
            bytes.len()
        ));
    }
    Ok((start, len))
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

/// Checks what npyz takes on trust in a header: that the shape's element count does not
/// overflow (npyz multiplies the shape unchecked).
fn check_shape_text(text: &str) -> Result<(), String> {
    let Some(rest) = text.split("'shape':").nth(1) else {
        return Ok(());
    };
    let tuple = rest.split(')').next().unwrap_or("");
    let mut count: u64 = 1;
    for dim in tuple
        .trim_start()
        .trim_start_matches('(')
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        let d: u64 = dim
            .trim_end_matches('L')
            .parse()
            .map_err(|_| format!("bad header: shape entry '{dim}' is not a size"))?;
        count = count
            .checked_mul(d.max(1))
            .ok_or_else(|| format!("shape ({tuple}) is too large"))?;
    }
    Ok(())
}

/// Parses the `.npy` data in `buffer[start..end]`: plain numbers are used where they lie
/// (see [`InPlace`]), bools and strings are read into memory. `label` names the data in
/// messages.
pub fn parse(label: &str, buffer: Buffer, start: usize, end: usize) -> Result<Loaded, CliError> {
    let fail = |reason: String| CliError::npy(label, reason);
    let bytes = buffer
        .get(start..end)
        .ok_or_else(|| fail("truncated".to_string()))?;
    let (header_start, header_len) = header_bounds(bytes).map_err(fail)?;
    let text = String::from_utf8_lossy(&bytes[header_start..header_start + header_len]);
    check_shape_text(&text).map_err(fail)?;
    let descr = descr_of(&text).unwrap_or_default().to_string();
    let readable = npyz_header(bytes, &descr);
    let mut cursor = Cursor::new(readable.as_ref());
    let header =
        NpyHeader::from_reader(&mut cursor).map_err(|e| fail(format!("bad header: {e}")))?;
    let offset = cursor.position() as usize;
    let npyz::DType::Plain(ts) = header.dtype() else {
        return Err(fail(
            "structured (record) arrays are not supported".to_string(),
        ));
    };
    if header.uses_pickled_array() {
        return Err(fail("object arrays are not supported".to_string()));
    }
    let (dtype, size) =
        element(&descr).ok_or_else(|| fail(format!("unsupported dtype '{descr}'")))?;
    let shape: Vec<usize> = header
        .shape()
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| fail("shape too large".to_string()))?;
    let too_large = || fail(format!("shape {shape:?} is too large"));
    let count = checked_numel(&shape).ok_or_else(too_large)?;
    let needed = count.checked_mul(size).ok_or_else(too_large)?;
    let available = bytes.len() - offset;
    if needed > available {
        return Err(fail(format!("data is shorter than the header says: shape {shape:?} of '{ts}' needs {needed} bytes, the file has {available}")));
    }
    let fortran = header.order() == Order::Fortran;
    if plain_size(dtype).is_some() {
        let little = !matches!(ts.endianness(), Endianness::Big);
        let order = ByteOrder::of(little);
        let data = InPlace::new(buffer, start + offset, dtype, shape, fortran, order)?;
        return Ok(Loaded::InPlace(data));
    }
    let data = &bytes[offset..];
    let tensor = match dtype {
        DType::Bool => owned::<bool>(data, header, &shape, fortran),
        DType::String => owned::<String>(data, header, &shape, fortran),
        DType::Bytes => owned::<Vec<u8>>(data, header, &shape, fortran),
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
