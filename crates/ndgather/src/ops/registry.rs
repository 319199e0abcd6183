//! The registry: one value of every op of the family, found by name. Front ends (the
//! Python package, the JNI library, the CLI, the graph API) call ops only through it, so an
//! op registered here is an op everywhere.
//!
//! ```
//! use ndgather::registry;
//! assert!(registry::names().any(|n| n == "unsorted_segment_max"));
//! assert!(registry::find("no_such_op").is_err());
//! ```

use crate::ops::contract::OpDef;
use crate::ops::embedding::Combiner;
use crate::ops::embedding_bag::{BagMode, EmbeddingBag};
use crate::ops::lookup_grads::lookup_grads;
use crate::ops::lookup_ops::{lookup_op, LookupSparse};
use crate::ops::read_grads::read_grads;
use crate::ops::read_ops::{GATHER_ND_OP, GATHER_OP, TAKE_ALONG_AXIS_OP};
use crate::ops::segment::{GatherSegment, SEGMENT_OPS};
use crate::ops::take_along_axis::TakeAlongAxisOptions;
use crate::ops::write_ops::{PutAlongAxis, ScatterNd, SCATTER_REDUCE_OP, TENSOR_SCATTERS};
use crate::types::error::{Error, Result};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

pub use crate::ops::contract::{
    kind_name, Attr, AttrDef, AttrKind, Attrs, Fact, Host, Input, InputDef, InputKind, Linear,
    Routed, Signature, SparseGrad, Value,
};

/// Every registered op, in a fixed order (the read ops, their gradients, the write ops, the
/// lookups, the segment reductions).
pub fn ops() -> &'static [Box<dyn OpDef>] {
    static OPS: OnceLock<Vec<Box<dyn OpDef>>> = OnceLock::new();
    OPS.get_or_init(|| {
        let mut ops: Vec<Box<dyn OpDef>> = vec![
            Box::new(GATHER_OP),
            Box::new(GATHER_ND_OP),
            Box::new(TAKE_ALONG_AXIS_OP),
            Box::new(PutAlongAxis(TakeAlongAxisOptions::new(0))),
        ];
        ops.extend(read_grads().map(|op| Box::new(op) as Box<dyn OpDef>));
        ops.extend(TENSOR_SCATTERS.map(|op| Box::new(op) as Box<dyn OpDef>));
        ops.push(Box::new(SCATTER_REDUCE_OP));
        ops.push(Box::new(ScatterNd::default()));
        ops.push(Box::new(lookup_op()));
        ops.push(Box::new(LookupSparse {
            lookup: lookup_op(),
            combiner: Combiner::Mean,
        }));
        ops.push(Box::new(EmbeddingBag::new(BagMode::Mean)));
        ops.extend(lookup_grads().map(|op| Box::new(op) as Box<dyn OpDef>));
        ops.extend(SEGMENT_OPS.map(|op| Box::new(op) as Box<dyn OpDef>));
        ops.push(Box::new(GatherSegment::default()));
        ops
    })
}

/// The registered names, in the order of [`ops`].
pub fn names() -> impl Iterator<Item = &'static str> {
    ops().iter().map(|op| op.name())
}

/// The op named `name`, with its attributes at their defaults (give it others with
/// [`OpDef::with_attrs`]). Its graph type is a name too ([`OpDef::type_name`]: TensorFlow's
/// `GatherV2`, `UnsortedSegmentMax`), as a program ported from TF's op builders spells it.
///
/// ```
/// use ndgather::registry;
/// assert_eq!(registry::find("GatherV2")?.name(), "gather");
/// assert_eq!(registry::find("UnsortedSegmentMax")?.name(), "unsorted_segment_max");
/// # Ok::<(), ndgather::Error>(())
/// ```
///
/// # Errors
/// [`Error::UnknownOp`], listing the names there are.
pub fn find(name: &str) -> Result<&'static dyn OpDef> {
    // The ops by name and by type, hashed once: each front end's call looks its op up here
    // (a search through sorted names compared more bytes than a tiny call moves).
    static BY_NAME: OnceLock<FxHashMap<&'static str, &'static dyn OpDef>> = OnceLock::new();
    let by_name = BY_NAME.get_or_init(|| {
        let names = ops().iter().map(|op| (op.name(), op.as_ref()));
        let types = ops().iter().map(|op| (op.type_name(), op.as_ref()));
        // No name is another's or a type (tests/registry.rs checks it).
        names.chain(types).collect()
    });
    by_name.get(name).copied().ok_or_else(|| Error::UnknownOp {
        name: name.to_string(),
        known: names().collect::<Vec<_>>().join(", "),
    })
}

/// The forward derivative of the op `name` with `attrs` where it is routed
/// ([`OpDef::routed`]): the linear op to run, with the attributes that differ from `attrs`
/// (the route's, then its tangent's), and the inputs it is linear in, whose tangents, each
/// times the op's gradient for an upstream of ones, it takes. `None` where the op is linear
/// or not routed.
///
/// ```
/// use ndgather::registry::{self, Attr, Attrs};
/// let amax = Attrs::new().with("dim", Attr::Int(0)).with("reduce", Attr::Str("amax".into()));
/// let (sum, inputs) = registry::route("scatter_reduce", &amax)?.unwrap();
/// assert_eq!((sum.op, inputs), ("scatter_reduce", vec![0, 2])); // input and src
/// assert_eq!(sum.attrs, [("reduce", Attr::Str("sum".into()))]);
/// assert!(registry::route("gather", &Attrs::new())?.is_none()); // linear itself
/// # Ok::<(), ndgather::Error>(())
/// ```
///
/// # Errors
/// The registry's, for an unknown op or attributes it refuses.
pub fn route(name: &str, attrs: &Attrs) -> Result<Option<(Routed, Vec<usize>)>> {
    let Some(mut routed) = find(name)?.with_attrs(attrs)?.routed() else {
        return Ok(None);
    };
    let mut along = attrs.clone();
    for (k, v) in &routed.attrs {
        along.insert(*k, v.clone());
    }
    // The route's op is linear, and its gradient its tangent's transpose (tests/linear.rs).
    let linear = find(routed.op)?
        .with_attrs(&along)?
        .linear()
        .filter(|l| l.adjoint)
        .ok_or(Error::Internal(
            "a route's op is linear, its gradient the transpose",
        ))?;
    routed.attrs.extend(linear.tangent_attrs);
    Ok(Some((routed, linear.inputs)))
}
