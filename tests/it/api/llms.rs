//! GET /llms.txt: the API on one page for language models, without a key and not metered.

use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::Auth;

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
