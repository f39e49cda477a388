//! Per-key rate limits: a token bucket per key on top of the monthly quota.

use job_listings::service::{RateLimit, RateLimits, ServiceConfig};
use reqwest::StatusCode;

use super::spawn_app_with;

fn tight(per_second: f64, burst: u32) -> ServiceConfig {
    let limit = RateLimit { per_second, burst };
    ServiceConfig {
        rate_limits: Some(RateLimits {
            developer: limit,
            agent_pro: limit,
            enterprise: limit,
        }),
        ..ServiceConfig::default()
    }
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
    let usage = app.get_usage(&key).await;
    assert_eq!(usage.status, StatusCode::OK);
    assert_eq!(usage.body["calls_used"], 3);
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
