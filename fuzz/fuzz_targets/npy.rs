//! The `.npy` reader on fuzzed files: an error or an array, never a panic, an abort or an
//! allocation the file cannot back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("ndgather-fuzz-{}.npy", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    for map in [false, true] {
        if let Ok(loaded) = ndgather_cli::npy::read(&path, map) {
            let _ = loaded.view();
        }
    }
});
