//! GET /llms.txt: the API on one page for language models, without a key and not metered.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};

use super::openapi::document;
use super::spawn_app;
use crate::support::openapi::documented;
use crate::support::Auth;

/// The spans of the page between backticks.
fn code_spans(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The REST routes the page names, as `(path, METHOD)`: from spans such as `GET /api/v1/jobs`,
/// `GET|PATCH|DELETE /api/v1/webhooks/{id}` and the short `GET /jobs` (under the base path),
/// ignoring any query after the path. `/mcp`, the MCP endpoint, is no REST route (the MCP
/// tests check it).
fn named_routes(text: &str) -> BTreeSet<(String, String)> {
    code_spans(text)
        .filter_map(|span| {
            let (methods, rest) = span.split_once(' ')?;
            let path = rest.split(['?', ' ']).next()?;
            let path = match path {
                "/mcp" => return None,
                full if full.starts_with("/api/v1/") => full.to_owned(),
                short => format!("/api/v1{short}"),
            };
            let is_method = |m: &str| ["GET", "POST", "PATCH", "DELETE", "PUT"].contains(&m);
            (path.starts_with('/') && methods.split('|').all(is_method)).then(|| {
                methods
                    .split('|')
                    .map(|m| (path.clone(), m.to_owned()))
                    .collect::<Vec<_>>()
            })
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn llms_txt_names_every_route_and_query_parameter_of_the_openapi_document_and_no_other() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let page = job_listings::api::LLMS_TXT;
    let named = named_routes(page);
    // The page itself, and the document it points to by link, need no entry of their own.
    let listed: BTreeSet<_> = documented(&doc)
        .into_iter()
        .filter(|(path, _)| path != "/api/v1/openapi.json")
        .collect();
    assert_eq!(
        named, listed,
        "routes llms.txt names (left) and the OpenAPI document's (right)"
    );
    // Each query parameter a documented operation takes is named, as `name`, `name=…` or
    // `name`: in a list, so a model can use it.
    let words: BTreeSet<&str> = code_spans(page)
        .map(|span| {
            span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")
        })
        .collect();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let parameters = operation["parameters"].as_array().into_iter().flatten();
            let resolved = parameters.map(|p| match p["$ref"].as_str() {
                Some(to) => {
                    let name = to.rsplit('/').next().expect("a named parameter");
                    &doc["components"]["parameters"][name]
                }
                None => p,
            });
            for p in resolved.filter(|p| p["in"] == "query") {
                let name = p["name"].as_str().expect("a name");
                assert!(
                    words.contains(name),
                    "{method} {path}: llms.txt does not name the parameter `{name}`"
                );
            }
        }
    }
}

#[tokio::test]
async fn llms_txt_needs_no_key_is_markdown_and_is_not_metered() {
    let app = spawn_app().await;
    let r = app
        .request(Method::GET, "/llms.txt", Auth::None, &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert_eq!(r.text, job_listings::api::LLMS_TXT);
    assert!(r.text.contains("GET /api/v1/jobs"));

    // With a key it is the same page, and still no call is counted.
    let key = app.keys.developer.raw.clone();
    let again = app.get_as(&key, "/llms.txt").await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(app.calls_used(&key).await, 0);

    // Tagged like the OpenAPI document: a client that holds it gets a 304.
    let tag = r.header("etag").expect("an ETag").to_owned();
    let unchanged = app
        .request(
            Method::GET,
            "/llms.txt",
            Auth::None,
            &[("if-none-match", tag.as_str())],
            None,
        )
        .await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn llms_txt_takes_get_head_and_options_and_no_parameters() {
    let app = spawn_app().await;
    let head = app
        .request(Method::HEAD, "/llms.txt", Auth::None, &[], None)
        .await;
    assert_eq!(head.status, StatusCode::OK);
    assert!(head.text.is_empty());
    let options = app
        .request(Method::OPTIONS, "/llms.txt", Auth::None, &[], None)
        .await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    assert_eq!(options.header("allow"), Some("GET, HEAD, OPTIONS"));
    let post = app
        .request(Method::POST, "/llms.txt", Auth::None, &[], None)
        .await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(post.body["code"], "method_not_allowed");
    let query = app
        .request(Method::GET, "/llms.txt?format=json", Auth::None, &[], None)
        .await;
    assert_eq!(query.status, StatusCode::BAD_REQUEST);
    assert_eq!(query.body["code"], "unknown_parameter");
}
