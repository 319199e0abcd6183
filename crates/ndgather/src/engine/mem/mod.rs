//! Where outputs live: fresh outputs ([`output`]), buffers given back for reuse
//! ([`recycle`]), callers' arrays of any layout ([`layout`]), and fixed-width elements seen
//! as units of bytes ([`units`]).

pub(crate) mod layout;
pub(crate) mod output;
pub(crate) mod recycle;
pub(crate) mod units;
