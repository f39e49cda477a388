//! # Does a client following `GET /changes` see every change once, in order, and how soon?
//!
//! ```text
//! cargo run --release -p job-listings-compare --bin feed_follow -- \
//!     --url http://127.0.0.1:18090 --admin-url http://127.0.0.1:18091 \
//!     --admin-token-file DATA/admin.token --key jl_live_... --writes 20000 --rate 1000
//! ```
//!
//! `--writers` tasks write `--writes` jobs in all through `PUT /admin/v1/jobs/{id}` at `--rate`
//! a second: each task creates a job, then alternates between creating one and changing the
//! role of one it made (so half the writes are `job.new`, half `job.updated`). A write that
//! fails to connect or answers 5xx (a server being restarted) is sent again until it is
//! acknowledged. Meanwhile a follower reads `GET /api/v1/changes?q=<marker>` from a cursor
//! taken before the first write, without pause; with `--switch-url` it moves to that server
//! (another replica) after `--switch-after` seconds, with the same cursor.
//!
//! It checks that each acknowledged write is one event of the right kind, each seen once,
//! each job's in the order written, cursors strictly increasing; and prints the lag from the
//! start of a write's call, and from its acknowledgement, to the follower reading its event:
//! p50, p99, max (0 when it was read before the call returned). Exits non-zero on
//! a lost, repeated or misordered event. Loopback only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../live.rs"]
mod live;

use anyhow::{bail, Context, Result};
use clap::Parser;
use job_listings::domain::FeedCursor;
use serde_json::{json, Value};
use url::Url;

#[derive(Debug, Parser)]
struct Cli {
    /// The public API the follower reads (loopback).
    #[arg(long)]
    url: Url,
    /// Another replica the follower moves to after `--switch-after` seconds.
    #[arg(long)]
    switch_url: Option<Url>,
    /// Seconds after the first write the follower moves to `--switch-url`.
    #[arg(long, default_value_t = 5.0)]
    switch_after: f64,
    /// The admin API written to (loopback).
    #[arg(long)]
    admin_url: Url,
    /// The admin token's file (the server's DATA/admin.token).
    #[arg(long)]
    admin_token_file: std::path::PathBuf,
    /// A key of the server(s) at --url.
    #[arg(long)]
    key: String,
    /// Writes in all.
    #[arg(long, default_value_t = 20_000)]
    writes: usize,
    /// Writes a second, all writers together.
    #[arg(long, default_value_t = 1_000.0)]
    rate: f64,
    /// Tasks writing side by side.
    #[arg(long, default_value_t = 16)]
    writers: usize,
    /// How long to wait for the last events after the last write, in seconds.
    #[arg(long, default_value_t = 30)]
    wait: u64,
}

/// One acknowledged write: the job, its version (0: new), when its call started and when it
/// was acknowledged.
struct Written {
    job: String,
    version: u64,
    at: Instant,
    acked: Instant,
}

/// One event the follower read.
struct Read {
    job: String,
    version: u64,
    kind: String,
    at: Instant,
}

fn base(url: &Url) -> String {
    url.as_str().trim_end_matches('/').to_owned()
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    for url in [
        Some(&cli.url),
        cli.switch_url.as_ref(),
        Some(&cli.admin_url),
    ]
    .into_iter()
    .flatten()
    {
        live::loopback(url)?;
    }
    let token = std::fs::read_to_string(&cli.admin_token_file)
        .context("reading the admin token file")?
        .trim()
        .to_owned();
    let http = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()?;
    let first_base = base(&cli.url);
    let admin = base(&cli.admin_url);
    let marker = format!("feed{}", std::process::id());

    // 1. A template job, as the admin API stores it, and the cursor to follow from.
    let template = live::template_job(&http, &first_base, &admin, &cli.key, &token).await?;
    let start: Value = http
        .get(format!("{first_base}/api/v1/changes?after=now"))
        .header("x-api-key", &cli.key)
        .send()
        .await?
        .json()
        .await?;
    let Some(cursor) = start["next_cursor"].as_str().map(str::to_owned) else {
        bail!("no cursor from GET /changes?after=now: {start}");
    };

    // 2. The follower.
    let started = Instant::now();
    let reads = Arc::new(Mutex::new(Vec::<Read>::new()));
    let following = Arc::new(AtomicBool::new(true));
    let follower = {
        let (http, reads, following) = (http.clone(), reads.clone(), following.clone());
        let key = cli.key.clone();
        let switch = cli
            .switch_url
            .as_ref()
            .map(|u| (base(u), started + Duration::from_secs_f64(cli.switch_after)));
        let marker = marker.clone();
        tokio::spawn(async move {
            let mut cursor = cursor;
            let mut last_position = FeedCursor::decode(&cursor).map(|c| c.0).unwrap_or(0);
            let (mut pages, mut failures, mut misordered) = (0u64, 0u64, 0u64);
            let mut switched = false;
            while following.load(Ordering::Relaxed) {
                let url = match &switch {
                    Some((other, at)) if Instant::now() >= *at => {
                        switched = true;
                        other.clone()
                    }
                    _ => first_base.clone(),
                };
                let answer = http
                    .get(format!(
                        "{url}/api/v1/changes?after={cursor}&limit=500&q={marker}"
                    ))
                    .header("x-api-key", &key)
                    .send()
                    .await;
                let page: Value = match answer {
                    Ok(r) if r.status().is_success() => match r.json().await {
                        Ok(page) => page,
                        Err(_) => {
                            failures += 1;
                            continue;
                        }
                    },
                    // A server restarting, or a replica starting: try again shortly.
                    _ => {
                        failures += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                let at = Instant::now();
                pages += 1;
                let events = page["data"].as_array().cloned().unwrap_or_default();
                {
                    let mut reads = reads.lock().unwrap_or_else(|e| e.into_inner());
                    for e in &events {
                        let position = e["cursor"]
                            .as_str()
                            .and_then(|c| FeedCursor::decode(c).ok())
                            .map_or(0, |c| c.0);
                        if position <= last_position {
                            misordered += 1;
                        }
                        last_position = position;
                        let role = e["job"]["role"].as_str().unwrap_or("");
                        let version = role
                            .rsplit_once(" v")
                            .and_then(|(_, v)| v.parse().ok())
                            .unwrap_or(u64::MAX);
                        reads.push(Read {
                            job: e["job_id"].as_str().unwrap_or("").to_owned(),
                            version,
                            kind: e["type"].as_str().unwrap_or("").to_owned(),
                            at,
                        });
                    }
                }
                if let Some(next) = page["next_cursor"].as_str() {
                    cursor = next.to_owned();
                }
                if page["has_more"] != true && events.is_empty() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            (pages, failures, misordered, switched)
        })
    };

    // 3. The writers.
    let per_writer = cli.writes.div_ceil(cli.writers.max(1));
    let writer_rate = cli.rate / cli.writers.max(1) as f64;
    let mut tasks = Vec::new();
    for w in 0..cli.writers.max(1) {
        let (http, template, admin, token, marker) = (
            http.clone(),
            template.clone(),
            admin.clone(),
            token.clone(),
            marker.clone(),
        );
        let writes = per_writer.min(cli.writes.saturating_sub(w * per_writer));
        tasks.push(tokio::spawn(async move {
            let mut mine: Vec<(String, u64)> = Vec::new();
            let mut written = Vec::with_capacity(writes);
            let mut retries = 0u64;
            for i in 0..writes {
                let due = started + Duration::from_secs_f64(i as f64 / writer_rate);
                tokio::time::sleep_until(due.into()).await;
                let (id, version) = if i % 2 == 0 || mine.is_empty() {
                    mine.push((uuid::Uuid::new_v4().to_string(), 0));
                    mine.last().cloned().unwrap_or_default()
                } else {
                    let n = (i / 2) % mine.len();
                    mine[n].1 += 1;
                    mine[n].clone()
                };
                let mut job = template.clone();
                job["id"] = json!(id);
                job["role"] = json!(format!("Feed {marker} w{w} v{version}"));
                job["posted_at"] = json!("2026-11-01T00:00:00Z");
                let deadline = Instant::now() + Duration::from_secs(120);
                loop {
                    let t0 = Instant::now();
                    let answer = http
                        .put(format!("{admin}/admin/v1/jobs/{id}"))
                        .bearer_auth(&token)
                        .json(&job)
                        .send()
                        .await;
                    match answer {
                        Ok(r) if r.status().is_success() => {
                            written.push(Written {
                                job: id.clone(),
                                version,
                                at: t0,
                                acked: Instant::now(),
                            });
                            break;
                        }
                        Ok(r) if r.status().is_client_error() => {
                            bail!("PUT {id}: {} {}", r.status(), r.text().await?)
                        }
                        _ if Instant::now() < deadline => {
                            retries += 1;
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        other => bail!("PUT {id} never acknowledged: {other:?}"),
                    }
                }
            }
            Ok((written, retries))
        }));
    }
    let mut written = Vec::with_capacity(cli.writes);
    let mut retries = 0;
    for task in tasks {
        let (mut w, r) = task.await??;
        written.append(&mut w);
        retries += r;
    }
    let wrote_in = started.elapsed();

    // 4. Wait for the last events.
    let deadline = Instant::now() + Duration::from_secs(cli.wait);
    while Instant::now() < deadline {
        if reads.lock().unwrap_or_else(|e| e.into_inner()).len() >= written.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    following.store(false, Ordering::Relaxed);
    let (pages, failures, misordered, switched) = follower.await?;

    // 5. Check and report.
    let reads = reads.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen: HashMap<(&str, u64), Vec<&Read>> = HashMap::new();
    let mut order_in_job: HashMap<&str, u64> = HashMap::new();
    let mut job_misordered = 0;
    for r in reads.iter() {
        seen.entry((r.job.as_str(), r.version)).or_default().push(r);
        let last = order_in_job.entry(r.job.as_str()).or_insert(0);
        if r.version < *last {
            job_misordered += 1;
        }
        *last = r.version;
    }
    let (mut lost, mut repeated, mut wrong_kind) = (0, 0, 0);
    let mut lag = Vec::with_capacity(written.len());
    let mut after_ack = Vec::with_capacity(written.len());
    for w in &written {
        match seen.get(&(w.job.as_str(), w.version)) {
            None => lost += 1,
            Some(hits) => {
                repeated += usize::from(hits.len() > 1);
                let want = if w.version == 0 {
                    "job.new"
                } else {
                    "job.updated"
                };
                wrong_kind += usize::from(hits[0].kind != want);
                lag.push(hits[0].at.saturating_duration_since(w.at));
                after_ack.push(hits[0].at.saturating_duration_since(w.acked));
            }
        }
    }
    let unexpected = reads.len().saturating_sub(written.len() - lost);
    println!(
        "{} writes acknowledged in {:.1} s ({:.0}/s, {retries} sent again); {} events read in {pages} pages ({failures} failed reads{})",
        written.len(),
        wrote_in.as_secs_f64(),
        written.len() as f64 / wrote_in.as_secs_f64(),
        reads.len(),
        if switched { ", switched replica" } else { "" }
    );
    live::print_line("write to event read", &mut lag);
    live::print_line("ack to event read", &mut after_ack);
    println!(
        "lost: {lost}; seen more than once: {repeated}; wrong type: {wrong_kind}; out of order: {} (cursors) {job_misordered} (within a job); unexpected: {unexpected}",
        misordered
    );
    if lost + repeated + wrong_kind + job_misordered + unexpected > 0 || misordered > 0 {
        std::process::exit(1);
    }
    Ok(())
}
