//! The write ops (tensor scatters, scatter_reduce) run through their one door, `OpDef::run`:
//! into a new tensor, or in place into the caller's array.

use ndgather::registry::Input;
use ndgather::{Error, OpDef, Out, Tensor, TensorView, TensorViewMut};

/// The op on `tensor`, `indices` and `updates`, into a new tensor.
pub fn run_new<'a>(
    op: &dyn OpDef,
    tensor: TensorView<'a>,
    indices: &TensorView<'a>,
    updates: &TensorView<'a>,
) -> Result<Tensor, Error> {
    let inputs = [
        tensor.into(),
        indices.clone().into(),
        updates.clone().into(),
    ];
    op.run(&inputs, Out::New)?
        .ok_or(Error::Internal("a run into a new output returns it"))?
        .into_dense()
}

/// The op in place, on `tensor`'s elements.
pub fn run_in_place<'a>(
    op: &dyn OpDef,
    tensor: TensorViewMut<'_>,
    indices: &TensorView<'a>,
    updates: &TensorView<'a>,
) -> Result<(), Error> {
    let inputs = [Input::None, indices.clone().into(), updates.clone().into()];
    op.run(&inputs, Out::InPlace(tensor)).map(|_| ())
}
