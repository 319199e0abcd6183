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
    /// attribute's rank.
    #[error("{attr} must be {expected}")]
    FedShape {
        /// The attribute.
        attr: String,
        /// `"scalar"` or `"a vector"`.
        expected: &'static str,
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

/// Shorthand for `Result<T, OpError>`.
pub type OpResult<T> = std::result::Result<T, OpError>;
