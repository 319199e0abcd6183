//! The checks and messages the issue and TensorFlow name, one by one.

use ndarray::{arr0, array, Array, ArrayD, Dimension, IxDyn};
use ndgather::{gather, gather_nd, Error, GatherNdOptions, GatherOptions};

fn zeros(shape: &[usize]) -> ArrayD<f32> {
    ArrayD::zeros(IxDyn(shape))
}

fn gather_err(params: &[usize], indices: ArrayD<i64>, o: GatherOptions) -> String {
    o.gather(&zeros(params), &indices).unwrap_err().to_string()
}

fn idx(shape: &[usize], data: Vec<i64>) -> ArrayD<i64> {
    ArrayD::from_shape_vec(IxDyn(shape), data).unwrap()
}

#[test]
fn gather_messages() {
    let o = GatherOptions::new;
    assert_eq!(
        gather_err(&[], idx(&[1], vec![0]), o()),
        "params must be at least 1 dimensional"
    );
    assert_eq!(
        gather_err(&[2, 3], idx(&[1], vec![0]), o().axis(2)),
        "Shape must be at least rank 3 but is rank 2"
    );
    assert_eq!(
        gather_err(&[2, 3], idx(&[1], vec![0]), o().axis(-3)),
        "Shape must be at least rank 3 but is rank 2"
    );
    assert_eq!(
        gather_err(&[2, 3], idx(&[1], vec![0]), o().axis(i64::MAX)),
        "axis must be less than std::numeric_limits<int64_t>::max()"
    );
    assert_eq!(
        gather_err(&[2, 3], idx(&[1], vec![0]), o().axis(i64::MIN)),
        "axis must be greater than std::numeric_limits<int64_t>::min()"
    );
    assert_eq!(
        gather_err(&[2, 3], idx(&[2], vec![0, 0]), o().axis(1).batch_dims(2)),
        "Expected batch_dims in the range [-1, 1], but got 2"
    );
    assert_eq!(
        gather_err(&[2, 3], idx(&[2, 1], vec![0, 0]), o().axis(0).batch_dims(1)),
        "batch_dims (1) must be less than or equal to axis (0)."
    );
    assert_eq!(
        gather_err(
            &[2, 3],
            idx(&[3, 1], vec![0, 0, 0]),
            o().axis(1).batch_dims(1)
        ),
        "params.shape[0]: 2 should be equal to indices.shape[0]: 3"
    );
    assert_eq!(
        gather_err(
            &[2],
            idx(&[2, 2], vec![0, 0, 0, 0]),
            o().axis(0).batch_dims(2)
        ),
        "batch_dims (2) must be less than rank(params) (1)."
    );
    assert_eq!(
        gather_err(&[3], idx(&[2, 1], vec![0, 5]), o()),
        "indices[1,0] = 5 is not in [0, 3)"
    );
    assert_eq!(
        gather_err(&[3], idx(&[], vec![5]), o()),
        "indices = 5 is not in [0, 3)"
    );
    assert_eq!(
        gather_err(&[2], idx(&[2], vec![0, -1]), o()),
        "indices[1] = -1 is not in [0, 2)"
    );
    assert_eq!(
        gather_err(
            &[2, 3, 4],
            idx(&[2, 2], vec![0, 1, 2, 9]),
            o().axis(2).batch_dims(1)
        ),
        "indices[1,1] = 9 is not in [0, 4)"
    );
    assert_eq!(
        gather_err(&[2], idx(&[1], vec![1 << 40]), o()),
        "indices[0] = 1099511627776 is not in [0, 2)"
    );
    assert_eq!(
        gather_err(&[0, 3], idx(&[1], vec![0]), o()),
        "indices[0] = 0 is not in [0, 0)"
    );
}

#[test]
fn gather_reports_the_first_bad_index_in_row_major_order() {
    let err = gather(&array![1, 2, 3], &array![[0, 9], [-1, 7]]).unwrap_err();
    assert_eq!(
        err,
        Error::BadIndex {
            position: vec![0, 1],
            value: 9,
            limit: 3
        }
    );
}

#[test]
fn index_type_limits_follow_tensorflow() {
    let params = ArrayD::<u8>::zeros(IxDyn(&[40000]));
    let err = gather(&params, &array![0i16]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "params.shape[0] too large for int16 indexing: 40000 > 32767"
    );
    let err = gather_nd(&params, &array![[0i16]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "params.NumElements() too large for int16 indexing: 40000 > 32767"
    );
    // Rust's unsigned index types and wider types have no such limit.
    assert_eq!(gather(&params, &array![39999u16]).unwrap().shape(), &[1]);
    assert_eq!(gather(&params, &array![39999i32]).unwrap().shape(), &[1]);
}

#[test]
fn empty_tensors_as_tensorflow() {
    let o = GatherOptions::new;
    // Empty indices give an empty output of the right shape.
    assert_eq!(
        o().gather(&zeros(&[2, 3]), &idx(&[0], vec![]))
            .unwrap()
            .shape(),
        &[0, 3]
    );
    assert_eq!(
        o().axis(1)
            .gather(&zeros(&[2, 3]), &idx(&[2, 0], vec![]))
            .unwrap()
            .shape(),
        &[2, 2, 0]
    );
    // No slice is copied, so no index is looked at.
    assert_eq!(
        o().gather(&zeros(&[3, 0]), &idx(&[1], vec![5]))
            .unwrap()
            .shape(),
        &[1, 0]
    );
    assert_eq!(
        o().axis(1)
            .gather(&zeros(&[0, 3]), &idx(&[1], vec![5]))
            .unwrap()
            .shape(),
        &[0, 1]
    );
    // testEmptySlices
    for (shape, axis, out) in [
        ([7, 0, 0], 0, [2, 0, 0]),
        ([0, 7, 0], 1, [0, 2, 0]),
        ([0, 0, 7], 2, [0, 0, 2]),
    ] {
        assert_eq!(
            o().axis(axis)
                .gather(&zeros(&shape), &idx(&[2], vec![3, 4]))
                .unwrap()
                .shape(),
            &out
        );
    }
}

#[test]
fn gather_nd_messages() {
    let err = |p: &[usize], i: ArrayD<i64>, bd: i64| {
        GatherNdOptions::new()
            .batch_dims(bd)
            .gather_nd(&zeros(p), &i)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(&[], idx(&[1], vec![0]), 0),
        "params must be at least a vector"
    );
    assert_eq!(
        err(&[2], idx(&[], vec![0]), 0),
        "indices must be at least a vector"
    );
    assert_eq!(
        err(&[2, 3], idx(&[1, 3], vec![0, 0, 0]), 0),
        "index innermost dimension length must be <= params rank; saw: 3 vs. 2"
    );
    assert_eq!(
        err(&[3], idx(&[1, 2, 1], vec![0, 7]), 0),
        "indices[0,1] = [7] does not index into param shape [3]"
    );
    assert_eq!(
        err(&[2, 3], idx(&[2], vec![2, 0]), 0),
        "indices = [2, 0] does not index into param shape [2,3]"
    );
    assert_eq!(
        err(&[2, 3], idx(&[1, 2], vec![0, -1]), 0),
        "indices[0] = [0, -1] does not index into param shape [2,3]"
    );
    assert_eq!(
        err(&[0, 3], idx(&[1, 1], vec![0]), 0),
        "Requested more than 0 entries, but params is empty.  Params shape: [0,3]"
    );
    assert_eq!(
        err(&[3, 0], idx(&[1, 1], vec![1]), 0),
        "Requested more than 0 entries, but params is empty.  Params shape: [3,0]"
    );
    assert_eq!(
        err(&[2, 3], idx(&[2, 1], vec![0, 0]), -1),
        "tf.gather_nd does not allow negative batch_dims."
    );
    assert_eq!(
        err(&[2, 3], idx(&[2], vec![0, 0]), 1),
        "Argument `batch_dims` = 1 must be less than rank(`indices`) = 1"
    );
    assert_eq!(
        err(&[2], idx(&[2, 1, 1], vec![0, 0]), 1),
        "Argument `batch_dims` = 1 must be less than rank(`params`) = 1"
    );
    assert_eq!(
        err(&[2, 3], idx(&[2, 1, 2], vec![0; 4]), 1),
        "index innermost dimension length must be <= params rank; saw: 3 vs. 2"
    );
    // A batch mismatch is a clear error, never a silent reshape.
    assert_eq!(
        err(&[2, 3, 4], idx(&[3, 2, 1], vec![0; 6]), 2),
        "params.shape[0]: 2 should be equal to indices.shape[0]: 3"
    );
    // With batch_dims the bad vector is named as the caller wrote it.
    assert_eq!(
        err(&[2, 3, 4], idx(&[2, 2], vec![1, 2, 0, 4]), 1),
        "indices[1] = [0, 4] does not index into param shape [3,4] (params.shape[1:] of [2,3,4], batch_dims=1)"
    );
}

#[test]
fn gather_nd_depth_zero_and_deep() {
    // Depth 0 copies the whole params for each row.
    let params = Array::from_shape_fn((2, 3), |(a, b)| a * 3 + b);
    let out = gather_nd(&params, &idx(&[2, 0], vec![])).unwrap();
    assert_eq!(out.shape(), &[2, 2, 3]);
    assert_eq!(
        out.index_axis(ndarray::Axis(0), 1),
        params.view().into_dyn()
    );
    assert_eq!(
        gather_nd(&params, &idx(&[0], vec![])).unwrap(),
        params.clone().into_dyn()
    );
    // No limit of 7 on the depth.
    let deep = ArrayD::from_shape_fn(IxDyn(&[2; 9]), |ix| ix.slice().iter().sum::<usize>());
    let out = gather_nd(&deep, &idx(&[1, 9], vec![1, 1, 1, 0, 0, 0, 1, 1, 1])).unwrap();
    assert_eq!(out, idx(&[1], vec![6]).mapv(|v| v as usize));
    // N_result == 0 looks at nothing, even with empty params.
    assert_eq!(
        gather_nd(&zeros(&[0, 3]), &idx(&[0, 2], vec![]))
            .unwrap()
            .shape(),
        &[0]
    );
    assert_eq!(
        gather_nd(&zeros(&[3, 3]), &idx(&[0, 1], vec![]))
            .unwrap()
            .shape(),
        &[0, 3]
    );
    // Scalar output from 1-D indices.
    assert_eq!(
        gather_nd(&params, &array![1, 2]).unwrap(),
        arr0(5).into_dyn()
    );
}

#[test]
fn tensorflow_ignore_examples() {
    use ndgather::BadIndices::Ignore;
    let o = GatherNdOptions::new().bad_indices(Ignore);
    let p = array![[0, 1, 2], [3, 4, 5]];
    assert_eq!(
        o.gather_nd(&p, &array![[0, 0], [2, 0]]).unwrap(),
        array![0, 0].into_dyn()
    );
    assert_eq!(
        o.gather_nd(&p, &array![[1], [2]]).unwrap(),
        array![[3, 4, 5], [0, 0, 0]].into_dyn()
    );
    assert_eq!(
        o.gather_nd(&array![9, 1, 2, 8, 4], &array![[3], [5], [1]])
            .unwrap(),
        array![8, 0, 1].into_dyn()
    );
    let p3 = Array::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 12 + b * 4 + c) as i32);
    assert_eq!(
        o.batch_dims(1)
            .gather_nd(&p3, &array![[1, 2], [0, 4]])
            .unwrap(),
        array![6, 0].into_dyn()
    );
}

#[test]
fn hostile_shapes_are_errors_not_panics() {
    // Output shapes whose element count overflows are refused before allocating.
    let err = GatherOptions::new()
        .axis(0)
        .gather(&zeros(&[1, 0]), &ArrayD::<i64>::zeros(IxDyn(&[0])))
        .unwrap();
    assert_eq!(err.shape(), &[0, 0]);
    let huge = ndgather::shape::gather_shape(
        &ndgather::shape::Shape::known(&[usize::MAX / 2, 4]),
        &ndgather::shape::Shape::known(&[3]),
        ndgather::shape::Axis::Given(1),
        0,
        None,
    );
    assert!(matches!(huge, Err(Error::ShapeOverflow { .. })));
    // batch_dims at the extremes.
    for bd in [i64::MIN, i64::MAX] {
        let e = GatherOptions::new()
            .axis(0)
            .batch_dims(bd)
            .gather(&zeros(&[2]), &idx(&[1], vec![0]));
        assert!(matches!(e, Err(Error::BatchDimsOutOfRange { .. })), "{e:?}");
        let e = GatherNdOptions::new()
            .batch_dims(bd)
            .gather_nd(&zeros(&[2]), &idx(&[1], vec![0]));
        assert!(e.is_err());
    }
    let e = GatherOptions::new()
        .batch_dims(i64::MIN)
        .gather(&zeros(&[2]), &idx(&[1], vec![0]));
    assert!(e.is_err());
}
