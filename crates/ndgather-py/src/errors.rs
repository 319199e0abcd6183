//! ndgather's errors as Python exceptions.

use ndgather::Error;
use pyo3::exceptions::{
    PyIndexError, PyMemoryError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;

pyo3::create_exception!(
    ndgather,
    InvalidArgumentError,
    PyValueError,
    "TensorFlow's InvalidArgumentError: a bad argument or index value. A subclass of \
     ValueError; str(e) is TensorFlow's message."
);

pyo3::create_exception!(
    ndgather,
    NotFoundError,
    PyTypeError,
    "TensorFlow's NotFoundError for an op given a dtype it has no kernel for. A subclass of \
     TypeError; str(e) begins with TensorFlow's message."
);

/// The subclass for an index outside its dimension. Python knows it by the same name, so that
/// tracebacks of the TensorFlow functions say `InvalidArgumentError`, as TensorFlow's do; the
/// NumPy functions (`take`, `take_along_axis`) catch it (`_core.BadIndexError`) and raise it
/// as an `IndexError` too, as NumPy does.
pub(crate) mod bad_index {
    pyo3::create_exception!(
        ndgather,
        InvalidArgumentError,
        super::InvalidArgumentError,
        "TensorFlow's InvalidArgumentError for an index outside its dimension."
    );
}
pub(crate) use bad_index::InvalidArgumentError as BadIndexError;

/// The subclass for an axis outside params' rank, by the same name for the same reason; the
/// NumPy functions catch it (`_core.AxisError`) and raise NumPy's `AxisError`.
pub(crate) mod axis {
    pyo3::create_exception!(
        ndgather,
        InvalidArgumentError,
        super::InvalidArgumentError,
        "TensorFlow's InvalidArgumentError for an axis outside params' rank."
    );
}
pub(crate) use axis::InvalidArgumentError as AxisError;

/// The Python exception for an error of the core: `MemoryError` for an allocation that
/// failed, `TypeError` for indices of a non-integer type, `BadIndexError` for an index out
/// of range, `InvalidArgumentError` otherwise.
pub(crate) fn to_py(err: Error) -> PyErr {
    match err {
        Error::OutOfMemory { .. } => PyMemoryError::new_err(err.to_string()),
        Error::IndicesNotInteger { .. }
        | Error::DTypeMismatch { .. }
        | Error::AttributeKind { .. } => PyTypeError::new_err(err.to_string()),
        // PyTorch's ops (embedding_bag, scatter_reduce): PyTorch's classes.
        Error::TorchValue(_) => PyValueError::new_err(err.to_string()),
        // TensorFlow's ragged gathers refuse these arguments with a ValueError.
        Error::RaggedValue(_) => PyValueError::new_err(err.to_string()),
        // NumPy's and PyTorch's IndexErrors.
        Error::TorchIndex(_) | Error::AlongIndicesNotInteger => {
            PyIndexError::new_err(err.to_string())
        }
        Error::TorchRuntime(_) => PyRuntimeError::new_err(err.to_string()),
        Error::TorchNotImplemented(_) => PyNotImplementedError::new_err(err.to_string()),
        Error::NoKernel { .. } => NotFoundError::new_err(err.to_string()),
        Error::BadIndex { .. }
        | Error::BadIndexVector { .. }
        | Error::RaggedBadIndexVector { .. } => BadIndexError::new_err(err.to_string()),
        Error::AxisOutOfRange { .. } | Error::AlongAxisOutOfRange { .. } => {
            AxisError::new_err(err.to_string())
        }
        _ => InvalidArgumentError::new_err(err.to_string()),
    }
}
