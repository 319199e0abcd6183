//! Unit tests of the kernels (they need the kernels' private thresholds): the fast paths at their boundaries: slice sizes around each specialisation, outputs on both
//! sides of the parallel threshold and of the huge-page size, chunks that split a run of
//! indices, bad indices far apart in long index arrays, and thread counts from 1 to many.

#[allow(unreachable_pub, dead_code)]
#[path = "../../../tests/common/reference.rs"]
mod reference;

use super::{
    check_in_parallel, CHUNK_BYTES, FLAT_BLOCK, PARALLEL_MIN_BYTES, PARALLEL_MIN_INDICES,
    PARALLEL_MIN_NARROW_INDICES,
};
use ndarray::{ArrayD, ArrayViewMutD, Dimension, IxDyn, ShapeBuilder, Slice};
use ndgather::{BadIndices, Error, GatherNdOptions, GatherOptions};

pub(super) fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn params(shape: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_fn(IxDyn(shape), |ix| {
        ix.slice().iter().fold(0.0, |a, &d| a * 31.0 + d as f32)
    })
}

fn indices(shape: &[usize], high: usize, seed: u64) -> ArrayD<i64> {
    let mut s = seed;
    ArrayD::from_shape_fn(IxDyn(shape), |_| (lcg(&mut s) % high as u64) as i64)
}

fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// gather against the reference, on 1, 2 and 3 threads, fresh and into a caller's buffer.
fn check_gather(pshape: &[usize], ishape: &[usize], axis: usize, bd: usize) {
    let p = params(pshape);
    let i = indices(
        ishape,
        pshape[axis],
        (pshape.len() * 7 + ishape.iter().sum::<usize>()) as u64,
    );
    let expected = reference::gather(&p, &i, axis, bd, BadIndices::Error).unwrap();
    let o = GatherOptions::new().axis(axis as i64).batch_dims(bd as i64);
    for threads in [1, 2, 3] {
        let got = in_pool(threads, || o.gather(&p, &i).unwrap());
        assert_eq!(
            got, expected,
            "{pshape:?} {ishape:?} axis {axis} on {threads} threads"
        );
        let mut out = ArrayD::<f32>::zeros(IxDyn(expected.shape()));
        in_pool(threads, || o.gather_into(&p, &i, out.view_mut()).unwrap());
        assert_eq!(out, expected);
    }
}

/// Slice widths of the scalar loop, each fixed-width one (2, 3, 4, 8, 16, 32) and the general
/// one around them.
const SLICE_WIDTHS: [usize; 12] = [1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64];

#[test]
fn slice_sizes_around_the_specialisations() {
    for inner in SLICE_WIDTHS {
        check_gather(&[50, inner], &[300], 0, 0);
    }
}

/// gather_nd's copy at offsets, at every slice width, fresh and into a caller's buffer, on 1
/// to 3 threads; numbers and strings (cloned, with destructors: a fresh output's fixed-width
/// slices are written as whole arrays).
#[test]
fn gather_nd_slice_sizes_around_the_specialisations() {
    fn check<T: Clone + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static>(
        p: &ArrayD<T>,
        i: &ArrayD<i64>,
    ) {
        let expected = reference::gather_nd(p, i, 0, BadIndices::Error).unwrap();
        let o = GatherNdOptions::new();
        for threads in [1, 2, 3] {
            let got = in_pool(threads, || o.gather_nd(p, i).unwrap());
            assert_eq!(got, expected, "{:?} on {threads} threads", p.shape());
            let mut out = ArrayD::<T>::default(IxDyn(expected.shape()));
            in_pool(threads, || o.gather_nd_into(p, i, out.view_mut()).unwrap());
            assert_eq!(out, expected, "{:?} into, {threads} threads", p.shape());
        }
    }
    for inner in SLICE_WIDTHS {
        // Enough vectors for several blocks of offsets and the parallel path.
        let rows = 2 * FLAT_BLOCK + 5;
        let i = indices(&[rows, 2], 20, inner as u64);
        let p = params(&[20, 20, inner]);
        check(&p, &i);
        let strings = p.mapv(|x| format!("string {x}"));
        check(&strings, &indices(&[500, 2], 20, inner as u64));
    }
}

#[test]
fn outputs_across_the_parallel_threshold() {
    let elems = PARALLEL_MIN_BYTES / 4;
    for n in [
        elems / 8 - 1,
        elems / 8,
        elems / 8 + 1,
        elems / 2,
        3 * elems,
    ] {
        check_gather(&[1000, 8], &[n / 8 + 1], 0, 0);
    }
    // Scalar gathers (inner 1) long enough to be split into many chunks.
    check_gather(&[100_000], &[3 * CHUNK_BYTES + 5], 0, 0);
}

#[test]
fn chunks_that_split_runs_of_indices() {
    // cols: many outer rows with a short run of indices each.
    check_gather(&[3000, 70], &[37], 1, 0);
    // batch_topk: batch dims with slice size 1.
    check_gather(&[300, 257], &[300, 33], 1, 1);
    // Batch, outer and inner all above 1.
    check_gather(&[7, 9, 41, 3], &[7, 501], 2, 1);
    // Few reads per params row (one per two cache lines or fewer), copied without the
    // prefetch: scalars and 16-byte slices, runs of 7 and 5 that chunks split.
    check_gather(&[4000, 1024], &[4000, 7], 1, 1);
    check_gather(&[2000, 256, 4], &[2000, 5], 1, 1);
}

/// The copy asks for slices ahead of it across the end of each run of indices into the next
/// run's params row: runs shorter than, equal to and longer than that distance (128 small
/// slices, 32 of 256 bytes), bad indices among them under the policies that copy past them,
/// many runs per chunk, on 1 and 2 threads; and the same indices sorted, which the copy
/// reads without prefetching (as it reads runs of 3 slices of 4 and 16 bytes: one read for
/// every two lines of the row or fewer).
#[test]
fn runs_around_the_prefetch_distance() {
    for inner in [1, 4, 64] {
        for n in [3, 31, 32, 33, 127, 128, 129, 300] {
            let p = params(&[50, 200, inner]);
            let mut s = (inner * 1000 + n) as u64;
            let mut i = ArrayD::from_shape_fn(IxDyn(&[n]), |_| (lcg(&mut s) % 240) as i64 - 20);
            for sorted in [false, true] {
                if sorted {
                    i.as_slice_mut().unwrap().sort_unstable();
                }
                for policy in [
                    BadIndices::Ignore,
                    BadIndices::Clamp,
                    BadIndices::Negative,
                    BadIndices::Wrap,
                ] {
                    let expected = reference::gather(&p, &i, 1, 0, policy);
                    let o = GatherOptions::new().axis(1).bad_indices(policy);
                    let case = format!("inner {inner}, n {n}, sorted {sorted}, {policy:?}");
                    for threads in [1, 2] {
                        let got = in_pool(threads, || o.gather(&p, &i));
                        match (&got, &expected) {
                            (Ok(g), Ok(e)) => assert_eq!(g, e, "{case}"),
                            _ => assert!(got.is_err() && expected.is_err(), "{case}: {got:?}"),
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn huge_page_outputs() {
    // 8 MiB of output: advised for huge pages; values must be unaffected.
    check_gather(&[4096, 256], &[8192], 0, 0);
}

#[test]
fn unaligned_and_strided_views() {
    let big = params(&[400, 130]);
    let view = big.slice_each_axis(|ax| {
        if ax.axis.index() == 1 {
            Slice::new(1, Some(-1), 1)
        } else {
            Slice::from(..)
        }
    });
    let owned = view.to_owned();
    let i = indices(&[20_000], 400, 3);
    let expected = reference::gather(&owned, &i, 0, 0, BadIndices::Error).unwrap();
    assert_eq!(GatherOptions::new().gather(&view, &i).unwrap(), expected);
    // Into a column-major and into a strided output.
    let mut f = ArrayD::<f32>::zeros(IxDyn(expected.shape()).f());
    GatherOptions::new()
        .gather_into(&view, &i, f.view_mut())
        .unwrap();
    assert_eq!(f, expected);
    let mut wide = ArrayD::<f32>::zeros(IxDyn(&[20_000, 256]));
    let mut strided = wide.slice_each_axis_mut(|ax| {
        if ax.axis.index() == 1 {
            Slice::new(0, None, 2)
        } else {
            Slice::from(..)
        }
    });
    GatherOptions::new()
        .gather_into(&view, &i, strided.view_mut())
        .unwrap();
    assert_eq!(strided, expected);
}

#[test]
fn first_bad_index_whatever_the_threads() {
    let p = params(&[1000]);
    let mut i = indices(&[1 << 20], 1000, 9);
    i[[700_000]] = 5000;
    i[[900_000]] = -1;
    i[[123_456]] = 1000;
    for threads in [1, 2, 4] {
        let err = in_pool(threads, || ndgather::gather(&p, &i).unwrap_err());
        assert_eq!(
            err,
            Error::BadIndex {
                position: vec![123_456],
                value: 1000,
                limit: 1000
            }
        );
    }
    // gather_nd: the first bad row, with rows split across check blocks, at the depths
    // with a test of their own (1 to 3) and the general one.
    for depth in 1..=5 {
        let p2 = params(&vec![7; depth]);
        let mut rows = indices(&[200_000, depth], 7, 4);
        rows[[150_001, depth - 1]] = 7;
        rows[[199_999, 0]] = -3;
        for threads in [1, 2, 4] {
            let err = in_pool(threads, || ndgather::gather_nd(&p2, &rows).unwrap_err());
            assert!(
                matches!(&err, Error::BadIndexVector { position, .. } if position == &vec![150_001]),
                "depth {depth}: {err:?}"
            );
        }
    }
}

#[test]
fn index_checks_on_both_sides_of_the_parallel_thresholds() {
    // The rule at its bounds: vectors of 4 bytes or fewer go parallel later.
    const { assert!(PARALLEL_MIN_INDICES < PARALLEL_MIN_NARROW_INDICES) };
    for bytes in [1, 2, 4] {
        assert!(!check_in_parallel(PARALLEL_MIN_NARROW_INDICES - 1, bytes));
        assert!(check_in_parallel(PARALLEL_MIN_NARROW_INDICES, bytes));
    }
    for bytes in [8, 12, 16] {
        assert!(!check_in_parallel(PARALLEL_MIN_INDICES - 1, bytes));
        assert!(check_in_parallel(PARALLEL_MIN_INDICES, bytes));
    }
    // Into a caller's buffer (checked before the copy, which then does not run), the first
    // bad index is named on either side, with other bad ones after it in later blocks.
    let p = params(&[1000, 2]);
    for n in [
        PARALLEL_MIN_INDICES - 1,
        PARALLEL_MIN_INDICES,
        PARALLEL_MIN_NARROW_INDICES - 1,
        PARALLEL_MIN_NARROW_INDICES,
    ] {
        let mut wide = indices(&[n], 1000, 5);
        let mut narrow = wide.mapv(|i| i as i32);
        let first = n - 40_000;
        for (at, value) in [(first, 1000), (n - 3, -1001), (n - 1, 5000)] {
            narrow[[at]] = value as i32;
            wide[[at]] = value;
        }
        let expected = Error::BadIndex {
            position: vec![first],
            value: 1000,
            limit: 1000,
        };
        for threads in [1, 2, 4] {
            let mut out = ArrayD::from_elem(IxDyn(&[n, 2]), 7.0f32);
            let narrow_err = in_pool(threads, || {
                GatherOptions::new().gather_into(&p, &narrow, out.view_mut())
            });
            let wide_err = in_pool(threads, || {
                GatherOptions::new().gather_into(&p, &wide, out.view_mut())
            });
            assert_eq!(
                narrow_err.unwrap_err(),
                expected,
                "{n} i32, {threads} threads"
            );
            assert_eq!(
                wide_err.unwrap_err(),
                expected,
                "{n} i64, {threads} threads"
            );
            assert!(out.iter().all(|&v| v == 7.0), "{n}: the buffer was written");
        }
    }
}

#[test]
fn gather_nd_fast_paths_across_thresholds() {
    for (pshape, ishape, bd) in [
        (vec![300, 300], vec![200_000, 2], 0),
        (vec![100, 100, 7], vec![50_000, 2], 0),
        (vec![8, 100, 64], vec![8, 3000, 1], 1),
        (vec![60, 50], vec![60, 2000, 1], 1),
        // Batch elements of 3 vectors: many in each block of offsets, one cut by its edge.
        (vec![5000, 7], vec![5000, 3, 1], 1),
    ] {
        let p = params(&pshape);
        let depth = ishape[ishape.len() - 1];
        let mut s = 11u64;
        let i = ArrayD::from_shape_fn(IxDyn(&ishape), |ix| {
            let c = ix[ix.ndim() - 1];
            let _ = depth;
            (lcg(&mut s) % pshape[bd + c] as u64) as i64
        });
        let expected = reference::gather_nd(&p, &i, bd, BadIndices::Error).unwrap();
        let o = GatherNdOptions::new().batch_dims(bd as i64);
        for threads in [1, 2, 3] {
            assert_eq!(
                in_pool(threads, || o.gather_nd(&p, &i).unwrap()),
                expected,
                "{pshape:?} {ishape:?}"
            );
        }
        let mut out = ArrayD::<f32>::zeros(IxDyn(expected.shape()));
        o.gather_nd_into(&p, &i, out.view_mut()).unwrap();
        assert_eq!(out, expected);
    }
}

#[test]
fn policies_on_the_fast_paths() {
    let p = params(&[1000, 3]);
    let mut i = indices(&[300_000], 1000, 21);
    i[[5]] = -1;
    i[[299_999]] = 1000;
    for policy in [
        BadIndices::Ignore,
        BadIndices::Clamp,
        BadIndices::Negative,
        BadIndices::Wrap,
    ] {
        let o = GatherOptions::new().bad_indices(policy);
        let expected = reference::gather(&p, &i, 0, 0, policy);
        let got = in_pool(2, || o.gather(&p, &i));
        match (got, expected) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{policy:?}"),
            (Err(a), Err(_)) => assert!(matches!(a, Error::BadIndex { .. })),
            (a, b) => panic!("{policy:?}: {a:?} vs {b:?}"),
        }
    }
}

/// gather_nd flattens index vectors to offsets block by block: bad vectors in several blocks
/// (the first and last row of a block among them), batch elements whose rows do not divide a
/// block, scalar and wider slices, under every policy, on 1 and 2 threads.
#[test]
fn policies_on_the_flattened_gather_nd_path() {
    let rows = 2 * FLAT_BLOCK + 77;
    for ((pshape, bd), sorted) in [
        (vec![40, 30], 0),
        (vec![40, 30, 3], 0),
        (vec![40, 30, 32], 0),
        (vec![3, 40, 30], 1),
    ]
    .into_iter()
    .flat_map(|case| [(case.clone(), false), (case, true)])
    {
        let p = params(&pshape);
        let ishape: Vec<usize> = if bd == 0 {
            vec![rows, 2]
        } else {
            vec![3, rows, 2]
        };
        let mut s = 5u64;
        let mut i = ArrayD::from_shape_fn(IxDyn(&ishape), |ix| {
            (lcg(&mut s) % pshape[bd + ix[ix.ndim() - 1]] as u64) as i64
        });
        if sorted {
            // Vectors in row-major order, read without prefetching.
            let mut vectors: Vec<[i64; 2]> = i
                .as_slice()
                .unwrap()
                .chunks_exact(2)
                .map(|v| [v[0], v[1]])
                .collect();
            vectors.sort_unstable();
            i = ArrayD::from_shape_vec(IxDyn(&ishape), vectors.concat()).unwrap();
        }
        // (row, component, value): out of range below and above, in either component.
        let flat = i.as_slice_mut().unwrap();
        for (row, component, bad) in [
            (0, 0, -1),
            (FLAT_BLOCK - 1, 0, 40),
            (FLAT_BLOCK, 1, 30),
            (rows - 1, 1, -31),
        ] {
            flat[2 * row + component] = bad;
        }
        for policy in BadIndices::ALL.iter().copied() {
            let o = GatherNdOptions::new()
                .batch_dims(bd as i64)
                .bad_indices(policy);
            let expected = reference::gather_nd(&p, &i, bd, policy);
            for threads in [1, 2] {
                match (in_pool(threads, || o.gather_nd(&p, &i)), &expected) {
                    // Bit patterns: the fill value is NaN.
                    (Ok(a), Ok(b)) => assert_eq!(
                        a.mapv(f32::to_bits),
                        b.mapv(f32::to_bits),
                        "{pshape:?} sorted {sorted} {policy:?}"
                    ),
                    (Err(a), Err(reference::RefError::BadIndexVector(at, values))) => assert!(
                        matches!(&a, Error::BadIndexVector { position, values: v, .. }
                            if position == at && v.iter().map(|&x| x as i64).eq(values.iter().copied())),
                        "{a:?}"
                    ),
                    (a, b) => panic!("{pshape:?} {policy:?}: {a:?} vs {b:?}"),
                }
            }
        }
    }
}

#[test]
fn strings_in_parallel_into_reused_buffers() {
    let p = ArrayD::from_shape_fn(IxDyn(&[5000]), |ix| format!("s{}", ix[0]));
    let i = indices(&[100_000], 5000, 2);
    let expected = reference::gather(&p, &i, 0, 0, BadIndices::Error).unwrap();
    assert_eq!(in_pool(2, || ndgather::gather(&p, &i).unwrap()), expected);
    let mut out = ArrayD::from_elem(IxDyn(&[100_000]), "old value that is dropped".to_string());
    in_pool(2, || {
        GatherOptions::new()
            .gather_into(&p, &i, out.view_mut())
            .unwrap()
    });
    assert_eq!(out, expected);
}

/// A fresh output finds bad indices in the copy itself (no check pass before it), so every
/// copy path must report one: a single bad index, at the first and last item and at a chunk
/// edge, in the scalar, fixed-width and any-width loops, across batch runs, in gather_nd's
/// depths 1-4, and in params read in place, on 1 and 2 threads, gives the error that the
/// checked `into` call gives.
#[test]
fn a_single_bad_index_anywhere_fails_a_fresh_output() {
    type Calls<R> = (Result<R, Error>, Result<(), Error>);
    fn each_bad_position<R: std::fmt::Debug + Send>(
        indices: &ArrayD<i64>,
        positions: &[usize],
        bad: i64,
        call: impl Fn(&ArrayD<i64>) -> Calls<R> + Sync,
    ) {
        for &at in positions {
            let mut i = indices.clone();
            i.as_slice_mut().unwrap()[at] = bad;
            for threads in [1, 2] {
                let (fresh, into) = in_pool(threads, || call(&i));
                let (fresh, into) = (fresh.unwrap_err(), into.unwrap_err());
                assert_eq!(fresh, into, "bad index at flat {at}, {threads} threads");
            }
        }
    }
    let chunk_edge = |item_bytes: usize| CHUNK_BYTES / item_bytes;
    // gather: inner widths of the scalar loop, the fixed ones and the general one, with
    // random indices and with sorted ones (read without prefetching).
    for (inner, sorted) in [
        (1, false),
        (3, false),
        (16, false),
        (5, false),
        (1, true),
        (16, true),
    ] {
        // A table above the (test build's) cached-table limit, so that random indices take
        // the prefetching loop.
        let p = params(&[2000, inner]);
        let n = PARALLEL_MIN_BYTES / (inner * 4) + 1000;
        let mut i = indices(&[n], 2000, inner as u64);
        if sorted {
            i.as_slice_mut().unwrap().sort_unstable();
        }
        let edge = chunk_edge(inner * 4 + 8);
        each_bad_position(&i, &[0, edge - 1, edge, n - 1], 2000, |i| {
            let mut out = ArrayD::<f32>::zeros(IxDyn(&[i.len(), inner]));
            (
                ndgather::gather(&p, i),
                GatherOptions::new().gather_into(&p, i, out.view_mut()),
            )
        });
    }
    // batch_dims 1: a run of indices per batch row.
    let p = params(&[64, 500]);
    let i = indices(&[64, 2000], 500, 8);
    let o = GatherOptions::new().axis(1).batch_dims(1);
    each_bad_position(&i, &[1999, 2000, 64 * 2000 - 1], -501, |i| {
        let mut out = ArrayD::<f32>::zeros(IxDyn(&[64, 2000]));
        (o.gather(&p, i), o.gather_into(&p, i, out.view_mut()))
    });
    // gather_nd at every depth with a loop of its own and the general one.
    for depth in 1..=4 {
        let p = params(&vec![9; depth]);
        let rows = PARALLEL_MIN_BYTES / 4 + 100;
        let i = indices(&[rows, depth], 9, depth as u64);
        let last = rows * depth - 1;
        each_bad_position(&i, &[0, depth * FLAT_BLOCK, last], 9, |i| {
            let mut out = ArrayD::<f32>::zeros(IxDyn(&[rows]));
            let o = GatherNdOptions::new();
            (o.gather_nd(&p, i), o.gather_nd_into(&p, i, out.view_mut()))
        });
    }
    // Params read in place (a transposed view much larger than the output).
    let big = params(&[300, 2000]);
    let t = big.t();
    let i = indices(&[100], 2000, 2);
    each_bad_position(&i, &[0, 99], 2000, |i| {
        let mut out = ArrayD::<f32>::zeros(IxDyn(&[100, 300]));
        (
            ndgather::gather(&t, i),
            GatherOptions::new().gather_into(&t, i, out.view_mut()),
        )
    });
    let nd = indices(&[100, 2], 300, 3);
    each_bad_position(&nd, &[1, 198], -301, |i| {
        let mut out = ArrayD::<f32>::zeros(IxDyn(&[100]));
        let o = GatherNdOptions::new();
        (o.gather_nd(&t, i), o.gather_nd_into(&t, i, out.view_mut()))
    });
}

/// Records of zero width make an empty output, so a fresh output's copy meets no index:
/// its check still runs, and a bad index is the error that the checked `into` call gives
/// (NumPy's take_along_axis refuses it too, for a dtype of itemsize 0).
#[test]
fn a_bad_index_is_an_error_with_records_of_zero_width() {
    use crate::ops::{Op, Out, Params};
    use ndgather::{TakeAlongAxisOptions, Tensor};
    let p = ArrayD::<u8>::zeros(IxDyn(&[3, 0]));
    let i = ndarray::arr1(&[1i64, 5]).into_dyn();
    let mut out = ArrayD::<u8>::zeros(IxDyn(&[2, 0]));
    let (pt, it, ndt) = (
        Tensor::from(p),
        Tensor::from(i),
        Tensor::from(ndarray::arr2(&[[1i64], [5]]).into_dyn()),
    );
    for (op, idx) in [
        (Op::Gather(GatherOptions::new()), &it),
        (Op::GatherNd(GatherNdOptions::new()), &ndt),
        (Op::TakeAlongAxis(TakeAlongAxisOptions::new(0)), &it),
    ] {
        let into = op.run(
            Params::records(pt.view()),
            &idx.view(),
            Out::Into(out.view_mut().into()),
        );
        let fresh = op.run(Params::records(pt.view()), &idx.view(), Out::New);
        assert_eq!(fresh.unwrap_err(), into.unwrap_err());
    }
}

/// Outputs large enough for streaming stores (`STREAM_MIN_OUTPUT_BYTES`, lowered in the unit
/// tests) from tables that stay in the cache: gather, batched gather and batched gather_nd
/// (the suite's `nd_batch`), slices of 64 to 400 bytes (multiples of 16 bytes and not), into
/// a caller's buffer (streamed) and fresh (new memory: not streamed), on 1 to 3 threads; into
/// a buffer that starts 4 bytes past a 16-byte boundary; into a recycled buffer; and bad
/// indices under every policy.
#[test]
fn streamed_outputs() {
    use crate::engine::simd::stream::STREAM_MIN_OUTPUT_BYTES;
    for inner in [16, 17, 33, 64, 100] {
        let n = STREAM_MIN_OUTPUT_BYTES / (4 * inner) + 3;
        assert!(8 * inner * 4 <= 4 << 10, "the table stays in the cache");
        check_gather(&[8, inner], &[n], 0, 0);
        check_gather(&[3, 8, inner], &[3, n / 3 + 1], 1, 1);
        let p = params(&[3, 8, inner]);
        let mut s = inner as u64;
        let i = ArrayD::from_shape_fn(IxDyn(&[3, n / 3 + 1, 1]), |_| (lcg(&mut s) % 8) as i64);
        let expected = reference::gather_nd(&p, &i, 1, BadIndices::Error).unwrap();
        let o = GatherNdOptions::new().batch_dims(1);
        for threads in [1, 2, 3] {
            let got = in_pool(threads, || o.gather_nd(&p, &i).unwrap());
            assert_eq!(got, expected, "inner {inner}, {threads} threads");
            // Into a caller's buffer whose first element is not 16-byte aligned.
            let mut buf = vec![-1.0f32; expected.len() + 4];
            let skew = (20 - buf.as_ptr() as usize % 16) % 16 / 4;
            let len = expected.len();
            let mut out =
                ArrayViewMutD::from_shape(expected.shape(), &mut buf[skew..skew + len]).unwrap();
            assert_eq!(out.as_ptr() as usize % 16, 4, "the buffer is skewed");
            in_pool(threads, || {
                o.gather_nd_into(&p, &i, out.view_mut()).unwrap()
            });
            assert_eq!(out, expected, "inner {inner} into, {threads} threads");
        }
    }
    // A fresh output in a recycled buffer is written streamed (its memory is not new).
    let alone = crate::mem::recycle::pool_test_lock();
    let p = params(&[8, 64]);
    let i = indices(&[(4 << 20) / 256 + 1], 8, 6);
    let expected = reference::gather(&p, &i, 0, 0, BadIndices::Error).unwrap();
    let mut first = ndgather::gather(&p, &i).unwrap();
    assert_eq!(first, expected);
    let address = first.as_ptr();
    first.fill(-7.0);
    ndgather::memory::recycle(first);
    let again = ndgather::gather(&p, &i).unwrap();
    assert_eq!(again.as_ptr(), address, "the recycled buffer");
    assert_eq!(again, expected);
    drop(alone);
    let mut i = indices(&[STREAM_MIN_OUTPUT_BYTES / 256 + 9], 8, 5);
    i[[3]] = -1;
    i[[STREAM_MIN_OUTPUT_BYTES / 256]] = 8;
    for policy in BadIndices::ALL.iter().copied() {
        let o = GatherOptions::new().bad_indices(policy);
        let expected = reference::gather(&p, &i, 0, 0, policy);
        for threads in [1, 2] {
            let got = in_pool(threads, || o.gather(&p, &i));
            // Bit for bit: the fill value is NaN.
            let bits = |a: &ArrayD<f32>| a.mapv(f32::to_bits);
            assert_eq!(
                got.as_ref().ok().map(bits),
                expected.as_ref().ok().map(bits),
                "{policy:?}, {threads} threads"
            );
            assert_eq!(got.is_err(), expected.is_err(), "{policy:?}");
            // Into a caller's buffer: the streamed path.
            let mut out = ArrayD::<f32>::zeros(IxDyn(&[i.len(), 64]));
            let into = in_pool(threads, || o.gather_into(&p, &i, out.view_mut()));
            assert_eq!(into.is_err(), expected.is_err(), "{policy:?} into");
            if let Ok(expected) = &expected {
                assert_eq!(
                    bits(&out),
                    bits(expected),
                    "{policy:?} into, {threads} threads"
                );
            }
        }
    }
}

/// One-element gathers read sparsely from rows of a large table go through the gather
/// instruction (`vector_gather`, where the machine has AVX-512; its table threshold is
/// lowered for the unit tests): runs of indices around its blocks of 16, a bad index at each
/// lane of a block and in the tail, negative and too large, under every policy; 4-byte
/// types of every kind (the path's) and an 8-byte one (not), on 1 and 2 threads, fresh and
/// into a caller's buffer (compared as printed, so that the `Fill` policy's NaN equals
/// itself).
#[test]
fn sparse_one_element_gathers_around_the_vector_blocks() {
    fn check<T: Clone + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static>(
        make: impl Fn(f32) -> T,
    ) {
        // Rows of 2,048 elements, at most 64 reads each: sparse (at most one read per two
        // cache lines for 4-byte elements), from a table above the tests' thresholds.
        let (rows, width) = (3, 2048);
        let p = params(&[rows, width]).mapv(&make);
        for run in [1, 15, 16, 17, 31, 32, 33, 48, 64] {
            let clean = indices(&[rows, run], width, run as u64).mapv(|v| v as i32);
            let bad_spots = [None, Some(0), Some(15), Some(16), Some(run - 1)];
            for (spot, value) in bad_spots
                .into_iter()
                .flatten()
                .flat_map(|s| [(Some(s), -1), (Some(s), width as i32), (Some(s), i32::MIN)])
                .chain([(None, 0)])
            {
                let mut i = clean.clone();
                if let Some(s) = spot.filter(|&s| s < run) {
                    i[[rows - 1, s]] = value;
                }
                let wide = i.mapv(i64::from);
                for &policy in BadIndices::ALL {
                    let expected = reference::gather(&p, &wide, 1, 1, policy);
                    let o = GatherOptions::new()
                        .axis(1)
                        .batch_dims(1)
                        .bad_indices(policy);
                    for threads in [1, 2] {
                        let what = format!(
                            "run {run}, {value} at {spot:?}, {policy:?}, {threads} threads"
                        );
                        let got = in_pool(threads, || o.gather(&p, &i));
                        match (&got, &expected) {
                            (Ok(a), Ok(b)) => {
                                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}")
                            }
                            (Err(_), Err(_)) => {}
                            _ => panic!("{what}: {got:?} against {expected:?}"),
                        }
                        if let Ok(b) = &expected {
                            let mut out = ArrayD::<T>::default(b.raw_dim());
                            in_pool(threads, || o.gather_into(&p, &i, out.view_mut()).unwrap());
                            assert_eq!(format!("{out:?}"), format!("{b:?}"), "into: {what}");
                        }
                    }
                }
            }
        }
    }
    check(|v| v);
    check(|v| v as i32);
    check(|v| v as u32);
    check(|v| v as f64);
}
