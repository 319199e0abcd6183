//! The typed front end on `ndarray`: params and indices as any array or view, of any layout.

use crate::error::{GatherError, Result};
use crate::index::{BadIndices, IndexType};
use crate::kernel;
use crate::output;
use crate::plan::{GatherNdPlan, GatherPlan};
use ndarray::{ArrayBase, ArrayD, ArrayViewMut, Data, Dimension, IxDyn};
use std::borrow::Cow;

/// What can be gathered: any `Clone + Default` type (`Default` fills the slices of ignored
/// bad indices, as TensorFlow's `T()`). Numbers, `bool`, `half`'s floats, `num-complex`'s
/// complex numbers, `String` and `Vec<u8>` all are.
pub trait Element: Clone + Default + Send + Sync + 'static {}
impl<T: Clone + Default + Send + Sync + 'static> Element for T {}

/// The elements of an array in row-major order, borrowed when the array is already laid out
/// so; a copy otherwise, refused with an error (not an abort) when it cannot be allocated.
pub(crate) fn row_major<A: Clone, S: Data<Elem = A>, D: Dimension>(
    a: &ArrayBase<S, D>,
) -> Result<Cow<'_, [A]>> {
    if let Some(s) = a.as_slice() {
        return Ok(Cow::Borrowed(s));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(a.len())
        .map_err(|_| GatherError::OutOfMemory {
            bytes: a.len().saturating_mul(std::mem::size_of::<A>()),
        })?;
    v.extend(a.iter().cloned());
    Ok(Cow::Owned(v))
}

/// An array of `shape` from row-major data.
pub(crate) fn into_array<T>(shape: &[usize], data: Vec<T>) -> Result<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(shape), data).map_err(|e| GatherError::InvalidShape {
        shape: shape.to_vec(),
        reason: e.to_string(),
    })
}

fn check_out_shape(given: &[usize], expected: &[usize]) -> Result<()> {
    if given == expected {
        Ok(())
    } else {
        Err(GatherError::OutputShapeMismatch {
            given: given.to_vec(),
            expected: expected.to_vec(),
        })
    }
}

/// Runs `body` on a caller's output in row-major order: in place when it is laid out so,
/// otherwise into a fresh buffer whose values are then moved into place.
fn with_row_major_out<T: Element, D: Dimension>(
    out: &mut ArrayViewMut<'_, T, D>,
    body: impl Fn(&mut [T]) + Sync,
    fresh: impl FnOnce(&mut [std::mem::MaybeUninit<T>]),
) -> Result<()> {
    if let Some(slice) = out.as_slice_mut() {
        body(slice);
        return Ok(());
    }
    let buf = output::fresh(out.len(), out.shape(), fresh)?;
    // `iter_mut` walks a view in logical (row-major) order, whatever its strides.
    for (o, v) in out.iter_mut().zip(buf) {
        *o = v;
    }
    Ok(())
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
pub struct GatherOptions {
    axis: Option<i64>,
    batch_dims: i64,
    bad_indices: BadIndices,
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

    /// The axis, if set.
    pub fn get_axis(&self) -> Option<i64> {
        self.axis
    }

    /// batch_dims as set.
    pub fn get_batch_dims(&self) -> i64 {
        self.batch_dims
    }

    /// The bad-index policy.
    pub fn get_bad_indices(&self) -> BadIndices {
        self.bad_indices
    }

    /// `tf.gather(params, indices, axis, batch_dims)` into a new array.
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
        let plan =
            GatherPlan::new::<I>(params.shape(), indices.shape(), self.axis, self.batch_dims)?;
        let idx = row_major(indices)?;
        kernel::check_gather(&idx, &plan, self.bad_indices)?;
        let params = row_major(params)?;
        let params: &[T] = &params;
        let policy = self.bad_indices;
        let out = output::fresh(plan.out_len, &plan.out_shape, |slots| {
            kernel::gather(params, &idx, &plan, policy, slots)
        })?;
        into_array(&plan.out_shape, out)
    }

    /// `gather` into a caller's array of the output's shape (no allocation when it is laid
    /// out in row-major order). On error `out` is left unchanged.
    pub fn gather_into<T, I, S, SI, D, DI, DO>(
        &self,
        params: &ArrayBase<S, D>,
        indices: &ArrayBase<SI, DI>,
        mut out: ArrayViewMut<'_, T, DO>,
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
        let plan =
            GatherPlan::new::<I>(params.shape(), indices.shape(), self.axis, self.batch_dims)?;
        check_out_shape(out.shape(), &plan.out_shape)?;
        let idx = row_major(indices)?;
        kernel::check_gather(&idx, &plan, self.bad_indices)?;
        let params = row_major(params)?;
        let params: &[T] = &params;
        let policy = self.bad_indices;
        with_row_major_out(
            &mut out,
            |slots| kernel::gather(params, &idx, &plan, policy, slots),
            |slots| kernel::gather(params, &idx, &plan, policy, slots),
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
pub struct GatherNdOptions {
    batch_dims: i64,
    bad_indices: BadIndices,
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

    /// batch_dims as set.
    pub fn get_batch_dims(&self) -> i64 {
        self.batch_dims
    }

    /// The bad-index policy.
    pub fn get_bad_indices(&self) -> BadIndices {
        self.bad_indices
    }

    /// `tf.gather_nd(params, indices, batch_dims)` into a new array.
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
        let plan = GatherNdPlan::new::<I>(params.shape(), indices.shape(), self.batch_dims)?;
        let idx = row_major(indices)?;
        kernel::check_gather_nd(&idx, &plan, self.bad_indices)?;
        let params = row_major(params)?;
        let params: &[T] = &params;
        let out = output::fresh(plan.out_len, &plan.out_shape, |slots| {
            kernel::gather_nd(params, &idx, &plan, self.bad_indices, slots)
        })?;
        into_array(&plan.out_shape, out)
    }

    /// `gather_nd` into a caller's array of the output's shape. On error `out` is left
    /// unchanged.
    pub fn gather_nd_into<T, I, S, SI, D, DI, DO>(
        &self,
        params: &ArrayBase<S, D>,
        indices: &ArrayBase<SI, DI>,
        mut out: ArrayViewMut<'_, T, DO>,
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
        let plan = GatherNdPlan::new::<I>(params.shape(), indices.shape(), self.batch_dims)?;
        check_out_shape(out.shape(), &plan.out_shape)?;
        let idx = row_major(indices)?;
        kernel::check_gather_nd(&idx, &plan, self.bad_indices)?;
        let params = row_major(params)?;
        let params: &[T] = &params;
        let policy = self.bad_indices;
        with_row_major_out(
            &mut out,
            |slots| kernel::gather_nd(params, &idx, &plan, policy, slots),
            |slots| kernel::gather_nd(params, &idx, &plan, policy, slots),
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
