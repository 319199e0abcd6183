//! The copy of whole ragged rows: each output row is a contiguous run of the values' rows,
//! so the copy is one slice copy per row (a `memcpy` for the fixed-width types), split in
//! parallel by output bytes.

use crate::mem::output::{self, Slot};
use crate::types::dtype::bytes_of;
use crate::types::error::Result;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Output bytes per parallel task: enough that a task's start-up is noise.
const TASK_BYTES: usize = 1 << 20;

/// The concatenation of `values[starts[r] * block .. (starts[r] + len_r) * block]` over the
/// rows `r`, where `len_r = offsets[r + 1] - offsets[r]` (`offsets` is the output's row
/// splits, starting at 0). A start past the values is never read for a row of length 0.
pub(crate) fn concat_rows<T: Clone + Default + Send + Sync + 'static>(
    values: &[T],
    block: usize,
    starts: &[usize],
    offsets: &[usize],
    shape: &[usize],
) -> Result<Vec<T>> {
    let total = offsets.last().copied().unwrap_or(0) * block;
    let row_bytes = (block * std::mem::size_of::<T>()).max(1);
    Ok(output::fresh::<T>(
        total,
        shape,
        bytes_of::<T>(),
        |slots, _pages| {
            copy_rows(values, block, starts, offsets, slots, row_bytes);
        },
    )?)
}

/// Splits the rows into tasks of about [`TASK_BYTES`] of output each and copies them.
fn copy_rows<T: Clone + Default + Send + Sync>(
    values: &[T],
    block: usize,
    starts: &[usize],
    offsets: &[usize],
    slots: &mut [MaybeUninit<T>],
    row_bytes: usize,
) {
    let per_task = (TASK_BYTES / row_bytes).max(1);
    let mut tasks = Vec::new();
    let (mut rest, mut first) = (slots, 0usize);
    while first < starts.len() {
        // The first row whose output starts a new task.
        let target = offsets[first] + per_task;
        let end = first + offsets[first..].partition_point(|&o| o < target).max(1);
        let end = end.min(starts.len());
        let (head, tail) = rest.split_at_mut((offsets[end] - offsets[first]) * block);
        tasks.push((first, end, head));
        rest = tail;
        first = end;
    }
    let copy = |(first, end, out): (usize, usize, &mut [MaybeUninit<T>])| {
        let mut at = 0;
        for r in first..end {
            let n = (offsets[r + 1] - offsets[r]) * block;
            if n > 0 {
                let src = &values[starts[r] * block..starts[r] * block + n];
                Slot::put_slice(&mut out[at..at + n], src);
            }
            at += n;
        }
    };
    if tasks.len() < 2 || rayon::current_num_threads() < 2 {
        tasks.into_iter().for_each(copy);
    } else {
        tasks.into_par_iter().for_each(copy);
    }
}
