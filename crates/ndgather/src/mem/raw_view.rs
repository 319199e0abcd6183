//! Memory lent by another library, by address: a pointer, a shape, strides in bytes and an
//! item size, the four facts NumPy, DLPack, a Java buffer or a mapped file give. One
//! geometry turns it into `ndarray` views of units ([`unit_geometry`]), for the front ends
//! ([`RawView`], [`RawViewMut`]) and for the engine's own unit views (`units::view`).
//!
//! A gather only moves elements, so an element of any dtype is moved as its bytes: elements
//! of `itemsize` bytes are seen as records of `itemsize / size_of::<U>()` units `U` (an
//! unsigned integer), on one more trailing axis. A float32 array is a `u32` view with
//! records of one unit; complex128 a `u64` view with records of two; NumPy's `'<U3'` a `u32`
//! view with records of three; a 5-byte structured dtype a `u8` view with records of five.

use crate::mem::{Axes, MemError};
use ndarray::{ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Axis, IxDyn, ShapeBuilder};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Where the units of one element go in a unit view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitAxis {
    /// On a trailing axis of their own (a record of units), even of length one.
    Appended,
    /// On a trailing axis of their own, none where an element is one unit.
    UnlessOne,
    /// Folded into the last axis, whose elements must then be adjacent: records whose values
    /// are the elements of that axis (`Params::records` of a typed array).
    Merged,
}

/// A unit view's geometry: its lowest-addressed unit, shape and strides in units (all
/// non-negative), and the axes to invert once the view is made (their strides were
/// negative; ndarray's raw constructors take non-negative strides).
#[derive(Debug)]
pub(crate) struct UnitGeometry<U> {
    pub(crate) low: NonNull<U>,
    pub(crate) shape: Axes<usize>,
    pub(crate) strides: Axes<usize>,
    pub(crate) inverted: Axes<usize>,
    /// Whether the view has no element (then made as ndarray makes empty views).
    pub(crate) empty: bool,
}

impl<U> UnitGeometry<U> {
    /// The read-only view this geometry describes; `None` only for a shape ndarray refuses.
    ///
    /// # Safety
    /// Every position names a unit of memory that is live, initialised and not written
    /// through a Rust reference for `'a`, and any bytes are a valid `U`.
    pub(crate) unsafe fn view<'a>(self) -> Option<ArrayViewD<'a, U>> {
        if self.empty {
            // No element: ndarray's own empty view (its strides pass all its checks).
            return ArrayViewD::from_shape(IxDyn(&self.shape), &[]).ok();
        }
        let shape = IxDyn(&self.shape).strides(IxDyn(&self.strides));
        // SAFETY: the caller's contract; the strides are non-negative from the lowest unit.
        let mut view = unsafe { ArrayViewD::from_shape_ptr(shape, self.low.as_ptr()) };
        for a in self.inverted {
            view.invert_axis(Axis(a));
        }
        Some(view)
    }

    /// The mutable view this geometry describes; `None` only for a shape ndarray refuses.
    ///
    /// # Safety
    /// As [`UnitGeometry::view`], and the memory is writable, nothing else reads or writes
    /// it for `'a`, no two positions name the same byte, and any bytes written keep the
    /// lender's elements valid.
    pub(crate) unsafe fn view_mut<'a>(self) -> Option<ArrayViewMutD<'a, U>> {
        if self.empty {
            return ArrayViewMutD::from_shape(IxDyn(&self.shape), &mut []).ok();
        }
        let shape = IxDyn(&self.shape).strides(IxDyn(&self.strides));
        // SAFETY: the caller's contract; the strides are non-negative from the lowest unit.
        let mut view = unsafe { ArrayViewMutD::from_shape_ptr(shape, self.low.as_ptr()) };
        for a in self.inverted {
            view.invert_axis(Axis(a));
        }
        Some(view)
    }
}

/// The geometry of elements at `data` (`shape`, `strides` in bytes, `itemsize` bytes each)
/// seen as units of `U`; `None` where they cannot be: the item size, the address or the
/// stride of an axis longer than one is no multiple of `U`'s size or alignment, or merged
/// records whose elements are not adjacent. A view of no element is made as ndarray makes
/// one over an empty slice: its all-zero strides pass every check of ndarray's, those of
/// `from_shape_ptr` (row-major stand-ins would not pass `to_owned`'s) and of `to_owned`.
pub(crate) fn unit_geometry<U>(
    data: *const u8,
    shape: &[usize],
    strides: &[isize],
    itemsize: usize,
    axis: UnitAxis,
) -> Option<UnitGeometry<U>> {
    let (size, align) = (std::mem::size_of::<U>(), std::mem::align_of::<U>());
    // No array has more than `isize::MAX` bytes, as ndarray asks of every view.
    let count = crate::mem::element_count(shape)?;
    count
        .checked_mul(itemsize)
        .filter(|&b| b <= isize::MAX as usize)?;
    let empty = count == 0 || itemsize == 0;
    // No element is read from an empty view, so its strides fit any unit (as `unit_size`).
    let strides_fit = empty
        || (shape.iter().zip(strides))
            .all(|(&d, &s)| d <= 1 || s.unsigned_abs().is_multiple_of(size));
    let address_fits = empty || (data as usize).is_multiple_of(align);
    if size == 0 || !itemsize.is_multiple_of(size) || !strides_fit || !address_fits {
        return None;
    }
    let k = itemsize / size;
    let mut out_shape = Axes::from_slice(shape);
    // An axis of one position never moves: stride 0, whatever the lender says.
    let mut out_strides: Axes<usize> = (shape.iter().zip(strides))
        .map(|(&d, s)| if d > 1 { s.unsigned_abs() / size } else { 0 })
        .collect();
    let mut inverted = Axes::new();
    let mut low = data;
    if !empty {
        for (a, (&d, &s)) in shape.iter().zip(strides).enumerate() {
            if s < 0 && d > 1 {
                low = low.wrapping_offset(s * (d as isize - 1));
                inverted.push(a);
            }
        }
    }
    match axis {
        UnitAxis::UnlessOne | UnitAxis::Merged if k == 1 => {}
        UnitAxis::Appended | UnitAxis::UnlessOne => {
            out_shape.push(k);
            out_strides.push(1);
        }
        UnitAxis::Merged => {
            let last = shape.len().checked_sub(1)?;
            let width = shape[last];
            // The record's elements must follow each other in order, one item apart.
            let adjacent = width <= 1 || (!inverted.contains(&last) && out_strides[last] == k);
            if !adjacent && !empty {
                return None;
            }
            inverted.retain(|a| *a != last);
            out_shape[last] = width * k;
            out_strides[last] = 1;
        }
    }
    if empty {
        return Some(UnitGeometry {
            low: NonNull::dangling(),
            shape: out_shape,
            strides: Axes::new(),
            inverted: Axes::new(),
            empty: true,
        });
    }
    let low = NonNull::new(low as *mut U).unwrap_or(NonNull::dangling());
    Some(UnitGeometry {
        low,
        shape: out_shape,
        strides: out_strides,
        inverted,
        empty: false,
    })
}

/// Elements lent by another library, read-only, for `'a`: see the module docs.
///
/// Made by the front ends from what the lender says of its memory (only [`RawView::new`]
/// takes the lender's word; [`RawView::of_bytes`] checks a slice), and read as views of
/// units, which the ops move.
#[derive(Debug, Clone)]
pub struct RawView<'a> {
    data: *const u8,
    shape: Axes<usize>,
    strides: Axes<isize>,
    itemsize: usize,
    lent: PhantomData<&'a [u8]>,
}

// SAFETY: a `RawView` only reads bytes that `RawView::new`'s contract keeps live and
// initialised for 'a and unwritten through Rust references; nothing about them is tied to
// the thread that lent them. Writes by the lender's other threads are allowed by that
// contract on any thread alike (they give unspecified values, never undefined behaviour:
// every view reads them as `Pod` units), so moving or sharing the view across threads
// changes nothing. The views it makes were handed across threads before it existed.
unsafe impl Send for RawView<'_> {}
// SAFETY: as for `Send`; a `&RawView` gives only reads of the bytes. (`RawViewMut`, a
// `RawView` with the unique borrow of `&'a mut [u8]`, is `Send` and `Sync` through it, as
// `&mut [u8]` is: its one mutable view is made by value, `into_units`.)
unsafe impl Sync for RawView<'_> {}

impl<'a> RawView<'a> {
    /// The elements at `data`: `shape`, `strides` in bytes (any sign), `itemsize` bytes each.
    ///
    /// # Safety
    /// For `'a`, the `itemsize` bytes at `data + Σ i[k] * strides[k]`, for every index `i`
    /// within `shape`, lie inside one live allocation and are initialised, and nothing
    /// writes them through a Rust reference while a view made from this one is in use.
    /// (Writes by another thread of the lender, as Python threads may make while the GIL is
    /// released, give unspecified values, as in NumPy's own loops; nothing here relies on
    /// the values.) `shape` and `strides` have the same length. Views of more than
    /// `isize::MAX` bytes are refused by every method, not assumed away.
    pub unsafe fn new(
        data: *const u8,
        shape: &[usize],
        strides: &[isize],
        itemsize: usize,
    ) -> RawView<'a> {
        RawView {
            data,
            shape: Axes::from_slice(shape),
            strides: Axes::from_slice(strides),
            itemsize,
            lent: PhantomData,
        }
    }

    /// Row-major elements of `shape`, `itemsize` bytes each, in `bytes` (a file mapped or
    /// read); `None` unless `bytes` holds exactly that many.
    ///
    /// ```
    /// use ndgather::memory::RawView;
    /// let bytes = [1u8, 0, 2, 0, 3, 0];
    /// let view = RawView::of_bytes(&bytes, &[3], 2).unwrap();
    /// assert_eq!(view.units::<u16>().unwrap().shape(), [3, 1]);
    /// assert!(RawView::of_bytes(&bytes, &[2], 2).is_none());
    /// ```
    pub fn of_bytes(bytes: &'a [u8], shape: &[usize], itemsize: usize) -> Option<RawView<'a>> {
        let strides = filling_strides(bytes.len(), shape, itemsize)?;
        RawView::within(bytes, 0, shape, &strides, itemsize)
    }

    /// Elements of any layout inside `bytes`: the first at byte `first`, `strides` in bytes
    /// (any sign); `None` unless every element lies inside `bytes`. For a file's array in
    /// Fortran order, say.
    ///
    /// ```
    /// use ndgather::memory::RawView;
    /// let bytes: Vec<u8> = (0..6).collect();
    /// // A 2 x 3 array in Fortran order: element [i, j] at byte i + 2 j.
    /// let view = RawView::within(&bytes, 0, &[2, 3], &[1, 2], 1).unwrap();
    /// assert_eq!(view.elements::<u8>().unwrap()[[1, 2]], 5);
    /// assert!(RawView::within(&bytes, 1, &[2, 3], &[1, 2], 1).is_none());
    /// ```
    pub fn within(
        bytes: &'a [u8],
        first: usize,
        shape: &[usize],
        strides: &[isize],
        itemsize: usize,
    ) -> Option<RawView<'a>> {
        let (lo, hi) = extent_from(first, shape, strides, itemsize)?;
        if shape.len() != strides.len() || lo.is_some_and(|lo| lo < 0) || hi > bytes.len() as isize
        {
            return None;
        }
        // SAFETY: every element lies inside `bytes` (its byte range [lo, hi) from the slice's
        // start was checked above; no element at all for an empty shape), which is borrowed,
        // initialised and not written for 'a.
        Some(unsafe { RawView::new(bytes.as_ptr().wrapping_add(first), shape, strides, itemsize) })
    }

    /// The shape, in elements.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Whether arrays of this shape fit ndarray's rule in any unit: the product of the
    /// nonzero lengths times the item size stays within `isize::MAX` (a zero length does not
    /// excuse the others), which every view of the units needs, empty or not; else
    /// [`MemError::TooLarge`] for `what`.
    pub(crate) fn fits_arrays(&self, what: &'static str) -> Result<(), MemError> {
        let fits = (self.shape.iter().filter(|&&d| d != 0))
            .try_fold(self.itemsize.max(1), |n, &d| n.checked_mul(d))
            .is_some_and(|n| n <= isize::MAX as usize);
        fits.then_some(()).ok_or_else(|| MemError::TooLarge {
            what,
            shape: self.shape.to_vec(),
        })
    }

    /// The bytes of one element.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// The strides, in bytes.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// The largest unit size (8, 4, 2 or 1 bytes) that divides the item size, the address and
    /// every stride of an axis longer than one: every element then starts at an address
    /// aligned for that unit, and [`RawView::units`] of it succeeds.
    pub fn unit_size(&self) -> usize {
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

    /// The byte range `[lo, hi)` the elements occupy (empty for no element).
    fn extent(&self) -> (usize, usize) {
        if self.is_empty() || self.itemsize == 0 {
            return (0, 0);
        }
        let start = self.data as usize;
        let (mut lo, mut hi) = (start, start + self.itemsize);
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

    /// Whether the elements of `self` and `other` may share bytes (their extents meet).
    pub fn may_overlap(&self, other: &RawView<'_>) -> bool {
        let (a, b) = (self.extent(), other.extent());
        a.0 < a.1 && b.0 < b.1 && a.0 < b.1 && b.0 < a.1
    }

    /// Whether two positions can name the same bytes (a broadcast or `as_strided` array):
    /// sorted by stride, each axis must step past the whole extent of the axes inside it.
    fn self_overlaps(&self) -> bool {
        if self.is_empty() || self.is_row_major() {
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

    /// Whether the elements lie back to back in row-major order from the address.
    fn is_row_major(&self) -> bool {
        let mut step = self.itemsize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d > 1 && (s < 0 || s.unsigned_abs() != step) {
                return false;
            }
            step = step.saturating_mul(d);
        }
        true
    }

    /// The bytes of non-empty row-major elements; `None` for any other.
    pub fn contiguous_bytes(&self) -> Option<&'a [u8]> {
        if self.is_empty() || self.itemsize == 0 || !self.is_row_major() {
            return None;
        }
        let len = crate::mem::element_count(&self.shape)?.checked_mul(self.itemsize)?;
        // SAFETY: the elements are non-empty and row-major (checked above), so they are
        // `len` bytes back to back from `data`, which `RawView::new`'s contract makes live,
        // initialised and unwritten through Rust references for 'a.
        Some(unsafe { std::slice::from_raw_parts(self.data, len) })
    }

    /// The elements as records of `U` units, on one more trailing axis; `None` where `U`
    /// does not divide the item size, address and strides (see [`RawView::unit_size`]).
    ///
    /// ```
    /// use ndgather::memory::RawView;
    /// let values = [1.5f32, -2.0, 0.25];
    /// let bytes: &[u8] = bytemuck::cast_slice(&values);
    /// let view = RawView::of_bytes(bytes, &[3], 4).unwrap();
    /// let units = view.units::<u32>().unwrap();
    /// assert_eq!(units[[1, 0]], (-2.0f32).to_bits());
    /// assert!(view.units::<u64>().is_none());
    /// ```
    pub fn units<U: bytemuck::Pod>(&self) -> Option<ArrayViewD<'a, U>> {
        let size = std::mem::size_of::<U>();
        if size == 0 || !self.itemsize.is_multiple_of(size) {
            return None;
        }
        if let Some(bytes) = self.contiguous_bytes() {
            let units: &[U] = bytemuck::try_cast_slice(bytes).ok()?;
            let mut shape = self.shape.clone();
            shape.push(self.itemsize / size);
            return ArrayViewD::from_shape(IxDyn(&shape), units).ok();
        }
        let g = unit_geometry::<U>(
            self.data,
            &self.shape,
            &self.strides,
            self.itemsize,
            UnitAxis::Appended,
        )?;
        // SAFETY: `g.low` is the lowest-addressed element (or dangling for no element, a
        // view that reads nothing); every position of the view names one unit of one element
        // (`unit_geometry`: the element strides in units, and the unit axis walking one
        // element's `itemsize` bytes), which `RawView::new`'s contract makes live,
        // initialised and unwritten for 'a. Each unit is aligned (`unit_geometry` checked the
        // address, the item size and the strides against `U`), and any bytes are a valid `U`
        // (`Pod`).
        unsafe { g.view() }
    }

    /// The elements as `T` itself, where an element is one `T` ([`RawView::units`] without
    /// its record axis); `None` otherwise.
    pub fn elements<T: bytemuck::Pod>(&self) -> Option<ArrayViewD<'a, T>> {
        if self.itemsize != std::mem::size_of::<T>() {
            return None;
        }
        if let Some(bytes) = self.contiguous_bytes() {
            // Row-major elements: one slice, viewed without a record axis to take away.
            let elements: &[T] = bytemuck::try_cast_slice(bytes).ok()?;
            return shaped(&self.shape, elements);
        }
        let mut view = self.units::<T>()?;
        view.index_axis_inplace(Axis(view.ndim() - 1), 0);
        Some(view)
    }
}

/// Elements lent by another library to be written, for `'a`: a [`RawView`] whose positions
/// name distinct bytes, turned into one mutable view.
#[derive(Debug)]
pub struct RawViewMut<'a> {
    raw: RawView<'a>,
    lent: PhantomData<&'a mut [u8]>,
}

impl<'a> RawViewMut<'a> {
    /// The elements at `data`, as [`RawView::new`]; `None` where two positions may name the
    /// same bytes (a broadcast or `as_strided` array), which no mutable view may do. The test
    /// is conservative: some interleaved layouts that name distinct bytes are refused too.
    ///
    /// # Safety
    /// As [`RawView::new`], and the bytes are writable, and nothing else reads or writes
    /// them for `'a` (the front end checks that no input overlaps them: see
    /// [`RawViewMut::may_overlap`]). The lender's elements are plain memory to it: any
    /// bytes written through the view are acceptable (the ops write only bytes of elements
    /// of the same dtype, or values of it).
    pub unsafe fn new(
        data: *mut u8,
        shape: &[usize],
        strides: &[isize],
        itemsize: usize,
    ) -> Option<RawViewMut<'a>> {
        // SAFETY: the caller's contract includes `RawView::new`'s.
        let raw = unsafe { RawView::new(data, shape, strides, itemsize) };
        (!raw.self_overlaps()).then_some(RawViewMut {
            raw,
            lent: PhantomData,
        })
    }

    /// Row-major elements in `bytes`, as [`RawView::of_bytes`].
    pub fn of_bytes(
        bytes: &'a mut [u8],
        shape: &[usize],
        itemsize: usize,
    ) -> Option<RawViewMut<'a>> {
        let strides = filling_strides(bytes.len(), shape, itemsize)?;
        RawViewMut::within(bytes, 0, shape, &strides, itemsize)
    }

    /// Elements of any layout inside `bytes`, as [`RawView::within`]; `None` also where two
    /// positions name the same bytes.
    pub fn within(
        bytes: &'a mut [u8],
        first: usize,
        shape: &[usize],
        strides: &[isize],
        itemsize: usize,
    ) -> Option<RawViewMut<'a>> {
        RawView::within(bytes, first, shape, strides, itemsize)?;
        // SAFETY: every element lies inside `bytes` (`RawView::within` checked it), which is
        // borrowed uniquely, so writable and touched by nothing else for 'a; any bytes are
        // acceptable in a slice of bytes.
        unsafe {
            RawViewMut::new(
                bytes.as_mut_ptr().wrapping_add(first),
                shape,
                strides,
                itemsize,
            )
        }
    }

    /// The shape, in elements.
    pub fn shape(&self) -> &[usize] {
        self.raw.shape()
    }

    /// See [`RawView::fits_arrays`].
    pub(crate) fn fits_arrays(&self, what: &'static str) -> Result<(), MemError> {
        self.raw.fits_arrays(what)
    }

    /// The bytes of one element.
    pub fn itemsize(&self) -> usize {
        self.raw.itemsize()
    }

    /// The largest unit the elements can be written as ([`RawView::unit_size`]).
    pub fn unit_size(&self) -> usize {
        self.raw.unit_size()
    }

    /// Whether these elements and `other`'s may share bytes.
    pub fn may_overlap(&self, other: &RawView<'_>) -> bool {
        self.raw.may_overlap(other)
    }

    /// The elements as records of `U` units, to be written ([`RawView::units`]).
    ///
    /// ```
    /// use ndgather::memory::RawViewMut;
    /// let mut bytes = [0u8; 4];
    /// let mut units = RawViewMut::of_bytes(&mut bytes, &[2], 2).unwrap().into_units::<u16>().unwrap();
    /// units[[1, 0]] = 0x0102;
    /// assert_eq!(u16::from_ne_bytes([bytes[2], bytes[3]]), 0x0102);
    /// ```
    pub fn into_units<U: bytemuck::Pod>(self) -> Option<ArrayViewMutD<'a, U>> {
        let r = &self.raw;
        let g = unit_geometry::<U>(r.data, &r.shape, &r.strides, r.itemsize, UnitAxis::Appended)?;
        // SAFETY: as in `RawView::units`; and the bytes are writable and touched by nothing
        // else for 'a (`RawViewMut::new`'s contract), and no two positions name the same
        // byte (`self_overlaps`, checked there), so the mutable view aliases nothing. `self`
        // is consumed: one mutable view is made. Whatever is written is acceptable to the
        // lender (`RawViewMut::new`'s contract), and any bytes are a valid `U` (`Pod`).
        unsafe { g.view_mut() }
    }

    /// The bytes of non-empty row-major elements, to be written while `self` is borrowed;
    /// `None` for any other layout.
    pub(crate) fn contiguous_bytes_mut(&mut self) -> Option<&mut [u8]> {
        let len = self.raw.contiguous_bytes()?.len();
        // SAFETY: the same `len` bytes from the same address as `contiguous_bytes` (row-major,
        // non-empty, live for 'a); writable and touched by nothing else for 'a
        // (`RawViewMut::new`'s contract), and borrowed from `self` uniquely, so no other view
        // of them is made while this one lives. Whatever is written is acceptable to the
        // lender.
        Some(unsafe { std::slice::from_raw_parts_mut(self.raw.data.cast_mut(), len) })
    }

    /// The elements as `T` itself, to be written, where an element is one `T`.
    pub fn into_elements<T: bytemuck::Pod>(self) -> Option<ArrayViewMutD<'a, T>> {
        if self.raw.itemsize != std::mem::size_of::<T>() {
            return None;
        }
        if let Some(bytes) = self.raw.contiguous_bytes() {
            let len = bytes.len();
            // SAFETY: the same `len` bytes from the same address as `contiguous_bytes`
            // (row-major, non-empty, live for 'a); writable and touched by nothing else for
            // 'a (`RawViewMut::new`'s contract), and `self` is consumed, so this is the one
            // mutable view of them. Whatever is written is acceptable to the lender.
            let bytes = unsafe { std::slice::from_raw_parts_mut(self.raw.data.cast_mut(), len) };
            let elements: &mut [T] = bytemuck::try_cast_slice_mut(bytes).ok()?;
            return shaped_mut(&self.raw.shape, elements);
        }
        let mut view = self.into_units::<T>()?;
        let last = Axis(view.ndim() - 1);
        view.index_axis_inplace(last, 0);
        Some(view)
    }
}

/// `elements` as a row-major view of `shape`; `None` unless they are that many. Ranks 1 to
/// 3 take ndarray's fixed-rank checks, a tenth of a tiny call cheaper than the dynamic ones.
fn shaped<'a, T>(shape: &[usize], elements: &'a [T]) -> Option<ArrayViewD<'a, T>> {
    match *shape {
        [n] => ArrayView::from_shape(n, elements)
            .ok()
            .map(ArrayView::into_dyn),
        [a, b] => ArrayView::from_shape((a, b), elements)
            .ok()
            .map(ArrayView::into_dyn),
        [a, b, c] => ArrayView::from_shape((a, b, c), elements)
            .ok()
            .map(ArrayView::into_dyn),
        _ => ArrayViewD::from_shape(IxDyn(shape), elements).ok(),
    }
}

/// [`shaped`], to be written.
fn shaped_mut<'a, T>(shape: &[usize], elements: &'a mut [T]) -> Option<ArrayViewMutD<'a, T>> {
    match *shape {
        [n] => ArrayViewMut::from_shape(n, elements)
            .ok()
            .map(ArrayViewMut::into_dyn),
        [a, b] => ArrayViewMut::from_shape((a, b), elements)
            .ok()
            .map(ArrayViewMut::into_dyn),
        [a, b, c] => ArrayViewMut::from_shape((a, b, c), elements)
            .ok()
            .map(ArrayViewMut::into_dyn),
        _ => ArrayViewMutD::from_shape(IxDyn(shape), elements).ok(),
    }
}

/// Row-major byte strides of elements of `shape` that fill `len` bytes exactly; `None` when
/// they would not.
fn filling_strides(len: usize, shape: &[usize], itemsize: usize) -> Option<Axes<isize>> {
    let count = crate::mem::element_count(shape)?;
    (count.checked_mul(itemsize)? == len).then_some(())?;
    row_major_strides(shape, itemsize)
}

/// Row-major byte strides over `shape`; `None` past `isize::MAX`.
fn row_major_strides(shape: &[usize], itemsize: usize) -> Option<Axes<isize>> {
    let mut strides: Axes<isize> = smallvec::smallvec![0; shape.len()];
    if shape.contains(&0) {
        // No position exists: ndarray's own strides for an empty shape.
        return Some(strides);
    }
    let mut step = itemsize;
    for a in (0..shape.len()).rev() {
        strides[a] = isize::try_from(step).ok()?;
        if a > 0 {
            step = step.checked_mul(shape[a])?;
        }
    }
    Some(strides)
}

/// The byte range `[lo, hi)` that elements starting at byte `first` occupy, relative to it
/// plus `first` (`lo` is `None` for no element, and `hi` then 0); `None` on overflow.
fn extent_from(
    first: usize,
    shape: &[usize],
    strides: &[isize],
    itemsize: usize,
) -> Option<(Option<isize>, isize)> {
    if shape.contains(&0) || itemsize == 0 {
        return Some((None, 0));
    }
    let first = isize::try_from(first).ok()?;
    let (mut lo, mut hi) = (first, first.checked_add(isize::try_from(itemsize).ok()?)?);
    for (&d, &s) in shape.iter().zip(strides) {
        let span = isize::try_from(d - 1).ok()?.checked_mul(s)?;
        if span < 0 {
            lo = lo.checked_add(span)?;
        } else {
            hi = hi.checked_add(span)?;
        }
    }
    Some((Some(lo), hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every layout of a small array, read through the raw view, gives each element's units
    /// where ndarray's own indexing finds them; and only the unit sizes that fit are taken.
    #[test]
    fn raw_views_of_any_layout_read_each_element() {
        let values: Vec<u64> = (0..60).map(|v| v * 0x0101_0101_0101).collect();
        let a = ndarray::Array3::from_shape_vec((3, 4, 5), values).unwrap();
        let base = a.as_ptr() as usize;
        for v in [
            a.view(),
            a.slice(ndarray::s![..;-1, 1..;2, ..]),
            a.slice(ndarray::s![.., ..;-1, 1..5;-2]),
            a.view().reversed_axes(),
            a.slice(ndarray::s![.., 0..0, ..]),
        ] {
            let strides: Vec<isize> = v.strides().iter().map(|s| s * 8).collect();
            // SAFETY: `v` borrows `a`, live and unwritten while the raw view is read.
            let raw = unsafe { RawView::new(v.as_ptr().cast(), v.shape(), &strides, 8) };
            assert_eq!(raw.unit_size(), 8);
            let units = raw.units::<u32>().unwrap();
            assert_eq!(units.shape()[3], 2);
            for ((i, j, k), x) in v.indexed_iter() {
                assert_eq!(units[[i, j, k, 0]], *x as u32, "{:?}", v.strides());
                assert_eq!(units[[i, j, k, 1]], (*x >> 32) as u32);
            }
            let whole = raw.elements::<u64>().unwrap();
            assert_eq!(whole, v.into_dyn());
            let contiguous = v.is_standard_layout() && !v.is_empty();
            assert_eq!(raw.contiguous_bytes().is_some(), contiguous);
        }
        // An odd address fits only bytes.
        // SAFETY: one element of 8 bytes from the second byte of `a`'s first two elements.
        let odd = unsafe { RawView::new((base + 1) as *const u8, &[1], &[8], 8) };
        assert_eq!(odd.unit_size(), 1);
        assert!(odd.units::<u16>().is_none());
        assert_eq!(odd.units::<u8>().unwrap().shape(), [1, 8]);
    }

    #[test]
    fn overlaps_are_found() {
        let bytes = [0u8; 64];
        let whole = RawView::of_bytes(&bytes, &[8], 8).unwrap();
        let tail = RawView::of_bytes(&bytes[32..], &[4], 8).unwrap();
        let head = RawView::of_bytes(&bytes[..32], &[4], 8).unwrap();
        assert!(whole.may_overlap(&tail) && !head.may_overlap(&tail));
        let mut out = [0u8; 16];
        // SAFETY: `out` is borrowed uniquely; a stride of 0 names its first 8 bytes twice.
        let broadcast = unsafe { RawViewMut::new(out.as_mut_ptr(), &[2], &[0], 8) };
        assert!(broadcast.is_none());
        let written = RawViewMut::of_bytes(&mut out, &[2], 8).unwrap();
        assert!(!written.may_overlap(&head));
        let mut units = written.into_elements::<u64>().unwrap();
        units[1] = 7;
        assert_eq!(u64::from_ne_bytes(out[8..].try_into().unwrap()), 7);
    }

    /// What a hostile lender could pass through the safe constructors is refused, not
    /// viewed: more than `isize::MAX` bytes by broadcasting, units that do not divide the
    /// item size, elements outside the slice; and an empty view can be copied by ndarray.
    #[test]
    fn hostile_geometries_are_refused() {
        let bytes = [0u8; 8];
        let huge = RawView::within(&bytes, 0, &[1 << 32, 1 << 32], &[0, 0], 8).unwrap();
        assert!(huge.units::<u8>().is_none() && huge.elements::<u64>().is_none());
        assert!(huge.contiguous_bytes().is_none());
        let none = RawView::within(&[], 0, &[0, usize::MAX, usize::MAX], &[0, 0, 0], 1);
        assert!(none.is_some_and(|v| v.units::<u8>().is_none()));
        let twelve = [0u8; 12];
        let sixes = RawView::of_bytes(&twelve, &[2], 6).unwrap();
        assert!(sixes.units::<u32>().is_none() && sixes.units::<u64>().is_none());
        assert_eq!(sixes.units::<u16>().unwrap().shape(), [2, 3]);
        assert!(RawView::within(&bytes, 4, &[2], &[4], 4).is_none());
        assert!(RawView::within(&bytes, 0, &[2], &[-4], 4).is_none());
        assert!(RawView::within(&bytes, 4, &[2], &[-4], 4).is_some());
        let empty = RawView::within(&[], 0, &[0, 3], &[8, 0], 8).unwrap();
        let units = empty.units::<u8>().unwrap();
        assert_eq!(units.shape(), [0, 3, 8]);
        assert_eq!(units.to_owned().shape(), [0, 3, 8]);
        let mut nothing = [0u8; 0];
        let written = RawViewMut::within(&mut nothing, 0, &[3, 0, 2], &[16, 8, 8], 8).unwrap();
        let units = written.into_units::<u8>().unwrap();
        assert_eq!(units.to_owned().shape(), [3, 0, 2, 8]);
        // An axis of one position keeps no stride of its own, however large.
        let one = RawView::within(&bytes, 4, &[1, 2], &[isize::MIN + 1, -4], 4).unwrap();
        assert_eq!(one.elements::<u32>().unwrap().strides(), [0, -1]);
    }
}
