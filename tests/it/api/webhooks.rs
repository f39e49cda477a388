//! POST/GET/DELETE /webhooks and the outbox deliveries a new job queues.

use job_listings::domain::{Confidence, DeliveryStatus, DomainTag, Job, JobStatus, Seniority};
use job_listings::service::ServiceConfig;
use job_listings::webhooks::CallbackPolicy;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

use super::{spawn_app, spawn_app_with};
use crate::support::data::known;
use crate::support::{at, Auth, Resp, TestApp};

const HOOK: &str = "https://hooks.example.com/jobs";

async fn create(app: &TestApp, key: &str, body: Value) -> (String, Resp) {
    let r = app.post_webhook(key, &body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.body["id"].as_str().expect("an id").to_owned();
    (id, r)
}

/// A subscription of the Agent Pro key's to remote design jobs: its id.
async fn remote_design_hook(app: &TestApp) -> String {
    let body = json!({ "callback_url": HOOK, "domain_filters": ["design"], "remote_only": true });
    create(app, &app.keys.agent_pro.raw, body).await.0
}

/// A subscription of the Agent Pro key's to every job, then a new job ingested: the
/// subscription's id.
async fn hook_and_a_new_job(app: &TestApp) -> String {
    let (hook, _) = create(
        app,
        &app.keys.agent_pro.raw,
        json!({ "callback_url": HOOK }),
    )
    .await;
    app.service
        .upsert_job(new_job(&["ai"], false))
        .await
        .expect("ingested");
    hook
}

/// A new job for Quokka with the given tags and remote flag.
fn new_job(domains: &[&str], remote: bool) -> Job {
    let mut job = crate::support::data::another(&known().designer);
    job.role = "Webhook Test Role".to_owned();
    job.domains = domains
        .iter()
        .map(|d| DomainTag::parse(d).expect("a tag"))
        .collect();
    job.seniority = vec![Seniority::parse("mid").expect("a level")];
    job.remote = remote;
    job.posted_at = at(2026, 12, 20, 0, 0, 0);
    job.confidence = Confidence::new(0.9).expect("a confidence");
    job.status = JobStatus::Active;
    job
}

#[tokio::test]
async fn post_webhooks_returns_201_with_the_secret_and_a_location() {
    let app = spawn_app().await;
    let r = app
        .post_webhook(
            &app.keys.agent_pro.raw,
            &json!({ "callback_url": HOOK, "domain_filters": ["AI", "design", "ai"], "remote_only": true }),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.body["id"].as_str().expect("an id");
    assert!(Uuid::parse_str(id).is_ok());
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/webhooks/{id}").as_str())
    );
    assert_eq!(r.body["callback_url"], HOOK);
    assert_eq!(r.body["domain_filters"], json!(["ai", "design"]));
    assert_eq!(r.body["remote_only"], true);
    assert_eq!(r.body["status"], "active");
    let secret = r.body["secret"].as_str().expect("a secret");
    assert!(
        secret.starts_with("whsec_") && secret.len() > 20,
        "{secret}"
    );
}

#[tokio::test]
async fn post_webhooks_defaults_to_every_domain_and_not_only_remote() {
    let app = spawn_app().await;
    let (_, r) = create(
        &app,
        &app.keys.agent_pro.raw,
        json!({ "callback_url": HOOK }),
    )
    .await;
    assert_eq!(r.body["domain_filters"], json!([]));
    assert_eq!(r.body["remote_only"], false);
}

#[tokio::test]
async fn post_webhooks_is_open_to_plans_above_agent_pro() {
    let app = spawn_app().await;
    create(
        &app,
        &app.keys.enterprise.raw,
        json!({ "callback_url": HOOK }),
    )
    .await;
}

#[tokio::test]
async fn get_webhooks_lists_the_keys_subscriptions_without_their_secrets() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let (first, _) = create(&app, key, json!({ "callback_url": HOOK })).await;
    let (second, _) = create(
        &app,
        key,
        json!({ "callback_url": "https://hooks.example.com/two", "domain_filters": ["data"] }),
    )
    .await;
    create(
        &app,
        &app.keys.enterprise.raw,
        json!({ "callback_url": HOOK }),
    )
    .await;

    let r = app.list_webhooks(key).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let listed = r.ids();
    assert_eq!(listed.len(), 2, "only this key's subscriptions");
    assert!(listed.contains(&first) && listed.contains(&second));
    for w in r.body["data"].as_array().expect("data") {
        assert!(w.get("secret").is_none(), "secret shown in a listing: {w}");
    }
    assert_eq!(
        r.body["pagination"],
        json!({ "page": 1, "per_page": 20, "total": 2, "total_pages": 1 })
    );
    assert_eq!(r.body["meta"], json!({ "filters": {} }));
}

#[tokio::test]
async fn get_webhooks_pages_like_every_list_and_names_the_parameters_it_takes() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let mut created = Vec::new();
    for n in 0..3 {
        let url = format!("https://hooks.example.com/{n}");
        created.push(create(&app, key, json!({ "callback_url": url })).await.0);
    }
    let first = app.get_as(key, "/api/v1/webhooks?per_page=2").await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    assert_eq!(first.ids(), created[..2].to_vec(), "oldest first");
    assert_eq!(first.body["pagination"]["total"], 3);
    assert_eq!(first.body["pagination"]["total_pages"], 2);
    assert_eq!(
        first.body["links"]["next"],
        "/api/v1/webhooks?per_page=2&page=2"
    );
    assert_eq!(first.body["links"]["prev"], json!(null));
    let second = app.get_as(key, "/api/v1/webhooks?per_page=2&page=2").await;
    assert_eq!(second.ids(), created[2..].to_vec());
    let past = app.get_as(key, "/api/v1/webhooks?page=9").await;
    assert_eq!(past.status, StatusCode::OK);
    assert_eq!(past.body["data"], json!([]));

    let wrong = app.get_as(key, "/api/v1/webhooks?limit=5").await;
    wrong.assert_problem(400, "unknown_parameter", Some("limit"));
    assert_eq!(wrong.body["allowed"], json!(["page", "per_page"]));
    app.get_as(key, "/api/v1/webhooks?per_page=51")
        .await
        .assert_problem(400, "invalid_parameter", Some("per_page"));
}

#[tokio::test]
async fn get_webhook_returns_one_subscription_without_its_secret() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let (id, _) = create(
        &app,
        key,
        json!({ "callback_url": HOOK, "domain_filters": ["data"], "remote_only": true }),
    )
    .await;
    let r = app.get_webhook(key, &id).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["id"], id.as_str());
    assert_eq!(r.body["callback_url"], HOOK);
    assert_eq!(r.body["domain_filters"], json!(["data"]));
    assert_eq!(r.body["remote_only"], true);
    assert!(r.body.get("secret").is_none());
}

#[tokio::test]
async fn get_webhook_of_another_key_returns_404() {
    let app = spawn_app().await;
    let (id, _) = create(
        &app,
        &app.keys.agent_pro.raw,
        json!({ "callback_url": HOOK }),
    )
    .await;
    app.get_webhook(&app.keys.enterprise.raw, &id)
        .await
        .assert_problem(404, "not_found", None);
    app.delete_webhook(&app.keys.enterprise.raw, &id)
        .await
        .assert_problem(404, "not_found", None);
    assert_eq!(
        app.get_webhook(&app.keys.agent_pro.raw, &id).await.status,
        StatusCode::OK,
        "the failed delete left it in place"
    );
}

#[tokio::test]
async fn get_webhook_returns_400_naming_id_when_the_id_is_not_a_uuid() {
    let app = spawn_app().await;
    app.get_webhook(&app.keys.agent_pro.raw, "hook-1")
        .await
        .assert_problem(400, "invalid_parameter", Some("id"));
}

#[tokio::test]
async fn delete_webhook_returns_204_and_then_404() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let (id, _) = create(&app, key, json!({ "callback_url": HOOK })).await;
    let r = app.delete_webhook(key, &id).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert!(r.text.is_empty());
    app.get_webhook(key, &id)
        .await
        .assert_problem(404, "not_found", None);
    app.delete_webhook(key, &id)
        .await
        .assert_problem(404, "not_found", None);
    assert_eq!(app.list_webhooks(key).await.ids(), Vec::<String>::new());
}

/// A key moved to a plan without webhooks keeps its subscriptions readable, but may neither
/// change them nor ping them: nothing would be sent.
#[tokio::test]
async fn a_key_moved_to_a_plan_without_webhooks_gets_403_on_test() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro;
    let (id, _) = create(&app, &key.raw, json!({ "callback_url": HOOK })).await;
    let test_path = format!("/api/v1/webhooks/{id}/test");
    let ping = app
        .request(Method::POST, &test_path, Auth::XApiKey(&key.raw), &[], None)
        .await;
    assert_eq!(ping.status, StatusCode::ACCEPTED, "{}", ping.text);

    app.service
        .set_plan(key.id, job_listings::domain::Plan::Developer)
        .await
        .expect("the plan changed");
    app.request(Method::POST, &test_path, Auth::XApiKey(&key.raw), &[], None)
        .await
        .assert_problem(403, "plan_upgrade_required", None);
    // Checked before the id: an unknown subscription gets the same answer.
    let unknown = format!("/api/v1/webhooks/{}/test", Uuid::new_v4());
    app.request(Method::POST, &unknown, Auth::XApiKey(&key.raw), &[], None)
        .await
        .assert_problem(403, "plan_upgrade_required", None);
    let seen = app
        .get_as(&key.raw, &format!("/api/v1/webhooks/{id}"))
        .await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.text);
    let deliveries = app
        .get_as(&key.raw, &format!("/api/v1/webhooks/{id}/deliveries"))
        .await;
    assert_eq!(deliveries.body["data"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn post_webhooks_returns_403_on_the_developer_plan() {
    let app = spawn_app().await;
    app.post_webhook(&app.keys.developer.raw, &json!({ "callback_url": HOOK }))
        .await
        .assert_problem(403, "plan_upgrade_required", None);
    // The plan is what is wrong, whatever the body: a developer learns that first.
    app.post_webhook_raw(&app.keys.developer.raw, "application/json", b"{".to_vec())
        .await
        .assert_problem(403, "plan_upgrade_required", None);
    assert_eq!(
        app.list_webhooks(&app.keys.developer.raw).await.ids(),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn post_webhooks_returns_400_invalid_body_when_the_body_is_not_json() {
    let app = spawn_app().await;
    app.post_webhook_raw(
        &app.keys.agent_pro.raw,
        "application/json",
        b"callback_url=x".to_vec(),
    )
    .await
    .assert_problem(400, "invalid_body", None);
}

#[tokio::test]
async fn post_webhooks_names_the_field_that_has_the_wrong_type() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    for (body, field) in [
        (json!({ "callback_url": 42 }), "callback_url"),
        (
            json!({ "callback_url": HOOK, "remote_only": "yes" }),
            "remote_only",
        ),
        (
            json!({ "callback_url": HOOK, "domain_filters": "ai" }),
            "domain_filters",
        ),
        (
            json!({ "callback_url": HOOK, "seniority": [1] }),
            "seniority",
        ),
        (
            json!({ "callback_url": HOOK, "min_confidence": "0.5" }),
            "min_confidence",
        ),
    ] {
        let r = app.post_webhook(key, &body).await;
        r.assert_problem(400, "invalid_parameter", Some(field));
        let detail = r.body["detail"].as_str().unwrap_or("");
        assert!(detail.contains("wrong type"), "{detail}");
    }
    app.post_webhook(key, &json!(["not", "an", "object"]))
        .await
        .assert_problem(400, "invalid_body", None);
}

/// serde reads a positional array into a struct; the endpoint must not.
#[tokio::test]
async fn post_webhooks_returns_400_invalid_body_for_a_json_array_of_the_fields() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    for body in [
        json!([HOOK]),
        json!([HOOK, ["ai"], true, ["senior"], "rust", "acme", 0.5]),
        json!([HOOK, [], false, [], null, null, null, "extra"]),
    ] {
        app.post_webhook(key, &body)
            .await
            .assert_problem(400, "invalid_body", None);
    }
    assert_eq!(app.list_webhooks(key).await.ids(), Vec::<String>::new());
}

/// A field the body does not take is named, as an unknown query parameter is, whether or not
/// another endpoint takes it (`status` is a `PATCH` field).
#[tokio::test]
async fn post_webhooks_returns_400_unknown_parameter_naming_an_unknown_field() {
    let app = spawn_app().await;
    for field in ["domains", "status"] {
        let r = app
            .post_webhook(
                &app.keys.agent_pro.raw,
                &json!({ "callback_url": HOOK, field: ["ai"] }),
            )
            .await;
        r.assert_problem(400, "unknown_parameter", Some(field));
        let allowed = r.body["allowed"].as_array().cloned().unwrap_or_default();
        assert!(allowed.contains(&json!("domain_filters")), "{}", r.text);
        assert!(!allowed.contains(&json!("status")), "{}", r.text);
    }
    // A field name of any length is named by its first 64 characters.
    let long = "x".repeat(1_000);
    app.post_webhook(
        &app.keys.agent_pro.raw,
        &json!({ "callback_url": HOOK, long.as_str(): 1 }),
    )
    .await
    .assert_problem(400, "unknown_parameter", Some(&long[..64]));
    assert!(app
        .list_webhooks(&app.keys.agent_pro.raw)
        .await
        .ids()
        .is_empty());
}

/// Whatever follows a body's object would be dropped unread, a second object too.
#[tokio::test]
async fn a_webhook_body_with_anything_after_its_object_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    for tail in [" trailing", r#"{"x":1}"#, "]]", "\nmore"] {
        let body = format!(r#"{{"callback_url":"{HOOK}"}}{tail}"#);
        app.post_webhook_raw(key, "application/json", body.into_bytes())
            .await
            .assert_problem(400, "invalid_body", None);
    }
    assert!(app.list_webhooks(key).await.ids().is_empty());
    // White space after the object is no content.
    let spaced = format!("{{\"callback_url\":\"{HOOK}\"}} \r\n");
    let created = app
        .post_webhook_raw(key, "application/json", spaced.into_bytes())
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let id = created.body["id"].as_str().unwrap_or_default().to_owned();
    app.request(
        Method::PATCH,
        &format!("/api/v1/webhooks/{id}"),
        Auth::XApiKey(key),
        &[("content-type", "application/json")],
        Some(br#"{"status":"disabled"}{"status":"active"}"#.to_vec()),
    )
    .await
    .assert_problem(400, "invalid_body", None);
    assert_eq!(app.get_webhook(key, &id).await.body["status"], "active");
}

/// A ping takes no body; a client library that always sends one may send `{}`.
#[tokio::test]
async fn test_takes_no_body_or_an_empty_json_object_and_refuses_anything_else() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let (id, _) = create(&app, key, json!({ "callback_url": HOOK })).await;
    let path = format!("/api/v1/webhooks/{id}/test");
    let ping = |content_type: &'static str, body: &'static [u8]| {
        let headers = [("content-type", content_type)];
        let app = &app;
        let path = &path;
        async move {
            app.request(
                Method::POST,
                path,
                Auth::XApiKey(key),
                &headers,
                Some(body.to_vec()),
            )
            .await
        }
    };
    ping("text/plain", b"garbage")
        .await
        .assert_problem(415, "unsupported_media_type", None);
    ping("application/json", br#"{"unknown":1}"#)
        .await
        .assert_problem(400, "unknown_parameter", Some("unknown"));
    ping("application/json", b"{} x")
        .await
        .assert_problem(400, "invalid_body", None);
    for (content_type, body) in [("application/json", &b" {} "[..]), ("text/plain", &b""[..])] {
        let r = ping(content_type, body).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{body:?}: {}", r.text);
    }
    let deliveries = app
        .get_as(key, &format!("/api/v1/webhooks/{id}/deliveries"))
        .await;
    assert_eq!(deliveries.body["data"].as_array().map(Vec::len), Some(2));

    // The deliveries page like every list.
    let path = format!("/api/v1/webhooks/{id}/deliveries");
    let first = app.get_as(key, &format!("{path}?per_page=1")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    assert_eq!(first.body["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(first.body["pagination"]["total"], 2);
    assert_eq!(first.body["pagination"]["total_pages"], 2);
    assert_eq!(
        first.body["links"]["next"],
        format!("{path}?per_page=1&page=2")
    );
    let second = app.get_as(key, &format!("{path}?per_page=1&page=2")).await;
    assert_ne!(second.body["data"][0]["id"], first.body["data"][0]["id"]);
    assert_eq!(second.body["links"]["next"], json!(null));
}

#[tokio::test]
async fn post_webhooks_returns_400_naming_callback_url_when_it_is_missing() {
    let app = spawn_app().await;
    app.post_webhook(&app.keys.agent_pro.raw, &json!({ "remote_only": true }))
        .await
        .assert_problem(400, "invalid_parameter", Some("callback_url"));
}

#[tokio::test]
async fn post_webhooks_returns_400_naming_callback_url_when_it_is_not_a_url() {
    let app = spawn_app().await;
    for url in [
        "not a url",
        "ftp://hooks.example.com/x",
        "https://user:pw@hooks.example.com/",
    ] {
        app.post_webhook(&app.keys.agent_pro.raw, &json!({ "callback_url": url }))
            .await
            .assert_problem(400, "invalid_parameter", Some("callback_url"));
    }
}

#[tokio::test]
async fn post_webhooks_returns_400_naming_domain_filters_for_a_bad_tag() {
    let app = spawn_app().await;
    app.post_webhook(
        &app.keys.agent_pro.raw,
        &json!({ "callback_url": HOOK, "domain_filters": ["ai", "not a tag"] }),
    )
    .await
    .assert_problem(400, "invalid_parameter", Some("domain_filters"));
}

#[tokio::test]
async fn post_webhooks_returns_415_when_the_body_is_not_declared_json() {
    let app = spawn_app().await;
    let body = serde_json::to_vec(&json!({ "callback_url": HOOK })).expect("JSON");
    app.post_webhook_raw(&app.keys.agent_pro.raw, "text/plain", body.clone())
        .await
        .assert_problem(415, "unsupported_media_type", None);
    app.post_webhook_raw(
        &app.keys.agent_pro.raw,
        "application/x-www-form-urlencoded",
        body,
    )
    .await
    .assert_problem(415, "unsupported_media_type", None);
}

/// A compressed body is not read: 415 with its own code, and `Accept-Encoding: identity`
/// (RFC 9110, 15.5.16); `identity` itself is no compression.
#[tokio::test]
async fn post_webhooks_returns_415_naming_the_coding_of_a_compressed_body() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let body = serde_json::to_vec(&json!({ "callback_url": HOOK })).expect("JSON");
    let post = |encoding: &'static str| {
        let body = body.clone();
        let app = &app;
        async move {
            let headers = [
                ("content-type", "application/json"),
                ("content-encoding", encoding),
            ];
            app.request(
                Method::POST,
                "/api/v1/webhooks",
                Auth::XApiKey(key),
                &headers,
                Some(body),
            )
            .await
        }
    };
    for (encoding, named) in [
        ("gzip", "gzip"),
        ("identity, br", "br"),
        ("DEFLATE", "DEFLATE"),
    ] {
        let refused = post(encoding).await;
        refused.assert_problem(415, "unsupported_content_encoding", None);
        assert_eq!(refused.header("accept-encoding"), Some("identity"));
        let detail = refused.body["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(&format!("Content-Encoding: {named},")),
            "{detail}"
        );
    }
    let listed = app.list_webhooks(key).await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(0));
    let accepted = post("identity").await;
    assert_eq!(accepted.status.as_u16(), 201, "{}", accepted.text);
}

#[tokio::test]
async fn post_webhooks_accepts_json_with_a_charset() {
    let app = spawn_app().await;
    let body = serde_json::to_vec(&json!({ "callback_url": HOOK })).expect("JSON");
    let r = app
        .post_webhook_raw(
            &app.keys.agent_pro.raw,
            "application/json; charset=utf-8",
            body,
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[tokio::test]
async fn post_webhooks_returns_413_when_the_body_is_over_64_kib() {
    let app = spawn_app().await;
    let padding = "a".repeat(70 * 1024);
    let body = serde_json::to_vec(&json!({ "callback_url": format!("{HOOK}?p={padding}") }))
        .expect("JSON");
    assert!(body.len() > 64 * 1024);
    app.post_webhook_raw(&app.keys.agent_pro.raw, "application/json", body)
        .await
        .assert_problem(413, "body_too_large", None);
}

#[tokio::test]
async fn post_webhooks_refuses_http_and_private_callbacks_by_default() {
    let app = spawn_app().await;
    for url in [
        "http://hooks.example.com/jobs",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.0.0.7/hook",
        "https://[::1]/hook",
        "http://127.0.0.1:9000/hook",
    ] {
        app.post_webhook(&app.keys.agent_pro.raw, &json!({ "callback_url": url }))
            .await
            .assert_problem(400, "invalid_parameter", Some("callback_url"));
    }
    assert_eq!(
        app.list_webhooks(&app.keys.agent_pro.raw).await.ids(),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn post_webhooks_accepts_loopback_http_in_local_development() {
    let app = spawn_app_with(
        ServiceConfig::default().callback_policy(CallbackPolicy::local_development()),
    )
    .await;
    let (_, r) = create(
        &app,
        &app.keys.agent_pro.raw,
        json!({ "callback_url": "http://127.0.0.1:9000/hook" }),
    )
    .await;
    assert_eq!(r.body["callback_url"], "http://127.0.0.1:9000/hook");
}

#[tokio::test]
async fn post_webhooks_returns_409_past_the_limit_per_key() {
    let app = spawn_app_with(ServiceConfig::default().max_webhooks_per_key(2)).await;
    let key = &app.keys.agent_pro.raw;
    let (first, _) = create(&app, key, json!({ "callback_url": HOOK })).await;
    create(&app, key, json!({ "callback_url": HOOK })).await;
    app.post_webhook(key, &json!({ "callback_url": HOOK }))
        .await
        .assert_problem(409, "webhook_limit_reached", None);
    // Another key has its own allowance; deleting one frees a place.
    create(
        &app,
        &app.keys.enterprise.raw,
        json!({ "callback_url": HOOK }),
    )
    .await;
    assert_eq!(
        app.delete_webhook(key, &first).await.status,
        StatusCode::NO_CONTENT
    );
    create(&app, key, json!({ "callback_url": HOOK })).await;
}

#[tokio::test]
async fn a_new_matching_job_queues_a_pending_delivery_for_the_webhook() {
    let app = spawn_app().await;
    let hook = remote_design_hook(&app).await;
    assert!(app.pending_deliveries(&hook).await.is_empty());

    let job = new_job(&["design"], true);
    let outcome = app.service.upsert_job(job.clone()).await.expect("ingested");
    assert!(outcome.created);
    assert!(outcome.announced);

    let pending = app.pending_deliveries(&hook).await;
    assert_eq!(pending.len(), 1, "{pending:?}");
    let d = &pending[0];
    assert_eq!(d.status, DeliveryStatus::Pending);
    assert_eq!(d.attempts, 0);
    let event = app
        .store
        .get_event(d.event_id)
        .await
        .expect("the store")
        .expect("the event");
    assert_eq!(event.kind, "job.new");
    assert_eq!(event.data["id"], job.id.to_string().as_str());

    // The same job ingested again is not new.
    let again = app.service.upsert_job(job).await.expect("ingested");
    assert!(!again.created);
    assert_eq!(app.pending_deliveries(&hook).await.len(), 1);
}

#[tokio::test]
async fn a_new_job_outside_the_webhooks_filters_queues_nothing() {
    let app = spawn_app().await;
    let hook = remote_design_hook(&app).await;
    let on_site = new_job(&["design"], false);
    let other_domain = new_job(&["sales"], true);
    for job in [on_site, other_domain] {
        let outcome = app.service.upsert_job(job).await.expect("ingested");
        assert!(outcome.created);
    }
    assert!(app.pending_deliveries(&hook).await.is_empty());
}

#[tokio::test]
async fn get_webhook_deliveries_lists_the_queued_delivery() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let hook = hook_and_a_new_job(&app).await;
    assert_eq!(app.service.fan_out_now().await.expect("fanned out"), 1);
    let r = app
        .get_as(key, &format!("/api/v1/webhooks/{hook}/deliveries"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let data = r.body["data"].as_array().expect("data");
    assert_eq!(data.len(), 1);
    assert_eq!(data[0]["webhook_id"], hook.as_str());
    assert_eq!(data[0]["status"], "pending");
}

#[tokio::test]
async fn deleting_a_webhook_drops_its_pending_deliveries() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let hook = hook_and_a_new_job(&app).await;
    assert_eq!(app.pending_deliveries(&hook).await.len(), 1);
    assert_eq!(
        app.delete_webhook(key, &hook).await.status,
        StatusCode::NO_CONTENT
    );
    assert!(app.pending_deliveries(&hook).await.is_empty());
    // A job after the delete goes nowhere: with no subscription left it is not even logged.
    let outcome = app
        .service
        .upsert_job(new_job(&["ai"], false))
        .await
        .expect("ingested");
    assert!(!outcome.announced);
    assert!(app.pending_deliveries(&hook).await.is_empty());
}

/// `POST /api/v1/webhooks` with an `Idempotency-Key`.
async fn post_webhook_once(app: &TestApp, key: &str, once: &str, body: &Value) -> Resp {
    app.request(
        Method::POST,
        "/api/v1/webhooks",
        Auth::XApiKey(key),
        &[
            ("content-type", "application/json"),
            ("idempotency-key", once),
        ],
        Some(serde_json::to_vec(body).expect("JSON")),
    )
    .await
}

#[tokio::test]
async fn a_retried_post_webhooks_with_its_idempotency_key_answers_as_the_first_and_registers_nothing(
) {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let body = json!({ "callback_url": HOOK, "domain_filters": ["ai", "design"] });
    let first = post_webhook_once(&app, key, "order-4711", &body).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    assert_eq!(first.header("idempotent-replayed"), None);

    // The same request again, its filters in another order: the same subscription, secret
    // and location, said to be a replay.
    let again = json!({ "callback_url": HOOK, "domain_filters": ["design", "AI"] });
    let retry = post_webhook_once(&app, key, "order-4711", &again).await;
    assert_eq!(retry.status, StatusCode::CREATED, "{}", retry.text);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.body["id"], first.body["id"]);
    assert_eq!(retry.body["secret"], first.body["secret"]);
    assert_eq!(retry.header("location"), first.header("location"));
    let listed = app.list_webhooks(key).await;
    assert_eq!(
        listed.body["data"].as_array().map(Vec::len),
        Some(1),
        "{}",
        listed.text
    );

    // Another key with the same idempotency key registers its own.
    let other = post_webhook_once(&app, &app.keys.enterprise.raw, "order-4711", &body).await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.text);
    assert_eq!(other.header("idempotent-replayed"), None);
    assert_ne!(other.body["id"], first.body["id"]);

    // Without the header, each request registers one.
    create(&app, key, body.clone()).await;
    create(&app, key, body).await;
    let listed = app.list_webhooks(key).await;
    assert_eq!(
        listed.body["data"].as_array().map(Vec::len),
        Some(3),
        "{}",
        listed.text
    );
}

#[tokio::test]
async fn post_webhooks_returns_409_when_an_idempotency_key_comes_back_with_other_fields() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let first = post_webhook_once(&app, key, "k-1", &json!({ "callback_url": HOOK })).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    let changed = json!({ "callback_url": HOOK, "remote_only": true });
    let r = post_webhook_once(&app, key, "k-1", &changed).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert_eq!(r.code(), "idempotency_key_reused");
    let id = first.body["id"].as_str().expect("an id");
    assert!(
        r.body["detail"].as_str().is_some_and(|d| d.contains(id)),
        "{}",
        r.text
    );
    let listed = app.list_webhooks(key).await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(1));

    // Once that subscription is deleted, the key registers a new one.
    let deleted = app
        .request(
            Method::DELETE,
            &format!("/api/v1/webhooks/{id}"),
            Auth::XApiKey(key),
            &[],
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let fresh = post_webhook_once(&app, key, "k-1", &changed).await;
    assert_eq!(fresh.status, StatusCode::CREATED, "{}", fresh.text);
    assert_ne!(fresh.body["id"], first.body["id"]);
}

#[tokio::test]
async fn post_webhooks_returns_400_naming_a_malformed_idempotency_key() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let long = "k".repeat(256);
    for bad in ["with space", long.as_str()] {
        let r = post_webhook_once(&app, key, bad, &json!({ "callback_url": HOOK })).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.text);
        assert_eq!(r.code(), "invalid_parameter");
        assert_eq!(r.param(), "Idempotency-Key");
    }
    let listed = app.list_webhooks(key).await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(0));
}

/// `PATCH /webhooks/{id}` as a client sends it.
async fn patch(app: &TestApp, key: &str, id: &str, body: &str) -> Resp {
    app.request(
        Method::PATCH,
        &format!("/api/v1/webhooks/{id}"),
        Auth::XApiKey(key),
        &[("content-type", "application/json")],
        Some(body.as_bytes().to_vec()),
    )
    .await
}

/// A field left out stays, `null` sets a filter back to its default, and the answer is the
/// subscription as stored, without its secret; new jobs are matched against the new filters.
#[tokio::test]
async fn patch_webhook_changes_only_the_fields_sent() {
    let app = spawn_app().await;
    let key = app.keys.agent_pro.raw.clone();
    let (id, created) = create(
        &app,
        &key,
        json!({ "callback_url": HOOK, "domain_filters": ["ai"], "q": "rust", "remote_only": true, "min_confidence": 0.5 }),
    )
    .await;

    let r = patch(
        &app,
        &key,
        &id,
        r#"{"domain_filters": ["Design", "design"], "q": null, "callback_url": "https://hooks.example.com/other"}"#,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["domain_filters"], json!(["design"]));
    assert_eq!(r.body["q"], Value::Null);
    assert_eq!(r.body["remote_only"], true, "left out, so kept");
    assert_eq!(r.body["min_confidence"], 0.5);
    assert_eq!(r.body["callback_url"], "https://hooks.example.com/other");
    assert!(r.body.get("secret").is_none(), "{}", r.body);
    let read = app.get_as(&key, &format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(read.body, r.body);
    assert_eq!(created.body["id"], read.body["id"]);

    // The new filters decide: a remote design job now matches, an AI one no longer does.
    let design = app
        .service
        .upsert_job(new_job(&["design"], true))
        .await
        .expect("ingested");
    assert!(design.announced);
    let pending = app.pending_deliveries(&id).await;
    assert_eq!(pending.len(), 1, "{pending:?}");
    let ai = app
        .service
        .upsert_job(new_job(&["ai"], true))
        .await
        .expect("ingested");
    assert!(
        ai.announced,
        "logged for the subscribers; the filter decides at fan-out"
    );
    assert_eq!(
        app.pending_deliveries(&id).await.len(),
        1,
        "the AI job matched nothing"
    );
}

/// `disabled` pauses a subscription and `active` enables it again, with its id and secret.
#[tokio::test]
async fn patch_webhook_status_pauses_and_enables_it() {
    let app = spawn_app().await;
    let key = app.keys.agent_pro.raw.clone();
    let (id, _) = create(&app, &key, json!({ "callback_url": HOOK })).await;

    let paused = patch(&app, &key, &id, r#"{"status": "disabled"}"#).await;
    assert_eq!(paused.status, StatusCode::OK, "{}", paused.text);
    assert_eq!(paused.body["status"], "disabled");
    assert_eq!(paused.body["disabled_reason"], "disabled through the API");
    let _skipped = app
        .service
        .upsert_job(new_job(&["ai"], true))
        .await
        .expect("ingested");
    assert!(
        app.pending_deliveries(&id).await.is_empty(),
        "nothing for a paused subscription"
    );

    let enabled = patch(&app, &key, &id, r#"{"status": "active"}"#).await;
    assert_eq!(enabled.status, StatusCode::OK, "{}", enabled.text);
    assert_eq!(enabled.body["status"], "active");
    assert_eq!(enabled.body["disabled_reason"], Value::Null);
    let sent = app
        .service
        .upsert_job(new_job(&["ai"], true))
        .await
        .expect("ingested");
    assert!(sent.announced);
    assert_eq!(app.pending_deliveries(&id).await.len(), 1);
}

#[tokio::test]
async fn patch_webhook_refuses_what_post_refuses_and_more() {
    let app = spawn_app().await;
    let key = app.keys.agent_pro.raw.clone();
    let (id, _) = create(&app, &key, json!({ "callback_url": HOOK })).await;
    for (body, code, param) in [
        (
            r#"{"callback_url": null}"#,
            "invalid_parameter",
            Some("callback_url"),
        ),
        (
            r#"{"status": "paused"}"#,
            "invalid_parameter",
            Some("status"),
        ),
        (
            r#"{"remote_only": "true"}"#,
            "invalid_parameter",
            Some("remote_only"),
        ),
        (r#"{"status": null}"#, "invalid_parameter", Some("status")),
        (r#"{"status": 5}"#, "invalid_parameter", Some("status")),
        (r#"{"q": "rust\u0000"}"#, "invalid_parameter", Some("q")),
        (
            r#"{"company": "acme\u0007"}"#,
            "invalid_parameter",
            Some("company"),
        ),
        (
            r#"{"status": ["active"]}"#,
            "invalid_parameter",
            Some("status"),
        ),
        (r#"{"status": "active""#, "invalid_body", None),
        (
            r#"{"secret": "whsec_x"}"#,
            "unknown_parameter",
            Some("secret"),
        ),
        (
            r#"{"min_confidence": 2}"#,
            "invalid_parameter",
            Some("min_confidence"),
        ),
        (
            r#"{"callback_url": "https://127.0.0.1/hook"}"#,
            "invalid_parameter",
            Some("callback_url"),
        ),
        (r#"[]"#, "invalid_body", None),
    ] {
        patch(&app, &key, &id, body)
            .await
            .assert_problem(400, code, param);
    }
    // Another key's subscription is not found; a developer key may not change webhooks.
    patch(&app, &app.keys.enterprise.raw, &id, "{}")
        .await
        .assert_problem(404, "not_found", None);
    patch(&app, &app.keys.developer.raw, &id, "{")
        .await
        .assert_problem(403, "plan_upgrade_required", None);
    let unchanged = app.get_as(&key, &format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(unchanged.body["callback_url"], HOOK);
    assert_eq!(unchanged.body["status"], "active");
}

/// A replay is compared with the request first sent under its key, not with the subscription
/// as a `PATCH` left it: the first request still replays, the patched fields do not.
#[tokio::test]
async fn an_idempotency_key_replays_the_first_request_after_a_patch() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let body = json!({ "callback_url": HOOK, "domain_filters": ["ai"] });
    let first = post_webhook_once(&app, key, "k-patch", &body).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    let id = first.body["id"].as_str().expect("an id").to_owned();
    let other = "https://hooks.example.com/other";
    let patched = patch(
        &app,
        key,
        &id,
        &format!(r#"{{"callback_url": "{other}", "q": "rust"}}"#),
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text);

    let replay = post_webhook_once(&app, key, "k-patch", &body).await;
    assert_eq!(replay.status, StatusCode::CREATED, "{}", replay.text);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body["id"], id.as_str());
    assert_eq!(
        replay.body["callback_url"], other,
        "the subscription as it is now"
    );

    let as_patched = json!({ "callback_url": other, "domain_filters": ["ai"], "q": "rust" });
    post_webhook_once(&app, key, "k-patch", &as_patched)
        .await
        .assert_problem(409, "idempotency_key_reused", None);
}

/// A subscription takes a few test pings a minute (5 by default): more are a 429 with
/// Retry-After and are not counted, and another subscription's pings are not held back.
#[tokio::test]
async fn test_pings_are_limited_per_subscription_and_refused_ones_are_not_counted() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let (flooded, _) = create(&app, key, json!({ "callback_url": HOOK })).await;
    let (other, _) = create(
        &app,
        key,
        json!({ "callback_url": "https://hooks.example.com/other" }),
    )
    .await;
    let ping = |id: &str| {
        let path = format!("/api/v1/webhooks/{id}/test");
        let app = &app;
        async move {
            app.request(Method::POST, &path, Auth::XApiKey(key), &[], None)
                .await
        }
    };
    for n in 0..5 {
        let r = ping(&flooded).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "ping {n}: {}", r.text);
    }
    let refused = ping(&flooded).await;
    refused.assert_problem(429, "rate_limited", None);
    let wait = refused.header_u64("retry-after");
    assert!((1..=12).contains(&wait), "Retry-After {wait}");
    let remaining = refused.header_u64("x-ratelimit-remaining");

    let r = ping(&other).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(
        r.header_u64("x-ratelimit-remaining"),
        remaining - 1,
        "the refused ping was not counted, the accepted one was"
    );
}

/// A job of [`new_job`]'s, placed in Berlin, remote from France, paid 5,000 EUR a month.
fn berlin_job() -> Job {
    use job_listings::domain::{Country, Place, RemoteRegion, SalaryRange};
    let mut job = new_job(&["ai"], true);
    let mut berlin = Place::new(Country::parse("DE").expect("a country"));
    (berlin.lat, berlin.lon) = (Some(52.52), Some(13.405));
    job.places = vec![berlin];
    job.remote_regions = vec![RemoteRegion::parse("FR").expect("a region")];
    job.salary = Some(SalaryRange {
        min: Some(4_000),
        max: Some(5_000),
        currency: "EUR".to_owned(),
        period: "month".to_owned(),
    });
    job
}

#[tokio::test]
async fn a_webhooks_places_and_pay_decide_which_new_jobs_it_is_sent() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    // Each saved search and whether the Berlin job (60,000 EUR a year) is one of its jobs.
    let searches = [
        (json!({"country": ["de", "FR"]}), true),
        (json!({"country": ["FR"]}), false),
        (json!({"near": "48.8566,2.3522", "radius_km": 900}), true),
        (json!({"near": "48.8566,2.3522", "radius_km": 800}), false),
        (json!({"remote_from": "fr"}), true),
        (json!({"remote_from": "DE"}), false),
        (json!({"min_salary": 60000, "salary_currency": "eur"}), true),
        (
            json!({"min_salary": 60001, "salary_currency": "EUR"}),
            false,
        ),
        (json!({"min_salary": 1, "salary_currency": "USD"}), false),
    ];
    let mut hooks = Vec::new();
    for (search, wanted) in &searches {
        let mut body = search.clone();
        body["callback_url"] = json!(HOOK);
        let (hook, created) = create(&app, key, body).await;
        // Echoed as read: codes in upper case and sorted, the circle with its radius.
        let upper = |v: &Value| json!(v.as_str().expect("a code").to_uppercase());
        for (field, value) in search.as_object().expect("fields") {
            let echoed = &created.body[field.as_str()];
            match field.as_str() {
                "country" => {
                    let mut codes: Vec<Value> =
                        value.as_array().expect("codes").iter().map(upper).collect();
                    codes.sort_by_key(|c| c.to_string());
                    assert_eq!(echoed, &json!(codes));
                }
                "near" => assert!(echoed["lat"].is_number() && echoed["lon"].is_number()),
                "radius_km" => {
                    assert_eq!(created.body["near"]["radius_km"].as_f64(), value.as_f64())
                }
                "remote_from" | "salary_currency" => assert_eq!(echoed, &upper(value)),
                _ => assert_eq!(echoed, value),
            }
        }
        hooks.push((hook, *wanted));
    }
    let outcome = app
        .service
        .upsert_job(berlin_job())
        .await
        .expect("ingested");
    assert!(outcome.created);
    for ((hook, wanted), (search, _)) in hooks.iter().zip(&searches) {
        let queued = app.pending_deliveries(hook).await.len();
        assert_eq!(queued, usize::from(*wanted), "{search}");
    }
}

#[tokio::test]
async fn a_webhooks_places_and_pay_change_and_clear_with_patch() {
    let app = spawn_app().await;
    let key = &app.keys.agent_pro.raw;
    let body = json!({"callback_url": HOOK, "country": ["DE"], "min_salary": 50000, "salary_currency": "EUR"});
    let (hook, _) = create(&app, key, body).await;
    let patched = patch(
        &app,
        key,
        &hook,
        r#"{"country": null, "near": "52.5,13.4", "remote_from": "NL"}"#,
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text);
    assert_eq!(patched.body["country"], json!([]));
    assert_eq!(
        patched.body["near"],
        json!({"lat": 52.5, "lon": 13.4, "radius_km": 50.0})
    );
    assert_eq!(patched.body["remote_from"], "NL");
    assert_eq!(patched.body["min_salary"], 50000);
    let cleared = patch(
        &app,
        key,
        &hook,
        r#"{"min_salary": null, "salary_currency": null, "near": null}"#,
    )
    .await;
    assert_eq!(cleared.status, StatusCode::OK, "{}", cleared.text);
    assert_eq!(cleared.body["min_salary"], Value::Null);
    assert_eq!(cleared.body["salary_currency"], Value::Null);
    assert_eq!(cleared.body["near"], Value::Null);
    for (bad, param) in [
        (json!({"country": ["D1"]}), "country"),
        (json!({"near": "north"}), "near"),
        (json!({"radius_km": 10}), "radius_km"),
        (json!({"remote_from": "worldwide"}), "remote_from"),
        (json!({"min_salary": 5}), "salary_currency"),
    ] {
        let r = patch(&app, key, &hook, &bad.to_string()).await;
        r.assert_problem(400, "invalid_parameter", Some(param));
        let mut created = bad.clone();
        created["callback_url"] = json!(HOOK);
        let r = app.post_webhook(key, &created).await;
        r.assert_problem(400, "invalid_parameter", Some(param));
    }
}
