//! # How soon is a job written through the admin API searchable, and announced?
//!
//! ```text
//! # A server (or two PostgreSQL replicas) that may call loopback webhooks:
//! target/release/job-listings --data-dir "$(mktemp -d)/db" serve --addr 127.0.0.1:18090 \
//!     --admin-addr 127.0.0.1:18091 --allow-local-webhooks --no-rate-limits
//! cargo run --release -p job-listings-compare --bin freshness -- \
//!     --url http://127.0.0.1:18090 --admin-url http://127.0.0.1:18091 \
//!     --admin-token-file DATA/admin.token --key jl_live_... --jobs 1000 --rate 100
//! ```
//!
//! Subscribes a receiver on 127.0.0.1 to jobs with a marker word, then writes `--jobs` new jobs
//! one at a time with `PUT /admin/v1/jobs/{id}` at `--rate` a second on the admin API at
//! `--admin-url`, while a poller searches the public API at `--url` for the marker without
//! pause (with PostgreSQL replicas, give the other replica's `--url`). For each job it
//! measures, from the start of its admin call:
//!
//! - searchable: when the poller first saw it in `GET /api/v1/jobs`;
//! - webhook: when the receiver got its signed `job.new`.
//!
//! It also searches for each job's own word right after its call returns (on `--url`) and
//! counts those found: with one server, every one. Prints p50, p99 and max of each, and the
//! jobs never seen or delivered more than once. Loopback only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../live.rs"]
mod live;
#[path = "../receiver.rs"]
mod receiver;

use anyhow::{bail, Context, Result};
use clap::Parser;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use url::Url;

#[derive(Debug, Parser)]
struct Cli {
    /// The public API that is searched (loopback).
    #[arg(long)]
    url: Url,
    /// The admin API that is written to (loopback).
    #[arg(long)]
    admin_url: Url,
    /// The admin token's file (the server's DATA/admin.token).
    #[arg(long)]
    admin_token_file: std::path::PathBuf,
    /// An agent_pro or enterprise key of the server at --url.
    #[arg(long)]
    key: String,
    /// Jobs written.
    #[arg(long, default_value_t = 1_000)]
    jobs: usize,
    /// Jobs written a second.
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
    /// How long to wait for the last searches and webhooks, in seconds.
    #[arg(long, default_value_t = 30)]
    wait: u64,
}

/// When each job was first seen by the poller and delivered to the receiver.
#[derive(Default)]
struct Seen {
    searchable: HashMap<String, Instant>,
    /// Each delivery's arrival and `webhook-id`, by job id.
    delivered: HashMap<String, Vec<(Instant, String)>>,
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    live::loopback(&cli.url)?;
    live::loopback(&cli.admin_url)?;
    let token = std::fs::read_to_string(&cli.admin_token_file)
        .context("reading the admin token file")?
        .trim()
        .to_owned();
    let http = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let base = cli.url.as_str().trim_end_matches('/').to_owned();
    let admin = cli.admin_url.as_str().trim_end_matches('/').to_owned();
    let marker = format!("fresh{}", std::process::id());

    // 1. A template job: the first one a search returns, as the admin API stores it.
    let template = live::template_job(&http, &base, &admin, &cli.key, &token).await?;

    // 2. A receiver on loopback, subscribed to the marker.
    let seen = Arc::new(Mutex::new(Seen::default()));
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let on_hit = seen.clone();
    tokio::spawn(receiver::receive(
        listener,
        Arc::new(move |head: &str, body: &[u8]| {
            let at = Instant::now();
            let id = head
                .lines()
                .find_map(|l| l.strip_prefix("webhook-id:"))
                .unwrap_or("")
                .trim()
                .to_owned();
            if let Ok(event) = serde_json::from_slice::<Value>(body) {
                if let Some(job) = event["data"]["id"].as_str() {
                    let mut seen = on_hit.lock().unwrap_or_else(|e| e.into_inner());
                    seen.delivered
                        .entry(job.to_owned())
                        .or_default()
                        .push((at, id));
                }
            }
            Duration::ZERO
        }),
    ));
    let hook: Value = http
        .post(format!("{base}/api/v1/webhooks"))
        .header("x-api-key", &cli.key)
        .json(&json!({ "callback_url": format!("http://127.0.0.1:{port}/hook"), "q": marker }))
        .send()
        .await?
        .json()
        .await?;
    let Some(hook_id) = hook["id"].as_str().map(str::to_owned) else {
        bail!("could not subscribe (is the server run with --allow-local-webhooks?): {hook}");
    };

    // 3. The poller: the newest 50 jobs with the marker, again and again.
    let polling = Arc::new(AtomicBool::new(true));
    let poller = {
        let (http, seen, polling) = (http.clone(), seen.clone(), polling.clone());
        let url = format!("{base}/api/v1/jobs?q={marker}&per_page=50");
        let key = cli.key.clone();
        tokio::spawn(async move {
            let mut polls = 0u64;
            while polling.load(Ordering::Relaxed) {
                let Ok(response) = http.get(&url).header("x-api-key", &key).send().await else {
                    continue;
                };
                let at = Instant::now();
                polls += 1;
                let Ok(page) = response.json::<Value>().await else {
                    continue;
                };
                let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                for job in page["data"].as_array().into_iter().flatten() {
                    if let Some(id) = job["id"].as_str() {
                        seen.searchable.entry(id.to_owned()).or_insert(at);
                    }
                }
            }
            polls
        })
    };

    // 4. The writes, one at a time at the rate.
    let started = Instant::now();
    let mut written: Vec<(String, Instant)> = Vec::with_capacity(cli.jobs);
    let mut found_at_return = 0;
    let mut call_ms = Vec::with_capacity(cli.jobs);
    for i in 0..cli.jobs {
        let due = started + Duration::from_secs_f64(i as f64 / cli.rate);
        tokio::time::sleep_until(due.into()).await;
        let id = uuid::Uuid::new_v4().to_string();
        let word = format!("w{i}x{}", std::process::id());
        let mut job = template.clone();
        job["id"] = json!(id);
        job["role"] = json!(format!("Freshness {marker} {word}"));
        job["posted_at"] = json!(chrono::Utc::now().to_rfc3339());
        let t0 = Instant::now();
        let response = http
            .put(format!("{admin}/admin/v1/jobs/{id}"))
            .bearer_auth(&token)
            .json(&job)
            .send()
            .await?;
        if !response.status().is_success() {
            bail!(
                "PUT job {i}: {} {}",
                response.status(),
                response.text().await?
            );
        }
        call_ms.push(t0.elapsed());
        written.push((id.clone(), t0));
        let found: Value = http
            .get(format!("{base}/api/v1/jobs?q={word}"))
            .header("x-api-key", &cli.key)
            .send()
            .await?
            .json()
            .await?;
        if found["pagination"]["total"] == 1 {
            found_at_return += 1;
        }
    }

    // 5. Wait for the stragglers, then stop polling.
    let deadline = Instant::now() + Duration::from_secs(cli.wait);
    while Instant::now() < deadline {
        let done = {
            let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            written
                .iter()
                .all(|(id, _)| seen.searchable.contains_key(id) && seen.delivered.contains_key(id))
        };
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    polling.store(false, Ordering::Relaxed);
    let polls = poller.await.unwrap_or(0);
    let _ = http
        .delete(format!("{base}/api/v1/webhooks/{hook_id}"))
        .header("x-api-key", &cli.key)
        .send()
        .await;

    // 6. Report.
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    let mut searchable = Vec::new();
    let mut delivered = Vec::new();
    let (mut never_searchable, mut never_delivered, mut duplicated) = (0, 0, 0);
    for (id, t0) in &written {
        match seen.searchable.get(id) {
            Some(at) => searchable.push(at.saturating_duration_since(*t0)),
            None => never_searchable += 1,
        }
        match seen.delivered.get(id) {
            Some(hits) => {
                delivered.push(hits[0].0.saturating_duration_since(*t0));
                let mut ids: Vec<&String> = hits.iter().map(|(_, w)| w).collect();
                ids.sort();
                ids.dedup();
                duplicated += usize::from(hits.len() > 1 || ids.len() > 1);
            }
            None => never_delivered += 1,
        }
    }
    let took = started.elapsed();
    println!(
        "{} jobs written one at a time at {:.0}/s in {:.1} s; {polls} searches polled ({:.2} ms apart on average)",
        written.len(),
        cli.rate,
        took.as_secs_f64(),
        took.as_secs_f64() * 1e3 / polls.max(1) as f64
    );
    live::print_line("admin PUT call", &mut call_ms);
    live::print_line("searchable (poller)", &mut searchable);
    live::print_line("webhook received", &mut delivered);
    println!(
        "found by a search right after the call returned: {found_at_return} of {}",
        written.len()
    );
    println!(
        "never searchable: {never_searchable}; never delivered: {never_delivered}; delivered more than once: {duplicated}"
    );
    if never_searchable + never_delivered + duplicated > 0 {
        std::process::exit(1);
    }
    Ok(())
}
