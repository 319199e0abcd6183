//! The dtype-erased front end: a [`Tensor`] is one enum over every element type, for callers
//! that learn the dtype at run time (files, bindings, the op graph). Each op dispatches once
//! on the params' dtype and once on the indices' dtype, then runs the typed path.

use crate::mem::raw_view::{RawView, RawViewMut};
use crate::types::dtype::{
    bytes_of, ArrayElement, DType, FixedWidth, Tensor, TensorElement, TensorView, TensorViewMut,
};
use crate::types::error::{Error, Result};
use crate::with_tensor;
use ndarray::{ArrayD, CowArray, IxDyn};

impl Tensor {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        with_tensor!(Tensor, self, a => a.shape())
    }

    /// The element count.
    pub fn len(&self) -> usize {
        with_tensor!(Tensor, self, a => a.len())
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A tensor of a shape from row-major data.
    ///
    /// ```
    /// use ndgather::{DType, Tensor};
    /// let t = Tensor::from_shape_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap();
    /// assert_eq!(t.dtype(), DType::I32);
    /// assert!(Tensor::from_shape_vec(&[3], vec![1i32]).is_err());
    /// ```
    pub fn from_shape_vec<T: TensorElement>(shape: &[usize], data: Vec<T>) -> Result<Tensor> {
        let expected = crate::shape::checked_numel(shape).ok_or_else(|| Error::ShapeOverflow {
            what: "tensor",
            shape: shape.to_vec(),
        })?;
        if expected != data.len() {
            return Err(Error::DataLength {
                shape: shape.to_vec(),
                expected,
                found: data.len(),
            });
        }
        ArrayD::from_shape_vec(IxDyn(shape), data)
            .map(T::into_tensor)
            .map_err(|e| Error::InvalidShape {
                shape: shape.to_vec(),
                reason: e.to_string(),
            })
    }

    /// A tensor of `T::default()` values; a shape too large to allocate is an error, not an
    /// abort.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Tensor> {
        crate::with_dtype!(dtype, T => zeros_of::<T>(shape))
    }

    /// A tensor of a fixed-width `dtype` and `shape` from its elements' bytes, row-major in
    /// the machine's byte order (copied; any alignment). A `bool` byte must be 0 or 1.
    ///
    /// ```
    /// use ndgather::{DType, Tensor};
    /// let t = Tensor::from_bytes(DType::F32, &[2], &[0, 0, 192, 63, 0, 0, 0, 64]).unwrap();
    /// assert_eq!(t.to_array::<f32>().unwrap().as_slice(), Some(&[1.5f32, 2.0][..]));
    /// assert_eq!(t.to_bytes().unwrap(), [0, 0, 192, 63, 0, 0, 0, 64]);
    /// assert!(Tensor::from_bytes(DType::Bool, &[1], &[2]).is_err());
    /// ```
    ///
    /// # Errors
    /// [`Error::DataLength`] when the bytes are not the shape's elements,
    /// [`Error::InvalidShape`] for bytes that are no value (a `bool` of 2) or a dtype of
    /// variable width.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Tensor> {
        let invalid = |reason: &str| invalid_bytes(dtype, shape, reason);
        whole_elements(dtype, shape, bytes)?;
        if dtype == DType::Bool {
            if !dtype.holds_values(bytes) {
                return Err(invalid("values must be 0 or 1"));
            }
            return Tensor::from_shape_vec(shape, bytes.iter().map(|&b| b == 1).collect());
        }
        crate::with_dtype!(dtype, plain T => Tensor::from_shape_vec(shape, bytemuck::pod_collect_to_vec::<u8, T>(bytes)),
            else Err(invalid("elements have no fixed width")))
    }

    /// The elements' bytes, row-major in the machine's byte order, of a fixed-width tensor
    /// (see [`Tensor::from_bytes`]).
    ///
    /// # Errors
    /// [`Error::InvalidShape`] for a dtype of variable width.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.view().to_bytes()
    }

    /// The array inside, if the tensor is of the fixed-width dtype `T`.
    pub fn as_array<T: ArrayElement>(&self) -> Option<&ArrayD<T>> {
        T::from_tensor(self)
    }

    /// The elements as an array, if the tensor is of dtype `T`: borrowed for the fixed-width
    /// dtypes, copied out of the [`Strings`](crate::Strings) for `String` and `Vec<u8>`.
    ///
    /// ```
    /// use ndgather::{ndarray::array, Tensor};
    /// let t = Tensor::from(array!["a", "bc"].mapv(String::from).into_dyn());
    /// assert_eq!(t.to_array::<String>().unwrap()[[1]], "bc");
    /// assert!(t.to_array::<f32>().is_none());
    /// ```
    pub fn to_array<T: TensorElement>(&self) -> Option<CowArray<'_, T, IxDyn>> {
        T::to_array(self)
    }

    /// Gives the tensor's memory to the pool of fresh outputs ([`crate::memory::recycle`]), for a
    /// value its owner knows is dead (an op graph's intermediate result). A [`Strings`]
    /// gives its buffers back when dropped.
    pub(crate) fn recycle(self) {
        with_tensor!(Tensor, self, fixed a => give_back_units(a), else _dtype => ())
    }

    /// The array inside, or [`Error::DTypeMismatch`].
    pub fn into_array<T: TensorElement>(self) -> Result<ArrayD<T>> {
        T::from_tensor_owned(self).map_err(|t| Error::DTypeMismatch {
            expected: T::DTYPE,
            found: t.dtype(),
        })
    }
}

impl<'a> TensorView<'a> {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        with_tensor!(TensorView, self, a => a.shape())
    }

    /// A view of a `plain` `dtype` (every fixed-width dtype but `bool`) and `shape` over its
    /// elements' bytes, row-major in the machine's byte order, where they lie: memory lent
    /// by another runtime (a JVM's direct buffer, a mapped file) is read without a copy.
    ///
    /// ```
    /// use ndgather::{DType, TensorView};
    /// #[repr(align(8))]
    /// struct Aligned([u8; 8]);
    /// let bytes = &Aligned([0, 0, 192, 63, 0, 0, 0, 64]).0; // 1.5f32, 2.0f32
    /// let view = TensorView::from_bytes(DType::F32, &[2], bytes).unwrap();
    /// assert_eq!(view.to_tensor().to_array::<f32>().unwrap().as_slice(), Some(&[1.5f32, 2.0][..]));
    /// // Unaligned bytes, `bool` and the strings have no view: use `Tensor::from_bytes`.
    /// assert!(TensorView::from_bytes(DType::F32, &[1], &bytes[1..5]).is_err());
    /// assert!(TensorView::from_bytes(DType::Bool, &[1], &[1]).is_err());
    /// ```
    ///
    /// # Errors
    /// [`Error::DataLength`] when the bytes are not the shape's elements,
    /// [`Error::InvalidShape`] for bytes not aligned to the element type, or a dtype
    /// that is not `plain`.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &'a [u8]) -> Result<TensorView<'a>> {
        let invalid = |reason: &str| invalid_bytes(dtype, shape, reason);
        whole_elements(dtype, shape, bytes)?;
        let raw = RawView::of_bytes(bytes, shape, dtype.size().unwrap_or(0));
        crate::with_dtype!(dtype, plain T => raw.and_then(|r| r.elements::<T>())
            .map(TensorView::from)
            .ok_or_else(|| invalid("bytes are not aligned to the element type")),
            else Err(invalid("elements are not plain bytes: they have no view")))
    }

    /// The elements, copied into a new tensor.
    pub fn to_tensor(&self) -> Tensor {
        with_tensor!(TensorView, self, a => a.to_tensor())
    }

    /// The elements' bytes, row-major in the machine's byte order, of a fixed-width view
    /// (see [`Tensor::from_bytes`]).
    ///
    /// # Errors
    /// [`Error::InvalidShape`] for a dtype of variable width.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        with_tensor!(TensorView, self, plain a => Ok(match a.as_slice() {
            Some(s) => bytemuck::cast_slice(s).to_vec(),
            None => a.iter().flat_map(|v| bytemuck::bytes_of(v).iter().copied()).collect(),
        }), else dtype => match self {
            TensorView::Bool(a) => Ok(a.iter().map(|&b| u8::from(b)).collect()),
            _ => Err(invalid_bytes(dtype, self.shape(), "elements have no fixed width")),
        })
    }
}

impl<'a> TensorViewMut<'a> {
    /// A mutable view of a `plain` `dtype` and `shape` over its elements' bytes, where they
    /// lie (see [`TensorView::from_bytes`]): where an op's run ([`OpDef::run`](crate::OpDef::run)) or a graph's
    /// `run_into` writes a result into memory another runtime lent.
    ///
    /// ```
    /// use ndgather::{DType, TensorViewMut};
    /// #[repr(align(4))]
    /// struct Aligned([u8; 8]);
    /// let mut bytes = Aligned([0; 8]);
    /// let view = TensorViewMut::from_bytes(DType::I32, &[2], &mut bytes.0).unwrap();
    /// assert_eq!(view.dtype(), DType::I32);
    /// assert!(TensorViewMut::from_bytes(DType::I32, &[3], &mut bytes.0).is_err());
    /// ```
    ///
    /// # Errors
    /// As [`TensorView::from_bytes`].
    pub fn from_bytes(
        dtype: DType,
        shape: &[usize],
        bytes: &'a mut [u8],
    ) -> Result<TensorViewMut<'a>> {
        let invalid = |reason: &str| invalid_bytes(dtype, shape, reason);
        whole_elements(dtype, shape, bytes)?;
        let raw = RawViewMut::of_bytes(bytes, shape, dtype.size().unwrap_or(0));
        crate::with_dtype!(dtype, plain T => raw.and_then(|r| r.into_elements::<T>())
            .map(TensorViewMut::from)
            .ok_or_else(|| invalid("bytes are not aligned to the element type")),
            else Err(invalid("elements are not plain bytes: they have no view")))
    }
}

fn invalid_bytes(dtype: DType, shape: &[usize], reason: &str) -> Error {
    Error::InvalidShape {
        shape: shape.to_vec(),
        reason: format!("{dtype} {reason}"),
    }
}

/// Checks that `bytes` hold whole elements of a fixed-width `dtype`, as many as `shape` has.
fn whole_elements(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<()> {
    let size = dtype
        .size()
        .ok_or_else(|| invalid_bytes(dtype, shape, "elements have no fixed width"))?;
    if !bytes.len().is_multiple_of(size) {
        return Err(invalid_bytes(
            dtype,
            shape,
            "elements are not whole in the bytes given",
        ));
    }
    let expected = crate::shape::checked_numel(shape).ok_or_else(|| Error::ShapeOverflow {
        what: "tensor",
        shape: shape.to_vec(),
    })?;
    if expected != bytes.len() / size {
        return Err(Error::DataLength {
            shape: shape.to_vec(),
            expected,
            found: bytes.len() / size,
        });
    }
    Ok(())
}

fn zeros_of<T: TensorElement>(shape: &[usize]) -> Result<Tensor> {
    Tensor::from_shape_vec(
        shape,
        crate::mem::output::defaults::<T>(shape, bytes_of::<T>())?,
    )
}

/// An array's memory to the pool as the units fresh outputs are made of (`Op::run` moves
/// each fixed-width dtype as the units of its alignment), so that they find it.
fn give_back_units<T: FixedWidth>(array: ArrayD<T>) {
    use crate::mem::{recycle, units};
    let (elements, _) = array.into_raw_vec_and_offset();
    crate::mem::units::with_unit_of!(T, U => {
        if let Some(u) = units::into_units::<T, U>(elements) {
            recycle::give_back(u);
        }
    })
}

/// The elements inside a view, copied into a tensor: an array's or a [`Strings`]'.
trait ToTensor {
    fn to_tensor(&self) -> Tensor;
}

impl<T: ArrayElement> ToTensor for ndarray::ArrayViewD<'_, T> {
    fn to_tensor(&self) -> Tensor {
        T::into_tensor(self.to_owned())
    }
}

impl<T> ToTensor for &crate::Strings<T>
where
    crate::Strings<T>: Clone,
    Tensor: From<crate::Strings<T>>,
{
    fn to_tensor(&self) -> Tensor {
        Tensor::from((*self).clone())
    }
}

#[cfg(test)]
mod tests {
    use crate::Complex32;

    /// A dead tensor's memory given to the pool is found by a later output of any dtype of
    /// its width, which the copy makes as units.
    #[test]
    fn a_recycled_tensor_is_found_by_outputs_of_its_units() {
        let _alone = crate::mem::recycle::pool_test_lock();
        let len = 2 << 20; // 8 MiB of f32, above the pool's minimum
        let t = crate::Tensor::from(ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[len])));
        let address = t.as_array::<f32>().unwrap().as_ptr() as usize;
        t.recycle();
        let kept = crate::mem::recycle::take::<u32>(len).expect("kept as u32 units");
        assert_eq!(kept.as_ptr() as usize, address);
        let c = vec![Complex32::new(1.0, 2.0); 3];
        let units: Vec<u32> = crate::mem::units::into_units(c).unwrap();
        assert_eq!(units, [1.0f32.to_bits(), 2.0f32.to_bits()].repeat(3));
    }
}
