//! The fill policy's pass ([`crate::BadIndices::Fill`], JAX's `mode="fill"`): a call's fill
//! record, and the pass that writes it over the slices of bad indices after a copy has
//! default-filled them. What a fill value is, and its element in each type, is the dtype
//! table's (`types::value`).

use crate::mem::output::Slot;
use crate::mem::units;
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::dtype::DType;
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use crate::types::value::{refuse, FillElement, FillValue};
use crate::with_dtype;
use std::any::Any;

impl FillValue {
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
    /// [`Error::FillValue`] when the value does not fit `T`.
    pub fn element<T: Clone + Default + 'static>(self) -> Result<T> {
        element(self)
    }
}

/// The fill element of type `T` for `value`: the table's, by `T`'s row; for a type outside
/// the table only its `Default`.
///
/// # Errors
/// [`Error::FillValue`] when the value does not fit the type (an integer out of its
/// range, a fraction for an integer type, bytes of another size).
pub(crate) fn element<T: 'static + Default>(value: FillValue) -> Result<T> {
    let Some(dtype) = DType::of_type::<T>() else {
        return match value {
            FillValue::Default => Ok(T::default()),
            other => Err(refuse::<T>(other)),
        };
    };
    crate::with_dtype!(dtype, U => {
        let v = <U as FillElement>::fill_element(value)?;
        (Box::new(v) as Box<dyn Any>)
            .downcast::<T>()
            .map(|b| *b)
            .map_err(|_| Error::Internal("a dtype's type is the type it was found by"))
    })
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
    /// [`Error::FillValue`] when the value does not fit the dtype.
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
    // An output of empty slices has nothing to fill, however many outer rows it has: the
    // loop below would walk all of them for every bad index.
    if inner == 0 || out.is_empty() {
        return;
    }
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
                Kind::Float | Kind::BrainFloat | Kind::Float8 | Kind::Complex => {
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
