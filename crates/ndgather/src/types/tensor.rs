//! The dtype-erased front end: a [`Tensor`] is one enum over every element type, for callers
//! that learn the dtype at run time (files, bindings, the op graph). Each op dispatches once
//! on the params' dtype and once on the indices' dtype, then runs the typed path.

use crate::types::dtype::{ArrayElement, DType, FixedWidth, Tensor, TensorElement, TensorView};
use crate::types::error::{GatherError, Result};
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
        let expected =
            crate::shape::checked_numel(shape).ok_or_else(|| GatherError::ShapeOverflow {
                what: "tensor",
                shape: shape.to_vec(),
            })?;
        if expected != data.len() {
            return Err(GatherError::DataLength {
                shape: shape.to_vec(),
                expected,
                found: data.len(),
            });
        }
        ArrayD::from_shape_vec(IxDyn(shape), data)
            .map(T::into_tensor)
            .map_err(|e| GatherError::InvalidShape {
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
    /// [`GatherError::DataLength`] when the bytes are not the shape's elements,
    /// [`GatherError::InvalidShape`] for bytes that are no value (a `bool` of 2) or a dtype of
    /// variable width.
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Tensor> {
        let invalid = |reason: &str| GatherError::InvalidShape {
            shape: shape.to_vec(),
            reason: format!("{dtype} {reason}"),
        };
        let size = dtype
            .size()
            .ok_or_else(|| invalid("elements have no fixed width"))?;
        if !bytes.len().is_multiple_of(size) {
            return Err(invalid("elements are not whole in the bytes given"));
        }
        if dtype == DType::Bool {
            if bytes.iter().any(|&b| b > 1) {
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
    /// [`GatherError::InvalidShape`] for a dtype of variable width.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        with_tensor!(Tensor, self, plain a => Ok(match a.as_slice() {
            Some(s) => bytemuck::cast_slice(s).to_vec(),
            None => a.iter().flat_map(|v| bytemuck::bytes_of(v).iter().copied()).collect(),
        }), else dtype => match self {
            Tensor::Bool(a) => Ok(a.iter().map(|&b| u8::from(b)).collect()),
            _ => Err(GatherError::InvalidShape {
                shape: self.shape().to_vec(),
                reason: format!("{dtype} elements have no fixed width"),
            }),
        })
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

    /// The array inside, or [`GatherError::DTypeMismatch`].
    pub fn into_array<T: TensorElement>(self) -> Result<ArrayD<T>> {
        T::from_tensor_owned(self).map_err(|t| GatherError::DTypeMismatch {
            expected: T::DTYPE,
            found: t.dtype(),
        })
    }
}

impl TensorView<'_> {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        with_tensor!(TensorView, self, a => a.shape())
    }
}

fn zeros_of<T: TensorElement>(shape: &[usize]) -> Result<Tensor> {
    Tensor::from_shape_vec(shape, crate::engine::mem::output::defaults::<T>(shape)?)
}

/// An array's memory to the pool as the units fresh outputs are made of (`Op::run` moves
/// each fixed-width dtype as the units of its alignment), so that they find it.
fn give_back_units<T: FixedWidth>(array: ArrayD<T>) {
    use crate::engine::mem::{recycle, units};
    let (elements, _) = array.into_raw_vec_and_offset();
    crate::engine::mem::units::with_unit_of!(T, U => {
        if let Some(u) = units::into_units::<T, U>(elements) {
            recycle::give_back(u);
        }
    })
}
