//! The pieces of the `ndgather` command-line tool, as a library: `.npy` reading and writing,
//! array arguments (files or literals), NumPy-style printing and the benchmark harness.

pub mod bench;
pub mod error;
pub mod input;
pub mod npy;
pub mod print;
