//! Gathers on ragged operands: TensorFlow's ragged `tf.gather` and `tf.gather_nd`, run
//! through [`Op::run_ragged`], and the `batch_dims > 0` gather_nd that TensorFlow refuses,
//! defined as the `batch_dims = 0` gather_nd of each batch row, as for dense tensors.
//!
//! One walk serves every form. An operand is a tree of rows: its root's children are the
//! rows of dimension 0, a ragged dimension's row splits give each row's children, and a
//! uniform dimension gives each row the same number. The output is built one dimension at a
//! time, in the order of the output's dimensions: batch dimensions step through params and
//! indices together, params' dimensions before `axis` through params, indices' dimensions
//! through indices; then each index picks a child of its params row (checked against that
//! row's length, which TensorFlow does not check inside a row), and params' remaining ragged
//! dimensions follow. What is left is one row of params' flat values per leaf, copied by the
//! dense gather_nd, or, where the last dimension is params' last ragged one, a run of values
//! rows per leaf, copied whole.
//!
//! The result's ragged dimensions are those that come from a ragged dimension of an operand
//! (dimension 0 never is); everything after the last of them is dense, as in TensorFlow's
//! results, which are a `Tensor` where nothing is ragged.

use crate::engine::mem::layout::{into_array, row_major};
use crate::engine::mem::recycle;
use crate::engine::ranges;
use crate::ops::gather::{GatherNdOptions, GatherOptions};
use crate::ops::grad::{check_grad, IndexedSlices};
use crate::ops::scatter::Summable;
use crate::ops::{Op, Out, Params};
use crate::types::dtype::{DType, Tensor, TensorView};
use crate::types::error::{Error, OpKind, Result};
use crate::types::index::{BadIndices, IndexType};
use crate::types::ragged::{Ragged, RaggedView, RowSplits};
use crate::types::value::FillValue;
use crate::with_tensor;
use ndarray::ArrayViewD;

/// An operand of a ragged gather: a dense tensor or a ragged one.
///
/// ```
/// use ndgather::{ndarray::array, GatherOptions, Op, RaggedOperand, RaggedView, Tensor};
/// // tf.gather(tf.ragged.constant([[1, 2], [], [3, 4, 5]]), [2, 0])
/// let values = Tensor::from(array![1i32, 2, 3, 4, 5].into_dyn());
/// let splits = [0i64, 2, 2, 5];
/// let params = RaggedView::new(values.view(), vec![splits[..].into()])?;
/// let indices = Tensor::from(array![2i64, 0].into_dyn());
/// let out = Op::Gather(GatherOptions::new()).run_ragged(params, indices.view())?;
/// assert_eq!(out.values, Tensor::from(array![3i32, 4, 5, 1, 2].into_dyn()));
/// assert_eq!(out.splits[0].to_vec(), [0, 3, 5]);
/// # Ok::<(), ndgather::Error>(())
/// ```
#[derive(Debug, Clone)]
pub enum RaggedOperand<'a> {
    /// A dense tensor (or tensor of records, as params).
    Dense(Params<'a>),
    /// A ragged tensor.
    Ragged(RaggedView<'a>),
}

impl<'a> From<TensorView<'a>> for RaggedOperand<'a> {
    fn from(view: TensorView<'a>) -> Self {
        RaggedOperand::Dense(view.into())
    }
}

impl<'a> From<Params<'a>> for RaggedOperand<'a> {
    fn from(params: Params<'a>) -> Self {
        RaggedOperand::Dense(params)
    }
}

impl<'a> From<RaggedView<'a>> for RaggedOperand<'a> {
    fn from(view: RaggedView<'a>) -> Self {
        RaggedOperand::Ragged(view)
    }
}

/// Rows of the output's first dimension walked together.
const CHUNK_ROWS: usize = 4096;

/// A filled leaf: its index was bad and the policy fills its slice.
const FILLED: usize = usize::MAX;

/// An operand's rows as the walk reads them; level `d`'s rows are split into level
/// `d + 1`'s by dimension `d`.
struct Levels<'v, 'a> {
    rows: usize,
    splits: &'v [RowSplits<'a>],
    /// The values' shape (a dense operand's own), without a record axis.
    shape: &'v [usize],
    dtype: Option<DType>,
}

impl<'v, 'a> Levels<'v, 'a> {
    fn of(operand: &'v RaggedOperand<'a>) -> Levels<'v, 'a> {
        match operand {
            RaggedOperand::Dense(v) => Levels {
                rows: v.shape().first().copied().unwrap_or(1),
                splits: &[],
                shape: v.shape(),
                dtype: None,
            },
            RaggedOperand::Ragged(r) => Levels {
                rows: r.rows(),
                splits: r.splits(),
                shape: r.value_shape(),
                dtype: Some(r.splits()[0].dtype()),
            },
        }
    }

    fn ragged_rank(&self) -> usize {
        self.splits.len()
    }

    fn rank(&self) -> usize {
        self.ragged_rank() + self.shape.len()
    }

    /// The first child and the number of children of row `row` of level `d`.
    #[inline]
    fn children(&self, d: usize, row: usize) -> (usize, usize) {
        let r = self.ragged_rank();
        if d == 0 {
            (0, self.rows)
        } else if d <= r {
            let s = &self.splits[d - 1];
            let start = s.at(row);
            (start, s.at(row + 1) - start)
        } else {
            let len = self.shape[d - r];
            (row * len, len)
        }
    }

    fn is_ragged(&self, d: usize) -> bool {
        d >= 1 && d <= self.ragged_rank()
    }

    /// Dimension `d`'s size, `None` where it is ragged.
    fn size(&self, d: usize) -> Option<usize> {
        match d {
            0 => Some(self.rows),
            d if self.is_ragged(d) => None,
            d => Some(self.shape[d - self.ragged_rank()]),
        }
    }

    /// The shape as TensorFlow prints a `TensorShape`: `(2, None)`.
    fn tf_shape(&self, dims: usize) -> String {
        let parts: Vec<String> = (0..dims)
            .map(|d| self.size(d).map_or("None".to_string(), |s| s.to_string()))
            .collect();
        match parts.len() {
            1 => format!("({},)", parts[0]),
            _ => format!("({})", parts.join(", ")),
        }
    }
}

/// One output dimension of the walk.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A batch dimension: params and indices step together.
    Batch(usize),
    /// A dimension of params.
    Params(usize),
    /// A dimension of indices.
    Indices(usize),
}

/// How an index picks its params row.
#[derive(Debug, Clone, Copy)]
enum Pick {
    /// gather: one index, into params' dimension `axis`.
    Axis(usize),
    /// gather_nd: a vector of `depth` indices, into params' dimensions from `first`.
    Vector { first: usize, depth: usize },
}

/// A checked call: the output's dimensions before and after the pick.
struct RaggedPlan {
    before: Vec<Step>,
    pick: Pick,
    /// params' dimensions after the pick, up to its last ragged one.
    after: Vec<usize>,
    /// params' level of the leaves: their rows are rows of the values' first
    /// `level - ragged_rank` dimensions.
    level: usize,
}

impl Op {
    /// Runs a gather on operands of which either or both may be ragged, with TensorFlow's
    /// results (`tf.gather` and `tf.gather_nd` on `tf.RaggedTensor`s). Where nothing in the
    /// result is ragged, the result has no splits and its values are the dense result.
    ///
    /// Beyond TensorFlow:
    /// - an index inside a row is checked against that row's length (TensorFlow reads the
    ///   next row's values); the policy applies, and a filled index's row is empty where
    ///   the slice it picks is ragged;
    /// - every bad-index policy, and `batch_dims > 0` for gather_nd, which TensorFlow
    ///   refuses: the `batch_dims = 0` gather_nd of each batch row;
    /// - row splits of different dtypes mix (the result's are `int64`).
    ///
    /// ```
    /// use ndgather::{ndarray::array, GatherNdOptions, Op, RaggedView, Tensor};
    /// // [[1, 2], [], [3, 4, 5]], batch_dims=1: row 0 picks its element 1, row 2 its element 2.
    /// let values = Tensor::from(array![1i32, 2, 3, 4, 5].into_dyn());
    /// let splits = [0i32, 2, 2, 5];
    /// let params = RaggedView::new(values.view(), vec![splits[..].into()])?;
    /// let indices = Tensor::from(array![[1i64], [0], [2]].into_dyn());
    /// let op = Op::GatherNd(GatherNdOptions::new().batch_dims(1));
    /// let err = op.run_ragged(params.clone(), indices.view()).unwrap_err();
    /// assert_eq!(err.to_string(), "indices[1] = [0] does not index into ragged params: \
    ///                              component 0 = 0 is not in [0, 0)");
    /// let indices = Tensor::from(array![[1i64], [2]].into_dyn());
    /// let values = Tensor::from(array![1i32, 2, 3, 4, 5].into_dyn());
    /// let params = RaggedView::new(values.view(), vec![[0i32, 2, 5][..].into()])?;
    /// let out = op.run_ragged(params, indices.view())?;
    /// assert_eq!((out.ragged_rank(), out.values), (0, Tensor::from(array![2i32, 5].into_dyn())));
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// TensorFlow's `ValueError`s ([`Error::RaggedValue`]) for an axis or batch_dims
    /// out of range and batch shapes that differ; [`Error::BadIndex`] and
    /// [`Error::RaggedBadIndexVector`] for the first bad index in row-major order
    /// (a ragged `indices`' position is in its flat values);
    /// [`Error::IndicesNotInteger`]; take_along_axis has no ragged form.
    pub fn run_ragged<'p, 'i>(
        &self,
        params: impl Into<RaggedOperand<'p>>,
        indices: impl Into<RaggedOperand<'i>>,
    ) -> Result<Ragged> {
        let (params, indices) = (params.into(), indices.into());
        if let (RaggedOperand::Dense(p), RaggedOperand::Dense(i)) = (&params, &indices) {
            if !i.records {
                // Two dense operands are the dense gather, as tf.gather dispatches them: its
                // cost follows the output, where a walk would visit every row of a
                // zero-element operand's billions.
                let values = self
                    .run(p.clone(), &i.view, Out::New)?
                    .ok_or(Error::Internal("a run into a new output returns it"))?;
                return Ok(Ragged {
                    values,
                    splits: vec![],
                });
            }
        }
        let (values, records) = match &params {
            RaggedOperand::Dense(v) => (v.view.clone(), v.records),
            RaggedOperand::Ragged(r) => (r.values().clone(), r.is_records()),
        };
        // Where the last dimension is params' last ragged one, each leaf's values are one
        // run of rows, copied whole.
        let contiguous = with_tensor!(TensorView, &values, fixed a => a.is_standard_layout(),
            else _dtype => false);
        let (p, i) = (Levels::of(&params), Levels::of(&indices));
        let splits_dtype = match (p.dtype, i.dtype) {
            (Some(a), Some(b)) if a != b => DType::I64,
            (Some(a), _) | (None, Some(a)) => a,
            (None, None) => DType::I64,
        };
        let (values, splits) = self.walked(
            &p,
            &i,
            &indices,
            contiguous,
            |call, walked, runs| match runs {
                true => copy_runs(call, walked, &values),
                false => {
                    let fill = self.fill_value();
                    finish(
                        call,
                        walked,
                        Params {
                            view: values.clone(),
                            records,
                        },
                        fill,
                    )
                }
            },
        )?;
        Ok(Ragged {
            values,
            splits: splits
                .into_iter()
                .map(|s| RowSplits::of_dtype(splits_dtype, s))
                .collect::<Result<_>>()?,
        })
    }

    /// The gradient of [`Op::run_ragged`] with respect to params' flat values, for the
    /// upstream gradient `grad` of the result's flat values: each of the result's values
    /// rows, as [`IndexedSlices`] of the rows it was read from. Rows are those of the values
    /// with their first `depth` dimensions merged, where an index picks inside the values'
    /// dimensions (`dense_shape` then has them merged; reshape its dense form to the values'
    /// shape); filled indices pass no gradient (their slot is past the last row).
    ///
    /// ```
    /// use ndgather::{ndarray::array, GatherOptions, Op, RaggedView, Tensor};
    /// let values = Tensor::from(array![1.0f32, 2.0, 3.0, 4.0, 5.0].into_dyn());
    /// let splits = [0i64, 2, 2, 5];
    /// let params = RaggedView::new(values.view(), vec![splits[..].into()])?;
    /// let indices = Tensor::from(array![2i64, 0, 2].into_dyn());
    /// let op = Op::Gather(GatherOptions::new());
    /// let upstream = array![1.0f32, 1.0, 1.0, 10.0, 10.0, 1.0, 1.0, 1.0].into_dyn();
    /// let g = op.ragged_grad(params, indices.view(), &upstream.view())?;
    /// assert_eq!(g.to_dense()?, array![10.0f32, 10.0, 2.0, 2.0, 2.0].into_dyn());
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Op::run_ragged`]; [`Error::GradShapeMismatch`] for a `grad` of another
    /// shape than the result's values.
    pub fn ragged_grad<'p, 'i, T: Summable>(
        &self,
        params: impl Into<RaggedOperand<'p>>,
        indices: impl Into<RaggedOperand<'i>>,
        grad: &ArrayViewD<'_, T>,
    ) -> Result<IndexedSlices<T>> {
        let (params, indices) = (params.into(), indices.into());
        let (p, i) = (Levels::of(&params), Levels::of(&indices));
        let (rows, shape) = self.walked(&p, &i, &indices, false, |call, walked, _| {
            let depth = call.plan.level - p.ragged_rank();
            let mut shape = lead_shape(call, &walked.counts);
            shape.extend_from_slice(&p.shape[depth..]);
            let merged: usize = p.shape[..depth].iter().product();
            let rows = walked
                .leaves
                .into_iter()
                .map(|leaf| if leaf == FILLED { merged } else { leaf })
                .collect::<Vec<_>>();
            let mut dense = vec![merged];
            dense.extend_from_slice(&p.shape[depth..]);
            Ok(((rows, dense), shape))
        })?;
        let (indices, dense_shape) = rows;
        check_grad(grad.shape(), &shape)?;
        let mut slices = vec![indices.len()];
        slices.extend_from_slice(&dense_shape[1..]);
        let values = into_array(&slices, row_major(grad)?.into_owned())?;
        Ok(IndexedSlices {
            indices,
            values,
            dense_shape,
        })
    }

    /// Plans and walks a ragged call, then hands the walk to `done` (with whether it
    /// stopped before params' last ragged dimension, which it does where `runs` allows).
    fn walked<R>(
        &self,
        p: &Levels,
        i: &Levels,
        indices: &RaggedOperand<'_>,
        runs: bool,
        done: impl FnOnce(&Call, Walked, bool) -> Result<R>,
    ) -> Result<R> {
        if p.rank() == 0 {
            let op = match self {
                Op::GatherNd(_) => OpKind::GatherNd,
                _ => OpKind::Gather,
            };
            return Err(Error::ParamsScalar { op });
        }
        let (plan, policy) = match self {
            Op::Gather(o) => (gather_plan(o, p, i)?, o.bad_indices),
            Op::GatherNd(o) => (gather_nd_plan(o, p, i)?, o.bad_indices),
            Op::TakeAlongAxis(_) => {
                return Err(Error::RaggedValue(
                    "take_along_axis has no ragged form; use gather with batch_dims".into(),
                ))
            }
        };
        let index_values = match indices {
            RaggedOperand::Dense(v) if v.records => {
                return Err(Error::IndicesNotInteger {
                    dtype: v.view.dtype(),
                })
            }
            RaggedOperand::Dense(v) => &v.view,
            RaggedOperand::Ragged(r) if r.is_records() => {
                return Err(Error::IndicesNotInteger {
                    dtype: r.values().dtype(),
                })
            }
            RaggedOperand::Ragged(r) => r.values(),
        };
        let call = Call {
            plan: &plan,
            params: p,
            indices: i,
            ragged_indices: matches!(indices, RaggedOperand::Ragged(_)),
            policy,
        };
        let r = p.ragged_rank();
        let runs = runs && r >= 1 && plan.after.last() == Some(&r);
        let walked = with_tensor!(TensorView, index_values, index idx => {
            let flat = idx.as_standard_layout();
            let flat = flat.as_slice().ok_or(Error::Internal("standard layout is a slice"))?;
            call.walk(flat, index_values.shape(), runs)
        }, else dtype => Err(Error::IndicesNotInteger { dtype }))?;
        done(&call, walked, runs)
    }
}

/// `get_positive_axis` of TensorFlow's Python, with its message.
fn positive_axis(value: i64, rank: usize, name: &str) -> Result<usize> {
    let r = rank as i64;
    if value < -r || value >= r {
        return Err(Error::RaggedValue(format!(
            "{name}={value} out of bounds: expected {}<={name}<{r}",
            -r
        )));
    }
    Ok(if value < 0 { value + r } else { value } as usize)
}

/// TensorFlow's static batch-shape check: the uniform batch dimensions agree.
fn check_batch_shape(params: &Levels, indices: &Levels, batch_dims: usize) -> Result<()> {
    let differ = (0..batch_dims).any(|d| match (params.size(d), indices.size(d)) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    });
    if differ {
        return Err(Error::RaggedValue(format!(
            "batch shape from indices {} does not match params shape {}",
            indices.tf_shape(batch_dims),
            params.tf_shape(params.rank())
        )));
    }
    Ok(())
}

/// The plan of `tf.gather(params, indices, axis, batch_dims)`, checked as TensorFlow's
/// ragged gather checks it.
fn gather_plan(o: &GatherOptions, params: &Levels, indices: &Levels) -> Result<RaggedPlan> {
    let (n, m) = (params.rank(), indices.rank());
    let batch_dims = if o.batch_dims == m as i64 {
        m
    } else {
        positive_axis(o.batch_dims, m, "batch_dims")?
    };
    if batch_dims >= n {
        return Err(Error::RaggedValue(
            "batch_dims must be less than rank(params)".into(),
        ));
    }
    let axis = positive_axis(o.axis.unwrap_or(batch_dims as i64), n, "axis")?;
    if axis < batch_dims {
        return Err(Error::RaggedValue(
            "axis must be greater than or equal to batch_dims".into(),
        ));
    }
    check_batch_shape(params, indices, batch_dims)?;
    let mut before: Vec<Step> = (0..batch_dims).map(Step::Batch).collect();
    before.extend((batch_dims..axis).map(Step::Params));
    before.extend((batch_dims..m).map(Step::Indices));
    Ok(after_pick(before, Pick::Axis(axis), axis + 1, params))
}

/// The plan of `tf.gather_nd(params, indices, batch_dims)`, any `batch_dims`.
fn gather_nd_plan(o: &GatherNdOptions, params: &Levels, indices: &Levels) -> Result<RaggedPlan> {
    let (n, m) = (params.rank(), indices.rank());
    if m == 0 {
        return Err(Error::RaggedValue(
            "indices.rank must be at least 1.".into(),
        ));
    }
    if indices.is_ragged(m - 1) {
        return Err(Error::RaggedValue(
            "The innermost dimension of indices may not be ragged".into(),
        ));
    }
    let batch_dims = usize::try_from(o.batch_dims).map_err(|_| Error::NegativeBatchDims {
        batch_dims: o.batch_dims,
    })?;
    if batch_dims >= m {
        return Err(Error::RaggedValue(format!(
            "batch_dims ({batch_dims}) must be less than rank(indices) ({m})"
        )));
    }
    let depth = indices.size(m - 1).unwrap_or(0);
    if batch_dims + depth > n {
        return Err(Error::IndexDepthTooLarge {
            depth: batch_dims + depth,
            params_rank: n,
        });
    }
    check_batch_shape(params, indices, batch_dims)?;
    let mut before: Vec<Step> = (0..batch_dims).map(Step::Batch).collect();
    before.extend((batch_dims..m - 1).map(Step::Indices));
    let pick = Pick::Vector {
        first: batch_dims,
        depth,
    };
    Ok(after_pick(before, pick, batch_dims + depth, params))
}

/// Completes a plan: params' dimensions from `first` up to its last ragged one follow the
/// pick (dimension 0 too, where a gather_nd of depth 0 copies all of params).
fn after_pick(before: Vec<Step>, pick: Pick, first: usize, params: &Levels) -> RaggedPlan {
    let last_ragged = params.ragged_rank();
    let after: Vec<usize> = (first..=last_ragged).collect();
    let level = first.max(last_ragged + 1);
    RaggedPlan {
        before,
        pick,
        after,
        level,
    }
}

/// A planned call and what its walk reads.
struct Call<'c, 'v, 'a, 'b> {
    plan: &'c RaggedPlan,
    params: &'c Levels<'v, 'a>,
    indices: &'c Levels<'v, 'b>,
    ragged_indices: bool,
    policy: BadIndices,
}

/// The walk's result: the leaves (params rows at the plan's level, or [`FILLED`]), each
/// output dimension's node count, and the splits of the output's ragged dimensions.
struct Walked {
    leaves: Vec<usize>,
    counts: Vec<usize>,
    splits: Vec<Vec<i64>>,
    filled: bool,
}

/// A vector of `len` slots reserved up front, so that a huge output is an error, not an abort.
fn reserve<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
        bytes: len.saturating_mul(std::mem::size_of::<T>()),
    })?;
    Ok(v)
}

/// The splits of output dimension `t` over `rows` rows, begun, where the output keeps them
/// (its ragged dimensions, `1..=keep`).
fn level_splits(t: usize, keep: usize, rows: usize) -> Result<Option<Vec<i64>>> {
    if t == 0 || t > keep {
        return Ok(None);
    }
    let mut s = reserve(rows + 1)?;
    s.push(0i64);
    Ok(Some(s))
}

/// An empty vector for about `hint` leaves: the memory of an earlier call's leaves where
/// the pool kept it (they go to the dense gather as its `u64` indices, which are given
/// back after it), so that a repeated call does not fault in fresh pages for them.
fn kept_leaves(hint: usize) -> Vec<usize> {
    match recycle::take::<u64>(hint) {
        Some(v) => bytemuck::allocation::try_cast_vec(v).unwrap_or_default(),
        None => vec![],
    }
}

/// Room for `more` slots in `v`, or an error rather than an abort.
fn grow<T>(v: &mut Vec<T>, more: usize) -> Result<()> {
    v.try_reserve(more).map_err(|_| Error::OutOfMemory {
        bytes: more.saturating_mul(std::mem::size_of::<T>()),
    })
}

impl Call<'_, '_, '_, '_> {
    /// Output dimension `t`'s size where its source dimension is uniform (in both operands,
    /// for a batch dimension); `None` where it is ragged.
    fn uniform_size(&self, t: usize) -> Option<usize> {
        match self.plan.before.get(t) {
            Some(Step::Batch(d)) => self.indices.size(*d).and(self.params.size(*d)),
            Some(Step::Params(d)) => self.params.size(*d),
            Some(Step::Indices(d)) => self.indices.size(*d),
            None => self
                .params
                .size(self.plan.after[t - self.plan.before.len()]),
        }
    }

    /// Whether output dimension `t` is ragged (dimension 0 never is).
    fn is_ragged(&self, t: usize) -> bool {
        t >= 1 && self.uniform_size(t).is_none()
    }

    /// Output dimension `t`'s size, where it is uniform: the first's is its node count.
    fn size(&self, t: usize, counts: &[usize]) -> usize {
        match t {
            0 => counts[0],
            _ => self.uniform_size(t).unwrap_or(0),
        }
    }

    /// The output's ragged rank: its last ragged dimension.
    fn ragged_rank(&self) -> usize {
        let dims = self.plan.before.len() + self.plan.after.len();
        (0..dims).rev().find(|&t| self.is_ragged(t)).unwrap_or(0)
    }

    /// Where an index of `indices` is, for a message: row-major coordinates of a dense
    /// `indices` (without its last dimension for a vector), the flat position of a ragged
    /// one's values.
    fn position(&self, flat: usize, shape: &[usize]) -> Vec<usize> {
        if self.ragged_indices {
            return vec![flat];
        }
        let dims = match self.plan.pick {
            Pick::Axis(_) => shape,
            Pick::Vector { .. } => &shape[..shape.len() - 1],
        };
        let mut pos = vec![0; dims.len()];
        let mut rest = flat;
        for (k, &d) in dims.iter().enumerate().rev() {
            pos[k] = rest % d.max(1);
            rest /= d.max(1);
        }
        pos
    }

    /// Builds the output's dimensions up to the leaves: the checks of every index run here,
    /// before any value is copied. With `stop_before_last`, params' last ragged dimension is
    /// left to the caller (its runs are copied whole).
    fn walk<I: IndexType>(
        &self,
        idx: &[I],
        index_shape: &[usize],
        stop_before_last: bool,
    ) -> Result<Walked> {
        let walk = |nodes, first, sink: &mut Vec<usize>| {
            self.walk_from(nodes, first, idx, index_shape, stop_before_last, sink)
        };
        let step = match self.plan.before.first() {
            Some(&step) if !self.expanded().is_empty() => step,
            _ => {
                let mut leaves = kept_leaves(idx.len());
                let walked = walk(vec![(0, 0)], 0, &mut leaves)?;
                return Ok(Walked { leaves, ..walked });
            }
        };
        // The output's first dimension is walked in chunks of its rows, so that each level's
        // nodes stay in the cache; the chunks' levels are joined in order.
        let rows = match step {
            Step::Batch(_) | Step::Params(_) => self.params.children(0, 0).1,
            Step::Indices(_) => self.indices.children(0, 0).1,
        };
        if let Some(counts) = self.empty_dense(rows) {
            return Ok(Walked {
                leaves: vec![],
                counts,
                splits: vec![],
                filled: false,
            });
        }
        let mut whole = Walked {
            leaves: kept_leaves(idx.len()),
            counts: vec![rows],
            splits: vec![],
            filled: false,
        };
        if self.ragged_rank() == 0 {
            // A dense output's leaves are counted before the walk and reserved at once, so
            // that billions of rows of a zero-element operand are an error now, not after
            // hours of picks.
            let leaves = (1..self.plan.before.len())
                .try_fold(rows, |n, t| n.checked_mul(self.uniform_size(t)?));
            grow(&mut whole.leaves, leaves.unwrap_or(usize::MAX))?;
        }
        for start in (0..rows).step_by(CHUNK_ROWS) {
            let end = (start + CHUNK_ROWS).min(rows);
            let nodes = (start..end)
                .map(|c| match step {
                    Step::Batch(_) => (c, c),
                    Step::Params(_) => (c, 0),
                    Step::Indices(_) => (0, c),
                })
                .collect();
            let part = walk(nodes, 1, &mut whole.leaves)?;
            for (k, s) in part.splits.into_iter().enumerate() {
                // Splits of dimension k + 1 count the nodes of that dimension's level.
                let offset = whole.counts.get(k + 1).copied().unwrap_or(0) as i64;
                // Fallible growth: a hostile dense dimension of billions of rows is an
                // error here, not an abort.
                match whole.splits.get_mut(k) {
                    Some(w) => {
                        grow(w, s.len() - 1)?;
                        w.extend(s[1..].iter().map(|x| x + offset));
                    }
                    None if k == 0 => {
                        // The first kept dimension has a split per row: all reserved at once.
                        let mut w = reserve(rows.saturating_add(1))?;
                        w.extend(s);
                        whole.splits.push(w);
                    }
                    None => whole.splits.push(s),
                }
            }
            for (j, n) in part.counts.into_iter().enumerate() {
                match whole.counts.get_mut(j + 1) {
                    Some(w) => *w += n,
                    None => whole.counts.push(n),
                }
            }
            whole.filled |= part.filled;
        }
        if rows == 0 {
            // No rows: the later levels are empty, with their splits' one 0.
            let part = walk(vec![], 1, &mut whole.leaves)?;
            whole.splits = part.splits;
            whole.counts.extend(part.counts);
        }
        Ok(whole)
    }

    /// The node counts of a dense output with no leaves (a uniform dimension of size 0
    /// before the pick), which need no walk: nothing is picked, so no index is read, and
    /// walking billions of rows of a zero-element operand would only count them.
    fn empty_dense(&self, rows: usize) -> Option<Vec<usize>> {
        let before = self.plan.before.len();
        if self.ragged_rank() != 0 || (1..before).all(|t| self.uniform_size(t) != Some(0)) {
            return None;
        }
        // A dense output never stops before params' last ragged dimension (it has none).
        let levels = before + self.plan.after.len();
        let mut counts = vec![rows];
        for t in 1..levels {
            let size = self.uniform_size(t)?;
            counts.push(counts[t - 1].saturating_mul(size));
        }
        Some(counts)
    }

    /// The steps expanded one level at a time: all before the pick but the last of
    /// indices' dimensions, which goes with the pick (`pick_children`).
    fn expanded(&self) -> &[Step] {
        let before = &self.plan.before;
        let fused = matches!(before.last(), Some(Step::Indices(_)));
        &before[..before.len() - usize::from(fused)]
    }

    /// [`Call::walk`] from `nodes`, the level after step `first`; the leaves are appended to
    /// `sink` (the returned walk has none).
    fn walk_from<I: IndexType>(
        &self,
        mut nodes: Vec<(usize, usize)>,
        first: usize,
        idx: &[I],
        index_shape: &[usize],
        stop_before_last: bool,
        sink: &mut Vec<usize>,
    ) -> Result<Walked> {
        let keep = self.ragged_rank();
        let (params, indices) = (self.params, self.indices);
        let mut counts = Vec::new();
        let mut splits = Vec::new();
        let before = &self.plan.before;
        let fused = match before.last() {
            Some(&Step::Indices(d)) => Some(d),
            _ => None,
        };
        let expanded = self.expanded();
        for (t, step) in expanded.iter().enumerate().skip(first) {
            let children = |&(p, i): &(usize, usize)| -> Result<(usize, usize, usize)> {
                Ok(match *step {
                    Step::Batch(d) => {
                        let ((ps, pl), (is, il)) = (params.children(d, p), indices.children(d, i));
                        if pl != il {
                            return Err(Error::RaggedValue(format!(
                                "batch shape from indices does not match params shape: in \
                                 batch dimension {d}, a row has {pl} elements in params but \
                                 {il} in indices"
                            )));
                        }
                        (ps, is, pl)
                    }
                    Step::Params(d) => {
                        let (ps, pl) = params.children(d, p);
                        (ps, i, pl)
                    }
                    Step::Indices(d) => {
                        let (is, il) = indices.children(d, i);
                        (p, is, il)
                    }
                })
            };
            let mut total = 0usize;
            for n in &nodes {
                total = total.saturating_add(children(n)?.2);
            }
            let mut next = reserve(total)?;
            let mut level_splits = level_splits(t, keep, nodes.len())?;
            for n in &nodes {
                let (ps, is, len) = children(n)?;
                for c in 0..len {
                    next.push(match step {
                        Step::Batch(_) => (ps + c, is + c),
                        Step::Params(_) => (ps + c, is),
                        Step::Indices(_) => (ps, is + c),
                    });
                }
                if let Some(s) = &mut level_splits {
                    s.push(next.len() as i64);
                }
            }
            splits.extend(level_splits);
            counts.push(next.len());
            nodes = next;
        }
        let b = self.plan.before.len();
        let after = &self.plan.after[..self.plan.after.len() - usize::from(stop_before_last)];
        // Leaves go straight to the sink, or through params' later levels first.
        let mut leaves = vec![];
        let target = if after.is_empty() {
            &mut *sink
        } else {
            &mut leaves
        };
        let filled = match fused {
            Some(d) => {
                let t = before.len() - 1;
                let mut level_splits = level_splits(t, keep, nodes.len())?;
                let start = target.len();
                let filled =
                    self.pick_children(&nodes, d, idx, index_shape, &mut level_splits, target)?;
                splits.extend(level_splits);
                counts.push(target.len() - start);
                filled
            }
            None => self.pick(&nodes, idx, index_shape, target)?,
        };
        drop(nodes);
        for (a, &d) in after.iter().enumerate() {
            let t = b + a;
            let mut total = 0usize;
            for &p in &leaves {
                if p != FILLED {
                    total = total.saturating_add(params.children(d, p).1);
                }
            }
            let mut next = reserve(total)?;
            let mut level_splits = level_splits(t, keep, leaves.len())?;
            for &p in &leaves {
                if p != FILLED {
                    let (ps, pl) = params.children(d, p);
                    next.extend(ps..ps + pl);
                }
                if let Some(s) = &mut level_splits {
                    s.push(next.len() as i64);
                }
            }
            splits.extend(level_splits);
            counts.push(next.len());
            leaves = next;
        }
        sink.extend(leaves);
        Ok(Walked {
            leaves: vec![],
            counts,
            splits,
            filled,
        })
    }

    /// Each node's index (or index vector) picks a row of params; the first bad one in
    /// row-major order is the error, unless the policy fills it.
    fn pick<I: IndexType>(
        &self,
        nodes: &[(usize, usize)],
        idx: &[I],
        index_shape: &[usize],
        out: &mut Vec<usize>,
    ) -> Result<bool> {
        grow(out, nodes.len())?;
        let mut filled = false;
        for &(p, i) in nodes {
            let picked = self.pick_one(p, i, idx, index_shape)?;
            filled |= picked == FILLED;
            out.push(picked);
        }
        Ok(filled)
    }

    /// The params row that index (or index vector) `i` picks among row `p`'s children.
    #[inline]
    fn pick_one<I: IndexType>(
        &self,
        p: usize,
        i: usize,
        idx: &[I],
        index_shape: &[usize],
    ) -> Result<usize> {
        match self.plan.pick {
            Pick::Axis(axis) => {
                let (start, len) = self.params.children(axis, p);
                self.resolve(start, len, idx[i], i, index_shape)
            }
            Pick::Vector { first, depth } => {
                let vector = &idx[i * depth..(i + 1) * depth];
                let mut row = p;
                for (k, &v) in vector.iter().enumerate() {
                    let (start, len) = self.params.children(first + k, row);
                    match self.policy.resolve(v, len) {
                        Some(u) => row = start + u,
                        None if self.fills() => return Ok(FILLED),
                        None => {
                            return Err(Error::RaggedBadIndexVector {
                                position: self.position(i, index_shape),
                                values: vector.iter().map(|v| v.to_i128()).collect(),
                                component: k,
                                value: v.to_i128(),
                                limit: len,
                            })
                        }
                    }
                }
                Ok(row)
            }
        }
    }

    /// Index `v` (at `i` in indices) among the `len` children from `start`.
    #[inline(always)]
    fn resolve<I: IndexType>(
        &self,
        start: usize,
        len: usize,
        v: I,
        i: usize,
        index_shape: &[usize],
    ) -> Result<usize> {
        match self.policy.resolve(v, len) {
            Some(u) => Ok(start + u),
            None if self.fills() => Ok(FILLED),
            None => Err(Error::BadIndex {
                position: self.position(i, index_shape),
                value: v.to_i128(),
                limit: len,
            }),
        }
    }

    fn fills(&self) -> bool {
        matches!(self.policy, BadIndices::Ignore | BadIndices::Fill)
    }

    /// The last of indices' dimensions and the pick in one pass: each node's children share
    /// its params row, whose children are looked up once.
    fn pick_children<I: IndexType>(
        &self,
        nodes: &[(usize, usize)],
        d: usize,
        idx: &[I],
        index_shape: &[usize],
        level_splits: &mut Option<Vec<i64>>,
        out: &mut Vec<usize>,
    ) -> Result<bool> {
        let indices = self.indices;
        if let Pick::Axis(axis) = self.plan.pick {
            if indices.is_ragged(d) && self.params.is_ragged(axis) {
                // Both levels ragged (a per-row gather): their splits read as typed slices.
                let (a, b) = (&self.params.splits[axis - 1], &indices.splits[d - 1]);
                let rows = Rows {
                    nodes,
                    idx,
                    index_shape,
                };
                let start = out.len();
                match (a, b) {
                    (RowSplits::I64(a), RowSplits::I64(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                    (RowSplits::I64(a), RowSplits::I32(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                    (RowSplits::I32(a), RowSplits::I64(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                    (RowSplits::I32(a), RowSplits::I32(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                }
                return Ok(self.fills() && out[start..].contains(&FILLED));
            }
        }
        let total = nodes.iter().fold(0usize, |n, &(_, i)| {
            n.saturating_add(indices.children(d, i).1)
        });
        grow(out, total)?;
        let start = out.len();
        for &(p, i) in nodes {
            let (is, il) = indices.children(d, i);
            match self.plan.pick {
                Pick::Axis(axis) => {
                    let (start, len) = self.params.children(axis, p);
                    for (c, &v) in idx[is..is + il].iter().enumerate() {
                        out.push(self.resolve(start, len, v, is + c, index_shape)?);
                    }
                }
                Pick::Vector { .. } => {
                    for c in is..is + il {
                        out.push(self.pick_one(p, c, idx, index_shape)?);
                    }
                }
            }
            if let Some(s) = level_splits {
                s.push((out.len() - start) as i64);
            }
        }
        Ok(self.fills() && out[start..].contains(&FILLED))
    }

    /// [`Call::pick_children`] where indices' level and params' picked level are both
    /// ragged: node `(p, i)`'s indices are `b[i]..b[i + 1]`, each among `a[p]..a[p + 1]`.
    fn pick_rows<I: IndexType, A: SplitAt, B: SplitAt>(
        &self,
        a: A,
        b: B,
        rows: Rows<'_, I>,
        level_splits: &mut Option<Vec<i64>>,
        out: &mut Vec<usize>,
    ) -> Result<()> {
        let total = rows
            .nodes
            .iter()
            .fold(0usize, |n, &(_, i)| n.saturating_add(b.at(i + 1) - b.at(i)));
        grow(out, total)?;
        let start = out.len();
        for &(p, i) in rows.nodes {
            let (is, ie) = (b.at(i), b.at(i + 1));
            let (first, len) = (a.at(p), a.at(p + 1) - a.at(p));
            let row = &rows.idx[is..ie];
            // A row of good indices (the common case) is checked, then written in one
            // pass; one with a bad index goes through its policy index by index.
            if row.iter().all(|v| v.checked_index(len).is_some()) {
                out.extend(
                    row.iter()
                        .map(|v| first + v.checked_index(len).unwrap_or(0)),
                );
            } else {
                for (c, &v) in row.iter().enumerate() {
                    out.push(self.resolve(first, len, v, is + c, rows.index_shape)?);
                }
            }
            if let Some(s) = level_splits {
                s.push((out.len() - start) as i64);
            }
        }
        Ok(())
    }
}

/// The nodes of a pick and the indices they read.
#[derive(Clone, Copy)]
struct Rows<'r, I> {
    nodes: &'r [(usize, usize)],
    idx: &'r [I],
    index_shape: &'r [usize],
}

/// One ragged level's splits as a typed slice, read once per row in the per-row loops
/// (checked: every split is in range and non-negative).
trait SplitAt: Copy {
    fn at(self, k: usize) -> usize;
}

impl SplitAt for &[i32] {
    #[inline(always)]
    fn at(self, k: usize) -> usize {
        self[k] as usize
    }
}

impl SplitAt for &[i64] {
    #[inline(always)]
    fn at(self, k: usize) -> usize {
        self[k] as usize
    }
}

/// Copies each leaf's run of values rows (the walk stopped before params' last ragged
/// dimension, the output's last): the output's values and its ragged dimensions' splits.
fn copy_runs(
    call: &Call,
    walked: Walked,
    values: &TensorView<'_>,
) -> Result<(Tensor, Vec<Vec<i64>>)> {
    let Walked {
        leaves, mut splits, ..
    } = walked;
    let last = &call.params.splits[call.params.ragged_rank() - 1];
    let mut starts = reserve(leaves.len())?;
    let mut offsets = reserve(leaves.len() + 1)?;
    offsets.push(0usize);
    let mut total = 0usize;
    for &leaf in &leaves {
        let (start, len) = match leaf {
            FILLED => (0, 0),
            p => (last.at(p), last.at(p + 1) - last.at(p)),
        };
        starts.push(start);
        total += len;
        offsets.push(total);
    }
    drop(leaves);
    let mut shape = values.shape().to_vec();
    shape[0] = total;
    let block: usize = shape[1..].iter().product();
    let out = with_tensor!(TensorView, values, fixed a => {
        let slice = a.as_slice().ok_or(Error::Internal("checked contiguous"))?;
        let data = ranges::concat_rows(slice, block, &starts, &offsets, &shape)?;
        Tensor::from(into_array(&shape, data)?)
    }, else _dtype => return Err(Error::Internal("runs of fixed-width values only")));
    // The last dimension is ragged unless it is the output's first.
    if call.plan.before.len() + call.plan.after.len() > 1 {
        splits.push(offsets.into_iter().map(|o| o as i64).collect());
    }
    Ok((out, splits))
}

/// The leading shape of the result's values: the rows of the dimension after its last
/// ragged one, then the uniform dimensions up to the leaves.
fn lead_shape(call: &Call, counts: &[usize]) -> Vec<usize> {
    let keep = call.ragged_rank();
    let mut lead: Vec<usize> = match counts.len() {
        0 => vec![],
        _ => vec![counts[keep]],
    };
    lead.extend((keep + 1..counts.len()).map(|t| call.size(t, counts)));
    lead
}

/// Copies the leaves' values: the output's values and its ragged dimensions' splits.
fn finish(
    call: &Call,
    walked: Walked,
    values: Params<'_>,
    fill: FillValue,
) -> Result<(Tensor, Vec<Vec<i64>>)> {
    let Walked {
        leaves,
        counts,
        splits,
        filled,
    } = walked;
    let params = call.params;
    let r = params.ragged_rank();
    let lead = lead_shape(call, &counts);
    let depth = call.plan.level - r;
    let policy = if filled {
        call.policy
    } else {
        BadIndices::Error
    };
    // Depth 1 is a row gather: the dense gather takes the leaves themselves as indices
    // (a filled one out of range), which also lets a filled index read nothing from values
    // with no rows, the only depth where that occurs.
    let index = if depth == 1 {
        // A filled leaf (`usize::MAX`) is out of range as a `u64` too.
        let rows: Vec<u64> = bytemuck::allocation::try_cast_vec(leaves)
            .unwrap_or_else(|(_, v)| v.into_iter().map(|l| l as u64).collect());
        let o = GatherOptions::new()
            .axis(0)
            .bad_indices(policy)
            .fill_value(fill);
        (Op::Gather(o), Tensor::from(into_array(&lead, rows)?))
    } else {
        let shape = params.shape;
        let mut index = reserve(leaves.len().saturating_mul(depth))?;
        for &leaf in &leaves {
            if leaf == FILLED {
                index.push(shape[0] as i64);
                index.extend(std::iter::repeat_n(0i64, depth - 1));
                continue;
            }
            let start = index.len();
            let mut rest = leaf;
            for &d in shape[..depth].iter().rev() {
                index.push((rest % d.max(1)) as i64);
                rest /= d.max(1);
            }
            index[start..].reverse();
        }
        let o = GatherNdOptions::new().bad_indices(policy).fill_value(fill);
        let mut index_shape = lead;
        index_shape.push(depth);
        (
            Op::GatherNd(o),
            Tensor::from(into_array(&index_shape, index)?),
        )
    };
    let (op, index) = index;
    let out = op
        .run(values, &index.view(), Out::New)?
        .ok_or(Error::Internal("a run into a new output returns it"))?;
    index.recycle();
    Ok((out, splits))
}
