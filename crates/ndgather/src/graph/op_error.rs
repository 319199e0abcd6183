//! The errors of the op API.

use crate::types::dtype::DType;
use crate::types::error::Error;

/// Errors of the op API: the op's own errors, with TensorFlow's wording, and the graph's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// The gather itself refused (at creation, or when run).
    #[error(transparent)]
    Gather(#[from] Error),
    /// A placeholder was run without a value.
    #[error("You must feed a value for placeholder tensor '{name}' with dtype {dtype} and shape {shape}")]
    MissingFeed {
        /// The placeholder's name.
        name: String,
        /// Its dtype.
        dtype: DType,
        /// Its static shape.
        shape: String,
    },
    /// A feed's shape does not fit its placeholder's.
    #[error("You must feed a value for placeholder tensor '{name}' with shape {expected}, but the value has shape {found}")]
    FeedShape {
        /// The placeholder's name.
        name: String,
        /// The placeholder's static shape.
        expected: String,
        /// The fed shape.
        found: String,
    },
    /// An operand belongs to another graph or scope.
    #[error("operand '{name}' belongs to another graph")]
    ForeignOperand {
        /// The operand's op name.
        name: String,
    },
    /// Something that only a graph can do was asked of an eager scope, or the reverse, or
    /// feeds of one graph were given to another's session.
    #[error("{0}")]
    Mode(String),
    /// A broken invariant of the op API itself (a bug if ever seen): not the caller's doing.
    #[error("internal error in ndgather's op API: {0}")]
    Internal(String),
    /// A tensor that feeds an attribute (`GatherV2`'s axis, `num_segments`) is not of the
    /// attribute's rank: TensorFlow's kernel's words where it takes the tensor.
    #[error("{}", fed_shape_text(attr, *rank, shape))]
    FedShape {
        /// The attribute.
        attr: String,
        /// The rank it takes: 0 (a scalar) or 1 (a vector).
        rank: usize,
        /// The tensor's shape, as TensorFlow prints it (`[1]`).
        shape: String,
    },
    /// A vector that feeds a list attribute is longer than any shape.
    #[error("{attr} has {len} values, more than the {max} dimensions a shape may have")]
    FedTooLong {
        /// The attribute.
        attr: String,
        /// The vector's length.
        len: usize,
        /// The most a fed vector may have: TensorFlow's most dimensions.
        max: usize,
    },
    /// A feed or fetch names an output of the wrong dtype (only possible through `Tensor`).
    #[error("expected dtype {expected}, got {found}")]
    DType {
        /// The dtype or dtypes needed.
        expected: String,
        /// The dtype given.
        found: DType,
    },
}

/// The message of [`OpError::FedShape`]: TensorFlow's `GatherV2`, `UnsortedSegmentSum` and
/// `ScatterNd` kernels' for their inputs.
fn fed_shape_text(attr: &str, rank: usize, shape: &str) -> String {
    match (attr, rank) {
        ("axis", _) => "axis must be scalar".into(),
        ("num_segments", _) => format!("num_segments should be a scalar, not shape {shape}"),
        ("shape", _) => "Shape must be a vector".into(),
        (_, 0) => format!("{attr} must be a scalar, not shape {shape}"),
        _ => format!("{attr} must be a vector, not shape {shape}"),
    }
}

/// Shorthand for `Result<T, OpError>`.
pub type OpResult<T> = std::result::Result<T, OpError>;
