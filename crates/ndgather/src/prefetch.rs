//! Hints to bring cache lines in ahead of use, and how far ahead the copy loops ask.

/// Asks the CPU to start loading the cache line holding `value` (no effect where the target
/// has no prefetch instruction).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `value` is a valid reference, and a prefetch only hints the cache: it reads
    // nothing into the program, cannot fault, and has no other effect.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Cache lines requested ahead of the copy: random reads are bound by memory latency, and
/// prefetching keeps more of them in flight. Measured on the suite (`ndgather bench`, this
/// machine): 24 scalars ahead gave `elems_1d` 35 ms and 128 gave 18 ms; `rows_small` (16-byte
/// slices) went from 12 ms at 6 slices ahead to 3–5 ms at 128; beyond 128 lines nothing
/// changed.
const PREFETCH_LINES: usize = 128;
/// Cache lines requested of each slice (its first KiB).
const PREFETCH_LINES_PER_SLICE: usize = 16;
const CACHE_LINE: usize = 64;

/// How many slices of `slice_bytes` each to prefetch ahead of the copy.
pub(crate) fn prefetch_distance(slice_bytes: usize) -> usize {
    PREFETCH_LINES
        / slice_bytes
            .div_ceil(CACHE_LINE)
            .clamp(1, PREFETCH_LINES_PER_SLICE)
}

/// Requests the cache lines of `slice` (up to [`PREFETCH_LINES_PER_SLICE`] of them).
#[inline(always)]
pub(crate) fn prefetch_slice<T>(slice: &[T]) {
    let step = (CACHE_LINE / std::mem::size_of::<T>().max(1)).max(1);
    slice
        .iter()
        .step_by(step)
        .take(PREFETCH_LINES_PER_SLICE)
        .for_each(prefetch);
}
