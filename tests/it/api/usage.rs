//! GET /usage, metering, rate-limit headers and the monthly quota.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use job_listings::service::Metering;
use reqwest::StatusCode;
use uuid::Uuid;

use super::{spawn_app, spawn_app_with};
use crate::support::config::developer_quota;
use crate::support::data::known;
use crate::support::Resp;

fn header_u64(r: &Resp, name: &str) -> u64 {
    r.header(name)
        .unwrap_or_else(|| panic!("header {name} missing: {:?}", r.headers))
        .parse()
        .unwrap_or_else(|_| panic!("header {name} is not a number"))
}

#[tokio::test]
async fn get_usage_reports_exactly_the_spec_fields() {
    let app = spawn_app().await;
    let r = app.get_usage(&app.keys.developer.raw).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        Resp::keys(&r.body),
        [
            "calls_remaining",
            "calls_used",
            "monthly_quota",
            "period_start",
            "plan"
        ]
    );
    assert_eq!(r.body["plan"], "developer");
    assert_eq!(r.body["calls_used"], 0);
    assert_eq!(r.body["monthly_quota"], 10_000);
    assert_eq!(r.body["calls_remaining"], 10_000);
    let start: DateTime<Utc> =
        serde_json::from_value(r.body["period_start"].clone()).expect("an ISO 8601 instant");
    let record = app
        .service
        .list_keys()
        .into_iter()
        .find(|k| k.id == app.keys.developer.id)
        .expect("the key record");
    assert_eq!(
        start, record.billing_anchor,
        "the first period starts at the anchor"
    );
    assert!(r.body["period_start"]
        .as_str()
        .is_some_and(|s| s.ends_with('Z')));
}

#[tokio::test]
async fn get_usage_reports_each_plans_quota() {
    let app = spawn_app().await;
    let pro = app.get_usage(&app.keys.agent_pro.raw).await;
    assert_eq!(pro.body["plan"], "agent_pro");
    assert_eq!(pro.body["monthly_quota"], 100_000);
    let ent = app.get_usage(&app.keys.enterprise.raw).await;
    assert_eq!(ent.body["plan"], "enterprise");
    assert_eq!(ent.body["monthly_quota"], 1_000_000);
}

#[tokio::test]
async fn successful_calls_are_counted_and_errors_and_usage_are_not() {
    let app = spawn_app().await;
    let key = app.keys.developer.raw.clone();
    let job = known().designer.id.to_string();
    for path in [
        "/api/v1/jobs".to_owned(),
        format!("/api/v1/jobs/{job}"),
        "/api/v1/companies".to_owned(),
    ] {
        assert_eq!(app.get_as(&key, &path).await.status, StatusCode::OK);
    }
    for (path, status) in [
        (format!("/api/v1/jobs/{}", Uuid::new_v4()), 404),
        ("/api/v1/jobs/not-a-uuid".to_owned(), 400),
        ("/api/v1/jobs?per_page=0".to_owned(), 400),
        (format!("/api/v1/companies/{}", Uuid::new_v4()), 404),
        ("/api/v1/nowhere".to_owned(), 404),
    ] {
        assert_eq!(
            app.get_as(&key, &path).await.status.as_u16(),
            status,
            "{path}"
        );
    }
    assert_eq!(app.calls_used(&key).await, 3);
    assert_eq!(app.calls_used(&key).await, 3, "GET /usage is not counted");
    let r = app.get_usage(&key).await;
    assert_eq!(r.body["calls_remaining"], 10_000 - 3);
}

#[tokio::test]
async fn successful_calls_carry_consistent_rate_limit_headers() {
    let app = spawn_app().await;
    let key = app.keys.developer.raw.clone();
    let first = app.get_as(&key, "/api/v1/jobs").await;
    let second = app.get_as(&key, "/api/v1/companies").await;
    for r in [&first, &second] {
        assert_eq!(header_u64(r, "x-ratelimit-limit"), 10_000);
        assert_eq!(r.header("ratelimit-policy"), Some("\"monthly\";q=10000"));
    }
    assert_eq!(header_u64(&first, "x-ratelimit-remaining"), 9_999);
    assert_eq!(header_u64(&second, "x-ratelimit-remaining"), 9_998);
    let ratelimit = second.header("ratelimit").expect("RateLimit");
    assert!(
        ratelimit.starts_with("\"monthly\";r=9998;t="),
        "{ratelimit}"
    );
    let t: i64 = ratelimit
        .rsplit("t=")
        .next()
        .and_then(|t| t.parse().ok())
        .expect("t");
    assert!(t > 0);

    let usage = app.get_usage(&key).await;
    assert_eq!(usage.body["calls_remaining"], 9_998);
    let start: DateTime<Utc> =
        serde_json::from_value(usage.body["period_start"].clone()).expect("period_start");
    let reset = header_u64(&second, "x-ratelimit-reset") as i64;
    let period_end = start
        .checked_add_months(chrono::Months::new(1))
        .expect("a month later");
    assert_eq!(
        reset,
        period_end.timestamp(),
        "the period ends a month after it starts"
    );
}

#[tokio::test]
async fn get_usage_responses_carry_the_rate_limit_headers() {
    let app = spawn_app().await;
    let key = app.keys.developer.raw.clone();
    app.get_as(&key, "/api/v1/jobs").await;
    // Authenticated answers carry the quota headers (docs/api.md, "Answers", names them).
    let r = app.get_usage(&key).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), 10_000);
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 9_999);
}

#[tokio::test]
async fn the_quota_lets_exactly_q_calls_succeed_then_answers_429() {
    let app = spawn_app_with(developer_quota(3)).await;
    let key = app.keys.developer.raw.clone();
    for remaining in [2, 1, 0] {
        let r = app.get_as(&key, "/api/v1/jobs?per_page=1").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(header_u64(&r, "x-ratelimit-remaining"), remaining);
    }
    let r = app.get_as(&key, "/api/v1/jobs?per_page=1").await;
    r.assert_problem(429, "quota_exceeded", None);
    let retry_after = header_u64(&r, "retry-after");
    assert!(retry_after >= 1);
    assert_eq!(r.body["retry_after"].as_u64(), Some(retry_after));
    app.get_as(&key, "/api/v1/companies")
        .await
        .assert_problem(429, "quota_exceeded", None);

    let usage = app.get_usage(&key).await;
    assert_eq!(usage.status, StatusCode::OK, "usage stays readable");
    assert_eq!(usage.body["calls_used"], 3);
    assert_eq!(usage.body["calls_remaining"], 0);
    assert_eq!(usage.body["monthly_quota"], 3);
    // Other keys have their own quota.
    let other = app.get_as(&app.keys.agent_pro.raw, "/api/v1/jobs").await;
    assert_eq!(other.status, StatusCode::OK);
}

#[tokio::test]
async fn quota_exceeded_responses_carry_the_rate_limit_headers_with_nothing_remaining() {
    let app = spawn_app_with(developer_quota(1)).await;
    let key = app.keys.developer.raw.clone();
    assert_eq!(
        app.get_as(&key, "/api/v1/jobs").await.status,
        StatusCode::OK
    );
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    // Authenticated answers carry the quota headers (docs/api.md, "Answers", names them).
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), 1);
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_past_the_quota_succeed_exactly_q_times() {
    const QUOTA: u64 = 50;
    const CALLS: usize = 200;
    let app = Arc::new(spawn_app_with(developer_quota(QUOTA)).await);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..CALLS {
        let app = app.clone();
        tasks.spawn(async move {
            let path = if i % 2 == 0 {
                "/api/v1/jobs?per_page=1"
            } else {
                "/api/v1/companies?per_page=1"
            };
            let r = app.get_as(&app.keys.developer.raw, path).await;
            r.status.as_u16()
        });
    }
    let (mut ok, mut limited) = (0, 0);
    while let Some(status) = tasks.join_next().await {
        match status.expect("the task ran") {
            200 => ok += 1,
            429 => limited += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(ok, QUOTA as usize);
    assert_eq!(limited, CALLS - QUOTA as usize);
    assert_eq!(app.calls_used(&app.keys.developer.raw).await, QUOTA);
}

/// A key moved to a plan whose quota it has already passed this period is told how many
/// calls it made, that none remain, and is refused from then on.
#[tokio::test]
async fn usage_over_a_lowered_quota_reports_every_call_and_none_remaining() {
    let app = spawn_app_with(developer_quota(3)).await;
    let key = &app.keys.agent_pro;
    for _ in 0..5 {
        let r = app.get_as(&key.raw, "/api/v1/jobs?per_page=1").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    app.service
        .set_plan(key.id, job_listings::domain::Plan::Developer)
        .await
        .expect("the plan changed");
    let r = app.get_usage(&key.raw).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["plan"], "developer");
    assert_eq!(r.body["calls_used"], 5, "{}", r.text);
    assert_eq!(r.body["calls_remaining"], 0, "{}", r.text);
    assert_eq!(r.body["monthly_quota"], 3, "{}", r.text);
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 0);
    app.get_as(&key.raw, "/api/v1/jobs?per_page=1")
        .await
        .assert_problem(429, "quota_exceeded", None);
}

#[tokio::test]
async fn refusals_before_any_call_carry_the_quota_as_the_key_was_checked() {
    for metering in [Metering::default(), Metering::InStore] {
        let app = spawn_app_with(developer_quota(5).metering(metering)).await;
        let key = app.keys.developer.raw.clone();
        assert_eq!(
            app.get_as(&key, "/api/v1/jobs").await.status,
            StatusCode::OK
        );
        for path in [
            "/api/v1/jobs?per_page=0",
            "/api/v1/jobs/not-an-id",
            "/api/v1/no-such-path",
        ] {
            let r = app.get_as(&key, path).await;
            assert!(
                r.status.is_client_error(),
                "{metering:?} {path}: {}",
                r.text
            );
            assert_eq!(
                header_u64(&r, "x-ratelimit-limit"),
                5,
                "{metering:?} {path}"
            );
            assert_eq!(
                header_u64(&r, "x-ratelimit-remaining"),
                4,
                "{metering:?} {path}"
            );
        }
        assert_eq!(app.calls_used(&key).await, 1, "{metering:?}: none counted");
    }
}
