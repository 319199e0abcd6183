//! Floating-point numbers as NumPy prints them: each value's shortest digits in its own type
//! (what NumPy's Dragon4 gives with `unique=True`), capped at a precision, positional or
//! scientific by NumPy's rules, padded so that a column of them lines up.

use ndgather::{FloatInfo, FloatValue};

/// A floating-point value of one of the `float` dtypes, kept with what its type says of it.
#[derive(Copy, Clone, Debug)]
pub struct Float {
    x: f64,
    info: FloatInfo,
}

impl Float {
    /// The value of `v`, with its type's facts.
    pub fn new<T: FloatValue>(v: T) -> Float {
        Float {
            x: v.to_f64(),
            info: FloatInfo::of::<T>(),
        }
    }

    /// The value, exactly (every value of these types is an `f64`).
    pub fn value(self) -> f64 {
        self.x
    }

    /// NumPy's `finfo(dtype).precision`: decimal digits the type carries.
    fn precision(self) -> i32 {
        self.info.precision
    }

    /// `x` rounded to this value's type (how NumPy compares a Python float with it).
    fn round(self, x: f64) -> f64 {
        (self.info.round)(x)
    }

    /// The interval of reals that round to this (finite, non-negative) value: between the
    /// midpoints to its neighbours, which round to it (ties to even) when its last bit is 0.
    fn interval(self) -> (f64, f64, bool) {
        if self.info.is_f64 {
            return (f64::NAN, f64::NAN, false);
        }
        let (x, b) = (self.x, (self.info.bits)(self.x));
        let below = if b == 0 {
            -x
        } else {
            (self.info.from_bits)(b - 1)
        };
        let above = (self.info.from_bits)(b + 1);
        let above = if above.is_finite() {
            above
        } else {
            x + (x - below)
        };
        ((below + x) / 2.0, (x + above) / 2.0, b.is_multiple_of(2))
    }
}

/// Digits `d0 d1 d2 …` and exponent `e` of `d0.d1d2… × 10^e`.
#[derive(Clone, Debug, PartialEq)]
struct Digits {
    digits: Vec<u8>,
    exp: i32,
}

impl Digits {
    /// Parses Rust's `{:e}` form (`1.25e-3`, `7e2`, `1.0e2`) of a non-negative number,
    /// every digit kept.
    fn from_exp_form(text: &str) -> Digits {
        let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
        Digits {
            digits: mantissa
                .bytes()
                .filter(u8::is_ascii_digit)
                .map(|b| b - b'0')
                .collect(),
            exp: exp.parse().unwrap_or(0),
        }
    }

    /// Without trailing zeros.
    fn trimmed(mut self) -> Digits {
        while self.digits.len() > 1 && self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        self
    }

    fn to_f64(&self) -> f64 {
        let text: String = self.digits.iter().map(|d| char::from(b'0' + d)).collect();
        format!("0.{text}e{}", self.exp + 1)
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// The number one unit in the last digit away (`up` or down), at the same length.
    fn step(&self, up: bool) -> Option<Digits> {
        let mut digits = self.digits.clone();
        let mut exp = self.exp;
        let mut i = digits.len();
        loop {
            if i == 0 {
                if !up {
                    return None;
                }
                digits.insert(0, 1);
                digits.pop();
                exp += 1;
                break;
            }
            i -= 1;
            match (up, digits[i]) {
                (true, 9) => digits[i] = 0,
                (true, d) => {
                    digits[i] = d + 1;
                    break;
                }
                (false, 0) => digits[i] = 9,
                (false, d) => {
                    digits[i] = d - 1;
                    break;
                }
            }
        }
        if digits.first() == Some(&0) {
            if digits.len() == 1 {
                return None;
            }
            digits.remove(0);
            digits.push(9);
            exp -= 1;
        }
        Some(Digits { digits, exp })
    }
}

/// The shortest digits that identify `|v|` among the values of its type; the closest such
/// to `|v|` where several are as short.
fn shortest(v: Float) -> Digits {
    let x = v.value().abs();
    if x == 0.0 {
        return Digits {
            digits: vec![0],
            exp: 0,
        };
    }
    if v.info.is_f64 {
        return Digits::from_exp_form(&format!("{x:e}")).trimmed();
    }
    let (low, high, closed) = v.abs().interval();
    let inside = |y: f64| (low < y && y < high) || (closed && (y == low || y == high));
    for len in 1..=17 {
        let rounded = Digits::from_exp_form(&format!("{:.*e}", len - 1, x));
        let candidates = [
            rounded.step(false),
            Some(rounded.clone()),
            rounded.step(true),
        ];
        let best = candidates
            .into_iter()
            .flatten()
            .map(|c| (c.to_f64(), c))
            .filter(|(y, _)| inside(*y))
            .min_by(|(a, ca), (b, cb)| {
                let (da, db) = ((a - x).abs(), (b - x).abs());
                da.total_cmp(&db).then_with(|| {
                    let even = |c: &Digits| c.digits.last().copied().unwrap_or(0) % 2;
                    even(ca).cmp(&even(cb))
                })
            });
        if let Some((_, digits)) = best {
            return digits.trimmed();
        }
    }
    Digits::from_exp_form(&format!("{x:e}")).trimmed()
}

impl Float {
    fn abs(self) -> Float {
        Float {
            x: self.x.abs(),
            ..self
        }
    }

    fn negative(self) -> bool {
        self.value().is_sign_negative()
    }
}

/// How trailing zeros of the fraction are trimmed (NumPy's `trim`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Trim {
    /// Keep them (`k`).
    Keep,
    /// Trim them, keep the point (`.`): `1.`.
    Point,
    /// Trim them but one (`0`): `1.0`.
    OneZero,
    /// Trim them and the point (`-`): `1`.
    All,
}

/// The integer and fraction digits of `|v|`, positional: its shortest digits, or its exact
/// value rounded to `precision` fraction digits where those need more, or to `min_digits`
/// where they need fewer.
fn positional_parts(v: Float, precision: usize, min_digits: usize, trim: Trim) -> (String, String) {
    let d = shortest(v);
    let needed = (d.digits.len() as i32 - 1 - d.exp).max(0) as usize;
    let (int, mut frac) = if needed > precision || needed < min_digits {
        let places = if needed > precision {
            precision
        } else {
            min_digits
        };
        let text = format!("{:.*}", places, v.value().abs());
        let (i, f) = text.split_once('.').unwrap_or((&text, ""));
        (i.to_string(), f.to_string())
    } else {
        let text: String = d.digits.iter().map(|x| char::from(b'0' + x)).collect();
        if d.exp < 0 {
            let zeros = "0".repeat((-d.exp - 1) as usize);
            ("0".to_string(), format!("{zeros}{text}"))
        } else {
            let point = d.exp as usize + 1;
            if text.len() <= point {
                (
                    format!("{text}{}", "0".repeat(point - text.len())),
                    String::new(),
                )
            } else {
                (text[..point].to_string(), text[point..].to_string())
            }
        }
    };
    trim_fraction(&mut frac, trim, min_digits);
    (int, frac)
}

fn trim_fraction(frac: &mut String, trim: Trim, min_digits: usize) {
    if trim != Trim::Keep {
        while frac.len() > min_digits && frac.ends_with('0') {
            frac.pop();
        }
        if trim == Trim::OneZero && frac.is_empty() {
            frac.push('0');
        }
    }
}

/// Mantissa integer digit, fraction digits and exponent of `|v|`, scientific.
fn scientific_parts(
    v: Float,
    precision: usize,
    min_digits: usize,
    trim: Trim,
) -> (String, String, i32) {
    let d = shortest(v);
    let needed = d.digits.len() - 1;
    let d = if needed > precision || needed < min_digits {
        let places = if needed > precision {
            precision
        } else {
            min_digits
        };
        Digits::from_exp_form(&format!("{:.*e}", places, v.value().abs()))
    } else {
        d
    };
    let mut frac: String = d.digits[1..].iter().map(|x| char::from(b'0' + x)).collect();
    while frac.len() < min_digits {
        frac.push('0');
    }
    trim_fraction(&mut frac, trim, min_digits);
    (char::from(b'0' + d.digits[0]).to_string(), frac, d.exp)
}

fn exponent(exp: i32, digits: usize) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!(
        "e{sign}{:0>width$}",
        exp.unsigned_abs(),
        width = digits.max(2)
    )
}

fn sign_of(v: Float, plus: bool) -> &'static str {
    if v.negative() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    }
}

/// NumPy's `FloatingFormat` for one column of values (a float array, or the real or the
/// imaginary parts of a complex one) in its default `maxprec` mode.
#[derive(Debug, Clone)]
pub struct FloatFormat {
    scientific: bool,
    precision: usize,
    min_digits: usize,
    trim: Trim,
    plus: bool,
    pad_left: usize,
    pad_right: usize,
    exp_size: usize,
}

impl FloatFormat {
    /// The format of `values` (all of one type): at most `precision` fraction digits, and a
    /// `+` on non-negative values with `plus`.
    pub fn new(values: &[Float], precision: usize, plus: bool) -> FloatFormat {
        let finite: Vec<Float> = values
            .iter()
            .copied()
            .filter(|v| v.value().is_finite())
            .collect();
        let nonzero = finite.iter().filter(|v| v.value() != 0.0);
        let mut scientific = false;
        if let Some(first) = nonzero.clone().next() {
            let max = nonzero.clone().map(|v| v.value().abs()).fold(0.0, f64::max);
            let min = nonzero
                .map(|v| v.value().abs())
                .fold(f64::INFINITY, f64::min);
            let cutoff = 10f64.powi(first.precision().min(8));
            let ratio = first.round(max / min);
            scientific = max >= first.round(cutoff)
                || min < first.round(1e-4)
                || ratio > first.round(1000.0);
        }
        let mut f = FloatFormat {
            scientific,
            precision,
            min_digits: 0,
            trim: Trim::Point,
            plus,
            pad_left: 0,
            pad_right: 0,
            exp_size: 0,
        };
        if finite.is_empty() {
        } else if scientific {
            let parts: Vec<_> = finite
                .iter()
                .map(|&v| scientific_parts(v, precision, 0, Trim::Point))
                .collect();
            f.exp_size = parts
                .iter()
                .map(|p| p.2.unsigned_abs().to_string().len().max(2))
                .max()
                .unwrap_or(2);
            f.precision = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
            f.min_digits = f.precision;
            f.trim = Trim::Keep;
            f.pad_left = finite
                .iter()
                .map(|&v| sign_of(v, plus).len() + 1)
                .max()
                .unwrap_or(1);
            f.pad_right = f.exp_size + 2 + f.precision;
        } else {
            let parts: Vec<_> = finite
                .iter()
                .map(|&v| {
                    let (i, fr) = positional_parts(v, precision, 0, Trim::Point);
                    (sign_of(v, plus).len() + i.len(), fr.len())
                })
                .collect();
            f.pad_left = parts.iter().map(|p| p.0).max().unwrap_or(0);
            f.pad_right = parts.iter().map(|p| p.1).max().unwrap_or(0);
        }
        if finite.len() != values.len() {
            let neg_inf = plus || values.iter().any(|v| v.value() == f64::NEG_INFINITY);
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + neg_inf as usize).saturating_sub(offset));
        }
        f
    }

    /// One value, padded to the column's width.
    pub fn format(&self, v: Float) -> String {
        let x = v.value();
        if !x.is_finite() {
            let text = if x.is_nan() {
                format!("{}nan", if self.plus { "+" } else { "" })
            } else {
                format!("{}inf", sign_of(v, self.plus))
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{text:>width$}");
        }
        let sign = sign_of(v, self.plus);
        if self.scientific {
            let (int, frac, exp) = scientific_parts(v, self.precision, self.min_digits, self.trim);
            let head = format!("{sign}{int}");
            format!(
                "{head:>w$}.{frac}{}",
                exponent(exp, self.exp_size),
                w = self.pad_left
            )
        } else {
            let (int, frac) = positional_parts(v, self.precision, self.min_digits, self.trim);
            let head = format!("{sign}{int}");
            format!(
                "{head:>l$}.{frac:<r$}",
                l = self.pad_left,
                r = self.pad_right
            )
        }
    }
}

/// A float alone, as NumPy's `str` of a scalar: its shortest digits, positional between
/// 1e-4 and the type's cutoff (`100.0`, `0.1`), scientific outside (`1e+16`, `1.5e-05`).
/// With `trim_all`, a whole number loses its `.0` (the parts of a complex scalar: `(1+2j)`).
pub fn scalar(v: Float, plus: bool, trim_all: bool) -> String {
    let x = v.value();
    let sign = sign_of(v, plus);
    if x.is_nan() {
        return format!("{}nan", if plus { "+" } else { "" });
    }
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let cutoff = if v.info.is_f64 {
        1e16
    } else {
        10f64.powi(v.precision())
    };
    let a = x.abs();
    if a == 0.0 || (1e-4..cutoff).contains(&a) {
        let trim = if trim_all { Trim::All } else { Trim::OneZero };
        let (int, frac) = positional_parts(v, usize::MAX, 0, trim);
        if frac.is_empty() {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (int, frac, exp) = scientific_parts(v, usize::MAX, 0, Trim::All);
        let point = if frac.is_empty() { "" } else { "." };
        format!("{sign}{int}{point}{frac}{}", exponent(exp, 2))
    }
}
