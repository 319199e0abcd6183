//! The path for small calls against the general one: on random calls (gather and gather_nd,
//! any axis and batch_dims, valid or not; every policy; items of 1 to 16 bytes at any
//! alignment; four index dtypes), the one door, `OpDef::run`, on params as raw contiguous
//! bytes into a new output or a caller's row-major records (which the core takes the small
//! path for where it can) gives the same bytes and shape, or the same error, as into a
//! caller's records laid out apart (which it never takes the path for), on the same bytes.

use crate::common;

use common::general_path::{fresh, into_records, into_row_major, reversed, spaced};
use common::Rng;
use ndgather::memory::RawView;
use ndgather::{BadIndices, DType, FillValue, GatherNdOptions, GatherOptions, Op, Tensor};

/// `len` bytes at `offset` bytes into a buffer aligned for 8, filled from `rng`.
fn bytes_at(rng: &mut Rng, offset: usize, len: usize) -> Vec<u64> {
    (0..(offset + len).div_ceil(8) + 1)
        .map(|_| rng.below(usize::MAX) as u64)
        .collect()
}

/// The call's indices: values from -3 to 5 in one of five dtypes (`uint8` among them, which the
/// small path reads as `int64`, as the other kernels widen it).
fn random_indices(rng: &mut Rng, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n).map(|_| rng.below(9) as i64 - 3).collect();
    match [DType::I64, DType::I32, DType::I16, DType::U64, DType::U8][rng.below(5)] {
        DType::I64 => Tensor::from_shape_vec(shape, values).unwrap(),
        DType::I32 => {
            Tensor::from_shape_vec(shape, values.iter().map(|&v| v as i32).collect()).unwrap()
        }
        DType::I16 => {
            Tensor::from_shape_vec(shape, values.iter().map(|&v| v as i16).collect()).unwrap()
        }
        DType::U64 => {
            Tensor::from_shape_vec(shape, values.iter().map(|&v| v as u64).collect()).unwrap()
        }
        _ => Tensor::from_shape_vec(shape, values.iter().map(|&v| v as u8).collect()).unwrap(),
    }
}

fn random_shape(rng: &mut Rng, min_rank: usize) -> Vec<usize> {
    let rank = min_rank + rng.below(3);
    (0..rank).map(|_| rng.below(5)).collect()
}

#[test]
fn small_calls_equal_the_general_entry() {
    let (mut taken, mut errors, mut bad_indices) = (0, 0, 0);
    for seed in 1..4000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let itemsize = [1, 2, 3, 4, 6, 8, 12, 16][rng.below(8)];
        // Scalar params (an error) one call in ten.
        let min_rank = usize::from(rng.below(10) > 0);
        let params_shape = random_shape(&mut rng, min_rank);
        let numel: usize = params_shape.iter().product();
        let offset = rng.below(8);
        let params_buffer = bytes_at(&mut rng, offset, numel * itemsize);
        let params = &bytemuck::cast_slice::<u64, u8>(&params_buffer)[offset..][..numel * itemsize];
        let nd = rng.below(3) == 0;
        let mut indices_shape = random_shape(&mut rng, usize::from(nd));
        if nd {
            *indices_shape.last_mut().unwrap() = rng.below(params_shape.len() + 1);
        }
        let indices = random_indices(&mut rng, &indices_shape);
        let policy = BadIndices::ALL[rng.below(BadIndices::ALL.len())];
        let fill: Vec<u8> = (0..itemsize).map(|_| rng.below(256) as u8).collect();
        // Mostly valid calls: batch_dims 0, an axis inside params; sometimes anything.
        let batch_dims = if rng.below(4) == 0 {
            rng.below(3) as i64 - 1
        } else {
            0
        };
        let op = if nd {
            Op::GatherNd(
                GatherNdOptions::new()
                    .batch_dims(batch_dims)
                    .bad_indices(policy),
            )
        } else {
            let rank = params_shape.len().max(1) as i64;
            let axis = match rng.below(4) {
                0 => None,
                1 => Some(rng.below(5) as i64 - 2),
                _ => Some(rng.below(rank as usize) as i64),
            };
            let options = GatherOptions::new()
                .batch_dims(batch_dims)
                .bad_indices(policy);
            Op::Gather(match axis {
                Some(a) => options.axis(a),
                None => options,
            })
        }
        .with_fill_value(FillValue::bytes(&fill).unwrap());

        let raw = || RawView::of_bytes(params, &params_shape, itemsize).unwrap();
        let general = into_records(&op, raw(), indices.view()).expect("a small output");
        assert!(
            !matches!(general, Err(ndgather::Error::Internal(_))),
            "seed {seed}: {general:?}"
        );
        let small = fresh(&op, raw(), indices.view());
        // Into a caller's row-major records: the small path too, writing nothing on error.
        let direct = into_row_major(&op, raw(), indices.view()).expect("a small output");
        assert_eq!(
            direct, general,
            "seed {seed}: {op:?} into row-major records"
        );
        // The same elements laid out apart, into a new output: the strided reads.
        let (apart, strides) = spaced(params, &params_shape, itemsize);
        let apart = RawView::within(&apart, 0, &params_shape, &strides, itemsize).unwrap();
        assert_eq!(
            fresh(&op, apart, indices.view()),
            general,
            "seed {seed}: {op:?}"
        );
        // And backwards, with negative strides.
        let (back, offset, strides) = reversed(params, &params_shape, itemsize);
        let back = RawView::within(&back, offset, &params_shape, &strides, itemsize).unwrap();
        assert_eq!(
            fresh(&op, back, indices.view()),
            general,
            "seed {seed}: {op:?} read backwards"
        );
        // Calls with a non-empty output (the small path takes those below the kernels'
        // split size), and errors of both kinds.
        match &small {
            Err(ndgather::Error::BadIndex { .. } | ndgather::Error::BadIndexVector { .. }) => {
                bad_indices += 1
            }
            Err(_) => errors += 1,
            Ok((shape, _)) => taken += usize::from(shape.iter().product::<usize>() > 0),
        }
        assert_eq!(small, general, "seed {seed}: {op:?}");
    }
    // Most calls must be ones the path takes, and the comparison must see errors of both
    // kinds (that it takes them is `small_call.rs`'s own unit test).
    assert!(taken > 1000, "{taken} calls with a non-empty output");
    assert!(errors > 100, "{errors} shape errors");
    assert!(bad_indices > 100, "{bad_indices} index errors");
}
