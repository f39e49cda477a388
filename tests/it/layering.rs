//! The library's layers depend downwards only (api → service → store, webhooks → the engine
//! crate's query → domain): this reads every source file's code (comments aside) and fails on a
//! path that reaches up a layer, or on a crate a layer must not know. The engine crate
//! (`job-listings-engine`) names nothing of the library and no runtime, HTTP, storage,
//! compression or metrics crate, in its code or its manifest.

use std::path::{Path, PathBuf};

/// Crates the engine may not depend on: an async runtime, HTTP, storage, compression, crypto
/// and metrics, and the library built on it.
const NOT_IN_THE_ENGINE: &[&str] = &[
    "job_listings",
    "tokio",
    "sled",
    "hyper",
    "reqwest",
    "http",
    "zstd",
    "brotli",
    "flate2",
    "prometheus_client",
    "sha2",
    "hmac",
    "chacha20poly1305",
    "tokio_postgres",
];

/// For each layer (a folder of a crate's `src/`), the crate's source folder, the modules of
/// that crate and the outside crates its code may not name.
const RULES: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "job-listings-engine/src",
        "domain",
        &["query"],
        NOT_IN_THE_ENGINE,
    ),
    ("job-listings-engine/src", "query", &[], NOT_IN_THE_ENGINE),
    (
        "src",
        "domain",
        &["store", "service", "webhooks", "api", "server"],
        &["tokio", "sled", "hyper", "reqwest", "http"],
    ),
    (
        "src",
        "store",
        &["service", "webhooks", "api", "server"],
        &["hyper", "reqwest", "http"],
    ),
    (
        "src",
        "webhooks",
        &["store", "service", "api", "server"],
        &["sled", "hyper"],
    ),
    (
        "src",
        "service",
        &["api", "server", "mcp", "client"],
        &["hyper", "http"],
    ),
    (
        "src",
        "api",
        &["server", "mcp", "client"],
        &["hyper", "sled", "reqwest"],
    ),
    // A frontend over the HTTP layer: it reaches the service's parts only through it.
    (
        "src",
        "mcp",
        &["store", "query", "webhooks"],
        &["sled", "reqwest"],
    ),
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut violations = Vec::new();
    for (crate_src, layer, modules, crates) in RULES {
        let src = root.join(crate_src);
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "{crate_src}/{layer} has source files");
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
                        "{crate_src}/{layer} names {name}: {}:{line}: {}",
                        file.strip_prefix(&src).unwrap_or(&file).display(),
                        code.trim()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The crates a manifest's `[dependencies]` table names, with `-` read as `_`.
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut inside = false;
    let mut names = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
        } else if inside && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().replace('-', "_"));
            }
        }
    }
    names
}

#[test]
fn the_engine_crate_depends_on_no_runtime_http_storage_or_metrics_crate() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("job-listings-engine/Cargo.toml");
    let deps = normal_dependencies(&std::fs::read_to_string(manifest).expect("the manifest"));
    assert!(
        deps.iter().any(|d| d == "croaring"),
        "read the table: {deps:?}"
    );
    let forbidden: Vec<&String> = deps
        .iter()
        .filter(|d| NOT_IN_THE_ENGINE.contains(&d.as_str()))
        .collect();
    assert!(forbidden.is_empty(), "the engine depends on {forbidden:?}");
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
    assert!(names_crate("use job_listings::api::Api;", "job_listings"));
    let manifest = "[package]\nname = \"x\"\n[dependencies]\n# a note\ntokio-postgres = \"0.7\"\n\n[dev-dependencies]\nsled = \"1\"\n";
    assert_eq!(normal_dependencies(manifest), ["tokio_postgres"]);
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
