//! HEAD and OPTIONS: HEAD is a GET without the body (RFC 9110, 9.3.2), OPTIONS says what a
//! path takes.

use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::{Auth, Resp, TestApp};

/// Calls counted for `times` requests of `method` to `path` with `key`.
async fn counted(app: &TestApp, key: &str, method: Method, path: &str, times: u64) -> u64 {
    let before = app.calls_used(key).await;
    for _ in 0..times {
        app.request(method.clone(), path, Auth::XApiKey(key), &[], None)
            .await;
    }
    app.calls_used(key).await - before
}

fn assert_same_head(head: &Resp, get: &Resp, what: &str) {
    assert_eq!(head.status, get.status, "{what}");
    assert!(
        head.text.is_empty(),
        "{what}: HEAD sent a body: {}",
        head.text
    );
    assert_eq!(
        head.header("content-length"),
        Some(get.text.len().to_string().as_str()),
        "{what}: HEAD gives the GET's length"
    );
    for name in ["content-type", "x-ratelimit-limit", "ratelimit-policy"] {
        assert_eq!(head.header(name), get.header(name), "{what}: {name}");
    }
    assert!(head.header("x-request-id").is_some(), "{what}");
}

#[tokio::test]
async fn head_answers_as_get_does_without_the_body() {
    let app = spawn_app().await;
    let key = app.keys.enterprise.raw.clone();
    let job = app.get_jobs("per_page=1").await.body["data"][0]["id"]
        .as_str()
        .expect("a job")
        .to_owned();
    for path in [
        "/api/v1/jobs?per_page=3".to_owned(),
        format!("/api/v1/jobs/{job}"),
        "/api/v1/companies".to_owned(),
        "/api/v1/usage".to_owned(),
        "/api/v1/openapi.json".to_owned(),
        // Errors too: the problem's headers and length, without the problem.
        "/api/v1/jobs?per_page=0".to_owned(),
        format!("/api/v1/jobs/{}", uuid::Uuid::new_v4()),
    ] {
        let head = app
            .request(Method::HEAD, &path, Auth::XApiKey(&key), &[], None)
            .await;
        let get = app.get_as(&key, &path).await;
        assert_same_head(&head, &get, &path);
    }
    let head = app
        .request(Method::HEAD, "/api/v1/jobs", Auth::None, &[], None)
        .await;
    let get = app
        .request(Method::GET, "/api/v1/jobs", Auth::None, &[], None)
        .await;
    assert_eq!(head.status, StatusCode::UNAUTHORIZED);
    assert_same_head(&head, &get, "no key");
    // HEAD does the GET's work, so it is metered as the GET is.
    let path = "/api/v1/jobs?per_page=1";
    assert_eq!(counted(&app, &key, Method::GET, path, 3).await, 3);
    assert_eq!(counted(&app, &key, Method::HEAD, path, 3).await, 3);
}

#[tokio::test]
async fn options_lists_a_paths_methods_without_a_key_and_is_not_metered() {
    let app = spawn_app().await;
    let id = uuid::Uuid::new_v4();
    for (path, allow) in [
        ("/api/v1/jobs".to_owned(), "GET, HEAD, OPTIONS"),
        (format!("/api/v1/jobs/{id}"), "GET, HEAD, OPTIONS"),
        ("/api/v1/webhooks".to_owned(), "GET, HEAD, POST, OPTIONS"),
        (
            format!("/api/v1/webhooks/{id}"),
            "GET, HEAD, PATCH, DELETE, OPTIONS",
        ),
        (format!("/api/v1/webhooks/{id}/test"), "POST, OPTIONS"),
        ("/api/v1/openapi.json".to_owned(), "GET, HEAD, OPTIONS"),
    ] {
        let r = app
            .request(Method::OPTIONS, &path, Auth::None, &[], None)
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{path}: {}", r.text);
        assert_eq!(r.header("allow"), Some(allow), "{path}");
        assert!(r.text.is_empty(), "{path}: {}", r.text);
    }
    let r = app
        .request(Method::OPTIONS, "/api/v1/nothing", Auth::None, &[], None)
        .await;
    r.assert_problem(404, "not_found", None);

    let key = app.keys.developer.raw.clone();
    assert_eq!(
        counted(&app, &key, Method::OPTIONS, "/api/v1/jobs", 3).await,
        0
    );
}
