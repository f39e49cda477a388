//! kill -9 of the server process between ingest and delivery and in the middle of retries:
//! after a restart every acknowledged job's event reaches every matching subscriber.
//!
//! The parent test runs a receiver on 127.0.0.1 and re-executes this very test binary as a
//! child process (`crash_child_process_entry_point`, which does nothing unless
//! `JL_CRASH_CHILD` is set). The child opens a sled store in the parent's temporary folder,
//! runs the service with the real `HttpNotifier`, ingests jobs one by one and prints
//! `@@ACK <job id> <paths>` after each `upsert_job` returns. The parent SIGKILLs it at a random
//! moment, several times, then starts a last child that only delivers until nothing is left
//! to send (`@@SETTLED`), and counts losses (must be 0) and duplicates (reported; each must
//! have a kill between, docs/api.md's promise). Every child marks its requests with its number
//! (`?child=N`), so a repeat is known to come from one process or two, whatever the timing.
//!
//! The kill plan comes from a seed, printed at the start; `JL_TEST_SEED` replays it.

// The helpers of the `it` binary; these tests use a few of them.
#[allow(dead_code, unused_imports)]
#[path = "it/support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use job_listings::demo::Dataset;
use job_listings::domain::DeliveryStatus;
use job_listings::domain::{CallbackUrl, DomainTag, Job, JobId, JobStatus, Plan};
use job_listings::service::{
    DeliveryConfig, JobListingsService, NewKey, NewWebhook, ServiceConfig,
};
use job_listings::store::{Store, WebhookStore};
use job_listings::webhooks::{
    verify, AttemptOutcome, CallbackPolicy, HttpNotifier, HttpNotifierConfig, Notifier,
    RetryPolicy, WebhookRequest,
};
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdout};
use uuid::Uuid;

use support::child::{child_var, re_exec};
use support::data;
use support::store::open_sled;
use support::{script, Answer, Receiver};

const CHILD_TEST: &str = "crash_child_process_entry_point";
/// Ingest-and-kill cycles before the final drain.
const CYCLES: u64 = 5;
/// Jobs a child would ingest if it were not killed first.
const JOBS_PER_CHILD: u64 = 150;
/// The subscriptions: path, and which jobs they want.
const PATHS: [&str; 3] = ["/all", "/ai", "/remote"];
/// The longest the drain child may take to send everything; it fails the test loudly.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// A deterministic job per index: every third is tagged `ai`, every second is remote.
fn crash_job(companies: &[job_listings::domain::Company], i: u64) -> Job {
    let domain = if i.is_multiple_of(3) {
        "ai"
    } else {
        "engineering"
    };
    data::job(
        JobId(Uuid::from_u128(0xC4A5_0000_0000_0000_u128 + u128::from(i))),
        &companies[(i % 2) as usize],
        &format!("Crash Test Engineer {i}"),
        "Keeps going after kill -9.",
        &[domain],
        &["mid"],
        i.is_multiple_of(2),
        job_listings::demo::reference_time(),
        0.9,
        JobStatus::Active,
    )
}

/// The subscriptions a job must reach, decided here without the crate's matcher.
fn expected_paths(i: u64) -> Vec<&'static str> {
    let mut paths = vec!["/all"];
    if i.is_multiple_of(3) {
        paths.push("/ai");
    }
    if i.is_multiple_of(2) {
        paths.push("/remote");
    }
    paths
}

// ---------------------------------------------------------------------------------------------
// The child
// ---------------------------------------------------------------------------------------------

/// The real notifier, with `?child=N` on every URL: the receiver then knows which process sent
/// each request.
#[derive(Debug)]
struct Tagged {
    inner: HttpNotifier,
    child: u64,
}

#[async_trait::async_trait]
impl Notifier for Tagged {
    async fn send(&self, request: &WebhookRequest) -> AttemptOutcome {
        let mut url = request.url.url().clone();
        url.set_query(Some(&format!("child={}", self.child)));
        let mut tagged = request.clone();
        tagged.url = CallbackUrl::parse(url.as_str()).expect("the callback URL, tagged");
        self.inner.send(&tagged).await
    }
}

/// Whether nothing is left to send: every subscription fanned out to the log's head, and no
/// delivery pending (so none in flight either: an attempt is recorded after its answer).
async fn settled(service: &JobListingsService, store: &dyn Store) -> bool {
    if service.fan_out_now().await.is_err() {
        return false;
    }
    let (Ok(head), Ok(cursors), Ok(subs)) = (
        store.log_head().await,
        store.fan_out_cursors().await,
        store.scan_webhooks().await,
    ) else {
        return false;
    };
    if cursors.iter().any(|(_, at)| *at < head) {
        return false;
    }
    for sub in subs {
        match store.deliveries_of(sub.id, usize::MAX).await {
            Ok(ds) if ds.iter().all(|d| d.status != DeliveryStatus::Pending) => {}
            _ => return false,
        }
    }
    true
}

/// Not a test of its own: the body of the child process the crash test starts. Without
/// `JL_CRASH_CHILD` it returns at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_child_process_entry_point() {
    let Ok(mode) = std::env::var("JL_CRASH_CHILD") else {
        return;
    };
    // The previous child was killed and reaped, so its lock is gone; still, a locked folder
    // is tried again for a while.
    let store = open_sled(Path::new(&child_var("JL_CRASH_DIR")))
        .await
        .unwrap_or_else(|e| panic!("the sled store could not be opened: {e}"));
    let store = Arc::new(store);
    let receiver = child_var("JL_CRASH_RECEIVER");
    let first: u64 = child_var("JL_CRASH_FIRST").parse().expect("a number");
    let child: u64 = child_var("JL_CRASH_CHILD_NO").parse().expect("a number");

    let config = ServiceConfig::default()
        .callback_policy(CallbackPolicy::local_development())
        .delivery(
            DeliveryConfig::default()
                .retry(
                    RetryPolicy::default()
                        // Enough retries that a 500 never exhausts a delivery during the test.
                        .delays(
                            [20, 40, 80, 100, 100, 100, 100, 100, 100, 100, 100, 100]
                                .into_iter()
                                .map(Duration::from_millis)
                                .collect(),
                        )
                        .jitter(0.1),
                )
                .poll_interval(Duration::from_millis(20)),
        );
    // The receiver answers within 40 ms: a request that takes longer was held up by the
    // machine, and must not time out and be sent again by the same process.
    let notifier = HttpNotifier::new(
        CallbackPolicy::local_development(),
        HttpNotifierConfig::default()
            .connect_timeout(Duration::from_secs(1))
            .request_timeout(Duration::from_secs(10)),
    )
    .expect("a notifier");
    let service = JobListingsService::builder()
        .store(store.clone())
        .notifier(Arc::new(Tagged {
            inner: notifier,
            child,
        }))
        .config(config)
        .build()
        .await
        .expect("the service");
    let companies = Dataset::generate(11, 2, 0).companies;
    service
        .upsert_companies(companies.clone())
        .await
        .expect("companies");

    // Subscriptions live in the store: reuse them after a restart, create what is missing.
    let existing = store.scan_webhooks().await.expect("subscriptions");
    let path_of = |url: &CallbackUrl| url.url().path().to_owned();
    let missing: Vec<&str> = PATHS
        .iter()
        .copied()
        .filter(|p| !existing.iter().any(|s| path_of(&s.callback_url) == *p))
        .collect();
    if !missing.is_empty() {
        let (key, _) = service
            .create_key(NewKey::new(Plan::AgentPro))
            .await
            .expect("a key");
        for path in missing {
            let mut new =
                NewWebhook::new(CallbackUrl::parse(&format!("{receiver}{path}")).expect("a URL"));
            match path {
                "/ai" => new.domain_filters = vec![DomainTag::parse("ai").expect("a tag")],
                "/remote" => new.remote_only = true,
                _ => {}
            }
            service.create_webhook(&key, new).await.expect("a webhook");
        }
    }
    for sub in store.scan_webhooks().await.expect("subscriptions") {
        println!(
            "@@SUB {} {}",
            path_of(&sub.callback_url),
            sub.secret.expose()
        );
    }
    println!("@@READY");

    if mode == "ingest" {
        for i in first..first + JOBS_PER_CHILD {
            let outcome = service
                .upsert_job(crash_job(&companies, i))
                .await
                .expect("ingested");
            let paths = expected_paths(i);
            assert!(outcome.created, "job {i} is new");
            assert!(outcome.announced, "job {i} is announced");
            println!("@@ACK {} {}", outcome.id, paths.join(","));
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    } else {
        // Deliver, and say when nothing is left.
        let deadline = Instant::now() + DRAIN_LIMIT;
        while Instant::now() < deadline {
            if settled(&service, store.as_ref()).await {
                println!("@@SETTLED");
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // Deliver until killed.
    tokio::time::sleep(Duration::from_secs(120)).await;
}

// ---------------------------------------------------------------------------------------------
// The parent
// ---------------------------------------------------------------------------------------------

struct Spawned {
    child: Child,
    lines: tokio::io::Lines<BufReader<ChildStdout>>,
}

/// Starts child number `no` (which tags its requests with it).
fn spawn_child(mode: &str, no: u64, dir: &std::path::Path, receiver: &str, first: u64) -> Spawned {
    let mut child = re_exec(
        CHILD_TEST,
        [
            ("JL_CRASH_CHILD", mode.into()),
            ("JL_CRASH_CHILD_NO", no.to_string().into()),
            ("JL_CRASH_DIR", dir.join("db").into()),
            ("JL_CRASH_RECEIVER", receiver.into()),
            ("JL_CRASH_FIRST", first.to_string().into()),
        ],
    );
    let stdout = child.stdout.take().expect("the child's stdout");
    Spawned {
        child,
        lines: BufReader::new(stdout).lines(),
    }
}

/// What the children said.
#[derive(Default)]
struct Log {
    secrets: BTreeMap<String, String>,
    /// (path, job id) pairs that must be delivered.
    expected: BTreeSet<(String, String)>,
    acked_jobs: BTreeSet<String>,
    /// The drain child printed SETTLED.
    settled: bool,
}

impl Log {
    /// Takes one line of a child's output; returns (it was READY, it was an ACK).
    fn take(&mut self, line: &str) -> (bool, bool) {
        let Some(at) = line.find("@@") else {
            return (false, false);
        };
        let mut parts = line[at + 2..].split_whitespace();
        match parts.next() {
            Some("SUB") => {
                if let (Some(path), Some(secret)) = (parts.next(), parts.next()) {
                    self.secrets.insert(path.to_owned(), secret.to_owned());
                }
                (false, false)
            }
            Some("READY") => (true, false),
            Some("SETTLED") => {
                self.settled = true;
                (false, false)
            }
            Some("ACK") => {
                if let (Some(job), Some(paths)) = (parts.next(), parts.next()) {
                    self.acked_jobs.insert(job.to_owned());
                    for p in paths.split(',') {
                        self.expected.insert((p.to_owned(), job.to_owned()));
                    }
                }
                (false, true)
            }
            _ => (false, false),
        }
    }
}

/// Reads lines until READY (bounded).
async fn wait_ready(spawned: &mut Spawned, log: &mut Log) {
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = spawned.lines.next_line().await {
            if log.take(&line).0 {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "the child started and printed READY");
}

/// SIGKILLs the child, reaps it (releasing sled's lock) and reads what it printed before.
async fn kill(mut spawned: Spawned, log: &mut Log) {
    spawned.child.kill().await.expect("SIGKILL and wait");
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(5), spawned.lines.next_line()).await
    {
        log.take(&line);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_server_process_loses_no_webhook_deliveries() {
    if std::env::var("JL_CRASH_CHILD").is_ok() {
        return;
    }
    let seed: u64 = match std::env::var("JL_TEST_SEED") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("JL_TEST_SEED must be a number, not {v:?}")),
        Err(_) => rand::thread_rng().gen(),
    };
    eprintln!("crash: seed {seed} (JL_TEST_SEED={seed} replays the kill plan)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    // About half of all first attempts fail with 500 (so kills land mid-retry), and some
    // answers are slow (so kills land while a request is in flight).
    let rx = Receiver::start(script(|_, seen| {
        if seen.nth_same == 0 && seen.nth.is_multiple_of(2) {
            Answer::status(500)
        } else if seen.nth % 5 == 1 {
            Answer::ok().after(Duration::from_millis(40))
        } else {
            Answer::ok()
        }
    }))
    .await;
    let receiver = format!("http://{}", rx.addr);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut log = Log::default();
    let started = Instant::now();
    let mut kills = Vec::new();

    for cycle in 0..CYCLES {
        let mut child = spawn_child("ingest", cycle, dir.path(), &receiver, cycle * 10_000);
        wait_ready(&mut child, &mut log).await;
        // Kill after a random number of ACKs, or after a random time.
        let by_acks = rng.gen_bool(0.5);
        let acks_wanted: usize = rng.gen_range(1..=40);
        let ms: u64 = rng.gen_range(10..=400);
        let deadline = Instant::now() + Duration::from_millis(ms);
        let mut acks = 0;
        loop {
            let line = if by_acks {
                tokio::time::timeout(Duration::from_secs(10), child.lines.next_line()).await
            } else {
                let left = deadline.saturating_duration_since(Instant::now());
                match tokio::time::timeout(left, child.lines.next_line()).await {
                    Err(_) => break,
                    ok => ok,
                }
            };
            match line {
                Ok(Ok(Some(line))) => {
                    if log.take(&line).1 {
                        acks += 1;
                        if by_acks && acks >= acks_wanted {
                            break;
                        }
                    }
                }
                _ => break,
            }
        }
        kill(child, &mut log).await;
        kills.push(if by_acks {
            format!("after {acks_wanted} ACKs")
        } else {
            format!("after {ms} ms")
        });
    }

    // A last start that only delivers, until it has nothing left to send: then every request
    // any child made has arrived, and nothing more will.
    let mut drain = spawn_child("drain", CYCLES, dir.path(), &receiver, 0);
    wait_ready(&mut drain, &mut log).await;
    let drain_started = Instant::now();
    let settled = tokio::time::timeout(DRAIN_LIMIT + Duration::from_secs(10), async {
        while let Ok(Some(line)) = drain.lines.next_line().await {
            log.take(&line);
            if log.settled {
                return;
            }
        }
    })
    .await;
    assert!(
        settled.is_ok() && log.settled,
        "the drain child did not settle within {DRAIN_LIMIT:?} (seed {seed})"
    );
    let drain_took = drain_started.elapsed();
    kill(drain, &mut log).await;

    let delivered = |rx: &Receiver| -> BTreeMap<(String, String), usize> {
        let mut ok = BTreeMap::new();
        for hit in rx.hits().iter().filter(|h| h.ok()) {
            if let Some(job) = hit.data_id() {
                *ok.entry((hit.path.clone(), job.to_owned())).or_insert(0) += 1;
            }
        }
        ok
    };
    let ok = delivered(&rx);
    let losses: Vec<_> = log
        .expected
        .iter()
        .filter(|pair| !ok.contains_key(*pair))
        .collect();
    let duplicates: usize = ok.values().map(|n| n.saturating_sub(1)).sum();
    let unacked: BTreeSet<&String> = ok
        .keys()
        .map(|(_, job)| job)
        .filter(|job| !log.acked_jobs.contains(*job))
        .collect();
    let hits = rx.hits();
    let mut bad_signatures = 0;
    let mut ids_per_job: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for hit in &hits {
        let (Some(secret), Some(id), Some(ts), Some(sig)) = (
            log.secrets.get(&hit.path),
            hit.id.as_deref(),
            hit.timestamp.as_deref().and_then(|t| t.parse::<i64>().ok()),
            hit.signature.as_deref(),
        ) else {
            bad_signatures += 1;
            continue;
        };
        if verify(secret, id, ts, &hit.body, sig).is_err() {
            bad_signatures += 1;
        }
        if let Some(job) = hit.data_id() {
            ids_per_job
                .entry(job.to_owned())
                .or_default()
                .insert(id.to_owned());
        }
    }
    let mixed_ids = ids_per_job.values().filter(|ids| ids.len() > 1).count();
    // A repeat is explained by a crash when the two successful sends came from two children
    // (one was killed before the next started); from one child, one process sent the same
    // delivery twice.
    let mut senders: BTreeMap<(String, String), Vec<Option<String>>> = BTreeMap::new();
    let mut untagged = 0;
    for hit in hits.iter().filter(|h| h.ok()) {
        untagged += usize::from(hit.query.is_none());
        if let Some(job) = hit.data_id() {
            senders
                .entry((hit.path.clone(), job.to_owned()))
                .or_default()
                .push(hit.query.clone());
        }
    }
    let same_process: Vec<_> = senders
        .iter()
        .filter(|(_, by)| by.len() > by.iter().collect::<BTreeSet<_>>().len())
        .collect();
    let same_process_repeats: usize = same_process
        .iter()
        .map(|(_, by)| by.len() - by.iter().collect::<BTreeSet<_>>().len())
        .sum();
    eprintln!(
        "crash: seed {seed}; {CYCLES} kill -9 cycles ({}) + drain; {} jobs acknowledged, {} \
         deliveries expected; {} requests received ({} answered 500); losses {}; duplicates {} \
         ({:.1} %, of which {} without a kill in between); {} jobs delivered though never acknowledged (killed mid-ingest); drain took \
         {:.2} s; total {:.1} s",
        kills.join(", "),
        log.acked_jobs.len(),
        log.expected.len(),
        hits.len(),
        hits.iter().filter(|h| h.answered == 500).count(),
        losses.len(),
        duplicates,
        100.0 * duplicates as f64 / log.expected.len().max(1) as f64,
        same_process_repeats,
        unacked.len(),
        drain_took.as_secs_f64(),
        started.elapsed().as_secs_f64(),
    );
    assert!(!log.expected.is_empty(), "some jobs were acknowledged");
    assert_eq!(log.secrets.len(), PATHS.len(), "{:?}", log.secrets.keys());
    assert!(losses.is_empty(), "lost deliveries: {losses:?}");
    assert_eq!(bad_signatures, 0, "every request verifies");
    assert_eq!(
        mixed_ids, 0,
        "every repeat of a job's event keeps its webhook-id"
    );
    assert_eq!(untagged, 0, "every request names the child that sent it");
    assert!(
        same_process.is_empty(),
        "deliveries sent twice by one process, with no kill between (seed {seed}): {same_process:?}"
    );
}
