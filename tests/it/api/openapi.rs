//! GET /api/v1/openapi.json: public, OpenAPI 3.1, and in step with the router.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::openapi::{documented, routes};
use crate::support::{Auth, TestApp};

/// Every route the router serves, with its methods, as the tests know them.
const ROUTES: &[(&str, &[&str])] = &[
    ("/api/v1/jobs", &["GET"]),
    ("/api/v1/jobs/{id}", &["GET"]),
    ("/api/v1/jobs/{id}/similar", &["GET"]),
    ("/api/v1/companies", &["GET"]),
    ("/api/v1/companies/{id}", &["GET"]),
    ("/api/v1/changes", &["GET"]),
    ("/api/v1/webhooks", &["GET", "POST"]),
    ("/api/v1/webhooks/{id}", &["DELETE", "GET", "PATCH"]),
    ("/api/v1/webhooks/{id}/deliveries", &["GET"]),
    ("/api/v1/webhooks/{id}/test", &["POST"]),
    ("/api/v1/usage", &["GET"]),
    ("/api/v1/openapi.json", &["GET"]),
];

pub(super) async fn document(app: &TestApp) -> serde_json::Value {
    let r = app
        .request(Method::GET, "/api/v1/openapi.json", Auth::None, &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json")));
    r.body
}

#[tokio::test]
async fn get_openapi_json_needs_no_key_and_is_openapi_3_1() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["info"]["title"].is_string());
}

#[tokio::test]
async fn get_openapi_json_documents_every_route_and_method_of_the_router() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    assert_eq!(documented(&doc), routes(ROUTES));
}

#[tokio::test]
async fn every_documented_operation_is_served_and_every_other_method_is_405() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let ops = documented(&doc);
    let paths: BTreeSet<&String> = ops.iter().map(|(p, _)| p).collect();
    let id = uuid::Uuid::new_v4().to_string();
    for path in paths {
        let concrete = path.replace("{id}", &id);
        let methods: Vec<&str> = ops
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, m)| m.as_str())
            .collect();
        for m in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            let method = Method::from_bytes(m.as_bytes()).expect("a method");
            let r = app.request(method, &concrete, Auth::None, &[], None).await;
            if methods.contains(&m) {
                let open = path == "/api/v1/openapi.json";
                let want = if open { 200 } else { 401 };
                assert_eq!(r.status.as_u16(), want, "{m} {concrete}: {}", r.text);
            } else {
                assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{m} {concrete}");
                let allow: BTreeSet<&str> = r.header("allow").expect("Allow").split(", ").collect();
                // The documented methods, HEAD wherever GET is, and OPTIONS.
                let head = methods.contains(&"GET").then_some("HEAD");
                let want: BTreeSet<&str> = methods
                    .iter()
                    .copied()
                    .chain(head)
                    .chain(["OPTIONS"])
                    .collect();
                assert_eq!(allow, want, "{concrete}");
            }
        }
    }
}

#[tokio::test]
async fn get_openapi_json_is_not_metered() {
    let app = spawn_app().await;
    let key = app.keys.developer.raw.clone();
    for _ in 0..3 {
        let r = app.get_as(&key, "/api/v1/openapi.json").await;
        assert_eq!(r.status, StatusCode::OK);
    }
    assert_eq!(app.calls_used(&key).await, 0);
}
