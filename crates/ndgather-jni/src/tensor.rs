//! Tensors as Java holds them: the core's own memory, or a direct buffer's, read (and
//! written) where it lies.

use super::direct::{DirectBuffer, Reading};
use super::Result;
use ndgather::{DType, Tensor, TensorView, TensorViewMut};

/// A tensor behind a Java `Tensor`'s handle.
pub(crate) enum JavaTensor {
    /// Memory of the core: results, and tensors made from Java arrays and heap buffers.
    Owned(Tensor),
    /// A direct buffer's memory, of a `plain` dtype and aligned to it.
    Direct {
        buffer: DirectBuffer,
        dtype: DType,
        shape: Vec<usize>,
    },
}

/// A tensor's elements lent to a run: borrowed, or a direct buffer's under its read lock.
pub(crate) enum Lent<'t> {
    Owned(&'t Tensor),
    Direct(Reading<'t>, DType, &'t [usize]),
}

impl Lent<'_> {
    pub(crate) fn view(&self) -> Result<TensorView<'_>> {
        Ok(match self {
            Lent::Owned(t) => t.view(),
            Lent::Direct(reading, dtype, shape) => {
                TensorView::from_bytes(*dtype, shape, reading.bytes())?
            }
        })
    }
}

impl JavaTensor {
    /// A tensor over `buffer`'s memory where it lies, when its dtype is `plain` and the
    /// memory is aligned to it; otherwise a copy (`bool`, whose bytes are checked; a buffer
    /// sliced at an odd offset).
    pub(crate) fn wrap(buffer: DirectBuffer, dtype: DType, shape: Vec<usize>) -> Result<Self> {
        let copy = {
            let reading = buffer.read()?;
            match TensorView::from_bytes(dtype, &shape, reading.bytes()) {
                Ok(_) => None,
                Err(_) => Some(Tensor::from_bytes(dtype, &shape, reading.bytes())?),
            }
        };
        Ok(match copy {
            Some(tensor) => JavaTensor::Owned(tensor),
            None => JavaTensor::Direct {
                buffer,
                dtype,
                shape,
            },
        })
    }

    pub(crate) fn dtype(&self) -> DType {
        match self {
            JavaTensor::Owned(t) => t.dtype(),
            JavaTensor::Direct { dtype, .. } => *dtype,
        }
    }

    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            JavaTensor::Owned(t) => t.shape(),
            JavaTensor::Direct { shape, .. } => shape,
        }
    }

    /// The direct buffer underneath, if the tensor reads one in place.
    pub(crate) fn direct(&self) -> Option<&DirectBuffer> {
        match self {
            JavaTensor::Owned(_) => None,
            JavaTensor::Direct { buffer, .. } => Some(buffer),
        }
    }

    /// Lends the elements for a run.
    pub(crate) fn lend(&self) -> Result<Lent<'_>> {
        Ok(match self {
            JavaTensor::Owned(t) => Lent::Owned(t),
            JavaTensor::Direct {
                buffer,
                dtype,
                shape,
            } => Lent::Direct(buffer.read()?, *dtype, shape),
        })
    }

    /// A copy of the elements, as the core's tensor.
    pub(crate) fn to_tensor(&self) -> Result<Tensor> {
        Ok(match self {
            JavaTensor::Owned(t) => t.clone(),
            _ => self.lend()?.view()?.to_tensor(),
        })
    }

    /// Runs `body` on a mutable view of a direct buffer's elements, under its write lock.
    pub(crate) fn write<R>(&self, body: impl FnOnce(TensorViewMut<'_>) -> Result<R>) -> Result<R> {
        let JavaTensor::Direct {
            buffer,
            dtype,
            shape,
        } = self
        else {
            return Err(super::Failure::Argument(
                "a run writes only into a tensor that wraps a direct buffer in place (one of \
                 a plain dtype, aligned to it): this one holds a copy"
                    .into(),
            ));
        };
        let mut writing = buffer.write()?;
        body(TensorViewMut::from_bytes(
            *dtype,
            shape,
            writing.bytes_mut(),
        )?)
    }
}
