//! PyTorch's `embedding_bag`: the rows of each bag of ids from a table, reduced per bag by
//! `"sum"` (optionally weighted per id), `"mean"` or `"max"`, on TensorFlow's tables (one
//! table, or shards split `"mod"` or `"div"`), with the gradient with respect to each shard.
//!
//! - **Bags** are a 2-D `input` (each row a bag) or a 1-D `input` with `offsets`, each bag
//!   running from its offset to the next (with `include_last_offset`, the last offset ends the
//!   last bag, CSR's `B + 1` entries).
//! - **`padding_idx`** ids are left out of every bag (of mean's count too) and get no
//!   gradient. An empty bag is zeros, as in PyTorch.
//! - **`max_norm`** renormalises each looked-up row whose L2 norm exceeds it, as PyTorch's
//!   `embedding_renorm_` does (`row * max_norm / (norm + 1e-7)`), and the gradient flows as
//!   PyTorch's does, not through the renormalisation. PyTorch writes the renormalised rows
//!   into its weight; the table here is never written.
//! - **Arithmetic** is PyTorch's CPU kernels': each bag is reduced in the order of its ids;
//!   a weighted `float32` sum fuses each multiply-add as PyTorch's float kernel does (but
//!   with a `padding_idx`, where PyTorch's generic kernel runs), a `float64` one does not;
//!   mean divides by the count. Half types add in `f32` and round the sum before a mean
//!   divides it; without a `padding_idx` PyTorch's kernel (FBGEMM's) rounds a `bfloat16` sum
//!   ties away from zero, and so does this one. Bags are reduced in parallel, each on one
//!   thread, so results do not depend on the thread count.
//!
//! ```
//! use ndarray::array;
//! use ndgather::embedding_bag::{BagMode, EmbeddingBag};
//!
//! let table = array![[1.0f32, 10.0], [2.0, 20.0], [3.0, 30.0]].into_dyn();
//! let input = array![0i64, 2, 1, 2, 2].into_dyn();
//! let offsets = array![0i64, 2, 2];
//! let bag = EmbeddingBag::new(BagMode::Mean);
//! let out = bag.bag(&[table.view()], &input.view(), Some(&offsets.view()), None).unwrap();
//! // Bags [0, 2], [] and [1, 2, 2].
//! assert_eq!(out, array![[2.0, 20.0], [0.0, 0.0], [8.0 / 3.0, 80.0 / 3.0]].into_dyn());
//! ```

use crate::engine::layout::{into_array, row_major};
use crate::ops::contract::Value;
use crate::ops::embedding::{
    renorm_row, round, slices_per_shard, sparse, EmbeddingLookupOptions, PartitionStrategy, Real,
    Table,
};
use crate::ops::grad::{check_grad, IndexedSlices};
use crate::types::dtype::{ArrayElement, TensorElement, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use ndarray::{ArrayD, ArrayView1, ArrayViewD};
use num_traits::{Float, One, Zero};
use rayon::prelude::*;

/// How a bag's rows reduce to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BagMode {
    /// The sum (weighted by `per_sample_weights` if given).
    Sum,
    /// The mean.
    #[default]
    Mean,
    /// The element-wise maximum.
    Max,
}

impl BagMode {
    /// `"sum"`, `"mean"` or `"max"`.
    pub fn from_name(name: &str) -> Option<BagMode> {
        match name {
            "sum" => Some(BagMode::Sum),
            "mean" => Some(BagMode::Mean),
            "max" => Some(BagMode::Max),
            _ => None,
        }
    }

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            BagMode::Sum => "sum",
            BagMode::Mean => "mean",
            BagMode::Max => "max",
        }
    }
}

/// The options of `embedding_bag`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EmbeddingBag {
    mode: BagMode,
    lookup: EmbeddingLookupOptions,
    padding_idx: Option<i64>,
    include_last_offset: bool,
    bad_indices: BadIndices,
}

/// Where each id of the input reads: a row of a shard, or nothing (a padding id, or a bad
/// id a policy leaves out).
type Place = Option<(usize, usize)>;

/// A checked call: each bag's range of ids, and each id's place.
struct BagPlan<'a, T: Clone> {
    table: Table<'a, T>,
    bags: Vec<std::ops::Range<usize>>,
    places: Vec<Place>,
}

impl EmbeddingBag {
    /// `mode`, one table or `"mod"` shards, no padding, no `max_norm`, `offsets` starting the
    /// bags, bad ids an error.
    pub fn new(mode: BagMode) -> Self {
        EmbeddingBag {
            mode,
            ..EmbeddingBag::default()
        }
    }

    /// How ids are split among shards.
    pub fn partition_strategy(mut self, strategy: PartitionStrategy) -> Self {
        self.lookup = self.lookup.partition_strategy(strategy);
        self
    }

    /// Renormalises each looked-up row whose L2 norm exceeds this one, as PyTorch's
    /// `embedding_renorm_` (without writing the table).
    pub fn max_norm(mut self, max_norm: Option<f64>) -> Self {
        self.lookup = self.lookup.max_norm(max_norm);
        self
    }

    /// The id left out of every bag; negative counts from the end of the table.
    pub fn padding_idx(mut self, padding_idx: Option<i64>) -> Self {
        self.padding_idx = padding_idx;
        self
    }

    /// Whether `offsets` has one more entry, the end of the last bag (CSR's layout).
    pub fn include_last_offset(mut self, include: bool) -> Self {
        self.include_last_offset = include;
        self
    }

    /// Whether the bag is a weighted sum of its rows as they are (a sum or a mean, with no
    /// `max_norm`): linear in the table.
    pub(crate) fn sums(&self) -> bool {
        self.mode != BagMode::Max && self.lookup.bag_max_norm().is_none()
    }

    /// Whether the bag is a sum with no `max_norm`: linear in the table and, apart, in
    /// `per_sample_weights` (which only a sum takes).
    pub(crate) fn weighted_sum(&self) -> bool {
        self.mode == BagMode::Sum && self.sums()
    }

    /// Whether `offsets` ends with the end of the last bag.
    pub fn includes_last_offset(&self) -> bool {
        self.include_last_offset
    }

    /// What an id outside the table does: an error (the default, as PyTorch), left out of
    /// its bag as a padding id is (`Ignore`), or moved into range (`Clamp`, `Negative`,
    /// `Wrap`). `Fill` has no meaning for a bag and is refused.
    pub fn bad_indices(mut self, policy: BadIndices) -> Self {
        self.bad_indices = policy;
        self
    }

    /// The bags' ranges of the flattened input, checked as PyTorch checks them.
    fn bags<I: IndexType>(
        &self,
        input: &ArrayViewD<'_, I>,
        offsets: Option<&ArrayView1<'_, I>>,
    ) -> Result<Vec<std::ops::Range<usize>>> {
        let arg = |m: String| Err(Error::TorchValue(m));
        let runtime = |m: String| Err(Error::TorchRuntime(m));
        match (input.ndim(), offsets) {
            (2, None) => {
                let (b, l) = (input.shape()[0], input.shape()[1]);
                return Ok((0..b).map(|k| k * l..(k + 1) * l).collect());
            }
            (2, Some(_)) => {
                return arg(
                    "if input is 2D, then offsets has to be None, as input is treated \
                            is a mini-batch of fixed length sequences."
                        .into(),
                )
            }
            (1, None) => return arg("offsets has to be a 1D Tensor but got None".into()),
            (1, Some(_)) => {}
            (d, _) => {
                return arg(format!(
                    "input has to be 1D or 2D Tensor, but got Tensor of dimension {d}"
                ))
            }
        }
        let (n, offsets) = (input.len(), offsets.map(row_major).transpose()?);
        let offsets: Vec<i128> = offsets
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .map(|o| o.to_i128())
            .collect();
        if self.include_last_offset && offsets.is_empty() {
            return runtime("include_last_offset: number of offset should be at least 1".into());
        }
        if let Some(&first) = offsets.first() {
            if first != 0 {
                return runtime(format!(
                    "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to \
                     start from position 0. However, got {first}"
                ));
            }
        }
        if let Some(&last) = offsets.last() {
            if last > n as i128 {
                return runtime(format!(
                    "offsets[-1] can not be greater than input's length {n} but got offsets[-1] \
                     of {last}"
                ));
            }
        }
        if let Some(k) = (1..offsets.len()).find(|&k| offsets[k] < offsets[k - 1]) {
            return runtime(format!(
                "offsets must not decrease, but offsets[{k}] = {} is less than offsets[{}] = {}",
                offsets[k],
                k - 1,
                offsets[k - 1]
            ));
        }
        // PyTorch documents the last offset as the number of ids. Its CPU kernels read the
        // ids after a smaller one each their own way (FBGEMM's sum leaves them out, the
        // generic sum and max take them into the last bag, a mean counts them in its divisor
        // only, a float32 gradient reads uninitialised memory): no result to copy.
        match offsets.last() {
            Some(&last) if self.include_last_offset && last < n as i128 => {
                return Err(Error::TorchValue(format!(
                    "embedding_bag: with include_last_offset=True the last offset ends the \
                     last bag, and must be the number of ids ({n}), got {last}: PyTorch's CPU \
                     kernels read the ids after it inconsistently; drop them, or end the \
                     offsets with {n}"
                )))
            }
            _ => {}
        }
        let starts: Vec<usize> = offsets.iter().map(|&o| o as usize).collect();
        let bags = if self.include_last_offset {
            starts.windows(2).map(|w| w[0]..w[1]).collect()
        } else {
            let ends = starts.iter().skip(1).copied().chain([n]);
            starts.iter().zip(ends).map(|(&s, e)| s..e).collect()
        };
        Ok(bags)
    }

    /// Checks the call and places every id.
    fn plan<'a, T: Real, I: IndexType>(
        &self,
        shards: &'a [ArrayViewD<'a, T>],
        input: &ArrayViewD<'_, I>,
        offsets: Option<&ArrayView1<'_, I>>,
        weights: Option<&ArrayViewD<'_, T>>,
    ) -> Result<BagPlan<'a, T>> {
        if self.bad_indices == BadIndices::Fill {
            return Err(Error::TorchValue(
                "embedding_bag has no fill value: bad_indices=\"ignore\" leaves bad ids out of \
                 their bags"
                    .into(),
            ));
        }
        let table = Table::new(shards)?;
        let bags = self.bags(input, offsets)?;
        if let Some(w) = weights {
            if self.mode != BagMode::Sum {
                return Err(Error::TorchNotImplemented(format!(
                    "embedding_bag: per_sample_weights was not None. per_sample_weights is only \
                     supported for mode='sum' (got mode='{}'). Please open a feature request on \
                     GitHub.",
                    self.mode.name()
                )));
            }
            if w.shape() != input.shape() {
                return Err(Error::TorchValue(format!(
                    "embedding_bag: If per_sample_weights ({:?}) is not None, then it must have \
                     the same shape as the input ({:?})",
                    w.shape(),
                    input.shape()
                )));
            }
        }
        let total: usize = table.shards.iter().map(|s| s.1).sum();
        let padding = match self.padding_idx {
            None => None,
            Some(p) => {
                let t = total as i128;
                let p = i128::from(p);
                if !(-t..t).contains(&p) {
                    return Err(Error::TorchRuntime(format!(
                        "padding_idx must be within the number of embeddings, -{total} through \
                         {}, but got {p}",
                        t - 1
                    )));
                }
                Some(p.rem_euclid(t.max(1)))
            }
        };
        let rows: Vec<usize> = table.shards.iter().map(|s| s.1).collect();
        let ids = row_major(input)?;
        let mut places = Vec::with_capacity(ids.len());
        for (k, id) in ids.iter().enumerate() {
            let v = id.to_i128();
            let Some(resolved) = self.bad_indices.resolve(*id, total) else {
                if self.bad_indices.errors() {
                    return Err(Error::TorchRuntime(format!(
                        "Index {k} of input takes value {v} which is not in the valid range \
                         [0, {total})"
                    )));
                }
                places.push(None);
                continue;
            };
            if padding == Some(resolved as i128) {
                places.push(None);
                continue;
            }
            let place =
                self.lookup
                    .place(resolved as i128, k, &[ids.len()], &rows, total as i128)?;
            places.push(Some(place));
        }
        Ok(BagPlan {
            table,
            bags,
            places,
        })
    }

    /// `embedding_bag(params, input, offsets, mode, per_sample_weights, ...)`: one row per
    /// bag, of shape `[bags] + shards[0].shape[1:]`.
    ///
    /// # Errors
    /// PyTorch's, with its messages: [`Error::TorchValue`] for inputs of the wrong
    /// rank or weights of the wrong shape, [`Error::TorchRuntime`] for bad offsets, ids
    /// or `padding_idx`, [`Error::TorchNotImplemented`] for weights outside `"sum"`;
    /// [`Error::EmbeddingShards`] for shards that disagree.
    pub fn bag<T: Real, I: IndexType>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        input: &ArrayViewD<'_, I>,
        offsets: Option<&ArrayView1<'_, I>>,
        per_sample_weights: Option<&ArrayViewD<'_, T>>,
    ) -> Result<ArrayD<T>> {
        let plan = self.plan(shards, input, offsets, per_sample_weights)?;
        let weights = per_sample_weights.map(row_major).transpose()?;
        let d = plan.table.row_len;
        let mut out = Vec::new();
        out.try_reserve_exact(plan.bags.len().saturating_mul(d))
            .map_err(|_| Error::OutOfMemory {
                bytes: plan.bags.len() * d * std::mem::size_of::<T>(),
            })?;
        out.resize(plan.bags.len() * d, T::narrow(T::Acc::zero()));
        let clip = self.lookup.bag_max_norm();
        // PyTorch's float kernel (FBGEMM's) fuses a weighted multiply-add; with a padding_idx
        // PyTorch takes its generic kernel, which does not.
        let fused = self.padding_idx.is_none();
        out.par_chunks_mut(d.max(1))
            .zip(&plan.bags)
            .for_each(|(dst, range)| {
                let rows = range.clone().filter_map(|k| {
                    let place = plan.places[k]?;
                    Some((k, clipped(&plan.table, place, clip)))
                });
                reduce_bag::<T>(self.mode, rows, weights.as_deref(), fused, dst);
            });
        let mut shape = vec![plan.bags.len()];
        shape.extend(&plan.table.row_shape);
        into_array(&shape, out)
    }

    /// The gradient of [`EmbeddingBag::bag`] with respect to `per_sample_weights` (`"sum"`
    /// only) for the upstream gradient `grad`: for each id that read a row, the dot product
    /// of its bag's gradient and that row (renormalised under `max_norm`), summed in order in the
    /// accumulator type and rounded once; zero for padding ids and the ids a policy leaves
    /// out, as PyTorch's `_embedding_bag_per_sample_weights_backward` gives them.
    ///
    /// # Errors
    /// Those of [`EmbeddingBag::bag`], and [`Error::GradShapeMismatch`].
    pub fn weights_grad<T: Real, I: IndexType>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        input: &ArrayViewD<'_, I>,
        offsets: Option<&ArrayView1<'_, I>>,
        per_sample_weights: &ArrayViewD<'_, T>,
        grad: &ArrayViewD<'_, T>,
    ) -> Result<ArrayD<T>> {
        let (plan, upstream) =
            self.grad_plan(shards, input, offsets, Some(per_sample_weights), grad)?;
        self.weights_grad_planned(&plan, &upstream, per_sample_weights.shape())
    }

    /// A gradient call checked: its plan, and the upstream gradient (of the output's shape)
    /// in row-major order.
    fn grad_plan<'a, 'g, T: Real, I: IndexType>(
        &self,
        shards: &'a [ArrayViewD<'a, T>],
        input: &ArrayViewD<'_, I>,
        offsets: Option<&ArrayView1<'_, I>>,
        per_sample_weights: Option<&ArrayViewD<'_, T>>,
        grad: &'g ArrayViewD<'g, T>,
    ) -> Result<(BagPlan<'a, T>, std::borrow::Cow<'g, [T]>)> {
        let plan = self.plan(shards, input, offsets, per_sample_weights)?;
        let mut expected = vec![plan.bags.len()];
        expected.extend(&plan.table.row_shape);
        check_grad(grad.shape(), &expected)?;
        Ok((plan, row_major(grad)?))
    }

    /// [`EmbeddingBag::weights_grad`] on a checked call.
    fn weights_grad_planned<T: Real>(
        &self,
        plan: &BagPlan<'_, T>,
        upstream: &[T],
        shape: &[usize],
    ) -> Result<ArrayD<T>> {
        let (d, clip) = (plan.table.row_len, self.lookup.bag_max_norm());
        let zero = T::Acc::zero();
        let mut out = vec![T::narrow(zero); plan.places.len()];
        for (b, range) in plan.bags.iter().enumerate() {
            let g = &upstream[b * d..(b + 1) * d];
            for k in range.clone() {
                if let Some(place) = plan.places[k] {
                    let row = clipped(&plan.table, place, clip);
                    let dot = row
                        .iter()
                        .zip(g)
                        .fold(zero, |acc, (&r, &gv)| acc + r.widen() * gv.widen());
                    out[k] = T::narrow(dot);
                }
            }
        }
        into_array(shape, out)
    }

    /// The gradient of [`EmbeddingBag::bag`] with respect to each shard for the upstream
    /// gradient `grad` (of the output's shape): one [`IndexedSlices`] per shard, a row for
    /// each id of the input the shard served (padding and left-out ids have none), in input
    /// order, as PyTorch's `sparse=True` gradient. [`IndexedSlices::to_dense`] sums them in
    /// that order. `"max"` passes each element's gradient to the first row that holds the
    /// bag's maximum, PyTorch's rule for ties.
    ///
    /// # Errors
    /// Those of [`EmbeddingBag::bag`], and [`Error::GradShapeMismatch`].
    pub fn bag_grad<T: Real, I: IndexType>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        input: &ArrayViewD<'_, I>,
        offsets: Option<&ArrayView1<'_, I>>,
        per_sample_weights: Option<&ArrayViewD<'_, T>>,
        grad: &ArrayViewD<'_, T>,
    ) -> Result<Vec<IndexedSlices<T>>> {
        let (plan, upstream) = self.grad_plan(shards, input, offsets, per_sample_weights, grad)?;
        self.bag_grad_planned(&plan, per_sample_weights, &upstream)
    }

    /// [`EmbeddingBag::bag_grad`] on a checked call.
    fn bag_grad_planned<T: Real>(
        &self,
        plan: &BagPlan<'_, T>,
        per_sample_weights: Option<&ArrayViewD<'_, T>>,
        upstream: &[T],
    ) -> Result<Vec<IndexedSlices<T>>> {
        let table = &plan.table;
        let weights = per_sample_weights.map(row_major).transpose()?;
        let d = table.row_len;
        // PyTorch renormalises the table's rows in place, outside autograd: the gradient
        // goes to each row as if it held its renormalised values (they pick "max"'s winners).
        let clip = self.lookup.bag_max_norm();
        let zero = T::Acc::zero();
        let mut per_id: Vec<((usize, usize), Vec<T>)> = Vec::new();
        for (b, range) in plan.bags.iter().enumerate() {
            let g = &upstream[b * d..(b + 1) * d];
            // The bag's ids that read a row, with their rows' places.
            let members: Vec<(usize, (usize, usize))> = range
                .clone()
                .filter_map(|k| Some((k, plan.places[k]?)))
                .collect();
            let n = num_traits::cast::<usize, T::Acc>(members.len()).unwrap_or(zero);
            // For "max", which member holds each element's maximum (the first, on ties).
            let winners: Vec<usize> = if self.mode == BagMode::Max {
                let rows: Vec<_> = members
                    .iter()
                    .map(|&(_, place)| clipped(table, place, clip))
                    .collect();
                (0..d)
                    .map(|c| {
                        let mut best: Option<(usize, T::Acc)> = None;
                        for (&(k, _), row) in members.iter().zip(&rows) {
                            let v = row[c].widen();
                            if best.is_none_or(|(_, m)| v > m) {
                                best = Some((k, v));
                            }
                        }
                        best.map_or(usize::MAX, |(k, _)| k)
                    })
                    .collect()
            } else {
                vec![]
            };
            for &(k, place) in &members {
                let row: Vec<T> = (0..d)
                    .map(|c| {
                        let gv = g[c].widen();
                        let v = match self.mode {
                            BagMode::Sum => match &weights {
                                Some(w) => gv * w[k].widen(),
                                None => gv,
                            },
                            // PyTorch's backward scales by the reciprocal of the count,
                            // rounded to the dtype (`apply_bag_size_backward`).
                            BagMode::Mean => gv * round::<T>(T::Acc::one() / n),
                            BagMode::Max if winners[c] == k => gv,
                            BagMode::Max => zero,
                        };
                        T::narrow(round::<T>(v))
                    })
                    .collect();
                per_id.push((place, row));
            }
        }
        slices_per_shard(table, per_id.into_iter())
    }
}

/// What a gradient call of [`EmbeddingBag::bag_views`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BagGrad {
    /// One `IndexedSlices` per shard (PyTorch's `sparse=True`).
    Sparse,
    /// One dense tensor per shard.
    Dense,
    /// One plan for both: a dense tensor per shard, then the weights' gradient where
    /// weights are given (the op's `OpDef::grad`).
    DenseAndWeights,
}

impl EmbeddingBag {
    /// [`EmbeddingBag::bag`] on dtype-erased views (the op API's evaluation): shards of one
    /// floating-point dtype, `input` and `offsets` of one index dtype, weights of the shards'
    /// dtype. With `grad`, the upstream gradient of the result, its gradient instead: with
    /// respect to each shard ([`EmbeddingBag::bag_grad`]), sparse or dense, and to the
    /// weights ([`EmbeddingBag::weights_grad`]).
    ///
    /// # Errors
    /// Those of [`EmbeddingBag::bag`], and [`Error::DTypeMismatch`] for inputs of other
    /// dtypes.
    pub(crate) fn bag_views(
        &self,
        shards: &[TensorView<'_>],
        input: &TensorView<'_>,
        offsets: Option<&TensorView<'_>>,
        weights: Option<&TensorView<'_>>,
        grad: Option<(&TensorView<'_>, BagGrad)>,
    ) -> Result<Value> {
        let first = shards.first().ok_or(Error::EmbeddingShards {
            reason: "Need at least one param".to_string(),
        })?;
        let op = if grad.is_some() {
            "embedding_bag_grad"
        } else {
            "embedding_bag"
        };
        crate::with_dtype!(first.dtype(), real T => {
            let views = shards.iter().map(typed::<T>).collect::<Result<Vec<_>>>()?;
            let weights = weights.map(typed::<T>).transpose()?;
            // Offsets of a dtype other than the input's are refused before either is widened,
            // so that the message names the caller's dtypes.
            if let Some(o) = offsets.filter(|o| input.dtype().is_index() && o.dtype() != input.dtype()) {
                return Err(Error::DTypeMismatch { expected: input.dtype(), found: o.dtype() });
            }
            let wide_offsets = offsets.map(crate::types::index::widened).transpose()?.flatten();
            let offsets = offsets.map(TensorView::reborrow);
            let offsets = wide_offsets.as_ref().map(crate::Tensor::view).or(offsets);
            let offsets = offsets.as_ref();
            crate::types::index::with_indices!(input, i => {
                let offsets = offsets
                    .map(|o| {
                        typed(o)?.into_dimensionality::<ndarray::Ix1>().map_err(|_| {
                            Error::TorchValue("offsets has to be a 1D Tensor".into())
                        })
                    })
                    .transpose()?;
                let (o, w) = (offsets.as_ref(), weights.as_ref());
                match grad {
                    None => self.bag(&views, i, o, w).map(|t| Value::Dense(T::into_tensor(t))),
                    Some((g, BagGrad::Sparse)) => sparse(self.bag_grad(&views, i, o, w, &typed(g)?)),
                    Some((g, BagGrad::Dense)) => Ok(Value::List(
                        self.bag_grad(&views, i, o, w, &typed(g)?)?
                            .iter()
                            .map(|s| s.to_dense().map(T::into_tensor))
                            .collect::<Result<_>>()?,
                    )),
                    Some((g, BagGrad::DenseAndWeights)) => {
                        let g = typed(g)?;
                        let (plan, upstream) = self.grad_plan(&views, i, o, w, &g)?;
                        let mut grads = self
                            .bag_grad_planned(&plan, w, &upstream)?
                            .iter()
                            .map(|s| s.to_dense().map(T::into_tensor))
                            .collect::<Result<Vec<_>>>()?;
                        if let Some(w) = w {
                            let dw = self.weights_grad_planned(&plan, &upstream, w.shape())?;
                            grads.push(T::into_tensor(dw));
                        }
                        Ok(Value::List(grads))
                    }
                }
            }, else dtype => Err(Error::IndicesNotInteger { dtype }))
        }, else Err(crate::ops::embedding::table_dtype(op, first.dtype())))
    }
}

/// The array inside `view`, if it is of `T`'s dtype.
fn typed<'a, T: ArrayElement>(view: &TensorView<'a>) -> Result<ArrayViewD<'a, T>> {
    T::from_view(view).ok_or(Error::DTypeMismatch {
        expected: T::DTYPE,
        found: view.dtype(),
    })
}

/// A placed row, renormalised to `max_norm` where one is set, as PyTorch's forward reads
/// it after `embedding_renorm_`.
fn clipped<'t, T: Real>(
    table: &'t Table<'_, T>,
    place: (usize, usize),
    max_norm: Option<f64>,
) -> std::borrow::Cow<'t, [T]> {
    let row = table.row(place);
    match max_norm {
        Some(m) => renorm_row::<T>(row, m),
        None => std::borrow::Cow::Borrowed(row),
    }
}

/// Reduces one bag's rows (with their positions in the input, for the weights) into `dst`,
/// in order; an empty bag leaves zeros.
fn reduce_bag<'r, T: Real>(
    mode: BagMode,
    rows: impl Iterator<Item = (usize, std::borrow::Cow<'r, [T]>)>,
    weights: Option<&[T]>,
    fused: bool,
    dst: &mut [T],
) {
    let d = dst.len();
    let zero = T::Acc::zero();
    let mut acc = vec![zero; d];
    let mut count = 0usize;
    for (k, row) in rows {
        for (a, &v) in acc.iter_mut().zip(row.iter()) {
            let v = v.widen();
            *a = match (mode, weights) {
                (BagMode::Max, _) if count == 0 => v,
                (BagMode::Max, _) => {
                    if v > *a {
                        v
                    } else {
                        *a
                    }
                }
                (_, Some(w)) => weighted_add(*a, w[k].widen(), v, fused),
                _ => *a + v,
            };
        }
        count += 1;
    }
    // FBGEMM's kernel (no padding_idx) rounds a bfloat16 sum to nearest with ties away
    // from zero; every other rounding here is to even.
    let away = fused && T::DTYPE == crate::DType::BF16 && mode != BagMode::Max;
    if away {
        acc.iter_mut().for_each(|a| *a = bf16_ties_away(*a));
    }
    if mode == BagMode::Mean && count > 0 {
        // The sum in the element type, then divided: PyTorch's half kernels round the sum
        // first (a no-op for f32 and f64).
        let n = num_traits::cast::<usize, T::Acc>(count).unwrap_or(zero);
        acc.iter_mut().for_each(|a| *a = round::<T>(*a) / n);
    }
    for (o, a) in dst.iter_mut().zip(acc) {
        *o = T::narrow(a);
    }
}

/// `a` (a float) rounded to bfloat16's precision, ties away from zero, as FBGEMM converts
/// (adding half of the dropped bits' range to the magnitude); NaN as it is.
fn bf16_ties_away<A: Float>(a: A) -> A {
    match num_traits::cast::<A, f32>(a) {
        Some(f) if !f.is_nan() => {
            let rounded = f32::from_bits(f.to_bits().wrapping_add(0x8000) & 0xFFFF_0000);
            num_traits::cast(rounded).unwrap_or(a)
        }
        _ => a,
    }
}

/// `acc + w * v` as PyTorch's CPU kernels compute it: fused in `f32` where its float kernel
/// runs (`fused`), multiplied then added otherwise and in `f64`.
#[inline]
fn weighted_add<A: Float>(acc: A, w: A, v: A, fused: bool) -> A {
    if fused && std::mem::size_of::<A>() == 4 {
        w.mul_add(v, acc)
    } else {
        acc + w * v
    }
}
