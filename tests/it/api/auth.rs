//! API keys: both headers, and every way a key is refused.

use job_listings::domain::{ApiKey, BillingStatus, Plan};
use job_listings::service::NewKey;
use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::{Auth, Resp, TestApp};

async fn jobs_with(app: &TestApp, auth: Auth<'_>) -> Resp {
    app.request(Method::GET, "/api/v1/jobs?per_page=1", auth, &[], None)
        .await
}

#[track_caller]
fn assert_unauthorized(r: &Resp, code: &str) {
    r.assert_problem(401, code, None);
    assert_eq!(
        r.header("www-authenticate"),
        Some("Bearer realm=\"job-listings\""),
        "401 names the scheme"
    );
}

#[tokio::test]
async fn get_jobs_accepts_the_key_in_x_api_key() {
    let app = spawn_app().await;
    let r = jobs_with(&app, Auth::XApiKey(&app.keys.developer.raw)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn get_jobs_accepts_the_key_as_an_authorization_bearer_token() {
    let app = spawn_app().await;
    let r = jobs_with(&app, Auth::Bearer(&app.keys.developer.raw)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let lower = format!("bearer {}", app.keys.developer.raw);
    let r = jobs_with(&app, Auth::Authorization(&lower)).await;
    assert_eq!(r.status, StatusCode::OK, "the scheme is case-insensitive");
}

/// A request with two keys is a 401 saying to send one (`refused`); with one key it is served.
fn assert_one_key_or_refused(r: &Resp, refused: bool) {
    if refused {
        assert_unauthorized(r, "invalid_api_key");
        assert!(
            r.body["detail"]
                .as_str()
                .is_some_and(|d| d.contains("one key")),
            "{}",
            r.text
        );
    } else {
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
}

/// Two `Authorization: Bearer` headers with different keys are refused as two different
/// `X-API-Key` headers are, instead of being served and billed as the first.
#[tokio::test]
async fn two_bearer_keys_in_one_request_are_refused_and_the_same_bearer_twice_is_not() {
    let app = spawn_app().await;
    let (developer, enterprise) = (&app.keys.developer.raw, &app.keys.enterprise.raw);
    let used = || async {
        let report = app.service.usage(&app.keys.developer.key).await;
        report.expect("the developer key's usage").calls_used
    };
    let used_before = used().await;
    for (second, refused) in [(developer, true), (enterprise, false)] {
        let beside = format!("Bearer {second}");
        let r = app
            .request(
                Method::GET,
                "/api/v1/jobs?per_page=1",
                Auth::Bearer(enterprise),
                &[("Authorization", beside.as_str())],
                None,
            )
            .await;
        assert_one_key_or_refused(&r, refused);
    }
    assert_eq!(
        used().await,
        used_before,
        "the second key is billed nothing"
    );
}

#[tokio::test]
async fn two_different_keys_in_one_request_are_refused_and_the_same_key_twice_is_not() {
    let app = spawn_app().await;
    let (developer, enterprise) = (&app.keys.developer.raw, &app.keys.enterprise.raw);
    let bearer = format!("Bearer {developer}");
    // The key in X-API-Key, another header beside it, and whether the request is refused.
    let cases = [
        (enterprise, ("X-API-Key", developer.as_str()), true),
        (enterprise, ("Authorization", bearer.as_str()), true),
        (developer, ("X-API-Key", developer.as_str()), false),
        (developer, ("Authorization", bearer.as_str()), false),
        (developer, ("Authorization", "Basic dXNlcjpwdw=="), false),
    ];
    for (key, beside, refused) in cases {
        let r = app
            .request(
                Method::GET,
                "/api/v1/jobs?per_page=1",
                Auth::XApiKey(key),
                &[beside],
                None,
            )
            .await;
        assert_one_key_or_refused(&r, refused);
    }
}

#[tokio::test]
async fn get_jobs_returns_401_when_the_key_is_missing() {
    let app = spawn_app().await;
    assert_unauthorized(&jobs_with(&app, Auth::None).await, "missing_api_key");
}

/// An empty `X-API-Key` or `Authorization`, as a script with an unset variable sends, is a
/// key not sent; with a bearer token beside an empty `X-API-Key`, the token is the key.
#[tokio::test]
async fn an_empty_x_api_key_or_authorization_header_is_a_missing_key() {
    let app = spawn_app().await;
    for empty in ["", "   "] {
        let r = jobs_with(&app, Auth::XApiKey(empty)).await;
        assert_unauthorized(&r, "missing_api_key");
        let r = jobs_with(&app, Auth::Authorization(empty)).await;
        assert_unauthorized(&r, "missing_api_key");
    }
    let r = jobs_with(&app, Auth::Authorization("Bearer")).await;
    assert_unauthorized(&r, "invalid_api_key");
    let bearer = format!("Bearer {}", app.keys.developer.raw);
    let r = app
        .request(
            Method::GET,
            "/api/v1/jobs?per_page=1",
            Auth::Authorization(&bearer),
            &[("x-api-key", "")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn get_jobs_returns_401_when_the_key_is_missing_even_with_a_bad_parameter() {
    let app = spawn_app().await;
    // The spec: every request requires a key, and a missing key yields 401.
    let r = app
        .request(
            Method::GET,
            "/api/v1/jobs?per_page=0",
            Auth::None,
            &[],
            None,
        )
        .await;
    assert_unauthorized(&r, "missing_api_key");
}

#[tokio::test]
async fn get_jobs_returns_401_when_the_key_is_malformed() {
    let app = spawn_app().await;
    for bad in [
        "hello",
        "jl_live_short",
        "sk_live_0123456789abcdefghijklmnopqrstuvwxyzABCD",
    ] {
        assert_unauthorized(
            &jobs_with(&app, Auth::XApiKey(bad)).await,
            "invalid_api_key",
        );
    }
    assert_unauthorized(
        &jobs_with(
            &app,
            Auth::Authorization(&format!("Basic {}", app.keys.developer.raw)),
        )
        .await,
        "invalid_api_key",
    );
}

#[tokio::test]
async fn get_jobs_returns_401_when_the_key_has_a_typo() {
    let app = spawn_app().await;
    let mut typo = app.keys.developer.raw.clone().into_bytes();
    typo[20] = if typo[20] == b'x' { b'y' } else { b'x' };
    let typo = String::from_utf8(typo).expect("ASCII");
    assert!(ApiKey::parse(&typo).is_err(), "the checksum catches it");
    let r = jobs_with(&app, Auth::XApiKey(&typo)).await;
    assert_unauthorized(&r, "invalid_api_key");
    assert!(
        r.body["detail"].as_str().unwrap_or("").contains("checksum"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn get_jobs_returns_401_for_a_well_formed_key_that_was_never_issued() {
    let app = spawn_app().await;
    let stranger = ApiKey::generate();
    assert_unauthorized(
        &jobs_with(&app, Auth::XApiKey(stranger.expose())).await,
        "invalid_api_key",
    );
}

#[tokio::test]
async fn get_jobs_returns_401_for_a_revoked_key() {
    let app = spawn_app().await;
    let (key, record) = app
        .service
        .create_key(NewKey::new(Plan::AgentPro))
        .await
        .expect("a key");
    assert_eq!(
        jobs_with(&app, Auth::XApiKey(key.expose())).await.status,
        StatusCode::OK
    );
    app.service.revoke_key(record.id).await.expect("revoked");
    assert_unauthorized(
        &jobs_with(&app, Auth::XApiKey(key.expose())).await,
        "invalid_api_key",
    );
    assert_unauthorized(&app.get_usage(key.expose()).await, "invalid_api_key");
}

#[tokio::test]
async fn get_jobs_returns_401_billing_inactive_while_billing_is_past_due() {
    let app = spawn_app().await;
    let id = app.keys.developer.id;
    app.service
        .set_billing_status(id, BillingStatus::PastDue)
        .await
        .expect("updated");
    let raw = app.keys.developer.raw.clone();
    assert_unauthorized(
        &jobs_with(&app, Auth::XApiKey(&raw)).await,
        "billing_inactive",
    );
    app.service
        .set_billing_status(id, BillingStatus::Canceled)
        .await
        .expect("updated");
    assert_unauthorized(
        &jobs_with(&app, Auth::XApiKey(&raw)).await,
        "billing_inactive",
    );
    app.service
        .set_billing_status(id, BillingStatus::Active)
        .await
        .expect("updated");
    assert_eq!(
        jobs_with(&app, Auth::XApiKey(&raw)).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn every_endpoint_but_the_openapi_document_returns_401_without_a_key() {
    let app = spawn_app().await;
    let id = uuid::Uuid::new_v4();
    for (method, path) in [
        (Method::GET, "/api/v1/jobs".to_owned()),
        (Method::GET, format!("/api/v1/jobs/{id}")),
        (Method::GET, "/api/v1/companies".to_owned()),
        (Method::GET, format!("/api/v1/companies/{id}")),
        (Method::GET, "/api/v1/webhooks".to_owned()),
        (Method::POST, "/api/v1/webhooks".to_owned()),
        (Method::GET, format!("/api/v1/webhooks/{id}")),
        (Method::DELETE, format!("/api/v1/webhooks/{id}")),
        (Method::GET, format!("/api/v1/webhooks/{id}/deliveries")),
        (Method::GET, "/api/v1/usage".to_owned()),
    ] {
        let r = app
            .request(method.clone(), &path, Auth::None, &[], None)
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNAUTHORIZED,
            "{method} {path}: {}",
            r.text
        );
        assert_eq!(r.code(), "missing_api_key", "{method} {path}");
    }
}
