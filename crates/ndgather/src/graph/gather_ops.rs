//! The ops: constants, placeholders, Gather and GatherNd.

use super::op_error::OpResult;
use super::scope::{Operand, Output, Scope};
use crate::ops::gather::{GatherNdOptions, GatherOptions};
use crate::ops::take_along_axis::TakeAlongAxisOptions;
use crate::shape::Shape;
use crate::types::dtype::TensorElement;
use crate::types::index::{BadIndices, IndexType};
use crate::types::value::FillValue;
use ndarray::{ArrayD, IxDyn};

/// An op with a fixed value.
#[derive(Debug, Clone)]
pub struct Constant<T> {
    output: Output<T>,
}

impl<T: TensorElement> Constant<T> {
    /// A constant holding `value`.
    pub fn create(scope: &Scope, value: ArrayD<T>) -> OpResult<Constant<T>> {
        let output = scope.constant(T::into_tensor(value));
        Ok(Constant {
            output: scope.output(output.node),
        })
    }

    /// A scalar constant.
    pub fn scalar(scope: &Scope, value: T) -> OpResult<Constant<T>> {
        Constant::create(scope, ArrayD::from_elem(IxDyn(&[]), value))
    }

    /// The constant's output.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement> Operand<T> for Constant<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}

/// A value fed when the graph runs, with a static shape that may be partly unknown.
#[derive(Debug, Clone)]
pub struct Placeholder<T> {
    output: Output<T>,
}

impl<T: TensorElement> Placeholder<T> {
    /// A placeholder of dtype `T` and static shape `shape` (`Shape::unknown()` for any).
    pub fn create(scope: &Scope, shape: Shape) -> OpResult<Placeholder<T>> {
        let output = scope.placeholder(T::DTYPE, shape)?;
        Ok(Placeholder {
            output: scope.output(output.node),
        })
    }

    /// The placeholder's output.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement> Operand<T> for Placeholder<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

/// Element types of Gather's `axis` operand: `i32` and `i64`, as TensorFlow's `Taxis`.
pub trait AxisType: TensorElement + Copy + sealed::Sealed {
    /// The value as `i64`.
    fn to_i64(self) -> i64;
}

impl AxisType for i32 {
    fn to_i64(self) -> i64 {
        self as i64
    }
}

impl AxisType for i64 {
    fn to_i64(self) -> i64 {
        self
    }
}

/// Options of [`Gather`] (TF Java's `Gather.Options`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GatherOpOptions {
    /// The core's options (the axis comes from the op's `axis` operand).
    pub(super) gather: GatherOptions,
}

impl GatherOpOptions {
    /// Default options (`batch_dims = 0`).
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of batch dimensions (TF Java's `Gather.batchDims`).
    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.gather = self.gather.batch_dims(batch_dims);
        self
    }

    /// What to do with bad indices (beyond TF Java, as [`GatherNdOpOptions::bad_indices`]).
    pub fn bad_indices(mut self, policy: BadIndices) -> Self {
        self.gather = self.gather.bad_indices(policy);
        self
    }

    /// The value `BadIndices::Fill` writes (by default JAX's for the element type).
    pub fn fill_value(mut self, value: FillValue) -> Self {
        self.gather = self.gather.fill_value(value);
        self
    }
}

/// `GatherV2`: slices of `params` along `axis` at `indices`.
#[derive(Debug, Clone)]
pub struct Gather<T> {
    output: Output<T>,
}

impl<T: TensorElement> Gather<T> {
    /// TensorFlow's name of the op.
    pub const OP_NAME: &'static str = "GatherV2";

    /// Creates the op. Shapes are checked and the output's static shape inferred now, with
    /// TensorFlow's messages; in an eager scope the op also runs now.
    pub fn create<I, A>(
        scope: &Scope,
        params: &impl Operand<T>,
        indices: &impl Operand<I>,
        axis: &impl Operand<A>,
        options: GatherOpOptions,
    ) -> OpResult<Gather<T>>
    where
        I: IndexType + TensorElement,
        A: AxisType,
    {
        let (p, i, a) = (params.as_output(), indices.as_output(), axis.as_output());
        let output = scope.gather(&p.erase(), &i.erase(), &a.erase(), options)?;
        Ok(Gather {
            output: scope.output(output.node),
        })
    }

    /// Values from `params` gathered at `indices` along `axis`.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement> Operand<T> for Gather<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}

/// Options of [`GatherNd`] (TF Java's `GatherNd.Options`, with Python's `batch_dims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GatherNdOpOptions {
    /// The core's options.
    pub(super) gather_nd: GatherNdOptions,
}

impl GatherNdOpOptions {
    /// Default options (`batch_dims = 0`, bad indices are errors).
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of batch dimensions (TensorFlow's Python `tf.gather_nd`).
    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.gather_nd = self.gather_nd.batch_dims(batch_dims);
        self
    }

    /// What to do with bad indices: TF Java's `GatherNd.badIndicesPolicy`, under the name the
    /// other front ends use.
    pub fn bad_indices(mut self, policy: BadIndices) -> Self {
        self.gather_nd = self.gather_nd.bad_indices(policy);
        self
    }

    /// The value `BadIndices::Fill` writes (by default JAX's for the element type).
    pub fn fill_value(mut self, value: FillValue) -> Self {
        self.gather_nd = self.gather_nd.fill_value(value);
        self
    }
}

/// `GatherNd`: slices of `params` addressed by the index vectors of `indices`.
#[derive(Debug, Clone)]
pub struct GatherNd<T> {
    output: Output<T>,
}

impl<T: TensorElement> GatherNd<T> {
    /// TensorFlow's name of the op.
    pub const OP_NAME: &'static str = "GatherNd";

    /// Creates the op (TF Java's `GatherNd.create(scope, params, indices, options)`). Shapes
    /// are checked and the output's static shape inferred now; in an eager scope the op
    /// also runs now.
    pub fn create<I>(
        scope: &Scope,
        params: &impl Operand<T>,
        indices: &impl Operand<I>,
        options: GatherNdOpOptions,
    ) -> OpResult<GatherNd<T>>
    where
        I: IndexType + TensorElement,
    {
        let (p, i) = (params.as_output(), indices.as_output());
        let output = scope.gather_nd(&p.erase(), &i.erase(), options)?;
        Ok(GatherNd {
            output: scope.output(output.node),
        })
    }

    /// Values from `params` gathered from indices given by `indices`, with shape
    /// `indices.shape[:-1] + params.shape[indices.shape[-1]:]`.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement> Operand<T> for GatherNd<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}

/// `TakeAlongAxis` (NumPy's `take_along_axis`, ONNX's `GatherElements`): each output element
/// reads `arr` at its own position, except along `axis`, where it reads at the index.
#[derive(Debug, Clone)]
pub struct TakeAlongAxis<T> {
    output: Output<T>,
}

impl<T: TensorElement> TakeAlongAxis<T> {
    /// The op's name.
    pub const OP_NAME: &'static str = "TakeAlongAxis";

    /// Creates the op with the core's options (the axis among them). Shapes are checked and
    /// the output's static shape inferred now where both are known; in an eager scope the op
    /// also runs now.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndgather::graph::{Constant, Scope, TakeAlongAxis};
    /// use ndgather::TakeAlongAxisOptions;
    ///
    /// let scope = Scope::eager();
    /// let scores = Constant::create(&scope, array![[10, 30, 20], [60, 40, 50]].into_dyn())?;
    /// let top = Constant::create(&scope, array![[1i64], [0]].into_dyn())?;
    /// let best = TakeAlongAxis::create(&scope, &scores, &top, TakeAlongAxisOptions::new(1))?;
    /// assert_eq!(best.output().value().unwrap(), array![[30], [60]].into_dyn());
    /// # Ok::<(), ndgather::graph::OpError>(())
    /// ```
    pub fn create<I>(
        scope: &Scope,
        arr: &impl Operand<T>,
        indices: &impl Operand<I>,
        options: TakeAlongAxisOptions,
    ) -> OpResult<TakeAlongAxis<T>>
    where
        I: IndexType + TensorElement,
    {
        let (p, i) = (arr.as_output(), indices.as_output());
        let output = scope.take_along_axis(&p.erase(), &i.erase(), options)?;
        Ok(TakeAlongAxis {
            output: scope.output(output.node),
        })
    }

    /// The values taken along the axis, of the broadcast shape of `arr` and `indices`.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement> Operand<T> for TakeAlongAxis<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}
