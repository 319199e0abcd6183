//! The gradient of `scatter_reduce`: PyTorch's `scatter_reduce_backward`
//! (`torch/csrc/autograd/FunctionsManual.cpp`), each of its tensor operations an elementwise
//! step in the dtype, in its order, on row-major buffers walked by the forward op's plan.
//! Its `gather(dim, index)` reads the element a position of `index` lands on, its
//! `scatter_add(dim, index, …)` adds into it in the order of `index`; a value the policy
//! dropped (`"ignore"`) lands nowhere, and its gradient is zero. The counts of a mean and of
//! ties are `scatter_add`s, added in the accumulator type as PyTorch adds halves. Two
//! departures: `src`'s gradient has `src`'s shape, zero beyond `index`'s extent (PyTorch's has
//! `index`'s, and its autograd then fails, or broadcasts a size-1 dimension), and complex
//! dtypes are refused with PyTorch's message.

use super::{ReducePlan, Reduction, ScatterReduce};
use crate::engine::layout::row_major;
use crate::ops::contract::no_grad_kernel;
use crate::ops::typed_like;
use crate::types::arith::Arith;
use crate::types::dtype::{DType, Tensor, TensorElement, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::with_tensor;
use ndarray::{ArrayD, ArrayViewD, IxDyn};

/// Where each position of `index` lands in `input` (`None` where the policy dropped it) and
/// which element of `src` it reads.
type Walk = Vec<(Option<usize>, usize)>;

impl ScatterReduce {
    /// The gradients with respect to `input` and `src` of the op's result `output`, for the
    /// upstream gradient `upstream` (both of `input`'s shape and dtype).
    ///
    /// # Errors
    /// The forward op's checks; [`Error::NoKernel`] for a dtype without gradients;
    /// [`Error::InputDType`] and [`Error::GradShapeMismatch`] for an output or upstream
    /// gradient unlike `input`.
    pub(crate) fn grad_views(
        &self,
        (input, index, src): (&TensorView<'_>, &TensorView<'_>, &TensorView<'_>),
        output: &TensorView<'_>,
        upstream: &TensorView<'_>,
    ) -> Result<(Tensor, Tensor)> {
        let dtype = input.dtype();
        let plan = self.check(dtype, input.shape(), index, src)?;
        if matches!(dtype, DType::C64 | DType::C128) {
            return Err(Error::TorchNotImplemented(
                "scatter_reduce does not support automatic differentiation for outputs with \
                 complex dtype."
                    .into(),
            ));
        }
        let given = [
            (output.dtype(), output.shape()),
            (upstream.dtype(), upstream.shape()),
        ];
        for (k, (given, shape)) in given.into_iter().enumerate() {
            if given != dtype {
                return Err(Error::InputDType {
                    op: "ScatterReduceBackward",
                    input: k + 1,
                    expected: dtype,
                    found: given,
                });
            }
            if shape != input.shape() {
                return Err(Error::GradShapeMismatch {
                    expected: input.shape().to_vec(),
                    found: shape.to_vec(),
                });
            }
        }
        with_tensor!(TensorView, input, grad x => {
            let (s, out, g) = (typed_like(x, src)?, typed_like(x, output)?, typed_like(x, upstream)?);
            let walk: Walk = match &plan {
                Some(plan) => with_indices!(index, i => {
                    let idx = row_major(i)?;
                    self.check_indices(&idx, plan)?;
                    self.walk_all(plan, &idx)
                }, else dtype => return Err(Error::IndicesNotInteger { dtype })),
                None => Vec::new(),
            };
            let (d_input, d_src) = self.grads(x, (index, &s), (&out, &g), &walk)?;
            Ok((
                TensorElement::into_tensor(shaped(x.shape(), d_input)?),
                TensorElement::into_tensor(shaped(s.shape(), d_src)?),
            ))
        }, else dtype => Err(no_grad_kernel("ScatterReduceBackward", dtype)))
    }

    fn walk_all<I: crate::types::index::IndexType>(&self, plan: &ReducePlan, idx: &[I]) -> Walk {
        let mut walk = Vec::with_capacity(idx.len());
        plan.walk(idx, self.bad_indices, |t, s| walk.push((t, s)));
        walk
    }

    /// PyTorch's formulas, reduction by reduction.
    fn grads<T: Arith + TensorElement>(
        &self,
        x: &ArrayViewD<'_, T>,
        (index, src): (&TensorView<'_>, &ArrayViewD<'_, T>),
        (output, upstream): (&ArrayViewD<'_, T>, &ArrayViewD<'_, T>),
        walk: &Walk,
    ) -> Result<(Vec<T>, Vec<T>)> {
        let div = T::torch_div().ok_or(Error::Internal("a gradient dtype divides"))?;
        let (xs, s) = (row_major(x)?, row_major(src)?);
        let (out, g) = (row_major(output)?, row_major(upstream)?);
        let zero = T::ZERO;
        // `X.gather(dim, index)` as src's shape: the element each value landed on, zero for
        // the values that landed nowhere (and the positions index does not reach).
        let picked = |f: &dyn Fn(usize) -> T| {
            let mut v = vec![zero; s.len()];
            for &(t, p) in walk {
                if let Some(t) = t {
                    v[p] = f(t);
                }
            }
            v
        };
        let (mut d_self, d_src) = match self.reduce {
            Reduction::Sum => (g.to_vec(), picked(&|t| g[t])),
            Reduction::Mean => {
                let mut n = vec![if self.include_self { T::ONE } else { zero }; xs.len()];
                add_at(&mut n, walk, |_| T::ONE);
                for c in n.iter_mut().filter(|c| **c == zero) {
                    *c = T::ONE;
                }
                let d_self = g.iter().zip(&n).map(|(&g, &n)| div(g, n)).collect();
                (d_self, picked(&|t| div(g[t], n[t])))
            }
            Reduction::Amax | Reduction::Amin => {
                // Ties share the gradient evenly: the count of the input's element and of
                // the values equal to the result, each gradient divided by it.
                let indicator = |equal: bool| if equal { T::ONE } else { zero };
                let mut n: Vec<T> = xs
                    .iter()
                    .zip(out.iter())
                    .map(|(a, b)| indicator(a == b))
                    .collect();
                add_at(&mut n, walk, |(t, p)| indicator(s[p] == out[t]));
                let shared: Vec<T> = g.iter().zip(&n).map(|(&g, &n)| div(g, n)).collect();
                let d_self = xs
                    .iter()
                    .zip(out.iter())
                    .zip(&shared)
                    .map(|((a, b), &d)| indicator(a == b).torch_times(d))
                    .collect();
                let mut d_src = vec![zero; s.len()];
                for &(t, p) in walk {
                    if let Some(t) = t {
                        d_src[p] = indicator(s[p] == out[t]).torch_times(shared[t]);
                    }
                }
                (d_self, d_src)
            }
            Reduction::Prod => {
                let shapes = (x.shape(), src.shape());
                self.prod_grads(shapes, index, (&xs, &s), (&out, &g), walk, div)?
            }
        };
        if !self.include_self {
            // `grad_self.scatter(dim, index, 0)`: the input's elements were replaced.
            for &(t, _) in walk {
                if let Some(t) = t {
                    d_self[t] = zero;
                }
            }
        }
        Ok((d_self, d_src))
    }

    /// `prod`'s gradients, with PyTorch's care for zeros: each element's product of the
    /// others, computed again with the zeros masked (a single zero value's gradient is the
    /// product of the rest, not 0).
    fn prod_grads<T: Arith + TensorElement>(
        &self,
        (x_shape, src_shape): (&[usize], &[usize]),
        index: &TensorView<'_>,
        (xs, s): (&[T], &[T]),
        (out, g): (&[T], &[T]),
        walk: &Walk,
        div: fn(T, T) -> T,
    ) -> Result<(Vec<T>, Vec<T>)> {
        let zero = T::ZERO;
        let unzero = |v: &T| if *v == zero { T::ONE } else { *v };
        let rerun = |input: &[T], values: &[T]| -> Result<Vec<T>> {
            let input = ArrayViewD::from_shape(IxDyn(x_shape), input)
                .map_err(|_| Error::Internal("the input's shape"))?;
            let values = ArrayViewD::from_shape(IxDyn(src_shape), values)
                .map_err(|_| Error::Internal("src's shape"))?;
            let result = self.run_new(T::into_view(input), index, &T::into_view(values))?;
            T::from_tensor_owned(result)
                .map(|a| a.into_iter().collect())
                .map_err(|_| Error::Internal("a scatter_reduce of T gives T"))
        };
        // grad * masked_self_result / masked_self.
        let masked_self: Vec<T> = xs.iter().map(unzero).collect();
        let masked_self_result = rerun(&masked_self, s)?;
        let d_self = g
            .iter()
            .zip(&masked_self_result)
            .zip(&masked_self)
            .map(|((&g, &r), &m)| div(g.torch_times(r), m))
            .collect();
        // How many zero values land on each value's element.
        let mut zeros = vec![zero; xs.len()];
        for &(t, p) in walk {
            if let (Some(t), true) = (t, s[p] == zero) {
                zeros[t] = zeros[t].plus(T::ONE);
            }
        }
        let single = |t: usize, p: usize| s[p] == zero && zeros[t] == T::ONE;
        let mut masked_src = s.to_vec();
        for &(t, p) in walk {
            if t.is_some_and(|t| single(t, p)) {
                masked_src[p] = T::ONE;
            }
        }
        let masked_src_result = rerun(xs, &masked_src)?;
        let mut d_src = vec![zero; s.len()];
        for &(t, p) in walk {
            if let Some(t) = t {
                d_src[p] = if single(t, p) {
                    g[t].torch_times(masked_src_result[t])
                } else {
                    div(g[t].torch_times(out[t]), unzero(&s[p]))
                };
            }
        }
        Ok((d_self, d_src))
    }
}

/// `scatter_add(dim, index, values)` into `counts`: each landed value's `value((element,
/// position))` added in the order of `index`, in the accumulator type and rounded once, as
/// PyTorch's `scatter_add` adds halves (a float16 count passes 2048).
fn add_at<T: Arith>(counts: &mut [T], walk: &Walk, value: impl Fn((usize, usize)) -> T) {
    T::in_acc(counts, |acc| {
        for &(t, p) in walk {
            if let Some(t) = t {
                acc[t] = acc[t].plus(value((t, p)).widen());
            }
        }
    });
}

/// A row-major buffer as an array of `shape`.
fn shaped<T>(shape: &[usize], data: Vec<T>) -> Result<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(shape), data)
        .map_err(|_| Error::Internal("a gradient has its input's shape"))
}
