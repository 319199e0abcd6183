//! Every `DType` of the core's table through every front end that dispatches on it: the
//! dtype-erased gather and gather_nd (with every index dtype), the `.npy` round trip,
//! printing (each value as its own type's shortest digits), the op API's gradients for the dtypes with
//! one, and the role predicates against the kinds. A dtype added to the table but missed by a
//! front end fails here, if not already at compile time.

use ndarray::{ArrayD, IxDyn};
use ndgather::graph::{Constant, GatherNd, GatherNdOpOptions, GradElement, Scope};
use ndgather::registry::Input;
use ndgather::{with_dtype, DType, GatherNdOptions, GatherOptions, Kind, Op, OpDef, Out, Tensor};
use ndgather_cli::inplace::Buffer;
use ndgather_cli::{npy, print};

/// A `[3, 2]` tensor of `dtype` whose elements all differ (but bool's): for the plain
/// dtypes, elements whose bytes are all `16 k + 1` (no NaN, no infinity in any of them).
fn sample(dtype: DType) -> Tensor {
    let values: Vec<i64> = (0..6).collect();
    let shape = [3, 2];
    let plain = |k: i64| vec![16 * k as u8 + 1; dtype.size().unwrap_or(0)];
    match dtype.kind() {
        Kind::Bool => Tensor::from_shape_vec(&shape, values.iter().map(|v| v % 2 == 1).collect()),
        Kind::String => {
            Tensor::from_shape_vec(&shape, values.iter().map(|v| format!("s{v}")).collect())
        }
        // No NUL bytes: `.npy` S strings drop trailing NULs, as NumPy does.
        Kind::Bytes => Tensor::from_shape_vec(
            &shape,
            values.iter().map(|v| vec![b'a' + *v as u8; 2]).collect(),
        ),
        _ => with_dtype!(dtype, plain T => Tensor::from_shape_vec(
            &shape,
            values.iter().map(|&v| bytemuck::pod_read_unaligned::<T>(&plain(v))).collect(),
        ), else unreachable!("{dtype} is plain")),
    }
    .unwrap()
}

fn index_tensor(dtype: DType, values: &[i64], shape: &[usize]) -> Tensor {
    with_dtype!(dtype, index I => Tensor::from(
        ArrayD::from_shape_vec(IxDyn(shape), values.iter().map(|&v| v as I).collect()).unwrap()),
        else unreachable!("{dtype} is an index dtype"))
}

/// `op` on dense params and indices through the core's one door, into a new tensor.
fn run(op: Op, params: &Tensor, indices: &Tensor) -> ndgather::Result<Tensor> {
    let inputs = [Input::from(params.view()), Input::from(indices.view())];
    OpDef::run(&op, &inputs, Out::New)?
        .expect("a new output")
        .into_dense()
}

#[test]
fn every_dtype_through_gather_and_gather_nd_with_every_index_dtype() {
    let gather = Op::Gather(GatherOptions::new());
    for &dtype in DType::ALL {
        let params = sample(dtype);
        let rows = run(gather, &params, &index_tensor(DType::I32, &[2, 0], &[2])).unwrap();
        for &index in DType::ALL.iter().filter(|d| d.is_index()) {
            let out = run(gather, &params, &index_tensor(index, &[2, 0], &[2]))
                .unwrap_or_else(|e| panic!("{dtype} by {index}: {e}"));
            assert_eq!((out.dtype(), out.shape()), (dtype, &[2usize, 2][..]));
            assert_eq!(out, rows, "{dtype} by {index}");
            let nd = Op::GatherNd(GatherNdOptions::new());
            let nd = run(nd, &params, &index_tensor(index, &[2, 0], &[2, 1])).unwrap();
            assert_eq!(nd, rows, "{dtype} gather_nd by {index}");
        }
        // Non-index dtypes are refused as indices, naming the dtype.
        for &bad in DType::ALL.iter().filter(|d| !d.is_index()) {
            let err = run(gather, &params, &sample(bad)).unwrap_err();
            assert!(err.to_string().ends_with(&format!("got {bad}")), "{err}");
        }
    }
}

#[test]
fn every_dtype_through_npy_and_printing() {
    for &dtype in DType::ALL {
        let t = sample(dtype);
        let printed = print::format(&t, &Default::default());
        assert!(printed.contains(&format!("dtype={dtype}")), "{printed}");
        let ts = npy::type_str(&t);
        let mut bytes = Vec::new();
        npy::write(&mut bytes, "test", &t, &ts).unwrap();
        let end = bytes.len();
        let back = npy::parse("test", Buffer::Heap(bytes), 0, end)
            .unwrap()
            .into_tensor()
            .unwrap();
        assert_eq!(back, t, "{dtype} through .npy");
    }
}

/// The op API's GatherNd gradient, gathering row 2 twice: twice row 2 there, zero elsewhere.
fn check_gradient<T>(t: &Tensor)
where
    T: GradElement + std::ops::Add<Output = T> + PartialEq + std::fmt::Debug,
{
    let p = t.to_array::<T>().unwrap().into_owned();
    let scope = Scope::eager();
    let params = Constant::create(&scope, p.clone()).unwrap();
    let indices = Constant::create(&scope, ndarray::array![[2i64], [2]].into_dyn()).unwrap();
    let op = GatherNd::create(&scope, &params, &indices, GatherNdOpOptions::new()).unwrap();
    let upstream = Constant::create(&scope, op.output().value().unwrap()).unwrap();
    let grad = op.grad(&scope, &upstream).unwrap().value().unwrap();
    let mut expected = ArrayD::<T>::default(p.raw_dim());
    for j in 0..2 {
        expected[[2, j]] = p[[2, j]] + p[[2, j]];
    }
    assert_eq!(grad, expected, "{}", t.dtype());
}

#[test]
fn every_dtype_with_a_gradient_through_the_op_api() {
    let mut checked = 0;
    for &dtype in DType::ALL {
        let t = sample(dtype);
        checked += with_dtype!(dtype, grad T => { check_gradient::<T>(&t); 1 }, else 0);
    }
    assert_eq!(checked, DType::ALL.iter().filter(|d| d.has_grad()).count());
}

#[test]
fn roles_agree_with_kinds() {
    for &dtype in DType::ALL {
        let kind = dtype.kind();
        assert_eq!(DType::from_name(dtype.name()), Some(dtype));
        assert_eq!(
            dtype.is_index(),
            matches!(kind, Kind::Int | Kind::Uint),
            "{dtype}"
        );
        assert_eq!(
            dtype.size().is_some(),
            !matches!(kind, Kind::String | Kind::Bytes)
        );
        assert_eq!(
            dtype.is_number(),
            dtype.size().is_some() && !matches!(kind, Kind::Bool | Kind::Float8)
        );
        assert_eq!(
            dtype.is_plain(),
            dtype.size().is_some() && kind != Kind::Bool
        );
        assert_eq!(
            dtype.is_float(),
            matches!(kind, Kind::Float | Kind::BrainFloat | Kind::Float8)
        );
        let st = dtype.safetensors_name();
        assert_eq!(st.and_then(DType::from_safetensors_name), st.map(|_| dtype));
        assert_eq!(
            dtype.has_grad(),
            matches!(kind, Kind::Float | Kind::BrainFloat | Kind::Complex)
        );
        assert_eq!(
            dtype.is_real(),
            matches!(kind, Kind::Float | Kind::BrainFloat)
        );
        if let Some(size) = dtype.size() {
            assert_eq!(DType::from_npy_descr(dtype.npy_descr()), Some(dtype));
            if kind != Kind::Float8 {
                assert_eq!(DType::of(kind, size), Some(dtype));
            }
        }
    }
}
