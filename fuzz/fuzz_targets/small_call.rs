//! The `small_call` target: its body is `ndgather_fuzz::small_call` (fuzz/src/lib.rs), which the CLI
//! crate's tests replay on every committed input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ndgather_fuzz::small_call(data));
