//! The lookups' gradients as ops of the registry: `embedding_lookup_grad`,
//! `embedding_lookup_sparse_grad` and `embedding_bag_grad`. Each takes the forward op's
//! inputs and attributes, with the upstream gradient `grad` after its required inputs, and
//! gives the gradient with respect to each of the table's shards: one `IndexedSlices` per
//! shard ([`Value::Sparse`]), or for `embedding_bag` with `sparse=false` one dense tensor
//! per shard ([`Value::List`]), as PyTorch gives either.
//!
//! ```
//! use ndgather::registry::{self, Input, Value};
//! use ndgather::{Out, Tensor};
//!
//! let op = registry::find("embedding_lookup_grad")?;
//! let table = Tensor::from_shape_vec(&[3, 2], vec![0.0f32; 6])?;
//! let ids = Tensor::from_shape_vec(&[2], vec![2i64, 0])?;
//! let grad = Tensor::from_shape_vec(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0])?;
//! let inputs = [Input::List(vec![table.view()]), Input::Tensor(ids.view()), Input::Tensor(grad.view())];
//! let Some(Value::Sparse(shards)) = op.run(&inputs, Out::New)? else { unreachable!() };
//! assert_eq!((shards[0].indices.as_slice(), shards[0].dense_shape.as_slice()), (&[2, 0][..], &[3, 2][..]));
//! # Ok::<(), ndgather::Error>(())
//! ```

use crate::ops::contract::{
    deliver_value, AttrDef, AttrKind, Attrs, Fact, Input, InputDef, InputKind, Inputs, Linear,
    OpDef, Parsed, Signature, Value,
};
use crate::ops::embedding::EmbeddingLookupOptions;
use crate::ops::embedding_bag::{BagGrad, BagMode, EmbeddingBag};
use crate::ops::lookup_ops::{
    bag_of, lookup_of, shards_dtype, LookupSparse, BAG, LOOKUP, LOOKUP_SPARSE,
};
use crate::ops::Out;
use crate::shape::Shape;
use crate::types::error::Result;

/// The gradient of a lookup with respect to its table's shards.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LookupGrad {
    /// Of `embedding_lookup`.
    Lookup(EmbeddingLookupOptions),
    /// Of `embedding_lookup_sparse`.
    Sparse(LookupSparse),
    /// Of `embedding_bag`: sparse, or dense.
    Bag(EmbeddingBag, bool),
}

/// The three registered values, at their defaults.
pub(crate) fn lookup_grads() -> [LookupGrad; 3] {
    [
        LookupGrad::Lookup(EmbeddingLookupOptions::new()),
        LookupGrad::Sparse(LookupSparse::default()),
        LookupGrad::Bag(EmbeddingBag::new(BagMode::Mean), false),
    ]
}

const GRAD: InputDef = InputDef::new(
    "grad",
    InputKind::Tensor,
    "the upstream gradient, of the forward result's shape and the table's dtype",
);

const LOOKUP_GRAD_INPUTS: [InputDef; 3] = [LOOKUP.inputs[0], LOOKUP.inputs[1], GRAD];

/// The sparse lookup's inputs, the gradient after the ids and before the optional weights.
const SPARSE_GRAD_INPUTS: [InputDef; 8] = {
    let f = LOOKUP_SPARSE.inputs;
    [f[0], f[1], f[2], f[3], GRAD, f[4], f[5], f[6]]
};

/// The bag's inputs, the gradient after the ids and before the optional offsets and weights.
const BAG_GRAD_INPUTS: [InputDef; 5] = {
    let f = BAG.inputs;
    [f[0], f[1], GRAD, f[2], f[3]]
};

/// The bag's attributes, with PyTorch's `sparse`.
const BAG_GRAD_ATTRS: [AttrDef; 7] = {
    let a = BAG.attrs;
    [
        a[0],
        a[1],
        a[2],
        a[3],
        a[4],
        a[5],
        AttrDef::with_default(
            "sparse",
            AttrKind::Bool,
            "false",
            "one IndexedSlices per shard, rather than a dense gradient per shard",
        ),
    ]
};

impl OpDef for LookupGrad {
    /// A gradient is linear in the upstream gradient, the table held (a `max_norm`'s scale
    /// and a max's choice of rows come from it).
    fn linear(&self) -> Option<Linear> {
        Linear::in_input(self, "grad")
    }

    fn name(&self) -> &'static str {
        match self {
            LookupGrad::Lookup(_) => "embedding_lookup_grad",
            LookupGrad::Sparse(_) => "embedding_lookup_sparse_grad",
            LookupGrad::Bag(..) => "embedding_bag_grad",
        }
    }

    fn summary(&self) -> &'static str {
        match self {
            LookupGrad::Lookup(_) => "the gradient of embedding_lookup with respect to the shards",
            LookupGrad::Sparse(_) => {
                "the gradient of embedding_lookup_sparse with respect to the shards"
            }
            LookupGrad::Bag(..) => "the gradient of embedding_bag with respect to the shards",
        }
    }

    fn signature(&self) -> Signature {
        match self {
            LookupGrad::Lookup(_) => Signature {
                inputs: &LOOKUP_GRAD_INPUTS,
                attrs: LOOKUP.attrs,
            },
            LookupGrad::Sparse(_) => Signature {
                inputs: &SPARSE_GRAD_INPUTS,
                attrs: LOOKUP_SPARSE.attrs,
            },
            LookupGrad::Bag(..) => Signature {
                inputs: &BAG_GRAD_INPUTS,
                attrs: &BAG_GRAD_ATTRS,
            },
        }
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        Ok(Box::new(match self {
            LookupGrad::Lookup(_) => LookupGrad::Lookup(lookup_of(&a)?),
            LookupGrad::Sparse(_) => LookupGrad::Sparse(LookupSparse::parsed(&a)?),
            LookupGrad::Bag(..) => LookupGrad::Bag(bag_of(&a)?, a.flag("sparse", false)),
        }))
    }

    fn one_result(&self) -> bool {
        false
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        // The result is one gradient per shard, each of the table's dtype.
        Ok(Fact::new(
            shards_dtype(self, inputs, self.signature().inputs.len())?,
            Shape::unknown(),
        ))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let result = match self {
            LookupGrad::Lookup(o) => o.lookup_views(
                inputs.list(0)?,
                inputs.tensor(1)?,
                Some((inputs.tensor(2)?, true)),
            )?,
            LookupGrad::Sparse(s) => s.run_views(&inputs, 5, Some(inputs.tensor(4)?))?,
            LookupGrad::Bag(bag, sparse) => bag.bag_views(
                inputs.list(0)?,
                inputs.tensor(1)?,
                inputs.optional(3),
                inputs.optional(4),
                Some((
                    inputs.tensor(2)?,
                    if *sparse {
                        BagGrad::Sparse
                    } else {
                        BagGrad::Dense
                    },
                )),
            )?,
        };
        deliver_value(self.name(), result, out)
    }
}
