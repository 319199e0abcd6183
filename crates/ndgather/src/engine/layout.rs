//! How arrays are laid out for the kernels: row-major data borrowed or copied once, arrays
//! made from it, record views, and the checks of callers' outputs (written through
//! `mem::output::with_row_major_out`).

pub(crate) use crate::types::dtype::Element;
use crate::types::error::{Error, Result};
use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use std::borrow::Cow;

/// The elements of an array in row-major order, borrowed when the array is already laid out
/// so; a copy otherwise, refused with an error (not an abort) when it cannot be allocated.
pub(crate) fn row_major<A: Clone, S: Data<Elem = A>, D: Dimension>(
    a: &ArrayBase<S, D>,
) -> Result<Cow<'_, [A]>> {
    if let Some(s) = a.as_slice() {
        return Ok(Cow::Borrowed(s));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(a.len())
        .map_err(|_| Error::OutOfMemory {
            bytes: a.len().saturating_mul(std::mem::size_of::<A>()),
        })?;
    v.extend(a.iter().cloned());
    Ok(Cow::Owned(v))
}

/// An array of `shape` from row-major data.
pub(crate) fn into_array<T>(shape: &[usize], data: Vec<T>) -> Result<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(shape), data).map_err(|e| Error::InvalidShape {
        shape: shape.to_vec(),
        reason: e.to_string(),
    })
}

/// Whether params' last axis is part of the tensor or holds the values of each element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elements {
    /// Every array element is a tensor element.
    Plain,
    /// The last axis holds each tensor element's values (see `Params::records`).
    Records,
}

impl Elements {
    /// The tensor's shape, and the record width if params holds records.
    pub(crate) fn split(self, params_shape: &[usize]) -> Result<(&[usize], Option<usize>)> {
        match self {
            Elements::Plain => Ok((params_shape, None)),
            Elements::Records => match params_shape.split_last() {
                Some((&width, shape)) => Ok((shape, Some(width))),
                None => Err(Error::InvalidShape {
                    shape: vec![],
                    reason: "params of records needs a trailing record axis".to_string(),
                }),
            },
        }
    }
}

/// Checks a caller's output shape; a mismatch is reported in element shapes (without the
/// record axis, for records).
pub(crate) fn check_out_shape(
    elements: Elements,
    given: &[usize],
    expected: &[usize],
) -> Result<()> {
    if given == expected {
        return Ok(());
    }
    let element_shape = |s: &[usize]| match elements {
        Elements::Plain => s.to_vec(),
        Elements::Records => s[..s.len().saturating_sub(1)].to_vec(),
    };
    Err(Error::OutputShapeMismatch {
        given: element_shape(given),
        expected: element_shape(expected),
    })
}

/// Runs `update` on the elements of a caller's array in row-major order, to read and write
/// them: in place when it is laid out so, otherwise on a row-major copy that is assigned
/// back afterwards (so `update` should not fail half-way: check first).
pub(crate) fn update_row_major<T: Clone>(
    array: &mut ndarray::ArrayViewMutD<'_, T>,
    update: impl FnOnce(&mut [T]),
) -> Result<()> {
    let mut update = Some(update);
    update_row_major_dyn(array, &mut |slice| {
        if let Some(update) = update.take() {
            update(slice);
        }
    })
}

/// [`update_row_major`] on a `dyn` closure, so that the copy and the assignment back are
/// compiled once per element type, not once per caller's closure.
fn update_row_major_dyn<T: Clone>(
    array: &mut ndarray::ArrayViewMutD<'_, T>,
    update: &mut dyn FnMut(&mut [T]),
) -> Result<()> {
    if let Some(slice) = array.as_slice_mut() {
        update(slice);
        return Ok(());
    }
    let mut copy = into_array(array.shape(), row_major(array)?.into_owned())?;
    let Some(slice) = copy.as_slice_mut() else {
        return Err(Error::Internal("a standard-layout array is a slice"));
    };
    update(slice);
    array.assign(&copy);
    Ok(())
}
