//! `Op::small_call` against `Op::run`: on random calls (gather and gather_nd, any axis and
//! batch_dims, valid or not; every policy; items of 1 to 16 bytes at any alignment; four
//! index dtypes), a call the small path takes gives `Op::run`'s bytes and shape, or its
//! error.

mod common;

use common::Rng;
use ndgather::ndarray::ArrayViewD;
use ndgather::{
    BadIndices, ContiguousBytes, DType, FillValue, GatherNdOptions, GatherOptions, Op, Out, Params,
    Tensor, TensorView,
};
use std::mem::MaybeUninit;

/// `len` bytes at `offset` bytes into a buffer aligned for 8, filled from `rng`.
fn bytes_at(rng: &mut Rng, offset: usize, len: usize) -> Vec<u64> {
    (0..(offset + len).div_ceil(8) + 1)
        .map(|_| rng.below(usize::MAX) as u64)
        .collect()
}

/// The call's indices: values from -3 to 5 in one of four dtypes, as a tensor and as bytes.
fn random_indices(rng: &mut Rng, shape: &[usize]) -> (Tensor, Vec<u64>, DType) {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n).map(|_| rng.below(9) as i64 - 3).collect();
    let dtype = [DType::I64, DType::I32, DType::I16, DType::U8][rng.below(4)];
    let mut buffer = vec![0u64; n + 1];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer);
    let tensor = match dtype {
        DType::I64 => {
            bytemuck::cast_slice_mut::<u8, i64>(&mut bytes[..n * 8]).copy_from_slice(&values);
            Tensor::from_shape_vec(shape, values).unwrap()
        }
        DType::I32 => {
            let v: Vec<i32> = values.iter().map(|&v| v as i32).collect();
            bytemuck::cast_slice_mut::<u8, i32>(&mut bytes[..n * 4]).copy_from_slice(&v);
            Tensor::from_shape_vec(shape, v).unwrap()
        }
        DType::I16 => {
            let v: Vec<i16> = values.iter().map(|&v| v as i16).collect();
            bytemuck::cast_slice_mut::<u8, i16>(&mut bytes[..n * 2]).copy_from_slice(&v);
            Tensor::from_shape_vec(shape, v).unwrap()
        }
        _ => {
            let v: Vec<u8> = values.iter().map(|&v| v as u8).collect();
            bytes[..n].copy_from_slice(&v);
            Tensor::from_shape_vec(shape, v).unwrap()
        }
    };
    (tensor, buffer, dtype)
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
        let (indices, indices_buffer, index) = random_indices(&mut rng, &indices_shape);
        let index_size = index.size().unwrap();
        let index_bytes =
            &bytemuck::cast_slice::<u64, u8>(&indices_buffer)[..indices.len() * index_size];
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

        let mut records_shape = params_shape.clone();
        records_shape.push(itemsize);
        let view = ArrayViewD::from_shape(records_shape, params).unwrap();
        let general = op.run(
            Params::records(TensorView::from(view)),
            &indices.view(),
            Out::New,
        );
        let general = general.map(|t| {
            let t = t.unwrap().into_array::<u8>().unwrap();
            (
                t.shape()[..t.ndim() - 1].to_vec(),
                t.iter().copied().collect::<Vec<u8>>(),
            )
        });

        let call = op.small_call(
            ContiguousBytes {
                data: params,
                shape: &params_shape,
                itemsize,
            },
            ContiguousBytes {
                data: index_bytes,
                shape: &indices_shape,
                itemsize: index_size,
            },
            index,
        );
        let call = match call {
            Err(e) => {
                assert_eq!(Err(e), general, "seed {seed}");
                errors += 1;
                continue;
            }
            Ok(None) => continue,
            Ok(Some(call)) => call,
        };
        taken += 1;
        let out_len = call.out_shape().iter().product::<usize>() * itemsize;
        let out_offset = rng.below(8);
        // Initialised, so that reading it back is defined; a byte the call failed to write
        // shows as a difference from the general entry's result.
        let pattern = MaybeUninit::new(rng.below(256) as u8);
        let mut out = vec![pattern; out_len + out_offset];
        let out = &mut out[out_offset..];
        let small = call.run(out).map(|()| {
            // SAFETY: every byte was initialised above.
            let bytes = out
                .iter()
                .map(|b| unsafe { b.assume_init() })
                .collect::<Vec<u8>>();
            (call.out_shape().to_vec(), bytes)
        });
        bad_indices += usize::from(small.is_err());
        assert_eq!(small, general, "seed {seed}: {op:?}");
    }
    // The path must take most calls, and the comparison must see errors of both kinds.
    assert!(taken > 1500, "the small path took {taken} calls");
    assert!(errors > 100, "{errors} shape errors");
    assert!(bad_indices > 100, "{bad_indices} index errors");
}

/// An empty output is left to `Op::run`: the small path's loops walked every outer row of
/// params, and params of shape `[2^40, 2, 0, 0]` (no bytes) made that hours long (found by
/// the `small_call` fuzz target; `fuzz/regressions/small_call/`).
#[test]
fn an_empty_output_is_not_taken_whatever_params_outer_rows() {
    let indices: Vec<u8> = [0i32, 1, 0, 1, 0, 1]
        .iter()
        .flat_map(|i| i.to_ne_bytes())
        .collect();
    let op = Op::Gather(GatherOptions::new().axis(1));
    let call = op.small_call(
        ContiguousBytes {
            data: &[],
            shape: &[1 << 40, 2, 0, 0],
            itemsize: 3,
        },
        ContiguousBytes {
            data: &indices,
            shape: &[2, 3],
            itemsize: 4,
        },
        DType::I32,
    );
    assert!(matches!(call, Ok(None)), "{:?}", call.map(|c| c.is_some()));
}
