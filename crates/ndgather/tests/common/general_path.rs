//! The core's general path for any call on records: a run into a caller's records
//! (`Out::IntoRecords`), which the path for small calls never takes (it makes new outputs
//! only), on the same bytes. Tests and fuzz bodies compare the one door's run into a new
//! output, which takes the small path where it can, with it.

use ndgather::memory::{RawView, RawViewMut};
use ndgather::registry::Input;
use ndgather::{Error, Op, OpDef, Out, TensorView};

/// `op` on `params` (records) and `indices` on the general path: the output's shape, in
/// elements, and its bytes. An output over 16 MiB is `Error::Internal`, for the caller to
/// skip.
pub fn into_records<'a>(
    op: &Op,
    params: RawView<'a>,
    indices: TensorView<'a>,
) -> Result<(Vec<usize>, Vec<u8>), Error> {
    let itemsize = params.itemsize();
    let shape = match op.out_shape(params.shape(), indices.shape()) {
        Ok(shape) => shape,
        // No output shape: the run's own first error, in its order of checks.
        Err(shape_error) => {
            let target = RawViewMut::of_bytes(&mut [], &[0], itemsize).expect("no records");
            let inputs = [Input::Records(params), Input::from(indices)];
            OpDef::run(op, &inputs, Out::IntoRecords(target))?;
            return Err(shape_error);
        }
    };
    let len = (shape.iter())
        .try_fold(params.itemsize(), |n, &d| n.checked_mul(d))
        .filter(|&n| n <= 1 << 24)
        .ok_or(Error::Internal("an output too large for a test"))?;
    let mut bytes = vec![0xEEu8; len];
    let target = RawViewMut::of_bytes(&mut bytes, &shape, itemsize).expect("records that fill");
    let inputs = [Input::Records(params), Input::from(indices)];
    OpDef::run(op, &inputs, Out::IntoRecords(target))?;
    Ok((shape, bytes))
}

/// `op` on `params` (records) and `indices` into a new output, as the bindings call it: the
/// output's shape, in elements, and its bytes (the records come back as units of the core's
/// choice, with the record axis appended).
pub fn fresh<'a>(
    op: &Op,
    params: RawView<'a>,
    indices: TensorView<'a>,
) -> Result<(Vec<usize>, Vec<u8>), Error> {
    let inputs = [Input::Records(params), Input::from(indices)];
    let t = OpDef::run(op, &inputs, Out::New)?
        .expect("a new output")
        .into_dense()?;
    Ok((t.shape()[..t.shape().len() - 1].to_vec(), t.to_bytes()?))
}
