//! `.npy` files: read (NumPy format 1.0–3.0, C and Fortran order, either byte order), memory
//! mapped where the data can be used in place, and written back.

use crate::error::CliError;
use half::f16;
use memmap2::Mmap;
use ndarray::{ArrayD, ArrayViewD, IxDyn, ShapeBuilder};
use ndgather::{shape::checked_numel, Complex32, Complex64, DType, Tensor, TensorView};
use npyz::{Deserialize, Endianness, NpyFile, NpyHeader, Order, TypeChar, TypeStr, WriterBuilder};
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, Write};
use std::path::Path;

/// An array read from a `.npy` file: in memory, or mapped from the file.
pub enum Loaded {
    /// Read into memory.
    Owned(Tensor),
    /// Mapped: the data stays in the file, pages are read as they are touched.
    Mapped(Mapped),
}

/// The data of a C-order, native-endian `.npy` file of plain numbers, mapped in place.
pub struct Mapped {
    map: Mmap,
    offset: usize,
    dtype: DType,
    shape: Vec<usize>,
}

impl Loaded {
    /// A view of the array, whichever way it was loaded.
    pub fn view(&self) -> Result<TensorView<'_>, CliError> {
        match self {
            Loaded::Owned(t) => Ok(t.view()),
            Loaded::Mapped(m) => m.view(),
        }
    }
}

/// What the `.npy` header's element type is, in ndgather's terms.
struct Element {
    dtype: DType,
    size: usize,
}

fn element(path: &Path, ts: &TypeStr) -> Result<Element, CliError> {
    let size = ts.size_field() as usize;
    let dtype = match (ts.type_char(), size) {
        (TypeChar::Bool, 1) => DType::Bool,
        (TypeChar::Int, 1) => DType::I8,
        (TypeChar::Int, 2) => DType::I16,
        (TypeChar::Int, 4) => DType::I32,
        (TypeChar::Int, 8) => DType::I64,
        (TypeChar::Uint, 1) => DType::U8,
        (TypeChar::Uint, 2) => DType::U16,
        (TypeChar::Uint, 4) => DType::U32,
        (TypeChar::Uint, 8) => DType::U64,
        (TypeChar::Float, 2) => DType::F16,
        (TypeChar::Float, 4) => DType::F32,
        (TypeChar::Float, 8) => DType::F64,
        (TypeChar::Complex, 8) => DType::C64,
        (TypeChar::Complex, 16) => DType::C128,
        (TypeChar::ByteStr, _) => DType::Bytes,
        (TypeChar::UnicodeStr, _) => DType::String,
        _ => return Err(CliError::npy(path, format!("unsupported dtype '{ts}'"))),
    };
    let bytes = if dtype == DType::String {
        size.checked_mul(4)
    } else {
        Some(size)
    };
    let size = bytes.ok_or_else(|| CliError::npy(path, format!("unsupported dtype '{ts}'")))?;
    Ok(Element { dtype, size })
}

fn read_vec<T: Deserialize>(
    path: &Path,
    header: NpyHeader,
    reader: BufReader<File>,
) -> Result<Vec<T>, CliError> {
    NpyFile::with_header(header, reader)
        .into_vec::<T>()
        .map_err(|e| CliError::npy(path, format!("cannot read data: {e}")))
}

fn owned<T: ndgather::TensorElement + Deserialize>(
    path: &Path,
    header: NpyHeader,
    reader: BufReader<File>,
    shape: &[usize],
    fortran: bool,
) -> Result<Tensor, CliError> {
    let data = read_vec::<T>(path, header, reader)?;
    let dims = if fortran {
        IxDyn(shape).f()
    } else {
        IxDyn(shape).into_shape_with_order()
    };
    ArrayD::from_shape_vec(dims, data)
        .map(T::into_tensor)
        .map_err(|e| CliError::npy(path, format!("data does not fit the shape: {e}")))
}

/// Checks what npyz takes on trust in a header: that its length fits in the file, and that
/// the shape's element count does not overflow (npyz multiplies the shape unchecked).
fn precheck(path: &Path, file: &mut File, file_len: u64) -> Result<(), CliError> {
    use std::io::Read;
    let bad = |reason: &str| CliError::npy(path, format!("bad header: {reason}"));
    let mut prefix = [0u8; 12];
    let got = file.read(&mut prefix).map_err(|e| CliError::io(path, e))?;
    if got < 10 || &prefix[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file (no \\x93NUMPY magic)"));
    }
    let (len, start) = match prefix[6] {
        1 => (u16::from_le_bytes([prefix[8], prefix[9]]) as u64, 10u64),
        2 | 3 if got == 12 => (
            u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]) as u64,
            12,
        ),
        v => {
            return Err(bad(&format!(
                "unsupported format version {v}.{}",
                prefix[7]
            )))
        }
    };
    if start + len > file_len {
        return Err(bad(&format!(
            "header of {len} bytes does not fit in a file of {file_len} bytes"
        )));
    }
    let mut text = vec![0u8; len as usize];
    file.seek(std::io::SeekFrom::Start(start))
        .map_err(|e| CliError::io(path, e))?;
    file.read_exact(&mut text)
        .map_err(|e| CliError::io(path, e))?;
    let text = String::from_utf8_lossy(&text);
    if let Some(rest) = text.split("'shape':").nth(1) {
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
                .map_err(|_| bad(&format!("shape entry '{dim}' is not a size")))?;
            count = count
                .checked_mul(d.max(1))
                .ok_or_else(|| CliError::npy(path, format!("shape ({tuple}) is too large")))?;
        }
    }
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| CliError::io(path, e))?;
    Ok(())
}

/// Reads a `.npy` file; with `map`, plain numeric data in C order and native byte order is
/// memory-mapped rather than read.
pub fn read(path: &Path, map: bool) -> Result<Loaded, CliError> {
    let mut file = File::open(path).map_err(|e| CliError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| CliError::io(path, e))?.len();
    precheck(path, &mut file, file_len)?;
    let mut reader = BufReader::new(file);
    let header = NpyHeader::from_reader(&mut reader)
        .map_err(|e| CliError::npy(path, format!("bad header: {e}")))?;
    let offset = reader
        .stream_position()
        .map_err(|e| CliError::io(path, e))?;
    let npyz::DType::Plain(ts) = header.dtype() else {
        return Err(CliError::npy(
            path,
            "structured (record) arrays are not supported".to_string(),
        ));
    };
    if header.uses_pickled_array() {
        return Err(CliError::npy(
            path,
            "object arrays are not supported".to_string(),
        ));
    }
    let element = element(path, &ts)?;
    let shape: Vec<usize> = header
        .shape()
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::npy(path, "shape too large".to_string()))?;
    let too_large = || CliError::npy(path, format!("shape {shape:?} is too large"));
    let count = checked_numel(&shape).ok_or_else(too_large)?;
    let needed = count.checked_mul(element.size).ok_or_else(too_large)?;
    let available = file_len.saturating_sub(offset);
    if needed as u64 > available {
        return Err(CliError::npy(
            path,
            format!("data is shorter than the header says: shape {shape:?} of '{ts}' needs {needed} bytes, the file has {available}"),
        ));
    }
    let fortran = header.order() == Order::Fortran;
    let native = matches!(ts.endianness(), Endianness::Irrelevant)
        || ts.endianness() == Endianness::of_machine();
    let mappable = !matches!(element.dtype, DType::Bool | DType::String | DType::Bytes);
    // A map starts on a page, so its data is aligned when the header's length is a multiple
    // of the element's alignment (a complex number aligns as one of its parts); otherwise the
    // data is read rather than mapped.
    let align = if matches!(element.dtype, DType::C64 | DType::C128) {
        element.size / 2
    } else {
        element.size
    };
    let aligned = offset % align.max(1) as u64 == 0;
    if map && !fortran && native && mappable && aligned && count > 0 {
        let file = reader.into_inner();
        // SAFETY: the map is read-only, and ndgather only reads it as plain numbers, for which
        // every bit pattern is valid. Another process truncating or rewriting the file while
        // it is mapped is outside what a memory map can guard against (as with any reader
        // of memory-mapped files).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| CliError::io(path, e))?;
        let mapped = Mapped {
            map,
            offset: offset as usize,
            dtype: element.dtype,
            shape,
        };
        mapped.view()?;
        return Ok(Loaded::Mapped(mapped));
    }
    read_owned(path, header, reader, &shape, fortran, element.dtype).map(Loaded::Owned)
}

fn read_owned(
    path: &Path,
    header: NpyHeader,
    reader: BufReader<File>,
    shape: &[usize],
    fortran: bool,
    dtype: DType,
) -> Result<Tensor, CliError> {
    match dtype {
        DType::Bool => owned::<bool>(path, header, reader, shape, fortran),
        DType::I8 => owned::<i8>(path, header, reader, shape, fortran),
        DType::I16 => owned::<i16>(path, header, reader, shape, fortran),
        DType::I32 => owned::<i32>(path, header, reader, shape, fortran),
        DType::I64 => owned::<i64>(path, header, reader, shape, fortran),
        DType::U8 => owned::<u8>(path, header, reader, shape, fortran),
        DType::U16 => owned::<u16>(path, header, reader, shape, fortran),
        DType::U32 => owned::<u32>(path, header, reader, shape, fortran),
        DType::U64 => owned::<u64>(path, header, reader, shape, fortran),
        DType::F16 => owned::<f16>(path, header, reader, shape, fortran),
        DType::F32 => owned::<f32>(path, header, reader, shape, fortran),
        DType::F64 => owned::<f64>(path, header, reader, shape, fortran),
        DType::C64 => owned::<Complex32>(path, header, reader, shape, fortran),
        DType::C128 => owned::<Complex64>(path, header, reader, shape, fortran),
        DType::Bytes => owned::<Vec<u8>>(path, header, reader, shape, fortran),
        DType::String => owned::<String>(path, header, reader, shape, fortran),
        DType::BF16 => Err(CliError::npy(
            path,
            "bfloat16 has no .npy dtype".to_string(),
        )),
    }
}

impl Mapped {
    fn typed<T: bytemuck::Pod>(&self) -> Option<ArrayViewD<'_, T>>
    where
        for<'a> TensorView<'a>: From<ArrayViewD<'a, T>>,
    {
        let len = checked_numel(&self.shape)?.checked_mul(std::mem::size_of::<T>())?;
        let bytes = self.map.get(self.offset..self.offset.checked_add(len)?)?;
        let data: &[T] = bytemuck::try_cast_slice(bytes).ok()?;
        ArrayViewD::from_shape(IxDyn(&self.shape), data).ok()
    }

    fn view(&self) -> Result<TensorView<'_>, CliError> {
        let view = match self.dtype {
            DType::I8 => self.typed::<i8>().map(TensorView::from),
            DType::I16 => self.typed::<i16>().map(TensorView::from),
            DType::I32 => self.typed::<i32>().map(TensorView::from),
            DType::I64 => self.typed::<i64>().map(TensorView::from),
            DType::U8 => self.typed::<u8>().map(TensorView::from),
            DType::U16 => self.typed::<u16>().map(TensorView::from),
            DType::U32 => self.typed::<u32>().map(TensorView::from),
            DType::U64 => self.typed::<u64>().map(TensorView::from),
            DType::F16 => self.typed::<f16>().map(TensorView::from),
            DType::F32 => self.typed::<f32>().map(TensorView::from),
            DType::F64 => self.typed::<f64>().map(TensorView::from),
            DType::C64 => self.typed::<Complex32>().map(TensorView::from),
            DType::C128 => self.typed::<Complex64>().map(TensorView::from),
            _ => None,
        };
        view.ok_or_else(|| CliError::Internal("mapped data cannot be viewed in place".to_string()))
    }
}

/// NumPy's type string of a tensor's dtype, for writing.
fn descr(t: &Tensor) -> Result<String, CliError> {
    let width = |n: usize| n.max(1);
    Ok(match t {
        Tensor::Bool(_) => "|b1".into(),
        Tensor::I8(_) => "|i1".into(),
        Tensor::I16(_) => "<i2".into(),
        Tensor::I32(_) => "<i4".into(),
        Tensor::I64(_) => "<i8".into(),
        Tensor::U8(_) => "|u1".into(),
        Tensor::U16(_) => "<u2".into(),
        Tensor::U32(_) => "<u4".into(),
        Tensor::U64(_) => "<u8".into(),
        Tensor::F16(_) => "<f2".into(),
        Tensor::F32(_) => "<f4".into(),
        Tensor::F64(_) => "<f8".into(),
        Tensor::C64(_) => "<c8".into(),
        Tensor::C128(_) => "<c16".into(),
        Tensor::Bytes(a) => format!("|S{}", width(a.iter().map(Vec::len).max().unwrap_or(0))),
        Tensor::String(a) => format!(
            "<U{}",
            width(a.iter().map(|s| s.chars().count()).max().unwrap_or(0))
        ),
        Tensor::BF16(_) => return Err(CliError::Usage("bfloat16 has no .npy dtype".to_string())),
    })
}

/// Writes a tensor as a C-order `.npy` file, keeping its dtype (`S` and `U` at the width of
/// the longest element).
pub fn write(path: &Path, t: &Tensor) -> Result<(), CliError> {
    let ts: TypeStr = descr(t)?
        .parse()
        .map_err(|e| CliError::Internal(format!("type string: {e}")))?;
    let file = File::create(path).map_err(|e| CliError::io(path, e))?;
    let shape: Vec<u64> = t.shape().iter().map(|&d| d as u64).collect();
    let io = |e| CliError::io(path, e);
    macro_rules! write_rows {
        ($a:expr, $row:ty, $v:ident => $as_row:expr) => {{
            let mut w = npyz::WriteOptions::<$row>::new()
                .dtype(npyz::DType::Plain(ts))
                .shape(&shape)
                .writer(BufWriter::new(file))
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
        Tensor::Bytes(a) => write_rows!(a, [u8], v => v.as_slice()),
        Tensor::String(a) => write_rows!(a, str, v => v.as_str()),
        Tensor::BF16(_) => return Err(CliError::Usage("bfloat16 has no .npy dtype".to_string())),
    }
    let _ = std::io::stdout().flush();
    Ok(())
}
