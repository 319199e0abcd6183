//! Every integration test of this crate but those that need a process of their own, as
//! modules of one binary: one link, and one copy of the crate's generic code.

mod common;

mod cli;
mod cli_conformance;
mod doc_examples;
mod doc_pages;
mod every_dtype;
mod fuzz_replay;
mod hostile_files;
mod inputs;
mod op_commands;
mod print;
mod progress;
mod ragged;
