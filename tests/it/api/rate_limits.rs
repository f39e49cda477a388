//! Per-key rate limits: a token bucket per key on top of the monthly quota; and the budget of
//! requests without a key, per client address.

use std::net::IpAddr;

use job_listings::api::{ApiConfig, ClientAddr};
use job_listings::service::{RateLimit, ServiceConfig};
use reqwest::StatusCode;

use super::spawn_app_with;
use crate::support::config::rate_limited;
use crate::support::TestApp;

pub(super) fn tight(per_second: f64, burst: u32) -> ServiceConfig {
    rate_limited(RateLimit { per_second, burst })
}

#[tokio::test]
async fn a_key_over_its_rate_gets_429_rate_limited_with_retry_after() {
    // A slow refill, so the test's own pace cannot matter.
    let app = spawn_app_with(tight(0.2, 3)).await;
    let key = app.keys.developer.raw.clone();
    for _ in 0..3 {
        assert_eq!(
            app.get_as(&key, "/api/v1/jobs").await.status,
            StatusCode::OK
        );
    }
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
    assert_eq!(r.body["code"], "rate_limited");
    assert_eq!(r.body["status"], 429);
    let retry: u64 = r
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a numeric Retry-After");
    assert!((1..=5).contains(&retry), "retry-after {retry}");
    assert_eq!(r.body["retry_after"], retry);
    // The per-second limit it hit is described beside the monthly quota: 3 requests per the
    // 15 s a refill takes, none left until the retry.
    let policy = r.header("ratelimit-policy").unwrap_or_default();
    assert!(policy.starts_with("\"monthly\";q="), "{policy}");
    assert!(policy.ends_with(", \"burst\";q=3;w=15"), "{policy}");
    let state = r.header("ratelimit").unwrap_or_default();
    assert!(
        state.ends_with(&format!(", \"burst\";r=0;t={retry}")),
        "{state}"
    );
    assert!(r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/problem+json")));
}

#[tokio::test]
async fn rate_limited_calls_do_not_count_against_the_quota() {
    let app = spawn_app_with(tight(0.2, 4)).await;
    let key = app.keys.developer.raw.clone();
    for _ in 0..3 {
        assert_eq!(
            app.get_as(&key, "/api/v1/jobs").await.status,
            StatusCode::OK
        );
    }
    // The bucket had 4: three searches and this usage call; the next search is refused.
    assert_eq!(app.calls_used(&key).await, 3);
    let refused = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.body["code"], "rate_limited");
    // Counted by the service directly, without spending a token.
    let api_key = job_listings::domain::ApiKey::parse(&key).expect("a key");
    let quota = app.service.quota(&api_key).await.expect("quota");
    assert_eq!(quota.remaining, quota.limit - 3);
}

#[tokio::test]
async fn one_key_being_throttled_leaves_other_keys_alone() {
    let app = spawn_app_with(tight(0.2, 2)).await;
    let flooder = app.keys.developer.raw.clone();
    let other = app.keys.agent_pro.raw.clone();
    let mut throttled = 0;
    for _ in 0..10 {
        if app.get_as(&flooder, "/api/v1/jobs").await.status == StatusCode::TOO_MANY_REQUESTS {
            throttled += 1;
        }
    }
    assert_eq!(throttled, 8);
    for _ in 0..2 {
        assert_eq!(
            app.get_as(&other, "/api/v1/jobs").await.status,
            StatusCode::OK
        );
    }
}

#[tokio::test]
async fn without_configured_rate_limits_only_the_quota_applies() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let key = app.keys.developer.raw.clone();
    for _ in 0..60 {
        assert_eq!(
            app.get_as(&key, "/api/v1/jobs?per_page=1").await.status,
            StatusCode::OK
        );
    }
}

/// `OPTIONS /api/v1/jobs` answered in-process, from `addr` when given.
async fn options_from(app: &TestApp, addr: Option<IpAddr>) -> http::Response<bytes::Bytes> {
    let mut request = http::Request::options("/api/v1/jobs")
        .body(bytes::Bytes::new())
        .expect("a request");
    if let Some(ip) = addr {
        request.extensions_mut().insert(ClientAddr(ip));
    }
    app.api.handle(request).await
}

#[tokio::test]
async fn requests_without_a_key_are_charged_to_the_client_address_their_frontend_names() {
    let app = TestApp::builder()
        .api_config(ApiConfig::default().unauthenticated_rate(Some(RateLimit {
            per_second: 0.01,
            burst: 2,
        })))
        .build()
        .await;
    let first: IpAddr = "2001:db8::1".parse().expect("an address");
    // Another address of the same /64 is the same client.
    let same_64: IpAddr = "2001:db8::2".parse().expect("an address");
    let other: IpAddr = "2001:db8:0:1::1".parse().expect("an address");
    assert_eq!(options_from(&app, Some(first)).await.status(), 204);
    assert_eq!(options_from(&app, Some(same_64)).await.status(), 204);
    let refused = options_from(&app, Some(first)).await;
    assert_eq!(refused.status(), 429);
    let problem: serde_json::Value =
        serde_json::from_slice(refused.body()).expect("a problem document");
    assert_eq!(problem["code"], "rate_limited");
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(
        refused
            .headers()
            .get("ratelimit-policy")
            .map(|v| v.as_bytes()),
        Some(&b"\"burst\";q=2;w=200"[..])
    );
    assert_eq!(options_from(&app, Some(other)).await.status(), 204);
    // An embedder that names no address charges nobody.
    for _ in 0..10 {
        assert_eq!(options_from(&app, None).await.status(), 204);
    }
}
