//! Metrics: requests made over loopback to the real server are counted exactly, by route
//! pattern, method and status, refusals by their problem code, and the gauges report what the
//! service holds. Read through `Api::metrics_text`, as a `GET /metrics` would serve it.

use std::time::Duration;

use bytes::Bytes;
use job_listings::api::Api;
use job_listings::domain::{JobStatus, Plan};
use reqwest::{Method, StatusCode};

use super::{spawn_app, spawn_app_with};
use crate::support::config::developer_quota;
use crate::support::data::known;
use crate::support::metrics::{count, sample};
use crate::support::{eventually, Auth};

const REQUESTS: &str = "job_listings_http_requests_total";
const DURATIONS: &str = "job_listings_http_request_duration_seconds_count";
const PROBLEMS: &str = "job_listings_http_problems_total";

fn requests(text: &str, route: &str, method: &str, status: &str) -> f64 {
    count(
        text,
        REQUESTS,
        &[("route", route), ("method", method), ("status", status)],
    )
}

#[tokio::test]
async fn requests_are_counted_by_route_pattern_method_and_status() {
    let app = spawn_app().await;
    let job = known().rust_staff.id.to_string();
    let unknown = uuid::Uuid::new_v4().to_string();

    for _ in 0..2 {
        assert_eq!(app.get_jobs("per_page=1").await.status, StatusCode::OK);
    }
    assert_eq!(app.get_job(&job).await.status, StatusCode::OK);
    app.get_job(&unknown)
        .await
        .assert_problem(404, "not_found", None);
    let head = app
        .request(Method::HEAD, "/api/v1/jobs", Auth::None, &[], None)
        .await;
    assert_eq!(head.status, StatusCode::UNAUTHORIZED);
    let stray = app
        .request(Method::GET, "/wp-admin/setup.php", Auth::None, &[], None)
        .await;
    assert_eq!(stray.status, StatusCode::NOT_FOUND);

    let text = app.api.metrics_text();
    assert_eq!(requests(&text, "/api/v1/jobs", "GET", "200"), 2.0, "{text}");
    assert_eq!(requests(&text, "/api/v1/jobs/{id}", "GET", "200"), 1.0);
    assert_eq!(requests(&text, "/api/v1/jobs/{id}", "GET", "404"), 1.0);
    assert_eq!(requests(&text, "/api/v1/jobs", "HEAD", "401"), 1.0);
    assert_eq!(requests(&text, "unmatched", "GET", "404"), 1.0);
    assert_eq!(
        count(
            &text,
            DURATIONS,
            &[("route", "/api/v1/jobs/{id}"), ("method", "GET")]
        ),
        2.0
    );
    assert_eq!(count(&text, PROBLEMS, &[("code", "missing_api_key")]), 1.0);
    // Label values are patterns: no path, id or key of a request is ever one.
    for raw in [&job, &unknown, &app.keys.enterprise.raw] {
        assert!(!text.contains(raw.as_str()), "{raw} in the metrics");
    }
    assert!(!text.contains("wp-admin"));

    // Counts go up exactly, whatever was counted before.
    app.get_jobs("per_page=1").await;
    let later = app.api.metrics_text();
    assert_eq!(requests(&later, "/api/v1/jobs", "GET", "200"), 3.0);
    assert_eq!(requests(&later, "/api/v1/jobs/{id}", "GET", "200"), 1.0);
}

#[tokio::test]
async fn a_quota_refusal_is_counted_by_its_problem_code() {
    let app = spawn_app_with(developer_quota(1)).await;
    let key = app.keys.developer.raw.clone();
    assert_eq!(
        app.get_as(&key, "/api/v1/jobs?per_page=1").await.status,
        StatusCode::OK
    );
    for _ in 0..2 {
        app.get_as(&key, "/api/v1/jobs?per_page=1")
            .await
            .assert_problem(429, "quota_exceeded", None);
    }
    app.get_as("jl_live_not_a_key", "/api/v1/usage")
        .await
        .assert_problem(401, "invalid_api_key", None);

    let text = app.api.metrics_text();
    assert_eq!(count(&text, PROBLEMS, &[("code", "quota_exceeded")]), 2.0);
    assert_eq!(count(&text, PROBLEMS, &[("code", "invalid_api_key")]), 1.0);
    assert_eq!(count(&text, PROBLEMS, &[("code", "rate_limited")]), 0.0);
    assert_eq!(requests(&text, "/api/v1/jobs", "GET", "429"), 2.0);
    assert_eq!(requests(&text, "/api/v1/jobs", "GET", "200"), 1.0);
    assert_eq!(requests(&text, "/api/v1/usage", "GET", "401"), 1.0);
}

#[tokio::test]
async fn the_gauges_and_stats_report_what_the_service_holds() {
    let app = spawn_app().await;
    let active = app
        .all_jobs()
        .iter()
        .filter(|j| j.status == JobStatus::Active)
        .count() as u64;
    let closed = app.all_jobs().len() as u64 - active;
    // The closed jobs are counted in the background after start.
    let counted = eventually(Duration::from_secs(20), || async {
        app.service.stats().expect("stats").jobs.closed.is_some()
    })
    .await;
    assert!(counted, "the closed jobs were counted");

    let stats = app.service.stats().expect("stats");
    assert_eq!(stats.jobs.active, active);
    assert_eq!(stats.jobs.closed, Some(closed));
    assert_eq!(stats.companies, app.all_companies().len() as u64);
    for plan in Plan::ALL {
        assert_eq!(stats.keys.active_by_plan[&plan], 1, "{plan}");
    }
    assert_eq!(stats.keys.revoked, 0);
    assert!(stats.index_memory_bytes > 0);
    assert_eq!(stats.follower_lag, None, "sled has no change feed");
    assert_eq!(stats.outbox_backlog, 0);

    let json = serde_json::to_value(&stats).expect("JSON");
    assert_eq!(json["jobs"]["closed"], closed);
    assert_eq!(json["keys"]["active_by_plan"]["agent_pro"], 1);
    assert!(json["follower_lag"].is_null());

    let text = app.api.metrics_text();
    let gauge = |name, labels: &[(&str, &str)]| sample(&text, name, labels);
    assert_eq!(
        gauge("job_listings_jobs", &[("status", "active")]),
        Some(active as f64)
    );
    assert_eq!(
        gauge("job_listings_jobs", &[("status", "closed")]),
        Some(closed as f64)
    );
    assert_eq!(
        gauge("job_listings_api_keys", &[("plan", "enterprise")]),
        Some(1.0)
    );
    assert_eq!(
        gauge("job_listings_outbox_pending_deliveries", &[]),
        Some(0.0)
    );
    assert!(gauge("job_listings_index_memory_bytes", &[]).is_some_and(|b| b > 0.0));
    assert_eq!(gauge("job_listings_follower_lag_changes", &[]), None);

    // Closing an active job moves it from one count to the other, and counts the write.
    app.service
        .close_job(known().rust_staff.id)
        .await
        .expect("closed");
    app.service
        .revoke_key(app.keys.developer.id)
        .await
        .expect("revoked");
    let after = app.service.stats().expect("stats");
    assert_eq!(after.jobs.active, active - 1);
    assert_eq!(after.jobs.closed, Some(closed + 1));
    assert_eq!(after.keys.active_by_plan[&Plan::Developer], 0);
    assert_eq!(after.keys.revoked, 1);
    let text = app.api.metrics_text();
    assert_eq!(
        count(
            &text,
            "job_listings_jobs_ingested_total",
            &[("outcome", "closed")]
        ),
        1.0
    );
    assert!(
        count(
            &text,
            "job_listings_store_write_duration_seconds_count",
            &[("operation", "jobs")]
        ) >= 1.0
    );
}

#[tokio::test]
async fn two_apis_over_one_service_count_their_requests_apart() {
    let app = spawn_app().await;
    let other = Api::new(app.service.clone());
    let req = http::Request::get("/api/v1/jobs?per_page=1")
        .header("x-api-key", &app.keys.enterprise.raw)
        .body(Bytes::new())
        .expect("a request");
    assert_eq!(other.handle(req).await.status(), StatusCode::OK);
    app.get_jobs("per_page=1").await;
    app.get_jobs("per_page=1").await;

    let ours = app.api.metrics_text();
    let theirs = other.metrics_text();
    assert_eq!(requests(&ours, "/api/v1/jobs", "GET", "200"), 2.0);
    assert_eq!(requests(&theirs, "/api/v1/jobs", "GET", "200"), 1.0);
    // The service's gauges are the same service's in both.
    assert_eq!(
        sample(&ours, "job_listings_companies", &[]),
        sample(&theirs, "job_listings_companies", &[])
    );
}

#[tokio::test]
async fn searches_are_counted_by_whether_a_kept_result_answered_them() {
    let app = spawn_app().await;
    let searches = |text: &str, result: &str| {
        count(
            text,
            "job_listings_job_searches_total",
            &[("result", result)],
        )
    };
    app.get_jobs("q=zephyrine").await;
    app.get_jobs("q=zephyrine").await;
    app.get_jobs("q=zephyrine&page=2").await;
    let text = app.api.metrics_text();
    assert_eq!(searches(&text, "searched"), 2.0, "{text}");
    assert_eq!(searches(&text, "kept"), 1.0);

    // A write makes every kept result stale: the same search is searched again.
    app.service
        .close_job(known().wombat_job.id)
        .await
        .expect("closed");
    app.get_jobs("q=zephyrine").await;
    let text = app.api.metrics_text();
    assert_eq!(searches(&text, "searched"), 3.0);
    assert_eq!(searches(&text, "kept"), 1.0);
}
