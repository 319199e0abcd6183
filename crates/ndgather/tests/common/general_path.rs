//! The core's general path for any call on records: a run into a caller's records laid out
//! apart (`Out::IntoRecords` with a gap after each element), which the path for small calls
//! never takes (it writes new outputs and row-major records only), on the same bytes. Tests
//! and fuzz bodies compare the one door's run into a new output, and into row-major records,
//! which take the small path where they can, with it; and the same elements laid out apart
//! (`spaced`) or backwards (`reversed`), whose runs into a new output are strided, with both.

use ndgather::memory::{RawView, RawViewMut};
use ndgather::registry::Input;
use ndgather::{Error, Op, OpDef, Out, TensorView};

/// An output's shape, in elements, and its bytes; or the run's error.
pub type Outcome = Result<(Vec<usize>, Vec<u8>), Error>;

/// `op` on `params` (records) and `indices` on the general path; `None` for an output of
/// more than 16 MiB, which the caller skips.
pub fn into_records<'a>(op: &Op, params: RawView<'a>, indices: TensorView<'a>) -> Option<Outcome> {
    into(op, params, indices, true)
}

/// `op` on `params` (records) and `indices` into a caller's row-major records, where the
/// core takes the small path for a small call; on error the records must be as they were
/// (checked here). `None` as for [`into_records`].
pub fn into_row_major<'a>(
    op: &Op,
    params: RawView<'a>,
    indices: TensorView<'a>,
) -> Option<Outcome> {
    into(op, params, indices, false)
}

fn into<'a>(op: &Op, params: RawView<'a>, indices: TensorView<'a>, apart: bool) -> Option<Outcome> {
    let itemsize = params.itemsize();
    let shape = match op.out_shape(params.shape(), indices.shape()) {
        Ok(shape) => shape,
        // No output shape: the run's own first error, in its order of checks.
        Err(shape_error) => {
            let target = RawViewMut::of_bytes(&mut [], &[0], itemsize).expect("no records");
            let inputs = [Input::Records(params), Input::from(indices)];
            return Some(match OpDef::run(op, &inputs, Out::IntoRecords(target)) {
                Err(e) => Err(e),
                Ok(_) => Err(shape_error),
            });
        }
    };
    // An output no array can have in every unit (its nonzero lengths times the item size
    // pass isize::MAX; only an empty one, from lent memory of no elements): which units
    // the core's paths refuse it in differs, so it is not compared.
    let bytes_fit = (shape.iter().filter(|&&d| d != 0))
        .try_fold(itemsize.max(1), |n, &d| n.checked_mul(d))
        .is_some_and(|n| n <= isize::MAX as usize);
    if !bytes_fit {
        return None;
    }
    let len = if shape.contains(&0) {
        0
    } else {
        (shape.iter())
            .try_fold(itemsize, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= 1 << 24)?
    };
    let inputs = [Input::Records(params), Input::from(indices)];
    if !apart || len == 0 {
        let mut bytes = vec![0xEEu8; len];
        let target = RawViewMut::of_bytes(&mut bytes, &shape, itemsize).expect("records that fill");
        let outcome = OpDef::run(op, &inputs, Out::IntoRecords(target));
        if outcome.is_err() {
            assert!(
                bytes.iter().all(|&b| b == 0xEE),
                "records written on error: {op:?}"
            );
        }
        return Some(outcome.map(|_| (shape, bytes)));
    }
    let (mut gapped, strides) = spaced(&vec![0xEEu8; len], &shape, itemsize);
    let target = RawViewMut::within(&mut gapped, 0, &shape, &strides, itemsize)
        .expect("records laid out apart");
    let outcome = OpDef::run(op, &inputs, Out::IntoRecords(target));
    let bytes = (gapped.chunks(2 * itemsize))
        .flat_map(|element| &element[..itemsize])
        .copied()
        .collect();
    Some(outcome.map(|_| (shape, bytes)))
}

/// `op` on `params` (records) and `indices` into a new output, as the bindings call it (the
/// records come back as units of the core's choice, with the record axis appended).
pub fn fresh<'a>(op: &Op, params: RawView<'a>, indices: TensorView<'a>) -> Outcome {
    let inputs = [Input::Records(params), Input::from(indices)];
    let t = OpDef::run(op, &inputs, Out::New)?
        .expect("a new output")
        .into_dense()?;
    Ok((t.shape()[..t.shape().len() - 1].to_vec(), t.to_bytes()?))
}

/// `bytes` (the row-major elements of `shape`, `itemsize` bytes each) with a gap of one
/// element after each, and the byte strides of that layout: records no contiguous path reads
/// (for any axis longer than one), in units as wide as the contiguous ones.
pub fn spaced(bytes: &[u8], shape: &[usize], itemsize: usize) -> (Vec<u8>, Vec<isize>) {
    let (n, gap) = (bytes.len() / itemsize.max(1), 2 * itemsize);
    let mut out = vec![0xEE; n * gap];
    for k in 0..n {
        out[k * gap..k * gap + itemsize].copy_from_slice(&bytes[k * itemsize..][..itemsize]);
    }
    let mut strides = vec![0isize; shape.len()];
    let mut step = gap as isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.saturating_mul(d.max(1) as isize);
    }
    (out, strides)
}

/// `bytes` (the row-major elements of `shape`, `itemsize` bytes each) stored last first, with
/// the byte offset of the first element and the (negative) byte strides that read them in
/// order: every axis walked backwards, as NumPy's `a[::-1, ::-1]` lays it out.
pub fn reversed(bytes: &[u8], shape: &[usize], itemsize: usize) -> (Vec<u8>, usize, Vec<isize>) {
    let n = bytes.len() / itemsize.max(1);
    let mut out = Vec::with_capacity(bytes.len());
    for k in (0..n).rev() {
        out.extend_from_slice(&bytes[k * itemsize..][..itemsize]);
    }
    let mut strides = vec![0isize; shape.len()];
    let mut step = itemsize as isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = -step;
        step = step.saturating_mul(d.max(1) as isize);
    }
    (out, n.saturating_sub(1) * itemsize, strides)
}
