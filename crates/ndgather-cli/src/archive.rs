//! Arrays inside files that hold several: members of `.npz` archives (NumPy's zip of `.npy`
//! files) and tensors of safetensors files.

use crate::error::CliError;
use crate::inplace::{data_len, too_big, Buffer, ByteOrder, InPlace};
use crate::npy;
use crate::npy_header;
use crate::source::Loaded;
use ndgather::{DType, Tensor};
use safetensors::{Dtype, SafeTensors};
use std::io::Read;
use std::path::Path;

/// The names on offer, for a message: the first few, and how many more.
fn listing(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(", … ({} in all)", names.len()));
    }
    text
}

/// The one name to read: `member` if given and present, the only one if there is one.
fn choose<'a>(
    label: &str,
    names: &'a [String],
    member: Option<&str>,
    form: &str,
) -> Result<&'a str, CliError> {
    match member {
        Some(name) => names
            .iter()
            .find(|n| *n == name)
            .map(String::as_str)
            .ok_or_else(|| {
                CliError::npy(
                    label,
                    format!("has no array '{name}'; it has: {}", listing(names)),
                )
            }),
        None if names.len() == 1 => Ok(&names[0]),
        None if names.is_empty() => Err(CliError::npy(label, "holds no arrays".to_string())),
        None => Err(CliError::npy(
            label,
            format!(
                "holds {} arrays: name one as {form} (it has: {})",
                names.len(),
                listing(names)
            ),
        )),
    }
}

/// The arrays of a `.npz` archive (its `NAME.npy` members), sorted.
fn array_names<R: std::io::Read + std::io::Seek>(zip: &zip::ZipArchive<R>) -> Vec<String> {
    let mut names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok())
        .filter_map(|n| n.strip_suffix(".npy").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// The arrays of the `.npz` archive at `path`, sorted.
pub fn npz_names(path: &Path) -> Result<Vec<String>, CliError> {
    let label = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| CliError::io(&label, e))?;
    let zip = zip::ZipArchive::new(file)
        .map_err(|e| CliError::npy(&label, format!("bad .npz archive: {e}")))?;
    Ok(array_names(&zip))
}

/// The arrays of the `.npz` archive held in `data`, sorted; `label` names it in messages.
pub fn npz_names_in(label: &str, data: &[u8]) -> Result<Vec<String>, CliError> {
    let zip = zip::ZipArchive::new(std::io::Cursor::new(data))
        .map_err(|e| CliError::npy(label, format!("bad .npz archive: {e}")))?;
    Ok(array_names(&zip))
}

/// A member of a `.npz` archive (`NAME` is the member `NAME.npy`): a stored member is used
/// where it lies in the archive's bytes (`data`, mapped or in memory); a compressed one is
/// decompressed into memory. `label` names the archive in messages.
pub fn npz_member(label: &str, data: Buffer, member: Option<&str>) -> Result<Loaded, CliError> {
    let bad = |e: zip::result::ZipError| CliError::npy(label, format!("bad .npz archive: {e}"));
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&data[..])).map_err(bad)?;
    let names = array_names(&zip);
    let name = choose(label, &names, member, &format!("{label}:NAME"))?.to_string();
    let label = format!("{label}:{name}");
    let mut entry = zip.by_name(&format!("{name}.npy")).map_err(bad)?;
    if entry.compression() == zip::CompressionMethod::Stored {
        let start = entry.data_start().ok_or_else(|| {
            CliError::Internal(format!("{label}: the member's data offset is unknown"))
        })?;
        let (start, len) = (start as usize, entry.size() as usize);
        drop(entry);
        drop(zip);
        let end = start
            .checked_add(len)
            .filter(|&end| end <= data.len())
            .ok_or_else(|| {
                CliError::npy(
                    &label,
                    "the member runs past the end of the archive".to_string(),
                )
            })?;
        return npy::parse(&label, data, start, end);
    }
    let bytes = inflate(&label, &mut entry)?;
    let end = bytes.len();
    npy::parse(&label, Buffer::Heap(bytes), 0, end)
}

/// A compressed member's bytes, inflated no further than its `.npy` header implies: its
/// header first (NumPy caps its length), then the data that header describes. Neither the
/// zip's claimed size nor a stream that inflates on and on (a zip bomb) can make us hold
/// more than the array needs; such a member is an error.
fn inflate(label: &str, entry: &mut impl Read) -> Result<Vec<u8>, CliError> {
    let mut read = |bytes: &mut Vec<u8>, limit: usize| {
        let more = limit.saturating_sub(bytes.len()) as u64;
        entry
            .take(more)
            .read_to_end(bytes)
            .map_err(|e| CliError::io(label, e))
    };
    let mut bytes = Vec::new();
    read(&mut bytes, npy_header::MAX_PREFIX)?;
    // A header that does not parse is reported by `npy::parse`, as for any `.npy` data.
    let Ok(total) = npy::declared_len(&bytes) else {
        return Ok(bytes);
    };
    // One byte past the total tells a member that goes on. The header's claim is only a
    // hint for the reservation, capped, as the data may not be there to fill it.
    let limit = total.saturating_add(1);
    bytes.reserve(limit.min(1 << 26).saturating_sub(bytes.len()));
    read(&mut bytes, limit)?;
    if bytes.len() > total {
        return Err(CliError::npy(
            label,
            format!(
                "the member inflates to more than the {total} bytes its .npy header implies \
                 (a damaged archive, or a zip bomb)"
            ),
        ));
    }
    Ok(bytes)
}

/// The dtype of a safetensors tensor, if ndgather has it: the dtype table's by its
/// safetensors name.
fn dtype_of(dtype: Dtype) -> Option<DType> {
    DType::from_safetensors_name(&format!("{dtype:?}"))
}

/// A tensor of a safetensors file, used where it lies in the mapped file (safetensors data
/// is little-endian and row-major).
pub fn safetensors_tensor(
    label: &str,
    data: Buffer,
    member: Option<&str>,
) -> Result<Loaded, CliError> {
    let bad = |e: safetensors::SafeTensorError| {
        CliError::npy(label, format!("bad safetensors file: {e}"))
    };
    let file = SafeTensors::deserialize(&data).map_err(bad)?;
    let mut names: Vec<String> = file.names().into_iter().map(str::to_string).collect();
    names.sort();
    let name = choose(label, &names, member, &format!("{label}:NAME"))?;
    let label = format!("{label}:{name}");
    let tensor = file.tensor(name).map_err(bad)?;
    let dtype = dtype_of(tensor.dtype()).ok_or_else(|| {
        CliError::npy(
            &label,
            format!("dtype {:?} is not supported", tensor.dtype()),
        )
    })?;
    let shape = tensor.shape().to_vec();
    if data_len(&shape, dtype.size().unwrap_or(1)).is_none() {
        return Err(CliError::npy(&label, too_big(&shape, dtype)));
    }
    let start = tensor.data().as_ptr() as usize - data.as_ptr() as usize;
    if dtype == DType::Bool {
        let values: Option<Vec<bool>> = tensor
            .data()
            .iter()
            .map(|&b| match b {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
            .collect();
        let values =
            values.ok_or_else(|| CliError::npy(&label, "a bool is neither 0 nor 1".to_string()))?;
        return Ok(Loaded::Owned(Tensor::from_shape_vec(&shape, values)?));
    }
    drop(file);
    let order = ByteOrder::of(true);
    let data = InPlace::new(data, start, dtype, shape, false, order)?;
    Ok(Loaded::InPlace(data))
}
