//! Gathers of [`Strings`]: the core's gather of the tensor's spans (every shape rule, index
//! check and policy is the fixed-width one; a bad index the policy fills gets
//! [`Span::FILL`]), then one pass that copies the gathered spans' bytes into the output's
//! buffer. No allocation per element, and none freed per element when the output is dropped.

use crate::engine::kernel::for_chunks;
use crate::mem::output;
use crate::mem::output::Slot;
use crate::types::dtype::bytes_of;
use crate::types::error::{Error, Result};
use crate::types::index::BadIndices;
use crate::types::strings::{Span, StringElement, Strings};
use crate::types::value::FillValue;
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

impl<T: StringElement> Strings<T> {
    /// A tensor of `shape` from its elements in row-major order.
    ///
    /// ```
    /// use ndgather::Strings;
    /// let t = Strings::<Vec<u8>>::from_shape_iter(&[2], [&b"ab"[..], b"c"]).unwrap();
    /// assert_eq!(t.get(1), Some(&b"c"[..]));
    /// assert!(Strings::<String>::from_shape_iter(&[3], ["a"]).is_err());
    /// ```
    ///
    /// # Errors
    /// [`Error::DataLength`] when the count of elements is not the shape's;
    /// [`Error::ShapeOverflow`] for a shape whose element count overflows.
    pub fn from_shape_iter<'a>(
        shape: &[usize],
        elements: impl IntoIterator<Item = &'a T::Ref>,
    ) -> Result<Strings<T>>
    where
        T::Ref: 'a,
    {
        let expected = crate::shape::checked_numel(shape).ok_or_else(|| Error::ShapeOverflow {
            what: "tensor",
            shape: shape.to_vec(),
        })?;
        let mut out = Strings {
            shape: shape.to_vec(),
            spans: Vec::new(),
            bytes: Vec::new(),
            element: PhantomData,
        };
        for e in elements {
            out.push(e);
        }
        if out.spans.len() != expected {
            return Err(Error::DataLength {
                shape: shape.to_vec(),
                expected,
                found: out.spans.len(),
            });
        }
        Ok(out)
    }

    pub(crate) fn spans_view(&self) -> Result<ArrayViewD<'_, Span>> {
        ArrayViewD::from_shape(IxDyn(&self.shape), &self.spans).map_err(|e| Error::InvalidShape {
            shape: self.shape.clone(),
            reason: e.to_string(),
        })
    }

    /// The strings at `spans` (the core's gather of this tensor's spans, which wrote
    /// [`Span::FILL`] where the policy fills) copied into a new buffer. The fill value is
    /// checked after the gather, so its error comes after the index errors, as in the
    /// fixed-width path.
    pub(crate) fn copy_gathered(
        &self,
        (policy, fill): (BadIndices, FillValue),
        spans: Result<ArrayD<Span>>,
    ) -> Result<Strings<T>> {
        let spans = spans?;
        let fill: T = match policy {
            BadIndices::Fill => fill.element()?,
            _ => T::default(),
        };
        let shape = spans.shape().to_vec();
        let spans = if spans.is_standard_layout() {
            spans.into_raw_vec_and_offset().0
        } else {
            spans.iter().copied().collect()
        };
        collect(shape, spans, &self.bytes, fill.as_ref_elem().as_ref())
    }
}

/// Elements per task of the copy into a new buffer.
const COPY_CHUNK: usize = 1 << 13;

/// A new tensor of `shape` whose elements are the bytes of `source` at `spans` (`fill` at
/// [`Span::FILL`]): the byte count of each chunk of spans, then each chunk's bytes copied
/// into its part of one fresh buffer while its spans are rewritten to point there.
fn collect<T>(
    shape: Vec<usize>,
    mut spans: Vec<Span>,
    source: &[u8],
    fill: &[u8],
) -> Result<Strings<T>> {
    let len_of = |s: &Span| match *s {
        Span::FILL => fill.len(),
        s => s.end - s.start,
    };
    let chunk_len = |c: &[Span]| c.iter().map(len_of).fold(0usize, usize::saturating_add);
    let chunk_bytes: Vec<usize> = if spans.len() < 4 * COPY_CHUNK {
        spans.chunks(COPY_CHUNK).map(chunk_len).collect()
    } else {
        spans.par_chunks(COPY_CHUNK).map(chunk_len).collect()
    };
    let total = chunk_bytes
        .iter()
        .try_fold(0usize, |acc, &n| acc.checked_add(n))
        .ok_or_else(|| Error::ShapeOverflow {
            what: "output",
            shape: shape.clone(),
        })?;
    // `copy_chunk` writes every byte of the buffer: the buffer is cut into one part per chunk
    // of spans, each exactly as long as that chunk's strings together (`chunk_bytes`,
    // summed to `total`), and each part is written string by string, in full (`fresh`
    // checks it in every test run, and may copy twice, so the spans move after).
    let starts: Vec<usize> = chunk_bytes
        .iter()
        .scan(0, |start, &n| {
            *start += n;
            Some(*start - n)
        })
        .collect();
    let bytes = output::fresh::<u8>(total, &[total], bytes_of::<u8>(), |slots, _| {
        let mut parts = Vec::with_capacity(chunk_bytes.len());
        let mut rest = slots;
        for &n in &chunk_bytes {
            let (part, tail) = rest.split_at_mut(n);
            parts.push(part);
            rest = tail;
        }
        let mut work: Vec<_> = spans.chunks(COPY_CHUNK).zip(parts).collect();
        for_chunks(&mut work, 1, COPY_CHUNK * 16, |_, items| {
            for (chunk, part) in items {
                copy_chunk(chunk, part, source, fill);
            }
        });
    })?;
    let mut moves: Vec<_> = spans.chunks_mut(COPY_CHUNK).zip(starts).collect();
    for_chunks(&mut moves, 1, COPY_CHUNK * 16, |_, items| {
        for (chunk, start) in items {
            point_at_copies(chunk, *start, fill.len());
        }
    });
    Ok(Strings {
        shape,
        spans,
        bytes,
        element: PhantomData,
    })
}

/// A string of this many bytes or fewer is copied as one block of this size wherever the
/// source and the part have that much room from its start: one fixed-size move instead of a
/// call to `memcpy` per string. The block's bytes past the string land where the chunk's
/// next strings are copied afterwards, so each is overwritten (figures: BENCHMARKS.md,
/// "Measurements behind the code").
const BLOCK: usize = 64;

/// Copies the strings at `spans` into `part` (exactly their length together).
fn copy_chunk(spans: &[Span], part: &mut [MaybeUninit<u8>], source: &[u8], fill: &[u8]) {
    // No prefetch: the loop is short and its reads do not depend on each other, so the
    // processor keeps enough of them in flight, and a prefetch only adds work (figures:
    // BENCHMARKS.md, "Measurements behind the code").
    let mut at = 0;
    for span in spans {
        let (from, block) = match *span {
            Span::FILL => (fill, None),
            s => (
                &source[s.start..s.end],
                source[s.start..].first_chunk::<BLOCK>(),
            ),
        };
        match (block, part[at..].first_chunk_mut::<BLOCK>()) {
            (Some(block), Some(slots)) if from.len() <= BLOCK => {
                slots.iter_mut().zip(block).for_each(|(d, s)| {
                    d.write(*s);
                });
            }
            _ => <MaybeUninit<u8> as Slot<u8>>::put_slice(&mut part[at..at + from.len()], from),
        }
        at += from.len();
    }
}

/// Points each of a chunk's spans at its string's copy, the chunk's copies starting at byte
/// `start` of the new buffer, one after another (a fill string is `fill_len` bytes).
fn point_at_copies(spans: &mut [Span], start: usize, fill_len: usize) {
    let mut at = start;
    for span in spans {
        let len = match *span {
            Span::FILL => fill_len,
            s => s.end - s.start,
        };
        *span = Span {
            start: at,
            end: at + len,
        };
        at += len;
    }
}

#[cfg(test)]
mod tests {
    use crate::{BadIndices, GatherNdOptions, GatherOptions, Strings};
    use ndarray::{ArrayD, IxDyn};

    /// Large enough for the parallel copy (many chunks of spans, some bad indices in each),
    /// on 1 and 2 threads, under every policy, with strings shorter and longer than the
    /// block copy's block: the same elements as the typed API's gather of the same
    /// `Vec<u8>`s.
    #[test]
    fn the_parallel_copy_under_every_policy() {
        let n = 5_000;
        let params: ArrayD<Vec<u8>> = ArrayD::from_shape_fn(IxDyn(&[n]), |ix| {
            let k = ix[0];
            (0..k % (2 * super::BLOCK + 9))
                .map(|j| (k + j) as u8)
                .collect()
        });
        let packed = Strings::<Vec<u8>>::from_array(&params);
        let count = 4 * super::COPY_CHUNK + 123;
        let mut state = 7u64;
        let indices: ArrayD<i64> = ArrayD::from_shape_fn(IxDyn(&[count]), |_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as i64 % (n as i64 + 40) - 20
        });
        let nd = indices
            .clone()
            .into_shape_with_order(IxDyn(&[count, 1]))
            .unwrap();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for policy in BadIndices::ALL.iter().copied() {
                    let options = GatherOptions::new().bad_indices(policy);
                    let typed = options.gather(&params, &indices);
                    let ours = packed.run_op(crate::Op::Gather(options), &indices.view());
                    match (typed, ours) {
                        (Ok(a), Ok(s)) => {
                            assert_eq!(s.to_array(), a, "{policy:?}, {threads} threads")
                        }
                        (a, b) => assert_eq!(a.err(), b.err(), "{policy:?}"),
                    }
                    let options = GatherNdOptions::new().bad_indices(policy);
                    let typed = options.gather_nd(&params, &nd);
                    let ours = packed.run_op(crate::Op::GatherNd(options), &nd.view());
                    match (typed, ours) {
                        (Ok(a), Ok(s)) => {
                            assert_eq!(s.to_array(), a, "{policy:?}, {threads} threads")
                        }
                        (a, b) => assert_eq!(a.err(), b.err(), "{policy:?}"),
                    }
                }
            });
        }
    }
}
