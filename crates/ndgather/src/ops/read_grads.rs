//! The read ops' gradients as ops of the registry: `gather_grad`, `gather_nd_grad` and
//! `take_along_axis_grad`, each the gradient with respect to params of the forward op with
//! the same attributes, from params' shape alone (its values are never read). A front end
//! that has no graph (the Python functions, the CLI) reaches them by name; a graph takes the
//! forward op's own [`OpDef::grad`], which computes the same.
//!
//! ```
//! use ndgather::registry::{self, Attr, Attrs, Input};
//! use ndgather::{Out, Tensor};
//!
//! let op = registry::find("gather_grad")?.with_attrs(
//!     &Attrs::new().with("params_shape", Attr::Ints(vec![2, 3])).with("axis", Attr::Int(1)),
//! )?;
//! let indices = Tensor::from_shape_vec(&[3], vec![2i64, 2, 0])?;
//! let upstream = Tensor::from_shape_vec(&[2, 3], vec![1.0f64; 6])?;
//! let inputs = [Input::Tensor(indices.view()), Input::Tensor(upstream.view())];
//! let g = op.run(&inputs, Out::New)?.unwrap().into_dense()?;
//! assert_eq!(g, Tensor::from_shape_vec(&[2, 3], vec![1.0f64, 0.0, 2.0, 1.0, 0.0, 2.0])?);
//! # Ok::<(), ndgather::Error>(())
//! ```

use crate::ops::contract::{
    count_error, deliver, deliver_value, AttrDef, AttrKind, Attrs, Fact, Input, InputDef,
    InputKind, Inputs, Linear, OpDef, Parsed, Signature, SparseGrad, Value, BAD_INDICES,
};
use crate::ops::read_ops::{
    ALONG_AXIS, BATCH_DIMS, GATHER_AXIS, GATHER_ND_OP, GATHER_OP, TAKE_ALONG_AXIS_OP,
};
use crate::ops::{Op, Out};
use crate::shape::Shape;
use crate::types::dtype::TensorView;
use crate::types::error::{Error, Result};
use crate::types::ragged::{RaggedView, RowSplits};
use crate::{with_dtype, with_tensor, RaggedOperand};
use ndarray::IxDyn;

/// The gradient of a read op with respect to params of a given shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadGrad {
    forward: Op,
    params_shape: Vec<usize>,
}

/// The three registered values, each with an empty params shape until configured.
pub(crate) fn read_grads() -> [ReadGrad; 3] {
    [GATHER_OP, GATHER_ND_OP, TAKE_ALONG_AXIS_OP].map(|forward| ReadGrad {
        forward,
        params_shape: Vec::new(),
    })
}

const INDICES: InputDef = InputDef::new(
    "indices",
    InputKind::Tensor,
    "the forward op's indices, of an integer dtype",
);
const MAYBE_RAGGED_INDICES: InputDef = InputDef::new(
    "indices",
    InputKind::MaybeRagged,
    "the forward op's indices, of an integer dtype, dense or ragged",
);
const PARAMS_ROW_SPLITS: InputDef = InputDef::new(
    "params_row_splits",
    InputKind::OptionalList,
    "a ragged params' row splits, params_shape its flat values' shape: given (even none), \
     the gradient is over the flat values, sparse",
);
const GRAD: InputDef = InputDef::new(
    "grad",
    InputKind::Tensor,
    "the upstream gradient, of the forward output's shape",
);
const PARAMS_SHAPE: AttrDef = AttrDef::required(
    "params_shape",
    AttrKind::Ints,
    "the shape of the forward op's params",
);
const ARR_SHAPE: AttrDef = AttrDef::required(
    "arr_shape",
    AttrKind::Ints,
    "the shape of the forward op's arr",
);

impl ReadGrad {
    /// The attribute that gives params' shape: NumPy's name for take_along_axis's.
    fn shape_attr(&self) -> &'static str {
        match self.forward {
            Op::TakeAlongAxis(_) => ARR_SHAPE.name,
            _ => PARAMS_SHAPE.name,
        }
    }
}

impl OpDef for ReadGrad {
    /// A gradient is linear in the upstream gradient.
    fn linear(&self) -> Option<Linear> {
        Linear::in_input(self, GRAD.name)
    }

    fn name(&self) -> &'static str {
        match self.forward {
            Op::Gather(_) => "gather_grad",
            Op::GatherNd(_) => "gather_nd_grad",
            Op::TakeAlongAxis(_) => "take_along_axis_grad",
        }
    }

    fn summary(&self) -> &'static str {
        match self.forward {
            Op::Gather(_) => "the gradient of gather with respect to params",
            Op::GatherNd(_) => "the gradient of gather_nd with respect to params",
            Op::TakeAlongAxis(_) => "the gradient of take_along_axis with respect to arr",
        }
    }

    fn signature(&self) -> Signature {
        match self.forward {
            Op::Gather(_) => Signature {
                inputs: &[MAYBE_RAGGED_INDICES, GRAD, PARAMS_ROW_SPLITS],
                attrs: &[PARAMS_SHAPE, GATHER_AXIS, BATCH_DIMS, BAD_INDICES],
            },
            Op::GatherNd(_) => Signature {
                inputs: &[MAYBE_RAGGED_INDICES, GRAD, PARAMS_ROW_SPLITS],
                attrs: &[PARAMS_SHAPE, BATCH_DIMS, BAD_INDICES],
            },
            Op::TakeAlongAxis(_) => Signature {
                inputs: &[INDICES, GRAD],
                attrs: &[ARR_SHAPE, ALONG_AXIS, BAD_INDICES],
            },
        }
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        Ok(Box::new(ReadGrad {
            forward: self.forward.configured(&a)?,
            params_shape: a.shape(self.shape_attr())?,
        }))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        let (indices, grad) = match (inputs, self.signature().inputs.len()) {
            ([indices, grad], _) | ([indices, grad, _], 3) => (indices, grad),
            _ => return Err(count_error(self, inputs.len())),
        };
        if let Some(dtype) = indices.dtype {
            with_dtype!(dtype, index _I => {}, else return Err(Error::IndicesNotInteger { dtype }));
        }
        Ok(Fact::new(grad.dtype, Shape::known(&self.params_shape)))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let grad = inputs.tensor(1)?;
        // Row splits, an input of gather's and gather_nd's gradients only: given (even none,
        // for a dense params), the gradient is over params' flat values, sparse.
        let splits = match self.signature().inputs.len() > 2 {
            true => match inputs.get(2) {
                Ok(Input::List(splits)) => Some(splits.as_slice()),
                _ => None,
            },
            false => None,
        };
        if let (Input::Tensor(indices), None) = (inputs.get(0)?, splits) {
            let result =
                self.forward
                    .params_grad(self.name(), &self.params_shape, indices, grad)?;
            return deliver(self.name(), result, out);
        }
        // A ragged operand: the gradient of params' flat values, sparse, from their shape
        // (a view of one zero byte stands in for values that are never read).
        // (ndarray sizes a view by its dimensions other than zero.)
        let mut nonzero = self.params_shape.iter().filter(|&&d| d != 0);
        let size = nonzero.try_fold(1usize, |n, &d| n.checked_mul(d));
        if size.is_none_or(|n| n > isize::MAX as usize) {
            return Err(Error::ShapeOverflow {
                what: "params",
                shape: self.params_shape.clone(),
            });
        }
        let splits = splits.unwrap_or_default();
        let zero = ndarray::arr0(0u8).into_dyn();
        let values = zero
            .broadcast(IxDyn(&self.params_shape))
            .ok_or(Error::Internal("a scalar broadcasts to any shape"))?;
        let values = TensorView::from(values);
        let splits = splits
            .iter()
            .map(RowSplits::from_view)
            .collect::<Result<Vec<_>>>()?;
        let params = match splits.is_empty() {
            true => RaggedOperand::from(values),
            false => RaggedOperand::Ragged(RaggedView::new(values, splits)?),
        };
        let indices = match inputs.get(0)? {
            Input::Ragged(r) => RaggedOperand::Ragged(r.clone()),
            Input::Tensor(t) => RaggedOperand::from(t.clone()),
            _ => return Err(Error::Internal("inputs checked against the signature")),
        };
        let op = self.name();
        let slices = with_tensor!(TensorView, grad,
            number g => SparseGrad::from(self.forward.ragged_grad(params, indices, g)?),
            else dtype => return Err(Error::NoKernel {
                op, dtype, supported: crate::DType::names_where(crate::DType::is_number) }));
        deliver_value(op, Value::Sparse(vec![slices]), out)
    }
}
