//! The one error type of the crate, in sections: argument and shape checks, index values,
//! outputs and memory, the summing ops and embeddings, and the dtype-erased API.
//!
//! Every variant carries the values that caused it, and `Display` gives TensorFlow's
//! wording where TensorFlow has one: the texts of its kernels
//! ([`gather_op.cc`](https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/kernels/gather_op.cc),
//! [`gather_nd_op.cc`](https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/kernels/gather_nd_op.cc))
//! and shape functions
//! ([`array_ops.cc`](https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/ops/array_ops.cc)),
//! checked against TensorFlow 2.21 by the repository's conformance cases
//! (`crates/ndgather/tests/data/tf_cases.jsonl`, described in `tf_cases.README.md` beside it).

use crate::mem::MemError;
use crate::types::dtype::DType;
use std::fmt;

/// Which op a message belongs to: TensorFlow words a few checks differently in
/// `GatherV2` and `GatherNd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `tf.gather` (`GatherV2`).
    Gather,
    /// `tf.gather_nd` (`GatherNd`).
    GatherNd,
}

/// Everything that can go wrong in an op of the family (gathers, scatters, embeddings,
/// segment reductions and their gradients), with the wording of the library whose op it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- Checks of the arguments and shapes, made before any index is read (TensorFlow's order
    // and wording; take_along_axis's are NumPy's).
    /// params is a scalar (rank 0).
    #[error("{}", match op { OpKind::Gather => "params must be at least 1 dimensional", OpKind::GatherNd => "params must be at least a vector" })]
    ParamsScalar {
        /// The op that was called.
        op: OpKind,
    },
    /// gather_nd's indices is a scalar (rank 0).
    #[error("indices must be at least a vector")]
    IndicesScalar,
    /// `axis` is outside `[-rank(params), rank(params))`, or at the limits of `i64`.
    #[error("{}", axis_message(*axis, *params_rank))]
    AxisOutOfRange {
        /// The axis as given.
        axis: i64,
        /// rank(params).
        params_rank: usize,
    },
    /// gather: `batch_dims` outside `[-rank(indices), rank(indices)]`.
    #[error("Expected batch_dims in the range [{}, {indices_rank}], but got {batch_dims}", -(*indices_rank as i128))]
    BatchDimsOutOfRange {
        /// batch_dims as given.
        batch_dims: i64,
        /// rank(indices).
        indices_rank: usize,
    },
    /// `batch_dims` is not less than rank(params).
    #[error("{}", match op {
        OpKind::Gather => format!("batch_dims ({batch_dims}) must be less than rank(params) ({params_rank})."),
        OpKind::GatherNd => format!("Argument `batch_dims` = {batch_dims} must be less than rank(`params`) = {params_rank}"),
    })]
    BatchDimsNotLessThanParamsRank {
        /// The op that was called.
        op: OpKind,
        /// batch_dims (normalised).
        batch_dims: usize,
        /// rank(params).
        params_rank: usize,
    },
    /// gather_nd: `batch_dims` is not less than rank(indices).
    #[error(
        "Argument `batch_dims` = {batch_dims} must be less than rank(`indices`) = {indices_rank}"
    )]
    BatchDimsNotLessThanIndicesRank {
        /// batch_dims as given.
        batch_dims: usize,
        /// rank(indices).
        indices_rank: usize,
    },
    /// gather_nd: `batch_dims` is negative.
    #[error("tf.gather_nd does not allow negative batch_dims.")]
    NegativeBatchDims {
        /// batch_dims as given.
        batch_dims: i64,
    },
    /// gather: `axis` comes before the batch dimensions.
    #[error("batch_dims ({batch_dims}) must be less than or equal to axis ({axis}).")]
    AxisBeforeBatchDims {
        /// batch_dims (normalised).
        batch_dims: usize,
        /// axis (normalised).
        axis: usize,
    },
    /// A leading batch dimension of params and indices differ.
    #[error("params.shape[{dim}]: {params_size} should be equal to indices.shape[{dim}]: {indices_size}")]
    BatchShapeMismatch {
        /// Which dimension.
        dim: usize,
        /// Its size in params.
        params_size: usize,
        /// Its size in indices.
        indices_size: usize,
    },
    /// gather_nd: the index depth `indices.shape[-1]` (plus `batch_dims`) exceeds rank(params).
    #[error(
        "index innermost dimension length must be <= params rank; saw: {depth} vs. {params_rank}"
    )]
    IndexDepthTooLarge {
        /// `batch_dims + indices.shape[-1]`.
        depth: usize,
        /// rank(params).
        params_rank: usize,
    },
    /// params is too large for TensorFlow's index type (int16/int32/int64 indices only).
    #[error("{what} too large for {index_type} indexing: {size} > {max}")]
    IndexTypeTooSmall {
        /// `params.shape[k]` (gather) or `params.NumElements()` (gather_nd).
        what: String,
        /// The index type (`int16`, `int32`, `int64`).
        index_type: DType,
        /// The size that does not fit.
        size: usize,
        /// The largest value of the index type.
        max: u64,
    },
    /// take_along_axis: params and indices of different ranks (NumPy's wording).
    #[error("`indices` and `arr` must have the same number of dimensions (arr has {params_rank}, indices {indices_rank})")]
    AlongRankMismatch {
        /// rank(params).
        params_rank: usize,
        /// rank(indices).
        indices_rank: usize,
    },
    /// take_along_axis and put_along_axis: indices not of an integer dtype (NumPy's words;
    /// NumPy raises `IndexError`).
    #[error("`indices` must be an integer array")]
    AlongIndicesNotInteger,
    /// take_along_axis: `axis` outside `[-rank, rank)` (NumPy's wording).
    #[error("axis {axis} is out of bounds for array of dimension {rank}")]
    AlongAxisOutOfRange {
        /// The axis as given.
        axis: i64,
        /// rank(params).
        rank: usize,
    },
    /// put_along_axis: values that do not broadcast to the indices' result (NumPy's words).
    #[error(
        "shape mismatch: value array of shape {} could not be broadcast to indexing result of shape {}",
        shape_string(values),
        shape_string(result)
    )]
    PutValuesShape {
        /// The values' shape.
        values: Vec<usize>,
        /// The shape they must broadcast to.
        result: Vec<usize>,
    },
    /// take_along_axis: an axis other than `axis` where params and indices differ and
    /// neither is 1.
    #[error("shape mismatch: indices of shape {} cannot be broadcast to arr of shape {} (axis {axis}: sizes must be equal, or one of them 1)", shape_string(indices_shape), shape_string(params_shape))]
    AlongShapeMismatch {
        /// The first axis that does not broadcast.
        axis: usize,
        /// params' shape.
        params_shape: Vec<usize>,
        /// indices' shape.
        indices_shape: Vec<usize>,
    },
    // ---- Index values outside what they address.
    /// gather_nd: rows are requested from an empty params.
    #[error(
        "Requested more than 0 entries, but params is empty.  Params shape: {}",
        shape_string(params_shape)
    )]
    EmptyParams {
        /// params.shape.
        params_shape: Vec<usize>,
    },
    /// gather: an index is outside `[0, params.shape[axis])`.
    #[error(
        "indices{} = {value} is not in [0, {limit})",
        position_string(position)
    )]
    BadIndex {
        /// Where the index is in `indices` (empty for scalar indices).
        position: Vec<usize>,
        /// Its value.
        value: i128,
        /// `params.shape[axis]`.
        limit: usize,
    },
    /// gather_nd: an index vector does not address an element or slice of params.
    #[error("{}", bad_index_vector_message(position, values, params_shape, *batch_dims))]
    BadIndexVector {
        /// Where the vector is in `indices.shape[:-1]` (empty for 1-D indices).
        position: Vec<usize>,
        /// The vector, as written in `indices`.
        values: Vec<i128>,
        /// params.shape.
        params_shape: Vec<usize>,
        /// batch_dims of the call.
        batch_dims: usize,
    },
    /// A ragged operand's index outside its row (or an index vector that leaves params'
    /// rows): the component, its value and the row's length.
    #[error(
        "indices{} = [{}] does not index into ragged params: component {component} = {value} is not in [0, {limit})",
        position_string(position),
        join(values)
    )]
    RaggedBadIndexVector {
        /// Where the vector is in `indices.shape[:-1]` (the flat position for ragged indices).
        position: Vec<usize>,
        /// The vector, as written in `indices`.
        values: Vec<i128>,
        /// The component that is out of range.
        component: usize,
        /// Its value.
        value: i128,
        /// The length of the row it indexes.
        limit: usize,
    },
    /// An embedding id outside the table, or outside the shard the strategy gives it.
    #[error("{}", match shard {
        None => format!("indices{} = {value} is not in [0, {total})", position_string(position)),
        Some((p, r)) => format!("indices{} = {value} is row {r} of shard {p}, which has no such row (the shards hold {total} rows; check the partition strategy)", position_string(position)),
    })]
    BadEmbeddingId {
        /// Where in the ids.
        position: Vec<usize>,
        /// The id.
        value: i128,
        /// The rows of all shards together.
        total: usize,
        /// The shard and row the strategy gives the id, when that row does not exist.
        shard: Option<(usize, usize)>,
    },
    // ---- Outputs and memory.
    /// A shape's element count (or byte size) does not fit in memory's address space.
    #[error(
        "shape {} of {what} is too large: its size overflows the address space",
        shape_string(shape)
    )]
    ShapeOverflow {
        /// What the shape is of (`output`, `params`, …).
        what: &'static str,
        /// The shape.
        shape: Vec<usize>,
    },
    /// The output could not be allocated.
    #[error("cannot allocate {bytes} bytes for the output")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: usize,
    },
    /// A caller's output buffer or array has the wrong shape.
    #[error(
        "output has shape {}, but the result has shape {}",
        shape_string(given),
        shape_string(expected)
    )]
    OutputShapeMismatch {
        /// The shape of the buffer given.
        given: Vec<usize>,
        /// The shape the result needs.
        expected: Vec<usize>,
    },
    /// An ndarray shape could not be made from the data (a bug if ever seen).
    #[error("invalid array shape {}: {reason}", shape_string(shape))]
    InvalidShape {
        /// The shape.
        shape: Vec<usize>,
        /// What ndarray said.
        reason: String,
    },
    // ---- Scatters, gradients and embedding lookups.
    /// scatter_nd: `updates` does not have the shape `indices.shape[:-1] + shape[depth:]`.
    #[error(
        "updates has shape {}, but indices and shape need {}",
        shape_string(found),
        shape_string(expected)
    )]
    UpdatesShapeMismatch {
        /// The shape needed.
        expected: Vec<usize>,
        /// The shape given.
        found: Vec<usize>,
    },
    /// scatter_nd: an index vector does not address a slice of the output.
    #[error(
        "indices{} = [{}] does not index into shape {}",
        position_string(position),
        join(values),
        shape_string(shape)
    )]
    BadScatterIndex {
        /// Where the vector is in `indices.shape[:-1]`.
        position: Vec<usize>,
        /// The vector.
        values: Vec<i128>,
        /// The output's shape.
        shape: Vec<usize>,
    },
    /// tensor_scatter_nd_*: shapes TensorFlow refuses, with its message
    /// (the shape rule `tensor_scatter_shape`).
    #[error("{message}")]
    TensorScatterShape {
        /// TensorFlow's message.
        message: String,
    },
    /// An op given a tensor of a dtype it has no kernel for (TensorFlow's `NotFoundError`).
    #[error(
        "Could not find device for node: {{{{node {op}}}}} = {op}[T={}]: {op} takes {supported}",
        dtype.tf_enum_name()
    )]
    NoKernel {
        /// TensorFlow's name of the op.
        op: &'static str,
        /// The dtype given.
        dtype: DType,
        /// The dtypes the op takes, in words.
        supported: String,
    },
    /// An op's second tensor of another dtype than its first, in TensorFlow's words.
    #[error(
        "cannot compute {op} as input #{input}(zero-based) was expected to be a {} tensor but \
         is a {} tensor",
        expected.tf_short_name(),
        found.tf_short_name()
    )]
    InputDType {
        /// TensorFlow's name of the op.
        op: &'static str,
        /// The input's position.
        input: usize,
        /// The dtype needed.
        expected: DType,
        /// The dtype given.
        found: DType,
    },
    /// unsorted_segment_sum: `segment_ids.shape` is not a prefix of `data.shape`.
    #[error(
        "data.shape = {} does not start with segment_ids.shape = {}",
        shape_string(data),
        shape_string(segment_ids)
    )]
    SegmentIdsShape {
        /// data.shape.
        data: Vec<usize>,
        /// segment_ids.shape.
        segment_ids: Vec<usize>,
    },
    /// unsorted_segment_sum: a segment id is out of range.
    #[error(
        "segment_ids{} = {value} is out of range [0, {num_segments})",
        position_string(position)
    )]
    SegmentIdOutOfRange {
        /// Where the id is in `segment_ids`.
        position: Vec<usize>,
        /// The id.
        value: i128,
        /// num_segments.
        num_segments: usize,
    },
    /// A sorted segment reduction's ids, refused with TensorFlow's message.
    #[error("{reason}")]
    Segment {
        /// TensorFlow's words.
        reason: String,
    },
    /// A gradient's upstream `grad` does not have the op's output shape.
    #[error(
        "grad has shape {}, but the op's output has shape {}",
        shape_string(found),
        shape_string(expected)
    )]
    GradShapeMismatch {
        /// The op's output shape.
        expected: Vec<usize>,
        /// The shape given.
        found: Vec<usize>,
    },
    /// The sparse gather_nd gradient needs rank-2 indices of depth 1.
    #[error(
        "a sparse gather_nd gradient needs indices of shape [n, 1], got {}",
        shape_string(indices_shape)
    )]
    SparseNeedsRows {
        /// indices.shape.
        indices_shape: Vec<usize>,
    },
    /// An embedding lookup's table: no shards, or shards whose rows differ.
    #[error("{reason}")]
    EmbeddingShards {
        /// What is wrong.
        reason: String,
    },
    /// Row splits that do not form a ragged tensor, in TensorFlow's words, then what is
    /// wrong where.
    #[error("Arguments to {check} do not form a valid RaggedTensor:{reason}")]
    InvalidRagged {
        /// TensorFlow's name of the check (`from_row_splits`, `_from_row_partition`).
        check: &'static str,
        /// What is wrong, and where.
        reason: String,
    },
    /// A ragged gather's arguments that TensorFlow refuses with a `ValueError` (axis,
    /// batch_dims, batch shapes), in its words.
    #[error("{0}")]
    RaggedValue(String),
    // ---- PyTorch's ops (`embedding_bag`, `scatter_reduce`): PyTorch's messages, sorted by
    // the Python class PyTorch raises them as.
    /// Arguments of the wrong rank or shape (PyTorch's `ValueError`s).
    #[error("{0}")]
    TorchValue(String),
    /// A dimension out of range (PyTorch's `IndexError`).
    #[error("{0}")]
    TorchIndex(String),
    /// Shapes that disagree, indices, offsets or `padding_idx` out of range, an unknown
    /// reduction (PyTorch's `RuntimeError`s).
    #[error("{0}")]
    TorchRuntime(String),
    /// A combination PyTorch does not implement: per-sample weights outside `"sum"`, a
    /// reduction a dtype has no kernel for (PyTorch's `NotImplementedError`s).
    #[error("{0}")]
    TorchNotImplemented(String),
    /// Sparse ids or weights whose parts disagree.
    #[error("invalid SparseTensor: {reason}")]
    SparseTensor {
        /// What is wrong.
        reason: String,
    },
    // ---- Values and dtypes of the dtype-erased API and the options.
    /// A fill value the element type cannot hold.
    #[error("fill value {value} does not fit elements of type {dtype}")]
    FillValue {
        /// The value.
        value: String,
        /// The element type.
        dtype: String,
    },
    /// Dtype-erased API: indices are not of an integer dtype.
    #[error(
        "indices must be an integer tensor ({}), got {dtype}",
        DType::names_where(DType::is_index)
    )]
    IndicesNotInteger {
        /// The dtype found.
        dtype: DType,
    },
    /// Dtype-erased API: a tensor of one dtype was given where another was needed.
    #[error("expected a tensor of dtype {expected}, got {found}")]
    DTypeMismatch {
        /// The dtype needed.
        expected: DType,
        /// The dtype found.
        found: DType,
    },
    /// Dtype-erased API: a tensor of strings where an op needs elements of a fixed width:
    /// as records, as a caller's output, or written in place (a tensor of strings owns its
    /// bytes).
    #[error(
        "{dtype} has no fixed width: a tensor of strings owns its bytes, so it is never \
         records, a caller's output or written in place (run into a new tensor instead)"
    )]
    NotFixedWidth {
        /// The dtype found.
        dtype: DType,
    },
    /// A broken invariant of ndgather itself, reported instead of a panic: a bug to report.
    #[error("internal error: {0} (a bug in ndgather; please report it)")]
    Internal(&'static str),
    /// Dtype-erased API: data length and shape disagree.
    #[error(
        "shape {} needs {expected} elements, but {found} were given",
        shape_string(shape)
    )]
    DataLength {
        /// The shape.
        shape: Vec<usize>,
        /// Element count of the shape.
        expected: usize,
        /// Elements given.
        found: usize,
    },
    // ---- The op contract: names, attributes and inputs of a call by name.
    /// No op of this name is registered.
    #[error("no op named {name:?}; the ops are {known}")]
    UnknownOp {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// An attribute's value is of the wrong kind (a float where an integer is wanted): a
    /// `TypeError` in Python, as Python's own functions raise.
    #[error("{op}: attribute {attr:?} expected {expected}, got {got}")]
    AttributeKind {
        /// The op.
        op: &'static str,
        /// The attribute.
        attr: String,
        /// The kind it takes.
        expected: &'static str,
        /// The value given.
        got: String,
    },
    /// An attribute is unknown or out of range, or a required one is missing.
    #[error("{op}: attribute {attr:?} {reason}")]
    Attribute {
        /// The op.
        op: &'static str,
        /// The attribute.
        attr: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The inputs do not match the op's signature.
    #[error("{op}{}: {reason}", if input.is_empty() { String::new() } else { format!(": input {input:?}") })]
    OpInput {
        /// The op.
        op: &'static str,
        /// The input, or empty for the count.
        input: String,
        /// What is wrong.
        reason: String,
    },
    /// The op has no registered gradient.
    #[error("{op} has no registered gradient")]
    NoGradient {
        /// The op.
        op: &'static str,
    },
}

/// The memory layer's errors, each as the variant it always was.
impl From<MemError> for Error {
    fn from(e: MemError) -> Error {
        match e {
            MemError::TooLarge { what, shape } => Error::ShapeOverflow { what, shape },
            MemError::OutOfMemory { bytes } => Error::OutOfMemory { bytes },
            MemError::Unwritten => {
                Error::Internal("a copy left a slot of a fresh output unwritten")
            }
        }
    }
}

/// Shorthand for `Result<T, Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn axis_message(axis: i64, params_rank: usize) -> String {
    if axis == i64::MAX {
        "axis must be less than std::numeric_limits<int64_t>::max()".to_string()
    } else if axis == i64::MIN {
        "axis must be greater than std::numeric_limits<int64_t>::min()".to_string()
    } else {
        let min_rank = if axis < 0 {
            axis.unsigned_abs()
        } else {
            axis as u64 + 1
        };
        format!("Shape must be at least rank {min_rank} but is rank {params_rank}")
    }
}

/// TensorFlow's `TensorShape::DebugString` form: `[2,3]`.
pub(crate) fn shape_string(shape: &[usize]) -> String {
    let mut s = String::from("[");
    for (k, d) in shape.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        s.push_str(&d.to_string());
    }
    s.push(']');
    s
}

/// TensorFlow's `SliceDebugString`: `""` for a scalar position, `[i,j]` otherwise.
fn position_string(position: &[usize]) -> String {
    if position.is_empty() {
        String::new()
    } else {
        shape_string(position)
    }
}

fn join(values: &[i128]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn bad_index_vector_message(
    position: &[usize],
    values: &[i128],
    params_shape: &[usize],
    batch_dims: usize,
) -> String {
    let mut s = format!("indices{} = [", position_string(position));
    for (k, v) in values.iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        s.push_str(&v.to_string());
    }
    s.push_str("] does not index into param shape ");
    if batch_dims == 0 {
        s.push_str(&shape_string(params_shape));
    } else {
        let tail = params_shape.get(batch_dims..).unwrap_or(&[]);
        s.push_str(&format!(
            "{} (params.shape[{batch_dims}:] of {}, batch_dims={batch_dims})",
            shape_string(tail),
            shape_string(params_shape)
        ));
    }
    s
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::Gather => "gather",
            OpKind::GatherNd => "gather_nd",
        })
    }
}
