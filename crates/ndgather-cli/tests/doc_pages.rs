//! The command-line examples of the README and of the documentation site's pages (their
//! ```` ```console ```` blocks): each `$ ndgather …` line followed by output is run, and what
//! it prints (standard output, then standard error) must be that output. A command shown
//! without output (one that needs a file the reader has, a model checkpoint say) is not run.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `line` split as a POSIX shell splits words in single or double quotes, or none.
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => (quote, any) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (_, c) => (word, any) = (word + &c.to_string(), true),
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// Each `(command, expected output)` of `page`'s console blocks that has output.
fn examples(page: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut found = Vec::new();
    for block in text.split("```console\n").skip(1) {
        let block = block.split("```").next().unwrap_or_default();
        let mut current: Option<(String, String)> = None;
        for line in block.lines() {
            if let Some(command) = line.strip_prefix("$ ") {
                found.extend(current.take().filter(|(_, out)| !out.is_empty()));
                current = Some((command.to_string(), String::new()));
            } else if let Some((_, out)) = current.as_mut() {
                out.push_str(line);
                out.push('\n');
            }
        }
        found.extend(current.filter(|(_, out)| !out.is_empty()));
    }
    found
}

/// The README and every page under `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut folders = vec![root().join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages
}

#[test]
fn the_console_examples_print_what_the_pages_show() {
    let pages = pages();
    assert!(
        pages.iter().any(|p| p.ends_with("docs/cli.md")),
        "{pages:?}"
    );
    let mut ran = 0;
    for page in &pages {
        for (command, expected) in examples(page) {
            let args = words(&command);
            assert_eq!(args[0], "ndgather", "{}: {command}", page.display());
            let output = Command::cargo_bin("ndgather")
                .unwrap()
                .args(&args[1..])
                .output()
                .unwrap();
            // An example that shows an error shows a failing command.
            assert_eq!(
                output.status.success(),
                !expected.starts_with("error:"),
                "{}: $ {command}",
                page.display()
            );
            let printed = String::from_utf8_lossy(&output.stdout).to_string()
                + &String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                printed.trim_end(),
                expected.trim_end(),
                "{}: $ {command}",
                page.display()
            );
            ran += 1;
        }
    }
    assert!(ran >= 5, "only {ran} console examples ran");
}

#[test]
fn words_are_split_as_a_shell_splits_them() {
    assert_eq!(
        words(r#"ndgather gather '[["a","b"]]' "[0]" --axis=-1  x''"#),
        [
            "ndgather",
            "gather",
            r#"[["a","b"]]"#,
            "[0]",
            "--axis=-1",
            "x"
        ]
    );
    assert_eq!(words("a ''"), ["a", ""]);
}
