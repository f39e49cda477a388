//! Monthly quota metering end to end: the real hyper server on 127.0.0.1 port 0 over a real sled
//! store in a temporary folder, driven concurrently with reqwest.
//!
//! What is checked (docs/api.md, "Keys, plans and quotas"):
//! - with Q calls left exactly Q succeed however many race, over every metered endpoint, for one
//!   key and for many keys at once; the rest are `429 quota_exceeded` with `Retry-After`;
//! - `GET /usage` always reports `calls_used + calls_remaining == monthly_quota`, and
//!   `calls_used` never goes down while only successes and 429s are being answered;
//! - errors (400, 403, 404, 405, 409, 415) are never counted;
//! - periods run a calendar month from the key's billing anchor (UTC), clamped to month end,
//!   moved with an injected `ManualClock`;
//! - counted usage survives a graceful restart exactly, and an old period's usage is not carried
//!   into a new one.
//!
//! No timing assertions: every loop is bounded and every check is on answers.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use job_listings::demo::Dataset;
use job_listings::domain::{Job, JobStatus, Plan};
use job_listings::service::{ManualClock, Metering, Quotas, ServiceConfig};
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::{at, Auth, Resp, TestApp};

// ---------------------------------------------------------------------------------------------
// The app under test
// ---------------------------------------------------------------------------------------------

/// A small deterministic dataset: enough for every endpoint to answer 200.
const SEED: u64 = 424_242;
const COMPANIES: usize = 6;
const JOBS: usize = 40;
const HOOK: &str = "https://hooks.example.com/quota";

fn quotas(developer: u64, agent_pro: u64) -> ServiceConfig {
    ServiceConfig::default().quotas(
        Quotas::default()
            .developer(developer)
            .agent_pro(agent_pro)
            .enterprise(1_000_000),
    )
}

/// `GET /usage`, typed.
#[derive(Debug, Clone, PartialEq)]
struct Usage {
    plan: String,
    calls_used: u64,
    calls_remaining: u64,
    monthly_quota: u64,
    period_start: DateTime<Utc>,
}

/// A served app with the small dataset, the given configuration and, optionally, a manual
/// clock.
async fn start(config: ServiceConfig, clock: Option<Arc<ManualClock>>) -> TestApp {
    let mut app = TestApp::builder()
        .config(config)
        .seed(Dataset::generate(SEED, COMPANIES, JOBS));
    if let Some(clock) = clock {
        app = app.clock(clock);
    }
    app.spawn().await
}

/// One call of a load, with `key`.
async fn send(app: &TestApp, key: &str, call: &Call) -> Resp {
    let body = call.body.as_ref().map(|(ct, b)| (ct.as_str(), b.clone()));
    match body {
        Some((content_type, bytes)) => {
            let headers = [("content-type", content_type)];
            app.request(
                call.method.clone(),
                &call.path,
                Auth::XApiKey(key),
                &headers,
                Some(bytes),
            )
            .await
        }
        None => {
            app.request(
                call.method.clone(),
                &call.path,
                Auth::XApiKey(key),
                &[],
                None,
            )
            .await
        }
    }
}

/// `GET /usage` with `key`, which must answer 200.
async fn read_usage(app: &TestApp, key: &str) -> Usage {
    let r = app.get_usage(key).await;
    assert_eq!(r.status, 200, "{}", r.text);
    usage_of(&r)
}

/// The seeded active jobs.
fn active_jobs(app: &TestApp) -> Vec<&Job> {
    let active: Vec<&Job> = app
        .all_jobs()
        .iter()
        .filter(|j| j.status == JobStatus::Active)
        .collect();
    assert!(!active.is_empty(), "the dataset has active jobs");
    active
}

/// An active job's id.
fn active_job(app: &TestApp, n: usize) -> String {
    let active = active_jobs(app);
    active[n % active.len()].id.to_string()
}

/// A company with an active job.
fn company(app: &TestApp, n: usize) -> String {
    let active = active_jobs(app);
    active[n % active.len()].company_id.to_string()
}

/// Metered `GET`s that answer 200 for any key: every list and detail endpoint with a mix of
/// parameters (webhook paths only when `webhooks`).
fn ok_paths(app: &TestApp, webhooks: bool) -> Vec<String> {
    let mut paths = vec![
        "/api/v1/jobs".to_owned(),
        "/api/v1/jobs?per_page=5&page=2".to_owned(),
        "/api/v1/jobs?remote_only=true&min_confidence=0.5".to_owned(),
        "/api/v1/jobs?q=engineer&per_page=50".to_owned(),
        "/api/v1/jobs?domain=engineering,ai&seniority=senior,staff".to_owned(),
        "/api/v1/jobs?posted_after=2026-09-01&page=1000".to_owned(),
        "/api/v1/jobs?company=zzzzunknown".to_owned(),
        format!("/api/v1/jobs/{}", active_job(app, 0)),
        format!("/api/v1/jobs/{}", active_job(app, 3)),
        "/api/v1/companies".to_owned(),
        "/api/v1/companies?per_page=2&page=2".to_owned(),
        "/api/v1/companies?funding_stage=series_a".to_owned(),
        format!("/api/v1/companies/{}", company(app, 1)),
    ];
    if webhooks {
        paths.push("/api/v1/webhooks".to_owned());
    }
    paths
}

#[track_caller]
fn usage_of(r: &Resp) -> Usage {
    let b = &r.body;
    Usage {
        plan: b["plan"].as_str().expect("plan").to_owned(),
        calls_used: b["calls_used"].as_u64().expect("calls_used"),
        calls_remaining: b["calls_remaining"].as_u64().expect("calls_remaining"),
        monthly_quota: b["monthly_quota"].as_u64().expect("monthly_quota"),
        period_start: serde_json::from_value(b["period_start"].clone()).expect("period_start"),
    }
}

/// One request of a load: method, path and body.
#[derive(Clone, Debug)]
struct Call {
    method: Method,
    path: String,
    body: Option<(String, Vec<u8>)>,
}

impl Call {
    fn get(path: impl Into<String>) -> Self {
        Self {
            method: Method::GET,
            path: path.into(),
            body: None,
        }
    }

    fn post_json(path: &str, body: &Value) -> Self {
        Self {
            method: Method::POST,
            path: path.to_owned(),
            body: Some((
                "application/json".to_owned(),
                serde_json::to_vec(body).expect("JSON"),
            )),
        }
    }
}

/// Sends `plan.len()` requests (key and call per index) from `tasks` concurrent tasks; returns
/// every answer by index.
async fn hammer(app: &Arc<TestApp>, plan: Vec<(String, Call)>, tasks: usize) -> Vec<Resp> {
    let plan = Arc::new(plan);
    let next = Arc::new(AtomicUsize::new(0));
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..tasks {
        let (app, plan, next) = (app.clone(), plan.clone(), next.clone());
        set.spawn(async move {
            let mut got = Vec::new();
            // Bounded: each index is taken once.
            for _ in 0..plan.len() {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((key, call)) = plan.get(i) else {
                    break;
                };
                got.push((i, send(&app, key, call).await));
            }
            got
        });
    }
    let mut out: Vec<Option<Resp>> = (0..plan.len()).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        for (i, r) in done.expect("a load task ran") {
            out[i] = Some(r);
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|| panic!("request {i} was not sent")))
        .collect()
}

/// Checks a load against one key's quota: exactly `quota` 2xx carrying each remaining count
/// from `quota - 1` down to 0 once; every other answer a proper 429.
#[track_caller]
fn assert_exactly_quota(answers: &[&Resp], quota: u64) {
    let mut remaining = Vec::new();
    for r in answers {
        match r.status.as_u16() {
            200..=299 => {
                assert_eq!(r.header_u64("x-ratelimit-limit"), quota);
                let left = r.header_u64("x-ratelimit-remaining");
                assert!(left <= quota, "remaining {left} above the quota {quota}");
                remaining.push(left);
            }
            429 => {
                r.assert_quota_exceeded(quota);
            }
            other => panic!("unexpected status {other}: {}", r.text),
        }
    }
    assert_eq!(
        remaining.len() as u64,
        quota,
        "exactly Q calls succeed, got {}",
        remaining.len()
    );
    remaining.sort_unstable();
    let expected: Vec<u64> = (0..quota).collect();
    assert_eq!(
        remaining, expected,
        "each success reports a distinct remaining count, down to 0"
    );
}

// ---------------------------------------------------------------------------------------------
// (a) many concurrent clients on one key
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_600_concurrent_calls_over_every_metered_endpoint_succeed_exactly_q_times() {
    one_key_600_concurrent_calls(Metering::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_600_concurrent_calls_counted_in_the_store_succeed_exactly_q_times() {
    one_key_600_concurrent_calls(Metering::InStore).await;
}

async fn one_key_600_concurrent_calls(metering: Metering) {
    const QUOTA: u64 = 200;
    const CALLS: usize = 600;
    let config = quotas(10_000, QUOTA).metering(metering);
    let app = Arc::new(start(config, None).await);
    let key = app.issue(Plan::AgentPro).await.raw;
    let paths = ok_paths(&app, true);
    let plan: Vec<(String, Call)> = (0..CALLS)
        .map(|i| (key.clone(), Call::get(paths[i % paths.len()].clone())))
        .collect();

    let answers = hammer(&app, plan, 32).await;

    let all: Vec<&Resp> = answers.iter().collect();
    assert_exactly_quota(&all, QUOTA);
    // The successes are spread over several endpoints, not one.
    let ok_paths: std::collections::BTreeSet<usize> = answers
        .iter()
        .enumerate()
        .filter(|(_, r)| r.status == 200)
        .map(|(i, _)| i % paths.len())
        .collect();
    assert!(ok_paths.len() > 1, "successes spread over the endpoints");

    let usage = read_usage(&app, &key).await;
    assert_eq!(usage.calls_used, QUOTA);
    assert_eq!(usage.calls_remaining, 0);
    assert_eq!(usage.monthly_quota, QUOTA);
    assert_eq!(usage.plan, "agent_pro");
    // Still refused afterwards, on every endpoint, and /usage stays readable.
    for path in &paths {
        app.get_as(&key, path).await.assert_quota_exceeded(QUOTA);
    }
    assert_eq!(read_usage(&app, &key).await.calls_used, QUOTA);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_metering_off_calls_past_the_quota_succeed_and_usage_reads_zero() {
    const QUOTA: u64 = 5;
    let config = quotas(10_000, QUOTA).metering(Metering::Off);
    let app = Arc::new(start(config, None).await);
    let key = app.issue(Plan::AgentPro).await.raw;
    let paths = ok_paths(&app, true);
    for i in 0..(QUOTA as usize * 4) {
        let r = app.get_as(&key, &paths[i % paths.len()]).await;
        assert_eq!(r.status, 200, "call {i}: {}", r.text);
        assert_eq!(r.header_u64("x-ratelimit-remaining"), QUOTA);
    }
    let usage = read_usage(&app, &key).await;
    assert_eq!(usage.calls_used, 0);
    assert_eq!(usage.calls_remaining, QUOTA);
}

// ---------------------------------------------------------------------------------------------
// (b) many keys at once
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_keys_hit_at_once_each_get_exactly_their_own_quota() {
    twenty_keys_hit_at_once(Metering::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_keys_counted_in_the_store_each_get_exactly_their_own_quota() {
    twenty_keys_hit_at_once(Metering::InStore).await;
}

async fn twenty_keys_hit_at_once(metering: Metering) {
    const QUOTA: u64 = 30;
    const KEYS: usize = 20;
    const PER_KEY: usize = 60;
    let config = quotas(QUOTA, 10_000).metering(metering);
    let app = Arc::new(start(config, None).await);
    let mut keys = Vec::new();
    for _ in 0..KEYS {
        keys.push(app.issue(Plan::Developer).await.raw);
    }
    let paths = ok_paths(&app, false);
    // Interleaved: consecutive requests go to different keys.
    let plan: Vec<(String, Call)> = (0..KEYS * PER_KEY)
        .map(|i| {
            (
                keys[i % KEYS].clone(),
                Call::get(paths[(i / KEYS) % paths.len()].clone()),
            )
        })
        .collect();

    let answers = hammer(&app, plan, 32).await;

    for (k, key) in keys.iter().enumerate() {
        let mine: Vec<&Resp> = answers
            .iter()
            .enumerate()
            .filter(|(i, _)| i % KEYS == k)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(mine.len(), PER_KEY);
        assert_exactly_quota(&mine, QUOTA);
        let usage = read_usage(&app, key).await;
        assert_eq!(
            (usage.calls_used, usage.calls_remaining, usage.monthly_quota),
            (QUOTA, 0, QUOTA),
            "key {k}"
        );
    }
    // An untouched key of the same plan still has its whole quota.
    let fresh = app.issue(Plan::Developer).await.raw;
    let r = app.get_as(&fresh, "/api/v1/jobs").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header_u64("x-ratelimit-remaining"), QUOTA - 1);
}

// ---------------------------------------------------------------------------------------------
// (c) the usage invariant, sampled while the load runs
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_sampled_during_the_load_always_adds_up_and_never_goes_down() {
    const QUOTA: u64 = 200;
    const CALLS: usize = 600;
    let app = Arc::new(start(quotas(10_000, QUOTA), None).await);
    let key = app.issue(Plan::AgentPro).await.raw;
    let start = read_usage(&app, &key).await;
    let paths = ok_paths(&app, true);
    let plan: Vec<(String, Call)> = (0..CALLS)
        .map(|i| (key.clone(), Call::get(paths[i % paths.len()].clone())))
        .collect();

    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let (app, key, done) = (app.clone(), key.clone(), done.clone());
        tokio::spawn(async move {
            let mut samples: Vec<Usage> = Vec::new();
            // Bounded; in practice it stops when the load is done.
            for _ in 0..200_000 {
                if done.load(Ordering::Acquire) {
                    break;
                }
                let r = app.get_as(&key, "/api/v1/usage").await;
                assert_eq!(r.status, 200, "{}", r.text);
                samples.push(usage_of(&r));
            }
            samples
        })
    };
    let answers = hammer(&app, plan, 32).await;
    done.store(true, Ordering::Release);
    let mut samples = poller.await.expect("the poller did not panic");
    samples.push(read_usage(&app, &key).await);

    assert!(samples.len() >= 2, "the poller took samples");
    let mut last_used = 0;
    for (n, s) in samples.iter().enumerate() {
        assert_eq!(s.monthly_quota, QUOTA, "sample {n}: {s:?}");
        assert_eq!(
            s.calls_used + s.calls_remaining,
            s.monthly_quota,
            "sample {n}: calls_used + calls_remaining == monthly_quota: {s:?}"
        );
        assert!(
            s.calls_used >= last_used,
            "sample {n}: calls_used went down from {last_used}: {s:?}"
        );
        assert_eq!(s.period_start, start.period_start, "sample {n}");
        last_used = s.calls_used;
    }
    assert_eq!(
        last_used, QUOTA,
        "the last sample, after the load, is the quota"
    );

    // Rate-limit headers on the successes: never above the quota, the last one 0.
    let all: Vec<&Resp> = answers.iter().collect();
    assert_exactly_quota(&all, QUOTA);
    let lowest = answers
        .iter()
        .filter(|r| r.status == 200)
        .map(|r| r.header_u64("x-ratelimit-remaining"))
        .min();
    assert_eq!(lowest, Some(0));
}

/// docs/api.md: every metered answer carries `X-RateLimit-Remaining`; `GET /usage` answers
/// with both the report and the headers, which must describe one and the same state.
///
/// Guards against building the `/usage` answer from two reads of the meter (the report, then
/// the quota for the headers): a call counted in between made the header disagree with the
/// body. The window is small, so the load runs in rounds (bounded) until an answer disagrees
/// or the rounds are over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_answer_under_load_carries_headers_that_agree_with_its_body() {
    const QUOTA: u64 = 1_500;
    const ROUNDS: usize = 6;
    let app = Arc::new(start(quotas(10_000, QUOTA), None).await);
    let mut samples = 0;
    let mut mismatches = Vec::new();
    for _ in 0..ROUNDS {
        // A fresh key per round: each round uses one key's whole quota.
        let key = app.issue(Plan::AgentPro).await.raw;
        let plan: Vec<(String, Call)> = (0..QUOTA as usize)
            .map(|i| {
                let path = if i % 2 == 0 {
                    "/api/v1/jobs?per_page=1"
                } else {
                    "/api/v1/companies?per_page=1"
                };
                (key.clone(), Call::get(path))
            })
            .collect();
        let done = Arc::new(AtomicBool::new(false));
        let poller = {
            let (app, key, done) = (app.clone(), key.clone(), done.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut n = 0;
                for _ in 0..200_000 {
                    if done.load(Ordering::Acquire) {
                        break;
                    }
                    let r = app.get_as(&key, "/api/v1/usage").await;
                    n += 1;
                    let body = usage_of(&r);
                    let header = r.header_u64("x-ratelimit-remaining");
                    if header != body.calls_remaining {
                        seen.push((body.calls_remaining, header));
                    }
                }
                (n, seen)
            })
        };
        let answers = hammer(&app, plan, 16).await;
        done.store(true, Ordering::Release);
        // The load is the key's whole quota: every call succeeds, each with its own count.
        assert_exactly_quota(&answers.iter().collect::<Vec<_>>(), QUOTA);
        let (n, seen) = poller.await.expect("the poller did not panic");
        samples += n;
        mismatches.extend(seen);
        if !mismatches.is_empty() {
            break;
        }
    }
    assert!(samples > 0);
    assert!(
        mismatches.is_empty(),
        "{} of {samples} GET /usage answers carried an X-RateLimit-Remaining different from \
         their own calls_remaining (body, header): {:?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)]
    );
}

// ---------------------------------------------------------------------------------------------
// (d) errors do not count
// ---------------------------------------------------------------------------------------------

/// What a call in the error mix must be answered.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Ok,
    Status(u16, &'static str),
    /// `POST /webhooks`: 201 while the key holds fewer than 25, then 409.
    CreateOr409,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_interleaved_with_successes_are_never_counted() {
    const CALLS: usize = 720;
    let app = Arc::new(start(quotas(10_000, 10_000), None).await);
    let pro = app.issue(Plan::AgentPro).await.raw;
    let dev = app.issue(Plan::Developer).await.raw;
    let job = active_job(&app, 1);
    let company = company(&app, 2);
    let hook = json!({ "callback_url": HOOK, "domain_filters": ["ai"] });
    let missing = Uuid::new_v4();
    let mixes: Vec<(bool, Call, Expect)> = vec![
        (true, Call::get("/api/v1/jobs?per_page=3"), Expect::Ok),
        (true, Call::get(format!("/api/v1/jobs/{job}")), Expect::Ok),
        (true, Call::get("/api/v1/companies"), Expect::Ok),
        (
            true,
            Call::get(format!("/api/v1/companies/{company}")),
            Expect::Ok,
        ),
        (true, Call::get("/api/v1/webhooks"), Expect::Ok),
        (
            true,
            Call::post_json("/api/v1/webhooks", &hook),
            Expect::CreateOr409,
        ),
        (
            true,
            Call::get(format!("/api/v1/jobs/{missing}")),
            Expect::Status(404, "not_found"),
        ),
        (
            true,
            Call::get(format!("/api/v1/companies/{missing}")),
            Expect::Status(404, "not_found"),
        ),
        (
            true,
            Call::get(format!("/api/v1/webhooks/{missing}")),
            Expect::Status(404, "not_found"),
        ),
        (
            true,
            Call::get(format!("/api/v1/webhooks/{missing}/deliveries")),
            Expect::Status(404, "not_found"),
        ),
        (
            true,
            Call {
                method: Method::POST,
                path: format!("/api/v1/webhooks/{missing}/test"),
                body: None,
            },
            Expect::Status(404, "not_found"),
        ),
        (
            true,
            Call::get("/api/v1/jobs?per_page=0"),
            Expect::Status(400, "invalid_parameter"),
        ),
        (
            true,
            Call::get("/api/v1/jobs?domains=ai"),
            Expect::Status(400, "unknown_parameter"),
        ),
        (
            true,
            Call::get("/api/v1/jobs/not-a-uuid"),
            Expect::Status(400, "invalid_parameter"),
        ),
        (
            true,
            Call::get("/api/v1/companies?funding_stage=a/b"),
            Expect::Status(400, "invalid_parameter"),
        ),
        (
            true,
            Call {
                method: Method::POST,
                path: "/api/v1/webhooks".to_owned(),
                body: Some(("text/plain".to_owned(), b"hello".to_vec())),
            },
            Expect::Status(415, "unsupported_media_type"),
        ),
        (
            true,
            Call {
                method: Method::POST,
                path: "/api/v1/webhooks".to_owned(),
                body: Some((
                    "application/json".to_owned(),
                    b"{\"callback_url\":".to_vec(),
                )),
            },
            Expect::Status(400, "invalid_body"),
        ),
        (
            true,
            Call::post_json(
                "/api/v1/webhooks",
                &json!({ "callback_url": "https://10.0.0.1/x" }),
            ),
            Expect::Status(400, "invalid_parameter"),
        ),
        (
            true,
            Call {
                method: Method::DELETE,
                path: "/api/v1/jobs".to_owned(),
                body: None,
            },
            Expect::Status(405, "method_not_allowed"),
        ),
        (
            true,
            Call::get("/api/v1/nowhere"),
            Expect::Status(404, "not_found"),
        ),
        (false, Call::get("/api/v1/jobs"), Expect::Ok),
        (
            false,
            Call::post_json("/api/v1/webhooks", &hook),
            Expect::Status(403, "plan_upgrade_required"),
        ),
        (
            false,
            Call::get(format!("/api/v1/jobs/{missing}")),
            Expect::Status(404, "not_found"),
        ),
        (
            false,
            Call::get("/api/v1/jobs?page=0"),
            Expect::Status(400, "invalid_parameter"),
        ),
    ];
    let plan: Vec<(String, Call, Expect, bool)> = (0..CALLS)
        .map(|i| {
            let (is_pro, call, expect) = mixes[i % mixes.len()].clone();
            let key = if is_pro { pro.clone() } else { dev.clone() };
            (key, call, expect, is_pro)
        })
        .collect();
    let creates = plan.iter().filter(|p| p.2 == Expect::CreateOr409).count();
    assert!(creates > 25, "enough creations to reach the webhook limit");

    let answers = hammer(
        &app,
        plan.iter()
            .map(|(k, c, _, _)| (k.clone(), c.clone()))
            .collect(),
        32,
    )
    .await;

    let (mut pro_ok, mut dev_ok, mut created, mut refused) = (0u64, 0u64, 0, 0);
    for ((_, call, expect, is_pro), r) in plan.iter().zip(&answers) {
        match expect {
            Expect::Ok => assert_eq!(r.status, 200, "{} {}: {}", call.method, call.path, r.text),
            Expect::Status(status, code) => {
                assert_eq!(
                    r.status, *status,
                    "{} {}: {}",
                    call.method, call.path, r.text
                );
                assert_eq!(r.code(), *code, "{}", r.text);
            }
            Expect::CreateOr409 => match r.status.as_u16() {
                201 => created += 1,
                409 => {
                    assert_eq!(r.code(), "webhook_limit_reached");
                    refused += 1;
                }
                other => panic!("POST /webhooks answered {other}: {}", r.text),
            },
        }
        if (200..300).contains(&r.status.as_u16()) {
            if *is_pro {
                pro_ok += 1;
            } else {
                dev_ok += 1;
            }
        }
    }
    assert_eq!(created, 25, "the webhook limit is 25 per key");
    assert_eq!(created + refused, creates);

    let pro_usage = read_usage(&app, &pro).await;
    let dev_usage = read_usage(&app, &dev).await;
    assert_eq!(
        pro_usage.calls_used, pro_ok,
        "only the key's 2xx answers count"
    );
    assert_eq!(
        dev_usage.calls_used, dev_ok,
        "only the key's 2xx answers count"
    );
    assert_eq!(pro_usage.calls_remaining, 10_000 - pro_ok);
    assert_eq!(dev_usage.calls_remaining, 10_000 - dev_ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_errors_racing_for_the_last_units_exactly_q_calls_still_succeed() {
    const QUOTA: u64 = 60;
    const CALLS: usize = 480;
    let app = Arc::new(start(quotas(QUOTA, 10_000), None).await);
    let key = app.issue(Plan::Developer).await.raw;
    let job = active_job(&app, 2);
    let missing = Uuid::new_v4();
    // Even indexes valid, odd ones 404 (metered, given back) or 400 (refused before metering).
    let plan: Vec<(String, Call)> = (0..CALLS)
        .map(|i| {
            let call = match i % 6 {
                0 => Call::get("/api/v1/jobs?per_page=2"),
                2 => Call::get(format!("/api/v1/jobs/{job}")),
                4 => Call::get("/api/v1/companies"),
                1 => Call::get(format!("/api/v1/jobs/{missing}")),
                3 => Call::get(format!("/api/v1/companies/{missing}")),
                _ => Call::get("/api/v1/jobs?per_page=0"),
            };
            (key.clone(), call)
        })
        .collect();

    let answers = hammer(&app, plan, 32).await;

    let mut ok = 0;
    for (i, r) in answers.iter().enumerate() {
        match i % 6 {
            0 | 2 | 4 => match r.status.as_u16() {
                200 => ok += 1,
                429 => {
                    r.assert_quota_exceeded(QUOTA);
                }
                other => panic!("valid call {i} answered {other}: {}", r.text),
            },
            1 | 3 => match r.status.as_u16() {
                404 => assert_eq!(r.code(), "not_found"),
                429 => {
                    r.assert_quota_exceeded(QUOTA);
                }
                other => panic!("missing-id call {i} answered {other}: {}", r.text),
            },
            _ => assert_eq!(r.status, 400, "{}", r.text),
        }
    }
    assert_eq!(ok, QUOTA, "exactly Q valid calls succeed");
    let usage = read_usage(&app, &key).await;
    assert_eq!((usage.calls_used, usage.calls_remaining), (QUOTA, 0));
}

// ---------------------------------------------------------------------------------------------
// (e) period rollover at the billing anchor
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn periods_roll_over_at_the_billing_anchor_clamped_to_month_end() {
    const QUOTA: u64 = 3;
    let anchor = at(2026, 1, 31, 10, 0, 0);
    let clock = Arc::new(ManualClock::new(anchor));
    let app = start(quotas(QUOTA, 10_000), Some(clock)).await;
    let key = app.issue_anchored(Plan::Developer, anchor).await.raw;
    let feb_end = at(2026, 2, 28, 10, 0, 0);
    let mar_end = at(2026, 3, 31, 10, 0, 0);

    let u = read_usage(&app, &key).await;
    assert_eq!(
        u.period_start, anchor,
        "the first period starts at the anchor"
    );
    assert_eq!((u.calls_used, u.calls_remaining), (0, QUOTA));

    // Use the period up.
    for left in (0..QUOTA).rev() {
        let r = app.get_as(&key, "/api/v1/jobs?per_page=1").await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.header_u64("x-ratelimit-remaining"), left);
        assert_eq!(
            r.header_u64("x-ratelimit-reset"),
            feb_end.timestamp() as u64
        );
    }
    let r = app.get_as(&key, "/api/v1/jobs").await;
    let retry = r.assert_quota_exceeded(QUOTA);
    assert_eq!(
        retry,
        (feb_end - anchor).num_seconds() as u64,
        "Retry-After runs to the anchor-based period end"
    );
    assert_eq!(
        r.header_u64("x-ratelimit-reset"),
        feb_end.timestamp() as u64
    );

    // Midway: Retry-After still counts down to the clamped period end.
    let mid = at(2026, 2, 14, 3, 30, 15);
    app.set_time(mid);
    let r = app.get_as(&key, "/api/v1/companies").await;
    assert_eq!(
        r.assert_quota_exceeded(QUOTA),
        (feb_end - mid).num_seconds() as u64
    );

    // One second before the anchor-based end: still the first period.
    app.set_time(at(2026, 2, 28, 9, 59, 59));
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(
        r.assert_quota_exceeded(QUOTA),
        1,
        "one second until the period ends"
    );
    assert_eq!(
        r.header_u64("x-ratelimit-reset"),
        feb_end.timestamp() as u64
    );
    let u = read_usage(&app, &key).await;
    assert_eq!(u.period_start, anchor);
    assert_eq!((u.calls_used, u.calls_remaining), (QUOTA, 0));

    // At the clamped anchor (Feb has no 31st): a new period, counting from zero.
    app.set_time(feb_end);
    let u = read_usage(&app, &key).await;
    assert_eq!(
        u.period_start, feb_end,
        "period_start is 2026-02-28T10:00:00Z"
    );
    assert_eq!((u.calls_used, u.calls_remaining), (0, QUOTA));
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header_u64("x-ratelimit-remaining"), QUOTA - 1);
    assert_eq!(
        r.header_u64("x-ratelimit-reset"),
        mar_end.timestamp() as u64,
        "the next period starts on the anchor's day again, not a month after the 28th"
    );
    let u = read_usage(&app, &key).await;
    assert_eq!((u.calls_used, u.period_start), (1, feb_end));

    // A month after the clamped start is not a new period: the anchor is the 31st.
    app.set_time(at(2026, 3, 28, 10, 0, 0));
    let u = read_usage(&app, &key).await;
    assert_eq!((u.calls_used, u.period_start), (1, feb_end));
    for _ in 1..QUOTA {
        assert_eq!(app.get_as(&key, "/api/v1/companies").await.status, 200);
    }
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(r.assert_quota_exceeded(QUOTA), 3 * 86_400);

    app.set_time(mar_end);
    let u = read_usage(&app, &key).await;
    assert_eq!((u.calls_used, u.period_start), (0, mar_end));
    assert_eq!(app.get_as(&key, "/api/v1/jobs").await.status, 200);

    // April has 30 days; a leap February has 29.
    app.set_time(at(2026, 4, 30, 10, 0, 0));
    assert_eq!(
        read_usage(&app, &key).await.period_start,
        at(2026, 4, 30, 10, 0, 0)
    );
    app.set_time(at(2028, 2, 29, 9, 59, 59));
    let u = read_usage(&app, &key).await;
    assert_eq!(
        (u.calls_used, u.period_start),
        (0, at(2028, 1, 31, 10, 0, 0))
    );
    app.set_time(at(2028, 2, 29, 10, 0, 0));
    assert_eq!(
        read_usage(&app, &key).await.period_start,
        at(2028, 2, 29, 10, 0, 0)
    );
}

/// Errors are never counted, also for a request that read the clock just before the period
/// ended while another one had already counted a call in the new period.
///
/// Guards the case where a request computes the period from the clock, but the meter has
/// already moved to a newer one and counts the call there: the reservation must remember the
/// period the call was counted in, or giving it back on an error misses it and the failed call
/// stays counted. Two requests straddling the anchor instant (one read the time at
/// 09:59:59.999, the other at 10:00:00.000 and reserved first) meet it, and so does a clock
/// stepped back by NTP. Here the manual clock steps back one second to make it deterministic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_that_read_the_old_period_is_not_counted_in_the_new_one() {
    const QUOTA: u64 = 10;
    let anchor = at(2026, 1, 31, 10, 0, 0);
    let feb_end = at(2026, 2, 28, 10, 0, 0);
    let clock = Arc::new(ManualClock::new(feb_end));
    let app = start(quotas(QUOTA, 10_000), Some(clock)).await;
    let key = app.issue_anchored(Plan::Developer, anchor).await.raw;
    let missing = Uuid::new_v4();

    // One call counted in the new period.
    assert_eq!(app.get_as(&key, "/api/v1/jobs").await.status, 200);
    // A request whose clock read is one second older: it fails, so it must not count.
    app.set_time(at(2026, 2, 28, 9, 59, 59));
    for _ in 0..3 {
        let r = app.get_as(&key, &format!("/api/v1/jobs/{missing}")).await;
        assert_eq!(r.status, 404, "{}", r.text);
    }
    app.set_time(at(2026, 2, 28, 10, 0, 1));
    let u = read_usage(&app, &key).await;
    assert_eq!(u.period_start, feb_end);
    assert_eq!(
        (u.calls_used, u.calls_remaining),
        (1, QUOTA - 1),
        "one 2xx answer in this period, three 404s that must not count"
    );
}

// ---------------------------------------------------------------------------------------------
// (f) across a graceful restart
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_survives_a_graceful_restart_exactly() {
    // The periodic writer never runs during the test: what survives is the shutdown flush.
    let config = quotas(5, 10_000).metering(Metering::InMemory {
        flush_interval: Duration::from_secs(3_600),
    });
    let app = Arc::new(start(config, None).await);
    let full = app.issue(Plan::Developer).await.raw;
    let some = app.issue(Plan::Developer).await.raw;
    let pro = app.issue(Plan::AgentPro).await.raw;
    let idle = app.issue(Plan::Developer).await.raw;
    let missing = Uuid::new_v4();
    let paths = ok_paths(&app, true);
    let mut plan: Vec<(String, Call)> = Vec::new();
    for i in 0..9 {
        plan.push((full.clone(), Call::get(paths[i % 13].clone())));
    }
    for i in 0..2 {
        plan.push((some.clone(), Call::get(paths[i + 4].clone())));
    }
    for i in 0..37 {
        plan.push((pro.clone(), Call::get(paths[i % paths.len()].clone())));
        plan.push((pro.clone(), Call::get(format!("/api/v1/jobs/{missing}"))));
    }
    plan.push((
        pro.clone(),
        Call::post_json("/api/v1/webhooks", &json!({ "callback_url": HOOK })),
    ));
    let answers = hammer(&app, plan.clone(), 16).await;
    let count = |key: &str| {
        plan.iter()
            .zip(&answers)
            .filter(|((k, _), r)| k == key && (200..300).contains(&r.status.as_u16()))
            .count() as u64
    };
    assert_eq!(count(&full), 5);
    assert_eq!(count(&some), 2);
    assert_eq!(count(&pro), 38);
    let before: BTreeMap<&str, Usage> = [
        ("full", read_usage(&app, &full).await),
        ("some", read_usage(&app, &some).await),
        ("pro", read_usage(&app, &pro).await),
        ("idle", read_usage(&app, &idle).await),
    ]
    .into_iter()
    .collect();
    assert_eq!(before["full"].calls_used, 5);
    assert_eq!(before["pro"].calls_used, 38);
    assert_eq!(before["idle"].calls_used, 0);

    let app = Arc::into_inner(app)
        .expect("no other handle")
        .restart()
        .await;

    let after: BTreeMap<&str, Usage> = [
        ("full", read_usage(&app, &full).await),
        ("some", read_usage(&app, &some).await),
        ("pro", read_usage(&app, &pro).await),
        ("idle", read_usage(&app, &idle).await),
    ]
    .into_iter()
    .collect();
    assert_eq!(after, before, "usage is exactly what it was");
    app.get_as(&full, "/api/v1/jobs")
        .await
        .assert_quota_exceeded(5);
    let r = app.get_as(&some, "/api/v1/jobs").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.header_u64("x-ratelimit-remaining"),
        2,
        "counting goes on from 2"
    );
    let r = app.get_as(&pro, "/api/v1/companies").await;
    assert_eq!(r.header_u64("x-ratelimit-remaining"), 10_000 - 39);

    // A restart with nothing new to write keeps everything; a new call is kept too.
    let app = app.restart().await;
    assert_eq!(read_usage(&app, &some).await.calls_used, 3);
    assert_eq!(read_usage(&app, &pro).await.calls_used, 39);
    let app = app.restart().await;
    assert_eq!(read_usage(&app, &full).await.calls_used, 5);
    assert_eq!(read_usage(&app, &some).await.calls_used, 3);
    assert_eq!(read_usage(&app, &pro).await.calls_used, 39);
    assert_eq!(read_usage(&app, &idle).await.calls_used, 0);
}

/// docs/api.md: in-memory counters are "written every 100 ms" — without any shutdown. Checked by
/// reading the store until the counter shows up (bounded), never by timing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_periodic_writer_stores_counted_usage_without_a_shutdown() {
    let anchor = at(2026, 1, 31, 10, 0, 0);
    let clock = Arc::new(ManualClock::new(at(2026, 2, 10, 0, 0, 0)));
    let config = quotas(100, 10_000).metering(Metering::InMemory {
        flush_interval: Duration::from_millis(50),
    });
    let app = start(config, Some(clock)).await;
    let issued = app.issue_anchored(Plan::Developer, anchor).await;
    let (key, record) = (issued.raw, issued.id);
    for _ in 0..7 {
        assert_eq!(app.get_as(&key, "/api/v1/companies").await.status, 200);
    }
    assert_eq!(app.get_as(&key, "/api/v1/nowhere").await.status, 404);
    let mut stored = None;
    for _ in 0..400 {
        stored = app
            .store
            .scan_usage()
            .await
            .expect("the usage tree")
            .into_iter()
            .find(|u| u.key_id == record);
        if stored.is_some_and(|u| u.calls_used == 7) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let stored = stored.expect("a stored counter");
    assert_eq!(stored.calls_used, 7);
    assert_eq!(stored.period_start, anchor);
}

/// With `Metering::InStore` a call is in the store before it is answered: read right after each
/// answer, with no writer and no shutdown in between. Failed calls are given back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_counted_in_the_store_are_stored_before_they_are_answered() {
    let anchor = at(2026, 1, 31, 10, 0, 0);
    let clock = Arc::new(ManualClock::new(at(2026, 2, 10, 0, 0, 0)));
    let config = quotas(5, 10_000).metering(Metering::InStore);
    let app = start(config, Some(clock)).await;
    let issued = app.issue_anchored(Plan::Developer, anchor).await;
    let (key, record) = (issued.raw, issued.id);
    let stored = || async { app.store.get_usage(record).await.expect("the usage record") };
    let missing = Uuid::new_v4();
    for n in 1..=5 {
        let r = app.get_as(&key, "/api/v1/companies").await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.header_u64("x-ratelimit-remaining"), 5 - n);
        let counter = stored().await.expect("a stored counter");
        assert_eq!((counter.calls_used, counter.period_start), (n, anchor));
        if n == 5 {
            break;
        }
        // A failed call is given back before it is answered.
        assert_eq!(
            app.get_as(&key, &format!("/api/v1/jobs/{missing}"))
                .await
                .status,
            404
        );
        let counter = stored().await.expect("a stored counter");
        assert_eq!(counter.calls_used, n, "the 404 is not counted");
    }
    app.get_as(&key, "/api/v1/companies")
        .await
        .assert_quota_exceeded(5);
    let u = read_usage(&app, &key).await;
    assert_eq!((u.calls_used, u.calls_remaining), (5, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_periods_usage_is_not_carried_into_a_new_period_across_restarts() {
    const QUOTA: u64 = 3;
    let anchor = at(2026, 1, 31, 10, 0, 0);
    let feb_end = at(2026, 2, 28, 10, 0, 0);
    let clock = Arc::new(ManualClock::new(at(2026, 2, 10, 0, 0, 0)));
    let config = quotas(QUOTA, 10_000).metering(Metering::InMemory {
        flush_interval: Duration::from_secs(3_600),
    });
    let app = start(config, Some(clock)).await;
    let key = app.issue_anchored(Plan::Developer, anchor).await.raw;
    // Written in the old period but only flushed after the clock has moved on.
    let late = app.issue_anchored(Plan::Developer, anchor).await.raw;
    for _ in 0..QUOTA {
        assert_eq!(app.get_as(&key, "/api/v1/jobs").await.status, 200);
    }
    assert_eq!(app.get_as(&late, "/api/v1/jobs").await.status, 200);
    app.get_as(&key, "/api/v1/jobs")
        .await
        .assert_quota_exceeded(QUOTA);

    // Restart inside the old period: still used up.
    let app = app.restart().await;
    let u = read_usage(&app, &key).await;
    assert_eq!((u.calls_used, u.period_start), (QUOTA, anchor));
    assert_eq!(read_usage(&app, &late).await.calls_used, 1);
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(
        r.assert_quota_exceeded(QUOTA),
        (feb_end - at(2026, 2, 10, 0, 0, 0)).num_seconds() as u64
    );
    assert_eq!(app.get_as(&late, "/api/v1/jobs").await.status, 200);

    // `late`'s second call is counted only in memory when the clock crosses the anchor.
    app.set_time(feb_end);
    let app = app.restart().await;
    let u = read_usage(&app, &key).await;
    assert_eq!(
        (u.calls_used, u.calls_remaining, u.period_start),
        (0, QUOTA, feb_end),
        "the new period starts from zero after a restart"
    );
    let u = read_usage(&app, &late).await;
    assert_eq!((u.calls_used, u.period_start), (0, feb_end));
    let r = app.get_as(&key, "/api/v1/jobs").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header_u64("x-ratelimit-remaining"), QUOTA - 1);

    // The new period's count is what is persisted from now on.
    let app = app.restart().await;
    assert_eq!(read_usage(&app, &key).await.calls_used, 1);
    assert_eq!(read_usage(&app, &late).await.calls_used, 0);

    // Far later (a year on), restarted while stopped: nothing is carried.
    let much_later = at(2027, 3, 1, 0, 0, 0);
    let mut app = app;
    app.stop().await;
    app.set_time(much_later);
    let app = app.restart().await;
    let u = read_usage(&app, &key).await;
    assert_eq!(
        (u.calls_used, u.period_start),
        (0, at(2027, 2, 28, 10, 0, 0))
    );
}
