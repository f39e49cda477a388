//! The admin API's OpenAPI document (`src/api/admin/openapi.json`): OpenAPI 3.1, served as it
//! is on the admin listener without a token, with exactly the paths and methods the admin
//! router serves, and the answers of a real admin listener in the statuses and shapes it
//! documents.

use std::collections::BTreeSet;

use job_listings::api::admin::{admin_openapi_json, AdminApi, AdminToken};
use job_listings::domain::{CompanyId, JobId};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::openapi::{documented, routes};
use crate::support::server::{server_config, RunningServer};
use crate::support::{Resp, TestApp};

/// Every admin route with its methods (`HEAD` and `OPTIONS` aside), as the tests know them:
/// the router's own table is private to the library.
const ROUTES: &[(&str, &[&str])] = &[
    ("/admin/v1/jobs/bulk", &["POST"]),
    ("/admin/v1/jobs/close-unseen", &["POST"]),
    ("/admin/v1/jobs/{id}", &["DELETE", "GET", "PUT"]),
    ("/admin/v1/jobs/{id}/close", &["POST"]),
    ("/admin/v1/companies/bulk", &["POST"]),
    ("/admin/v1/companies/lookup", &["POST"]),
    ("/admin/v1/companies/{id}", &["DELETE", "GET", "PUT"]),
    ("/admin/v1/keys", &["GET", "POST"]),
    ("/admin/v1/keys/{id}", &["DELETE", "GET", "PATCH"]),
    ("/admin/v1/keys/{id}/usage", &["GET"]),
    ("/admin/v1/webhooks", &["GET"]),
    ("/admin/v1/webhooks/{id}", &["GET", "PATCH"]),
    ("/admin/v1/backup", &["POST"]),
    ("/admin/v1/stats", &["GET"]),
    ("/admin/v1/openapi.json", &["GET"]),
    ("/metrics", &["GET"]),
    ("/livez", &["GET"]),
    ("/readyz", &["GET"]),
];

fn doc() -> Value {
    serde_json::from_str(admin_openapi_json()).expect("the admin OpenAPI document is JSON")
}

/// The admin API over `app`'s API, on a real listener on 127.0.0.1 of its own.
struct AdminListener {
    api: AdminApi,
    server: RunningServer,
    token: AdminToken,
    client: reqwest::Client,
}

/// A request body.
enum Body {
    None,
    Json(Value),
    Raw(&'static str, Vec<u8>),
}

impl AdminListener {
    async fn start(app: &TestApp) -> Self {
        let token = AdminToken::generate();
        let api = AdminApi::new(app.api.clone(), token.hash());
        let server = RunningServer::start(api.clone(), server_config()).await;
        Self {
            api,
            server,
            token,
            client: reqwest::Client::new(),
        }
    }

    /// A request with `Authorization: Bearer <bearer>`, or none.
    async fn send(&self, method: Method, path: &str, bearer: Option<&str>, body: Body) -> Resp {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.server.base));
        if let Some(bearer) = bearer {
            req = req.bearer_auth(bearer);
        }
        req = match body {
            Body::None => req,
            Body::Json(value) => req.json(&value),
            Body::Raw(content_type, bytes) => req.header("content-type", content_type).body(bytes),
        };
        let response = req.send().await.expect("answered");
        let status = response.status();
        let headers = response.headers().clone();
        Resp::new(status, headers, response.text().await.expect("a body"))
    }

    /// A request with the token whose `Content-Length` says it is over the 1 MiB limit,
    /// answered in-process (over a socket the server would close the connection on a body it
    /// does not read).
    async fn oversized(&self, method: Method, path: &str) -> Resp {
        let req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {}", self.token.expose()))
            .header("content-type", "application/json")
            .header("content-length", "2000000")
            .body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
            .expect("a request");
        let (parts, body) = self.api.handle_body(req).await.into_parts();
        Resp::new(
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&body).into_owned(),
        )
    }

    /// A request with the admin token.
    async fn call(&self, method: Method, path: &str, body: Body) -> Resp {
        let token = self.token.expose().to_owned();
        self.send(method, path, Some(&token), body).await
    }
}

#[test]
fn the_document_is_openapi_3_1_with_exactly_the_admin_routes() {
    let doc = doc();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "job-listings admin API");
    assert_eq!(documented(&doc), routes(ROUTES));
    // Every reference points into the document.
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        assert!(
            resolve(&doc, &json!({ "$ref": r })).is_some(),
            "{r} points nowhere"
        );
    }
}

#[tokio::test]
async fn the_admin_listener_serves_the_document_as_it_is_without_a_token() {
    let app = TestApp::builder().build().await;
    let admin = AdminListener::start(&app).await;
    let r = admin
        .send(Method::GET, "/admin/v1/openapi.json", None, Body::None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json")));
    assert_eq!(r.text, admin_openapi_json());
}

#[tokio::test]
async fn the_admin_router_serves_exactly_the_documented_paths_and_methods() {
    let app = TestApp::builder().build().await;
    let admin = AdminListener::start(&app).await;
    let doc = doc();
    let ops = documented(&doc);
    // A path that is no endpoint: the answer lists every path of the router.
    let r = admin
        .call(Method::GET, "/admin/v1/no-such-path", Body::None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let detail = r.body["detail"].as_str().expect("a detail");
    let listed = detail
        .split_once("they are: ")
        .and_then(|(_, rest)| rest.split_once(" (see"))
        .map(|(paths, _)| paths)
        .unwrap_or_else(|| panic!("the 404 detail no longer lists the paths: {detail}"));
    let served: BTreeSet<&str> = listed.split(", ").collect();
    let paths: BTreeSet<&str> = ops.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(served, paths);
    // Each path's methods, from OPTIONS; each documented one is routed, any other is a 405.
    let id = uuid::Uuid::new_v4().to_string();
    for path in paths {
        let concrete = path.replace("{id}", &id);
        let methods: BTreeSet<&str> = ops
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, m)| m.as_str())
            .collect();
        let r = admin.call(Method::OPTIONS, &concrete, Body::None).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "OPTIONS {concrete}");
        let allow: BTreeSet<&str> = r.header("allow").expect("Allow").split(", ").collect();
        let want: BTreeSet<&str> = methods
            .iter()
            .copied()
            .chain(methods.contains("GET").then_some("HEAD"))
            .chain(["OPTIONS"])
            .collect();
        assert_eq!(allow, want, "{concrete}");
        for m in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            let method = Method::from_bytes(m.as_bytes()).expect("a method");
            let r = admin.call(method, &concrete, Body::None).await;
            if methods.contains(m) {
                assert_ne!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{m} {concrete}");
                assert!(
                    !r.text.contains("no admin endpoint"),
                    "{m} {concrete}: {}",
                    r.text
                );
            } else {
                assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{m} {concrete}");
                conforms_to_component(&doc, "MethodNotAllowed", &r);
                let told: BTreeSet<&str> = r.header("allow").expect("Allow").split(", ").collect();
                assert_eq!(told, allow, "{m} {concrete}");
            }
        }
    }
}

#[tokio::test]
async fn every_operation_answers_in_the_documented_statuses_and_shapes() {
    let app = TestApp::builder().build().await;
    let hook = app
        .post_webhook(
            &app.keys.agent_pro.raw,
            &json!({ "callback_url": "https://hooks.example.com/jobs" }),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let hook = hook.body["id"].as_str().expect("an id").to_owned();
    let admin = AdminListener::start(&app).await;
    let doc = doc();
    let company = CompanyId::new_random().to_string();
    let job = JobId::new_random().to_string();
    let unknown = uuid::Uuid::new_v4().to_string();
    let company_record = json!({
        "name": "Acme AI", "domain": "acme.example.com", "funding_stage": "Series A",
        "enrichment": { "headcount": 42, "links": { "website": "https://acme.example.com" } },
    });
    let job_record = json!({
        "role": "Senior Rust Engineer", "company_id": company, "description": "Build it.",
        "domains": ["engineering"], "remote": true, "source_url": "https://acme.example.com/1",
        "salary": { "min": 1, "max": 2, "currency": "EUR" },
        "posted_at": "2026-11-01T09:30:00Z", "confidence": 0.9,
    });
    let ndjson = |lines: &[Value]| {
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        Body::Raw("application/x-ndjson", text.join("\n").into_bytes())
    };
    let a = &admin;
    let check = |method: Method, pattern: &'static str, path: String, body: Body, want: u16| {
        let doc = &doc;
        async move {
            let r = a.call(method.clone(), &path, body).await;
            assert_eq!(r.status.as_u16(), want, "{method} {path}: {}", r.text);
            conforms(doc, pattern, &method, &r);
            r
        }
    };

    check(Method::GET, "/livez", "/livez".into(), Body::None, 200).await;
    let stats = check(
        Method::GET,
        "/admin/v1/stats",
        "/admin/v1/stats".into(),
        Body::None,
        200,
    )
    .await;
    assert!(stats.body["jobs"]["active"].is_u64(), "{}", stats.text);
    let metrics = check(Method::GET, "/metrics", "/metrics".into(), Body::None, 200).await;
    assert!(metrics.text.contains("# HELP"), "{}", metrics.text);
    check(Method::GET, "/readyz", "/readyz".into(), Body::None, 200).await;
    let p = "/admin/v1/openapi.json";
    check(Method::GET, p, p.into(), Body::None, 200).await;

    let p = "/admin/v1/companies/{id}";
    let at = format!("/admin/v1/companies/{company}");
    let body = || Body::Json(company_record.clone());
    check(Method::PUT, p, at.clone(), body(), 201).await;
    let stored = check(Method::PUT, p, at.clone(), body(), 200).await;
    assert_eq!(stored.body["funding_stage"], "series_a");
    check(Method::GET, p, at.clone(), Body::None, 200).await;
    let missing = format!("/admin/v1/companies/{unknown}");
    check(Method::GET, p, missing, Body::None, 404).await;
    check(
        Method::GET,
        p,
        "/admin/v1/companies/x".into(),
        Body::None,
        400,
    )
    .await;
    let over = admin.oversized(Method::PUT, &at).await;
    assert_eq!(over.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", over.text);
    conforms(&doc, p, &Method::PUT, &over);
    let text = Body::Raw("text/plain", b"{}".to_vec());
    check(Method::PUT, p, at, text, 415).await;

    let p = "/admin/v1/jobs/{id}";
    let at = format!("/admin/v1/jobs/{job}");
    let created = check(
        Method::PUT,
        p,
        at.clone(),
        Body::Json(job_record.clone()),
        201,
    )
    .await;
    // A job read back is taken back as it is.
    let read = check(Method::GET, p, at.clone(), Body::None, 200).await;
    assert_eq!(read.body, created.body);
    check(
        Method::PUT,
        p,
        at.clone(),
        Body::Json(read.body.clone()),
        200,
    )
    .await;
    let mut orphan = job_record.clone();
    orphan["company_id"] = json!(unknown);
    let orphan_at = format!("/admin/v1/jobs/{unknown}");
    let refused = check(Method::PUT, p, orphan_at, Body::Json(orphan.clone()), 400).await;
    assert_eq!(refused.body["param"], "company_id");
    let p = "/admin/v1/jobs/{id}/close";
    let closed = check(Method::POST, p, format!("{at}/close"), Body::None, 200).await;
    assert_eq!(closed.body["status"], "closed");
    let p = "/admin/v1/jobs/close-unseen";
    let asked = Body::Json(json!({ "seen_before": "2000-01-01T00:00:00Z", "dry_run": true }));
    let counted = check(Method::POST, p, p.into(), asked, 200).await;
    assert_eq!(
        (
            counted.body["matched"].clone(),
            counted.body["closed"].clone()
        ),
        (json!(0), json!(0))
    );
    let wrong = Body::Json(json!({ "seen_before": "soon" }));
    check(Method::POST, p, p.into(), wrong, 400).await;

    let p = "/admin/v1/companies/lookup";
    let ids = Body::Json(json!({ "ids": [company, unknown] }));
    let looked = check(Method::POST, p, p.into(), ids, 200).await;
    assert_eq!(looked.body["missing"], json!([unknown]));
    let p = "/admin/v1/companies/bulk";
    let mut line = company_record.clone();
    line["id"] = json!(company);
    check(Method::POST, p, p.into(), ndjson(&[line]), 200).await;
    let p = "/admin/v1/jobs/bulk";
    let mut good = job_record.clone();
    good["id"] = json!(JobId::new_random().to_string());
    orphan["id"] = json!(unknown);
    let lines = ndjson(&[good.clone(), orphan, json!("not a job")]);
    let at = format!("{p}?dry_run=true");
    let report = check(Method::POST, p, at, lines, 200).await;
    assert_eq!(report.body["created"], 1, "{}", report.text);
    assert_eq!(report.body["refused"], 2, "{}", report.text);
    check(Method::POST, p, p.into(), ndjson(&[good.clone()]), 200).await;
    let wrong = Body::Raw("application/json", b"{}".to_vec());
    check(Method::POST, p, p.into(), wrong, 415).await;
    let at = format!("{p}?dry_run=maybe");
    check(Method::POST, p, at, ndjson(&[]), 400).await;

    // A copy of the sled store into a new folder; a relative path is a 400. (A store that
    // keeps no backups answers 501: `backup::a_store_that_cannot_copy_itself_…`.)
    let p = "/admin/v1/backup";
    let backups = tempfile::tempdir().expect("a folder");
    let to = Body::Json(json!({ "to": backups.path().join("copy") }));
    let copied = check(Method::POST, p, p.into(), to, 200).await;
    assert!(
        copied.body["jobs"].as_u64().is_some_and(|n| n > 0),
        "{}",
        copied.body
    );
    let relative = Body::Json(json!({ "to": "backups/today" }));
    let refused = check(Method::POST, p, p.into(), relative, 400).await;
    assert_eq!(refused.body["param"], "to");

    // Deleting: a company is held back by its active jobs, not by its closed ones.
    let p = "/admin/v1/companies/{id}";
    let company_at = format!("/admin/v1/companies/{company}");
    let held = check(Method::DELETE, p, company_at.clone(), Body::None, 409).await;
    assert_eq!(held.body["code"], "company_has_jobs");
    let p = "/admin/v1/jobs/{id}";
    let good_at = format!("/admin/v1/jobs/{}", good["id"].as_str().expect("an id"));
    check(Method::DELETE, p, good_at.clone(), Body::None, 204).await;
    check(Method::DELETE, p, good_at.clone(), Body::None, 404).await;
    check(Method::GET, p, good_at, Body::None, 404).await;
    let p = "/admin/v1/companies/{id}";
    check(Method::DELETE, p, company_at.clone(), Body::None, 204).await;
    check(Method::GET, p, company_at, Body::None, 404).await;

    let p = "/admin/v1/keys";
    check(Method::GET, p, p.into(), Body::None, 200).await;
    let new = Body::Json(json!({ "plan": "developer", "label": "alice@example.com" }));
    let issued = check(Method::POST, p, p.into(), new, 201).await;
    let extra = Body::Json(json!({ "plan": "developer", "colour": "red" }));
    let unknown_field = check(Method::POST, p, p.into(), extra, 400).await;
    assert_eq!(unknown_field.body["code"], "unknown_parameter");
    let key = issued.body["id"].as_str().expect("an id");
    let p = "/admin/v1/keys/{id}";
    let at = format!("/admin/v1/keys/{key}");
    check(Method::GET, p, at.clone(), Body::None, 200).await;
    let change = Body::Json(json!({ "plan": "enterprise", "billing_status": "past_due" }));
    check(Method::PATCH, p, at.clone(), change, 200).await;
    let nothing = Body::Json(json!({ "plan": null }));
    check(Method::PATCH, p, at.clone(), nothing, 400).await;
    let p = "/admin/v1/keys/{id}/usage";
    check(Method::GET, p, format!("{at}/usage"), Body::None, 200).await;
    let p = "/admin/v1/keys/{id}";
    let revoked = check(Method::DELETE, p, at.clone(), Body::None, 200).await;
    assert!(revoked.body["revoked_at"].is_string());
    let missing = format!("/admin/v1/keys/{unknown}");
    check(Method::DELETE, p, missing, Body::None, 404).await;

    let p = "/admin/v1/webhooks";
    let all = check(Method::GET, p, p.into(), Body::None, 200).await;
    assert_eq!(all.body["data"][0]["id"], json!(hook));
    let p = "/admin/v1/webhooks/{id}";
    let at = format!("/admin/v1/webhooks/{hook}");
    check(Method::GET, p, at.clone(), Body::None, 200).await;
    let off = Body::Json(json!({ "status": "disabled" }));
    let disabled = check(Method::PATCH, p, at.clone(), off, 200).await;
    assert_eq!(disabled.body["status"], "disabled");
    let paused = Body::Json(json!({ "status": "paused" }));
    check(Method::PATCH, p, at, paused, 400).await;

    // Without the token, and with an API key instead of it.
    let p = "/admin/v1/keys";
    let r = admin.send(Method::GET, p, None, Body::None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    conforms(&doc, p, &Method::GET, &r);
    assert_eq!(r.body["code"], "missing_admin_token");
    let api_key = app.keys.enterprise.raw.as_str();
    let r = admin.send(Method::GET, p, Some(api_key), Body::None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    conforms(&doc, p, &Method::GET, &r);
    assert_eq!(r.body["code"], "invalid_admin_token");
}

// ---------------------------------------------------------------------------------------------
// Checking an answer against the document
// ---------------------------------------------------------------------------------------------

/// Asserts that the operation documents the answer's status, with its media type, and that
/// the body has the documented schema.
#[track_caller]
fn conforms(doc: &Value, pattern: &str, method: &Method, r: &Resp) {
    let op = &doc["paths"][pattern][method.as_str().to_lowercase()];
    assert!(op.is_object(), "{method} {pattern} is not documented");
    let status = r.status.as_str();
    let response = op["responses"]
        .get(status)
        .unwrap_or_else(|| panic!("{method} {pattern} does not document {status}: {}", r.text));
    let response = resolve(doc, response).expect("a response");
    conforms_to(doc, &response, r, &format!("{method} {pattern} {status}"));
}

/// Asserts that an answer is the component response `name`.
#[track_caller]
fn conforms_to_component(doc: &Value, name: &str, r: &Resp) {
    let response = &doc["components"]["responses"][name];
    assert!(response.is_object(), "no component response {name}");
    conforms_to(doc, response, r, name);
}

#[track_caller]
fn conforms_to(doc: &Value, response: &Value, r: &Resp, what: &str) {
    let Some(content) = response["content"].as_object() else {
        assert!(r.text.is_empty(), "{what}: a body where none is documented");
        return;
    };
    let media = r
        .header("content-type")
        .and_then(|c| c.split(';').next())
        .unwrap_or_default();
    let schema = &content
        .get(media)
        .unwrap_or_else(|| panic!("{what}: {media} is not documented"))["schema"];
    // A body that is not JSON (the metrics' text) is checked as the string it is.
    let body = match media.ends_with("json") {
        true => r.body.clone(),
        false => Value::String(r.text.clone()),
    };
    let mut errors = Vec::new();
    check_schema(doc, schema, &body, "body", &mut errors);
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{}", r.text);
}

/// Where a `$ref` points, or the value itself when it is none.
fn resolve(doc: &Value, value: &Value) -> Option<Value> {
    match value["$ref"].as_str() {
        Some(r) => doc.pointer(r.strip_prefix('#')?).cloned(),
        None => Some(value.clone()),
    }
}

fn collect_refs(value: &Value, refs: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                refs.push(r.clone());
            }
            map.values().for_each(|v| collect_refs(v, refs));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
        _ => {}
    }
}

/// Checks `value` against the JSON Schema keywords the document uses. An object schema with
/// `properties` is taken as closed unless `additionalProperties` says otherwise, so that a
/// field the server sends and the document does not name is found.
fn check_schema(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(schema) = resolve(doc, schema) else {
        errors.push(format!("{at}: unresolved {}", schema["$ref"]));
        return;
    };
    for part in schema["allOf"].as_array().into_iter().flatten() {
        check_schema(doc, part, value, at, errors);
    }
    if let Some(choices) = schema["anyOf"].as_array() {
        let fits = choices.iter().any(|choice| {
            let mut inner = Vec::new();
            check_schema(doc, choice, value, at, &mut inner);
            inner.is_empty()
        });
        if !fits {
            errors.push(format!("{at}: {value} fits none of anyOf"));
        }
    }
    if let Some(types) = types_of(&schema["type"]) {
        if !types.iter().any(|t| has_type(value, t)) {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            errors.push(format!("{at}: {value} is not one of {allowed:?}"));
        }
    }
    if let Some(n) = value.as_f64() {
        let below = schema["minimum"].as_f64().is_some_and(|min| n < min);
        let above = schema["maximum"].as_f64().is_some_and(|max| n > max);
        if below || above {
            errors.push(format!("{at}: {n} is out of range"));
        }
    }
    if let Some(s) = value.as_str() {
        let fits = match schema["format"].as_str() {
            Some("date-time") => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
            Some("uuid") => uuid::Uuid::parse_str(s).is_ok(),
            Some("uri") => url::Url::parse(s).is_ok(),
            _ => true,
        };
        if !fits {
            errors.push(format!("{at}: `{s}` is not a {}", schema["format"]));
        }
    }
    if let Some(items) = value.as_array() {
        if let Some(item) = schema.get("items") {
            for (i, v) in items.iter().enumerate() {
                check_schema(doc, item, v, &format!("{at}[{i}]"), errors);
            }
        }
    }
    if let Some(object) = value.as_object() {
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap_or_default();
            if !object.contains_key(name) {
                errors.push(format!("{at}: `{name}` is missing"));
            }
        }
        let properties = schema["properties"].as_object();
        for (name, v) in object {
            let at = format!("{at}.{name}");
            match (
                properties.and_then(|p| p.get(name)),
                &schema["additionalProperties"],
            ) {
                (Some(property), _) => check_schema(doc, property, v, &at, errors),
                (None, Value::Bool(true)) => {}
                (None, extra @ Value::Object(_)) => check_schema(doc, extra, v, &at, errors),
                (None, _) if properties.is_some() => {
                    errors.push(format!("{at}: not in the documented properties"));
                }
                (None, _) => {}
            }
        }
    }
}

fn types_of(t: &Value) -> Option<Vec<&str>> {
    match t {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}
