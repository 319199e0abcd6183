//! Gathers on ragged operands: TensorFlow's ragged `tf.gather` and `tf.gather_nd`, which
//! the registered ops run where an input is [`Input::Ragged`](crate::registry::Input), and
//! the `batch_dims > 0` gather_nd that TensorFlow refuses, defined as the `batch_dims = 0`
//! gather_nd of each batch row, as for dense tensors.
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

mod ragged_copy;
mod ragged_walk;

use crate::engine::layout::{into_array, row_major};
use crate::ops::gather::{GatherNdOptions, GatherOptions};
use crate::ops::grad::{check_grad, IndexedSlices};
use crate::ops::{Op, Out, Params};
use crate::types::arith::Arith;
use crate::types::dtype::{DType, TensorView};
use crate::types::error::{Error, OpKind, Result};
use crate::types::index::with_indices;
use crate::types::ragged::{Ragged, RaggedView, RowSplits};
use crate::with_tensor;
use ndarray::ArrayViewD;
use ragged_copy::{copy_runs, finish, lead_shape};
use ragged_walk::{Call, Walked};

/// An operand of a ragged gather: a dense tensor or a ragged one.
///
/// ```
/// use ndgather::registry::{Input, Value};
/// use ndgather::{ndarray::array, GatherOptions, Op, OpDef, Out, RaggedView, Tensor};
/// // tf.gather(tf.ragged.constant([[1, 2], [], [3, 4, 5]]), [2, 0])
/// let values = Tensor::from(array![1i32, 2, 3, 4, 5].into_dyn());
/// let splits = [0i64, 2, 2, 5];
/// let params = RaggedView::new(values.view(), vec![splits[..].into()])?;
/// let indices = Tensor::from(array![2i64, 0].into_dyn());
/// let op = Op::Gather(GatherOptions::new());
/// let inputs = [Input::Ragged(params), Input::Tensor(indices.view())];
/// let Some(Value::Ragged(out)) = OpDef::run(&op, &inputs, Out::New)? else { unreachable!() };
/// assert_eq!(out.values, Tensor::from(array![3i32, 4, 5, 1, 2].into_dyn()));
/// assert_eq!(out.splits[0].to_vec(), [0, 3, 5]);
/// # Ok::<(), ndgather::Error>(())
/// ```
#[derive(Debug, Clone)]
pub(crate) enum RaggedOperand<'a> {
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
    /// use ndgather::registry::{Input, Value};
    /// use ndgather::{ndarray::array, GatherNdOptions, Op, OpDef, Out, RaggedView, Tensor};
    /// // [[1, 2], [], [3, 4, 5]], batch_dims=1: row 0 picks its element 1, row 2 its element 2.
    /// let values = Tensor::from(array![1i32, 2, 3, 4, 5].into_dyn());
    /// let splits = [0i32, 2, 2, 5];
    /// let params = RaggedView::new(values.view(), vec![splits[..].into()])?;
    /// let indices = Tensor::from(array![[1i64], [0], [2]].into_dyn());
    /// let op = Op::GatherNd(GatherNdOptions::new().batch_dims(1));
    /// let inputs = [Input::Ragged(params), Input::Tensor(indices.view())];
    /// let err = OpDef::run(&op, &inputs, Out::New).unwrap_err();
    /// assert_eq!(err.to_string(), "indices[1] = [0] does not index into ragged params: \
    ///                              component 0 = 0 is not in [0, 0)");
    /// let indices = Tensor::from(array![[1i64], [2]].into_dyn());
    /// let params = RaggedView::new(values.view(), vec![[0i32, 2, 5][..].into()])?;
    /// let inputs = [Input::Ragged(params), Input::Tensor(indices.view())];
    /// let out = OpDef::run(&op, &inputs, Out::New)?.unwrap().into_dense()?;
    /// assert_eq!(out, Tensor::from(array![2i32, 5].into_dyn()));
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// TensorFlow's `ValueError`s ([`Error::RaggedValue`]) for an axis or batch_dims
    /// out of range and batch shapes that differ; [`Error::BadIndex`] and
    /// [`Error::RaggedBadIndexVector`] for the first bad index in row-major order
    /// (a ragged `indices`' position is in its flat values);
    /// [`Error::IndicesNotInteger`]; take_along_axis has no ragged form.
    pub(crate) fn run_ragged<'p, 'i>(
        &self,
        params: impl Into<RaggedOperand<'p>>,
        indices: impl Into<RaggedOperand<'i>>,
    ) -> Result<Ragged> {
        let (params, indices) = (params.into(), indices.into());
        if let (RaggedOperand::Dense(p), RaggedOperand::Dense(i)) = (&params, &indices) {
            let (i, records) = i.view()?;
            if !records {
                // Two dense operands are the dense gather, as tf.gather dispatches them: its
                // cost follows the output, where a walk would visit every row of a
                // zero-element operand's billions.
                let values = self
                    .run(p.clone(), &i, Out::New)?
                    .ok_or(Error::Internal("a run into a new output returns it"))?;
                return Ok(Ragged {
                    values,
                    splits: vec![],
                });
            }
        }
        let (values, records) = match &params {
            RaggedOperand::Dense(v) => v.view()?,
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
                        match records {
                            true => Params::records(values.clone()),
                            false => Params::from(values.clone()),
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

    /// The gradient of `run_ragged` with respect to params' flat values, for the
    /// upstream gradient `grad` of the result's flat values: each of the result's values
    /// rows, as [`IndexedSlices`] of the rows it was read from. Rows are those of the values
    /// with their first `depth` dimensions merged, where an index picks inside the values'
    /// dimensions (`dense_shape` then has them merged; reshape its dense form to the values'
    /// shape); filled indices pass no gradient (their slot is past the last row).
    ///
    /// Front ends reach it as the registered `gather_grad` (`gather_nd_grad`) with params'
    /// row splits:
    ///
    /// ```
    /// use ndgather::registry::{self, Attr, Attrs, Input, Value};
    /// use ndgather::{ndarray::array, Out, Tensor};
    /// // params [[1, 2], [], [3, 4, 5]]: flat values of shape [5]
    /// let splits = Tensor::from(array![0i64, 2, 2, 5].into_dyn());
    /// let indices = Tensor::from(array![2i64, 0, 2].into_dyn());
    /// let op = registry::find("gather_grad")?
    ///     .with_attrs(&Attrs::new().with("params_shape", Attr::Ints(vec![5])))?;
    /// let upstream = Tensor::from(array![1.0f32, 1.0, 1.0, 10.0, 10.0, 1.0, 1.0, 1.0].into_dyn());
    /// let inputs = [indices.view().into(), upstream.view().into(), Input::List(vec![splits.view()])];
    /// let Some(Value::Sparse(g)) = op.run(&inputs, Out::New)? else { unreachable!() };
    /// assert_eq!(g[0].indices, [2, 3, 4, 0, 1, 2, 3, 4]);
    /// assert_eq!(g[0].dense_shape, [5]);
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// As `run_ragged`; [`Error::GradShapeMismatch`] for a `grad` of another
    /// shape than the result's values.
    pub(crate) fn ragged_grad<'p, 'i, T: Arith>(
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
        let dense_indices;
        let index_values = match indices {
            RaggedOperand::Dense(v) => {
                let (view, records) = v.view()?;
                if records {
                    return Err(Error::IndicesNotInteger {
                        dtype: view.dtype(),
                    });
                }
                dense_indices = view;
                &dense_indices
            }
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
        let walked = with_indices!(index_values, idx => {
            let flat = idx.as_standard_layout();
            let flat = flat.as_slice().ok_or(Error::Internal("standard layout is a slice"))?;
            call.walk(flat, index_values.shape(), runs)
        }, else dtype => Err(Error::IndicesNotInteger { dtype }))?;
        done(&call, walked, runs)
    }
}

/// `get_positive_axis` of TensorFlow's Python, with its message.
fn positive_axis(value: i64, rank: usize, name: &str) -> Result<usize> {
    crate::shape::wrap_axis(value, rank).ok_or_else(|| {
        Error::RaggedValue(format!(
            "{name}={value} out of bounds: expected {}<={name}<{rank}",
            -(rank as i64)
        ))
    })
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
