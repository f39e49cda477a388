//! Several server replicas on one PostgreSQL database, each a real hyper server on its own
//! loopback port with its own `PgStore` (its own pool and LISTEN connection), as separate
//! processes would be. They need a server: `DATABASE_URL`, by default
//! `postgres://postgres@127.0.0.1:5432/test`; ignored unless asked for with `--ignored`. Each
//! test works in a schema of its own, dropped afterwards.
//!
//! Checked: what one replica writes (keys, revocations, companies, jobs, subscriptions) is
//! served by the others once their followers have caught up with the change feed (the times
//! that took are printed: run with `--nocapture`); with quota Q and calls spread over three
//! replicas exactly Q succeed; each new job is delivered once although every replica runs a
//! delivery worker; a replica that dies mid-delivery delays the delivery by its lease and
//! loses nothing.
//!
//! No test passes or fails by the clock: each waits for a state (a follower's position in the
//! change feed, a stored delivery status) with a generous bound that fails loudly, and a
//! follower is held still at a barrier where a test needs it behind.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use job_listings::demo::Dataset;
use job_listings::domain::{Company, DeliveryStatus, Job, JobStatus, Plan, WebhookId};
use job_listings::service::{DeliveryConfig, NewKey, Quotas, SecretKey, ServiceConfig};
use job_listings::store::{Change, PgStore, Store};
use job_listings::webhooks::{CallbackPolicy, HttpNotifier, HttpNotifierConfig, RetryPolicy};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::pg::TestSchema;
use crate::support::tap::{Tap, TappedStore};
use crate::support::wire::client;
use crate::support::{
    always_ok, eventually, script, Answer, Auth, Latch, Receiver, StoreKind, TestApp,
};

/// The longest a wait for a state may take before the test fails (a follower catching up, a
/// delivery settling): far beyond what any of them takes, even on a loaded machine. What
/// decides a test is the state, not how soon it came: the times are printed.
const STATE_LIMIT: Duration = Duration::from_secs(60);

/// A replica: an app of its own on the shared schema, and where its follower is.
struct Replica {
    app: TestApp,
    follower: Arc<Follower>,
}

impl std::ops::Deref for Replica {
    type Target = TestApp;
    fn deref(&self) -> &TestApp {
        &self.app
    }
}

impl std::ops::DerefMut for Replica {
    fn deref_mut(&mut self) -> &mut TestApp {
        &mut self.app
    }
}

/// A replica's follower as its store sees it: the position it applied up to, and a barrier
/// it can be held at.
#[derive(Default)]
struct Follower {
    /// The position the follower last asked to read after: it has applied every change up to
    /// it.
    applied: AtomicU64,
    /// Its last read was a full batch: more changes wait.
    behind: AtomicBool,
    /// A barrier armed by the test, and whether it holds only once the follower is behind.
    hold: Mutex<Option<(Parked, bool)>>,
}

/// A follower held at its next read of the change feed: `held` opens once it is, and the test
/// opens `release` to let it go.
#[derive(Clone, Default)]
struct Parked {
    held: Latch,
    release: Latch,
}

impl Follower {
    /// Holds the follower at its next read.
    fn park(&self) -> Parked {
        self.arm(false)
    }

    /// Holds the follower at the first read it makes after a full batch, that is while it is
    /// behind by more than a batch.
    fn park_when_behind(&self) -> Parked {
        self.arm(true)
    }

    fn arm(&self, when_behind: bool) -> Parked {
        let parked = Parked::default();
        *self.hold.lock().unwrap_or_else(|e| e.into_inner()) = Some((parked.clone(), when_behind));
        parked
    }
}

#[async_trait::async_trait]
impl Tap for Follower {
    async fn before_changes(&self, after: u64, _limit: usize) {
        self.applied.fetch_max(after, Ordering::SeqCst);
        let behind = self.behind.load(Ordering::SeqCst);
        let parked = {
            let mut hold = self.hold.lock().unwrap_or_else(|e| e.into_inner());
            match hold.as_ref() {
                Some((_, when_behind)) if !when_behind || behind => hold.take().map(|(p, _)| p),
                _ => None,
            }
        };
        if let Some(parked) = parked {
            parked.held.open();
            parked.release.opened(STATE_LIMIT).await;
        }
    }

    async fn after_changes(&self, _after: u64, limit: usize, changes: &[Change]) {
        self.behind.store(changes.len() == limit, Ordering::SeqCst);
    }
}

/// What every replica of one test shares: the schema, the sealing key and the settings.
struct Cluster {
    schema: TestSchema,
    secret: [u8; 32],
    quota: u64,
    lease: Duration,
    client: reqwest::Client,
}

impl Cluster {
    async fn new(quota: u64, lease: Duration) -> Self {
        Self {
            schema: TestSchema::create().await,
            secret: SecretKey::generate().to_bytes(),
            quota,
            lease,
            client: client(),
        }
    }

    /// A replica; with `send_timeout`, it also delivers webhooks.
    async fn replica(&self, send_timeout: Option<Duration>) -> Replica {
        self.replica_with(send_timeout, |_| {}).await
    }

    /// A replica whose settings `edit` changes.
    async fn replica_with(
        &self,
        send_timeout: Option<Duration>,
        edit: impl FnOnce(&mut ServiceConfig),
    ) -> Replica {
        let mut config = ServiceConfig::default()
            .quotas(Quotas::default().developer(self.quota))
            .callback_policy(CallbackPolicy::local_development())
            .secret_key(Some(SecretKey::from_bytes(self.secret)))
            .delivery(
                DeliveryConfig::default()
                    .retry(
                        RetryPolicy::default()
                            .delays(vec![Duration::from_millis(200); 5])
                            .jitter(0.1),
                    )
                    .poll_interval(Duration::from_millis(50))
                    .lease(self.lease),
            )
            // The catch-up read: short, so that a follower that applied the last change reads
            // again (and shows where it is) soon after, with no newer change to wake it.
            .follow_poll_interval(Duration::from_millis(50));
        edit(&mut config);
        let follower = Arc::new(Follower::default());
        let pg: Arc<dyn Store> = Arc::new(
            PgStore::open(&self.schema.config(8))
                .await
                .expect("the PostgreSQL store opens"),
        );
        let store = TappedStore::new(pg, follower.clone());
        let mut builder = TestApp::builder()
            .store(StoreKind::Given(Arc::new(store)))
            .config(config);
        if let Some(timeout) = send_timeout {
            let notifier = HttpNotifier::new(
                CallbackPolicy::local_development(),
                HttpNotifierConfig::default()
                    .connect_timeout(Duration::from_secs(1))
                    .request_timeout(timeout),
            )
            .expect("a notifier");
            builder = builder.notifier(Arc::new(notifier));
        }
        Replica {
            app: builder.spawn().await,
            follower,
        }
    }

    /// Adds the companies and issues a key of `plan` through `first`; returns the key once
    /// every replica in `all` accepts it.
    async fn seed(&self, first: &Replica, all: &[&Replica], plan: Plan) -> (Vec<Company>, String) {
        let companies = companies();
        first
            .service
            .upsert_companies(companies.clone())
            .await
            .expect("companies");
        let (key, _) = first
            .service
            .create_key(NewKey::new(plan))
            .await
            .expect("a key");
        let key = key.expose().to_owned();
        for (i, r) in all.iter().enumerate() {
            caught_up(&format!("the key on replica {i}"), first, r).await;
            let (status, body) = self.get(r, "/api/v1/usage", &key).await;
            assert_eq!(status, StatusCode::OK, "the key on replica {i}: {body}");
        }
        (companies, key)
    }

    /// Registers a webhook for `url` through `via`; returns its id once every replica in `all`
    /// serves it.
    async fn subscribe(&self, via: &Replica, all: &[&Replica], key: &str, url: &str) -> WebhookId {
        let body = json!({ "callback_url": url });
        let (status, hook) = self
            .call(via, Method::POST, "/api/v1/webhooks", key, Some(body))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{hook}");
        let id = hook["id"].as_str().expect("an id");
        let path = format!("/api/v1/webhooks/{id}");
        for (i, r) in all.iter().enumerate() {
            caught_up(&format!("the subscription on replica {i}"), via, r).await;
            let (status, body) = self.get(r, &path, key).await;
            assert_eq!(
                status,
                StatusCode::OK,
                "the subscription on replica {i}: {body}"
            );
        }
        WebhookId::parse(id).expect("a webhook id")
    }

    async fn call(
        &self,
        r: &Replica,
        method: Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let resp = r.call(method, path, key, body.as_ref()).await;
        (resp.status, resp.body)
    }

    async fn get(&self, r: &Replica, path: &str, key: &str) -> (StatusCode, Value) {
        self.call(r, Method::GET, path, key, None).await
    }
}

/// Waits until `reader`'s follower has applied every change in the feed as `writer` sees it
/// now (a write `writer` just made among them); returns how long that took, or fails the test
/// after [`STATE_LIMIT`].
async fn caught_up(what: &str, writer: &Replica, reader: &Replica) -> Duration {
    let head = writer
        .store
        .change_feed()
        .expect("a shared store")
        .head()
        .await
        .expect("the feed's head");
    let started = Instant::now();
    let reached = eventually(STATE_LIMIT, || async {
        reader.follower.applied.load(Ordering::SeqCst) >= head
    })
    .await;
    assert!(
        reached,
        "{what}: the follower applied up to {} of {head} within {STATE_LIMIT:?}",
        reader.follower.applied.load(Ordering::SeqCst)
    );
    started.elapsed()
}

/// Waits until none of a subscription's deliveries is pending; returns them.
async fn settled(r: &Replica, hook: WebhookId) -> Vec<job_listings::domain::Delivery> {
    let read = || async {
        r.store
            .deliveries_of(hook, usize::MAX)
            .await
            .expect("the deliveries")
    };
    let done = eventually(STATE_LIMIT, || async {
        read()
            .await
            .iter()
            .all(|d| d.status != DeliveryStatus::Pending)
    })
    .await;
    let last = read().await;
    assert!(
        done,
        "deliveries still pending after {STATE_LIMIT:?}: {last:?}"
    );
    last
}

/// Ingests a marker job of `company` through `via` and waits until `rx` got it: once it
/// arrived and nothing is pending, anything announced before it was delivered too. Returns
/// `n` replicas that all deliver webhooks, with the companies, an Agent Pro key, a receiver
/// that answers 200 and a subscription to it registered through the first replica.
struct Delivering {
    cluster: Cluster,
    replicas: Vec<Replica>,
    companies: Vec<Company>,
    key: String,
    rx: Receiver,
    hook: WebhookId,
}

async fn delivering(n: usize) -> Delivering {
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let mut replicas = Vec::with_capacity(n);
    for _ in 0..n {
        replicas.push(cluster.replica(Some(Duration::from_secs(5))).await);
    }
    let all: Vec<&Replica> = replicas.iter().collect();
    let (companies, key) = cluster.seed(&replicas[0], &all, Plan::AgentPro).await;
    let rx = Receiver::start(always_ok()).await;
    let hook = cluster
        .subscribe(&replicas[0], &all, &key, &rx.url("/jobs"))
        .await;
    Delivering {
        cluster,
        replicas,
        companies,
        key,
        rx,
        hook,
    }
}

/// the job's id.
async fn deliver_marker(via: &Replica, company: &Company, rx: &Receiver) -> String {
    let marker = job(company, "marker");
    via.service
        .upsert_job(marker.clone())
        .await
        .expect("ingested");
    let marker_id = marker.id.0.to_string();
    assert!(
        eventually(STATE_LIMIT, || async {
            rx.hits()
                .iter()
                .any(|h| h.data_id() == Some(marker_id.as_str()))
        })
        .await,
        "the marker job was never delivered"
    );
    marker_id
}

fn companies() -> Vec<Company> {
    Dataset::generate(99, 3, 0).companies
}

/// A fresh active job of `company` whose role holds `word`.
fn job(company: &Company, word: &str) -> Job {
    let mut job = crate::support::data::another(&Dataset::generate(99, 3, 1).jobs.remove(0));
    job.company_id = company.id;
    job.company_name = company.name.clone();
    job.role = format!("Engineer {word}");
    job.status = JobStatus::Active;
    job.activated_at = None;
    job.posted_at = chrono::Utc::now();
    job
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn what_one_replica_writes_the_others_serve_once_they_followed_it() {
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let a = cluster.replica(None).await;
    let b = cluster.replica(None).await;
    let c = cluster.replica(None).await;

    // A key issued on A works on B and C.
    let (key, record) = a
        .service
        .create_key(NewKey::new(Plan::Developer))
        .await
        .expect("a key");
    let key = key.expose().to_owned();
    let mut times = Vec::new();
    for (name, r) in [("B", &b), ("C", &c)] {
        let took = caught_up(&format!("the key on {name}"), &a, r).await;
        let (status, body) = cluster.get(r, "/api/v1/usage", &key).await;
        assert_eq!(status, StatusCode::OK, "the key on {name}: {body}");
        times.push(("key", name, took));
    }

    // Companies written on A are served by C.
    let companies = companies();
    a.service
        .upsert_companies(companies.clone())
        .await
        .expect("companies");
    let company_path = format!("/api/v1/companies/{}", companies[0].id.0);
    let took = caught_up("a company on C", &a, &c).await;
    let (status, body) = cluster.get(&c, &company_path, &key).await;
    assert_eq!(status, StatusCode::OK, "a company on C: {body}");
    times.push(("company", "C", took));

    // A job ingested on B is searchable on A and C.
    let word = format!("zq{}", &Uuid::new_v4().simple().to_string()[..8]);
    let new_job = job(&companies[0], &word);
    let ingested_at = Instant::now();
    b.service
        .upsert_job(new_job.clone())
        .await
        .expect("ingested");
    let search = format!("/api/v1/jobs?q={word}");
    for (name, r) in [("A", &a), ("C", &c)] {
        caught_up(&format!("the job on {name}"), &b, r).await;
        let (status, body) = cluster.get(r, &search, &key).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body["data"][0]["id"],
            json!(new_job.id.0.to_string()),
            "the job on {name}: {body}"
        );
        times.push(("job", name, ingested_at.elapsed()));
    }

    // Closed on C: gone from A's and B's results.
    c.service.close_job(new_job.id).await.expect("closed");
    for (name, r) in [("A", &a), ("B", &b)] {
        caught_up(&format!("the close on {name}"), &c, r).await;
        let (status, body) = cluster.get(r, &search, &key).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["data"], json!([]), "the close on {name}: {body}");
    }

    // Revoked on C: refused by A and B.
    c.service.revoke_key(record.id).await.expect("revoked");
    for (name, r) in [("A", &a), ("B", &b)] {
        let took = caught_up(&format!("the revocation on {name}"), &c, r).await;
        let (status, body) = cluster.get(r, "/api/v1/usage", &key).await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "the revocation on {name}: {body}"
        );
        times.push(("revocation", name, took));
    }
    eprintln!("replicas: times until the followers had applied the write {times:?}");
}

/// A job deleted on one replica is gone from the others' searches (counted totals included)
/// and details, and a company deleted on one is gone from the others' catalogs, while its
/// closed job is still served everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn what_one_replica_deletes_the_others_drop() {
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let a = cluster.replica(None).await;
    let b = cluster.replica(None).await;
    let (companies, key) = cluster.seed(&a, &[&a, &b], Plan::Enterprise).await;
    let word = format!("zd{}", &Uuid::new_v4().simple().to_string()[..8]);
    let (kept, deleted) = (job(&companies[0], &word), job(&companies[0], &word));
    let mut closed = job(&companies[1], &word);
    closed.status = JobStatus::Closed;
    a.service
        .upsert_jobs(vec![kept.clone(), deleted.clone(), closed.clone()])
        .await
        .expect("ingested");
    let search = format!("/api/v1/jobs?q={word}");
    caught_up("the jobs on B", &a, &b).await;
    let (_, body) = cluster.get(&b, &search, &key).await;
    assert_eq!(
        body["pagination"]["total"],
        json!(2),
        "the jobs on B: {body}"
    );

    a.service.delete_job(deleted.id).await.expect("deleted");
    caught_up("the delete on B", &a, &b).await;
    let (status, body) = cluster.get(&b, &search, &key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["pagination"]["total"],
        json!(1),
        "the delete on B: {body}"
    );
    assert_eq!(
        body["data"][0]["id"],
        json!(kept.id.0.to_string()),
        "{body}"
    );
    let detail = format!("/api/v1/jobs/{}", deleted.id.0);
    assert_eq!(
        cluster.get(&b, &detail, &key).await.0,
        StatusCode::NOT_FOUND
    );

    // Deleted on B: A's catalog drops it too. Its closed job stays, without a company record.
    b.service
        .delete_company(companies[1].id)
        .await
        .expect("deleted");
    let company = format!("/api/v1/companies/{}", companies[1].id.0);
    caught_up("the company's delete on A", &b, &a).await;
    assert_eq!(
        cluster.get(&a, &company, &key).await.0,
        StatusCode::NOT_FOUND
    );
    assert!(!a.service.has_company(companies[1].id));
    let (status, body) = cluster
        .get(&a, &format!("/api/v1/jobs/{}", closed.id.0), &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["company"].is_null(), "{body}");
}

/// A replica started on a database that already holds jobs builds its index from them (from
/// PostgreSQL's text of each job's `jsonb`): it finds every active one, by a word of its role,
/// of its description with escapes in it, or of nothing, and none of the closed ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn a_replica_started_later_indexes_every_job_already_stored() {
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let a = cluster.replica(None).await;
    let (companies, key) = cluster.seed(&a, &[&a], Plan::Enterprise).await;
    let word = format!("zr{}", &Uuid::new_v4().simple().to_string()[..8]);
    let mut jobs: Vec<Job> = (0..1_200)
        .map(|n| job(&companies[n % companies.len()], &word))
        .collect();
    jobs[7].description = format!("Quoted \"{word}x\"\n\tand Zürich — tabs");
    for closed in jobs.iter_mut().skip(3).step_by(10) {
        closed.status = JobStatus::Closed;
    }
    a.service.upsert_jobs(jobs.clone()).await.expect("ingested");
    let active = jobs
        .iter()
        .filter(|j| j.status == JobStatus::Active)
        .count();

    let b = cluster.replica(None).await;
    let (status, body) = cluster
        .get(&b, &format!("/api/v1/jobs?q={word}&per_page=1"), &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["pagination"]["total"], json!(active), "{body}");
    let (_, body) = cluster
        .get(&b, &format!("/api/v1/jobs?q={word}x"), &key)
        .await;
    assert_eq!(
        body["data"][0]["id"],
        json!(jobs[7].id.0.to_string()),
        "{body}"
    );
    assert_eq!(body["pagination"]["total"], json!(1), "{body}");
    let (_, body) = cluster.get(&b, "/api/v1/jobs?q=z%C3%BCrich", &key).await;
    assert_eq!(body["pagination"]["total"], json!(1), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn exactly_the_quota_succeeds_with_calls_spread_over_three_replicas() {
    const QUOTA: u64 = 60;
    const CALLS: usize = 180;
    let cluster = Cluster::new(QUOTA, Duration::from_secs(60)).await;
    let replicas = [
        cluster.replica(None).await,
        cluster.replica(None).await,
        cluster.replica(None).await,
    ];
    let all: Vec<&Replica> = replicas.iter().collect();
    let (_, key) = cluster.seed(&replicas[0], &all, Plan::Developer).await;

    let cluster = Arc::new(cluster);
    let bases: Vec<String> = replicas.iter().map(|r| r.base().to_owned()).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for lane in 0..30 {
        let (cluster, bases, key) = (cluster.clone(), bases.clone(), key.clone());
        tasks.spawn(async move {
            let mut statuses = Vec::new();
            for i in (lane..CALLS).step_by(30) {
                let url = format!("{}/api/v1/companies", bases[i % bases.len()]);
                let resp = cluster
                    .client
                    .get(url)
                    .header("X-API-Key", &key)
                    .send()
                    .await
                    .expect("an answer");
                statuses.push((i % bases.len(), resp.status()));
            }
            statuses
        });
    }
    let mut ok_per_replica = [0u64; 3];
    let mut refused = 0;
    let mut other = Vec::new();
    while let Some(done) = tasks.join_next().await {
        for (replica, status) in done.expect("a lane") {
            match status {
                StatusCode::OK => ok_per_replica[replica] += 1,
                StatusCode::TOO_MANY_REQUESTS => refused += 1,
                s => other.push(s),
            }
        }
    }
    eprintln!("replicas: {CALLS} calls, quota {QUOTA}: 2xx per replica {ok_per_replica:?}, {refused} refused");
    assert!(other.is_empty(), "only 200 and 429: {other:?}");
    assert_eq!(
        ok_per_replica.iter().sum::<u64>(),
        QUOTA,
        "exactly the quota"
    );
    assert!(
        ok_per_replica.iter().filter(|n| **n > 0).count() >= 2,
        "successes came from several replicas"
    );
    for r in &replicas {
        let (status, usage) = cluster.get(r, "/api/v1/usage", &key).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(usage["calls_used"], json!(QUOTA));
        assert_eq!(usage["calls_remaining"], json!(0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn a_job_written_right_after_a_subscription_on_another_replica_is_announced() {
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let replicas = [
        cluster.replica(Some(Duration::from_secs(5))).await,
        cluster.replica(None).await,
    ];
    let all: Vec<&Replica> = replicas.iter().collect();
    let (companies, key) = cluster.seed(&replicas[0], &all, Plan::AgentPro).await;
    let rx = Receiver::start(always_ok()).await;
    // Registered on the first replica; the job is written on the second while its follower is
    // held still, so it cannot have seen the subscription.
    let parked = replicas[1].follower.park();
    assert!(
        parked.held.opened(STATE_LIMIT).await,
        "the second replica's follower never read again"
    );
    let (status, hook) = cluster
        .call(
            &replicas[0],
            Method::POST,
            "/api/v1/webhooks",
            &key,
            Some(json!({ "callback_url": rx.url("/jobs") })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    let job = job(&companies[0], "right after");
    let outcome = replicas[1]
        .service
        .upsert_job(job.clone())
        .await
        .expect("ingested");
    assert!(outcome.announced);
    assert!(
        eventually(STATE_LIMIT, || async { rx.count() >= 1 }).await,
        "the job was never delivered"
    );
    assert_eq!(rx.hits()[0].data_id(), Some(job.id.0.to_string().as_str()));
    parked.release.open();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn each_new_job_is_delivered_once_although_every_replica_delivers() {
    const JOBS_PER_REPLICA: usize = 10;
    // The cluster holds the schema: kept to the end.
    let Delivering {
        cluster: _cluster,
        replicas,
        companies,
        rx,
        hook,
        ..
    } = delivering(3).await;

    let mut expected = std::collections::BTreeSet::new();
    for (i, r) in replicas.iter().enumerate() {
        let jobs: Vec<Job> = (0..JOBS_PER_REPLICA)
            .map(|n| job(&companies[n % companies.len()], &format!("r{i}n{n}")))
            .collect();
        expected.extend(jobs.iter().map(|j| j.id.0.to_string()));
        r.service.upsert_jobs(jobs).await.expect("ingested");
    }
    let total = expected.len();
    assert!(
        eventually(STATE_LIMIT, || async { rx.count() >= total }).await,
        "{} of {total} delivered",
        rx.count()
    );
    settled(&replicas[0], hook).await;
    // A later job marks how far delivery has got: once it arrived and nothing is pending, a
    // duplicate of an earlier one would have arrived too.
    let marker_id = deliver_marker(&replicas[2], &companies[0], &rx).await;
    expected.insert(marker_id);
    let total = expected.len();
    let deliveries = settled(&replicas[0], hook).await;
    assert_eq!(deliveries.len(), total, "one delivery per job");
    assert!(
        deliveries
            .iter()
            .all(|d| d.status == DeliveryStatus::Succeeded && d.attempts == 1),
        "each delivered at its first attempt: {deliveries:?}"
    );
    let hits = rx.hits();
    let delivered: std::collections::BTreeSet<String> = hits
        .iter()
        .filter_map(|h| h.data_id().map(str::to_owned))
        .collect();
    let ids: std::collections::BTreeSet<&str> =
        hits.iter().filter_map(|h| h.id.as_deref()).collect();
    eprintln!(
        "replicas: {total} jobs over 3 replicas, {} requests received, {} distinct events",
        hits.len(),
        ids.len()
    );
    assert_eq!(delivered, expected, "every job announced");
    assert_eq!(hits.len(), total, "no job delivered twice");
    assert_eq!(ids.len(), total, "one webhook-id per job");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn a_job_ingested_by_two_replicas_at_once_is_announced_once() {
    const JOBS: usize = 12;
    let Delivering {
        cluster,
        replicas,
        companies,
        key,
        rx,
        hook,
    } = delivering(2).await;
    // Each job goes to both replicas at the same moment, as two crawlers sending it would.
    let jobs: Vec<Job> = (0..JOBS)
        .map(|n| job(&companies[n % companies.len()], &format!("twice{n}")))
        .collect();
    for j in &jobs {
        let (a, b) = tokio::join!(
            replicas[0].service.upsert_job(j.clone()),
            replicas[1].service.upsert_job(j.clone()),
        );
        a.expect("ingested by replica 0");
        b.expect("ingested by replica 1");
    }
    // A later job marks how far delivery has got: once it arrived and nothing is pending, a
    // second announcement of an earlier job would have arrived too.
    deliver_marker(&replicas[1], &companies[0], &rx).await;
    let deliveries = settled(&replicas[0], hook).await;
    assert_eq!(deliveries.len(), JOBS + 1, "one delivery per job");
    let hits = rx.hits();
    for j in &jobs {
        let id = j.id.0.to_string();
        let announced = hits
            .iter()
            .filter(|h| h.data_id() == Some(id.as_str()))
            .count();
        assert_eq!(announced, 1, "job {id} was announced {announced} times");
    }
    // The change feed holds one `job.new` per job, and nothing else for them.
    let (status, page) = cluster
        .get(&replicas[1], "/api/v1/changes?limit=500", &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    for j in &jobs {
        let id = j.id.0.to_string();
        let events: Vec<&str> = page["data"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["job"]["id"] == id.as_str())
            .filter_map(|e| e["type"].as_str())
            .collect();
        assert_eq!(events, ["job.new"], "the feed's events of job {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn a_replica_that_dies_mid_delivery_delays_the_delivery_by_its_lease_and_loses_nothing() {
    let lease = Duration::from_millis(1_500);
    let cluster = Cluster::new(1_000, lease).await;
    // Only A delivers at first; B ingests.
    let a = cluster.replica(Some(Duration::from_secs(30))).await;
    let b = cluster.replica(None).await;
    let (companies, key) = cluster.seed(&b, &[&a, &b], Plan::AgentPro).await;
    // The first request hangs (A dies while waiting for it); any later one succeeds.
    let rx = Receiver::start(script(|_, seen| {
        if seen.nth == 0 {
            Answer::ok().after(Duration::from_secs(20))
        } else {
            Answer::ok()
        }
    }))
    .await;
    let hook = cluster.subscribe(&b, &[&a], &key, &rx.url("/jobs")).await;

    b.service
        .upsert_job(job(&companies[0], "lease"))
        .await
        .expect("ingested");
    assert!(
        eventually(STATE_LIMIT, || async { rx.count() >= 1 }).await,
        "A started the attempt"
    );
    // A dies mid-attempt: its background work stops, its claim stays in the database.
    let died_at = Instant::now();
    let mut a = a;
    a.stop().await;
    a.service.shutdown().await.expect("stopped");
    drop(a);

    // C takes over once the lease has run out.
    let c = cluster.replica(Some(Duration::from_secs(5))).await;
    assert!(
        eventually(STATE_LIMIT, || async { rx.count() >= 2 }).await,
        "the delivery was taken over"
    );
    let taken_over_after = died_at.elapsed();
    let hits = rx.hits();
    eprintln!(
        "replicas: delivery taken over {taken_over_after:?} after the replica died (lease {lease:?})"
    );
    assert_eq!(hits[0].id, hits[1].id, "the same event, retried");
    assert!(hits[1].ok(), "the second attempt succeeded");
    assert!(
        hits[1].at.duration_since(hits[0].at) >= lease - Duration::from_millis(200),
        "not before the lease ran out"
    );
    // Recorded once, by C; a later job marks how far delivery has got, and nothing else came.
    let settled_once = settled(&c, hook).await;
    assert_eq!(settled_once.len(), 1, "{settled_once:?}");
    assert_eq!(
        (settled_once[0].status, settled_once[0].attempts),
        (DeliveryStatus::Succeeded, 1),
        "A's attempt was never recorded, C's was"
    );
    deliver_marker(&b, &companies[0], &rx).await;
    settled(&c, hook).await;
    let ids: Vec<Option<String>> = rx.hits().into_iter().map(|h| h.id).collect();
    assert_eq!(ids.len(), 3, "delivered once more, not again: {ids:?}");
    assert_eq!(ids[0], ids[1]);
    assert_ne!(ids[1], ids[2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn a_replica_far_behind_the_change_feed_is_not_ready_until_it_caught_up() {
    const BOUND: u64 = 100;
    const JOBS: usize = 5_000;
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let writer = cluster.replica(None).await;
    let reader = cluster
        .replica_with(None, |c| c.max_follower_lag = BOUND)
        .await;
    let (companies, key) = cluster
        .seed(&writer, &[&writer, &reader], Plan::Developer)
        .await;
    assert_eq!(readyz(&reader).await.0, StatusCode::OK);

    // One write of many changes: the reader's follower reads them a thousand at a time, and
    // knows the head is far ahead while it applies them. It is held still after its first
    // batch, so the test sees it behind however fast it would catch up.
    let parked = reader.follower.park_when_behind();
    let jobs: Vec<Job> = (0..JOBS)
        .map(|i| job(&companies[i % companies.len()], &format!("lagging{i}")))
        .collect();
    writer.service.upsert_jobs(jobs).await.expect("the jobs");
    assert!(
        parked.held.opened(STATE_LIMIT).await,
        "the reader's follower never read a full batch"
    );
    let (status, body) = readyz(&reader).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["status"], "not_ready", "{body}");
    assert!(
        body["follower_behind"].as_u64().is_some_and(|n| n > BOUND),
        "{body}"
    );
    assert_eq!(
        readyz(&writer).await.0,
        StatusCode::OK,
        "the writer is not behind"
    );

    // Ready again once it has applied them all, and then it serves them.
    parked.release.open();
    assert!(
        eventually(Duration::from_secs(180), || async {
            readyz(&reader).await.0 == StatusCode::OK
        })
        .await,
        "the reader never caught up"
    );
    let (status, page) = cluster
        .get(&reader, "/api/v1/jobs?q=engineer&per_page=1", &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page["pagination"]["total"]
            .as_u64()
            .is_some_and(|n| n >= JOBS as u64),
        "{page}"
    );
}

/// `GET /readyz` on a replica: the status and the body.
async fn readyz(r: &Replica) -> (StatusCode, Value) {
    let resp = r
        .request(Method::GET, "/readyz", Auth::None, &[], None)
        .await;
    (resp.status, resp.body)
}

/// Copies sent to two replicas form one group that every replica serves: the copy written on
/// B is found as a repost of the job written on A once B has followed A; closing the
/// canonical job on A hands the lead to the copy everywhere; a replica started later serves
/// the group from the stored jobs alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn copies_written_on_two_replicas_form_one_group_on_every_replica() {
    let cluster = Cluster::new(1_000, Duration::from_secs(60)).await;
    let a = cluster.replica(None).await;
    let b = cluster.replica(None).await;
    let (companies, key) = cluster.seed(&a, &[&a, &b], Plan::Enterprise).await;
    let word = format!("zg{}", &Uuid::new_v4().simple().to_string()[..8]);
    let original = job(&companies[0], &word);
    let mut repost = original.clone();
    repost.id = job_listings::domain::JobId(Uuid::new_v4());
    repost.source_url = format!("{}?reposted", original.source_url);
    repost.posted_at = original.posted_at + chrono::Duration::days(4);
    repost.description = format!("{} Apply soon.", original.description);

    a.service
        .upsert_job(original.clone())
        .await
        .expect("ingested");
    caught_up("the original on B", &a, &b).await;
    let outcome = b
        .service
        .upsert_job(repost.clone())
        .await
        .expect("ingested");
    assert!(!outcome.announced, "a repost is no second job.new");
    let id = |j: &Job| json!(j.id.0.to_string());
    caught_up("the repost on A", &b, &a).await;
    for (name, r) in [("A", &a), ("B", &b)] {
        let (_, body) = cluster
            .get(r, &format!("/api/v1/jobs?q={word}"), &key)
            .await;
        assert_eq!(body["pagination"]["total"], json!(1), "{name}: {body}");
        assert_eq!(body["data"][0]["id"], id(&original), "{name}: {body}");
        assert_eq!(
            body["data"][0]["reposts"][0]["id"],
            id(&repost),
            "{name}: {body}"
        );
        let (_, body) = cluster
            .get(r, &format!("/api/v1/jobs?q={word}&reposts=include"), &key)
            .await;
        assert_eq!(body["pagination"]["total"], json!(2), "{name}: {body}");
    }

    a.service.close_job(original.id).await.expect("closed");
    caught_up("the close on B", &a, &b).await;
    for (name, r) in [("A", &a), ("B", &b)] {
        let (_, body) = cluster
            .get(r, &format!("/api/v1/jobs?q={word}"), &key)
            .await;
        assert_eq!(
            body["data"][0]["id"],
            id(&repost),
            "{name}: the copy leads: {body}"
        );
        assert_eq!(body["data"][0]["repost_of"], Value::Null, "{name}: {body}");
    }
    let c = cluster.replica(None).await;
    let (_, body) = cluster
        .get(&c, &format!("/api/v1/jobs?q={word}"), &key)
        .await;
    assert_eq!(body["pagination"]["total"], json!(1), "C: {body}");
    assert_eq!(
        body["data"][0]["reposts"][0]["id"],
        id(&original),
        "C: {body}"
    );
}
