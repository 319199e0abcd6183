//! gather_nd's kernels: each index vector's offset in params (checked under the policy),
//! and the copies of the slices at those offsets, by depth, fixed-size where that pays.

use super::{first_bad, for_chunks_any};
use crate::engine::simd::prefetch::{prefetch, prefetch_slice, Reads};
use crate::engine::simd::stream::Streaming;
use crate::mem::output::{Pages, Slot};
use crate::shape::plan::{unravel, GatherNdPlan};
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use rayon::prelude::*;

/// The offset in params of index vector `row` of batch element `b`, or `None` if a
/// component is bad under the policy.
#[inline]
pub(crate) fn nd_offset<I: IndexType>(
    plan: &GatherNdPlan,
    b: usize,
    row: &[I],
    policy: BadIndices,
) -> Option<usize> {
    let mut offset = b * plan.batch_stride;
    for ((&i, &dim), &stride) in row.iter().zip(&plan.dims).zip(&plan.strides) {
        offset += policy.resolve(i, dim)? * stride;
    }
    Some(offset)
}

/// Finds the first bad index vector in row-major order, if the policy makes it an error.
pub(crate) fn check_gather_nd<I: IndexType>(
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
) -> Result<()> {
    if plan.out_len == 0 || plan.depth == 0 || !policy.errors() {
        return Ok(());
    }
    match first_bad_vector(indices, &plan.dims, policy) {
        None => Ok(()),
        Some(r) => Err(Error::BadIndexVector {
            position: unravel(r, &plan.rows_shape),
            values: indices[r * plan.depth..(r + 1) * plan.depth]
                .iter()
                .map(|i| i.to_i128())
                .collect(),
            params_shape: plan.params_shape.to_vec(),
            batch_dims: plan.batch_dims,
        }),
    }
}

/// The first index vector (of one component per entry of `dims`) with a component that is
/// bad against its dimension under `policy`.
pub(crate) fn first_bad_vector<I: IndexType>(
    indices: &[I],
    dims: &[usize],
    policy: BadIndices,
) -> Option<usize> {
    match policy {
        // The default policy's test alone, so that the loop is one comparison per index.
        BadIndices::Error => {
            first_bad_against(indices, dims, |i: I, d| i.checked_index(d).is_none())
        }
        _ => first_bad_against(indices, dims, |i: I, d| policy.resolve(i, d).is_none()),
    }
}

/// The first index vector with a component for which `bad(component, its dimension)` holds.
fn first_bad_against<I: IndexType>(
    indices: &[I],
    dims: &[usize],
    bad: impl Fn(I, usize) -> bool + Sync + Send,
) -> Option<usize> {
    // Index depths known at compile time make each vector's test a few unrolled steps.
    match *dims {
        [] => None,
        [a] => first_bad_of_depth(indices, [a], bad),
        [a, b] => first_bad_of_depth(indices, [a, b], bad),
        [a, b, c] => first_bad_of_depth(indices, [a, b, c], bad),
        _ => indices
            .par_chunks_exact(dims.len())
            .position_first(|row| row.iter().zip(dims).any(|(&i, &dim)| bad(i, dim))),
    }
}

fn first_bad_of_depth<const D: usize, I: IndexType>(
    indices: &[I],
    dims: [usize; D],
    bad: impl Fn(I, usize) -> bool + Sync + Send,
) -> Option<usize> {
    let (vectors, _) = indices.as_chunks::<D>();
    first_bad(vectors, |row| {
        (0..D).fold(false, |acc, k| acc | bad(row[k], dims[k]))
    })
}

/// Copies the slice of every index vector, in row-major order, into `out` (exactly
/// `plan.out_len` slots, every one of which is written; on `pages`, as in [`super::gather`]).
/// Returns whether an index vector resolved to no slice, as [`super::gather`] does (then
/// [`check_gather_nd`] names it).
#[must_use = "an unresolved index is an error under an erroring policy"]
pub(crate) fn gather_nd<T, I, O>(
    params: &[T],
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
    out: &mut [O],
    pages: Pages,
) -> bool
where
    T: Clone + Default + Sync + 'static,
    I: IndexType,
    O: Slot<T>,
{
    // Index depths known at compile time make the offset arithmetic a few unrolled steps.
    match plan.depth {
        1 => gather_nd_depth::<1, T, I, O>(params, indices, plan, policy, (out, pages)),
        2 => gather_nd_depth::<2, T, I, O>(params, indices, plan, policy, (out, pages)),
        3 => gather_nd_depth::<3, T, I, O>(params, indices, plan, policy, (out, pages)),
        _ => gather_nd_any(params, indices, plan, policy, out),
    }
}

/// The offset in params of index vector `row` (of `D` components) of batch element `b`, or
/// `None` if a component is bad under the policy.
#[inline(always)]
fn offset_of<const D: usize, I: IndexType>(
    row: &[I; D],
    dims: &[usize; D],
    strides: &[usize; D],
    base: usize,
    policy: BadIndices,
) -> Option<usize> {
    let mut offset = base;
    for k in 0..D {
        offset += policy.resolve(row[k], dims[k])? * strides[k];
    }
    Some(offset)
}

fn gather_nd_depth<const D: usize, T, I, O>(
    params: &[T],
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
    (out, pages): (&mut [O], Pages),
) -> bool
where
    T: Clone + Default + Sync + 'static,
    I: IndexType,
    O: Slot<T>,
{
    let (Ok(dims), Ok(strides)) = (
        <[usize; D]>::try_from(&plan.dims[..]),
        <[usize; D]>::try_from(&plan.strides[..]),
    ) else {
        return gather_nd_any(params, indices, plan, policy, out);
    };
    let (slice, rows, batch_stride) = (plan.slice, plan.rows, plan.batch_stride);
    let slice_bytes = slice.saturating_mul(std::mem::size_of::<T>());
    let item_bytes = slice_bytes.saturating_add(D * std::mem::size_of::<I>());
    let (vectors, _) = indices.as_chunks::<D>();
    let flat = Flatten {
        dims: &dims,
        strides: &strides,
        policy,
    };
    // Each vector's slice comes from its batch element's part of params.
    let batch_bytes = batch_stride.saturating_mul(std::mem::size_of::<T>());
    let stream = Streaming::for_copy(
        (std::mem::size_of_val(out), pages),
        batch_bytes,
        slice_bytes,
    );
    for_chunks_any(out, slice, item_bytes, |first, chunk| {
        let _fence = stream.map(Streaming::fence_on_drop);
        // Block by block: first every index vector becomes its offset in params (a pass of
        // arithmetic over the indices, no random reads), then the copy loop runs over the
        // offsets alone, with nothing between its random reads but a prefetch hint.
        let mut offsets = [0usize; FLAT_BLOCK];
        // Where the next vector is: its batch element and its row in it.
        let mut at = (first / rows, first % rows);
        let items = chunk.len() / slice;
        let vectors = &vectors[first..first + items];
        let mut unresolved = false;
        for (block, dst) in vectors
            .chunks(FLAT_BLOCK)
            .zip(chunk.chunks_mut(FLAT_BLOCK * slice))
        {
            let offsets = &mut offsets[..block.len()];
            let mut done = 0;
            while done < block.len() {
                // The vectors of one batch element share its base offset.
                let (b, r) = at;
                let part = (rows - r).min(block.len() - done);
                let range = done..done + part;
                let base = b * batch_stride;
                unresolved |= flat.run(base, &block[range.clone()], &mut offsets[range]);
                done += part;
                at = if r + part == rows {
                    (b + 1, 0)
                } else {
                    (b, r + part)
                };
            }
            copy_at_offsets(params, offsets, slice, dst, stream);
        }
        unresolved
    })
}

/// Index vectors of `D` components to offsets in params.
struct Flatten<'a, const D: usize> {
    dims: &'a [usize; D],
    strides: &'a [usize; D],
    policy: BadIndices,
}

impl<const D: usize> Flatten<'_, D> {
    /// Writes the offset of each vector of the batch element at offset `base`; a vector that
    /// resolves to no slice under the policy gets `usize::MAX` (past params), and makes the
    /// return value true. The vectors are first flattened branch-free, each component tested
    /// in its own width and taken as position 0 if bad, so that the loop has no call and no
    /// branch; only a run with a bad component (rare) is flattened again, under the policy.
    #[inline(always)]
    fn run<I: IndexType>(&self, base: usize, vectors: &[[I; D]], offsets: &mut [usize]) -> bool {
        if !flatten_branch_free(base, vectors, (self.dims, self.strides), offsets) {
            return false;
        }
        let mut unresolved = false;
        for (offset, row) in offsets.iter_mut().zip(vectors) {
            *offset = match offset_of(row, self.dims, self.strides, base, self.policy) {
                Some(offset) => offset,
                None => {
                    unresolved = true;
                    usize::MAX
                }
            };
        }
        unresolved
    }
}

with_widest_vectors! {
    /// Writes the offset of each vector, a bad component taken as position 0; returns
    /// whether any component was bad.
    pub(super) fn flatten_branch_free<const D: usize, I: IndexType>(
        base: usize,
        vectors: &[[I; D]],
        shape: (&[usize; D], &[usize; D]),
        offsets: &mut [usize],
    ) -> bool {
        flatten_loop(base, vectors, shape, offsets)
    }
}

/// The loop of [`flatten_branch_free`], compiled into each of its clones (and by the tests
/// for each of `with_widest_vectors!`'s targets).
#[inline(always)]
pub(super) fn flatten_loop<const D: usize, I: IndexType>(
    base: usize,
    vectors: &[[I; D]],
    (dims, strides): (&[usize; D], &[usize; D]),
    offsets: &mut [usize],
) -> bool {
    let mut bad = false;
    for (offset, row) in offsets.iter_mut().zip(vectors) {
        let mut o = base;
        for ((&i, &dim), &stride) in row.iter().zip(dims).zip(strides) {
            let position = i.checked_index(dim);
            bad |= position.is_none();
            o += position.unwrap_or(0) * stride;
        }
        *offset = o;
    }
    bad
}

/// Index vectors flattened to offsets at a time by [`gather_nd_depth`] (32 KiB of offsets,
/// on the stack).
pub(super) const FLAT_BLOCK: usize = 4096;

/// Copies the `slice` elements of params at each offset into the next `slice` slots of
/// `out` (with streaming stores where `stream` is given); an offset past params
/// (`usize::MAX`: a bad index vector the policy ignores) gives defaults.
#[inline(always)]
fn copy_at_offsets<T, O>(
    params: &[T],
    offsets: &[usize],
    slice: usize,
    out: &mut [O],
    stream: Option<Streaming<T>>,
) where
    T: Clone + Default + Sync,
    O: Slot<T>,
{
    let slice_bytes = slice.saturating_mul(std::mem::size_of::<T>());
    let table_bytes = std::mem::size_of_val(params);
    // Offsets reach anywhere in params: no rows whose reads could be counted.
    let ahead = Reads::of(table_bytes, slice_bytes, None, offsets.len(), |k| {
        (offsets[k] / slice.max(1)) as i128
    })
    .ahead(slice_bytes);
    if let Some(stream) = stream {
        let put = |d: &mut [O], s: &[T]| stream.put_slice(d, s);
        return copy_any(params, offsets, slice, ahead, (out, put));
    }
    if slice == 1 {
        let hint = |o: usize| {
            if let Some(v) = params.get(o) {
                prefetch(v);
            }
        };
        let copy = |dst: &mut O, o: usize| match params.get(o) {
            Some(v) => dst.put(v),
            None => dst.put_default(),
        };
        return each_offset(out.iter_mut(), offsets, ahead, hint, copy);
    }
    by_slice_width!(
        slice,
        |N| copy_fixed::<N, T, O>(params, offsets, ahead, out),
        copy_any(params, offsets, slice, ahead, (out, O::put_slice))
    )
}

/// [`copy_at_offsets`] for slices of any width: each a slice copy, by `put`.
#[inline(always)]
fn copy_any<T, O>(
    params: &[T],
    offsets: &[usize],
    slice: usize,
    ahead: usize,
    (out, put): (&mut [O], impl Fn(&mut [O], &[T])),
) where
    T: Clone + Default + Sync,
    O: Slot<T>,
{
    let at = |offset: usize| params.get(offset..offset.checked_add(slice)?);
    let hint = |o: usize| {
        if let Some(s) = at(o) {
            prefetch_slice(s);
        }
    };
    let copy = |dst: &mut [O], o: usize| match at(o) {
        Some(src) => put(dst, src),
        None => dst.iter_mut().for_each(Slot::put_default),
    };
    each_offset(out.chunks_exact_mut(slice), offsets, ahead, hint, copy);
}

/// [`copy_at_offsets`] for slices of `N` elements: each a fixed-size move (a `memcpy` call
/// per slice before, slower on short slices; figures: BENCHMARKS.md).
#[inline(always)]
fn copy_fixed<const N: usize, T, O>(params: &[T], offsets: &[usize], ahead: usize, out: &mut [O])
where
    T: Clone + Default + Sync,
    O: Slot<T>,
{
    let at = |offset: usize| params.get(offset..)?.first_chunk::<N>();
    let hint = |o: usize| {
        if let Some(s) = at(o) {
            prefetch_slice(s);
        }
    };
    let copy = |dst: &mut [O; N], o: usize| match at(o) {
        Some(src) => O::put_array(dst, src),
        None => dst.iter_mut().for_each(Slot::put_default),
    };
    each_offset(
        out.as_chunks_mut::<N>().0.iter_mut(),
        offsets,
        ahead,
        hint,
        copy,
    );
}

/// Runs `copy(destination, offset)` over the offsets, asking (`hint`) for the slice `ahead`
/// of each (none where `ahead` is 0).
#[inline(always)]
fn each_offset<D>(
    dsts: impl Iterator<Item = D>,
    offsets: &[usize],
    ahead: usize,
    hint: impl Fn(usize),
    mut copy: impl FnMut(D, usize),
) {
    offsets.iter().take(ahead).for_each(|&o| hint(o));
    for (t, (d, &o)) in dsts.zip(offsets).enumerate() {
        // A test that does not change in the loop: the compiler takes it out (a loop of each).
        if ahead != 0 {
            if let Some(&a) = offsets.get(t + ahead) {
                hint(a);
            }
        }
        copy(d, o);
    }
}

/// Any index depth (0 included).
fn gather_nd_any<T, I, O>(
    params: &[T],
    indices: &[I],
    plan: &GatherNdPlan,
    policy: BadIndices,
    out: &mut [O],
) -> bool
where
    T: Clone + Default + Sync,
    I: IndexType,
    O: Slot<T>,
{
    let (slice, depth, rows) = (plan.slice, plan.depth, plan.rows);
    let item_bytes = slice
        .saturating_mul(std::mem::size_of::<T>())
        .saturating_add(depth.saturating_mul(std::mem::size_of::<I>()));
    for_chunks_any(out, slice, item_bytes, |first, chunk| {
        let mut unresolved = false;
        for (t, dst) in chunk.chunks_exact_mut(slice).enumerate() {
            let item = first + t;
            let at = item * depth;
            match nd_offset(plan, item / rows, &indices[at..at + depth], policy) {
                Some(start) => O::put_slice(dst, &params[start..start + slice]),
                None => {
                    unresolved = true;
                    dst.iter_mut().for_each(Slot::put_default);
                }
            }
        }
        unresolved
    })
}
