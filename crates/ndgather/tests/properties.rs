//! Property tests: gather and gather_nd against the simple reference implementation over
//! random shapes, axes, batch_dims, layouts, dtypes, index types and policies; and the shape
//! rules against the eager ops, with full and partial shape knowledge.

use crate::common;

use common::reference::{self, RefError};
use ndarray::{ArrayD, ArrayViewD, Axis as NdAxis, Dimension, IxDyn, ShapeBuilder, Slice};
use ndgather::registry::Input;
use ndgather::shape::{gather_nd_shape, gather_shape, Axis, Shape};
use ndgather::{
    BadIndices, Complex64, Error, GatherNdOptions, GatherOptions, Op, OpDef, Out, Tensor,
};
use proptest::prelude::*;
use proptest::sample::select;

fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 8 => 1usize..5]
}

fn policy() -> impl Strategy<Value = BadIndices> {
    select(BadIndices::ALL.to_vec())
}

/// Equal arrays, NaN equal to NaN (as `Fill` writes): shapes, then elements as they print.
fn same<T: std::fmt::Debug>(a: &ArrayD<T>, b: &ArrayD<T>) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b)
            .all(|(x, y)| format!("{x:?}") == format!("{y:?}"))
}

/// Index values from seeds: mostly valid for a dimension of size `dim`, some just outside.
fn index_value(seed: (u8, i64), dim: usize) -> i64 {
    let d = dim as i64;
    if seed.0 < 215 {
        seed.1.rem_euclid(d.max(1))
    } else {
        seed.1.rem_euclid(d + 7) - 4
    }
}

/// Runs `f` on a view of `a` with a given memory layout: 0 row-major, 1 column-major,
/// 2 strided (every other element of a larger array), 3 negative stride on the last axis.
fn with_layout<T: Clone + Default, R>(
    a: &ArrayD<T>,
    layout: u8,
    f: impl FnOnce(ArrayViewD<'_, T>) -> R,
) -> R {
    let last = a.ndim().saturating_sub(1);
    match layout {
        1 => {
            let mut fortran = ArrayD::from_elem(IxDyn(a.shape()).f(), T::default());
            fortran.assign(a);
            f(fortran.view())
        }
        2 if a.ndim() > 0 => {
            let mut big_shape = a.shape().to_vec();
            big_shape[last] *= 2;
            let big = ArrayD::from_shape_fn(IxDyn(&big_shape), |ix| {
                let mut ix = ix.slice().to_vec();
                if ix[last] % 2 == 1 {
                    return T::default();
                }
                ix[last] /= 2;
                a[IxDyn(&ix)].clone()
            });
            f(big.slice_axis(NdAxis(last), Slice::new(0, None, 2)))
        }
        3 if a.ndim() > 0 => {
            let n = a.shape()[last];
            let rev = ArrayD::from_shape_fn(IxDyn(a.shape()), |ix| {
                let mut ix = ix.slice().to_vec();
                ix[last] = n - 1 - ix[last];
                a[IxDyn(&ix)].clone()
            });
            f(rev.slice_axis(NdAxis(last), Slice::new(0, None, -1)))
        }
        _ => f(a.view()),
    }
}

/// Text of varied length for element `k`: empty for some, multi-byte characters in others.
fn text(k: usize) -> String {
    format!("{}{}", "é".repeat(k % 3), "x".repeat(k % 5))
}

/// One call on `String`s of `shape` (see [`text`]), through the typed API (itself checked
/// against the reference) and through a [`Strings`], gives the same shape and elements, or
/// the same error.
fn strings_agree(
    shape: &[usize],
    typed: impl Fn(&ArrayD<String>) -> Result<ArrayD<String>, Error>,
    op: Op,
    indices: &ArrayD<i64>,
) -> Result<(), TestCaseError> {
    let params = params_of(shape, text);
    // The dtype-erased door: a tensor of strings is packed into one buffer.
    let (packed, indices) = (Tensor::from(params.clone()), Tensor::from(indices.clone()));
    let inputs = [Input::from(packed.view()), Input::from(indices.view())];
    let ours =
        OpDef::run(&op, &inputs, Out::New).and_then(|v| v.expect("a new output").into_dense());
    match (typed(&params), ours) {
        (Ok(a), Ok(Tensor::String(s))) => {
            prop_assert_eq!(s.shape(), a.shape());
            prop_assert_eq!(&s.to_array(), &a);
            prop_assert_eq!(s.byte_len(), a.iter().map(String::len).sum::<usize>());
        }
        (Ok(_), Ok(other)) => prop_assert!(false, "a result of {}", other.dtype()),
        (a, b) => prop_assert_eq!(a.err(), b.err()),
    }
    Ok(())
}

fn params_of<T>(shape: &[usize], make: impl Fn(usize) -> T) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(make).collect()).unwrap()
}

/// Whether our error and the reference's name the same bad index.
fn same_error(ours: &Error, theirs: &RefError) -> bool {
    match (ours, theirs) {
        (
            Error::BadIndex {
                position, value, ..
            },
            RefError::BadIndex(p, v),
        ) => position == p && *value == *v as i128,
        (
            Error::BadIndexVector {
                position, values, ..
            },
            RefError::BadIndexVector(p, v),
        ) => position == p && values.iter().copied().eq(v.iter().map(|&x| x as i128)),
        _ => false,
    }
}

/// Our result and the reference's are the same array, or name the same bad index.
fn agrees<T: PartialEq + std::fmt::Debug>(
    ours: &Result<ArrayD<T>, Error>,
    theirs: &Result<ArrayD<T>, RefError>,
) -> Result<(), TestCaseError> {
    match (ours, theirs) {
        (Ok(a), Ok(b)) => prop_assert!(same(a, b), "ours {:?}, reference {:?}", a, b),
        (Err(a), Err(b)) => prop_assert!(same_error(a, b), "ours {:?}, reference {:?}", a, b),
        _ => prop_assert!(false, "ours {:?}, reference {:?}", ours, theirs),
    }
    Ok(())
}

/// `dims` with the dimensions marked in `unknown` made unknown.
fn masked(dims: &[usize], unknown: &[bool]) -> Shape {
    Shape::from_dims(
        dims.iter()
            .zip(unknown)
            .map(|(&d, &u)| if u { None } else { Some(d) })
            .collect(),
    )
}

#[derive(Debug, Clone)]
struct GatherCase {
    params: Vec<usize>,
    indices: Vec<usize>,
    axis: usize,
    batch_dims: usize,
    seeds: Vec<(u8, i64)>,
    policy: BadIndices,
    layout: u8,
    negative_axis: bool,
    negative_batch_dims: bool,
    default_axis: bool,
    unknown_mask: Vec<bool>,
}

fn gather_case() -> impl Strategy<Value = GatherCase> {
    (1usize..=4)
        .prop_flat_map(|rank| (prop::collection::vec(dim(), rank), 0..rank, 0usize..=2))
        .prop_flat_map(|(params, bd, extra)| {
            let rank = params.len();
            (
                Just(params),
                Just(bd),
                bd..rank,
                prop::collection::vec(dim(), extra),
            )
        })
        .prop_flat_map(|(params, bd, axis, extra)| {
            let mut indices = params[..bd].to_vec();
            indices.extend(extra);
            let n: usize = indices.iter().product();
            let ranks = params.len() + indices.len();
            (
                (Just(params), Just(indices), Just(axis), Just(bd)),
                prop::collection::vec((any::<u8>(), 0i64..1000), n),
                (
                    policy(),
                    0u8..4,
                    any::<bool>(),
                    any::<bool>(),
                    any::<bool>(),
                ),
                prop::collection::vec(any::<bool>(), ranks),
            )
        })
        .prop_map(
            |(
                (params, indices, axis, batch_dims),
                seeds,
                (policy, layout, na, nb, da),
                unknown_mask,
            )| {
                GatherCase {
                    params,
                    indices,
                    axis,
                    batch_dims,
                    seeds,
                    policy,
                    layout,
                    negative_axis: na,
                    negative_batch_dims: nb,
                    default_axis: da,
                    unknown_mask,
                }
            },
        )
}

impl GatherCase {
    fn options(&self) -> GatherOptions {
        // batch_dims == rank(indices) has no negative form (-0 is 0).
        let bd = if self.negative_batch_dims && self.batch_dims < self.indices.len() {
            self.batch_dims as i64 - self.indices.len() as i64
        } else {
            self.batch_dims as i64
        };
        let mut o = GatherOptions::new().batch_dims(bd).bad_indices(self.policy);
        if !(self.default_axis && self.axis == self.batch_dims) {
            let axis = if self.negative_axis {
                self.axis as i64 - self.params.len() as i64
            } else {
                self.axis as i64
            };
            o = o.axis(axis);
        }
        o
    }

    fn indices(&self) -> ArrayD<i64> {
        let dim = self.params[self.axis];
        let values = self.seeds.iter().map(|&s| index_value(s, dim)).collect();
        ArrayD::from_shape_vec(IxDyn(&self.indices), values).unwrap()
    }

    fn check<T: Clone + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static>(
        &self,
        make: impl Fn(usize) -> T,
    ) -> Result<(), TestCaseError> {
        let params = params_of(&self.params, make);
        let indices = self.indices();
        let options = self.options();
        let ours = with_layout(&params, self.layout, |p| options.gather(&p, &indices));
        let theirs = reference::gather(&params, &indices, self.axis, self.batch_dims, self.policy);
        agrees(&ours, &theirs)?;
        // The same through i32 indices and into a caller's column-major buffer.
        let narrow = indices.mapv(|v| v as i32);
        match (options.gather(&params, &narrow), &ours) {
            (Ok(a), Ok(b)) => prop_assert!(same(&a, b)),
            (a, b) => prop_assert_eq!(a.err(), b.clone().err()),
        }
        if let Ok(expected) = &ours {
            let mut out = ArrayD::from_elem(IxDyn(expected.shape()).f(), T::default());
            options
                .gather_into(&params, &indices, out.view_mut())
                .unwrap();
            prop_assert!(same(&out, expected), "into {out:?} vs {expected:?}");
        }
        Ok(())
    }

    fn check_strings(&self) -> Result<(), TestCaseError> {
        let (indices, options) = (self.indices(), self.options());
        strings_agree(
            &self.params,
            |p| options.gather(p, &indices),
            Op::Gather(options),
            &indices,
        )
    }

    fn check_shape_rule(&self) -> Result<(), TestCaseError> {
        let params = params_of(&self.params, |k| k as u8);
        let options = self.options();
        let out = options.gather(&params, &self.indices());
        let axis = options.axis.map_or(Axis::Default, Axis::Given);
        let rule = gather_shape(
            &Shape::known(&self.params),
            &Shape::known(&self.indices),
            axis,
            options.batch_dims,
            None,
        );
        match &out {
            Ok(out) => prop_assert_eq!(rule.unwrap().output, Shape::known(out.shape())),
            Err(Error::BadIndex { .. }) => prop_assert!(rule.is_ok()),
            Err(e) => prop_assert_eq!(rule.unwrap_err(), e.clone()),
        }
        // With some dimensions unknown the rule may know less, never contradict.
        let (pm, im) = self.unknown_mask.split_at(self.params.len());
        let partial = gather_shape(
            &masked(&self.params, pm),
            &masked(&self.indices, im),
            axis,
            options.batch_dims,
            None,
        );
        if let Ok(out) = &out {
            prop_assert!(partial.unwrap().output.accepts(out.shape()));
        }
        let unknown_axis = gather_shape(
            &Shape::known(&self.params),
            &Shape::known(&self.indices),
            Axis::Unknown,
            self.batch_dims as i64,
            None,
        );
        if let Ok(out) = &out {
            prop_assert_eq!(
                unknown_axis.unwrap().output,
                Shape::unknown_dims(out.ndim())
            );
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
struct GatherNdCase {
    params: Vec<usize>,
    indices: Vec<usize>,
    batch_dims: usize,
    seeds: Vec<(u8, i64)>,
    policy: BadIndices,
    layout: u8,
    unknown_mask: Vec<bool>,
}

fn gather_nd_case() -> impl Strategy<Value = GatherNdCase> {
    (1usize..=4)
        .prop_flat_map(|rank| (prop::collection::vec(dim(), rank), 0..rank, 0usize..=2))
        .prop_flat_map(|(params, bd, extra)| {
            let rank = params.len();
            (
                Just(params),
                Just(bd),
                0..=rank - bd,
                prop::collection::vec(dim(), extra),
            )
        })
        .prop_flat_map(|(params, bd, depth, extra)| {
            let mut indices = params[..bd].to_vec();
            indices.extend(extra);
            indices.push(depth);
            let n: usize = indices.iter().product();
            let ranks = params.len() + indices.len();
            (
                (Just(params), Just(indices), Just(bd)),
                prop::collection::vec((any::<u8>(), 0i64..1000), n),
                (policy(), 0u8..4),
                prop::collection::vec(any::<bool>(), ranks),
            )
        })
        .prop_map(
            |((params, indices, batch_dims), seeds, (policy, layout), unknown_mask)| GatherNdCase {
                params,
                indices,
                batch_dims,
                seeds,
                policy,
                layout,
                unknown_mask,
            },
        )
}

impl GatherNdCase {
    fn indices(&self) -> ArrayD<i64> {
        let depth = *self.indices.last().unwrap();
        let values = self
            .seeds
            .iter()
            .enumerate()
            .map(|(k, &s)| index_value(s, self.params[self.batch_dims + k % depth.max(1)]))
            .collect();
        ArrayD::from_shape_vec(IxDyn(&self.indices), values).unwrap()
    }

    fn options(&self) -> GatherNdOptions {
        GatherNdOptions::new()
            .batch_dims(self.batch_dims as i64)
            .bad_indices(self.policy)
    }

    fn check<T: Clone + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static>(
        &self,
        make: impl Fn(usize) -> T,
    ) -> Result<(), TestCaseError> {
        let params = params_of(&self.params, make);
        let indices = self.indices();
        let options = self.options();
        let ours = with_layout(&params, self.layout, |p| options.gather_nd(&p, &indices));
        if let Err(Error::EmptyParams { params_shape }) = &ours {
            // TensorFlow refuses rows from an empty params, which the reference does not model.
            prop_assert_eq!(params_shape, &self.params);
            prop_assert_eq!(params.len(), 0);
            prop_assert!(
                self.indices[..self.indices.len() - 1]
                    .iter()
                    .product::<usize>()
                    > 0
            );
            return Ok(());
        }
        let theirs = reference::gather_nd(&params, &indices, self.batch_dims, self.policy);
        agrees(&ours, &theirs)?;
        let narrow = indices.mapv(|v| v as i32);
        match (options.gather_nd(&params, &narrow), &ours) {
            (Ok(a), Ok(b)) => prop_assert!(same(&a, b)),
            (a, b) => prop_assert_eq!(a.err(), b.clone().err()),
        }
        if let Ok(expected) = &ours {
            let mut out = ArrayD::from_elem(IxDyn(expected.shape()).f(), T::default());
            options
                .gather_nd_into(&params, &indices, out.view_mut())
                .unwrap();
            prop_assert!(same(&out, expected), "{out:?} vs {expected:?}");
        }
        Ok(())
    }

    fn check_strings(&self) -> Result<(), TestCaseError> {
        let (indices, options) = (self.indices(), self.options());
        strings_agree(
            &self.params,
            |p| options.gather_nd(p, &indices),
            Op::GatherNd(options),
            &indices,
        )
    }

    fn check_shape_rule(&self) -> Result<(), TestCaseError> {
        let params = params_of(&self.params, |k| k as u8);
        let out = self.options().gather_nd(&params, &self.indices());
        let bd = self.batch_dims as i64;
        let rule = gather_nd_shape(
            &Shape::known(&self.params),
            &Shape::known(&self.indices),
            bd,
            None,
        );
        match &out {
            Ok(out) => prop_assert_eq!(rule.unwrap().output, Shape::known(out.shape())),
            Err(Error::BadIndexVector { .. }) => prop_assert!(rule.is_ok()),
            Err(e) => prop_assert_eq!(rule.unwrap_err(), e.clone()),
        }
        let (pm, im) = self.unknown_mask.split_at(self.params.len());
        let partial = gather_nd_shape(
            &masked(&self.params, pm),
            &masked(&self.indices, im),
            bd,
            None,
        );
        if let Ok(out) = &out {
            prop_assert!(partial.unwrap().output.accepts(out.shape()));
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn gather_matches_reference(case in gather_case()) {
        case.check(|k| k as f32 + 0.5)?;
        case.check(|k| format!("s{k}"))?;
        case.check(|k| Complex64::new(k as f64, -(k as f64)))?;
        case.check(|k| k % 3 == 0)?;
    }

    #[test]
    fn gather_of_strings_agrees_with_the_typed_api(case in gather_case()) {
        case.check_strings()?;
    }

    #[test]
    fn gather_shape_rule_agrees_with_eager(case in gather_case()) {
        case.check_shape_rule()?;
    }

    #[test]
    fn gather_nd_matches_reference(case in gather_nd_case()) {
        case.check(|k| k as f64 * 0.25)?;
        case.check(|k| format!("s{k}"))?;
        case.check(|k| (k % 251) as u8)?;
    }

    #[test]
    fn gather_nd_of_strings_agrees_with_the_typed_api(case in gather_nd_case()) {
        case.check_strings()?;
    }

    #[test]
    fn gather_nd_shape_rule_agrees_with_eager(case in gather_nd_case()) {
        case.check_shape_rule()?;
    }
}
