//! # ndgather
//!
//! TensorFlow's gather family for Rust — `tf.gather`, `tf.gather_nd`, `take_along_axis` and
//! `put_along_axis`, the embedding lookups and `embedding_bag`, `tensor_scatter_nd_*`,
//! `scatter_reduce`, the segment reductions, ragged operands and the gradients — with the
//! exact semantics of the library whose op it is: the same outputs bit for bit, the same
//! checks in the same order, that library's error messages, and never a panic on bad input.
//!
//! ```
//! use ndarray::array;
//! use ndgather::{gather, gather_nd, GatherOptions};
//!
//! let params = array![[0.0f32, 1.0, 2.0],
//!                     [10.0, 11.0, 12.0],
//!                     [20.0, 21.0, 22.0],
//!                     [30.0, 31.0, 32.0]];
//! // tf.gather(params, indices=[3,1])
//! assert_eq!(gather(&params, &array![3, 1])?,
//!            array![[30.0, 31.0, 32.0], [10.0, 11.0, 12.0]].into_dyn());
//! // tf.gather(params, indices=[2,1], axis=1)
//! assert_eq!(GatherOptions::new().axis(1).gather(&params, &array![2, 1])?,
//!            array![[2.0, 1.0], [12.0, 11.0], [22.0, 21.0], [32.0, 31.0]].into_dyn());
//! // tf.gather_nd(params, [[0, 0], [3, 2]])
//! assert_eq!(gather_nd(&params, &array![[0, 0], [3, 2]])?, array![0.0, 32.0].into_dyn());
//!
//! // Bad input is an error with TensorFlow's wording.
//! let err = gather(&params, &array![[0], [5]]).unwrap_err();
//! assert_eq!(err.to_string(), "indices[1,0] = 5 is not in [0, 4)");
//! # Ok::<(), ndgather::Error>(())
//! ```
//!
//! ## The pieces
//! - [`shape`]: the shape rules, on shapes with unknown dimensions or rank; the eager ops
//!   use the same functions.
//! - the plan (private): a valid call flattened to `[batch, outer, gathered, inner]`
//!   (gather) or `batch × rows` index vectors of `depth` components (gather_nd).
//! - the copy kernels (private): one pass that checks every index, then slice copies (for a
//!   fresh output the copy goes first, and the check runs only if the copy met a bad index).
//! - the ops: each op of the family is one value of the [`registry`], found by its name, with
//!   its attributes, shape inference, `run` and gradient ([`OpDef`]). The graph
//!   ([`graph::Scope::op`]) and every front end (Python, Java, the CLI) reach the ops there.
//! - typed sugar: [`gather`], [`gather_nd`], [`GatherOptions`] and [`GatherNdOptions`] on any
//!   `ndarray` array or view; [`Tensor`], dtype-erased, for callers that learn the dtype at
//!   run time, whose strings are [`Strings`] (one byte buffer and each element's span).
//!
//! ## Semantics
//! - `gather`: output shape `params.shape[:axis] + indices.shape[batch_dims:] +
//!   params.shape[axis+1:]`. `axis` defaults to the first non-batch dimension (`batch_dims`
//!   after normalisation) and may be negative; `batch_dims` may be negative (counted from
//!   rank(indices)) and is honoured at every axis, so `axis=0, batch_dims=1` is an error, as
//!   in TensorFlow's kernel (TensorFlow's Python wrapper silently drops `batch_dims` there).
//! - `gather_nd`: output shape `indices.shape[:-1] + params.shape[batch_dims +
//!   indices.shape[-1]:]`. Index depth from 0 (each row copies all of params) to rank(params),
//!   with no limit of 7 as in TensorFlow; the leading `batch_dims` dimensions of params and
//!   indices must be equal.
//! - Bad indices: [`BadIndices::Error`] (default; TensorFlow on the CPU, reporting the first
//!   bad index in row-major order), [`BadIndices::Ignore`] (TensorFlow on the GPU), and, beyond
//!   TensorFlow, [`BadIndices::Clamp`] (XLA), [`BadIndices::Negative`] (NumPy's negative
//!   indices, the array API's rule), [`BadIndices::Wrap`] (NumPy's and JAX's `mode="wrap"`:
//!   modulo the dimension) and [`BadIndices::Fill`] (JAX's `mode="fill"`).
//! - Empty tensors behave as TensorFlow's: gather looks at no index when nothing is copied;
//!   gather_nd reports rows requested from an empty params.
//! - Where TensorFlow limits params to what its index type can address (`int16`: 32767),
//!   ndgather refuses the same calls for `i16`, `i32` and `i64` indices with the same message;
//!   the unsigned index types have no such limit.
#![deny(missing_docs)]
// `unsafe` lives in `mem` and `engine::simd`, each block beside its proof; every
// other module forbids it (`tests/architecture.rs` checks that none is left out).
#![deny(unsafe_code)]
#![warn(unreachable_pub)]

mod engine;
#[forbid(unsafe_code)]
pub mod graph;
#[allow(unsafe_code)]
mod mem;
/// The unit macro at the crate's root, where the other dtype macros are named from.
pub(crate) use mem::units::with_unit;
/// Lets unit tests name the crate as its users do (`ndgather::…`).
#[cfg(test)]
extern crate self as ndgather;
#[forbid(unsafe_code)]
mod ops;
#[forbid(unsafe_code)]
pub mod shape;

/// Memory, in one place: the pool that keeps freed outputs for reuse (its limit, and what a
/// forked child must call first), tables on 2 MiB pages, and the raw view through which a
/// front end lends another library's memory ([`RawView`](memory::RawView)).
pub mod memory {
    pub use crate::mem::raw_view::{RawView, RawViewMut};
    pub use crate::mem::recycle::{after_fork_in_child, recycle, recycle_limit, set_recycle_limit};

    /// An empty vector with room for `capacity` elements, whose memory the OS is asked to
    /// back with 2 MiB pages where it offers them (Linux's transparent huge pages, from
    /// 4 MiB up; elsewhere, or below that, a plain allocation). For a large table read at
    /// random, the params of an embedding lookup, each read then costs fewer TLB misses.
    /// NumPy allocates its arrays of 4 MiB and more the same way, so tables passed from
    /// NumPy already have it.
    ///
    /// Every suite case read faster from a table on 2 MiB pages (figures: BENCHMARKS.md,
    /// "Measurements behind the code").
    ///
    /// Fill it before anything else touches its memory: the pages are chosen when first
    /// written.
    ///
    /// # Errors
    /// [`Error::ShapeOverflow`](crate::Error::ShapeOverflow) if `capacity` elements would
    /// exceed `isize::MAX` bytes; [`Error::OutOfMemory`](crate::Error::OutOfMemory) if the
    /// allocation fails.
    ///
    /// # Examples
    /// ```
    /// use ndgather::ndarray::{array, Array2};
    ///
    /// let (rows, width) = (1 << 16, 16);
    /// let mut table: Vec<f32> = ndgather::memory::huge_page_vec(rows * width)?;
    /// table.extend((0..rows * width).map(|i| i as f32));
    /// let params = Array2::from_shape_vec((rows, width), table).unwrap();
    /// let rows_3_and_1 = ndgather::gather(&params, &array![3i32, 1])?;
    /// assert_eq!(rows_3_and_1[[0, 0]], 48.0);
    /// assert_eq!(rows_3_and_1[[1, 15]], 31.0);
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    pub fn huge_page_vec<T>(capacity: usize) -> crate::Result<Vec<T>> {
        Ok(crate::mem::output::huge_page_vec(capacity)?)
    }
}
#[forbid(unsafe_code)]
mod types;

pub use ops::contract::OpDef;
pub use ops::gather::{gather, gather_nd, Element, GatherNdOptions, GatherOptions, Resolved};
pub(crate) use ops::ragged_gather::RaggedOperand;
pub use ops::registry;
pub use ops::take_along_axis::TakeAlongAxisOptions;
pub use ops::{embedding, embedding_bag, grad, scatter, scatter_reduce, segment, tensor_scatter};
pub use ops::{Op, Out};
pub use types::arith::{Arith, Number};
pub use types::dtype::{
    ArrayElement, DType, Kind, Plain, Tensor, TensorElement, TensorView, TensorViewMut,
};
pub use types::error::{Error, OpKind, Result};
pub use types::index::{BadIndices, IndexLimit, IndexType};
pub use types::ragged::{Ragged, RaggedView, RowSplits};
pub use types::strings::{StringElement, Strings};
pub use types::value::FillValue;

pub use float8::{F8E4M3, F8E5M2};
pub use half::{bf16, f16};
pub use types::value::{FloatInfo, FloatValue};

/// The README's examples, run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The Rust examples of the documentation site's pages, run as doctests.
#[cfg(doctest)]
pub mod doc_pages {
    /// `docs/rust.md`.
    #[doc = include_str!("../../../docs/rust.md")]
    pub struct Rust;
    /// `docs/concepts/graphs.md`.
    #[doc = include_str!("../../../docs/concepts/graphs.md")]
    pub struct Graphs;
}
pub use ndarray;
pub use num_complex::{Complex32, Complex64};
