//! ndgather's errors as Python exceptions.

use ndgather::GatherError;
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    ndgather,
    InvalidArgumentError,
    PyValueError,
    "TensorFlow's InvalidArgumentError: a bad argument or index value. A subclass of \
     ValueError; str(e) is TensorFlow's message."
);

/// The Python exception for an error of the core: `MemoryError` for an allocation that
/// failed, `TypeError` for indices of a non-integer type, `InvalidArgumentError` otherwise.
pub(crate) fn to_py(err: GatherError) -> PyErr {
    match err {
        GatherError::OutOfMemory { .. } => PyMemoryError::new_err(err.to_string()),
        GatherError::IndicesNotInteger { .. } | GatherError::DTypeMismatch { .. } => {
            PyTypeError::new_err(err.to_string())
        }
        _ => InvalidArgumentError::new_err(err.to_string()),
    }
}
