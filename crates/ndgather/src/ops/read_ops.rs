//! The read ops' contract: `gather`, `gather_nd` and `take_along_axis`, each a value of
//! [`Op`] with its options. A ragged params or indices is an input kind of the same op: its
//! run takes the ragged walk (`ragged_gather.rs`), a dense one the kernels of `Op::run`.

use crate::ops::contract::{
    self, count_error, deliver, deliver_value, Attr, AttrDef, AttrKind, Attrs, Fact, Host, Input,
    InputDef, InputKind, Inputs, Linear, OpDef, Parsed, Signature, Value, BAD_INDICES,
};
use crate::ops::gather::{GatherNdOptions, GatherOptions};
use crate::ops::small_call::{Small, Target};
use crate::ops::take_along_axis::TakeAlongAxisOptions;
use crate::ops::{Op, Out, Params};
use crate::shape::{gather_nd_shape, gather_shape, Axis};
use crate::types::dtype::{Tensor, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::with_indices;
use crate::types::index::{BadIndices, IndexType};
use crate::{with_dtype, with_tensor};

const FILL: AttrDef = AttrDef::optional(
    "fill_value",
    AttrKind::Fill,
    "the value the fill policy writes (JAX's default for the dtype)",
);
pub(super) const BATCH_DIMS: AttrDef = AttrDef::with_default(
    "batch_dims",
    AttrKind::Int,
    "0",
    "leading dimensions shared by params and indices",
);
/// gather's axis.
pub(super) const GATHER_AXIS: AttrDef = AttrDef::optional(
    "axis",
    AttrKind::Int,
    "the axis of params (default: batch_dims)",
);
/// take_along_axis's axis.
pub(super) const ALONG_AXIS: AttrDef =
    AttrDef::required("axis", AttrKind::Int, "the axis to take along");
const PARAMS: InputDef = InputDef::new("params", InputKind::Elements, "the values read");
const INDICES: InputDef = InputDef::new(
    "indices",
    InputKind::MaybeRagged,
    "where to read, of an integer dtype",
);

const GATHER: Signature = Signature {
    inputs: &[PARAMS, INDICES],
    attrs: &[GATHER_AXIS.fed(), BATCH_DIMS, BAD_INDICES, FILL],
};
const GATHER_ND: Signature = Signature {
    inputs: &[PARAMS, INDICES],
    attrs: &[BATCH_DIMS, BAD_INDICES, FILL],
};
const TAKE_ALONG_AXIS: Signature = Signature {
    inputs: &[
        InputDef::new("arr", InputKind::Elements, "the values read"),
        InputDef::new(
            "indices",
            InputKind::MaybeRagged,
            "where to read along axis, broadcast against arr",
        ),
    ],
    attrs: &[ALONG_AXIS, BAD_INDICES, FILL],
};

/// The three registered values.
pub(crate) const GATHER_OP: Op = Op::Gather(GatherOptions {
    axis: None,
    batch_dims: 0,
    bad_indices: BadIndices::Error,
    fill_value: crate::types::value::FillValue::Default,
});
/// `gather_nd` with its defaults.
pub(crate) const GATHER_ND_OP: Op = Op::GatherNd(GatherNdOptions {
    batch_dims: 0,
    bad_indices: BadIndices::Error,
    fill_value: crate::types::value::FillValue::Default,
});
/// `take_along_axis` with its defaults (its `axis` is required).
pub(crate) const TAKE_ALONG_AXIS_OP: Op = Op::TakeAlongAxis(TakeAlongAxisOptions {
    axis: 0,
    bad_indices: BadIndices::Error,
    fill_value: crate::types::value::FillValue::Default,
});

impl OpDef for Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Gather(_) => "gather",
            Op::GatherNd(_) => "gather_nd",
            Op::TakeAlongAxis(_) => "take_along_axis",
        }
    }

    fn summary(&self) -> &'static str {
        match self {
            Op::Gather(_) => "tf.gather: slices of params along an axis",
            Op::GatherNd(_) => "tf.gather_nd: slices of params at index vectors",
            Op::TakeAlongAxis(_) => "numpy.take_along_axis: elements along an axis",
        }
    }

    fn node_name(&self) -> &'static str {
        match self {
            Op::Gather(_) => "Gather",
            _ => self.type_name(),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Op::Gather(_) => "GatherV2",
            Op::GatherNd(_) => "GatherNd",
            Op::TakeAlongAxis(_) => "TakeAlongAxis",
        }
    }

    fn signature(&self) -> Signature {
        match self {
            Op::Gather(_) => GATHER,
            Op::GatherNd(_) => GATHER_ND,
            Op::TakeAlongAxis(_) => TAKE_ALONG_AXIS,
        }
    }

    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>> {
        let a = Parsed::new(self.name(), &self.signature(), attrs)?;
        Ok(Box::new(self.configured(&a)?))
    }

    fn infer(&self, inputs: &[Fact]) -> Result<Fact> {
        self.infer_axis(inputs, false)
    }

    /// `GatherV2`'s axis is an input tensor in TensorFlow: fed, it leaves the output's rank.
    fn infer_fed(&self, inputs: &[Fact], fed: &[&str]) -> Result<Fact> {
        crate::ops::contract::check_fed(self, fed)?;
        self.infer_axis(inputs, !fed.is_empty())
    }

    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        match (inputs.get(0)?, inputs.get(1)?) {
            (Input::Tensor(p), Input::Tensor(i)) => {
                Ok(Op::run(self, p.clone(), i, out)?.map(Value::Dense))
            }
            (Input::Records(p), Input::Tensor(i)) => {
                Ok(Op::run(self, Params::raw(p.clone()), i, out)?.map(Value::Dense))
            }
            (p, i) => {
                fn operand<'v>(input: &Input<'v>) -> Result<crate::RaggedOperand<'v>> {
                    match input {
                        Input::Ragged(r) => Ok(crate::RaggedOperand::Ragged(r.clone())),
                        Input::Tensor(t) => Ok(crate::RaggedOperand::from(t.clone())),
                        Input::Records(r) => Ok(crate::RaggedOperand::from(Params::raw(r.clone()))),
                        _ => Err(Error::Internal("inputs checked against the signature")),
                    }
                }
                let ragged = self.run_ragged(operand(p)?, operand(i)?)?;
                match ragged.splits.is_empty() {
                    true => deliver(self.name(), ragged.values, out),
                    false => deliver_value(self.name(), Value::Ragged(ragged), out),
                }
            }
        }
    }

    fn run_hosted(
        &self,
        inputs: &[Input<'_>],
        out: Out<'_>,
        host: &mut dyn Host,
    ) -> Result<Option<Value>> {
        // A small call runs here, into the host's memory; any other without its lock.
        if let (Out::New, [Input::Records(p), Input::Tensor(i)]) = (&out, inputs) {
            match self.small(p, i, Target::Host(&mut *host))? {
                Small::Hosted => return Ok(None),
                Small::Fresh(t) => return Ok(Some(Value::Dense(t))),
                Small::NotTaken => {}
            }
        }
        contract::unlocked(host, || OpDef::run(self, inputs, out))
    }

    fn has_grad(&self) -> bool {
        true
    }

    fn grad_reads_output(&self) -> bool {
        false
    }

    /// Linear in params; the value the fill policy writes has a zero tangent.
    fn linear(&self) -> Option<Linear> {
        let policy = match self {
            Op::Gather(o) => o.bad_indices,
            Op::GatherNd(o) => o.bad_indices,
            Op::TakeAlongAxis(o) => o.bad_indices,
        };
        let mut linear = Linear::of(&[0])?;
        if policy == BadIndices::Fill {
            linear.tangent_attrs.push((FILL.name, Attr::Int(0)));
        }
        Some(linear)
    }

    fn grad(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let inputs = Inputs::new(self.name(), &self.signature(), inputs)?;
        let (params, indices) = (inputs.tensor(0)?, inputs.tensor(1)?);
        // A graph's gradients are TensorFlow's: of the float and complex types only.
        let dtype = upstream.dtype();
        if !dtype.has_grad() {
            return Err(contract::no_grad_kernel("gradient", dtype));
        }
        let dparams = self.params_grad("gradient", params.shape(), indices, upstream)?;
        Ok(vec![Some(dparams), None])
    }
}

impl Op {
    /// The op of this kind configured by parsed attributes (the others at their defaults):
    /// the forward op's, or its gradient's (`read_grads.rs`), which has no fill value.
    pub(super) fn configured(&self, a: &Parsed<'_>) -> Result<Op> {
        let policy = a.policy(BadIndices::Error)?;
        let mut op = match self {
            Op::Gather(_) => {
                let mut o = GatherOptions::new()
                    .batch_dims(a.int("batch_dims", 0))
                    .bad_indices(policy);
                if let Some(axis) = a.opt_int("axis") {
                    o = o.axis(axis);
                }
                Op::Gather(o)
            }
            Op::GatherNd(_) => Op::GatherNd(
                GatherNdOptions::new()
                    .batch_dims(a.int("batch_dims", 0))
                    .bad_indices(policy),
            ),
            Op::TakeAlongAxis(_) => {
                Op::TakeAlongAxis(TakeAlongAxisOptions::new(a.int("axis", 0)).bad_indices(policy))
            }
        };
        if let Some(fill) = a.fill()? {
            op = op.with_fill_value(fill);
        }
        Ok(op)
    }

    /// The gradient with respect to params of `params_shape` (not read), for `upstream` of
    /// any number type (the sums of integers wrap); `op` names the op in a dtype error.
    pub(super) fn params_grad(
        &self,
        op: &'static str,
        params_shape: &[usize],
        indices: &TensorView<'_>,
        upstream: &TensorView<'_>,
    ) -> Result<Tensor> {
        macro_rules! grad_of {
            ($o:expr) => {
                with_tensor!(TensorView, upstream, number g => with_indices!(indices,
                    i => Tensor::from($o.grad(params_shape, i, g)?),
                    else dtype => return Err(Error::IndicesNotInteger { dtype })),
                else dtype => return Err(Error::NoKernel {
                    op, dtype, supported: crate::DType::names_where(crate::DType::is_number) }))
            };
        }
        Ok(match self {
            Op::Gather(o) => grad_of!(o),
            Op::GatherNd(o) => grad_of!(o),
            Op::TakeAlongAxis(o) => grad_of!(o),
        })
    }
}

impl Op {
    /// The output's fact; `axis_fed`: the axis is not known until the run.
    fn infer_axis(&self, inputs: &[Fact], axis_fed: bool) -> Result<Fact> {
        let [params, indices] = inputs else {
            return Err(count_error(self, inputs.len()));
        };
        let limit = match indices.dtype {
            Some(d) => with_dtype!(d, index I => <I as IndexType>::TF_LIMIT,
            else return Err(match self {
                Op::TakeAlongAxis(o) => o.non_integer_indices_of(params.shape.rank()),
                _ => Error::IndicesNotInteger { dtype: d },
            })),
            None => None,
        };
        let shape = match self {
            Op::Gather(o) => {
                let axis = match axis_fed {
                    true => Axis::Unknown,
                    false => o.axis.map_or(Axis::Default, Axis::Given),
                };
                gather_shape(&params.shape, &indices.shape, axis, o.batch_dims, limit)?.output
            }
            Op::GatherNd(o) => {
                gather_nd_shape(&params.shape, &indices.shape, o.batch_dims, limit)?.output
            }
            // Known shapes give the output's; otherwise it has indices' rank.
            Op::TakeAlongAxis(o) => match (params.shape.to_known(), indices.shape.to_known()) {
                (Some(p), Some(i)) => crate::shape::Shape::known(&o.out_shape(&p, &i)?),
                _ => indices.shape.rank().map_or(
                    crate::shape::Shape::unknown(),
                    crate::shape::Shape::unknown_dims,
                ),
            },
        };
        Ok(Fact::new(params.dtype, shape))
    }
}
