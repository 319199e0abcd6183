//! One-element gathers by the processor's gather instruction (AVX-512 `vpgatherdd`: 16 reads
//! of 4 bytes at 16 offsets in one instruction), for 4-byte elements at 32-bit indices.
//!
//! Where each read is a cache miss and nothing is prefetched (few reads per params row, as a
//! top-k per row makes), the loop of single loads keeps fewer reads in flight than the
//! gather instruction does, and LLVM emits no gather instruction for the loop itself
//! (figures: BENCHMARKS.md, "Measurements behind the code").

use crate::engine::simd::prefetch::Reads;
use crate::mem::output::Slot;
use std::any::TypeId;
use std::marker::PhantomData;

/// Tables of at least this many bytes are read by the gather instruction: from a table in
/// the cache, single loads were faster. The unit tests lower it, so that their tables take
/// this path.
const MIN_TABLE_BYTES: usize = if cfg!(test) { 8 << 10 } else { 64 << 20 };

/// Leave to copy one-element slices of `T` at indices of type `I` with the gather
/// instruction. Made only by [`VectorGather::for_copy`], and only where `T` is a 4-byte
/// fixed-width type of the dtype table (whose bytes are its value), `I` is `i32`, and the
/// machine has AVX-512: holding one is the proof [`VectorGather::copy_in_range`] relies on.
pub(crate) struct VectorGather<T, I>(PhantomData<fn(&T, &I)>);

// Copied whatever `T` and `I` are (a derive would ask them to be `Copy`).
impl<T, I> Clone for VectorGather<T, I> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, I> Copy for VectorGather<T, I> {}

impl<T: 'static, I: 'static> VectorGather<T, I> {
    /// Leave to gather slices of `slice_len` elements of `T` at `I` indices, read as `reads`
    /// from a table of `table_bytes`, by the instruction, where it pays: one-element slices
    /// read sparsely from a table of at least [`MIN_TABLE_BYTES`] (each read a miss, none
    /// prefetched; reads in order and tables in the cache ran slower by the instruction:
    /// BENCHMARKS.md, "Measurements behind the code"). Only where the types fit it and the machine has it (detected at run
    /// time; the standard library caches the answer).
    pub(crate) fn for_copy(reads: Reads, table_bytes: usize, slice_len: usize) -> Option<Self> {
        let pays = slice_len == 1 && reads == Reads::Sparse && table_bytes >= MIN_TABLE_BYTES;
        #[cfg(target_arch = "x86_64")]
        if pays && fits::<T, I>() && std::arch::is_x86_feature_detected!("avx512f") {
            return Some(VectorGather(PhantomData));
        }
        _ = pays;
        None
    }
}

/// Whether `T` is a 4-byte fixed-width type and `I` is `i32`.
fn fits<T: 'static, I: 'static>() -> bool {
    std::mem::size_of::<T>() == 4
        && crate::types::dtype::is_fixed_width::<T>()
        && TypeId::of::<I>() == TypeId::of::<i32>()
}

impl<T: Clone + Default + 'static, I: 'static> VectorGather<T, I> {
    /// Copies `row[idx[k]]` into `dst[k]` from `k = 0`, 16 at a time, while each block of 16
    /// indices lies wholly within `row`; stops at the first block that does not, or that is
    /// shorter than 16. Returns how many it copied (a multiple of 16): the caller copies the
    /// rest, where an index outside `row` is resolved under its policy.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) fn copy_in_range<O: Slot<T>>(self, row: &[T], idx: &[I], dst: &mut [O]) -> usize {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `copy_blocks` needs AVX-512F; a `VectorGather` exists only where
        // `for_copy` detected it on this machine.
        return unsafe { copy_blocks(row, idx, dst) };
        #[cfg(not(target_arch = "x86_64"))]
        {
            _ = (row, idx, dst);
            0
        }
    }
}

/// [`VectorGather::copy_in_range`]'s loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(unsafe_code)]
fn copy_blocks<T: Clone + Default + 'static, I: 'static, O: Slot<T>>(
    row: &[T],
    idx: &[I],
    dst: &mut [O],
) -> usize {
    use std::arch::x86_64::{_mm512_cmplt_epu32_mask, _mm512_i32gather_epi32};
    use std::arch::x86_64::{_mm512_loadu_si512, _mm512_set1_epi32, _mm512_storeu_si512};
    // What the reads and writes below rely on, checked where they are (the constructor
    // checked it too; the compiler folds these comparisons of constants).
    assert!(
        fits::<T, I>(),
        "a vector gather of 4-byte elements at i32 indices"
    );
    // SAFETY: `I` is `i32` (asserted above), so `idx`'s memory holds `idx.len()` `i32`s.
    let idx: &[i32] = unsafe { std::slice::from_raw_parts(idx.as_ptr().cast(), idx.len()) };
    // An index is in range if, read as unsigned, it is below this: a negative one reads as at
    // least 2^31, and no `i32` reaches a position past `i32::MAX`.
    let bound = _mm512_set1_epi32(row.len().min(i32::MAX as usize) as i32);
    let blocks = idx.len().min(dst.len()) / 16;
    let (idx, _) = idx[..blocks * 16].as_chunks::<16>();
    let (out, _) = dst[..blocks * 16].as_chunks_mut::<16>();
    let mut done = 0;
    for (block, out) in idx.iter().zip(out) {
        // SAFETY: `block` is 16 `i32`s, 64 readable bytes; the load takes any alignment.
        let at = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        if _mm512_cmplt_epu32_mask(at, bound) != u16::MAX {
            break;
        }
        // SAFETY: every lane of `at` is in `0..row.len()` (the comparison above, every bit of
        // its mask set), so each of the 16 reads, 4 bytes at `row`'s start plus 4 × the lane,
        // is one element of `row` (4 bytes each, asserted above), inside the slice.
        let values = unsafe { _mm512_i32gather_epi32::<4>(at, row.as_ptr().cast()) };
        let mut copies: [T; 16] = std::array::from_fn(|_| T::default());
        // SAFETY: `copies` is 16 elements of 4 bytes, 64 writable bytes; the store takes any
        // alignment. The bytes written are those of 16 elements of `row`, and `T` is a
        // fixed-width type of the dtype table (asserted above): `Copy`, no padding, no
        // destructor, its bytes its value. So each element of `copies` now holds a copy of an
        // element of `row`, and the values overwritten needed no drop.
        unsafe { _mm512_storeu_si512(copies.as_mut_ptr().cast(), values) };
        O::put_array(out, &copies);
        done += 16;
    }
    done
}
