//! Ragged operands at the door: the Python layer hands over a ragged operand as
//! `{"values": ..., "row_splits": [...]}`, NumPy arrays viewing a `tf.RaggedTensor`'s, an
//! Arrow list array's or an `ndgather.Ragged`'s buffers. Here they become the core's
//! ragged inputs; the registered op checks and runs the call.

use crate::dtypes::index_view;
use crate::errors::to_py;
use crate::moved;
use crate::pool;
use crate::raw::Raw;
use ndgather::registry::{Input, Value};
use ndgather::{OpDef, Out, RaggedView, RowSplits, Tensor, TensorView};
use numpy::{PyArray1, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Row splits read in place, as the core reads them (`RowSplits::from_view`: contiguous
/// 1-d `int32` or `int64`).
pub(crate) fn splits_views<'a>(
    arrays: &'a [Bound<'_, PyUntypedArray>],
) -> PyResult<Vec<RowSplits<'a>>> {
    arrays
        .iter()
        .map(|a| RowSplits::from_view(&index_view("row_splits", a)?).map_err(to_py))
        .collect()
}

/// A result's row splits as NumPy arrays (the vectors themselves, not copies).
fn splits_to_py<'py>(py: Python<'py>, splits: Vec<RowSplits<'static>>) -> Vec<Bound<'py, PyAny>> {
    splits
        .into_iter()
        .map(|s| match s {
            RowSplits::I32(v) => PyArray1::from_vec(py, v.into_owned()).into_any(),
            RowSplits::I64(v) => PyArray1::from_vec(py, v.into_owned()).into_any(),
        })
        .collect()
}

/// A ragged result as `(values, [row_splits, ...])`, its values made by `values`.
pub(crate) fn result_to_py<'py>(
    py: Python<'py>,
    value: Value,
    values: impl FnOnce(Tensor) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (flat, splits) = match value {
        Value::Ragged(r) => (r.values, r.splits),
        Value::Dense(t) => (t, vec![]),
        _ => return Err(PyValueError::new_err("internal error: a gather's result")),
    };
    let values = values(flat)?;
    let splits = splits_to_py(py, splits);
    Ok(PyTuple::new(
        py,
        [values, pyo3::types::PyList::new(py, splits)?.into_any()],
    )?
    .into_any())
}

/// Checks `values` and `row_splits` as a ragged tensor (TensorFlow's `from_row_splits`
/// checks), for `ndgather.Ragged`.
#[pyfunction]
pub(crate) fn ragged_check(
    values: &Bound<'_, PyUntypedArray>,
    row_splits: Vec<Bound<'_, PyUntypedArray>>,
) -> PyResult<()> {
    let splits = splits_views(&row_splits)?;
    RaggedView::of_raw(Raw::of(values).raw(), splits).map_err(to_py)?;
    Ok(())
}

/// An operand of [`run_moved`]: its array, and its row splits where it is ragged.
pub(crate) type Operand<'a, 'py> = (
    &'a Bound<'py, PyUntypedArray>,
    Option<&'a [Bound<'py, PyUntypedArray>]>,
);

/// An op that moves params' elements (gather, gather_nd) where an operand is ragged:
/// `params` lent as its bytes, whatever its dtype; `indices` of an integer dtype. Returns
/// `(values, [row_splits, ...])`.
pub(crate) fn run_moved<'py>(
    py: Python<'py>,
    op: &dyn OpDef,
    (p_values, p_splits): Operand<'_, 'py>,
    (i_values, i_splits): Operand<'_, 'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let p_splits = p_splits.map(splits_views).transpose()?;
    let i_splits = i_splits.map(splits_views).transpose()?;
    let raw = Raw::of(p_values).raw();
    let names = op.signature().inputs;
    let what = |k: usize| names.get(k).map_or("input", |d| d.name);
    let idx = index_view(what(1), i_values)?;
    let run = || -> ndgather::Result<Option<Value>> {
        let params = match p_splits {
            None => Input::Records(raw),
            Some(splits) => Input::Ragged(RaggedView::of_raw(raw, splits)?),
        };
        let indices = match i_splits {
            None => Input::Tensor(idx),
            Some(splits) => Input::Ragged(RaggedView::new(idx, splits)?),
        };
        op.run(&[params, indices], Out::New)
    };
    let missing = || PyValueError::new_err("internal error: a new result was not returned");
    if p_values.dtype().has_object() {
        moved::check_objects(what(0), p_values, None)?;
        // Python objects are gathered as their addresses with the GIL held, so that none
        // is freed meanwhile, then stored with a reference each (as a dense gather does).
        let value = pool::in_callers_pool(run)
            .map_err(to_py)?
            .ok_or_else(missing)?;
        return result_to_py(py, value, |t| moved::objects(py, t, None));
    }
    let value = pool::detached(py, run)
        .map_err(to_py)?
        .ok_or_else(missing)?;
    result_to_py(py, value, |t| moved::to_numpy(p_values, t))
}

/// A view of a ragged slot's `[values, splits...]` for ops that read values as numbers.
pub(crate) fn input<'a>(
    values: TensorView<'a>,
    splits: &'a [Bound<'_, PyUntypedArray>],
) -> PyResult<Input<'a>> {
    let splits = splits_views(splits)?;
    Ok(Input::Ragged(
        RaggedView::new(values, splits).map_err(to_py)?,
    ))
}
