//! Plain numbers used where they lie: in a memory-mapped file (a `.npy` file, a stored member
//! of a `.npz` archive, a safetensors tensor) or in bytes read from a pipe.
//!
//! Data that is aligned for its type and in the machine's byte order is viewed as that type.
//! Anything else (a member at an odd offset of a zip archive, a big-endian file) is viewed as
//! its bytes, each element a record of `size` bytes, and gathered as records: only the
//! gathered elements are copied out, and byte-swapped if they need it.

use crate::error::CliError;
use memmap2::Mmap;
use ndarray::ArrayViewD;
use ndgather::memory::RawView;
use ndgather::registry::Input;
use ndgather::{with_dtype, DType, FillValue, Kind, Op, Tensor, TensorView};

/// Bytes that stay put while views of them are used.
pub enum Buffer {
    /// A memory-mapped file.
    Map(Mmap),
    /// Bytes read into memory (standard input, a compressed archive member).
    Heap(Vec<u8>),
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Buffer::Map(m) => m,
            Buffer::Heap(v) => v,
        }
    }
}

/// How the bytes of each element are ordered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// As this machine orders them.
    Native,
    /// Reversed (a big-endian file on a little-endian machine, or the other way).
    Swapped,
}

impl ByteOrder {
    /// The order of data stored little-endian (safetensors) or big-endian.
    pub fn of(little_endian: bool) -> ByteOrder {
        if little_endian == cfg!(target_endian = "little") {
            ByteOrder::Native
        } else {
            ByteOrder::Swapped
        }
    }
}

/// An array of plain numbers in a buffer.
pub struct InPlace {
    buffer: Buffer,
    start: usize,
    dtype: DType,
    shape: Vec<usize>,
    fortran: bool,
    order: ByteOrder,
}

/// The size of one element of a plain dtype in bytes, and of the parts that are byte-swapped
/// one by one (a complex number's two halves); `None` for the others. Plain dtypes are the
/// dtype table's `plain` role: Bool, String and Bytes are not plain (not every byte pattern
/// is a value).
pub fn plain_size(dtype: DType) -> Option<(usize, usize)> {
    let size = with_dtype!(dtype, plain T => std::mem::size_of::<T>(), else return None);
    let complex = dtype.kind() == Kind::Complex;
    Some((size, if complex { size / 2 } else { size }))
}

/// How many bytes the data of an array of `shape` takes, its elements `size` bytes each;
/// `None` for an array NumPy refuses to make ("array is too big"): the product of its
/// dimensions, zeros left out, times `size` passes `isize::MAX`. An empty array is held to
/// that too, so that no stride of it, in any order of its axes, overflows.
pub fn data_len(shape: &[usize], size: usize) -> Option<usize> {
    let extent = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(size, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)?;
    Some(if shape.contains(&0) { 0 } else { extent })
}

/// Why an array of `shape` of `what` (a dtype) is refused, as NumPy words it.
pub fn too_big(shape: &[usize], what: impl std::fmt::Display) -> String {
    format!(
        "shape {shape:?} of {what} is too large: array is too big (the product of its \
         dimensions, zeros left out, times the item size passes the largest size NumPy allows)"
    )
}

/// The bytes of `value`'s element of `dtype`, in native order.
fn fill_bytes(dtype: DType, value: FillValue) -> Result<Option<Vec<u8>>, CliError> {
    Ok(dtype.fill_bytes(value)?.filter(|_| dtype.is_plain()))
}

/// Reverses the bytes of each `part`-byte part.
fn swap_parts(bytes: &mut [u8], part: usize) {
    if part > 1 {
        bytes.chunks_exact_mut(part).for_each(<[u8]>::reverse);
    }
}

impl InPlace {
    /// The array of `dtype` and `shape` whose data starts at `start` in `buffer`; an error if
    /// the buffer is too short for it.
    pub fn new(
        buffer: Buffer,
        start: usize,
        dtype: DType,
        shape: Vec<usize>,
        fortran: bool,
        order: ByteOrder,
    ) -> Result<InPlace, CliError> {
        let (size, _) = plain_size(dtype)
            .ok_or_else(|| CliError::Internal(format!("{dtype} cannot be used in place")))?;
        let needed = data_len(&shape, size).and_then(|n| n.checked_add(start));
        if needed.is_none_or(|end| end > buffer.len()) {
            return Err(CliError::Internal(format!(
                "{dtype} data of shape {shape:?} does not fit its buffer"
            )));
        }
        Ok(InPlace {
            buffer,
            start,
            dtype,
            shape,
            fortran,
            order,
        })
    }

    fn size(&self) -> (usize, usize) {
        plain_size(self.dtype).unwrap_or((1, 1))
    }

    fn bytes(&self) -> &[u8] {
        let len = self.shape.iter().product::<usize>() * self.size().0;
        &self.buffer[self.start..self.start + len]
    }

    /// The elements where they lie, in C or Fortran order: the core's raw view.
    fn raw(&self) -> Result<RawView<'_>, CliError> {
        let size = self.size().0;
        let too_big = || CliError::Internal(too_big(&self.shape, self.dtype));
        let mut strides = vec![0isize; self.shape.len()];
        let mut step = size;
        let order: Vec<usize> = if self.fortran {
            (0..self.shape.len()).collect()
        } else {
            (0..self.shape.len()).rev().collect()
        };
        for axis in order {
            strides[axis] = isize::try_from(step).map_err(|_| too_big())?;
            // `new` checked the extent; a product that overflows anyway is an error.
            step = step
                .checked_mul(self.shape[axis].max(1))
                .ok_or_else(too_big)?;
        }
        RawView::within(self.bytes(), 0, &self.shape, &strides, size).ok_or_else(too_big)
    }

    /// A view of the elements as their own type, where they can be so viewed (native byte
    /// order, aligned).
    pub fn typed(&self) -> Option<TensorView<'_>> {
        if self.order != ByteOrder::Native {
            return None;
        }
        let raw = self.raw().ok()?;
        with_dtype!(self.dtype, plain T => raw.elements::<T>().map(TensorView::from), else None)
    }

    /// The elements as records of their bytes: shape `shape + [size]`.
    fn records(&self) -> Result<ArrayViewD<'_, u8>, CliError> {
        self.raw()?
            .units::<u8>()
            .ok_or_else(|| CliError::Internal("records view of bytes".to_string()))
    }

    /// The whole array, copied into memory (in native byte order).
    pub fn to_tensor(&self) -> Result<Tensor, CliError> {
        let records = self.records()?;
        let mut bytes = records
            .as_standard_layout()
            .into_owned()
            .into_raw_vec_and_offset()
            .0;
        swap_parts(&mut bytes, self.part());
        self.retype(&self.shape, &bytes)
    }

    fn part(&self) -> usize {
        match self.order {
            ByteOrder::Native => 1,
            ByteOrder::Swapped => self.size().1,
        }
    }

    fn retype(&self, shape: &[usize], bytes: &[u8]) -> Result<Tensor, CliError> {
        Ok(Tensor::from_bytes(self.dtype, shape, bytes)?)
    }

    /// Runs `op` with this array as params: on the typed view where there is one, otherwise
    /// on records, whose output is then retyped (and byte-swapped) element by element.
    pub fn gather<'a>(&'a self, op: &Op, indices: &TensorView<'a>) -> Result<Tensor, CliError> {
        if let Some(view) = self.typed() {
            return crate::source::run_new(op, &[Input::from(view), Input::from(indices.clone())]);
        }
        // Records fill with one element's bytes, in the buffer's byte order.
        let bytes = if op.bad_indices() == ndgather::BadIndices::Fill {
            fill_bytes(self.dtype, op.fill_value())?
        } else {
            None
        };
        let op = match bytes {
            Some(mut bytes) => {
                swap_parts(&mut bytes, self.part());
                op.with_fill_value(FillValue::bytes(&bytes).unwrap_or_default())
            }
            None => *op,
        };
        // Records come back as units of the core's choice, with the record axis appended.
        let records = [Input::Records(self.raw()?), Input::from(indices.clone())];
        let out = crate::source::run_new(&op, &records)?;
        let shape = out.shape()[..out.shape().len().saturating_sub(1)].to_vec();
        let mut bytes = out.to_bytes()?;
        swap_parts(&mut bytes, self.part());
        self.retype(&shape, &bytes)
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The size of one element in bytes.
    pub fn element_size(&self) -> usize {
        self.size().0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_that_overflow_are_an_error_not_a_panic() {
        // `new` refuses this shape; built by hand, its records still do not overflow.
        let data = InPlace {
            buffer: Buffer::Heap(Vec::new()),
            start: 0,
            dtype: DType::F64,
            shape: vec![0, 1 << 62],
            fortran: false,
            order: ByteOrder::Swapped,
        };
        let err = data.to_tensor().unwrap_err().to_string();
        assert!(err.contains("array is too big"), "{err}");
        let new = InPlace::new(
            Buffer::Heap(Vec::new()),
            0,
            DType::F64,
            vec![0, 1 << 62],
            false,
            ByteOrder::Native,
        );
        assert!(new.is_err());
    }

    #[test]
    fn data_len_is_numpys_rule() {
        assert_eq!(data_len(&[2, 3], 8), Some(48));
        assert_eq!(data_len(&[0, 1 << 59], 8), Some(0));
        assert_eq!(data_len(&[0, 1 << 60], 8), None);
        assert_eq!(data_len(&[usize::MAX, 0, 2], 1), None);
    }
}
