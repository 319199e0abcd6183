//! Every integration test of this crate but those that need a process of their own, as
//! modules of one binary: one link, and one copy of the crate's generic code.

mod common;

mod adversarial;
mod along_scatter;
mod architecture;
mod arith;
mod conformance;
mod embedding;
mod embedding_bag;
mod embedding_ops;
mod errors;
mod fed_attrs;
mod fill;
mod gradients;
mod graph_registered;
mod in_place;
mod index_widening;
mod linear;
mod op_api;
mod properties;
mod ragged;
mod records;
mod registry;
mod segment;
mod shape_rules;
mod small_call;
mod take_along_axis;
mod tensor_api;
mod tensor_scatter;
