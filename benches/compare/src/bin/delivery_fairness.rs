//! # Does one customer's flood delay another customer's webhooks?
//!
//! ```text
//! cargo run --release -p job-listings-compare --bin delivery_fairness -- --data-dir "$(mktemp -d)/db"
//! ```
//!
//! Runs the service on a fresh sled folder with the real HTTP sender, and a receiver on
//! 127.0.0.1 that answers `/fast/...` at once and holds `/slow/...` for 30 s. Customer B (an
//! enterprise key) has one subscription to `/fast` for `design` jobs. Measures B's delivery
//! latency (ingest returned → request arrived) for `--jobs` design jobs ingested at
//! `--rate` per second:
//!
//! 1. alone;
//! 2. while customer A (an Agent Pro key) holds 25 subscriptions, every one matching every
//!    job and pointing at `/slow`, after `--flood` jobs were ingested for them first.
//!
//! Prints p50, p99 and max of each phase and the p99 ratio. Loopback only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../receiver.rs"]
mod receiver;

use anyhow::Result;
use clap::Parser;
use tokio::net::TcpListener;

use job_listings::demo::Dataset;
use job_listings::domain::{CallbackUrl, DomainTag, JobId, JobStatus, Plan};
use job_listings::service::{JobListingsService, NewKey, NewWebhook, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};
use job_listings::webhooks::{CallbackPolicy, HttpNotifier, HttpNotifierConfig};

#[derive(Debug, Parser)]
struct Cli {
    /// A fresh sled folder (created).
    #[arg(long)]
    data_dir: std::path::PathBuf,
    /// Design jobs measured per phase.
    #[arg(long, default_value_t = 200)]
    jobs: usize,
    /// Design jobs ingested per second.
    #[arg(long, default_value_t = 20.0)]
    rate: f64,
    /// Jobs ingested for customer A's slow subscriptions before phase 2 is measured.
    #[arg(long, default_value_t = 2_000)]
    flood: usize,
}

type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let arrivals: Arrivals = Arc::default();
    let receiver = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", receiver.local_addr()?);
    let seen = arrivals.clone();
    tokio::spawn(receiver::receive(
        receiver,
        Arc::new(move |head: &str, body: &[u8]| {
            if head.starts_with("post /slow") {
                return Duration::from_secs(30);
            }
            let body: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            if let (Some(id), Ok(mut seen)) = (body["data"]["id"].as_str(), seen.lock()) {
                seen.entry(id.to_owned()).or_insert_with(Instant::now);
            }
            Duration::ZERO
        }),
    ));

    let policy = CallbackPolicy::local_development();
    let notifier = HttpNotifier::new(policy, HttpNotifierConfig::default())?;
    let store = SledStore::open(&SledConfig::new(&cli.data_dir))?;
    let service = JobListingsService::builder()
        .store(Arc::new(store))
        .notifier(Arc::new(notifier))
        .config(ServiceConfig::default().callback_policy(policy))
        .build()
        .await?;
    let data = Dataset::generate(11, 200, cli.jobs * 2 + cli.flood + 1_000);
    service.upsert_companies(data.companies.clone()).await?;
    let design = DomainTag::parse("design")?;
    let mut design_jobs = data
        .jobs
        .iter()
        .filter(|j| j.domains.contains(&design))
        .cloned();
    let mut other_jobs = data
        .jobs
        .iter()
        .filter(|j| !j.domains.contains(&design))
        .cloned();

    let (b, _) = service.create_key(NewKey::new(Plan::Enterprise)).await?;
    let mut hook = NewWebhook::new(CallbackUrl::parse(&format!("{base}/fast/b"))?);
    hook.domain_filters = vec![design.clone()];
    service.create_webhook(&b, hook).await?;

    let mut phase = |label: &'static str| {
        let jobs: Vec<_> = design_jobs.by_ref().take(cli.jobs).collect();
        (label, jobs)
    };
    let alone = phase("alone");
    let flooded = phase("while another customer floods slow receivers");
    let alone = measure(&service, &arrivals, alone, cli.rate).await?;

    let (a, _) = service.create_key(NewKey::new(Plan::AgentPro)).await?;
    for n in 0..25 {
        let url = CallbackUrl::parse(&format!("{base}/slow/{n}"))?;
        service.create_webhook(&a, NewWebhook::new(url)).await?;
    }
    let flood: Vec<_> = other_jobs.by_ref().take(cli.flood).collect();
    for chunk in flood.chunks(500) {
        service.upsert_jobs(chunk.to_vec()).await?;
    }
    let flooded = measure(&service, &arrivals, flooded, cli.rate).await?;
    let ratio = flooded.1 / alone.1.max(f64::MIN_POSITIVE);
    println!("p99 ratio (flooded / alone): {ratio:.2}");
    service.shutdown().await?;
    Ok(())
}

/// Ingests the phase's jobs at `rate` and reports B's latencies: (p50, p99) in ms.
async fn measure(
    service: &JobListingsService,
    arrivals: &Arrivals,
    (label, jobs): (&'static str, Vec<job_listings::domain::Job>),
    rate: f64,
) -> Result<(f64, f64)> {
    let mut sent: HashMap<String, Instant> = HashMap::new();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    for mut job in jobs {
        tick.tick().await;
        job.id = JobId(uuid::Uuid::new_v4());
        job.status = JobStatus::Active;
        let id = job.id.to_string();
        service.upsert_job(job).await?;
        sent.insert(id, Instant::now());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let arrived = arrivals
            .lock()
            .map_or(0, |a| sent.keys().filter(|k| a.contains_key(*k)).count());
        if arrived == sent.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut ms: Vec<f64> = {
        let a = arrivals.lock().map_err(|_| anyhow::anyhow!("lock"))?;
        sent.iter()
            .filter_map(|(id, at)| {
                a.get(id)
                    .map(|got| got.saturating_duration_since(*at).as_secs_f64() * 1e3)
            })
            .collect()
    };
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        ms.get(((ms.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        "{label}: {} of {} delivered, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms.len(),
        sent.len(),
        pct(0.5),
        pct(0.99),
        ms.last().copied().unwrap_or(f64::NAN)
    );
    Ok((pct(0.5), pct(0.99)))
}
