//! Fresh outputs: a buffer given back by [`crate::mem::recycle`] where one fits, else allocated
//! without being zeroed and backed by 2 MiB pages where the OS offers them (fewer page
//! faults on large outputs; [`huge_page_vec`], public for callers' tables); handed over
//! only once every element is written, which [`fresh`] checks in debug and `ci` builds.
//!
//! Also what the kernels write into: a [`Slot`] (a fresh output's uninitialised element or a
//! caller's), on [`Pages`] new or written before.

use crate::mem::units::BytesOf;
use crate::mem::{element_count, MemError};
use std::mem::MaybeUninit;

type Result<T> = std::result::Result<T, MemError>;

/// Outputs at least this large are advised to use transparent huge pages.
pub(crate) const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Where an output's memory comes from, which decides how it is best written (the kernels'
/// streaming stores pay only on memory written before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pages {
    /// Allocated for this call: the OS zeroes each page as it is first written, which leaves
    /// its lines in the cache, where ordinary stores find them.
    New,
    /// Written before: a caller's buffer, or one given back to [`crate::mem::recycle`].
    Used,
}

/// A slot of the output: uninitialised memory of a fresh output, or an element of a caller's
/// buffer.
pub(crate) trait Slot<T>: Send + Sized {
    /// Stores a copy of `v`.
    fn put(&mut self, v: &T);
    /// Stores `T::default()` (the value of an ignored bad index).
    fn put_default(&mut self);
    /// Stores copies of `src`, one per slot.
    #[inline]
    fn put_slice(dst: &mut [Self], src: &[T]) {
        debug_assert_eq!(dst.len(), src.len(), "a slice copy fills its slots");
        for (d, s) in dst.iter_mut().zip(src) {
            d.put(s);
        }
    }
    /// Stores copies of `src`, `N` elements known at compile time.
    #[inline(always)]
    fn put_array<const N: usize>(dst: &mut [Self; N], src: &[T; N]) {
        Self::put_slice(dst, src);
    }
}

impl<T: Clone + Default + Send> Slot<T> for MaybeUninit<T> {
    #[inline(always)]
    fn put(&mut self, v: &T) {
        self.write(v.clone());
    }
    #[inline(always)]
    fn put_default(&mut self) {
        self.write(T::default());
    }
    /// One `memcpy` where `T` is `Copy` (the standard library's own specialisation): the
    /// loop of `put`s became an inline 16-byte copy loop, slower than `memcpy` on slices in
    /// the cache (this crate's build targets SSE2, and glibc's `memcpy` picks the machine's
    /// widest moves; figures: BENCHMARKS.md, "Measurements behind the code").
    #[inline]
    fn put_slice(dst: &mut [Self], src: &[T]) {
        dst.write_clone_of_slice(src);
    }
    /// The array cloned whole, a fixed-size move where `T` is `Copy` (element by element, the
    /// compiler wrote 32 four-byte moves for a slice of 32 `f32`).
    #[inline(always)]
    fn put_array<const N: usize>(dst: &mut [Self; N], src: &[T; N]) {
        write_array(dst, src);
    }
}

impl<T: Clone + Default + Send> Slot<T> for T {
    #[inline(always)]
    fn put(&mut self, v: &T) {
        self.clone_from(v);
    }
    #[inline(always)]
    fn put_default(&mut self) {
        *self = T::default();
    }
    #[inline]
    fn put_slice(dst: &mut [T], src: &[T]) {
        dst.clone_from_slice(src);
    }
}

/// A vector of `len` elements, each written by `fill` (told where the memory comes from).
///
/// `fill` must write every slot: the kernels' contract, which this function checks rather
/// than trusts where it can. Elements of a type that is not known to be [`Bytes`] (`bytes`
/// is `None`: it may own memory, or have padding) hold their `Default` before `fill` runs,
/// so a slot it missed is never read uninitialised. The slots of a `Bytes` type are checked
/// in debug and `ci` builds (every test run): see [`check_written`]. `fill` may therefore
/// run twice, and must write the same values each time.
///
/// [`Bytes`]: crate::mem::units::Bytes
///
/// # Errors
/// [`MemError::TooLarge`] past `isize::MAX` bytes, [`MemError::OutOfMemory`], and (in
/// checked builds) [`MemError::Unwritten`] for a slot left unwritten.
pub(crate) fn fresh<T: Default + 'static>(
    len: usize,
    shape: &[usize],
    bytes: Option<BytesOf<T>>,
    mut fill: impl FnMut(&mut [MaybeUninit<T>], Pages),
) -> Result<Vec<T>> {
    let (mut v, pages) = allocate::<T>(len, shape)?;
    let slots = &mut v.spare_capacity_mut()[..len];
    let fixed = bytes.is_some();
    if !fixed {
        slots.iter_mut().for_each(|s| {
            s.write(T::default());
        });
    } else if CHECKED {
        poison(slots, POISON[0]);
    }
    fill(slots, pages);
    if fixed && CHECKED {
        check_written(slots, shape, &mut fill)?;
    }
    // SAFETY: `slots` are the first `len` elements of the capacity (reserved by `allocate`),
    // and each holds a value: a default written above, or what `fill` wrote (the kernels'
    // contract, checked by `check_written` in every test run). Were `fill` to panic,
    // `set_len` is not reached and the vector drops as empty (leaking, never reading, what
    // was written).
    unsafe { v.set_len(len) };
    Ok(v)
}

/// Whether fresh outputs are checked for slots left unwritten: in debug and `ci` builds.
const CHECKED: bool = cfg!(debug_assertions);

/// The two byte patterns a checked fresh output starts as.
const POISON: [u8; 2] = [0xA5, 0x5A];

/// An empty vector with room for `len` elements: a buffer given back for reuse, or a new
/// one (on 2 MiB pages where large).
fn allocate<T: 'static>(len: usize, shape: &[usize]) -> Result<(Vec<T>, Pages)> {
    // No output of more than `isize::MAX` bytes (or elements, of a zero-sized type) exists.
    len.checked_mul(std::mem::size_of::<T>().max(1))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| MemError::TooLarge {
            what: "output",
            shape: shape.to_vec(),
        })?;
    Ok(match crate::mem::recycle::take(len) {
        Some(v) => (v, Pages::Used),
        None => (huge_page_vec(len)?, Pages::New),
    })
}

/// Every byte of `slots` set to `byte`.
fn poison<T>(slots: &mut [MaybeUninit<T>], byte: u8) {
    let len = std::mem::size_of_val(slots);
    // SAFETY: the pointer and length describe exactly the memory of `slots`, borrowed
    // uniquely; any byte is a valid `MaybeUninit<T>` byte.
    unsafe { std::ptr::write_bytes(slots.as_mut_ptr().cast::<u8>(), byte, len) };
}

/// Checks that `fill` wrote every slot of a fixed-width output: slots whose bytes are all
/// the first poison are written again by a second run of `fill` over the second poison; a
/// slot still all poison then was never written (a slot really holding that value holds it
/// again, since `fill` is deterministic).
fn check_written<T: 'static>(
    slots: &[MaybeUninit<T>],
    shape: &[usize],
    fill: &mut impl FnMut(&mut [MaybeUninit<T>], Pages),
) -> Result<()> {
    let suspects = all_bytes(slots, POISON[0]);
    if suspects.is_empty() {
        return Ok(());
    }
    let (mut again, _) = allocate::<T>(slots.len(), shape)?;
    let again = &mut again.spare_capacity_mut()[..slots.len()];
    poison(again, POISON[1]);
    fill(again, Pages::Used);
    let unwritten = all_bytes(again, POISON[1]);
    match suspects.iter().find(|s| unwritten.binary_search(s).is_ok()) {
        Some(_) => Err(MemError::Unwritten),
        None => Ok(()),
    }
}

/// The positions of the slots whose bytes are all `byte`, in order.
///
/// For slots of a fixed-width table type after [`poison`] and a fill only: each byte is then
/// initialised, by the poison or by a write of a value, which has no padding.
fn all_bytes<T>(slots: &[MaybeUninit<T>], byte: u8) -> Vec<usize> {
    let size = std::mem::size_of::<T>();
    if size == 0 {
        return Vec::new();
    }
    // SAFETY: the pointer and length describe exactly the memory of `slots`, borrowed
    // shared; every byte of it is initialised (this function's precondition above: poisoned,
    // then overwritten by values without padding), so it reads as `u8`s.
    let bytes =
        unsafe { std::slice::from_raw_parts(slots.as_ptr().cast::<u8>(), size * slots.len()) };
    bytes
        .chunks_exact(size)
        .enumerate()
        .filter(|(_, c)| c.iter().all(|&b| b == byte))
        .map(|(i, _)| i)
        .collect()
}

/// A fresh output written by `copy`, with the index check folded in: `copy` default-fills
/// the slots of an index its policy resolves to no slice and returns whether it met one.
/// Only then, or when the output is empty (nothing was copied, so nothing was met), does
/// `check` run, to name the bad index; on its error the output is dropped. A fresh output is
/// never seen on error, so its copy needs no check pass before it (a caller's buffer does).
/// As [`fresh`], `copy` writes every slot.
pub(crate) fn fresh_checked<T: Default + 'static, E: From<MemError>>(
    len: usize,
    shape: &[usize],
    bytes: Option<BytesOf<T>>,
    mut copy: impl FnMut(&mut [MaybeUninit<T>], Pages) -> bool,
    check: impl FnOnce() -> std::result::Result<(), E>,
) -> std::result::Result<Vec<T>, E> {
    let mut unresolved = false;
    let out = fresh(len, shape, bytes, |slots, pages| {
        unresolved = copy(slots, pages)
    })?;
    if unresolved || len == 0 {
        check()?;
    }
    Ok(out)
}

/// A caller's initialised slots as uninitialised ones, for a copy that writes every slot.
///
/// # Safety
/// Every slot must hold a valid `T` again when the borrow ends (the caller writes a valid
/// value into each), and `T` must have no destructor (a value overwritten through
/// `MaybeUninit` is not dropped).
pub(crate) unsafe fn as_uninit<T>(slots: &mut [T]) -> &mut [MaybeUninit<T>] {
    let len = slots.len();
    // SAFETY: `MaybeUninit<T>` has `T`'s size and alignment, so the same memory is `len` of
    // them; the borrow is unique and outlives nothing it came from. What is written keeps
    // every slot valid (the caller's contract), so the `&mut [T]` reads valid values after.
    unsafe { std::slice::from_raw_parts_mut(slots.as_mut_ptr().cast::<MaybeUninit<T>>(), len) }
}

/// Runs `copy` on a caller's bytes as uninitialised ones: the small path's copy into a
/// caller's records, which writes a value into every slot, as [`with_row_major_out`]'s copy
/// does. The crate's contract for `copy`, as for that one's: it writes values only, never
/// `MaybeUninit::uninit()`, through the slots it is given.
pub(crate) fn copy_into_bytes<R>(
    bytes: &mut [u8],
    copy: impl FnOnce(&mut [MaybeUninit<u8>]) -> R,
) -> R {
    // SAFETY: `u8` has no destructor and any byte is a valid one; the copies this runs write
    // values (through `MaybeUninit::write`) and never an uninitialised slot, so each byte
    // holds a valid value after it, written or not.
    copy(unsafe { as_uninit(bytes) })
}

/// Writes a clone of `src` into `dst`, the array whole: for a `Copy` type one move of its
/// bytes, where writing the slots one by one became a move per element.
#[inline(always)]
pub(crate) fn write_array<T: Clone, const N: usize>(dst: &mut [MaybeUninit<T>; N], src: &[T; N]) {
    let whole = std::ptr::from_mut(dst).cast::<MaybeUninit<[T; N]>>();
    // SAFETY: `[MaybeUninit<T>; N]` and `MaybeUninit<[T; N]>` have the same size and
    // alignment (`MaybeUninit<T>` has `T`'s, and an array has no padding between elements),
    // any bytes are a valid `MaybeUninit`, and the pointer comes from the unique borrow `dst`,
    // which outlives the write. `write` drops nothing that was there; the clone is made
    // before it, so a clone that panics leaves the slots as they were.
    unsafe { &mut *whole }.write(src.clone());
}

/// Runs `body` on a caller's output in row-major order: in place when it is laid out so (its
/// memory written before: [`Pages::Used`]), otherwise `copy` into a fresh buffer
/// whose values are then moved into place. For a type with no destructor the in-place run
/// is `copy` too, on the caller's slots as uninitialised ones (overwriting a value with no
/// destructor is all a store does), so the copy is compiled once for both outputs. `copy`
/// writes every slot, as [`fresh`]'s `fill` (which checks it).
pub(crate) fn with_row_major_out<T: Clone + Default + Send + 'static, D: ndarray::Dimension>(
    out: &mut ndarray::ArrayViewMut<'_, T, D>,
    bytes: Option<BytesOf<T>>,
    body: impl Fn(&mut [T], Pages) + Sync,
    copy: impl Fn(&mut [MaybeUninit<T>], Pages),
) -> Result<()> {
    if let Some(slice) = out.as_slice_mut() {
        if const { std::mem::needs_drop::<T>() } {
            body(slice, Pages::Used);
        } else {
            // SAFETY: `T` has no destructor, the slots hold valid values, and whatever `copy`
            // writes into one is a valid `T` (it writes through `MaybeUninit::write`, values
            // of `T`), so each slot holds a valid value after it, written or not.
            copy(unsafe { as_uninit(slice) }, Pages::Used);
        }
        return Ok(());
    }
    let buf = fresh(out.len(), out.shape(), bytes, copy)?;
    // `iter_mut` walks a view in logical (row-major) order, whatever its strides.
    for (o, v) in out.iter_mut().zip(buf) {
        *o = v;
    }
    Ok(())
}

/// A vector of `shape`'s element count, every element `value`: a working buffer sized by
/// the caller's input (a count per segment, a sum per row), refused with an error rather
/// than an abort when the size overflows or the memory is not there.
///
/// # Errors
/// [`MemError::TooLarge`] past `isize::MAX` bytes; [`MemError::OutOfMemory`].
pub(crate) fn filled<T: Clone>(shape: &[usize], value: T) -> Result<Vec<T>> {
    let overflow = || MemError::TooLarge {
        what: "working buffer",
        shape: shape.to_vec(),
    };
    let len = element_count(shape).ok_or_else(overflow)?;
    let bytes = len
        .checked_mul(std::mem::size_of::<T>().max(1))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(overflow)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| MemError::OutOfMemory { bytes })?;
    v.resize(len, value);
    Ok(v)
}

/// `T::default()` in every element of a fresh output of `shape`.
pub(crate) fn defaults<T: Clone + Default + 'static>(
    shape: &[usize],
    bytes: Option<BytesOf<T>>,
) -> Result<Vec<T>> {
    let len = element_count(shape).ok_or_else(|| MemError::TooLarge {
        what: "output",
        shape: shape.to_vec(),
    })?;
    fresh(len, shape, bytes, |slots, _| {
        slots.iter_mut().for_each(|s| {
            s.write(T::default());
        })
    })
}

/// An empty vector with room for `capacity` elements, on 2 MiB pages where large (the
/// public door, with its documentation: `ndgather::memory::huge_page_vec`).
///
/// # Errors
/// [`MemError::TooLarge`] if `capacity` elements would exceed `isize::MAX` bytes;
/// [`MemError::OutOfMemory`] if the allocation fails.
pub(crate) fn huge_page_vec<T>(capacity: usize) -> Result<Vec<T>> {
    let bytes = capacity
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| MemError::TooLarge {
            what: "table",
            shape: vec![capacity],
        })?;
    let mut v = Vec::new();
    v.try_reserve_exact(capacity)
        .map_err(|_| MemError::OutOfMemory { bytes })?;
    advise_huge_pages(&mut v, bytes);
    Ok(v)
}

/// Asks the OS to back the 2 MiB-aligned interior of a large allocation with huge pages.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(v: &mut Vec<T>, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let (lo, hi) = (start.div_ceil(HUGE) * HUGE, (start + bytes) / HUGE * HUGE);
    if hi > lo {
        // SAFETY: [lo, hi) lies inside the allocation `v` owns (of `bytes` bytes from
        // `start`); MADV_HUGEPAGE changes only how the kernel backs those pages, never their
        // contents or validity, and failure (e.g. THP disabled) is harmless, so it is ignored.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_v: &mut Vec<T>, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping holding `address`, from `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    fn vm_flags(address: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            let bounds = range.and_then(|(lo, hi)| {
                Some((
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                ))
            });
            if let Some((lo, hi)) = bounds {
                inside = (lo..hi).contains(&address);
            } else if let Some(flags) = line.strip_prefix("VmFlags:").filter(|_| inside) {
                return Some(flags.trim().to_string());
            }
        }
        None
    }

    #[test]
    fn huge_page_vec_reserves_and_advises_large_tables() {
        let v: Vec<f32> = huge_page_vec(3 << 20).unwrap();
        assert!(v.is_empty() && v.capacity() >= 3 << 20);
        // The 2 MiB-aligned interior of its 12 MiB is advised (`hg`), where the kernel has
        // transparent huge pages at all.
        #[cfg(target_os = "linux")]
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            let interior = (v.as_ptr() as usize).div_ceil(2 << 20) * (2 << 20);
            let flags = vm_flags(interior).expect("the vector's mapping in /proc/self/smaps");
            assert!(flags.split(' ').any(|f| f == "hg"), "VmFlags: {flags}");
        }
        let small: Vec<u8> = huge_page_vec(100).unwrap();
        assert!(small.capacity() >= 100);
        let none: Vec<()> = huge_page_vec(usize::MAX).unwrap();
        assert!(none.is_empty());
    }

    /// In checked builds (debug, `ci`: every test run) a fresh output with a slot its copy
    /// missed is an error, and one whose slots hold the poison's own value is not.
    #[test]
    #[cfg(debug_assertions)]
    fn a_slot_left_unwritten_is_an_error_in_checked_builds() {
        let bytes = BytesOf::<u32>::if_same::<u32>();
        assert!(bytes.is_some());
        let missed = fresh::<u32>(4, &[4], bytes, |slots, _| {
            slots[..3].iter_mut().for_each(|s| _ = s.write(7));
        });
        assert_eq!(missed, Err(MemError::Unwritten));
        let poison = u32::from_ne_bytes([POISON[0]; 4]);
        let written = fresh::<u32>(3, &[3], bytes, |slots, _| {
            slots.iter_mut().for_each(|s| _ = s.write(poison));
        });
        assert_eq!(written.unwrap(), [poison; 3]);
        // Elements that may own memory hold their default where a copy missed one.
        let strings = fresh::<String>(2, &[2], None, |slots, _| _ = slots[0].write("a".into()));
        assert_eq!(strings.unwrap(), ["a", ""]);
    }

    #[test]
    fn huge_page_vec_reports_impossible_sizes() {
        let err = huge_page_vec::<u64>(usize::MAX / 4).unwrap_err();
        assert!(
            matches!(err, MemError::TooLarge { what: "table", .. }),
            "{err:?}"
        );
        let err = huge_page_vec::<u8>(isize::MAX as usize).unwrap_err();
        assert!(matches!(err, MemError::OutOfMemory { .. }), "{err:?}");
    }
}
