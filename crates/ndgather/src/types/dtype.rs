//! The one table of element types. Everything that depends on the element type — [`DType`],
//! [`Tensor`], [`TensorView`], [`TensorElement`], the index and gradient dtypes, the names in
//! messages, and every dispatch from a run-time dtype to a Rust type ([`with_dtype!`](crate::with_dtype!)) — is
//! derived from the table in `__dtype_table!` below. Adding an element type is one line there;
//! a front end that matches on [`Tensor`]'s variants (printing, say) then fails to compile
//! until it handles the new one, and `tests/every_dtype.rs` walks every dtype through every
//! front end.

use crate::mem::units::{Bytes, BytesOf};
use crate::types::strings::Strings;
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, CowArray, IxDyn};

/// What can be gathered: any `Clone + Default` type (`Default` fills the slices of ignored
/// bad indices, as TensorFlow's `T()`). Numbers, `bool`, `half`'s floats, `num-complex`'s
/// complex numbers, `String` and `Vec<u8>` all are.
pub trait Element: Clone + Default + Send + Sync + 'static {}
impl<T: Clone + Default + Send + Sync + 'static> Element for T {}

/// The table: `Variant(Rust type) = "TensorFlow name", kind, ".npy descr", "safetensors
/// name", [roles]`. The TensorFlow name is NumPy's (and ml_dtypes') name too; the `.npy` descr
/// is the one `numpy.save` writes (without its byte order; `U` and `S` take a width), as
/// ml_dtypes' types save (`V2`, `V1`, `f1`); an empty safetensors name means safetensors has
/// no such dtype. Roles:
/// - `index`: a dtype of indices in the dtype-erased API and the Python package (TensorFlow's,
///   `int8` and the unsigned ones);
/// - `kernel`: an index dtype the kernels are compiled for (`int16`, for its TensorFlow limit,
///   `int32`, `int64` and `uint64`); indices of the others are widened to `int64` or `uint64`
///   before a kernel runs, so that each op is compiled for four index types, not eight;
/// - `number`: a fixed-width number (the summing ops' dtypes; plain bytes in a file);
/// - `ordered`: a number with an order, integer or real floating-point (what
///   `tensor_scatter_nd_min` and `_max` accept, TensorFlow's real number types);
/// - `grad`: a dtype with a gradient (floating-point and complex, as TensorFlow);
/// - `real`: a real floating-point dtype (embedding tables);
/// - `plain`: every bit pattern is a value ([`Plain`]), so bytes from a file or another
///   library are elements as they lie;
/// - `float`: a real floating-point type whose every value is an `f64` (`FloatValue`:
///   printing, fill values);
/// - `widened`: a half type, which the libraries' reductions and combiners compute in `f32`
///   ([`Arith::Acc`](crate::Arith::Acc));
/// - `strings`: a variable-width dtype, which a [`Tensor`] holds as a
///   [`Strings`](crate::Strings) (the others, the `fixed` dtypes, as an `ndarray` array).
#[doc(hidden)]
#[macro_export]
macro_rules! __dtype_table {
    ([$($callback:tt)+] $args:tt) => {
        $($callback)+ ! { $args
            Bool(bool) = "bool", Bool, "b1", "BOOL", [];
            I8(i8) = "int8", Int, "i1", "I8", [index number ordered plain];
            I16(i16) = "int16", Int, "i2", "I16", [index kernel number ordered plain];
            I32(i32) = "int32", Int, "i4", "I32", [index kernel number ordered plain];
            I64(i64) = "int64", Int, "i8", "I64", [index kernel number ordered plain];
            U8(u8) = "uint8", Uint, "u1", "U8", [index number ordered plain];
            U16(u16) = "uint16", Uint, "u2", "U16", [index number ordered plain];
            U32(u32) = "uint32", Uint, "u4", "U32", [index number ordered plain];
            U64(u64) = "uint64", Uint, "u8", "U64", [index kernel number ordered plain];
            F16($crate::f16) = "float16", Float, "f2", "F16", [number ordered grad real plain float widened];
            BF16($crate::bf16) = "bfloat16", BrainFloat, "V2", "BF16", [number ordered grad real plain float widened];
            F32(f32) = "float32", Float, "f4", "F32", [number ordered grad real plain float];
            F64(f64) = "float64", Float, "f8", "F64", [number ordered grad real plain float];
            F8E4M3($crate::F8E4M3) = "float8_e4m3fn", Float8, "V1", "F8_E4M3", [plain float];
            F8E5M2($crate::F8E5M2) = "float8_e5m2", Float8, "f1", "F8_E5M2", [plain float];
            C64($crate::Complex32) = "complex64", Complex, "c8", "C64", [number grad plain];
            C128($crate::Complex64) = "complex128", Complex, "c16", "", [number grad plain];
            String(String) = "string", String, "U", "", [strings];
            Bytes(Vec<u8>) = "bytes", Bytes, "S", "", [strings];
        }
    };
}

/// Expands to `yes` when `role` is among `[roles]` (or is `all`; `fixed` holds where
/// `strings` does not), to `no` otherwise; one arm per role, since a literal match is how
/// `macro_rules` compares two names. The recursion is at most as deep as an entry has roles.
#[doc(hidden)]
#[macro_export]
macro_rules! __if_role {
    (all [$($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (fixed [strings $($r:ident)*] $yes:tt else {$($no:tt)*}) => { $($no)* };
    (fixed [$other:ident $($r:ident)*] $yes:tt else $no:tt) => {
        $crate::__if_role!{fixed [$($r)*] $yes else $no}
    };
    (fixed [] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (strings [strings $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (index [index $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (kernel [kernel $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (number [number $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (ordered [ordered $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (grad [grad $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (real [real $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (plain [plain $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (float [float $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    (widened [widened $($r:ident)*] {$($yes:tt)*} else $no:tt) => { $($yes)* };
    ($role:ident [$other:ident $($r:ident)*] $yes:tt else $no:tt) => {
        $crate::__if_role!{$role [$($r)*] $yes else $no}
    };
    ($role:ident [] $yes:tt else {$($no:tt)*}) => { $($no)* };
}

/// The match of [`with_dtype!`](crate::with_dtype!): every dtype has an arm, so no dtype can be missed.
#[doc(hidden)]
#[macro_export]
macro_rules! __match_dtype {
    ({ $role:ident, $dtype:expr, $T:ident, $body:expr, $fallback:expr }
     $($v:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($r:ident)*];)*) => {
        match $dtype {
            $($crate::DType::$v => $crate::__if_role!{$role [$($r)*] {{
                #[allow(dead_code)]
                type $T = $t;
                $body
            }} else { $fallback }},)*
        }
    };
}

/// Runs `body` with the type `T` of a run-time [`DType`]: the one dispatch from a dtype to a
/// Rust type, derived from the crate's dtype table. `with_dtype!(dtype, T => body)` covers
/// every dtype; `with_dtype!(dtype, ROLE T => body, else fallback)` covers the dtypes of one
/// role (`index`, `kernel`, `number`, `ordered`, `grad`, `real`, `plain`, `float`, `strings`
/// or `fixed`; see [`DType::is_index`], [`DType::is_number`], [`DType::is_ordered`],
/// [`DType::has_grad`], [`DType::is_real`],
/// [`DType::is_plain`], [`DType::is_float`], [`DType::size`]) and
/// evaluates `fallback` for the others. The body
/// is compiled once per type, so it may use any trait the concrete types have.
///
/// ```
/// use ndgather::{with_dtype, DType};
/// fn width(dtype: DType) -> Option<usize> {
///     with_dtype!(dtype, number T => Some(std::mem::size_of::<T>()), else None)
/// }
/// assert_eq!(width(DType::C64), Some(8));
/// assert_eq!(width(DType::String), None);
/// let zero = with_dtype!(DType::BF16, T => ndgather::Tensor::from(ndarray::ArrayD::<T>::default(ndarray::IxDyn(&[2]))));
/// assert_eq!(zero.dtype(), DType::BF16);
/// ```
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        $crate::__dtype_table! {[$crate::__match_dtype] { all, $dtype, $T, $body, () }}
    };
    ($dtype:expr, $role:ident $T:ident => $body:expr, else $fallback:expr) => {
        $crate::__dtype_table! {[$crate::__match_dtype] { $role, $dtype, $T, $body, $fallback }}
    };
}

/// The match of [`with_tensor!`](crate::with_tensor!): every dtype has an arm.
#[doc(hidden)]
#[macro_export]
macro_rules! __match_tensor {
    ({ $role:ident, $enum:ident, $value:expr, $a:ident => $body:expr, $other:ident => $fallback:expr }
     $($v:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($r:ident)*];)*) => {
        match $value {
            $(
                #[allow(unused_variables)]
                $crate::$enum::$v($a) => $crate::__if_role!{$role [$($r)*] {$body} else {{
                    let $other = $crate::DType::$v;
                    $fallback
                }}},
            )*
        }
    };
}

/// Runs `body` with `a` bound to the array inside a [`Tensor`] or [`TensorView`] (named by
/// its first argument; a [`Strings`](crate::Strings) for the `strings` dtypes), whatever its dtype: `with_tensor!(Tensor, &t, a => body)`; or for the
/// dtypes of one role (as in [`with_dtype!`](crate::with_dtype!)), with `dtype` bound to the value's [`DType`]
/// otherwise: `with_tensor!(Tensor, &t, ROLE a => body, else dtype => fallback)`. The body is
/// compiled once per dtype.
///
/// ```
/// use ndgather::{ndarray::array, with_tensor, Tensor};
/// let t = Tensor::from(array![1.5f32, 2.5].into_dyn());
/// assert_eq!(with_tensor!(Tensor, &t, a => a.len()), 2);
/// let sum = with_tensor!(Tensor, &t, real a => a.iter().map(|&v| f64::from(v)).sum(), else _dtype => 0.0);
/// assert_eq!(sum, 4.0);
/// ```
#[macro_export]
macro_rules! with_tensor {
    ($enum:ident, $value:expr, $a:ident => $body:expr) => {
        $crate::__dtype_table!{[$crate::__match_tensor] { all, $enum, $value, $a => $body, _dtype => () }}
    };
    ($enum:ident, $value:expr, $role:ident $a:ident => $body:expr, else $other:ident => $fallback:expr) => {
        $crate::__dtype_table!{[$crate::__match_tensor] { $role, $enum, $value, $a => $body, $other => $fallback }}
    };
}

/// The kind of an element type: what a file format or NumPy calls it, with its width
/// ([`DType::size`]) making the dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// Signed integers.
    Int,
    /// Unsigned integers.
    Uint,
    /// IEEE floating-point numbers.
    Float,
    /// bfloat16 (8 exponent bits; NumPy has no such type, `ml_dtypes` adds one).
    BrainFloat,
    /// 8-bit floats (ml_dtypes' `float8_e4m3fn` and `float8_e5m2`; NumPy has none), told
    /// apart by their names.
    Float8,
    /// Complex numbers of two IEEE floats.
    Complex,
    /// Unicode text.
    String,
    /// Byte strings.
    Bytes,
}

/// Whether `T` is one of the table's fixed-width types: each is `Copy`, with no padding, so
/// a copy of its bytes is a copy of its value.
pub(crate) fn is_fixed_width<T: 'static>() -> bool {
    bytes_of::<T>().is_some()
}

/// The memory layer's proof that `T` is one of the table's fixed-width types, for code
/// generic over every element type (fresh outputs are checked, not pre-filled, for them).
pub(crate) fn bytes_of<T: 'static>() -> Option<BytesOf<T>> {
    crate::with_dtype!(DType::of_type::<T>()?, fixed F => BytesOf::<T>::if_same::<F>(), else None)
}

macro_rules! define_dtypes {
    ({} $($variant:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($role:ident)*];)*) => {
        /// The element type of a [`Tensor`]; names are TensorFlow's.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DType {
            $(
                #[doc = concat!("`", stringify!($t), "` (`", $name, "`)")]
                $variant,
            )*
        }

        impl DType {
    /// Whether `bytes`, whole elements of this fixed-width dtype in the machine's order, are
    /// its values: any bytes for the `plain` dtypes, 0 or 1 for `bool`, none for the
    /// `strings` dtypes (whose elements are not their bytes).
    pub(crate) fn holds_values(self, bytes: &[u8]) -> bool {
        match self {
            DType::Bool => bytes.iter().all(|&b| b <= 1),
            d => d.is_plain(),
        }
    }

            /// Every dtype.
            pub const ALL: &'static [DType] = &[$(DType::$variant),*];

            /// TensorFlow's name of the dtype (`float32`, `int64`, `string`, …).
            pub fn name(self) -> &'static str {
                match self { $(DType::$variant => $name),* }
            }

            /// The kind of the dtype.
            pub fn kind(self) -> Kind {
                match self { $(DType::$variant => Kind::$kind),* }
            }

            /// The type string `numpy.save` writes for the dtype, without its byte order
            /// (`f4`, `c16`; `V2`, `V1`, `f1` for ml_dtypes' bfloat16, float8_e4m3fn and
            /// float8_e5m2; `U` and `S` for the strings, whose width is per array).
            pub fn npy_descr(self) -> &'static str {
                match self { $(DType::$variant => $npy),* }
            }

            /// The safetensors name of the dtype (`F32`, `F8_E4M3`), or `None` for a dtype
            /// safetensors does not have.
            pub fn safetensors_name(self) -> Option<&'static str> {
                match self { $(DType::$variant => Some($st).filter(|n: &&str| !n.is_empty())),* }
            }
        }

        impl DType {
            /// The dtype whose Rust type is `T`, if any.
            pub(crate) fn of_type<T: 'static>() -> Option<DType> {
                let id = std::any::TypeId::of::<T>();
                $(if id == std::any::TypeId::of::<$t>() {
                    return Some(DType::$variant);
                })*
                None
            }
        }

        /// A tensor of any supported element type: an `ndarray` array of a fixed-width type,
        /// or a [`Strings`] (one byte buffer and each element's span of it) of strings or
        /// byte strings.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Tensor {
            $(
                #[doc = concat!("Elements of type `", stringify!($t), "`.")]
                $variant($crate::__if_role!{fixed [$($role)*] {ArrayD<$t>} else {Strings<$t>}}),
            )*
        }

        /// A caller's mutable array of any fixed-width element type, of any layout: where
        /// an op's run ([`OpDef::run`](crate::OpDef::run)) writes under
        /// [`Out::Into`](crate::Out::Into). The
        /// string dtypes have a variant too, so that every dtype of the table has one, and
        /// are refused there (a tensor of strings owns its bytes).
        #[derive(Debug)]
        pub enum TensorViewMut<'a> {
            $(
                #[doc = concat!("Elements of type `", stringify!($t), "`.")]
                $variant($crate::__if_role!{fixed [$($role)*] {ArrayViewMutD<'a, $t>} else {&'a mut Strings<$t>}}),
            )*
        }

        impl TensorViewMut<'_> {
            /// The element type.
            pub fn dtype(&self) -> DType {
                match self { $(TensorViewMut::$variant(_) => DType::$variant),* }
            }
        }

        /// A borrowed view of a tensor of any supported element type, of any layout; what the
        /// dtype-erased ops run on (a [`Tensor`] lends one with [`Tensor::view`]).
        #[derive(Debug, Clone)]
        pub enum TensorView<'a> {
            $(
                #[doc = concat!("Elements of type `", stringify!($t), "`.")]
                $variant($crate::__if_role!{fixed [$($role)*] {ArrayViewD<'a, $t>} else {&'a Strings<$t>}}),
            )*
        }

        impl Tensor {
            /// The element type.
            pub fn dtype(&self) -> DType {
                match self { $(Tensor::$variant(_) => DType::$variant),* }
            }

            /// A borrowed view.
            pub fn view(&self) -> TensorView<'_> {
                match self {
                    $(Tensor::$variant(a) => TensorView::$variant(
                        $crate::__if_role!{fixed [$($role)*] {a.view()} else {a}}
                    ),)*
                }
            }

            /// A mutable view, to write in place (the in-place form of the scatter ops).
            pub fn view_mut(&mut self) -> TensorViewMut<'_> {
                match self {
                    $(Tensor::$variant(a) => TensorViewMut::$variant(
                        $crate::__if_role!{fixed [$($role)*] {a.view_mut()} else {a}}
                    ),)*
                }
            }
        }

        impl TensorView<'_> {
            /// The element type.
            pub fn dtype(&self) -> DType {
                match self { $(TensorView::$variant(_) => DType::$variant),* }
            }

            /// The view for a shorter lifetime (ndarray's views are invariant in theirs, so a
            /// view cannot be shortened by a coercion).
            ///
            /// ```
            /// let t = ndgather::Tensor::from(ndgather::ndarray::array![1i32, 2].into_dyn());
            /// let view = t.view();
            /// assert_eq!(view.reborrow().shape(), &[2]);
            /// ```
            pub fn reborrow(&self) -> TensorView<'_> {
                match self {
                    $(TensorView::$variant(a) => TensorView::$variant(
                        $crate::__if_role!{fixed [$($role)*] {a.view()} else {a}}
                    ),)*
                }
            }
        }

        $(
            impl TensorElement for $t {
                const DTYPE: DType = DType::$variant;
                fn into_tensor(array: ArrayD<Self>) -> Tensor {
                    Tensor::$variant(array.into())
                }
                fn to_array(tensor: &Tensor) -> Option<CowArray<'_, Self, IxDyn>> {
                    match tensor {
                        Tensor::$variant(a) => Some(
                            $crate::__if_role!{fixed [$($role)*] {a.view().into()} else {a.to_array().into()}}
                        ),
                        _ => None,
                    }
                }
                fn from_tensor_owned(tensor: Tensor) -> std::result::Result<ArrayD<Self>, Tensor> {
                    match tensor {
                        Tensor::$variant(a) => Ok(
                            $crate::__if_role!{fixed [$($role)*] {a} else {a.to_array()}}
                        ),
                        other => Err(other),
                    }
                }
            }

            impl From<ArrayD<$t>> for Tensor {
                fn from(array: ArrayD<$t>) -> Tensor {
                    <$t>::into_tensor(array)
                }
            }

            $crate::__if_role!{fixed [$($role)*] {
                impl ArrayElement for $t {
                    fn from_tensor(tensor: &Tensor) -> Option<&ArrayD<Self>> {
                        match tensor { Tensor::$variant(a) => Some(a), _ => None }
                    }
                    fn from_view<'a>(view: &TensorView<'a>) -> Option<ArrayViewD<'a, Self>> {
                        match view { TensorView::$variant(a) => Some(a.clone()), _ => None }
                    }
                    fn into_view(view: ArrayViewD<'_, Self>) -> TensorView<'_> {
                        TensorView::$variant(view)
                    }
                }

                impl<'a> From<ArrayViewD<'a, $t>> for TensorView<'a> {
                    fn from(view: ArrayViewD<'a, $t>) -> TensorView<'a> {
                        TensorView::$variant(view)
                    }
                }

                impl<'a> From<ArrayViewMutD<'a, $t>> for TensorViewMut<'a> {
                    fn from(view: ArrayViewMutD<'a, $t>) -> TensorViewMut<'a> {
                        TensorViewMut::$variant(view)
                    }
                }

                impl Bytes for $t {
                    const ANY_BITS: bool = $crate::__if_role!{plain [$($role)*] {true} else {false}};
                    fn are_values(bytes: &[u8]) -> bool {
                        DType::$variant.holds_values(bytes)
                    }
                }

                impl FixedWidth for $t {
                    fn from_view_mut(view: TensorViewMut<'_>) -> Option<ArrayViewMutD<'_, Self>> {
                        match view { TensorViewMut::$variant(a) => Some(a), _ => None }
                    }
                }
                $crate::__if_role!{plain [$($role)*] { impl Plain for $t {} } else {}}
            } else {
                impl From<Strings<$t>> for Tensor {
                    fn from(strings: Strings<$t>) -> Tensor {
                        Tensor::$variant(strings)
                    }
                }

                impl<'a> From<&'a Strings<$t>> for TensorView<'a> {
                    fn from(strings: &'a Strings<$t>) -> TensorView<'a> {
                        TensorView::$variant(strings)
                    }
                }
            }}
        )*
    };
}

__dtype_table!([define_dtypes] {});

/// Element types that a [`Tensor`] can hold: the types of the dtype table.
pub trait TensorElement: Element {
    /// The dtype of this type.
    const DTYPE: DType;
    /// Wraps an array in a tensor (for `String` and `Vec<u8>`, copies it into a [`Strings`]).
    fn into_tensor(array: ArrayD<Self>) -> Tensor;
    /// The elements of a tensor of this dtype as an array: borrowed for the fixed-width
    /// types, copied out of the [`Strings`] for `String` and `Vec<u8>`.
    fn to_array(tensor: &Tensor) -> Option<CowArray<'_, Self, IxDyn>>;
    /// The elements of a tensor of this dtype as an array, by value.
    fn from_tensor_owned(tensor: Tensor) -> std::result::Result<ArrayD<Self>, Tensor>;
}

/// The table's fixed-width types: each is `Copy`, with no padding, and its `Default` is
/// all-zero bytes, so a copy of its bytes (in units of its alignment) is a copy of its value
/// (what the memory layer's [`Bytes`] states).
pub(crate) trait FixedWidth: ArrayElement + Bytes {
    /// The array inside a mutable view of this dtype.
    fn from_view_mut(view: TensorViewMut<'_>) -> Option<ArrayViewMutD<'_, Self>>;
}

/// The table's `plain` types: every bit pattern is a value (all fixed-width types but
/// `bool`), so bytes read from a file or lent by another library are elements as they lie.
/// The one test of it for every front end (the CLI reads such files in place, the Python
/// package lends such arrays), by `bytemuck`'s casts.
///
/// ```
/// use ndgather::{with_dtype, DType};
/// let bytes = [0u8, 0, 192, 63];
/// let first = |d: DType| with_dtype!(d, plain T =>
///     Some(format!("{:?}", bytemuck::pod_read_unaligned::<T>(&bytes[..std::mem::size_of::<T>()]))),
///     else None);
/// assert_eq!(first(DType::F32).as_deref(), Some("1.5"));
/// assert_eq!(first(DType::Bool), None);
/// ```
pub trait Plain: ArrayElement + Copy + bytemuck::Pod {}

/// Element types that a [`Tensor`] holds as an `ndarray` array: every fixed-width type of
/// the table (the `strings` dtypes are held as [`Strings`]).
pub trait ArrayElement: TensorElement {
    /// The array inside a tensor of this dtype.
    fn from_tensor(tensor: &Tensor) -> Option<&ArrayD<Self>>;
    /// The view inside a tensor view of this dtype.
    fn from_view<'a>(view: &TensorView<'a>) -> Option<ArrayViewD<'a, Self>>;
    /// A tensor view of an array view of this dtype.
    fn into_view(view: ArrayViewD<'_, Self>) -> TensorView<'_>;
}

impl DType {
    /// The dtype of a TensorFlow name.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.iter().copied().find(|d| d.name() == name)
    }

    /// The dtype of a kind and element size in bytes (`(Kind::Float, 4)`: `F32`); `None` for
    /// none, and for the variable-width kinds (strings and bytes).
    ///
    /// ```
    /// use ndgather::{DType, Kind};
    /// assert_eq!(DType::of(Kind::Uint, 2), Some(DType::U16));
    /// assert_eq!(DType::of(Kind::Float, 3), None);
    /// ```
    pub fn of(kind: Kind, size: usize) -> Option<DType> {
        // Each front end asks for every array it is given: the table's kind and size read
        // once, not through two matches per dtype.
        static FACTS: std::sync::OnceLock<Vec<(Kind, Option<usize>, DType)>> =
            std::sync::OnceLock::new();
        let facts = FACTS.get_or_init(|| {
            DType::ALL
                .iter()
                .map(|&d| (d.kind(), d.size(), d))
                .collect()
        });
        facts
            .iter()
            .find(|&&(k, s, _)| k == kind && s == Some(size))
            .map(|&(_, _, d)| d)
    }

    /// The size of one element in bytes; `None` for the variable-width kinds (`string`,
    /// `bytes`), whose elements own their data.
    pub fn size(self) -> Option<usize> {
        with_dtype!(self, fixed T => Some(std::mem::size_of::<T>()), else None)
    }

    /// Whether tensors of this dtype can be indices (the table's `index` role).
    pub fn is_index(self) -> bool {
        with_dtype!(self, index T => true, else false)
    }

    /// Whether the dtype is a fixed-width number (the table's `number` role): what the summing
    /// ops (scatters, gradients) accept.
    pub fn is_number(self) -> bool {
        with_dtype!(self, number T => true, else false)
    }

    /// Whether the dtype is an integer or a real floating-point number (the table's
    /// `ordered` role): what the ops that compare elements (scatter min and max) accept.
    pub fn is_ordered(self) -> bool {
        with_dtype!(self, ordered T => true, else false)
    }

    /// Whether the dtype has a gradient (the table's `grad` role: floating-point and complex).
    pub fn has_grad(self) -> bool {
        with_dtype!(self, grad T => true, else false)
    }

    /// Whether the dtype is a real floating-point type (the table's `real` role).
    pub fn is_real(self) -> bool {
        with_dtype!(self, real T => true, else false)
    }

    /// Whether every bit pattern is a value of the dtype (the table's `plain` role,
    /// [`Plain`]): every fixed-width dtype but `bool`.
    pub fn is_plain(self) -> bool {
        with_dtype!(self, plain T => true, else false)
    }

    /// Whether the dtype is a real floating-point type whose values are `f64`s (the table's
    /// `float` role, `FloatValue`).
    pub fn is_float(self) -> bool {
        with_dtype!(self, float T => true, else false)
    }

    /// The fixed-width dtype of a `.npy` type string as `numpy.save` writes it (with or
    /// without its byte order: `<f4`, `|b1`; ml_dtypes' `<V2`, `<V1`, `<f1`).
    ///
    /// ```
    /// use ndgather::DType;
    /// assert_eq!(DType::from_npy_descr(">i8"), Some(DType::I64));
    /// assert_eq!(DType::from_npy_descr("<V1"), Some(DType::F8E4M3));
    /// assert_eq!(DType::from_npy_descr("<U3"), None); // strings take a width
    /// ```
    pub fn from_npy_descr(descr: &str) -> Option<DType> {
        let code = descr.trim_start_matches(['<', '>', '|', '=']);
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.size().is_some() && d.npy_descr() == code)
    }

    /// The dtype of a safetensors name (`F32`, `F8_E5M2`).
    ///
    /// ```
    /// use ndgather::DType;
    /// assert_eq!(DType::from_safetensors_name("F8_E5M2"), Some(DType::F8E5M2));
    /// ```
    pub fn from_safetensors_name(name: &str) -> Option<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.safetensors_name() == Some(name))
    }

    /// TensorFlow's C++ name of the dtype, as its messages print it (`DataTypeString`):
    /// `half`, `float` and `double` for the IEEE floats, `string` for both string dtypes
    /// (TensorFlow's strings are bytes), the table's name otherwise.
    ///
    /// ```
    /// use ndgather::DType;
    /// assert_eq!(DType::F64.tf_short_name(), "double");
    /// assert_eq!(DType::I32.tf_short_name(), "int32");
    /// ```
    pub fn tf_short_name(self) -> &'static str {
        match self {
            DType::F16 => "half",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::Bytes => "string",
            other => other.name(),
        }
    }

    /// TensorFlow's enum name of the dtype (`DT_FLOAT`, `DT_INT64`), as op signatures in
    /// its messages print it.
    pub fn tf_enum_name(self) -> String {
        format!("DT_{}", self.tf_short_name().to_ascii_uppercase())
    }

    /// The names of the dtypes for which `role` holds, for messages.
    ///
    /// ```
    /// use ndgather::DType;
    /// assert_eq!(DType::names_where(DType::is_real), "float16, bfloat16, float32 or float64");
    /// ```
    pub fn names_where(role: fn(DType) -> bool) -> String {
        let names: Vec<&str> = DType::ALL
            .iter()
            .filter(|d| role(**d))
            .map(|d| d.name())
            .collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::units;
    use crate::{bf16, f16};

    /// The memory layer's write-side proof rests on it (`units::Bytes`): a default element
    /// is all-zero bytes.
    #[test]
    fn every_fixed_width_default_is_zero_bytes() {
        fn zero<T: FixedWidth>() {
            units::with_unit_of!(T, U => {
                let units: Vec<U> = units::of_value(&T::default());
                assert!(units.iter().all(|u| *u == U::default()), "{}", std::any::type_name::<T>());
            })
        }
        for dtype in crate::DType::ALL {
            crate::with_dtype!(*dtype, fixed T => zero::<T>(), else ());
        }
        zero::<bf16>();
        zero::<f16>();
    }
}
