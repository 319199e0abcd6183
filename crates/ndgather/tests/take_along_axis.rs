//! take_along_axis against a small reference written from NumPy's definition (each output
//! element reads params at its own position, with the index along `axis`, inputs broadcast
//! on the other axes), over random shapes, broadcasts, axes, layouts, policies and dtypes;
//! its records form; its gradient against a reference scatter-add; NumPy's own examples.

#[allow(dead_code)]
use crate::common;

use ndarray::{array, ArrayD, Dimension, IxDyn, ShapeBuilder};
use ndgather::Op;
use ndgather::{BadIndices, Complex64, Error, TakeAlongAxisOptions, Tensor};
use proptest::prelude::*;
use proptest::sample::select;

/// Where index `v` reads in a dimension of `n` under `policy`; `None` for a bad index.
fn resolve(v: i64, n: usize, policy: BadIndices) -> Option<usize> {
    let n = n as i64;
    let ok = |k: i64| (0..n).contains(&k).then_some(k as usize);
    match policy {
        BadIndices::Clamp if n > 0 => Some(v.clamp(0, n - 1) as usize),
        BadIndices::Negative if v < 0 => ok(v + n),
        BadIndices::Wrap if n > 0 => Some(v.rem_euclid(n) as usize),
        _ => ok(v),
    }
}

#[derive(Debug, PartialEq)]
enum Outcome<T> {
    Values(ArrayD<T>),
    BadIndex(Vec<usize>, i64),
    Shape,
}

/// NumPy's definition, element by element.
fn reference<T: Clone + Default + 'static>(
    params: &ArrayD<T>,
    indices: &ArrayD<i64>,
    axis: usize,
    policy: BadIndices,
) -> Outcome<T> {
    let (p, i) = (params.shape(), indices.shape());
    let mut out_shape = vec![];
    for d in 0..p.len() {
        out_shape.push(if d == axis {
            i[d]
        } else if p[d] == i[d] || i[d] == 1 {
            p[d]
        } else if p[d] == 1 {
            i[d]
        } else {
            return Outcome::Shape;
        });
    }
    let bad_is_error = matches!(
        policy,
        BadIndices::Error | BadIndices::Clamp | BadIndices::Negative | BadIndices::Wrap
    );
    if out_shape.iter().product::<usize>() > 0 && bad_is_error {
        for (pos, &v) in indices.indexed_iter() {
            if resolve(v, p[axis], policy).is_none() {
                return Outcome::BadIndex(pos.slice().to_vec(), v);
            }
        }
    }
    Outcome::Values(ArrayD::from_shape_fn(IxDyn(&out_shape), |ix| {
        let at: Vec<usize> = (0..i.len())
            .map(|d| if i[d] == 1 { 0 } else { ix[d] })
            .collect();
        match resolve(indices[IxDyn(&at)], p[axis], policy) {
            None => common::reference::fill::<T>(policy),
            Some(k) => {
                let from: Vec<usize> = (0..p.len())
                    .map(|d| {
                        if d == axis {
                            k
                        } else if p[d] == 1 {
                            0
                        } else {
                            ix[d]
                        }
                    })
                    .collect();
                params[IxDyn(&from)].clone()
            }
        }
    }))
}

fn ours<T: ndgather::Element + PartialEq + std::fmt::Debug + 'static>(
    params: &ArrayD<T>,
    indices: &ArrayD<i64>,
    axis: i64,
    policy: BadIndices,
    fortran: bool,
) -> Outcome<T> {
    let options = TakeAlongAxisOptions::new(axis).bad_indices(policy);
    let result = if fortran {
        let mut f = ArrayD::from_elem(IxDyn(params.shape()).f(), T::default());
        f.assign(params);
        options.take_along_axis(&f, indices)
    } else {
        options.take_along_axis(params, indices)
    };
    match result {
        Ok(v) => Outcome::Values(v),
        Err(Error::BadIndex {
            position, value, ..
        }) => Outcome::BadIndex(position, value as i64),
        Err(Error::AlongShapeMismatch { .. }) => Outcome::Shape,
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// A case: params' shape, indices' shape (each axis but `axis` equal, 1, or params' 1), the
/// axis, index seeds, policy, layout.
fn case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, usize, Vec<i64>, BadIndices, bool)> {
    (1usize..5)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(0usize..4, rank),
                proptest::collection::vec(0u8..5, rank),
                0..rank,
                0usize..5,
            )
        })
        .prop_flat_map(|(params, how, axis, along)| {
            let indices: Vec<usize> = params
                .iter()
                .zip(&how)
                .enumerate()
                .map(|(d, (&p, &h))| match (d == axis, h) {
                    (true, _) => along,
                    (false, 0) => 1,
                    (false, 1) if p == 1 => 3,
                    (false, 4) => p + 1, // a mismatch unless it broadcasts
                    _ => p,
                })
                .collect();
            let n: usize = indices.iter().product();
            (
                Just(params),
                Just(indices),
                Just(axis),
                proptest::collection::vec(-5i64..8, n),
                select(BadIndices::ALL.to_vec()),
                any::<bool>(),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn take_along_axis_matches_the_reference(
        (pshape, ishape, axis, seeds, policy, fortran) in case()
    ) {
        let n: usize = pshape.iter().product();
        let indices = ArrayD::from_shape_vec(IxDyn(&ishape), seeds).unwrap();
        let floats = ArrayD::from_shape_fn(IxDyn(&pshape), |ix| ix.slice().iter().fold(0.5, |a, &x| a * 7.0 + x as f32));
        let strings = floats.mapv(|v| format!("s{v}"));
        let complex = floats.mapv(|v| Complex64::new(v as f64, -(v as f64)));
        let negative_axis = axis as i64 - pshape.len() as i64;
        // Compared as they print, so that the NaN `Fill` writes equals itself.
        let show = |o: &dyn std::fmt::Debug| format!("{o:?}");
        for a in [axis as i64, negative_axis] {
            prop_assert_eq!(show(&ours(&floats, &indices, a, policy, fortran)), show(&reference(&floats, &indices, axis, policy)));
            prop_assert_eq!(show(&ours(&strings, &indices, a, policy, fortran)), show(&reference(&strings, &indices, axis, policy)));
            prop_assert_eq!(show(&ours(&complex, &indices, a, policy, fortran)), show(&reference(&complex, &indices, axis, policy)));
        }
        // A tensor of strings as one buffer gathers as the typed array of `String`s.
        let (packed, index_tensor) = (Tensor::from(strings.clone()), Tensor::from(indices.clone()));
        let options = TakeAlongAxisOptions::new(axis as i64).bad_indices(policy);
        match (options.take_along_axis(&strings, &indices), common::run_dense(&Op::TakeAlongAxis(options), &[&packed, &index_tensor])) {
            (Ok(a), Ok(s)) => prop_assert_eq!(s.to_array::<String>().unwrap().into_owned(), a),
            (a, b) => prop_assert_eq!(a.err(), b.err()),
        }
        let _ = n;
    }

    #[test]
    fn records_take_whole_elements(
        (pshape, ishape, axis, seeds, policy, _f) in case()
    ) {
        let indices = ArrayD::from_shape_vec(IxDyn(&ishape), seeds).unwrap();
        let plain = ArrayD::from_shape_fn(IxDyn(&pshape), |ix| ix.slice().iter().fold(1u16, |a, &x| a * 5 + x as u16));
        let mut rshape = pshape.clone();
        rshape.push(2);
        let records = ArrayD::from_shape_fn(IxDyn(&rshape), |ix| {
            let v = plain[IxDyn(&ix.slice()[..pshape.len()])];
            if ix[pshape.len()] == 0 { (v & 0xff) as u8 } else { (v >> 8) as u8 }
        });
        let options = TakeAlongAxisOptions::new(axis as i64).bad_indices(policy);
        match (options.take_along_axis(&plain, &indices), common::run_records(Op::TakeAlongAxis(options), common::records(&records), &indices)) {
            (Ok(p), Ok(r)) => {
                let back = ArrayD::from_shape_fn(IxDyn(p.shape()), |ix| {
                    let mut lo = ix.slice().to_vec();
                    lo.push(0);
                    let mut hi = ix.slice().to_vec();
                    hi.push(1);
                    r[IxDyn(&lo)] as u16 | (r[IxDyn(&hi)] as u16) << 8
                });
                prop_assert_eq!(p, back);
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
        }
    }

    #[test]
    fn grad_matches_a_reference_scatter_add(
        (pshape, ishape, axis, seeds, policy, _f) in case()
    ) {
        let indices = ArrayD::from_shape_vec(IxDyn(&ishape), seeds).unwrap();
        let params = ArrayD::<f64>::zeros(IxDyn(&pshape));
        let options = TakeAlongAxisOptions::new(axis as i64).bad_indices(policy);
        let Ok(out) = options.take_along_axis(&params, &indices) else { return Ok(()); };
        let upstream = ArrayD::from_shape_fn(out.raw_dim(), |ix| ix.slice().iter().fold(1.0, |a, &x| a * 3.0 + x as f64));
        let mut expected = ArrayD::<f64>::zeros(IxDyn(&pshape));
        for (ix, &g) in upstream.indexed_iter() {
            let at: Vec<usize> = (0..ishape.len()).map(|d| if ishape[d] == 1 { 0 } else { ix[d] }).collect();
            if let Some(k) = resolve(indices[IxDyn(&at)], pshape[axis], policy) {
                let to: Vec<usize> = (0..pshape.len())
                    .map(|d| if d == axis { k } else if pshape[d] == 1 { 0 } else { ix[d] })
                    .collect();
                expected[IxDyn(&to)] += g;
            }
        }
        prop_assert_eq!(options.grad(&pshape, &indices, &upstream).unwrap(), expected);
    }
}

/// Outputs of many parallel chunks (each chunk starts its row counter mid-way through the
/// outer axes, which then carries over several of them), with inputs broadcast on outer
/// axes, along the last axis (the contiguous loop) and an inner one, on 1 to 3 threads,
/// fresh and into a caller's array: all equal the reference.
#[test]
fn rows_of_many_chunks_and_broadcasts_match_the_reference() {
    let cases: [(&[usize], &[usize], usize); 4] = [
        (&[6, 7, 11, 200], &[6, 7, 11, 160], 3),
        (&[6, 1, 11, 200], &[1, 7, 11, 160], 3),
        (&[5, 6, 1, 9], &[5, 6, 300, 9], 3),
        (&[12, 90, 11, 13], &[12, 40, 1, 13], 1),
    ];
    for (pshape, ishape, axis) in cases {
        let along = pshape[axis] as i64;
        let params = ArrayD::from_shape_fn(IxDyn(pshape), |ix| {
            ix.slice().iter().fold(0.5f32, |a, &x| a * 3.0 + x as f32)
        });
        let indices = ArrayD::from_shape_fn(IxDyn(ishape), |ix| {
            (ix.slice().iter().fold(7i64, |a, &x| a * 31 + x as i64) % along).abs()
        });
        let Outcome::Values(expected) = reference(&params, &indices, axis, BadIndices::Error)
        else {
            panic!("the reference refused {pshape:?} {ishape:?}");
        };
        for threads in 1..=3 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let options = TakeAlongAxisOptions::new(axis as i64);
                let fresh = options.take_along_axis(&params, &indices).unwrap();
                assert_eq!(
                    fresh, expected,
                    "{pshape:?} {ishape:?} on {threads} threads"
                );
                let mut out = ArrayD::from_elem(expected.raw_dim(), -1.0f32);
                options
                    .take_along_axis_into(&params, &indices, out.view_mut())
                    .unwrap();
                assert_eq!(
                    out, expected,
                    "into, {pshape:?} {ishape:?} on {threads} threads"
                );
            });
        }
    }
}

#[test]
fn numpy_documentation_examples() {
    // numpy.take_along_axis's docstring: a = [[10, 30, 20], [60, 40, 50]].
    let a = array![[10, 30, 20], [60, 40, 50]];
    let ai = array![[0, 2, 1], [1, 2, 0]]; // np.argsort(a, axis=1)
    let along1 = TakeAlongAxisOptions::new(1);
    assert_eq!(
        along1.take_along_axis(&a, &ai).unwrap(),
        array![[10, 20, 30], [40, 50, 60]].into_dyn()
    );
    let max1 = array![[1], [0]]; // np.expand_dims(np.argmax(a, axis=1), axis=1)
    assert_eq!(
        along1.take_along_axis(&a, &max1).unwrap(),
        array![[30], [60]].into_dyn()
    );
    let minmax = array![[0, 1], [1, 0]]; // argmin and argmax, concatenated
    assert_eq!(
        along1.take_along_axis(&a, &minmax).unwrap(),
        array![[10, 30], [40, 60]].into_dyn()
    );
}

#[test]
fn errors_in_numpys_words() {
    let a = array![[1, 2, 3], [4, 5, 6]];
    let e = |idx: ArrayD<i32>, axis: i64| {
        TakeAlongAxisOptions::new(axis)
            .take_along_axis(&a, &idx)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        e(array![1].into_dyn(), 1),
        "`indices` and `arr` must have the same number of dimensions (arr has 2, indices 1)"
    );
    assert_eq!(
        e(array![[1]].into_dyn(), 2),
        "axis 2 is out of bounds for array of dimension 2"
    );
    assert_eq!(
        e(array![[1]].into_dyn(), -3),
        "axis -3 is out of bounds for array of dimension 2"
    );
    assert_eq!(
        e(array![[1], [1], [1]].into_dyn(), 1),
        "shape mismatch: indices of shape [3,1] cannot be broadcast to arr of shape [2,3] (axis 0: sizes must be equal, or one of them 1)"
    );
    assert_eq!(
        e(array![[0], [5]].into_dyn(), 1),
        "indices[1,0] = 5 is not in [0, 3)"
    );
    // An empty output reads nothing, so checks nothing (as NumPy).
    let empty = ArrayD::<i32>::zeros(IxDyn(&[0, 3]));
    let out = TakeAlongAxisOptions::new(1)
        .take_along_axis(&empty, &array![[7]])
        .unwrap();
    assert_eq!(out.shape(), &[0, 1]);
    // A large output runs on the parallel path, with the same result as row by row.
    let big = ArrayD::from_shape_fn(IxDyn(&[300, 500]), |ix| (ix[0] * 500 + ix[1]) as f32);
    let idx = ArrayD::from_shape_fn(IxDyn(&[300, 400]), |ix| {
        ((ix[0] * 7 + ix[1] * 13) % 500) as i64
    });
    let out = TakeAlongAxisOptions::new(1)
        .take_along_axis(&big, &idx)
        .unwrap();
    for ((r, c), &v) in out
        .view()
        .into_dimensionality::<ndarray::Ix2>()
        .unwrap()
        .indexed_iter()
    {
        assert_eq!(v, big[[r, idx[[r, c]] as usize]]);
    }
}

/// Indices that are not integers are NumPy's error (after its axis check) on every path:
/// records of params (whose record axis is no axis of the tensor), the graph's static check
/// and the registry's shape inference.
#[test]
fn non_integer_indices_are_numpys_error_on_every_path() {
    use ndgather::graph::Scope;
    use ndgather::memory::RawView;
    use ndgather::registry::{self, Attr, Attrs, Fact};
    use ndgather::{DType, OpDef, Out, Tensor};
    let bytes = [0u8; 24];
    let floats = Tensor::from(ArrayD::<f32>::zeros(IxDyn(&[2, 1])));
    let run = |axis: i64| {
        let params = RawView::of_bytes(&bytes, &[2, 3], 4).unwrap();
        let inputs = [registry::Input::Records(params), floats.view().into()];
        OpDef::run(
            &Op::TakeAlongAxis(TakeAlongAxisOptions::new(axis)),
            &inputs,
            Out::New,
        )
        .unwrap_err()
    };
    // Records of 4 bytes: a tensor of rank 2, so axis 2 is out of range, axis 1 is not.
    assert!(
        matches!(run(2), Error::AlongAxisOutOfRange { axis: 2, rank: 2 }),
        "{}",
        run(2)
    );
    assert!(
        matches!(run(-3), Error::AlongAxisOutOfRange { .. }),
        "{}",
        run(-3)
    );
    assert_eq!(run(1).to_string(), "`indices` must be an integer array");

    let scope = Scope::graph();
    let arr = scope.constant(Tensor::from(ArrayD::<f32>::zeros(IxDyn(&[2, 3]))));
    let idx = scope.constant(floats.clone());
    let err = |axis| {
        scope
            .take_along_axis(&arr, &idx, TakeAlongAxisOptions::new(axis))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(err(1), "`indices` must be an integer array");
    assert!(
        err(5).contains("axis 5 is out of bounds for array of dimension 2"),
        "{}",
        err(5)
    );

    let op = registry::find("take_along_axis").unwrap();
    let infer = |axis: i64, rank: Option<usize>| {
        let configured = op
            .with_attrs(&Attrs::new().with("axis", Attr::Int(axis)))
            .unwrap();
        let params = match rank {
            Some(r) => Fact::known(DType::F32, &vec![2; r]),
            None => Fact::unknown(),
        };
        configured
            .infer(&[params, Fact::known(DType::F64, &[2, 1])])
            .unwrap_err()
            .to_string()
    };
    assert_eq!(infer(1, Some(2)), "`indices` must be an integer array");
    assert!(
        infer(3, Some(2)).contains("axis 3 is out of bounds"),
        "{}",
        infer(3, Some(2))
    );
    assert_eq!(infer(3, None), "`indices` must be an integer array");
}
