//! The fused `gather_segment`: graph networks' message passing, `out[dst] ⊕= x[src]`, as one
//! op that never holds the gathered rows.

use crate::engine::layout::{into_array, row_major};
use crate::ops::contract::{
    deliver, not_in_place, AttrDef, AttrKind, Attrs, Fact, Input, InputDef, InputKind, Inputs,
    Linear, OpDef, Parsed, Signature, Value,
};
use crate::ops::segment::{Reduce, Segment};
use crate::ops::Out;
use crate::shape::{Dim, Shape};
use crate::types::arith::Number;
use crate::types::dtype::{Tensor, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::IndexType;
use crate::with_tensor;
use ndarray::{ArrayBase, ArrayD, Data, Dimension};

/// The fused `gather_segment(x, src, dst, num_segments, reduce)`: row `dst[e]` of the output
/// reduces row `src[e]` of `x` for every edge `e`, in edge order; exactly
/// `tf.math.unsorted_segment_<reduce>(tf.gather(x, src), dst, num_segments)`, bit for bit,
/// without the gathered rows in memory (the message passing of PyG's and DGL's graph
/// networks).
///
/// ```
/// use ndgather::ndarray::array;
/// use ndgather::segment::{GatherSegment, Reduce};
/// let x = array![[1.0f32, 10.0], [2.0, 20.0], [3.0, 30.0]];
/// let out = GatherSegment::new(Reduce::Sum, 2).run(&x, &array![0i64, 2, 1], &array![1i64, 1, 0])?;
/// assert_eq!(out, array![[2.0, 20.0], [4.0, 40.0]].into_dyn());
/// # Ok::<(), ndgather::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GatherSegment {
    /// How the rows meeting on one segment combine.
    pub reduce: Reduce,
    /// The output's rows.
    pub num_segments: usize,
}

impl Default for GatherSegment {
    fn default() -> Self {
        GatherSegment::new(Reduce::Sum, 0)
    }
}

impl GatherSegment {
    /// The op reducing with `reduce` into `num_segments` rows.
    pub fn new(reduce: Reduce, num_segments: usize) -> GatherSegment {
        GatherSegment {
            reduce,
            num_segments,
        }
    }

    /// The op on typed arrays: `x` of rank 1 or more, `src` and `dst` vectors of one length.
    ///
    /// # Errors
    /// [`Error::Segment`] for `x` a scalar or `src`, `dst` not vectors of one length;
    /// [`Error::BadIndex`] for a source not in `[0, x.shape[0])` (TensorFlow's gather
    /// message); those of [`Segment::reduce`] for the destinations.
    pub fn run<T, I, SX, SI, DX, DI>(
        &self,
        x: &ArrayBase<SX, DX>,
        src: &ArrayBase<SI, DI>,
        dst: &ArrayBase<SI, DI>,
    ) -> Result<ArrayD<T>>
    where
        T: Number,
        I: IndexType,
        SX: Data<Elem = T>,
        SI: Data<Elem = I>,
        DX: Dimension,
        DI: Dimension,
    {
        let segment = Segment::unsorted(self.reduce, self.num_segments as i64);
        let (nodes, features) = check_shapes(x.shape(), src.shape(), dst.shape())?;
        let (src, dst) = (row_major(src)?, row_major(dst)?);
        let rows: Vec<usize> = src
            .iter()
            .enumerate()
            .map(|(k, i)| {
                i.checked_index(nodes).ok_or(Error::BadIndex {
                    position: vec![k],
                    value: i.to_i128(),
                    limit: nodes,
                })
            })
            .collect::<Result<_>>()?;
        let mut edges_shape = vec![src.len()];
        edges_shape.extend_from_slice(features);
        let plan = segment.plan(T::DTYPE, &edges_shape, &[src.len()], &dst)?;
        let x = row_major(x)?;
        let row_len = plan.row_len;
        if T::true_div().is_some() && self.reduce == Reduce::Mean {
            return Err(Error::NoKernel {
                op: "gather_segment (typed)",
                dtype: T::DTYPE,
                supported: "floats; the mean of integers is a float array, from run_views".into(),
            });
        }
        let out = segment.reduce_rows(&plan, |k| &x[rows[k] * row_len..(rows[k] + 1) * row_len])?;
        into_array(&plan.out_shape, out)
    }

    /// The op on dtype-erased views: `x` of a number dtype, `src` and `dst` of one integer
    /// dtype.
    ///
    /// # Errors
    /// As [`GatherSegment::run`]; [`Error::DTypeMismatch`] for `src` and `dst` of
    /// two dtypes.
    pub fn run_views(
        &self,
        x: &TensorView<'_>,
        src: &TensorView<'_>,
        dst: &TensorView<'_>,
    ) -> Result<Tensor> {
        check_ids(x, src, dst)?;
        if self.reduce == Reduce::Mean && x.dtype().is_index() {
            // Python's `/` on integers: through the unfused ops, which give TF's float.
            return self.composed(x, src, dst);
        }
        // `dst` is widened as `src` is, so that the two keep one dtype.
        let wide_dst = crate::types::index::widened(dst)?;
        let dst = match &wide_dst {
            Some(wide) => wide.view(),
            None => dst.reborrow(),
        };
        let dst = &dst;
        with_tensor!(TensorView, x, number a => {
            with_indices!(src, s => {
                let d = crate::ops::typed_like(s, dst)?;
                self.run(a, s, &d).map(crate::TensorElement::into_tensor)
            }, else dtype => Err(Error::IndicesNotInteger { dtype }))
        }, else dtype => Err(Segment::unsorted(self.reduce, self.num_segments as i64).refusal(dtype)))
    }

    /// The unfused composition `unsorted_segment_<reduce>(gather(x, src), dst)`.
    fn composed(
        &self,
        x: &TensorView<'_>,
        src: &TensorView<'_>,
        dst: &TensorView<'_>,
    ) -> Result<Tensor> {
        let rows = crate::Op::Gather(crate::GatherOptions::new())
            .run(x.clone(), src, Out::New)?
            .ok_or(Error::Internal("a run into a new output returns it"))?;
        Segment::unsorted(self.reduce, self.num_segments as i64).run_views(&rows.view(), dst)
    }
}

/// gather_segment's own checks of `src` and `dst`: one dtype, and the shapes
/// [`check_shapes`] takes.
fn check_ids(x: &TensorView<'_>, src: &TensorView<'_>, dst: &TensorView<'_>) -> Result<()> {
    if src.dtype() != dst.dtype() {
        return Err(Error::Segment {
            reason: format!(
                "gather_segment: src and dst must have one dtype, got {} and {}",
                src.dtype(),
                dst.dtype()
            ),
        });
    }
    check_shapes(x.shape(), src.shape(), dst.shape()).map(|_| ())
}

/// gather_segment's own checks: `x` at least 1-d, `src` and `dst` vectors of one length.
/// Returns `x`'s rows and the shape of a row.
fn check_shapes<'x>(x: &'x [usize], src: &[usize], dst: &[usize]) -> Result<(usize, &'x [usize])> {
    let bad = |reason: String| Error::Segment { reason };
    let Some((&nodes, features)) = x.split_first() else {
        return Err(bad(
            "gather_segment: x must be at least 1-d, got a scalar".into()
        ));
    };
    if src.len() != 1 || dst != src {
        return Err(bad(format!(
            "gather_segment: src and dst must be vectors of one length, got shapes {src:?} and {dst:?}"
        )));
    }
    Ok((nodes, features))
}

const GATHER_SEGMENT: Signature = Signature {
    inputs: &[
        InputDef::new(
            "x",
            InputKind::Tensor,
            "the node features, one row per node",
        ),
        InputDef::new("src", InputKind::Tensor, "each edge's source row of x"),
        InputDef::new("dst", InputKind::Tensor, "each edge's destination segment"),
    ],
    attrs: &[
        AttrDef::required("num_segments", AttrKind::Int, "the output's rows"),
        AttrDef::with_default(
            "reduce",
            AttrKind::Str(&["sum", "mean", "max", "min", "prod", "sqrt_n"]),
            "sum",
            "how rows meeting on one segment combine",
        ),
    ],
};

impl OpDef for GatherSegment {
    /// Linear in x where the reduction is (a sum or a mean).
    fn linear(&self) -> Option<Linear> {
        self.reduce.is_linear().then(|| Linear::of(&[0])).flatten()
    }

    fn name(&self) -> &'static str {
        "gather_segment"
    }

    fn summary(&self) -> &'static str {
        "unsorted_segment_<reduce>(gather(x, src), dst), fused: graph message passing"
    }

    fn signature(&self) -> Signature {
        GATHER_SEGMENT
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        let reduce = Reduce::from_name(a.str("reduce", "sum"))
            .ok_or(Error::Internal("choices checked by the signature"))?;
        Ok(Box::new(GatherSegment::new(
            reduce,
            a.size("num_segments")?.unwrap_or(0),
        )))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        let [x, _, _] = inputs else {
            return Err(crate::ops::contract::count_error(self, inputs.len()));
        };
        let shape = match x.shape.dims() {
            Some(dims) if !dims.is_empty() => {
                let mut out: Vec<Dim> = vec![Some(self.num_segments)];
                out.extend_from_slice(&dims[1..]);
                Shape::from_dims(out)
            }
            _ => Shape::unknown(),
        };
        // The dtype is the segment reduction's (integers' mean is a float, as the composed
        // path computes it).
        let reduced = Segment::unsorted(self.reduce, self.num_segments as i64)
            .infer(&[Fact::new(x.dtype, Shape::unknown()), Fact::unknown()])?;
        Ok(Fact::new(reduced.dtype, shape))
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        if let Out::InPlace(_) = out {
            return Err(not_in_place(self.name()));
        }
        deliver(
            self.name(),
            self.run_views(inputs.tensor(0)?, inputs.tensor(1)?, inputs.tensor(2)?)?,
            out,
        )
    }

    fn has_grad(&self) -> bool {
        true
    }

    /// The composition's gradient, as TensorFlow differentiates
    /// `unsorted_segment_<reduce>(gather(x, src), dst)`: the segment reduction's gradient of
    /// the gathered rows (which the backward pass gathers again), then the gather's (each
    /// row's gradient added into its source, in edge order).
    fn grad(
        &self,
        inputs: &[Input<'_>],
        output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let args = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (x, src, dst) = (args.tensor(0)?, args.tensor(1)?, args.tensor(2)?);
        let output = crate::ops::contract::read_output(self.name(), output)?;
        check_ids(x, src, dst)?;
        if !x.dtype().has_grad() {
            return Err(crate::ops::contract::no_grad_kernel(
                "GatherSegmentGrad",
                x.dtype(),
            ));
        }
        let gather = crate::Op::Gather(crate::GatherOptions::new());
        let rows = gather
            .run(x.clone(), src, Out::New)?
            .ok_or(Error::Internal("a run into a new output returns it"))?;
        let segment = Segment::unsorted(self.reduce, self.num_segments as i64);
        let d_rows = segment.grad_views(&rows.view(), dst, output, upstream)?;
        let read = [Input::Tensor(x.clone()), Input::Tensor(src.clone())];
        let dx = OpDef::grad(&gather, &read, None, &d_rows.view())?;
        Ok(vec![dx.into_iter().next().flatten(), None, None])
    }
}
