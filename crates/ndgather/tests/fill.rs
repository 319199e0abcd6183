//! The fill policy: JAX's documented fill values for every element type (NaN for floating
//! and complex types, the minimum of signed integers, the maximum of unsigned, true for
//! bool; empty strings), custom values and the ones a type cannot hold, in gather,
//! gather_nd and take_along_axis, fresh and into, plain and records; scatters drop bad rows
//! under it as under Ignore.

use crate::common;
use half::{bf16, f16};
use ndarray::{array, ArrayD, IxDyn};
use ndgather::Op;
use ndgather::{
    BadIndices, Complex32, Complex64, DType, FillValue, FloatValue, GatherNdOptions, GatherOptions,
    TakeAlongAxisOptions, Tensor,
};

fn filled(dtype: DType) -> Tensor {
    let params = Tensor::zeros(dtype, &[2]).unwrap();
    let indices = Tensor::from_shape_vec(&[2], vec![1i64, 5]).unwrap();
    let options = GatherOptions::new().bad_indices(BadIndices::Fill);
    common::run_dense(&Op::Gather(options), &[&params, &indices]).unwrap()
}

#[test]
fn jax_fill_values_for_every_dtype() {
    for &dtype in DType::ALL {
        let out = filled(dtype);
        let text = format!("{out:?}");
        let nan = ndgather::with_tensor!(Tensor, &out, float a => a[1].to_f64().is_nan(), else _d => false);
        let ok = nan
            || match out {
                Tensor::Bool(a) => a[1],
                Tensor::I8(a) => a[1] == i8::MIN,
                Tensor::I16(a) => a[1] == i16::MIN,
                Tensor::I32(a) => a[1] == i32::MIN,
                Tensor::I64(a) => a[1] == i64::MIN,
                Tensor::U8(a) => a[1] == u8::MAX,
                Tensor::U16(a) => a[1] == u16::MAX,
                Tensor::U32(a) => a[1] == u32::MAX,
                Tensor::U64(a) => a[1] == u64::MAX,
                Tensor::C64(a) => a[1].re.is_nan() && a[1].im == 0.0,
                Tensor::C128(a) => a[1].re.is_nan() && a[1].im == 0.0,
                Tensor::String(a) => a.get(1).is_some_and(|s| s.is_empty()),
                Tensor::Bytes(a) => a.get(1).is_some_and(|s| s.is_empty()),
                // The floats, NaN above.
                _ => false,
            };
        assert!(ok, "{dtype}: {text}");
    }
}

#[test]
fn custom_values_and_the_ones_a_type_cannot_hold() {
    let fill = |v: FillValue| {
        GatherOptions::new()
            .bad_indices(BadIndices::Fill)
            .fill_value(v)
    };
    let idx = array![0, -1];
    assert_eq!(
        fill(FillValue::Int(-1))
            .gather(&array![7i8, 8], &idx)
            .unwrap(),
        array![7i8, -1].into_dyn()
    );
    assert_eq!(
        fill(FillValue::float(2.5))
            .gather(&array![1.0f32], &idx)
            .unwrap(),
        array![1.0f32, 2.5].into_dyn()
    );
    assert_eq!(
        fill(FillValue::float(0.5))
            .gather(&array![f16::ONE], &idx)
            .unwrap()[1],
        f16::from_f32(0.5)
    );
    assert_eq!(
        fill(FillValue::Int(3))
            .gather(&array![bf16::ONE], &idx)
            .unwrap()[1],
        bf16::from_f32(3.0)
    );
    assert_eq!(
        fill(FillValue::float(-1.0))
            .gather(&array![Complex32::new(1.0, 1.0)], &idx)
            .unwrap()[1],
        Complex32::new(-1.0, 0.0)
    );
    assert!(
        !fill(FillValue::Bool(false))
            .gather(&array![true], &idx)
            .unwrap()[1]
    );
    assert_eq!(
        fill(FillValue::float(4.0))
            .gather(&array![1u16], &idx)
            .unwrap()[1],
        4
    );
    let e = |r: ndgather::Result<ArrayD<i8>>| r.unwrap_err().to_string();
    assert_eq!(
        e(fill(FillValue::Int(300)).gather(&array![1i8], &idx)),
        "fill value 300 does not fit elements of type i8"
    );
    assert_eq!(
        e(fill(FillValue::float(1.5)).gather(&array![1i8], &idx)),
        "fill value 1.5 does not fit elements of type i8"
    );
    let s = fill(FillValue::Int(1))
        .gather(&array![String::from("a")], &idx)
        .unwrap_err();
    assert!(
        s.to_string()
            .starts_with("fill value 1 does not fit elements of type"),
        "{s}"
    );
    let c = fill(FillValue::Default)
        .gather(&array![Complex64::new(1.0, 1.0)], &idx)
        .unwrap();
    assert_eq!(c[0], Complex64::new(1.0, 1.0));
}

#[test]
fn every_op_and_form_fills() {
    let params = array![[1.0f32, 2.0], [3.0, 4.0]];
    let f = FillValue::float(-9.0);
    let g = GatherOptions::new()
        .axis(1)
        .bad_indices(BadIndices::Fill)
        .fill_value(f);
    assert_eq!(
        g.gather(&params, &array![1, 7]).unwrap(),
        array![[2.0, -9.0], [4.0, -9.0]].into_dyn()
    );
    // A column-major caller's array.
    let mut out = ArrayD::<f32>::zeros(IxDyn(&[2, 2])).reversed_axes();
    g.gather_into(&params, &array![1, 7], out.view_mut())
        .unwrap();
    assert_eq!(out, array![[2.0, -9.0], [4.0, -9.0]].into_dyn());
    let nd = GatherNdOptions::new()
        .bad_indices(BadIndices::Fill)
        .fill_value(f);
    assert_eq!(
        nd.gather_nd(&params, &array![[1, 1], [2, 0]]).unwrap(),
        array![4.0, -9.0].into_dyn()
    );
    let along = TakeAlongAxisOptions::new(1)
        .bad_indices(BadIndices::Fill)
        .fill_value(f);
    assert_eq!(
        along.take_along_axis(&params, &array![[5], [0]]).unwrap(),
        array![[-9.0], [3.0]].into_dyn()
    );
    // Records (a binding's bytes): the fill value given as one element's bytes.
    let records = array![[[1u8, 2], [3, 4]]];
    let bytes = FillValue::bytes(&[0xAB, 0xCD]).unwrap();
    let r = GatherOptions::new()
        .axis(1)
        .bad_indices(BadIndices::Fill)
        .fill_value(bytes);
    let out = common::run_records(Op::Gather(r), common::records(&records), &array![1, 3]).unwrap();
    assert_eq!(out, array![[[3, 4], [0xAB, 0xCD]]].into_dyn());
    let wrong = GatherOptions::new()
        .bad_indices(BadIndices::Fill)
        .fill_value(FillValue::bytes(&[1]).unwrap());
    let two = array![[1u8, 2]];
    assert!(common::run_records(Op::Gather(wrong), common::records(&two), &array![3]).is_err());
}

#[test]
fn scatters_drop_bad_rows_under_fill() {
    let out =
        ndgather::scatter::scatter_nd(&array![[0], [9]], &array![1.0, 2.0], &[2], BadIndices::Fill)
            .unwrap();
    assert_eq!(out, array![1.0, 0.0].into_dyn());
    let sums = ndgather::scatter::unsorted_segment_sum(
        &array![1.0, 2.0],
        &array![1, 7],
        2,
        BadIndices::Fill,
    )
    .unwrap();
    assert_eq!(sums, array![0.0, 1.0].into_dyn());
}
