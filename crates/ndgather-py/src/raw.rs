//! NumPy arrays lent to the core without a copy, whatever their dtype and layout: each is
//! the core's raw view (`ndgather::memory::RawView`: address, shape, byte strides, item
//! size), whose one geometry turns it into views of units (see its module docs). This file
//! only reads what NumPy says of an array; the FFI reads and the two lendings are the
//! crate's `unsafe` here, each beside its proof.

use ndarray::{ArrayViewD, ArrayViewMutD};
use ndgather::memory::{RawView, RawViewMut};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use smallvec::SmallVec;

/// Per-axis values held inline up to rank 4: reading an array's geometry allocates nothing.
pub(crate) type Axes<T> = SmallVec<[T; 4]>;

/// A type for which every bit pattern is a valid value: what NumPy memory can be read as
/// (the core's dtype table says which).
pub(crate) use ndgather::Plain;

/// A NumPy array lent for `'a` (the borrow of the array object that keeps it alive).
#[derive(Debug)]
pub(crate) struct Raw<'a> {
    view: RawView<'a>,
    data: *mut u8,
    writeable: bool,
}

impl<'a> Raw<'a> {
    /// What NumPy says of `array`: its elements, lent for as long as `array` is borrowed.
    pub(crate) fn of(array: &'a Bound<'_, PyUntypedArray>) -> Raw<'a> {
        let obj = array.as_array_ptr();
        // SAFETY: `obj` is the live NumPy array that `array` holds a reference to; its `data`
        // and `flags` fields are plain reads of an initialised struct.
        let (data, flags) = unsafe { ((*obj).fields.data as *mut u8, (*obj).fields.flags) };
        let itemsize = array.dtype().itemsize();
        // SAFETY: NumPy's data address, shape, byte strides and item size describe elements
        // inside one allocation that it keeps initialised and alive while the array object
        // lives, which `array` holds for 'a. No Rust reference writes them while a view
        // made from this one is in use: the one mutable view a call makes is of its output,
        // which is checked to overlap no input (`may_overlap`), and a read-only view of the
        // output (object arrays read their old addresses) is used up before it. Writes by other
        // Python threads (the GIL is released during a copy) give unspecified values, as in
        // NumPy's own GIL-free loops, which `RawView::new` allows.
        let view = unsafe { RawView::new(data, array.shape(), array.strides(), itemsize) };
        Raw {
            view,
            data,
            writeable: flags & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0,
        }
    }

    /// The bytes of one element.
    pub(crate) fn itemsize(&self) -> usize {
        self.view.itemsize()
    }

    /// Whether the elements of `self` and `other` may share bytes.
    pub(crate) fn may_overlap(&self, other: &Raw<'_>) -> bool {
        self.view.may_overlap(&other.view)
    }

    /// The core's raw view of the elements.
    pub(crate) fn raw(self) -> RawView<'a> {
        self.view
    }

    /// The core's writable raw view of the elements; an error for an array that is
    /// read-only or whose positions overlap.
    pub(crate) fn raw_mut(self) -> PyResult<RawViewMut<'a>> {
        self.lend_mut()
    }

    fn lend_mut(&self) -> PyResult<RawViewMut<'a>> {
        if !self.writeable {
            return Err(PyValueError::new_err("out is read-only"));
        }
        // SAFETY: as in `Raw::of`, and NumPy's WRITEABLE flag (checked above) says the bytes
        // may be written. The caller checks that they overlap no array read at the same time
        // (`may_overlap`), uses no read-only view of them while this one lives, and holds
        // this one mutable view of them. The ops write only bytes of elements of the array's own dtype
        // (or values of it), so every element stays valid to NumPy.
        let lent = unsafe {
            RawViewMut::new(
                self.data,
                self.view.shape(),
                self.view.strides(),
                self.itemsize(),
            )
        };
        lent.ok_or_else(|| {
            PyValueError::new_err(
                "out has elements that share memory (a broadcast or as_strided array); pass an array of its own",
            )
        })
    }

    fn misfit<U>(&self) -> PyErr {
        PyValueError::new_err(format!(
            "internal error: an array of {}-byte items with strides {:?} viewed in {}-byte units",
            self.itemsize(),
            self.view.strides(),
            std::mem::size_of::<U>()
        ))
    }
}

impl<'a> Raw<'a> {
    /// The elements as their Rust type `T` (numbers, indices), read-only: the unit view
    /// without its record axis, whatever the layout.
    pub(crate) fn typed<T: Plain>(&self) -> PyResult<ArrayViewD<'a, T>> {
        self.view.elements::<T>().ok_or_else(|| self.misfit::<T>())
    }

    /// Whether the address and every stride are multiples of `align` (a view of `T` needs
    /// `align_of::<T>()`; NumPy arrays can be misaligned).
    pub(crate) fn aligned_to(&self, align: usize) -> bool {
        (self.data as usize).is_multiple_of(align)
            && self
                .view
                .strides()
                .iter()
                .all(|s| s.unsigned_abs().is_multiple_of(align))
    }

    /// The elements as records of their bytes (one more axis, of the item size), to be
    /// written, at any alignment; an error for an array that is read-only or whose
    /// positions overlap.
    pub(crate) fn bytes_mut(&self) -> PyResult<ArrayViewMutD<'a, u8>> {
        self.lend_mut()?
            .into_units::<u8>()
            .ok_or_else(|| self.misfit::<u8>())
    }

    /// The elements as `T`, to be written, as [`Raw::typed`] reads them; an error for an
    /// array that is read-only or whose positions overlap.
    pub(crate) fn typed_mut<T: Plain>(&self) -> PyResult<ArrayViewMutD<'a, T>> {
        self.lend_mut()?
            .into_elements::<T>()
            .ok_or_else(|| self.misfit::<T>())
    }
}

/// A read-only view of a fixed-width array as its Rust type `T` ([`Raw::typed`]).
pub(crate) fn typed_view<'a, T: Plain>(
    array: &'a Bound<'_, PyUntypedArray>,
) -> PyResult<ArrayViewD<'a, T>> {
    Raw::of(array).typed()
}

/// A writable view of a fixed-width array as its Rust type `T` ([`Raw::typed_mut`]).
pub(crate) fn typed_view_mut<'a, T: Plain>(
    array: &'a Bound<'_, PyUntypedArray>,
) -> PyResult<ArrayViewMutD<'a, T>> {
    Raw::of(array).typed_mut()
}
