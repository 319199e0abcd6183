//! The crate's folders show its layers (mem, types, shape, engine with its SIMD module, ops,
//! graph) and its modules import each other in one direction: no cycle among
//! the modules of `src/` (a file's `crate::a::b` and `super::x` paths are its imports), and
//! no two files in different folders share a name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` but a module's unit tests, as its module path (`ops/gather`,
/// `mem/units`; a folder's `mod.rs` is the folder).
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            let name = if prefix.is_empty() {
                stem.clone()
            } else {
                format!("{prefix}/{stem}")
            };
            if path.is_dir() {
                walk(&path, &name, out);
            } else if path.extension().is_some_and(|e| e == "rs") && !stem.ends_with("tests") {
                let name = match stem.as_str() {
                    "mod" => prefix.to_string(),
                    _ => name,
                };
                out.insert(name, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), "", &mut out);
    out
}

/// The longest module path named by `segments` that is a module of the crate.
fn resolve(segments: &[String], modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("/"))
        .find(|m| modules.contains_key(m))
}

/// Module name (`tensor`, `graph/session`) → the modules it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let mut graph = BTreeMap::new();
    for (name, path) in &modules {
        let text = std::fs::read_to_string(path).unwrap();
        let parent: Vec<String> = match path.file_stem().unwrap().to_str().unwrap() {
            "mod" => name.split('/').map(String::from).collect(),
            _ => name.split('/').map(String::from).collect::<Vec<_>>()
                [..name.split('/').count() - 1]
                .to_vec(),
        };
        let mut deps = BTreeSet::new();
        for (prefix, base) in [("crate::", vec![]), ("super::", parent.clone())] {
            for part in text.split(prefix).skip(1) {
                let path: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == ':')
                    .collect();
                let mut segments = base.clone();
                segments.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
                if let Some(target) = resolve(&segments, &modules) {
                    // A module's own children are part of it, not imports of it.
                    let own_child = target.starts_with(&format!("{name}/"));
                    if target != *name && !own_child && !name.starts_with(&format!("{target}/")) {
                        deps.insert(target);
                    }
                }
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

fn cycle_from(
    node: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|n| n == node) {
        return Some(
            path[start..]
                .iter()
                .cloned()
                .chain([node.to_string()])
                .collect(),
        );
    }
    if !done.insert(node.to_string()) {
        return None;
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = cycle_from(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    None
}

#[test]
fn no_import_cycle_between_modules() {
    let graph = imports();
    assert!(graph.len() > 30, "found only {:?}", graph.keys());
    assert!(
        graph["ops"].contains("types/dtype"),
        "the scan sees imports"
    );
    assert!(
        graph["graph/session"].contains("graph/node"),
        "and graph/'s own"
    );
    assert!(
        graph["ops/gather"].contains("mem/output"),
        "and nested paths"
    );
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(node, &graph, &mut vec![], &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn folders_show_the_layers_and_no_two_files_share_a_name() {
    let modules = modules();
    for layer in [
        "mem",
        "types",
        "shape",
        "engine",
        "engine/simd",
        "ops",
        "graph",
    ] {
        assert!(
            modules.contains_key(layer),
            "no layer {layer}: {:?}",
            modules.keys()
        );
    }
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for name in modules.keys().filter(|n| n.contains('/')) {
        let stem = name.rsplit('/').next().unwrap().to_string();
        if let Some(other) = seen.insert(stem.clone(), name.clone()) {
            panic!("{other} and {name} share the name {stem}");
        }
    }
    let top: Vec<&String> = modules.keys().filter(|n| !n.contains('/')).collect();
    for name in &top {
        assert!(
            ["lib", "mem", "types", "shape", "engine", "ops", "graph"].contains(&name.as_str()),
            "{name}.rs lies outside the layers' folders"
        );
    }
}

/// Each layer imports only those below it: memory at the bottom (it knows no dtype, shape
/// or op), then the types and shapes, the engine, the ops, and the graph on top.
#[test]
fn no_layer_imports_one_above_it() {
    let rank = |m: &str| match m.split('/').next() {
        Some("mem") => 0,
        Some("types") | Some("shape") => 1,
        Some("engine") => 2,
        Some("ops") => 3,
        Some("graph") => 4,
        _ => 5,
    };
    for (module, deps) in imports() {
        for dep in deps {
            assert!(
                rank(&dep) <= rank(&module),
                "{module} imports {dep}, a layer above it"
            );
        }
    }
}

/// `unsafe` lives in `mem` and `engine/simd` only: no other file has an `unsafe`
/// block, function or impl (a kernel test calling the AVX2 clones excepted), and every
/// other top-level module is declared under `forbid(unsafe_code)`.
#[test]
fn unsafe_only_in_mem_and_simd() {
    let allowed = |m: &str| m == "mem" || m.starts_with("mem/") || m.starts_with("engine/simd");
    let mut files: Vec<(String, PathBuf)> = modules().into_iter().collect();
    files.push((
        "engine/kernel/tests".into(),
        src().join("engine/kernel/tests.rs"),
    ));
    for (module, path) in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let uses = ["unsafe {", "unsafe fn", "unsafe impl"]
            .iter()
            .any(|u| code.contains(u));
        assert!(allowed(&module) || !uses, "{module} has unsafe code");
    }
    let declared = |file: &str, modules: &[&str]| {
        let text = std::fs::read_to_string(src().join(file)).unwrap();
        for m in modules {
            let at = text
                .lines()
                .position(|l| l.ends_with(&format!("mod {m};")))
                .unwrap_or_else(|| panic!("{file} declares {m}"));
            let before = text.lines().nth(at.saturating_sub(1)).unwrap_or("");
            assert!(
                before.contains("forbid(unsafe_code)"),
                "{m} is not forbid(unsafe_code)"
            );
        }
    };
    declared("lib.rs", &["graph", "ops", "shape", "types"]);
    declared(
        "engine/mod.rs",
        &[
            "fill",
            "kernel",
            "layout",
            "ranges",
            "strided",
            "string_gather",
        ],
    );
}
