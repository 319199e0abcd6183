//! The embedding ops: `EmbeddingLookup` (TensorFlow's `tf.nn.embedding_lookup`) and
//! `EmbeddingLookupSparse` (`tf.nn.embedding_lookup_sparse`), in the style of
//! [`super::GatherNd`]: shapes inferred at creation, evaluated now in an eager scope or when a
//! [`super::Session`] runs a graph.

use super::op_error::OpResult;
use super::scope::{Operand, Output, Scope};
use crate::ops::embedding::{Combiner, EmbeddingLookupOptions as Lookup, PartitionStrategy, Real};
use crate::types::dtype::TensorElement;
use crate::types::index::IndexType;

/// Options of [`EmbeddingLookup`] and [`EmbeddingLookupSparse`]: the partition strategy,
/// `max_norm`, and for the sparse op the combiner.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EmbeddingOpOptions {
    pub(crate) lookup: Lookup,
    pub(crate) combiner: Combiner,
}

impl EmbeddingOpOptions {
    /// `"mod"`, no `max_norm`, `"mean"`.
    pub fn new() -> Self {
        Self::default()
    }

    /// How ids map to shards (TensorFlow 1's `partition_strategy`).
    pub fn partition_strategy(mut self, strategy: PartitionStrategy) -> Self {
        self.lookup = self.lookup.partition_strategy(strategy);
        self
    }

    /// Clips each looked-up row to this L2 norm.
    pub fn max_norm(mut self, max_norm: Option<f64>) -> Self {
        self.lookup = self.lookup.max_norm(max_norm);
        self
    }

    /// How the sparse op combines a row's embeddings.
    pub fn combiner(mut self, combiner: Combiner) -> Self {
        self.combiner = combiner;
        self
    }
}

/// `EmbeddingLookup`: the rows of `ids` from a table given as its shards.
///
/// ```
/// use ndarray::array;
/// use ndgather::embedding::PartitionStrategy;
/// use ndgather::graph::{Constant, EmbeddingLookup, EmbeddingOpOptions, Operand, Scope};
/// let scope = Scope::eager();
/// let even = Constant::create(&scope, array![[0.0f32], [2.0]].into_dyn()).unwrap();
/// let odd = Constant::create(&scope, array![[1.0f32], [3.0]].into_dyn()).unwrap();
/// let ids = Constant::create(&scope, array![3i64, 0].into_dyn()).unwrap();
/// let options = EmbeddingOpOptions::new().partition_strategy(PartitionStrategy::Mod);
/// let rows = EmbeddingLookup::create(&scope, &[even.as_output(), odd.as_output()], &ids, options).unwrap();
/// assert_eq!(rows.output().value().unwrap(), array![[3.0f32], [0.0]].into_dyn());
/// ```
#[derive(Debug, Clone)]
pub struct EmbeddingLookup<T> {
    output: Output<T>,
}

impl<T: TensorElement + Real> EmbeddingLookup<T> {
    /// The op's name.
    pub const OP_NAME: &'static str = "EmbeddingLookup";

    /// Creates the op: `ids` of `int32` or `int64` into `shards` (one or more tables split
    /// along their first axis).
    ///
    /// # Errors
    /// The lookup's errors ([`crate::Error::BadEmbeddingId`], …) in an eager scope;
    /// [`super::OpError::ForeignOperand`]; the op's inference's when the node is built
    /// ([`crate::Error::IndicesNotInteger`]).
    pub fn create<I: IndexType + TensorElement>(
        scope: &Scope,
        shards: &[Output<T>],
        ids: &impl Operand<I>,
        options: EmbeddingOpOptions,
    ) -> OpResult<EmbeddingLookup<T>> {
        let shards: Vec<_> = shards.iter().map(Output::erase).collect();
        let output = scope.embedding_lookup(&shards, &ids.as_output().erase(), options)?;
        Ok(EmbeddingLookup {
            output: scope.output(output.node),
        })
    }

    /// The looked-up rows, of shape `ids.shape + shards[0].shape[1:]`.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement + Real> Operand<T> for EmbeddingLookup<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}

/// `EmbeddingLookupSparse`: per row of a batch of sparse ids, the weighted embeddings
/// combined.
#[derive(Debug, Clone)]
pub struct EmbeddingLookupSparse<T> {
    output: Output<T>,
}

impl<T: TensorElement + Real> EmbeddingLookupSparse<T> {
    /// The op's name.
    pub const OP_NAME: &'static str = "EmbeddingLookupSparse";

    /// Creates the op: the ids as a `SparseTensor`'s parts (`indices` an `int64` matrix
    /// `[n, rank]`, `values` the `int32` or `int64` ids, `dense_shape` `int64`), optional
    /// `weights` (the values of a `SparseTensor` with the same indices).
    ///
    /// # Errors
    /// The lookup's errors in an eager scope, and [`super::OpError::ForeignOperand`].
    pub fn create<I: IndexType + TensorElement>(
        scope: &Scope,
        shards: &[Output<T>],
        sp_ids: (&impl Operand<i64>, &impl Operand<I>, &impl Operand<i64>),
        weights: Option<&impl Operand<T>>,
        options: EmbeddingOpOptions,
    ) -> OpResult<EmbeddingLookupSparse<T>> {
        let (indices, ids, dense_shape) = (
            sp_ids.0.as_output(),
            sp_ids.1.as_output(),
            sp_ids.2.as_output(),
        );
        let shards: Vec<_> = shards.iter().map(Output::erase).collect();
        let weights = weights.map(|w| w.as_output().erase());
        let sp_ids = (&indices.erase(), &ids.erase(), &dense_shape.erase());
        let output = scope.embedding_lookup_sparse(&shards, sp_ids, weights.as_ref(), options)?;
        Ok(EmbeddingLookupSparse {
            output: scope.output(output.node),
        })
    }

    /// The combined embeddings, of shape `[dense_shape[0]] + shards[0].shape[1:]`.
    pub fn output(&self) -> Output<T> {
        self.output.clone()
    }
}

impl<T: TensorElement + Real> Operand<T> for EmbeddingLookupSparse<T> {
    fn as_output(&self) -> Output<T> {
        self.output()
    }
}
