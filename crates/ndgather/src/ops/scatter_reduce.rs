//! PyTorch's `scatter_reduce(input, dim, index, src, reduce, include_self)`: each element of
//! `src` at a position of `index` is reduced into `input` at the same position, except along
//! `dim`, where it lands at the index. The write side of PyTorch's `gather`.
//!
//! - **Shapes** are PyTorch's: `index` has `input`'s rank (a 0-d tensor counts as 1-d) and
//!   `src`'s; along every dimension `index` is no larger than `src`, and no larger than
//!   `input` except along `dim`. Only `index`'s extent of `src` is read. An empty `index`
//!   writes nothing and is not checked further, as in PyTorch.
//! - **Reductions**: `Sum`, `Prod`, `Mean`, `Amax`, `Amin`. With `include_self`, `input`'s
//!   element takes part; without, every element some index names is first set to the
//!   reduction's identity (0, 1, −∞ or the lowest value, +∞ or the highest), as PyTorch's
//!   CPU kernel does, so a sum of `-0.0`s is `+0.0` there too.
//! - **Order and arithmetic**: PyTorch's CPU kernel, bit for bit. Each element meets its
//!   values in the order of `index` (row-major), one operation at a time: integers wrap;
//!   float16 and bfloat16 are reduced in `f32` and rounded once at the end; complex128
//!   products are
//!   PyTorch's fused multiply-adds. (PyTorch's half-type kernel writes NaNs with payloads
//!   that depend on its code path, `0x7e00`, `0x7fff` or `0xffff`; ndgather's NaNs are in
//!   the same places, with the payload that IEEE arithmetic propagates.) `Amax`/`Amin` propagate NaN (a NaN value wins, a NaN
//!   already there stays), unlike TensorFlow's `tensor_scatter_nd_max`. `Mean` divides the
//!   sum by the count of values, counted as the sum is and divided in the dtype, rounding
//!   integers toward −∞.
//! - **Dtypes**: every number and `bool` (`Sum` is "or", `Prod` "and" for bool); not `Mean`
//!   of bool or `Amax`/`Amin` of complex numbers, which PyTorch does not implement either.
//!   PyTorch's CPU kernel also lacks the unsigned types wider than 8 bits in most
//!   reductions, and indices other than int32 and int64; ndgather takes them with the same
//!   rules.
//! - **Bad indices** follow the [`BadIndices`] policy: `Error` (PyTorch) refuses the call,
//!   naming the first in row-major order, before anything is written; `Ignore` and `Fill`
//!   drop the value; `Clamp`, `Negative` and `Wrap` map it into range.
//! - **Errors** are PyTorch's messages, sorted by the class PyTorch raises:
//!   [`Error::TorchIndex`], [`Error::TorchRuntime`],
//!   [`Error::TorchNotImplemented`].
//!
//! The op is a value of the registry ([`crate::registry`]): it runs through
//! [`OpDef::run`](crate::OpDef::run), into a new tensor or in place.
//!
//! ```
//! use ndgather::ndarray::array;
//! use ndgather::scatter_reduce::{Reduction, ScatterReduce};
//! use ndgather::{OpDef, Out, Tensor, TensorView};
//!
//! let input = array![1.0f32, 2.0, 3.0, 4.0].into_dyn();
//! let index = array![0i64, 1, 0, 1, 2, 1].into_dyn();
//! let src = array![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].into_dyn();
//! let inputs = [
//!     TensorView::from(input.view()).into(),
//!     TensorView::from(index.view()).into(),
//!     TensorView::from(src.view()).into(),
//! ];
//! let sum = ScatterReduce::new(0, Reduction::Sum);
//! let out = sum.run(&inputs, Out::New)?.unwrap().into_dense()?;
//! assert_eq!(out, Tensor::from(array![5.0f32, 14.0, 8.0, 4.0].into_dyn()));
//! let mean = ScatterReduce::new(0, Reduction::Mean).include_self(false);
//! let out = mean.run(&inputs, Out::New)?.unwrap().into_dense()?;
//! assert_eq!(out, Tensor::from(array![2.0f32, 4.0, 5.0, 4.0].into_dyn()));
//! # Ok::<(), ndgather::Error>(())
//! ```

mod reduce_arith;
mod reduce_grad;

use crate::types::arith::Arith;
use crate::types::index::with_indices;

use crate::engine::kernel::first_bad_vector;
use crate::engine::layout::{row_major, update_row_major};
use crate::ops::{fresh_copy, typed_like};
use crate::types::dtype::{DType, Tensor, TensorView, TensorViewMut};
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use crate::with_tensor;
use ndarray::{ArrayViewD, ArrayViewMutD};

/// How the values that land on one element are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// Their sum.
    Sum,
    /// Their product.
    Prod,
    /// Their sum divided by their count.
    Mean,
    /// The largest, NaN if any is NaN.
    Amax,
    /// The smallest, NaN if any is NaN.
    Amin,
}

impl Reduction {
    /// Every reduction.
    pub const ALL: [Reduction; 5] = [
        Reduction::Sum,
        Reduction::Prod,
        Reduction::Mean,
        Reduction::Amax,
        Reduction::Amin,
    ];

    /// PyTorch's name: `"sum"`, `"prod"`, `"mean"`, `"amax"` or `"amin"`.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Prod => "prod",
            Reduction::Mean => "mean",
            Reduction::Amax => "amax",
            Reduction::Amin => "amin",
        }
    }

    /// The reduction of a name, as PyTorch reads it (which also takes `"max"` and `"min"`).
    ///
    /// ```
    /// use ndgather::scatter_reduce::Reduction;
    /// assert_eq!(Reduction::from_name("amax").unwrap(), Reduction::Amax);
    /// assert_eq!(
    ///     Reduction::from_name("add").unwrap_err().to_string(),
    ///     "reduce argument must be either sum, prod, mean, amax or amin, got add"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`Error::TorchRuntime`] for another name, with PyTorch's message.
    pub fn from_name(name: &str) -> Result<Reduction> {
        match name {
            "max" => Ok(Reduction::Amax),
            "min" => Ok(Reduction::Amin),
            _ => Reduction::ALL
                .into_iter()
                .find(|r| r.name() == name)
                .ok_or_else(|| {
                    Error::TorchRuntime(format!(
                        "reduce argument must be either sum, prod, mean, amax or amin, got {name}"
                    ))
                }),
        }
    }
}

/// PyTorch's `scatter_reduce`: the dimension, the reduction, whether `input`'s own elements
/// take part, and the policy for bad indices (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ScatterReduce {
    /// The dimension along which indices point (negative counts from the end).
    pub dim: i64,
    /// How values that land on one element combine.
    pub reduce: Reduction,
    /// Whether `input`'s element is one of them.
    pub include_self: bool,
    /// What a bad index does.
    pub bad_indices: BadIndices,
}

/// The geometry of a checked call: offsets in elements of row-major `input` and `src`.
struct ReducePlan {
    /// `index`'s shape (at least 1-d).
    shape: Vec<usize>,
    dim: usize,
    /// `input`'s size along `dim`: the limit of every index.
    along: usize,
    input_strides: Vec<usize>,
    src_strides: Vec<usize>,
}

impl ReducePlan {
    /// Calls `f(input element or None, src element)` for every position of `index`, in
    /// row-major order.
    fn walk<I: IndexType>(
        &self,
        index: &[I],
        policy: BadIndices,
        mut f: impl FnMut(Option<usize>, usize),
    ) {
        let rank = self.shape.len();
        let mut coords = vec![0usize; rank];
        let (mut base, mut s) = (0usize, 0usize);
        for &i in index {
            let target = policy
                .resolve(i, self.along)
                .map(|t| base + t * self.input_strides[self.dim]);
            f(target, s);
            // The next position: the last coordinate steps, carrying leftwards.
            for d in (0..rank).rev() {
                coords[d] += 1;
                if d != self.dim {
                    base += self.input_strides[d];
                }
                s += self.src_strides[d];
                if coords[d] < self.shape[d] {
                    break;
                }
                if d != self.dim {
                    base -= coords[d] * self.input_strides[d];
                }
                s -= coords[d] * self.src_strides[d];
                coords[d] = 0;
            }
        }
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (1..shape.len()).rev() {
        strides[d - 1] = strides[d] * shape[d];
    }
    strides
}

/// PyTorch's sizes in a message: `[2, 3]`.
fn sizes(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// A 0-d shape as PyTorch's checks see it: 1-d of size 1.
fn nonempty(shape: &[usize]) -> Vec<usize> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    }
}

impl ScatterReduce {
    /// `reduce` along `dim`, with `include_self` and PyTorch's refusal of bad indices.
    pub fn new(dim: i64, reduce: Reduction) -> ScatterReduce {
        ScatterReduce {
            dim,
            reduce,
            include_self: true,
            bad_indices: BadIndices::Error,
        }
    }

    /// Sets whether `input`'s own elements take part.
    pub fn include_self(mut self, include_self: bool) -> ScatterReduce {
        self.include_self = include_self;
        self
    }

    /// Sets the policy for bad indices.
    pub fn bad_indices(mut self, policy: BadIndices) -> ScatterReduce {
        self.bad_indices = policy;
        self
    }

    /// Whether the op takes tensors of `dtype` (see the module's documentation).
    ///
    /// ```
    /// use ndgather::scatter_reduce::{Reduction, ScatterReduce};
    /// use ndgather::DType;
    /// assert!(ScatterReduce::new(0, Reduction::Sum).supports(DType::Bool));
    /// assert!(!ScatterReduce::new(0, Reduction::Amax).supports(DType::C64));
    /// ```
    pub fn supports(&self, dtype: DType) -> bool {
        match dtype {
            DType::Bool => reduce_arith::step::<bool>(self.reduce).is_some(),
            _ => {
                crate::with_dtype!(dtype, number T => reduce_arith::step::<<T as Arith>::Acc>(self.reduce).is_some(), else false)
            }
        }
    }

    /// The op into a new tensor: a copy of `input` with `src` reduced into it.
    ///
    /// # Errors
    /// [`Error::TorchIndex`] for `dim` out of range; [`Error::TorchRuntime`] for
    /// shapes PyTorch refuses, `src` of another dtype, indices not of an integer dtype, and
    /// bad indices under `BadIndices::Error`; [`Error::TorchNotImplemented`] for a
    /// dtype the reduction does not take.
    pub(crate) fn run_new(
        &self,
        input: TensorView<'_>,
        index: &TensorView<'_>,
        src: &TensorView<'_>,
    ) -> Result<Tensor> {
        let plan = self.check(input.dtype(), input.shape(), index, src)?;
        let mut out = with_tensor!(TensorView, &input, fixed t => Tensor::from(fresh_copy(t)?),
            else dtype => return Err(self.not_implemented(dtype)));
        self.apply(out.view_mut(), index, src, plan)?;
        Ok(out)
    }

    /// The op in place, on `input`'s elements. Every check runs first, so on error `input`
    /// is unchanged.
    ///
    /// # Errors
    /// As [`Self::run_new`].
    pub(crate) fn run_in_place(
        &self,
        input: TensorViewMut<'_>,
        index: &TensorView<'_>,
        src: &TensorView<'_>,
    ) -> Result<()> {
        let shape = with_tensor!(TensorViewMut, &input, t => t.shape().to_vec());
        let plan = self.check(input.dtype(), &shape, index, src)?;
        self.apply(input, index, src, plan)
    }

    /// The checked op on `input`'s elements, by the reduction's arithmetic for its dtype.
    fn apply(
        &self,
        input: TensorViewMut<'_>,
        index: &TensorView<'_>,
        src: &TensorView<'_>,
        plan: Option<ReducePlan>,
    ) -> Result<()> {
        match input {
            TensorViewMut::Bool(t) => {
                let s = typed_like(&t, src)?;
                self.indexed(t, index, s, plan)
            }
            other => with_tensor!(TensorViewMut, other, number t => {
                let s = typed_like(&t, src)?;
                self.indexed(t, index, s, plan)
            }, else dtype => Err(self.not_implemented(dtype))),
        }
    }

    fn not_implemented(&self, dtype: DType) -> Error {
        Error::TorchNotImplemented(format!(
            "scatter_reduce with reduce=\"{}\" is not implemented for {dtype}",
            self.reduce.name()
        ))
    }

    /// PyTorch's checks, in its order: the dimension, the dtypes, the ranks and sizes.
    /// `None` for an empty `index`, which writes nothing.
    fn check(
        &self,
        dtype: DType,
        input: &[usize],
        index: &TensorView<'_>,
        src: &TensorView<'_>,
    ) -> Result<Option<ReducePlan>> {
        let runtime = |m: String| Err(Error::TorchRuntime(m));
        let out_of_range = |d: i64, rank: usize| {
            Error::TorchIndex(format!(
                "Dimension out of range (expected to be in range of [-{rank}, {}], but got {d})",
                rank - 1
            ))
        };
        let (self_shape, index_shape) = (nonempty(input), nonempty(index.shape()));
        let rank = self_shape.len();
        let dim =
            crate::shape::wrap_axis(self.dim, rank).ok_or_else(|| out_of_range(self.dim, rank))?;
        let empty = index.shape().iter().product::<usize>() == 0;
        if !empty && !index.dtype().is_index() {
            return runtime("scatter(): Expected dtype int32/int64 for index".into());
        }
        if src.dtype() != dtype {
            return runtime("scatter(): Expected self.dtype to be equal to src.dtype".into());
        }
        if !self.supports(dtype) {
            return Err(self.not_implemented(dtype));
        }
        if empty {
            return Ok(None);
        }
        if index_shape.len() != rank {
            return runtime(
                "Index tensor must have the same number of dimensions as self tensor".into(),
            );
        }
        let src_shape = nonempty(src.shape());
        let too_large = runtime(format!(
            "Expected index {} to be no larger than self {} apart from dimension {dim} and to be \
             no larger size than src {}",
            sizes(index.shape()),
            sizes(input),
            sizes(src.shape())
        ));
        if (0..rank).any(|d| d != dim && index_shape[d] > self_shape[d]) {
            return too_large;
        }
        for (d, &i) in index_shape.iter().enumerate() {
            // PyTorch reads src's size along each of index's dimensions, so a src of lower
            // rank fails on the first it lacks.
            let Some(&s) = src_shape.get(d) else {
                return Err(out_of_range(d as i64, src_shape.len()));
            };
            if i > s {
                return too_large;
            }
        }
        if src_shape.len() != rank {
            return runtime(
                "Index tensor must have the same number of dimensions as src tensor".into(),
            );
        }
        Ok(Some(ReducePlan {
            along: self_shape[dim],
            input_strides: strides(&self_shape),
            src_strides: strides(&src_shape),
            shape: index_shape,
            dim,
        }))
    }

    /// The reduction into `target`: indices checked, then every value of `src` reduced
    /// into its element in the order of `index`, then means divided.
    fn indexed<T: Arith>(
        &self,
        mut target: ArrayViewMutD<'_, T>,
        index: &TensorView<'_>,
        src: ArrayViewD<'_, T>,
        plan: Option<ReducePlan>,
    ) -> Result<()> {
        let Some(plan) = plan else { return Ok(()) };
        let Some(step) = reduce_arith::step::<T::Acc>(self.reduce) else {
            return Err(Error::Internal("the dtype's reduction checked"));
        };
        with_indices!(index, i => {
            let idx = row_major(i)?;
            self.check_indices(&idx, &plan)?;
            let src = row_major(&src)?;
            update_row_major(&mut target, |out| self.reduce_into(out, &idx, &src, &plan, step))
        }, else dtype => Err(Error::IndicesNotInteger { dtype }))
    }

    /// PyTorch's error for the first bad index in row-major order, under a policy that
    /// refuses them.
    fn check_indices<I: IndexType>(&self, idx: &[I], plan: &ReducePlan) -> Result<()> {
        if self.bad_indices.errors() {
            if let Some(k) = first_bad_vector(idx, &[plan.along], self.bad_indices) {
                return Err(Error::TorchRuntime(format!(
                    "index {} is out of bounds for dimension {} with size {}",
                    idx[k].to_i128(),
                    plan.dim,
                    plan.along
                )));
            }
        }
        Ok(())
    }

    fn reduce_into<T: Arith, I: IndexType>(
        &self,
        out: &mut [T],
        idx: &[I],
        src: &[T],
        plan: &ReducePlan,
        step: fn(&mut T::Acc, T::Acc),
    ) {
        let (policy, reduce) = (self.bad_indices, self.reduce);
        // PyTorch's mean counts as it sums (a scatter_add of ones, in the same arithmetic),
        // then divides in the dtype: 1 for the element itself where it takes part, then 1
        // per value; a count of 0 divides by 1.
        let start = if self.include_self { T::ONE } else { T::ZERO };
        let mut counts = (reduce == Reduction::Mean).then(|| vec![start; out.len()]);
        let (one, add) = (T::ONE.widen(), reduce_arith::step::<T::Acc>(Reduction::Sum));
        T::in_acc(out, |acc| {
            if !self.include_self {
                plan.walk(idx, policy, |t, _| {
                    if let Some(t) = t {
                        acc[t] = reduce_arith::identity(reduce)
                    }
                });
            }
            let mut reduce_all = |mut counts: Option<&mut [T::Acc]>| {
                plan.walk(idx, policy, |t, s| {
                    if let Some(t) = t {
                        step(&mut acc[t], src[s].widen());
                        if let (Some(counts), Some(add)) = (counts.as_deref_mut(), add) {
                            add(&mut counts[t], one)
                        }
                    }
                })
            };
            match counts.as_mut() {
                Some(counts) => T::in_acc(counts, |counts| reduce_all(Some(counts))),
                None => reduce_all(None),
            }
        });
        if let Some(counts) = counts {
            for (o, &c) in out.iter_mut().zip(&counts) {
                let c = if c == T::ZERO { T::ONE } else { c };
                *o = reduce_arith::mean(*o, c);
            }
        }
    }
}
