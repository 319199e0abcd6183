//! TensorFlow's embedding lookups: `tf.nn.embedding_lookup` (one table, or a table split into
//! shards by the `"mod"` or `"div"` partition strategy, with `max_norm` clipping) and
//! `tf.nn.embedding_lookup_sparse` (ids and weights as a `SparseTensor`, combined per row by
//! `"sum"`, `"mean"` or `"sqrtn"`), and their gradients with respect to the shards as
//! [`IndexedSlices`].
//!
//! Arithmetic follows TensorFlow's CPU kernels operation by operation, so results are equal
//! bit for bit except where TensorFlow's own order is not reproducible: the L2 norm of
//! `max_norm` (Eigen's vectorised `reduce_sum`) and `pow(w, 2)` of weighted `"sqrtn"`
//! (Eigen's `pow`), which may differ in the last bit.
//!
//! ```
//! use ndarray::array;
//! use ndgather::embedding::{Combiner, EmbeddingLookupOptions, PartitionStrategy, SparseIds};
//!
//! // Five ids over two shards, "mod": even ids in shard 0, odd in shard 1.
//! let even = array![[0.0f32, 0.0], [2.0, 2.0], [4.0, 4.0]].into_dyn();
//! let odd = array![[1.0f32, 1.0], [3.0, 3.0]].into_dyn();
//! let shards = [even.view(), odd.view()];
//! let lookup = EmbeddingLookupOptions::new().partition_strategy(PartitionStrategy::Mod);
//! let rows = lookup.lookup(&shards, &array![3, 0, 4]).unwrap();
//! assert_eq!(rows, array![[3.0, 3.0], [0.0, 0.0], [4.0, 4.0]].into_dyn());
//!
//! // Row 0 of a batch holds ids 1 and 3, row 1 none, row 2 id 0: means.
//! let (indices, values) = (array![[0i64, 0], [0, 1], [2, 0]], array![1i64, 3, 0]);
//! let ids = SparseIds::new(indices.view(), values.view(), &[3, 2]).unwrap();
//! let out = lookup.lookup_sparse(&shards, &ids, None, Combiner::Mean).unwrap();
//! assert_eq!(out, array![[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]].into_dyn());
//! ```

mod embedding_arith;
mod embedding_partition;

pub use embedding_arith::Real;
pub(crate) use embedding_arith::{clip_row, clip_row_grad, renorm_row, round};
use embedding_arith::{count_scale, from_f64, unweighted, weight_denominator, weighted_sum};
pub use embedding_partition::PartitionStrategy;

use crate::engine::layout::{into_array, row_major, Element};
use crate::ops::contract::{SparseGrad, Value};
use crate::ops::grad::{check_grad, IndexedSlices};
use crate::shape::plan::unravel;
use crate::types::dtype::{ArrayElement, DType, TensorElement, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::IndexType;
use ndarray::{ArrayBase, ArrayD, ArrayView1, ArrayView2, ArrayViewD, Data, Dimension};
use num_traits::{One, Zero};
use std::borrow::Cow;

/// How the embeddings of one row of sparse ids combine (`embedding_lookup_sparse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Combiner {
    /// The weighted sum.
    Sum,
    /// The weighted sum divided by the sum of the weights (0 where that is 0).
    #[default]
    Mean,
    /// The weighted sum divided by the square root of the sum of squared weights.
    SqrtN,
}

impl Combiner {
    /// `"sum"`, `"mean"` or `"sqrtn"`.
    pub fn from_name(name: &str) -> Option<Combiner> {
        match name {
            "sum" => Some(Combiner::Sum),
            "mean" => Some(Combiner::Mean),
            "sqrtn" => Some(Combiner::SqrtN),
            _ => None,
        }
    }
}

/// Sparse ids (or weights) as TensorFlow's `SparseTensor`: `indices` `[nnz, rank]` in
/// row-major order, `values` `[nnz]`, `dense_shape` `[rank]`. Row `indices[k][0]` of the
/// batch holds `values[k]`.
#[derive(Debug, Clone)]
pub struct SparseIds<'a, V> {
    rows: Vec<usize>,
    values: ArrayView1<'a, V>,
    batch: usize,
    indices: ArrayView2<'a, i64>,
}

impl<'a, V> SparseIds<'a, V> {
    /// Checks the parts agree: one index row per value, `rank` ≥ 1 columns matching
    /// `dense_shape`, each index inside `dense_shape`, the batch rows in order.
    ///
    /// # Errors
    /// [`Error::SparseTensor`] saying which part is wrong.
    pub fn new(
        indices: ArrayView2<'a, i64>,
        values: ArrayView1<'a, V>,
        dense_shape: &[usize],
    ) -> Result<SparseIds<'a, V>> {
        let bad = |reason: String| Err(Error::SparseTensor { reason });
        let (nnz, rank) = indices.dim();
        if nnz != values.len() {
            return bad(format!(
                "indices has {nnz} rows but values has {} elements",
                values.len()
            ));
        }
        if rank != dense_shape.len() || rank == 0 {
            return bad(format!(
                "indices has {rank} columns but dense_shape has rank {}",
                dense_shape.len()
            ));
        }
        let mut rows = Vec::with_capacity(nnz);
        for (k, index) in indices.outer_iter().enumerate() {
            for (d, (&i, &n)) in index.iter().zip(dense_shape).enumerate() {
                if i < 0 || i as u64 >= n as u64 {
                    return bad(format!(
                        "indices[{k}, {d}] = {i} is not in [0, {n}) (dense_shape[{d}])"
                    ));
                }
            }
            let row = index[0] as usize;
            if rows.last().is_some_and(|&last| row < last) {
                return bad(format!(
                    "indices are not in row-major order: row {row} at [{k}] comes after row {}",
                    rows[k - 1]
                ));
            }
            rows.push(row);
        }
        Ok(SparseIds {
            rows,
            values,
            batch: dense_shape[0],
            indices,
        })
    }

    /// The number of ids.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no ids.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Options of the embedding lookups: the partition strategy and `max_norm`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EmbeddingLookupOptions {
    strategy: PartitionStrategy,
    max_norm: Option<f64>,
}

/// The shards of a table, each as row-major data with its row count and row length.
pub(crate) struct Table<'a, T: Clone> {
    pub(crate) shards: Vec<(Cow<'a, [T]>, usize)>,
    pub(crate) row_len: usize,
    pub(crate) row_shape: Vec<usize>,
}

impl<'a, T: Element> Table<'a, T> {
    pub(crate) fn new(shards: &'a [ArrayViewD<'a, T>]) -> Result<Table<'a, T>> {
        let first = shards.first().ok_or(Error::EmbeddingShards {
            reason: "Need at least one param".to_string(),
        })?;
        let row_shape = first
            .shape()
            .get(1..)
            .map(<[usize]>::to_vec)
            .ok_or_else(|| Error::EmbeddingShards {
                reason: "params must be at least 1 dimensional".to_string(),
            })?;
        let mut out = Vec::with_capacity(shards.len());
        for (p, shard) in shards.iter().enumerate() {
            if shard.ndim() == 0 || shard.shape()[1..] != row_shape[..] {
                return Err(Error::EmbeddingShards {
                    reason: format!(
                        "shard {p} has shape {:?}, but shard 0's rows have shape {row_shape:?}: all shards must agree but in their first dimension",
                        shard.shape()
                    ),
                });
            }
            out.push((row_major(shard)?, shard.shape()[0]));
        }
        Ok(Table {
            shards: out,
            row_len: row_shape.iter().product(),
            row_shape,
        })
    }

    pub(crate) fn row(&self, (shard, row): (usize, usize)) -> &[T] {
        &self.shards[shard].0[row * self.row_len..(row + 1) * self.row_len]
    }
}

impl EmbeddingLookupOptions {
    /// `"mod"`, no `max_norm`.
    pub fn new() -> Self {
        EmbeddingLookupOptions::default()
    }

    /// Sets the partition strategy (it matters only for more than one shard).
    pub fn partition_strategy(mut self, strategy: PartitionStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Clips each looked-up row to this L2 norm (TensorFlow's `clip_by_norm`); `None` for no
    /// clipping.
    pub fn max_norm(mut self, max_norm: Option<f64>) -> Self {
        self.max_norm = max_norm;
        self
    }

    /// The shard and row of id `id`, the `k`th of `shape`, among shards of `rows` rows
    /// (`total` in all).
    pub(crate) fn place(
        &self,
        id: i128,
        k: usize,
        shape: &[usize],
        rows: &[usize],
        total: i128,
    ) -> Result<(usize, usize)> {
        let n = rows.len() as i128;
        let (p, r) = match self.strategy {
            _ if n == 1 => (0, id),
            PartitionStrategy::Mod => (id.rem_euclid(n), id.div_euclid(n)),
            PartitionStrategy::Div => {
                let (per, extras) = (total / n, total % n);
                let p = if per == 0 {
                    id.div_euclid(per + 1)
                } else {
                    id.div_euclid(per + 1).max((id - extras).div_euclid(per))
                };
                let r = if p < extras {
                    id.rem_euclid(per + 1)
                } else {
                    (id - extras).rem_euclid(per.max(1))
                };
                (p, r)
            }
        };
        let fits = id >= 0 && (0..n).contains(&p) && (0..rows[p as usize] as i128).contains(&r);
        if !fits {
            return Err(Error::BadEmbeddingId {
                position: unravel(k, shape),
                value: id,
                total: total as usize,
                shard: (n > 1 && id >= 0 && id < total).then_some((p as usize, r as usize)),
            });
        }
        Ok((p as usize, r as usize))
    }

    /// The shard and row of each of `ids` (of `shape`) in `table`.
    fn places<T: Clone, I: IndexType>(
        &self,
        table: &Table<'_, T>,
        ids: &[I],
        shape: &[usize],
    ) -> Result<Vec<(usize, usize)>> {
        let rows: Vec<usize> = table.shards.iter().map(|s| s.1).collect();
        let total: i128 = rows.iter().map(|&r| r as i128).sum();
        ids.iter()
            .enumerate()
            .map(|(k, &id)| self.place(id.to_i128(), k, shape, &rows, total))
            .collect()
    }

    /// `max_norm` in the table's arithmetic, for TensorFlow's lookups: a negative one is 0, as
    /// `tf.clip_by_norm` takes `maximum(clip_norm, 0)` (a NaN stays NaN).
    pub(crate) fn clip_norm<T: Real>(&self) -> Option<T::Acc> {
        let at_least_zero = |m: f64| if m < 0.0 { 0.0 } else { m };
        self.max_norm
            .map(|m| round::<T>(from_f64::<T::Acc>(at_least_zero(m))))
    }

    /// `max_norm` as given, for `embedding_bag`: PyTorch's renormalisation takes a negative
    /// one as it is (a row's sign flips), and compares in double.
    pub(crate) fn bag_max_norm(&self) -> Option<f64> {
        self.max_norm
    }

    /// `tf.nn.embedding_lookup(params, ids, partition_strategy, max_norm)`: the rows of
    /// `ids` from `shards` (one table, or its shards along the first axis). The output has
    /// shape `ids.shape + shards[0].shape[1:]`.
    ///
    /// # Errors
    /// [`Error::EmbeddingShards`] for no shards or shards whose rows differ,
    /// [`Error::BadEmbeddingId`] for an id outside the table or its shard, and the
    /// allocation errors.
    pub fn lookup<T, I, SI, DI>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        ids: &ArrayBase<SI, DI>,
    ) -> Result<ArrayD<T>>
    where
        T: Real,
        I: IndexType,
        SI: Data<Elem = I>,
        DI: Dimension,
    {
        let table = Table::new(shards)?;
        let places = self.places(&table, &row_major(ids)?, ids.shape())?;
        let mut out = Vec::new();
        out.try_reserve_exact(places.len().saturating_mul(table.row_len))
            .map_err(|_| Error::OutOfMemory {
                bytes: places.len() * table.row_len * std::mem::size_of::<T>(),
            })?;
        let clip = self.clip_norm::<T>();
        for &place in &places {
            let row = table.row(place);
            match clip {
                Some(c) => out.extend(clip_row::<T>(row, c)),
                None => out.extend_from_slice(row),
            }
        }
        let mut shape = ids.shape().to_vec();
        shape.extend(&table.row_shape);
        into_array(&shape, out)
    }

    /// The gradient of [`EmbeddingLookupOptions::lookup`] with respect to each shard, for upstream
    /// gradient `grad` (of the lookup's output shape): one [`IndexedSlices`] per shard, its
    /// rows those of the ids that shard served, in the order of `ids`. Through `max_norm`,
    /// the gradient of the clipping is applied to each clipped row.
    ///
    /// # Errors
    /// Those of [`EmbeddingLookupOptions::lookup`], and [`Error::GradShapeMismatch`].
    pub fn lookup_grad<T, I, SI, SG, DI, DG>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        ids: &ArrayBase<SI, DI>,
        grad: &ArrayBase<SG, DG>,
    ) -> Result<Vec<IndexedSlices<T>>>
    where
        T: Real,
        I: IndexType,
        SI: Data<Elem = I>,
        SG: Data<Elem = T>,
        DI: Dimension,
        DG: Dimension,
    {
        let table = Table::new(shards)?;
        let mut expected = ids.shape().to_vec();
        expected.extend(&table.row_shape);
        check_grad(grad.shape(), &expected)?;
        let places = self.places(&table, &row_major(ids)?, ids.shape())?;
        let upstream = row_major(grad)?;
        let d = table.row_len;
        let per_id = places.iter().enumerate().map(|(k, &place)| {
            let g = &upstream[k * d..(k + 1) * d];
            let g = match self.clip_norm::<T>() {
                Some(c) => clip_row_grad::<T>(table.row(place), g, c),
                None => g.to_vec(),
            };
            (place, g)
        });
        slices_per_shard(&table, per_id)
    }

    /// `tf.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner)`: for each row of
    /// the batch (`sp_ids`' first dimension), the embeddings of its ids, multiplied by their
    /// weights (1 without `sp_weights`), combined. The output has shape
    /// `[dense_shape[0]] + shards[0].shape[1:]`; a row with no ids is zeros.
    ///
    /// TensorFlow's kernel returns only as many rows as the last row that has ids; ndgather
    /// returns the `dense_shape[0]` rows its documentation gives, the rest zeros.
    ///
    /// # Errors
    /// Those of [`EmbeddingLookupOptions::lookup`], and [`Error::SparseTensor`] for weights
    /// whose indices differ from the ids'.
    pub fn lookup_sparse<T, I>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        sp_ids: &SparseIds<'_, I>,
        sp_weights: Option<&SparseIds<'_, T>>,
        combiner: Combiner,
    ) -> Result<ArrayD<T>>
    where
        T: Real,
        I: IndexType,
    {
        let sparse = self.sparse_plan(shards, sp_ids, sp_weights)?;
        let d = sparse.table.row_len;
        let zero = T::Acc::zero();
        let mut out = crate::mem::output::filled(&[sp_ids.batch, d], zero)?;
        for (row, range) in &sparse.segments {
            let dst = &mut out[row * d..(row + 1) * d];
            let k0 = range.start;
            match &sparse.weights {
                Some(w) => {
                    let sum = weighted_sum(&sparse, range.clone(), w);
                    let scale = weight_denominator(w, range.clone(), combiner);
                    for (o, s) in dst.iter_mut().zip(sum) {
                        *o = match scale {
                            None => s,
                            Some(den) if den == zero => zero,
                            Some(den) => s / den,
                        };
                    }
                }
                None => unweighted(&sparse, k0, range.len(), combiner, dst),
            }
        }
        let mut shape = vec![sp_ids.batch];
        shape.extend(&sparse.table.row_shape);
        into_array(&shape, out.into_iter().map(T::narrow).collect())
    }

    /// The gradient of [`EmbeddingLookupOptions::lookup_sparse`] with respect to each shard, for
    /// upstream gradient `grad` (of its output's shape): one [`IndexedSlices`] per shard,
    /// with a row for each of its distinct ids (in the order they first appear), each the
    /// sum of what the rows of the batch that use it pass back.
    ///
    /// # Errors
    /// Those of [`EmbeddingLookupOptions::lookup_sparse`], and [`Error::GradShapeMismatch`].
    pub fn lookup_sparse_grad<T, I, SG, DG>(
        &self,
        shards: &[ArrayViewD<'_, T>],
        sp_ids: &SparseIds<'_, I>,
        sp_weights: Option<&SparseIds<'_, T>>,
        combiner: Combiner,
        grad: &ArrayBase<SG, DG>,
    ) -> Result<Vec<IndexedSlices<T>>>
    where
        T: Real,
        I: IndexType,
        SG: Data<Elem = T>,
        DG: Dimension,
    {
        let sparse = self.sparse_plan(shards, sp_ids, sp_weights)?;
        let table = &sparse.table;
        let mut expected = vec![sp_ids.batch];
        expected.extend(&table.row_shape);
        check_grad(grad.shape(), &expected)?;
        let upstream = row_major(grad)?;
        let d = table.row_len;
        let zero = T::Acc::zero();
        // Each distinct id's gradient, accumulated in the order of the ids.
        let mut order: Vec<(usize, usize)> = Vec::new();
        let mut sums: std::collections::HashMap<(usize, usize), Vec<T::Acc>> =
            std::collections::HashMap::new();
        for (row, range) in &sparse.segments {
            let g = &upstream[row * d..(row + 1) * d];
            let n = range.len();
            // What each id of the row receives, as TensorFlow's gradients compute it:
            // `g / den * w` through div_no_nan (0 where den is 0), `g * w` for sums,
            // `g * scale` (1/count or 1/sqrt(count), in f64) without weights.
            let den = sparse
                .weights
                .as_ref()
                .and_then(|w| weight_denominator(w, range.clone(), combiner));
            let scale = match (&sparse.weights, combiner) {
                (None, Combiner::Mean) => count_scale::<T>(n as f64),
                (None, Combiner::SqrtN) => count_scale::<T>((n as f64).sqrt()),
                _ => T::Acc::one(),
            };
            for k in range.clone() {
                let weight = sparse.weights.as_ref().map_or(T::Acc::one(), |w| w[k]);
                let place = sparse.places[k];
                let acc = sums.entry(place).or_insert_with(|| {
                    order.push(place);
                    vec![zero; d]
                });
                for (a, &gv) in acc.iter_mut().zip(g) {
                    let contribution = match den {
                        Some(den) if den == zero => zero,
                        Some(den) => gv.widen() / den * weight,
                        None => gv.widen() * scale * weight,
                    };
                    *a = *a + contribution;
                }
            }
        }
        let per_id = order.into_iter().map(|place| {
            let g: Vec<T> = sums[&place].iter().map(|&v| T::narrow(v)).collect();
            let g = match self.clip_norm::<T>() {
                Some(c) => clip_row_grad::<T>(table.row(place), &g, c),
                None => g,
            };
            (place, g)
        });
        slices_per_shard(table, per_id)
    }

    fn sparse_plan<'a, T, I>(
        &self,
        shards: &'a [ArrayViewD<'a, T>],
        sp_ids: &SparseIds<'_, I>,
        sp_weights: Option<&SparseIds<'_, T>>,
    ) -> Result<Sparse<'a, T>>
    where
        T: Real,
        I: IndexType,
    {
        let table = Table::new(shards)?;
        if let Some(w) = sp_weights {
            if w.indices != sp_ids.indices || w.batch != sp_ids.batch {
                return Err(weights_mismatch());
            }
        }
        let ids = row_major(&sp_ids.values)?;
        let places = self.places(&table, &ids, &[ids.len()])?;
        let clip = self.clip_norm::<T>();
        let values = places
            .iter()
            .map(|&place| {
                let row = table.row(place);
                match clip {
                    Some(c) => clip_row::<T>(row, c),
                    None => row.to_vec(),
                }
            })
            .collect();
        let mut segments: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        for (k, &row) in sp_ids.rows.iter().enumerate() {
            match segments.last_mut() {
                Some((r, range)) if *r == row => range.end = k + 1,
                _ => segments.push((row, k..k + 1)),
            }
        }
        Ok(Sparse {
            weights: sp_weights.map(|w| w.values.iter().map(|&v| v.widen()).collect()),
            table,
            places,
            values,
            segments,
        })
    }
}

/// A checked sparse lookup: each id's place and (clipped) row, the batch rows' ranges of
/// ids, the weights in the arithmetic's type.
struct Sparse<'a, T: Real> {
    table: Table<'a, T>,
    places: Vec<(usize, usize)>,
    values: Vec<Vec<T>>,
    segments: Vec<(usize, std::ops::Range<usize>)>,
    weights: Option<Vec<T::Acc>>,
}

/// Gradients `(place, row)` grouped into one [`IndexedSlices`] per shard.
pub(crate) fn slices_per_shard<T: Real>(
    table: &Table<'_, T>,
    per_id: impl Iterator<Item = ((usize, usize), Vec<T>)>,
) -> Result<Vec<IndexedSlices<T>>> {
    let mut parts: Vec<(Vec<usize>, Vec<T>)> = vec![(vec![], vec![]); table.shards.len()];
    for ((shard, row), g) in per_id {
        parts[shard].0.push(row);
        parts[shard].1.extend(g);
    }
    parts
        .into_iter()
        .zip(&table.shards)
        .map(|((indices, values), (_, rows))| {
            let mut shape = vec![indices.len()];
            shape.extend(&table.row_shape);
            let mut dense_shape = vec![*rows];
            dense_shape.extend(&table.row_shape);
            Ok(IndexedSlices {
                values: into_array(&shape, values)?,
                indices,
                dense_shape,
            })
        })
        .collect()
}

/// Views as a float type the lookups take (all of one dtype).
fn float_views<'a, T: Real + ArrayElement>(
    views: &[TensorView<'a>],
) -> Result<Vec<ArrayViewD<'a, T>>> {
    views
        .iter()
        .map(|v| {
            T::from_view(v).ok_or_else(|| Error::DTypeMismatch {
                expected: T::DTYPE,
                found: v.dtype(),
            })
        })
        .collect()
}

/// One view as a float type the lookups take (an upstream gradient: the table's dtype).
pub(crate) fn float_view<'a, T: Real + ArrayElement>(
    view: &TensorView<'a>,
) -> Result<ArrayViewD<'a, T>> {
    float_views::<T>(std::slice::from_ref(view)).map(|mut v| v.remove(0))
}

/// Sparse gradients, one per shard, as a result of the registry.
pub(crate) fn sparse<T: TensorElement>(slices: Result<Vec<IndexedSlices<T>>>) -> Result<Value> {
    Ok(Value::Sparse(
        slices?.into_iter().map(SparseGrad::from).collect(),
    ))
}

/// Runs `$body` with `$T` the float type of the tensor `$first` (the dtype table's `real`
/// role), or returns op `$op`'s error for a dtype it has no kernel for.
macro_rules! with_float {
    ($op:expr, $first:expr, $T:ident => $body:expr) => {
        crate::with_dtype!($first.dtype(), real $T => $body, else Err(table_dtype($op, $first.dtype())))
    };
}

/// The error for an embedding table of a dtype that is not a float: a kernel the op lacks.
pub(crate) fn table_dtype(op: &'static str, dtype: DType) -> Error {
    Error::NoKernel {
        op,
        dtype,
        supported: format!("embedding tables of {}", DType::names_where(DType::is_real)),
    }
}

/// The error for weights whose sparse form is not the ids'.
fn weights_mismatch() -> Error {
    Error::SparseTensor {
        reason: "sp_weights must have the same indices and dense_shape as sp_ids".into(),
    }
}

/// Runs `$body` with `$i` the integer view inside `$t`: any index dtype of the table (a
/// superset of TensorFlow's `Tindices`, `int32` and `int64`, as `embedding_bag`'s ids).
macro_rules! with_ids {
    ($t:expr, $i:ident => $body:expr) => {
        crate::types::index::with_indices!($t, $i => $body,
            else dtype => Err(Error::IndicesNotInteger { dtype }))
    };
}

impl EmbeddingLookupOptions {
    /// [`EmbeddingLookupOptions::lookup`] on dtype-erased views (the op API's evaluation, the
    /// CLI): shards of one float dtype, ids of any integer dtype.
    ///
    /// # Errors
    /// Those of [`EmbeddingLookupOptions::lookup`], [`Error::DTypeMismatch`] for shards of
    /// several dtypes, and [`Error::IndicesNotInteger`].
    /// With `grad`, the upstream gradient of the lookup's result and whether it is wanted
    /// sparse, its gradient with respect to each shard
    /// ([`EmbeddingLookupOptions::lookup_grad`]) instead: one `IndexedSlices` per shard
    /// (`Value::Sparse`), or one dense tensor per shard (`Value::List`).
    pub(crate) fn lookup_views(
        &self,
        shards: &[TensorView<'_>],
        ids: &TensorView<'_>,
        grad: Option<(&TensorView<'_>, bool)>,
    ) -> Result<Value> {
        let first = shards.first().ok_or(Error::EmbeddingShards {
            reason: "Need at least one param".to_string(),
        })?;
        let op = if grad.is_some() {
            "embedding_lookup_grad"
        } else {
            "embedding_lookup"
        };
        with_float!(op, first, T => {
            let views = float_views::<T>(shards)?;
            with_ids!(ids, i => match grad {
                None => Ok(Value::Dense(T::into_tensor(self.lookup(&views, i)?))),
                Some((g, true)) => sparse(self.lookup_grad(&views, i, &float_view::<T>(g)?)),
                Some((g, false)) => Ok(Value::List(
                    self.lookup_grad(&views, i, &float_view::<T>(g)?)?
                        .iter()
                        .map(|s| s.to_dense().map(T::into_tensor))
                        .collect::<Result<_>>()?,
                )),
            })
        })
    }

    /// [`EmbeddingLookupOptions::lookup_sparse`] on dtype-erased views: `indices` an `int64`
    /// matrix, `values` of any integer dtype, `dense_shape` `int64`; the weights' `indices`,
    /// `values` (of the shards' dtype) and `dense_shape`, where their indices and shape
    /// default to the ids' (no values: weights of 1).
    /// With `grad`, the gradient with respect to each shard instead
    /// ([`EmbeddingLookupOptions::lookup_sparse_grad`]).
    pub(crate) fn lookup_sparse_views(
        &self,
        shards: &[TensorView<'_>],
        ids: [TensorView<'_>; 3],
        weights: [Option<TensorView<'_>>; 3],
        combiner: Combiner,
        grad: Option<&TensorView<'_>>,
    ) -> Result<Value> {
        let [indices, values, dense_shape] = ids;
        let bad = |what: &str| Error::SparseTensor {
            reason: format!("{what} must be int64 of the right rank"),
        };
        fn matrix<'v>(view: &TensorView<'v>) -> Option<ndarray::ArrayView2<'v, i64>> {
            i64::from_view(view).and_then(|a| a.into_dimensionality::<ndarray::Ix2>().ok())
        }
        let shape_of = |view: &TensorView<'_>, what: &str| -> Result<Vec<usize>> {
            let dims = i64::from_view(view)
                .filter(|a| a.ndim() == 1)
                .ok_or_else(|| bad(what))?;
            dims.iter()
                .map(|&d| usize::try_from(d))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| Error::SparseTensor {
                    reason: format!(
                        "{what} must not have negative sizes, got {:?}",
                        dims.iter().collect::<Vec<_>>()
                    ),
                })
        };
        let indices = matrix(&indices).ok_or_else(|| bad("indices"))?;
        let dense_shape = shape_of(&dense_shape, "dense_shape")?;
        let [w_indices, w_values, w_shape] = weights;
        if w_values.is_none() && (w_indices.is_some() || w_shape.is_some()) {
            return Err(Error::SparseTensor {
                reason: "sp_weights has indices or a dense_shape but no values".into(),
            });
        }
        let w_indices = w_indices
            .map(|v| matrix(&v).ok_or_else(|| bad("sp_weights' indices")))
            .transpose()?;
        let w_shape = w_shape
            .map(|v| shape_of(&v, "sp_weights' dense_shape"))
            .transpose()?;
        let first = shards.first().ok_or(Error::EmbeddingShards {
            reason: "Need at least one param".to_string(),
        })?;
        let op = match grad {
            Some(_) => "embedding_lookup_sparse_grad",
            None => "embedding_lookup_sparse",
        };
        with_float!(op, first, T => {
            let views = float_views::<T>(shards)?;
            let w = match w_values {
                Some(w) => Some(
                    float_views::<T>(&[w])?
                        .remove(0)
                        .into_dimensionality::<ndarray::Ix1>()
                        .map_err(|_| bad("weights"))?,
                ),
                None => None,
            };
            let sp_w = match &w {
                Some(w) => Some(SparseIds::new(
                    w_indices.as_ref().unwrap_or(&indices).view(),
                    w.view(),
                    w_shape.as_deref().unwrap_or(&dense_shape),
                )?),
                None => None,
            };
            with_ids!(&values, v => {
                let v = v.view().into_dimensionality::<ndarray::Ix1>().map_err(|_| bad("values"))?;
                let sp = SparseIds::new(indices.view(), v, &dense_shape)?;
                match grad {
                    None => Ok(Value::Dense(T::into_tensor(
                        self.lookup_sparse(&views, &sp, sp_w.as_ref(), combiner)?,
                    ))),
                    Some(g) => sparse(self.lookup_sparse_grad(
                        &views,
                        &sp,
                        sp_w.as_ref(),
                        combiner,
                        &float_view::<T>(g)?,
                    )),
                }
            })
        })
    }
}
