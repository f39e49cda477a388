//! The library's layers depend downwards only (api → service → query, store, webhooks →
//! domain): this reads every source file's code (comments aside) and fails on a path that
//! reaches up a layer, or on a crate a layer must not know.

use std::path::{Path, PathBuf};

/// For each layer (a folder of `src/`), the modules of this crate and the outside crates its
/// code may not name.
const RULES: &[(&str, &[&str], &[&str])] = &[
    (
        "domain",
        &["query", "store", "service", "webhooks", "api", "server"],
        &["tokio", "sled", "hyper", "reqwest", "http"],
    ),
    (
        "query",
        &["store", "service", "webhooks", "api", "server"],
        &["tokio", "sled", "hyper", "reqwest", "http"],
    ),
    (
        "store",
        &["service", "webhooks", "api", "server"],
        &["hyper", "reqwest", "http"],
    ),
    (
        "webhooks",
        &["store", "service", "api", "server"],
        &["sled", "hyper"],
    ),
    (
        "service",
        &["api", "server", "mcp", "client"],
        &["hyper", "http"],
    ),
    (
        "api",
        &["server", "mcp", "client"],
        &["hyper", "sled", "reqwest"],
    ),
    // A frontend over the HTTP layer: it reaches the service's parts only through it.
    ("mcp", &["store", "query", "webhooks"], &["sled", "reqwest"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (line comments and doc comments).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(n, line)| {
        let code = line.split("//").next().unwrap_or_default();
        (!code.trim().is_empty()).then_some((n + 1, code))
    })
}

/// Whether `code` names `name` as a path root: `name::` not preceded by an identifier
/// character or `::` (so `my_http::` and `crate::x::http::` do not count).
fn names_crate(code: &str, name: &str) -> bool {
    let pattern = format!("{name}::");
    code.match_indices(&pattern).any(|(at, _)| {
        let before = &code[..at];
        !before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
    })
}

#[test]
fn every_layer_depends_only_on_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (layer, modules, crates) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "src/{layer} has source files");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for (line, code) in code_lines(&text) {
                let up = modules
                    .iter()
                    .filter(|m| code.contains(&format!("crate::{m}")));
                let outside = crates.iter().filter(|c| names_crate(code, c));
                for name in up.chain(outside) {
                    violations.push(format!(
                        "src/{layer} names {name}: {}:{line}: {}",
                        file.strip_prefix(&src).unwrap_or(&file).display(),
                        code.trim()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_check_sees_a_path_that_reaches_up_and_ignores_comments() {
    let text =
        "use crate::api::Api; // crate::server\n/// crate::service\nlet x = http::Method::GET;";
    let lines: Vec<_> = code_lines(text).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].1.contains("crate::api"));
    assert!(!lines[0].1.contains("crate::server"));
    assert!(names_crate(lines[1].1, "http"));
    assert!(!names_crate("my_http::x", "http"));
    assert!(!names_crate("crate::x::http::y", "http"));
}
