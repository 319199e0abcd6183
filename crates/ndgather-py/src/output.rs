//! Results handed to Python: a NumPy array of the caller's dtype over the buffer Rust filled,
//! without a copy; and object arrays, whose elements need reference counts.

use ndarray::IxDyn;
use numpy::npyffi::{self, npy_intp, PY_ARRAY_API};
use numpy::{PyArray, PyArrayDescr, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::mem::MaybeUninit;

/// Owns the memory of an array made by [`array_from_vec`]; NumPy keeps it as the array's
/// base object and drops it with the last view, when the memory goes back to the core for a
/// later output (`ndgather::memory::recycle`: its pages stay mapped).
#[pyclass(frozen, module = "ndgather._core")]
struct RustBuffer {
    data: Option<Box<dyn GiveBack>>,
}

/// A vector of results that can be given back to the core.
trait GiveBack: Send + Sync {
    fn give_back(self: Box<Self>);
}

impl<T: Send + Sync + 'static> GiveBack for Vec<T> {
    fn give_back(self: Box<Self>) {
        ndgather::memory::recycle(ndarray::Array1::from_vec(*self));
    }
}

impl Drop for RustBuffer {
    fn drop(&mut self) {
        if let Some(data) = self.data.take() {
            data.give_back();
        }
    }
}

/// A C-ordered NumPy array of `dtype` and `shape` over `data` (moved, not copied).
///
/// `data` must hold exactly the bytes of such an array: its byte length is checked against
/// `shape` and `dtype`'s item size.
pub(crate) fn array_from_vec<'py, T: Copy + Send + Sync + 'static>(
    py: Python<'py>,
    dtype: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
    data: Vec<T>,
) -> PyResult<Bound<'py, PyAny>> {
    let numel: usize = shape.iter().product();
    let bytes = std::mem::size_of_val(data.as_slice());
    if dtype.has_object() || numel.checked_mul(dtype.itemsize()) != Some(bytes) {
        return Err(PyValueError::new_err(format!(
            "internal error: {bytes} bytes of results for shape {shape:?} of dtype {dtype}"
        )));
    }
    let ptr = data.as_ptr() as *mut std::ffi::c_void;
    // The Vec's heap block does not move when the Vec moves into the box.
    let owner = Bound::new(
        py,
        RustBuffer {
            data: Some(Box::new(data)),
        },
    )?;
    // SAFETY:
    // - `ptr` points to `numel * itemsize` initialised bytes (checked above), aligned for
    //   `T`: the layout `new_array` needs. `dtype` holds no object references (checked
    //   above), so NumPy never reads the bytes as pointers.
    // - The memory belongs to `owner`, which becomes the array's base (SetBaseObject steals
    //   the reference `into_ptr` gives), so it lives as long as the array and any view of
    //   it, and nothing else frees or moves it.
    unsafe {
        let array = new_array(py, dtype, shape, ptr)?;
        if PY_ARRAY_API.PyArray_SetBaseObject(
            py,
            array.as_ptr() as *mut npyffi::PyArrayObject,
            owner.into_ptr(),
        ) != 0
        {
            return Err(PyErr::fetch(py));
        }
        Ok(array)
    }
}

/// A new C-ordered array of `dtype` (no object references) and `shape` whose memory NumPy
/// owns, every byte of it written by `write` before anything else sees the array.
pub(crate) fn written<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
    write: impl FnOnce(&mut [MaybeUninit<u8>]) -> ndgather::Result<()>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = shape
        .iter()
        .try_fold(dtype.itemsize(), |n, &d| n.checked_mul(d));
    let Some(bytes) = bytes.filter(|_| !dtype.has_object()) else {
        return Err(PyValueError::new_err(format!(
            "internal error: no buffer for shape {shape:?} of dtype {dtype}"
        )));
    };
    // SAFETY:
    // - With null data, `new_array` has NumPy allocate a C-ordered buffer of `bytes` bytes
    //   (their product, computed above without overflow) that the array owns.
    // - The array was made here and nothing else holds it until it is returned, so the
    //   mutable slice over its buffer is the only access while `write` runs; a zero-byte
    //   buffer is an empty slice at a dangling address. `MaybeUninit` claims nothing of the
    //   bytes' contents, and `dtype` holds no object references, so NumPy never reads them
    //   as pointers; `write` writes every byte, or the array is dropped unseen.
    unsafe {
        let array = new_array(py, dtype, shape, std::ptr::null_mut())?;
        let data = (*(array.as_ptr() as *mut npyffi::PyArrayObject))
            .fields
            .data;
        let data = match bytes {
            0 => std::ptr::NonNull::dangling().as_ptr(),
            _ => data as *mut MaybeUninit<u8>,
        };
        write(std::slice::from_raw_parts_mut(data, bytes)).map_err(crate::to_py)?;
        Ok(array)
    }
}

/// A new C-ordered, writeable NumPy array of `dtype` and `shape` over `data`; where `data`
/// is null, over memory NumPy allocates (uninitialised) and owns.
///
/// # Safety
/// A non-null `data` must point to `shape`'s product times `dtype`'s item size bytes,
/// aligned for `dtype`, that outlive the array and every view of it.
unsafe fn new_array<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
    data: *mut std::ffi::c_void,
) -> PyResult<Bound<'py, PyAny>> {
    let dims: crate::raw::Axes<npy_intp> = shape.iter().map(|&d| d as npy_intp).collect();
    let flags = if data.is_null() {
        0
    } else {
        npyffi::NPY_ARRAY_WRITEABLE
    };
    // SAFETY: `dtype` is a live descriptor; PyArray_NewFromDescr steals one reference, so
    // one is added first (`into_ptr` of a clone). `dims` holds `shape`; null strides lay
    // the array out C-ordered, over `data` as the caller promises, or over a buffer NumPy
    // allocates for a null `data`.
    unsafe {
        let array = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            dtype.clone().into_ptr() as *mut npyffi::PyArray_Descr,
            dims.len() as i32,
            dims.as_ptr() as *mut npy_intp,
            std::ptr::null_mut(),
            data,
            flags,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, array)
    }
}

/// A new object array of `shape` whose slots are all null, for [`store_objects`] to fill
/// (its every slot, before the array reaches Python): `np.empty` would first store `None`
/// in each slot, a reference that the store then gives up again.
pub(crate) fn null_object_array<'py>(
    py: Python<'py>,
    shape: &[usize],
) -> Bound<'py, PyUntypedArray> {
    // SAFETY: rust-numpy's `new` leaves the elements uninitialised only for types that are
    // trivially copyable; an array of Python objects is zero-initialised by NumPy (null
    // slots, which NumPy itself accepts as `None` when releasing an array), so the array is
    // valid as it is. The caller fills every slot before handing it to Python.
    let array = unsafe { PyArray::<Py<PyAny>, _>::new(py, IxDyn(shape), false) };
    array.as_untyped().clone()
}

/// Stores the objects whose addresses `pointers` holds (null: `None`) into the object array
/// `target`, in its logical (row-major) order, taking a reference to each and releasing
/// the reference to what each slot held. The GIL is held throughout, so the objects cannot
/// be freed between the gather that read their addresses and this.
pub(crate) fn store_objects(
    py: Python<'_>,
    target: &Bound<'_, PyUntypedArray>,
    pointers: &[u64],
) -> PyResult<()> {
    let raw = crate::raw::Raw::of(target);
    let mut slots = raw.view_mut::<u64>(target)?;
    if slots.len() != pointers.len() || raw.itemsize != 8 {
        return Err(PyValueError::new_err(
            "internal error: object results do not fit the output",
        ));
    }
    let none = py.None().into_ptr() as u64;
    let store = |slot: &mut u64, &p: &u64| {
        let new = if p == 0 { none } else { p };
        let old = std::mem::replace(slot, new);
        // SAFETY: `new` is `None` or the address of an object that is an element of the
        // params array, which holds a reference to it and is alive (the GIL is held, so no
        // thread has replaced it); taking a reference keeps it alive in `target`. `old` is
        // the reference the slot held (or null), given up as it is overwritten. `target` is
        // an object array (8-byte slots, checked by the caller's dtype check and above).
        unsafe {
            pyo3::ffi::Py_INCREF(new as *mut pyo3::ffi::PyObject);
            pyo3::ffi::Py_XDECREF(old as *mut pyo3::ffi::PyObject);
        }
    };
    // A C-ordered target (every fresh output) as one slice, whose loop the compiler keeps
    // tight; walking it as an n-dimensional view cost a call per element where the compiler
    // did not inline that iterator (figures: BENCHMARKS.md, "Measurements behind the code").
    match slots.as_slice_mut() {
        Some(flat) => flat.iter_mut().zip(pointers).for_each(|(s, p)| store(s, p)),
        None => slots
            .iter_mut()
            .zip(pointers)
            .for_each(|(s, p)| store(s, p)),
    }
    // SAFETY: the reference `into_ptr` took above was for the loop's use only.
    unsafe { pyo3::ffi::Py_DECREF(none as *mut pyo3::ffi::PyObject) };
    Ok(())
}
