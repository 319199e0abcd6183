//! Streaming (non-temporal) stores, for large outputs whose slices are read from the cache.
//!
//! An ordinary store first reads the output's cache line from memory (to own it), and the
//! line is written back later: twice the output's bytes cross the memory bus. A streaming
//! store writes whole lines without reading them. That pays where the output is far larger
//! than the cache and the reads are cheap: slices from a table that stays in the cache (a
//! small vocabulary, or a batched gather from a small table per batch element). Where the
//! output fits the cache, or the reads come from memory, ordinary stores were as fast or
//! faster.
//!
//! So streaming is chosen only for outputs of at least twice that cache, slices of at least a
//! cache line, and tables that stay in the cache ([`stays_in_cache`]); and not on new pages
//! ([`Streaming::for_copy`]) (figures: BENCHMARKS.md, "Measurements behind the code").

use crate::engine::simd::prefetch::stays_in_cache;
use crate::mem::output::{Pages, Slot};
use std::marker::PhantomData;

/// Outputs of at least this many bytes are streamed: twice a large last-level cache, so that
/// an output that would stay in the cache is not pushed past it. The unit tests lower it, so that their outputs take the streaming path.
pub(crate) const STREAM_MIN_OUTPUT_BYTES: usize = if cfg!(test) { 64 << 10 } else { 64 << 20 };
/// Slices of at least a cache line are streamed.
const STREAM_MIN_SLICE_BYTES: usize = 64;

/// Leave to copy slices of `T` with streaming stores. Made only by [`Streaming::for_copy`],
/// and only where `T` is a fixed-width type of the dtype table (whose bytes are its value) on
/// a target with the instructions: holding one is the proof [`Streaming::put_slice`] relies
/// on.
pub(crate) struct Streaming<T>(PhantomData<fn(&T)>);

// Copied whatever `T` is (a derive would ask `T: Copy`).
impl<T> Clone for Streaming<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Streaming<T> {}

impl<T: 'static> Streaming<T> {
    /// Leave to stream a copy of slices of `slice_bytes` from a table of `table_bytes` (the
    /// part of params that the slices are read from: a row, or a batch element's table) into
    /// an output of `output_bytes` on `pages`, where streaming pays; else `None`. Not on new
    /// pages: the OS zeroes each as it is first written, which leaves its lines in the cache,
    /// and a streaming store must first evict the line it writes (figures: BENCHMARKS.md,
    /// "Measurements behind the code").
    pub(crate) fn for_copy(
        (output_bytes, pages): (usize, Pages),
        table_bytes: usize,
        slice_bytes: usize,
    ) -> Option<Streaming<T>> {
        let pays = pages == Pages::Used
            && output_bytes >= STREAM_MIN_OUTPUT_BYTES
            && slice_bytes >= STREAM_MIN_SLICE_BYTES
            && stays_in_cache(table_bytes);
        (cfg!(target_arch = "x86_64") && pays && crate::types::dtype::is_fixed_width::<T>())
            .then_some(Streaming(PhantomData))
    }
}

impl<T> Streaming<T> {
    /// Stores copies of `src` in `dst` (as long): the 16-byte-aligned middle with streaming
    /// stores, the bytes before and after it with ordinary ones. The stores are seen by other
    /// threads only after a fence ([`Streaming::fence_on_drop`]).
    #[inline(always)]
    pub(crate) fn put_slice<O: Slot<T>>(self, dst: &mut [O], src: &[T]) {
        assert_eq!(dst.len(), src.len(), "a slice copy fills its slots");
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
            const {
                assert!(std::mem::size_of::<O>() == std::mem::size_of::<T>());
                assert!(std::mem::align_of::<O>() == std::mem::align_of::<T>());
            }
            let len = std::mem::size_of_val(src);
            let from = src.as_ptr().cast::<u8>();
            let to = dst.as_mut_ptr().cast::<u8>();
            let head = to.align_offset(16).min(len);
            let end = head + (len - head) / 16 * 16;
            // SAFETY:
            // - Bounds: `src` and `dst` have the same length (asserted above) of types of the
            //   same size (the `const` assertion), so both span `len` bytes, and they do not
            //   overlap (`dst` is a unique borrow). `head <= end <= len`, so every access
            //   below is within them: bytes `..head`, 16-byte blocks `head..end`, `end..len`.
            // - Alignment: `to + head` is 16-byte aligned (`align_offset`; where it is not,
            //   `head == len` and there is no block), and blocks follow in steps of 16, as
            //   `_mm_stream_si128` requires; `_mm_loadu_si128` takes any address. SSE2 is part
            //   of every x86_64 target.
            // - Values: a `Streaming<T>` exists only for a fixed-width type of the dtype table
            //   (`for_copy`, the one constructor, checks `is_fixed_width`): `Copy`, no padding,
            //   no destructor, so its bytes copied are its value copied, and overwriting one
            //   in `dst` needs no drop. `O` is `T` or `MaybeUninit<T>` (`Slot`'s two
            //   implementations, same size and alignment as `T`), so each slot of `dst` ends
            //   holding a valid `T` once all its bytes are written, as they all are.
            // - Ordering: the streamed bytes reach other threads only after `_mm_sfence`,
            //   which the callers issue before their task ends (`fence_on_drop`).
            unsafe {
                std::ptr::copy_nonoverlapping(from, to, head);
                let mut at = head;
                while at < end {
                    let block = _mm_loadu_si128(from.add(at).cast::<__m128i>());
                    _mm_stream_si128(to.add(at).cast::<__m128i>(), block);
                    at += 16;
                }
                std::ptr::copy_nonoverlapping(from.add(end), to.add(end), len - end);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        O::put_slice(dst, src);
    }

    /// A guard that orders this thread's streaming stores before its later stores when it is
    /// dropped (at the end of a task's copy, even one that unwinds), so that the thread that
    /// joins the task sees them.
    pub(crate) fn fence_on_drop(self) -> StreamFence {
        StreamFence(())
    }
}

/// See [`Streaming::fence_on_drop`].
pub(crate) struct StreamFence(());

impl Drop for StreamFence {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `sfence` only orders stores; SSE is part of every x86_64 target.
        unsafe {
            std::arch::x86_64::_mm_sfence();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    #[test]
    fn streaming_is_chosen_only_where_it_pays() {
        let yes = |out, table, slice| {
            Streaming::<f32>::for_copy((out, Pages::Used), table, slice).is_some()
        };
        let (out, table, slice) = (STREAM_MIN_OUTPUT_BYTES, 4 << 10, 64);
        assert_eq!(yes(out, table, slice), cfg!(target_arch = "x86_64"));
        let new = Streaming::<f32>::for_copy((out, Pages::New), table, slice);
        assert!(new.is_none(), "new pages");
        assert!(!yes(out - 1, table, slice), "an output that fits the cache");
        assert!(
            !yes(out, table + 1, slice),
            "a table that does not stay in the cache"
        );
        assert!(!yes(out, table, slice - 1), "slices of less than a line");
        assert!(!yes(usize::MAX, usize::MAX, usize::MAX));
        // Only the dtype table's fixed-width types: never a type with owned memory.
        let used = (out, Pages::Used);
        assert!(Streaming::<String>::for_copy(used, table, slice).is_none());
        assert!(Streaming::<Vec<u8>>::for_copy(used, table, slice).is_none());
        assert!(Streaming::<[f32; 4]>::for_copy(used, table, slice).is_none());
    }

    /// Every alignment of the destination (16 bytes apart and less) and lengths around the
    /// 16-byte blocks, into a fresh buffer and into a caller's; the bytes around the copy are
    /// untouched.
    #[test]
    fn put_slice_copies_at_every_alignment_and_length() {
        let Some(stream) = Streaming::<u8>::for_copy((usize::MAX, Pages::Used), 0, 64) else {
            return;
        };
        let src: Vec<u8> = (0..200u8).map(|b| b.wrapping_mul(37)).collect();
        for skew in 0..32 {
            for len in (0..70).chain([127, 128, 129, 200 - 32]) {
                let mut buf = vec![0xAAu8; 256];
                stream.put_slice(&mut buf[skew..skew + len], &src[..len]);
                let mut fresh = vec![MaybeUninit::new(0xAAu8); 256];
                stream.put_slice(&mut fresh[skew..skew + len], &src[..len]);
                drop(stream.fence_on_drop());
                // SAFETY (test): every byte was initialised above.
                #[allow(unsafe_code)]
                let fresh: Vec<u8> = fresh.iter().map(|b| unsafe { b.assume_init() }).collect();
                for out in [&buf, &fresh] {
                    assert_eq!(&out[skew..skew + len], &src[..len], "skew {skew} len {len}");
                    assert!(
                        out[..skew].iter().all(|&b| b == 0xAA),
                        "before, skew {skew}"
                    );
                    assert!(
                        out[skew + len..].iter().all(|&b| b == 0xAA),
                        "after, len {len}"
                    );
                }
            }
        }
        // Wider elements: f64 at each 8-byte skew of a 16-byte line.
        let stream = Streaming::<f64>::for_copy((usize::MAX, Pages::Used), 0, 64).unwrap();
        let src: Vec<f64> = (0..40).map(|k| k as f64 * 1.5 - 3.0).collect();
        for skew in 0..4 {
            let mut out = vec![f64::NAN; 48];
            stream.put_slice(&mut out[skew..skew + 37], &src[..37]);
            drop(stream.fence_on_drop());
            assert_eq!(&out[skew..skew + 37], &src[..37]);
        }
    }
}
