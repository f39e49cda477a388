//! # Hostile connections held against a job-listings server, and a normal client meanwhile
//!
//! ```text
//! # 1. Start the bundled server on a fresh folder; it prints one demo key per plan. It needs
//! #    more file descriptors than connections: raise `ulimit -n` in both terminals.
//! cargo build --release -p job-listings-server -p job-listings-compare --bin job-listings --bin hostile_connections
//! ulimit -n "$(ulimit -Hn)"
//! target/release/job-listings --data-dir "$(mktemp -d)" serve --addr 127.0.0.1:18098
//! #      enterprise  jl_live_...        <- copy this key
//!
//! # 2. In another terminal, hold 10,050 idle HTTP/2 connections for 45 s.
//! ulimit -n "$(ulimit -Hn)"
//! target/release/hostile_connections --addr 127.0.0.1:18098 --key jl_live_... --mode h2-idle
//! ```
//!
//! `benches/load/hostile_connections.sh` does all of it, for both modes.
//!
//! The tool opens `--connections` connections from the loopback addresses 127.0.0.2 onwards
//! (`--sources` of them, in turn; all of 127.0.0.0/8 is loopback on Linux), each doing as
//! little as its mode lets it while keeping the connection alive:
//!
//! - `h2-idle`: the HTTP/2 preface and SETTINGS, then only the acknowledgements of the
//!   server's SETTINGS and PINGs, so keep-alive pings find it alive;
//! - `h1-options`: HTTP/1.1 keep-alive, with an `OPTIONS /api/v1/jobs` without a key every
//!   `--options-every` (8 s, under the server's 10 s header timeout).
//!
//! Once they are open it holds them for `--hold`, while a normal client from 127.0.0.1 opens
//! a new connection and sends one authenticated `GET /api/v1/jobs?per_page=1` on it every
//! `--probe-every` (each in a task of its own, so a stalled one delays no other). At the end
//! it prints the normal client's time from connecting to the whole answer (p50, p99, max; a
//! failure counts as the time it took to fail), its failures, and how many of the hostile
//! connections the server closed. It only ever connects to a loopback address.

#[path = "../duration.rs"]
mod duration;
#[path = "../../../../tests/it/support/h2_peer.rs"]
mod h2_peer;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use rand::Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{watch, Semaphore};

/// Holds hostile connections against a loopback server while a normal client is measured.
#[derive(Debug, Parser)]
#[command(name = "hostile_connections")]
struct Cli {
    /// The server's address; it must be a loopback address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The normal client's API key, sent in X-API-Key.
    #[arg(long, env = "JL_KEY", hide_env_values = true)]
    key: String,
    /// What the hostile connections do.
    #[arg(long, value_enum)]
    mode: Mode,
    /// Hostile connections to open.
    #[arg(long, default_value_t = 10_050)]
    connections: usize,
    /// Loopback source addresses they come from, 127.0.0.2 onwards, in turn.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u8).range(1..=250))]
    sources: u8,
    /// How long to hold them once open: `45s`, `2m`, or plain seconds.
    #[arg(long, default_value = "45s", value_parser = duration::parse_duration)]
    hold: Duration,
    /// In mode h1-options, how often each connection sends its OPTIONS.
    #[arg(long, default_value = "8s", value_parser = duration::parse_duration)]
    options_every: Duration,
    /// How often the normal client opens a new connection for one GET.
    #[arg(long, default_value = "100ms", value_parser = duration::parse_duration)]
    probe_every: Duration,
    /// The normal client gives up on a connection and its answer after this long.
    #[arg(long, default_value = "5s", value_parser = duration::parse_duration)]
    probe_timeout: Duration,
    /// Most hostile connections being opened at once.
    #[arg(long, default_value_t = 256)]
    opening: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// HTTP/2 preface and SETTINGS, then only acknowledgements.
    H2Idle,
    /// HTTP/1.1 keep-alive with a keyless OPTIONS every --options-every.
    H1Options,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::H2Idle => "h2-idle",
            Mode::H1Options => "h1-options",
        }
    }
}

/// What the hostile connections saw, counted by their tasks.
#[derive(Default)]
struct Hostile {
    opened: AtomicU64,
    not_opened: AtomicU64,
    /// The server is serving them: its SETTINGS (h2) or a first answer (h1).
    served: AtomicU64,
    closed_by_server: AtomicU64,
    goaway: AtomicU64,
    answered_204: AtomicU64,
    answered_429: AtomicU64,
    answered_other: AtomicU64,
}

impl Hostile {
    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The normal client's results.
struct Probes {
    ok: u64,
    failed: u64,
    first_failure: Option<String>,
    latency_us: Histogram<u64>,
}

/// How long a hostile connection may take to open. Opened by the thousand, some meet a full
/// listen queue and wait for the client's SYN to be sent again (after 1 s, then 3 s more).
const TIMEOUT_OPENING: Duration = Duration::from_secs(10);

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    if !cli.addr.ip().is_loopback() {
        bail!(
            "refusing {}: the server must be on a loopback address",
            cli.addr
        );
    }
    if cli.connections == 0 || cli.opening == 0 || cli.probe_every.is_zero() {
        bail!("--connections, --opening and --probe-every must be positive");
    }
    let hostile = Arc::new(Hostile::default());
    let (stop, stopped) = watch::channel(false);

    // 1. Open the hostile connections, at most --opening at once.
    let started = Instant::now();
    let opening = Arc::new(Semaphore::new(cli.opening));
    let mut holders = Vec::with_capacity(cli.connections);
    for i in 0..cli.connections {
        let permit = opening.clone().acquire_owned().await?;
        let source = Ipv4Addr::new(127, 0, 0, 2 + (i % usize::from(cli.sources)) as u8);
        let (hostile, stopped, server) = (hostile.clone(), stopped.clone(), cli.addr);
        let (mode, every) = (cli.mode, cli.options_every);
        holders.push(tokio::spawn(async move {
            let stream = match open_from(source, server).await {
                Ok(stream) => stream,
                Err(_) => {
                    Hostile::count(&hostile.not_opened);
                    return;
                }
            };
            Hostile::count(&hostile.opened);
            drop(permit);
            match mode {
                Mode::H2Idle => hold_h2(stream, stopped, &hostile).await,
                Mode::H1Options => hold_h1(stream, every, stopped, &hostile).await,
            }
        }));
    }
    let _all_tried = opening.acquire_many(cli.opening as u32).await?;
    let opened = hostile.opened.load(Ordering::Relaxed);
    println!(
        "hostile:  mode {}: {opened} of {} connections opened in {:.1} s from 127.0.0.2..127.0.0.{}, {} not opened",
        cli.mode.name(),
        cli.connections,
        started.elapsed().as_secs_f64(),
        1 + cli.sources,
        hostile.not_opened.load(Ordering::Relaxed),
    );
    let closed_while_opening = hostile.closed_by_server.load(Ordering::Relaxed);

    // 2. Hold them, while the normal client opens a new connection every --probe-every.
    let probes = Arc::new(Mutex::new(Probes {
        ok: 0,
        failed: 0,
        first_failure: None,
        latency_us: Histogram::new_with_bounds(1, 3_600_000_000, 3)?,
    }));
    let request: Arc<str> = format!(
        "GET /api/v1/jobs?per_page=1 HTTP/1.1\r\nHost: {}\r\nX-API-Key: {}\r\nConnection: close\r\n\r\n",
        cli.addr, cli.key
    )
    .into();
    let hold_started = Instant::now();
    let mut in_flight = Vec::new();
    let mut tick = tokio::time::interval(cli.probe_every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while hold_started.elapsed() < cli.hold {
        tick.tick().await;
        let (probes, request, server, timeout) =
            (probes.clone(), request.clone(), cli.addr, cli.probe_timeout);
        in_flight.push(tokio::spawn(async move {
            let t = Instant::now();
            let outcome = tokio::time::timeout(timeout, probe(server, &request)).await;
            let micros = u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX);
            let mut p = probes.lock().unwrap_or_else(|e| e.into_inner());
            p.latency_us.saturating_record(micros.max(1));
            match outcome {
                Ok(Ok(200)) => p.ok += 1,
                other => {
                    p.failed += 1;
                    let why = match other {
                        Ok(Ok(status)) => format!("status {status}"),
                        Ok(Err(e)) => e.to_string(),
                        Err(_) => format!("no answer within {timeout:?}"),
                    };
                    p.first_failure.get_or_insert(why);
                }
            }
        }));
    }
    let held = hold_started.elapsed();
    for probe in in_flight {
        probe.await?;
    }
    let closed = hostile.closed_by_server.load(Ordering::Relaxed);
    stop.send_replace(true);
    for holder in holders {
        holder.await?;
    }

    // 3. Report.
    let p = probes.lock().unwrap_or_else(|e| e.into_inner());
    let ms = |q: f64| p.latency_us.value_at_quantile(q) as f64 / 1000.0;
    println!(
        "held:     {:.1} s; the server served {} of them and closed {closed} ({closed_while_opening} while they were being opened; {} with a GOAWAY)",
        held.as_secs_f64(),
        hostile.served.load(Ordering::Relaxed),
        hostile.goaway.load(Ordering::Relaxed),
    );
    if cli.mode == Mode::H1Options {
        println!(
            "answers:  OPTIONS 204 {}, 429 {}, other {}",
            hostile.answered_204.load(Ordering::Relaxed),
            hostile.answered_429.load(Ordering::Relaxed),
            hostile.answered_other.load(Ordering::Relaxed),
        );
    }
    println!(
        "normal:   {} new connections + GET, {} ok, {} failed; p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        p.ok + p.failed,
        p.ok,
        p.failed,
        ms(0.5),
        ms(0.99),
        p.latency_us.max() as f64 / 1000.0,
    );
    if let Some(why) = &p.first_failure {
        println!("first failure: {why}");
    }
    Ok(())
}

/// A connection from `source` to `server`, within [`TIMEOUT_OPENING`].
async fn open_from(source: Ipv4Addr, server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(IpAddr::V4(source), 0))?;
    let stream = tokio::time::timeout(TIMEOUT_OPENING, socket.connect(server))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// The normal client's call: a new connection, one GET, the whole answer; its status.
async fn probe(server: SocketAddr, request: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(server).await?;
    stream.set_nodelay(true)?;
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    // `Connection: close`: the answer ends where the connection does.
    stream.read_to_end(&mut answer).await?;
    Ok(status_of(&answer).unwrap_or(0))
}

fn status_of(head: &[u8]) -> Option<u16> {
    let line = head.split(|b| *b == b'\n').next()?;
    std::str::from_utf8(line)
        .ok()?
        .split(' ')
        .nth(1)?
        .parse()
        .ok()
}

/// An idle HTTP/2 client until the server closes the connection or `stopped` turns true.
async fn hold_h2(mut stream: TcpStream, mut stopped: watch::Receiver<bool>, hostile: &Hostile) {
    let mut seen = h2_peer::Seen::default();
    let mut counted = h2_peer::Seen::default();
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    let mut reply = h2_peer::HELLO.to_vec();
    loop {
        if !reply.is_empty() && stream.write_all(&reply).await.is_err() {
            break;
        }
        let read = tokio::select! {
            read = stream.read(&mut chunk) => read,
            _ = stopped.wait_for(|s| *s) => return,
        };
        match read {
            Ok(n) if n > 0 => received.extend_from_slice(&chunk[..n]),
            _ => break,
        }
        reply = h2_peer::acknowledge(&mut received, &mut seen);
        if seen.settings && !counted.settings {
            counted.settings = true;
            Hostile::count(&hostile.served);
        }
        if seen.goaway && !counted.goaway {
            counted.goaway = true;
            Hostile::count(&hostile.goaway);
        }
    }
    Hostile::count(&hostile.closed_by_server);
}

/// A keep-alive HTTP/1.1 client sending a keyless OPTIONS every `every` (the first at once,
/// the second after a random part of `every`, so that the connections do not march in step)
/// until the server closes the connection or `stopped` turns true.
async fn hold_h1(
    mut stream: TcpStream,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
    hostile: &Hostile,
) {
    const OPTIONS: &[u8] = b"OPTIONS /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut received = Vec::new();
    let mut wait = every.mul_f64(rand::thread_rng().gen::<f64>());
    let mut first = true;
    loop {
        if stream.write_all(OPTIONS).await.is_err() {
            break;
        }
        let answer = tokio::select! {
            answer = read_answer(&mut stream, &mut received) => answer,
            _ = stopped.wait_for(|s| *s) => return,
        };
        match answer {
            Some(204) => Hostile::count(&hostile.answered_204),
            Some(429) => Hostile::count(&hostile.answered_429),
            Some(_) => Hostile::count(&hostile.answered_other),
            None => break,
        }
        if first {
            first = false;
            Hostile::count(&hostile.served);
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        wait = every;
    }
    Hostile::count(&hostile.closed_by_server);
}

/// Reads one HTTP/1.1 answer off `stream` (bytes past it stay in `received`); its status, or
/// `None` once the connection is closed. Bodies are framed by `Content-Length`; 204 and 304
/// have none.
async fn read_answer(stream: &mut TcpStream, received: &mut Vec<u8>) -> Option<u16> {
    let mut chunk = [0u8; 4096];
    let (head_end, status, length) = loop {
        if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..at]).into_owned();
            let status = status_of(head.as_bytes()).unwrap_or(0);
            let length = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, value)| value.trim().parse::<usize>().ok())
                .filter(|_| status != 204 && status != 304)
                .unwrap_or(0);
            break (at + 4, status, length);
        }
        // An answer's head is small; a server sending more is not one we measure.
        if received.len() > 64 * 1024 {
            return None;
        }
        match stream.read(&mut chunk).await {
            Ok(n) if n > 0 => received.extend_from_slice(&chunk[..n]),
            _ => return None,
        }
    };
    // Bounded by the announced length.
    while received.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(n) if n > 0 => received.extend_from_slice(&chunk[..n]),
            _ => return None,
        }
    }
    received.drain(..head_end + length);
    Some(status)
}
