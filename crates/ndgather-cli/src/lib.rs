//! The pieces of the `ndgather` command-line tool, as a library: array arguments (`.npy`,
//! `.npz` members, safetensors tensors, standard input, literals), ragged `.npz` archives,
//! `.npy` reading and writing, NumPy-style printing and the benchmark harness.
//!
//! ```
//! use ndgather::{registry, OpDef, Out};
//! let t = ndgather_cli::literal::parse("[[0, 1, 2], [10, 11, 12]]").unwrap();
//! let ids = ndgather_cli::literal::parse("[1]").unwrap();
//! let gather = registry::find("gather").unwrap();
//! let out = gather.run(&[t.view().into(), ids.view().into()], Out::New).unwrap().unwrap();
//! let out = out.into_dense().unwrap();
//! assert_eq!(ndgather_cli::print::format(&out, &Default::default()), "shape=(1, 3) dtype=int32\n[[10 11 12]]");
//! ```

pub mod archive;
pub mod bench;
pub mod error;
pub mod examples;
pub mod inplace;
pub mod literal;
pub mod npy;
pub mod npy_header;
pub mod op_commands;
pub mod output;
pub mod print;
pub mod progress;
pub mod ragged;
pub mod source;
