//! Indices of `int8`, `uint8`, `uint16` and `uint32` run on kernels compiled for `int64` and
//! `uint64` (the dtype table's `kernel` role, which keeps the CLI binary small): every op that
//! reads indices gives, for them, exactly what it gives for the same values as `int64` or
//! `uint64`, results and error messages alike.

use ndgather::ndarray::{ArrayD, IxDyn};
use ndgather::registry::{self, Attr, Attrs, Input};
use ndgather::{DType, Out, Tensor};

/// `values` of shape `shape` as a tensor of the index dtype `dtype` (each value fits it).
fn ids(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    fn of<T: ndgather::TensorElement>(shape: &[usize], v: Vec<T>) -> Tensor {
        T::into_tensor(ArrayD::from_shape_vec(IxDyn(shape), v).unwrap())
    }
    match dtype {
        DType::I8 => of(
            shape,
            values.iter().map(|&v| i8::try_from(v).unwrap()).collect(),
        ),
        DType::U8 => of(
            shape,
            values.iter().map(|&v| u8::try_from(v).unwrap()).collect(),
        ),
        DType::U16 => of(
            shape,
            values.iter().map(|&v| u16::try_from(v).unwrap()).collect(),
        ),
        DType::U32 => of(
            shape,
            values.iter().map(|&v| u32::try_from(v).unwrap()).collect(),
        ),
        DType::I64 => of(shape, values.to_vec()),
        DType::U64 => of(
            shape,
            values.iter().map(|&v| u64::try_from(v).unwrap()).collect(),
        ),
        other => panic!("not an index dtype here: {other}"),
    }
}

fn floats(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_shape_vec(shape, (0..n).map(|k| k as f32 * 1.5 - 2.0).collect()).unwrap()
}

/// The error message of running `op` with `attrs` on `inputs` (which must fail).
fn error_of(op: &str, attrs: Attrs, inputs: &[Input<'_>]) -> String {
    let op = registry::find(op).unwrap().with_attrs(&attrs).unwrap();
    op.run(inputs, Out::New).unwrap_err().to_string()
}

/// One op's run: its name, attributes, and inputs where `Idx(k)` stands for index tensor `k`
/// of the case (so that each run gets them in the dtype under test).
enum Arg {
    Floats(&'static [usize]),
    Idx(usize),
    FloatList(&'static [usize]),
    None,
}

struct Case {
    op: &'static str,
    attrs: Vec<(&'static str, Attr)>,
    args: Vec<Arg>,
    /// Each index tensor: its shape and values.
    indices: Vec<(&'static [usize], Vec<i64>)>,
}

/// The op's outcome, as text: the result's `Debug`, or the error's message.
fn outcome(case: &Case, dtype: DType) -> String {
    let index_tensors: Vec<Tensor> = case
        .indices
        .iter()
        .map(|(shape, values)| ids(dtype, shape, values))
        .collect();
    let float_tensors: Vec<Option<Tensor>> = case
        .args
        .iter()
        .map(|a| match a {
            Arg::Floats(s) | Arg::FloatList(s) => Some(floats(s)),
            _ => None,
        })
        .collect();
    let inputs: Vec<Input<'_>> = case
        .args
        .iter()
        .zip(&float_tensors)
        .map(|(a, f)| match a {
            Arg::Floats(_) => Input::from(f.as_ref().unwrap().view()),
            Arg::FloatList(_) => Input::List(vec![f.as_ref().unwrap().view()]),
            Arg::Idx(k) => Input::from(index_tensors[*k].view()),
            Arg::None => Input::None,
        })
        .collect();
    let attrs = case
        .attrs
        .iter()
        .fold(Attrs::new(), |m, (n, v)| m.with(*n, v.clone()));
    let run = || {
        registry::find(case.op)?
            .with_attrs(&attrs)?
            .run(&inputs, Out::New)
    };
    match run() {
        Ok(value) => format!("{value:?}"),
        Err(e) => format!("error: {e}"),
    }
}

fn cases(bad: i64) -> Vec<Case> {
    use Arg::*;
    let int = Attr::Int;
    let s = |v: &'static str| Attr::Str(v.into());
    vec![
        Case {
            op: "gather",
            attrs: vec![],
            args: vec![Floats(&[4, 2]), Idx(0)],
            indices: vec![(&[2, 2], vec![3, 0, 1, bad])],
        },
        Case {
            op: "gather",
            attrs: vec![("bad_indices", s("clamp"))],
            args: vec![Floats(&[4, 2]), Idx(0)],
            indices: vec![(&[3], vec![3, bad, 1])],
        },
        Case {
            op: "gather_nd",
            attrs: vec![],
            args: vec![Floats(&[4, 2]), Idx(0)],
            indices: vec![(&[2, 2], vec![3, 1, bad, 0])],
        },
        Case {
            op: "take_along_axis",
            attrs: vec![("axis", int(1))],
            args: vec![Floats(&[2, 3]), Idx(0)],
            indices: vec![(&[2, 2], vec![2, 0, 1, bad])],
        },
        Case {
            op: "put_along_axis",
            attrs: vec![("axis", int(1))],
            args: vec![Floats(&[2, 3]), Idx(0), Floats(&[2, 2])],
            indices: vec![(&[2, 2], vec![2, 0, bad, 1])],
        },
        Case {
            op: "tensor_scatter_nd_add",
            attrs: vec![],
            args: vec![Floats(&[4, 2]), Idx(0), Floats(&[3, 2])],
            indices: vec![(&[3, 1], vec![3, 1, bad])],
        },
        Case {
            op: "scatter_nd",
            attrs: vec![("shape", Attr::Ints(vec![4, 2]))],
            args: vec![Idx(0), Floats(&[2, 2])],
            indices: vec![(&[2, 1], vec![bad, 3])],
        },
        Case {
            op: "unsorted_segment_max",
            attrs: vec![("num_segments", int(3))],
            args: vec![Floats(&[5, 2]), Idx(0)],
            indices: vec![(&[5], vec![0, 2, 2, bad, 0])],
        },
        Case {
            op: "segment_sum",
            attrs: vec![],
            args: vec![Floats(&[5, 2]), Idx(0)],
            indices: vec![(&[5], vec![0, 0, 1, bad, bad])],
        },
        Case {
            op: "scatter_reduce",
            attrs: vec![("dim", int(0)), ("reduce", s("amax"))],
            args: vec![Floats(&[4, 2]), Idx(0), Floats(&[3, 2])],
            indices: vec![(&[3, 2], vec![3, 1, 0, 0, bad, 2])],
        },
        Case {
            op: "embedding_lookup",
            attrs: vec![],
            args: vec![FloatList(&[4, 2]), Idx(0)],
            indices: vec![(&[3], vec![3, bad, 1])],
        },
        Case {
            op: "embedding_bag",
            attrs: vec![("mode", s("max"))],
            args: vec![FloatList(&[4, 2]), Idx(0), Idx(1)],
            indices: vec![(&[4], vec![1, 2, bad, 0]), (&[2], vec![0, 2])],
        },
        Case {
            op: "gather_segment",
            attrs: vec![("num_segments", int(2)), ("reduce", s("max"))],
            args: vec![Floats(&[4, 2]), Idx(0), Idx(1)],
            indices: vec![(&[3], vec![3, bad, 1]), (&[3], vec![0, 1, 1])],
        },
        Case {
            op: "gather_grad",
            attrs: vec![("params_shape", Attr::Ints(vec![4, 2]))],
            args: vec![Idx(0), Floats(&[3, 2]), None],
            indices: vec![(&[3], vec![3, 1, bad])],
        },
        Case {
            op: "take_along_axis_grad",
            attrs: vec![("arr_shape", Attr::Ints(vec![2, 3])), ("axis", int(1))],
            args: vec![Idx(0), Floats(&[2, 2])],
            indices: vec![(&[2, 2], vec![2, 0, bad, 1])],
        },
    ]
}

#[test]
fn narrow_indices_run_as_their_wide_twins() {
    // In range (every value a valid index), and out of range (7, past every dimension).
    for bad in [1, 7] {
        for case in cases(bad) {
            for (narrow, wide) in [
                (DType::I8, DType::I64),
                (DType::U8, DType::U64),
                (DType::U16, DType::U64),
                (DType::U32, DType::U64),
                (DType::U8, DType::I64),
            ] {
                let (n, w) = (outcome(&case, narrow), outcome(&case, wide));
                assert_eq!(n, w, "{} with {narrow} indices (bad = {bad})", case.op);
                // Every case runs when its indices are in range, and the default policy
                // refuses the bad one, so that both paths are compared.
                let refused = n.starts_with("error");
                let clamped = case.attrs.iter().any(|(name, _)| *name == "bad_indices");
                assert_eq!(
                    refused,
                    bad == 7 && !clamped && case.op != "segment_sum",
                    "{} with {narrow} indices (bad = {bad}): {n}",
                    case.op
                );
            }
        }
    }
}

#[test]
fn messages_name_the_callers_values() {
    // The messages as they were before indices were widened: the values as given.
    let gather = |bad: i64, dtype| {
        let case = Case {
            op: "gather",
            attrs: vec![],
            args: vec![Arg::Floats(&[4, 2]), Arg::Idx(0)],
            indices: vec![(&[2, 2], vec![3, 0, 1, bad])],
        };
        outcome(&case, dtype)
    };
    for dtype in [DType::I8, DType::U8, DType::U16, DType::U32] {
        assert_eq!(gather(7, dtype), "error: indices[1,1] = 7 is not in [0, 4)");
    }
    assert_eq!(
        gather(-3, DType::I8),
        "error: indices[1,1] = -3 is not in [0, 4)"
    );
    let segment = Case {
        op: "unsorted_segment_sum",
        attrs: vec![("num_segments", Attr::Int(2))],
        args: vec![Arg::Floats(&[3, 2]), Arg::Idx(0)],
        indices: vec![(&[3], vec![0, 9, 1])],
    };
    assert_eq!(
        outcome(&segment, DType::U16),
        "error: segment_ids[1] = 9 is out of range [0, 2)"
    );
}

#[test]
fn large_uint32_and_negative_int8_under_each_policy() {
    // uint32 values past int32's range stay themselves (widened to uint64, not int64).
    for policy in ["clamp", "wrap", "ignore", "error"] {
        let case = |values: Vec<i64>| Case {
            op: "gather",
            attrs: vec![("bad_indices", Attr::Str(policy.into()))],
            args: vec![Arg::Floats(&[4, 2]), Arg::Idx(0)],
            indices: vec![(&[3], values)],
        };
        let big = case(vec![3, 4_000_000_000, 1]);
        assert_eq!(
            outcome(&big, DType::U32),
            outcome(&big, DType::U64),
            "{policy}"
        );
        assert_eq!(
            outcome(&big, DType::U32),
            outcome(&big, DType::I64),
            "{policy}"
        );
        let negative = case(vec![-1, -4, -128]);
        assert_eq!(
            outcome(&negative, DType::I8),
            outcome(&negative, DType::I64),
            "{policy}"
        );
    }
}

#[test]
fn strings_and_ragged_indices_are_widened_too() {
    let words = ndgather::ndarray::array!["a", "bc", "", "def"].mapv(String::from);
    let params = Tensor::from(ndgather::Strings::<String>::from_array(&words));
    let run = |dtype| {
        let idx = ids(dtype, &[3], &[3, 0, 3]);
        let op = registry::find("gather")
            .unwrap()
            .with_attrs(&Attrs::new())
            .unwrap();
        format!(
            "{:?}",
            op.run(
                &[Input::from(params.view()), Input::from(idx.view())],
                Out::New
            )
        )
    };
    assert_eq!(run(DType::U8), run(DType::I64));
    assert!(run(DType::U8).contains("def"), "{}", run(DType::U8));

    // Ragged indices: their values are widened, their row splits are the ragged operand's.
    let values = floats(&[4, 2]);
    let ragged = |dtype| {
        let idx = ids(dtype, &[3], &[3, 0, 2]);
        let splits = [0i64, 2, 3];
        let splits = ndgather::RowSplits::from(&splits[..]);
        let op = registry::find("gather")
            .unwrap()
            .with_attrs(&Attrs::new())
            .unwrap();
        let indices = ndgather::RaggedView::new(idx.view(), vec![splits]).unwrap();
        format!(
            "{:?}",
            op.run(
                &[Input::from(values.view()), Input::Ragged(indices)],
                Out::New
            )
        )
    };
    assert_eq!(ragged(DType::U16), ragged(DType::I64));
    assert!(
        ragged(DType::U16).starts_with("Ok"),
        "{}",
        ragged(DType::U16)
    );
}

#[test]
fn gather_segment_refuses_two_index_dtypes_by_their_own_names() {
    let x = floats(&[4, 2]);
    let (src, dst) = (
        ids(DType::U8, &[2], &[1, 2]),
        ids(DType::U16, &[2], &[0, 1]),
    );
    let err = error_of(
        "gather_segment",
        Attrs::new().with("num_segments", Attr::Int(2)),
        &[
            Input::from(x.view()),
            Input::from(src.view()),
            Input::from(dst.view()),
        ],
    );
    assert_eq!(
        err,
        "gather_segment: src and dst must have one dtype, got uint8 and uint16"
    );
}

#[test]
fn negative_int8_indices_run_as_int64() {
    let case = Case {
        op: "gather",
        attrs: vec![("bad_indices", Attr::Str("negative".into()))],
        args: vec![Arg::Floats(&[4, 2]), Arg::Idx(0)],
        indices: vec![(&[3], vec![-1, -4, 2])],
    };
    let (n, w) = (outcome(&case, DType::I8), outcome(&case, DType::I64));
    assert_eq!(n, w);
    assert!(!n.starts_with("error"), "{n}");
}

#[test]
fn mismatched_offsets_name_the_callers_dtypes() {
    // embedding_bag's offsets must have the input's dtype; the message names both as given,
    // not as widened.
    let shards = floats(&[4, 2]);
    let input = ids(DType::U8, &[2], &[1, 2]);
    let offsets = ids(DType::I64, &[1], &[0]);
    let err = error_of(
        "embedding_bag",
        Attrs::new(),
        &[
            Input::List(vec![shards.view()]),
            Input::from(input.view()),
            Input::from(offsets.view()),
        ],
    );
    assert_eq!(
        err,
        ndgather::Error::DTypeMismatch {
            expected: DType::U8,
            found: DType::I64
        }
        .to_string()
    );
    assert!(err.contains("uint8"), "{err}");
}
