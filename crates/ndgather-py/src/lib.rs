//! `ndgather._core`, the extension behind the Python package `ndgather`: it takes NumPy arrays
//! (the Python layer has already called `numpy.asarray`), views them without a copy, and calls
//! the Rust core with the GIL released. Checks, messages and loops are the core's.

mod door;
mod dtypes;
mod errors;
mod host;
mod moved;
mod output;
mod pool;
mod ragged;
mod raw;

use dtypes::{dims, index_view, with_float_type, with_indices};
use errors::{to_py, InvalidArgumentError};
use ndarray::{ArrayD, ArrayViewD};
use ndgather::embedding::{Combiner, EmbeddingLookupOptions, PartitionStrategy, SparseIds};
use ndgather::embedding_bag::{BagMode, EmbeddingBag};
use ndgather::{
    BadIndices, DType, GatherNdOptions, GatherOptions, Op, TakeAlongAxisOptions, TensorView,
};
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use raw::{typed_view, Plain, Raw};

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

/// The indices of take_along_axis or put_along_axis: indices that are not integers are the
/// core's error for them, in NumPy's words and order (NumPy raises `IndexError`).
fn along_indices<'a>(
    options: &TakeAlongAxisOptions,
    params_rank: usize,
    indices: &'a Bound<'_, PyUntypedArray>,
) -> PyResult<TensorView<'a>> {
    if !dtypes::dtype_of(indices).is_some_and(DType::is_index) {
        return Err(to_py(options.non_integer_indices(params_rank)));
    }
    index_view("indices", indices)
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

/// The shards of an embedding table as views of one float type `T`; all must share the
/// first one's dtype.
fn shard_views<'a, T: Plain>(
    shards: &'a [Bound<'_, PyUntypedArray>],
) -> PyResult<Vec<ArrayViewD<'a, T>>> {
    let dtype = shards[0].dtype();
    shards
        .iter()
        .enumerate()
        .map(|(p, shard)| {
            if !shard.dtype().is_equiv_to(&dtype) {
                return Err(PyTypeError::new_err(format!(
                    "shard {p} has dtype {}, shard 0 {dtype}: all shards must have one dtype",
                    shard.dtype()
                )));
            }
            typed_view::<T>(shard)
        })
        .collect()
}

fn lookup_options(
    partition_strategy: &str,
    max_norm: Option<f64>,
) -> PyResult<EmbeddingLookupOptions> {
    let strategy = strategy(partition_strategy)?;
    Ok(EmbeddingLookupOptions::new()
        .partition_strategy(strategy)
        .max_norm(max_norm))
}

fn no_shards() -> PyErr {
    InvalidArgumentError::new_err("Need at least one param")
}

/// Sparse ids `(indices, values, dense_shape)` and optional weights, checked by the core.
type PySparse<'py> = (
    Bound<'py, PyUntypedArray>,
    Bound<'py, PyUntypedArray>,
    Vec<i64>,
);

/// The gradient of `embedding_lookup` for each shard, as `(indices, values, dense_shape)`;
/// see `ndgather.embedding_lookup_grad`.
#[pyfunction]
#[pyo3(signature = (shards, ids, grad, partition_strategy, max_norm))]
fn embedding_lookup_grad<'py>(
    py: Python<'py>,
    shards: Vec<Bound<'py, PyUntypedArray>>,
    ids: &Bound<'py, PyUntypedArray>,
    grad: &Bound<'py, PyUntypedArray>,
    partition_strategy: &str,
    max_norm: Option<f64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let lookup = lookup_options(partition_strategy, max_norm)?;
    let first = shards.first().ok_or_else(no_shards)?;
    with_float_type!(first, T => {
        let views = shard_views::<T>(&shards)?;
        let g = typed_view::<T>(grad)?;
        let slices = with_indices!(ids, i => Ok(pool::detached(py, || lookup.lookup_grad(&views, &i, &g))))?;
        slices_to_py(py, &first.dtype(), slices.map_err(to_py)?)
    })
}

/// The gradient of PyTorch's `embedding_bag` for the upstream `grad`, as `(indices, values,
/// dense_shape)` per shard (`dense`: one array per shard); see `ndgather.embedding_bag_grad`.
/// `offsets` has `input`'s dtype. (A result per shard is no value of the registry, so the
/// gradients of the lookups keep bindings of their own.)
#[pyfunction]
#[pyo3(signature = (shards, input, offsets, mode, per_sample_weights, padding_idx,
                    include_last_offset, max_norm, partition_strategy, bad_indices, grad, dense))]
#[allow(clippy::too_many_arguments)]
fn embedding_bag_grad<'py>(
    py: Python<'py>,
    shards: Vec<Bound<'py, PyUntypedArray>>,
    input: &Bound<'py, PyUntypedArray>,
    offsets: Option<Bound<'py, PyUntypedArray>>,
    mode: &str,
    per_sample_weights: Option<Bound<'py, PyUntypedArray>>,
    padding_idx: Option<i64>,
    include_last_offset: bool,
    max_norm: Option<f64>,
    partition_strategy: &str,
    bad_indices: &str,
    grad: Bound<'py, PyUntypedArray>,
    dense: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let mode = BagMode::from_name(mode)
        .ok_or_else(|| PyValueError::new_err("mode has to be one of sum, mean or max"))?;
    let bag = EmbeddingBag::new(mode)
        .partition_strategy(strategy(partition_strategy)?)
        .max_norm(max_norm)
        .padding_idx(padding_idx)
        .include_last_offset(include_last_offset)
        .bad_indices(policy(bad_indices)?);
    let first = shards.first().ok_or_else(no_shards)?;
    let dtype = first.dtype();
    with_float_type!(first, T => {
        let views = shard_views::<T>(&shards)?;
        let weights = per_sample_weights.as_ref().map(typed_view::<T>).transpose()?;
        let g = typed_view::<T>(&grad)?;
        with_indices!(input, i => {
            // `T` is the ids' type here: the offsets are made of it.
            let offsets = match &offsets {
                Some(o) => Some(typed_view::<T>(o)?.into_dimensionality::<ndarray::Ix1>()
                    .map_err(|_| PyValueError::new_err("offsets has to be a 1D Tensor"))?),
                None => None,
            };
            let (o, w) = (offsets.as_ref(), weights.as_ref());
            let slices = pool::detached(py, || bag.bag_grad(&views, &i, o, w, &g))
                .map_err(to_py)?;
            let parts = if dense {
                slices
                    .iter()
                    .map(|s| {
                        let d = s.to_dense().map_err(to_py)?;
                        let shape = d.shape().to_vec();
                        output::array_from_vec(py, &dtype, &shape, into_vec(d))
                    })
                    .collect::<PyResult<Vec<_>>>()?
            } else {
                slices_to_py(py, &dtype, slices)?
            };
            Ok(pyo3::types::PyList::new(py, parts)?.into_any())
        })
    })
}

pub(crate) fn slices_to_py<'py, T: Plain>(
    py: Python<'py>,
    dtype: &Bound<'py, numpy::PyArrayDescr>,
    slices: Vec<ndgather::grad::IndexedSlices<T>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    slices
        .into_iter()
        .map(|s| {
            let indices: Vec<i64> = s.indices.iter().map(|&i| i as i64).collect();
            let indices = PyArray1::from_vec(py, indices).into_any();
            let shape = s.values.shape().to_vec();
            let values = output::array_from_vec(py, dtype, &shape, into_vec(s.values))?;
            let tuple = (indices, values, s.dense_shape).into_pyobject(py)?;
            Ok(tuple.into_any())
        })
        .collect()
}

/// The gradient of `embedding_lookup_sparse` for each shard; see
/// `ndgather.embedding_lookup_sparse_grad`.
#[pyfunction]
#[pyo3(signature = (shards, sp_ids, sp_weights, grad, combiner, partition_strategy, max_norm))]
#[allow(clippy::too_many_arguments)]
fn embedding_lookup_sparse_grad<'py>(
    py: Python<'py>,
    shards: Vec<Bound<'py, PyUntypedArray>>,
    sp_ids: PySparse<'py>,
    sp_weights: Option<PySparse<'py>>,
    grad: &Bound<'py, PyUntypedArray>,
    combiner: &str,
    partition_strategy: &str,
    max_norm: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let lookup = lookup_options(partition_strategy, max_norm)?;
    let combiner = Combiner::from_name(combiner).ok_or_else(|| {
        PyValueError::new_err(format!(
            "combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner:?}"
        ))
    })?;
    let first = shards.first().ok_or_else(no_shards)?;
    let matrix = |a: &Bound<'py, PyUntypedArray>| -> PyResult<ndarray::Array2<i64>> {
        let v = typed_view::<i64>(a)?;
        v.into_dimensionality::<ndarray::Ix2>()
            .map(|v| v.to_owned())
            .map_err(|_| {
                InvalidArgumentError::new_err("sparse indices must be a matrix [nnz, rank]")
            })
    };
    let (ids_indices, ids_values, ids_shape) = &sp_ids;
    let id_matrix = matrix(ids_indices)?;
    let dense_shape = dims("dense_shape", ids_shape)?;
    with_float_type!(first, T => {
        let views = shard_views::<T>(&shards)?;
        let weights = match &sp_weights {
            Some((w_indices, w_values, w_shape)) => {
                let w_matrix = matrix(w_indices)?;
                let w_values = typed_view::<T>(w_values)?
                    .into_dimensionality::<ndarray::Ix1>()
                    .map_err(|_| InvalidArgumentError::new_err("sparse values must be a vector"))?
                    .to_owned();
                Some((w_matrix, w_values, dims("dense_shape", w_shape)?))
            }
            None => None,
        };
        let sp_w = match &weights {
            Some((m, v, shape)) => Some(SparseIds::new(m.view(), v.view(), shape).map_err(to_py)?),
            None => None,
        };
        let g = typed_view::<T>(grad)?;
        with_indices!(ids_values, i => {
            let i = i.into_dimensionality::<ndarray::Ix1>()
                .map_err(|_| InvalidArgumentError::new_err("sparse values must be a vector"))?;
            let sp = SparseIds::new(id_matrix.view(), i.view(), &dense_shape).map_err(to_py)?;
            let slices = pool::detached(py, || lookup.lookup_sparse_grad(&views, &sp, sp_w.as_ref(), combiner, &g));
            let list = slices_to_py(py, &first.dtype(), slices.map_err(to_py)?)?;
            Ok(pyo3::types::PyList::new(py, list)?.into_any())
        })
    })
}

/// NumPy's `put_along_axis`, in place; see `ndgather.put_along_axis`. `values` has `arr`'s
/// dtype (the wrapper converts it). Dtypes of the table are written as themselves; others of
/// 1, 2, 4 or 8 bytes (bool, datetimes) as unsigned integers of their size, since putting
/// moves elements and never reads their values.
#[pyfunction]
#[pyo3(signature = (arr, indices, values, axis, bad_indices))]
fn put_along_axis(
    py: Python<'_>,
    arr: &Bound<'_, PyUntypedArray>,
    indices: &Bound<'_, PyUntypedArray>,
    values: &Bound<'_, PyUntypedArray>,
    axis: i64,
    bad_indices: &str,
) -> PyResult<()> {
    let options = TakeAlongAxisOptions::new(axis).bad_indices(policy(bad_indices)?);
    let a = Raw::of(arr);
    if a.may_overlap(&Raw::of(indices)) || a.may_overlap(&Raw::of(values)) {
        return Err(PyValueError::new_err(
            "arr shares memory with indices or values; pass separate arrays",
        ));
    }
    let idx = along_indices(&options, arr.ndim(), indices)?;
    if arr.dtype().has_object() {
        return put_objects(py, &options, arr, &idx, values);
    }
    let table = dtypes::dtype_of(arr).filter(|d| d.is_plain());
    let unit = match (table, arr.dtype().itemsize()) {
        (Some(d), _) => d,
        (None, 1) => DType::U8,
        (None, 2) => DType::U16,
        (None, 4) => DType::U32,
        (None, 8) => DType::U64,
        (None, _) => {
            return Err(PyTypeError::new_err(format!(
                "put_along_axis does not take arrays of dtype {}",
                arr.dtype()
            )))
        }
    };
    ndgather::with_dtype!(unit, plain T => {
        let target = raw::typed_view_mut::<T>(arr)?;
        let source = typed_view::<T>(values)?;
        pool::detached(py, || options.put_along_axis(target.into(), &idx, &source.into()))
            .map_err(to_py)
    }, else Err(PyTypeError::new_err(format!("no plain dtype {unit}"))))
}

/// `put_along_axis` into an object array: the put runs on a copy of the slots' addresses
/// (so every check runs before a slot changes), and the result is stored with its references
/// counted (`output::store_objects`). `values` must hold objects too.
fn put_objects(
    py: Python<'_>,
    options: &TakeAlongAxisOptions,
    arr: &Bound<'_, PyUntypedArray>,
    idx: &TensorView<'_>,
    values: &Bound<'_, PyUntypedArray>,
) -> PyResult<()> {
    dtypes::object_array("arr", arr)?;
    dtypes::object_array("values", values)?;
    // A copy in row-major order (ndarray's `to_owned` refuses the stand-in strides that
    // `raw.rs` gives a view of no elements).
    let current = typed_view::<u64>(arr)?;
    let mut slots = ArrayD::from_shape_vec(current.raw_dim(), current.iter().copied().collect())
        .map_err(|e| PyValueError::new_err(format!("internal error: {e}")))?;
    let source = typed_view::<u64>(values)?;
    // With the GIL held, so that no object named in `slots` or `source` is freed meanwhile.
    pool::in_callers_pool(|| options.put_along_axis(slots.view_mut().into(), idx, &source.into()))
        .map_err(to_py)?;
    let objects = output::object_references(py, slots.iter().copied());
    output::store_objects(py, arr, objects)
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
    m.add("BadIndexError", m.py().get_type::<errors::BadIndexError>())?;
    m.add("AxisError", m.py().get_type::<errors::AxisError>())?;
    m.add("NotFoundError", m.py().get_type::<errors::NotFoundError>())?;
    m.add_function(wrap_pyfunction!(gather, m)?)?;
    m.add_function(wrap_pyfunction!(gather_nd, m)?)?;
    m.add_function(wrap_pyfunction!(take_along_axis, m)?)?;
    m.add_function(wrap_pyfunction!(embedding_lookup_grad, m)?)?;
    m.add_function(wrap_pyfunction!(embedding_bag_grad, m)?)?;
    m.add_function(wrap_pyfunction!(embedding_lookup_sparse_grad, m)?)?;
    m.add_function(wrap_pyfunction!(door::run_op, m)?)?;
    m.add_function(wrap_pyfunction!(door::op_signatures, m)?)?;
    m.add_function(wrap_pyfunction!(put_along_axis, m)?)?;
    m.add_function(wrap_pyfunction!(ragged::ragged_gather, m)?)?;
    m.add_function(wrap_pyfunction!(ragged::ragged_check, m)?)?;
    m.add_function(wrap_pyfunction!(ragged::ragged_gather_grad, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_gather, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_gather_nd, m)?)?;
    m.add_function(wrap_pyfunction!(set_output_cache_limit, m)?)?;
    m.add_function(wrap_pyfunction!(shard_rows, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_table, m)?)?;
    m.add_function(wrap_pyfunction!(route_rows, m)?)?;
    m.add_function(wrap_pyfunction!(pool::_calling_thread_in_pool, m)?)?;
    pool::set_up(m)?;
    Ok(())
}
