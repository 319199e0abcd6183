//! `.npy` data: parsed (NumPy format 1.0–3.0, C and Fortran order, either byte order) from
//! bytes wherever they lie (a mapped file, an archive member, standard input), and written.

use crate::error::CliError;
use crate::inplace::{plain_size, Buffer, ByteOrder, InPlace};
use crate::source::Loaded;
use half::f16;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndgather::{shape::checked_numel, Complex32, Complex64, DType, Kind, Tensor};
use npyz::{Deserialize, Endianness, NpyFile, NpyHeader, Order, TypeChar, TypeStr, WriterBuilder};
use std::io::{Cursor, Write};

/// The dtype of a `.npy` type string, and the size of one element in bytes.
fn element(ts: &TypeStr) -> Option<(DType, usize)> {
    let size = ts.size_field() as usize;
    let fixed = |kind| DType::of(kind, size).map(|d| (d, size));
    match ts.type_char() {
        TypeChar::Bool => fixed(Kind::Bool),
        TypeChar::Int => fixed(Kind::Int),
        TypeChar::Uint => fixed(Kind::Uint),
        TypeChar::Float => fixed(Kind::Float),
        TypeChar::Complex => fixed(Kind::Complex),
        TypeChar::ByteStr => Some((DType::Bytes, size)),
        TypeChar::UnicodeStr => Some((DType::String, size.checked_mul(4)?)),
        // Times, raw bytes, objects: not ndgather's dtypes.
        _ => None,
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
    let mut cursor = Cursor::new(bytes);
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
    let (dtype, size) = element(&ts).ok_or_else(|| fail(format!("unsupported dtype '{ts}'")))?;
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
    let tensor = match dtype.kind() {
        Kind::Bool => owned::<bool>(data, header, &shape, fortran),
        Kind::String => owned::<String>(data, header, &shape, fortran),
        Kind::Bytes => owned::<Vec<u8>>(data, header, &shape, fortran),
        Kind::Int | Kind::Uint | Kind::Float | Kind::BrainFloat | Kind::Complex => {
            Err(format!("{dtype} is plain, and read in place"))
        }
    };
    tensor.map(Loaded::Owned).map_err(fail)
}

fn no_bfloat16() -> CliError {
    CliError::Usage(
        "bfloat16 has no .npy dtype (NumPy has none): leave out -o to print the values".to_string(),
    )
}

/// NumPy's type string of a tensor's dtype, for writing (little-endian; `S` and `U` at the
/// width of the longest element); an error for a dtype `.npy` files cannot hold.
fn descr(t: &Tensor) -> Result<String, CliError> {
    let width = |n: usize| n.max(1);
    let fixed = |code: char| {
        let size = t.dtype().size().unwrap_or(1);
        let order = if size == 1 { '|' } else { '<' };
        format!("{order}{code}{size}")
    };
    Ok(match t.dtype().kind() {
        Kind::Bool => fixed('b'),
        Kind::Int => fixed('i'),
        Kind::Uint => fixed('u'),
        Kind::Float => fixed('f'),
        Kind::Complex => fixed('c'),
        Kind::Bytes => {
            let longest = match t {
                Tensor::Bytes(s) => s.iter().map(<[u8]>::len).max(),
                _ => None,
            };
            format!("|S{}", width(longest.unwrap_or(0)))
        }
        Kind::String => {
            let longest = match t {
                Tensor::String(s) => s.iter().map(|s| s.chars().count()).max(),
                _ => None,
            };
            format!("<U{}", width(longest.unwrap_or(0)))
        }
        Kind::BrainFloat => return Err(no_bfloat16()),
    })
}

/// The `.npy` type of a tensor (its dtype; `S` and `U` at the width of the longest
/// element), parsed: what [`write()`] writes. An error for a dtype `.npy` cannot hold.
pub fn type_str(t: &Tensor) -> Result<TypeStr, CliError> {
    descr(t)?
        .parse()
        .map_err(|e| CliError::Internal(format!("type string: {e}")))
}

/// Writes a tensor as C-order `.npy` data of type `ts` (from [`type_str`]: its dtype, `S`
/// and `U` at the width of the longest element); `label` names the destination in messages.
pub fn write(out: impl Write, label: &str, t: &Tensor, ts: TypeStr) -> Result<(), CliError> {
    let shape: Vec<u64> = t.shape().iter().map(|&d| d as u64).collect();
    let io = |e| CliError::io(label, e);
    macro_rules! write_rows {
        ($a:expr, $row:ty, $v:ident => $as_row:expr) => {{
            let mut w = npyz::WriteOptions::<$row>::new()
                .dtype(npyz::DType::Plain(ts))
                .shape(&shape)
                .writer(std::io::BufWriter::new(out))
                .begin_nd()
                .map_err(io)?;
            for $v in $a.iter() {
                w.push($as_row).map_err(io)?;
            }
            w.finish().map_err(io)?;
        }};
    }
    match t {
        Tensor::Bool(a) => write_rows!(a, bool, v => v),
        Tensor::I8(a) => write_rows!(a, i8, v => v),
        Tensor::I16(a) => write_rows!(a, i16, v => v),
        Tensor::I32(a) => write_rows!(a, i32, v => v),
        Tensor::I64(a) => write_rows!(a, i64, v => v),
        Tensor::U8(a) => write_rows!(a, u8, v => v),
        Tensor::U16(a) => write_rows!(a, u16, v => v),
        Tensor::U32(a) => write_rows!(a, u32, v => v),
        Tensor::U64(a) => write_rows!(a, u64, v => v),
        Tensor::F16(a) => write_rows!(a, f16, v => v),
        Tensor::F32(a) => write_rows!(a, f32, v => v),
        Tensor::F64(a) => write_rows!(a, f64, v => v),
        Tensor::C64(a) => write_rows!(a, Complex32, v => v),
        Tensor::C128(a) => write_rows!(a, Complex64, v => v),
        Tensor::Bytes(a) => write_rows!(a, [u8], v => v),
        Tensor::String(a) => write_rows!(a, str, v => v),
        Tensor::BF16(_) => return Err(no_bfloat16()),
    }
    Ok(())
}

/// How many bytes of data [`write()`] writes for `t` as `ts` (for progress).
pub fn byte_len(t: &Tensor, ts: &TypeStr) -> u64 {
    let units = if ts.type_char() == TypeChar::UnicodeStr {
        4
    } else {
        1
    };
    ts.size_field() * units * t.len() as u64
}
