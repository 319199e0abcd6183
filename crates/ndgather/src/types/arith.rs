//! The arithmetic of the element types, one trait for every op that computes: each number
//! dtype of the table gets [`Arith`] from its row (its kind, and its `widened` role), so a new
//! dtype gets its arithmetic there too. Where TensorFlow's and PyTorch's kernels compute
//! differently on the same type (integer division, complex products and quotients), the
//! trait names both rules, and each op picks its library's.

use crate::types::dtype::{ArrayElement, DType};

/// The arithmetic of one element type, as the kernels of TensorFlow and PyTorch compute it on
/// the CPU: integers wrap; floating-point and complex numbers round after each operation, in
/// the type itself or in [`Arith::Acc`] where a library widens; `bool` adds as `or` and
/// multiplies as `and` (PyTorch's `sum` and `prod` of bools).
///
/// Implemented for every `number` dtype of the table and for `bool`; its method names avoid
/// those of `std::ops` and `num_traits::Float`, so that they may bound the same type.
///
/// ```
/// use ndgather::{Arith, f16};
/// assert_eq!(250u8.plus(10), 4);
/// assert_eq!((-7i32).tf_div(2), -3);
/// assert_eq!(<i32 as Arith>::torch_div().map(|d| d(-7, 2)), Some(-4));
/// assert_eq!(f16::from_f32(1.5).widen(), 1.5f32);
/// assert_eq!(true.plus(true), true);
/// ```
pub trait Arith: ArrayElement + Copy + PartialEq + Send + Sync + 'static {
    /// The type that sums and products run in where a library widens: `f32` for the half
    /// types (PyTorch's reductions, TensorFlow's embedding combiners), the type itself
    /// otherwise.
    type Acc: Arith;
    /// 0 (`false`).
    const ZERO: Self;
    /// 1 (`true`).
    const ONE: Self;
    /// Whether the type has an order (every number but the complex ones, and `bool`).
    const ORDERED: bool;
    /// The lanes of an Eigen packet in TensorFlow's AVX build, which fix the order a sorted
    /// segment reduction combines values in; 1 where the order cannot change a result.
    const LANES: usize;
    /// `self` in [`Arith::Acc`].
    fn widen(self) -> Self::Acc;
    /// A value of [`Arith::Acc`] rounded to this type.
    fn narrow(acc: Self::Acc) -> Self;
    /// Runs `f` on `out` in [`Arith::Acc`]: on `out` itself, or on a widened copy that is
    /// rounded back afterwards (PyTorch reduces halves in `float` and rounds once).
    fn in_acc(out: &mut [Self], f: impl FnOnce(&mut [Self::Acc]));
    /// `self + other`.
    fn plus(self, other: Self) -> Self;
    /// `self - other` (for `bool`, `self & !other`; no op subtracts bools).
    fn minus(self, other: Self) -> Self;
    /// `self * other`.
    fn times(self, other: Self) -> Self;
    /// `self * other` as PyTorch's CPU build computes it: complex128's product contracts to
    /// fused multiply-adds.
    fn torch_times(self, other: Self) -> Self;
    /// `self / n` as TensorFlow divides a segment's sum by its count: integers toward zero
    /// (`self` where `n` is 0), a complex number by the real part of `n`.
    fn tf_div(self, n: Self) -> Self;
    /// `self / v` for any value `v`, as TensorFlow's vectorised `Div` computes it (a segment
    /// product's gradient divides by each element): for complex numbers Eigen's
    /// `pdiv_complex`, which scales `v` by `s = max(|re|, |im|)` first, so that `|v|²` neither
    /// overflows nor underflows: `self * conj(v / s) / |v / s|² / s`; otherwise
    /// [`Arith::tf_div`].
    fn quotient(self, v: Self) -> Self {
        self.tf_div(v)
    }
    /// `self / n` as PyTorch's `div_` computes a mean: integers toward −∞, complex numbers by
    /// c10's scaled division; `None` for `bool`, which has no mean.
    fn torch_div() -> Option<fn(Self, Self) -> Self>;
    /// `self < other` (false for the complex numbers, which have no order).
    fn below(self, other: Self) -> bool;
    /// Whether `self` is NaN.
    fn is_not_a_number(self) -> bool;
    /// A count of values in the type, as TensorFlow and PyTorch cast it.
    fn count(n: usize) -> Self;
    /// The lowest and the highest finite value.
    fn bounds() -> (Self, Self);
    /// −∞ and +∞ where the type has them, else [`Arith::bounds`].
    fn infinities() -> (Self, Self);
    /// `sqrt(self)`, for the floating-point and complex types.
    fn root(self) -> Option<Self>;
    /// For integers, the dtype Python's `/` gives: `float32` for 8- and 16-bit integers,
    /// `float64` for wider ones.
    fn true_div() -> Option<DType>;
    /// The value as `f64` (a complex number's real part).
    fn as_f64(self) -> f64;
}

/// The number dtypes of the table (its `number` role): what the summing ops' typed functions
/// take (scatters, segment sums, gradients), as TensorFlow's kernels do. `bool` has
/// [`Arith`], for PyTorch's reductions of bools, but is no `Number`.
///
/// ```
/// fn sums<T: ndgather::Number>() {}
/// sums::<ndgather::Complex64>();
/// sums::<i8>();
/// ```
///
/// ```compile_fail
/// fn sums<T: ndgather::Number>() {}
/// sums::<bool>();
/// ```
pub trait Number: Arith {}

/// [`Arith`]'s items for a type that computes in itself.
macro_rules! in_itself {
    () => {
        type Acc = Self;
        #[inline]
        fn widen(self) -> Self {
            self
        }
        #[inline]
        fn narrow(acc: Self) -> Self {
            acc
        }
        fn in_acc(out: &mut [Self], f: impl FnOnce(&mut [Self])) {
            f(out)
        }
    };
}

/// [`Arith`]'s items that depend on how `f32` and `f64` compute: in themselves.
macro_rules! float_in_itself {
    ($t:ty) => {
        in_itself!();
        const ZERO: Self = 0.0;
        const ONE: Self = 1.0;
        fn count(n: usize) -> Self {
            n as $t
        }
        fn root(self) -> Option<Self> {
            Some(self.sqrt())
        }
        fn as_f64(self) -> f64 {
            f64::from(self)
        }
    };
}

/// [`Arith`]'s items that depend on how a half type computes: widened to `f32`.
macro_rules! float_in_f32 {
    ($t:ty) => {
        type Acc = f32;
        const ZERO: Self = <$t>::ZERO;
        const ONE: Self = <$t>::ONE;
        #[inline]
        fn widen(self) -> f32 {
            self.to_f32()
        }
        #[inline]
        fn narrow(acc: f32) -> Self {
            <$t>::from_f32(acc)
        }
        fn in_acc(out: &mut [Self], f: impl FnOnce(&mut [f32])) {
            let mut wide: Vec<f32> = out.iter().map(|v| v.to_f32()).collect();
            f(&mut wide);
            for (o, w) in out.iter_mut().zip(wide) {
                *o = <$t>::from_f32(w);
            }
        }
        fn count(n: usize) -> Self {
            <$t>::from_f64(n as f64)
        }
        fn root(self) -> Option<Self> {
            Some(<$t>::from_f32(self.to_f32().sqrt()))
        }
        fn as_f64(self) -> f64 {
            self.to_f64()
        }
    };
}

/// The integer items of [`Arith`]; `$floor` is PyTorch's division toward −∞.
macro_rules! integer {
    ($t:ty, $floor:ident) => {
        impl Arith for $t {
            in_itself!();
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const ORDERED: bool = true;
            const LANES: usize = 1;
            #[inline]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline]
            fn minus(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
            #[inline]
            fn times(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            #[inline]
            fn torch_times(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            fn tf_div(self, n: Self) -> Self {
                self.checked_div(n).unwrap_or(self)
            }
            fn torch_div() -> Option<fn(Self, Self) -> Self> {
                Some($floor)
            }
            #[inline]
            fn below(self, other: Self) -> bool {
                self < other
            }
            #[inline]
            fn is_not_a_number(self) -> bool {
                false
            }
            fn count(n: usize) -> Self {
                n as $t
            }
            fn bounds() -> (Self, Self) {
                (<$t>::MIN, <$t>::MAX)
            }
            fn infinities() -> (Self, Self) {
                (<$t>::MIN, <$t>::MAX)
            }
            fn root(self) -> Option<Self> {
                None
            }
            fn true_div() -> Option<DType> {
                Some(if std::mem::size_of::<$t>() <= 2 {
                    DType::F32
                } else {
                    DType::F64
                })
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    };
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

/// Unsigned division (a count is never 0 where PyTorch divides).
fn floor_unsigned<T: num_traits::PrimInt>(sum: T, count: T) -> T {
    sum.checked_div(&count).unwrap_or(sum)
}

/// [`Arith`]'s sum, difference and product by the type's operators, which round after
/// each operation (the floating-point and complex types).
macro_rules! by_operators {
    () => {
        #[inline]
        fn plus(self, other: Self) -> Self {
            self + other
        }
        #[inline]
        fn minus(self, other: Self) -> Self {
            self - other
        }
        #[inline]
        fn times(self, other: Self) -> Self {
            self * other
        }
    };
}

/// The floating-point items of [`Arith`]: `$acc` is `float_in_itself` or `float_in_f32`,
/// `$lanes` the Eigen packet's lanes.
macro_rules! floating {
    ($t:ty, $lanes:expr, $acc:ident) => {
        impl Arith for $t {
            $acc!($t);
            const ORDERED: bool = true;
            const LANES: usize = $lanes;
            by_operators!();
            #[inline]
            fn torch_times(self, other: Self) -> Self {
                self * other
            }
            fn tf_div(self, n: Self) -> Self {
                self / n
            }
            fn torch_div() -> Option<fn(Self, Self) -> Self> {
                Some(|sum, count| sum / count)
            }
            #[inline]
            fn below(self, other: Self) -> bool {
                self < other
            }
            #[inline]
            fn is_not_a_number(self) -> bool {
                self.is_nan()
            }
            fn bounds() -> (Self, Self) {
                (<$t>::MIN, <$t>::MAX)
            }
            fn infinities() -> (Self, Self) {
                (<$t>::NEG_INFINITY, <$t>::INFINITY)
            }
            fn true_div() -> Option<DType> {
                None
            }
        }
    };
}

/// The complex items of [`Arith`] (Eigen packs 32 bytes of them).
macro_rules! complex {
    ($t:ty) => {
        impl Arith for $t {
            in_itself!();
            const ZERO: Self = <$t>::new(0.0, 0.0);
            const ONE: Self = <$t>::new(1.0, 0.0);
            const ORDERED: bool = false;
            const LANES: usize = 32 / std::mem::size_of::<$t>();
            by_operators!();
            fn torch_times(self, v: Self) -> Self {
                // c10::complex's product, which PyTorch's build contracts to fused
                // multiply-adds for complex128 (complex64's matches the plain one).
                if std::mem::size_of::<$t>() == 16 {
                    Self::new(
                        self.re.mul_add(v.re, -(self.im * v.im)),
                        self.re.mul_add(v.im, self.im * v.re),
                    )
                } else {
                    self * v
                }
            }
            fn tf_div(self, n: Self) -> Self {
                // Each component by the (real) count, as Eigen divides a complex by a scalar.
                Self::new(self.re / n.re, self.im / n.re)
            }
            fn quotient(self, v: Self) -> Self {
                let s = v.re.abs().max(v.im.abs());
                let (c, d) = (v.re / s, v.im / s);
                let denom = c * c + d * d;
                Self::new(
                    (self.re * c + self.im * d) / denom / s,
                    (self.im * c - self.re * d) / denom / s,
                )
            }
            fn torch_div() -> Option<fn(Self, Self) -> Self> {
                Some(c10_div)
            }
            fn below(self, _other: Self) -> bool {
                false
            }
            fn is_not_a_number(self) -> bool {
                self.re.is_nan() || self.im.is_nan()
            }
            fn count(n: usize) -> Self {
                Self::new(n as _, 0.0)
            }
            fn bounds() -> (Self, Self) {
                (Self::ZERO, Self::ZERO)
            }
            fn infinities() -> (Self, Self) {
                (Self::ZERO, Self::ZERO)
            }
            fn root(self) -> Option<Self> {
                Some(self.sqrt())
            }
            fn true_div() -> Option<DType> {
                None
            }
            fn as_f64(self) -> f64 {
                f64::from(self.re)
            }
        }
    };
}

/// c10::complex's division (NumPy's, scaled by the larger part of the divisor).
fn c10_div<F: num_traits::Float>(
    sum: num_complex::Complex<F>,
    count: num_complex::Complex<F>,
) -> num_complex::Complex<F> {
    let (a, b, c, d) = (sum.re, sum.im, count.re, count.im);
    if c.abs() >= d.abs() {
        if c == F::zero() && d == F::zero() {
            return num_complex::Complex::new(a / c.abs(), b / d.abs());
        }
        let rat = d / c;
        let scl = F::one() / (c + d * rat);
        num_complex::Complex::new((a + b * rat) * scl, (b - a * rat) * scl)
    } else {
        let rat = c / d;
        let scl = F::one() / (d + c * rat);
        num_complex::Complex::new((a * rat + b) * scl, (b * rat - a) * scl)
    }
}

impl Arith for bool {
    in_itself!();
    const ZERO: Self = false;
    const ONE: Self = true;
    const ORDERED: bool = true;
    const LANES: usize = 1;
    fn plus(self, other: Self) -> Self {
        self | other
    }
    fn minus(self, other: Self) -> Self {
        self & !other
    }
    fn times(self, other: Self) -> Self {
        self & other
    }
    fn torch_times(self, other: Self) -> Self {
        self & other
    }
    fn tf_div(self, _n: Self) -> Self {
        self
    }
    fn torch_div() -> Option<fn(Self, Self) -> Self> {
        None
    }
    fn below(self, other: Self) -> bool {
        !self & other
    }
    fn is_not_a_number(self) -> bool {
        false
    }
    fn count(n: usize) -> Self {
        n != 0
    }
    fn bounds() -> (Self, Self) {
        (false, true)
    }
    fn infinities() -> (Self, Self) {
        (false, true)
    }
    fn root(self) -> Option<Self> {
        None
    }
    fn true_div() -> Option<DType> {
        None
    }
    fn as_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
}

/// A row's arithmetic, by its kind; the `widened` role marks the half types.
macro_rules! arith_of_kind {
    (Int, $t:ty, $r:tt) => {
        integer!($t, floor_signed);
    };
    (Uint, $t:ty, $r:tt) => {
        integer!($t, floor_unsigned);
    };
    (Float, $t:ty, $r:tt) => {
        crate::__if_role! {widened $r {floating!($t, 8, float_in_f32);}
        else {floating!($t, 32 / std::mem::size_of::<$t>(), float_in_itself);}}
    };
    (BrainFloat, $t:ty, $r:tt) => {
        arith_of_kind!(Float, $t, $r);
    };
    (Complex, $t:ty, $r:tt) => {
        complex!($t);
    };
    // `bool`'s is written above; 8-bit floats and strings have no arithmetic.
    ($other:ident, $t:ty, $r:tt) => {};
}

/// [`Arith`] for every row of the table, by its kind, and [`Number`] for its `number` role.
macro_rules! impl_arith {
    ({} $($v:ident($t:ty) = $name:literal, $kind:ident, $npy:literal, $st:literal, [$($r:ident)*];)*) => {$(
        arith_of_kind!($kind, $t, [$($r)*]);
        crate::__if_role! {number [$($r)*] {impl Number for $t {}} else {}}
    )*};
}
crate::__dtype_table!([impl_arith] {});
