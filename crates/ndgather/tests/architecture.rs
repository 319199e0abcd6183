//! The crate's modules import each other in one direction: no cycle among the modules of
//! `src/` (a file's `crate::x` and, inside `graph/` and `ops/`, `super::x` paths are its imports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name (`array`, `op/graph`) → the modules it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    for dir in ["", "graph", "ops"] {
        for entry in std::fs::read_dir(src.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let stem = path.file_stem().unwrap().to_str().unwrap();
            let name = if dir.is_empty() {
                stem.to_string()
            } else {
                format!("{dir}/{stem}")
            };
            let text = std::fs::read_to_string(&path).unwrap();
            let mut deps = BTreeSet::new();
            for (prefix, scope) in [("crate::", ""), ("super::", dir)] {
                for part in text.split(prefix).skip(1) {
                    let module: String = part
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    let target = if scope.is_empty() {
                        module
                    } else {
                        format!("{scope}/{module}")
                    };
                    let exists = src.join(format!("{target}.rs")).exists()
                        || src.join(&target).join("mod.rs").exists();
                    if exists && target != name {
                        deps.insert(target);
                    }
                }
            }
            graph.insert(name, deps);
        }
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
    assert!(graph.len() > 20, "found only {:?}", graph.keys());
    assert!(graph["tensor"].contains("ops"), "the scan sees imports");
    assert!(
        graph["graph/session"].contains("graph/node"),
        "and graph/'s own"
    );
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(node, &graph, &mut vec![], &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}
