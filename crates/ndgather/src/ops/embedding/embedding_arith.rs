//! The lookups' arithmetic, as TensorFlow computes it on each float type: the element
//! types ([`Real`]), the combiners' weighted sums and scales, and `max_norm`'s clipping
//! with its gradient.

use super::{Combiner, Sparse};
use crate::types::arith::{Arith, Number};
use num_traits::{Float, One, Zero};
use std::borrow::Cow;

/// Floating-point element types of embedding tables: the number types whose arithmetic
/// ([`Arith::Acc`]) is a float. Half types are computed in `f32` where TensorFlow does so,
/// and round after each operation where TensorFlow computes in the type itself.
pub trait Real: Number + Arith<Acc: Float + Send + Sync> {}
impl<T: Number + Arith<Acc: Float + Send + Sync>> Real for T {}

/// `a op b` as TensorFlow computes it on `T`: in the arithmetic's type, rounded to `T`.
#[inline]
pub(crate) fn round<T: Real>(a: T::Acc) -> T::Acc {
    T::narrow(a).widen()
}

/// `x` in the arithmetic's type (rounded as a cast rounds).
pub(super) fn from_f64<A: Float>(x: f64) -> A {
    num_traits::cast(x).unwrap_or_else(A::nan)
}

/// Left-to-right sum, starting from the first term (as TensorFlow's segment sums).
pub(super) fn sequential<A: Float>(mut terms: impl Iterator<Item = A>) -> A {
    let first = terms.next().unwrap_or_else(A::zero);
    terms.fold(first, |s, t| s + t)
}

/// What a weighted combiner divides a batch row's sum by: the sum of its weights
/// (`"mean"`), the root of the sum of their squares (`"sqrtn"`), nothing (`"sum"`).
pub(super) fn weight_denominator<A: Float>(
    w: &[A],
    range: std::ops::Range<usize>,
    combiner: Combiner,
) -> Option<A> {
    match combiner {
        Combiner::Sum => None,
        Combiner::Mean => Some(sequential(range.map(|k| w[k]))),
        Combiner::SqrtN => Some(sequential(range.map(|k| w[k].powi(2))).sqrt()),
    }
}

/// `1 / m` for a count-based scale, as TensorFlow's sparse segment gradient: in `f64`, then
/// rounded to `T`.
pub(super) fn count_scale<T: Real>(m: f64) -> T::Acc {
    round::<T>(from_f64(1.0 / m.max(1.0)))
}

/// The weighted sum of a batch row's embeddings: `embeddings *= weights`, then
/// `segment_sum`, in `f32` for half types.
pub(super) fn weighted_sum<T: Real>(
    sparse: &Sparse<'_, T>,
    range: std::ops::Range<usize>,
    w: &[T::Acc],
) -> Vec<T::Acc> {
    let d = sparse.table.row_len;
    (0..d)
        .map(|j| sequential(range.clone().map(|k| sparse.values[k][j].widen() * w[k])))
        .collect()
}

/// TensorFlow's `SparseSegmentReduction` kernel for one segment of `num` ids from `k0`: the
/// first block (`num % 8` ids, or 8 or 9) summed and scaled by `1 / m`, then blocks of 8
/// added; the division by the count (or its root) at the end for 10 ids or more.
pub(super) fn unweighted<T: Real>(
    sparse: &Sparse<'_, T>,
    k0: usize,
    num: usize,
    combiner: Combiner,
    dst: &mut [T::Acc],
) {
    let row = |k: usize| &sparse.values[k0 + k];
    if num == 1 {
        for (o, v) in dst.iter_mut().zip(row(0)) {
            *o = v.widen();
        }
        return;
    }
    let first = match num & 7 {
        0 => 8,
        1 => 9,
        r => r,
    };
    let m = match combiner {
        Combiner::Mean if num < 10 => from_f64::<T::Acc>(num as f64),
        Combiner::SqrtN if num < 10 => from_f64::<T::Acc>((num as f64).sqrt()),
        _ => T::Acc::one(),
    };
    let scale = T::Acc::one() / m;
    let block =
        |from: usize, to: usize, j: usize| sequential((from..to).map(|k| row(k)[j].widen()));
    for (j, o) in dst.iter_mut().enumerate() {
        let mut s = block(0, first, j) * scale;
        let mut at = first;
        while at < num {
            s = s + block(at, (at + 8).min(num), j);
            at += 8;
        }
        if num >= 10 {
            match combiner {
                Combiner::Mean => s = s / from_f64::<T::Acc>(num as f64),
                Combiner::SqrtN => s = s / from_f64::<T::Acc>((num as f64).sqrt()),
                Combiner::Sum => {}
            }
        }
        *o = s;
    }
}

/// `tf.clip_by_norm(t, c)` of one row, each operation in `T`: `l2 = sqrt(sum(t * t))`,
/// then `t * c / max(l2, c)`.
pub(crate) fn clip_row<T: Real>(row: &[T], c: T::Acc) -> Vec<T> {
    let l2sum = sequential(row.iter().map(|&v| round::<T>(v.widen() * v.widen())));
    let l2sum = round::<T>(l2sum);
    let norm = if l2sum > T::Acc::zero() {
        round::<T>(l2sum.sqrt())
    } else {
        l2sum
    };
    let den = if norm.is_nan() { norm } else { norm.max(c) };
    row.iter()
        .map(|&v| T::narrow(round::<T>(v.widen() * c) / den))
        .collect()
}

/// PyTorch's `embedding_renorm_` of one row, without writing the table: where the row's L2
/// norm ([`torch_norm`]) exceeds `max_norm`, the row times `max_norm / (norm + 1e-7)`, that
/// scale computed in double, rounded to `T` and multiplied in the row's arithmetic type
/// (`row *= scale`; PyTorch 2.15 rounds it to `bfloat16` or `float16` for a half row); the
/// row as it is otherwise (a NaN norm or `max_norm` never exceeds).
pub(crate) fn renorm_row<T: Real>(row: &[T], max_norm: f64) -> Cow<'_, [T]> {
    let norm = torch_norm(row);
    if norm > max_norm {
        let scale: T::Acc = round::<T>(from_f64(max_norm / (norm + 1e-7)));
        Cow::Owned(row.iter().map(|&v| T::narrow(v.widen() * scale)).collect())
    } else {
        Cow::Borrowed(row)
    }
}

/// `row.norm()` as PyTorch's CPU kernel computes it for a contiguous row
/// (`norm_kernel_tensor_iterator_impl`), as a double (`.item<double>()`): the squares summed
/// in the lanes of a 256-bit vector of the arithmetic type (8 floats, 4 doubles; a multiply,
/// then an add), `bfloat16` loaded 16 at a time; the lanes folded left; the rest added one by
/// one (`buffer[0] += x * x`), fused as its build compiles that loop: for `float32` unrolled
/// by four, unfused, with the last `rest % 4` fused; fused otherwise. The root is rounded to
/// `T`. `float16` takes PyTorch's generic reduction, one fused step per element. (PyTorch
/// 2.15, this machine's AVX-512 build; every row of 1 to 47 float32 elements checked.)
pub(crate) fn torch_norm<T: Real>(row: &[T]) -> f64 {
    let zero = T::Acc::zero();
    let lanes = 32 / std::mem::size_of::<T::Acc>();
    let step = match T::DTYPE {
        crate::DType::BF16 => 2 * lanes,
        crate::DType::F16 => usize::MAX,
        _ => lanes,
    };
    let mut acc = [zero; 8];
    let whole = if step == usize::MAX {
        0
    } else {
        row.len() - row.len() % step
    };
    for chunk in row[..whole].chunks_exact(lanes) {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            let x = v.widen();
            *a = *a + x * x;
        }
    }
    let mut sum = acc[..lanes].iter().skip(1).fold(acc[0], |s, &a| s + a);
    let rest = &row[whole..];
    let unfused = match T::DTYPE {
        crate::DType::F32 => rest.len() - rest.len() % 4,
        _ => 0,
    };
    for &v in &rest[..unfused] {
        let x = v.widen();
        sum = sum + x * x;
    }
    for &v in &rest[unfused..] {
        let x = v.widen();
        sum = x.mul_add(x, sum);
    }
    num_traits::cast::<T::Acc, f64>(round::<T>(sum.sqrt())).unwrap_or(f64::NAN)
}

/// The gradient of [`clip_row`] at `row` for upstream `g`, in the order TensorFlow's
/// gradients of `clip_by_norm`'s ops compute it: `(g / max(n, c)) * c` from the division,
/// plus, where the norm `n` is at least `c` (`tf.maximum`'s gradient goes to its first
/// argument on a tie), twice `t * s` from `sqrt(sum(t * t))`, where
/// `s = 0.5 * sum(((-t * c) / n) / n * g) / n`. A NaN norm gives NaN, as TensorFlow's
/// division by it does.
pub(crate) fn clip_row_grad<T: Real>(row: &[T], g: &[T], c: T::Acc) -> Vec<T> {
    let l2sum = round::<T>(sequential(
        row.iter().map(|&v| round::<T>(v.widen() * v.widen())),
    ));
    let n = if l2sum > T::Acc::zero() {
        round::<T>(l2sum.sqrt())
    } else {
        l2sum
    };
    let den = if n.is_nan() { n } else { n.max(c) };
    let direct = |gv: T| round::<T>(round::<T>(gv.widen() / den) * c);
    // Below the norm, or NaN: the division's gradient alone.
    if n.partial_cmp(&c).is_none_or(std::cmp::Ordering::is_lt) {
        return g.iter().map(|&gv| T::narrow(direct(gv))).collect();
    }
    let dy = round::<T>(sequential(row.iter().zip(g).map(|(&t, &gv)| {
        let x = round::<T>(t.widen() * c);
        round::<T>(round::<T>(round::<T>(-x / n) / n) * gv.widen())
    })));
    let half: T::Acc = from_f64(0.5);
    let s = round::<T>(round::<T>(half * dy) / n);
    row.iter()
        .zip(g)
        .map(|(&t, &gv)| {
            let through_norm = round::<T>(s * t.widen());
            T::narrow(round::<T>(direct(gv) + through_norm) + through_norm)
        })
        .collect()
}
