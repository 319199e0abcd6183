//! The write ops' contract: `tensor_scatter_nd_{update,add,sub,min,max}`,
//! `scatter_reduce`, `put_along_axis` and `scatter_nd`. Each writes values into a tensor:
//! into a copy for [`Out::New`], or into the tensor itself for [`Out::InPlace`].

use crate::ops::contract::{
    self, check_written, count_error, deliver, Attr, AttrDef, AttrKind, Attrs, Fact, Host, Input,
    InputDef, InputKind, Inputs, Linear, OpDef, Parsed, Routed, Signature, Value, BAD_INDICES,
};
use crate::ops::scatter_reduce::{Reduction, ScatterReduce};
use crate::ops::take_along_axis::TakeAlongAxisOptions;
use crate::ops::tensor_scatter::{picked_slices, ScatterKind, TensorScatter};
use crate::ops::{fresh_copy, Out};
use crate::shape::Shape;
use crate::types::dtype::{Tensor, TensorView, TensorViewMut};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::BadIndices;
use crate::with_tensor;

/// Runs a write op on checked inputs `[written, indices, values]`: in place into
/// [`Out::InPlace`]'s tensor, else into a new tensor delivered to `out`.
fn run_write(
    op: &'static str,
    inputs: &Inputs<'_, '_>,
    out: Out<'_>,
    new: impl FnOnce(TensorView<'_>, &TensorView<'_>, &TensorView<'_>) -> Result<Tensor>,
    in_place: impl FnOnce(TensorViewMut<'_>, &TensorView<'_>, &TensorView<'_>) -> Result<()>,
) -> Result<Option<Value>> {
    check_written(op, inputs.get(0)?, &out)?;
    let (indices, values) = (inputs.tensor(1)?, inputs.tensor(2)?);
    match out {
        Out::InPlace(target) => in_place(target, indices, values).map(|()| None),
        out => deliver(op, new(inputs.tensor(0)?.clone(), indices, values)?, out),
    }
}

/// A write op's output fact: its written tensor's.
fn written_fact(op: &dyn OpDef, inputs: &[Fact]) -> Result<Fact> {
    match inputs {
        [written, _, _] => Ok(written.clone()),
        _ => Err(count_error(op, inputs.len())),
    }
}

const WRITTEN: InputKind = InputKind::Optional;

const TENSOR_SCATTER: Signature = Signature {
    inputs: &[
        InputDef::new("tensor", WRITTEN, "the tensor updated (none: in place)"),
        InputDef::new(
            "indices",
            InputKind::Tensor,
            "index vectors into tensor, of an integer dtype",
        ),
        InputDef::new(
            "updates",
            InputKind::Tensor,
            "the values, one slice per vector",
        ),
    ],
    // Every policy, as the Python and Java front ends offer: ignore and fill drop a bad
    // vector's update (TensorFlow's "IGNORE"), the others map it into range.
    attrs: &[BAD_INDICES],
};

/// The five registered values.
pub(crate) const TENSOR_SCATTERS: [TensorScatter; 5] = [
    TensorScatter {
        kind: ScatterKind::Update,
        bad_indices: BadIndices::Error,
    },
    TensorScatter {
        kind: ScatterKind::Add,
        bad_indices: BadIndices::Error,
    },
    TensorScatter {
        kind: ScatterKind::Sub,
        bad_indices: BadIndices::Error,
    },
    TensorScatter {
        kind: ScatterKind::Min,
        bad_indices: BadIndices::Error,
    },
    TensorScatter {
        kind: ScatterKind::Max,
        bad_indices: BadIndices::Error,
    },
];

impl OpDef for TensorScatter {
    /// An update, a sum or a difference is linear in tensor and updates; a min or max not.
    /// An update's gradient, TensorFlow's, is not its tangent's transpose where indices
    /// repeat (each gets the slice's gradient; the result keeps one write).
    fn linear(&self) -> Option<Linear> {
        let mut linear = match self.kind {
            ScatterKind::Update | ScatterKind::Add | ScatterKind::Sub => Linear::of(&[0, 2])?,
            ScatterKind::Min | ScatterKind::Max => return None,
        };
        linear.adjoint = self.kind != ScatterKind::Update;
        Some(linear)
    }

    /// A min or max moves each element along the scatter add's routes.
    fn routed(&self) -> Option<Routed> {
        match self.kind {
            ScatterKind::Min | ScatterKind::Max => Routed::to("tensor_scatter_nd_add", true),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        match self.kind {
            ScatterKind::Update => "tensor_scatter_nd_update",
            ScatterKind::Add => "tensor_scatter_nd_add",
            ScatterKind::Sub => "tensor_scatter_nd_sub",
            ScatterKind::Min => "tensor_scatter_nd_min",
            ScatterKind::Max => "tensor_scatter_nd_max",
        }
    }

    fn summary(&self) -> &'static str {
        match self.kind {
            ScatterKind::Update => "tf.tensor_scatter_nd_update: tensor with slices replaced",
            ScatterKind::Add => "tf.tensor_scatter_nd_add: tensor with slices added to",
            ScatterKind::Sub => "tf.tensor_scatter_nd_sub: tensor with slices subtracted from",
            ScatterKind::Min => "tf.tensor_scatter_nd_min: the minimum of tensor and updates",
            ScatterKind::Max => "tf.tensor_scatter_nd_max: the maximum of tensor and updates",
        }
    }

    fn signature(&self) -> Signature {
        TENSOR_SCATTER
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        Ok(Box::new(
            TensorScatter::new(self.kind).bad_indices(a.policy(BadIndices::Error)?),
        ))
    }

    fn type_name(&self) -> &'static str {
        self.kind.tf_op()
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        if let [Fact { dtype: Some(t), .. }, Fact { dtype: Some(i), .. }, Fact { dtype: Some(u), .. }] =
            inputs
        {
            self.check_dtypes(*t, *i, *u)?;
        }
        written_fact(self, inputs)
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        run_write(
            self.name(),
            &inputs,
            out,
            |t, i, u| self.run_new(t, i, u),
            |t, i, u| self.run_in_place(t, i, u),
        )
    }

    fn writes_first_input(&self) -> bool {
        true
    }

    fn has_grad(&self) -> bool {
        true
    }

    fn grad(
        &self,
        inputs: &[Input<'_>],
        output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let output = crate::ops::contract::read_output(self.name(), output)?;
        let (t, i, u) = (inputs.tensor(0)?, inputs.tensor(1)?, inputs.tensor(2)?);
        let (dt, du) = TensorScatter::grad(self, t, i, u, output, upstream)?;
        Ok(vec![Some(dt), None, Some(du)])
    }
}

const SCATTER_REDUCE: Signature = Signature {
    inputs: &[
        InputDef::new("input", WRITTEN, "the tensor reduced into (none: in place)"),
        InputDef::new(
            "index",
            InputKind::Tensor,
            "where each value of src goes along dim",
        ),
        InputDef::new("src", InputKind::Tensor, "the values"),
    ],
    attrs: &[
        AttrDef::required("dim", AttrKind::Int, "the dimension index points along"),
        // Free text: the op checks it in PyTorch's words (and takes "max" and "min" too).
        AttrDef::required(
            "reduce",
            AttrKind::Str(&[]),
            "how values meeting on one element combine: sum, prod, mean, amax or amin",
        ),
        AttrDef::with_default(
            "include_self",
            AttrKind::Bool,
            "true",
            "whether input's own element takes part",
        ),
        BAD_INDICES,
    ],
};

/// The registered value.
pub(crate) const SCATTER_REDUCE_OP: ScatterReduce = ScatterReduce {
    dim: 0,
    reduce: Reduction::Sum,
    include_self: true,
    bad_indices: BadIndices::Error,
};

impl OpDef for ScatterReduce {
    /// A sum or a mean (its counts from the index alone) is linear in input and src.
    fn linear(&self) -> Option<Linear> {
        match self.reduce {
            Reduction::Sum | Reduction::Mean => Linear::of(&[0, 2]),
            Reduction::Prod | Reduction::Amax | Reduction::Amin => None,
        }
    }

    /// A product, max or min moves each element along the sum's routes. Not a max or min
    /// without the input: PyTorch's gradient, which this op's is, counts the input's value
    /// among the ties even there, so it is not the Jacobian's transpose (PyTorch's own
    /// forward mode does not count it).
    fn routed(&self) -> Option<Routed> {
        match (self.reduce, self.include_self) {
            (Reduction::Sum | Reduction::Mean, _) | (Reduction::Amax | Reduction::Amin, false) => {
                None
            }
            (Reduction::Prod, _) | (Reduction::Amax | Reduction::Amin, true) => Some(Routed {
                op: "scatter_reduce",
                attrs: vec![("reduce", Attr::Str("sum".into()))],
                constant_factors: self.reduce != Reduction::Prod,
            }),
        }
    }

    fn name(&self) -> &'static str {
        "scatter_reduce"
    }

    fn summary(&self) -> &'static str {
        "torch.Tensor.scatter_reduce: values of src reduced into input along dim"
    }

    fn signature(&self) -> Signature {
        SCATTER_REDUCE
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        let reduce = Reduction::from_name(a.str("reduce", "sum"))?;
        Ok(Box::new(
            ScatterReduce::new(a.int("dim", 0), reduce)
                .include_self(a.flag("include_self", true))
                .bad_indices(a.policy(BadIndices::Error)?),
        ))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        written_fact(self, inputs)
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        run_write(
            self.name(),
            &inputs,
            out,
            |t, i, u| self.run_new(t, i, u),
            |t, i, u| self.run_in_place(t, i, u),
        )
    }

    fn writes_first_input(&self) -> bool {
        true
    }

    fn has_grad(&self) -> bool {
        true
    }

    /// PyTorch's `scatter_reduce_backward`: the gradients of `input` and `src`; the index
    /// has none. Max, min and prod read the output.
    fn grad(
        &self,
        inputs: &[Input<'_>],
        output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let output = crate::ops::contract::read_output(self.name(), output)?;
        let operands = (inputs.tensor(0)?, inputs.tensor(1)?, inputs.tensor(2)?);
        let (d_input, d_src) = self.grad_views(operands, output, upstream)?;
        Ok(vec![Some(d_input), None, Some(d_src)])
    }
}

/// NumPy's `put_along_axis` as a value of the registry: its options are those of
/// `take_along_axis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PutAlongAxis(pub(crate) TakeAlongAxisOptions);

const PUT_ALONG_AXIS: Signature = Signature {
    inputs: &[
        InputDef::new("arr", WRITTEN, "the array written (none: in place)"),
        InputDef::new(
            "indices",
            InputKind::Tensor,
            "where to write along axis, broadcast against arr",
        ),
        InputDef::new(
            "values",
            InputKind::Elements,
            "the values, broadcast to indices (moved, never read)",
        ),
    ],
    attrs: &[
        AttrDef::required("axis", AttrKind::Int, "the axis to put along"),
        BAD_INDICES,
    ],
};

impl OpDef for PutAlongAxis {
    /// Linear in arr and values: each element of the result is one of theirs.
    fn linear(&self) -> Option<Linear> {
        Linear::of(&[0, 2])
    }

    fn name(&self) -> &'static str {
        "put_along_axis"
    }

    fn summary(&self) -> &'static str {
        "numpy.put_along_axis: values written into arr along an axis"
    }

    fn signature(&self) -> Signature {
        PUT_ALONG_AXIS
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        Ok(Box::new(PutAlongAxis(
            TakeAlongAxisOptions::new(a.int("axis", 0)).bad_indices(a.policy(BadIndices::Error)?),
        )))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        // NumPy's error for indices that are not integers, after its axis check.
        if let [arr, Fact { dtype: Some(d), .. }, _] = inputs {
            if !d.is_index() {
                return Err(self.0.non_integer_indices_of(arr.shape.rank()));
            }
        }
        written_fact(self, inputs)
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let put = |t: TensorViewMut<'_>, i: &TensorView<'_>, v: &TensorView<'_>| {
            self.0.put_along_axis(t, i, v)
        };
        run_write(
            self.name(),
            &inputs,
            out,
            |t, i, v| {
                let mut copy = with_tensor!(TensorView, &t, fixed a => Tensor::from(fresh_copy(a)?),
                    else dtype => return Err(Error::NotFixedWidth { dtype }));
                put(copy.view_mut(), i, v)?;
                Ok(copy)
            },
            put,
        )
    }

    fn run_hosted(
        &self,
        inputs: &[Input<'_>],
        out: Out<'_>,
        host: &mut dyn Host,
    ) -> Result<Option<Value>> {
        // Indices broadcast against the array's other axes, so a call of a few bytes can
        // write millions of times (NumPy's broadcasting): its size says nothing of its time,
        // and it always runs without the host's lock.
        contract::unlocked(host, || self.run(inputs, out))
    }
}

/// TensorFlow's `tf.scatter_nd` as a value of the registry: zeros of `shape` with updates
/// added at index vectors.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct ScatterNd {
    shape: Vec<usize>,
    bad_indices: BadIndices,
}

const SCATTER_ND: Signature = Signature {
    inputs: &[
        InputDef::new(
            "indices",
            InputKind::Tensor,
            "index vectors into the output, of an integer dtype",
        ),
        InputDef::new(
            "updates",
            InputKind::Tensor,
            "the values, one slice per vector",
        ),
    ],
    attrs: &[
        AttrDef::required("shape", AttrKind::Ints, "the output's shape").fed(),
        AttrDef::with_default(
            "bad_indices",
            AttrKind::Str(&["error", "ignore"]),
            "error",
            "what a bad index vector does",
        ),
    ],
};

impl OpDef for ScatterNd {
    /// Linear in updates.
    fn linear(&self) -> Option<Linear> {
        Linear::of(&[1])
    }

    fn name(&self) -> &'static str {
        "scatter_nd"
    }

    fn type_name(&self) -> &'static str {
        "ScatterNd"
    }

    fn summary(&self) -> &'static str {
        "tf.scatter_nd: zeros of shape with updates added at index vectors"
    }

    fn signature(&self) -> Signature {
        SCATTER_ND
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        let shape = a.shape("shape")?;
        Ok(Box::new(ScatterNd {
            shape,
            bad_indices: a.policy(BadIndices::Error)?,
        }))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        match inputs {
            [_, updates] => Ok(Fact::new(updates.dtype, Shape::known(&self.shape))),
            _ => Err(count_error(self, inputs.len())),
        }
    }

    /// `ScatterNd`'s shape is an input tensor in TensorFlow: fed, it leaves the output's.
    fn infer_fed(&self, inputs: &[Fact], fed: &[&str]) -> Result<Fact> {
        crate::ops::contract::check_fed(self, fed)?;
        let fact = self.infer(inputs)?;
        match fed.is_empty() {
            true => Ok(fact),
            false => Ok(Fact::new(fact.dtype, Shape::unknown())),
        }
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (indices, updates) = (inputs.tensor(0)?, inputs.tensor(1)?);
        if let Out::InPlace(_) = out {
            return Err(crate::ops::contract::not_in_place(self.name()));
        }
        let result = with_tensor!(TensorView, updates, number u => {
            with_indices!(indices, i => Tensor::from(
                crate::ops::scatter::scatter_nd(i, u, &self.shape, self.bad_indices)?),
                else dtype => return Err(Error::IndicesNotInteger { dtype }))
        }, else dtype => return Err(Error::NoKernel {
            op: "ScatterNd",
            dtype,
            supported: crate::DType::names_where(crate::DType::is_number),
        }));
        deliver(self.name(), result, out)
    }

    fn has_grad(&self) -> bool {
        true
    }

    fn grad_reads_output(&self) -> bool {
        false
    }

    /// TensorFlow's `_ScatterNdGrad`: the updates' gradient is `gather_nd(grad, indices)`
    /// (a bad vector's slice zeros under `"ignore"`); the indices have none.
    fn grad(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (indices, updates) = (inputs.tensor(0)?, inputs.tensor(1)?);
        let dtype = updates.dtype();
        if !dtype.has_grad() {
            return Err(crate::ops::contract::no_grad_kernel("ScatterNdGrad", dtype));
        }
        if upstream.dtype() != dtype {
            return Err(Error::InputDType {
                op: "ScatterNdGrad",
                input: 0,
                expected: dtype,
                found: upstream.dtype(),
            });
        }
        if upstream.shape() != self.shape.as_slice() {
            return Err(Error::GradShapeMismatch {
                expected: self.shape.clone(),
                found: upstream.shape().to_vec(),
            });
        }
        let du = picked_slices(upstream.clone(), indices, self.bad_indices)?;
        // The slices the index vectors pick are the updates' shape in any call the forward
        // op takes.
        if du.shape() != updates.shape() {
            return Err(Error::GradShapeMismatch {
                expected: du.shape().to_vec(),
                found: updates.shape().to_vec(),
            });
        }
        Ok(vec![None, Some(du)])
    }
}
