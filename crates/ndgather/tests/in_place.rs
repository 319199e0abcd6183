//! Params of any layout that far outweigh the output are read in place (no row-major copy of
//! params): the results must equal the reference's on the same logical array, for gather and
//! gather_nd, every policy, batch dimensions, `_into`, and records.

use crate::common;

use common::reference;
use ndarray::{s, Array3, ArrayD, ArrayViewD, IxDyn, ShapeBuilder};
use ndgather::memory::RawView;
use ndgather::Op;
use ndgather::{BadIndices, GatherNdOptions, GatherOptions};

/// The storage of a [6, 40, 50] table of distinct values in several memory layouts.
struct Layouts {
    base: ArrayD<i64>,
    fortran: ArrayD<i64>,
    padded: ArrayD<i64>,
    flipped: ArrayD<i64>,
}

fn layouts() -> Layouts {
    let value = |a: usize, b: usize, c: usize| (a * 10_000 + b * 100 + c) as i64;
    let base = Array3::from_shape_fn((6, 40, 50), |(a, b, c)| value(a, b, c));
    let mut fortran = Array3::zeros((6, 40, 50).f());
    fortran.assign(&base);
    let mut padded = Array3::<i64>::zeros((6, 80, 100));
    padded.slice_mut(s![.., ..;2, ..;2]).assign(&base);
    let flipped =
        Array3::from_shape_fn((6, 40, 50), |(a, b, c)| value(5 - a, b, 49 - c)).into_dyn();
    Layouts {
        base: base.into_dyn(),
        fortran: fortran.into_dyn(),
        padded: padded.into_dyn(),
        flipped,
    }
}

/// Non-contiguous views of the same logical table.
fn views(l: &Layouts) -> Vec<(&'static str, ArrayViewD<'_, i64>)> {
    // Negative strides on two axes: the flipped storage read backwards.
    let reversed = l.flipped.slice(s![..;-1, .., ..;-1]);
    let all = vec![
        ("fortran", l.fortran.view()),
        ("stepped", l.padded.slice(s![.., ..;2, ..;2]).into_dyn()),
        ("reversed", reversed.into_dyn()),
    ];
    for (name, v) in &all {
        assert!(v.as_slice().is_none(), "{name} must not be row-major");
        assert_eq!(v, &l.base.view(), "{name} is the same table");
    }
    all
}

#[test]
fn gather_reads_any_layout_in_place() {
    let store = layouts();
    for (name, params) in &views(&store) {
        let owned = &store.base;
        for &policy in BadIndices::ALL {
            for (axis, batch_dims, idx) in [
                (
                    1,
                    0,
                    ArrayD::from_shape_vec(IxDyn(&[3]), vec![39i64, 0, 41]).unwrap(),
                ),
                (
                    2,
                    0,
                    ArrayD::from_shape_vec(IxDyn(&[2]), vec![-1i64, 7]).unwrap(),
                ),
                (
                    0,
                    0,
                    ArrayD::from_shape_vec(IxDyn(&[1]), vec![5i64]).unwrap(),
                ),
                (
                    1,
                    1,
                    ArrayD::from_shape_vec(IxDyn(&[6, 1]), vec![1i64, 2, 3, 4, 5, 39]).unwrap(),
                ),
            ] {
                let options = GatherOptions::new()
                    .axis(axis)
                    .batch_dims(batch_dims)
                    .bad_indices(policy);
                let ours = options.gather(params, &idx);
                let want =
                    reference::gather(owned, &idx, axis as usize, batch_dims as usize, policy);
                match (ours, want) {
                    (Ok(o), Ok(w)) => {
                        assert_eq!(o, w, "{name} axis {axis} {policy:?}");
                        let mut into = ArrayD::<i64>::zeros(o.shape());
                        options.gather_into(params, &idx, into.view_mut()).unwrap();
                        assert_eq!(into, w);
                    }
                    (Err(_), Err(_)) => {}
                    (o, w) => panic!("{name} axis {axis} {policy:?}: {o:?} vs {w:?}"),
                }
            }
        }
    }
}

#[test]
fn gather_nd_reads_any_layout_in_place() {
    let store = layouts();
    for (name, params) in views(&store) {
        let owned = &store.base;
        for &policy in BadIndices::ALL {
            for (batch_dims, idx) in [
                (
                    0,
                    ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![5i64, 39, 0, 40]).unwrap(),
                ),
                (
                    0,
                    ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![-1i64, 3, 49]).unwrap(),
                ),
                (
                    0,
                    ArrayD::from_shape_vec(IxDyn(&[1, 1]), vec![2i64]).unwrap(),
                ),
                (
                    1,
                    ArrayD::from_shape_vec(IxDyn(&[6, 1, 1]), vec![0i64, 1, 2, 3, 4, 50]).unwrap(),
                ),
            ] {
                let options = GatherNdOptions::new()
                    .batch_dims(batch_dims)
                    .bad_indices(policy);
                let ours = options.gather_nd(&params, &idx);
                let want = reference::gather_nd(owned, &idx, batch_dims as usize, policy);
                match (ours, want) {
                    (Ok(o), Ok(w)) => assert_eq!(o, w, "{name} {policy:?} {idx:?}"),
                    (Err(_), Err(_)) => {}
                    (o, w) => panic!("{name} {policy:?}: {o:?} vs {w:?}"),
                }
            }
        }
    }
}

#[test]
fn records_read_in_place() {
    // [6, 40] elements of 3 values, transposed storage of the record axis.
    let mut store = Array3::<u8>::zeros((3, 40, 6).f());
    store.assign(&Array3::from_shape_fn((3, 40, 6), |(a, b, c)| {
        (a * 80 + b + c) as u8
    }));
    let params = store.view().permuted_axes([2, 1, 0]).into_dyn(); // [6, 40, 3]
    let owned = params.to_owned();
    // The [6, 40] elements of 3 bytes where they lie: strides of 120 and 3 bytes.
    let bytes = store.as_slice_memory_order().unwrap();
    let lent = || RawView::within(bytes, 0, &[6, 40], &[120, 3], 3).unwrap();
    let idx = ndarray::arr1(&[39i64, 2]);
    let op = Op::Gather(GatherOptions::new().axis(1));
    let ours = common::run_records(op, lent(), &idx).unwrap();
    let want = common::run_records(op, common::records(&owned), &idx).unwrap();
    assert_eq!(ours, want);
    let nd = ndarray::arr2(&[[5i64, 1]]);
    let ours = common::run_records(Op::GatherNd(GatherNdOptions::new()), lent(), &nd).unwrap();
    assert_eq!(
        ours.into_raw_vec_and_offset().0,
        owned.slice(s![5, 1, ..]).to_vec()
    );
}
