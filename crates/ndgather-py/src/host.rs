//! The host that the door gives each run (`ndgather::registry::Host`): a new output is an
//! array NumPy allocates, written in place by a call the core runs with the GIL held, and
//! long work runs with the GIL released, in the caller's pool (`pool.rs`).

use crate::{output, pool};
use ndgather::registry::Host;
use numpy::{PyArrayDescr, PyArrayDescrMethods};
use pyo3::prelude::*;
use std::mem::MaybeUninit;

pub(crate) struct NumpyHost<'py> {
    py: Python<'py>,
    /// The dtype of an output the op may write into NumPy's memory (params', for the ops
    /// that move elements); none for the others.
    dtype: Option<Bound<'py, PyArrayDescr>>,
    /// Whether long work releases the GIL: not for object arrays, whose addresses must stay
    /// alive from their read to the references taken.
    release: bool,
    /// The array allocated, once the op asked for one.
    array: Option<Bound<'py, PyAny>>,
}

impl<'py> NumpyHost<'py> {
    pub(crate) fn new(
        py: Python<'py>,
        dtype: Option<Bound<'py, PyArrayDescr>>,
        release: bool,
    ) -> NumpyHost<'py> {
        NumpyHost {
            py,
            dtype,
            release,
            array: None,
        }
    }

    /// The array the op wrote its result into, if it asked for one.
    pub(crate) fn take_array(&mut self) -> Option<Bound<'py, PyAny>> {
        self.array.take()
    }
}

impl Host for NumpyHost<'_> {
    fn allocate(&mut self, shape: &[usize], itemsize: usize) -> Option<&mut [MaybeUninit<u8>]> {
        let dtype = self.dtype.as_ref()?;
        if dtype.has_object() || dtype.itemsize() != itemsize {
            return None;
        }
        // NumPy's refusal (a MemoryError) is no error here: the op then makes the output
        // itself, and reports its own if that fails too.
        output::uninit_array(self.py, dtype, shape, &mut self.array).ok()
    }

    fn unlocked(&mut self, work: &mut (dyn FnMut() + Send)) {
        match self.release {
            true => pool::detached(self.py, work),
            false => pool::in_callers_pool(work),
        }
    }

    fn short(&mut self, work: &mut (dyn FnMut() + Send)) {
        // The GIL kept, as NumPy keeps it for small loops; still in the caller's pool.
        pool::in_callers_pool(work)
    }
}
