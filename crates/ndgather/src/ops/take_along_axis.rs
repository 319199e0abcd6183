//! `take_along_axis` (NumPy's and JAX's; ONNX's `GatherElements`): for indices of params'
//! rank, each output element reads params at its own position, except along `axis`, where it
//! reads at the index. Indices broadcast against params on every other axis, as NumPy's do.
//!
//! The same layering as gather: a shape rule ([`AlongPlan::new`]), one pass that checks every
//! index, then a copy loop over rows of the output (parallel above the kernel's threshold).

use crate::engine::fill;
use crate::engine::kernel;
use crate::engine::layout::{
    check_out_shape, into_array, row_major, update_row_major, Element, Elements,
};
use crate::engine::simd::prefetch::{prefetch_distance, prefetch_slice};
use crate::mem::output;
use crate::mem::output::Slot;
use crate::ops::grad::check_grad;
use crate::shape::plan::unravel;
use crate::types::arith::Number;
use crate::types::dtype::bytes_of;
use crate::types::dtype::{TensorView, TensorViewMut};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::{BadIndices, IndexType};
use crate::types::value::FillValue;
use crate::with_tensor;
use ndarray::{ArrayBase, ArrayD, ArrayViewD, ArrayViewMut, ArrayViewMutD, Data, Dimension, IxDyn};
use std::borrow::Cow;

/// Options of `take_along_axis`: the axis (negative counts from the end) and the policy for
/// bad indices.
///
/// ```
/// use ndarray::array;
/// use ndgather::{BadIndices, TakeAlongAxisOptions};
///
/// // The two largest of each row, by the indices an argsort gave.
/// let scores = array![[10, 30, 20], [60, 40, 50]];
/// let top = array![[1, 2], [0, 2]];
/// let out = TakeAlongAxisOptions::new(1).take_along_axis(&scores, &top).unwrap();
/// assert_eq!(out, array![[30, 20], [60, 50]].into_dyn());
/// // Indices broadcast: one index row for every row of params.
/// let out = TakeAlongAxisOptions::new(-1).take_along_axis(&scores, &array![[2]]).unwrap();
/// assert_eq!(out, array![[20], [50]].into_dyn());
/// let negative = TakeAlongAxisOptions::new(1).bad_indices(BadIndices::Negative);
/// assert_eq!(negative.take_along_axis(&scores, &array![[-1]]).unwrap(), array![[20], [50]].into_dyn());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TakeAlongAxisOptions {
    /// The axis (negative counts from the end).
    pub axis: i64,
    /// What to do with out-of-range indices.
    pub bad_indices: BadIndices,
    /// The value [`BadIndices::Fill`] writes (by default JAX's for the element type).
    pub fill_value: FillValue,
}

/// A checked call, flattened for the loops: offsets in elements of row-major params and
/// indices for each output axis (0 where that input is broadcast along it).
#[derive(Debug, Clone)]
struct AlongPlan {
    out_shape: Vec<usize>,
    out_len: usize,
    indices_shape: Vec<usize>,
    /// params' size along the axis: the limit of every index.
    along: usize,
    /// Where each output axis moves in params (0 along `axis` and where params is broadcast).
    params_steps: Vec<usize>,
    /// params' stride along `axis`.
    axis_step: usize,
    /// Where each output axis moves in indices (0 where indices is broadcast).
    indices_steps: Vec<usize>,
}

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut step = 1usize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.saturating_mul(d);
    }
    strides
}

/// `axis` in `[0, rank)`, counted from the end where negative, or NumPy's `AxisError`.
fn normal_axis(axis: i64, rank: usize) -> Result<usize> {
    crate::shape::wrap_axis(axis, rank).ok_or(Error::AlongAxisOutOfRange { axis, rank })
}

impl AlongPlan {
    /// The shape rule, with NumPy's checks: equal ranks, `axis` in range, the other axes
    /// equal or 1 (broadcast).
    fn new(params: &[usize], indices: &[usize], axis: i64) -> Result<AlongPlan> {
        // NumPy normalises the axis before it compares the ranks.
        let axis_n = normal_axis(axis, params.len())?;
        if params.len() != indices.len() {
            return Err(Error::AlongRankMismatch {
                params_rank: params.len(),
                indices_rank: indices.len(),
            });
        }
        let mut out_shape = Vec::with_capacity(params.len());
        for (d, (&p, &i)) in params.iter().zip(indices).enumerate() {
            out_shape.push(match (d == axis_n, p, i) {
                (true, _, i) => i,
                (false, p, i) if p == i || i == 1 => p,
                (false, 1, i) => i,
                _ => {
                    return Err(Error::AlongShapeMismatch {
                        axis: d,
                        params_shape: params.to_vec(),
                        indices_shape: indices.to_vec(),
                    })
                }
            });
        }
        let out_len =
            crate::shape::checked_numel(&out_shape).ok_or_else(|| Error::ShapeOverflow {
                what: "output",
                shape: out_shape.clone(),
            })?;
        let (p_strides, i_strides) = (row_major_strides(params), row_major_strides(indices));
        let step = |strides: &[usize], shape: &[usize], d: usize| {
            if shape[d] == out_shape[d] && out_shape[d] > 1 {
                strides[d]
            } else {
                0
            }
        };
        let mut params_steps: Vec<usize> = (0..params.len())
            .map(|d| step(&p_strides, params, d))
            .collect();
        params_steps[axis_n] = 0;
        Ok(AlongPlan {
            indices_steps: (0..indices.len())
                .map(|d| step(&i_strides, indices, d))
                .collect(),
            params_steps,
            axis_step: p_strides[axis_n],
            along: params[axis_n],
            indices_shape: indices.to_vec(),
            out_len,
            out_shape,
        })
    }

    /// The length of the output's last axis (its rows), at least 1 for the loops.
    fn row_len(&self) -> usize {
        self.out_shape.last().copied().unwrap_or(1).max(1)
    }

    /// Where output row `row` starts in params and in indices.
    fn row_starts(&self, mut row: usize) -> (usize, usize) {
        let (mut p, mut i) = (0, 0);
        for d in (0..self.out_shape.len() - 1).rev() {
            let n = self.out_shape[d].max(1);
            let x = row % n;
            row /= n;
            p += x * self.params_steps[d];
            i += x * self.indices_steps[d];
        }
        (p, i)
    }

    /// [`Self::row_starts`] of each output row from `row` on: divisions only where a row
    /// starts a new run along the last outer axis, a step from the row before elsewhere.
    fn rows_from(&self, row: usize) -> RowStarts<'_> {
        let last_outer = self.out_shape.len().saturating_sub(2);
        let (run, steps) = match self.out_shape.len() {
            0 | 1 => (1, (0, 0)),
            _ => (
                self.out_shape[last_outer].max(1),
                (
                    self.params_steps[last_outer],
                    self.indices_steps[last_outer],
                ),
            ),
        };
        RowStarts {
            plan: self,
            row,
            in_run: row % run,
            run,
            steps,
            starts: self.row_starts(row),
        }
    }

    /// Calls `f(output element, params element or None)` for every output element of rows
    /// `rows`, in row-major order.
    fn walk<I: IndexType>(
        &self,
        indices: &[I],
        policy: BadIndices,
        rows: std::ops::Range<usize>,
        mut f: impl FnMut(usize, Option<usize>),
    ) {
        let n = self.row_len();
        let last = self.out_shape.len() - 1;
        let (p_step, i_step) = (self.params_steps[last], self.indices_steps[last]);
        for (row, (p_base, i_base)) in rows.clone().zip(self.rows_from(rows.start)) {
            for j in 0..n {
                let source = policy
                    .resolve(indices[i_base + j * i_step], self.along)
                    .map(|k| p_base + j * p_step + k * self.axis_step);
                f(row * n + j, source);
            }
        }
    }

    /// The first bad index in row-major order of indices, if the policy makes it an error.
    /// An empty output reads nothing, and checks nothing (as NumPy).
    fn check<I: IndexType>(&self, indices: &[I], policy: BadIndices) -> Result<()> {
        if self.out_len == 0 || !policy.errors() {
            return Ok(());
        }
        match kernel::first_bad_vector(indices, &[self.along], policy) {
            None => Ok(()),
            Some(k) => Err(Error::BadIndex {
                position: unravel(k, &self.indices_shape),
                value: indices[k].to_i128(),
                limit: self.along,
            }),
        }
    }
}

/// The starts in params and in indices of consecutive output rows ([`AlongPlan::rows_from`]).
struct RowStarts<'p> {
    plan: &'p AlongPlan,
    row: usize,
    /// The row's position along the output's last outer axis, of `run` positions.
    in_run: usize,
    run: usize,
    /// How far one step along that axis moves in params and in indices.
    steps: (usize, usize),
    starts: (usize, usize),
}

impl Iterator for RowStarts<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        let starts = self.starts;
        self.row += 1;
        self.in_run += 1;
        if self.in_run < self.run {
            self.starts = (starts.0 + self.steps.0, starts.1 + self.steps.1);
        } else {
            self.in_run = 0;
            self.starts = self.plan.row_starts(self.row);
        }
        Some(starts)
    }
}

/// A checked call, ready to copy.
struct Prepared<'a, T: Clone, I: Clone> {
    values: Cow<'a, [T]>,
    indices: Cow<'a, [I]>,
    plan: AlongPlan,
    record: usize,
    out_shape: Vec<usize>,
    policy: BadIndices,
    /// The fill record, under `BadIndices::Fill`.
    fill: Option<Vec<T>>,
}

impl<T: Element, I: IndexType> Prepared<'_, T, I> {
    /// Writes every slot of the output (row-major, the record axis included): rows of the
    /// output in parallel chunks, each element copied from where its index points, a bad
    /// index's element default-filled. Returns whether any index was bad.
    fn copy<O: Slot<T>>(&self, slots: &mut [O]) -> bool {
        let (plan, record) = (&self.plan, self.record);
        let n = plan.row_len();
        let last = plan.out_shape.len() - 1;
        let (p_step, i_step) = (plan.params_steps[last], plan.indices_steps[last]);
        let item_bytes = n * record * std::mem::size_of::<T>();
        let contiguous = record == 1 && p_step == 0 && i_step == 1 && plan.axis_step == 1;
        // Rows of params read ahead of the copy (the contiguous case reads one row per row).
        let ahead = prefetch_distance(plan.along * std::mem::size_of::<T>());
        let (along, axis_step, policy) = (plan.along, plan.axis_step, self.policy);
        let (values, indices, fill) = (&self.values[..], &self.indices[..], self.fill.as_deref());
        kernel::for_chunks_any(slots, n * record, item_bytes, |first, chunk| {
            let mut seen_bad = false;
            let rows = chunk.chunks_exact_mut(n * record);
            let mut read_ahead = plan
                .rows_from(first + ahead)
                .take(rows.len().saturating_sub(ahead));
            for (out_row, (p_base, i_base)) in rows.zip(plan.rows_from(first)) {
                if contiguous {
                    // Along the last axis, rows of both inputs contiguous: the common case
                    // (top-k, argsort), one tight loop per row.
                    if let Some((p_next, _)) = read_ahead.next() {
                        prefetch_slice(&values[p_next..p_next + along]);
                    }
                    let src = &values[p_base..p_base + along];
                    let idx = &indices[i_base..i_base + n];
                    for (dst, &i) in out_row.iter_mut().zip(idx) {
                        match policy.resolve(i, along) {
                            Some(k) => dst.put(&src[k]),
                            None => {
                                seen_bad = true;
                                match fill {
                                    Some(f) => dst.put(&f[0]),
                                    None => dst.put_default(),
                                }
                            }
                        }
                    }
                    continue;
                }
                for (j, dst) in out_row.chunks_exact_mut(record).enumerate() {
                    let index = indices[i_base + j * i_step];
                    match policy.resolve(index, along) {
                        Some(k) => {
                            let at = (p_base + j * p_step + k * axis_step) * record;
                            if record == 1 {
                                dst[0].put(&values[at]);
                            } else {
                                Slot::put_slice(dst, &values[at..at + record]);
                            }
                        }
                        None => {
                            seen_bad = true;
                            match fill {
                                Some(f) => Slot::put_slice(dst, f),
                                None => dst.iter_mut().for_each(Slot::put_default),
                            }
                        }
                    }
                }
            }
            seen_bad
        })
    }
}

impl TakeAlongAxisOptions {
    /// Along `axis`, with `BadIndices::Error`.
    pub fn new(axis: i64) -> Self {
        TakeAlongAxisOptions {
            axis,
            bad_indices: BadIndices::Error,
            fill_value: FillValue::Default,
        }
    }

    /// The error for indices that are not integers, in NumPy's order: an axis outside
    /// params' rank is reported first ([`Error::AlongAxisOutOfRange`]), then the dtype
    /// ([`Error::AlongIndicesNotInteger`]). A front end that cannot even view such indices
    /// (an object array) reports them through this too.
    ///
    /// ```
    /// use ndgather::{Error, TakeAlongAxisOptions};
    /// let err = TakeAlongAxisOptions::new(1).non_integer_indices(2);
    /// assert_eq!(err.to_string(), "`indices` must be an integer array");
    /// let err = TakeAlongAxisOptions::new(10).non_integer_indices(2);
    /// assert!(matches!(err, Error::AlongAxisOutOfRange { axis: 10, rank: 2 }));
    /// ```
    pub fn non_integer_indices(&self, params_rank: usize) -> Error {
        match normal_axis(self.axis, params_rank) {
            Ok(_) => Error::AlongIndicesNotInteger,
            Err(e) => e,
        }
    }

    /// [`Self::non_integer_indices`] where params' rank may be unknown (a graph's static
    /// shape): then the axis cannot be checked yet, and the dtype is the error.
    pub(crate) fn non_integer_indices_of(&self, params_rank: Option<usize>) -> Error {
        params_rank.map_or(Error::AlongIndicesNotInteger, |r| {
            self.non_integer_indices(r)
        })
    }

    /// Sets the axis (negative counts from the end).
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }

    /// Sets the policy for out-of-range indices.
    pub fn bad_indices(mut self, policy: BadIndices) -> Self {
        self.bad_indices = policy;
        self
    }

    /// The value [`BadIndices::Fill`] writes (by default JAX's for the element type).
    pub fn fill_value(mut self, value: FillValue) -> Self {
        self.fill_value = value;
        self
    }

    /// NumPy's `put_along_axis(arr, indices, values, axis)`, the write side of
    /// [`Self::take_along_axis`]: each element that `take_along_axis` would read from `arr`
    /// is overwritten, in place, by the element of `values` (broadcast to the indices' result
    /// shape, as NumPy broadcasts it) at the same position. Where several positions name one
    /// element, the last in row-major order wins, as in NumPy. Every check runs before the
    /// first write, so on error `arr` is unchanged. Under `Ignore` and `Fill` a bad index's
    /// value is dropped.
    ///
    /// ```
    /// use ndgather::ndarray::array;
    /// use ndgather::TakeAlongAxisOptions;
    ///
    /// let mut arr = array![[10, 30, 20], [60, 40, 50]].into_dyn();
    /// let top = array![[1], [0]].into_dyn();
    /// let values = array![99].into_dyn();
    /// TakeAlongAxisOptions::new(1).put_along_axis(arr.view_mut().into(), &top.view().into(), &values.view().into())?;
    /// assert_eq!(arr, array![[10, 99, 20], [99, 40, 50]].into_dyn());
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`Self::take_along_axis`]; [`Error::AlongIndicesNotInteger`] (after the axis
    /// check, before the values are read); [`Error::DTypeMismatch`] for values of another dtype; [`Error::PutValuesShape`] for values that do not broadcast;
    /// [`Error::NotFixedWidth`] for strings.
    pub fn put_along_axis(
        &self,
        arr: TensorViewMut<'_>,
        indices: &TensorView<'_>,
        values: &TensorView<'_>,
    ) -> Result<()> {
        let dtype = arr.dtype();
        with_tensor!(TensorViewMut, arr, fixed a => {
            // NumPy checks the axis and the indices before it reads a value.
            if !indices.dtype().is_index() {
                return Err(self.non_integer_indices(a.ndim()));
            }
            if dtype != values.dtype() {
                return Err(Error::DTypeMismatch {
                    expected: dtype,
                    found: values.dtype(),
                });
            }
            let v = crate::ops::typed_like(&a, values)?;
            with_indices!(indices, i => self.put_typed(a, i, v),
                else _dtype => Err(self.non_integer_indices(a.ndim())))
        }, else dtype => Err(Error::NotFixedWidth { dtype }))
    }

    fn put_typed<T: Clone, I: IndexType>(
        &self,
        mut arr: ArrayViewMutD<'_, T>,
        indices: &ArrayViewD<'_, I>,
        values: ArrayViewD<'_, T>,
    ) -> Result<()> {
        let plan = AlongPlan::new(arr.shape(), indices.shape(), self.axis)?;
        let Some(values) = values.broadcast(IxDyn(&plan.out_shape)) else {
            return Err(Error::PutValuesShape {
                values: values.shape().to_vec(),
                result: plan.out_shape.clone(),
            });
        };
        let idx = row_major(indices)?;
        plan.check(&idx, self.bad_indices)?;
        let values = row_major(&values)?;
        let rows = plan.out_len / plan.row_len();
        let put = |out: &mut [T]| {
            plan.walk(&idx, self.bad_indices, 0..rows, |o, target| {
                if let Some(t) = target {
                    out[t] = values[o].clone();
                }
            })
        };
        update_row_major(&mut arr, put)
    }

    /// The output's shape for params and indices of these shapes, after NumPy's checks.
    ///
    /// ```
    /// use ndgather::TakeAlongAxisOptions;
    /// assert_eq!(TakeAlongAxisOptions::new(1).out_shape(&[4, 5], &[1, 2]).unwrap(), [4, 2]);
    /// ```
    ///
    /// # Errors
    /// [`Error::AlongRankMismatch`], [`Error::AlongAxisOutOfRange`],
    /// [`Error::AlongShapeMismatch`], [`Error::ShapeOverflow`].
    pub fn out_shape(&self, params_shape: &[usize], indices_shape: &[usize]) -> Result<Vec<usize>> {
        AlongPlan::new(params_shape, indices_shape, self.axis).map(|plan| plan.out_shape)
    }

    /// `take_along_axis(params, indices, axis)`: the output has the broadcast shape of params
    /// and indices, with indices' size along `axis`.
    ///
    /// # Errors
    /// [`Error::AlongRankMismatch`], [`Error::AlongAxisOutOfRange`],
    /// [`Error::AlongShapeMismatch`], [`Error::BadIndex`] (under the policies that
    /// make a bad index an error), and the allocation errors.
    pub fn take_along_axis<T, I, S, SI, D, DI>(
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

    /// [`TakeAlongAxisOptions::take_along_axis`] into a caller's array of the output's shape
    /// (no allocation when it is laid out in row-major order). On error `out` is left
    /// unchanged.
    ///
    /// # Errors
    /// Those of [`TakeAlongAxisOptions::take_along_axis`], and
    /// [`Error::OutputShapeMismatch`].
    pub fn take_along_axis_into<T, I, S, SI, D, DI, DO>(
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

    /// The copy into a caller's array, on params of plain elements or of records; `fill` is
    /// the `Fill` policy's record.
    pub(crate) fn write<T: Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
        mut out: ArrayViewMutD<'_, T>,
    ) -> Result<()> {
        // A caller's array must stay unchanged on error: check every index first.
        let call = self.prepare(params, indices, elements, fill, true)?;
        check_out_shape(elements, out.shape(), &call.out_shape)?;
        // `Prepared::copy` writes every slot of its output: each row's slots are copied,
        // filled or default-filled.
        Ok(output::with_row_major_out(
            &mut out,
            bytes_of::<T>(),
            |slots, _| {
                call.copy(slots);
            },
            |slots, _| {
                call.copy(slots);
            },
        )?)
    }

    /// The copy into a fresh array (see [`Self::write`]).
    pub(crate) fn fresh<T: Element, I: IndexType>(
        &self,
        params: &ArrayViewD<'_, T>,
        elements: Elements,
        indices: &ArrayViewD<'_, I>,
        fill: Option<&[T]>,
    ) -> Result<ArrayD<T>> {
        // A fresh output: the copy itself finds bad indices (see `output::fresh_checked`).
        let call = self.prepare(params, indices, elements, fill, false)?;
        let len = call.plan.out_len.checked_mul(call.record);
        let len = len.ok_or_else(|| Error::ShapeOverflow {
            what: "output",
            shape: call.out_shape.clone(),
        })?;
        // `Prepared::copy` writes every slot of its output (checked by `fresh_checked`).
        let out = output::fresh_checked(
            len,
            &call.out_shape,
            bytes_of::<T>(),
            |slots, _| call.copy(slots),
            || call.plan.check(&call.indices, call.policy),
        )?;
        into_array(&call.out_shape, out)
    }

    /// Plans and checks a call on params of plain elements or of records.
    fn prepare<'a, T: Element, I: IndexType>(
        &self,
        params: &'a ArrayViewD<'_, T>,
        indices: &'a ArrayViewD<'_, I>,
        elements: Elements,
        fill: Option<&[T]>,
        check_first: bool,
    ) -> Result<Prepared<'a, T, I>> {
        let (shape, record) = elements.split(params.shape())?;
        let plan = AlongPlan::new(shape, indices.shape(), self.axis)?;
        let indices = row_major(indices)?;
        if check_first {
            plan.check(&indices, self.bad_indices)?;
        }
        let mut out_shape = plan.out_shape.clone();
        out_shape.extend(record);
        let record = record.unwrap_or(1);
        Ok(Prepared {
            fill: fill.map(<[T]>::to_vec),
            values: row_major(params)?,
            indices,
            plan,
            record,
            out_shape,
            policy: self.bad_indices,
        })
    }

    /// The gradient of `take_along_axis` with respect to params, for upstream gradient
    /// `grad` (of the output's shape): zeros of `params_shape`, each element of `grad` added
    /// where it was taken from (and summed over the axes params was broadcast along).
    /// Slices of bad indices the policy fills get no gradient.
    ///
    /// ```
    /// use ndarray::array;
    /// use ndgather::TakeAlongAxisOptions;
    /// let g = TakeAlongAxisOptions::new(1)
    ///     .grad(&[2, 3], &array![[2, 2], [0, 1]], &array![[1.0, 2.0], [3.0, 4.0]])
    ///     .unwrap();
    /// assert_eq!(g, array![[0.0, 0.0, 3.0], [3.0, 4.0, 0.0]].into_dyn());
    /// ```
    ///
    /// # Errors
    /// Those of [`TakeAlongAxisOptions::take_along_axis`], and
    /// [`Error::GradShapeMismatch`] when `grad` has not the output's shape.
    pub fn grad<T, I, SI, SG, DI, DG>(
        &self,
        params_shape: &[usize],
        indices: &ArrayBase<SI, DI>,
        grad: &ArrayBase<SG, DG>,
    ) -> Result<ArrayD<T>>
    where
        T: Number,
        I: IndexType,
        SI: Data<Elem = I>,
        SG: Data<Elem = T>,
        DI: Dimension,
        DG: Dimension,
    {
        let plan = AlongPlan::new(params_shape, indices.shape(), self.axis)?;
        check_grad(grad.shape(), &plan.out_shape)?;
        let idx = row_major(indices)?;
        plan.check(&idx, self.bad_indices)?;
        let upstream = row_major(grad)?;
        let mut out = output::defaults::<T>(params_shape, bytes_of::<T>())?;
        let rows = plan.out_len / plan.row_len();
        plan.walk(&idx, self.bad_indices, 0..rows, |o, source| {
            if let Some(s) = source {
                out[s] = out[s].plus(upstream[o]);
            }
        });
        into_array(params_shape, out)
    }
}
