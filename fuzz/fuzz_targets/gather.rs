//! The `gather` target: its body is `ndgather_fuzz::gather` (fuzz/src/lib.rs), which the CLI
//! crate's tests replay on every committed input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ndgather_fuzz::gather(data));
