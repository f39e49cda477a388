//! Webhook delivery end to end: the service on the sled store (as deployed) with the real
//! `HttpNotifier` (local-development policy, millisecond retries) sends to scripted receivers
//! on 127.0.0.1, and every delivery is checked with the crate's own verifier. Status, history
//! and test pings go through the real hyper server on 127.0.0.1.
//!
//! Every wait is a bounded poll for a state (a stored delivery status, a receiver's count) that
//! fails loudly; nothing asserts on speed. "Nothing more arrived" is proven by a later marker
//! that did arrive and by the stored deliveries, never by a quiet pause; a race is staged with
//! answers held on a [`Latch`] and outbox calls held at a [`Tap`], never with delays.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use job_listings::demo::Dataset;
use job_listings::domain::{
    BillingStatus, CallbackUrl, Confidence, Delivery, DeliveryId, DeliveryStatus, DomainTag, Job,
    JobId, JobStatus, Plan, Seniority, Subscription, SubscriptionStatus, WebhookId,
};
use job_listings::server::ServerConfig;
use job_listings::service::{
    Clock, DeliveryConfig, IngestOutcome, JobListingsService, ManualClock, NewWebhook,
    ServiceConfig,
};
use job_listings::store::Store;
use job_listings::webhooks::{
    sign, verify, CallbackPolicy, HttpNotifier, HttpNotifierConfig, Notifier, RetryPolicy,
    WebhookRequest,
};
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::data;
use crate::support::metrics::count;
use crate::support::receiver::{free_port, Hit};
use crate::support::store::open_sled;
use crate::support::tap::{Tap, TappedStore};
use crate::support::{
    always_ok, eventually, script, Answer, Latch, Receiver, StoreKind, TestApp, TestAppBuilder,
};

/// The longest any single wait in these tests may take.
const DEADLINE: Duration = Duration::from_secs(10);

/// Connect 1 s, whole request 500 ms: a receiver slower than that times out.
const FAST_TIMEOUTS: HttpNotifierConfig =
    HttpNotifierConfig::new(Duration::from_secs(1), Duration::from_millis(500));

/// Connect 1 s, whole request 30 s: longer than any wait of a test, for tests in which a
/// request the receiver holds must not time out however slowly the machine runs.
const PATIENT_TIMEOUTS: HttpNotifierConfig =
    HttpNotifierConfig::new(Duration::from_secs(1), Duration::from_secs(30));

/// Connect 1 s, whole request 3 s: for ordering a timeout against another delivery, the
/// timeout has to stand well clear of scheduling delays on a busy machine.
const ORDERING_TIMEOUTS: HttpNotifierConfig =
    HttpNotifierConfig::new(Duration::from_secs(1), Duration::from_secs(3));

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

fn ms(list: &[u64]) -> Vec<Duration> {
    list.iter().map(|&m| Duration::from_millis(m)).collect()
}

/// Local-development policy, retries after the given milliseconds (±10 %), a 20 ms poll.
fn config(delays_ms: &[u64]) -> ServiceConfig {
    ServiceConfig::default()
        .callback_policy(CallbackPolicy::local_development())
        .delivery(
            DeliveryConfig::default()
                .retry(RetryPolicy::default().delays(ms(delays_ms)).jitter(0.1))
                .poll_interval(Duration::from_millis(20)),
        )
}

/// A service on sled in a temporary folder with the real notifier, served over HTTP on
/// 127.0.0.1, with two companies ("Quokka Frobnitz" and "Wombat Zephyr Works"); the tests use
/// its Agent Pro key.
async fn start(config: ServiceConfig, timeouts: HttpNotifierConfig) -> TestApp {
    start_on(config, timeouts, StoreKind::Sled).await
}

/// An app of `start` on another store.
async fn start_on(
    config: ServiceConfig,
    timeouts: HttpNotifierConfig,
    store: StoreKind,
) -> TestApp {
    let notifier = HttpNotifier::new(config.callback_policy, timeouts).expect("the HTTP notifier");
    app_builder(config, store)
        .notifier(Arc::new(notifier))
        .spawn()
        .await
}

/// An app of `start` without a notifier: it logs and fans out, and sends nothing.
fn app_builder(config: ServiceConfig, store: StoreKind) -> TestAppBuilder {
    let mut companies = Dataset::generate(7, 2, 0).companies;
    companies[0].name = "Quokka Frobnitz".to_owned();
    companies[1].name = "Wombat Zephyr Works".to_owned();
    TestApp::builder()
        .store(store)
        .config(config)
        .server_config(ServerConfig::default().shutdown_grace(Duration::from_secs(1)))
        .seed(Dataset {
            companies,
            jobs: Vec::new(),
        })
}

async fn start_default(delays_ms: &[u64]) -> TestApp {
    start(config(delays_ms), FAST_TIMEOUTS).await
}

/// What a test job looks like; `job()` fills in the rest.
#[derive(Clone)]
struct Spec {
    role: &'static str,
    text: &'static str,
    domains: &'static [&'static str],
    seniority: &'static [&'static str],
    remote: bool,
    confidence: f64,
    /// 0: Quokka Frobnitz, 1: Wombat Zephyr Works.
    company: usize,
    active: bool,
}

impl Default for Spec {
    fn default() -> Self {
        Self {
            role: "Webhook Test Role",
            text: "A role made for webhook tests.",
            domains: &["engineering"],
            seniority: &["mid"],
            remote: true,
            confidence: 0.9,
            company: 0,
            active: true,
        }
    }
}

/// What these tests do with an app.
trait WebhookApp {
    fn job(&self, spec: &Spec) -> Job;
    async fn ingest_new_job(&self) -> IngestOutcome;
    async fn subscribe(&self, url: &str, edit: impl FnOnce(&mut NewWebhook)) -> Subscription;
    async fn subscribe_http(&self, body: Value) -> (WebhookId, String);
    async fn webhook_http(&self, id: WebhookId) -> Value;
    async fn ping_http(&self, id: impl std::fmt::Display, key: &str) -> (u16, Value);
    async fn deliveries_http(&self, id: WebhookId) -> Vec<Value>;
    async fn deliveries(&self, id: WebhookId) -> Vec<Delivery>;
    async fn settle(&self, ids: &[WebhookId]) -> bool;
    async fn settle_in_store(&self, ids: &[WebhookId]) -> bool;
    async fn queued(&self, job: JobId) -> usize;
}

impl WebhookApp for TestApp {
    fn job(&self, spec: &Spec) -> Job {
        let status = match spec.active {
            true => JobStatus::Active,
            false => JobStatus::Closed,
        };
        // Each a job of its own, not a copy of the last one made from the same spec.
        data::another(&data::job(
            JobId(Uuid::new_v4()),
            &self.dataset.companies[spec.company],
            spec.role,
            spec.text,
            spec.domains,
            spec.seniority,
            spec.remote,
            Utc::now() - chrono::Duration::hours(1),
            spec.confidence,
            status,
        ))
    }

    /// Ingests a new job of the default [`Spec`].
    async fn ingest_new_job(&self) -> IngestOutcome {
        self.service
            .upsert_job(self.job(&Spec::default()))
            .await
            .expect("ingested")
    }

    /// Deliveries made of the job's `job.new` event, to every subscription, once the outbox
    /// log is fanned out (here or by the worker, whichever comes first).
    async fn queued(&self, job: JobId) -> usize {
        self.service.fan_out_now().await.expect("fanned out");
        let mut count = 0;
        for sub in self.store.scan_webhooks().await.expect("subscriptions") {
            for d in self
                .store
                .deliveries_of(sub.id, usize::MAX)
                .await
                .expect("deliveries")
            {
                let event = self.store.get_event(d.event_id).await.expect("the outbox");
                if event.is_some_and(|e| e.data["id"] == job.to_string().as_str()) {
                    count += 1;
                }
            }
        }
        count
    }

    /// A subscription made through the service, with the saved-search fields `edit` sets.
    async fn subscribe(&self, url: &str, edit: impl FnOnce(&mut NewWebhook)) -> Subscription {
        let mut new = NewWebhook::new(CallbackUrl::parse(url).expect("a callback URL"));
        edit(&mut new);
        self.service
            .create_webhook(&self.keys.agent_pro.key, new)
            .await
            .expect("a subscription")
            .value
    }

    /// `POST /api/v1/webhooks`: (id, secret).
    async fn subscribe_http(&self, body: Value) -> (WebhookId, String) {
        let (status, v) = call(
            self,
            Method::POST,
            "/api/v1/webhooks",
            &self.keys.agent_pro.raw,
            Some(body),
        )
        .await;
        assert_eq!(status, 201, "{v}");
        (
            WebhookId::parse(v["id"].as_str().expect("an id")).expect("a uuid"),
            v["secret"].as_str().expect("a secret").to_owned(),
        )
    }

    /// `GET /api/v1/webhooks/{id}`.
    async fn webhook_http(&self, id: WebhookId) -> Value {
        let (status, v) = call(
            self,
            Method::GET,
            &format!("/api/v1/webhooks/{id}"),
            &self.keys.agent_pro.raw,
            None,
        )
        .await;
        assert_eq!(status, 200, "{v}");
        v
    }

    /// `POST /api/v1/webhooks/{id}/test` with `key`: the status and the body.
    async fn ping_http(&self, id: impl std::fmt::Display, key: &str) -> (u16, Value) {
        let path = format!("/api/v1/webhooks/{id}/test");
        call(self, Method::POST, &path, key, None).await
    }

    /// `GET /api/v1/webhooks/{id}/deliveries`: the `data` list.
    async fn deliveries_http(&self, id: WebhookId) -> Vec<Value> {
        let (status, v) = call(
            self,
            Method::GET,
            &format!("/api/v1/webhooks/{id}/deliveries"),
            &self.keys.agent_pro.raw,
            None,
        )
        .await;
        assert_eq!(status, 200, "{v}");
        v["data"].as_array().expect("a data list").clone()
    }

    /// Every delivery of a subscription, from the store.
    async fn deliveries(&self, id: WebhookId) -> Vec<Delivery> {
        self.store
            .deliveries_of(id, 100_000)
            .await
            .expect("the store")
    }

    /// Waits until no delivery of these subscriptions is pending, and this service has applied
    /// the attempts to their subscriptions, which it does just after writing each delivery: a
    /// success shows as `last_success_at`, a failure as `last_failure_at`, a 410 as disabled;
    /// with one delivery, its last attempt is the last applied. (With several in flight at
    /// once, the attempts may be applied in another order than they were made.)
    async fn settle(&self, ids: &[WebhookId]) -> bool {
        // What is logged is made into deliveries first, or there would be nothing pending yet.
        self.service.fan_out_now().await.expect("fanned out");
        eventually(DEADLINE, || async {
            for id in ids {
                let deliveries = self.deliveries(*id).await;
                if deliveries
                    .iter()
                    .any(|d| d.status == DeliveryStatus::Pending)
                {
                    return false;
                }
                // A deleted subscription has nothing left to apply.
                let Ok(health) = self.service.webhook_health(*id).await else {
                    continue;
                };
                if !attempts_applied(&health.subscription, &deliveries) {
                    return false;
                }
            }
            true
        })
        .await
    }

    /// Waits until no delivery of these subscriptions is pending in the store (sent by
    /// another service sharing it, whose subscriptions this one does not see change).
    async fn settle_in_store(&self, ids: &[WebhookId]) -> bool {
        self.service.fan_out_now().await.expect("fanned out");
        eventually(DEADLINE, || async {
            for id in ids {
                if self
                    .deliveries(*id)
                    .await
                    .iter()
                    .any(|d| d.status == DeliveryStatus::Pending)
                {
                    return false;
                }
            }
            true
        })
        .await
    }
}

/// Whether `sub` shows the attempts of its settled `deliveries` (see `settle`).
fn attempts_applied(sub: &Subscription, deliveries: &[Delivery]) -> bool {
    let attempts = || deliveries.iter().flat_map(|d| &d.history);
    let succeeded = deliveries
        .iter()
        .any(|d| d.status == DeliveryStatus::Succeeded);
    let failed = attempts().any(|a| !a.status_code.is_some_and(|c| (200..300).contains(&c)));
    let gone = attempts().any(|a| a.status_code == Some(410));
    let last_applied = match deliveries {
        [only] => only.history.last().is_none_or(|last| {
            let applied = match only.status {
                DeliveryStatus::Succeeded => sub.last_success_at,
                _ => sub.last_failure_at,
            };
            applied.is_some_and(|at| at >= last.at)
        }),
        _ => true,
    };
    (!succeeded || sub.last_success_at.is_some())
        && (!failed || sub.last_failure_at.is_some())
        && (!gone || sub.status == SubscriptionStatus::Disabled)
        && last_applied
}

/// A call with the Agent Pro key or another, a JSON body or none: the status and the body.
async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let r = app.call(method, path, key, body.as_ref()).await;
    (r.status.as_u16(), r.body)
}

/// A receiver that answers its `nth` request (counting from 0) 503 once `latch` is opened,
/// and every other request 200 at once.
async fn fails_nth_until(nth: usize, latch: &Latch) -> Receiver {
    let held = latch.clone();
    Receiver::start(script(move |_, seen| {
        if seen.nth == nth {
            Answer::status(503).until(&held)
        } else {
            Answer::ok()
        }
    }))
    .await
}

/// Asserts the Standard Webhooks headers are present and the signature verifies with the
/// crate's own `verify`.
#[track_caller]
fn assert_signed(hit: &Hit, secret: &str) {
    let id = hit.id.as_deref().expect("a webhook-id header");
    let ts = hit
        .timestamp
        .as_deref()
        .expect("a webhook-timestamp header");
    let sig = hit
        .signature
        .as_deref()
        .expect("a webhook-signature header");
    assert!(!id.is_empty());
    let ts: i64 = ts.parse().expect("the timestamp is whole seconds");
    assert!(
        (Utc::now().timestamp() - ts).abs() < 300,
        "the timestamp {ts} is about now"
    );
    assert!(sig.starts_with("v1,"), "{sig}");
    assert_eq!(
        verify(secret, id, ts, &hit.body, sig),
        Ok(()),
        "the signature verifies for {id}"
    );
    assert_eq!(hit.content_type.as_deref(), Some("application/json"));
}

fn at_plus(at: &str, latency_ms: u64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(at)
        .expect("an RFC 3339 time")
        .with_timezone(&Utc)
        + chrono::Duration::milliseconds(latency_ms as i64)
}

// ---------------------------------------------------------------------------------------------
// Signing and the payload
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_reads_a_subscription_this_service_has_not_seen_from_the_store() {
    // As on a replica whose follower has not yet brought a subscription registered on another
    // one: the store holds it, this service's memory does not.
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(always_ok()).await;
    let (known, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/hook") }))
        .await;
    let mut unseen = app
        .store
        .get_webhook(known)
        .await
        .expect("read")
        .expect("stored");
    unseen.id = WebhookId::new_random();
    app.store.put_webhook(&unseen).await.expect("stored");
    let head_before = app.store.log_head().await.expect("the head");

    let job = app.job(&Spec::default());
    let outcome = app.service.upsert_job(job.clone()).await.expect("ingested");
    assert!(outcome.announced);
    app.service.fan_out_now().await.expect("fanned out");
    let cursors: BTreeMap<WebhookId, u64> = app
        .store
        .fan_out_cursors()
        .await
        .expect("cursors")
        .into_iter()
        .collect();
    assert!(cursors[&known] > head_before, "the known one got its event");
    assert!(cursors[&unseen.id] > head_before, "so did the unseen one");
    assert!(app.settle(&[known, unseen.id]).await);
    let hits = rx.hits();
    assert_eq!(hits.len(), 2, "one for each subscription: {hits:?}");
    for hit in &hits {
        assert_signed(hit, &secret);
        assert_eq!(hit.data_id(), Some(job.id.to_string().as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_made_elsewhere_is_sent_at_once_by_a_service_new_to_its_subscription() {
    // Two services on one store, as two replicas: the first registers the subscription,
    // ingests and fans out, and sends nothing (it has no notifier); the second, built before
    // the key and the subscription existed, claims the delivery. Its clock stands a minute
    // ahead and still, so a delivery it put back for later would never be due again.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store: Arc<dyn Store> = Arc::new(open_sled(&dir.path().join("db")).await.expect("sled"));
    let notifier = HttpNotifier::new(CallbackPolicy::local_development(), FAST_TIMEOUTS)
        .expect("the HTTP notifier");
    let sender = JobListingsService::builder()
        .store(store.clone())
        .config(config(&[10, 20, 40]))
        .clock(
            Arc::new(ManualClock::new(Utc::now() + chrono::Duration::minutes(1))) as Arc<dyn Clock>,
        )
        .notifier(Arc::new(notifier))
        .build()
        .await
        .expect("the sending service");
    let app = app_builder(config(&[10, 20, 40]), StoreKind::Given(store))
        .spawn()
        .await;
    let rx = Receiver::start(always_ok()).await;
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/hook") }))
        .await;

    let job = app.job(&Spec::default());
    assert!(
        app.service
            .upsert_job(job.clone())
            .await
            .expect("ingested")
            .announced
    );
    app.service.fan_out_now().await.expect("fanned out");
    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    assert!(app.settle_in_store(&[hook]).await);
    let hits = rx.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_signed(&hits[0], &secret);
    assert_eq!(hits[0].data_id(), Some(job.id.to_string().as_str()));
    let deliveries = app.deliveries(hook).await;
    assert_eq!(deliveries.len(), 1);
    assert_eq!(deliveries[0].status, DeliveryStatus::Succeeded);
    sender.shutdown().await.expect("stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_put_through_the_admin_api_is_announced_as_any_ingest_is() {
    use job_listings::api::admin::{AdminApi, AdminToken};
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(always_ok()).await;
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/hook") }))
        .await;
    let token = AdminToken::generate();
    let admin = crate::support::server::RunningServer::start(
        AdminApi::new(app.api.clone(), token.hash()),
        crate::support::server::server_config(),
    )
    .await;

    let job = app.job(&Spec::default());
    let put = reqwest::Client::new()
        .put(format!("{}/admin/v1/jobs/{}", admin.base, job.id))
        .bearer_auth(token.expose())
        .json(&job)
        .send()
        .await
        .expect("answered");
    assert_eq!(put.status(), reqwest::StatusCode::CREATED);
    assert_eq!(app.queued(job.id).await, 1);
    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    assert!(app.settle(&[hook]).await);
    let hits = rx.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_signed(&hits[0], &secret);
    assert_eq!(hits[0].kind(), Some("job.new"));
    assert_eq!(hits[0].data_id(), Some(job.id.to_string().as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_job_is_delivered_signed_with_standard_webhooks_headers() {
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(always_ok()).await;
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/hook") }))
        .await;
    assert!(secret.starts_with("whsec_"), "{secret}");

    let job = app.job(&Spec::default());
    let outcome = app.service.upsert_job(job.clone()).await.expect("ingested");
    assert!(outcome.created);
    assert_eq!(app.queued(outcome.id).await, 1);

    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    assert!(app.settle(&[hook]).await);
    let hits = rx.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_signed(hit, &secret);
    assert!(
        verify(
            "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
            hit.id.as_deref().unwrap_or(""),
            hit.timestamp.as_deref().unwrap_or("0").parse().unwrap_or(0),
            &hit.body,
            hit.signature.as_deref().unwrap_or(""),
        )
        .is_err(),
        "another secret does not verify"
    );
    assert!(hit.user_agent.is_some());

    // The body: type, timestamp, data = the job.
    assert_eq!(hit.kind(), Some("job.new"), "{}", hit.json);
    let stamp = hit.json["timestamp"].as_str().expect("a timestamp");
    assert!(DateTime::parse_from_rfc3339(stamp).is_ok(), "{stamp}");
    assert_eq!(hit.data_id(), Some(job.id.to_string().as_str()));
    assert_eq!(hit.json["data"]["role"], job.role.as_str());
    assert!(hit.body.len() <= job_listings::webhooks::MAX_PAYLOAD_BYTES);

    // The webhook-id is the event id the delivery log shows; status over HTTP.
    let listed = app.deliveries_http(hook).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["status"], "succeeded");
    assert_eq!(listed[0]["attempts"], 1);
    assert_eq!(listed[0]["event_id"].as_str(), hit.id.as_deref());
    assert_eq!(listed[0]["event_type"], "job.new");
    let queued = listed[0]["created_at"]
        .as_str()
        .expect("when it was queued");
    let attempted = listed[0]["history"][0]["at"]
        .as_str()
        .expect("an attempt time");
    let (queued, attempted) = (
        DateTime::parse_from_rfc3339(queued).expect("RFC 3339"),
        DateTime::parse_from_rfc3339(attempted).expect("RFC 3339"),
    );
    assert!(
        queued <= attempted,
        "queued {queued} after the attempt {attempted}"
    );
    assert_eq!(listed[0]["history"][0]["status_code"], 200);
    assert!(listed[0]["history"][0]["latency_ms"].is_u64());
    assert!(listed[0]["history"][0]["error"].is_null());
    let w = app.webhook_http(hook).await;
    assert_eq!(w["status"], "active");
    assert!(w["last_success_at"].is_string(), "{w}");
    assert!(w["last_failure_at"].is_null(), "{w}");
    assert!(w.get("secret").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_post_is_shortened_to_fit_the_payload_limit_and_still_verifies() {
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(always_ok()).await;
    let sub = app.subscribe(&rx.url("/big"), |_| {}).await;
    let mut job = app.job(&Spec::default());
    job.description = "zéphyr \"quoted\" <tag> ".repeat(4_000);
    assert!(job.description.len() > 80_000);
    app.service.upsert_job(job.clone()).await.expect("ingested");
    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    let hit = &rx.hits()[0];
    assert_signed(hit, sub.secret.expose());
    assert!(
        hit.body.len() <= job_listings::webhooks::MAX_PAYLOAD_BYTES,
        "{} bytes",
        hit.body.len()
    );
    assert_eq!(
        hit.json["data"]["description_truncated"], true,
        "{}",
        hit.json["data"]
    );
    assert_eq!(hit.data_id(), Some(job.id.to_string().as_str()));
    let text = hit.json["data"]["description"].as_str().unwrap_or("");
    assert!(job.description.starts_with(text) && !text.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filter_matrix_sends_each_new_job_to_exactly_the_matching_subscriptions() {
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(always_ok()).await;
    let tag = |t: &str| DomainTag::parse(t).expect("a tag");
    let level = |s: &str| Seniority::parse(s).expect("a level");

    type Edit = Box<dyn FnOnce(&mut NewWebhook)>;
    let subs: Vec<(&str, Edit)> = vec![
        ("/all", Box::new(|_| {})),
        (
            "/ai-design",
            Box::new(move |w| w.domain_filters = vec![tag("ai"), tag("design")]),
        ),
        ("/remote", Box::new(|w| w.remote_only = true)),
        (
            "/eng-remote",
            Box::new(move |w| {
                w.domain_filters = vec![tag("engineering")];
                w.remote_only = true;
            }),
        ),
        (
            "/senior-staff",
            Box::new(move |w| w.seniority = vec![level("senior"), level("staff")]),
        ),
        (
            "/q-zephyrine",
            Box::new(|w| w.q = Some("zephyrine".to_owned())),
        ),
        (
            "/company-quokka",
            Box::new(|w| w.company = Some("Quokka".to_owned())),
        ),
        (
            "/conf-0.8",
            Box::new(|w| w.min_confidence = Some(Confidence::new(0.8).expect("conf"))),
        ),
        (
            "/saved-search",
            Box::new(move |w| {
                w.domain_filters = vec![tag("data")];
                w.seniority = vec![level("junior")];
                w.q = Some("pipelines".to_owned());
                w.min_confidence = Some(Confidence::new(0.5).expect("conf"));
            }),
        ),
    ];
    let mut secrets = BTreeMap::new();
    let mut hook_ids = Vec::new();
    for (path, edit) in subs {
        let sub = app.subscribe(&rx.url(path), edit).await;
        secrets.insert(path.to_owned(), sub.secret.expose().to_owned());
        hook_ids.push(sub.id);
    }

    let spec = |role, text, domains, seniority, remote, confidence, company, active| Spec {
        role,
        text,
        domains,
        seniority,
        remote,
        confidence,
        company,
        active,
    };
    // (job, the subscriptions it must reach)
    let table: Vec<(Spec, &[&str])> = vec![
        (
            spec(
                "Senior ML Engineer",
                "Train kumquat models.",
                &["ai"],
                &["senior"],
                true,
                0.9,
                0,
                true,
            ),
            &[
                "/all",
                "/ai-design",
                "/remote",
                "/senior-staff",
                "/company-quokka",
                "/conf-0.8",
            ],
        ),
        (
            spec(
                "Lead Designer",
                "Own the marmalade design system.",
                &["design"],
                &["lead"],
                false,
                0.7,
                1,
                true,
            ),
            &["/all", "/ai-design"],
        ),
        (
            spec(
                "Staff Platform Engineer",
                "Scale zephyrine clusters.",
                &["engineering", "devops"],
                &["staff"],
                true,
                0.85,
                1,
                true,
            ),
            &[
                "/all",
                "/remote",
                "/eng-remote",
                "/senior-staff",
                "/q-zephyrine",
                "/conf-0.8",
            ],
        ),
        (
            spec(
                "Junior Backend Engineer",
                "Maintain zephyrine services.",
                &["engineering"],
                &["junior"],
                false,
                0.5,
                0,
                true,
            ),
            &["/all", "/q-zephyrine", "/company-quokka"],
        ),
        (
            spec(
                "Junior Data Engineer",
                "Pipelines in Python.",
                &["data"],
                &["junior"],
                true,
                0.6,
                0,
                true,
            ),
            &["/all", "/remote", "/company-quokka", "/saved-search"],
        ),
        (
            // The saved search's confidence floor is 0.5: 0.45 misses it.
            spec(
                "Junior Data Analyst",
                "Pipelines and dashboards.",
                &["data"],
                &["junior"],
                true,
                0.45,
                0,
                true,
            ),
            &["/all", "/remote", "/company-quokka"],
        ),
        (
            // Exactly the floor of /conf-0.8.
            spec(
                "Research Scientist",
                "Study kumquat.",
                &["research"],
                &["mid"],
                false,
                0.8,
                1,
                true,
            ),
            &["/all", "/conf-0.8"],
        ),
        (
            spec(
                "Account Executive",
                "Sell things.",
                &["sales"],
                &["mid"],
                false,
                0.3,
                1,
                true,
            ),
            &["/all"],
        ),
        (
            // Closed when first seen: matches every filter but is announced to nobody.
            spec(
                "Staff ML Engineer",
                "zephyrine pipelines",
                &["ai", "data", "engineering"],
                &["staff", "junior"],
                true,
                0.99,
                0,
                false,
            ),
            &[],
        ),
    ];

    let mut jobs = Vec::new();
    let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
    for (spec, reach) in &table {
        let job = app.job(spec);
        let outcome = app.service.upsert_job(job.clone()).await.expect("ingested");
        assert!(outcome.created);
        assert_eq!(
            app.queued(outcome.id).await,
            reach.len(),
            "deliveries queued for {:?}",
            spec.role
        );
        for path in *reach {
            expected.insert(((*path).to_owned(), job.id.to_string()));
        }
        jobs.push(job);
    }

    // Updates of known jobs and closes raise nothing.
    let mut updated = jobs[0].clone();
    updated.description = "Train kumquat models at scale.".to_owned();
    let again = app.service.upsert_job(updated).await.expect("updated");
    assert!(!again.created);
    assert!(!again.announced);
    let mut closed = jobs[2].clone();
    closed.status = JobStatus::Closed;
    assert!(
        !app.service
            .upsert_job(closed)
            .await
            .expect("closed")
            .announced
    );
    app.service.close_job(jobs[1].id).await.expect("closed");
    assert!(
        !app.service
            .upsert_job(jobs[8].clone())
            .await
            .expect("again")
            .announced
    );
    // The same new job twice in one batch is one event.
    let twin = app.job(&Spec::default());
    let outcomes = app
        .service
        .upsert_jobs(vec![twin.clone(), twin.clone()])
        .await
        .expect("a batch");
    assert_eq!(outcomes.len(), 2);
    assert_eq!(app.queued(twin.id).await, 5, "{outcomes:?}");
    for path in [
        "/all",
        "/remote",
        "/eng-remote",
        "/company-quokka",
        "/conf-0.8",
    ] {
        expected.insert((path.to_owned(), twin.id.to_string()));
    }

    assert!(
        eventually(DEADLINE, || async { rx.count() >= expected.len() }).await,
        "{} of {} deliveries arrived",
        rx.count(),
        expected.len()
    );
    // Settled: every attempt was recorded, so every request it made has arrived.
    assert!(app.settle(&hook_ids).await, "every delivery settled");

    let hits = rx.hits();
    let mut got: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut event_of_job: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for hit in &hits {
        assert_signed(hit, &secrets[&hit.path]);
        assert_eq!(hit.kind(), Some("job.new"));
        let job = hit.data_id().expect("data.id").to_owned();
        event_of_job
            .entry(job.clone())
            .or_default()
            .insert(hit.id.clone().unwrap_or_default());
        *got.entry((hit.path.clone(), job)).or_default() += 1;
    }
    let got_set: BTreeSet<_> = got.keys().cloned().collect();
    let missing: Vec<_> = expected.difference(&got_set).collect();
    let unexpected: Vec<_> = got_set.difference(&expected).collect();
    let repeated: Vec<_> = got.iter().filter(|(_, n)| **n > 1).collect();
    assert!(missing.is_empty(), "missing deliveries: {missing:?}");
    assert!(
        unexpected.is_empty(),
        "deliveries to non-matching subscriptions: {unexpected:?}"
    );
    assert!(repeated.is_empty(), "repeated deliveries: {repeated:?}");
    for (job, ids) in &event_of_job {
        assert_eq!(
            ids.len(),
            1,
            "job {job} is one event, one webhook-id: {ids:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_first_seen_closed_is_announced_when_it_first_becomes_active() {
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(always_ok()).await;
    let sub = app.subscribe(&rx.url("/all"), |_| {}).await;

    let mut job = app.job(&Spec {
        active: false,
        ..Spec::default()
    });
    assert_eq!(
        app.queued(
            app.service
                .upsert_job(job.clone())
                .await
                .expect("closed")
                .id
        )
        .await,
        0
    );
    job.status = JobStatus::Active;
    let opened = app.service.upsert_job(job.clone()).await.expect("opened");
    // Close and reopen: not the first time any more.
    app.service.close_job(job.id).await.expect("closed");
    let reopened = app.service.upsert_job(job.clone()).await.expect("reopened");
    assert!(!reopened.announced, "a reopened job is not new");

    assert_eq!(
        app.queued(opened.id).await,
        1,
        "the job became active for the first time: one job.new event expected"
    );
    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    assert!(app.settle(&[sub.id]).await);
    assert_eq!(rx.count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Retries
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_is_down_then_up_gets_the_delivery_after_retries() {
    let app = start_default(&[100, 100, 200, 200, 400, 400, 800, 800]).await;
    let addr = free_port();
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": format!("http://{addr}/hook") }))
        .await;
    let job = app.job(&Spec::default());
    app.service.upsert_job(job.clone()).await.expect("ingested");

    // Two refused connections, then the receiver comes up on the same port.
    assert!(
        eventually(DEADLINE, || async {
            app.deliveries(hook)
                .await
                .first()
                .is_some_and(|d| d.attempts >= 2)
        })
        .await
    );
    let rx = Receiver::start_on(addr, always_ok())
        .await
        .expect("the port is free again");
    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    assert!(app.settle(&[hook]).await);

    let hits = rx.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_signed(&hits[0], &secret);
    assert_eq!(hits[0].data_id(), Some(job.id.to_string().as_str()));

    let listed = app.deliveries_http(hook).await;
    assert_eq!(listed.len(), 1);
    let d = &listed[0];
    assert_eq!(d["status"], "succeeded", "{d}");
    assert_eq!(
        d["event_id"].as_str(),
        hits[0].id.as_deref(),
        "same webhook-id"
    );
    let history = d["history"].as_array().expect("history");
    assert!(history.len() >= 3, "{d}");
    for failed in &history[..history.len() - 1] {
        assert!(failed["status_code"].is_null(), "{failed}");
        let error = failed["error"].as_str().unwrap_or("");
        assert!(error.contains("connect"), "a connection error: {error}");
        assert!(failed["latency_ms"].is_u64());
    }
    assert_eq!(history[history.len() - 1]["status_code"], 200);
    assert_eq!(d["attempts"].as_u64(), Some(history.len() as u64));

    let w = app.webhook_http(hook).await;
    assert_eq!(w["status"], "active");
    assert!(w["last_success_at"].is_string(), "{w}");
    assert!(w["last_failure_at"].is_string(), "{w}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_keep_the_webhook_id_and_re_sign_every_attempt() {
    let app = start_default(&[10, 20, 40, 80]).await;
    // 503 with Retry-After: 1 twice: attempts at least a second apart, so timestamps differ.
    let rx = Receiver::start(script(|_, seen| {
        if seen.nth_same < 2 {
            Answer::status(503).header("retry-after", "1")
        } else {
            Answer::ok()
        }
    }))
    .await;
    let sub = app.subscribe(&rx.url("/hook"), |_| {}).await;
    app.ingest_new_job().await;
    assert!(eventually(DEADLINE, || async { rx.count() >= 3 }).await);
    assert!(app.settle(&[sub.id]).await);

    let hits = rx.hits();
    assert_eq!(hits.len(), 3, "{hits:?}");
    for hit in &hits {
        assert_signed(hit, sub.secret.expose());
        assert_eq!(hit.id, hits[0].id, "the same webhook-id on every attempt");
        assert_eq!(hit.body, hits[0].body, "the same body on every attempt");
    }
    for pair in hits.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= Duration::from_millis(900),
            "Retry-After: 1 on a 503 was honoured: {gap:?}"
        );
        let (t0, t1) = (
            pair[0].timestamp.clone().unwrap_or_default(),
            pair[1].timestamp.clone().unwrap_or_default(),
        );
        assert_ne!(t0, t1, "a new timestamp per attempt");
        assert_ne!(pair[0].signature, pair[1].signature, "re-signed");
    }
    let d = &app.deliveries(sub.id).await[0];
    assert_eq!(d.status, DeliveryStatus::Succeeded);
    assert_eq!(d.attempts, 3);
    let codes: Vec<_> = d.history.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, vec![Some(503), Some(503), Some(200)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_429_and_5xx_are_retried_and_429_honours_retry_after() {
    let app = start_default(&[10, 20, 40, 80]).await;
    let rx = Receiver::start(script(|hit, seen| {
        match (hit.path.as_str(), seen.nth_same) {
            ("/throttled", 0) => Answer::status(429).header("retry-after", "1"),
            ("/flaky", 0) => Answer::status(500),
            ("/flaky", 1) => Answer::status(502),
            ("/flaky", 2) => Answer::status(504),
            _ => Answer::ok(),
        }
    }))
    .await;
    let throttled = app.subscribe(&rx.url("/throttled"), |_| {}).await;
    let flaky = app.subscribe(&rx.url("/flaky"), |_| {}).await;
    app.ingest_new_job().await;
    assert!(app.settle(&[throttled.id, flaky.id]).await);

    let t = rx.hits_to("/throttled");
    assert_eq!(t.len(), 2, "{t:?}");
    let gap = t[1].at - t[0].at;
    assert!(
        gap >= Duration::from_millis(900),
        "Retry-After: 1 on a 429 was honoured: {gap:?}"
    );
    let f = rx.hits_to("/flaky");
    assert_eq!(f.len(), 4, "{f:?}");
    for hit in t.iter().chain(&f) {
        let secret = if hit.path == "/flaky" {
            &flaky.secret
        } else {
            &throttled.secret
        };
        assert_signed(hit, secret.expose());
    }
    for sub in [&throttled, &flaky] {
        let d = &app.deliveries(sub.id).await[0];
        assert_eq!(d.status, DeliveryStatus::Succeeded, "{d:?}");
    }
    let codes: Vec<_> = app.deliveries(flaky.id).await[0]
        .history
        .iter()
        .map(|a| a.status_code)
        .collect();
    assert_eq!(codes, vec![Some(500), Some(502), Some(504), Some(200)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_given_as_an_http_date_is_honoured() {
    let app = start_default(&[10, 20, 40, 80]).await;
    let rx = Receiver::start(script(|_, seen| {
        if seen.nth_same == 0 {
            // RFC 9110 allows an HTTP-date; two seconds ahead (whole seconds, so ≥ 1 s),
            // where the retry policy alone would retry after 10 ms.
            let when = Utc::now() + chrono::Duration::seconds(2);
            Answer::status(503).header(
                "retry-after",
                &when.format("%a, %d %b %Y %H:%M:%S GMT").to_string(),
            )
        } else {
            Answer::ok()
        }
    }))
    .await;
    let sub = app.subscribe(&rx.url("/hook"), |_| {}).await;
    app.ingest_new_job().await;
    assert!(app.settle(&[sub.id]).await);
    let hits = rx.hits();
    assert_eq!(hits.len(), 2, "{hits:?}");
    let gap = hits[1].at - hits[0].at;
    assert!(
        gap >= Duration::from_millis(900),
        "Retry-After as an HTTP-date was honoured: retried after {gap:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_attempts_fail_the_delivery_and_the_history_shows_every_attempt() {
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(script(|_, _| Answer::status(503))).await;
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/down") }))
        .await;
    app.ingest_new_job().await;
    assert!(app.settle(&[hook]).await);

    let hits = rx.hits();
    assert_eq!(hits.len(), 4, "one attempt and three retries: {hits:?}");
    for hit in &hits {
        assert_signed(hit, &secret);
        assert_eq!(hit.id, hits[0].id);
    }
    let listed = app.deliveries_http(hook).await;
    assert_eq!(listed.len(), 1);
    let d = &listed[0];
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(d["attempts"], 4);
    assert_eq!(d["last_error"], "HTTP 503");
    let history = d["history"].as_array().expect("history");
    assert_eq!(history.len(), 4, "{d}");
    for a in history {
        assert_eq!(a["status_code"], 503, "{a}");
        assert_eq!(a["error"], "HTTP 503", "{a}");
        assert!(a["latency_ms"].is_u64(), "{a}");
        assert!(a["at"].is_string(), "{a}");
    }

    let w = app.webhook_http(hook).await;
    assert_eq!(
        w["status"], "active",
        "one failed delivery does not disable: {w}"
    );
    assert!(w["last_success_at"].is_null(), "{w}");
    assert!(w["last_failure_at"].is_string(), "{w}");
    assert_eq!(w["last_failure_reason"], "HTTP 503", "{w}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_failing_longer_than_disable_after_is_disabled_and_shows_why() {
    let mut cfg = config(&[50; 40]);
    cfg.delivery.retry.disable_after = Duration::from_millis(300);
    let app = start(cfg, FAST_TIMEOUTS).await;
    let rx = Receiver::start(script(|hit, _| match hit.path.as_str() {
        "/down" => Answer::status(500),
        _ => Answer::ok(),
    }))
    .await;
    let (hook, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/down") }))
        .await;
    // A subscription that keeps working: what reaches it marks how far delivery has got.
    let (live, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/live") }))
        .await;
    app.ingest_new_job().await;
    let disabled = eventually(DEADLINE, || async {
        app.webhook_http(hook).await["status"] == "disabled"
    })
    .await;
    let w = app.webhook_http(hook).await;
    assert!(disabled, "{w}");
    let reason = w["disabled_reason"].as_str().unwrap_or("");
    assert!(reason.contains("failed"), "the reason says why: {reason:?}");
    assert!(w["last_failure_at"].is_string(), "{w}");

    assert!(app.settle(&[hook, live]).await);
    let before = rx.hits_to("/down").len();
    let later = app.ingest_new_job().await;
    assert_eq!(
        app.queued(later.id).await,
        1,
        "a disabled subscription gets nothing; the live one gets the job"
    );
    // The later job reached the live subscription, and nothing more reached the disabled one.
    let later_id = later.id.to_string();
    assert!(
        eventually(DEADLINE, || async {
            rx.hits_to("/live")
                .iter()
                .any(|h| h.data_id() == Some(later_id.as_str()))
        })
        .await,
        "the later job never reached the live subscription"
    );
    assert!(app.settle(&[hook, live]).await);
    assert_eq!(
        rx.hits_to("/down").len(),
        before,
        "{:?}",
        rx.hits_to("/down")
    );
    assert!(
        app.deliveries(hook)
            .await
            .iter()
            .all(|d| d.status == DeliveryStatus::Failed),
        "the disabled subscription holds nothing it could still send"
    );
}

// ---------------------------------------------------------------------------------------------
// 410, redirects, timeouts
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_disables_the_subscription_and_later_jobs_skip_it() {
    let app = start_default(&[10, 20, 40]).await;
    let rx = Receiver::start(script(|hit, _| {
        if hit.path == "/gone" {
            Answer::status(410)
        } else {
            Answer::ok()
        }
    }))
    .await;
    let (gone, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/gone") }))
        .await;
    let (live, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/live") }))
        .await;
    let first = app.ingest_new_job().await;
    assert_eq!(app.queued(first.id).await, 2);
    assert!(app.settle(&[gone, live]).await);

    let w = app.webhook_http(gone).await;
    assert_eq!(w["status"], "disabled", "{w}");
    let reason = w["disabled_reason"].as_str().unwrap_or("");
    assert!(reason.contains("410"), "{reason:?}");
    let listed = app.deliveries_http(gone).await;
    assert_eq!(listed[0]["status"], "failed");
    assert_eq!(listed[0]["attempts"], 1, "no retry after 410");
    assert_eq!(listed[0]["history"][0]["status_code"], 410);
    assert_eq!(rx.hits_to("/gone").len(), 1);

    let second = app.ingest_new_job().await;
    assert_eq!(app.queued(second.id).await, 1, "only the live subscription");
    assert!(eventually(DEADLINE, || async { rx.hits_to("/live").len() >= 2 }).await);
    assert!(app.settle(&[gone, live]).await);
    assert_eq!(
        rx.hits_to("/gone").len(),
        1,
        "nothing more to the gone receiver"
    );
    assert_eq!(app.webhook_http(live).await["status"], "active");

    // A test ping to the disabled subscription is refused, not queued to fail.
    let (status, problem) = app.ping_http(gone, &app.keys.agent_pro.raw).await;
    assert_eq!(status, 409, "{problem}");
    assert_eq!(problem["code"], "webhook_disabled");
    assert!(
        problem["detail"].as_str().unwrap_or("").contains("410"),
        "{problem}"
    );
    assert_eq!(app.deliveries(gone).await.len(), 1, "no ping was queued");

    // Enabled again (same id and secret), it is sent the next new job.
    let (status, enabled) = call(
        &app,
        Method::PATCH,
        &format!("/api/v1/webhooks/{gone}"),
        &app.keys.agent_pro.raw,
        Some(json!({ "status": "active" })),
    )
    .await;
    assert_eq!(status, 200, "{enabled}");
    assert_eq!(enabled["status"], "active");
    let third = app.ingest_new_job().await;
    assert_eq!(app.queued(third.id).await, 2, "both subscriptions again");
    assert!(eventually(DEADLINE, || async { rx.hits_to("/gone").len() == 2 }).await);
}

/// Subscriptions stop with the key that registered them: while it is past due nothing is
/// announced to them, once billing is active again new jobs are, and a retry that comes due
/// after the key was revoked fails without being sent, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_or_revoked_key_s_subscriptions_are_sent_nothing() {
    // The second request's 503 is held until the key is revoked, so its retry comes due
    // after the revocation however slowly the machine runs.
    let app = start(config(&[10]), PATIENT_TIMEOUTS).await;
    let revoked = Latch::new();
    let rx = fails_nth_until(1, &revoked).await;
    let (sub, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/mine") }))
        .await;
    let key_id = app
        .service
        .caller(&app.keys.agent_pro.key)
        .expect("a valid key")
        .key_id();

    app.service
        .set_billing_status(key_id, BillingStatus::PastDue)
        .await
        .expect("past due");
    let while_past_due = app.ingest_new_job().await;
    assert_eq!(
        app.queued(while_past_due.id).await,
        0,
        "nothing for a past-due key"
    );

    app.service
        .set_billing_status(key_id, BillingStatus::Active)
        .await
        .expect("active again");
    let paid = app.ingest_new_job().await;
    assert_eq!(app.queued(paid.id).await, 1);
    assert!(eventually(DEADLINE, || async { rx.count() == 1 }).await);

    // Answered 503 first, once the key is revoked; the retry then finds it revoked.
    let failing = app.ingest_new_job().await;
    assert_eq!(app.queued(failing.id).await, 1);
    assert!(eventually(DEADLINE, || async { rx.count() == 2 }).await);
    app.service.revoke_key(key_id).await.expect("revoked");
    revoked.open();
    assert!(app.settle(&[sub]).await);
    let deliveries = app.deliveries(sub).await;
    let failed: Vec<&Delivery> = deliveries
        .iter()
        .filter(|d| d.status == DeliveryStatus::Failed)
        .collect();
    assert_eq!(failed.len(), 1, "{deliveries:?}");
    let why = failed[0].last_error.as_deref().unwrap_or("");
    assert!(why.contains("revoked"), "{why:?}");
    assert_eq!(rx.count(), 2, "the retry was not sent");
    let after_revoking = app.ingest_new_job().await;
    assert_eq!(
        app.queued(after_revoking.id).await,
        0,
        "nothing for a revoked key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_is_not_undone_by_a_success_recorded_after_it() {
    // The 410 may be held for a while (below), so the request timeout must outlast the hold:
    // a timed-out first attempt would be retried, answered 200, and never disable anything.
    let app = start(config(&[10, 20, 40]), PATIENT_TIMEOUTS).await;
    // The first request is answered 410 once all three have arrived, so none of them was held
    // back by the subscription already being disabled; the others are answered 200 one at a
    // time, each once the test opens its latch, so their successes are recorded after the 410.
    let (first, second) = (Latch::new(), Latch::new());
    let latches = (first.clone(), second.clone());
    let rx = Receiver::start(script(move |_, seen| match seen.nth {
        0 => Answer::status(410).once_seen(3),
        1 => Answer::ok().until(&latches.0),
        _ => Answer::ok().until(&latches.1),
    }))
    .await;
    let sub = app.subscribe(&rx.url("/hook"), |_| {}).await;
    let batch = vec![
        app.job(&Spec::default()),
        app.job(&Spec::default()),
        app.job(&Spec::default()),
    ];
    app.service.upsert_jobs(batch).await.expect("ingested");
    assert!(eventually(DEADLINE, || async { rx.count() >= 3 }).await);
    assert!(
        eventually(DEADLINE, || async {
            app.webhook_http(sub.id).await["status"] == "disabled"
        })
        .await,
        "the 410 disables the subscription"
    );

    // Each success is recorded on the subscription (its `last_success_at` moves) after the 410.
    let mut seen_success = Value::Null;
    for latch in [&first, &second] {
        latch.open();
        let before = seen_success.clone();
        assert!(
            eventually(DEADLINE, || async {
                let now = app.webhook_http(sub.id).await["last_success_at"].clone();
                now.is_string() && now != before
            })
            .await,
            "a success was never recorded on the subscription"
        );
        seen_success = app.webhook_http(sub.id).await["last_success_at"].clone();
        let w = app.webhook_http(sub.id).await;
        assert_eq!(
            w["status"], "disabled",
            "the receiver answered 410 Gone; a success of a delivery that was already in flight must not re-enable the subscription: {w}"
        );
    }
    assert!(app.settle(&[sub.id]).await);
    let mut outcomes: Vec<(String, u32)> = app
        .deliveries(sub.id)
        .await
        .iter()
        .map(|d| (format!("{:?}", d.status), d.attempts))
        .collect();
    outcomes.sort();
    let expected =
        [("Failed", 1), ("Succeeded", 1), ("Succeeded", 1)].map(|(s, n)| (s.to_owned(), n));
    assert_eq!(
        outcomes, expected,
        "one 410, two successes, each at its first attempt"
    );
    let later = app.ingest_new_job().await;
    assert_eq!(app.queued(later.id).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_not_followed_and_count_as_failures() {
    let app = start_default(&[10, 20]).await;
    let target = Receiver::start(always_ok()).await;
    let location = target.url("/target");
    let rx = Receiver::start(script(move |_, _| {
        Answer::status(302).header("location", &location)
    }))
    .await;
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/moved") }))
        .await;
    app.ingest_new_job().await;
    assert!(app.settle(&[hook]).await);

    assert_eq!(target.count(), 0, "the redirect target received nothing");
    let hits = rx.hits();
    assert_eq!(hits.len(), 3, "a 302 is a failure and retried: {hits:?}");
    for hit in &hits {
        assert_signed(hit, &secret);
    }
    let listed = app.deliveries_http(hook).await;
    assert_eq!(listed[0]["status"], "failed");
    for a in listed[0]["history"].as_array().expect("history") {
        assert_eq!(a["status_code"], 302, "{a}");
        assert!(
            a["error"].as_str().unwrap_or("").contains("redirect"),
            "{a}"
        );
    }
    let w = app.webhook_http(hook).await;
    assert!(w["last_success_at"].is_null(), "{w}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_receiver_times_out_while_a_fast_one_gets_its_delivery() {
    let app = start(config(&[200, 200]), ORDERING_TIMEOUTS).await;
    let slow_rx = Receiver::start(script(|_, _| Answer::ok().after(Duration::from_secs(6)))).await;
    let fast_rx = Receiver::start(always_ok()).await;
    let (slow, _) = app
        .subscribe_http(json!({ "callback_url": slow_rx.url("/slow") }))
        .await;
    let (fast, fast_secret) = app
        .subscribe_http(json!({ "callback_url": fast_rx.url("/fast") }))
        .await;
    app.ingest_new_job().await;

    assert!(eventually(DEADLINE, || async { fast_rx.count() >= 1 }).await);
    assert!(
        eventually(DEADLINE, || async {
            app.deliveries(slow).await[0].attempts >= 1
        })
        .await
    );
    let fast_hit = &fast_rx.hits()[0];
    assert_signed(fast_hit, &fast_secret);

    let listed = app.deliveries_http(slow).await;
    let first = &listed[0]["history"][0];
    assert!(first["status_code"].is_null(), "{first}");
    let error = first["error"].as_str().unwrap_or("");
    assert!(
        error.contains("timed out"),
        "the history shows the timeout: {error:?}"
    );
    let slow_done = at_plus(
        first["at"].as_str().expect("at"),
        first["latency_ms"].as_u64().expect("latency"),
    );
    assert!(
        fast_hit.utc < slow_done,
        "the fast receiver got its delivery ({}) before the slow attempt ended ({slow_done})",
        fast_hit.utc
    );
    assert!(app.settle(&[fast]).await);
    assert_eq!(
        app.deliveries(fast).await[0].status,
        DeliveryStatus::Succeeded
    );
    assert_eq!(fast_rx.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_at_a_slow_receiver_does_not_hold_back_other_subscriptions() {
    // Default max_in_flight (256); 100 new jobs for a receiver that holds every request past
    // the end of the test, and for one that answers at once. The request timeout (30 s) is
    // longer than the wait for the fast deliveries (10 s): were the slow requests to take
    // every delivery slot, the fast ones could only go out after a timeout, and never in time.
    let app = start(config(&[2_000, 2_000]), PATIENT_TIMEOUTS).await;
    let per_subscription = app.service.config().delivery.max_in_flight_per_subscription;
    assert_eq!(app.service.config().delivery.max_in_flight, 256);
    let slow_rx = Receiver::start(script(|_, _| Answer::ok().after(Duration::from_secs(60)))).await;
    let fast_rx = Receiver::start(always_ok()).await;
    let slow = app.subscribe(&slow_rx.url("/slow"), |_| {}).await;
    let fast = app.subscribe(&fast_rx.url("/fast"), |_| {}).await;
    let jobs: Vec<Job> = (0..100).map(|_| app.job(&Spec::default())).collect();
    app.service.upsert_jobs(jobs).await.expect("ingested");

    assert!(
        eventually(DEADLINE, || async { slow_rx.count() >= per_subscription }).await,
        "the slow receiver got {} requests",
        slow_rx.count()
    );
    assert!(
        eventually(DEADLINE, || async { fast_rx.count() >= 100 }).await,
        "{} of 100 arrived at the fast receiver while the slow one held {} requests open",
        fast_rx.count(),
        slow_rx.count()
    );
    assert!(app.settle(&[fast.id]).await);
    assert_eq!(app.deliveries(fast.id).await.len(), 100);
    // Still none answered or timed out: the fast deliveries went out beside the open requests,
    // and the slow receiver never held more than its share of the slots.
    assert!(
        app.deliveries(slow.id)
            .await
            .iter()
            .all(|d| d.attempts == 0),
        "a slow attempt ended within the test"
    );
    assert_eq!(slow_rx.count(), per_subscription);
}

/// A subscription of another customer (the enterprise demo key), made through the service.
async fn subscribe_as_enterprise(app: &TestApp, url: &str, domain: &str) -> Subscription {
    let mut new = NewWebhook::new(CallbackUrl::parse(url).expect("a callback URL"));
    new.domain_filters = vec![DomainTag::parse(domain).expect("a domain")];
    app.service
        .create_webhook(&app.keys.enterprise.key, new)
        .await
        .expect("a subscription")
        .value
}

/// One customer fills its subscriptions (16 of its 25) with requests its receiver never
/// answers; another customer's subscription registered after that is still served at once,
/// because one key holds at most its share of the delivery slots (with 64 shared slots and
/// only a per-subscription share, the first customer took them all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_customer_s_slow_subscriptions_do_not_hold_back_another_customer() {
    let app = start(config(&[2_000, 2_000]), PATIENT_TIMEOUTS).await;
    let per_key = app.service.config().delivery.max_in_flight_per_key;
    let slow_rx = Receiver::start(script(|_, _| Answer::ok().after(Duration::from_secs(60)))).await;
    let other_rx = Receiver::start(always_ok()).await;
    for n in 0..16 {
        app.subscribe(&slow_rx.url(&format!("/slow-{n}")), |_| {})
            .await;
    }
    let jobs: Vec<Job> = (0..20).map(|_| app.job(&Spec::default())).collect();
    app.service.upsert_jobs(jobs).await.expect("ingested");
    assert!(
        eventually(DEADLINE, || async { slow_rx.count() >= per_key }).await,
        "the slow receiver got {} requests",
        slow_rx.count()
    );

    let other = subscribe_as_enterprise(&app, &other_rx.url("/other"), "engineering").await;
    let jobs: Vec<Job> = (0..10).map(|_| app.job(&Spec::default())).collect();
    app.service.upsert_jobs(jobs).await.expect("ingested");
    assert!(
        eventually(DEADLINE, || async { other_rx.count() >= 10 }).await,
        "{} of 10 arrived for the other customer while the first held {} requests open",
        other_rx.count(),
        slow_rx.count()
    );
    assert!(app.settle(&[other.id]).await);
    assert_eq!(
        slow_rx.count(),
        per_key,
        "one key never held more than its share"
    );
}

/// A subscription with a long backlog of due deliveries (its receiver never answers) does
/// not hide another subscription's newer delivery from the worker: each subscription's
/// soonest due are read, not the outbox's oldest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_backlog_does_not_hide_another_subscription_s_delivery() {
    let app = start(config(&[2_000, 2_000]), PATIENT_TIMEOUTS).await;
    let slow_rx = Receiver::start(script(|_, _| Answer::ok().after(Duration::from_secs(60)))).await;
    let other_rx = Receiver::start(always_ok()).await;
    let slow = app.subscribe(&slow_rx.url("/slow"), |_| {}).await;
    let other = subscribe_as_enterprise(&app, &other_rx.url("/other"), "design").await;
    let backlog: Vec<Job> = (0..700).map(|_| app.job(&Spec::default())).collect();
    app.service.upsert_jobs(backlog).await.expect("ingested");
    app.service.fan_out_now().await.expect("fanned out");
    // The slow subscription holds its window of pending deliveries; the rest wait in the log.
    let window = app.service.config().delivery.max_pending_per_subscription;
    assert_eq!(app.deliveries(slow.id).await.len(), window.min(700));
    let design = app.job(&Spec {
        domains: &["design"],
        ..Spec::default()
    });
    app.service.upsert_job(design).await.expect("ingested");
    assert!(
        eventually(DEADLINE, || async { other_rx.count() >= 1 }).await,
        "the other subscription's delivery waited behind {} pending ones",
        app.deliveries(slow.id).await.len()
    );
    assert!(app.settle(&[other.id]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_and_search_do_not_wait_on_a_delivery_in_flight() {
    // Every request is held by the receiver until the test opens the latch, after ingest and
    // search are done: were either to wait on a delivery, it would wait forever (bounded).
    let app = start(config(&[10]), PATIENT_TIMEOUTS).await;
    let delivered = Latch::new();
    let held = delivered.clone();
    let slow_rx = Receiver::start(script(move |_, _| Answer::ok().until(&held))).await;
    let slow = app.subscribe(&slow_rx.url("/slow"), |_| {}).await;
    app.ingest_new_job().await;
    assert!(eventually(DEADLINE, || async { slow_rx.count() >= 1 }).await);

    // With that delivery in flight, ingest (20 durable writes) and search (over HTTP) answer.
    let total = tokio::time::timeout(DEADLINE, async {
        for _ in 0..20 {
            app.ingest_new_job().await;
        }
        let r = app
            .get_as(&app.keys.agent_pro.raw, "/api/v1/jobs?per_page=1")
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.total()
    })
    .await
    .expect("ingest and search waited on a delivery in flight");
    assert_eq!(total, 21);
    let in_flight = slow_rx.hits()[0].id.clone().unwrap_or_default();
    let first = app
        .deliveries(slow.id)
        .await
        .into_iter()
        .find(|d| d.event_id.to_string() == in_flight)
        .expect("the delivery in flight");
    assert_eq!(
        first.attempts, 0,
        "ingest and search finished while the first delivery was still in flight"
    );

    // Let go, every delivery goes out once.
    delivered.open();
    assert!(app.settle(&[slow.id]).await);
    let deliveries = app.deliveries(slow.id).await;
    assert_eq!(deliveries.len(), 21);
    assert!(
        deliveries
            .iter()
            .all(|d| d.status == DeliveryStatus::Succeeded && d.attempts == 1),
        "{deliveries:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Test pings, deletes
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_test_sends_a_signed_ping_and_another_keys_webhook_is_404() {
    let app = start_default(&[10, 20, 40]).await;
    let other = app.issue(Plan::AgentPro).await;
    let rx = Receiver::start(always_ok()).await;
    let (hook, secret) = app
        .subscribe_http(json!({ "callback_url": rx.url("/ping") }))
        .await;

    let (status, queued) = app.ping_http(hook, &app.keys.agent_pro.raw).await;
    assert_eq!(status, 202, "{queued}");
    assert_eq!(queued["webhook_id"], hook.to_string().as_str());
    assert_eq!(queued["status"], "pending");
    assert_eq!(queued["event_type"], "webhook.test");
    assert!(queued["created_at"].is_string(), "{queued}");
    let event = queued["event_id"].as_str().expect("an event id").to_owned();

    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);
    let hit = &rx.hits()[0];
    assert_signed(hit, &secret);
    assert_eq!(hit.kind(), Some("webhook.test"), "{}", hit.json);
    assert_eq!(hit.id.as_deref(), Some(event.as_str()));
    assert_eq!(hit.json["data"]["webhook_id"], hook.to_string().as_str());
    assert!(hit.json["timestamp"].is_string());
    assert!(app.settle(&[hook]).await);
    let listed = app.deliveries_http(hook).await;
    assert_eq!(listed[0]["status"], "succeeded", "{listed:?}");

    let (status, problem) = app.ping_http(hook, &other.raw).await;
    assert_eq!(status, 404, "{problem}");
    assert_eq!(problem["code"], "not_found");
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/api/v1/webhooks/{hook}/deliveries"),
        &other.raw,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = app.ping_http(Uuid::new_v4(), &app.keys.agent_pro.raw).await;
    assert_eq!(status, 404);

    // A second ping of the owner's, after the refused ones, marks how far delivery has got:
    // once it arrived and nothing is pending, anything the refused calls queued was sent too.
    let (status, marker) = app.ping_http(hook, &app.keys.agent_pro.raw).await;
    assert_eq!(status, 202, "{marker}");
    let marker = marker["event_id"].as_str().expect("an event id").to_owned();
    assert!(
        eventually(DEADLINE, || async {
            rx.hits()
                .iter()
                .any(|h| h.id.as_deref() == Some(marker.as_str()))
        })
        .await,
        "the owner's second ping never arrived"
    );
    assert!(app.settle(&[hook]).await);
    let ids: Vec<Option<String>> = rx.hits().into_iter().map(|h| h.id).collect();
    assert_eq!(
        ids,
        [Some(event), Some(marker)],
        "only the owner's pings were sent"
    );
    assert_eq!(app.deliveries(hook).await.len(), 2, "only they were queued");
}

/// A delivery pending when its subscription is disabled is not sent once the subscription
/// is enabled again, however soon: it fails and says why. What comes after is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_pending_while_disabled_is_not_sent_after_reenabling() {
    let app = start(config(&[10; 5]), PATIENT_TIMEOUTS).await;
    // The first attempt fails, answered only once the subscription has been disabled and
    // enabled again, so its retry comes due after that however slowly the machine runs; any
    // later attempt would succeed.
    let toggled = Latch::new();
    let rx = fails_nth_until(0, &toggled).await;
    let (hook, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/paused") }))
        .await;
    let path = format!("/api/v1/webhooks/{hook}");
    let (status, queued) = app.ping_http(hook, &app.keys.agent_pro.raw).await;
    assert_eq!(status, 202, "{queued}");
    assert!(eventually(DEADLINE, || async { rx.count() >= 1 }).await);

    // Disabled and enabled again while the first attempt is in flight.
    for status in ["disabled", "active"] {
        let (code, body) = call(
            &app,
            Method::PATCH,
            &path,
            &app.keys.agent_pro.raw,
            Some(json!({ "status": status })),
        )
        .await;
        assert_eq!(code, 200, "{body}");
        assert_eq!(body["status"], status);
    }
    toggled.open();
    assert!(app.settle(&[hook]).await);
    let missed = app.deliveries_http(hook).await;
    assert_eq!(missed.len(), 1, "{missed:?}");
    assert_eq!(missed[0]["status"], "failed", "{missed:?}");
    assert!(
        missed[0]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("disabled while this delivery was pending")),
        "{missed:?}"
    );
    assert_eq!(rx.count(), 1, "the missed delivery was not sent again");

    // A ping after enabling is sent.
    let (status, _) = app.ping_http(hook, &app.keys.agent_pro.raw).await;
    assert_eq!(status, 202);
    assert!(eventually(DEADLINE, || async { rx.count() >= 2 }).await);
    assert!(app.settle(&[hook]).await);
    let after = app.deliveries_http(hook).await;
    assert_eq!(
        after.iter().filter(|d| d["status"] == "succeeded").count(),
        1,
        "{after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_subscription_stops_its_pending_deliveries() {
    let app = start_default(&[150; 20]).await;
    let rx = Receiver::start(script(|hit, _| match hit.path.as_str() {
        "/doomed" => Answer::status(503),
        _ => Answer::ok(),
    }))
    .await;
    let (hook, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/doomed") }))
        .await;
    app.service
        .upsert_jobs(vec![app.job(&Spec::default()), app.job(&Spec::default())])
        .await
        .expect("ingested");
    assert!(eventually(DEADLINE, || async { rx.count() >= 2 }).await);

    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/api/v1/webhooks/{hook}"),
        &app.keys.agent_pro.raw,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let at_delete = rx.hits_to("/doomed").len();
    // An attempt already past its check of the subscription may still land, and is recorded
    // after it lands; the retry after it finds the subscription gone and fails the delivery.
    // So once nothing is pending, nothing more can be sent.
    assert!(app.settle(&[hook]).await);
    let settled = rx.hits_to("/doomed").len();
    assert!(
        settled <= at_delete + 2,
        "at most the two attempts in flight land after the delete: {at_delete} -> {settled}"
    );
    for d in app.deliveries(hook).await {
        assert_eq!(d.status, DeliveryStatus::Failed, "{d:?}");
    }

    // A later job reaches another subscription: delivery went on, and sent the deleted one
    // nothing more.
    let marker = app.subscribe(&rx.url("/marker"), |_| {}).await;
    let later = app.ingest_new_job().await;
    assert_eq!(app.queued(later.id).await, 1, "only the live subscription");
    assert!(
        eventually(DEADLINE, || async { !rx.hits_to("/marker").is_empty() }).await,
        "the later job never arrived"
    );
    assert!(app.settle(&[marker.id]).await);
    assert_eq!(
        rx.hits_to("/doomed").len(),
        settled,
        "no attempts after the delete settled"
    );
}

/// The longest a tap holds a call for a test that never lets it go (one that failed).
const TAP_LIMIT: Duration = Duration::from_secs(60);

/// Holds the first read of due deliveries that returns any at a barrier, until the test opens
/// `release`; records every claim made after it.
#[derive(Default)]
struct HeldRead {
    /// Opened once a read is held.
    held: Latch,
    /// Opened by the test to let the held read go.
    release: Latch,
    taken: std::sync::atomic::AtomicBool,
    claims: std::sync::Mutex<Vec<(DeliveryId, bool)>>,
}

impl HeldRead {
    fn claims(&self) -> Vec<(DeliveryId, bool)> {
        self.claims
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[async_trait::async_trait]
impl Tap for HeldRead {
    async fn due_read(&self, due: &[Delivery]) {
        if due.is_empty() || self.taken.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        self.held.open();
        self.release.opened(TAP_LIMIT).await;
    }

    async fn after_claim(&self, id: DeliveryId, claimed: bool) {
        self.claims
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, claimed));
    }
}

/// Holds every claim until the test opens the latch.
struct HeldClaims(Latch);

#[async_trait::async_trait]
impl Tap for HeldClaims {
    async fn before_claim(&self, _id: DeliveryId) {
        self.0.opened(TAP_LIMIT).await;
    }
}

/// A worker acts on what it read of the outbox only through a claim, which finds a delivery
/// sent and recorded since the read settled: a delivery is not sent twice without a failure
/// or a restart, however stale the read. Staged on one sled store shared by two services (as
/// two replicas, or one worker whose read went stale): B reads the delivery as due and is held
/// there while A, whose claim was held until then, sends it and records it; then B acts on
/// its read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_is_not_sent_twice_without_a_failure_or_a_restart() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let sled: Arc<dyn Store> = Arc::new(open_sled(&dir.path().join("db")).await.expect("sled"));
    let claims = Latch::new();
    let a_store = TappedStore::new(sled.clone(), Arc::new(HeldClaims(claims.clone())));
    let app = start_on(
        config(&[10, 20, 40]),
        FAST_TIMEOUTS,
        StoreKind::Given(Arc::new(a_store)),
    )
    .await;
    let b_tap = Arc::new(HeldRead::default());
    let notifier = HttpNotifier::new(CallbackPolicy::local_development(), FAST_TIMEOUTS)
        .expect("the HTTP notifier");
    let b = JobListingsService::builder()
        .store(Arc::new(TappedStore::new(sled.clone(), b_tap.clone())))
        .config(config(&[10, 20, 40]))
        .notifier(Arc::new(notifier))
        .build()
        .await
        .expect("the second service");
    let rx = Receiver::start(always_ok()).await;
    let sub = app.subscribe(&rx.url("/once"), |_| {}).await;
    app.ingest_new_job().await;

    assert!(
        b_tap.held.opened(DEADLINE).await,
        "B never read the delivery as due"
    );
    claims.open();
    assert!(
        eventually(DEADLINE, || async {
            app.deliveries(sub.id)
                .await
                .first()
                .is_some_and(|d| d.status == DeliveryStatus::Succeeded)
        })
        .await,
        "A never sent the delivery"
    );
    b_tap.release.open();
    assert!(
        eventually(DEADLINE, || async { !b_tap.claims().is_empty() }).await,
        "B never acted on its stale read"
    );

    let delivery = app.deliveries(sub.id).await.remove(0);
    assert_eq!(
        b_tap.claims(),
        [(delivery.id, false)],
        "B's claim of a delivery sent since its read is refused"
    );
    assert!(app.settle(&[sub.id]).await);
    let delivery = app.deliveries(sub.id).await.remove(0);
    assert_eq!(
        (delivery.status, delivery.attempts),
        (DeliveryStatus::Succeeded, 1)
    );
    let hits = rx.hits();
    assert_eq!(hits.len(), 1, "sent once: {hits:?}");
    assert_signed(&hits[0], sub.secret.expose());
    b.shutdown().await.expect("stopped");
}

// ---------------------------------------------------------------------------------------------
// SSRF
// ---------------------------------------------------------------------------------------------

/// Callback URLs that must never be contacted under the default policy; `{P}` is the port a
/// live receiver listens on.
const SSRF_TABLE: &[&str] = &[
    "http://127.0.0.1:{P}/hook",
    "https://127.0.0.1:{P}/hook",
    "https://localhost:{P}/hook",
    "https://localhost.:{P}/hook",
    "https://vm:{P}/hook",
    "https://[::1]:{P}/hook",
    "https://[::ffff:127.0.0.1]:{P}/hook",
    "https://[::127.0.0.1]:{P}/hook",
    "https://[64:ff9b::7f00:1]:{P}/hook",
    "https://[2002:7f00:1::]:{P}/hook",
    "https://2130706433:{P}/hook",
    "https://0x7f.1:{P}/hook",
    "https://127.1:{P}/hook",
    "https://0.0.0.0:{P}/hook",
    "https://[::]:{P}/hook",
    "https://10.0.0.1/hook",
    "https://192.168.1.1/hook",
    "https://172.16.0.1/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/hook",
    "https://198.18.0.1/hook",
    "https://[fe80::1]/hook",
    "https://[fd00::1]/hook",
    "https://[fec0::1]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://[::ffff:169.254.169.254]/hook",
    "https://224.0.0.1/hook",
    "https://255.255.255.255/hook",
    "https://240.0.0.1/hook",
];

fn ssrf_urls(port: u16) -> Vec<String> {
    SSRF_TABLE
        .iter()
        .map(|u| u.replace("{P}", &port.to_string()))
        .collect()
}

async fn send(
    notifier: &HttpNotifier,
    url: &CallbackUrl,
) -> job_listings::webhooks::AttemptOutcome {
    let secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    let body = bytes::Bytes::from_static(
        br#"{"type":"job.new","timestamp":"2026-01-01T00:00:00Z","data":{}}"#,
    );
    let timestamp = Utc::now().timestamp();
    let id = Uuid::new_v4().to_string();
    let signature = sign(secret, &id, timestamp, &body).expect("signed");
    notifier
        .send(&WebhookRequest {
            url: url.clone(),
            id,
            timestamp,
            signature,
            body,
        })
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf_table_the_default_policy_refuses_every_private_target_before_connecting() {
    let rx = Receiver::start(always_ok()).await;
    let port = rx.addr.port();
    let strict = HttpNotifier::new(CallbackPolicy::default(), FAST_TIMEOUTS).expect("a notifier");
    let http_only = HttpNotifier::new(
        CallbackPolicy::default()
            .allow_http(true)
            .allow_private(false),
        FAST_TIMEOUTS,
    )
    .expect("a notifier");

    let mut cases: Vec<(&str, &HttpNotifier, String)> = ssrf_urls(port)
        .into_iter()
        .map(|u| ("default", &strict, u))
        .collect();
    // Plain http allowed, private addresses still not: the address check alone must refuse.
    for u in [
        "http://127.0.0.1:{P}/hook",
        "http://localhost:{P}/hook",
        "http://[::1]:{P}/hook",
        "http://[::ffff:127.0.0.1]:{P}/hook",
        "http://vm:{P}/hook",
        "http://0.0.0.0:{P}/hook",
    ] {
        cases.push((
            "http-allowed",
            &http_only,
            u.replace("{P}", &port.to_string()),
        ));
    }

    let total = cases.len();
    let mut refused = 0;
    let mut not_refused = Vec::new();
    for (policy, notifier, raw) in &cases {
        let Ok(url) = CallbackUrl::parse(raw) else {
            // Refused already as a malformed URL.
            refused += 1;
            continue;
        };
        let outcome = send(notifier, &url).await;
        let error = outcome.error.clone().unwrap_or_default();
        if outcome.status.is_none() && error.starts_with("refused") {
            refused += 1;
        } else {
            not_refused.push(format!("{policy} {raw}: {outcome:?}"));
        }
    }
    let reached = rx.count();
    eprintln!("ssrf: {refused}/{total} refused by the notifier; the loopback receiver saw {reached} requests");
    assert!(not_refused.is_empty(), "not refused: {not_refused:#?}");
    assert_eq!(reached, 0, "nothing reached the local receiver");

    // Control: the same receiver is reachable when loopback is allowed.
    let dev =
        HttpNotifier::new(CallbackPolicy::local_development(), FAST_TIMEOUTS).expect("a notifier");
    let url = CallbackUrl::parse(&rx.url("/control")).expect("a URL");
    let outcome = send(&dev, &url).await;
    assert_eq!(outcome.status, Some(200), "{outcome:?}");
    assert_eq!(rx.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf_table_registration_is_refused_by_a_server_on_the_default_policy() {
    let mut cfg = config(&[10]);
    cfg.callback_policy = CallbackPolicy::default();
    let app = start(cfg, FAST_TIMEOUTS).await;
    let urls = ssrf_urls(8443);
    let mut refused = 0;
    let mut accepted = Vec::new();
    for url in &urls {
        let (status, body) = call(
            &app,
            Method::POST,
            "/api/v1/webhooks",
            &app.keys.agent_pro.raw,
            Some(json!({ "callback_url": url })),
        )
        .await;
        if status == 400 && body["param"] == "callback_url" {
            refused += 1;
        } else {
            accepted.push(format!("{url}: {status} {body}"));
        }
    }
    eprintln!("ssrf: {refused}/{} refused at registration", urls.len());
    assert!(accepted.is_empty(), "accepted: {accepted:#?}");
    let (status, list) = call(
        &app,
        Method::GET,
        "/api/v1/webhooks",
        &app.keys.agent_pro.raw,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(0));
    // A public https name is accepted (names are resolved only at delivery).
    app.subscribe_http(json!({ "callback_url": "https://hooks.example.com/jobs" }))
        .await;
}

// ---------------------------------------------------------------------------------------------
// Throughput
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delivery_throughput_to_a_local_receiver() {
    // More events than one read of the outbox returns (512), so the worker pages through it.
    const EVENTS: usize = 1_200;
    // What fails the test is a stall, not a slow machine: deliveries lost or stuck show as no
    // new arrival for this long. The rate is printed, and measured in earnest by the benches.
    const STALL: Duration = Duration::from_secs(15);
    let app = start(config(&[10, 20, 40, 80, 160]), FAST_TIMEOUTS).await;
    let rx = Receiver::start(always_ok()).await;
    let sub = app.subscribe(&rx.url("/bulk"), |_| {}).await;
    let jobs: Vec<Job> = (0..EVENTS).map(|_| app.job(&Spec::default())).collect();
    let expected: BTreeSet<String> = jobs.iter().map(|j| j.id.to_string()).collect();

    let started = Instant::now();
    for chunk in jobs.chunks(100) {
        app.service
            .upsert_jobs(chunk.to_vec())
            .await
            .expect("ingested");
    }
    let ingested = started.elapsed();
    let distinct_arrivals = || {
        rx.hits()
            .iter()
            .filter_map(|h| h.data_id().map(str::to_owned))
            .collect::<BTreeSet<_>>()
            .len()
    };
    let (mut seen, mut last_progress) = (0, Instant::now());
    let arrived = loop {
        let now_seen = distinct_arrivals();
        if now_seen >= EVENTS {
            break true;
        }
        if now_seen > seen {
            (seen, last_progress) = (now_seen, Instant::now());
        } else if last_progress.elapsed() > STALL {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let elapsed = started.elapsed();
    let hits = rx.hits();
    let distinct: BTreeSet<String> = hits
        .iter()
        .filter_map(|h| h.data_id().map(str::to_owned))
        .collect();
    let duplicates = hits.len() - distinct.len();
    let secs = elapsed.as_secs_f64();
    let span = match (hits.first(), hits.last()) {
        (Some(a), Some(b)) => (b.at - a.at).as_secs_f64(),
        _ => 0.0,
    };
    eprintln!(
        "throughput: {} of {EVENTS} events delivered in {secs:.2} s from the first ingest = \
         {:.0} deliveries/s ({:.0}/s from first to last arrival; ingest of {EVENTS} jobs in \
         batches of 100 took {:.2} s alongside; sled store); duplicates: \
         {duplicates}",
        distinct.len(),
        distinct.len() as f64 / secs,
        hits.len() as f64 / span.max(f64::EPSILON),
        ingested.as_secs_f64(),
    );
    if duplicates > 0 {
        // Which deliveries were sent twice, and what their own records say.
        let mut seen = BTreeSet::new();
        let repeated: BTreeSet<String> = hits
            .iter()
            .filter_map(|h| h.id.clone())
            .filter(|id| !seen.insert(id.clone()))
            .collect();
        for d in app.deliveries(sub.id).await {
            if repeated.contains(&d.event_id.to_string()) {
                let codes: Vec<_> = d.history.iter().map(|a| a.status_code).collect();
                eprintln!(
                    "throughput: sent twice without a failure or restart: event {} attempts {} \
                     status {:?} history {codes:?}",
                    d.event_id, d.attempts, d.status
                );
            }
        }
    }
    assert!(
        arrived,
        "{} of {EVENTS} arrived, then none for {STALL:?}",
        distinct.len()
    );
    assert_eq!(distinct, expected, "every event arrived");
    // Every receiver answered 200 and nothing restarted: a delivery sent twice is a bug.
    assert_eq!(
        duplicates, 0,
        "deliveries sent twice without a failure or a restart (listed above)"
    );
}

/// A job deleted after its `job.new` was fanned out is still delivered, as the event carries
/// its own copy of the job; one deleted before fan-out is announced to no one, and fan-out
/// moves on past it. First without a notifier (nothing is fanned out or sent until asked),
/// then on the same folder with one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_jobs_delivery_is_still_sent_and_its_unmade_one_is_dropped() {
    let rx = Receiver::start(always_ok()).await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("db");
    let quiet = TestApp::builder()
        .store(StoreKind::SledAt(path.clone()))
        .config(config(&[10, 20]))
        .seed(Dataset::generate(7, 2, 0))
        .build()
        .await;
    let hook = quiet.subscribe(&rx.url("/deleted"), |_| {}).await;
    let sent = quiet.ingest_new_job().await;
    assert!(sent.announced);
    assert_eq!(quiet.service.fan_out_now().await.expect("fanned out"), 1);
    quiet.service.delete_job(sent.id).await.expect("deleted");
    let unmade = quiet.ingest_new_job().await;
    assert!(unmade.announced);
    quiet.service.delete_job(unmade.id).await.expect("deleted");
    assert_eq!(
        quiet
            .service
            .fan_out_now()
            .await
            .expect("fanned out past it"),
        0
    );
    assert_eq!(
        quiet.store.fan_out_cursors().await.expect("cursors").len(),
        1
    );
    let made = quiet.deliveries(hook.id).await;
    assert_eq!(made.len(), 1, "{made:?}");
    let event = quiet
        .store
        .get_event(made[0].event_id)
        .await
        .expect("the outbox")
        .expect("the delivery's event");
    assert_eq!(event.data["id"], sent.id.to_string().as_str());
    drop(quiet.close().await);

    let notifier = HttpNotifier::new(CallbackPolicy::local_development(), FAST_TIMEOUTS)
        .expect("the HTTP notifier");
    let sending = TestApp::builder()
        .store(StoreKind::SledAt(path))
        .config(config(&[10, 20]))
        .notifier(Arc::new(notifier))
        .build()
        .await;
    assert!(sending.settle(&[hook.id]).await);
    let settled = sending.deliveries(hook.id).await;
    assert_eq!(settled.len(), 1, "{settled:?}");
    assert_eq!(settled[0].status, DeliveryStatus::Succeeded, "{settled:?}");
    let hits = rx.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].data_id(), Some(sent.id.to_string().as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_are_counted_by_outcome_with_their_attempts_and_durations() {
    let app = start_default(&[10, 20, 40, 80]).await;
    let rx = Receiver::start(script(|hit, seen| {
        match (hit.path.as_str(), seen.nth_same) {
            ("/flaky", 0) => Answer::status(500),
            ("/gone", _) => Answer::status(410),
            _ => Answer::ok(),
        }
    }))
    .await;
    let flaky = app.subscribe(&rx.url("/flaky"), |_| {}).await;
    let gone = app.subscribe(&rx.url("/gone"), |_| {}).await;
    app.ingest_new_job().await;
    assert!(app.settle(&[flaky.id, gone.id]).await);

    let outcome = |text: &str, outcome| {
        count(
            text,
            "job_listings_webhook_deliveries_total",
            &[("outcome", outcome)],
        )
    };
    // Counted just after each attempt is recorded: wait for the last of them.
    let all_counted = eventually(DEADLINE, || async {
        let text = app.api.metrics_text();
        outcome(&text, "succeeded") + outcome(&text, "failed_final") == 2.0
    })
    .await;
    let text = app.api.metrics_text();
    assert!(all_counted, "{text}");
    assert_eq!(outcome(&text, "succeeded"), 1.0);
    assert_eq!(outcome(&text, "failed_will_retry"), 1.0);
    assert_eq!(outcome(&text, "failed_final"), 1.0);
    assert_eq!(outcome(&text, "failed_unsent"), 0.0);
    let duration = "job_listings_webhook_delivery_duration_seconds_count";
    assert_eq!(count(&text, duration, &[]), 3.0, "one per attempt");
    let attempts = "job_listings_webhook_delivery_attempts";
    assert_eq!(count(&text, &format!("{attempts}_count"), &[]), 2.0);
    assert_eq!(count(&text, &format!("{attempts}_sum"), &[]), 3.0);
    assert_eq!(
        count(&text, "job_listings_outbox_pending_deliveries", &[]),
        0.0,
        "nothing left pending"
    );
    assert_eq!(
        count(
            &text,
            "job_listings_webhook_subscriptions",
            &[("status", "disabled")]
        ),
        1.0,
        "410 disables"
    );
    assert!(
        count(
            &text,
            "job_listings_store_write_duration_seconds_count",
            &[("operation", "deliveries")]
        ) >= 3.0
    );
}

#[tokio::test]
async fn the_outbox_backlog_counts_deliveries_made_and_not_yet_sent() {
    // No notifier: fan-out makes the deliveries, nothing sends them.
    let app = TestApp::builder()
        .config(config(&[10]))
        .seed(Dataset {
            companies: Dataset::generate(7, 2, 0).companies,
            jobs: Vec::new(),
        })
        .build()
        .await;
    let first = app.subscribe("http://127.0.0.1:9/a", |_| {}).await;
    app.subscribe("http://127.0.0.1:9/b", |_| {}).await;
    app.ingest_new_job().await;
    app.ingest_new_job().await;
    assert_eq!(app.service.fan_out_now().await.expect("fanned out"), 4);
    assert_eq!(app.service.stats().expect("stats").outbox_backlog, 4);
    // Deleting a subscription fails what it held pending.
    let r = app
        .delete_webhook(&app.keys.agent_pro.raw, &first.id.to_string())
        .await;
    assert_eq!(r.status.as_u16(), 204, "{}", r.text);
    assert_eq!(app.service.stats().expect("stats").outbox_backlog, 2);
}

/// A subscription that opts into `job.updated` and `job.closed` over the HTTP API is sent
/// each, in order, with the job as it then is; one that does not is sent `job.new` only, as
/// before there was a choice. Unknown event types are refused, naming the known ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_opt_into_updates_and_closings_with_event_types() {
    let app = start(config(&[2_000]), FAST_TIMEOUTS).await;
    let rx = Receiver::start(always_ok()).await;
    let (all, _) = app
        .subscribe_http(json!({
            "callback_url": rx.url("/all"),
            "event_types": ["job.closed", "job.new", "job.updated", "job.new"],
        }))
        .await;
    let listed = app.webhook_http(all).await;
    assert_eq!(
        listed["event_types"],
        json!(["job.new", "job.updated", "job.closed"])
    );
    let (plain, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/plain") }))
        .await;
    assert_eq!(
        app.webhook_http(plain).await["event_types"],
        json!(["job.new"])
    );

    let job = app.job(&Spec::default());
    app.service.upsert_job(job.clone()).await.expect("ingested");
    let changed = Job {
        role: "Webhook Test Role, Changed".to_owned(),
        ..job.clone()
    };
    app.service
        .upsert_job(changed.clone())
        .await
        .expect("updated");
    // The same again is no change, and announces nothing.
    app.service.upsert_job(changed).await.expect("same");
    app.service.close_job(job.id).await.expect("closed");

    assert!(
        eventually(DEADLINE, || async {
            rx.hits_to("/all").len() >= 3 && !rx.hits_to("/plain").is_empty()
        })
        .await,
        "{} and {} arrived",
        rx.hits_to("/all").len(),
        rx.hits_to("/plain").len()
    );
    assert!(app.settle(&[all, plain]).await);
    // Deliveries go out side by side, so they may arrive in any order (as with every
    // webhook sender); each is sent once.
    let kinds = |path| -> Vec<String> {
        let mut kinds: Vec<String> = rx
            .hits_to(path)
            .iter()
            .map(|h| h.kind().expect("a type").to_owned())
            .collect();
        kinds.sort();
        kinds
    };
    assert_eq!(kinds("/all"), ["job.closed", "job.new", "job.updated"]);
    assert_eq!(kinds("/plain"), ["job.new"]);
    let hits = rx.hits_to("/all");
    let closed = hits
        .iter()
        .find(|h| h.kind() == Some("job.closed"))
        .expect("a closing");
    assert_eq!(closed.data_id(), Some(job.id.to_string().as_str()));
    assert_eq!(closed.json["data"]["status"], "closed");

    // PATCH back to the default with null; an unknown type is a 400 naming the known ones.
    let (status, body) = call(
        &app,
        Method::PATCH,
        &format!("/api/v1/webhooks/{all}"),
        &app.keys.agent_pro.raw,
        Some(json!({ "event_types": null })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["event_types"], json!(["job.new"]));
    let (status, body) = call(
        &app,
        Method::PATCH,
        &format!("/api/v1/webhooks/{all}"),
        &app.keys.agent_pro.raw,
        Some(json!({ "event_types": ["job.deleted"] })),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["param"], "event_types");
    assert!(body["detail"]
        .as_str()
        .is_some_and(|d| d.contains("job.updated")));
}

/// A repost is never a second `job.new`: a receiver of every event type hears of it as a
/// `job.updated` of its canonical job (listing the copy), and one of `job.new` only hears of
/// the job once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repost_reaches_receivers_as_an_update_of_its_canonical_job() {
    let app = start(config(&[2_000]), FAST_TIMEOUTS).await;
    let rx = Receiver::start(always_ok()).await;
    let (all, _) = app
        .subscribe_http(json!({
            "callback_url": rx.url("/all"),
            "event_types": ["job.new", "job.updated", "job.closed"],
        }))
        .await;
    let (plain, _) = app
        .subscribe_http(json!({ "callback_url": rx.url("/plain") }))
        .await;
    let original = app.job(&Spec::default());
    let repost = Job {
        id: JobId(Uuid::new_v4()),
        source_url: format!("{}?again", original.source_url),
        posted_at: original.posted_at + chrono::Duration::days(3),
        ..original.clone()
    };
    app.service
        .upsert_job(original.clone())
        .await
        .expect("ingested");
    let outcome = app
        .service
        .upsert_job(repost.clone())
        .await
        .expect("ingested");
    assert!(!outcome.announced);
    assert!(
        eventually(DEADLINE, || async {
            rx.hits_to("/all").len() >= 2 && !rx.hits_to("/plain").is_empty()
        })
        .await
    );
    assert!(app.settle(&[all, plain]).await);
    let mut seen: Vec<(String, String)> = rx
        .hits_to("/all")
        .iter()
        .map(|h| {
            (
                h.kind().expect("a type").to_owned(),
                h.data_id().expect("an id").to_owned(),
            )
        })
        .collect();
    seen.sort();
    let canonical = original.id.to_string();
    assert_eq!(
        seen,
        [
            ("job.new".to_owned(), canonical.clone()),
            ("job.updated".to_owned(), canonical.clone()),
        ]
    );
    let update = rx
        .hits_to("/all")
        .into_iter()
        .find(|h| h.kind() == Some("job.updated"))
        .expect("an update");
    assert_eq!(update.json["data"]["reposts"][0]["id"], json!(repost.id));
    let plain_hits = rx.hits_to("/plain");
    assert_eq!(plain_hits.len(), 1, "job.new once");
    assert_eq!(plain_hits[0].data_id(), Some(canonical.as_str()));
}
