//! TensorFlow's `tensor_scatter_nd_update`, `_add`, `_sub`, `_min` and `_max`: a copy of
//! `tensor` (or `tensor` itself, in place) with each slice of `updates` written at, added to,
//! subtracted from, or compared with the slice its index vector names.
//!
//! - **Shapes** follow [`crate::shape::tensor_scatter_shape`], with TensorFlow's messages.
//! - **Duplicates** are applied one at a time, in the order of `indices`, as TensorFlow's CPU
//!   kernel applies them: `update` keeps the last write (TensorFlow documents no order for
//!   duplicates; its CPU kernel writes in index order), and `add`/`sub` round after each
//!   update, so a sum is `((t + u₁) + u₂) + …`, bit for bit. In parallel, each thread owns a
//!   range of destination slices and applies the updates that land there in their order, so
//!   the result does not depend on the number of threads.
//! - **Arithmetic** is TensorFlow's: integers wrap, half types round after each operation;
//!   `min` keeps the element unless the update is smaller (`max`: larger), so a NaN already
//!   there stays and a NaN update is ignored, as in Eigen's `cwiseMin`.
//! - **Bad index vectors** follow the [`BadIndices`] policy: `Error` (TensorFlow on the CPU)
//!   refuses the call, naming the first in row-major order, before anything is written;
//!   `Ignore` (TensorFlow on the GPU) and `Fill` (JAX's `mode="drop"`, as JAX's scatters read
//!   `"fill"`) drop the update; `Clamp`, `Negative` and `Wrap` map it into range.
//! - **Dtypes**: `update` takes every dtype; `add` and `sub` the numbers; `min` and `max` the
//!   integers and real floats (the table's `number` and `ordered` roles). Others get
//!   TensorFlow's `NotFoundError` wording ([`Error::NoKernel`]).
//!
//! The op is a value of the registry ([`crate::registry`]): it runs through
//! [`OpDef::run`](crate::OpDef::run), into a new tensor or in place ([`Out::InPlace`], with
//! its tensor input left out).
//!
//! ```
//! use ndgather::ndarray::array;
//! use ndgather::registry::Input;
//! use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
//! use ndgather::{OpDef, Out, Tensor, TensorView};
//!
//! let tensor = array![[1.0f32, 1.0], [2.0, 2.0], [3.0, 3.0]].into_dyn();
//! let indices = array![[2i64], [0], [2]].into_dyn();
//! let updates = array![[10.0f32, 20.0], [30.0, 40.0], [50.0, 60.0]].into_dyn();
//! let (i, u) = (TensorView::from(indices.view()), TensorView::from(updates.view()));
//! let add = TensorScatter::new(ScatterKind::Add);
//! let inputs = [TensorView::from(tensor.view()).into(), i.clone().into(), u.clone().into()];
//! let out = add.run(&inputs, Out::New)?.unwrap().into_dense()?;
//! assert_eq!(out, Tensor::from(array![[31.0f32, 41.0], [2.0, 2.0], [63.0, 83.0]].into_dyn()));
//!
//! // In place: the caller's array is written, and left as it was on error.
//! let mut table = tensor.clone();
//! let update = TensorScatter::new(ScatterKind::Update);
//! let in_place = [Input::None, i.into(), u.into()];
//! update.run(&in_place, Out::InPlace(table.view_mut().into()))?;
//! assert_eq!(table, array![[30.0f32, 40.0], [2.0, 2.0], [50.0, 60.0]].into_dyn());
//! let (bad, zeros) = (array![[3i64]].into_dyn(), array![[0.0f32, 0.0]].into_dyn());
//! let refused = [Input::None, TensorView::from(bad.view()).into(), TensorView::from(zeros.view()).into()];
//! let err = update.run(&refused, Out::InPlace(table.view_mut().into()));
//! assert_eq!(err.unwrap_err().to_string(), "indices[0] = [3] does not index into shape [3,2]");
//! assert_eq!(table, array![[30.0f32, 40.0], [2.0, 2.0], [50.0, 60.0]].into_dyn());
//! # Ok::<(), ndgather::Error>(())
//! ```

use crate::engine::kernel::{first_bad_vector, nd_offset};
use crate::engine::layout::{row_major, update_row_major};
use crate::ops::embedding::Real;
use crate::ops::gather::GatherNdOptions;
use crate::ops::scatter::scatter_rows;
use crate::ops::{fresh_copy, typed_like, Op, Out};
use crate::shape::plan::{unravel, GatherNdPlan};
use crate::shape::{tensor_scatter_shape, TensorScatterShape};
use crate::types::arith::Arith;
use crate::types::dtype::{ArrayElement, DType, Tensor, TensorView, TensorViewMut};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::{BadIndices, IndexType};
use crate::types::strings::{StringElement, Strings};
use crate::with_tensor;
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD};
use num_traits::{One, Zero};

/// How an update meets the slice it lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterKind {
    /// Replaces it (`tensor_scatter_nd_update`).
    Update,
    /// Adds to it (`tensor_scatter_nd_add`).
    Add,
    /// Subtracts from it (`tensor_scatter_nd_sub`).
    Sub,
    /// Keeps the smaller (`tensor_scatter_nd_min`).
    Min,
    /// Keeps the larger (`tensor_scatter_nd_max`).
    Max,
}

impl ScatterKind {
    /// Every kind.
    pub const ALL: [ScatterKind; 5] = [
        ScatterKind::Update,
        ScatterKind::Add,
        ScatterKind::Sub,
        ScatterKind::Min,
        ScatterKind::Max,
    ];

    /// The kind's name: `"update"`, `"add"`, `"sub"`, `"min"` or `"max"`.
    pub fn name(self) -> &'static str {
        match self {
            ScatterKind::Update => "update",
            ScatterKind::Add => "add",
            ScatterKind::Sub => "sub",
            ScatterKind::Min => "min",
            ScatterKind::Max => "max",
        }
    }

    /// The kind of a name ([`Self::name`]).
    ///
    /// ```
    /// use ndgather::tensor_scatter::ScatterKind;
    /// assert_eq!(ScatterKind::from_name("max"), Some(ScatterKind::Max));
    /// ```
    pub fn from_name(name: &str) -> Option<ScatterKind> {
        ScatterKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// TensorFlow's op name (`TensorScatterUpdate`, `TensorScatterAdd`, …).
    pub fn tf_op(self) -> &'static str {
        match self {
            ScatterKind::Update => "TensorScatterUpdate",
            ScatterKind::Add => "TensorScatterAdd",
            ScatterKind::Sub => "TensorScatterSub",
            ScatterKind::Min => "TensorScatterMin",
            ScatterKind::Max => "TensorScatterMax",
        }
    }

    /// The name TensorFlow's messages give the kind's gradient.
    fn grad_op(self) -> &'static str {
        match self {
            ScatterKind::Update => "TensorScatterUpdateGrad",
            ScatterKind::Add => "TensorScatterAddGrad",
            ScatterKind::Sub => "TensorScatterSubGrad",
            ScatterKind::Min => "TensorScatterMinGrad",
            ScatterKind::Max => "TensorScatterMaxGrad",
        }
    }

    /// The table's role of the dtypes with a gradient: those the kind takes that have one
    /// (floating-point and complex; real floating-point for `min` and `max`).
    fn grad_role(self) -> fn(DType) -> bool {
        match self {
            ScatterKind::Update | ScatterKind::Add | ScatterKind::Sub => DType::has_grad,
            ScatterKind::Min | ScatterKind::Max => DType::is_real,
        }
    }

    /// Whether the kind takes tensors of `dtype`.
    pub fn supports(self, dtype: DType) -> bool {
        self.role()(dtype)
    }

    /// The table's role of the dtypes the kind takes.
    fn role(self) -> fn(DType) -> bool {
        match self {
            ScatterKind::Update => |_| true,
            ScatterKind::Add | ScatterKind::Sub => DType::is_number,
            ScatterKind::Min | ScatterKind::Max => DType::is_ordered,
        }
    }
}

/// A `tensor_scatter_nd_*` op: its kind and its policy for bad index vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TensorScatter {
    /// How updates meet the tensor.
    pub kind: ScatterKind,
    /// What a bad index vector does (see the module's documentation).
    pub bad_indices: BadIndices,
}

/// The slices of `upstream` at the index vectors `indices`, under `policy` (a bad vector's
/// slice zeros): the gradient of the updates of a scatter into `upstream`'s places,
/// TensorFlow's `gather_nd(grad, indices)`.
pub(crate) fn picked_slices(
    upstream: TensorView<'_>,
    indices: &TensorView<'_>,
    policy: BadIndices,
) -> Result<Tensor> {
    // (Under the fill policy too: the scatter drops a bad vector's update, whatever a
    // gather would fill its slice with, NaN by default.)
    let policy = if policy == BadIndices::Fill {
        BadIndices::Ignore
    } else {
        policy
    };
    Op::GatherNd(GatherNdOptions::new().bad_indices(policy))
        .run(upstream, indices, Out::New)?
        .ok_or(Error::Internal("a run into a new output returns it"))
}

impl TensorScatter {
    /// The op of `kind`, refusing bad index vectors as TensorFlow on the CPU does.
    pub fn new(kind: ScatterKind) -> TensorScatter {
        TensorScatter {
            kind,
            bad_indices: BadIndices::Error,
        }
    }

    /// The same op with another bad-index policy.
    pub fn bad_indices(mut self, policy: BadIndices) -> TensorScatter {
        self.bad_indices = policy;
        self
    }

    /// The op into a new tensor: a copy of `tensor` with the updates applied.
    ///
    /// # Errors
    /// [`Error::NoKernel`] for a dtype the kind does not take;
    /// [`Error::InputDType`] for updates of another dtype than `tensor`;
    /// [`Error::IndicesNotInteger`]; [`Error::TensorScatterShape`];
    /// [`Error::BadScatterIndex`] under `BadIndices::Error`.
    pub(crate) fn run_new(
        &self,
        tensor: TensorView<'_>,
        indices: &TensorView<'_>,
        updates: &TensorView<'_>,
    ) -> Result<Tensor> {
        let rule = self.check(tensor.dtype(), tensor.shape(), indices, updates)?;
        with_tensor!(TensorView, &tensor, fixed t => {
            let mut out = fresh_copy(t)?;
            self.apply(out.view_mut().into(), indices, updates, rule)?;
            Ok(Tensor::from(out))
        }, else _dtype => self.run_strings(&tensor, indices, updates, rule))
    }

    /// The op in place: `tensor`'s elements are overwritten. Every check runs first, so on
    /// error `tensor` is unchanged.
    ///
    /// # Errors
    /// As [`Self::run_new`].
    pub(crate) fn run_in_place(
        &self,
        tensor: TensorViewMut<'_>,
        indices: &TensorView<'_>,
        updates: &TensorView<'_>,
    ) -> Result<()> {
        let shape = with_tensor!(TensorViewMut, &tensor, t => t.shape().to_vec());
        let rule = self.check(tensor.dtype(), &shape, indices, updates)?;
        // A tensor of strings owns its bytes: it is replaced by the updated one.
        match tensor {
            TensorViewMut::String(s) => match updates {
                TensorView::String(u) => {
                    *s = self.update_strings(s, indices, u, rule)?;
                    Ok(())
                }
                _ => Err(Error::Internal(
                    "updates' dtype checked against the tensor's",
                )),
            },
            TensorViewMut::Bytes(s) => match updates {
                TensorView::Bytes(u) => {
                    *s = self.update_strings(s, indices, u, rule)?;
                    Ok(())
                }
                _ => Err(Error::Internal(
                    "updates' dtype checked against the tensor's",
                )),
            },
            fixed => self.apply(fixed, indices, updates, rule),
        }
    }

    /// TensorFlow's registered gradients of the op, for the upstream gradient `upstream` of
    /// `output` (the op's result on `tensor`, `indices` and `updates`): with respect to
    /// `tensor` and to `updates`, of their shapes.
    ///
    /// - `update`: `upstream` with the updated slices zeroed, and `gather_nd(upstream,
    ///   indices)` (every update gets its slice's gradient, a repeated one too, as in TF);
    /// - `add`: `upstream`, and `gather_nd(upstream, indices)`; `sub`: the latter negated;
    /// - `min`/`max`: each element's gradient shared among the values that equal the result
    ///   there, the tensor's and every update's (TF's `_TensorScatterMinOrMaxGrad`), in the
    ///   dtype's own arithmetic.
    ///
    /// ```
    /// use ndgather::ndarray::array;
    /// use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
    /// use ndgather::{OpDef, Out, Tensor, TensorView};
    ///
    /// let (t, i, u) = (array![1.0f64, 5.0, 3.0].into_dyn(), array![[1i64], [1]].into_dyn(), array![2.0f64, 5.0].into_dyn());
    /// let op = TensorScatter::new(ScatterKind::Min);
    /// let (tv, iv, uv) = (TensorView::from(t.view()), TensorView::from(i.view()), TensorView::from(u.view()));
    /// let inputs = [tv.into(), iv.into(), uv.into()];
    /// let out = op.run(&inputs, Out::New)?.unwrap().into_dense()?;
    /// let upstream = array![1.0f64, 1.0, 1.0].into_dyn();
    /// let (dt, du) = op.grad(&t.view().into(), &i.view().into(), &u.view().into(), &out.view(), &upstream.view().into())?;
    /// assert_eq!(dt, Tensor::from(array![1.0f64, 0.0, 1.0].into_dyn()));
    /// assert_eq!(du, Tensor::from(array![1.0f64, 0.0].into_dyn()));
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NoKernel`] for a dtype without a gradient (integers, bool, strings);
    /// [`Error::InputDType`] for an upstream gradient of another dtype;
    /// [`Error::GradShapeMismatch`] for one of another shape than `output`; the op's
    /// own, from the scatter and gathers it is made of.
    pub fn grad(
        &self,
        tensor: &TensorView<'_>,
        indices: &TensorView<'_>,
        updates: &TensorView<'_>,
        output: &TensorView<'_>,
        upstream: &TensorView<'_>,
    ) -> Result<(Tensor, Tensor)> {
        let dtype = tensor.dtype();
        if !self.kind.grad_role()(dtype) {
            return Err(Error::NoKernel {
                op: self.kind.grad_op(),
                dtype,
                supported: DType::names_where(self.kind.grad_role()),
            });
        }
        if upstream.dtype() != dtype {
            return Err(Error::InputDType {
                op: self.kind.grad_op(),
                input: 0,
                expected: dtype,
                found: upstream.dtype(),
            });
        }
        // The forward output has the tensor's shape, and so has its gradient.
        for given in [output.shape(), upstream.shape()] {
            if given != tensor.shape() {
                return Err(Error::GradShapeMismatch {
                    expected: tensor.shape().to_vec(),
                    found: given.to_vec(),
                });
            }
        }
        let picked = |t: TensorView<'_>| picked_slices(t, indices, self.bad_indices);
        match self.kind {
            ScatterKind::Update => {
                let zeros = Tensor::zeros(dtype, updates.shape())?;
                let cleared = self.run_new(upstream.clone(), indices, &zeros.view())?;
                Ok((cleared, picked(upstream.clone())?))
            }
            ScatterKind::Add => Ok((upstream.to_tensor(), picked(upstream.clone())?)),
            ScatterKind::Sub => {
                let du = picked(upstream.clone())?;
                let du = with_tensor!(Tensor, &du, grad g => Tensor::from(g.mapv(|v| -v)),
                    else dtype => return Err(self.no_kernel(dtype)));
                Ok((upstream.to_tensor(), du))
            }
            ScatterKind::Min | ScatterKind::Max => {
                with_tensor!(TensorView, tensor, real x => {
                    let views = (typed_like(x, updates)?, typed_like(x, output)?, typed_like(x, upstream)?);
                    self.min_max_grad(x.view(), views, indices)
                }, else dtype => Err(self.no_kernel(dtype)))
            }
        }
    }

    /// TensorFlow's `_TensorScatterMinOrMaxGrad`: indicators of the tensor's elements and
    /// the updates that equal the result, the gradient divided by their count.
    fn min_max_grad<T: Real + ArrayElement>(
        &self,
        x: ArrayViewD<'_, T>,
        (y, output, grad): (ArrayViewD<'_, T>, ArrayViewD<'_, T>, ArrayViewD<'_, T>),
        indices: &TensorView<'_>,
    ) -> Result<(Tensor, Tensor)> {
        let (zero, one) = (T::narrow(T::Acc::zero()), T::narrow(T::Acc::one()));
        let indicator = |a: &T, b: &T| if a.widen() == b.widen() { one } else { zero };
        let op = |a: T, b: T, f: fn(T::Acc, T::Acc) -> T::Acc| T::narrow(f(a.widen(), b.widen()));
        let x_ind = ndarray::Zip::from(&x).and(&output).map_collect(indicator);
        // (A dropped update's slice zeros, as for the other kinds: see `picked_slices`.)
        let picked = |t: ArrayViewD<'_, T>| -> Result<ArrayD<T>> {
            T::from_tensor_owned(picked_slices(T::into_view(t), indices, self.bad_indices)?)
                .map_err(|_| Error::Internal("a gather of T gives T"))
        };
        let output_at_updates = picked(output)?;
        if output_at_updates.shape() != y.shape() {
            return Err(Error::GradShapeMismatch {
                expected: output_at_updates.shape().to_vec(),
                found: y.shape().to_vec(),
            });
        }
        let y_ind = ndarray::Zip::from(&y)
            .and(&output_at_updates)
            .map_collect(indicator);
        // The updates' indicators added into the tensor's places (TF's scatter_nd of them).
        let add = TensorScatter::new(ScatterKind::Add).bad_indices(self.bad_indices);
        let counts = add.run_new(
            T::into_view(x_ind.view()),
            indices,
            &T::into_view(y_ind.view()),
        )?;
        let counts =
            T::from_tensor_owned(counts).map_err(|_| Error::Internal("a scatter of T gives T"))?;
        let x_grad = ndarray::Zip::from(&grad)
            .and(&x_ind)
            .and(&counts)
            .map_collect(|&g, &i, &n| op(op(g, i, |a, b| a * b), n, |a, b| a / b));
        let shared = ndarray::Zip::from(&grad)
            .and(&counts)
            .map_collect(|&g, &n| op(g, n, |a, b| a / b));
        let y_grad = ndarray::Zip::from(&picked(shared.view())?)
            .and(&y_ind)
            .map_collect(|&g, &i| op(g, i, |a, b| a * b));
        Ok((T::into_tensor(x_grad), T::into_tensor(y_grad)))
    }

    /// The dtypes, then the shapes: everything but the index values.
    fn check(
        &self,
        dtype: DType,
        shape: &[usize],
        indices: &TensorView<'_>,
        updates: &TensorView<'_>,
    ) -> Result<TensorScatterShape> {
        self.check_dtypes(dtype, indices.dtype(), updates.dtype())?;
        tensor_scatter_shape(shape, indices.shape(), updates.shape())
    }

    /// The checks on the three inputs' dtypes (what a graph knows before it runs).
    pub(crate) fn check_dtypes(&self, tensor: DType, indices: DType, updates: DType) -> Result<()> {
        if !self.kind.supports(tensor) {
            return Err(self.no_kernel(tensor));
        }
        if updates != tensor {
            return Err(Error::InputDType {
                op: self.kind.tf_op(),
                input: 2,
                expected: tensor,
                found: updates,
            });
        }
        if !indices.is_index() {
            return Err(Error::IndicesNotInteger { dtype: indices });
        }
        Ok(())
    }

    /// The updates applied to a fixed-width `target`, by the kind's arithmetic for its dtype.
    fn apply(
        &self,
        target: TensorViewMut<'_>,
        indices: &TensorView<'_>,
        updates: &TensorView<'_>,
        rule: TensorScatterShape,
    ) -> Result<()> {
        let i = indices;
        match self.kind {
            ScatterKind::Update => with_tensor!(TensorViewMut, target, fixed t => {
                let u = typed_like(&t, updates)?;
                self.indexed(t, i, u, rule, |d, s| *d = *s)
            }, else dtype => Err(self.no_kernel(dtype))),
            ScatterKind::Add => with_tensor!(TensorViewMut, target, number t => {
                let u = typed_like(&t, updates)?;
                self.indexed(t, i, u, rule, |d, s| *d = d.plus(*s))
            }, else dtype => Err(self.no_kernel(dtype))),
            ScatterKind::Sub => with_tensor!(TensorViewMut, target, number t => {
                let u = typed_like(&t, updates)?;
                self.indexed(t, i, u, rule, |d, s| *d = d.minus(*s))
            }, else dtype => Err(self.no_kernel(dtype))),
            // Eigen's `cwiseMin`/`cwiseMax` (`std::min(out, update)`): the update wins only
            // if it compares smaller (larger).
            ScatterKind::Min => with_tensor!(TensorViewMut, target, ordered t => {
                let u = typed_like(&t, updates)?;
                self.indexed(t, i, u, rule, |d, s| if *s < *d { *d = *s })
            }, else dtype => Err(self.no_kernel(dtype))),
            ScatterKind::Max => with_tensor!(TensorViewMut, target, ordered t => {
                let u = typed_like(&t, updates)?;
                self.indexed(t, i, u, rule, |d, s| if *d < *s { *d = *s })
            }, else dtype => Err(self.no_kernel(dtype))),
        }
    }

    fn no_kernel(&self, dtype: DType) -> Error {
        Error::NoKernel {
            op: self.kind.tf_op(),
            dtype,
            supported: DType::names_where(self.kind.role()),
        }
    }

    /// `update` on a tensor of strings, into a new tensor.
    fn run_strings(
        &self,
        tensor: &TensorView<'_>,
        indices: &TensorView<'_>,
        updates: &TensorView<'_>,
        rule: TensorScatterShape,
    ) -> Result<Tensor> {
        match (tensor, updates) {
            (TensorView::String(s), TensorView::String(u)) => {
                self.update_strings(s, indices, u, rule).map(Tensor::from)
            }
            (TensorView::Bytes(s), TensorView::Bytes(u)) => {
                self.update_strings(s, indices, u, rule).map(Tensor::from)
            }
            _ => Err(Error::Internal(
                "updates' dtype checked against the tensor's",
            )),
        }
    }

    /// `update` on strings: their elements out, updated, and packed again.
    fn update_strings<T: StringElement>(
        &self,
        strings: &Strings<T>,
        indices: &TensorView<'_>,
        updates: &Strings<T>,
        rule: TensorScatterShape,
    ) -> Result<Strings<T>> {
        let mut elements = strings.to_array();
        let src = updates.to_array();
        self.indexed(elements.view_mut(), indices, src.view(), rule, |d, s| {
            d.clone_from(s)
        })?;
        Ok(Strings::from(elements))
    }

    /// The updates applied to `target` with `combine(element, update)`, for indices of any
    /// integer dtype: every index vector checked first (under `Error`), then each update
    /// combined into its slice in the order of `indices`.
    fn indexed<T: Clone + Send + Sync>(
        &self,
        mut target: ArrayViewMutD<'_, T>,
        indices: &TensorView<'_>,
        updates: ArrayViewD<'_, T>,
        rule: TensorScatterShape,
        combine: impl Fn(&mut T, &T) + Sync,
    ) -> Result<()> {
        with_indices!(indices, i => {
            let idx = row_major(i)?;
            let src = row_major(&updates)?;
            let shape = target.shape().to_vec();
            let outer = &i.shape()[..i.ndim().saturating_sub(1)];
            // The vectors into the tensor's first `depth` dimensions alone: offsets in slices.
            let vectors = GatherNdPlan::vectors(&shape[..rule.depth], rule.depth, outer)?;
            self.check_indices(&idx, &vectors, &shape)?;
            let policy = self.bad_indices;
            let destination = |r: usize| {
                nd_offset(&vectors, 0, &idx[r * rule.depth..(r + 1) * rule.depth], policy)
            };
            update_row_major(&mut target, |out| scatter_rows(out, rule.slice, &src, destination, combine))
        }, else dtype => Err(Error::IndicesNotInteger { dtype }))
    }

    /// Under a policy that refuses bad index vectors, the first one in row-major order.
    fn check_indices<I: IndexType>(
        &self,
        idx: &[I],
        vectors: &GatherNdPlan,
        shape: &[usize],
    ) -> Result<()> {
        if !self.bad_indices.errors() || vectors.depth == 0 {
            return Ok(());
        }
        let Some(r) = first_bad_vector(idx, &vectors.dims, self.bad_indices) else {
            return Ok(());
        };
        Err(Error::BadScatterIndex {
            position: unravel(r, &vectors.rows_shape),
            values: idx[r * vectors.depth..(r + 1) * vectors.depth]
                .iter()
                .map(|i| i.to_i128())
                .collect(),
            shape: shape.to_vec(),
        })
    }
}
