//! Integer types that can index: `i16`, `i32`, `i64` as TensorFlow, and `i8`, the unsigned
//! types and `usize` for Rust and NumPy callers.

use crate::dtype::DType;

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
    ($($t:ty => $tf:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl IndexType for $t {
            const TF_LIMIT: Option<IndexLimit> = $tf;
            #[inline]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline]
            fn checked_index(self, limit: usize) -> Option<usize> {
                // Negative values fail the conversion; large ones fail the comparison.
                usize::try_from(self).ok().filter(|&u| u < limit)
            }
        }
    )*};
}

impl_index! {
    i8 => None,
    i16 => Some(IndexLimit { dtype: DType::I16, max: i16::MAX as u64 }),
    i32 => Some(IndexLimit { dtype: DType::I32, max: i32::MAX as u64 }),
    i64 => Some(IndexLimit { dtype: DType::I64, max: i64::MAX as u64 }),
    u8 => None,
    u16 => None,
    u32 => None,
    u64 => None,
    usize => None,
}

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
            /// (`"error"`, `"ignore"`, `"clamp"`, `"wrap"`, `"fill"`): the spelling of the CLI
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
    /// let wrap = GatherOptions::new().bad_indices(BadIndices::Wrap);
    /// assert_eq!(
    ///     wrap.gather(&params, &indices).unwrap_err().to_string(),
    ///     "indices[2] = 7 is not in [0, 3)"
    /// );
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
        /// Negative indices count from the end, as in NumPy; values still outside are an error.
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
    /// (an error under `Error`, `Clamp` and `Wrap`; a default-filled slice under `Ignore`).
    #[inline]
    pub fn resolve<I: IndexType>(self, i: I, limit: usize) -> Option<usize> {
        if let Some(u) = i.checked_index(limit) {
            return Some(u);
        }
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
            BadIndices::Wrap => {
                let v = i.to_i128();
                let w = v + limit as i128;
                if v < 0 && w >= 0 {
                    usize::try_from(w).ok()
                } else {
                    None
                }
            }
        }
    }

    /// Whether a bad index is an error (all but `Ignore` and `Fill`); exhaustive, so a new
    /// policy must say.
    #[inline]
    pub fn errors(self) -> bool {
        match self {
            BadIndices::Error | BadIndices::Clamp | BadIndices::Wrap => true,
            BadIndices::Ignore | BadIndices::Fill => false,
        }
    }

    /// TensorFlow's `bad_indices_policy` attribute: `""`/`"DEFAULT"`/`"ERROR"` → `Error`,
    /// `"IGNORE"` → `Ignore`; ndgather's own `"CLAMP"` and `"WRAP"`. Case-insensitive.
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
