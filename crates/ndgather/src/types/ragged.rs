//! Ragged tensors: TensorFlow's `RaggedTensor` layout, which is also Arrow's list layout.
//! Flat `values` (any dtype, uniform inner dimensions allowed) plus one `row_splits` vector
//! per ragged dimension, `int32` or `int64`. [`RaggedView`] borrows both, checked once as
//! TensorFlow checks them; [`Ragged`] owns a result.

use crate::mem::raw_view::RawView;
use crate::types::dtype::{DType, Tensor, TensorView};
use crate::types::error::{Error, Result};
use std::borrow::Cow;

/// One ragged dimension's row splits: row `r` holds the next level's rows
/// `splits[r]..splits[r + 1]`. `int32` or `int64`, as TensorFlow's `row_splits_dtype` and
/// Arrow's `List`/`LargeList` offsets; borrowed or owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowSplits<'a> {
    /// `int32` splits (Arrow's `List` offsets).
    I32(Cow<'a, [i32]>),
    /// `int64` splits (TensorFlow's default, Arrow's `LargeList` offsets).
    I64(Cow<'a, [i64]>),
}

impl RowSplits<'_> {
    /// The number of splits: rows + 1.
    pub fn len(&self) -> usize {
        match self {
            RowSplits::I32(s) => s.len(),
            RowSplits::I64(s) => s.len(),
        }
    }

    /// Whether there are no splits at all (which no valid ragged tensor has).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The splits' dtype, `int32` or `int64`.
    pub fn dtype(&self) -> DType {
        match self {
            RowSplits::I32(_) => DType::I32,
            RowSplits::I64(_) => DType::I64,
        }
    }

    /// The splits inside `view`, read in place: a contiguous 1-d tensor of `int32` or
    /// `int64`, as TensorFlow's `row_splits` (checked against the values by
    /// [`RaggedView::new`]).
    ///
    /// # Errors
    /// [`Error::InvalidRagged`] for a tensor of another dtype, rank or layout.
    pub fn from_view<'v>(view: &TensorView<'v>) -> Result<RowSplits<'v>> {
        let splits = match view {
            TensorView::I32(a) if a.ndim() == 1 => a.to_slice().map(RowSplits::from),
            TensorView::I64(a) if a.ndim() == 1 => a.to_slice().map(RowSplits::from),
            _ => None,
        };
        splits.ok_or_else(|| Error::InvalidRagged {
            check: "from_row_splits",
            reason: format!(
                "row_splits must be a contiguous 1-d tensor of int32 or int64, got {} of shape {:?}",
                view.dtype(),
                view.shape()
            ),
        })
    }

    /// The splits as a 1-d tensor of their dtype (a copy), to write or print.
    pub fn to_tensor(&self) -> Tensor {
        match self {
            RowSplits::I32(v) => Tensor::from(ndarray::Array1::from(v.to_vec()).into_dyn()),
            RowSplits::I64(v) => Tensor::from(ndarray::Array1::from(v.to_vec()).into_dyn()),
        }
    }

    /// Split `k` as a signed value.
    fn raw(&self, k: usize) -> i64 {
        match self {
            RowSplits::I32(s) => i64::from(s[k]),
            RowSplits::I64(s) => s[k],
        }
    }

    /// Split `k` of a checked tensor (every split is in `[0, values]`).
    #[inline]
    pub(crate) fn at(&self, k: usize) -> usize {
        self.raw(k) as usize
    }

    /// The rows: one fewer than the splits.
    pub fn rows(&self) -> usize {
        self.len().saturating_sub(1)
    }

    /// The same splits, borrowed.
    pub fn view(&self) -> RowSplits<'_> {
        match self {
            RowSplits::I32(s) => RowSplits::I32(Cow::Borrowed(s)),
            RowSplits::I64(s) => RowSplits::I64(Cow::Borrowed(s)),
        }
    }

    /// The splits as `i64`, copied.
    pub fn to_vec(&self) -> Vec<i64> {
        (0..self.len()).map(|k| self.raw(k)).collect()
    }

    /// Owned splits of `dtype` (`int32` or `int64`) from `i64` values; an `int32` split past
    /// its range is an error.
    pub(crate) fn of_dtype(dtype: DType, splits: Vec<i64>) -> Result<RowSplits<'static>> {
        if dtype != DType::I32 {
            return Ok(RowSplits::I64(Cow::Owned(splits)));
        }
        let narrow: std::result::Result<Vec<i32>, _> =
            splits.iter().map(|&s| i32::try_from(s)).collect();
        narrow.map(|v| RowSplits::I32(Cow::Owned(v))).map_err(|_| {
            Error::RaggedValue(format!(
                "the result has {} values, more than int32 row_splits can address; pass \
                     int64 row_splits",
                splits.last().copied().unwrap_or(0)
            ))
        })
    }
}

impl<'a> From<&'a [i32]> for RowSplits<'a> {
    fn from(s: &'a [i32]) -> Self {
        RowSplits::I32(Cow::Borrowed(s))
    }
}

impl<'a> From<&'a [i64]> for RowSplits<'a> {
    fn from(s: &'a [i64]) -> Self {
        RowSplits::I64(Cow::Borrowed(s))
    }
}

impl From<Vec<i32>> for RowSplits<'static> {
    fn from(s: Vec<i32>) -> Self {
        RowSplits::I32(Cow::Owned(s))
    }
}

impl From<Vec<i64>> for RowSplits<'static> {
    fn from(s: Vec<i64>) -> Self {
        RowSplits::I64(Cow::Owned(s))
    }
}

/// A checked ragged tensor, borrowed: `values` of shape `[n, inner…]` and the row splits of
/// its ragged dimensions, outermost first. Its shape is `[rows, (ragged)…, inner…]`.
///
/// ```
/// use ndgather::{ndarray::array, RaggedView, Tensor};
/// // [[1, 2], [], [3, 4, 5]]
/// let values = Tensor::from(array![1.0f32, 2.0, 3.0, 4.0, 5.0].into_dyn());
/// let splits = [0i64, 2, 2, 5];
/// let rt = RaggedView::new(values.view(), vec![splits[..].into()])?;
/// assert_eq!((rt.rows(), rt.ragged_rank(), rt.rank()), (3, 1, 2));
///
/// // Checked as TensorFlow checks `from_row_splits`.
/// let bad = [1i64, 2, 5];
/// let err = RaggedView::new(values.view(), vec![bad[..].into()]).unwrap_err();
/// assert!(err.to_string().starts_with("Arguments to from_row_splits do not form a valid RaggedTensor:zero"));
/// # Ok::<(), ndgather::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RaggedView<'a> {
    values: TensorView<'a>,
    records: bool,
    splits: Vec<RowSplits<'a>>,
}

impl<'a> RaggedView<'a> {
    /// `values` partitioned by `splits` (outermost first), checked: each vector starts at 0,
    /// never decreases, and ends at the length of the next level (the last at
    /// `values.shape[0]`). No split may be empty, and there must be at least one.
    ///
    /// # Errors
    /// [`Error::InvalidRagged`], with TensorFlow's words and what is wrong where.
    pub fn new(values: TensorView<'a>, splits: Vec<RowSplits<'a>>) -> Result<RaggedView<'a>> {
        RaggedView::checked(values, false, splits)
    }

    /// As [`RaggedView::new`] for values of records: `values`' last axis holds each element's
    /// bytes; the ragged tensor's shape leaves it out.
    ///
    /// # Errors
    /// As [`RaggedView::new`].
    pub fn records(values: TensorView<'a>, splits: Vec<RowSplits<'a>>) -> Result<RaggedView<'a>> {
        RaggedView::checked(values, true, splits)
    }

    /// As [`RaggedView::records`] for values of any fixed-size element as their bytes, read
    /// in the widest unit their layout allows.
    ///
    /// ```
    /// use ndgather::memory::RawView;
    /// use ndgather::{RaggedView, RowSplits};
    /// let bytes = [1u8, 2, 3, 4, 5, 6]; // three 2-byte elements
    /// let values = RawView::of_bytes(&bytes, &[3], 2).unwrap();
    /// let ragged = RaggedView::of_raw(values, vec![RowSplits::from(vec![0i64, 2, 3])])?;
    /// assert_eq!(ragged.rows(), 2);
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RaggedView::new`]; [`Error::ShapeOverflow`] for a shape no array can have (see
    /// `RawView`'s units).
    pub fn of_raw(values: RawView<'a>, splits: Vec<RowSplits<'a>>) -> Result<RaggedView<'a>> {
        values.fits_arrays("values")?;
        let view =
            crate::with_unit!(values.unit_size(), U => values.units::<U>().map(TensorView::from));
        let view = view.ok_or(Error::Internal(
            "records viewed in the unit their layout allows",
        ))?;
        RaggedView::records(view, splits)
    }

    fn checked(
        values: TensorView<'a>,
        records: bool,
        splits: Vec<RowSplits<'a>>,
    ) -> Result<RaggedView<'a>> {
        let invalid = |reason: String| {
            Err(Error::InvalidRagged {
                check: "from_row_splits",
                reason,
            })
        };
        if splits.is_empty() {
            return invalid(" (a ragged tensor needs at least one row_splits vector)".into());
        }
        let shape = values.shape();
        if shape.len() < 1 + usize::from(records) {
            return invalid(" (values must be at least 1-dimensional)".into());
        }
        for (level, s) in splits.iter().enumerate() {
            let next = match splits.get(level + 1) {
                Some(n) => n.len() as i64 - 1,
                None => shape[0] as i64,
            };
            let name = split_name(level);
            if s.is_empty() {
                return invalid(format!(
                    "zero ({name} is empty; it needs at least the split 0)"
                ));
            }
            if s.raw(0) != 0 {
                return invalid(format!("zero ({name}[0] = {}, must be 0)", s.raw(0)));
            }
            if let Some(k) = (1..s.len()).find(|&k| s.raw(k) < s.raw(k - 1)) {
                return invalid(format!(
                    "monotonic.  ({name}[{k}] = {} is less than {name}[{}] = {})",
                    s.raw(k),
                    k - 1,
                    s.raw(k - 1)
                ));
            }
            let last = s.raw(s.len() - 1);
            if last != next {
                let what = if level + 1 == splits.len() {
                    "values"
                } else {
                    "rows"
                };
                return Err(Error::InvalidRagged {
                    check: "_from_row_partition",
                    reason: format!(
                        " ({name} ends at {last}, but the next level has {next} {what})"
                    ),
                });
            }
        }
        Ok(RaggedView {
            values,
            records,
            splits,
        })
    }

    /// The flat values.
    pub fn values(&self) -> &TensorView<'a> {
        &self.values
    }

    /// Whether the values are records (see [`RaggedView::records`]).
    pub fn is_records(&self) -> bool {
        self.records
    }

    /// The row splits, outermost first.
    pub fn splits(&self) -> &[RowSplits<'a>] {
        &self.splits
    }

    /// The number of ragged dimensions.
    pub fn ragged_rank(&self) -> usize {
        self.splits.len()
    }

    /// The number of rows (the outermost dimension).
    pub fn rows(&self) -> usize {
        self.splits[0].rows()
    }

    /// The shape of the values' elements, without a record axis.
    pub fn value_shape(&self) -> &[usize] {
        let shape = self.values.shape();
        &shape[..shape.len() - usize::from(self.records)]
    }

    /// The rank: ragged dimensions, the rows, and the values' inner dimensions.
    pub fn rank(&self) -> usize {
        self.ragged_rank() + self.value_shape().len()
    }
}

/// `row_splits` for the outermost level, `nested_row_splits[k]` for the others.
fn split_name(level: usize) -> String {
    match level {
        0 => "row_splits".to_string(),
        k => format!("nested_row_splits[{k}]"),
    }
}

/// An owned ragged result: flat `values` and the row splits of its ragged dimensions,
/// outermost first. With no splits it is a dense tensor (`values` itself), as TensorFlow
/// returns a `Tensor` where no dimension of the result is ragged.
#[derive(Debug, Clone, PartialEq)]
pub struct Ragged {
    /// The flat values (with the record axis last, for records).
    pub values: Tensor,
    /// The row splits, outermost first; empty for a dense result.
    pub splits: Vec<RowSplits<'static>>,
}

impl Ragged {
    /// The number of ragged dimensions (0: dense).
    pub fn ragged_rank(&self) -> usize {
        self.splits.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int32_splits_past_their_range_are_an_error() {
        let fits = RowSplits::of_dtype(DType::I32, vec![0, i64::from(i32::MAX)]).unwrap();
        assert_eq!(fits.dtype(), DType::I32);
        let err = RowSplits::of_dtype(DType::I32, vec![0, i64::from(i32::MAX) + 1]).unwrap_err();
        assert!(err.to_string().contains("pass int64 row_splits"), "{err}");
        let wide = RowSplits::of_dtype(DType::I64, vec![0, i64::MAX]).unwrap();
        assert_eq!(wide.to_vec(), [0, i64::MAX]);
    }
}
