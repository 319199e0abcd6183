//! The dtype-erased front end: a [`Tensor`] is one enum over every element type, for callers
//! that learn the dtype at run time (files, bindings, the op graph). Each op dispatches once
//! on the params' dtype and once on the indices' dtype, then runs the typed path.

use crate::along::TakeAlongAxisOptions;
use crate::array::{Element, GatherNdOptions, GatherOptions};
use crate::error::{GatherError, Result};
use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::{Complex32, Complex64};
use std::fmt;

macro_rules! dtypes {
    ($($variant:ident($t:ty) = $name:literal),* $(,)?) => {
        /// The element type of a [`Tensor`]; names are TensorFlow's.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DType {
            $(
                #[doc = concat!("`", stringify!($t), "` (`", $name, "`)")]
                $variant,
            )*
        }

        impl DType {
            /// Every dtype.
            pub const ALL: &'static [DType] = &[$(DType::$variant),*];

            /// TensorFlow's name of the dtype (`float32`, `int64`, `string`, …).
            pub fn name(self) -> &'static str {
                match self { $(DType::$variant => $name),* }
            }

            /// The dtype of a TensorFlow name.
            pub fn from_name(name: &str) -> Option<DType> {
                match name { $($name => Some(DType::$variant),)* _ => None }
            }

            fn zeros(self, shape: &[usize]) -> Result<Tensor> {
                match self { $(DType::$variant => zeros_of::<$t>(shape),)* }
            }
        }

        /// A tensor of any supported element type.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Tensor {
            $(
                #[doc = concat!("Elements of type `", stringify!($t), "`.")]
                $variant(ArrayD<$t>),
            )*
        }

        /// A borrowed view of a tensor of any supported element type, of any layout; what the
        /// dtype-erased ops run on (a [`Tensor`] lends one with [`Tensor::view`]).
        #[derive(Debug, Clone)]
        pub enum TensorView<'a> {
            $(
                #[doc = concat!("Elements of type `", stringify!($t), "`.")]
                $variant(ArrayViewD<'a, $t>),
            )*
        }

        /// Element types that a [`Tensor`] can hold.
        pub trait TensorElement: Element {
            /// The dtype of this type.
            const DTYPE: DType;
            /// Wraps an array in a tensor.
            fn into_tensor(array: ArrayD<Self>) -> Tensor;
            /// The array inside a tensor of this dtype.
            fn from_tensor(tensor: &Tensor) -> Option<&ArrayD<Self>>;
            /// The array inside a tensor of this dtype, by value.
            fn from_tensor_owned(tensor: Tensor) -> std::result::Result<ArrayD<Self>, Tensor>;
            /// The view inside a tensor view of this dtype.
            fn from_view<'a>(view: &TensorView<'a>) -> Option<ArrayViewD<'a, Self>>;
        }

        $(
            impl TensorElement for $t {
                const DTYPE: DType = DType::$variant;
                fn into_tensor(array: ArrayD<Self>) -> Tensor {
                    Tensor::$variant(array)
                }
                fn from_tensor(tensor: &Tensor) -> Option<&ArrayD<Self>> {
                    match tensor { Tensor::$variant(a) => Some(a), _ => None }
                }
                fn from_tensor_owned(tensor: Tensor) -> std::result::Result<ArrayD<Self>, Tensor> {
                    match tensor { Tensor::$variant(a) => Ok(a), other => Err(other) }
                }
                fn from_view<'a>(view: &TensorView<'a>) -> Option<ArrayViewD<'a, Self>> {
                    match view { TensorView::$variant(a) => Some(a.clone()), _ => None }
                }
            }

            impl From<ArrayD<$t>> for Tensor {
                fn from(array: ArrayD<$t>) -> Tensor {
                    Tensor::$variant(array)
                }
            }

            impl<'a> From<ArrayViewD<'a, $t>> for TensorView<'a> {
                fn from(view: ArrayViewD<'a, $t>) -> TensorView<'a> {
                    TensorView::$variant(view)
                }
            }
        )*

    };
}

dtypes! {
    Bool(bool) = "bool",
    I8(i8) = "int8",
    I16(i16) = "int16",
    I32(i32) = "int32",
    I64(i64) = "int64",
    U8(u8) = "uint8",
    U16(u16) = "uint16",
    U32(u32) = "uint32",
    U64(u64) = "uint64",
    F16(f16) = "float16",
    BF16(bf16) = "bfloat16",
    F32(f32) = "float32",
    F64(f64) = "float64",
    C64(Complex32) = "complex64",
    C128(Complex64) = "complex128",
    String(String) = "string",
    Bytes(Vec<u8>) = "bytes",
}

/// Runs `$body` with `$a` bound to the view inside `$view`, whatever its dtype, and wraps
/// the resulting array in a tensor of the same dtype.
macro_rules! map_view {
    ($view:expr, $a:ident => $body:expr) => {
        match $view {
            TensorView::Bool($a) => Tensor::Bool($body),
            TensorView::I8($a) => Tensor::I8($body),
            TensorView::I16($a) => Tensor::I16($body),
            TensorView::I32($a) => Tensor::I32($body),
            TensorView::I64($a) => Tensor::I64($body),
            TensorView::U8($a) => Tensor::U8($body),
            TensorView::U16($a) => Tensor::U16($body),
            TensorView::U32($a) => Tensor::U32($body),
            TensorView::U64($a) => Tensor::U64($body),
            TensorView::F16($a) => Tensor::F16($body),
            TensorView::BF16($a) => Tensor::BF16($body),
            TensorView::F32($a) => Tensor::F32($body),
            TensorView::F64($a) => Tensor::F64($body),
            TensorView::C64($a) => Tensor::C64($body),
            TensorView::C128($a) => Tensor::C128($body),
            TensorView::String($a) => Tensor::String($body),
            TensorView::Bytes($a) => Tensor::Bytes($body),
        }
    };
}

/// Runs `$body` with `$a` bound to the array inside `$tensor` (a `Tensor` or a
/// `TensorView`, named by `$enum`), whatever its dtype.
macro_rules! with_tensor {
    ($enum:ident, $tensor:expr, $a:ident => $body:expr) => {
        match $tensor {
            $enum::Bool($a) => $body,
            $enum::I8($a) => $body,
            $enum::I16($a) => $body,
            $enum::I32($a) => $body,
            $enum::I64($a) => $body,
            $enum::U8($a) => $body,
            $enum::U16($a) => $body,
            $enum::U32($a) => $body,
            $enum::U64($a) => $body,
            $enum::F16($a) => $body,
            $enum::BF16($a) => $body,
            $enum::F32($a) => $body,
            $enum::F64($a) => $body,
            $enum::C64($a) => $body,
            $enum::C128($a) => $body,
            $enum::String($a) => $body,
            $enum::Bytes($a) => $body,
        }
    };
}

/// Runs `$body` with `$i` bound to the array inside an integer tensor, or returns
/// [`GatherError::IndicesNotInteger`].
macro_rules! with_indices {
    ($tensor:expr, $i:ident => $body:expr) => {
        match $tensor {
            TensorView::I16($i) => $body,
            TensorView::I32($i) => $body,
            TensorView::I64($i) => $body,
            TensorView::U8($i) => $body,
            TensorView::U16($i) => $body,
            TensorView::U32($i) => $body,
            TensorView::U64($i) => $body,
            other => {
                return Err(GatherError::IndicesNotInteger {
                    dtype: other.dtype().name().to_string(),
                })
            }
        }
    };
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl DType {
    /// Whether tensors of this dtype can be indices.
    pub fn is_index(self) -> bool {
        matches!(
            self,
            DType::I16 | DType::I32 | DType::I64 | DType::U8 | DType::U16 | DType::U32 | DType::U64
        )
    }
}

impl Tensor {
    /// The element type.
    pub fn dtype(&self) -> DType {
        with_tensor!(Tensor, self, a => dtype_of(a.view()))
    }

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
        dtype.zeros(shape)
    }

    /// The array inside, if the tensor is of dtype `T`.
    pub fn as_array<T: TensorElement>(&self) -> Option<&ArrayD<T>> {
        T::from_tensor(self)
    }

    /// The array inside, or [`GatherError::DTypeMismatch`].
    pub fn into_array<T: TensorElement>(self) -> Result<ArrayD<T>> {
        T::from_tensor_owned(self).map_err(|t| GatherError::DTypeMismatch {
            expected: T::DTYPE.name().to_string(),
            found: t.dtype().name().to_string(),
        })
    }

    /// `tf.gather(self, indices, axis, batch_dims)`; `indices` must have an integer dtype.
    ///
    /// ```
    /// use ndgather::{GatherOptions, Tensor};
    /// let params = Tensor::from_shape_vec(&[6], ["p0", "p1", "p2", "p3", "p4", "p5"].map(String::from).to_vec()).unwrap();
    /// let indices = Tensor::from_shape_vec(&[], vec![3i32]).unwrap();
    /// let out = params.gather(&indices, &GatherOptions::new()).unwrap();
    /// assert_eq!(out.shape(), &[] as &[usize]);
    /// assert_eq!(out.as_array::<String>().unwrap().first().unwrap(), "p3");
    /// ```
    pub fn gather(&self, indices: &Tensor, options: &GatherOptions) -> Result<Tensor> {
        self.view().gather(&indices.view(), options)
    }

    /// `tf.gather_nd(self, indices, batch_dims)`; `indices` must have an integer dtype.
    pub fn gather_nd(&self, indices: &Tensor, options: &GatherNdOptions) -> Result<Tensor> {
        self.view().gather_nd(&indices.view(), options)
    }

    /// A borrowed view.
    pub fn view(&self) -> TensorView<'_> {
        with_tensor!(Tensor, self, a => TensorView::from(a.view()))
    }
}

impl TensorView<'_> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        with_tensor!(TensorView, self, a => dtype_of(a.view()))
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        with_tensor!(TensorView, self, a => a.shape())
    }

    /// `tf.gather(self, indices, axis, batch_dims)` into a new tensor; `indices` must have an
    /// integer dtype.
    pub fn gather(&self, indices: &TensorView<'_>, options: &GatherOptions) -> Result<Tensor> {
        with_indices!(indices, i => Ok(map_view!(self, p => options.gather(p, i)?)))
    }

    /// `tf.gather_nd(self, indices, batch_dims)` into a new tensor; `indices` must have an
    /// integer dtype.
    pub fn gather_nd(&self, indices: &TensorView<'_>, options: &GatherNdOptions) -> Result<Tensor> {
        with_indices!(indices, i => Ok(map_view!(self, p => options.gather_nd(p, i)?)))
    }

    /// `take_along_axis(self, indices, axis)` into a new tensor (see
    /// [`TakeAlongAxisOptions::take_along_axis`]); `indices` must have an integer dtype.
    ///
    /// ```
    /// use ndgather::{ndarray::array, TakeAlongAxisOptions, Tensor};
    /// let params = Tensor::from(array![["a", "b"], ["c", "d"]].mapv(String::from).into_dyn());
    /// let indices = Tensor::from(array![[1i64], [0]].into_dyn());
    /// let out = params.view().take_along_axis(&indices.view(), &TakeAlongAxisOptions::new(1)).unwrap();
    /// assert_eq!(out.as_array::<String>().unwrap().iter().collect::<Vec<_>>(), ["b", "c"]);
    /// ```
    ///
    /// # Errors
    /// Those of [`TakeAlongAxisOptions::take_along_axis`], and
    /// [`GatherError::IndicesNotInteger`].
    pub fn take_along_axis(
        &self,
        indices: &TensorView<'_>,
        options: &TakeAlongAxisOptions,
    ) -> Result<Tensor> {
        with_indices!(indices, i => Ok(map_view!(self, p => options.take_along_axis(p, i)?)))
    }

    /// [`TakeAlongAxisOptions::take_along_axis_records`] on a view whose last axis holds each
    /// element's values (see [`TensorView::gather_records`]).
    ///
    /// # Errors
    /// Those of [`TakeAlongAxisOptions::take_along_axis_records`].
    pub fn take_along_axis_records(
        &self,
        indices: &TensorView<'_>,
        options: &TakeAlongAxisOptions,
    ) -> Result<Tensor> {
        with_indices!(indices, i => Ok(map_view!(self, p => options.take_along_axis_records(p, i)?)))
    }

    /// [`GatherOptions::gather_records`] on a view whose last axis holds each element's
    /// values: for data that cannot be viewed as its own type where it lies (the bytes of a
    /// misaligned or byte-swapped array in a file, say).
    ///
    /// ```
    /// use ndgather::{ndarray::array, GatherOptions, Tensor};
    /// // Two f32 elements, as their bytes; gather element 1.
    /// let bytes = Tensor::from(array![[0u8, 0, 128, 63], [0, 0, 0, 64]].into_dyn());
    /// let indices = Tensor::from(array![1i32].into_dyn());
    /// let out = bytes.view().gather_records(&indices.view(), &GatherOptions::new()).unwrap();
    /// assert_eq!(out.shape(), &[1, 4]);
    /// ```
    ///
    /// # Errors
    /// Those of [`GatherOptions::gather_records`].
    pub fn gather_records(
        &self,
        indices: &TensorView<'_>,
        options: &GatherOptions,
    ) -> Result<Tensor> {
        with_indices!(indices, i => Ok(map_view!(self, p => options.gather_records(p, i)?)))
    }

    /// [`GatherNdOptions::gather_nd_records`] on a view whose last axis holds each element's
    /// values (see [`TensorView::gather_records`]).
    ///
    /// # Errors
    /// Those of [`GatherNdOptions::gather_nd_records`].
    pub fn gather_nd_records(
        &self,
        indices: &TensorView<'_>,
        options: &GatherNdOptions,
    ) -> Result<Tensor> {
        with_indices!(indices, i => Ok(map_view!(self, p => options.gather_nd_records(p, i)?)))
    }
}

fn zeros_of<T: TensorElement>(shape: &[usize]) -> Result<Tensor> {
    Tensor::from_shape_vec(shape, crate::output::defaults::<T>(shape)?)
}

fn dtype_of<T: TensorElement>(_: ArrayViewD<'_, T>) -> DType {
    T::DTYPE
}
