//! The path for small calls, which [`Op::run`] and `run_hosted` take by themselves: params
//! given as C-contiguous records (`Input::Records`, what the Python front end holds: a
//! buffer and a shape) and contiguous indices, into an output below the size at which the
//! kernels split work across threads: the host's memory where it gives some
//! ([`crate::registry::Host`]), a caller's row-major records (`Out::IntoRecords`, as XLA's
//! handler gives its result), else a fresh tensor.
//!
//! There the general path's fixed costs (the typed views of both operands and their
//! dimension conversions) outweigh the copy several times over (bench/LOG.md, "A tiny call from Python (issue 44)").
//! This path builds no view: it takes the same plans, index checks and copy loops as the
//! general one (`Copies`), on the bytes as they are, so its results and errors are the same
//! (`tests/small_call.rs` compares the two on random calls).

use super::gather::{Copies, Source};
use super::Op;
use crate::engine::kernel;
use crate::mem::output::{self, Pages};
use crate::mem::raw_view::RawView;
use crate::mem::units::{self, Unit};
use crate::ops::contract::Host;
use crate::shape::plan::{GatherNdPlan, GatherPlan};
use crate::types::dtype::{bytes_of, Tensor, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use crate::types::value::FillValue;
use crate::with_tensor;
use ndarray::{ArrayD, IxDyn};
use std::borrow::Cow;
use std::mem::MaybeUninit;

/// Where a small call writes its output.
pub(super) enum Target<'h> {
    /// A fresh tensor.
    Fresh,
    /// The host's memory, where it gives some; else a fresh tensor.
    Host(&'h mut dyn Host),
    /// A caller's row-major records of the output's shape (a call of another is not
    /// taken), written only once every index is checked: the caller sees them on error.
    Into(&'h mut [u8], &'h [usize]),
}

/// What the small path did with a call.
pub(super) enum Small {
    /// Not taken: the general path runs it.
    NotTaken,
    /// Written into the host's memory, or the caller's.
    Hosted,
    /// Written into a fresh tensor.
    Fresh(Tensor),
}

impl Op {
    /// The call on the small path, into `target`: not taken for
    /// take_along_axis, params or indices not contiguous, an output of no elements or of a
    /// size at which the kernels split the work, elements of no bytes, the `Fill` policy
    /// with a fill value other than one element's bytes, and a caller's records of another
    /// shape or length than the output's.
    pub(super) fn small(
        &self,
        params: &RawView<'_>,
        indices: &TensorView<'_>,
        target: Target<'_>,
    ) -> Result<Small> {
        let itemsize = params.itemsize();
        let fill = self.fill_value();
        let fill_fits =
            matches!(fill, FillValue::Bytes { len, .. } if usize::from(len) == itemsize);
        if itemsize == 0 || (self.bad_indices() == BadIndices::Fill && !fill_fits) {
            return Ok(Small::NotTaken);
        }
        let Some(bytes) = params.contiguous_bytes() else {
            return Ok(Small::NotTaken);
        };
        with_tensor!(TensorView, indices, kernel i => match i.as_slice() {
            Some(flat) => self.small_with(bytes, params.shape(), itemsize, (flat, i.shape()), target),
            None => Ok(Small::NotTaken),
        }, else _dtype => match narrow_as_i64(indices) {
            Some(wide) => {
                self.small_with(bytes, params.shape(), itemsize, (&wide, indices.shape()), target)
            }
            None => Ok(Small::NotTaken),
        })
    }

    fn small_with<I: IndexType>(
        &self,
        params: &[u8],
        shape: &[usize],
        itemsize: usize,
        (indices, indices_shape): (&[I], &[usize]),
        target: Target<'_>,
    ) -> Result<Small> {
        let plan = match self {
            Op::Gather(o) => SmallPlan::Gather(GatherPlan::new::<I>(
                shape,
                indices_shape,
                o.axis,
                o.batch_dims,
            )?),
            Op::GatherNd(o) => {
                SmallPlan::GatherNd(GatherNdPlan::new::<I>(shape, indices_shape, o.batch_dims)?)
            }
            Op::TakeAlongAxis(_) => return Ok(Small::NotTaken),
        };
        let out_bytes = plan.out_len().saturating_mul(itemsize);
        // An empty output is the general path's too: its loops would still walk every outer
        // row of params, which an empty params' other axes can make 2^40 long (a fuzzed hang).
        if out_bytes == 0 || kernel::may_split(out_bytes, indices.len()) {
            return Ok(Small::NotTaken);
        }
        let copy = |out: Option<&mut [MaybeUninit<u8>]>, check_first: bool| {
            // The widest unit that every element's bytes, in params and in the output, are
            // aligned to (a fresh output is aligned for any unit).
            let bits = itemsize | params.as_ptr() as usize | 8;
            let bits = out.as_ref().map_or(bits, |o| bits | o.as_ptr() as usize);
            let to = (out, check_first);
            crate::with_unit!(1 << bits.trailing_zeros(), U => match &plan {
                SmallPlan::Gather(p) => self.copy::<U, _, I>(p, (params, itemsize), indices, to),
                SmallPlan::GatherNd(p) => self.copy::<U, _, I>(p, (params, itemsize), indices, to),
            })
        };
        match target {
            Target::Fresh => copy(None, false),
            Target::Host(host) => copy(host.allocate(plan.out_shape(), itemsize), false),
            Target::Into(bytes, shape) => {
                if shape != plan.out_shape() || bytes.len() != out_bytes {
                    return Ok(Small::NotTaken);
                }
                output::copy_into_bytes(bytes, |out| copy(Some(out), true))
            }
        }
    }

    /// The copy in units `U`, each element a record of `itemsize / size_of::<U>()` units:
    /// into `out`, the host's memory or the caller's (with `check_first`, every index
    /// checked before the first write), or a fresh tensor.
    fn copy<U: Unit, P: Copies, I: IndexType>(
        &self,
        plan: &P,
        (params, itemsize): (&[u8], usize),
        indices: &[I],
        (out, check_first): (Option<&mut [MaybeUninit<u8>]>, bool),
    ) -> Result<Small>
    where
        Tensor: From<ArrayD<U>>,
    {
        let internal = || Error::Internal("bytes aligned for their unit");
        let params = bytemuck::try_cast_slice::<u8, U>(params).map_err(|_| internal())?;
        let record = itemsize / std::mem::size_of::<U>();
        // Elements of one unit copy with the plan as it is; only records widen a copy of it.
        let wide = if record > 1 {
            Cow::Owned(plan.clone().widen(record)?)
        } else {
            Cow::Borrowed(plan)
        };
        let fill = match (self.bad_indices(), self.fill_value()) {
            (BadIndices::Fill, FillValue::Bytes { bytes, len }) => {
                Some(units::of_bytes::<U>(&bytes[..usize::from(len)]).ok_or_else(internal)?)
            }
            _ => None,
        };
        let source = Source::RowMajor(Cow::Borrowed(params));
        let policy = (self.bad_indices(), fill.as_deref());
        // `Copies::copy` writes every slot; the index check runs only if the copy met an
        // index it could not resolve (a fresh output or the host's is not seen on error).
        let check = || plan.check(indices, self.bad_indices());
        if let Some(out) = out {
            let out = units::uninit_units::<U>(out)
                .filter(|o| o.len() == wide.out_len())
                .ok_or(Error::Internal("the memory given holds the output"))?;
            if check_first {
                check()?;
            }
            if wide.copy(&source, indices, policy, out, Pages::Used) && !check_first {
                check()?;
            }
            return Ok(Small::Hosted);
        }
        let out = output::fresh_checked(
            wide.out_len(),
            wide.out_shape(),
            bytes_of::<U>(),
            |slots, pages| wide.copy(&source, indices, policy, slots, pages),
            check,
        )?;
        let mut shape = crate::shape::AxisList::from_slice(plan.out_shape());
        shape.push(record);
        ArrayD::from_shape_vec(IxDyn(&shape), out)
            .map(|a| Small::Fresh(Tensor::from(a)))
            .map_err(|_| Error::Internal("a result's shape and length agree"))
    }
}

/// The plan of the call: the same types that the general path plans with.
#[derive(Debug, Clone)]
enum SmallPlan {
    Gather(GatherPlan),
    GatherNd(GatherNdPlan),
}

impl SmallPlan {
    fn out_len(&self) -> usize {
        match self {
            SmallPlan::Gather(p) => p.out_len(),
            SmallPlan::GatherNd(p) => p.out_len(),
        }
    }

    fn out_shape(&self) -> &[usize] {
        match self {
            SmallPlan::Gather(p) => p.out_shape(),
            SmallPlan::GatherNd(p) => p.out_shape(),
        }
    }
}

/// A small call's indices of a dtype the kernels are not compiled for (`int8`, `uint8`,
/// `uint16`, `uint32`) as `int64`: the small path is compiled for the kernels' index types
/// only (a path per index type costs the binary about 0.4 MB), and the general path's
/// widening costs a small call three times its time. `None` for a strided view, or for as
/// many as the small path never takes (so that the copy is bounded: under 512 KiB).
fn narrow_as_i64(indices: &TensorView<'_>) -> Option<Vec<i64>> {
    fn wide<N: Copy + Into<i64>>(a: &ndarray::ArrayViewD<'_, N>) -> Option<Vec<i64>> {
        let flat = a.as_slice()?;
        (!kernel::may_split(0, flat.len())).then(|| flat.iter().map(|&v| v.into()).collect())
    }
    match indices {
        TensorView::I8(a) => wide(a),
        TensorView::U8(a) => wide(a),
        TensorView::U16(a) => wide(a),
        TensorView::U32(a) => wide(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GatherOptions;

    fn indices(values: &[i32], shape: &[usize]) -> Tensor {
        Tensor::from_shape_vec(shape, values.to_vec()).unwrap()
    }

    #[test]
    fn a_small_contiguous_call_takes_the_path() {
        let bytes: Vec<u8> = (0..12).collect(); // four 3-byte elements
        let raw = RawView::of_bytes(&bytes, &[4], 3).unwrap();
        let op = Op::Gather(GatherOptions::new());
        let Small::Fresh(out) = op
            .small(&raw, &indices(&[3, 0], &[2]).view(), Target::Fresh)
            .unwrap()
        else {
            panic!("not taken");
        };
        let out = out.into_array::<u8>().unwrap();
        assert_eq!(out.shape(), [2, 3]);
        assert_eq!(
            out.iter().copied().collect::<Vec<_>>(),
            [9, 10, 11, 0, 1, 2]
        );
        // Strided params are the general path's.
        let strided = RawView::within(&bytes, 0, &[2], &[6], 3).unwrap();
        let taken = op.small(&strided, &indices(&[1], &[1]).view(), Target::Fresh);
        assert!(matches!(taken, Ok(Small::NotTaken)));
    }

    /// An empty output is left to the general path: the small path's loops walked every
    /// outer row of params, and params of shape `[2^40, 2, 0, 0]` (no bytes) made that hours
    /// long (found by the `small_call` fuzz target; `fuzz/regressions/small_call/`).
    #[test]
    fn an_empty_output_is_not_taken_whatever_params_outer_rows() {
        let raw = RawView::of_bytes(&[], &[1 << 40, 2, 0, 0], 3).unwrap();
        let op = Op::Gather(GatherOptions::new().axis(1));
        let taken = op.small(
            &raw,
            &indices(&[0, 1, 0, 1, 0, 1], &[2, 3]).view(),
            Target::Fresh,
        );
        assert!(matches!(taken, Ok(Small::NotTaken)));
    }
}
