//! The one door to the core's registry: `run_op(name, inputs, attrs, out, in_place)` runs
//! any registered op on NumPy arrays. The Python functions are thin wrappers over it; the
//! checks, defaults and strategy are the op's own.

use crate::errors::to_py;
use crate::host::NumpyHost;
use crate::output::array_from_vec;
use crate::raw::{self, Raw};
use crate::{dtypes, into_vec, moved, output, pool, prepared, ragged};
use ndarray::ArrayViewD;
use ndgather::registry::{self, Attr, AttrDef, AttrKind, Attrs, Fact, Input, InputKind, Value};
use ndgather::{DType, OpDef, Out, Tensor, TensorView};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyStringMethods, PyTuple,
};
use smallvec::SmallVec;
use std::borrow::Cow;

/// A bool array's checked copy (a byte other than 0 or 1 is no bool); `None` for an array
/// of another dtype of the table, read in place; an error for dtypes the core lacks.
pub(crate) fn copy_if_bool(
    op: &str,
    what: &str,
    array: &Bound<'_, PyUntypedArray>,
    dtype: Option<DType>,
) -> PyResult<Option<Tensor>> {
    match dtype {
        Some(DType::Bool) => {
            let bytes: Vec<u8> = array.call_method0("tobytes")?.extract()?;
            Tensor::from_bytes(DType::Bool, array.shape(), &bytes)
                .map(Some)
                .map_err(to_py)
        }
        Some(dtype) if dtype.is_plain() => Ok(None),
        _ => Err(PyTypeError::new_err(format!(
            "{op}: {what} has dtype {}; ndgather takes arrays of {} in native byte order",
            array.dtype(),
            DType::names_where(|d| d.size().is_some())
        ))),
    }
}

/// The core's view of `array`: its own memory, or its checked copy.
pub(crate) fn view<'a>(
    array: &'a Bound<'_, PyUntypedArray>,
    dtype: Option<DType>,
    copy: Option<&'a Tensor>,
) -> PyResult<TensorView<'a>> {
    match copy {
        Some(t) => Ok(t.view()),
        None => view_of(&Raw::of(array), dtype),
    }
}

/// The core's view of an array of the table's plain `dtype`, lent as `raw`.
fn view_of<'a>(raw: &Raw<'a>, dtype: Option<DType>) -> PyResult<TensorView<'a>> {
    let dtype = dtype.ok_or_else(|| PyTypeError::new_err("checked dtype"))?;
    ndgather::with_dtype!(dtype, plain T => raw.typed::<T>().map(TensorView::from),
        else Err(PyTypeError::new_err("checked dtype")))
}

/// The inputs of one call, inline up to four.
type Slots<'py> = SmallVec<[Slot<'py>; 4]>;

/// Each input array of the table's dtypes, by dtype.
type Like<'a, 'py> = SmallVec<[(DType, &'a Bound<'py, PyUntypedArray>); 4]>;

/// One input as the caller gave it, each array with the table's dtype of it (read once): an
/// array, a list of arrays, a ragged tensor (its flat values, then its row splits), or none.
enum Slot<'py> {
    One(Bound<'py, PyUntypedArray>, Option<DType>),
    List(Vec<Bound<'py, PyUntypedArray>>, Vec<Option<DType>>),
    Ragged(Vec<Bound<'py, PyUntypedArray>>, Vec<Option<DType>>),
    None,
}

/// `arrays` with their dtypes.
fn with_dtypes<'py>(
    arrays: Vec<Bound<'py, PyUntypedArray>>,
) -> (Vec<Bound<'py, PyUntypedArray>>, Vec<Option<DType>>) {
    let dtypes = arrays.iter().map(dtypes::dtype_of).collect();
    (arrays, dtypes)
}

fn slot<'py>(op: &str, what: &str, object: &Bound<'py, PyAny>) -> PyResult<Slot<'py>> {
    if object.is_none() {
        return Ok(Slot::None);
    }
    if let Ok(array) = object.cast::<PyUntypedArray>() {
        return Ok(Slot::One(array.clone(), dtypes::dtype_of(array)));
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        // A ragged tensor: {"values": array, "row_splits": [array, ...]}.
        let array = |item: Option<Bound<'py, PyAny>>, part: &str| {
            item.and_then(|a| a.cast_into::<PyUntypedArray>().ok())
                .ok_or_else(|| {
                    PyTypeError::new_err(format!(
                        "{op}: a ragged {what} is a dict of 'values', a NumPy array, and \
                     'row_splits', a list of them ({part} is not)"
                    ))
                })
        };
        let mut parts = vec![array(dict.get_item("values")?, "values")?];
        let splits = dict.get_item("row_splits")?;
        let splits = match &splits {
            Some(s) => s
                .try_iter()
                .map_err(|_| array(None, "row_splits").unwrap_err())?,
            None => return Err(array(None, "row_splits").unwrap_err()),
        };
        for s in splits {
            parts.push(array(Some(s?), "row_splits")?);
        }
        let (parts, dtypes) = with_dtypes(parts);
        return Ok(Slot::Ragged(parts, dtypes));
    }
    let element = |(k, item): (usize, Bound<'py, PyAny>)| {
        item.cast_into::<PyUntypedArray>()
            .map_err(|_| PyTypeError::new_err(format!("{op}: {what}[{k}] must be a NumPy array")))
    };
    let arrays = if let Ok(list) = object.cast::<PyList>() {
        list.iter()
            .enumerate()
            .map(element)
            .collect::<PyResult<Vec<_>>>()?
    } else if let Ok(tuple) = object.cast::<PyTuple>() {
        tuple
            .iter()
            .enumerate()
            .map(element)
            .collect::<PyResult<Vec<_>>>()?
    } else {
        return Err(PyTypeError::new_err(format!(
            "{op}: {what} must be a NumPy array, a list of them, or None, not {}",
            object.get_type().name()?
        )));
    };
    let (arrays, dtypes) = with_dtypes(arrays);
    Ok(Slot::List(arrays, dtypes))
}

impl<'py> Slot<'py> {
    /// The slot as an operand that may be ragged: an array, or a ragged tensor's values and
    /// splits; `None` for a list or none, which the op's own check refuses.
    fn operand(&self) -> Option<ragged::Operand<'_, 'py>> {
        match self {
            Slot::One(a, _) => Some((a, None)),
            Slot::Ragged(parts, _) => parts.split_first().map(|(v, s)| (v, Some(s))),
            _ => None,
        }
    }

    fn ragged(&self) -> bool {
        matches!(self, Slot::Ragged(..))
    }

    /// The slot's arrays with the table's dtypes of them.
    fn typed(&self) -> impl Iterator<Item = (&Bound<'py, PyUntypedArray>, Option<DType>)> {
        let dtypes = match self {
            Slot::One(_, dtype) => std::slice::from_ref(dtype),
            Slot::List(_, d) | Slot::Ragged(_, d) => d.as_slice(),
            Slot::None => &[],
        };
        self.arrays().iter().zip(dtypes.iter().copied())
    }

    /// The slot's arrays.
    fn arrays(&self) -> &[Bound<'py, PyUntypedArray>] {
        match self {
            Slot::One(a, _) => std::slice::from_ref(a),
            Slot::List(l, _) | Slot::Ragged(l, _) => l.as_slice(),
            Slot::None => &[],
        }
    }
}

/// A Python value as an attribute: bools (Python's and NumPy's), integers (anything with
/// `__index__`), floats (anything else with `__float__`), strings, bytes, lists of ints.
fn attr(op: &str, name: &str, def: Option<&AttrDef>, value: &Bound<'_, PyAny>) -> PyResult<Attr> {
    // Python's own types first, by their exact type (every call's attributes are these).
    if let Ok(text) = value.cast_exact::<PyString>() {
        let text = text.to_cow()?;
        let text = text.as_ref();
        // One of the op's own choices (a policy, a reduction) is the signature's string.
        let choices = match def.map(|d| d.kind) {
            Some(AttrKind::Str(choices)) => choices,
            _ => &[],
        };
        return Ok(Attr::Str(match choices.iter().find(|c| **c == text) {
            Some(choice) => Cow::Borrowed(choice),
            None => Cow::Owned(text.to_owned()),
        }));
    }
    if value.is_exact_instance_of::<PyBool>() {
        return Ok(Attr::Bool(value.is_truthy()?));
    }
    if value.is_exact_instance_of::<PyInt>() {
        return value.extract::<i64>().map(Attr::Int).map_err(|_| {
            PyOverflowError::new_err(format!(
                "{op}: attribute {name} = {value} is outside int64's range"
            ))
        });
    }
    if value.is_exact_instance_of::<PyFloat>() {
        return Ok(Attr::Float(value.extract()?));
    }
    // A shape: a list or tuple of Python ints (asking a list for `__index__`, below, costs
    // more than the rest of a call; so does the sequence protocol of `extract::<Vec<_>>`).
    let ints = |items: &mut dyn ExactSizeIterator<Item = Bound<'_, PyAny>>| {
        let mut ints = Vec::with_capacity(items.len());
        for item in items {
            ints.push(item.cast_exact::<PyInt>().ok()?.extract::<i64>().ok()?);
        }
        Some(ints)
    };
    let listed = match (value.cast_exact::<PyList>(), value.cast_exact::<PyTuple>()) {
        (Ok(list), _) => ints(&mut list.iter()),
        (_, Ok(tuple)) => ints(&mut tuple.iter()),
        _ => None,
    };
    if let Some(ints) = listed {
        return Ok(Attr::Ints(ints));
    }
    let numpy_bool = value.get_type().name()?.to_string().starts_with("bool");
    if value.is_instance_of::<PyBool>() || numpy_bool {
        return Ok(Attr::Bool(value.is_truthy()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(Attr::Str(value.extract::<String>()?.into()));
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Attr::Bytes(bytes.as_bytes().to_vec()));
    }
    if value.hasattr("__index__")? {
        let index = match value.call_method0("__index__") {
            Ok(index) => index,
            // A NumPy array of more than one integer has `__index__` but is a shape.
            Err(e) => return value.extract::<Vec<i64>>().map(Attr::Ints).map_err(|_| e),
        };
        return index.extract::<i64>().map(Attr::Int).map_err(|_| {
            PyOverflowError::new_err(format!(
                "{op}: attribute {name} = {index} is outside int64's range"
            ))
        });
    }
    if value.hasattr("__float__")? {
        return Ok(Attr::Float(value.call_method0("__float__")?.extract()?));
    }
    if let Ok(ints) = value.extract::<Vec<i64>>() {
        return Ok(Attr::Ints(ints));
    }
    Err(PyTypeError::new_err(format!(
        "{op}: attribute {name} must be a bool, int, float, str, bytes or a list of int64s, not {}",
        value.get_type().name()?
    )))
}

/// The attributes in `dict` for the op named `op`, whose signature's are `known`.
pub(crate) fn attrs(
    op: &str,
    known: &[AttrDef],
    dict: Option<&Bound<'_, PyDict>>,
) -> PyResult<Attrs> {
    attrs_of(op, known, dict.into_iter().flat_map(|d| d.iter()))
}

/// The attributes of `items`, a dict's names and values.
pub(crate) fn attrs_of<'py, B: std::borrow::Borrow<Bound<'py, PyAny>>>(
    op: &str,
    known: &[AttrDef],
    items: impl Iterator<Item = (B, B)>,
) -> PyResult<Attrs> {
    let mut out = Attrs::new();
    for (key, value) in items {
        let (key, value) = (key.borrow(), value.borrow());
        let key = key.cast::<PyString>().map_err(PyErr::from)?;
        let name = key.to_cow()?;
        let name = name.as_ref();
        if !value.is_none() {
            // A name the op takes is its signature's own (nothing copied); the op refuses
            // any other.
            match known.iter().find(|a| a.name == name) {
                Some(def) => out.insert(def.name, attr(op, name, Some(def), value)?),
                None => out.insert(name.to_owned(), attr(op, name, None, value)?),
            }
        }
    }
    Ok(out)
}

/// Runs the registered op `name` on `inputs` (in the op's order: arrays, lists of arrays
/// for the list inputs, None for optional ones, `{"values": array, "row_splits": [arrays]}`
/// for a ragged one) with `attrs`. Into a new result (an array; `(values, [row_splits])`
/// where an operand is ragged; a list of arrays, or of `(indices, values, dense_shape)`, for
/// a gradient per shard); into `out` (unchanged on error; then None is returned); or, with
/// `in_place`, into `out` as the tensor the op writes (its first input then None).
#[pyfunction]
#[pyo3(signature = (name, inputs, attrs=None, out=None, in_place=false))]
pub(crate) fn run_op<'py>(
    py: Python<'py>,
    name: &str,
    inputs: &Bound<'py, PyAny>,
    attrs: Option<&Bound<'py, PyDict>>,
    out: Option<&Bound<'py, PyUntypedArray>>,
    in_place: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let def = registry::find(name).map_err(to_py)?;
    let signature = def.signature();
    // The attributes first, their errors before the inputs'. An op that moves its first
    // input's elements reads them each time (its fill value is settled against the params
    // below); any other may find its op kept from an earlier call with the same objects.
    let moves = signature.inputs.first().map(|d| d.kind) == Some(InputKind::Elements) && !in_place;
    let mut given = match moves {
        true => prepared::Given::Read(self::attrs(name, signature.attrs, attrs)?, None),
        false => prepared::given(py, def, attrs)?,
    };
    let what = |k: usize| signature.inputs.get(k).map_or("input", |d| d.name);
    // Read in place from the caller's list, one slot per item (plain loops: the iterator
    // adapters of a collect into a result moved each slot twice).
    let mut slots = Slots::new();
    if let Ok(list) = inputs.cast::<PyList>() {
        for (k, object) in list.iter().enumerate() {
            slots.push(slot(name, what(k), &object)?);
        }
    } else if let Ok(tuple) = inputs.cast::<PyTuple>() {
        for (k, object) in tuple.iter().enumerate() {
            slots.push(slot(name, what(k), &object)?);
        }
    } else {
        return Err(PyTypeError::new_err(format!(
            "{name}: inputs must be a list of the op's inputs, not {}",
            inputs.get_type().name()?
        )));
    }
    // An op that moves its first input's elements (gather, gather_nd, take_along_axis):
    // that array lent as its bytes, whatever its dtype.
    // (In place, the op's own refusal comes from the general path.)
    if let (prepared::Given::Read(attrs, _), [Slot::One(params, _), Slot::One(indices, _)], true) =
        (&mut given, slots.as_slice(), moves)
    {
        moved::settle_fill(attrs, params)?;
        let op = def.with_attrs(attrs).map_err(to_py)?;
        // The op's own error for indices that are not integers (NumPy's for
        // take_along_axis), from its check of facts; TensorFlow's words where it has none.
        let not_integer = || {
            let facts = [
                Fact::known(DType::U8, params.shape()),
                Fact::known(DType::Bool, indices.shape()),
            ];
            match op.infer(&facts) {
                Err(
                    e @ (ndgather::Error::AlongIndicesNotInteger
                    | ndgather::Error::AlongAxisOutOfRange { .. }),
                ) => to_py(e),
                _ => dtypes::not_integer("indices", indices),
            }
        };
        let result = moved::run(py, op.as_ref(), (params, indices), out, not_integer)?;
        return Ok(out.is_none().then_some(result));
    }
    // The same ops where an operand is ragged: `(values, [row_splits, ...])` back, always
    // new (a ragged walk writes no caller's buffer of records).
    if let (prepared::Given::Read(attrs, _), [p, i], true) = (&mut given, slots.as_slice(), moves) {
        if let (Some(p), Some(i), true) = (p.operand(), i.operand(), p.ragged() || i.ragged()) {
            if out.is_some() {
                return Err(PyValueError::new_err(format!(
                    "{name}: out is not taken where an operand is ragged; the result is new"
                )));
            }
            moved::settle_fill(attrs, p.0)?;
            let op = def.with_attrs(attrs).map_err(to_py)?;
            return ragged::run_moved(py, op.as_ref(), p, i).map(Some);
        }
    }
    let op = given.op(def)?;
    dtype_error_of_the_op(op.as_ref(), &slots, out.filter(|_| in_place))?;
    // The target's dtype in the table, read once; each array lent once, for the overlap
    // check and its view.
    let target_dtype = out.and_then(dtypes::dtype_of);
    let raws: SmallVec<[Raw<'_>; 4]> = slots.iter().flat_map(Slot::arrays).map(Raw::of).collect();
    let target_raw = out.map(Raw::of);
    if let (Some(target), Some(t)) = (out, &target_raw) {
        if raws.iter().any(|a| t.may_overlap(a)) {
            let what = if in_place { "the array written" } else { "out" };
            return Err(PyValueError::new_err(format!(
                "{name}: {what} shares memory with an input; pass separate arrays"
            )));
        }
        if in_place
            && !target_dtype.is_some_and(DType::is_plain)
            && written_as_units(py, op.as_ref(), &slots, target)?
        {
            return Ok(None);
        }
    }
    // Bool arrays are read from checked copies, each kept with its slot's and its own
    // position; every other array in place.
    let mut copies = Vec::new();
    for (k, s) in slots.iter().enumerate() {
        for (j, (a, dtype)) in s.typed().enumerate() {
            if let Some(copy) = copy_if_bool(name, what(k), a, dtype)? {
                copies.push(((k, j), copy));
            }
        }
    }
    let copy_of = |at: (usize, usize)| copies.iter().find(|(c, _)| *c == at).map(|(_, t)| t);
    let mut views = SmallVec::<[Input<'_>; 4]>::new();
    let mut at = 0;
    for (k, s) in slots.iter().enumerate() {
        // This slot's arrays as lent, in the order `raws` was made.
        let lent = raws.get(at..at + s.arrays().len()).unwrap_or_default();
        at += lent.len();
        let mut each =
            s.typed()
                .zip(lent)
                .enumerate()
                .map(|(j, ((_, d), raw))| match copy_of((k, j)) {
                    Some(t) => Ok(t.view()),
                    None => view_of(raw, d),
                });
        views.push(match s {
            Slot::One(..) => Input::Tensor(
                each.next()
                    .ok_or_else(|| PyValueError::new_err("empty slot"))??,
            ),
            Slot::List(..) => Input::List(each.collect::<PyResult<_>>()?),
            Slot::Ragged(parts, _) => {
                let values = each
                    .next()
                    .ok_or_else(|| PyValueError::new_err("empty slot"))??;
                ragged::input(values, &parts[1..])?
            }
            Slot::None => Input::None,
        });
    }
    // The inputs of each dtype, for a result of one of their dtypes (bfloat16 and the
    // float8 types are ml_dtypes' dtypes, which the table cannot name).
    let like: Like<'_, 'py> = slots
        .iter()
        .flat_map(Slot::typed)
        .filter_map(|(a, d)| d.map(|d| (d, a)))
        .collect();
    let Some(target) = out else {
        // A write op's new output may be an array NumPy allocates, of its tensor's dtype.
        let written = slots.first().filter(|_| op.writes_first_input());
        let dtype = match written {
            Some(Slot::One(tensor, _)) => Some(tensor.dtype()),
            _ => None,
        };
        let mut host = NumpyHost::new(py, dtype, true);
        let value = op.run_hosted(&views, Out::New, &mut host).map_err(to_py)?;
        return match (host.take_array(), value) {
            (Some(array), None) => Ok(Some(array)),
            (None, value) => to_numpy(py, value, &like).map(Some),
            (Some(_), Some(_)) => Err(PyValueError::new_err("internal error: two results")),
        };
    };
    let mut host = NumpyHost::new(py, None, true);
    let raw = target_raw.ok_or_else(|| PyValueError::new_err("the target not lent"))?;
    let plain = target_dtype.filter(|d| d.is_plain());
    if let Some(dtype) = plain {
        let written = ndgather::with_dtype!(dtype, plain T => {
            if raw.aligned_to(std::mem::align_of::<T>()) {
                let view = raw.typed_mut::<T>()?;
                let out = if in_place { Out::InPlace(view.into()) } else { Out::Into(view.into()) };
                op.run_hosted(&views, out, &mut host).map_err(to_py)?;
                true
            } else {
                false
            }
        }, else false);
        if written {
            return Ok(None);
        }
    }
    {
        // bool, or a misaligned array: into a scratch tensor (in place, a checked copy of the
        // array), through the core's own checks, then its bytes copied in.
        let mut scratch = match (plain, copy_if_bool(name, "out", target, target_dtype)?) {
            (_, Some(copy)) if in_place => copy,
            (_, Some(_)) => Tensor::zeros(DType::Bool, target.shape()).map_err(to_py)?,
            (Some(dtype), None) if in_place => {
                let bytes: Vec<u8> = target.call_method0("tobytes")?.extract()?;
                Tensor::from_bytes(dtype, target.shape(), &bytes).map_err(to_py)?
            }
            (Some(dtype), None) => Tensor::zeros(dtype, target.shape()).map_err(to_py)?,
            (None, None) => {
                return Err(PyTypeError::new_err(format!(
                    "{name}: out has dtype {}, which ndgather does not write",
                    target.dtype()
                )))
            }
        };
        let out = if in_place {
            Out::InPlace(scratch.view_mut())
        } else {
            Out::Into(scratch.view_mut())
        };
        op.run_hosted(&views, out, &mut host).map_err(to_py)?;
        write_back(target, &scratch)?;
    }
    Ok(None)
}

/// The op's own error for a dense input of a dtype the core's table lacks, where its
/// inference has one that names no dtype (NumPy's `IndexError` for indices of strings, its
/// axis error first): asked with float64 standing in for that dtype, and the in-place
/// target's fact as the written input's. Any other error is left to the door's check.
fn dtype_error_of_the_op(
    op: &dyn OpDef,
    slots: &[Slot<'_>],
    target: Option<&Bound<'_, PyUntypedArray>>,
) -> PyResult<()> {
    let defs = op.signature().inputs;
    // (Integers of another byte order are integers: the door's own error names that.)
    let foreign = |k: usize, (a, dtype): (&Bound<'_, PyUntypedArray>, Option<DType>)| {
        dtype.is_none()
            && !matches!(a.dtype().kind(), b'i' | b'u')
            && defs.get(k).is_some_and(|d| d.kind == InputKind::Tensor)
    };
    let fact = |(a, dtype): (&Bound<'_, PyUntypedArray>, Option<DType>), stand_in: bool| {
        Fact::new(
            if stand_in { Some(DType::F64) } else { dtype },
            ndgather::shape::Shape::known(a.shape()),
        )
    };
    let given = |k: usize| match slots.get(k) {
        Some(Slot::One(a, dtype)) => Some((a, *dtype)),
        _ => None,
    };
    if !(0..slots.len()).any(|k| given(k).is_some_and(|a| foreign(k, a))) {
        return Ok(());
    }
    let facts: Vec<Fact> = (0..defs.len())
        .map(|k| match (given(k), k, target) {
            (Some(a), _, _) => fact(a, foreign(k, a)),
            (None, 0, Some(t)) => fact((t, dtypes::dtype_of(t)), false),
            _ => Fact::unknown(),
        })
        .collect();
    // Only the errors that name the dtype as a kind (not the stand-in's name) surface.
    match op.infer(&facts) {
        Err(
            e @ (ndgather::Error::AlongIndicesNotInteger
            | ndgather::Error::AlongAxisOutOfRange { .. }),
        ) => Err(to_py(e)),
        _ => Ok(()),
    }
}

/// Writes in place a `target` whose elements the core does not read as values (objects,
/// datetimes, bools, …) of 1, 2, 4 or 8 bytes, as unsigned integers of its size, for an op
/// that only moves elements into it: one with `Elements` inputs, which by the contract
/// (`InputKind::Elements`) are where a written tensor's values come from (`put_along_axis`'s
/// values). Each of them must have the target's dtype. Objects move as their addresses with
/// the GIL held, on a copy of the target's, then are stored with their references counted.
/// Returns whether it applied; an op that reads or combines values (no `Elements` input)
/// never takes this path. (The caller takes a target of the table's plain dtypes elsewhere.)
fn written_as_units<'py>(
    py: Python<'py>,
    op: &dyn OpDef,
    slots: &[Slot<'py>],
    target: &Bound<'py, PyUntypedArray>,
) -> PyResult<bool> {
    let dtype = target.dtype();
    let defs = op.signature().inputs;
    let same = |a: &Bound<'py, PyUntypedArray>| a.dtype().is_equiv_to(&dtype);
    let mut moves = false;
    for (k, s) in slots.iter().enumerate() {
        let moved = defs.get(k).map(|d| d.kind) == Some(InputKind::Elements);
        match s {
            Slot::One(a, _) if moved && same(a) => moves = true,
            // The values moved must be the target's own dtype (uint64 updates into objects
            // would be stored as addresses), and nothing else may be (bool or datetime
            // indices would be read as integers).
            Slot::One(a, _) if moved || same(a) => return Ok(false),
            Slot::One(..) | Slot::None => {}
            _ => return Ok(false),
        }
    }
    if !moves {
        return Ok(false);
    }
    let objects = dtype.has_object();
    if objects {
        for a in std::iter::once(target).chain(slots.iter().flat_map(Slot::arrays)) {
            if same(a) {
                moved::check_objects(op.name(), a, None)?;
            }
        }
    }
    macro_rules! run_as {
        ($U:ty) => {{
            let mut copies = Vec::with_capacity(slots.len());
            for s in slots {
                copies.push(match s {
                    Slot::One(a, d) if !same(a) => copy_if_bool(op.name(), "input", a, *d)?,
                    _ => None,
                });
            }
            let mut views = Vec::with_capacity(slots.len());
            for (s, c) in slots.iter().zip(&copies) {
                views.push(match s {
                    Slot::One(a, _) if same(a) => Input::Tensor(raw::typed_view::<$U>(a)?.into()),
                    Slot::One(a, d) => Input::Tensor(view(a, *d, c.as_ref())?),
                    _ => Input::None,
                });
            }
            if objects {
                // Every check runs on the copy before a slot of the target changes.
                let current = raw::typed_view::<$U>(target)?;
                let mut slots = ndarray::ArrayD::from_shape_vec(
                    current.raw_dim(),
                    current.iter().copied().collect(),
                )
                .map_err(|e| PyValueError::new_err(format!("internal error: {e}")))?;
                pool::in_callers_pool(|| op.run(&views, Out::InPlace(slots.view_mut().into())))
                    .map_err(to_py)?;
                let objects = output::object_references(py, slots.iter().map(|&p| p as u64));
                output::store_objects(py, target, objects)?;
            } else {
                let target = raw::typed_view_mut::<$U>(target)?;
                let mut host = NumpyHost::new(py, None, true);
                op.run_hosted(&views, Out::InPlace(target.into()), &mut host)
                    .map_err(to_py)?;
            }
            Ok(true)
        }};
    }
    match dtype.itemsize() {
        1 if !objects => run_as!(u8),
        2 if !objects => run_as!(u16),
        4 if !objects => run_as!(u32),
        8 => run_as!(u64),
        _ => Ok(false),
    }
}

/// `tensor`'s bytes written into `target`, a bool array of its shape.
fn write_back(target: &Bound<'_, PyUntypedArray>, tensor: &Tensor) -> PyResult<()> {
    let bytes = tensor.to_bytes().map_err(to_py)?;
    // Each element as its bytes (a record of them), which any alignment allows.
    let mut bytes_view = Raw::of(target).bytes_mut()?;
    let source = ArrayViewD::from_shape(bytes_view.raw_dim(), &bytes)
        .map_err(|e| PyValueError::new_err(format!("internal error: {e}")))?;
    bytes_view.assign(&source);
    Ok(())
}

pub(crate) fn dense(value: Option<Value>) -> PyResult<Tensor> {
    value
        .ok_or_else(|| PyValueError::new_err("internal error: a new result was not returned"))?
        .into_dense()
        .map_err(to_py)
}

/// A tensor as a NumPy array, of the dtype object in `like` of its dtype, if any.
pub(crate) fn array<'py>(
    py: Python<'py>,
    tensor: Tensor,
    like: &[(DType, &Bound<'py, PyUntypedArray>)],
) -> PyResult<Bound<'py, PyAny>> {
    let descr = match like.iter().find(|(dtype, _)| *dtype == tensor.dtype()) {
        Some((_, a)) => a.dtype(),
        None => {
            let numpy = py.import("numpy")?;
            numpy
                .call_method1("dtype", (tensor.dtype().name(),))?
                .cast_into::<PyArrayDescr>()
                .map_err(PyErr::from)?
        }
    };
    let shape: SmallVec<[usize; 4]> = tensor.shape().into();
    ndgather::with_tensor!(Tensor, tensor, fixed a => array_from_vec(py, &descr, &shape, into_vec(a)),
        else dtype => Err(PyTypeError::new_err(format!("no NumPy array of {dtype}"))))
}

/// A result in Python: a dense one as a NumPy array; a ragged one as `(values,
/// [row_splits, ...])`; a list as a list of arrays; sparse gradients as a list of
/// `(indices, values, dense_shape)`, TensorFlow's `IndexedSlices` parts.
fn to_numpy<'py>(
    py: Python<'py>,
    value: Option<Value>,
    like: &[(DType, &Bound<'py, PyUntypedArray>)],
) -> PyResult<Bound<'py, PyAny>> {
    let value = value
        .ok_or_else(|| PyValueError::new_err("internal error: a new result was not returned"))?;
    match value {
        Value::Dense(t) => array(py, t, like),
        Value::List(l) => {
            let arrays = l
                .into_iter()
                .map(|t| array(py, t, like))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, arrays)?.into_any())
        }
        Value::Sparse(s) => {
            let parts = s
                .into_iter()
                .map(|g| {
                    let indices: Vec<i64> = g.indices.iter().map(|&i| i as i64).collect();
                    let indices = numpy::PyArray1::from_vec(py, indices).into_any();
                    let values = array(py, g.values, like)?;
                    Ok((indices, values, g.dense_shape)
                        .into_pyobject(py)?
                        .into_any())
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, parts)?.into_any())
        }
        other => ragged::result_to_py(py, other, |t| array(py, t, like)),
    }
}

/// One op's row: name, summary, inputs with their kinds, attributes with kind, default and
/// whether they may be left out.
type OpRow = (
    &'static str,
    &'static str,
    Vec<(&'static str, String)>,
    Vec<(&'static str, String, Option<&'static str>, bool)>,
);

/// The registry's ops and their signatures, for the Python layer's coverage test and
/// `help`: `(name, summary, [(input, kind)], [(attr, kind, default or None, optional)])`.
#[pyfunction]
pub(crate) fn op_signatures() -> Vec<OpRow> {
    registry::ops()
        .iter()
        .map(|op| {
            let sig = op.signature();
            let inputs = sig
                .inputs
                .iter()
                .map(|d| (d.name, format!("{:?}", d.kind)))
                .collect();
            let attrs = sig
                .attrs
                .iter()
                .map(|a| {
                    (
                        a.name,
                        registry::kind_name(a.kind).to_string(),
                        a.default,
                        a.optional,
                    )
                })
                .collect();
            (op.name(), op.summary(), inputs, attrs)
        })
        .collect()
}
