//! Integer types that can index: `i16`, `i32`, `i64` as TensorFlow, and `i8`, the unsigned
//! types and `usize` for Rust and NumPy callers.

use crate::types::dtype::{DType, Tensor, TensorElement, TensorView};
use crate::types::error::{Error, Result};
use ndarray::{ArrayD, ArrayViewD};

mod sealed {
    pub trait Sealed {}
}

/// TensorFlow's limit for an index type: params whose gathered size exceeds `max` are
/// refused, with TensorFlow's message naming `dtype`.
///
/// ```
/// use ndgather::{DType, IndexLimit, IndexType};
/// assert_eq!(i16::TF_LIMIT, Some(IndexLimit { dtype: DType::I16, max: 32767 }));
/// assert_eq!(u32::TF_LIMIT, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IndexLimit {
    /// The index type.
    pub dtype: DType,
    /// Its largest value.
    pub max: u64,
}

/// An integer type usable as indices.
///
/// Sealed: implemented for `i8`, `i16`, `i32`, `i64`, `u8`, `u16`, `u32`, `u64` and `usize`.
pub trait IndexType: Copy + Send + Sync + std::fmt::Debug + 'static + sealed::Sealed {
    /// TensorFlow's limit, for the index types TensorFlow has (`int16`, `int32`, `int64`);
    /// `None` for the others. TensorFlow refuses params whose gathered size exceeds the index
    /// type's range; ndgather does the same for these types.
    const TF_LIMIT: Option<IndexLimit>;

    /// The value, widened without loss.
    fn to_i128(self) -> i128;

    /// The value as a position in `[0, limit)`, or `None` when it is outside.
    fn checked_index(self, limit: usize) -> Option<usize>;
}

macro_rules! impl_index {
    ($($t:ty => $tf:expr, $kind:ident $(as $u:ty)?;)*) => {$(
        impl sealed::Sealed for $t {}
        impl IndexType for $t {
            const TF_LIMIT: Option<IndexLimit> = $tf;
            #[inline]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline]
            fn checked_index(self, limit: usize) -> Option<usize> {
                position!($kind self, limit $(, $u)?)
            }
        }
    )*};
}

/// The body of [`IndexType::checked_index`].
macro_rules! position {
    // One comparison in the index's own width, so that a loop of them vectorises. Read as
    // unsigned, a negative value is at least `cap` = 2^(bits - 1), and the bound is `limit`
    // capped there.
    (signed $i:expr, $limit:expr, $u:ty) => {{
        let cap = <$u>::MAX / 2 + 1;
        let bound = match <$u>::try_from($limit) {
            Ok(l) if l < cap => l,
            _ => cap,
        };
        let u = $i as $u;
        (u < bound).then_some(u as usize)
    }};
    (unsigned $i:expr, $limit:expr) => {
        usize::try_from($i).ok().filter(|&u| u < $limit)
    };
}

impl_index! {
    i8 => None, signed as u8;
    i16 => Some(IndexLimit { dtype: DType::I16, max: i16::MAX as u64 }), signed as u16;
    i32 => Some(IndexLimit { dtype: DType::I32, max: i32::MAX as u64 }), signed as u32;
    i64 => Some(IndexLimit { dtype: DType::I64, max: i64::MAX as u64 }), signed as u64;
    u8 => None, unsigned;
    u16 => None, unsigned;
    u32 => None, unsigned;
    u64 => None, unsigned;
    usize => None, unsigned;
}

/// Indices of an integer dtype that no kernel is compiled for (the dtype table's `index` role
/// less its `kernel` role: `int8`, `uint8`, `uint16`, `uint32`), widened without loss to
/// `int64` or `uint64`; `None` for the others, which run as they are. Neither type has a
/// TensorFlow limit that an array can reach, as these have none.
///
/// # Errors
/// [`Error::OutOfMemory`] where the copy cannot be allocated.
pub(crate) fn widened(indices: &TensorView<'_>) -> Result<Option<Tensor>> {
    Ok(Some(match indices {
        TensorView::I8(a) => wide::<_, i64>(a)?,
        TensorView::U8(a) => wide::<_, u64>(a)?,
        TensorView::U16(a) => wide::<_, u64>(a)?,
        TensorView::U32(a) => wide::<_, u64>(a)?,
        _ => return Ok(None),
    }))
}

/// `a`'s values as `W`, row-major, in memory allocated fallibly.
fn wide<N: Copy, W: TensorElement + From<N>>(a: &ArrayViewD<'_, N>) -> Result<Tensor> {
    let mut values = Vec::new();
    values
        .try_reserve_exact(a.len())
        .map_err(|_| Error::OutOfMemory {
            bytes: a.len().saturating_mul(std::mem::size_of::<W>()),
        })?;
    values.extend(a.iter().map(|&v| W::from(v)));
    let array = ArrayD::from_shape_vec(a.raw_dim(), values)
        .map_err(|_| Error::Internal("a view's shape holds its elements"))?;
    Ok(W::into_tensor(array))
}

/// `with_tensor!(TensorView, view, index i => body, else dtype => fallback)` with the
/// indices' kernel type: `i` is the view itself, or its [`widened`] copy, so that `body` is
/// compiled for the four `kernel` index types only. `fallback` sees the caller's dtype.
macro_rules! with_indices {
    ($view:expr, $i:ident => $body:expr, else $dtype:ident => $fallback:expr) => {{
        let original: &$crate::TensorView<'_> = $view;
        match $crate::types::index::widened(original) {
            Err(e) => return Err(e),
            Ok(Some($crate::Tensor::I64(wide))) => {
                let $i = &wide.view();
                $body
            }
            Ok(Some($crate::Tensor::U64(wide))) => {
                let $i = &wide.view();
                $body
            }
            _ => $crate::with_tensor!(TensorView, original, kernel $i => $body,
                else $dtype => $fallback),
        }
    }};
}
pub(crate) use with_indices;

/// Defines [`BadIndices`], its list [`BadIndices::ALL`] and its names from one list, so a new
/// policy cannot be left out of the list that the CLI, the Python package, the property tests
/// and the fuzz input iterate over.
macro_rules! policies {
    ($(#[$doc:meta])* pub enum BadIndices { $($(#[$meta:meta])* $variant:ident = $name:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum BadIndices {
            $($(#[$meta])* $variant,)*
        }

        impl BadIndices {
            /// Every policy, in the order of the enum.
            pub const ALL: &'static [BadIndices] = &[$(BadIndices::$variant),*];

            /// The policy's name as [`BadIndices::from_name`] reads it, in lower case
            /// (`"error"`, `"ignore"`, `"clamp"`, `"negative"`, `"wrap"`, `"fill"`): the spelling of the CLI
            /// and the Python package.
            pub fn name(self) -> &'static str {
                match self { $(BadIndices::$variant => $name),* }
            }
        }
    };
}

policies! {
    /// What to do with an index outside `[0, dim)`.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndgather::{BadIndices, GatherOptions};
    ///
    /// let params = array![10, 11, 12];
    /// let indices = array![2, -1, 7];
    /// let ignore = GatherOptions::new().bad_indices(BadIndices::Ignore);
    /// assert_eq!(ignore.gather(&params, &indices).unwrap(), array![12, 0, 0].into_dyn());
    /// let clamp = GatherOptions::new().bad_indices(BadIndices::Clamp);
    /// assert_eq!(clamp.gather(&params, &indices).unwrap(), array![12, 10, 12].into_dyn());
    /// let negative = GatherOptions::new().bad_indices(BadIndices::Negative);
    /// assert_eq!(
    ///     negative.gather(&params, &indices).unwrap_err().to_string(),
    ///     "indices[2] = 7 is not in [0, 3)"
    /// );
    /// let wrap = GatherOptions::new().bad_indices(BadIndices::Wrap);
    /// assert_eq!(wrap.gather(&params, &indices).unwrap(), array![12, 12, 11].into_dyn());
    /// ```
    pub enum BadIndices {
        /// Report the first bad index in row-major order of `indices` (TensorFlow on the CPU).
        #[default]
        Error = "error",
        /// The slice of a bad index is filled with `T::default()` (zero, `false`, empty string):
        /// TensorFlow on the GPU, and GatherNd's `bad_indices_policy="IGNORE"`.
        Ignore = "ignore",
        /// Clamp each index into `[0, dim - 1]` (XLA's behaviour). An index into an empty
        /// dimension is still an error.
        Clamp = "clamp",
        /// Negative indices count from the end, as in NumPy's indexing and the array API
        /// standard: `-dim` is the first, and values still outside are an error.
        Negative = "negative",
        /// Every index is taken modulo the dimension (`np.take(.., mode="wrap")`, JAX's
        /// `mode="wrap"`): `-1` is the last, `dim` the first. An index into an empty
        /// dimension is still an error.
        Wrap = "wrap",
        /// The slice of a bad index is filled with a fill value (JAX's `mode="fill"`): the one
        /// set with the options' `fill_value`, or by default JAX's: NaN for floating and complex
        /// types, the minimum of signed integers, the maximum of unsigned ones, `true` for bool,
        /// the empty string (see [`crate::FillValue`]).
        Fill = "fill",
    }
}

impl BadIndices {
    /// Maps index `i` of a dimension of size `limit` to a position, or `None` for a bad index
    /// (an error under `Error`, `Clamp`, `Negative` and `Wrap`; a default-filled slice under
    /// `Ignore`).
    #[inline]
    pub fn resolve<I: IndexType>(self, i: I, limit: usize) -> Option<usize> {
        match i.checked_index(limit) {
            Some(u) => Some(u),
            None => self.resolve_bad(i, limit),
        }
    }

    /// [`Self::resolve`] of an index outside `[0, limit)`. Out of line, so that a copy loop
    /// holds one comparison per index and no dispatch on the policy (which, inlined, became
    /// a jump through a table for every index vector of gather_nd).
    #[cold]
    #[inline(never)]
    fn resolve_bad<I: IndexType>(self, i: I, limit: usize) -> Option<usize> {
        match self {
            BadIndices::Error | BadIndices::Ignore | BadIndices::Fill => None,
            BadIndices::Clamp => {
                if limit == 0 {
                    None
                } else if i.to_i128() < 0 {
                    Some(0)
                } else {
                    Some(limit - 1)
                }
            }
            BadIndices::Negative => {
                let v = i.to_i128();
                let w = v + limit as i128;
                if v < 0 && w >= 0 {
                    usize::try_from(w).ok()
                } else {
                    None
                }
            }
            BadIndices::Wrap => {
                if limit == 0 {
                    None
                } else {
                    usize::try_from(i.to_i128().rem_euclid(limit as i128)).ok()
                }
            }
        }
    }

    /// Whether a bad index is an error (all but `Ignore` and `Fill`); exhaustive, so a new
    /// policy must say.
    #[inline]
    pub fn errors(self) -> bool {
        match self {
            BadIndices::Error | BadIndices::Clamp | BadIndices::Negative | BadIndices::Wrap => true,
            BadIndices::Ignore | BadIndices::Fill => false,
        }
    }

    /// TensorFlow's `bad_indices_policy` attribute: `""`/`"DEFAULT"`/`"ERROR"` → `Error`,
    /// `"IGNORE"` → `Ignore`; ndgather's own `"CLAMP"`, `"NEGATIVE"`, `"WRAP"` and `"FILL"`.
    /// Case-insensitive.
    pub fn from_name(name: &str) -> Option<BadIndices> {
        if name.is_empty() || name.eq_ignore_ascii_case("DEFAULT") {
            return Some(BadIndices::Error);
        }
        BadIndices::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::IndexType;
    use proptest::prelude::*;

    /// The obvious definition, in a width that holds every value and limit.
    pub(crate) fn reference<I: IndexType>(i: I, limit: usize) -> Option<usize> {
        let v = i.to_i128();
        (v >= 0 && v < limit as i128).then_some(v as usize)
    }

    /// Values near each edge of the type's range and of its non-negative range.
    pub(crate) fn edges<I: IndexType + TryFrom<i128>>() -> Vec<I> {
        let candidates = [
            -(1i128 << 63),
            -(1i128 << 31) - 1,
            -(1 << 31),
            -129,
            -128,
            -1,
            0,
            1,
            126,
            127,
            128,
            255,
            256,
            32767,
            32768,
            65535,
            (1 << 31) - 1,
            1 << 31,
            (1 << 32) - 1,
            1 << 32,
            (1 << 63) - 1,
            1 << 63,
            (1 << 64) - 1,
        ];
        candidates
            .into_iter()
            .filter_map(|v| I::try_from(v).ok())
            .collect()
    }

    fn agrees_on_edges<I: IndexType + TryFrom<i128>>() {
        let values = edges::<I>();
        let limits = edges::<u64>()
            .into_iter()
            .filter_map(|l| usize::try_from(l).ok())
            .chain([usize::MAX, usize::MAX - 1]);
        for limit in limits {
            for &i in &values {
                assert_eq!(
                    i.checked_index(limit),
                    reference(i, limit),
                    "{i:?} < {limit}"
                );
            }
        }
    }

    #[test]
    fn checked_index_agrees_with_the_wide_comparison_at_every_edge() {
        agrees_on_edges::<i8>();
        agrees_on_edges::<i16>();
        agrees_on_edges::<i32>();
        agrees_on_edges::<i64>();
        agrees_on_edges::<u8>();
        agrees_on_edges::<u16>();
        agrees_on_edges::<u32>();
        agrees_on_edges::<u64>();
        agrees_on_edges::<usize>();
    }

    proptest! {
        #[test]
        fn checked_index_agrees_with_the_wide_comparison(
            v in any::<i64>(),
            small in any::<i16>(),
            limit in prop_oneof![0usize..70_000, any::<usize>()],
        ) {
            prop_assert_eq!(v.checked_index(limit), reference(v, limit));
            prop_assert_eq!((v as u64).checked_index(limit), reference(v as u64, limit));
            prop_assert_eq!((v as u32).checked_index(limit), reference(v as u32, limit));
            prop_assert_eq!((v as i32).checked_index(limit), reference(v as i32, limit));
            prop_assert_eq!(small.checked_index(limit), reference(small, limit));
            prop_assert_eq!((small as u16).checked_index(limit), reference(small as u16, limit));
            prop_assert_eq!((small as i8).checked_index(limit), reference(small as i8, limit));
            prop_assert_eq!((small as u8).checked_index(limit), reference(small as u8, limit));
        }
    }
}
