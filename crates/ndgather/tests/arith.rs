//! The element types' one arithmetic ([`Arith`]), derived from the dtype table: every
//! `number` dtype has it, its laws hold on each, and its integer division and wrapping match
//! a small reference in `i128`.

use ndgather::embedding::Real;
use ndgather::{with_dtype, Arith, Complex64, DType};
use proptest::prelude::*;

/// The laws every number type's arithmetic keeps.
fn laws<T: Arith + std::fmt::Debug>() -> Result<(), String> {
    let three = T::count(3);
    let check = |ok: bool, what: &str| {
        ok.then_some(())
            .ok_or_else(|| format!("{}: {what}", std::any::type_name::<T>()))
    };
    check(T::count(0) == T::ZERO && T::count(1) == T::ONE, "count")?;
    check(T::ZERO.plus(three) == three, "0 + x")?;
    check(three.minus(T::ZERO) == three, "x - 0")?;
    check(
        T::ONE.times(three) == three && T::ONE.torch_times(three) == three,
        "1 * x",
    )?;
    check(three.tf_div(T::ONE) == three, "x / 1")?;
    // bool has no mean, so no division.
    check(
        T::torch_div().is_none_or(|d| d(three, T::ONE) == three),
        "torch x / 1",
    )?;
    check(T::narrow(three.widen()) == three, "widen then narrow")?;
    check(T::count(2).plus(T::ONE) == three, "2 + 1")?;
    let floating = T::count(4).root().is_some();
    if T::ORDERED {
        let (lo, hi) = T::bounds();
        let (neg, pos) = T::infinities();
        check(lo.below(hi) && T::ZERO.below(T::ONE), "order")?;
        check(
            !lo.below(neg) && !pos.below(hi),
            "infinities outside the bounds",
        )?;
        // The floating-point types' infinities lie strictly outside their finite bounds.
        check(!floating || (neg.below(lo) && hi.below(pos)), "infinities")?;
    }
    // 0 / 0 is NaN where the type has one.
    check(T::ZERO.tf_div(T::ZERO).is_not_a_number() == floating, "NaN")?;
    check(!three.is_not_a_number(), "3 is a number")?;
    // Integers: no root, no packets; the floating-point and complex types: both.
    if T::true_div().is_some() {
        check(three.root().is_none(), "an integer's root")?;
    }
    match T::count(4).root() {
        None => check(T::LANES == 1, "no packets without a root")?,
        Some(two) => {
            check(two == T::count(2), "sqrt(4)")?;
            let bytes = T::LANES * std::mem::size_of::<T>();
            check(
                bytes == 16 || bytes == 32,
                "an Eigen packet of 16 or 32 bytes",
            )?;
        }
    }
    // bool counts saturate at `true`.
    let counted = if T::ONE.plus(T::ONE) == T::ONE {
        1.0
    } else {
        3.0
    };
    check(
        three.as_f64() == counted && T::ZERO.as_f64() == 0.0,
        "as f64",
    )
}

fn real<T: Real>() -> bool {
    T::narrow(T::ONE.widen()) == T::ONE
}

#[test]
fn every_number_dtype_has_the_arithmetic_and_its_laws() {
    let mut seen = 0;
    for &dtype in DType::ALL {
        if let Some(result) = with_dtype!(dtype, number T => Some(laws::<T>()), else None) {
            result.unwrap();
            seen += 1;
        }
        // The lookups' `Real` is derived from the arithmetic: exactly the table's reals.
        assert_eq!(
            with_dtype!(dtype, real T => real::<T>(), else false),
            dtype.is_real()
        );
    }
    assert_eq!(seen, DType::ALL.iter().filter(|d| d.is_number()).count());
    laws::<bool>().unwrap();
}

/// Each number dtype's Eigen packet lanes (TensorFlow's AVX build) and the dtype Python's
/// `/` gives its integers.
#[test]
fn lanes_and_true_division_per_dtype() {
    use DType::*;
    let expected = [
        (F16, 8, None),
        (BF16, 8, None),
        (F32, 8, None),
        (F64, 4, None),
        (C64, 4, None),
        (C128, 2, None),
        (I8, 1, Some(F32)),
        (I16, 1, Some(F32)),
        (I32, 1, Some(F64)),
        (I64, 1, Some(F64)),
        (U8, 1, Some(F32)),
        (U16, 1, Some(F32)),
        (U32, 1, Some(F64)),
        (U64, 1, Some(F64)),
    ];
    assert_eq!(
        expected.len(),
        DType::ALL.iter().filter(|d| d.is_number()).count()
    );
    for (dtype, lanes, true_div) in expected {
        let got = with_dtype!(dtype, number T => (T::LANES, T::true_div()), else unreachable!());
        assert_eq!(got, (lanes, true_div), "{dtype}");
    }
}

#[test]
fn bools_add_as_or_and_multiply_as_and() {
    assert!(true.plus(false) && true.plus(true) && !false.plus(false));
    assert!(!true.times(false) && true.times(true));
    assert!(false.below(true) && !true.below(false));
    assert!(<bool as Arith>::torch_div().is_none());
}

#[test]
fn halves_round_after_each_operation() {
    use ndgather::f16;
    let a = f16::from_f32(2049.0); // 2048 in f16, whose step there is 2
    assert_eq!(a.plus(f16::ONE), f16::from_f32(a.to_f32() + 1.0));
    // Both half types widen to f32; the others compute in themselves.
    let wide: (f32, f32, f64) = (
        f16::ONE.widen(),
        ndgather::bf16::from_f32(1.5).widen(),
        1.5f64.widen(),
    );
    assert_eq!(wide, (1.0, 1.5, 1.5));
}

#[test]
fn complex_quotients_follow_each_library() {
    let sum = Complex64::new(6.0, 8.0);
    // TensorFlow divides each part by the count's real part; PyTorch divides as complex.
    assert_eq!(
        sum.tf_div(Complex64::new(2.0, 5.0)),
        Complex64::new(3.0, 4.0)
    );
    let div = <Complex64 as Arith>::torch_div().unwrap();
    assert_eq!(
        div(sum, Complex64::new(0.0, 2.0)),
        Complex64::new(4.0, -3.0)
    );
    assert_eq!(div(sum, Complex64::new(2.0, 1.0)), Complex64::new(4.0, 2.0));
    // c10 scales by the larger part of the divisor, in both of its branches: the plain
    // formula's c² + d² overflows to NaN here.
    let big = Complex64::new(1e300, 1e300);
    assert_eq!(div(big, big), Complex64::new(1.0, 0.0));
    let q = div(big, Complex64::new(1e299, 1e300));
    assert!(
        (q.re - 1.1 / 1.01).abs() < 1e-12 && (q.im + 0.9 / 1.01).abs() < 1e-12,
        "{q}"
    );
    assert!((big / big).re.is_nan(), "the plain quotient overflows");
    const { assert!(!<Complex64 as Arith>::ORDERED) };
}

/// `a / b` rounded toward −∞, in `i128`.
fn floor_div(a: i128, b: i128) -> i128 {
    if b > 0 {
        a.div_euclid(b)
    } else {
        (-a).div_euclid(-b)
    }
}

macro_rules! integer_reference {
    ($name:ident, $t:ty) => {
        proptest! {
            #[test]
            fn $name(a: $t, b: $t) {
                let (wa, wb) = (a as i128, b as i128);
                prop_assert_eq!(a.plus(b), (wa + wb) as $t);
                prop_assert_eq!(a.minus(b), (wa - wb) as $t);
                prop_assert_eq!(a.times(b), wa.wrapping_mul(wb) as $t);
                let trunc = if b == 0 { a } else { (wa / wb) as $t };
                prop_assert_eq!(a.tf_div(b), trunc);
                if b != 0 {
                    let torch = <$t as Arith>::torch_div().unwrap();
                    prop_assert_eq!(torch(a, b), floor_div(wa, wb) as $t);
                }
                prop_assert_eq!(a.below(b), a < b);
            }
        }
    };
}
integer_reference!(i8_matches_i128, i8);
integer_reference!(i32_matches_i128, i32);
integer_reference!(i64_matches_i128, i64);
integer_reference!(u8_matches_i128, u8);
integer_reference!(u64_matches_i128, u64);

/// PyTorch's complex128 product contracts to fused multiply-adds; complex64's does not. With
/// `a.re * v.re = 1 + 2^-29 + 2^-60` and `a.im * v.im = 1 + 2^-29`, only a fused product
/// keeps the 2^-60 of the real part.
#[test]
fn complex128_products_are_fused_as_pytorchs() {
    let e = |k: i32| 2f64.powi(-k);
    let (a, v) = (
        Complex64::new(1.0 + e(30), 1.0),
        Complex64::new(1.0 + e(30), 1.0 + e(29)),
    );
    assert_eq!(a.torch_times(v).re, e(60));
    assert_eq!(a.times(v).re, 0.0);
    // complex64: a.re * v.re = 1 + 2^-11 + 2^-24, a half ulp, so only a fused product
    // would keep 2^-24.
    let e32 = |k: i32| 2f32.powi(-k);
    let (a32, v32) = (
        ndgather::Complex32::new(1.0 + e32(12), 1.0),
        ndgather::Complex32::new(1.0 + e32(12), 1.0 + e32(11)),
    );
    assert_eq!(a32.torch_times(v32).re, 0.0);
}

/// The summing ops wrap integers, as TensorFlow's kernels do (a checked build would
/// otherwise panic on the overflow).
#[test]
fn integer_sums_wrap() {
    use ndgather::ndarray::array;
    let out = ndgather::scatter::scatter_nd(
        &array![[0], [0]],
        &array![127i8, 1],
        &[1],
        ndgather::BadIndices::Error,
    );
    assert_eq!(out.unwrap(), array![-128i8].into_dyn());
}
