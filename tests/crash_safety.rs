//! A crash loop for the sled store: kill -9 of the whole server process at a random moment,
//! restart, and check that every acknowledged write is still there.
//!
//! The parent test re-executes this very test binary as a child process
//! (`crash_safety_child_process_entry_point`, which does nothing unless
//! `JL_CRASH_SAFETY_CHILD` is set). The child opens a `SledStore` in the parent's temporary
//! folder, builds the service (usage counted in memory and written every 100 ms, or, in the
//! second test, counted in the store before each answer; the search index saved every
//! 300 ms, so a restart loads it and indexes again the jobs written after it),
//! serves the real hyper `Server` on 127.0.0.1 and prints `@@LISTEN <addr>`. On its first
//! start it adds the companies, issues one enterprise key and prints `@@KEY <raw>`. Then it
//! ingests jobs one by one, printing `@@ACK JOB <id>` after each `upsert_job` returns, and
//! every few jobs issues a key, printing `@@ACK KEY <raw>` after `create_key` returns.
//!
//! Meanwhile the parent talks to it over HTTP: it registers webhooks (`ACK HOOK` once
//! `POST /api/v1/webhooks` answered 201) and makes metered `GET /api/v1/jobs` calls, counting
//! every metered 2xx answer per key. At a random moment (after a random number of ACKs or a
//! random number of milliseconds, from a seeded RNG; the first cycle after [`FIRST_CYCLE`]) it
//! SIGKILLs the child, reaps it (so sled's lock is released) and starts it again, then
//! checks: the database opens, every
//! acknowledged job, key and webhook is there. After the last cycle it compares the metered
//! 2xx answers it counted with `calls_used`: counted in memory, a kill may lose the last
//! 100 ms of counting (asserted with the margin [`RECENT`]: no kill loses a call answered
//! longer ago than that); counted in the store, nothing. Either way a call must never be
//! counted that was not answered 2xx. The parent never has a request in flight when it kills
//! the child, so every call the child counted was answered to the parent, and the check is
//! exact. Every request to a living child must be answered: one that is not fails the test.
//!
//! `JL_CRASH_CYCLES` sets the number of kill cycles (default 8; the documented long run is
//! `JL_CRASH_CYCLES=200 cargo test --release --test crash_safety -- --nocapture`), and
//! `JL_CRASH_SEED` (or `JL_TEST_SEED`) replays a run: the seed is printed at the start.

// The helpers of the `it` binary; these tests use a few of them.
#[allow(dead_code, unused_imports)]
#[path = "it/support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{Job, JobId, JobStatus, Plan};
use job_listings::server::ServerConfig;
use job_listings::service::{JobListingsService, Metering, NewKey, ServiceConfig};
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use uuid::Uuid;

use support::child::{child_var, re_exec};
use support::data;
use support::server::RunningServer;
use support::store::open_sled;

const CHILD_TEST: &str = "crash_safety_child_process_entry_point";
const CHILD_ENV: &str = "JL_CRASH_SAFETY_CHILD";
/// Kill cycles when `JL_CRASH_CYCLES` is not set.
const DEFAULT_CYCLES: u64 = 8;
/// The child issues a key after every this many jobs.
const KEY_EVERY: u64 = 7;
/// Most jobs one child start ingests (it is killed long before).
const MAX_JOBS_PER_START: u64 = 50_000;
/// How long a child lives at most if nobody kills it.
const CHILD_LIFETIME: Duration = Duration::from_secs(120);
/// The demo dataset the companies come from (the same seed gives the same companies).
const COMPANY_SEED: u64 = 5_170_771;
/// Most webhooks the parent registers in one cycle; only the very first one matches jobs
/// (so the ingest transaction also writes an outbox event and a delivery), the others
/// filter on a domain no job has, so the outbox stays small over hundreds of cycles.
const MAX_HOOKS_PER_CYCLE: u32 = 3;
/// The margin on docs/api.md's "at most the last 100 ms lost" with in-memory metering: a kill may
/// lose only calls answered within this long before it. The counters are written every 100 ms;
/// the margin adds the write itself (a sled flush, which on a loaded 2-core machine can take
/// most of a second) and the scheduling of the writer. Asserted: a cycle that lost a call
/// answered longer ago than this fails the test (seen with the counters written every 3 s).
const RECENT: Duration = Duration::from_millis(1_500);
/// The first cycle is killed after this long (the others at a random moment): longer than
/// [`RECENT`] with room to spare, so that every run has a cycle in which a usage writer slower
/// than the margin loses calls older than it.
const FIRST_CYCLE: Duration = Duration::from_millis(2_000);

/// A deterministic job: start `start`, number `i`.
fn crash_job(companies: &[job_listings::domain::Company], start: u64, i: u64) -> Job {
    data::job(
        JobId(Uuid::from_u128(
            (0xC5AF_u128 << 96) | (u128::from(start) << 32) | u128::from(i),
        )),
        &companies[(i % companies.len() as u64) as usize],
        &format!("Crash Safety Engineer {start}-{i}"),
        "Survives kill -9 of the whole process.",
        &["engineering"],
        &["mid"],
        i.is_multiple_of(2),
        job_listings::demo::reference_time(),
        0.9,
        JobStatus::Active,
    )
}

// ---------------------------------------------------------------------------------------------
// The child
// ---------------------------------------------------------------------------------------------

/// Not a test of its own: the body of the child process the crash loop starts. Without
/// `JL_CRASH_SAFETY_CHILD` it returns at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_safety_child_process_entry_point() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    let start: u64 = child_var("JL_CRASH_SAFETY_START")
        .parse()
        .expect("a number");
    let store = match open_sled(Path::new(&child_var("JL_CRASH_SAFETY_DB"))).await {
        Ok(store) => store,
        Err(e) => {
            println!("@@OPEN_FAILED the sled store: {e}");
            return;
        }
    };
    let service = match JobListingsService::builder()
        .store(Arc::new(store))
        .config(
            ServiceConfig::default()
                .metering(Counting::from_name(&child_var("JL_CRASH_SAFETY_METERING")).metering())
                // Saved often, so most restarts load a snapshot that misses the last jobs and
                // index those again; the active count checked after each restart covers them.
                .index_snapshot_interval(Some(Duration::from_millis(300))),
        )
        .build()
        .await
    {
        Ok(service) => service,
        Err(e) => {
            println!("@@OPEN_FAILED the service: {e}");
            return;
        }
    };
    // Never stopped: the only way out is SIGKILL (or the lifetime bound).
    let server = RunningServer::start(Api::new(service.clone()), ServerConfig::default()).await;
    println!("@@LISTEN {}", server.addr);

    let companies = Dataset::generate(COMPANY_SEED, 3, 0).companies;
    if start == 0 {
        service
            .upsert_companies(companies.clone())
            .await
            .expect("the companies");
        let (key, _) = service
            .create_key(NewKey::new(Plan::Enterprise))
            .await
            .expect("the enterprise key");
        println!("@@KEY {}", key.expose());
    }

    let deadline = Instant::now() + CHILD_LIFETIME;
    if mode == "ingest" {
        for i in 0..MAX_JOBS_PER_START {
            if Instant::now() > deadline {
                break;
            }
            let outcome = service
                .upsert_job(crash_job(&companies, start, i))
                .await
                .expect("the job was ingested");
            println!("@@ACK JOB {}", outcome.id);
            if i % KEY_EVERY == KEY_EVERY - 1 {
                // Enterprise, so the parent may also register webhooks with it.
                let (key, _) = service
                    .create_key(NewKey::new(Plan::Enterprise))
                    .await
                    .expect("a key");
                println!("@@ACK KEY {}", key.expose());
            }
            // Leave the two cores some room for the server and the parent.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    // Serve until killed.
    tokio::time::sleep(deadline.saturating_duration_since(Instant::now())).await;
}

// ---------------------------------------------------------------------------------------------
// The parent
// ---------------------------------------------------------------------------------------------

/// What a child line says.
#[derive(Debug, PartialEq)]
enum Msg {
    Listen(String),
    Key(String),
    AckJob(String),
    AckKey(String),
    OpenFailed(String),
}

fn parse(line: &str) -> Option<Msg> {
    // libtest may print `test … ... ` on the same line before the child's first output.
    let at = line.find("@@")?;
    let rest = &line[at + 2..];
    let (word, arg) = rest.split_once(' ').unwrap_or((rest, ""));
    let arg = arg.trim();
    match word {
        "LISTEN" => Some(Msg::Listen(arg.to_owned())),
        "KEY" => Some(Msg::Key(arg.to_owned())),
        "ACK" => match arg.split_once(' ') {
            Some(("JOB", id)) => Some(Msg::AckJob(id.trim().to_owned())),
            Some(("KEY", raw)) => Some(Msg::AckKey(raw.trim().to_owned())),
            _ => None,
        },
        "OPEN_FAILED" => Some(Msg::OpenFailed(arg.to_owned())),
        _ => None,
    }
}

/// A running child: its process and its stdout, line by line, from a reader task.
struct Running {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    reader: JoinHandle<()>,
    base: String,
}

fn spawn_child(
    dir: &std::path::Path,
    mode: &str,
    start: u64,
    metering: Counting,
) -> (Child, JoinHandle<()>, mpsc::UnboundedReceiver<String>) {
    let mut child = re_exec(
        CHILD_TEST,
        [
            (CHILD_ENV, mode.into()),
            ("JL_CRASH_SAFETY_DB", dir.join("db").into()),
            ("JL_CRASH_SAFETY_START", start.to_string().into()),
            ("JL_CRASH_SAFETY_METERING", metering.name().into()),
        ],
    );
    let stdout = child.stdout.take().expect("the child's stdout");
    let (tx, rx) = mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        // Ends at EOF, that is when the child is gone.
        while let Ok(Some(line)) = lines.next_line().await {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, reader, rx)
}

/// Everything acknowledged so far, what has been checked, and what was found missing.
#[derive(Default)]
struct Ledger {
    /// The enterprise key issued on the first start.
    enterprise: String,
    /// Acknowledged jobs, in order; the first `jobs_checked` were checked after a restart.
    jobs: Vec<String>,
    jobs_checked: usize,
    /// Acknowledged keys (the enterprise key first), in order.
    keys: Vec<String>,
    keys_checked: usize,
    /// Acknowledged webhooks: (id, owner key).
    hooks: Vec<(String, String)>,
    hooks_checked: usize,
    /// Keys that own webhooks, in order; the last one registers new ones.
    owners: Vec<String>,
    /// Metered 2xx answers per key, as counted by the parent.
    counted: BTreeMap<String, u64>,
    /// When each metered 2xx answer of the running child arrived.
    stamps: Vec<Instant>,
    /// Acknowledged writes found missing after a restart.
    lost_jobs: BTreeSet<String>,
    lost_keys: BTreeSet<String>,
    lost_hooks: BTreeSet<String>,
    /// Requests that got no answer while the child was alive: must stay 0.
    transport_errors: u64,
    /// Requests answered with an unexpected status while the child was alive (reported).
    unexpected: Vec<String>,
}

impl Ledger {
    /// Records one line of a child; returns whether it was an ACK.
    fn take(&mut self, line: &str) -> bool {
        match parse(line) {
            Some(Msg::AckJob(id)) => {
                self.jobs.push(id);
                true
            }
            Some(Msg::AckKey(raw)) => {
                self.keys.push(raw);
                true
            }
            Some(Msg::Key(raw)) => {
                self.enterprise.clone_from(&raw);
                self.owners.push(raw.clone());
                self.keys.push(raw);
                false
            }
            _ => false,
        }
    }

    fn count(&mut self, key: &str) {
        *self.counted.entry(key.to_owned()).or_insert(0) += 1;
        self.stamps.push(Instant::now());
    }

    fn counted_total(&self) -> u64 {
        self.counted.values().sum()
    }

    fn lost(&self) -> usize {
        self.lost_jobs.len() + self.lost_keys.len() + self.lost_hooks.len()
    }
}

/// An answer: status and JSON body (`Null` when not JSON); `None` when there was no answer.
async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    key: &str,
    body: Option<&Value>,
) -> Option<(StatusCode, Value)> {
    let mut req = client.request(method, url).header("X-API-Key", key);
    if let Some(body) = body {
        req = req.json(body);
    }
    let response = req.send().await.ok()?;
    let status = response.status();
    let text = response.text().await.ok()?;
    Some((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// A metered GET: counts a 2xx answer for `key`.
async fn metered_get(
    client: &reqwest::Client,
    ledger: &mut Ledger,
    url: &str,
    key: &str,
) -> Option<(StatusCode, Value)> {
    let answer = call(client, reqwest::Method::GET, url, key, None).await;
    match &answer {
        Some((status, _)) if status.is_success() => ledger.count(key),
        Some(_) => {}
        None => ledger.transport_errors += 1,
    }
    answer
}

/// Verification requests in flight at once.
const VERIFY_CONCURRENCY: usize = 8;

/// GETs (url, key) pairs several at a time: the answers in order, each with when it came.
async fn get_all(
    client: &reqwest::Client,
    gets: Vec<(String, String)>,
) -> Vec<(Option<(StatusCode, Value)>, Instant)> {
    use futures::StreamExt;
    futures::stream::iter(gets)
        .map(|(url, key)| async move {
            let answer = call(client, reqwest::Method::GET, &url, &key, None).await;
            (answer, Instant::now())
        })
        .buffered(VERIFY_CONCURRENCY)
        .collect()
        .await
}

/// Metered GETs several at a time, counted as [`metered_get`] counts one; the answers in order.
async fn metered_get_all(
    client: &reqwest::Client,
    ledger: &mut Ledger,
    gets: Vec<(String, String)>,
) -> Vec<Option<(StatusCode, Value)>> {
    let keys: Vec<String> = gets.iter().map(|(_, key)| key.clone()).collect();
    let answers = get_all(client, gets).await;
    answers
        .into_iter()
        .zip(keys)
        .map(|((answer, at), key)| {
            match &answer {
                Some((status, _)) if status.is_success() => {
                    *ledger.counted.entry(key).or_insert(0) += 1;
                    ledger.stamps.push(at);
                }
                Some(_) => {}
                None => ledger.transport_errors += 1,
            }
            answer
        })
        .collect()
}

/// Starts a child and waits (bounded) until it listens — and, on the first start, until it
/// has issued the enterprise key. `Err` says why the database did not come up.
async fn start_child(
    dir: &std::path::Path,
    mode: &str,
    start: u64,
    metering: Counting,
    ledger: &mut Ledger,
) -> Result<Running, String> {
    let (mut child, reader, mut lines) = spawn_child(dir, mode, start, metering);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut base = None;
    let mut why = String::from("no LISTEN within 60 s");
    loop {
        let line = match tokio::time::timeout_at(deadline, lines.recv()).await {
            Ok(Some(line)) => line,
            Ok(None) => {
                why = format!("the child exited before it listened ({why})");
                break;
            }
            Err(_) => break,
        };
        match parse(&line) {
            Some(Msg::Listen(addr)) => {
                base = Some(format!("http://{addr}"));
                if start != 0 {
                    break;
                }
            }
            Some(Msg::OpenFailed(e)) => why = e,
            Some(Msg::Key(_)) => {
                ledger.take(&line);
                break;
            }
            _ => {
                ledger.take(&line);
            }
        }
    }
    match base {
        Some(base) if start != 0 || !ledger.enterprise.is_empty() => Ok(Running {
            child,
            lines,
            reader,
            base,
        }),
        _ => {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
            reader.abort();
            Err(why)
        }
    }
}

/// SIGKILLs the child, reaps it (releasing sled's lock) and records what it printed before.
/// Returns whether it was our SIGKILL that ended it (not an exit or a crash of its own).
async fn kill(mut running: Running, ledger: &mut Ledger) -> bool {
    use std::os::unix::process::ExitStatusExt;
    // An exited child not yet reaped is a zombie: the signal is harmless, `wait` tells.
    let _ = running.child.start_kill();
    let status = tokio::time::timeout(Duration::from_secs(10), running.child.wait())
        .await
        .expect("the killed child was reaped within 10 s")
        .expect("wait");
    // The pipe ends once the child is gone; read what it still holds (bounded).
    let _ = tokio::time::timeout(Duration::from_secs(10), &mut running.reader).await;
    running.reader.abort();
    while let Ok(line) = running.lines.try_recv() {
        ledger.take(&line);
    }
    status.signal() == Some(9)
}

/// Checks, on a freshly restarted child, that acknowledged writes are there: the ones not
/// checked yet, or (`full`) all of them.
async fn verify(client: &reqwest::Client, base: &str, ledger: &mut Ledger, full: bool) {
    let enterprise = ledger.enterprise.clone();

    // Keys: each acknowledged key authenticates (`/usage` is not metered).
    let from = if full { 0 } else { ledger.keys_checked };
    let keys: Vec<String> = ledger.keys[from..].to_vec();
    let url = format!("{base}/api/v1/usage");
    let gets = keys.iter().map(|key| (url.clone(), key.clone())).collect();
    for (key, (answer, _)) in keys.into_iter().zip(get_all(client, gets).await) {
        match answer {
            Some((StatusCode::OK, _)) => {}
            Some(_) => {
                ledger.lost_keys.insert(key);
            }
            None => ledger.transport_errors += 1,
        }
    }
    ledger.keys_checked = ledger.keys.len();

    // Webhooks: each acknowledged subscription is there for its owner (metered).
    let from = if full { 0 } else { ledger.hooks_checked };
    let hooks: Vec<(String, String)> = ledger.hooks[from..].to_vec();
    let gets = hooks
        .iter()
        .map(|(id, owner)| (format!("{base}/api/v1/webhooks/{id}"), owner.clone()))
        .collect();
    let answers = metered_get_all(client, ledger, gets).await;
    for ((id, _), answer) in hooks.into_iter().zip(answers) {
        match answer {
            Some((StatusCode::OK, body)) if body["id"].as_str() == Some(id.as_str()) => {}
            Some(_) => {
                ledger.lost_hooks.insert(id);
            }
            None => {}
        }
    }
    ledger.hooks_checked = ledger.hooks.len();

    // Jobs: the new ones one by one; with `full`, every one through the listing.
    if full {
        let mut listed = BTreeSet::new();
        let first = metered_get(
            client,
            ledger,
            &format!("{base}/api/v1/jobs?per_page=1"),
            &enterprise,
        )
        .await;
        let total = first
            .as_ref()
            .and_then(|(_, body)| body["pagination"]["total"].as_u64())
            .unwrap_or(0);
        let pages = total.div_ceil(50) + 1;
        for page in 1..=pages {
            let url = format!("{base}/api/v1/jobs?per_page=50&page={page}");
            let Some((StatusCode::OK, body)) = metered_get(client, ledger, &url, &enterprise).await
            else {
                ledger
                    .unexpected
                    .push(format!("listing page {page} was not answered 200"));
                break;
            };
            let data = body["data"].as_array().cloned().unwrap_or_default();
            if data.is_empty() {
                break;
            }
            listed.extend(
                data.iter()
                    .filter_map(|j| j["id"].as_str().map(str::to_owned)),
            );
        }
        let missing: Vec<String> = ledger
            .jobs
            .iter()
            .filter(|id| !listed.contains(*id))
            .cloned()
            .collect();
        ledger.lost_jobs.extend(missing);
    } else {
        let jobs: Vec<String> = ledger.jobs[ledger.jobs_checked..].to_vec();
        let gets = jobs
            .iter()
            .map(|id| (format!("{base}/api/v1/jobs/{id}"), enterprise.clone()))
            .collect();
        let answers = metered_get_all(client, ledger, gets).await;
        for (id, answer) in jobs.into_iter().zip(answers) {
            match answer {
                Some((StatusCode::OK, body)) if body["id"].as_str() == Some(id.as_str()) => {}
                Some(_) => {
                    ledger.lost_jobs.insert(id);
                }
                None => {}
            }
        }
        // And none of the earlier ones went missing: the active count covers them all.
        let url = format!("{base}/api/v1/jobs?per_page=1");
        match metered_get(client, ledger, &url, &enterprise).await {
            Some((StatusCode::OK, body)) => {
                let total = body["pagination"]["total"].as_u64().unwrap_or(0);
                if total < ledger.jobs.len() as u64 {
                    ledger.unexpected.push(format!(
                        "{total} active jobs after a restart, {} acknowledged",
                        ledger.jobs.len()
                    ));
                }
            }
            Some((status, body)) => ledger.unexpected.push(format!(
                "GET /api/v1/jobs?per_page=1 after a restart answered {status}: {body}"
            )),
            // Counted as a transport error.
            None => {}
        }
    }
    ledger.jobs_checked = ledger.jobs.len();
}

/// `calls_used` of every key the parent made metered calls with (`/usage` is not metered).
/// Keys whose usage was not answered 200 are listed as errors.
async fn read_usage(
    client: &reqwest::Client,
    base: &str,
    ledger: &Ledger,
) -> (BTreeMap<String, u64>, Vec<String>) {
    let mut used = BTreeMap::new();
    let mut errors = Vec::new();
    for key in ledger.counted.keys() {
        let url = format!("{base}/api/v1/usage");
        match call(client, reqwest::Method::GET, &url, key, None).await {
            Some((StatusCode::OK, body)) => {
                used.insert(key.clone(), body["calls_used"].as_u64().unwrap_or(u64::MAX));
            }
            other => errors.push(format!("GET /api/v1/usage answered {other:?}")),
        }
    }
    (used, errors)
}

/// Keys whose recorded usage exceeds the 2xx answers counted for them.
fn overcounts(ledger: &Ledger, used: &BTreeMap<String, u64>, when: &str) -> Vec<String> {
    used.iter()
        .filter_map(|(key, used)| {
            let counted = ledger.counted.get(key).copied().unwrap_or(0);
            (*used > counted).then(|| {
                format!("{when}: a key records {used} calls, only {counted} were answered 2xx")
            })
        })
        .collect()
}

/// Registers one webhook for the current owner key; on the per-key limit, moves on to a key
/// the child issued. Records `ACK HOOK` on 201.
async fn register_hook(client: &reqwest::Client, base: &str, ledger: &mut Ledger, n: usize) {
    let body = if ledger.hooks.is_empty() {
        // The one subscription that matches every job.
        json!({ "callback_url": format!("https://hooks.example.com/x/{n}") })
    } else {
        json!({
            "callback_url": format!("https://hooks.example.com/x/{n}"),
            "domain_filters": ["legal"],
        })
    };
    for _ in 0..2 {
        let owner = ledger.owners.last().cloned().expect("an owner key");
        let answer = call(
            client,
            reqwest::Method::POST,
            &format!("{base}/api/v1/webhooks"),
            &owner,
            Some(&body),
        )
        .await;
        match answer {
            Some((StatusCode::CREATED, body)) => {
                ledger.count(&owner);
                let id = body["id"].as_str().expect("the webhook's id").to_owned();
                ledger.hooks.push((id, owner));
                return;
            }
            Some((StatusCode::CONFLICT, _)) => {
                // This key holds as many subscriptions as it may: use a newer key, if any.
                let next = ledger
                    .keys
                    .iter()
                    .rev()
                    .find(|k| !ledger.owners.contains(k))
                    .cloned();
                match next {
                    Some(k) => ledger.owners.push(k),
                    None => return,
                }
            }
            Some((status, body)) => {
                ledger
                    .unexpected
                    .push(format!("POST /api/v1/webhooks answered {status}: {body}"));
                return;
            }
            None => {
                ledger.transport_errors += 1;
                return;
            }
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}"))
    })
}

/// Where the child counts calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counting {
    /// `Metering::InMemory` (the default): a kill may lose the last 100 ms of counting.
    InMemory,
    /// `Metering::InStore`: nothing answered is ever lost.
    InStore,
}

impl Counting {
    fn name(self) -> &'static str {
        match self {
            Counting::InMemory => "in-memory",
            Counting::InStore => "in-store",
        }
    }

    fn from_name(name: &str) -> Self {
        match name {
            "in-store" => Counting::InStore,
            _ => Counting::InMemory,
        }
    }

    fn metering(self) -> Metering {
        match self {
            Counting::InMemory => Metering::default(),
            Counting::InStore => Metering::InStore,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill_9_and_usage_is_never_overcounted() {
    crash_loop(Counting::InMemory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_usage_counted_in_the_store_no_answered_call_is_lost_to_kill_9() {
    crash_loop(Counting::InStore).await;
}

async fn crash_loop(metering: Counting) {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let cycles = env_u64("JL_CRASH_CYCLES").unwrap_or(DEFAULT_CYCLES);
    let seed = env_u64("JL_CRASH_SEED")
        .or_else(|| env_u64("JL_TEST_SEED"))
        .unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!(
        "crash safety ({}): seed {seed} (JL_CRASH_SEED={seed} replays the kill plan), {cycles} cycles",
        metering.name()
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("an HTTP client");
    let mut ledger = Ledger::default();
    let mut reopen_failures: Vec<String> = Vec::new();
    let mut early_exits = 0u64;
    let mut kill_plans = BTreeMap::<&str, u64>::new();
    let mut hooks_registered = 0usize;
    let mut overcounted = Vec::new();
    let mut usage_errors = Vec::new();
    let mut lost_before = 0u64;
    let mut cycles_losing_usage = 0u64;
    let mut max_cycle_loss = 0u64;
    let mut beyond_recent = Vec::new();
    // The longest a lost call had been answered before its kill.
    let mut oldest_lost = Duration::ZERO;
    let started = Instant::now();

    assert!(cycles >= 1, "JL_CRASH_CYCLES must be at least 1");
    let mut running = start_child(dir.path(), "ingest", 0, metering, &mut ledger)
        .await
        .unwrap_or_else(|e| panic!("the first start failed: {e}"));
    let mut start = 0u64;
    let mut cycles_done = 0u64;
    for cycle in 0..cycles {
        // Traffic until the kill: metered searches, now and then a webhook registration.
        let by_acks = rng.gen_bool(0.5);
        let acks_wanted: u64 = rng.gen_range(1..=60);
        // Random moments up to a second: the first cycle covers the long ones.
        let ms: u64 = rng.gen_range(20..=1_000);
        let hooks_wanted = rng.gen_range(0..=MAX_HOOKS_PER_CYCLE);
        let (by_acks, ms) = match cycle {
            0 => (false, FIRST_CYCLE.as_millis() as u64),
            _ => (by_acks, ms),
        };
        *kill_plans
            .entry(if by_acks { "by ACKs" } else { "by time" })
            .or_insert(0) += 1;
        let deadline = Instant::now() + Duration::from_millis(ms);
        let hard_deadline = Instant::now() + Duration::from_secs(30);
        let mut acks = 0u64;
        let mut hooks_this_cycle = 0;
        for op in 0..20_000u64 {
            while let Ok(line) = running.lines.try_recv() {
                if ledger.take(&line) {
                    acks += 1;
                }
            }
            let now = Instant::now();
            if (by_acks && acks >= acks_wanted) || (!by_acks && now >= deadline) {
                break;
            }
            if now >= hard_deadline || running.reader.is_finished() {
                break;
            }
            let base = running.base.clone();
            if hooks_this_cycle < hooks_wanted && rng.gen_bool(0.1) {
                hooks_this_cycle += 1;
                hooks_registered += 1;
                register_hook(&client, &base, &mut ledger, hooks_registered).await;
            } else {
                let query = match op % 4 {
                    0 => "per_page=5".to_owned(),
                    1 => format!("per_page=10&page={}", rng.gen_range(1..=5)),
                    2 => "remote_only=true&per_page=3".to_owned(),
                    _ => "q=crash&domain=engineering&per_page=2".to_owned(),
                };
                let url = format!("{base}/api/v1/jobs?{query}");
                let key = ledger.enterprise.clone();
                match metered_get(&client, &mut ledger, &url, &key).await {
                    Some((StatusCode::OK, _)) | None => {}
                    Some((status, body)) => ledger.unexpected.push(format!(
                        "GET /api/v1/jobs?{query} answered {status}: {body}"
                    )),
                }
            }
            // Pace the loop (and pick up the next child line as soon as it comes).
            if let Ok(Some(line)) =
                tokio::time::timeout(Duration::from_millis(3), running.lines.recv()).await
            {
                if ledger.take(&line) {
                    acks += 1;
                }
            }
        }
        // What a kill may lose: the calls since the last usage write, at most those answered
        // within RECENT of the kill.
        let killed_at = Instant::now();
        let mut stamps = std::mem::take(&mut ledger.stamps);
        // In answer order (answers to requests sent together may come in any order).
        stamps.sort_unstable();
        let child_calls = stamps.len() as u64;
        let recent_calls = stamps
            .iter()
            .filter(|t| killed_at.duration_since(**t) <= RECENT)
            .count() as u64;
        if !kill(running, &mut ledger).await {
            early_exits += 1;
            eprintln!("crash safety: cycle {cycle}: the child had exited on its own");
        }

        // Restart: the database must open, then every acknowledged write must be there.
        let last = cycle + 1 == cycles;
        let mode = if last { "serve" } else { "ingest" };
        let mut restarted = None;
        for _attempt in 0..3 {
            start += 1;
            match start_child(dir.path(), mode, start, metering, &mut ledger).await {
                Ok(r) => {
                    restarted = Some(r);
                    break;
                }
                Err(e) => {
                    eprintln!("crash safety: cycle {cycle}: reopen failed: {e}");
                    reopen_failures.push(format!("cycle {cycle}: {e}"));
                }
            }
        }
        let Some(r) = restarted else {
            panic!(
                "the database did not reopen after cycle {cycle} (seed {seed}): {reopen_failures:?}"
            );
        };
        running = r;
        cycles_done += 1;
        let base = running.base.clone();

        // Usage as reloaded from the store, before any new call: never above the 2xx count.
        let (used, errors) = read_usage(&client, &base, &ledger).await;
        usage_errors.extend(errors);
        overcounted.extend(overcounts(&ledger, &used, &format!("after cycle {cycle}")));
        let lost_so_far = ledger
            .counted_total()
            .saturating_sub(used.values().sum::<u64>());
        let lost = lost_so_far.saturating_sub(lost_before);
        lost_before = lost_so_far;
        cycles_losing_usage += u64::from(lost > 0);
        max_cycle_loss = max_cycle_loss.max(lost);
        // Stamps are in answer order: the `lost` newest were the ones lost, at the least.
        if let Some(oldest) = usize::try_from(lost)
            .ok()
            .filter(|n| *n > 0)
            .and_then(|n| stamps.len().checked_sub(n))
            .map(|i| killed_at.duration_since(stamps[i]))
        {
            oldest_lost = oldest_lost.max(oldest);
        }
        if lost > recent_calls {
            beyond_recent.push(format!(
                "cycle {cycle}: lost {lost} of {child_calls} calls, {recent_calls} in the last {RECENT:?}"
            ));
        }
        verify(&client, &base, &mut ledger, last).await;
    }

    // Usage after the final restart (and its verification calls): counted against recorded.
    let (used, errors) = read_usage(&client, &running.base, &ledger).await;
    usage_errors.extend(errors);
    overcounted.extend(overcounts(&ledger, &used, "at the end"));
    let counted_total = ledger.counted_total();
    let recorded_total: u64 = used.values().sum();
    if !kill(running, &mut ledger).await {
        early_exits += 1;
    }

    let lost_to_kills = counted_total.saturating_sub(recorded_total);
    eprintln!(
        "crash safety ({}): {cycles_done} cycles, {} reopen failures, {} acknowledged writes lost ({} jobs, \
         {} keys, {} webhooks), usage: {counted_total} 2xx counted, {recorded_total} recorded \
         ({lost_to_kills} lost to kills, {})",
        metering.name(),
        reopen_failures.len(),
        ledger.lost(),
        ledger.jobs.len(),
        ledger.keys.len(),
        ledger.hooks.len(),
        if overcounted.is_empty() {
            "never overcounted".to_owned()
        } else {
            format!("OVERCOUNTED for {} keys", overcounted.len())
        },
    );
    eprintln!(
        "crash safety: seed {seed}; kills {kill_plans:?}; lost: {} jobs, {} keys, {} webhooks; \
         {} keys hold webhooks; {} transport errors; {} unexpected answers; {} early exits; \
         usage lost in {cycles_losing_usage} of {cycles_done} cycles, at most {max_cycle_loss} \
         in one, the oldest answered {oldest_lost:?} before its kill; {} cycles lost more than \
         their calls of the last {RECENT:?} {beyond_recent:?}; {:.1} s",
        ledger.lost_jobs.len(),
        ledger.lost_keys.len(),
        ledger.lost_hooks.len(),
        ledger.owners.len(),
        ledger.transport_errors,
        ledger.unexpected.len(),
        early_exits,
        beyond_recent.len(),
        started.elapsed().as_secs_f64(),
    );

    assert!(!ledger.jobs.is_empty(), "some jobs were acknowledged");
    assert_eq!(
        reopen_failures,
        Vec::<String>::new(),
        "the database reopened"
    );
    assert_eq!(early_exits, 0, "the child only ever stopped when killed");
    assert!(
        ledger.lost_jobs.is_empty(),
        "acknowledged jobs lost (seed {seed}): {:?}",
        ledger.lost_jobs
    );
    assert!(
        ledger.lost_keys.is_empty(),
        "acknowledged keys lost (seed {seed}): {} of {}",
        ledger.lost_keys.len(),
        ledger.keys.len()
    );
    assert!(
        ledger.lost_hooks.is_empty(),
        "acknowledged webhooks lost (seed {seed}): {:?}",
        ledger.lost_hooks
    );
    assert_eq!(
        ledger.unexpected,
        Vec::<String>::new(),
        "answers while the child was alive"
    );
    assert_eq!(
        ledger.transport_errors, 0,
        "requests to a living child that got no answer (seed {seed})"
    );
    assert!(
        beyond_recent.is_empty(),
        "kills lost calls answered more than {RECENT:?} before them (seed {seed}): {beyond_recent:?}"
    );
    assert_eq!(usage_errors, Vec::<String>::new(), "usage was readable");
    assert!(
        overcounted.is_empty(),
        "usage counted calls that were never answered 2xx (seed {seed}): {overcounted:?}"
    );
    if metering == Counting::InStore {
        // Every call was counted durably before it was answered, and the parent never kills
        // with a call in flight: the count is exact.
        assert_eq!(
            recorded_total, counted_total,
            "usage counted in the store lost answered calls to kills (seed {seed})"
        );
    }
}
