#[allow(dead_code)]
pub mod case_file;
#[allow(dead_code)]
pub mod reference;

use ndgather::ndarray::{ArrayBase, ArrayD, Data, Dimension};
use ndgather::{ArrayElement, IndexType, Op, Out, Params};

/// `op` on params of records (the last axis holds each element's values), through the one
/// entry point, [`Op::run`], as the bindings call it.
#[allow(dead_code)]
pub fn run_records<T, I, S, SI, D, DI>(
    op: Op,
    params: &ArrayBase<S, D>,
    indices: &ArrayBase<SI, DI>,
) -> ndgather::Result<ArrayD<T>>
where
    T: ArrayElement,
    I: IndexType + ArrayElement,
    S: Data<Elem = T>,
    SI: Data<Elem = I>,
    D: Dimension,
    DI: Dimension,
{
    let indices = I::into_tensor(indices.to_owned().into_dyn());
    let params = params.view().into_dyn();
    let out = op.run(
        Params::records(T::into_view(params)),
        &indices.view(),
        Out::New,
    )?;
    out.expect("a new output").into_array::<T>()
}
