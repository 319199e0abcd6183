#[allow(dead_code)]
pub mod case_file;
#[allow(dead_code)]
pub mod general_path;
#[allow(dead_code)]
pub mod reference;
#[allow(dead_code)]
pub mod write_ops;

/// A small deterministic generator (xorshift), for random calls from a seed.
#[allow(dead_code)]
pub struct Rng(pub u64);

#[allow(dead_code)]
impl Rng {
    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

use ndgather::memory::RawView;
use ndgather::ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use ndgather::registry::Input;
use ndgather::{ArrayElement, IndexType, Op, OpDef, Out};

/// `op` on params given as records (each element's bytes), through the one door,
/// [`OpDef::run`], as the bindings call it: the result's elements as bytes, with a record axis
/// of the element size appended.
#[allow(dead_code)]
pub fn run_records<I, SI, DI>(
    op: Op,
    params: RawView<'_>,
    indices: &ArrayBase<SI, DI>,
) -> ndgather::Result<ArrayD<u8>>
where
    I: IndexType + ArrayElement,
    SI: Data<Elem = I>,
    DI: Dimension,
{
    let itemsize = params.itemsize();
    let indices = I::into_tensor(indices.to_owned().into_dyn());
    let inputs = [Input::Records(params), Input::from(indices.view())];
    let out = OpDef::run(&op, &inputs, Out::New)?
        .expect("a new output")
        .into_dense()?;
    let mut shape = out.shape()[..out.shape().len() - 1].to_vec();
    shape.push(itemsize);
    Ok(ArrayD::from_shape_vec(IxDyn(&shape), out.to_bytes()?).expect("whole records"))
}

/// A standard-layout array of bytes as records: its last axis holds each element's bytes.
#[allow(dead_code)]
pub fn records<S: Data<Elem = u8>, D: Dimension>(bytes: &ArrayBase<S, D>) -> RawView<'_> {
    let shape = bytes.shape();
    let (outer, itemsize) = shape.split_at(shape.len() - 1);
    let slice = bytes.as_slice().expect("standard layout");
    RawView::of_bytes(slice, outer, itemsize[0]).expect("records that fill the bytes")
}

/// `op` on dense tensors through the one door, [`OpDef::run`], into a new tensor.
#[allow(dead_code)]
pub fn run_dense(
    op: &dyn OpDef,
    inputs: &[&ndgather::Tensor],
) -> ndgather::Result<ndgather::Tensor> {
    let inputs: Vec<Input<'_>> = inputs.iter().map(|t| Input::from(t.view())).collect();
    op.run(&inputs, Out::New)?
        .expect("a new output")
        .into_dense()
}
