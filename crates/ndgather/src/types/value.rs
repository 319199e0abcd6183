//! Where an element's value matters to a gather (which otherwise moves its bytes): fill
//! values and their element in each type (by the dtype table's kind column), and the
//! floating-point types' values as `f64`, for printing and fill values. One impl per
//! floating-point type of the dtype table; the table's `float` role names them, and a row
//! of that role without an impl here fails to compile.

use crate::types::error::{Error, Result};
use crate::{bf16, f16, F8E4M3, F8E5M2};
use num_complex::Complex;

/// The value [`crate::BadIndices::Fill`] writes where an index is bad.
///
/// ```
/// use ndarray::array;
/// use ndgather::{BadIndices, FillValue, GatherOptions};
///
/// let fill = GatherOptions::new().bad_indices(BadIndices::Fill);
/// let out = fill.gather(&array![1.5f32, 2.5], &array![1, 9]).unwrap();
/// assert!(out[1].is_nan()); // JAX's default for floats
/// let minus_one = fill.fill_value(FillValue::Int(-1));
/// assert_eq!(minus_one.gather(&array![10i32, 20], &array![1, 9]).unwrap(), array![20, -1].into_dyn());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FillValue {
    /// JAX's default for the element type: NaN for floating and complex types (NaN + 0i),
    /// the minimum of signed integers, the maximum of unsigned ones, `true` for bool, the
    /// empty string or byte string; `Default::default()` for types ndgather does not know.
    #[default]
    Default,
    /// A bool.
    Bool(bool),
    /// An integer (converted exactly, or refused when it does not fit the element type).
    Int(i128),
    /// A floating-point number, as the bits of an `f64` (see [`FillValue::float`]).
    Float(u64),
    /// The bytes of one element (at most 16), in the machine's byte order: for callers that
    /// move elements as records of bytes or units (bindings, files).
    Bytes {
        /// The bytes, the first `len` used.
        bytes: [u8; 16],
        /// How many bytes.
        len: u8,
    },
}

impl FillValue {
    /// A floating-point fill value.
    pub fn float(v: f64) -> FillValue {
        FillValue::Float(v.to_bits())
    }

    /// The bytes of one element, or `None` for more than 16.
    pub fn bytes(b: &[u8]) -> Option<FillValue> {
        let mut bytes = [0u8; 16];
        bytes.get_mut(..b.len())?.copy_from_slice(b);
        Some(FillValue::Bytes {
            bytes,
            len: b.len() as u8,
        })
    }

    pub(crate) fn describe(self) -> String {
        match self {
            FillValue::Default => "the default".to_string(),
            FillValue::Bool(b) => b.to_string(),
            FillValue::Int(i) => i.to_string(),
            FillValue::Float(bits) => f64::from_bits(bits).to_string(),
            FillValue::Bytes { len, .. } => format!("{len} bytes"),
        }
    }
}

/// The fill element of a type of `kind` (JAX's defaults: the minimum of signed integers, the
/// maximum of unsigned ones, NaN for floats).
macro_rules! fill_kind {
    (Bool, $t:ty, $v:expr) => {
        bool_fill($v)
    };
    (Int, $t:ty, $v:expr) => {
        int_fill::<$t>($v, <$t>::MIN)
    };
    (Uint, $t:ty, $v:expr) => {
        int_fill::<$t>($v, <$t>::MAX)
    };
    (Complex, $t:ty, $v:expr) => {
        complex_fill($v)
    };
    (String, $t:ty, $v:expr) => {
        string_fill::<$t>($v)
    };
    (Bytes, $t:ty, $v:expr) => {
        string_fill::<$t>($v)
    };
    ($float:ident, $t:ty, $v:expr) => {
        float_fill::<$t>($v)
    };
}

/// The fill element of every row of the table, by its kind.
macro_rules! impl_fill_elements {
    ({} $($v:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($r:ident)*];)*) => {$(
        impl FillElement for $t {
            fn fill_element(value: FillValue) -> Result<Self> {
                fill_kind!($kind, $t, value)
            }
        }
    )*};
}
crate::__dtype_table!([impl_fill_elements] {});

/// A table type's fill element: implemented for every row by the table, by its kind.
pub(crate) trait FillElement: Sized {
    /// The element `value` fills with (JAX's default for [`FillValue::Default`]).
    fn fill_element(value: FillValue) -> Result<Self>;
}

/// The error for a fill value that `T` cannot hold.
pub(crate) fn refuse<T>(value: FillValue) -> Error {
    Error::FillValue {
        value: value.describe(),
        dtype: short_name(std::any::type_name::<T>()),
    }
}

/// A type's name without its path: `f16`, `i32`, `String`, `Complex<f32>`.
fn short_name(full: &str) -> String {
    full.split('<')
        .map(|part| part.rsplit("::").next().unwrap_or(part))
        .collect::<Vec<_>>()
        .join("<")
}

/// A plain type's element from its bytes, in the machine's order.
fn from_bytes<T: bytemuck::Pod>(value: FillValue) -> Result<T> {
    match value {
        FillValue::Bytes { bytes, len } => {
            bytemuck::try_pod_read_unaligned(&bytes[..usize::from(len)])
                .map_err(|_| refuse::<T>(value))
        }
        _ => Err(refuse::<T>(value)),
    }
}

/// The fill element of `bool`: `true` by default, as JAX.
pub(crate) fn bool_fill(value: FillValue) -> Result<bool> {
    match value {
        FillValue::Default | FillValue::Bool(true) | FillValue::Int(1) => Ok(true),
        FillValue::Bool(false) | FillValue::Int(0) => Ok(false),
        FillValue::Bytes { bytes, len: 1 } if bytes[0] <= 1 => Ok(bytes[0] == 1),
        _ => Err(refuse::<bool>(value)),
    }
}

/// The fill element of an integer type, `default` (its minimum or maximum, as JAX) unless
/// given; a value it cannot hold exactly is refused.
pub(crate) fn int_fill<T: bytemuck::Pod + TryFrom<i128>>(
    value: FillValue,
    default: T,
) -> Result<T> {
    let v = match value {
        FillValue::Default => return Ok(default),
        FillValue::Bool(b) => i128::from(b),
        FillValue::Int(i) => i,
        FillValue::Float(bits) => {
            let f = f64::from_bits(bits);
            if f.fract() != 0.0 || !f.is_finite() || f.abs() > 1e38 {
                return Err(refuse::<T>(value));
            }
            f as i128
        }
        FillValue::Bytes { .. } => return from_bytes(value),
    };
    T::try_from(v).map_err(|_| refuse::<T>(value))
}

/// The `f64` a fill value stands for in a floating-point type (NaN by default, as JAX).
fn float_of(value: FillValue) -> Option<f64> {
    match value {
        FillValue::Default => Some(f64::NAN),
        FillValue::Bool(b) => Some(f64::from(u8::from(b))),
        FillValue::Int(i) => Some(i as f64),
        FillValue::Float(bits) => Some(f64::from_bits(bits)),
        FillValue::Bytes { .. } => None,
    }
}

/// The fill element of a floating-point type, rounded to it.
pub(crate) fn float_fill<T: FloatValue + bytemuck::Pod>(value: FillValue) -> Result<T> {
    float_of(value).map_or_else(|| from_bytes(value), |x| Ok(T::from_f64(x)))
}

/// The fill element of a complex type: the real part rounded to the part's type, `+0i`.
pub(crate) fn complex_fill<P: FloatValue + bytemuck::Zeroable>(
    value: FillValue,
) -> Result<Complex<P>>
where
    Complex<P>: bytemuck::Pod,
{
    float_of(value).map_or_else(
        || from_bytes(value),
        |x| Ok(Complex::new(P::from_f64(x), P::from_f64(0.0))),
    )
}

/// The fill element of a string type: only the default, the empty string.
pub(crate) fn string_fill<T: Default>(value: FillValue) -> Result<T> {
    match value {
        FillValue::Default => Ok(T::default()),
        other => Err(refuse::<T>(other)),
    }
}

/// A real floating-point element type whose every value is an `f64`.
///
/// ```
/// use ndgather::{FloatValue, F8E4M3};
/// let near = |x| <F8E4M3 as FloatValue>::from_f64(x).to_f64();
/// assert_eq!(near(1.6), 1.625);
/// assert!(near(1000.0).is_nan()); // as ml_dtypes: float8_e4m3fn has no infinity
/// assert_eq!(<f32 as FloatValue>::PRECISION, 6);
/// ```
pub trait FloatValue: Copy + Send + Sync + 'static {
    /// NumPy's (or ml_dtypes') `finfo(dtype).precision`: the decimal digits the type carries.
    const PRECISION: i32;
    /// The value, exactly.
    fn to_f64(self) -> f64;
    /// The value nearest `x` (ties to even), as NumPy and ml_dtypes cast: a value past the
    /// largest finite one is infinite, or NaN in a type without infinities.
    fn from_f64(x: f64) -> Self;
    /// The bits of the value.
    fn to_bits(self) -> u64;
    /// The value of `bits` (the low bits of the type's width).
    fn from_bits(bits: u64) -> Self;
}

impl FloatValue for f64 {
    const PRECISION: i32 = 15;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

/// A `FloatValue` impl for a type with `from_f64` and `to_f64` of its own, bits of `$bits`.
macro_rules! float_value {
    ($t:ty, $bits:ty, $precision:expr, $from:expr) => {
        impl FloatValue for $t {
            const PRECISION: i32 = $precision;
            fn to_f64(self) -> f64 {
                self.into()
            }
            fn from_f64(x: f64) -> Self {
                $from(x)
            }
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self).into()
            }
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
        }
    };
}
float_value!(f32, u32, 6, |x| x as f32);
float_value!(f16, u16, 3, f16::from_f64);
float_value!(bf16, u16, 2, bf16::from_f64);

/// A `FloatValue` impl for an 8-bit float: the `float8` crate's rounding, which saturates
/// where ml_dtypes overflows (to the bits `$overflow`, with the sign) past the midpoint `$limit`
/// between the largest finite value and the next power (`$tie`: whether the midpoint
/// itself overflows, ties going to the even one).
macro_rules! float8_value {
    ($t:ty, $precision:expr, $limit:expr, $tie:expr, $overflow:expr) => {
        impl FloatValue for $t {
            const PRECISION: i32 = $precision;
            fn to_f64(self) -> f64 {
                <$t>::to_f64(&self)
            }
            fn from_f64(x: f64) -> Self {
                let a = x.abs();
                if a > $limit || (a == $limit && $tie) {
                    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
                    return <$t>::from_bits($overflow | sign);
                }
                <$t>::from_f64(x)
            }
            fn to_bits(self) -> u64 {
                <$t>::to_bits(&self).into()
            }
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as u8)
            }
        }
    };
}
// 448 (0x7e, even) is float8_e4m3fn's largest value, 480 would be next, and 0x7f is its
// NaN; 57344 (0x7b, odd) is float8_e5m2's, then infinity (0x7c) at 65536. (The `float8`
// crate's `INFINITY` constants are the largest finite values.)
float8_value!(F8E4M3, 1, 464.0, false, 0x7f);
float8_value!(F8E5M2, 1, 61440.0, true, 0x7c);

/// What a front end needs to print a floating-point dtype's values as NumPy does: its
/// precision and its rounding, as functions on `f64` ([`crate::DType::float_info`]).
#[derive(Debug, Clone, Copy)]
pub struct FloatInfo {
    /// NumPy's `finfo(dtype).precision`.
    pub precision: i32,
    /// Whether the type is `float64` itself (Rust's shortest digits are already its own).
    pub is_f64: bool,
    /// `x` rounded to the type.
    pub round: fn(f64) -> f64,
    /// The bits of `x` (a value of the type), whose neighbours are its neighbours.
    pub bits: fn(f64) -> u64,
    /// The value of `bits`.
    pub from_bits: fn(u64) -> f64,
}

impl crate::DType {
    /// How a front end prints the dtype's values, for the `float` role.
    pub fn float_info(self) -> Option<FloatInfo> {
        crate::with_dtype!(self, float T => Some(FloatInfo::of::<T>()), else None)
    }
}

impl FloatInfo {
    /// The format of `T`.
    pub fn of<T: FloatValue>() -> FloatInfo {
        FloatInfo {
            precision: T::PRECISION,
            is_f64: std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>(),
            round: |x| T::from_f64(x).to_f64(),
            bits: |x| T::from_f64(x).to_bits(),
            from_bits: |b| T::from_bits(b).to_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float8_overflow_as_ml_dtypes() {
        // ml_dtypes: float8_e4m3fn has no infinity (NaN past 464), float8_e5m2 does.
        fn e4(x: f64) -> u64 {
            FloatValue::to_bits(<F8E4M3 as FloatValue>::from_f64(x))
        }
        fn e5(x: f64) -> u64 {
            FloatValue::to_bits(<F8E5M2 as FloatValue>::from_f64(x))
        }
        assert_eq!(
            (e4(464.0), e4(464.5), e4(-1e9), e4(f64::INFINITY)),
            (0x7e, 0x7f, 0xff, 0x7f)
        );
        assert_eq!((e5(61439.0), e5(61440.0), e5(-1e9)), (0x7b, 0x7c, 0xfc));
        assert!(<F8E5M2 as FloatValue>::from_f64(f64::NAN).to_f64().is_nan());
    }

    #[test]
    fn infos_step_between_neighbours() {
        let f = FloatInfo::of::<f16>();
        assert_eq!((f.from_bits)((f.bits)(1.0) + 1), 1.0 + f64::powi(2.0, -10));
        assert_eq!((f.round)(1.0 + 1e-9), 1.0);
        assert!(FloatInfo::of::<f64>().is_f64 && !f.is_f64);
    }
}
