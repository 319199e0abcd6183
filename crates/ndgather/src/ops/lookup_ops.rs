//! The embedding ops' contract: `embedding_lookup`, `embedding_lookup_sparse` and
//! `embedding_bag`, over a table given as a list of shards.

use crate::ops::contract::{
    count_error, deliver_value, AttrDef, AttrKind, Attrs, Fact, Input, InputDef, InputKind, Inputs,
    Linear, OpDef, Parsed, Signature, Value, BAD_INDICES,
};
use crate::ops::embedding::{Combiner, EmbeddingLookupOptions, PartitionStrategy};
use crate::ops::embedding_bag::{BagGrad, BagMode, EmbeddingBag};
use crate::ops::Out;
use crate::shape::Shape;
use crate::types::dtype::{Tensor, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::BadIndices;

pub(crate) const PARAMS: InputDef = InputDef::new(
    "params",
    InputKind::List,
    "the table's shards, of one float dtype",
);
pub(crate) const STRATEGY: AttrDef = AttrDef::with_default(
    "partition_strategy",
    AttrKind::Str(&["mod", "div"]),
    "mod",
    "how rows are spread over the shards",
);
pub(crate) const MAX_NORM: AttrDef = AttrDef::optional(
    "max_norm",
    AttrKind::Float,
    "rows of a larger L2 norm are scaled down to it",
);

/// The shared attributes of a lookup.
pub(crate) fn lookup_of(a: &Parsed<'_>) -> Result<EmbeddingLookupOptions> {
    let strategy = PartitionStrategy::from_name(a.str("partition_strategy", "mod"))
        .ok_or(Error::Internal("choices checked by the signature"))?;
    Ok(EmbeddingLookupOptions::new()
        .partition_strategy(strategy)
        .max_norm(a.opt_float("max_norm")))
}

/// The static shape of a lookup: `lead` (the ids' dims, or the batch's) then the rows' dims
/// of the first shard (`first`).
pub(crate) fn lookup_shape(lead: Option<Vec<Option<usize>>>, first: &Shape) -> Shape {
    match (lead, first.dims()) {
        (Some(mut dims), Some(row)) if !row.is_empty() => {
            dims.extend_from_slice(&row[1..]);
            Shape::from_dims(dims)
        }
        _ => Shape::unknown(),
    }
}

/// Checks what facts tell of a lookup's dtypes: ids of an integer dtype, a table (and any
/// weights, `also`) of one float dtype.
fn check_lookup_dtypes(op: &'static str, ids: &Fact, table: &Fact, also: &[&Fact]) -> Result<()> {
    if let Some(dtype) = ids.dtype.filter(|d| !d.is_index()) {
        return Err(Error::IndicesNotInteger { dtype });
    }
    if let Some(dtype) = table.dtype {
        if !dtype.is_real() {
            return Err(crate::ops::embedding::table_dtype(op, dtype));
        }
        if let Some(found) = also.iter().filter_map(|f| f.dtype).find(|&d| d != dtype) {
            return Err(Error::DTypeMismatch {
                expected: dtype,
                found,
            });
        }
    }
    Ok(())
}

/// The dtype of a list of shards' facts: the first shard's.
pub(crate) fn shards_dtype(
    op: &dyn OpDef,
    inputs: &[Fact],
    count: usize,
) -> Result<Option<crate::DType>> {
    if inputs.len() != count {
        return Err(count_error(op, inputs.len()));
    }
    Ok(inputs[0].dtype)
}

pub(crate) const LOOKUP: Signature = Signature {
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
    /// Linear in the shards, where no `max_norm` scales a row by its norm.
    fn linear(&self) -> Option<Linear> {
        self.bag_max_norm()
            .map_or_else(|| Linear::of(&[0]), |_| None)
    }

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

    fn type_name(&self) -> &'static str {
        "EmbeddingLookup"
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        let dtype = shards_dtype(self, inputs, 2)?;
        let (table, ids) = (&inputs[0], &inputs[1]);
        check_lookup_dtypes(self.name(), ids, table, &[])?;
        let lead = ids.shape.dims().map(<[_]>::to_vec);
        Ok(Fact::new(dtype, lookup_shape(lead, &table.shape)))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let result = self.lookup_views(inputs.list(0)?, inputs.tensor(1)?, None)?;
        deliver_value(self.name(), result, out)
    }

    fn has_grad(&self) -> bool {
        true
    }

    fn grad_reads_output(&self) -> bool {
        false
    }

    /// A dense gradient per shard (TensorFlow's `IndexedSlices` summed in the ids' order,
    /// as `tf.convert_to_tensor` of them does), then none for the ids.
    fn grad(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let grads =
            self.lookup_views(inputs.list(0)?, inputs.tensor(1)?, Some((upstream, false)))?;
        let Value::List(per_shard) = grads else {
            return Err(Error::Internal("a dense gradient per shard"));
        };
        Ok(per_shard.into_iter().map(Some).chain([None]).collect())
    }
}

/// `tf.nn.embedding_lookup_sparse` as a value of the registry: a lookup and its combiner.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct LookupSparse {
    pub(crate) lookup: EmbeddingLookupOptions,
    pub(crate) combiner: Combiner,
}

pub(crate) const LOOKUP_SPARSE: Signature = Signature {
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

impl LookupSparse {
    /// The op of parsed attributes.
    pub(crate) fn parsed(a: &Parsed<'_>) -> Result<LookupSparse> {
        let combiner = Combiner::from_name(a.str("combiner", "mean"))
            .ok_or(Error::Internal("choices checked by the signature"))?;
        Ok(LookupSparse {
            lookup: lookup_of(a)?,
            combiner,
        })
    }

    /// The lookup, or with `grad` its gradient, on inputs in the forward op's order with
    /// the weights' three from input `weights` on.
    pub(crate) fn run_views(
        &self,
        inputs: &Inputs<'_, '_>,
        weights: usize,
        grad: Option<&TensorView<'_>>,
    ) -> Result<Value> {
        let ids = [1, 2, 3].map(|k| inputs.tensor(k).cloned());
        let [indices, values, dense_shape] = ids;
        // The weights' indices, values and dense shape, as the views take them.
        let sp_weights = [1, 0, 2].map(|k| inputs.optional(weights + k).cloned());
        self.lookup.lookup_sparse_views(
            inputs.list(0)?,
            [indices?, values?, dense_shape?],
            sp_weights,
            self.combiner,
            grad,
        )
    }
}

impl OpDef for LookupSparse {
    /// Linear in the shards, the weights held (a mean divides by their sum), where no
    /// `max_norm` scales a row by its norm.
    fn linear(&self) -> Option<Linear> {
        self.lookup.linear()
    }

    /// A sum is linear in the shards and, apart, in the weights' values.
    fn multilinear(&self) -> Vec<Linear> {
        match (self.combiner, self.lookup.linear()) {
            (Combiner::Sum, Some(_)) => [0, 4].iter().filter_map(|&k| Linear::of(&[k])).collect(),
            _ => Vec::new(),
        }
    }

    fn type_name(&self) -> &'static str {
        "EmbeddingLookupSparse"
    }

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
        Ok(Box::new(LookupSparse::parsed(&a)?))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        let dtype = shards_dtype(self, inputs, LOOKUP_SPARSE.inputs.len())?;
        // A row per batch row: `dense_shape[0]`, where it is a known constant.
        let batch = inputs[3].values.as_ref().and_then(|v| v.first().copied());
        let batch = batch.and_then(|b| usize::try_from(b).ok());
        Ok(Fact::new(
            dtype,
            lookup_shape(Some(vec![batch]), &inputs[0].shape),
        ))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        deliver_value(self.name(), self.run_views(&inputs, 4, None)?, out)
    }
}

pub(crate) const BAG: Signature = Signature {
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
        // Free text: the op checks it in PyTorch's words.
        AttrDef::with_default(
            "mode",
            AttrKind::Str(&[]),
            "mean",
            "how a bag's rows reduce: sum, mean or max",
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

/// The `embedding_bag` of parsed attributes.
pub(crate) fn bag_of(a: &Parsed<'_>) -> Result<EmbeddingBag> {
    let mode = BagMode::from_name(a.str("mode", "mean"))
        .ok_or_else(|| Error::TorchValue("mode has to be one of sum, mean or max".into()))?;
    let strategy = PartitionStrategy::from_name(a.str("partition_strategy", "mod"))
        .ok_or(Error::Internal("choices checked by the signature"))?;
    Ok(EmbeddingBag::new(mode)
        .partition_strategy(strategy)
        .max_norm(a.opt_float("max_norm"))
        .padding_idx(a.opt_int("padding_idx"))
        .include_last_offset(a.flag("include_last_offset", false))
        .bad_indices(a.policy(BadIndices::Error)?))
}

impl OpDef for EmbeddingBag {
    /// A sum or a mean is linear in the shards, `per_sample_weights` held, where no
    /// `max_norm` scales a row by its norm; a max is not.
    fn linear(&self) -> Option<Linear> {
        self.sums().then(|| Linear::of(&[0])).flatten()
    }

    /// A sum is linear in the shards and, apart, in `per_sample_weights`.
    fn multilinear(&self) -> Vec<Linear> {
        match self.weighted_sum() {
            true => [0, 3].iter().filter_map(|&k| Linear::of(&[k])).collect(),
            false => Vec::new(),
        }
    }

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
        Ok(Box::new(bag_of(&a)?))
    }

    fn type_name(&self) -> &'static str {
        "EmbeddingBag"
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        let dtype = shards_dtype(self, inputs, 4)?;
        let [table, input, offsets, weights] = inputs else {
            return Err(count_error(self, inputs.len()));
        };
        check_lookup_dtypes(self.name(), input, table, &[weights])?;
        if let (Some(i), Some(o)) = (input.dtype, offsets.dtype) {
            if o != i {
                return Err(Error::DTypeMismatch {
                    expected: i,
                    found: o,
                });
            }
        }
        // The bags: a 2-d input's rows, or the offsets' entries (less the last, where it
        // ends the input).
        let last = usize::from(self.includes_last_offset());
        let bags = match (input.shape.dims(), offsets.shape.dims(), offsets.dtype) {
            (Some([b, _]), _, None) => *b,
            (_, Some([n]), Some(_)) => n.map(|n| n.saturating_sub(last)),
            _ => None,
        };
        Ok(Fact::new(
            dtype,
            lookup_shape(Some(vec![bags]), &table.shape),
        ))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (offsets, weights) = (inputs.optional(2), inputs.optional(3));
        let result = self.bag_views(inputs.list(0)?, inputs.tensor(1)?, offsets, weights, None)?;
        deliver_value(self.name(), result, out)
    }

    fn has_grad(&self) -> bool {
        true
    }

    fn grad_reads_output(&self) -> bool {
        false
    }

    /// A dense gradient per shard (`embedding_bag_grad`'s), none for the ids and offsets,
    /// and `per_sample_weights`' own where they are given (PyTorch's).
    fn grad(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (shards, ids) = (inputs.list(0)?, inputs.tensor(1)?);
        let (offsets, weights) = (inputs.optional(2), inputs.optional(3));
        // One plan for the shards' gradients and the weights' (last, where given).
        let grad = Some((upstream, BagGrad::DenseAndWeights));
        let Value::List(mut per_shard) = self.bag_views(shards, ids, offsets, weights, grad)?
        else {
            return Err(Error::Internal("a dense gradient per shard"));
        };
        let d_weights = match weights {
            Some(_) => per_shard.pop(),
            None => None,
        };
        Ok(per_shard
            .into_iter()
            .map(Some)
            .chain([None, None, d_weights])
            .collect())
    }
}
