#[allow(dead_code)]
pub mod case_file;
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
