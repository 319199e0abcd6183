//! The op a command runs: `tf.gather`, `tf.gather_nd` or NumPy's `take_along_axis`, with its
//! options.

use ndgather::shape::{gather_nd_shape, gather_shape, Axis, Shape};
use ndgather::{GatherNdOptions, GatherOptions, TakeAlongAxisOptions, Tensor, TensorView};

/// The op and its options.
#[derive(Debug, Clone, Copy)]
pub enum Call {
    /// `tf.gather`.
    Gather(GatherOptions),
    /// `tf.gather_nd`.
    GatherNd(GatherNdOptions),
    /// `numpy.take_along_axis`.
    TakeAlongAxis(TakeAlongAxisOptions),
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
            Call::TakeAlongAxis(o) => params.take_along_axis(indices, o),
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
            Call::TakeAlongAxis(o) => params.take_along_axis_records(indices, o),
        }
    }

    /// Whether bad slices are filled with a fill value (`BadIndices::Fill`).
    pub fn fills(&self) -> bool {
        let policy = match self {
            Call::Gather(o) => o.bad_indices,
            Call::GatherNd(o) => o.bad_indices,
            Call::TakeAlongAxis(o) => o.bad_indices,
        };
        policy == ndgather::BadIndices::Fill
    }

    /// The fill value of the `Fill` policy.
    pub fn fill(&self) -> ndgather::FillValue {
        match self {
            Call::Gather(o) => o.fill_value,
            Call::GatherNd(o) => o.fill_value,
            Call::TakeAlongAxis(o) => o.fill_value,
        }
    }

    /// The same call with another fill value (the bytes of one element, for records).
    pub fn with_fill(self, value: ndgather::FillValue) -> Call {
        match self {
            Call::Gather(o) => Call::Gather(o.fill_value(value)),
            Call::GatherNd(o) => Call::GatherNd(o.fill_value(value)),
            Call::TakeAlongAxis(o) => Call::TakeAlongAxis(o.fill_value(value)),
        }
    }

    /// How many elements the output has, by the op's shape rule; `None` where the shapes do
    /// not pass it (the op itself then says why).
    pub fn out_len(&self, params: &[usize], indices: &[usize]) -> Option<usize> {
        let (p, i) = (Shape::known(params), Shape::known(indices));
        let out = match self {
            Call::Gather(o) => {
                let axis = o.axis.map_or(Axis::Default, Axis::Given);
                gather_shape(&p, &i, axis, o.batch_dims, None).ok()?.output
            }
            Call::GatherNd(o) => gather_nd_shape(&p, &i, o.batch_dims, None).ok()?.output,
            Call::TakeAlongAxis(o) => Shape::known(&o.out_shape(params, indices).ok()?),
        };
        out.num_elements()
    }
}
