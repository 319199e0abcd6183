//! TensorFlow's rules for the segment reductions, on the element types' arithmetic
//! ([`Arith`]: integers wrap, the half types round after every step), and the order in which
//! its kernels combine rows: the unsorted kernels step through rows one by one; the
//! sorted ones reduce a segment of several rows with Eigen, whose vectorised columns use
//! packets of `P` lanes and, from 16 rows on, four accumulators.

use crate::types::arith::Arith;

/// A scalar step and Eigen's vectorised step of one reduction.
pub(crate) type StepPair<T> = [fn(T, T) -> T; 2];

/// TensorFlow's maximum steps: the scalar one keeps the accumulator only where it compares
/// strictly better (`std::max(value, acc)`), so a NaN value wins and a NaN accumulator
/// yields to the next value; Eigen's vectorised one (`packet_max`) ignores NaN instead.
/// `None` for an unordered type.
pub(crate) fn max_steps<T: Arith>() -> Option<StepPair<T>> {
    T::ORDERED.then_some([tf_max, packet_max])
}

/// TensorFlow's minimum steps (see [`max_steps`]).
pub(crate) fn min_steps<T: Arith>() -> Option<StepPair<T>> {
    T::ORDERED.then_some([tf_min, packet_min])
}

pub(crate) fn tf_max<T: Arith>(acc: T, v: T) -> T {
    if v.below(acc) {
        acc
    } else {
        v
    }
}

pub(crate) fn tf_min<T: Arith>(acc: T, v: T) -> T {
    if acc.below(v) {
        acc
    } else {
        v
    }
}

fn packet_max<T: Arith>(acc: T, v: T) -> T {
    if acc.below(v) {
        v
    } else {
        acc
    }
}

fn packet_min<T: Arith>(acc: T, v: T) -> T {
    if v.below(acc) {
        v
    } else {
        acc
    }
}

/// A reduction's steps: the scalar one, Eigen's vectorised one, and their identity.
#[derive(Clone, Copy)]
pub(crate) struct Steps<T> {
    pub(crate) scalar: fn(T, T) -> T,
    pub(crate) packet: fn(T, T) -> T,
    pub(crate) identity: T,
}

/// One output row of a sorted reduction of several rows (`rows(k)` is row `k` of the
/// segment, `len` of them), as Eigen computes it: columns in whole packets by the packet
/// step (one accumulator, or from 16 rows on four, summed in order, with the last rows
/// added after), the remaining columns row by row by the scalar step.
pub(crate) fn eigen_rows<'r, T: Arith + 'r>(
    out: &mut [T],
    len: usize,
    rows: impl Fn(usize) -> &'r [T],
    steps: Steps<T>,
) {
    let width = out.len();
    let packed = width / T::LANES * T::LANES;
    for (j, o) in out.iter_mut().enumerate() {
        let value = |k: usize| rows(k)[j];
        *o = if j < packed && len >= 16 {
            let whole = len / 4 * 4;
            let mut acc = [steps.identity; 4];
            for k in 0..whole {
                acc[k % 4] = (steps.packet)(acc[k % 4], value(k));
            }
            let mut a = (steps.packet)(
                (steps.packet)((steps.packet)(acc[0], acc[1]), acc[2]),
                acc[3],
            );
            for k in whole..len {
                a = (steps.packet)(a, value(k));
            }
            a
        } else {
            let step = if j < packed {
                steps.packet
            } else {
                steps.scalar
            };
            (0..len).fold(steps.identity, |a, k| step(a, value(k)))
        };
    }
}
