//! NumPy arrays seen as `ndarray` views without a copy, whatever their dtype and layout.
//!
//! Gather only moves elements, so an element of any dtype is moved as its bytes: an array of
//! `itemsize`-byte elements is viewed as unsigned integers of the widest size (`unit`, 1 to
//! 8 bytes) that divides the item size, the data address and every stride, with one more
//! trailing axis of `itemsize / unit` units (the record axis of
//! `ndgather::Params::records`). A float32 array is a `u32` view with records of
//! one unit; a complex128 array a `u64` view with records of two; `'<U3'` a `u32` view with
//! records of three; a 5-byte structured dtype a `u8` view with records of five.
//!
//! The crate's `unsafe` code is here and in `output.rs`; each block checks what it relies on
//! in the same function.

use ndarray::{ArrayViewD, ArrayViewMutD, Axis, IxDyn, ShapeBuilder};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use smallvec::SmallVec;
use std::ptr::NonNull;

/// Per-axis values held inline up to rank 4: reading an array's geometry allocates nothing.
pub(crate) type Axes<T> = SmallVec<[T; 4]>;

/// A type for which every bit pattern is a valid value: what NumPy memory can be read as
/// (the core's dtype table says which).
pub(crate) use ndgather::Plain;

/// The geometry of a NumPy array: data address, shape, strides in bytes, item size.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    data: *mut u8,
    pub(crate) shape: Axes<usize>,
    strides: Axes<isize>,
    pub(crate) itemsize: usize,
    writeable: bool,
    c_contiguous: bool,
}

impl Raw {
    /// Reads the geometry of `array`; the caller keeps `array` alive while views of it live.
    pub(crate) fn of(array: &Bound<'_, PyUntypedArray>) -> Raw {
        let obj = array.as_array_ptr();
        // SAFETY: `obj` is the live NumPy array that `array` holds a reference to; its `data`
        // and `flags` fields are plain reads of an initialised struct.
        let (data, flags) = unsafe { ((*obj).fields.data as *mut u8, (*obj).fields.flags) };
        Raw {
            data,
            shape: Axes::from_slice(array.shape()),
            strides: Axes::from_slice(array.strides()),
            itemsize: array.dtype().itemsize(),
            writeable: flags & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0,
            c_contiguous: flags & numpy::npyffi::NPY_ARRAY_C_CONTIGUOUS != 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// The largest unit size (8, 4, 2 or 1) that divides the item size, the data address
    /// and every stride of an axis longer than 1: every element then starts at an address
    /// aligned for that unit.
    pub(crate) fn unit_size(&self) -> usize {
        let mut bits = self.itemsize | 8;
        if !self.is_empty() {
            bits |= self.data as usize;
            for (&d, &s) in self.shape.iter().zip(&self.strides) {
                if d > 1 {
                    bits |= s.unsigned_abs();
                }
            }
        }
        1 << bits.trailing_zeros().min(3)
    }

    /// The byte range `[lo, hi)` that the elements occupy (empty for an empty array).
    fn extent(&self) -> (usize, usize) {
        if self.is_empty() || self.itemsize == 0 {
            return (0, 0);
        }
        let (mut lo, mut hi) = (self.data as usize, self.data as usize + self.itemsize);
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let span = (d - 1) * s.unsigned_abs();
            if s < 0 {
                lo -= span;
            } else {
                hi += span;
            }
        }
        (lo, hi)
    }

    /// Whether the elements of `self` and `other` may share bytes.
    pub(crate) fn may_overlap(&self, other: &Raw) -> bool {
        let (a, b) = (self.extent(), other.extent());
        a.0 < a.1 && b.0 < b.1 && a.0 < b.1 && b.0 < a.1
    }

    /// Whether two different positions of the array can name the same bytes (a broadcast
    /// or `as_strided` array): sorted by stride, each axis must step past the whole extent
    /// of the axes inside it.
    fn self_overlaps(&self) -> bool {
        if self.is_empty() {
            return false;
        }
        let mut axes: Axes<(usize, usize)> = (self.shape.iter().zip(&self.strides))
            .filter(|(&d, _)| d > 1)
            .map(|(&d, &s)| (s.unsigned_abs(), d))
            .collect();
        axes.sort_unstable();
        let mut reach = self.itemsize;
        for (stride, dim) in axes {
            if stride < reach {
                return true;
            }
            reach += stride * (dim - 1);
        }
        false
    }

    /// Shape and strides in units of `U`, with the record axis appended, for a view whose
    /// first element is at the returned pointer; the axes whose stride was negative are
    /// listed to be inverted after the view is made (ndarray's constructors take
    /// non-negative strides). A view of no elements gets a dangling pointer and row-major
    /// strides over its shape with each zero length counted as one: they name no position
    /// twice, as ndarray's constructors ask of every view (all-zero strides would not).
    fn unit_geometry<U>(&self) -> (NonNull<U>, Axes<usize>, Axes<usize>, Axes<usize>) {
        let unit = std::mem::size_of::<U>();
        let mut shape = self.shape.clone();
        shape.push(self.itemsize / unit);
        if self.is_empty() || self.itemsize == 0 {
            let mut strides: Axes<usize> = smallvec::smallvec![1usize; shape.len()];
            for k in (1..shape.len()).rev() {
                // NumPy keeps the product of the nonzero lengths within isize::MAX.
                strides[k - 1] = strides[k].saturating_mul(shape[k].max(1));
            }
            return (NonNull::dangling(), shape, strides, Axes::new());
        }
        let mut low = self.data;
        let mut strides = Axes::with_capacity(shape.len());
        let mut inverted = Axes::new();
        for (k, (&d, &s)) in self.shape.iter().zip(&self.strides).enumerate() {
            if s < 0 {
                low = low.wrapping_offset(s * (d as isize - 1));
                inverted.push(k);
            }
            strides.push(s.unsigned_abs() / unit);
        }
        strides.push(1);
        let low = NonNull::new(low as *mut U).unwrap_or(NonNull::dangling());
        (low, shape, strides, inverted)
    }

    /// A read-only view of the elements as records of `U` units (see the module docs).
    ///
    /// `U` must be at most [`Raw::unit_size`] bytes; otherwise an error.
    pub(crate) fn view<'a, U: Plain>(
        &self,
        owner: &'a Bound<'_, PyUntypedArray>,
    ) -> PyResult<ArrayViewD<'a, U>> {
        self.check_unit::<U>()?;
        if let Some(view) = self.contiguous_units::<U>(owner) {
            return Ok(view);
        }
        let (ptr, shape, strides, inverted) = self.unit_geometry::<U>();
        // SAFETY:
        // - `ptr` is the lowest-addressed element of a live NumPy array (kept alive by
        //   `owner` for 'a), or dangling for an empty array (a view of no element); moving
        //   along every axis stays inside NumPy's allocation, as NumPy's own shape and
        //   strides describe it, and the record axis covers exactly one item's bytes.
        // - `check_unit` above verified that the address is aligned for `U` and that the
        //   item size and every stride are multiples of `size_of::<U>()`, so every unit is
        //   aligned and the strides are exact in units; negative strides were made positive
        //   from the lowest address and are inverted back below.
        // - Any bit pattern is a valid `U` (`Plain`), whatever the dtype.
        // - Writes by other Python threads while this view is read (the GIL is released)
        //   give unspecified values, as in NumPy's own GIL-free loops; nothing here relies
        //   on the values.
        let mut view = unsafe {
            ArrayViewD::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&strides)), ptr.as_ptr())
        };
        for k in inverted {
            view.invert_axis(Axis(k));
        }
        Ok(view)
    }

    /// The items of a non-empty C-contiguous array as one slice of `U` units, if `U` divides
    /// the item size and the address is aligned for it: the common case, whose views are
    /// made without the general path's geometry.
    fn contiguous_slice<'a, U: Plain>(
        &self,
        _owner: &'a Bound<'_, PyUntypedArray>,
    ) -> Option<&'a [U]> {
        let unit = std::mem::size_of::<U>();
        let fits = self.c_contiguous
            && !self.is_empty()
            && self.itemsize.is_multiple_of(unit)
            && (self.data as usize).is_multiple_of(std::mem::align_of::<U>());
        if !fits {
            return None;
        }
        let len = self.shape.iter().product::<usize>() * (self.itemsize / unit);
        // SAFETY: the array is live for 'a (`owner`), non-empty and C-contiguous, so its items lie back to back from `data`,
        // `len` units of `size_of::<U>()` bytes in all, inside NumPy's allocation; `data`
        // is aligned for `U` (checked above); any bit pattern is a valid `U` (`Plain`).
        // Writes by other Python threads give unspecified values, as in `view`.
        Some(unsafe { std::slice::from_raw_parts(self.data as *const U, len) })
    }

    /// The bytes of a non-empty C-contiguous array; `None` for any other.
    pub(crate) fn contiguous_bytes<'a>(
        &self,
        owner: &'a Bound<'_, PyUntypedArray>,
    ) -> Option<&'a [u8]> {
        self.contiguous_slice::<u8>(owner)
    }

    /// [`Raw::view`] for a C-contiguous array: the same shape, record axis included.
    fn contiguous_units<'a, U: Plain>(
        &self,
        owner: &'a Bound<'_, PyUntypedArray>,
    ) -> Option<ArrayViewD<'a, U>> {
        let units = self.contiguous_slice::<U>(owner)?;
        let mut shape = self.shape.clone();
        shape.push(self.itemsize / std::mem::size_of::<U>());
        ArrayViewD::from_shape(IxDyn(&shape), units).ok()
    }

    /// The elements as a view of `T` itself, for a C-contiguous array of `T`-sized items:
    /// [`typed_view`]'s common case. `None` otherwise.
    fn contiguous<'a, T: Plain>(
        &self,
        owner: &'a Bound<'_, PyUntypedArray>,
    ) -> Option<ArrayViewD<'a, T>> {
        if self.itemsize != std::mem::size_of::<T>() {
            return None;
        }
        ArrayViewD::from_shape(IxDyn(&self.shape), self.contiguous_slice::<T>(owner)?).ok()
    }

    /// A writable view of the elements as records of `U` units; an error for an array that
    /// is read-only or whose positions overlap.
    pub(crate) fn view_mut<'a, U: Plain>(
        &self,
        _owner: &'a Bound<'_, PyUntypedArray>,
    ) -> PyResult<ArrayViewMutD<'a, U>> {
        self.check_unit::<U>()?;
        if !self.writeable {
            return Err(PyValueError::new_err("out is read-only"));
        }
        if self.self_overlaps() {
            return Err(PyValueError::new_err(
                "out has elements that share memory (a broadcast or as_strided array); pass an array of its own",
            ));
        }
        let (ptr, shape, strides, inverted) = self.unit_geometry::<U>();
        // SAFETY: as in `view`, and the array is writeable (checked above) and no two
        // positions share a byte (`self_overlaps`, checked above), so the mutable view does
        // not alias itself. The caller checks that it overlaps no array read at the same
        // time (`may_overlap`), and holds the only Rust view of it.
        let mut view = unsafe {
            ArrayViewMutD::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&strides)), ptr.as_ptr())
        };
        for k in inverted {
            view.invert_axis(Axis(k));
        }
        Ok(view)
    }

    /// Checks that the elements can be read as records of `U`: the address aligned for `U`,
    /// the item size and the strides of every axis longer than 1 multiples of its size.
    fn check_unit<U>(&self) -> PyResult<()> {
        let (size, align) = (std::mem::size_of::<U>(), std::mem::align_of::<U>());
        let strides_ok = (self.shape.iter().zip(&self.strides))
            .all(|(&d, &s)| d <= 1 || s.unsigned_abs().is_multiple_of(size));
        let address_ok = self.is_empty() || (self.data as usize).is_multiple_of(align);
        if self.itemsize.is_multiple_of(size) && strides_ok && address_ok {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "internal error: an array of {}-byte items with strides {:?} viewed in {size}-byte units",
                self.itemsize, self.strides
            )))
        }
    }
}

/// A read-only view of a fixed-width array as its Rust type `T` (numbers, indices): the
/// unit view without its record axis, so empty, strided, reversed and unaligned arrays are
/// handled as [`Raw::view`] handles them.
pub(crate) fn typed_view<'a, T: Plain>(
    array: &'a Bound<'_, PyUntypedArray>,
) -> PyResult<ArrayViewD<'a, T>> {
    let raw = Raw::of(array);
    if let Some(view) = raw.contiguous::<T>(array) {
        return Ok(view);
    }
    elements::<T, _>(raw.view::<T>(array)?, array)
}

/// A view of records of one `T` each without its record axis: the elements themselves.
fn elements<T, S: ndarray::RawData<Elem = T>>(
    mut view: ndarray::ArrayBase<S, IxDyn>,
    array: &Bound<'_, PyUntypedArray>,
) -> PyResult<ndarray::ArrayBase<S, IxDyn>> {
    let last = Axis(view.ndim() - 1);
    if view.len_of(last) != 1 {
        return Err(PyTypeError::new_err(format!(
            "internal error: dtype {} viewed as {}",
            array.dtype(),
            std::any::type_name::<T>()
        )));
    }
    view.index_axis_inplace(last, 0);
    Ok(view)
}

/// A writable view of a fixed-width array as its Rust type `T`, as [`typed_view`] reads one;
/// an error for an array that is read-only or whose positions overlap.
pub(crate) fn typed_view_mut<'a, T: Plain>(
    array: &'a Bound<'_, PyUntypedArray>,
) -> PyResult<ArrayViewMutD<'a, T>> {
    elements::<T, _>(Raw::of(array).view_mut::<T>(array)?, array)
}
