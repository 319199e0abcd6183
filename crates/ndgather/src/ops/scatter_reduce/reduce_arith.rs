//! PyTorch's rules for `scatter_reduce`, on the element types' arithmetic ([`Arith`]): each
//! reduction's step and identity, in the type the reduction runs in (`f32` for the half
//! types), and the mean's division.

use super::Reduction;
use crate::types::arith::Arith;

/// `reduce`'s step `*acc = acc ∘ value`, or `None` where the type has no such reduction (no
/// mean of bools, no order of complex numbers).
pub(super) fn step<A: Arith>(reduce: Reduction) -> Option<fn(&mut A, A)> {
    match reduce {
        Reduction::Mean if A::torch_div().is_none() => None,
        Reduction::Sum | Reduction::Mean => Some(|a, v| *a = a.plus(v)),
        Reduction::Prod => Some(|a, v| *a = a.torch_times(v)),
        Reduction::Amax | Reduction::Amin if !A::ORDERED => None,
        Reduction::Amax => Some(amax),
        Reduction::Amin => Some(amin),
    }
}

/// What an element starts from without `include_self`.
pub(super) fn identity<A: Arith>(reduce: Reduction) -> A {
    match reduce {
        Reduction::Sum | Reduction::Mean => A::ZERO,
        Reduction::Prod => A::ONE,
        Reduction::Amax => A::infinities().0,
        Reduction::Amin => A::infinities().1,
    }
}

/// `sum / count` as PyTorch's `div_` computes a mean, in the type itself.
pub(super) fn mean<T: Arith>(sum: T, count: T) -> T {
    T::torch_div().map_or(sum, |div| div(sum, count))
}

/// PyTorch's `amax` step: a NaN value wins, and `std::max(acc, value)` keeps `acc` unless
/// it compares smaller, so a NaN there stays.
fn amax<A: Arith>(acc: &mut A, v: A) {
    if v.is_not_a_number() || acc.below(v) {
        *acc = v
    }
}

/// PyTorch's `amin` step (see [`amax`]).
fn amin<A: Arith>(acc: &mut A, v: A) {
    if v.is_not_a_number() || v.below(*acc) {
        *acc = v
    }
}
