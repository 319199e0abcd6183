//! Ragged gathers: `tf.gather` and `tf.gather_nd` where params or indices is ragged. The
//! Python layer hands over each operand's flat values and row splits as NumPy arrays (views
//! of a `tf.RaggedTensor`'s, an Arrow list array's or an `ndgather.Ragged`'s buffers); the
//! core checks and runs the call.

use crate::dtypes::{index_view, with_float_type};
use crate::errors::to_py;
use crate::moved::{self, fill_policy};
use crate::raw::{typed_view, Raw};
use crate::{policy, pool, slices_to_py};
use ndgather::memory::RawView;
use ndgather::{
    BadIndices, FillValue, GatherNdOptions, GatherOptions, Op, Params, Ragged, RaggedOperand,
    RaggedView, RowSplits, TensorView,
};
use numpy::{PyArray1, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Row splits read in place: C-contiguous `int32` or `int64` arrays.
fn splits_views<'a>(arrays: &'a [Bound<'_, PyUntypedArray>]) -> PyResult<Vec<RowSplits<'a>>> {
    arrays
        .iter()
        .map(|a| {
            let not = || {
                PyTypeError::new_err(format!(
                    "row_splits must be a C-contiguous array of int32 or int64, got dtype {}",
                    a.dtype()
                ))
            };
            if !a.is_c_contiguous() || a.ndim() != 1 {
                return Err(not());
            }
            match a.dtype().num() {
                n if n == numpy::dtype::<i64>(a.py()).num() => Ok(RowSplits::from(
                    typed_view::<i64>(a)?.to_slice().ok_or_else(not)?,
                )),
                n if n == numpy::dtype::<i32>(a.py()).num() => Ok(RowSplits::from(
                    typed_view::<i32>(a)?.to_slice().ok_or_else(not)?,
                )),
                _ => Err(not()),
            }
        })
        .collect()
}

/// The result's row splits as NumPy arrays (the vectors themselves, not copies).
fn splits_to_py<'py>(py: Python<'py>, splits: Vec<RowSplits<'static>>) -> Vec<Bound<'py, PyAny>> {
    splits
        .into_iter()
        .map(|s| match s {
            RowSplits::I32(v) => PyArray1::from_vec(py, v.into_owned()).into_any(),
            RowSplits::I64(v) => PyArray1::from_vec(py, v.into_owned()).into_any(),
        })
        .collect()
}

/// The op of a ragged call: `"gather"` or `"gather_nd"`.
fn ragged_op(
    op: &str,
    axis: Option<i64>,
    batch_dims: i64,
    policy: BadIndices,
    fill: FillValue,
) -> Op {
    match op {
        "gather" => {
            let mut o = GatherOptions::new()
                .batch_dims(batch_dims)
                .bad_indices(policy)
                .fill_value(fill);
            if let Some(axis) = axis {
                o = o.axis(axis);
            }
            Op::Gather(o)
        }
        _ => Op::GatherNd(
            GatherNdOptions::new()
                .batch_dims(batch_dims)
                .bad_indices(policy)
                .fill_value(fill),
        ),
    }
}

/// Indices as an operand: dense, or ragged with `splits`.
fn indices_operand<'a>(
    indices: &'a Bound<'_, PyUntypedArray>,
    splits: &'a [Bound<'_, PyUntypedArray>],
) -> PyResult<RaggedOperand<'a>> {
    let splits = splits_views(splits)?;
    let idx = index_view("indices", indices)?;
    Ok(match splits.is_empty() {
        true => RaggedOperand::from(idx),
        false => RaggedOperand::Ragged(RaggedView::new(idx, splits).map_err(to_py)?),
    })
}

/// The gradient of a ragged gather with respect to params' flat values, for the upstream
/// gradient `grad` of the result's flat values: `(indices, values, dense_shape)`, as
/// TensorFlow's `IndexedSlices`.
#[pyfunction]
#[pyo3(signature = (op, params, params_splits, indices, indices_splits, axis, batch_dims, bad_indices, grad))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn ragged_gather_grad<'py>(
    py: Python<'py>,
    op: &str,
    params: &Bound<'py, PyUntypedArray>,
    params_splits: Vec<Bound<'py, PyUntypedArray>>,
    indices: &Bound<'py, PyUntypedArray>,
    indices_splits: Vec<Bound<'py, PyUntypedArray>>,
    axis: Option<i64>,
    batch_dims: i64,
    bad_indices: &str,
    grad: &Bound<'py, PyUntypedArray>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = ragged_op(
        op,
        axis,
        batch_dims,
        policy(bad_indices)?,
        FillValue::default(),
    );
    let psplits = splits_views(&params_splits)?;
    let indices_operand = indices_operand(indices, &indices_splits)?;
    // Only params' shape and splits matter: its values are seen as bytes.
    let view = TensorView::from(Raw::of(params).view::<u8>()?);
    with_float_type!(grad, T => {
        let g = typed_view::<T>(grad)?;
        let slices = pool::detached(py, || {
            let params_operand = match psplits.is_empty() {
                true => RaggedOperand::Dense(Params::records(view)),
                false => RaggedOperand::Ragged(RaggedView::records(view, psplits)?),
            };
            op.ragged_grad(params_operand, indices_operand, &g)
        })
        .map_err(to_py)?;
        let mut out = slices_to_py(py, &grad.dtype(), vec![slices])?;
        out.pop().ok_or_else(|| to_py(ndgather::Error::Internal("one gradient")))
    })
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

/// A ragged `tf.gather` (`op="gather"`) or `tf.gather_nd`; an operand with no splits is
/// dense. Returns the result's values and row splits (none where the result is dense).
#[pyfunction]
#[pyo3(signature = (op, params, params_splits, indices, indices_splits, axis, batch_dims, bad_indices, fill))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn ragged_gather<'py>(
    py: Python<'py>,
    op: &str,
    params: &Bound<'py, PyUntypedArray>,
    params_splits: Vec<Bound<'py, PyUntypedArray>>,
    indices: &Bound<'py, PyUntypedArray>,
    indices_splits: Vec<Bound<'py, PyUntypedArray>>,
    axis: Option<i64>,
    batch_dims: i64,
    bad_indices: &str,
    fill: Option<Vec<u8>>,
) -> PyResult<(Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>)> {
    let (policy, fill) = fill_policy(bad_indices, fill, params)?;
    let op = ragged_op(op, axis, batch_dims, policy, fill);
    let psplits = splits_views(&params_splits)?;
    let indices_operand = indices_operand(indices, &indices_splits)?;
    let raw = Raw::of(params).raw();
    if params.dtype().has_object() {
        moved::check_objects("params", params, None)?;
        // Python objects are gathered as their addresses with the GIL held, so that none
        // is freed meanwhile, then stored with a reference each (as `gather` does).
        let result =
            pool::in_callers_pool(|| run(op, raw, psplits, indices_operand)).map_err(to_py)?;
        // References first (`moved::objects`): the allocations below may run the garbage
        // collector.
        let values = moved::objects(py, result.values, None)?;
        return Ok((values, splits_to_py(py, result.splits)));
    }
    let result = pool::detached(py, || run(op, raw, psplits, indices_operand)).map_err(to_py)?;
    let splits = splits_to_py(py, result.splits);
    Ok((moved::to_numpy(params, result.values)?, splits))
}

/// The core's ragged gather on params of any element (`raw`, with `splits` where ragged).
fn run<'a>(
    op: Op,
    raw: RawView<'a>,
    splits: Vec<RowSplits<'a>>,
    indices: RaggedOperand<'_>,
) -> ndgather::Result<Ragged> {
    let params = match splits.is_empty() {
        true => RaggedOperand::Dense(Params::raw(raw)),
        false => RaggedOperand::Ragged(RaggedView::of_raw(raw, splits)?),
    };
    op.run_ragged(params, indices)
}
