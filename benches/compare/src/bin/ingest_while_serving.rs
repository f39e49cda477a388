//! # Ingest jobs at a constant rate while serving the API
//!
//! ```text
//! cargo build --release -p job-listings-compare --bin ingest_while_serving --bin load
//! target/release/ingest_while_serving --data-dir "$(mktemp -d)/db" \
//!     --addr 127.0.0.1:18098 --ingest-rate 1000 --duration 60s
//! #   enterprise  jl_live_...        <- the key to load it with
//! target/release/load --url http://127.0.0.1:18098 --key jl_live_... \
//!     --rate 1000 --duration 20s --mix jobs
//! ```
//!
//! Measures the goal "writes while reading": jobs reach the service through the library
//! ([`JobListingsService::upsert_job`], which the admin API's `PUT /admin/v1/jobs/{id}` calls),
//! here without an HTTP round trip per job, so this program runs the writer in the same process
//! as the hyper [`Server`]. It
//!
//! 1. opens (or creates) a sled folder and builds the service on it, as the `job-listings`
//!    binary does, with no per-key rate limit and a large enterprise quota (for load tests);
//! 2. when the store is empty, loads the demo dataset ([`Dataset::generate`] with the server's
//!    seed and sizes: 600 companies, 6,000 jobs) plus `--jobs N` more jobs from the same
//!    generator, for a bigger index; a folder that already holds data is served as it is;
//! 3. issues a fresh enterprise key and prints it on stdout as `  enterprise  jl_live_...`,
//!    like the server prints its demo keys, then `Listening on http://...` once it accepts;
//! 4. runs a writer task that ingests `--ingest-rate R` new jobs per second, one job per
//!    `upsert_job` call, paced open-loop by a [`tokio::time::interval`] (a slow call does not
//!    move the schedule: the ticks it missed fire at once afterwards). Each job is a demo job
//!    from the same generator with a new id and `posted_at` = now, so it lands at the top of
//!    the newest-first order;
//! 5. stops on Ctrl-C (SIGINT), SIGTERM or after `--duration`, lets open requests finish, and
//!    prints how many jobs were ingested, the achieved rate, and the `upsert_job` latency
//!    (average, p50, p99, max) on stdout, each figure on a line of its own.
//!
//! `--ingest-rate 0` serves without writing, the baseline of `benches/load/writes_while_reading.sh`.
//!
//! Every `upsert_job` is a durable write (the sled store flushes before it returns), so one
//! writer's rate is bounded by the disk's flush latency; the summary says when the writer fell
//! behind its schedule.

#[path = "../duration.rs"]
mod duration;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use chrono::Utc;
use clap::Parser;
use hdrhistogram::Histogram;
use tokio::sync::watch;

use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{Company, Job, JobId, JobStatus, Plan};
use job_listings::server::{Server, ServerConfig};
use job_listings::service::{JobListingsService, NewKey, Quotas, SecretKey, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};

/// The demo dataset of the `job-listings` binary: seed, companies, jobs.
const DEMO: (u64, usize, usize) = (42, 600, 6_000);
/// Records per store write when loading the initial data, as the `job-listings` binary does.
const BATCH: usize = 1_000;
/// Generated jobs the writer cycles through as templates (each gets a new id and time).
const TEMPLATES: usize = 10_000;

/// Serves the job-listings API on a sled folder while ingesting jobs at a constant rate.
#[derive(Debug, Parser)]
#[command(name = "ingest_while_serving")]
struct Cli {
    /// The sled database folder; created when missing. Use a fresh one for comparable runs.
    #[arg(long, default_value = "./ingest-data", value_name = "DIR")]
    data_dir: PathBuf,
    /// Page cache sled may use, in MiB.
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    cache_mb: u64,
    /// The address to listen on (loopback only).
    #[arg(long, default_value = "127.0.0.1:18098", value_name = "IP:PORT")]
    addr: SocketAddr,
    /// Generated jobs to load on top of the demo's 6,000 into an empty store (about one in
    /// ten is closed, as in the demo data); they are held in memory while loading.
    #[arg(long, default_value_t = 0, value_name = "N")]
    jobs: usize,
    /// New jobs ingested per second while serving, one per `upsert_job` call; 0 for none.
    #[arg(long, default_value_t = 1_000.0, value_name = "R")]
    ingest_rate: f64,
    /// Stop after this long (`60s`, `500ms`, `2m` or plain seconds) [default: at Ctrl-C or
    /// SIGTERM].
    #[arg(long, value_parser = duration::parse_duration)]
    duration: Option<Duration>,
    /// Monthly calls of the enterprise key this program issues.
    #[arg(long, default_value_t = 1_000_000_000, value_name = "CALLS")]
    enterprise_quota: u64,
}

#[tokio::main]
async fn main() -> Result<ExitCode> {
    let cli = Cli::parse();
    if !cli.addr.ip().is_loopback() {
        bail!("refusing {}: listen on a loopback address", cli.addr);
    }
    if !(cli.ingest_rate.is_finite() && cli.ingest_rate >= 0.0) {
        bail!("--ingest-rate must be 0 or more");
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();

    let service = open_service(&cli).await?;
    let templates = load_data(&service, cli.jobs).await?;

    let (key, _record) = service
        .create_key(NewKey::new(Plan::Enterprise).label("ingest_while_serving".into()))
        .await?;

    // Stop on a signal or when the duration is up; the writer and the server both watch it.
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    spawn_stopper(stop_tx.clone(), cli.duration)?;

    let listener = tokio::net::TcpListener::bind(cli.addr)
        .await
        .with_context(|| format!("listening on {}", cli.addr))?;
    let server = Server::new(listener, Api::new(service.clone()), ServerConfig::default())?;
    println!("Key (shown only now; the store keeps its hash):");
    println!("  {:<11} {}", Plan::Enterprise.as_str(), key.expose());
    println!("Listening on http://{}", server.local_addr());

    let writer = (cli.ingest_rate > 0.0).then(|| {
        tokio::spawn(write_jobs(
            service.clone(),
            templates,
            cli.ingest_rate,
            stop_rx.clone(),
        ))
    });
    let mut server_stop = stop_rx.clone();
    server
        .run(async move {
            let _ = server_stop.wait_for(|stop| *stop).await;
        })
        .await?;
    // The server returns only once told to stop; make sure the writer is told too.
    stop_tx.send_replace(true);

    let failed = match writer {
        Some(handle) => {
            let report = handle.await.context("the writer task failed")?;
            report.print(cli.ingest_rate);
            report.errors > 0
        }
        None => {
            println!("ingested: 0 jobs (--ingest-rate 0)");
            false
        }
    };
    service
        .shutdown()
        .await
        .context("writing usage counters on the way out")?;
    Ok(ExitCode::from(u8::from(failed)))
}

/// Opens the sled folder and builds the service on it, as the `job-listings` binary does.
async fn open_service(cli: &Cli) -> Result<JobListingsService> {
    let sled = SledConfig::new(&cli.data_dir).cache_bytes(cli.cache_mb.saturating_mul(1024 * 1024));
    let store = SledStore::open(&sled)
        .with_context(|| format!("opening the data folder {}", cli.data_dir.display()))?;
    let config = ServiceConfig::default()
        .quotas(Quotas::default().enterprise(cli.enterprise_quota))
        .rate_limits(None)
        .secret_key(Some(secret_key(&cli.data_dir.join("secret.key"))?));
    let started = Instant::now();
    let service = JobListingsService::builder()
        .store(Arc::new(store))
        .config(config)
        .build()
        .await
        .with_context(|| format!("loading the data from {}", cli.data_dir.display()))?;
    eprintln!(
        "service loaded from {} in {:.2?}",
        cli.data_dir.display(),
        started.elapsed()
    );
    Ok(service)
}

/// The key sealing webhook secrets: the server's `DIR/secret.key`, made when missing, so a
/// server's folder opens and this one opens in a server later.
fn secret_key(path: &Path) -> Result<SecretKey> {
    SecretKey::load_or_create(path).with_context(|| format!("the secret key {}", path.display()))
}

/// Loads the demo dataset plus `extra` generated jobs into an empty store; makes sure the demo
/// companies exist in any case. Returns the jobs the writer uses as templates.
async fn load_data(service: &JobListingsService, extra: usize) -> Result<Vec<Job>> {
    let (seed, companies, jobs) = DEMO;
    let empty = service.company_count() == 0;
    let started = Instant::now();
    // The generator draws jobs one after another from one random stream, so the first 6,000
    // of a longer run are exactly the server's demo jobs, and the rest are more of the same.
    let initial = if empty { jobs + extra } else { 0 };
    let mut data = Dataset::generate(seed, companies, initial + TEMPLATES);
    let templates = data.jobs.split_off(initial);

    let mut missing: Vec<Company> = Vec::new();
    for c in data.companies {
        if !service.has_company(c.id) {
            missing.push(c);
        }
    }
    for batch in missing.chunks(BATCH) {
        service.upsert_companies(batch.to_vec()).await?;
    }
    let mut rest = data.jobs.into_iter().peekable();
    while rest.peek().is_some() {
        let batch: Vec<Job> = rest.by_ref().take(BATCH).collect();
        service.upsert_jobs(batch).await?;
    }
    if empty {
        eprintln!(
            "loaded {} companies and {initial} jobs in {:.2?}",
            missing.len(),
            started.elapsed()
        );
    } else {
        eprintln!("the store already held data: serving it as it is");
    }
    Ok(templates)
}

/// What the writer did.
struct WriterReport {
    /// Jobs ingested.
    ingested: u64,
    /// Calls that failed.
    errors: u64,
    /// The first failure, if any.
    first_error: Option<String>,
    /// From the first tick to the stop.
    elapsed: Duration,
    /// Latency of each successful `upsert_job` call, in microseconds.
    latency_us: Histogram<u64>,
    /// The furthest the writer fell behind its schedule.
    max_lag: Duration,
}

impl WriterReport {
    /// Prints the summary on stdout, one figure per line, for scripts to read.
    fn print(&self, rate: f64) {
        let ms = |us: u64| us as f64 / 1000.0;
        let h = &self.latency_us;
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        println!(
            "ingested: {} jobs in {secs:.2} s ({:.1} jobs/s, target {rate}/s), errors {}",
            self.ingested,
            self.ingested as f64 / secs,
            self.errors
        );
        if h.is_empty() {
            println!("upsert_job latency: no successful call");
        } else {
            println!(
                "upsert_job latency: avg {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                h.mean() / 1000.0,
                ms(h.value_at_quantile(0.5)),
                ms(h.value_at_quantile(0.99)),
                ms(h.max())
            );
        }
        println!(
            "writer lag: at most {:.1} ms behind schedule",
            self.max_lag.as_secs_f64() * 1000.0
        );
        if let Some(e) = &self.first_error {
            println!("first ingest error: {e}");
        }
    }
}

/// Ingests `rate` new jobs per second, one per call, until `stop` turns true.
async fn write_jobs(
    service: JobListingsService,
    templates: Vec<Job>,
    rate: f64,
    mut stop: watch::Receiver<bool>,
) -> WriterReport {
    let period = Duration::from_secs_f64(1.0 / rate);
    let mut ticks = tokio::time::interval(period);
    // Open loop: ticks missed while a call was slow fire at once afterwards.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut report = WriterReport {
        ingested: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latency_us: Histogram::new_with_bounds(1, 3_600_000_000, 3)
            .unwrap_or_else(|_| unreachable!("valid histogram bounds")),
        max_lag: Duration::ZERO,
    };
    let started = Instant::now();
    let mut n: u64 = 0;
    loop {
        let due = tokio::select! {
            due = ticks.tick() => due,
            _ = stop.wait_for(|stop| *stop) => break,
        };
        report.max_lag = report.max_lag.max(due.elapsed());
        let mut job = templates[(n as usize) % templates.len()].clone();
        n += 1;
        let now = Utc::now();
        job.id = JobId(uuid::Uuid::new_v4());
        job.source_url = format!("https://jobs.example.com/ingest/{}", job.id.0.simple());
        job.status = JobStatus::Active;
        job.activated_at = None;
        job.posted_at = now;
        job.first_seen_at = now;
        job.updated_at = now;
        let t = Instant::now();
        match service.upsert_job(job).await {
            Ok(_) => {
                let micros = t.elapsed().as_micros().try_into().unwrap_or(u64::MAX);
                report.latency_us.saturating_record(micros.max(1));
                report.ingested += 1;
            }
            Err(e) => {
                report.errors += 1;
                report.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Sets `stop` on Ctrl-C (SIGINT), SIGTERM (on Unix) or, when given, once `duration` has
/// passed. The handlers are installed before this returns, so an early signal is not lost.
fn spawn_stopper(stop: Arc<watch::Sender<bool>>, duration: Option<Duration>) -> Result<()> {
    let signalled = signal_received()?;
    tokio::spawn(async move {
        let timer = async {
            match duration {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = signalled => {}
            () = timer => {}
        }
        stop.send_replace(true);
    });
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
#[cfg(unix)]
fn signal_received() -> Result<impl std::future::Future<Output = ()> + Send> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt()).context("installing a SIGINT handler")?;
    let mut terminate = signal(SignalKind::terminate()).context("installing a SIGTERM handler")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
fn signal_received() -> Result<impl std::future::Future<Output = ()> + Send> {
    Ok(async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}
