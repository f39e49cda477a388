//! # Does listing one customer's many deliveries slow everyone else?
//!
//! ```text
//! cargo run --release -p job-listings-compare --bin deliveries_listing -- --data-dir "$(mktemp -d)/db"
//! ```
//!
//! Serves the API from a fresh sled folder on 127.0.0.1 with the real HTTP sender and a
//! receiver on loopback that answers at once. Customer A (Agent Pro) has one subscription
//! that receives `--deliveries` new jobs, all delivered, so its delivery history is that long.
//! Then customer B (enterprise) searches (`GET /api/v1/jobs?q=engineer`) at `--rate` per
//! second for `--seconds`:
//!
//! 1. alone;
//! 2. while A lists its deliveries (`GET /api/v1/webhooks/{id}/deliveries`) 40 times a
//!    second, inside its rate limit.
//!
//! Prints B's p50 and p99 in each phase and A's own listing latency. Loopback only.

use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "../receiver.rs"]
mod receiver;

use anyhow::{bail, Result};
use clap::Parser;
use tokio::net::TcpListener;

use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{CallbackUrl, JobId, JobStatus, Plan};
use job_listings::server::{Server, ServerConfig};
use job_listings::service::{JobListingsService, NewKey, NewWebhook, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};
use job_listings::webhooks::{CallbackPolicy, HttpNotifier, HttpNotifierConfig};

#[derive(Debug, Parser)]
struct Cli {
    /// A fresh sled folder (created).
    #[arg(long)]
    data_dir: std::path::PathBuf,
    /// Deliveries in customer A's history.
    #[arg(long, default_value_t = 20_000)]
    deliveries: usize,
    /// Customer B's searches per second.
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
    /// Seconds per phase.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let receiver = TcpListener::bind("127.0.0.1:0").await?;
    let hook_url = format!("http://{}/hook", receiver.local_addr()?);
    tokio::spawn(receiver::receive(
        receiver,
        Arc::new(|_: &str, _: &[u8]| Duration::ZERO),
    ));

    let policy = CallbackPolicy::local_development();
    let service = JobListingsService::builder()
        .store(Arc::new(SledStore::open(&SledConfig::new(&cli.data_dir))?))
        .notifier(Arc::new(HttpNotifier::new(
            policy,
            HttpNotifierConfig::default(),
        )?))
        .config(ServiceConfig::default().callback_policy(policy))
        .build()
        .await?;
    let data = Dataset::generate(5, 300, 6_000);
    service.upsert_companies(data.companies.clone()).await?;
    for chunk in data.jobs.chunks(1_000) {
        service.upsert_jobs(chunk.to_vec()).await?;
    }
    let (a, _) = service.create_key(NewKey::new(Plan::AgentPro)).await?;
    let (b, _) = service.create_key(NewKey::new(Plan::Enterprise)).await?;
    let hook = service
        .create_webhook(&a, NewWebhook::new(CallbackUrl::parse(&hook_url)?))
        .await?
        .value;

    let started = Instant::now();
    let templates = &data.jobs;
    for chunk in (0..cli.deliveries).collect::<Vec<_>>().chunks(500) {
        let batch: Vec<_> = chunk
            .iter()
            .map(|n| {
                let mut job = templates[n % templates.len()].clone();
                job.id = JobId(uuid::Uuid::new_v4());
                job.status = JobStatus::Active;
                job
            })
            .collect();
        service.upsert_jobs(batch).await?;
    }
    loop {
        let caller = service.caller(&a)?;
        let listed = caller.webhook_deliveries(hook.id).await?;
        let pending = listed
            .value
            .iter()
            .any(|d| d.status == job_listings::domain::DeliveryStatus::Pending);
        if !pending && service.fan_out_now().await? == 0 && listed.value.len() == 100 {
            break;
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("the deliveries did not settle in 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "{} deliveries made and settled in {:.1?}",
        cli.deliveries,
        started.elapsed()
    );

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let server = Server::new(listener, Api::new(service.clone()), ServerConfig::default())?;
    let base = format!("http://{}", server.local_addr());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async {
        let _ = stop_rx.await;
    }));
    let client = reqwest::Client::new();
    let search = format!("{base}/api/v1/jobs?q=engineer");
    let listing = format!("{base}/api/v1/webhooks/{}/deliveries", hook.id);
    let phase = Duration::from_secs(cli.seconds);

    let alone = paced(&client, &search, b.expose(), cli.rate, phase).await;
    report("B searches, alone", &alone);
    let lister = tokio::spawn(paced(
        client.clone(),
        listing.clone(),
        a.expose().to_owned(),
        40.0,
        phase,
    ));
    let during = paced(&client, &search, b.expose(), cli.rate, phase).await;
    let a_side = lister.await?;
    report("B searches, while A lists its deliveries", &during);
    report("A lists its deliveries (40/s)", &a_side);
    println!(
        "B p99 ratio (during / alone): {:.2}",
        pct(&during, 0.99) / pct(&alone, 0.99).max(f64::MIN_POSITIVE)
    );
    let _ = stop_tx.send(());
    serving.await??;
    Ok(())
}

/// Sends GETs at `rate` for `how_long`; returns each answered request's latency in ms, or
/// NaN for a failure or a non-200.
async fn paced(
    client: impl std::borrow::Borrow<reqwest::Client>,
    url: impl AsRef<str>,
    key: impl AsRef<str>,
    rate: f64,
    how_long: Duration,
) -> Vec<f64> {
    let client = client.borrow();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    let end = Instant::now() + how_long;
    let mut running = tokio::task::JoinSet::new();
    while Instant::now() < end {
        tick.tick().await;
        let request = client.get(url.as_ref()).header("X-API-Key", key.as_ref());
        running.spawn(async move {
            let sent = Instant::now();
            match request.send().await {
                Ok(r) if r.status() == 200 => match r.bytes().await {
                    Ok(_) => sent.elapsed().as_secs_f64() * 1e3,
                    Err(_) => f64::NAN,
                },
                _ => f64::NAN,
            }
        });
    }
    let mut out = Vec::new();
    while let Some(done) = running.join_next().await {
        out.push(done.unwrap_or(f64::NAN));
    }
    out
}

fn pct(ms: &[f64], p: f64) -> f64 {
    let mut ok: Vec<f64> = ms.iter().copied().filter(|v| !v.is_nan()).collect();
    ok.sort_by(f64::total_cmp);
    ok.get(((ok.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

fn report(label: &str, ms: &[f64]) {
    let failed = ms.iter().filter(|v| v.is_nan()).count();
    println!(
        "{label}: {} requests, {failed} failed, p50 {:.2} ms, p99 {:.2} ms",
        ms.len(),
        pct(ms, 0.5),
        pct(ms, 0.99)
    );
}
