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
/// prefetching keeps more of them in flight; past 128 lines nothing changed
/// (figures: BENCHMARKS.md, "Measurements behind the code").
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

/// Pairs of neighbouring positions sampled to tell reads in order from random ones.
const ORDER_SAMPLES: usize = 32;

/// Tables of at most this many bytes are read without prefetching: they stay in the cache
/// between calls (4 MiB is within the last-level cache of current x86 and ARM server and
/// desktop parts), where a prefetch only adds work (figures: BENCHMARKS.md, "Measurements
/// behind the code"). The unit tests lower it, so that their small tables take the
/// prefetching loops.
const CACHED_TABLE_MAX_BYTES: usize = if cfg!(test) { 4 << 10 } else { 4 << 20 };

/// Whether a table of `table_bytes` stays in the cache between calls
/// ([`CACHED_TABLE_MAX_BYTES`]).
pub(crate) fn stays_in_cache(table_bytes: usize) -> bool {
    table_bytes <= CACHED_TABLE_MAX_BYTES
}

/// How a copy's reads fall, which decides whether they are prefetched ([`Reads::ahead`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reads {
    /// From a table that stays in the cache ([`CACHED_TABLE_MAX_BYTES`]).
    Cached,
    /// In order: most sampled neighbours within a page of each other.
    InOrder,
    /// Few small reads from each params row ([`reads_sparse_in_rows`]): each a miss of its
    /// own.
    Sparse,
    /// Anywhere in a table larger than the cache.
    Random,
}

impl Reads {
    /// The reads of a copy of `len` slices of `slice_bytes` each, the `k`-th at `position(k)`
    /// (in slices), from a table of `table_bytes`, read row by row where `rows` gives (the
    /// bytes of each params row, the reads from each).
    pub(crate) fn of(
        table_bytes: usize,
        slice_bytes: usize,
        rows: Option<(usize, usize)>,
        len: usize,
        position: impl Fn(usize) -> i128,
    ) -> Reads {
        if stays_in_cache(table_bytes) {
            Reads::Cached
        } else if reads_in_order(slice_bytes, len, position) {
            Reads::InOrder
        } else if rows.is_some_and(|(row_bytes, per_row)| {
            reads_sparse_in_rows(slice_bytes, row_bytes, per_row)
        }) {
            Reads::Sparse
        } else {
            Reads::Random
        }
    }

    /// How many slices of `slice_bytes` each to prefetch ahead of the copy: none from a
    /// table that stays in the cache, none where each row gives few small reads
    /// ([`reads_sparse_in_rows`]), and none where the reads go in order (as sorted indices
    /// are), which the hardware's own prefetcher follows and where a prefetch only adds work.
    /// Random reads from larger tables keep it
    /// (figures: BENCHMARKS.md, "Measurements behind the code").
    pub(crate) fn ahead(self, slice_bytes: usize) -> usize {
        match self {
            Reads::Random => prefetch_distance(slice_bytes),
            Reads::Cached | Reads::InOrder | Reads::Sparse => 0,
        }
    }
}

/// Whether a copy reads too few slices from each params row for a prefetch to pay: slices
/// of at most half a cache line, at most one read for every two lines of the row (of
/// `row_bytes`, `per_row` reads). Such reads are each a miss of their own, and the
/// processor already keeps enough of them in flight (the loop is short and its loads do
/// not depend on each other); asking for them ahead only adds work. Where several reads
/// share each line, the prefetch pays (figures: BENCHMARKS.md, "Measurements behind the code").
fn reads_sparse_in_rows(slice_bytes: usize, row_bytes: usize, per_row: usize) -> bool {
    slice_bytes <= CACHE_LINE / 2 && per_row.saturating_mul(2 * CACHE_LINE) <= row_bytes
}

/// Whether at least 3 in 4 of [`ORDER_SAMPLES`] pairs of neighbouring reads, spread over
/// the `len`, are within a page of each other.
fn reads_in_order(slice_bytes: usize, len: usize, position: impl Fn(usize) -> i128) -> bool {
    const PAGE: i128 = 4096;
    if len < 2 {
        return false;
    }
    let step = ((len - 1) / ORDER_SAMPLES).max(1);
    let (near, sampled) =
        (0..len - 1)
            .step_by(step)
            .take(ORDER_SAMPLES)
            .fold((0, 0), |(near, sampled), k| {
                let gap = (position(k + 1) - position(k)).abs();
                let is_near = gap.saturating_mul(slice_bytes as i128) <= PAGE;
                (near + usize::from(is_near), sampled + 1)
            });
    4 * near >= 3 * sampled
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions in a table of `rows` 4-byte slices, drawn by a small LCG.
    fn random(len: usize, rows: u64) -> Vec<i128> {
        let mut s = 7u64;
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((s >> 33) % rows) as i128
            })
            .collect()
    }

    #[test]
    fn prefetches_random_reads_only() {
        const BIG: usize = 1 << 30;
        let ahead = |positions: &[i128]| {
            Reads::of(BIG, 4, None, positions.len(), |k| positions[k]).ahead(4)
        };
        let rows = 10_000_000u64;
        let mut positions = random(100_000, rows);
        assert_eq!(ahead(&positions), prefetch_distance(4));
        // Sorted, either way, or with runs restarting a few times (batch rows): in order.
        positions.sort_unstable();
        assert_eq!(ahead(&positions), 0);
        positions.reverse();
        assert_eq!(ahead(&positions), 0);
        let mut runs = random(40_000, 1_000_000);
        runs.chunks_mut(10_000).for_each(<[i128]>::sort_unstable);
        assert_eq!(ahead(&runs), 0);
        // Half sorted, half random: not in order. Too few reads to tell: prefetched.
        let mut half = random(100_000, rows);
        half[..50_000].sort_unstable();
        assert_eq!(ahead(&half), 128);
        assert_eq!(ahead(&[5]), 128);
        assert_eq!(ahead(&[]), 128);
        // Neighbours a page apart are near; farther, not (slices of 4 KiB + 1 byte).
        let pages: Vec<i128> = (0..1000).collect();
        assert_eq!(
            Reads::of(BIG, 4096, None, 1000, |k| pages[k]).ahead(4096),
            0
        );
        assert_ne!(
            Reads::of(BIG, 4097, None, 1000, |k| pages[k]).ahead(4097),
            0
        );
    }

    #[test]
    fn sparse_reads_of_small_slices_are_not_prefetched() {
        // batch_topk: 256 reads of 4 bytes in rows of 32 KiB, one read per two lines.
        assert!(reads_sparse_in_rows(4, 32 << 10, 256));
        assert!(!reads_sparse_in_rows(4, 32 << 10, 257));
        // cols: 500 reads in rows of 8,000 bytes, four per line.
        assert!(!reads_sparse_in_rows(4, 8000, 500));
        // A slice of half a line at most; wider slices keep the prefetch however sparse.
        assert!(reads_sparse_in_rows(32, 1 << 20, 1));
        assert!(!reads_sparse_in_rows(33, 1 << 20, 1));
        // No reads, or a count too large to multiply: no overflow.
        assert!(reads_sparse_in_rows(4, 0, 0));
        assert!(!reads_sparse_in_rows(4, usize::MAX - 1, usize::MAX));
        // Random reads from a large table: sparse rows go without, dense rows keep it.
        let positions = random(100_000, 1 << 20);
        let ahead = |rows| Reads::of(1 << 30, 4, rows, positions.len(), |k| positions[k]).ahead(4);
        assert_eq!(ahead(Some((32 << 10, 256))), 0);
        assert_eq!(ahead(Some((8000, 500))), prefetch_distance(4));
        assert_eq!(ahead(None), prefetch_distance(4));
    }

    #[test]
    fn reads_from_a_cached_table_are_not_prefetched() {
        let positions = random(100_000, 10_000_000);
        let ahead = |table_bytes| {
            Reads::of(table_bytes, 4, None, positions.len(), |k| positions[k]).ahead(4)
        };
        assert_eq!(ahead(0), 0);
        assert_eq!(ahead(CACHED_TABLE_MAX_BYTES), 0);
        assert_eq!(ahead(CACHED_TABLE_MAX_BYTES + 1), prefetch_distance(4));
    }
}
