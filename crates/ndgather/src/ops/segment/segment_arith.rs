//! TensorFlow's arithmetic for the segment reductions, per element type, and the order in
//! which its kernels combine rows: the unsorted kernels step through rows one by one; the
//! sorted ones reduce a segment of several rows with Eigen, whose vectorised columns use
//! packets of `P` lanes and, from 16 rows on, four accumulators.

use crate::types::dtype::{ArrayElement, DType};

/// A scalar step and Eigen's vectorised step of one reduction.
pub(crate) type StepPair<T> = [fn(T, T) -> T; 2];

/// TensorFlow's arithmetic for the segment reductions: integers wrap, the half types round
/// after every step, and a max or min step keeps the accumulator only where it compares
/// strictly better (`std::max(value, acc)`), so a NaN value wins and a NaN accumulator
/// yields to the next value. Eigen's vectorised steps (`packet_max`, `packet_min`) ignore
/// NaN instead.
pub trait SegmentValue: ArrayElement + Copy + Default + PartialEq + Send + Sync {
    /// 0.
    fn zero() -> Self;
    /// 1.
    fn one() -> Self;
    /// `acc + v`.
    fn add(acc: Self, v: Self) -> Self;
    /// `acc * v`.
    fn mul(acc: Self, v: Self) -> Self;
    /// `acc / n`: integer division (toward zero) for integers.
    fn div(acc: Self, n: Self) -> Self;
    /// A row count in the type, as Eigen's mean casts it.
    fn count(n: usize) -> Self;
    /// The scalar and the vectorised maximum steps, or `None` for an unordered type.
    fn max_steps() -> Option<StepPair<Self>>;
    /// The scalar and the vectorised minimum steps, or `None` for an unordered type.
    fn min_steps() -> Option<StepPair<Self>>;
    /// The lowest and the highest finite value (the unsorted max's and min's identities).
    fn bounds() -> (Self, Self);
    /// Eigen's identities for a sorted max and min: −∞ and +∞ where the type has them.
    fn infinities() -> (Self, Self);
    /// `sqrt(n)`, for sqrt_n (the float types).
    fn sqrt(n: Self) -> Option<Self>;
    /// The lanes of an Eigen packet (TensorFlow's AVX build); 1 where order cannot matter.
    const LANES: usize;
    /// For integers: the dtype Python's `/` gives (float32 for 8- and 16-bit integers,
    /// float64 for wider ones), with the value widened to `f64`.
    fn true_div() -> Option<DType>;
    /// The value as `f64` (for `true_div`).
    fn to_f64(self) -> f64;
}

fn tf_max<T: PartialOrd + Copy>(acc: T, v: T) -> T {
    if v < acc {
        acc
    } else {
        v
    }
}

fn tf_min<T: PartialOrd + Copy>(acc: T, v: T) -> T {
    if acc < v {
        acc
    } else {
        v
    }
}

fn packet_max<T: PartialOrd + Copy>(acc: T, v: T) -> T {
    if v > acc {
        v
    } else {
        acc
    }
}

fn packet_min<T: PartialOrd + Copy>(acc: T, v: T) -> T {
    if v < acc {
        v
    } else {
        acc
    }
}

macro_rules! int_values {
    ($($t:ty => $wide:ident),*) => {$(
        impl SegmentValue for $t {
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn add(acc: Self, v: Self) -> Self { acc.wrapping_add(v) }
            fn mul(acc: Self, v: Self) -> Self { acc.wrapping_mul(v) }
            fn div(acc: Self, n: Self) -> Self { acc.checked_div(n).unwrap_or(acc) }
            fn count(n: usize) -> Self { n as $t }
            fn max_steps() -> Option<StepPair<Self>> { Some([tf_max, packet_max]) }
            fn min_steps() -> Option<StepPair<Self>> { Some([tf_min, packet_min]) }
            fn bounds() -> (Self, Self) { (<$t>::MIN, <$t>::MAX) }
            fn infinities() -> (Self, Self) { (<$t>::MIN, <$t>::MAX) }
            fn sqrt(_: Self) -> Option<Self> { None }
            const LANES: usize = 1;
            fn true_div() -> Option<DType> { Some(DType::$wide) }
            fn to_f64(self) -> f64 { self as f64 }
        }
    )*};
}
int_values!(i8 => F32, i16 => F32, i32 => F64, i64 => F64, u8 => F32, u16 => F32, u32 => F64, u64 => F64);

macro_rules! float_values {
    ($($t:ty: $lanes:expr, $zero:expr, $one:expr, $count:expr, $sqrt:expr, $f64:expr;)*) => {$(
        impl SegmentValue for $t {
            fn zero() -> Self { $zero }
            fn one() -> Self { $one }
            fn add(acc: Self, v: Self) -> Self { acc + v }
            fn mul(acc: Self, v: Self) -> Self { acc * v }
            fn div(acc: Self, n: Self) -> Self { acc / n }
            fn count(n: usize) -> Self { $count(n) }
            fn max_steps() -> Option<StepPair<Self>> { Some([tf_max, packet_max]) }
            fn min_steps() -> Option<StepPair<Self>> { Some([tf_min, packet_min]) }
            fn bounds() -> (Self, Self) { (<$t>::MIN, <$t>::MAX) }
            fn infinities() -> (Self, Self) { (<$t>::NEG_INFINITY, <$t>::INFINITY) }
            fn sqrt(n: Self) -> Option<Self> { Some($sqrt(n)) }
            const LANES: usize = $lanes;
            fn true_div() -> Option<DType> { None }
            fn to_f64(self) -> f64 { $f64(self) }
        }
    )*};
}
float_values! {
    f32: 8, 0.0, 1.0, |n: usize| n as f32, f32::sqrt, f64::from;
    f64: 4, 0.0, 1.0, |n: usize| n as f64, f64::sqrt, |v: f64| v;
    half::f16: 8, half::f16::ZERO, half::f16::ONE, |n: usize| half::f16::from_f64(n as f64),
        |n: half::f16| half::f16::from_f32(n.to_f32().sqrt()), half::f16::to_f64;
    half::bf16: 8, half::bf16::ZERO, half::bf16::ONE, |n: usize| half::bf16::from_f64(n as f64),
        |n: half::bf16| half::bf16::from_f32(n.to_f32().sqrt()), half::bf16::to_f64;
}

macro_rules! complex_values {
    ($($t:ty: $lanes:expr),*) => {$(
        impl SegmentValue for num_complex::Complex<$t> {
            fn zero() -> Self { Self::new(0.0, 0.0) }
            fn one() -> Self { Self::new(1.0, 0.0) }
            fn add(acc: Self, v: Self) -> Self { acc + v }
            fn mul(acc: Self, v: Self) -> Self { acc * v }
            // Each component by the (real) count, as Eigen divides a complex by a scalar.
            fn div(acc: Self, n: Self) -> Self { Self::new(acc.re / n.re, acc.im / n.re) }
            fn count(n: usize) -> Self { Self::new(n as $t, 0.0) }
            fn max_steps() -> Option<StepPair<Self>> { None }
            fn min_steps() -> Option<StepPair<Self>> { None }
            fn bounds() -> (Self, Self) { (Self::zero(), Self::zero()) }
            fn infinities() -> (Self, Self) { (Self::zero(), Self::zero()) }
            fn sqrt(n: Self) -> Option<Self> { Some(n.sqrt()) }
            const LANES: usize = $lanes;
            fn true_div() -> Option<DType> { None }
            fn to_f64(self) -> f64 { f64::from(self.re) }
        }
    )*};
}
complex_values!(f32: 4, f64: 2);

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
pub(crate) fn eigen_rows<'r, T: SegmentValue + 'r>(
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
