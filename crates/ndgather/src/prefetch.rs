//! A hint to bring a value's cache line in ahead of use.

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
