//! The loops that `with_widest_vectors!` compiles once per target, run for each target this
//! machine has: the baseline (SSE2 on x86-64) as a plain call, AVX2 through a function
//! compiled for the macro's AVX2 target (the clone that machines without AVX-512 run), and
//! the widest through the dispatched function itself (on this project's machines, the
//! AVX-512 clone). Each must agree with a plain wide comparison at every edge of the index
//! types.

use super::tests::lcg;
use super::{any_bad, any_bad_loop, flatten_branch_free, flatten_loop};
use crate::types::index::tests::{edges as type_edges, reference};
use crate::types::index::IndexType;

/// A target the loops are compiled for.
#[derive(Clone, Copy, Debug)]
enum Target {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    Widest,
}

impl Target {
    /// The targets this machine can run.
    fn available() -> Vec<Target> {
        #[allow(unused_mut)]
        let mut targets = vec![Target::Baseline, Target::Widest];
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            targets.push(Target::Avx2);
        }
        targets
    }

    fn any_bad<X>(self, block: &[X], bad: &impl Fn(&X) -> bool) -> bool {
        match self {
            Target::Baseline => any_bad_loop(block, bad),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `available` lists `Avx2` only where the CPU has AVX2 and FMA.
            #[allow(unsafe_code)]
            Target::Avx2 => unsafe { any_bad_avx2(block, bad) },
            Target::Widest => any_bad(block, bad),
        }
    }

    fn flatten<const D: usize, I: IndexType>(
        self,
        base: usize,
        vectors: &[[I; D]],
        shape: (&[usize; D], &[usize; D]),
        offsets: &mut [usize],
    ) -> bool {
        match self {
            Target::Baseline => flatten_loop(base, vectors, shape, offsets),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `available` lists `Avx2` only where the CPU has AVX2 and FMA.
            #[allow(unsafe_code)]
            Target::Avx2 => unsafe { flatten_avx2(base, vectors, shape, offsets) },
            Target::Widest => flatten_branch_free(base, vectors, shape, offsets),
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn any_bad_avx2<X>(block: &[X], bad: &impl Fn(&X) -> bool) -> bool {
    any_bad_loop(block, bad)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn flatten_avx2<const D: usize, I: IndexType>(
    base: usize,
    vectors: &[[I; D]],
    shape: (&[usize; D], &[usize; D]),
    offsets: &mut [usize],
) -> bool {
    flatten_loop(base, vectors, shape, offsets)
}

/// Values of `I` at the edges of `[0, dim)` and of the type's range.
fn edges<I: IndexType + TryFrom<i128>>(dim: usize) -> Vec<I> {
    let near_dim = [-1, 0, 1].map(|d| dim as i128 + d);
    let near_dim = near_dim.into_iter().filter_map(|v| I::try_from(v).ok());
    type_edges::<I>().into_iter().chain(near_dim).collect()
}

fn any_bad_at_every_length_and_spot<I: IndexType + TryFrom<i128>>() {
    let dim = 1000;
    let bad = |i: &I| i.checked_index(dim).is_none();
    for target in Target::available() {
        for len in 0..70 {
            let mut seed = len as u64;
            let good: Vec<I> = (0..len)
                .map(|_| {
                    I::try_from(i128::from(lcg(&mut seed) as u16 % 1000))
                        .ok()
                        .unwrap()
                })
                .collect();
            assert!(!target.any_bad(&good, &bad), "{target:?}, {len} good");
            for spot in 0..len {
                for &value in &edges::<I>(dim) {
                    let mut block = good.clone();
                    block[spot] = value;
                    let expected = reference(value, dim).is_none();
                    assert_eq!(
                        target.any_bad(&block, &bad),
                        expected,
                        "{target:?}: {value:?} at {spot} of {len}"
                    );
                }
            }
        }
    }
}

fn flatten_at_every_length<const D: usize, I: IndexType + TryFrom<i128>>(dims: [usize; D]) {
    let mut strides = [1; D];
    for k in (0..D.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * dims[k + 1];
    }
    let base = 7;
    let check = |target: Target, vectors: &[[I; D]]| {
        let mut offsets = vec![0; vectors.len()];
        let bad = target.flatten(base, vectors, (&dims, &strides), &mut offsets);
        let mut any_bad = false;
        for (vector, &got) in vectors.iter().zip(&offsets) {
            let mut offset = base;
            for k in 0..D {
                let p = reference(vector[k], dims[k]);
                any_bad |= p.is_none();
                offset += p.unwrap_or(0) * strides[k];
            }
            assert_eq!(got, offset, "{target:?}: {vector:?}");
        }
        assert_eq!(bad, any_bad, "{target:?}: {vectors:?}");
    };
    for target in Target::available() {
        for len in 0..40 {
            let mut seed = (len * D) as u64;
            let good: Vec<[I; D]> = (0..len)
                .map(|_| {
                    std::array::from_fn(|k| {
                        I::try_from(i128::from(lcg(&mut seed) as u32) % dims[k] as i128)
                            .ok()
                            .unwrap()
                    })
                })
                .collect();
            check(target, &good);
            // One component at an edge, at each vector and component.
            for n in 0..len {
                for k in 0..D {
                    for &value in &edges::<I>(dims[k]) {
                        let mut vectors = good.clone();
                        vectors[n][k] = value;
                        check(target, &vectors);
                    }
                }
            }
        }
    }
}

#[test]
fn the_index_check_block_test_at_each_target() {
    any_bad_at_every_length_and_spot::<i32>();
    any_bad_at_every_length_and_spot::<i64>();
    any_bad_at_every_length_and_spot::<u64>();
    any_bad_at_every_length_and_spot::<i16>();
}

#[test]
fn the_gather_nd_flatten_at_each_target() {
    flatten_at_every_length::<1, i32>([1000]);
    flatten_at_every_length::<2, i32>([1000, 300]);
    flatten_at_every_length::<2, i64>([1000, 300]);
    flatten_at_every_length::<3, i64>([50, 60, 70]);
    flatten_at_every_length::<2, u32>([1000, 300]);
}
