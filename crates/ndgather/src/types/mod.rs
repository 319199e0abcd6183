//! The element types and what describes a call's values: the dtype table, [`Tensor`] and its
//! views, ragged tensors, strings, index types and bad-index policies, errors.
//!
//! [`Tensor`]: crate::Tensor

pub(crate) mod arith;
pub(crate) mod dtype;
pub(crate) mod error;
pub(crate) mod index;
pub(crate) mod ragged;
pub(crate) mod strings;
pub(crate) mod tensor;
pub(crate) mod value;
