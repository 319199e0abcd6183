//! The dtype-erased API: every element type and every index type, and its own errors.

use crate::common;

use common::run_dense;
use ndgather::{
    bf16, f16, Complex32, Complex64, DType, Error, FloatValue, GatherNdOptions, GatherOptions, Op,
    Tensor, TensorElement, F8E4M3, F8E5M2,
};

fn gather() -> Op {
    Op::Gather(GatherOptions::new())
}

fn gather_nd() -> Op {
    Op::GatherNd(GatherNdOptions::new())
}

fn tensor<T: TensorElement>(shape: &[usize], data: Vec<T>) -> Tensor {
    Tensor::from_shape_vec(shape, data).unwrap()
}

fn float8<T: FloatValue>(x: f64) -> T {
    T::from_f64(x)
}

fn every_dtype() -> Vec<Tensor> {
    let n = 6;
    let k = || 0..n;
    vec![
        tensor(&[3, 2], k().map(|v| v % 2 == 0).collect()),
        tensor(&[3, 2], k().map(|v| v as i8 - 3).collect()),
        tensor(&[3, 2], k().map(|v| v as i16 * 1000).collect()),
        tensor(&[3, 2], k().map(|v| v as i32 - 100).collect()),
        tensor(&[3, 2], k().map(|v| i64::MIN + v as i64).collect()),
        tensor(&[3, 2], k().map(|v| v as u8 * 40).collect()),
        tensor(&[3, 2], k().map(|v| v as u16 * 9000).collect()),
        tensor(&[3, 2], k().map(|v| u32::MAX - v as u32).collect()),
        tensor(&[3, 2], k().map(|v| u64::MAX - v as u64).collect()),
        tensor(
            &[3, 2],
            k().map(|v| f16::from_f32(v as f32 * 0.5)).collect(),
        ),
        tensor(
            &[3, 2],
            k().map(|v| bf16::from_f32(v as f32 * -0.25)).collect(),
        ),
        tensor(&[3, 2], k().map(|v| v as f32 / 3.0).collect()),
        tensor(&[3, 2], k().map(|v| v as f64 / 7.0).collect()),
        tensor(
            &[3, 2],
            k().map(|v| float8(v as f64 * 1.5)).collect::<Vec<F8E4M3>>(),
        ),
        tensor(
            &[3, 2],
            k().map(|v| float8(v as f64 * -96.0))
                .collect::<Vec<F8E5M2>>(),
        ),
        tensor(
            &[3, 2],
            k().map(|v| Complex32::new(v as f32, 1.0)).collect(),
        ),
        tensor(
            &[3, 2],
            k().map(|v| Complex64::new(-(v as f64), 2.0)).collect(),
        ),
        tensor(&[3, 2], k().map(|v| format!("s{v}")).collect()),
        tensor(&[3, 2], k().map(|v| vec![v as u8; v]).collect()),
    ]
}

fn every_index_type(values: &[i64], shape: &[usize]) -> Vec<Tensor> {
    vec![
        tensor(shape, values.iter().map(|&v| v as i16).collect()),
        tensor(shape, values.iter().map(|&v| v as i32).collect()),
        tensor(shape, values.to_vec()),
        tensor(shape, values.iter().map(|&v| v as u8).collect()),
        tensor(shape, values.iter().map(|&v| v as u16).collect()),
        tensor(shape, values.iter().map(|&v| v as u32).collect()),
        tensor(shape, values.iter().map(|&v| v as u64).collect()),
    ]
}

/// Picks rows of a tensor by hand, for comparison.
fn rows(t: &Tensor, picks: &[usize]) -> Tensor {
    macro_rules! pick {
        ($a:expr) => {
            ndgather::ndarray::stack(
                ndgather::ndarray::Axis(0),
                &picks
                    .iter()
                    .map(|&r| $a.index_axis(ndgather::ndarray::Axis(0), r))
                    .collect::<Vec<_>>(),
            )
            .unwrap()
            .into()
        };
    }
    ndgather::with_tensor!(Tensor, t, fixed a => pick!(a), else _d => match t {
        Tensor::String(a) => {
            let a = a.to_array();
            pick!(a)
        }
        Tensor::Bytes(a) => {
            let a = a.to_array();
            pick!(a)
        }
        other => panic!("{}: fixed-width, picked above", other.dtype()),
    })
}

#[test]
fn every_dtype_with_every_index_type() {
    let all = every_dtype();
    assert_eq!(all.len(), DType::ALL.len());
    for params in &all {
        let expected = rows(params, &[2, 0, 2]);
        for indices in every_index_type(&[2, 0, 2], &[3]) {
            let out = run_dense(&gather(), &[params, &indices]).unwrap();
            assert_eq!(out, expected, "{} by {}", params.dtype(), indices.dtype());
            assert_eq!(out.dtype(), params.dtype());
            let nd_indices = every_index_type(&[2, 0, 2], &[3, 1]).remove(0);
            assert_eq!(
                run_dense(&gather_nd(), &[params, &nd_indices]).unwrap(),
                expected
            );
        }
    }
}

#[test]
fn indices_must_be_integers() {
    let params = tensor(&[2], vec![1.0f32, 2.0]);
    for bad in [
        tensor(&[1], vec![0.0f32]),
        tensor(&[1], vec![true]),
        tensor(&[1], vec!["0".to_string()]),
    ] {
        let err = run_dense(&gather(), &[&params, &bad]).unwrap_err();
        assert!(matches!(err, Error::IndicesNotInteger { .. }), "{err}");
        assert!(run_dense(&gather_nd(), &[&params, &bad]).is_err());
    }
}

#[test]
fn construction_and_access() {
    assert!(matches!(
        Tensor::from_shape_vec(&[2, 2], vec![1u8]),
        Err(Error::DataLength {
            expected: 4,
            found: 1,
            ..
        })
    ));
    assert!(matches!(
        Tensor::from_shape_vec(&[usize::MAX, 2], Vec::<u8>::new()),
        Err(Error::ShapeOverflow { .. })
    ));
    let t = Tensor::zeros(DType::BF16, &[2, 3]).unwrap();
    assert_eq!(
        (t.dtype(), t.shape(), t.len()),
        (DType::BF16, &[2usize, 3][..], 6)
    );
    assert!(t.as_array::<f32>().is_none());
    assert!(matches!(
        t.clone().into_array::<f32>(),
        Err(Error::DTypeMismatch { .. })
    ));
    assert_eq!(t.into_array::<bf16>().unwrap().len(), 6);
    for &d in DType::ALL {
        assert_eq!(DType::from_name(d.name()), Some(d));
        assert_eq!(Tensor::zeros(d, &[0]).unwrap().dtype(), d);
    }
}

#[test]
fn a_string_tensor_is_one_buffer_and_has_no_records() {
    let words = ndarray::array![["a", "bb"], ["ccc", ""]].mapv(String::from);
    let t = Tensor::from(words.clone().into_dyn());
    let Tensor::String(s) = &t else {
        panic!("{t:?}")
    };
    assert_eq!(s.byte_len(), 6);
    assert_eq!(s.iter().collect::<Vec<_>>(), ["a", "bb", "ccc", ""]);
    assert_eq!(t.to_array::<String>().unwrap(), words.clone().into_dyn());
    assert_eq!(t.clone().into_array::<String>().unwrap(), words.into_dyn());
    // A caller's output of strings is refused: a tensor of strings owns its bytes.
    let indices = Tensor::from(ndarray::array![1i32].into_dyn());
    let mut target = t.clone();
    let target = ndgather::Out::Into(target.view_mut());
    let inputs = [t.view().into(), indices.view().into()];
    let err = ndgather::OpDef::run(&gather(), &inputs, target).unwrap_err();
    assert_eq!(
        err,
        Error::NotFixedWidth {
            dtype: DType::String
        }
    );
    assert!(err
        .to_string()
        .starts_with("string has no fixed width: a tensor of strings owns its bytes"));
}
