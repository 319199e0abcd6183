//! The embedding ops' contract: `embedding_lookup`, `embedding_lookup_sparse` and
//! `embedding_bag`, over a table given as a list of shards.

use crate::ops::contract::{
    count_error, deliver, AttrDef, AttrKind, Attrs, Fact, Input, InputDef, InputKind, Inputs,
    OpDef, Parsed, Signature, Value, BAD_INDICES,
};
use crate::ops::embedding::{Combiner, EmbeddingLookupOptions, PartitionStrategy};
use crate::ops::embedding_bag::{BagMode, EmbeddingBag};
use crate::ops::Out;
use crate::shape::Shape;
use crate::types::error::{Error, Result};
use crate::types::index::BadIndices;

const PARAMS: InputDef = InputDef::new(
    "params",
    InputKind::List,
    "the table's shards, of one float dtype",
);
const STRATEGY: AttrDef = AttrDef::with_default(
    "partition_strategy",
    AttrKind::Str(&["mod", "div"]),
    "mod",
    "how rows are spread over the shards",
);
const MAX_NORM: AttrDef = AttrDef::optional(
    "max_norm",
    AttrKind::Float,
    "rows of a larger L2 norm are scaled down to it",
);

/// The shared attributes of a lookup.
fn lookup_of(a: &Parsed<'_>) -> Result<EmbeddingLookupOptions> {
    let strategy = PartitionStrategy::from_name(a.str("partition_strategy", "mod"))
        .ok_or(Error::Internal("choices checked by the signature"))?;
    Ok(EmbeddingLookupOptions::new()
        .partition_strategy(strategy)
        .max_norm(a.opt_float("max_norm")))
}

/// The dtype of a list of shards' facts: the first shard's.
fn shards_dtype(op: &dyn OpDef, inputs: &[Fact], count: usize) -> Result<Option<crate::DType>> {
    if inputs.len() != count {
        return Err(count_error(op, inputs.len()));
    }
    Ok(inputs[0].dtype)
}

const LOOKUP: Signature = Signature {
    inputs: &[
        PARAMS,
        InputDef::new("ids", InputKind::Tensor, "the rows to look up"),
    ],
    attrs: &[STRATEGY, MAX_NORM],
};

/// The registered value of `embedding_lookup`.
pub(crate) fn lookup_op() -> EmbeddingLookupOptions {
    EmbeddingLookupOptions::new()
}

impl OpDef for EmbeddingLookupOptions {
    fn name(&self) -> &'static str {
        "embedding_lookup"
    }

    fn summary(&self) -> &'static str {
        "tf.nn.embedding_lookup: rows of a sharded table"
    }

    fn signature(&self) -> Signature {
        LOOKUP
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        Ok(Box::new(lookup_of(&a)?))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        let dtype = shards_dtype(self, inputs, 2)?;
        Ok(Fact {
            dtype,
            shape: Shape::unknown(),
        })
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        deliver(
            self.name(),
            self.lookup_views(inputs.list(0)?, inputs.tensor(1)?)?,
            out,
        )
    }
}

/// `tf.nn.embedding_lookup_sparse` as a value of the registry: a lookup and its combiner.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct LookupSparse {
    pub(crate) lookup: EmbeddingLookupOptions,
    pub(crate) combiner: Combiner,
}

const LOOKUP_SPARSE: Signature = Signature {
    inputs: &[
        PARAMS,
        InputDef::new(
            "sp_ids_indices",
            InputKind::Tensor,
            "the sparse ids' indices, an int64 matrix",
        ),
        InputDef::new(
            "sp_ids_values",
            InputKind::Tensor,
            "the sparse ids' values, of an integer dtype",
        ),
        InputDef::new(
            "sp_ids_dense_shape",
            InputKind::Tensor,
            "the sparse ids' dense shape, int64",
        ),
        InputDef::new(
            "sp_weights_values",
            InputKind::Optional,
            "a weight per id, of the table's dtype",
        ),
        InputDef::new(
            "sp_weights_indices",
            InputKind::Optional,
            "the weights' indices, which must be the ids' (none: the ids')",
        ),
        InputDef::new(
            "sp_weights_dense_shape",
            InputKind::Optional,
            "the weights' dense shape, whose batch size must be the ids' (none: the ids')",
        ),
    ],
    attrs: &[
        AttrDef::with_default(
            "combiner",
            AttrKind::Str(&["mean", "sqrtn", "sum"]),
            "mean",
            "how a row's embeddings combine",
        ),
        STRATEGY,
        MAX_NORM,
    ],
};

impl OpDef for LookupSparse {
    fn name(&self) -> &'static str {
        "embedding_lookup_sparse"
    }

    fn summary(&self) -> &'static str {
        "tf.nn.embedding_lookup_sparse: sparse rows of ids, combined per row"
    }

    fn signature(&self) -> Signature {
        LOOKUP_SPARSE
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        let combiner = Combiner::from_name(a.str("combiner", "mean"))
            .ok_or(Error::Internal("choices checked by the signature"))?;
        Ok(Box::new(LookupSparse {
            lookup: lookup_of(&a)?,
            combiner,
        }))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        Ok(Fact {
            dtype: shards_dtype(self, inputs, LOOKUP_SPARSE.inputs.len())?,
            shape: Shape::unknown(),
        })
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let sparse = [
            inputs.tensor(1)?.clone(),
            inputs.tensor(2)?.clone(),
            inputs.tensor(3)?.clone(),
        ];
        let weights = [5, 4, 6].map(|k| inputs.optional(k).cloned());
        deliver(
            self.name(),
            self.lookup
                .lookup_sparse_views(inputs.list(0)?, sparse, weights, self.combiner)?,
            out,
        )
    }
}

const BAG: Signature = Signature {
    inputs: &[
        InputDef::new(
            "weight",
            InputKind::List,
            "the table's shards, of one float dtype",
        ),
        InputDef::new(
            "input",
            InputKind::Tensor,
            "the ids: bags of a 2-d input, or flat",
        ),
        InputDef::new(
            "offsets",
            InputKind::Optional,
            "where each bag starts in a 1-d input",
        ),
        InputDef::new(
            "per_sample_weights",
            InputKind::Optional,
            "a weight per id (mode sum)",
        ),
    ],
    attrs: &[
        AttrDef::with_default(
            "mode",
            AttrKind::Str(&["sum", "mean", "max"]),
            "mean",
            "how a bag's rows reduce",
        ),
        MAX_NORM,
        AttrDef::optional(
            "padding_idx",
            AttrKind::Int,
            "an id whose rows are left out of every bag",
        ),
        AttrDef::with_default(
            "include_last_offset",
            AttrKind::Bool,
            "false",
            "whether offsets ends with the input's size",
        ),
        STRATEGY,
        BAD_INDICES,
    ],
};

impl OpDef for EmbeddingBag {
    fn name(&self) -> &'static str {
        "embedding_bag"
    }

    fn summary(&self) -> &'static str {
        "torch.nn.functional.embedding_bag: rows reduced per bag"
    }

    fn signature(&self) -> Signature {
        BAG
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        let mode = BagMode::from_name(a.str("mode", "mean"))
            .ok_or(Error::Internal("choices checked by the signature"))?;
        let strategy = PartitionStrategy::from_name(a.str("partition_strategy", "mod"))
            .ok_or(Error::Internal("choices checked by the signature"))?;
        Ok(Box::new(
            EmbeddingBag::new(mode)
                .partition_strategy(strategy)
                .max_norm(a.opt_float("max_norm"))
                .padding_idx(a.opt_int("padding_idx"))
                .include_last_offset(a.flag("include_last_offset", false))
                .bad_indices(a.policy(BadIndices::Error)?),
        ))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        Ok(Fact {
            dtype: shards_dtype(self, inputs, 4)?,
            shape: Shape::unknown(),
        })
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        deliver(
            self.name(),
            self.bag_views(
                inputs.list(0)?,
                inputs.tensor(1)?,
                inputs.optional(2),
                inputs.optional(3),
            )?,
            out,
        )
    }
}
