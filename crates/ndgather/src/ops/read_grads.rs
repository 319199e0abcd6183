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
    count_error, deliver, AttrDef, AttrKind, Attrs, Fact, Input, InputDef, InputKind, Inputs,
    OpDef, Parsed, Signature, Value, BAD_INDICES,
};
use crate::ops::read_ops::{
    ALONG_AXIS, BATCH_DIMS, GATHER_AXIS, GATHER_ND_OP, GATHER_OP, TAKE_ALONG_AXIS_OP,
};
use crate::ops::{Op, Out};
use crate::shape::Shape;
use crate::types::error::{Error, Result};
use crate::with_dtype;

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
        let attrs: &'static [AttrDef] = match self.forward {
            Op::Gather(_) => &[PARAMS_SHAPE, GATHER_AXIS, BATCH_DIMS, BAD_INDICES],
            Op::GatherNd(_) => &[PARAMS_SHAPE, BATCH_DIMS, BAD_INDICES],
            Op::TakeAlongAxis(_) => &[ARR_SHAPE, ALONG_AXIS, BAD_INDICES],
        };
        Signature {
            inputs: &[INDICES, GRAD],
            attrs,
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
        let [indices, grad] = inputs else {
            return Err(count_error(self, inputs.len()));
        };
        if let Some(dtype) = indices.dtype {
            with_dtype!(dtype, index _I => {}, else return Err(Error::IndicesNotInteger { dtype }));
        }
        Ok(Fact {
            dtype: grad.dtype,
            shape: Shape::known(&self.params_shape),
        })
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (indices, grad) = (inputs.tensor(0)?, inputs.tensor(1)?);
        let result = self
            .forward
            .params_grad(self.name(), &self.params_shape, indices, grad)?;
        deliver(self.name(), result, out)
    }
}
