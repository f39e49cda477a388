//! # A constant-rate load generator for the job-listings API
//!
//! ```text
//! # 1. Start the bundled server on a fresh folder, without per-key rate limits and with a
//! #    quota large enough for the run. It prints one demo key per plan on stdout.
//! cargo build --release -p job-listings-server -p job-listings-compare --bin job-listings --bin load
//! target/release/job-listings --data-dir "$(mktemp -d)" serve --addr 127.0.0.1:18090 \
//!     --no-rate-limits --enterprise-quota 100000000
//! #      enterprise  jl_live_...        <- copy this key
//!
//! # 2. In another terminal, drive it at a fixed rate.
//! cargo run --release -p job-listings-compare --bin load -- --url http://127.0.0.1:18090 --key jl_live_... \
//!     --rate 2000 --duration 60s --connections 64 --mix jobs
//! cargo run --release -p job-listings-compare --bin load -- --url http://127.0.0.1:18090 --key jl_live_... \
//!     --rate 10000 --duration 60s --mix detail
//! ```
//!
//! The tool is open-loop, like wrk2: request `i` is due at `t0 + i / rate` whatever happened
//! to earlier requests, and its latency is measured from that due time, not from when it was
//! sent, so a server stall shows in every request due meanwhile (no coordinated omission). At
//! most `--connections` requests are in flight; time spent waiting for one counts as latency.
//!
//! `--mix jobs` rotates through the ten `GET /api/v1/jobs` searches of
//! `benches/load/jobs_mix.lua`; `--mix detail` fetches 50 job ids with one search, then
//! rotates `GET /api/v1/jobs/{id}` over them. At the end it prints counts by status class,
//! the achieved rate and latency percentiles, and checks metering: every 2xx answer must add
//! exactly one call to `GET /api/v1/usage` (itself unmetered). It exits non-zero on any 5xx,
//! any transport error or unexpected status, or a metering mismatch.
//!
//! It only ever targets loopback: the host must be in 127.0.0.0/8, `::1` or `localhost`
//! (pinned to 127.0.0.1); proxies are ignored and redirects are not followed.

#[path = "../duration.rs"]
mod duration;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use tokio::sync::Semaphore;
use url::{Host, Url};

/// The searches of `benches/load/jobs_mix.lua`, in the same order: the quoted paths of the one
/// list both read.
const JOBS_QUERIES_LUA: &str = include_str!("../../../load/jobs_queries.lua");

fn jobs_mix() -> Vec<&'static str> {
    JOBS_QUERIES_LUA
        .lines()
        .filter_map(|line| line.trim().strip_prefix('"')?.split('"').next())
        .collect()
}

/// Sends GET requests to a loopback job-listings server at a fixed rate.
#[derive(Debug, Parser)]
#[command(name = "load")]
struct Cli {
    /// Base URL of the server; its host must be a loopback address.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// The API key to send in X-API-Key.
    #[arg(long, env = "JL_KEY", hide_env_values = true)]
    key: String,
    /// Requests per second, held constant.
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// How long to send: `60s`, `500ms`, `2m` or plain seconds.
    #[arg(long, default_value = "10s", value_parser = duration::parse_duration)]
    duration: Duration,
    /// Most requests in flight at once (and most open connections).
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Which requests to send.
    #[arg(long, value_enum, default_value_t = Mix::Jobs)]
    mix: Mix,
    /// Give up on one request after this long (counted as a transport error).
    #[arg(long, default_value = "10s", value_parser = duration::parse_duration)]
    timeout: Duration,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Mix {
    /// The rotating search mix of benches/load/jobs_mix.lua.
    Jobs,
    /// GET /api/v1/jobs/{id} over 50 ids.
    Detail,
}

/// Checks that the URL is plain http to a loopback host; returns the base URL without a
/// trailing slash and, for `localhost`, the address to pin it to.
fn loopback_base(raw: &str) -> Result<(String, Option<SocketAddr>)> {
    let url = Url::parse(raw).with_context(|| format!("`{raw}` is not a URL"))?;
    if url.scheme() != "http" {
        bail!(
            "only plain http:// URLs are supported, not `{}`",
            url.scheme()
        );
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let pin = match url.host() {
        Some(Host::Ipv4(ip)) if ip.is_loopback() => None,
        Some(Host::Ipv6(ip)) if ip.is_loopback() => None,
        Some(Host::Domain("localhost")) => Some(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port)),
        _ => bail!("refusing `{raw}`: the host must be loopback (127.0.0.0/8, ::1, localhost)"),
    };
    if url.query().is_some() || url.fragment().is_some() {
        bail!("give a base URL without query or fragment");
    }
    Ok((url.as_str().trim_end_matches('/').to_owned(), pin))
}

/// Results of the run, shared by the request tasks.
struct Tally {
    ok: u64,
    client: u64,
    server: u64,
    errors: u64,
    first_error: Option<String>,
    latency_us: Histogram<u64>,
}

fn record(tally: &Mutex<Tally>, due: Instant, outcome: Result<u16, String>) {
    let micros = due.elapsed().as_micros().try_into().unwrap_or(u64::MAX);
    let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
    t.latency_us.saturating_record(micros.max(1));
    match outcome {
        Ok(200..=299) => t.ok += 1,
        Ok(400..=499) => t.client += 1,
        Ok(500..=599) => t.server += 1,
        other => {
            t.errors += 1;
            let e = other.map_or_else(|e| e, |s| format!("unexpected status {s}"));
            t.first_error.get_or_insert(e);
        }
    }
}

/// Sends one request and reads the whole body; the status, or why there is none.
async fn send(client: &reqwest::Client, url: &str, key: &str) -> Result<u16, String> {
    let response = client
        .get(url)
        .header("X-API-Key", key)
        .send()
        .await
        .map_err(|e| format!("{e:#}"))?;
    let status = response.status().as_u16();
    response.bytes().await.map_err(|e| format!("{e:#}"))?;
    Ok(status)
}

/// GETs a JSON document, failing on a non-2xx answer.
async fn get_json(client: &reqwest::Client, url: String, key: &str) -> Result<serde_json::Value> {
    let response = client.get(&url).header("X-API-Key", key).send().await?;
    let status = response.status();
    let body = response.text().await?;
    if !status.is_success() {
        bail!("GET {url} answered {status}: {body}");
    }
    serde_json::from_str(&body).with_context(|| format!("GET {url}: not JSON"))
}

/// `calls_used` from GET /api/v1/usage (not itself metered).
async fn calls_used(client: &reqwest::Client, base: &str, key: &str) -> Result<u64> {
    let usage = get_json(client, format!("{base}/api/v1/usage"), key).await?;
    usage["calls_used"]
        .as_u64()
        .context("the usage report has no calls_used")
}

#[tokio::main]
async fn main() -> Result<ExitCode> {
    let cli = Cli::parse();
    let (base, pin) = loopback_base(&cli.url)?;
    if !(cli.rate.is_finite() && cli.rate > 0.0) || cli.connections == 0 {
        bail!("--rate and --connections must be positive");
    }
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(cli.connections)
        .tcp_nodelay(true)
        .timeout(cli.timeout);
    if let Some(addr) = pin {
        builder = builder.resolve("localhost", addr);
    }
    let client = builder.build()?;

    let paths: Vec<String> = match cli.mix {
        Mix::Jobs => jobs_mix()
            .into_iter()
            .map(|p| format!("{base}{p}"))
            .collect(),
        Mix::Detail => {
            // One metered search for the 50 newest ids, before usage is first read.
            let page = get_json(&client, format!("{base}/api/v1/jobs?per_page=50"), &cli.key);
            let ids = page.await?["data"].as_array().cloned().unwrap_or_default();
            let ids = ids.iter().filter_map(|job| job["id"].as_str());
            ids.map(|id| format!("{base}/api/v1/jobs/{id}")).collect()
        }
    };
    if paths.is_empty() {
        bail!("the server has no jobs to fetch");
    }
    let paths = Arc::new(paths);
    let key: Arc<str> = cli.key.as_str().into();
    let before = calls_used(&client, &base, &cli.key).await?;

    let total = (cli.rate * cli.duration.as_secs_f64()).round() as u64;
    println!(
        "{:?} mix: {total} requests at {}/s for {:?} over at most {} connections to {base}",
        cli.mix, cli.rate, cli.duration, cli.connections
    );
    let tally = Arc::new(Mutex::new(Tally {
        ok: 0,
        client: 0,
        server: 0,
        errors: 0,
        first_error: None,
        latency_us: Histogram::new_with_bounds(1, 3_600_000_000, 3)?,
    }));
    let slots = Arc::new(Semaphore::new(cli.connections));
    let t0 = Instant::now();
    for i in 0..total {
        let due = t0 + Duration::from_secs_f64(i as f64 / cli.rate);
        if due > Instant::now() {
            tokio::time::sleep_until(due.into()).await;
        }
        // Waiting for a free slot delays the send, and the delay counts: latency is from `due`.
        let permit = slots.clone().acquire_owned().await?;
        let (client, paths, key, tally) =
            (client.clone(), paths.clone(), key.clone(), tally.clone());
        tokio::spawn(async move {
            let url = &paths[i as usize % paths.len()];
            let outcome = send(&client, url, &key).await;
            record(&tally, due, outcome);
            drop(permit);
        });
    }
    // Wait for every request still in flight.
    let _all = slots.acquire_many(cli.connections as u32).await?;
    let elapsed = t0.elapsed();
    let after = calls_used(&client, &base, &cli.key).await?;

    let t = tally.lock().unwrap_or_else(|p| p.into_inner());
    let h = &t.latency_us;
    let ms = |us: u64| us as f64 / 1000.0;
    println!(
        "sent:     {total} in {:.2} s, achieved {:.1} req/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    println!(
        "answers:  2xx {}, 4xx {}, 5xx {}, errors {}",
        t.ok, t.client, t.server, t.errors
    );
    if let Some(e) = &t.first_error {
        println!("first error: {e}");
    }
    let at = |q: f64| ms(h.value_at_quantile(q));
    println!(
        "latency:  p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        ms(h.max())
    );
    let metered = after.saturating_sub(before);
    let matches = metered == t.ok;
    println!(
        "metered: {metered} calls, 2xx answers: {} ({})",
        t.ok,
        if matches { "match" } else { "MISMATCH" }
    );
    let failed = t.server > 0 || t.errors > 0 || !matches;
    Ok(ExitCode::from(u8::from(failed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_are_accepted() {
        for ok in
            "http://127.0.0.1:8080 http://127.3.2.1/ http://[::1]:80 http://LOCALHOST:9".split(' ')
        {
            assert!(loopback_base(ok).is_ok(), "{ok}");
        }
        let refused =
            "http://10.0.0.1 http://example.com http://[::ffff:127.0.0.1] https://127.0.0.1";
        for bad in refused
            .split(' ')
            .chain(["http://localhost.evil.com", "http://0.0.0.0"])
        {
            assert!(loopback_base(bad).is_err(), "{bad}");
        }
        assert_eq!(duration::parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(
            duration::parse_duration("1.5m"),
            Ok(Duration::from_secs(90))
        );
        assert_eq!(
            duration::parse_duration("250ms"),
            Ok(Duration::from_millis(250))
        );
        assert!(duration::parse_duration("5x").is_err());
    }

    #[test]
    fn the_jobs_mix_is_the_ten_searches_of_the_lua_list() {
        let mix = jobs_mix();
        assert_eq!(mix.len(), 10, "{mix:?}");
        assert_eq!(mix[0], "/api/v1/jobs");
        assert_eq!(mix[9], "/api/v1/jobs?remote_only=true&page=20");
        assert!(mix.iter().all(|p| p.starts_with("/api/v1/jobs")));
    }
}
