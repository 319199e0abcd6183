//! The `.npy` reader on fuzzed bytes: an error or an array, never a panic, an abort or an
//! allocation the bytes cannot back; and the whole array read from where it lies.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndgather_cli::inplace::Buffer;

fuzz_target!(|data: &[u8]| {
    let buffer = Buffer::Heap(data.to_vec());
    if let Ok(loaded) = ndgather_cli::npy::parse("fuzz", buffer, 0, data.len()) {
        let _ = loaded.into_tensor();
    }
});
