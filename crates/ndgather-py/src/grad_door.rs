//! The gradient of any registered op by name (`OpDef::grad`), for a front end that runs an
//! op's backward itself: PyTorch's custom ops (`ndgather._torch`), whose attributes are
//! strings, read as TensorFlow's kernel reads them (`kernel_call::text_attrs`).

use crate::door::{array, copy_if_bool, view};
use crate::errors::to_py;
use crate::kernel_call::{self, Failure};
use ndgather::registry::{self, Attrs, Input};
use ndgather::DType;
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// A failure of the call's set-up as Python's exception: the caller's (`ValueError`) or ours.
fn to_py_failure(Failure(message, code, _): Failure) -> PyErr {
    match code {
        kernel_call::INVALID_ARGUMENT => PyValueError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// The attributes of the op `name` from its names and texts, which must pair up.
fn parsed(name: &str, names: &[String], values: &[String]) -> PyResult<Attrs> {
    if names.len() != values.len() {
        return Err(PyValueError::new_err(format!(
            "{name}: {} attribute names but {} values",
            names.len(),
            values.len()
        )));
    }
    let pairs = names
        .iter()
        .map(String::as_str)
        .zip(values.iter().map(String::as_str));
    kernel_call::text_attrs(name, pairs).map_err(to_py_failure)
}

/// One input of a gradient call: an array, or a list input's arrays (a table's shards).
#[derive(FromPyObject)]
pub(crate) enum GradInput<'py> {
    One(Bound<'py, PyUntypedArray>),
    List(Vec<Bound<'py, PyUntypedArray>>),
}

impl<'py> GradInput<'py> {
    fn arrays(&self) -> &[Bound<'py, PyUntypedArray>] {
        match self {
            GradInput::One(a) => std::slice::from_ref(a),
            GradInput::List(v) => v,
        }
    }
}

/// The gradients of the registered op `name` (its attributes as names and text) on `inputs`
/// (per input of its signature: an array, a list of arrays for a list input, `None` for one
/// left out), whose result was `output`, for the upstream gradient `upstream`: one entry per
/// array given, in order, `None` where it has none (indices).
///
/// # Errors
/// The op's own, as `run_op` raises them; `ValueError` for attribute text of the wrong kind.
#[pyfunction]
pub(crate) fn run_grad<'py>(
    py: Python<'py>,
    name: &str,
    inputs: Vec<Option<GradInput<'py>>>,
    output: Bound<'py, PyUntypedArray>,
    upstream: Bound<'py, PyUntypedArray>,
    attr_names: Vec<String>,
    attr_values: Vec<String>,
) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
    let attrs = parsed(name, &attr_names, &attr_values)?;
    let op = registry::find(name)
        .and_then(|def| def.with_attrs(&attrs))
        .map_err(to_py)?;
    let dtype = |a: &Bound<'py, PyUntypedArray>| crate::dtypes::dtype_of(a);
    let all: Vec<&Bound<'py, PyUntypedArray>> = inputs
        .iter()
        .flatten()
        .flat_map(GradInput::arrays)
        .chain([&output, &upstream])
        .collect();
    // Bool arrays are read from checked copies; every other array in place.
    let copies = all
        .iter()
        .map(|a| copy_if_bool(name, "an input", a, dtype(a)))
        .collect::<PyResult<Vec<_>>>()?;
    let mut views = all
        .iter()
        .zip(&copies)
        .map(|(a, c)| view(a, dtype(a), c.as_ref()))
        .collect::<PyResult<Vec<_>>>()?
        .into_iter();
    let args: Vec<Input<'_>> = inputs
        .iter()
        .map(|a| match a {
            Some(GradInput::One(_)) => views.next().map_or(Input::None, Input::Tensor),
            Some(GradInput::List(v)) => Input::List(views.by_ref().take(v.len()).collect()),
            None => Input::None,
        })
        .collect();
    let (out, up) = match (views.next(), views.next()) {
        (Some(o), Some(u)) => (o, u),
        _ => {
            return Err(PyRuntimeError::new_err(
                "internal error: output and upstream",
            ))
        }
    };
    // Without the GIL, in the caller's pool (as `run_op`'s long work runs).
    let grads = crate::pool::detached(py, || op.grad(&args, Some(&out), &up)).map_err(to_py)?;
    let like: Vec<(DType, &Bound<'py, PyUntypedArray>)> = all
        .iter()
        .filter_map(|a| dtype(a).map(|d| (d, *a)))
        .collect();
    // The op's entries (one per input, a list input's one per tensor) for the arrays given.
    let mut grads = grads.into_iter();
    let mut per_array = Vec::with_capacity(all.len() - 2);
    for input in &inputs {
        let entries = match input {
            Some(GradInput::List(v)) => v.len(),
            Some(GradInput::One(_)) => 1,
            None => {
                grads.next();
                0
            }
        };
        for _ in 0..entries {
            per_array.push(grads.next().flatten());
        }
    }
    per_array
        .into_iter()
        .map(|g| g.map(|t| array(py, t, &like)).transpose())
        .collect()
}

/// The attributes of the registered op `name` from names and text, as Python values (an
/// integer, number, bool, name, list of integers or bytes), as `run_op` takes them: the
/// attributes of PyTorch's custom ops, which carry them as strings.
///
/// # Errors
/// `ValueError` for text of the wrong kind; the registry's error for an unknown op.
#[pyfunction]
pub(crate) fn text_attrs<'py>(
    py: Python<'py>,
    name: &str,
    attr_names: Vec<String>,
    attr_values: Vec<String>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let attrs = parsed(name, &attr_names, &attr_values)?;
    let dict = pyo3::types::PyDict::new(py);
    for n in attrs.names() {
        if let Some(value) = attrs.get(n).map(|v| py_attr(py, v)).transpose()?.flatten() {
            dict.set_item(n, value)?;
        }
    }
    Ok(dict)
}

/// An attribute as the Python value `run_op` takes (`None` for a kind it does not know).
fn py_attr<'py>(py: Python<'py>, value: &registry::Attr) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(Some(match value {
        registry::Attr::Int(v) => v.into_pyobject(py)?.into_any(),
        registry::Attr::Float(v) => v.into_pyobject(py)?.into_any(),
        registry::Attr::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        registry::Attr::Str(v) => v.as_ref().into_pyobject(py)?.into_any(),
        registry::Attr::Ints(v) => v.clone().into_pyobject(py)?.into_any(),
        registry::Attr::Bytes(v) => pyo3::types::PyBytes::new(py, v).into_any(),
        _ => return Ok(None),
    }))
}

/// `op_linear`'s answer: the inputs, the tangent's attributes, whether the gradient is its
/// transpose.
type LinearFact<'py> = (Vec<usize>, Bound<'py, pyo3::types::PyDict>, bool);

/// Where the registered op `name`, with the attributes `attrs` (as `run_op` takes them), is
/// linear (`OpDef::linear`): the positions of the inputs it is linear in, the attributes to
/// set for the op that maps their tangents to its output's tangent, which the front ends'
/// forward mode runs, and whether its gradient is that op's transpose (which their second
/// derivatives need); `None` where it is not linear.
///
/// # Errors
/// The registry's error for an unknown op or attributes it refuses.
#[pyfunction]
#[pyo3(signature = (name, attrs=None))]
pub(crate) fn op_linear<'py>(
    py: Python<'py>,
    name: &str,
    attrs: Option<&Bound<'py, pyo3::types::PyDict>>,
) -> PyResult<Option<LinearFact<'py>>> {
    let def = registry::find(name).map_err(to_py)?;
    let attrs = crate::door::attrs(name, def.signature().attrs, attrs)?;
    let Some(linear) = def.with_attrs(&attrs).map_err(to_py)?.linear() else {
        return Ok(None);
    };
    Ok(Some((
        linear.inputs,
        py_attrs(py, &linear.tangent_attrs)?,
        linear.adjoint,
    )))
}

/// Attributes as a dict of the Python values `run_op` takes.
fn py_attrs<'py>(
    py: Python<'py>,
    attrs: &[(&'static str, registry::Attr)],
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let dict = pyo3::types::PyDict::new(py);
    for (n, value) in attrs {
        if let Some(value) = py_attr(py, value)? {
            dict.set_item(n, value)?;
        }
    }
    Ok(dict)
}

/// Where the registered op `name` with `attrs` (as `run_op` takes them) is linear in each
/// of several groups of inputs apart (`OpDef::multilinear`: a weighted bag's table and
/// weights): each group's positions and its tangent's attributes, whose tangents the front
/// ends' forward mode sums; empty where it is not.
///
/// # Errors
/// The registry's error for an unknown op or attributes it refuses.
#[pyfunction]
#[pyo3(signature = (name, attrs=None))]
pub(crate) fn op_multilinear<'py>(
    py: Python<'py>,
    name: &str,
    attrs: Option<&Bound<'py, pyo3::types::PyDict>>,
) -> PyResult<Vec<(Vec<usize>, Bound<'py, pyo3::types::PyDict>)>> {
    let def = registry::find(name).map_err(to_py)?;
    let attrs = crate::door::attrs(name, def.signature().attrs, attrs)?;
    let groups = def.with_attrs(&attrs).map_err(to_py)?.multilinear();
    groups
        .into_iter()
        .map(|g| Ok((g.inputs, py_attrs(py, &g.tangent_attrs)?)))
        .collect()
}

/// `op_routed`'s answer: the linear op, the attributes that differ, its linear inputs,
/// whether the factors are constant.
type RouteFact<'py> = (
    &'static str,
    Bound<'py, pyo3::types::PyDict>,
    Vec<usize>,
    bool,
);

/// Where the registered op `name` with `attrs` (as `run_op` takes them) is routed
/// (`registry::route`: a max, a min, a product): the linear op whose tangent, on each
/// input's tangent times the op's gradient for an upstream of ones, is the op's forward
/// derivative; the attributes to set over `attrs` for it; the positions of the inputs it
/// takes tangents of; and whether the factors are constant wherever the op is
/// differentiable (a max's, a min's; not a product's), so that their derivative is zero.
/// `None` where the op is linear or not routed.
///
/// # Errors
/// The registry's error for an unknown op or attributes it refuses.
#[pyfunction]
#[pyo3(signature = (name, attrs=None))]
pub(crate) fn op_routed<'py>(
    py: Python<'py>,
    name: &str,
    attrs: Option<&Bound<'py, pyo3::types::PyDict>>,
) -> PyResult<Option<RouteFact<'py>>> {
    let def = registry::find(name).map_err(to_py)?;
    let attrs = crate::door::attrs(name, def.signature().attrs, attrs)?;
    let Some((routed, inputs)) = registry::route(name, &attrs).map_err(to_py)? else {
        return Ok(None);
    };
    let attrs = py_attrs(py, &routed.attrs)?;
    Ok(Some((routed.op, attrs, inputs, routed.constant_factors)))
}

/// Whether the registered op `name`'s gradient reads its output (a max compares with it; a
/// gather's does not), so that a front end keeps the output only where it is read.
///
/// # Errors
/// The registry's error for a name it lacks.
#[pyfunction]
pub(crate) fn grad_reads_output(name: &str) -> PyResult<bool> {
    Ok(registry::find(name).map_err(to_py)?.grad_reads_output())
}
