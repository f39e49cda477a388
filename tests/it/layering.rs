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

/// The module a source file is, as path segments below the crate: `src/service/mod.rs` is
/// `service`, `src/api/admin/bulk.rs` is `api::admin::bulk`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut segments: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
        segments.pop();
    }
    segments
}

/// The top-level modules of this crate a line of code in `module` names: through
/// `crate::name`, a group `crate::{name, other::x}`, or `super::` paths, resolved from the
/// module the file is.
fn crate_modules_named(code: &str, module: &[String]) -> Vec<String> {
    let mut named = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                named.extend(group.split(',').filter_map(first_segment));
            }
            None => named.extend(first_segment(rest)),
        }
    }
    let mut from = 0;
    while let Some(found) = code[from..].find("super::") {
        let start = from + found;
        let before = &code[..start];
        let mut rest = &code[start..];
        let mut up = 0;
        while let Some(next) = rest.strip_prefix("super::") {
            up += 1;
            rest = next;
        }
        from = code.len() - rest.len();
        // `a::super::` is not where a path starts; `self::super::` is.
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            || (before.ends_with("::") && !before.ends_with("self::"))
        {
            continue;
        }
        let base = &module[..module.len().saturating_sub(up)];
        let names: Vec<String> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .filter_map(first_segment)
                .collect(),
            None => first_segment(rest).into_iter().collect(),
        };
        for name in names {
            named.push(base.first().cloned().unwrap_or(name));
        }
    }
    named
}

/// The first of `lines`, with the lines after it up to the `}` that closes a group of paths
/// it opens (`use crate::{` on a line of its own).
fn with_its_group(lines: &[(usize, &str)]) -> String {
    let mut span = lines[0].1.to_owned();
    let opens = span
        .rfind("::{")
        .is_some_and(|at| !span[at..].contains('}'));
    if opens {
        for (_, next) in &lines[1..] {
            span.push(' ');
            span.push_str(next);
            if next.contains('}') {
                break;
            }
        }
    }
    span
}

/// The first path segment of `path` (`api` of ` api::Api`), if it starts with one.
fn first_segment(path: &str) -> Option<String> {
    let path = path.trim_start();
    let end = path
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(path.len());
    (end > 0).then(|| path[..end].to_owned())
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
            let module = module_of(file.strip_prefix(&src).unwrap_or(&file));
            let lines: Vec<(usize, &str)> = code_lines(&text).collect();
            for (i, (line, code)) in lines.iter().enumerate() {
                let named = crate_modules_named(&with_its_group(&lines[i..]), &module);
                let up = modules.iter().filter(|m| named.iter().any(|n| n == *m));
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

#[test]
fn the_check_sees_grouped_and_super_paths() {
    let service_health = module_of(Path::new("service/health.rs"));
    assert_eq!(service_health, ["service", "health"]);
    assert_eq!(module_of(Path::new("api/admin/mod.rs")), ["api", "admin"]);
    let named = |code: &str, module: &[String]| crate_modules_named(code, module);
    assert_eq!(
        named("use crate::{api::Api, domain::Job};", &service_health),
        ["api", "domain"]
    );
    let grouped = [
        (1, "use crate::{"),
        (2, "    api::Api,"),
        (3, "    domain::Job,"),
        (4, "};"),
    ];
    assert_eq!(
        named(&with_its_group(&grouped), &service_health),
        ["api", "domain"]
    );
    assert_eq!(
        named(&with_its_group(&grouped[1..]), &service_health),
        Vec::<String>::new()
    );
    // `super::` from service/health.rs is the service module; two of them reach the crate.
    assert_eq!(named("use super::Inner;", &service_health), ["service"]);
    assert_eq!(
        named("use super::super::api::Api;", &service_health),
        ["api"]
    );
    assert_eq!(
        named("use super::super::{server, store::Store};", &service_health),
        ["server", "store"]
    );
    assert_eq!(
        named("let x = a::super::b;", &service_health),
        Vec::<String>::new()
    );
}
