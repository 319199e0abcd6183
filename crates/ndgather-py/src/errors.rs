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

/// The class of an error of the core, the one table both of its ways to Python read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Memory,
    Type,
    Value,
    Index,
    Runtime,
    NotImplemented,
    NotFound,
    BadIndex,
    Axis,
    InvalidArgument,
}

/// `err`'s class: `MemoryError` for an allocation that failed, `TypeError` for indices of a
/// non-integer type, `BadIndexError` for an index out of range, `InvalidArgumentError`
/// otherwise.
pub(crate) fn class_of(err: &Error) -> Class {
    match err {
        Error::OutOfMemory { .. } => Class::Memory,
        Error::IndicesNotInteger { .. }
        | Error::DTypeMismatch { .. }
        | Error::AttributeKind { .. } => Class::Type,
        // PyTorch's ops (embedding_bag, scatter_reduce): PyTorch's classes.
        Error::TorchValue(_) => Class::Value,
        // TensorFlow's ragged gathers refuse these arguments with a ValueError.
        Error::RaggedValue(_) => Class::Value,
        // NumPy's and PyTorch's IndexErrors.
        Error::TorchIndex(_) | Error::AlongIndicesNotInteger => Class::Index,
        Error::TorchRuntime(_) => Class::Runtime,
        Error::TorchNotImplemented(_) => Class::NotImplemented,
        Error::NoKernel { .. } => Class::NotFound,
        Error::BadIndex { .. }
        | Error::BadIndexVector { .. }
        | Error::RaggedBadIndexVector { .. } => Class::BadIndex,
        Error::AxisOutOfRange { .. } | Error::AlongAxisOutOfRange { .. } => Class::Axis,
        _ => Class::InvalidArgument,
    }
}

impl Class {
    /// The built-in exception the class's own derives from, by the number a PyTorch kernel
    /// raises it with (`_torch_op.cc`; only PyTorch's classes cross its dispatcher):
    /// 1 `RuntimeError`, 2 `ValueError`, 3 `IndexError`, 4 `TypeError`,
    /// 5 `NotImplementedError`, 6 `torch.OutOfMemoryError` (a `RuntimeError`, PyTorch's
    /// class for memory it could not allocate, where ndgather's is `MemoryError`).
    pub(crate) fn builtin(self) -> i32 {
        match self {
            Class::Runtime => 1,
            // (ndgather's AxisError is an InvalidArgumentError, a ValueError.)
            Class::Value | Class::BadIndex | Class::InvalidArgument | Class::Axis => 2,
            Class::Index => 3,
            Class::Type | Class::NotFound => 4,
            Class::NotImplemented => 5,
            Class::Memory => 6,
        }
    }
}

/// The Python exception for an error of the core, of its class (see [`class_of`]).
pub(crate) fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match class_of(&err) {
        Class::Memory => PyMemoryError::new_err(message),
        Class::Type => PyTypeError::new_err(message),
        Class::Value => PyValueError::new_err(message),
        Class::Index => PyIndexError::new_err(message),
        Class::Runtime => PyRuntimeError::new_err(message),
        Class::NotImplemented => PyNotImplementedError::new_err(message),
        Class::NotFound => NotFoundError::new_err(message),
        Class::BadIndex => BadIndexError::new_err(message),
        Class::Axis => AxisError::new_err(message),
        Class::InvalidArgument => InvalidArgumentError::new_err(message),
    }
}
