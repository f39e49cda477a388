//! # Import with webhook subscriptions: does ingest cost grow with them?
//!
//! ```text
//! cargo build --release -p job-listings-compare --bin import_fan_out
//! for subs in 0 100 1000; do
//!   target/release/import_fan_out --data-dir "$(mktemp -d)/db" --jobs 1000000 --subscriptions $subs
//! done
//! ```
//!
//! Opens a fresh sled folder with the service as the `job-listings import` command does (no
//! notifier: nothing is sent while importing), stores the generated companies, registers
//! `--subscriptions` webhook subscriptions that match every job, then times the import of
//! `--jobs` generated active jobs through [`JobListingsService::import_lines`], as the command
//! and the admin bulk uploads import them: one JSON line a job, in id order, durable at the
//! end. Writing each job's line is timed too (about a third of the cost of reading it).
//! Prints one line: subscriptions, jobs, seconds, jobs/s, log entries, pending deliveries,
//! peak RSS (VmHWM) and the folder's size. Run each count in a process of its own, so the
//! peak RSS is that run's.
//!
//! Then, with `--fan-out`, times how long the delivery path takes to fan the log out until
//! every subscription holds its window of pending deliveries (1,000 by default).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;

use job_listings::demo::Dataset;
use job_listings::domain::{CallbackUrl, JobStatus, Plan};
use job_listings::service::{JobListingsService, NewKey, NewWebhook, RecordKind, ServiceConfig};
use job_listings::store::{EventLog, SledConfig, SledStore};
use job_listings::webhooks::CallbackPolicy;

#[derive(Debug, Parser)]
#[command(name = "import_fan_out")]
struct Cli {
    /// A fresh sled folder (created).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// Jobs to import (all active, so each is announced).
    #[arg(long, default_value_t = 1_000_000)]
    jobs: usize,
    /// Companies the jobs belong to.
    #[arg(long, default_value_t = 10_000)]
    companies: usize,
    /// Webhook subscriptions matching every job, registered before the import.
    #[arg(long, default_value_t = 0)]
    subscriptions: usize,
    /// Also time fanning the log out to the subscriptions after the import.
    #[arg(long)]
    fan_out: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let store = Arc::new(SledStore::open(&SledConfig::new(&cli.data_dir)).context("sled opens")?);
    let service = JobListingsService::builder()
        .store(store.clone())
        .config(
            ServiceConfig::default()
                .max_webhooks_per_key(usize::MAX)
                .callback_policy(CallbackPolicy::local_development()),
        )
        .build()
        .await?;
    let mut data = Dataset::generate(7, cli.companies, cli.jobs);
    for job in &mut data.jobs {
        job.status = JobStatus::Active;
    }
    service.import_companies(data.companies).await?;
    data.jobs.sort_by_key(|j| j.id);
    let (key, _) = service.create_key(NewKey::new(Plan::AgentPro)).await?;
    for n in 0..cli.subscriptions {
        let url = CallbackUrl::parse(&format!("http://127.0.0.1:9/hook/{n}"))?;
        service.create_webhook(&key, NewWebhook::new(url)).await?;
    }

    let started = Instant::now();
    let mut import = service.import_lines(RecordKind::Jobs);
    let mut line = Vec::new();
    for (i, job) in data.jobs.iter().enumerate() {
        line.clear();
        serde_json::to_writer(&mut line, job)?;
        import.line(i + 1, &line).await?;
    }
    let summary = import.finish().await?;
    anyhow::ensure!(summary.refused == 0, "lines refused: {:?}", summary.errors);
    let announced = summary.announced.unwrap_or(0);
    let took = started.elapsed().as_secs_f64();
    let logged = store.log_after(0, usize::MAX).await?.len();
    let mut fanned = String::new();
    if cli.fan_out {
        let started = Instant::now();
        let made = service.fan_out_now().await?;
        fanned = format!(
            " fan_out_deliveries={made} fan_out_seconds={:.2}",
            started.elapsed().as_secs_f64()
        );
    }
    service.shutdown().await?;
    println!(
        "subscriptions={} jobs={} seconds={took:.2} jobs_per_s={:.0} log_entries={logged} announced={}{fanned} peak_rss_mib={} folder_mib={}",
        cli.subscriptions,
        summary.created,
        summary.created as f64 / took,
        announced,
        peak_rss_mib(),
        folder_bytes(&cli.data_dir) / (1024 * 1024),
    );
    Ok(())
}

/// This process's peak resident set (VmHWM), in MiB; 0 where /proc is missing.
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024)
}

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => folder_bytes(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}
