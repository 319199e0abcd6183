//! Hostile inputs, class by class: each gives the right error kind and message, and nothing
//! panics, aborts or allocates without bound. And the ops from many threads at once.

use ndarray::{ArrayD, IxDyn};
use ndgather::shape::{gather_nd_shape, gather_shape, Axis, Shape};
use ndgather::{BadIndices, Error, GatherNdOptions, GatherOptions, Tensor};
use std::panic::catch_unwind;

fn z(shape: &[usize]) -> ArrayD<f32> {
    ArrayD::zeros(IxDyn(shape))
}

fn ix<I: Clone>(shape: &[usize], v: Vec<I>) -> ArrayD<I> {
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

#[test]
fn extreme_axis_and_batch_dims() {
    let extremes = [
        i64::MIN,
        i64::MIN + 1,
        -1 << 40,
        -3,
        3,
        1 << 40,
        i64::MAX - 1,
        i64::MAX,
    ];
    for &axis in &extremes {
        for &bd in &extremes {
            let r = catch_unwind(|| {
                GatherOptions::new()
                    .axis(axis)
                    .batch_dims(bd)
                    .gather(&z(&[2, 2]), &ix(&[2], vec![0i64, 1]))
            });
            assert!(
                matches!(r, Ok(Err(_))),
                "axis {axis} batch_dims {bd}: {r:?}"
            );
            let r = catch_unwind(|| {
                GatherOptions::new()
                    .batch_dims(bd)
                    .gather(&z(&[2, 2]), &ix(&[2], vec![0i64, 1]))
            });
            assert!(
                matches!(r, Ok(Err(_))),
                "default axis, batch_dims {bd}: {r:?}"
            );
            let r = catch_unwind(|| {
                GatherNdOptions::new()
                    .batch_dims(bd)
                    .gather_nd(&z(&[2, 2]), &ix(&[2, 1], vec![0i64, 1]))
            });
            assert!(matches!(r, Ok(Err(_))), "gather_nd batch_dims {bd}: {r:?}");
        }
    }
    let e = GatherOptions::new()
        .axis(i64::MIN)
        .gather(&z(&[2]), &ix(&[1], vec![0]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "axis must be greater than std::numeric_limits<int64_t>::min()"
    );
}

#[test]
fn index_values_at_the_limits_of_each_type() {
    let p = z(&[3]);
    macro_rules! limits {
        ($($t:ty),*) => {$(
            for v in [<$t>::MIN, <$t>::MAX] {
                let i = ix(&[1], vec![v]);
                for policy in BadIndices::ALL.iter().copied() {
                    let r = catch_unwind(|| GatherOptions::new().bad_indices(policy).gather(&p, &i));
                    let r2 = catch_unwind(|| GatherNdOptions::new().bad_indices(policy).gather_nd(&p, &ix(&[1, 1], vec![v])));
                    assert!(r.is_ok() && r2.is_ok(), "{} {v} {policy:?}", stringify!($t));
                    if v as i128 != 0 && policy == BadIndices::Error {
                        let msg = r.unwrap().unwrap_err().to_string();
                        assert_eq!(msg, format!("indices[0] = {v} is not in [0, 3)"));
                    }
                }
            }
        )*};
    }
    limits!(i16, i32, i64, u8, u16, u32, u64, usize);
}

#[test]
fn shapes_whose_size_overflows() {
    let huge = [usize::MAX / 2, 3];
    let r = gather_shape(
        &Shape::known(&huge),
        &Shape::known(&[4]),
        Axis::Given(1),
        0,
        None,
    );
    assert!(matches!(r, Err(Error::ShapeOverflow { .. })), "{r:?}");
    let r = gather_shape(
        &Shape::known(&[1 << 40, 1 << 30]),
        &Shape::known(&[1 << 40]),
        Axis::Given(0),
        0,
        None,
    );
    assert!(matches!(r, Err(Error::ShapeOverflow { .. })), "{r:?}");
    let r = gather_nd_shape(
        &Shape::known(&[2, 1 << 62]),
        &Shape::known(&[1 << 62, 1]),
        0,
        None,
    );
    assert!(matches!(r, Err(Error::ShapeOverflow { .. })), "{r:?}");
    // A zero dimension does not excuse the others (ndarray's rule).
    let r = gather_shape(
        &Shape::known(&[0, usize::MAX]),
        &Shape::known(&[2]),
        Axis::Given(0),
        0,
        None,
    );
    assert!(r.is_err());
    assert!(Tensor::from_shape_vec(&[0, usize::MAX, 2], Vec::<f32>::new()).is_err());
}

#[test]
fn outputs_larger_than_memory_fail_before_allocating() {
    // A 1-element params gathered by a broadcast view of 2^40 indices: 4 TiB of output.
    let p = z(&[1]);
    let one = ndarray::arr1(&[0i32]);
    let idx = one.broadcast(IxDyn(&[1 << 20, 1 << 20])).unwrap();
    let r = catch_unwind(|| GatherOptions::new().gather(&p, &idx));
    match r {
        Ok(Err(Error::OutOfMemory { bytes })) => assert_eq!(bytes, 4 << 40),
        Ok(Err(e)) => panic!("unexpected error {e}"),
        Ok(Ok(_)) => panic!("allocated 4 TiB?"),
        Err(_) => panic!("panicked"),
    }
}

#[test]
fn zero_size_dimensions_in_every_position() {
    for pshape in [[0, 3, 4], [2, 0, 4], [2, 3, 0]] {
        for ishape in [[0, 2], [2, 0]] {
            for axis in -3i64..3 {
                for bd in 0..2i64 {
                    let i = ArrayD::<i64>::zeros(IxDyn(&ishape));
                    let r = catch_unwind(|| {
                        GatherOptions::new()
                            .axis(axis)
                            .batch_dims(bd)
                            .gather(&z(&pshape), &i)
                    });
                    assert!(r.is_ok(), "{pshape:?} {ishape:?} {axis} {bd}");
                    let r = catch_unwind(|| {
                        GatherNdOptions::new()
                            .batch_dims(bd)
                            .gather_nd(&z(&pshape), &i)
                    });
                    assert!(r.is_ok(), "{pshape:?} {ishape:?} {bd}");
                }
            }
        }
    }
    // With data: the empty-params rule of gather_nd, and gather's look-at-nothing rule.
    let e = GatherNdOptions::new()
        .gather_nd(&z(&[2, 0]), &ix(&[1, 1], vec![0i32]))
        .unwrap_err();
    assert!(matches!(e, Error::EmptyParams { .. }));
    assert_eq!(
        GatherOptions::new()
            .gather(&z(&[2, 0]), &ix(&[1], vec![99i32]))
            .unwrap()
            .shape(),
        &[1, 0]
    );
}

#[test]
fn concurrent_calls_on_shared_inputs() {
    let params = ArrayD::from_shape_fn(IxDyn(&[1000, 16]), |i| (i[0] * 16 + i[1]) as f64);
    let indices = ArrayD::from_shape_fn(IxDyn(&[50_000]), |i| ((i[0] * 7919) % 1000) as i64);
    let rows = ArrayD::from_shape_fn(IxDyn(&[20_000, 2]), |i| {
        if i[1] == 0 {
            ((i[0] * 31) % 1000) as i64
        } else {
            (i[0] % 16) as i64
        }
    });
    let expected = ndgather::gather(&params, &indices).unwrap();
    let expected_nd = ndgather::gather_nd(&params, &rows).unwrap();
    let bad = ix(&[2], vec![0i64, 1000]);
    std::thread::scope(|s| {
        for t in 0..8 {
            let (params, indices, rows, expected, expected_nd, bad) =
                (&params, &indices, &rows, &expected, &expected_nd, &bad);
            s.spawn(move || {
                for k in 0..20 {
                    match (t + k) % 3 {
                        0 => assert_eq!(&ndgather::gather(params, indices).unwrap(), expected),
                        1 => assert_eq!(&ndgather::gather_nd(params, rows).unwrap(), expected_nd),
                        _ => assert_eq!(
                            ndgather::gather(params, bad).unwrap_err().to_string(),
                            "indices[1] = 1000 is not in [0, 1000)"
                        ),
                    }
                }
            });
        }
    });
}

#[test]
fn huge_tensors_are_refused_not_aborted() {
    // 8 TiB: a valid size that the allocator refuses.
    let r = catch_unwind(|| Tensor::zeros(ndgather::DType::F64, &[1 << 40, 1 << 10]));
    assert!(matches!(r, Ok(Err(Error::OutOfMemory { .. }))), "{r:?}");
    // 2^63 bytes: past what an allocation can address at all.
    let r = catch_unwind(|| Tensor::zeros(ndgather::DType::F64, &[1 << 40, 1 << 20]));
    assert!(matches!(r, Ok(Err(Error::ShapeOverflow { .. }))), "{r:?}");
}
