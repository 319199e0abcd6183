//! The registry: every op found by name, its attributes checked against its signature, and
//! each op run by name giving what its own typed door gives.

use ndgather::ndarray::{array, ArrayD};
use ndgather::registry::{self, Attr, AttrKind, Attrs, Fact, Input};
use ndgather::segment::{Reduce, Segment};
use ndgather::shape::Shape;
use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
use ndgather::{DType, Error, Out, Tensor};

fn t<T: ndgather::TensorElement>(a: ArrayD<T>) -> Tensor {
    T::into_tensor(a)
}

fn run(name: &str, attrs: Attrs, inputs: &[Input<'_>]) -> ndgather::Result<Tensor> {
    let op = registry::find(name)?.with_attrs(&attrs)?;
    op.run(inputs, Out::New)?.unwrap().into_dense()
}

#[test]
fn names_are_unique_and_found() {
    let names: Vec<&str> = registry::names().collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "{names:?}");
    for name in &names {
        assert_eq!(registry::find(name).unwrap().name(), *name);
    }
    for expected in [
        "gather",
        "gather_nd",
        "take_along_axis",
        "put_along_axis",
        "tensor_scatter_nd_update",
        "tensor_scatter_nd_max",
        "scatter_nd",
        "scatter_reduce",
        "embedding_lookup",
        "embedding_lookup_sparse",
        "embedding_bag",
        "segment_sum",
        "unsorted_segment_sqrt_n",
        "gather_segment",
        "gather_grad",
        "gather_nd_grad",
        "take_along_axis_grad",
        "embedding_lookup_grad",
        "embedding_lookup_sparse_grad",
        "embedding_bag_grad",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let err = registry::find("gahter").unwrap_err();
    assert!(matches!(err, Error::UnknownOp { .. }));
    assert!(err.to_string().contains("gather_nd"), "{err}");
}

/// Each op's graph type, TensorFlow's where it has one, finds it too, and no type is another
/// op's name or type.
#[test]
fn graph_types_are_unique_and_found() {
    let mut all: Vec<&str> = registry::names().collect();
    for name in registry::names() {
        let op = registry::find(name).unwrap();
        let ty = op.type_name();
        assert!(
            ty.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !ty.contains('_'),
            "{name}: {ty}"
        );
        assert_eq!(registry::find(ty).unwrap().name(), name);
        all.push(ty);
    }
    let count = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), count);
    for (ty, name) in [
        ("GatherV2", "gather"),
        ("GatherNd", "gather_nd"),
        ("TensorScatterAdd", "tensor_scatter_nd_add"),
        ("UnsortedSegmentMax", "unsorted_segment_max"),
        ("ScatterNd", "scatter_nd"),
        ("PutAlongAxis", "put_along_axis"),
        ("ScatterReduce", "scatter_reduce"),
        ("EmbeddingBagGrad", "embedding_bag_grad"),
    ] {
        assert_eq!(registry::find(ty).unwrap().name(), name);
    }
}

#[test]
fn attrs_are_a_map_whatever_the_order_they_were_set_in() {
    let name = String::from("axis");
    let a = Attrs::new()
        .with("batch_dims", Attr::Int(1))
        .with(name.clone(), Attr::Int(0))
        .with("axis", Attr::Int(2));
    let b = Attrs::new()
        .with("axis", Attr::Int(2))
        .with("batch_dims", Attr::Int(1));
    assert_eq!(a, b);
    assert_eq!(a.names().collect::<Vec<_>>(), ["batch_dims", "axis"]);
    assert_eq!(a.get(&name), Some(&Attr::Int(2)));
    assert_ne!(a, b.clone().with("bad_indices", Attr::Str("clamp".into())));
    assert_ne!(b.clone().with("axis", Attr::Int(3)), a);
    // More names than are held inline.
    let many = (0..9).fold(Attrs::new(), |m, k| m.with(format!("a{k}"), Attr::Int(k)));
    assert_eq!(many.get("a8"), Some(&Attr::Int(8)));
    assert_eq!(many.names().count(), 9);
}

#[test]
fn attributes_are_checked_against_the_signature() {
    for op in registry::ops() {
        let sig = op.signature();
        let err = op
            .with_attrs(&Attrs::new().with("no_such_attr", Attr::Int(1)))
            .unwrap_err();
        assert!(
            err.to_string().contains("unknown attribute"),
            "{}: {err}",
            op.name()
        );
        for def in sig.attrs {
            let wrong = match def.kind {
                AttrKind::Str(_) | AttrKind::Bool | AttrKind::Ints => Attr::Float(0.5),
                _ => Attr::Str("x".into()),
            };
            // The other required attributes valid, so the wrong kind is what is refused.
            let mut attrs = Attrs::new();
            for other in sig.attrs.iter().filter(|o| !o.optional) {
                let valid = match other.kind {
                    AttrKind::Ints => Attr::Ints(vec![1]),
                    AttrKind::Str(choices) => {
                        Attr::Str((*choices.first().unwrap_or(&"sum")).into())
                    }
                    AttrKind::Bool => Attr::Bool(false),
                    _ => Attr::Int(0),
                };
                attrs.insert(other.name, valid);
            }
            attrs.insert(def.name, wrong);
            let err = op.with_attrs(&attrs).unwrap_err();
            assert!(
                matches!(err, Error::AttributeKind { .. }),
                "{} {}: {err:?}",
                op.name(),
                def.name
            );
            if !def.optional {
                let err = op.with_attrs(&Attrs::new()).unwrap_err();
                assert!(err.to_string().contains("is required"), "{err}");
            }
        }
    }
    let err = registry::find("gather")
        .unwrap()
        .with_attrs(&Attrs::new().with("bad_indices", Attr::Str("wrapp".into())))
        .unwrap_err();
    assert!(
        err.to_string().contains(
            "must be one of 'error', 'ignore', 'clamp', 'negative', 'wrap' or 'fill', got wrapp"
        ),
        "{err}"
    );
}

#[test]
fn inputs_are_checked_against_the_signature() {
    let p = t(array![1.0f32, 2.0].into_dyn());
    let err = run("gather", Attrs::new(), &[Input::from(p.view())]).unwrap_err();
    assert!(err.to_string().contains("takes 2 inputs"), "{err}");
    let err = run(
        "gather",
        Attrs::new(),
        &[Input::from(p.view()), Input::List(vec![p.view()])],
    )
    .unwrap_err();
    assert!(err.to_string().contains("indices"), "{err}");
}

#[test]
fn each_op_by_name_equals_its_typed_door() {
    let params = t(array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn());
    let idx = t(array![2i64, 0].into_dyn());
    let got = run(
        "gather",
        Attrs::new(),
        &[Input::from(params.view()), Input::from(idx.view())],
    )
    .unwrap();
    assert_eq!(got, t(array![[5.0f32, 6.0], [1.0, 2.0]].into_dyn()));

    let nd = t(array![[2i64, 1], [0, 0]].into_dyn());
    let got = run(
        "gather_nd",
        Attrs::new(),
        &[Input::from(params.view()), Input::from(nd.view())],
    )
    .unwrap();
    assert_eq!(got, t(array![6.0f32, 1.0].into_dyn()));

    let along = t(array![[1i64], [0], [1]].into_dyn());
    let got = run(
        "take_along_axis",
        Attrs::new().with("axis", Attr::Int(1)),
        &[Input::from(params.view()), Input::from(along.view())],
    )
    .unwrap();
    assert_eq!(got, t(array![[2.0f32], [3.0], [6.0]].into_dyn()));

    let values = t(array![[9.0f32], [8.0], [7.0]].into_dyn());
    let got = run(
        "put_along_axis",
        Attrs::new().with("axis", Attr::Int(1)),
        &[
            Input::from(params.view()),
            Input::from(along.view()),
            Input::from(values.view()),
        ],
    )
    .unwrap();
    assert_eq!(
        got,
        t(array![[1.0f32, 9.0], [8.0, 4.0], [5.0, 7.0]].into_dyn())
    );

    let scatter_idx = t(array![[1i64]].into_dyn());
    let updates = t(array![[10.0f32, 20.0]].into_dyn());
    let got = run(
        "tensor_scatter_nd_add",
        Attrs::new(),
        &[
            Input::from(params.view()),
            Input::from(scatter_idx.view()),
            Input::from(updates.view()),
        ],
    )
    .unwrap();
    // The op value built in Rust, run through the same door, agrees with the one by name.
    let value = |op: &dyn ndgather::OpDef, inputs: &[Input<'_>]| {
        op.run(inputs, Out::New)
            .and_then(|v| v.unwrap().into_dense())
    };
    let inputs = [
        Input::from(params.view()),
        Input::from(scatter_idx.view()),
        Input::from(updates.view()),
    ];
    let direct = value(&TensorScatter::new(ScatterKind::Add), &inputs).unwrap();
    assert_eq!(got, direct);
    assert_eq!(
        got,
        t(array![[1.0f32, 2.0], [13.0, 24.0], [5.0, 6.0]].into_dyn())
    );
    // Every policy the op value takes, by name too: index 7 is out of range.
    let far = t(array![[7i64]].into_dyn());
    for &policy in ndgather::BadIndices::ALL {
        let name = policy.name();
        let got = run(
            "tensor_scatter_nd_max",
            Attrs::new().with("bad_indices", Attr::Str(name.into())),
            &[
                Input::from(params.view()),
                Input::from(far.view()),
                Input::from(updates.view()),
            ],
        );
        let op = TensorScatter::new(ScatterKind::Max).bad_indices(policy);
        let inputs = [
            Input::from(params.view()),
            Input::from(far.view()),
            Input::from(updates.view()),
        ];
        let direct = value(&op, &inputs);
        assert_eq!(got, direct, "{name}");
    }

    let got = run(
        "scatter_nd",
        Attrs::new().with("shape", Attr::Ints(vec![3, 2])),
        &[Input::from(scatter_idx.view()), Input::from(updates.view())],
    )
    .unwrap();
    assert_eq!(
        got,
        t(array![[0.0f32, 0.0], [10.0, 20.0], [0.0, 0.0]].into_dyn())
    );

    let index = t(array![[0i64, 0], [0, 0], [0, 0]].into_dyn());
    let got = run(
        "scatter_reduce",
        Attrs::new()
            .with("dim", Attr::Int(0))
            .with("reduce", Attr::Str("amax".into())),
        &[
            Input::from(params.view()),
            Input::from(index.view()),
            Input::from(params.view()),
        ],
    )
    .unwrap();
    assert_eq!(
        got,
        t(array![[5.0f32, 6.0], [3.0, 4.0], [5.0, 6.0]].into_dyn())
    );

    let ids = t(array![2i64, 2].into_dyn());
    let got = run(
        "embedding_lookup",
        Attrs::new(),
        &[Input::List(vec![params.view()]), Input::from(ids.view())],
    )
    .unwrap();
    assert_eq!(got, t(array![[5.0f32, 6.0], [5.0, 6.0]].into_dyn()));

    let bags = t(array![[0i64, 2]].into_dyn());
    let got = run(
        "embedding_bag",
        Attrs::new().with("mode", Attr::Str("sum".into())),
        &[
            Input::List(vec![params.view()]),
            Input::from(bags.view()),
            Input::None,
            Input::None,
        ],
    )
    .unwrap();
    assert_eq!(got, t(array![[6.0f32, 8.0]].into_dyn()));

    let seg = t(array![0i64, 0, 1].into_dyn());
    let got = run(
        "segment_max",
        Attrs::new(),
        &[Input::from(params.view()), Input::from(seg.view())],
    )
    .unwrap();
    let direct = Segment::sorted(Reduce::Max)
        .run_views(&params.view(), &seg.view())
        .unwrap();
    assert_eq!(got, direct);
    assert_eq!(got, t(array![[3.0f32, 4.0], [5.0, 6.0]].into_dyn()));
}

#[test]
fn write_ops_run_in_place_and_read_ops_refuse_it() {
    let mut tensor = array![1i32, 2, 3].into_dyn();
    let idx = t(array![[0i64], [2]].into_dyn());
    let upd = t(array![10i32, 30].into_dyn());
    let op = registry::find("tensor_scatter_nd_update").unwrap();
    let out = op
        .run(
            &[
                Input::None,
                Input::from(idx.view()),
                Input::from(upd.view()),
            ],
            Out::InPlace(tensor.view_mut().into()),
        )
        .unwrap();
    assert!(out.is_none());
    assert_eq!(tensor, array![10, 2, 30].into_dyn());
    // On error the tensor is unchanged.
    let bad = t(array![[5i64]].into_dyn());
    let one = t(array![7i32].into_dyn());
    op.run(
        &[
            Input::None,
            Input::from(bad.view()),
            Input::from(one.view()),
        ],
        Out::InPlace(tensor.view_mut().into()),
    )
    .unwrap_err();
    assert_eq!(tensor, array![10, 2, 30].into_dyn());
    let p = t(array![1i32, 2].into_dyn());
    let i = t(array![0i64].into_dyn());
    let err = registry::find("gather")
        .unwrap()
        .run(
            &[Input::from(p.view()), Input::from(i.view())],
            Out::InPlace(tensor.view_mut().into()),
        )
        .unwrap_err();
    assert!(err.to_string().contains("in place"), "{err}");
}

#[test]
fn into_a_callers_buffer_is_checked_first() {
    let data = t(array![1.0f32, 2.0, 3.0].into_dyn());
    let ids = t(array![1i64, 0, 1].into_dyn());
    let op = registry::find("unsorted_segment_sum")
        .unwrap()
        .with_attrs(&Attrs::new().with("num_segments", Attr::Int(2)))
        .unwrap();
    let mut buffer = array![-1.0f32, -1.0].into_dyn();
    op.run(
        &[Input::from(data.view()), Input::from(ids.view())],
        Out::Into(buffer.view_mut().into()),
    )
    .unwrap();
    assert_eq!(buffer, array![2.0f32, 4.0].into_dyn());
    let mut wrong = array![-1.0f32, -1.0, -1.0].into_dyn();
    let err = op
        .run(
            &[Input::from(data.view()), Input::from(ids.view())],
            Out::Into(wrong.view_mut().into()),
        )
        .unwrap_err();
    assert!(matches!(err, Error::OutputShapeMismatch { .. }));
    assert_eq!(wrong, array![-1.0f32, -1.0, -1.0].into_dyn());
}

#[test]
fn shapes_are_inferred_from_partial_facts() {
    let gather = registry::find("gather")
        .unwrap()
        .with_attrs(&Attrs::new().with("axis", Attr::Int(1)))
        .unwrap();
    let params = Fact::new(Some(DType::F32), Shape::from_dims(vec![None, Some(5)]));
    let fact = gather
        .infer(&[params, Fact::known(DType::I64, &[2, 3])])
        .unwrap();
    assert_eq!(fact.shape.to_string(), "[?,2,3]");
    assert_eq!(fact.dtype, Some(DType::F32));
    let mean = registry::find("unsorted_segment_mean")
        .unwrap()
        .with_attrs(&Attrs::new().with("num_segments", Attr::Int(4)))
        .unwrap();
    let fact = mean
        .infer(&[
            Fact::known(DType::I32, &[6, 2]),
            Fact::known(DType::I64, &[6]),
        ])
        .unwrap();
    assert_eq!(fact.shape, Shape::known(&[4, 2]));
    assert_eq!(fact.dtype, Some(DType::F64));
    let err = registry::find("segment_max")
        .unwrap()
        .infer(&[Fact::known(DType::C64, &[2]), Fact::known(DType::I64, &[2])])
        .unwrap_err();
    assert!(err.to_string().contains("complex64"), "{err}");
}

#[test]
fn gradients_by_name() {
    let params = t(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn());
    let idx = t(array![1i64, 1].into_dyn());
    let op = registry::find("gather").unwrap();
    let inputs = [Input::from(params.view()), Input::from(idx.view())];
    let out = op
        .run(&inputs, Out::New)
        .unwrap()
        .unwrap()
        .into_dense()
        .unwrap();
    let up = t(array![[1.0f32, 1.0], [2.0, 2.0]].into_dyn());
    let grads = op.grad(&inputs, Some(&out.view()), &up.view()).unwrap();
    assert_eq!(
        grads[0],
        Some(t(array![[0.0f32, 0.0], [3.0, 3.0]].into_dyn()))
    );
    assert!(grads[1].is_none());
    let src = t(array![[1.0f32, 2.0]].into_dyn());
    let err = registry::find("put_along_axis")
        .unwrap()
        .with_attrs(&Attrs::new().with("axis", Attr::Int(0)))
        .unwrap()
        .grad(
            &[params.view().into(), idx.view().into(), src.view().into()],
            Some(&out.view()),
            &up.view(),
        )
        .unwrap_err();
    assert!(matches!(err, Error::NoGradient { .. }), "{err}");
}

/// The read ops' gradients by name give what the typed functions give, for integer and
/// float upstream gradients alike, and take params' shape as an attribute.
#[test]
fn read_grads_by_name_equal_the_typed_gradients() {
    let shape = Attr::Ints(vec![2, 3]);
    let indices = t(array![2i64, 2, 0].into_dyn());
    let upstream = t(array![[1i32, 2, 3], [4, 5, 6]].into_dyn());
    let inputs = [Input::from(indices.view()), Input::from(upstream.view())];
    let attrs = Attrs::new()
        .with("params_shape", shape.clone())
        .with("axis", Attr::Int(1));
    let by_name = run("gather_grad", attrs, &inputs).unwrap();
    let typed = ndgather::grad::gather_grad(
        &[2, 3],
        &array![2i64, 2, 0],
        &array![[1i32, 2, 3], [4, 5, 6]],
        1,
        0,
    )
    .unwrap();
    assert_eq!(by_name, t(typed));
    assert_eq!(by_name, t(array![[3i32, 0, 3], [6, 0, 9]].into_dyn()));

    let vectors = t(array![[1i64, 2], [1, 2], [0, 0]].into_dyn());
    let ones = t(array![1.0f64, 1.0, 1.0].into_dyn());
    let nd = run(
        "gather_nd_grad",
        Attrs::new().with("params_shape", shape),
        &[Input::from(vectors.view()), Input::from(ones.view())],
    )
    .unwrap();
    assert_eq!(
        nd,
        t(array![[1.0f64, 0.0, 0.0], [0.0, 0.0, 2.0]].into_dyn())
    );

    let along = t(array![[2i64, 2], [0, 1]].into_dyn());
    let g = t(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn());
    let attrs = Attrs::new()
        .with("arr_shape", Attr::Ints(vec![2, 3]))
        .with("axis", Attr::Int(1))
        .with("bad_indices", Attr::Str("clamp".into()));
    let got = run(
        "take_along_axis_grad",
        attrs,
        &[Input::from(along.view()), Input::from(g.view())],
    )
    .unwrap();
    assert_eq!(
        got,
        t(array![[0.0f32, 0.0, 3.0], [3.0, 4.0, 0.0]].into_dyn())
    );

    // The shape is the op's fact; a negative size and float indices are refused.
    let op = registry::find("gather_nd_grad").unwrap();
    let configured = op
        .with_attrs(&Attrs::new().with("params_shape", Attr::Ints(vec![4, 5])))
        .unwrap();
    let fact = configured
        .infer(&[
            Fact::known(DType::I64, &[3, 2]),
            Fact::known(DType::F32, &[3]),
        ])
        .unwrap();
    assert_eq!(fact, Fact::known(DType::F32, &[4, 5]));
    let err = op
        .with_attrs(&Attrs::new().with("params_shape", Attr::Ints(vec![2, -1])))
        .unwrap_err();
    assert!(err.to_string().contains("negative sizes"), "{err}");
    let err = configured
        .infer(&[
            Fact::known(DType::F32, &[3, 2]),
            Fact::known(DType::F32, &[3]),
        ])
        .unwrap_err();
    assert!(matches!(err, Error::IndicesNotInteger { .. }), "{err:?}");
}

/// embedding_lookup_sparse by name checks the weights' indices and dense shape against the
/// ids', and refuses them without weights' values.
#[test]
fn sparse_lookup_checks_the_weights_sparse_form() {
    let table = t(array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn());
    let indices = t(array![[0i64, 0], [0, 1]].into_dyn());
    let ids = t(array![0i64, 1].into_dyn());
    let shape = t(array![1i64, 2].into_dyn());
    let weights = t(array![1.0f32, 3.0].into_dyn());
    let other = t(array![[0i64, 0], [0, 0]].into_dyn());
    fn opt(x: Option<&Tensor>) -> Input<'_> {
        x.map_or(Input::None, |x| Input::from(x.view()))
    }
    let run_with = |w: Option<&Tensor>, w_indices: Option<&Tensor>| {
        run(
            "embedding_lookup_sparse",
            Attrs::new().with("combiner", Attr::Str("sum".into())),
            &[
                Input::List(vec![table.view()]),
                Input::from(indices.view()),
                Input::from(ids.view()),
                Input::from(shape.view()),
                opt(w),
                opt(w_indices),
                Input::None,
            ],
        )
    };
    let weighted = run_with(Some(&weights), Some(&indices)).unwrap();
    assert_eq!(weighted, t(array![[10.0f32, 14.0]].into_dyn()));
    let err = run_with(Some(&weights), Some(&other)).unwrap_err();
    assert!(err.to_string().contains("same indices"), "{err}");
    let err = run_with(None, Some(&indices)).unwrap_err();
    assert!(err.to_string().contains("no values"), "{err}");
}

#[test]
fn lookup_grads_by_name_equal_the_typed_gradients() {
    use ndgather::embedding::EmbeddingLookupOptions;
    use ndgather::embedding_bag::{BagMode, EmbeddingBag};
    use ndgather::registry::{SparseGrad, Value};
    // A table of three rows in two shards by "mod": rows 0 and 2, then row 1.
    let s0 = array![[1.0f32, 2.0], [5.0, 6.0]].into_dyn();
    let s1 = array![[3.0f32, 4.0]].into_dyn();
    let ids = array![2i64, 1, 2].into_dyn();
    let grad = array![[1.0f32, 1.0], [2.0, 2.0], [3.0, 3.0]].into_dyn();
    let typed = EmbeddingLookupOptions::new()
        .lookup_grad(&[s0.view(), s1.view()], &ids, &grad)
        .unwrap();
    let (t0, t1, ti, tg) = (
        t(s0.clone()),
        t(s1.clone()),
        t(ids.clone()),
        t(grad.clone()),
    );
    let op = registry::find("embedding_lookup_grad").unwrap();
    let inputs = [
        Input::List(vec![t0.view(), t1.view()]),
        Input::from(ti.view()),
        Input::from(tg.view()),
    ];
    let Some(Value::Sparse(by_name)) = op.run(&inputs, Out::New).unwrap() else {
        panic!("a sparse gradient per shard");
    };
    let want: Vec<SparseGrad> = typed.into_iter().map(SparseGrad::from).collect();
    assert_eq!(by_name, want);
    assert_eq!(by_name[1].indices, [0]);
    assert_eq!(by_name[1].dense_shape, [1, 2]);
    assert_eq!(by_name[1].values, t(array![[2.0f32, 2.0]].into_dyn()));
    // Several tensors go into no caller's buffer.
    let mut buffer = Tensor::zeros(DType::F32, &[3, 2]).unwrap();
    let err = op.run(&inputs, Out::Into(buffer.view_mut())).unwrap_err();
    assert!(err.to_string().contains("several tensors"), "{err}");

    // embedding_bag's dense gradient, PyTorch's default: bags [0] and [2, 2], summed.
    let table = ndgather::ndarray::ArrayD::<f64>::zeros(ndgather::ndarray::IxDyn(&[3, 1]));
    let (input, offsets) = (array![0i64, 2, 2].into_dyn(), array![0i64, 1]);
    let upstream = array![[1.0f64], [1.0]].into_dyn();
    let bag = EmbeddingBag::new(BagMode::Sum);
    let typed = bag
        .bag_grad(
            &[table.view()],
            &input.view(),
            Some(&offsets.view()),
            None,
            &upstream.view(),
        )
        .unwrap();
    let (tt, tin, toff, tup) = (
        t(table.clone()),
        t(input.clone()),
        t(offsets.clone().into_dyn()),
        t(upstream.clone()),
    );
    let inputs = [
        Input::List(vec![tt.view()]),
        Input::from(tin.view()),
        Input::from(tup.view()),
        Input::from(toff.view()),
    ];
    for sparse in [false, true] {
        let attrs = Attrs::new()
            .with("mode", Attr::Str("sum".into()))
            .with("sparse", Attr::Bool(sparse));
        let op = registry::find("embedding_bag_grad")
            .unwrap()
            .with_attrs(&attrs)
            .unwrap();
        match op.run(&inputs, Out::New).unwrap() {
            Some(Value::List(dense)) if !sparse => {
                assert_eq!(dense, vec![t(typed[0].to_dense().unwrap())]);
                assert_eq!(dense[0], t(array![[1.0f64], [0.0], [2.0]].into_dyn()));
            }
            Some(Value::Sparse(slices)) if sparse => {
                assert_eq!(slices, vec![SparseGrad::from(typed[0].clone())]);
            }
            other => panic!("sparse={sparse}: {other:?}"),
        }
    }
}

proptest::proptest! {
    /// Every attribute of every op reads back the text of a value of its kind
    /// (`Attr::text`, which PyTorch's C++ kernel passes for a tangent's attributes).
    #[test]
    fn an_attribute_reads_back_its_text(
        int in proptest::num::i64::ANY,
        float in proptest::num::f64::ANY,
        flag in proptest::bool::ANY,
        ints in proptest::collection::vec(proptest::num::i64::ANY, 0..4),
        bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..9),
    ) {
        for name in registry::names() {
            for def in registry::find(name).unwrap().signature().attrs {
                let values = match def.kind {
                    AttrKind::Int => vec![Attr::Int(int)],
                    AttrKind::Float => vec![Attr::Float(float)],
                    // (A whole number reads back as an integer fill.)
                    AttrKind::Fill if float.fract() != 0.0 || !float.is_finite() => {
                        vec![Attr::Int(int), Attr::Float(float), Attr::Bytes(bytes.clone())]
                    }
                    AttrKind::Fill => vec![Attr::Int(int), Attr::Bytes(bytes.clone())],
                    AttrKind::Bool => vec![Attr::Bool(flag)],
                    AttrKind::Ints => vec![Attr::Ints(ints.clone())],
                    AttrKind::Str(choices) => {
                        choices.iter().map(|c| Attr::Str((*c).into())).collect()
                    }
                    _ => vec![],
                };
                for value in values {
                    let back = def.parse(&value.text());
                    let same = match (&back, &value) {
                        (Ok(Attr::Float(a)), Attr::Float(b)) => a.to_bits() == b.to_bits()
                            || a.is_nan() && b.is_nan(),
                        (back, value) => back.as_ref() == Ok(value),
                    };
                    proptest::prop_assert!(same, "{name}.{}: {value:?} gave {back:?}", def.name);
                }
            }
        }
    }
}
