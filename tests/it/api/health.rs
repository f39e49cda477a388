//! GET /livez and GET /readyz: no key, nothing metered, 200 while the store takes writes.
//! A store that refuses writes (a full disk) is shown by `bash benches/load/full_disk.sh`,
//! which needs root for its small tmpfs.

use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::Auth;

#[tokio::test]
async fn livez_and_readyz_answer_without_a_key_and_cost_nothing() {
    let app = spawn_app().await;
    let key = &app.keys.developer.raw;
    let before = app.calls_used(key).await;
    for (path, status) in [("/livez", "live"), ("/readyz", "ready")] {
        let r = app.request(Method::GET, path, Auth::None, &[], None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        assert_eq!(r.body["status"], status, "{path}");
        assert!(r.body.get("store_writes").is_none(), "{}", r.body);
        // With a key too: still not metered.
        let keyed = app.get_as(key, path).await;
        assert_eq!(keyed.status, StatusCode::OK);
        let head = app.request(Method::HEAD, path, Auth::None, &[], None).await;
        assert_eq!(head.status, StatusCode::OK);
        assert!(head.text.is_empty());
    }
    let after = app.calls_used(key).await;
    assert_eq!(after, before, "the probes were not counted");
}

#[tokio::test]
async fn health_takes_only_get_and_no_parameters() {
    let app = spawn_app().await;
    let post = app
        .request(Method::POST, "/readyz", Auth::None, &[], None)
        .await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED, "{}", post.text);
    assert_eq!(post.header("allow"), Some("GET, HEAD, OPTIONS"));
    let params = app.get("/livez?verbose=1").await;
    assert_eq!(params.status, StatusCode::BAD_REQUEST, "{}", params.text);
    assert_eq!(params.body["code"], "unknown_parameter", "{}", params.body);
}
