//! The registry's fact of where an op is linear (`OpDef::linear`), which the front ends'
//! forward mode runs on: for every op that states it, the op run on its linear inputs'
//! tangents, with its tangent attributes, is its derivative (`f(x + t) - f(x) = f_t(t)`,
//! the other inputs held) and is linear in them; the ops that do not state it are those
//! that are not linear. Of those, the routed ones (`OpDef::routed`: a max, a min, a
//! product) have a derivative along a linear op's routes, which is the gradient's transpose.

use ndgather::ndarray::{arr1, arr2, ArrayD, Axis};
use ndgather::registry::{self, Attr, Attrs, Input, SparseGrad, Value};
use ndgather::{Out, Tensor};
use proptest::prelude::*;

/// An input as a case owns it.
#[derive(Clone)]
enum Given {
    T(Tensor),
    List(Vec<Tensor>),
    None,
}

impl Given {
    fn input(&self) -> Input<'_> {
        match self {
            Given::T(t) => Input::from(t.view()),
            Given::List(l) => Input::List(l.iter().map(Tensor::view).collect()),
            Given::None => Input::None,
        }
    }

    /// The float tensors, in order (a list's each).
    fn floats(&self) -> Vec<&ArrayD<f64>> {
        match self {
            Given::T(Tensor::F64(a)) => vec![a],
            Given::List(l) => l.iter().filter_map(f64s).collect(),
            _ => vec![],
        }
    }

    /// The same input with its float tensors' values from `next`.
    fn map(&self, next: &mut impl FnMut(&ArrayD<f64>) -> ArrayD<f64>) -> Given {
        let one = |t: &Tensor, next: &mut dyn FnMut(&ArrayD<f64>) -> ArrayD<f64>| match t {
            Tensor::F64(a) => Tensor::F64(next(a)),
            other => other.clone(),
        };
        match self {
            Given::T(t) => Given::T(one(t, next)),
            Given::List(l) => Given::List(l.iter().map(|t| one(t, next)).collect()),
            Given::None => Given::None,
        }
    }
}

fn f64s(t: &Tensor) -> Option<&ArrayD<f64>> {
    match t {
        Tensor::F64(a) => Some(a),
        _ => None,
    }
}

fn f(a: ArrayD<f64>) -> Given {
    Given::T(Tensor::F64(a))
}

fn i(a: ArrayD<i64>) -> Given {
    Given::T(Tensor::I64(a))
}

fn table(rows: usize) -> ArrayD<f64> {
    ArrayD::from_shape_fn(vec![rows, 2], |ix| (ix[0] * 2 + ix[1]) as f64 - 3.0)
}

/// One call of an op: its name, attributes and inputs.
struct Case(&'static str, Attrs, Vec<Given>);

fn attrs(items: &[(&'static str, Attr)]) -> Attrs {
    let mut a = Attrs::new();
    for (k, v) in items {
        a.insert(*k, v.clone());
    }
    a
}

fn s(v: &'static str) -> Attr {
    Attr::Str(v.into())
}

/// A call of each op the registry says is linear under the call's attributes.
fn linear_cases() -> Vec<Case> {
    let ids = || i(arr1(&[2i64, 0, 2]).into_dyn());
    let up = |rows: usize| f(table(rows));
    let sparse = || {
        vec![
            i(arr2(&[[0i64, 0], [0, 1], [1, 0]]).into_dyn()),
            i(arr1(&[1i64, 3, 2]).into_dyn()),
            i(arr1(&[2i64, 2]).into_dyn()),
        ]
    };
    let sp_weights = || {
        vec![
            f(arr1(&[0.5, 2.0, 1.5]).into_dyn()),
            i(arr2(&[[0i64, 0], [0, 1], [1, 0]]).into_dyn()),
            i(arr1(&[2i64, 2]).into_dyn()),
        ]
    };
    let fill = [("bad_indices", s("fill")), ("fill_value", Attr::Float(7.5))];
    let along = || i(arr2(&[[1i64], [0], [5]]).into_dyn());
    let scatter = || i(arr2(&[[1i64], [1]]).into_dyn());
    let mut cases = vec![
        Case("gather", Attrs::new(), vec![up(4), ids()]),
        // A bad index filled: the fill is constant, its tangent zero.
        Case(
            "gather",
            attrs(&fill),
            vec![up(4), i(arr1(&[2i64, 9, 0]).into_dyn())],
        ),
        Case(
            "gather_nd",
            attrs(&fill),
            vec![up(3), i(arr2(&[[1i64, 1], [4, 0]]).into_dyn())],
        ),
        Case(
            "take_along_axis",
            attrs(&[("axis", Attr::Int(1)), fill[0].clone(), fill[1].clone()]),
            vec![up(3), along()],
        ),
        Case(
            "put_along_axis",
            attrs(&[("axis", Attr::Int(1)), ("bad_indices", s("ignore"))]),
            vec![up(3), along(), f(ArrayD::ones(vec![3, 1]))],
        ),
        Case(
            "put_along_axis",
            attrs(&[("axis", Attr::Int(1)), fill[0].clone()]),
            vec![up(3), along(), f(ArrayD::ones(vec![3, 1]))],
        ),
        Case(
            "scatter_nd",
            attrs(&[("shape", Attr::Ints(vec![3, 2]))]),
            vec![scatter(), up(2)],
        ),
        Case(
            "embedding_lookup",
            Attrs::new(),
            vec![
                Given::List(vec![Tensor::F64(table(4)), Tensor::F64(table(3))]),
                i(arr1(&[0i64, 5, 3]).into_dyn()),
            ],
        ),
        Case(
            "embedding_lookup_sparse",
            attrs(&[("combiner", s("mean"))]),
            [
                vec![Given::List(vec![Tensor::F64(table(4))])],
                sparse(),
                sp_weights(),
            ]
            .concat(),
        ),
        Case(
            "embedding_lookup_sparse",
            attrs(&[("combiner", s("sum"))]),
            [
                vec![Given::List(vec![Tensor::F64(table(4))])],
                sparse(),
                sp_weights(),
            ]
            .concat(),
        ),
        Case(
            "gather_grad",
            attrs(&[("params_shape", Attr::Ints(vec![4, 2]))]),
            vec![ids(), up(3), Given::None],
        ),
        Case(
            "gather_nd_grad",
            attrs(&[("params_shape", Attr::Ints(vec![4, 2]))]),
            vec![i(arr2(&[[1i64], [1]]).into_dyn()), up(2), Given::None],
        ),
        Case(
            "take_along_axis_grad",
            attrs(&[
                ("arr_shape", Attr::Ints(vec![3, 2])),
                ("axis", Attr::Int(1)),
            ]),
            vec![
                i(arr2(&[[1i64], [0], [1]]).into_dyn()),
                f(ArrayD::ones(vec![3, 1])),
            ],
        ),
        Case(
            "embedding_lookup_grad",
            attrs(&[("max_norm", Attr::Float(1.5))]),
            vec![Given::List(vec![Tensor::F64(table(4))]), ids(), up(3)],
        ),
        Case(
            "embedding_lookup_sparse_grad",
            Attrs::new(),
            [
                vec![Given::List(vec![Tensor::F64(table(4))])],
                sparse(),
                vec![up(2)],
                sp_weights(),
            ]
            .concat(),
        ),
        Case(
            "embedding_bag_grad",
            attrs(&[("mode", s("max"))]),
            vec![
                Given::List(vec![Tensor::F64(table(5))]),
                i(arr1(&[0i64, 2, 4, 1]).into_dyn()),
                up(2),
                i(arr1(&[0i64, 2]).into_dyn()),
                Given::None,
            ],
        ),
    ];
    for kind in ["update", "add", "sub"] {
        let name = match kind {
            "update" => "tensor_scatter_nd_update",
            "add" => "tensor_scatter_nd_add",
            _ => "tensor_scatter_nd_sub",
        };
        cases.push(Case(name, Attrs::new(), vec![up(3), scatter(), up(2)]));
        // A bad index vector under the fill policy: its update is dropped, its gradient
        // zero (not the NaN a gather would fill it with).
        // (Repeated, so that the update's gradient is not its tangent's transpose.)
        let bad = || i(arr2(&[[1i64], [7], [1]]).into_dyn());
        cases.push(Case(name, attrs(&fill[..1]), vec![up(3), bad(), up(3)]));
    }
    for (reduce, include_self) in [("sum", true), ("mean", true), ("mean", false)] {
        cases.push(Case(
            "scatter_reduce",
            attrs(&[
                ("dim", Attr::Int(0)),
                ("reduce", s(reduce)),
                ("include_self", Attr::Bool(include_self)),
            ]),
            vec![up(3), i(arr2(&[[0i64, 2], [0, 0]]).into_dyn()), up(2)],
        ));
    }
    for mode in ["sum", "mean"] {
        let weights = match mode {
            "sum" => f(arr1(&[1.0, 2.0, 0.5, 3.0]).into_dyn()),
            _ => Given::None,
        };
        cases.push(Case(
            "embedding_bag",
            attrs(&[("mode", s(mode))]),
            vec![
                Given::List(vec![Tensor::F64(table(5))]),
                i(arr1(&[0i64, 2, 4, 1]).into_dyn()),
                i(arr1(&[0i64, 2]).into_dyn()),
                weights,
            ],
        ));
    }
    let seg = || i(arr1(&[0i64, 0, 1, 3]).into_dyn());
    for name in ["segment_sum", "segment_mean"] {
        cases.push(Case(name, Attrs::new(), vec![up(4), seg()]));
    }
    for name in [
        "unsorted_segment_sum",
        "unsorted_segment_mean",
        "unsorted_segment_sqrt_n",
    ] {
        let a = attrs(&[("num_segments", Attr::Int(3))]);
        cases.push(Case(
            name,
            a,
            vec![up(4), i(arr1(&[0i64, 2, 0, 0]).into_dyn())],
        ));
    }
    for reduce in ["sum", "mean"] {
        cases.push(Case(
            "gather_segment",
            attrs(&[("num_segments", Attr::Int(2)), ("reduce", s(reduce))]),
            vec![
                up(4),
                i(arr1(&[0i64, 1, 3]).into_dyn()),
                i(arr1(&[1i64, 1, 0]).into_dyn()),
            ],
        ));
    }
    cases
}

/// The op's result as its float tensors, in order.
fn run(name: &str, attrs: &Attrs, inputs: &[Given]) -> Vec<ArrayD<f64>> {
    let op = registry::find(name).unwrap().with_attrs(attrs).unwrap();
    let inputs: Vec<Input<'_>> = inputs.iter().map(Given::input).collect();
    let tensors = match op.run(&inputs, Out::New).unwrap().unwrap() {
        Value::Dense(t) => vec![t],
        Value::List(l) => l,
        // TensorFlow's IndexedSlices, summed as tf.convert_to_tensor does.
        Value::Sparse(grads) => grads.iter().map(dense).collect(),
        other => panic!("{name}: a dense result, a list or sparse rows, not {other:?}"),
    };
    tensors.iter().filter_map(f64s).cloned().collect()
}

fn dense(g: &SparseGrad) -> Tensor {
    let values = f64s(&g.values).expect("float64 rows");
    let mut out = ArrayD::zeros(g.dense_shape.clone());
    for (k, &row) in g.indices.iter().enumerate() {
        let mut to = out.index_axis_mut(Axis(0), row);
        to += &values.index_axis(Axis(0), k);
    }
    Tensor::F64(out)
}

/// The inputs with the linear ones' float tensors from `next`.
fn with_linear(
    inputs: &[Given],
    linear: &[usize],
    mut next: impl FnMut(&ArrayD<f64>) -> ArrayD<f64>,
) -> Vec<Given> {
    inputs
        .iter()
        .enumerate()
        .map(|(k, g)| match linear.contains(&k) {
            true => g.map(&mut next),
            false => g.clone(),
        })
        .collect()
}

/// Arrays of `a`'s shape of small integers from -8 to 8 (so that sums are exact), from a
/// xorshift generator seeded with `seed` (not zero).
fn small_integers(mut seed: u64) -> impl FnMut(&ArrayD<f64>) -> ArrayD<f64> {
    move |a: &ArrayD<f64>| {
        a.mapv(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 17) as f64 - 8.0
        })
    }
}

fn close(got: &[ArrayD<f64>], want: &[ArrayD<f64>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.shape(), w.shape(), "{what}");
        for (a, b) in g.iter().zip(w) {
            assert!(
                (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
                "{what}: {g} != {w}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `f(x + t) - f(x)` is `f_t(t)`, and `f_t` is linear, for random tangents `t` (small
    /// integers, so that sums are exact).
    #[test]
    fn the_tangent_op_is_the_derivative(seed in any::<u64>()) {
        let mut draw = small_integers(seed | 1);
        for Case(name, attrs, inputs) in linear_cases() {
            let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
            let linear = op.linear().unwrap_or_else(|| panic!("{name} {attrs:?} is linear"));
            let mut tangent_attrs = attrs.clone();
            for (k, v) in &linear.tangent_attrs {
                tangent_attrs.insert(*k, v.clone());
            }
            let (t1, t2) = (with_linear(&inputs, &linear.inputs, &mut draw),
                            with_linear(&inputs, &linear.inputs, &mut draw));
            let pick = |g: &[Given]| -> Vec<ArrayD<f64>> {
                linear.inputs.iter().flat_map(|&k| g[k].floats()).cloned().collect()
            };
            // x + t1, against f(x) + f_t(t1).
            let mut ts = pick(&t1).into_iter();
            let moved = with_linear(&inputs, &linear.inputs, |a| a + &ts.next().unwrap());
            let diff: Vec<_> = run(name, &attrs, &moved).iter()
                .zip(run(name, &attrs, &inputs)).map(|(a, b)| a - &b).collect();
            let tangent = run(name, &tangent_attrs, &t1);
            close(&diff, &tangent, &format!("{name} {attrs:?}: f(x + t) - f(x)"));
            // f_t(2 t1 - 3 t2) = 2 f_t(t1) - 3 f_t(t2).
            let (mut a, mut b) = (pick(&t1).into_iter(), pick(&t2).into_iter());
            let mixed = with_linear(&inputs, &linear.inputs,
                                    |_| 2.0 * a.next().unwrap() - 3.0 * b.next().unwrap());
            let want: Vec<_> = tangent.iter().zip(run(name, &tangent_attrs, &t2))
                .map(|(x, y)| 2.0 * x - 3.0 * y).collect();
            close(&run(name, &tangent_attrs, &mixed), &want, &format!("{name}: linear"));
        }
    }
}

/// Which ops state it: each linear one, under the attributes that make it so; none of the
/// others (a max, a min, a product, a `max_norm`), whose forward mode the front ends refuse.
#[test]
fn every_op_says_whether_it_is_linear() {
    let linear: std::collections::BTreeSet<&str> =
        linear_cases().iter().map(|Case(n, ..)| *n).collect();
    let not_linear = [
        ("tensor_scatter_nd_min", Attrs::new()),
        ("tensor_scatter_nd_max", Attrs::new()),
        (
            "scatter_reduce",
            attrs(&[("dim", Attr::Int(0)), ("reduce", s("prod"))]),
        ),
        (
            "scatter_reduce",
            attrs(&[("dim", Attr::Int(0)), ("reduce", s("amax"))]),
        ),
        (
            "scatter_reduce",
            attrs(&[("dim", Attr::Int(0)), ("reduce", s("amin"))]),
        ),
        ("embedding_lookup", attrs(&[("max_norm", Attr::Float(1.0))])),
        (
            "embedding_lookup_sparse",
            attrs(&[("max_norm", Attr::Float(1.0))]),
        ),
        ("embedding_bag", attrs(&[("mode", s("max"))])),
        ("embedding_bag", attrs(&[("max_norm", Attr::Float(1.0))])),
        ("segment_max", Attrs::new()),
        ("segment_min", Attrs::new()),
        ("segment_prod", Attrs::new()),
        (
            "gather_segment",
            attrs(&[("num_segments", Attr::Int(2)), ("reduce", s("max"))]),
        ),
    ];
    for (name, a) in &not_linear {
        let op = registry::find(name).unwrap().with_attrs(a).unwrap();
        assert!(op.linear().is_none(), "{name} {a:?}");
    }
    for reduce in ["max", "min", "prod"] {
        let name = format!("unsorted_segment_{reduce}");
        let op = registry::find(&name).unwrap();
        let op = op
            .with_attrs(&attrs(&[("num_segments", Attr::Int(2))]))
            .unwrap();
        assert!(op.linear().is_none(), "{name}");
    }
    // Every op of the registry is in one list or the other.
    for name in registry::names() {
        let named = linear.contains(name)
            || not_linear.iter().any(|(n, _)| *n == name)
            || name.starts_with("unsorted_segment_");
        assert!(named, "{name}: say whether it is linear, with a case");
    }
}

/// The inputs' tensors, flat, as a gradient lists them: one entry per tensor of a list, one
/// for an input left out.
fn flat(inputs: &[Given]) -> Vec<Option<&Tensor>> {
    inputs
        .iter()
        .flat_map(|g| match g {
            Given::T(t) => vec![Some(t)],
            Given::List(l) => l.iter().map(Some).collect(),
            Given::None => vec![None],
        })
        .collect()
}

fn dot(a: &ArrayD<f64>, b: &ArrayD<f64>) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Where the op says its gradient is its tangent's transpose (`Linear::adjoint`), which the
/// front ends' second derivatives use, `<f_t(t), u> = <t, grad(u)>` for random `t` and `u`;
/// a scatter update, which says it is not, breaks it where indices repeat.
#[test]
fn the_gradient_is_the_tangents_transpose_where_it_says_so() {
    let mut draw = small_integers(0x9e37_79b9_7f4a_7c15u64);
    let mut checked = 0;
    for Case(name, attrs, inputs) in linear_cases() {
        let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
        if !op.has_grad() {
            continue;
        }
        let linear = op.linear().unwrap();
        let mut tangent_attrs = attrs.clone();
        for (k, v) in &linear.tangent_attrs {
            tangent_attrs.insert(*k, v.clone());
        }
        let t = with_linear(&inputs, &linear.inputs, &mut draw);
        let out = run(name, &tangent_attrs, &t).remove(0);
        let u = draw(&out);
        let views: Vec<Input<'_>> = inputs.iter().map(Given::input).collect();
        let output = run(name, &attrs, &inputs).remove(0);
        let output = Tensor::F64(output);
        let grads = op
            .grad(&views, Some(&output.view()), &Tensor::F64(u.clone()).view())
            .unwrap();
        let (given, tangents) = (flat(&inputs), flat(&t));
        assert_eq!(grads.len(), given.len(), "{name}: a gradient per tensor");
        let mut rhs = 0.0;
        let owners = inputs.iter().enumerate().flat_map(|(k, g)| match g {
            Given::List(l) => vec![k; l.len()],
            _ => vec![k],
        });
        for ((g, t), k) in grads.iter().zip(&tangents).zip(owners) {
            if let (Some(Tensor::F64(g)), Some(Tensor::F64(t)), true) =
                (g, t, linear.inputs.contains(&k))
            {
                rhs += dot(t, g);
            }
        }
        let lhs = dot(&out, &u);
        let equal = (lhs - rhs).abs() <= 1e-9 * (1.0 + lhs.abs());
        assert_eq!(
            equal, linear.adjoint,
            "{name} {attrs:?}: <f_t(t), u> = {lhs}, <t, grad(u)> = {rhs}"
        );
        checked += 1;
    }
    assert!(checked >= 15, "{checked} ops with a gradient checked");
}

/// A call of each routed op: ties, repeated indices, a dropped segment id, and each
/// scatter_reduce with and without its input.
fn routed_cases() -> Vec<Case> {
    let data = || f(arr2(&[[3.0, -1.0], [3.0, 2.0], [-4.0, 2.0], [5.0, 0.5]]).into_dyn());
    let sorted = || i(arr1(&[0i64, 0, 1, 1]).into_dyn());
    let unsorted = || i(arr1(&[1i64, -1, 1, 0]).into_dyn());
    let two = [("num_segments", Attr::Int(2))];
    let mut cases = Vec::new();
    for reduce in ["max", "min", "prod"] {
        let sorted_name = ["segment_", reduce].concat().leak();
        let unsorted_name = ["unsorted_segment_", reduce].concat().leak();
        cases.push(Case(sorted_name, Attrs::new(), vec![data(), sorted()]));
        cases.push(Case(unsorted_name, attrs(&two), vec![data(), unsorted()]));
    }
    let tensor = || f(arr2(&[[1.0, 2.0], [3.0, -1.0], [0.0, 0.0]]).into_dyn());
    let at = || i(arr2(&[[1i64], [0], [1]]).into_dyn());
    let updates = || f(arr2(&[[3.0, 4.0], [1.0, 2.0], [-2.0, -1.0]]).into_dyn());
    for name in ["tensor_scatter_nd_max", "tensor_scatter_nd_min"] {
        cases.push(Case(name, Attrs::new(), vec![tensor(), at(), updates()]));
    }
    let index = || i(arr2(&[[1i64, 0], [1, 2], [0, 0]]).into_dyn());
    let reductions = [
        ("amax", true),
        ("amin", true),
        ("prod", true),
        ("prod", false),
    ];
    for (reduce, include_self) in reductions {
        let a = attrs(&[
            ("dim", Attr::Int(0)),
            ("reduce", s(reduce)),
            ("include_self", Attr::Bool(include_self)),
        ]);
        cases.push(Case(
            "scatter_reduce",
            a,
            vec![tensor(), index(), updates()],
        ));
    }
    cases
}

/// The routed op's tangent as a front end computes it from `registry::route`: the linear
/// op, with the route's attributes, on each tangent times the gradient for ones.
fn routed_tangent(name: &str, attrs: &Attrs, inputs: &[Given], t: &[Given]) -> ArrayD<f64> {
    let op = registry::find(name).unwrap().with_attrs(attrs).unwrap();
    let (routed, linear) = registry::route(name, attrs).unwrap().unwrap();
    let output = Tensor::F64(run(name, attrs, inputs).remove(0));
    let ones = Tensor::F64(ArrayD::ones(output.shape()));
    let views: Vec<Input<'_>> = inputs.iter().map(Given::input).collect();
    let mut factors = op
        .grad(&views, Some(&output.view()), &ones.view())
        .unwrap()
        .into_iter();
    let scaled: Vec<Given> = t
        .iter()
        .enumerate()
        .map(
            |(k, g)| match (factors.next().flatten(), linear.contains(&k), g) {
                (Some(Tensor::F64(m)), true, Given::T(Tensor::F64(t))) => f(m * t),
                _ => g.clone(),
            },
        )
        .collect();
    let mut along = attrs.clone();
    for (k, v) in &routed.attrs {
        along.insert(*k, v.clone());
    }
    run(routed.op, &along, &scaled).remove(0)
}

/// A routed op's tangent is its gradient's transpose, ties and all:
/// `<f_t(t), u> = <t, grad(u)>` for random `t` and `u`.
#[test]
fn a_routed_tangent_is_the_gradients_transpose() {
    let mut draw = small_integers(0x2545_f491_4f6c_dd1du64);
    for Case(name, attrs, inputs) in routed_cases() {
        let (_, linear) = registry::route(name, &attrs).unwrap().unwrap();
        for _ in 0..8 {
            let t = with_linear(&inputs, &linear, &mut draw);
            let jvp = routed_tangent(name, &attrs, &inputs, &t);
            let u = draw(&jvp);
            let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
            let output = Tensor::F64(run(name, &attrs, &inputs).remove(0));
            let views: Vec<Input<'_>> = inputs.iter().map(Given::input).collect();
            let grads = op
                .grad(&views, Some(&output.view()), &Tensor::F64(u.clone()).view())
                .unwrap();
            let rhs: f64 = grads
                .iter()
                .zip(flat(&t))
                .map(|pair| match pair {
                    (Some(Tensor::F64(g)), Some(Tensor::F64(t))) => dot(t, g),
                    _ => 0.0,
                })
                .sum();
            let lhs = dot(&jvp, &u);
            assert!(
                (lhs - rhs).abs() <= 1e-9 * (1.0 + lhs.abs()),
                "{name} {attrs:?}: <f_t(t), u> = {lhs}, <t, grad(u)> = {rhs}"
            );
        }
    }
}

/// Away from ties, a routed op's tangent is its derivative: `(f(x + e t) - f(x)) / e`
/// for a small `e` (a power of two; a product's is exact to `e`).
#[test]
fn a_routed_tangent_is_the_derivative_away_from_ties() {
    let mut draw = small_integers(0x9e37_79b9_7f4a_7c15u64);
    let e = 2f64.powi(-20);
    for Case(name, attrs, inputs) in routed_cases() {
        let (_, linear) = registry::route(name, &attrs).unwrap().unwrap();
        // Distinct values, a quarter apart, none zero: no ties, no crossing within e t.
        let mut next = 0.0;
        let distinct = with_linear(&inputs, &linear, |a| {
            a.mapv(|_| {
                next += 1.0;
                (next * 0.25 + 0.125) * if next as i64 % 2 == 0 { 1.0 } else { -1.0 }
            })
        });
        let t = with_linear(&inputs, &linear, &mut draw);
        let jvp = routed_tangent(name, &attrs, &distinct, &t);
        let mut ts = linear
            .iter()
            .flat_map(|&k| t[k].floats())
            .cloned()
            .collect::<Vec<_>>();
        ts.reverse();
        let moved = with_linear(&distinct, &linear, |a| a + &(e * ts.pop().unwrap()));
        let diff =
            (run(name, &attrs, &moved).remove(0) - run(name, &attrs, &distinct).remove(0)) / e;
        for (a, b) in diff.iter().zip(&jvp) {
            assert!(
                (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                "{name} {attrs:?}: {diff} != {jvp}"
            );
        }
    }
}

/// Which of the ops that are not linear are routed: each max, min and product of the
/// segment reductions and scatters; not a `max_norm`, a bag's max or a gathered segment's
/// max, whose input elements move several outputs, nor `scatter_reduce`'s max without its
/// input, whose gradient (PyTorch's) counts the input among the ties.
#[test]
fn every_routed_op_says_so() {
    for Case(name, attrs, _) in routed_cases() {
        let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
        // A max's and a min's factors (one over the ties) are constant; a product's not.
        let product = name.ends_with("prod") || attrs.get("reduce") == Some(&s("prod"));
        let (routed, _) = registry::route(name, &attrs).unwrap().unwrap();
        assert_eq!(routed.constant_factors, !product, "{name} {attrs:?}");
        assert!(
            op.linear().is_none() && op.routed().is_some(),
            "{name} {attrs:?}"
        );
    }
    let not_routed = [
        ("embedding_lookup", attrs(&[("max_norm", Attr::Float(1.0))])),
        ("embedding_bag", attrs(&[("mode", s("max"))])),
        (
            "gather_segment",
            attrs(&[("num_segments", Attr::Int(2)), ("reduce", s("max"))]),
        ),
        (
            "scatter_reduce",
            attrs(&[
                ("dim", Attr::Int(0)),
                ("reduce", s("amax")),
                ("include_self", Attr::Bool(false)),
            ]),
        ),
    ];
    for (name, a) in &not_routed {
        assert!(registry::route(name, a).unwrap().is_none(), "{name} {a:?}");
    }
    for Case(name, attrs, _) in linear_cases() {
        assert!(
            registry::route(name, &attrs).unwrap().is_none(),
            "{name}: linear"
        );
    }
}

/// Where an op is linear in two groups of inputs apart (`OpDef::multilinear`: a weighted
/// bag's table and weights), the sum of its tangents on each group's tangents is its
/// derivative: `f(x + t) - f(x) - f(t) = f_t(t_a, x_b) + f_t(x_a, t_b)`, exactly, for
/// small integer tangents. Each op says so only where it is not linear jointly.
#[test]
fn a_bilinear_ops_tangent_is_the_sum_of_its_groups() {
    let mut draw = small_integers(0x5851_f42d_4c95_7f2d);
    let mut checked = 0;
    for Case(name, attrs, inputs) in linear_cases() {
        let op = registry::find(name).unwrap().with_attrs(&attrs).unwrap();
        let groups = op.multilinear();
        if groups.is_empty() || matches!(inputs[groups[1].inputs[0]], Given::None) {
            continue;
        }
        assert_eq!(groups.len(), 2, "{name}: two groups");
        let all: Vec<usize> = groups.iter().flat_map(|g| g.inputs.clone()).collect();
        let t = with_linear(&inputs, &all, &mut draw);
        let mut ts = all
            .iter()
            .flat_map(|&k| t[k].floats())
            .cloned()
            .collect::<Vec<_>>();
        ts.reverse();
        let moved = with_linear(&inputs, &all, |a| a + &ts.pop().unwrap());
        let product = run(name, &attrs, &t).remove(0);
        let diff = run(name, &attrs, &moved).remove(0) - run(name, &attrs, &inputs).remove(0);
        let mut jvp = ArrayD::zeros(diff.shape());
        for g in &groups {
            let mut tangent_attrs = attrs.clone();
            for (k, v) in &g.tangent_attrs {
                tangent_attrs.insert(*k, v.clone());
            }
            let given: Vec<Given> = (0..inputs.len())
                .map(|k| {
                    if g.inputs.contains(&k) {
                        t[k].clone()
                    } else {
                        inputs[k].clone()
                    }
                })
                .collect();
            jvp = jvp + run(name, &tangent_attrs, &given).remove(0);
        }
        close(&[diff - product], &[jvp], &format!("{name} {attrs:?}"));
        checked += 1;
    }
    assert_eq!(checked, 2, "a weighted bag and a weighted sparse sum");
}
