//! `ndgather._core`, the extension behind the Python package `ndgather`: it takes NumPy arrays
//! (the Python layer has already called `numpy.asarray`), views them without a copy, and calls
//! the Rust core with the GIL released. Checks, messages and loops are the core's.

mod door;
mod dtypes;
mod errors;
mod grad_door;
mod host;
mod kernel_call;
mod moved;
mod output;
mod pool;
mod prepared;
mod ragged;
mod raw;
mod tf_kernel;
mod torch_kernel;
mod xla;

use dtypes::{dims, with_indices};
use errors::{to_py, InvalidArgumentError};
use ndarray::ArrayD;
use ndgather::embedding::PartitionStrategy;
use ndgather::{BadIndices, GatherNdOptions, GatherOptions, Op, TakeAlongAxisOptions};
use numpy::{PyArray1, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub(crate) fn policy(name: &str) -> PyResult<BadIndices> {
    BadIndices::from_name(name).ok_or_else(|| {
        let names: Vec<_> = BadIndices::ALL.iter().map(|p| p.name()).collect();
        PyValueError::new_err(format!(
            "bad_indices must be one of {names:?}, got {name:?}"
        ))
    })
}

/// A fresh array's data in row-major order (the core's outputs are standard layout).
pub(crate) fn into_vec<T>(array: ArrayD<T>) -> Vec<T> {
    let (data, offset) = array.into_raw_vec_and_offset();
    debug_assert!(
        offset.unwrap_or(0) == 0,
        "fresh outputs start at their buffer"
    );
    data
}

/// `tf.gather` on NumPy arrays (see the Python wrapper `ndgather.gather`): the registry's
/// op with its attributes as PyO3 parses them, which the hot path's call cannot afford to
/// read from a dict, through the door's one run of the ops that move elements
/// (`moved::run`).
#[pyfunction]
#[pyo3(signature = (params, indices, axis, batch_dims, bad_indices, fill, out))]
#[allow(clippy::too_many_arguments)]
fn gather<'py>(
    py: Python<'py>,
    params: &Bound<'py, PyUntypedArray>,
    indices: &Bound<'py, PyUntypedArray>,
    axis: Option<i64>,
    batch_dims: i64,
    bad_indices: &str,
    fill: Option<Vec<u8>>,
    out: Option<&Bound<'py, PyUntypedArray>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (policy, fill) = moved::fill_policy(bad_indices, fill, params)?;
    let mut options = GatherOptions::new()
        .batch_dims(batch_dims)
        .bad_indices(policy)
        .fill_value(fill);
    if let Some(axis) = axis {
        options = options.axis(axis);
    }
    let not_integer = || dtypes::not_integer("indices", indices);
    moved::run(
        py,
        &Op::Gather(options),
        (params, indices),
        out,
        not_integer,
    )
}

/// `tf.gather_nd` on NumPy arrays; see the Python wrapper `ndgather.gather_nd` and
/// [`gather`].
#[pyfunction]
#[pyo3(signature = (params, indices, batch_dims, bad_indices, fill, out))]
fn gather_nd<'py>(
    py: Python<'py>,
    params: &Bound<'py, PyUntypedArray>,
    indices: &Bound<'py, PyUntypedArray>,
    batch_dims: i64,
    bad_indices: &str,
    fill: Option<Vec<u8>>,
    out: Option<&Bound<'py, PyUntypedArray>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (policy, fill) = moved::fill_policy(bad_indices, fill, params)?;
    let options = GatherNdOptions::new()
        .batch_dims(batch_dims)
        .bad_indices(policy)
        .fill_value(fill);
    let not_integer = || dtypes::not_integer("indices", indices);
    moved::run(
        py,
        &Op::GatherNd(options),
        (params, indices),
        out,
        not_integer,
    )
}

/// NumPy's `take_along_axis` on NumPy arrays; see the Python wrapper
/// `ndgather.take_along_axis` and [`gather`]. Indices that are not integers are the core's
/// error, in NumPy's words (an `IndexError`).
#[pyfunction]
#[pyo3(signature = (arr, indices, axis, bad_indices, fill, out))]
fn take_along_axis<'py>(
    py: Python<'py>,
    arr: &Bound<'py, PyUntypedArray>,
    indices: &Bound<'py, PyUntypedArray>,
    axis: i64,
    bad_indices: &str,
    fill: Option<Vec<u8>>,
    out: Option<&Bound<'py, PyUntypedArray>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (policy, fill) = moved::fill_policy(bad_indices, fill, arr)?;
    let options = TakeAlongAxisOptions::new(axis)
        .bad_indices(policy)
        .fill_value(fill);
    let not_integer = || to_py(options.non_integer_indices(arr.ndim()));
    moved::run(
        py,
        &Op::TakeAlongAxis(options),
        (arr, indices),
        out,
        not_integer,
    )
}

/// What `resolve_gather` / `resolve_gather_nd` return: the output shape, where each index
/// reads (an `int64` array of `indices`' shape; -1 for a slice the policy leaves
/// default-filled), the normalised axis and batch_dims.
type PyResolved<'py> = (Vec<usize>, Bound<'py, PyAny>, usize, usize);

fn to_py_resolved<'py>(
    py: Python<'py>,
    indices: &Bound<'py, PyUntypedArray>,
    r: ndgather::Resolved,
) -> PyResult<PyResolved<'py>> {
    let positions: Vec<i64> = r
        .positions
        .into_iter()
        .map(|p| p.map_or(-1, |p| p as i64))
        .collect();
    let positions = PyArray1::from_vec(py, positions).reshape(indices.shape())?;
    Ok((r.out_shape, positions.into_any(), r.axis, r.batch_dims))
}

/// Checks a gather on params of `params_shape` (not read) and resolves each index; see
/// `ndgather.distributed`, which routes indices to where params lives.
#[pyfunction]
#[pyo3(signature = (params_shape, indices, axis, batch_dims, bad_indices))]
fn resolve_gather<'py>(
    py: Python<'py>,
    params_shape: Vec<i64>,
    indices: &Bound<'py, PyUntypedArray>,
    axis: Option<i64>,
    batch_dims: i64,
    bad_indices: &str,
) -> PyResult<PyResolved<'py>> {
    let shape = dims("params_shape", &params_shape)?;
    let mut options = GatherOptions::new()
        .batch_dims(batch_dims)
        .bad_indices(policy(bad_indices)?);
    if let Some(axis) = axis {
        options = options.axis(axis);
    }
    let result =
        with_indices!(indices, i => Ok(pool::detached(py, || options.resolve(&shape, &i))))?;
    to_py_resolved(py, indices, result.map_err(to_py)?)
}

/// Checks a gather_nd on params of `params_shape` (not read) and resolves each index vector.
#[pyfunction]
#[pyo3(signature = (params_shape, indices, batch_dims, bad_indices))]
fn resolve_gather_nd<'py>(
    py: Python<'py>,
    params_shape: Vec<i64>,
    indices: &Bound<'py, PyUntypedArray>,
    batch_dims: i64,
    bad_indices: &str,
) -> PyResult<PyResolved<'py>> {
    let shape = dims("params_shape", &params_shape)?;
    let options = GatherNdOptions::new()
        .batch_dims(batch_dims)
        .bad_indices(policy(bad_indices)?);
    let result =
        with_indices!(indices, i => Ok(pool::detached(py, || options.resolve(&shape, &i))))?;
    to_py_resolved(py, indices, result.map_err(to_py)?)
}

fn strategy(name: &str) -> PyResult<PartitionStrategy> {
    PartitionStrategy::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "partition_strategy must be 'mod' or 'div', got {name:?}"
        ))
    })
}

/// Rows per shard of a table of `total` rows split by `partition_strategy`, as TensorFlow's
/// `embedding_lookup` splits it; see `ndgather.distributed`.
#[pyfunction]
fn shard_rows(total: usize, num_shards: usize, partition_strategy: &str) -> PyResult<Vec<usize>> {
    Ok(strategy(partition_strategy)?.shard_rows(total, num_shards))
}

/// What `route_rows` returns: each row's shard and its row in that shard.
type Routed<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// The shard and the row in it of each of `rows` (int64, row positions in the whole table;
/// negative for none, which go to shard 0 as row -1), for shards of `shard_rows` rows.
#[pyfunction]
fn route_rows<'py>(
    py: Python<'py>,
    partition_strategy: &str,
    shard_rows: Vec<usize>,
    rows: numpy::PyReadonlyArray1<'py, i64>,
) -> PyResult<Routed<'py>> {
    let strategy = strategy(partition_strategy)?;
    let rows = rows.as_array();
    let mut shards = Vec::with_capacity(rows.len());
    let mut local = Vec::with_capacity(rows.len());
    for &row in rows.iter() {
        let place = usize::try_from(row)
            .ok()
            .map(|r| strategy.route(&shard_rows, r));
        let (s, l) = match place {
            None => (0, -1),
            Some(Some((s, l))) => (s as i64, l as i64),
            Some(None) => {
                return Err(InvalidArgumentError::new_err(format!(
                    "row {row} is past the table's {} rows",
                    shard_rows.iter().sum::<usize>()
                )))
            }
        };
        shards.push(s);
        local.push(l);
    }
    Ok((
        PyArray1::from_vec(py, shards),
        PyArray1::from_vec(py, local),
    ))
}

/// Sets the most bytes of freed outputs kept for reuse; see `ndgather.set_output_cache_limit`.
#[pyfunction]
fn set_output_cache_limit(max_bytes: usize) -> usize {
    ndgather::memory::set_recycle_limit(max_bytes)
}

/// A row of [`dtype_table`]: name, element size, default fill bytes.
type DTypeRow = (&'static str, Option<usize>, Option<Vec<u8>>);

/// The core's dtype table, so that a test can walk every row through Python: each dtype's
/// name (NumPy's or ml_dtypes'), its element size (`None` for the strings) and JAX's
/// default fill element as bytes in the machine's order (`None` for the strings).
#[pyfunction]
fn dtype_table() -> PyResult<Vec<DTypeRow>> {
    ndgather::DType::ALL
        .iter()
        .map(|d| {
            let fill = d.fill_bytes(ndgather::FillValue::Default).map_err(to_py)?;
            Ok((d.name(), d.size(), fill))
        })
        .collect()
}

/// The extension module `ndgather._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "InvalidArgumentError",
        m.py().get_type::<InvalidArgumentError>(),
    )?;
    // The crates' version, which maturin gives the Python package too.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("BadIndexError", m.py().get_type::<errors::BadIndexError>())?;
    m.add("AxisError", m.py().get_type::<errors::AxisError>())?;
    m.add("NotFoundError", m.py().get_type::<errors::NotFoundError>())?;
    m.add_function(wrap_pyfunction!(gather, m)?)?;
    m.add_function(wrap_pyfunction!(gather_nd, m)?)?;
    m.add_function(wrap_pyfunction!(take_along_axis, m)?)?;
    m.add_function(wrap_pyfunction!(door::run_op, m)?)?;
    m.add_function(wrap_pyfunction!(grad_door::run_grad, m)?)?;
    m.add_function(wrap_pyfunction!(grad_door::text_attrs, m)?)?;
    m.add_function(wrap_pyfunction!(grad_door::grad_reads_output, m)?)?;
    m.add_function(wrap_pyfunction!(grad_door::op_linear, m)?)?;
    m.add_function(wrap_pyfunction!(grad_door::op_routed, m)?)?;
    m.add_function(wrap_pyfunction!(grad_door::op_multilinear, m)?)?;
    m.add_function(wrap_pyfunction!(door::op_signatures, m)?)?;
    m.add_function(wrap_pyfunction!(ragged::ragged_check, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_gather, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_gather_nd, m)?)?;
    m.add_function(wrap_pyfunction!(set_output_cache_limit, m)?)?;
    m.add_function(wrap_pyfunction!(shard_rows, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_table, m)?)?;
    m.add_function(wrap_pyfunction!(route_rows, m)?)?;
    m.add_function(wrap_pyfunction!(pool::_calling_thread_in_pool, m)?)?;
    m.add_function(wrap_pyfunction!(xla::xla_handler, m)?)?;
    m.add_function(wrap_pyfunction!(tf_kernel::tf_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(torch_kernel::torch_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(xla::xla_grad_handler, m)?)?;
    m.add_function(wrap_pyfunction!(xla::xla_layout, m)?)?;
    m.add_function(wrap_pyfunction!(xla::infer_op, m)?)?;
    m.add_function(wrap_pyfunction!(xla::op_has_grad, m)?)?;
    m.add_function(wrap_pyfunction!(xla::grad_dtypes, m)?)?;
    pool::set_up(m)?;
    Ok(())
}
