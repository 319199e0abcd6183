//! The copy kernels: one cheap pass that checks every index, then loops that copy contiguous
//! slices of params into the output. They see only flat row-major slices and a validated plan;
//! shapes and options were dealt with before.
//!
//! The loops default-fill the slots of an index their policy resolves to no slice, and say
//! whether they met one, so that a fresh output skips the check pass before its copy
//! (`output::fresh_checked`). A caller's buffer must stay unchanged on error, so its calls
//! check first.
//!
//! Large outputs copied from a table that stays in the cache are written with streaming
//! stores ([`crate::engine::simd::stream`]).
//!
//! Both passes run on the calling thread for small calls and on rayon's pool above
//! [`PARALLEL_MIN_BYTES`], splitting the output into chunks of about [`CHUNK_BYTES`]. Each
//! chunk is written by one task, so the result does not depend on the number of threads, and
//! the index check reports the first bad index in row-major order whatever the threading.

use crate::engine::simd::prefetch::{prefetch, prefetch_slice, Reads};
use crate::engine::simd::stream::Streaming;
use crate::engine::simd::vector_gather::VectorGather;
use crate::mem::output::{Pages, Slot};
use crate::shape::plan::{unravel, GatherPlan};
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Work (bytes moved) below which a call stays on the calling thread.
pub(crate) const PARALLEL_MIN_BYTES: usize = 1 << 18;
/// Bytes moved per parallel task, about.
pub(crate) const CHUNK_BYTES: usize = 1 << 16;
/// Index vectors below which the index check stays on the calling thread, where its
/// parallel fork and join cost more than the check: [`check_in_parallel`].
const PARALLEL_MIN_INDICES: usize = 1 << 16;
/// [`PARALLEL_MIN_INDICES`] for vectors of 4 bytes or fewer (one 32-bit index, or
/// narrower): SSE2, the baseline x86-64 target, compares four 32-bit indices in one
/// instruction and has no 64-bit comparison, so a wider vector costs more to check.
const PARALLEL_MIN_NARROW_INDICES: usize = 3 << 16;
/// Whether a call that writes `out_bytes` bytes and reads `indices` index vectors may
/// split its copy or its index check across threads: the rule of [`for_chunks`] and
/// [`check_in_parallel`], for callers that run small calls on their own thread.
pub(crate) fn may_split(out_bytes: usize, indices: usize) -> bool {
    out_bytes >= PARALLEL_MIN_BYTES
        || indices >= PARALLEL_MIN_INDICES.min(PARALLEL_MIN_NARROW_INDICES)
}
/// Indices per block of the index check.
const CHECK_BLOCK: usize = 1 << 14;
/// `match width`: for each slice width with a copy loop of its own (2, 3, 4, 8, 16 and 32
/// elements: each slice a fixed-size move), `$fixed` with the width as the constant `$n`;
/// else `$other`. The one list of those widths, for gather and gather_nd.
macro_rules! by_slice_width {
    ($width:expr, |$n:ident| $fixed:expr, $other:expr) => {
        by_slice_width!(@match $width, $n, $fixed, $other, [2, 3, 4, 8, 16, 32])
    };
    (@match $width:expr, $n:ident, $fixed:expr, $other:expr, [$($w:literal),*]) => {
        match $width {
            $($w => {
                const $n: usize = $w;
                $fixed
            })*
            _ => $other,
        }
    };
}

/// Compiles a function once for each of the x86-64 vector extensions below and once for the
/// baseline target (SSE2), and calls the widest the machine has (detected at run time, once).
/// `multiversion` adds to any AVX-512 target the rest of the set that Ice Lake and Zen 4 have
/// (VBMI, VNNI, GFNI and others) and detects them all, so that older AVX-512 processors,
/// which slow their clock for it, run the AVX2 clone.
/// For the loops of arithmetic and comparisons over every index, which the compiler
/// vectorises: SSE2 has no 64-bit multiply or comparison, and handles four 32-bit lanes at a
/// time (figures: BENCHMARKS.md, "Measurements behind the code").
macro_rules! with_widest_vectors {
    ($item:item) => {
        #[multiversion::multiversion(targets(
            "x86_64+avx512f+avx512dq+avx512vl+avx512bw",
            "x86_64+avx2+fma"
        ))]
        $item
    };
}

/// Runs `f(first_item, chunk)` over `out`, split into chunks of whole items (`item_len`
/// slots each): on the calling thread for small work, else in parallel.
pub(crate) fn for_chunks<O: Send>(
    out: &mut [O],
    item_len: usize,
    item_bytes: usize,
    f: impl Fn(usize, &mut [O]) + Sync,
) {
    for_chunks_of(out, item_len, item_bytes, &f);
}

/// [`for_chunks`] on a `dyn` closure: the parallel split is compiled once per slot type, not
/// once per copy loop (a call through a pointer per chunk of [`CHUNK_BYTES`]).
fn for_chunks_of<O: Send>(
    out: &mut [O],
    item_len: usize,
    item_bytes: usize,
    f: &(dyn Fn(usize, &mut [O]) + Sync),
) {
    if out.is_empty() || item_len == 0 {
        return;
    }
    let items = out.len() / item_len;
    let item_bytes = item_bytes.max(1);
    if items.saturating_mul(item_bytes) < PARALLEL_MIN_BYTES || rayon::current_num_threads() < 2 {
        f(0, out);
        return;
    }
    let per_chunk = (CHUNK_BYTES / item_bytes).max(1);
    out.par_chunks_mut(per_chunk * item_len)
        .enumerate()
        .for_each(|(c, chunk)| f(c * per_chunk, chunk));
}

/// [`for_chunks`] for an `f` that returns whether its chunk met an unresolved index (one its
/// policy resolved to no slice, so that its slots were default-filled); returns whether any
/// chunk did.
pub(crate) fn for_chunks_any<O: Send>(
    out: &mut [O],
    item_len: usize,
    item_bytes: usize,
    f: impl Fn(usize, &mut [O]) -> bool + Sync,
) -> bool {
    let unresolved = AtomicBool::new(false);
    for_chunks(out, item_len, item_bytes, |first, chunk| {
        if f(first, chunk) {
            unresolved.store(true, Ordering::Relaxed);
        }
    });
    unresolved.into_inner()
}

/// The position of the first element for which `bad` holds. Blocks are tested branch-free
/// (in parallel for long inputs); only the first block with a bad element is searched.
pub(crate) fn first_bad<X: Sync>(
    xs: &[X],
    bad: impl Fn(&X) -> bool + Sync + Send,
) -> Option<usize> {
    let block_has_bad = |block: &[X]| any_bad(block, &bad);
    let parallel = check_in_parallel(xs.len(), std::mem::size_of::<X>());
    let block = if !parallel || rayon::current_num_threads() < 2 {
        xs.chunks(CHECK_BLOCK).position(block_has_bad)
    } else {
        first_bad_block(xs, &block_has_bad)
    }?;
    let start = block * CHECK_BLOCK;
    xs[start..].iter().position(bad).map(|k| start + k)
}

/// The first block of [`CHECK_BLOCK`] elements for which `has_bad` holds, the blocks tested
/// in parallel; on a `dyn` test, so that the parallel part is compiled once per element type.
fn first_bad_block<X: Sync>(xs: &[X], has_bad: &(dyn Fn(&[X]) -> bool + Sync)) -> Option<usize> {
    let flags: Vec<bool> = xs.par_chunks(CHECK_BLOCK).map(has_bad).collect();
    flags.iter().position(|&f| f)
}

with_widest_vectors! {
    /// Whether `bad` holds for an element of `block`, tested branch-free.
    fn any_bad<X>(block: &[X], bad: &impl Fn(&X) -> bool) -> bool {
        any_bad_loop(block, bad)
    }
}

/// The loop of [`any_bad`], compiled into each of its clones (and by the tests for each of
/// `with_widest_vectors!`'s targets).
#[inline(always)]
fn any_bad_loop<X>(block: &[X], bad: &impl Fn(&X) -> bool) -> bool {
    block.iter().fold(false, |acc, x| acc | bad(x))
}

/// Whether the check of `len` index vectors of `vector_bytes` each is split across threads.
/// Split where that paid against the check on the calling thread (figures: BENCHMARKS.md,
/// "Measurements behind the code").
fn check_in_parallel(len: usize, vector_bytes: usize) -> bool {
    let min = if vector_bytes <= 4 {
        PARALLEL_MIN_NARROW_INDICES
    } else {
        PARALLEL_MIN_INDICES
    };
    len >= min
}

/// Finds the first bad index in row-major order, if the policy makes it an error.
pub(crate) fn check_gather<I: IndexType>(
    indices: &[I],
    plan: &GatherPlan,
    policy: BadIndices,
) -> Result<()> {
    if !plan.validate || !policy.errors() {
        return Ok(());
    }
    let gathered = plan.gathered;
    match first_bad_vector(indices, &[gathered], policy) {
        None => Ok(()),
        Some(k) => Err(Error::BadIndex {
            position: unravel(k, &plan.indices_shape),
            value: indices[k].to_i128(),
            limit: gathered,
        }),
    }
}

/// Copies the gathered slices, `[batch, outer, n, inner]` in row-major order, into `out`
/// (exactly `plan.out_len` slots, every one of which is written; on `pages`, which decide,
/// with the sizes, whether streaming stores pay: [`crate::engine::simd::stream`]). Returns whether an index
/// resolved to no slice under `policy` (its slots default-filled): under a policy that
/// [`errors`](BadIndices::errors), a bad index that [`check_gather`] names, so that a fresh
/// output needs no check pass before the copy.
#[must_use = "an unresolved index is an error under an erroring policy"]
pub(crate) fn gather<T, I, O>(
    params: &[T],
    indices: &[I],
    plan: &GatherPlan,
    policy: BadIndices,
    out: &mut [O],
    pages: Pages,
) -> bool
where
    T: Clone + Default + Sync + 'static,
    I: IndexType,
    O: Slot<T>,
{
    let (inner, gathered, outer, n) = (plan.inner, plan.gathered, plan.outer, plan.n);
    // Saturating: these sizes only steer prefetch and streaming, and an empty params can
    // claim an `inner` whose bytes overflow (a fuzzed panic).
    let slice_bytes = inner.saturating_mul(std::mem::size_of::<T>());
    let item_bytes = slice_bytes.saturating_add(std::mem::size_of::<I>());
    let table_bytes = std::mem::size_of_val(params);
    // Each run reads `n` slices from one params row of `gathered` slices.
    let row_bytes = gathered.saturating_mul(slice_bytes);
    let reads = Reads::of(
        table_bytes,
        slice_bytes,
        Some((row_bytes, n)),
        indices.len(),
        |k| indices[k].to_i128(),
    );
    let ahead = reads.ahead(slice_bytes);
    let stream = Streaming::for_copy((std::mem::size_of_val(out), pages), row_bytes, slice_bytes);
    let vector = VectorGather::for_copy(reads, table_bytes, inner);
    // The params row and the indices of `len` slices from position `j` of row `(b, o)`.
    let run_at = |b: usize, o: usize, j: usize, len: usize| {
        let base = (b * outer + o) * gathered;
        (
            &params[base * inner..(base + gathered) * inner],
            &indices[b * n + j..b * n + j + len],
        )
    };
    for_chunks_any(out, inner, item_bytes, |first, chunk| {
        let _fence = stream.map(Streaming::fence_on_drop);
        let items = chunk.len() / inner;
        let mut unresolved = false;
        // Where the chunk starts in [batch, outer, n]; then counters, not divisions.
        let (mut j, rest) = (first % n, first / n);
        let (mut o, mut b) = (rest % outer, rest / outer);
        let mut k = 0;
        // Slices of the current run already asked for by the end of the previous one.
        let mut asked = 0;
        while k < items {
            let run = (n - j).min(items - k);
            let (row, idx) = run_at(b, o, j, run);
            // A run that does not end the chunk ends its params row: the next run starts
            // the next row, and the end of this run asks for that run's first slices, so
            // the reads in flight do not drain at each row's end.
            let next_len = n.min(items - k - run);
            let (next_b, next_o) = if o + 1 == outer {
                (b + 1, 0)
            } else {
                (b, o + 1)
            };
            let (next_row, next_idx) = match next_len {
                0 => (&params[..0], &indices[..0]),
                len => run_at(next_b, next_o, 0, len),
            };
            let ctx = SliceCopy {
                row,
                idx,
                next_row,
                next_idx,
                gathered,
                ahead,
                split: run.saturating_sub(ahead),
                policy,
            };
            // The first slices of the run, less those the previous run asked for.
            for at in asked.min(run)..ahead.min(run) {
                ctx.ask(row, idx, at, inner);
            }
            let dst = &mut chunk[k * inner..(k + run) * inner];
            unresolved |= match (stream, inner) {
                (Some(stream), _) => ctx.run_streamed(dst, inner, stream),
                (None, 1) => match vector {
                    Some(vector) => ctx.run_vector(vector, dst),
                    None => ctx.run_scalar(dst),
                },
                (None, _) => {
                    by_slice_width!(inner, |N| ctx.run::<N, O>(dst), ctx.run_dyn(dst, inner))
                }
            };
            asked = (run - ctx.split).min(next_len);
            k += run;
            j += run;
            if j == n {
                (j, o, b) = (0, next_o, next_b);
            }
        }
        unresolved
    })
}

/// Copies one run of slices (one `(batch, outer)` row of params, several indices), asking
/// for the slices `ahead` of the copy: of its own indices up to `split`, then of the next
/// run's. Each copy returns whether an index resolved to no slice.
struct SliceCopy<'a, T, I> {
    row: &'a [T],
    idx: &'a [I],
    next_row: &'a [T],
    next_idx: &'a [I],
    gathered: usize,
    ahead: usize,
    split: usize,
    policy: BadIndices,
}

impl<T: Clone + Default + Sync + 'static, I: IndexType> SliceCopy<'_, T, I> {
    /// Requests the cache lines of the slice of `row` at `idx[at]`, if there and good.
    #[inline(always)]
    fn ask(&self, row: &[T], idx: &[I], at: usize, inner: usize) {
        if let Some(g) = idx.get(at).and_then(|&a| a.checked_index(self.gathered)) {
            match inner {
                1 => prefetch(&row[g]),
                _ => prefetch_slice(&row[g * inner..(g + 1) * inner]),
            }
        }
    }

    /// Copies the slice at index `i` into `d` with `put`; sets `unresolved` if `i` resolves
    /// to no slice (set in that branch alone, so that the loop of good indices never touches
    /// it).
    #[inline(always)]
    fn copy<O: Slot<T>>(
        &self,
        (d, i): (&mut [O], I),
        inner: usize,
        unresolved: &mut bool,
        put: &impl Fn(&mut [O], &[T]),
    ) {
        match self.policy.resolve(i, self.gathered) {
            Some(g) => put(d, &self.row[g * inner..(g + 1) * inner]),
            None => {
                *unresolved = true;
                d.iter_mut().for_each(Slot::put_default);
            }
        }
    }

    /// Slices of one element, each stored as a value: a slice copy of one element costs more
    /// than the store (figures: BENCHMARKS.md, "Measurements behind the code").
    #[inline(never)]
    fn run_scalar<O: Slot<T>>(&self, dst: &mut [O]) -> bool {
        let (own, last) = dst.split_at_mut(self.split);
        let mut unresolved = false;
        self.each_slice(own.iter_mut(), last.iter_mut(), 1, |d, i| {
            match self.policy.resolve(i, self.gathered) {
                Some(g) => d.put(&self.row[g]),
                None => {
                    unresolved = true;
                    d.put_default();
                }
            }
        });
        unresolved
    }

    /// Slices of one element, read sparsely (nothing asked for ahead, so `split` is the whole
    /// run): the gather instruction copies the run's first blocks of good indices,
    /// [`Self::run_scalar`] the rest.
    #[inline(never)]
    fn run_vector<O: Slot<T>>(&self, vector: VectorGather<T, I>, dst: &mut [O]) -> bool {
        let done = vector.copy_in_range(self.row, self.idx, dst);
        let rest = SliceCopy {
            idx: &self.idx[done..],
            split: self.split - done,
            ..*self
        };
        rest.run_scalar(&mut dst[done..])
    }

    /// Slices of a length known at compile time: the copy becomes a few moves. Not inlined
    /// into the caller, so that the loop keeps its values in registers.
    #[inline(never)]
    fn run<const N: usize, O: Slot<T>>(&self, dst: &mut [O]) -> bool {
        // The params row and the output as arrays of N: one bounds check and one move per
        // slice. This loop repeats `copy_slices`' shape on purpose: a range of the row and a
        // chunk of the output per slice kept the iterator's state on the stack, and routing
        // `copy` through a closure for the slice moved the code so that it ran slower
        // (figures: BENCHMARKS.md, "Measurements behind the code").
        let (rows, _) = self.row.as_chunks::<N>();
        let (own, last) = dst.split_at_mut(self.split * N);
        let mut unresolved = false;
        self.each_slice(
            own.as_chunks_mut::<N>().0.iter_mut(),
            last.as_chunks_mut::<N>().0.iter_mut(),
            N,
            |d, i| match self.policy.resolve(i, self.gathered) {
                Some(g) => O::put_array(d, &rows[g]),
                None => {
                    unresolved = true;
                    d.iter_mut().for_each(Slot::put_default);
                }
            },
        );
        unresolved
    }

    #[inline(never)]
    fn run_dyn<O: Slot<T>>(&self, dst: &mut [O], inner: usize) -> bool {
        self.copy_slices(dst, inner, O::put_slice)
    }

    /// Slices of any length, each written with streaming stores.
    #[inline(never)]
    fn run_streamed<O: Slot<T>>(&self, dst: &mut [O], inner: usize, stream: Streaming<T>) -> bool {
        self.copy_slices(dst, inner, |d, s| stream.put_slice(d, s))
    }

    #[inline(always)]
    fn copy_slices<O: Slot<T>>(
        &self,
        dst: &mut [O],
        inner: usize,
        put: impl Fn(&mut [O], &[T]),
    ) -> bool {
        let (own, last) = dst.split_at_mut(self.split * inner);
        let mut unresolved = false;
        self.each_slice(
            own.chunks_exact_mut(inner),
            last.chunks_exact_mut(inner),
            inner,
            |d, i| self.copy((d, i), inner, &mut unresolved, &put),
        );
        unresolved
    }

    /// Runs `copy(destination, index)` over the run's slices, `own` (the first `split`) then
    /// `last`, asking `ahead` of each: this run's slices while there are, then the next's
    /// (none where `ahead` is 0: then `split` is the whole run).
    #[inline(always)]
    fn each_slice<D>(
        &self,
        own: impl Iterator<Item = D>,
        last: impl Iterator<Item = D>,
        inner: usize,
        mut copy: impl FnMut(D, I),
    ) {
        for (t, (d, &i)) in own.zip(self.idx).enumerate() {
            // The compiler takes this test out of the loop (a loop of each); two loops
            // written out here kept `inner` in memory in the prefetching one, which was slower.
            if self.ahead != 0 {
                self.ask(self.row, self.idx, t + self.ahead, inner);
            }
            copy(d, i);
        }
        for (t, (d, &i)) in last.zip(&self.idx[self.split..]).enumerate() {
            self.ask(self.next_row, self.next_idx, t, inner);
            copy(d, i);
        }
    }
}

// After the macros above, which it uses.
mod gather_nd_kernel;

pub(crate) use gather_nd_kernel::{check_gather_nd, first_bad_vector, gather_nd, nd_offset};
#[cfg(test)]
use gather_nd_kernel::{flatten_branch_free, flatten_loop, FLAT_BLOCK};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod vector_clone_tests;
