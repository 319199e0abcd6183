//! The typed front end on `ndarray`: params and indices as any array or view, of any layout.

use crate::engine::fill;
use crate::engine::kernel;
use crate::engine::layout::{check_out_shape, into_array, row_major, Elements};
use crate::engine::strided;
use crate::mem::output::{self, Pages};
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::dtype::bytes_of;
pub use crate::types::dtype::Element;
use crate::types::error::Result;
use crate::types::index::{BadIndices, IndexType};
use crate::types::value::FillValue;
use ndarray::{ArrayBase, ArrayD, ArrayViewD, ArrayViewMut, ArrayViewMutD, Data, Dimension};
use std::borrow::Cow;

/// params as the copy loops read it: row-major elements (borrowed, or copied once), or a
/// view of any layout read in place when params far outweighs the output.
pub(super) enum Source<'a, T: Clone> {
    RowMajor(Cow<'a, [T]>),
    InPlace(ArrayViewD<'a, T>),
}

impl<'a, T: Element> Source<'a, T> {
    fn of<S: Data<Elem = T>, D: Dimension>(
        params: &'a ArrayBase<S, D>,
        out_len: usize,
    ) -> Result<Source<'a, T>> {
        if params.as_slice().is_none() && strided::suits(params.len(), out_len) {
            return Ok(Source::InPlace(params.view().into_dyn()));
        }
        row_major(params).map(Source::RowMajor)
    }
}

/// What gather and gather_nd share below their shape rules: a plan that widens to records,
/// checks indices, and copies (then fills) the slices it addresses.
pub(super) trait Copies: Clone + Sync {
    fn widen(self, record: usize) -> Result<Self>;
    fn out_len(&self) -> usize;
    fn out_shape(&self) -> &[usize];
    /// Finds the first bad index in row-major order, if the policy makes it an error.
    fn check<I: IndexType>(&self, indices: &[I], policy: BadIndices) -> Result<()>;
    /// The copy, then, under `Fill`, the fill record over the slices of bad indices (the
    /// kernels default-fill them). Returns whether an index resolved to no slice (see
    /// `kernel::gather`). Every slot of `out` is written.
    fn copy<T: Element, I: IndexType, O: output::Slot<T>>(
        &self,
        params: &Source<'_, T>,
        indices: &[I],
        policy: (BadIndices, Option<&[T]>),
        out: &mut [O],
        pages: Pages,
    ) -> bool;
}

impl Copies for GatherPlan {
    fn widen(self, record: usize) -> Result<Self> {
        GatherPlan::widen(self, record)
    }
    fn out_len(&self) -> usize {
        self.out_len
    }
    fn out_shape(&self) -> &[usize] {
        &self.out_shape
    }
    fn check<I: IndexType>(&self, indices: &[I], policy: BadIndices) -> Result<()> {
        kernel::check_gather(indices, self, policy)
    }
    fn copy<T: Element, I: IndexType, O: output::Slot<T>>(
        &self,
        params: &Source<'_, T>,
        indices: &[I],
        (policy, fill): (BadIndices, Option<&[T]>),
        out: &mut [O],
        pages: Pages,
    ) -> bool {
        let unresolved = match params {
            Source::RowMajor(p) => kernel::gather(p, indices, self, policy, out, pages),
            Source::InPlace(v) => strided::gather(v, indices, self, policy, out),
        };
        if let Some(f) = fill {
            fill::gather(indices, self, policy, f, out);
        }
        unresolved
    }
}

impl Copies for GatherNdPlan {
    fn widen(self, record: usize) -> Result<Self> {
        GatherNdPlan::widen(self, record)
    }
    fn out_len(&self) -> usize {
        self.out_len
    }
    fn out_shape(&self) -> &[usize] {
        &self.out_shape
    }
    fn check<I: IndexType>(&self, indices: &[I], policy: BadIndices) -> Result<()> {
        kernel::check_gather_nd(indices, self, policy)
    }
    fn copy<T: Element, I: IndexType, O: output::Slot<T>>(
        &self,
        params: &Source<'_, T>,
        indices: &[I],
        (policy, fill): (BadIndices, Option<&[T]>),
        out: &mut [O],
        pages: Pages,
    ) -> bool {
        let unresolved = match params {
            Source::RowMajor(p) => kernel::gather_nd(p, indices, self, policy, out, pages),
            Source::InPlace(v) => strided::gather_nd(v, indices, self, policy, out),
        };
        if let Some(f) = fill {
            fill::gather_nd(indices, self, policy, f, out);
        }
        unresolved
    }
}

/// The copy of a planned call into a fresh array (see `output::fresh_checked`: the copy
/// finds bad indices, and the check runs only if it met one).
fn fresh<P: Copies, T: Element, I: IndexType>(
    plan: P,
    record: Option<usize>,
    params: &ArrayViewD<'_, T>,
    indices: &ArrayViewD<'_, I>,
    (policy, fill): (BadIndices, Option<&[T]>),
) -> Result<ArrayD<T>> {
    let idx = row_major(indices)?;
    let wide = widened(plan.clone(), record)?;
    let params = Source::of(params, wide.out_len())?;
    // `Copies::copy` runs kernel::gather(_nd) or strided::gather(_nd), which write every
    // slot of `out` (each item is copied or default-filled), and the fill pass only
    // overwrites: `fresh_checked`'s contract, which it checks in every test run.
    let out = output::fresh_checked(
        wide.out_len(),
        wide.out_shape(),
        bytes_of::<T>(),
        |slots, pages| wide.copy(&params, &idx, (policy, fill), slots, pages),
        || plan.check(&idx, policy),
    )?;
    into_array(wide.out_shape(), out)
}

/// The copy of a planned call into a caller's array, every index checked first so that the
/// array is unchanged on error.
fn write<P: Copies, T: Element, I: IndexType>(
    plan: P,
    (elements, record): (Elements, Option<usize>),
    params: &ArrayViewD<'_, T>,
    indices: &ArrayViewD<'_, I>,
    (policy, fill): (BadIndices, Option<&[T]>),
    mut out: ArrayViewMutD<'_, T>,
) -> Result<()> {
    let wide = widened(plan.clone(), record)?;
    check_out_shape(elements, out.shape(), wide.out_shape())?;
    let idx = row_major(indices)?;
    plan.check(&idx, policy)?;
    let params = Source::of(params, wide.out_len())?;
    // The indices were checked above, so an index the copy leaves unresolved is one the
    // policy default-fills, not an error.
    let copy = |slots: &mut [_], pages| _ = wide.copy(&params, &idx, (policy, fill), slots, pages);
    // The fresh closure is `Copies::copy`, which writes every slot (as above).
    Ok(output::with_row_major_out(
        &mut out,
        bytes_of::<T>(),
        copy,
        |slots, pages| _ = wide.copy(&params, &idx, (policy, fill), slots, pages),
    )?)
}

/// `plan` widened to records of `record` values, if any.
fn widened<P: Copies>(plan: P, record: Option<usize>) -> Result<P> {
    match record {
        Some(r) => plan.widen(r),
        None => Ok(plan),
    }
}

/// A checked call's output shape and, for each index value in row-major order, the position
/// it reads along its dimension: `None` where the policy leaves the slice default-filled (or
/// the call copies nothing). Made by [`GatherOptions::resolve`] and
/// [`GatherNdOptions::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The output's shape.
    pub out_shape: Vec<usize>,
    /// Where each index value reads.
    pub positions: Vec<Option<usize>>,
    /// The first axis of params the indices address, normalised: gather's `axis`, or
    /// gather_nd's `batch_dims`.
    pub axis: usize,
    /// `batch_dims`, normalised.
    pub batch_dims: usize,
}

/// Options of `gather`: `axis`, `batch_dims`, and the policy for bad indices.
///
/// ```
/// use ndarray::array;
/// use ndgather::GatherOptions;
///
/// let params = array![[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]];
/// let indices = array![[2, 4], [0, 4], [1, 3]];
/// let out = GatherOptions::new().axis(1).batch_dims(1).gather(&params, &indices).unwrap();
/// assert_eq!(out, array![[1, 2], [3, 4], [5, 6]].into_dyn());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct GatherOptions {
    /// The axis of params to gather along (negative counts from the end); `None`: the first non-batch dimension.
    pub axis: Option<i64>,
    /// The number of leading batch dimensions shared by params and indices; negative counts from rank(indices).
    pub batch_dims: i64,
    /// What to do with out-of-range indices.
    pub bad_indices: BadIndices,
    /// The value [`BadIndices::Fill`] writes (by default JAX's for the element type).
    pub fill_value: FillValue,
}

impl GatherOptions {
    /// Defaults: `axis` the first non-batch dimension, `batch_dims = 0`, `BadIndices::Error`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The axis of params to gather along; negative counts from the end.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = Some(axis);
        self
    }

    /// Leaves the axis to its default, the first non-batch dimension.
    pub fn default_axis(mut self) -> Self {
        self.axis = None;
        self
    }

    /// The number of leading batch dimensions shared by params and indices; negative counts
    /// from rank(indices).
    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.batch_dims = batch_dims;
        self
    }

    /// What to do with out-of-range indices.
    pub fn bad_indices(mut self, policy: BadIndices) -> Self {
        self.bad_indices = policy;
        self
    }

    /// The value [`BadIndices::Fill`] writes (by default JAX's for the element type).
    pub fn fill_value(mut self, value: FillValue) -> Self {
        self.fill_value = value;
        self
    }

    /// The gradient of this gather with respect to params, for upstream gradient `grad` (of
    /// the output's shape), under this policy: see [`crate::ops::grad::gather_grad`]. Indices the
    /// policy clamps or wraps pass their slices' gradient to where they read; slices it
    /// fills (`Ignore`, `Fill`) pass none.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndgather::{BadIndices, GatherOptions};
    /// let fill = GatherOptions::new().bad_indices(BadIndices::Fill);
    /// let g = fill.grad(&[2], &array![1, 9, 1], &array![1.0, 5.0, 2.0]).unwrap();
    /// assert_eq!(g, array![0.0, 3.0].into_dyn());
    /// ```
    ///
    /// # Errors
    /// Those of [`GatherOptions::gather`], and [`crate::Error::GradShapeMismatch`].
    pub fn grad<T, I, SI, SG, DI, DG>(
        &self,
        params_shape: &[usize],
        indices: &ArrayBase<SI, DI>,
        grad: &ArrayBase<SG, DG>,
    ) -> Result<ArrayD<T>>
    where
        T: crate::types::arith::Number,
        I: IndexType,
        SI: Data<Elem = I>,
        SG: Data<Elem = T>,
        DI: Dimension,
        DG: Dimension,
    {
        let plan = GatherPlan::new::<I>(params_shape, indices.shape(), self.axis, self.batch_dims)?;
        crate::ops::grad::gather_grad_planned(&plan, params_shape, indices, grad, self.bad_indices)
    }

    /// `tf.gather(params, indices, axis, batch_dims)` into a new array.
    ///
    /// # Errors
    /// TensorFlow's shape errors (axis or batch_dims out of range, batch shapes that differ),
    /// the first bad index under [`BadIndices::Error`], `Clamp`, `Negative` and `Wrap`, and
    /// [`crate::Error::OutOfMemory`] when the output cannot be allocated.
    pub fn gather<T, I, S, SI, D, DI>(
        &self,
        params: &ArrayBase<S, D>,
        indices: &ArrayBase<SI, DI>,
    ) -> Result<ArrayD<T>>
    where
        T: Element,
        I: IndexType,
        S: Data<Elem = T>,
        SI: Data<Elem = I>,
        D: Dimension,
        DI: Dimension,
    {
        let fill = fill::record::<T>(self.bad_indices, self.fill_value, 1)?;
        let (p, i) = (params.view().into_dyn(), indices.view().into_dyn());
        self.fresh(&p, Elements::Plain, &i, fill.as_deref())
    }

    /// `gather` into a caller's array of the output's shape (no allocation when it is laid
    /// out in row-major order). On error `out` is left unchanged.
    ///
    /// # Errors
    /// Those of [`GatherOptions::gather`], and [`crate::Error::OutputShapeMismatch`].
    pub fn gather_into<T, I, S, SI, D, DI, DO>(
        &self,
        params: &ArrayBase<S, D>,
        indices: &ArrayBase<SI, DI>,
        out: ArrayViewMut<'_, T, DO>,
    ) -> Result<()>
    where
        T: Element,
        I: IndexType,
        S: Data<Elem = T>,
        SI: Data<Elem = I>,
        D: Dimension,
        DI: Dimension,
        DO: Dimension,
    {
        let fill = fill::record::<T>(self.bad_indices, self.fill_value, 1)?;
        let (p, i) = (params.view().into_dyn(), indices.view().into_dyn());
        self.write(&p, Elements::Plain, &i, fill.as_deref(), out.into_dyn())
    }

    /// Checks a gather on params of `params_shape` without reading params, and says where
    /// each index reads: what a front end needs that holds params elsewhere (shards on other
    /// machines, a lazy array) to route every index before any data moves. The checks and
    /// messages are those of [`GatherOptions::gather`].
    ///
    /// ```
    /// use ndarray::array;
    /// use ndgather::{BadIndices, GatherOptions};
    ///
    /// let r = GatherOptions::new().bad_indices(BadIndices::Wrap).resolve(&[4, 2], &array![-1, 2]).unwrap();
    /// assert_eq!(r.out_shape, [2, 2]);
    /// assert_eq!(r.positions, [Some(3), Some(2)]);
    /// assert_eq!((r.axis, r.batch_dims), (0, 0));
    /// let err = GatherOptions::new().resolve(&[4, 2], &array![[0], [4]]).unwrap_err();
    /// assert_eq!(err.to_string(), "indices[1,0] = 4 is not in [0, 4)");
    /// ```
    ///
    /// # Errors
    /// Those of [`GatherOptions::gather`].
    pub fn resolve<I, SI, DI>(
        &self,
        params_shape: &[usize],
        indices: &ArrayBase<SI, DI>,
    ) -> Result<Resolved>
    where
        I: IndexType,
        SI: Data<Elem = I>,
        DI: Dimension,
    {
        let (plan, _) = self.plan::<I>(Elements::Plain, params_shape, indices.shape())?;
        let idx = row_major(indices)?;
        kernel::check_gather(&idx, &plan, self.bad_indices)?;
        let policy = self.bad_indices;
        let positions = idx.iter().map(|&i| policy.resolve(i, plan.gathered));
        Ok(Resolved {
            positions: positions.collect(),
            out_shape: plan.out_shape.to_vec(),
            axis: plan.axis,
            batch_dims: plan.batch_dims,
        })
    }

    /// Plans the call on the element shape; the record width, if params holds records.
    fn plan<I: IndexType>(
        &self,
        elements: Elements,
        params_shape: &[usize],
        indices_shape: &[usize],
    ) -> Result<(GatherPlan, Option<usize>)> {
        let (shape, record) = elements.split(params_shape)?;
        let plan = GatherPlan::new::<I>(shape, indices_shape, self.axis, self.batch_dims)?;
        Ok((plan, record))
    }

    /// The gather into a fresh array, on params of plain elements or of records; `fill` is
    /// the `Fill` policy's record (one element's values, or a whole record's).
    pub(crate) fn fresh<T: Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
    ) -> Result<ArrayD<T>> {
        let (plan, record) = self.plan::<I>(elements, params.shape(), indices.shape())?;
        fresh(plan, record, params, indices, (self.bad_indices, fill))
    }

    /// The gather into a caller's array, checked first, as [`Self::fresh`].
    pub(crate) fn write<T: Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
        out: ArrayViewMutD<'_, T>,
    ) -> Result<()> {
        let (plan, record) = self.plan::<I>(elements, params.shape(), indices.shape())?;
        write(
            plan,
            (elements, record),
            params,
            indices,
            (self.bad_indices, fill),
            out,
        )
    }
}

/// Options of `gather_nd`: `batch_dims` and the policy for bad indices.
///
/// ```
/// use ndarray::array;
/// use ndgather::{BadIndices, GatherNdOptions};
///
/// let params = array![[0, 1, 2], [3, 4, 5]];
/// let indices = array![[1], [2]];
/// let out = GatherNdOptions::new().bad_indices(BadIndices::Ignore).gather_nd(&params, &indices).unwrap();
/// assert_eq!(out, array![[3, 4, 5], [0, 0, 0]].into_dyn());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct GatherNdOptions {
    /// The number of leading batch dimensions shared by params and indices (≥ 0).
    pub batch_dims: i64,
    /// What to do with out-of-range indices.
    pub bad_indices: BadIndices,
    /// The value [`BadIndices::Fill`] writes (by default JAX's for the element type).
    pub fill_value: FillValue,
}

impl GatherNdOptions {
    /// Defaults: `batch_dims = 0`, `BadIndices::Error`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of leading batch dimensions shared by params and indices (≥ 0).
    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.batch_dims = batch_dims;
        self
    }

    /// What to do with out-of-range indices.
    pub fn bad_indices(mut self, policy: BadIndices) -> Self {
        self.bad_indices = policy;
        self
    }

    /// The value [`BadIndices::Fill`] writes (by default JAX's for the element type).
    pub fn fill_value(mut self, value: FillValue) -> Self {
        self.fill_value = value;
        self
    }

    /// The gradient of this gather_nd with respect to params, under this policy (see
    /// [`GatherOptions::grad`]).
    ///
    /// # Errors
    /// Those of [`GatherNdOptions::gather_nd`], and [`crate::Error::GradShapeMismatch`].
    pub fn grad<T, I, SI, SG, DI, DG>(
        &self,
        params_shape: &[usize],
        indices: &ArrayBase<SI, DI>,
        grad: &ArrayBase<SG, DG>,
    ) -> Result<ArrayD<T>>
    where
        T: crate::types::arith::Number,
        I: IndexType,
        SI: Data<Elem = I>,
        SG: Data<Elem = T>,
        DI: Dimension,
        DG: Dimension,
    {
        crate::ops::grad::gather_nd_grad_with(
            params_shape,
            indices,
            grad,
            self.batch_dims,
            self.bad_indices,
        )
    }

    /// `tf.gather_nd(params, indices, batch_dims)` into a new array.
    ///
    /// # Errors
    /// TensorFlow's shape errors (scalar params or indices, batch_dims out of range, an index
    /// depth above params' rank, batch shapes that differ), the first bad index vector under
    /// [`BadIndices::Error`], `Clamp`, `Negative` and `Wrap`, and
    /// [`crate::Error::OutOfMemory`].
    pub fn gather_nd<T, I, S, SI, D, DI>(
        &self,
        params: &ArrayBase<S, D>,
        indices: &ArrayBase<SI, DI>,
    ) -> Result<ArrayD<T>>
    where
        T: Element,
        I: IndexType,
        S: Data<Elem = T>,
        SI: Data<Elem = I>,
        D: Dimension,
        DI: Dimension,
    {
        let fill = fill::record::<T>(self.bad_indices, self.fill_value, 1)?;
        let (p, i) = (params.view().into_dyn(), indices.view().into_dyn());
        self.fresh(&p, Elements::Plain, &i, fill.as_deref())
    }

    /// `gather_nd` into a caller's array of the output's shape. On error `out` is left
    /// unchanged.
    ///
    /// # Errors
    /// Those of [`GatherNdOptions::gather_nd`], and [`crate::Error::OutputShapeMismatch`].
    pub fn gather_nd_into<T, I, S, SI, D, DI, DO>(
        &self,
        params: &ArrayBase<S, D>,
        indices: &ArrayBase<SI, DI>,
        out: ArrayViewMut<'_, T, DO>,
    ) -> Result<()>
    where
        T: Element,
        I: IndexType,
        S: Data<Elem = T>,
        SI: Data<Elem = I>,
        D: Dimension,
        DI: Dimension,
        DO: Dimension,
    {
        let fill = fill::record::<T>(self.bad_indices, self.fill_value, 1)?;
        let (p, i) = (params.view().into_dyn(), indices.view().into_dyn());
        self.write(&p, Elements::Plain, &i, fill.as_deref(), out.into_dyn())
    }

    /// Checks a gather_nd on params of `params_shape` without reading params, and says where
    /// each index vector reads (see [`GatherOptions::resolve`]): `positions` has one entry per
    /// component of `indices`, and a vector that the policy leaves default-filled is `None`
    /// in every component.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndgather::{BadIndices, GatherNdOptions};
    ///
    /// let options = GatherNdOptions::new().bad_indices(BadIndices::Ignore);
    /// let r = options.resolve(&[2, 3], &array![[1, 2], [0, 3]]).unwrap();
    /// assert_eq!(r.out_shape, [2]);
    /// assert_eq!(r.positions, [Some(1), Some(2), None, None]);
    /// ```
    ///
    /// # Errors
    /// Those of [`GatherNdOptions::gather_nd`].
    pub fn resolve<I, SI, DI>(
        &self,
        params_shape: &[usize],
        indices: &ArrayBase<SI, DI>,
    ) -> Result<Resolved>
    where
        I: IndexType,
        SI: Data<Elem = I>,
        DI: Dimension,
    {
        let (plan, _) = self.plan::<I>(Elements::Plain, params_shape, indices.shape())?;
        let idx = row_major(indices)?;
        kernel::check_gather_nd(&idx, &plan, self.bad_indices)?;
        let policy = self.bad_indices;
        let mut positions = Vec::with_capacity(idx.len());
        // With depth 0 there are no components (and `idx` is empty).
        for vector in idx.chunks_exact(plan.depth.max(1)) {
            let start = positions.len();
            let components = vector.iter().zip(&plan.dims);
            positions.extend(components.map(|(&i, &dim)| policy.resolve(i, dim)));
            if positions[start..].contains(&None) {
                positions[start..].fill(None);
            }
        }
        Ok(Resolved {
            positions,
            out_shape: plan.out_shape.to_vec(),
            axis: plan.batch_dims,
            batch_dims: plan.batch_dims,
        })
    }

    /// Plans the call on the element shape; the record width, if params holds records.
    fn plan<I: IndexType>(
        &self,
        elements: Elements,
        params_shape: &[usize],
        indices_shape: &[usize],
    ) -> Result<(GatherNdPlan, Option<usize>)> {
        let (shape, record) = elements.split(params_shape)?;
        let plan = GatherNdPlan::new::<I>(shape, indices_shape, self.batch_dims)?;
        Ok((plan, record))
    }

    /// The gather_nd into a fresh array (see [`GatherOptions::fresh`]).
    pub(crate) fn fresh<T: Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
    ) -> Result<ArrayD<T>> {
        let (plan, record) = self.plan::<I>(elements, params.shape(), indices.shape())?;
        fresh(plan, record, params, indices, (self.bad_indices, fill))
    }

    /// The gather_nd into a caller's array, checked first.
    pub(crate) fn write<T: Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
        out: ArrayViewMutD<'_, T>,
    ) -> Result<()> {
        let (plan, record) = self.plan::<I>(elements, params.shape(), indices.shape())?;
        write(
            plan,
            (elements, record),
            params,
            indices,
            (self.bad_indices, fill),
            out,
        )
    }
}

/// `tf.gather(params, indices)` with the default options: along the first axis.
///
/// ```
/// use ndarray::array;
///
/// let params = array![[0.0f32, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [30.0, 31.0, 32.0]];
/// let rows = ndgather::gather(&params, &array![3, 1]).unwrap();
/// assert_eq!(rows, array![[30.0, 31.0, 32.0], [10.0, 11.0, 12.0]].into_dyn());
/// ```
///
/// # Errors
/// Those of [`GatherOptions::gather`] with the default options.
pub fn gather<T, I, S, SI, D, DI>(
    params: &ArrayBase<S, D>,
    indices: &ArrayBase<SI, DI>,
) -> Result<ArrayD<T>>
where
    T: Element,
    I: IndexType,
    S: Data<Elem = T>,
    SI: Data<Elem = I>,
    D: Dimension,
    DI: Dimension,
{
    GatherOptions::new().gather(params, indices)
}

/// `tf.gather_nd(params, indices)` with the default options.
///
/// ```
/// use ndarray::array;
///
/// let params = array![["a", "b"], ["c", "d"]].mapv(String::from);
/// let out = ndgather::gather_nd(&params, &array![[0, 0], [1, 1]]).unwrap();
/// assert_eq!(out, array!["a", "d"].mapv(String::from).into_dyn());
/// ```
///
/// # Errors
/// Those of [`GatherNdOptions::gather_nd`] with the default options.
pub fn gather_nd<T, I, S, SI, D, DI>(
    params: &ArrayBase<S, D>,
    indices: &ArrayBase<SI, DI>,
) -> Result<ArrayD<T>>
where
    T: Element,
    I: IndexType,
    S: Data<Elem = T>,
    SI: Data<Elem = I>,
    D: Dimension,
    DI: Dimension,
{
    GatherNdOptions::new().gather_nd(params, indices)
}
