//! The pieces of the `ndgather` command-line tool, as a library: `.npy` reading and writing,
//! array arguments (files or literals), NumPy-style printing and the benchmark harness.
//!
//! ```
//! let t = ndgather::literal::parse("[[0, 1, 2], [10, 11, 12]]").unwrap();
//! let out = t.gather(&ndgather::literal::parse("[1]").unwrap(), &ndgather::GatherOptions::new()).unwrap();
//! assert_eq!(ndgather_cli::print::format(&out), "shape=(1, 3) dtype=int32\n[[10 11 12]]");
//! ```

pub mod bench;
pub mod error;
pub mod input;
pub mod npy;
pub mod print;
