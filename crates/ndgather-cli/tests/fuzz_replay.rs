//! The fuzz targets as an ordinary test: every committed input of every target (its seeds,
//! its minimised corpus and the regressions fuzzing found) replayed through the same
//! function the target calls (fuzz/src/lib.rs). A target body that stops compiling, or an
//! input that panics, fails `cargo test`; `cargo fuzz` itself is needed only to find more.

#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod fuzz;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The committed inputs of `target`: under seeds/, corpus/ and regressions/.
fn inputs(target: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in ["seeds", "corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(folder).join(target)) else {
            continue;
        };
        files.extend(entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
    }
    files.sort();
    files
}

#[test]
fn every_committed_input_replays_without_a_panic() {
    for &(name, body) in fuzz::TARGETS {
        let files = inputs(name);
        assert!(
            !files.is_empty(),
            "fuzz target {name} has no committed inputs"
        );
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let run = std::panic::catch_unwind(|| body(&data));
            assert!(
                run.is_ok(),
                "fuzz target {name} panics on {}",
                file.display()
            );
        }
    }
}

/// Each target that `cargo fuzz` builds is a wrapper around its body here, and each body
/// is built as a target: the two lists cannot drift apart.
#[test]
fn every_target_is_a_wrapper_around_its_replayed_body() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut names: Vec<String> = fuzz::TARGETS
        .iter()
        .map(|(n, _)| format!("{n}.rs"))
        .collect();
    names.sort();
    assert_eq!(files, names);
    for (name, _) in fuzz::TARGETS {
        let text = std::fs::read_to_string(fuzz_dir().join(format!("fuzz_targets/{name}.rs")));
        assert!(
            text.unwrap().contains(&format!(
                "fuzz_target!(|data: &[u8]| ndgather_fuzz::{name}(data))"
            )),
            "fuzz_targets/{name}.rs"
        );
        assert!(
            manifest.contains(&format!(
                "name = \"{name}\"\npath = \"fuzz_targets/{name}.rs\""
            )),
            "fuzz/Cargo.toml builds no target {name}"
        );
    }
}
