//! Ops prepared from their attributes, kept for the next call with the same ones. A tiny
//! call spent a tenth of its time reading its dict of attributes into an op value, though a
//! wrapper passes the same objects each time (its string constants, small ints, `True`).
//!
//! The key is the op's name and the identities of the attributes' names and values, as
//! read once from the dict (the same pairs the attributes are read from, so nothing the
//! reading runs can change them in between). An entry holds a reference to each object,
//! so no address it names is reused for another object while it lives; and it is kept only
//! where every name is an exact `str` and every value of an immutable exact type (`str`,
//! `int`, `bool`, `float`, or `None`), whose object is then its value. Reading values of
//! those types runs no Python code. A handful of entries live, replaced in turn.

use crate::door;
use crate::errors::to_py;
use ndgather::registry::Attrs;
use ndgather::OpDef;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use smallvec::SmallVec;
use std::sync::{Arc, Mutex};

/// How many prepared ops are kept (about one per call site of a loop).
const ENTRIES: usize = 8;

/// A call's attributes by identity: each name and its value, in the dict's order.
type Key = SmallVec<[(Py<PyAny>, Py<PyAny>); 4]>;

struct Entry {
    /// The op's registered name (its address: the registry's names are distinct).
    name: &'static str,
    key: Key,
    op: Arc<dyn OpDef>,
}

/// The entries, and the one to replace next.
static CACHE: Mutex<(Vec<Entry>, usize)> = Mutex::new((Vec::new(), 0));

/// A call's attributes: the op an earlier call prepared from the same objects, or the
/// attributes read now (with their key where they may be kept).
#[expect(
    clippy::large_enum_variant,
    reason = "one per call, on the door's stack: boxing would allocate on every read"
)]
pub(crate) enum Given {
    Kept(Arc<dyn OpDef>),
    Read(Attrs, Option<Key>),
}

/// Whether `value`'s type makes its objects unchangeable, and reading one runs no code.
fn immutable(value: &Bound<'_, PyAny>) -> bool {
    value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyBool>()
        || value.is_exact_instance_of::<PyFloat>()
}

/// Whether `key` names exactly the items of `dict`, as objects.
fn same(key: &Key, dict: Option<&Bound<'_, PyDict>>) -> bool {
    let Some(dict) = dict else {
        return key.is_empty();
    };
    dict.len() == key.len()
        && (dict.iter().zip(key))
            .all(|((k, v), (kk, vv))| k.as_ptr() == kk.as_ptr() && v.as_ptr() == vv.as_ptr())
}

/// The attributes of `dict` for `def`: kept from an earlier call, or read now (with the
/// door's errors for them).
pub(crate) fn given(
    py: Python<'_>,
    def: &dyn OpDef,
    dict: Option<&Bound<'_, PyDict>>,
) -> PyResult<Given> {
    let name = def.name();
    // (Held by one thread at a time, with the GIL; another finds it busy and reads its own.)
    if let Ok(cache) = CACHE.try_lock() {
        let kept = (cache.0.iter()).find(|e| std::ptr::eq(e.name, name) && same(&e.key, dict));
        if let Some(e) = kept {
            return Ok(Given::Kept(Arc::clone(&e.op)));
        }
    }
    let pairs: Key = (dict.into_iter().flat_map(|d| d.iter()))
        .map(|(k, v)| (k.unbind(), v.unbind()))
        .collect();
    // (Names of a `str` subclass are read by their text, but may carry more, which an entry
    // would keep alive.)
    let keep = (pairs.iter())
        .all(|(k, v)| k.bind(py).is_exact_instance_of::<PyString>() && immutable(v.bind(py)));
    let items = pairs.iter().map(|(k, v)| (k.bind(py), v.bind(py)));
    let attrs = door::attrs_of(name, def.signature().attrs, items)?;
    Ok(Given::Read(attrs, keep.then_some(pairs)))
}

impl Given {
    /// The op with these attributes, `def`'s; one read now is kept for the next call.
    ///
    /// # Errors
    /// The op's own for attributes it refuses.
    pub(crate) fn op(self, def: &dyn OpDef) -> PyResult<Arc<dyn OpDef>> {
        let (attrs, key) = match self {
            Given::Kept(op) => return Ok(op),
            Given::Read(attrs, key) => (attrs, key),
        };
        let op: Arc<dyn OpDef> = Arc::from(def.with_attrs(&attrs).map_err(to_py)?);
        if let (Some(key), Ok(mut cache)) = (key, CACHE.try_lock()) {
            let (entries, next) = &mut *cache;
            let entry = Entry {
                name: def.name(),
                key,
                op: Arc::clone(&op),
            };
            if entries.len() < ENTRIES {
                entries.push(entry);
            } else {
                // The replaced entry's references go here, with the GIL held (a name's
                // `__del__` that calls the door finds the cache busy).
                entries[*next] = entry;
                *next = (*next + 1) % ENTRIES;
            }
        }
        Ok(op)
    }
}
