//! Fixed-width elements seen as units of bytes, so that one compiled copy serves every dtype
//! of a width: a gather moves elements and never looks at their values. A dtype's unit is
//! the unsigned integer of its alignment (`f32` and `i32` are `u32`, `complex64` two `u32`),
//! so a view of units has the elements' own addresses and strides, and a vector of units
//! the allocation's own layout.
//!
//! Reading: every byte of a fixed-width element is initialised (the table's types have no
//! padding), and every bit pattern is a valid unit. Writing: the only units written into an
//! element's memory are units read from elements of the same dtype, the bytes of its fill
//! value, or zeros (each dtype's `Default` is all-zero bytes, checked by a test below), so
//! every element written is a valid value of its dtype.

use crate::mem::raw_view::{unit_geometry, UnitAxis, UnitGeometry};
use crate::mem::Axes as AxisList;
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn};
use std::any::TypeId;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// Element types whose bytes are their value: `Copy`, with no padding, and a `Default` of
/// all-zero bytes, so a copy of their bytes (in units of their alignment) is a copy of their
/// value. The dtype table implements it for each of its fixed-width types, and a test there
/// checks the zero bytes; the `unsafe` code of this layer relies on what it states, so no
/// other type may implement it (a safe trait, kept crate-private for that reason).
pub(crate) trait Bytes: Copy + Default + Send + Sync + 'static {
    /// Whether every bit pattern is a value (all but `bool`), so that units may be written
    /// into elements as they come.
    const ANY_BITS: bool;
    /// Whether `bytes`, a whole number of elements, are values of this type.
    fn are_values(bytes: &[u8]) -> bool;
}

/// A proof, made at run time, that `T` is a [`Bytes`] type: for code generic over every
/// element type (outputs are made for any `Clone + Default` type) that treats bytes alone
/// differently. Only [`BytesOf::if_same`] makes one.
#[derive(Debug)]
pub(crate) struct BytesOf<T>(PhantomData<fn() -> T>);

impl<T> Clone for BytesOf<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for BytesOf<T> {}

impl<T: 'static> BytesOf<T> {
    /// The proof for `T`, if `T` is the [`Bytes`] type `F`.
    pub(crate) fn if_same<F: Bytes>() -> Option<BytesOf<T>> {
        (TypeId::of::<T>() == TypeId::of::<F>()).then_some(BytesOf(PhantomData))
    }
}

/// What elements are moved as: unsigned integers, any bit pattern valid.
pub(crate) trait Unit: bytemuck::Pod + Default + Send + Sync + 'static {}
impl Unit for u8 {}
impl Unit for u16 {}
impl Unit for u32 {}
impl Unit for u64 {}

/// Runs `body` with `U` the unsigned integer of `size` bytes (1, 2 or 4; `u64` for any
/// other): the unit a gather moves elements in. The core chooses it, from a raw view's
/// layout (`RawView::unit_size`) or a dtype's alignment. (The Python binding of
/// `put_along_axis` still maps item sizes to unsigned dtypes itself; issue 54.)
macro_rules! with_unit {
    ($size:expr, $U:ident => $body:expr) => {
        match $size {
            1 => {
                type $U = u8;
                $body
            }
            2 => {
                type $U = u16;
                $body
            }
            4 => {
                type $U = u32;
                $body
            }
            _ => {
                type $U = u64;
                $body
            }
        }
    };
}
pub(crate) use with_unit;

/// Runs `$body` with `$U` the unit type of a fixed-width element type `$T`: the unsigned
/// integer of its alignment.
macro_rules! with_unit_of {
    ($T:ty, $U:ident => $body:expr) => {
        $crate::with_unit!(std::mem::align_of::<$T>(), $U => $body)
    };
}
pub(crate) use with_unit_of;

/// How many `U` units make one `T`, if `U` fits `T`'s layout: its size divides `T`'s and its
/// alignment is at most `T`'s.
fn units_per<T, U>() -> Option<usize> {
    let (t, u) = (std::mem::size_of::<T>(), std::mem::size_of::<U>());
    (u != 0 && t.is_multiple_of(u) && std::mem::align_of::<U>() <= std::mem::align_of::<T>())
        .then_some(t / u)
}

/// The unit geometry of a view of `T` elements as units of `U` (the shared one of
/// [`raw_view`](crate::mem::raw_view)): for plain elements the unit axis appended (none for
/// one unit); for records (the last axis holds each element's values) the record axis's
/// elements as one run of units, which needs them adjacent. `None` where `U` does not fit.
fn geometry_of<T, U, S: ndarray::RawData<Elem = T>>(
    view: &ndarray::ArrayBase<S, IxDyn>,
    records: bool,
) -> Option<UnitGeometry<U>> {
    units_per::<T, U>()?;
    let size = std::mem::size_of::<T>();
    let strides: AxisList<isize> = view.strides().iter().map(|&s| s * size as isize).collect();
    let axis = if records {
        UnitAxis::Merged
    } else {
        UnitAxis::UnlessOne
    };
    unit_geometry::<U>(view.as_ptr().cast(), view.shape(), &strides, size, axis)
}

/// A row-major view of elements of one unit each as a view of units of the same shape,
/// without the general path's shape vectors (the common case, and a tiny call's). Records
/// of one-unit elements keep their shape too: the record axis is already the unit axis.
fn same_shape<'a, T, U>(view: &ArrayViewD<'a, T>) -> Option<ArrayViewD<'a, U>> {
    if units_per::<T, U>()? != 1 {
        return None;
    }
    let elements = view.as_slice()?;
    // SAFETY: `elements` is a live slice borrowed for 'a; `U` has `T`'s size and at most its
    // alignment (`units_per` gave 1), so the same memory is `elements.len()` units, each
    // initialised (no padding in a fixed-width type) and any bytes a valid `U`.
    let units =
        unsafe { std::slice::from_raw_parts(elements.as_ptr().cast::<U>(), elements.len()) };
    ArrayViewD::from_shape(view.raw_dim(), units).ok()
}

/// [`same_shape`] for a caller's output.
///
/// # Safety
/// As [`view_mut`].
unsafe fn same_shape_mut<'a, T, U>(
    view: ArrayViewMutD<'a, T>,
) -> Result<ArrayViewMutD<'a, U>, ArrayViewMutD<'a, T>> {
    if units_per::<T, U>() != Some(1) || !view.is_standard_layout() {
        return Err(view);
    }
    let dim = view.raw_dim();
    let Some(elements) = view.into_slice() else {
        unreachable!("a standard-layout view is a slice");
    };
    // SAFETY: as in `same_shape`, on the unique borrow `elements`, consumed here; what is
    // written keeps each element a valid `T` (the caller's contract).
    let units = unsafe {
        std::slice::from_raw_parts_mut(elements.as_mut_ptr().cast::<U>(), elements.len())
    };
    ArrayViewMutD::from_shape(dim, units).map_err(|_| unreachable!("same shape, same length"))
}

/// `view` as units of `U`, the same memory, laid out as [`unit_geometry`] says (for
/// records, whose elements must then be adjacent). `None` when `U` does not fit `T`'s layout
/// or records' elements are apart.
pub(crate) fn view<'a, T: Bytes, U: Unit>(
    view: ArrayViewD<'a, T>,
    records: bool,
) -> Option<ArrayViewD<'a, U>> {
    if let Some(units) = same_shape(&view) {
        return Some(units);
    }
    let geometry = geometry_of::<T, U, _>(&view, records)?;
    // SAFETY: every position of the geometry names the bytes of one unit of one of the
    // view's elements (`unit_geometry`, from the view's own address, shape and strides;
    // `units_per`: `size_of::<T>() == k * size_of::<U>()`), live and unwritten while the
    // borrow 'a lasts; each unit is aligned (checked there). The bytes are initialised (a
    // `Bytes` type has no padding) and any bytes are a valid `U` (`Unit`).
    unsafe { geometry.view() }
}

/// Whether units may be written into elements of `T` as they come: every bit pattern is a
/// `T` (the table's `plain` role; all fixed-width types but `bool`).
pub(crate) fn writable<T: Bytes>() -> bool {
    T::ANY_BITS
}

/// A caller's output as units of `U`, as [`view`] does for reading; `None` also where `T`
/// is not [`writable`] (a `bool` is only 0 or 1).
pub(crate) fn view_mut<'a, T: Bytes, U: Unit>(
    view: ArrayViewMutD<'a, T>,
    records: bool,
) -> Option<ArrayViewMutD<'a, U>> {
    if !writable::<T>() {
        return None;
    }
    // SAFETY: every bit pattern is a `T` (`writable`), so whatever is written keeps each
    // element a valid `T`: `same_shape_mut`'s contract.
    let view = match unsafe { same_shape_mut(view) } {
        Ok(units) => return Some(units),
        Err(view) => view,
    };
    let geometry = geometry_of::<T, U, _>(&view, records)?;
    // SAFETY: as in `view`; and the borrowed view is unique for 'a (it is consumed here) and
    // names no element twice (an `ArrayViewMut` never does), so neither does the unit view,
    // whose positions are the units of distinct elements. What is written keeps each element
    // a valid `T`: every bit pattern is one (`writable`).
    unsafe { geometry.view_mut() }
}

/// A vector of units as the elements they are the bytes of: the same allocation where its
/// layout allows (same alignment, a whole number of elements in both length and capacity),
/// else a copy. `None` where they are not: a length that is not a whole number of elements,
/// `U` not fitting `T`, or bytes that are no `T` (a `bool` other than 0 or 1).
pub(crate) fn into_elements<T: Bytes, U: Unit>(mut units: Vec<U>) -> Option<Vec<T>> {
    let k = units_per::<T, U>()?;
    if !units.len().is_multiple_of(k) || !holds_values::<T, U>(&units) {
        return None;
    }
    let len = units.len() / k;
    let same_layout = std::mem::align_of::<U>() == std::mem::align_of::<T>();
    if same_layout && units.capacity().is_multiple_of(k) {
        let cap = units.capacity() / k;
        let ptr = units.as_mut_ptr().cast::<T>();
        std::mem::forget(units);
        // SAFETY: the allocation was made for `cap * k` units of `U`, whose layout (size
        // `cap * size_of::<T>()`, `U`'s alignment, equal to `T`'s) is the layout of `cap`
        // elements of `T`, so the global allocator frees it correctly as a `Vec<T>`; the
        // first `len` elements are initialised valid `T` values (`len * k` initialised units,
        // which `holds_values` found to be `T`s); `units` was forgotten, so the allocation
        // has one owner.
        return Some(unsafe { Vec::from_raw_parts(ptr, len, cap) });
    }
    let mut elements = Vec::<T>::with_capacity(len);
    // SAFETY: `elements` has room for `len` elements, `len * size_of::<T>()` bytes, which
    // `units` holds (its length is `len * k`, checked above); the two do not overlap; and
    // those bytes are `len` valid `T` values (`holds_values`), so `set_len` exposes only
    // initialised values.
    unsafe {
        std::ptr::copy_nonoverlapping(
            units.as_ptr().cast::<u8>(),
            elements.as_mut_ptr().cast::<u8>(),
            len * std::mem::size_of::<T>(),
        );
        elements.set_len(len);
    }
    Some(elements)
}

/// Whether `units` are the bytes of values of `T`: always for a [`writable`] `T`; else as
/// `T` says (for `bool`, where each byte is 0 or 1).
fn holds_values<T: Bytes, U: Unit>(units: &[U]) -> bool {
    writable::<T>() || T::are_values(bytemuck::cast_slice::<U, u8>(units))
}

/// A vector of elements as the units of their bytes, the same allocation where the layout
/// allows (as [`into_elements`]); `None` where it does not (the elements are then dropped
/// as they are). For the pool of fresh outputs, which keeps buffers by their unit type.
pub(crate) fn into_units<T: Bytes, U: Unit>(mut elements: Vec<T>) -> Option<Vec<U>> {
    let k = units_per::<T, U>()?;
    if std::mem::align_of::<U>() != std::mem::align_of::<T>() {
        return None;
    }
    let (len, cap) = (elements.len() * k, elements.capacity() * k);
    let ptr = elements.as_mut_ptr().cast::<U>();
    std::mem::forget(elements);
    // SAFETY: the allocation was made for `cap / k` elements of `T`: size
    // `cap * size_of::<U>()` and `T`'s alignment, equal to `U`'s (checked above), which is the
    // layout of `cap` units; the first `len` units are the bytes of initialised elements (no
    // padding in a fixed-width type) and any bytes are a valid `U`; `elements` was
    // forgotten, so the allocation has one owner.
    #[allow(unsafe_code)]
    Some(unsafe { Vec::from_raw_parts(ptr, len, cap) })
}

/// The units of one element's bytes (for a fill value): the element copied into units.
pub(crate) fn of_value<T: Bytes, U: Unit>(value: &T) -> Vec<U> {
    let k = units_per::<T, U>().unwrap_or(0);
    let mut units = vec![U::default(); k];
    // SAFETY: `units` holds `k * size_of::<U>() == size_of::<T>()` bytes (`units_per`), does
    // not overlap `value`, and every byte of a fixed-width `T` is initialised; any bytes are
    // a valid `U`.
    #[allow(unsafe_code)]
    unsafe {
        std::ptr::copy_nonoverlapping(
            std::ptr::from_ref(value).cast::<u8>(),
            units.as_mut_ptr().cast::<u8>(),
            k * std::mem::size_of::<U>(),
        );
    }
    units
}

/// Bytes in the machine's order as units (for a fill value given as bytes); `None` unless
/// they are a whole number of units.
pub(crate) fn of_bytes<U: Unit>(bytes: &[u8]) -> Option<Vec<U>> {
    let size = std::mem::size_of::<U>();
    if !bytes.len().is_multiple_of(size) {
        return None;
    }
    let mut units = vec![U::default(); bytes.len() / size];
    // SAFETY: `units` holds exactly `bytes.len()` bytes, does not overlap `bytes`, and any
    // bytes are a valid `U`.
    #[allow(unsafe_code)]
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), units.as_mut_ptr().cast::<u8>(), bytes.len());
    }
    Some(units)
}

/// Uninitialised bytes as uninitialised units of `U`, if their address is aligned for `U`
/// and their length a multiple of its size; `None` otherwise.
pub(crate) fn uninit_units<U: Unit>(
    bytes: &mut [MaybeUninit<u8>],
) -> Option<&mut [MaybeUninit<U>]> {
    let size = std::mem::size_of::<U>();
    let aligned = (bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<U>());
    if !aligned || !bytes.len().is_multiple_of(size) {
        return None;
    }
    // SAFETY: the pointer is aligned for `U` and `bytes.len() / size` units of `size` bytes
    // cover exactly the bytes borrowed (both checked above), so the new slice stays inside
    // the borrow it replaces, which it holds for its lifetime. `MaybeUninit<U>` has `U`'s
    // size and alignment and, like `MaybeUninit<u8>`, makes no claim that the bytes are
    // initialised; what is written through it is a whole `U` (`Unit`: any bytes are valid).
    #[allow(unsafe_code)]
    unsafe {
        Some(std::slice::from_raw_parts_mut(
            bytes.as_mut_ptr().cast::<MaybeUninit<U>>(),
            bytes.len() / size,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s, Array3};
    use num_complex::{Complex32, Complex64};

    /// `uninit_units`' bounds: every offset and length of a buffer, taken only where the
    /// address is aligned and the length whole, and then covering exactly those bytes.
    #[test]
    fn uninit_units_take_only_aligned_whole_units() {
        let mut buffer = Vec::<u8>::with_capacity(48);
        let bytes = &mut buffer.spare_capacity_mut()[..48];
        for start in 0..16 {
            for len in 0..=(40 - start) {
                let part = &mut bytes[start..start + len];
                let address = part.as_ptr() as usize;
                let units = uninit_units::<u64>(part);
                let fits = address.is_multiple_of(8) && len.is_multiple_of(8);
                assert_eq!(units.as_ref().map(|u| u.len()), fits.then_some(len / 8));
                if let Some(units) = units {
                    units.iter_mut().for_each(|u| _ = u.write(u64::MAX));
                }
            }
        }
        let odd = (1..8).find(|&k| !(bytes[k..].as_ptr() as usize).is_multiple_of(2));
        let odd = odd.unwrap_or_default();
        assert!(uninit_units::<u16>(&mut bytes[odd..odd + 4]).is_none());
        assert_eq!(
            uninit_units::<u8>(&mut bytes[odd..odd + 3]).map(|u| u.len()),
            Some(3)
        );
    }

    #[test]
    fn views_of_any_layout_read_the_same_units() {
        let a = Array3::from_shape_fn((3, 4, 5), |(i, j, k)| {
            Complex32::new((i * 100 + j * 10 + k) as f32, -(k as f32))
        });
        for v in [
            a.view(),
            a.slice(s![..;-1, 1..;2, ..]),
            a.slice(s![.., ..;-1, 1..5;-2]),
            a.view().reversed_axes(),
            a.slice(s![.., 0..0, ..]),
        ] {
            let units = view::<_, u32>(v.into_dyn(), false).unwrap();
            assert_eq!(&units.shape()[..3], v.shape());
            assert_eq!(units.shape()[3], 2);
            for ((i, j, k), c) in v.indexed_iter() {
                assert_eq!(units[[i, j, k, 0]], c.re.to_bits());
                assert_eq!(units[[i, j, k, 1]], c.im.to_bits());
            }
        }
        // A unit wider than the alignment does not fit.
        assert!(view::<Complex32, u64>(a.view().into_dyn(), false).is_none());
        // Records: the record axis's elements as one run of units, when adjacent.
        let r = view::<_, u32>(a.view().into_dyn(), true).unwrap();
        assert_eq!(r.shape(), [3, 4, 10]);
        assert_eq!(r[[1, 2, 7]], a[[1, 2, 3]].im.to_bits());
        assert!(view::<_, u32>(a.slice(s![.., .., ..;2]).into_dyn(), true).is_none());
        // Records of one-unit elements keep any layout, a reversed record axis included.
        let f = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let reversed = view::<f32, u32>(f.slice(s![.., ..;-1]).into_dyn(), true).unwrap();
        assert_eq!(reversed[[1, 0]], 6.0f32.to_bits());
        let one = array![[1.0f32, 2.0], [3.0, 4.0]];
        assert_eq!(
            view::<_, u32>(one.view().into_dyn(), false)
                .unwrap()
                .shape(),
            [2, 2]
        );
    }

    #[test]
    fn mutable_views_write_where_the_elements_are() {
        let mut a = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let source = array![[7.0f64, 8.0], [9.0, 10.0]];
        let mut units =
            view_mut::<f64, u64>(a.slice_mut(s![..;-1, ..;2]).into_dyn(), false).unwrap();
        for ((i, j), v) in source.indexed_iter() {
            units[[i, j]] = v.to_bits();
        }
        assert_eq!(a, array![[9.0, 2.0, 10.0], [7.0, 5.0, 8.0]]);
    }

    #[test]
    fn unit_vectors_become_elements_in_place_or_by_copy() {
        let values = [Complex64::new(1.5, -2.0), Complex64::new(0.0, 3.25)];
        let units: Vec<u64> = values.iter().flat_map(of_value::<_, u64>).collect();
        let ptr = units.as_ptr() as usize;
        let back: Vec<Complex64> = into_elements(units).unwrap();
        assert_eq!(back, values);
        assert_eq!(back.as_ptr() as usize, ptr, "same layout: no copy");
        // An odd capacity cannot be freed as whole elements: a copy.
        let mut odd: Vec<u32> = Vec::with_capacity(5);
        odd.extend(of_value::<_, u32>(&Complex32::new(4.0, 5.0)));
        let back: Vec<Complex32> = into_elements(odd).unwrap();
        assert_eq!(back, [Complex32::new(4.0, 5.0)]);
        // Bytes that are no bool, a length that is no whole number of elements: refused.
        assert_eq!(
            into_elements::<bool, u8>(vec![0, 1]),
            Some(vec![false, true])
        );
        assert_eq!(into_elements::<bool, u8>(vec![0, 2]), None);
        assert_eq!(into_elements::<Complex32, u32>(vec![0; 3]), None);
        let mut flags = array![true, false];
        assert!(view_mut::<bool, u8>(flags.view_mut().into_dyn(), false).is_none());
        assert_eq!(of_bytes::<u16>(&[1, 0, 2, 0]), Some(vec![1, 2]));
        assert_eq!(of_bytes::<u16>(&[1, 0, 2]), None);
    }
}
