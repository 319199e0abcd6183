//! The op a command runs: `tf.gather` or `tf.gather_nd` with its options.

use ndgather::{GatherNdOptions, GatherOptions, Tensor, TensorView};

/// The op and its options.
#[derive(Debug, Clone, Copy)]
pub enum Call {
    /// `tf.gather`.
    Gather(GatherOptions),
    /// `tf.gather_nd`.
    GatherNd(GatherNdOptions),
}

impl Call {
    /// The op on typed params.
    pub fn run(
        &self,
        params: &TensorView<'_>,
        indices: &TensorView<'_>,
    ) -> ndgather::Result<Tensor> {
        match self {
            Call::Gather(o) => params.gather(indices, o),
            Call::GatherNd(o) => params.gather_nd(indices, o),
        }
    }

    /// The op on params whose last axis holds each element's bytes.
    pub fn run_records(
        &self,
        params: &TensorView<'_>,
        indices: &TensorView<'_>,
    ) -> ndgather::Result<Tensor> {
        match self {
            Call::Gather(o) => params.gather_records(indices, o),
            Call::GatherNd(o) => params.gather_nd_records(indices, o),
        }
    }
}
