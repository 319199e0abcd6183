//! PyTorch's arithmetic for `scatter_reduce`, per element type: each reduction's step and
//! identity, in the type the reduction runs in (`f32` for the half types), and the mean's
//! division.

use super::Reduction;

/// How one element meets one value under a reduction, in the type the reduction runs in.
pub(super) trait Step: Copy + Send + Sync + 'static {
    /// `reduce`'s step `*acc = acc ∘ value`, or `None` where the type has no such reduction.
    fn step(reduce: Reduction) -> Option<fn(&mut Self, Self)>;
    /// What an element starts from without `include_self`.
    fn identity(reduce: Reduction) -> Self;
}

/// PyTorch's arithmetic for `scatter_reduce`, per element type.
pub(super) trait Reduce: Copy + PartialEq + Send + Sync + 'static {
    /// The type the reduction runs in: the type itself, or `f32` for the half types, which
    /// PyTorch's CPU kernel reduces in `float` and rounds once at the end.
    type Acc: Step;
    /// `self` in [`Self::Acc`].
    fn widen(self) -> Self::Acc;
    /// Runs `f` on `out` in [`Self::Acc`]: on `out` itself, or on a widened copy that is
    /// rounded back afterwards.
    fn in_acc(out: &mut [Self], f: impl FnOnce(&mut [Self::Acc]));
    /// 0 and 1, which count the values of a mean (in the type itself, as PyTorch counts).
    fn zero() -> Self;
    /// See [`Self::zero`].
    fn one() -> Self;
    /// `sum / count` as PyTorch's `div_` computes it.
    fn mean(sum: Self, count: Self) -> Self;
}

/// The [`Reduce`] items of a type that reduces in itself.
macro_rules! in_itself {
    () => {
        type Acc = Self;
        fn widen(self) -> Self {
            self
        }
        fn in_acc(out: &mut [Self], f: impl FnOnce(&mut [Self])) {
            f(out)
        }
    };
}

/// PyTorch's `amax` step: a NaN value wins, and `std::max(acc, value)` keeps `acc` unless
/// it compares smaller, so a NaN there stays.
fn amax<T: PartialOrd + Copy>(is_nan: fn(T) -> bool) -> impl Fn(&mut T, T) {
    move |acc, v| {
        if is_nan(v) || *acc < v {
            *acc = v
        }
    }
}

/// PyTorch's `amin` step (see [`amax`]).
fn amin<T: PartialOrd + Copy>(is_nan: fn(T) -> bool) -> impl Fn(&mut T, T) {
    move |acc, v| {
        if is_nan(v) || v < *acc {
            *acc = v
        }
    }
}

macro_rules! integer_reduce {
    ($floor:ident: $($t:ty),*) => {$(
        impl Step for $t {
            fn step(reduce: Reduction) -> Option<fn(&mut Self, Self)> {
                Some(match reduce {
                    Reduction::Sum | Reduction::Mean => |a, v| *a = a.wrapping_add(v),
                    Reduction::Prod => |a, v| *a = a.wrapping_mul(v),
                    Reduction::Amax => |a, v| amax(|_| false)(a, v),
                    Reduction::Amin => |a, v| amin(|_| false)(a, v),
                })
            }
            fn identity(reduce: Reduction) -> Self {
                match reduce {
                    Reduction::Sum | Reduction::Mean => 0,
                    Reduction::Prod => 1,
                    Reduction::Amax => <$t>::MIN,
                    Reduction::Amin => <$t>::MAX,
                }
            }
        }
        impl Reduce for $t {
            in_itself!();
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn mean(sum: Self, count: Self) -> Self { $floor(sum, count) }
        }
    )*};
}

/// Signed division rounding toward −∞ (PyTorch's `rounding_mode="floor"`); a count that
/// wrapped to −1 divides the lowest value by wrapping.
fn floor_signed<
    T: num_traits::PrimInt + num_traits::Signed + num_traits::WrappingSub + num_traits::WrappingMul,
>(
    sum: T,
    count: T,
) -> T {
    let q = sum.checked_div(&count).unwrap_or(sum);
    if (sum < T::zero()) != (count < T::zero()) && q.wrapping_mul(&count) != sum {
        q.wrapping_sub(&T::one())
    } else {
        q
    }
}

/// Unsigned division (a count is never 0 here).
fn floor_unsigned<T: num_traits::PrimInt>(sum: T, count: T) -> T {
    sum.checked_div(&count).unwrap_or(sum)
}
integer_reduce!(floor_signed: i8, i16, i32, i64);
integer_reduce!(floor_unsigned: u8, u16, u32, u64);

macro_rules! float_step {
    ($($t:ty),*) => {$(
        impl Step for $t {
            fn step(reduce: Reduction) -> Option<fn(&mut Self, Self)> {
                Some(match reduce {
                    Reduction::Sum | Reduction::Mean => |a, v| *a += v,
                    Reduction::Prod => |a, v| *a *= v,
                    Reduction::Amax => |a, v| amax(<$t>::is_nan)(a, v),
                    Reduction::Amin => |a, v| amin(<$t>::is_nan)(a, v),
                })
            }
            fn identity(reduce: Reduction) -> Self {
                match reduce {
                    Reduction::Sum | Reduction::Mean => 0.0,
                    Reduction::Prod => 1.0,
                    Reduction::Amax => <$t>::NEG_INFINITY,
                    Reduction::Amin => <$t>::INFINITY,
                }
            }
        }
        impl Reduce for $t {
            in_itself!();
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn mean(sum: Self, count: Self) -> Self { sum / count }
        }
    )*};
}
float_step!(f32, f64);

macro_rules! half_reduce {
    ($($t:ty),*) => {$(
        impl Reduce for $t {
            type Acc = f32;
            fn widen(self) -> f32 { self.to_f32() }
            fn in_acc(out: &mut [Self], f: impl FnOnce(&mut [f32])) {
                let mut wide: Vec<f32> = out.iter().map(|v| v.to_f32()).collect();
                f(&mut wide);
                for (o, w) in out.iter_mut().zip(wide) {
                    *o = <$t>::from_f32(w);
                }
            }
            fn zero() -> Self { <$t>::ZERO }
            fn one() -> Self { <$t>::ONE }
            fn mean(sum: Self, count: Self) -> Self { sum / count }
        }
    )*};
}
half_reduce!(half::f16, half::bf16);

macro_rules! complex_reduce {
    ($($t:ty: $product:expr),*) => {$(
        impl Step for num_complex::Complex<$t> {
            fn step(reduce: Reduction) -> Option<fn(&mut Self, Self)> {
                match reduce {
                    Reduction::Sum | Reduction::Mean => Some(|a, v| *a += v),
                    Reduction::Prod => Some($product),
                    Reduction::Amax | Reduction::Amin => None,
                }
            }
            fn identity(reduce: Reduction) -> Self {
                match reduce {
                    Reduction::Prod => Self::new(1.0, 0.0),
                    _ => Self::new(0.0, 0.0),
                }
            }
        }
        impl Reduce for num_complex::Complex<$t> {
            in_itself!();
            fn zero() -> Self { Self::new(0.0, 0.0) }
            fn one() -> Self { Self::new(1.0, 0.0) }
            fn mean(sum: Self, count: Self) -> Self {
                // c10::complex's division (NumPy's, scaled by the larger part of the divisor).
                let (a, b, c, d) = (sum.re, sum.im, count.re, count.im);
                if c.abs() >= d.abs() {
                    if c == 0.0 && d == 0.0 {
                        return Self::new(a / c.abs(), b / d.abs());
                    }
                    let rat = d / c;
                    let scl = 1.0 / (c + d * rat);
                    Self::new((a + b * rat) * scl, (b - a * rat) * scl)
                } else {
                    let rat = c / d;
                    let scl = 1.0 / (d + c * rat);
                    Self::new((a * rat + b) * scl, (b * rat - a) * scl)
                }
            }
        }
    )*};
}
complex_reduce!(
    f32: |a, v| *a *= v,
    // c10::complex's product, which PyTorch's build contracts to fused multiply-adds for
    // complex128 (complex64's matches the plain one).
    f64: |a, v| *a = Self::new(a.re.mul_add(v.re, -(a.im * v.im)), a.re.mul_add(v.im, a.im * v.re))
);

impl Step for bool {
    fn step(reduce: Reduction) -> Option<fn(&mut Self, Self)> {
        match reduce {
            Reduction::Sum | Reduction::Amax => Some(|a, v| *a |= v),
            Reduction::Prod | Reduction::Amin => Some(|a, v| *a &= v),
            Reduction::Mean => None,
        }
    }
    fn identity(reduce: Reduction) -> Self {
        matches!(reduce, Reduction::Prod | Reduction::Amin)
    }
}

impl Reduce for bool {
    in_itself!();
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
    fn mean(sum: Self, _count: Self) -> Self {
        sum
    }
}
