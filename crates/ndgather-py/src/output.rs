//! Results handed to Python: a NumPy array of the caller's dtype over the buffer Rust filled,
//! without a copy; and object arrays, whose elements need reference counts.

use ndarray::IxDyn;
use numpy::npyffi::{self, npy_intp, PY_ARRAY_API};
use numpy::{
    PyArray, PyArrayDescr, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
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
/// allocates, put in `slot`, and that memory as uninitialised bytes for a writer that
/// writes every one of them before the array is seen (`NumpyHost::allocate`).
pub(crate) fn uninit_array<'a, 'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
    slot: &'a mut Option<Bound<'py, PyAny>>,
) -> PyResult<&'a mut [MaybeUninit<u8>]> {
    let bytes = shape
        .iter()
        .try_fold(dtype.itemsize(), |n, &d| n.checked_mul(d));
    // An item size of 0 (NumPy's unsized strings) NumPy would change on allocation.
    let sized = dtype.itemsize() > 0 && !dtype.has_object();
    let Some(bytes) = bytes.filter(|_| sized) else {
        return Err(PyValueError::new_err(format!(
            "internal error: no buffer for shape {shape:?} of dtype {dtype}"
        )));
    };
    // SAFETY:
    // - With null data, `new_array` has NumPy allocate a C-ordered buffer of `bytes` bytes
    //   (their product, computed above without overflow) that the array owns.
    // - The array was made here and goes into `slot`, which the returned slice borrows
    //   mutably: nothing else holds the array while the slice lives, so it is the only access
    //   to the buffer, and the buffer lives as long. A zero-byte buffer is an empty slice at
    //   a dangling address. `MaybeUninit` claims nothing of the bytes' contents, and `dtype`
    //   holds no object references, so NumPy never reads them as pointers; the writer writes
    //   every byte, or the array is dropped unseen.
    unsafe {
        let array = slot.insert(new_array(py, dtype, shape, std::ptr::null_mut())?);
        let data = (*(array.as_ptr() as *mut npyffi::PyArrayObject))
            .fields
            .data;
        let data = match bytes {
            0 => std::ptr::NonNull::dangling().as_ptr(),
            _ => data as *mut MaybeUninit<u8>,
        };
        Ok(std::slice::from_raw_parts_mut(data, bytes))
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

/// References to the objects whose addresses `pointers` holds (0: `None`), in order.
///
/// Called right after the gather that read the addresses, with the GIL held and no Python
/// code run in between: each address is then an element of an array that holds a reference
/// to it. Owning a reference before anything else runs (an allocation can start the garbage
/// collector, and with it any `__del__`) keeps every object alive until it is stored.
pub(crate) fn object_references(
    py: Python<'_>,
    pointers: impl IntoIterator<Item = u64>,
) -> Vec<Py<PyAny>> {
    pointers
        .into_iter()
        .map(|p| match p {
            0 => py.None(),
            // SAFETY: `p` is the address of a live object, an element of an array that
            // holds a reference to it, and the GIL has been held since it was read (the
            // function's contract); `from_borrowed_ptr` takes a reference of our own.
            p => unsafe { Bound::from_borrowed_ptr(py, p as *mut pyo3::ffi::PyObject) }.unbind(),
        })
        .collect()
}

/// Stores `objects` into the object array `target`, in its logical (row-major) order, then
/// releases what the slots held.
///
/// The order is what makes an aliased or re-entrant store safe: every new reference is owned
/// before the first slot changes (see [`object_references`]), no Python code runs while the
/// slots are written, and the old references are released only after the last slot is
/// written, so an old object's `__del__` finds the store finished. On error nothing is
/// written.
pub(crate) fn store_objects(
    py: Python<'_>,
    target: &Bound<'_, PyUntypedArray>,
    objects: Vec<Py<PyAny>>,
) -> PyResult<()> {
    if target.dtype().kind() != b'O' {
        return Err(PyValueError::new_err(
            "internal error: objects stored into an array of another dtype",
        ));
    }
    let mut slots = crate::raw::typed_view_mut::<u64>(target)?;
    if slots.len() != objects.len() {
        return Err(PyValueError::new_err(
            "internal error: object results do not fit the output",
        ));
    }
    let mut old = Vec::with_capacity(objects.len());
    let mut store = |slot: &mut u64, object: Py<PyAny>| {
        old.push(std::mem::replace(slot, object.into_ptr() as u64));
    };
    // A C-ordered target (every fresh output) as one slice, whose loop the compiler keeps
    // tight (BENCHMARKS.md, "Measurements behind the code").
    match slots.as_slice_mut() {
        Some(flat) => flat.iter_mut().zip(objects).for_each(|(s, o)| store(s, o)),
        None => slots.iter_mut().zip(objects).for_each(|(s, o)| store(s, o)),
    }
    for p in old.into_iter().filter(|&p| p != 0) {
        // SAFETY: `p` is the reference its slot owned (an object array's non-null slot
        // holds one), which the slot no longer holds; it is released exactly once here.
        drop(unsafe { Bound::from_owned_ptr(py, p as *mut pyo3::ffi::PyObject) });
    }
    Ok(())
}
