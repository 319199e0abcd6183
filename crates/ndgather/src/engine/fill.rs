//! The fill policy's values ([`crate::BadIndices::Fill`], JAX's `mode="fill"`): what a fill
//! value is, how it becomes an element of each type, and the pass that writes it over the
//! slices of bad indices after a copy has default-filled them.

use crate::engine::mem::output::Slot;
use crate::engine::mem::units;
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::dtype::DType;
use crate::types::error::{GatherError, Result};
use crate::types::index::{BadIndices, IndexType};
use crate::with_dtype;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::any::Any;

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

    /// The element of type `T` this value fills with (JAX's default for
    /// [`FillValue::Default`]).
    ///
    /// ```
    /// use ndgather::FillValue;
    /// assert_eq!(FillValue::Default.element::<i16>().unwrap(), i16::MIN);
    /// assert_eq!(FillValue::float(0.5).element::<f32>().unwrap(), 0.5);
    /// assert!(FillValue::Int(256).element::<u8>().is_err());
    /// ```
    ///
    /// # Errors
    /// [`GatherError::FillValue`] when the value does not fit `T`.
    pub fn element<T: Clone + Default + 'static>(self) -> Result<T> {
        element(self)
    }

    fn describe(self) -> String {
        match self {
            FillValue::Default => "the default".to_string(),
            FillValue::Bool(b) => b.to_string(),
            FillValue::Int(i) => i.to_string(),
            FillValue::Float(bits) => f64::from_bits(bits).to_string(),
            FillValue::Bytes { len, .. } => format!("{len} bytes"),
        }
    }
}

/// The error for a fill value given as bytes that do not make whole elements of `T`.
pub(crate) fn refuse_bytes<T>(value: FillValue) -> GatherError {
    refuse::<T>(value)
}

fn refuse<T>(value: FillValue) -> GatherError {
    GatherError::FillValue {
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

/// `v` as `T` when `T` is `U` (`None` otherwise).
fn cast<T: 'static, U: 'static>(v: U) -> Option<T> {
    (Box::new(v) as Box<dyn Any>)
        .downcast::<T>()
        .ok()
        .map(|b| *b)
}

fn float<T: 'static, F: 'static>(value: FillValue, from: fn(f64) -> F) -> Option<Result<T>> {
    let v = match value {
        FillValue::Default => f64::NAN,
        FillValue::Bool(b) => f64::from(u8::from(b)),
        FillValue::Int(i) => i as f64,
        FillValue::Float(bits) => f64::from_bits(bits),
        FillValue::Bytes { .. } => return None,
    };
    cast::<T, F>(from(v)).map(Ok)
}

fn integer<T: 'static, N: 'static + TryFrom<i128>>(
    value: FillValue,
    default: N,
) -> Option<Result<T>> {
    let v = match value {
        FillValue::Default => return cast::<T, N>(default).map(Ok),
        FillValue::Bool(b) => i128::from(b),
        FillValue::Int(i) => i,
        FillValue::Float(bits) => {
            let f = f64::from_bits(bits);
            if f.fract() != 0.0 || !f.is_finite() || f.abs() > 1e38 {
                return cast::<T, N>(default).map(|_| Err(refuse::<N>(value)));
            }
            f as i128
        }
        FillValue::Bytes { .. } => return None,
    };
    let n = N::try_from(v).ok();
    cast::<T, N>(default).map(|_| n.and_then(cast::<T, N>).ok_or_else(|| refuse::<N>(value)))
}

fn from_bytes<T: 'static>(value: FillValue) -> Option<Result<T>> {
    let FillValue::Bytes { bytes, len } = value else {
        return None;
    };
    let b = &bytes[..usize::from(len)];
    macro_rules! unit {
        ($($t:ty),*) => {$(
            if let Some(v) = <[u8; std::mem::size_of::<$t>()]>::try_from(b).ok().map(<$t>::from_ne_bytes) {
                if let Some(v) = cast::<T, $t>(v) {
                    return Some(Ok(v));
                }
            }
        )*};
    }
    unit!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
    None
}

/// One attempt at making the fill element: `None` when `T` is not the attempt's type.
type Try<T> = fn(FillValue) -> Option<Result<T>>;

/// The fill element of type `T` for `value`.
///
/// # Errors
/// [`GatherError::FillValue`] when the value does not fit the type (an integer out of its
/// range, a fraction for an integer type, bytes of another size).
pub(crate) fn element<T: Clone + Default + 'static>(value: FillValue) -> Result<T> {
    if let Some(v) = from_bytes::<T>(value) {
        return v;
    }
    if matches!(value, FillValue::Bytes { .. }) {
        return Err(refuse::<T>(value));
    }
    let tries: [Try<T>; 19] = [
        |v| float::<T, f32>(v, |x| x as f32),
        |v| float::<T, f64>(v, |x| x),
        |v| float::<T, f16>(v, f16::from_f64),
        |v| float::<T, bf16>(v, bf16::from_f64),
        |v| float::<T, Complex32>(v, |x| Complex32::new(x as f32, 0.0)),
        |v| float::<T, Complex64>(v, |x| Complex64::new(x, 0.0)),
        |v| integer::<T, i8>(v, i8::MIN),
        |v| integer::<T, i16>(v, i16::MIN),
        |v| integer::<T, i32>(v, i32::MIN),
        |v| integer::<T, i64>(v, i64::MIN),
        |v| integer::<T, isize>(v, isize::MIN),
        |v| integer::<T, u8>(v, u8::MAX),
        |v| integer::<T, u16>(v, u16::MAX),
        |v| integer::<T, u32>(v, u32::MAX),
        |v| integer::<T, u64>(v, u64::MAX),
        |v| integer::<T, usize>(v, usize::MAX),
        |v| match v {
            FillValue::Default => cast::<T, bool>(true).map(Ok),
            FillValue::Bool(b) => cast::<T, bool>(b).map(Ok),
            FillValue::Int(i @ (0 | 1)) => cast::<T, bool>(i == 1).map(Ok),
            _ => cast::<T, bool>(true).map(|_| Err(refuse::<bool>(v))),
        },
        |v| {
            cast::<T, String>(String::new()).map(|s| match v {
                FillValue::Default => Ok(s),
                _ => Err(refuse::<String>(v)),
            })
        },
        |v| {
            cast::<T, Vec<u8>>(Vec::new()).map(|s| match v {
                FillValue::Default => Ok(s),
                _ => Err(refuse::<Vec<u8>>(v)),
            })
        },
    ];
    for f in tries {
        if let Some(v) = f(value) {
            return v;
        }
    }
    match value {
        FillValue::Default => Ok(T::default()),
        other => Err(refuse::<T>(other)),
    }
}

impl DType {
    /// The bytes (in the machine's order) of the element that `value` fills with in a tensor
    /// of this dtype: JAX's default for [`FillValue::Default`]. `None` for the string
    /// dtypes, whose fill is the empty string. The dtype table's fill fact, for front ends
    /// that move elements as bytes.
    ///
    /// ```
    /// use ndgather::{DType, FillValue};
    /// assert_eq!(DType::I16.fill_bytes(FillValue::Default).unwrap(), Some(i16::MIN.to_ne_bytes().to_vec()));
    /// assert_eq!(DType::F32.fill_bytes(FillValue::float(1.5)).unwrap(), Some(1.5f32.to_ne_bytes().to_vec()));
    /// assert_eq!(DType::String.fill_bytes(FillValue::Default).unwrap(), None);
    /// assert!(DType::U8.fill_bytes(FillValue::Int(-1)).is_err());
    /// ```
    ///
    /// # Errors
    /// [`GatherError::FillValue`] when the value does not fit the dtype.
    pub fn fill_bytes(self, value: FillValue) -> Result<Option<Vec<u8>>> {
        with_dtype!(self, fixed T => {
            let element: T = element(value)?;
            Ok(Some(units::of_value::<T, u8>(&element)))
        }, else Ok(None))
    }
}

/// The fill record of a call: `record` copies of the fill element (or, for bytes, the
/// element's units), or `None` when the policy is not `Fill`.
pub(crate) fn record<T: Clone + Default + 'static>(
    policy: BadIndices,
    value: FillValue,
    record: usize,
) -> Result<Option<Vec<T>>> {
    if policy != BadIndices::Fill {
        return Ok(None);
    }
    if let FillValue::Bytes { bytes, len } = value {
        let unit = std::mem::size_of::<T>().max(1);
        if usize::from(len) != unit * record {
            return Err(refuse::<T>(value));
        }
        let units = bytes[..usize::from(len)]
            .chunks(unit)
            .map(|b| element::<T>(FillValue::bytes(b).unwrap_or_default()))
            .collect::<Result<Vec<T>>>()?;
        return Ok(Some(units));
    }
    Ok(Some(vec![element::<T>(value)?; record]))
}

fn put_record<T, O: Slot<T>>(slots: &mut [O], fill: &[T]) {
    for (slot, v) in slots.iter_mut().zip(fill.iter().cycle()) {
        slot.put(v);
    }
}

/// Overwrites the slices of bad indices of a gather's output (`[batch, outer, n, inner]`,
/// row-major, `inner` including any record width) with `fill`.
pub(crate) fn gather<T, I: IndexType, O: Slot<T>>(
    indices: &[I],
    plan: &GatherPlan,
    policy: BadIndices,
    fill: &[T],
    out: &mut [O],
) {
    let (n, inner) = (plan.n, plan.inner);
    for (k, &i) in indices.iter().enumerate() {
        if policy.resolve(i, plan.gathered).is_some() {
            continue;
        }
        let (b, j) = (k / n.max(1), k % n.max(1));
        for o in 0..plan.outer {
            let at = ((b * plan.outer + o) * n + j) * inner;
            if let Some(slice) = out.get_mut(at..at + inner) {
                put_record(slice, fill);
            }
        }
    }
}

/// Overwrites the slices of bad index vectors of a gather_nd's output with `fill`.
pub(crate) fn gather_nd<T, I: IndexType, O: Slot<T>>(
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
    fill: &[T],
    out: &mut [O],
) {
    let depth = plan.depth.max(1);
    for (v, vector) in indices.chunks_exact(depth).enumerate() {
        let bad = vector
            .iter()
            .zip(&plan.dims)
            .any(|(&i, &dim)| policy.resolve(i, dim).is_none());
        if bad {
            let at = v * plan.slice;
            if let Some(slice) = out.get_mut(at..at + plan.slice) {
                put_record(slice, fill);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    /// Every dtype of the table has JAX's default fill by its kind: a dtype added to the
    /// table that `element` does not know fills with zeros and fails here.
    #[test]
    fn every_dtype_has_jax_default_fill() {
        for &dtype in DType::ALL {
            let bytes = dtype.fill_bytes(FillValue::Default).unwrap();
            let Some(bytes) = bytes else {
                assert!(
                    matches!(dtype.kind(), Kind::String | Kind::Bytes),
                    "{dtype}"
                );
                continue;
            };
            assert_eq!(Some(bytes.len()), dtype.size(), "{dtype}");
            let want_nan = DType::F64.fill_bytes(FillValue::float(f64::NAN)).unwrap();
            let signed_min = |n: usize| {
                let mut b = vec![0u8; n];
                b[n - 1] = 0x80;
                b
            };
            match dtype.kind() {
                Kind::Bool => assert_eq!(bytes, [1], "{dtype}"),
                Kind::Int if cfg!(target_endian = "little") => {
                    assert_eq!(bytes, signed_min(bytes.len()), "{dtype}")
                }
                Kind::Uint => assert!(bytes.iter().all(|&b| b == 0xFF), "{dtype}"),
                Kind::Float | Kind::BrainFloat | Kind::Complex => {
                    // NaN (and NaN + 0i): not equal to itself, as the table's conversion
                    // from f64's NaN gives it.
                    let again = dtype.fill_bytes(FillValue::float(f64::NAN)).unwrap();
                    assert_eq!(Some(bytes.clone()), again, "{dtype}");
                    assert!(
                        bytes.iter().any(|&b| b != 0),
                        "{dtype}: {bytes:?} {want_nan:?}"
                    );
                }
                _ => {}
            }
        }
    }
}
