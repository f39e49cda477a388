//! Hostile clients against the real hyper server on 127.0.0.1: slowloris, idle keep-alive
//! connections, idle HTTP/2 connections that answer pings, oversized bodies and header
//! sections, hundreds of connections held open while a normal client keeps calling, every
//! connection slot taken by idle ones when a new client comes, requests without a key beyond
//! an address's budget, and too many connections from one address. The server runs with a 1 s header read timeout so the
//! tests are quick. The attacks use raw `TcpStream`s; the normal client is reqwest.
//!
//! Nothing here asserts on speed: a closed connection must close before a generous bound (ten
//! times the timeout), and the measured times, the normal client's latencies and the peak RSS
//! are only reported with `eprintln!` (`cargo test --test it hostile_clients -- --nocapture`).

use std::time::{Duration, Instant};

use job_listings::api::ApiConfig;
use job_listings::demo::Dataset;
use job_listings::server::ServerConfig;
use job_listings::service::RateLimit;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{h2_peer, TestApp};

/// The server's header read timeout in these tests.
const HEADER_TIMEOUT: Duration = Duration::from_secs(1);
/// The API's body read timeout in these tests.
const BODY_TIMEOUT: Duration = Duration::from_secs(1);
/// A connection the server should close must be closed before this.
const CLOSE_BOUND: Duration = Duration::from_secs(10);
/// The body limit of `POST /api/v1/webhooks` (the API's default).
const BODY_LIMIT: usize = 64 * 1024;
/// Connections held open by the flood tests.
const FLOOD: usize = 500;

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// The real server over sled in a temporary folder, with a few demo jobs, its header and
/// body read timeouts at [`HEADER_TIMEOUT`] and [`BODY_TIMEOUT`].
async fn start() -> TestApp {
    start_with(ServerConfig::default()).await
}

/// [`start`] with these server limits; the header timeout and shutdown grace are the tests'.
async fn start_with(config: ServerConfig) -> TestApp {
    TestApp::builder()
        .seed(Dataset::generate(11, 5, 60))
        .api_config(ApiConfig::default().body_timeout(BODY_TIMEOUT))
        .server_config(
            config
                .header_read_timeout(HEADER_TIMEOUT)
                .shutdown_grace(Duration::from_secs(1)),
        )
        .spawn()
        .await
}

async fn connect(app: &TestApp) -> TcpStream {
    TcpStream::connect(app.addr())
        .await
        .expect("a connection to the server")
}

/// A normal `GET` with the enterprise key: the status, or 0 when there was no answer.
async fn status_of(app: &TestApp, path: &str) -> u16 {
    app.client
        .get(app.url(path))
        .header("X-API-Key", &app.keys.enterprise.raw)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// `POST /api/v1/webhooks` head for a body of `len` bytes (or chunked when `None`).
fn webhook_head(app: &TestApp, len: Option<usize>) -> String {
    let framing = match len {
        Some(n) => format!("Content-Length: {n}\r\n"),
        None => "Transfer-Encoding: chunked\r\n".to_owned(),
    };
    format!(
        "POST /api/v1/webhooks HTTP/1.1\r\nHost: {}\r\nX-API-Key: {}\r\n\
         Content-Type: application/json\r\n{framing}\r\n",
        app.addr(),
        app.keys.enterprise.raw
    )
}

/// An answer read off a raw connection.
#[derive(Debug)]
struct RawResponse {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl RawResponse {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// Asserts a 201, showing the whole answer otherwise.
    #[track_caller]
    fn assert_created(&self) {
        assert_eq!(
            self.status,
            201,
            "{}{}",
            self.head,
            String::from_utf8_lossy(&self.body)
        );
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads one HTTP/1.1 answer (head, then `Content-Length` bytes of body, none for 204 and
/// 304, or up to EOF).
/// `None` when the connection closed before a whole head arrived or `limit` passed.
async fn read_response(
    stream: &mut (impl AsyncRead + Unpin),
    limit: Duration,
) -> Option<RawResponse> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    // Bounded: at most `limit`, and at most 1 MiB of answer.
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return None,
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // A 204 or 304 has no body whatever its headers say (RFC 9110, 6.4.1).
    let bodiless = status == 204 || status == 304;
    let length = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    let length = if bodiless { Some(0) } else { length };
    let mut body = buf[head_end..].to_vec();
    loop {
        if length.is_some_and(|n| body.len() >= n) || body.len() > 1 << 20 {
            break;
        }
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => body.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    if let Some(n) = length {
        body.truncate(n);
    }
    Some(RawResponse { status, head, body })
}

/// How a watched connection ended.
#[derive(Debug)]
struct Closed {
    /// When the server closed it (EOF or reset), from the start of the watch; `None` if it
    /// was still open when the bound passed.
    after: Option<Duration>,
    /// Whatever the server sent before closing.
    received: Vec<u8>,
}

/// Reads until the server closes the connection or `limit` passes.
async fn wait_for_close(stream: &mut TcpStream, started: Instant, limit: Duration) -> Closed {
    let deadline = tokio::time::Instant::from_std(started + limit);
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    // Bounded by the deadline, and by 1 MiB of data.
    while received.len() < 1 << 20 {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                return Closed {
                    after: Some(started.elapsed()),
                    received,
                }
            }
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            Err(_) => break,
        }
    }
    Closed {
        after: None,
        received,
    }
}

/// Opens `n` connections and sends `first` on each (nothing when empty).
async fn open_many(app: &TestApp, n: usize, first: &[u8]) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = connect(app).await;
        if !first.is_empty() {
            s.write_all(first).await.expect("the first bytes sent");
        }
        streams.push(s);
    }
    streams
}

/// Watches every connection until it closes or the bound passes; the close times of those
/// that closed, sorted, and how many stayed open.
async fn watch_all(streams: Vec<TcpStream>, started: Instant) -> (Vec<Duration>, usize) {
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut s| {
            tokio::spawn(async move { wait_for_close(&mut s, started, CLOSE_BOUND).await })
        })
        .collect();
    let mut closed = Vec::new();
    let mut open = 0;
    for t in tasks {
        match t.await.expect("a watcher").after {
            Some(d) => closed.push(d),
            None => open += 1,
        }
    }
    closed.sort();
    (closed, open)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// `VmHWM` (peak resident set) and `VmRSS` of this test process, from /proc/self/status.
fn memory_report() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].trim().to_owned())
            .unwrap_or_else(|| "unknown".to_owned())
    };
    format!(
        "peak RSS (VmHWM) {}, current RSS (VmRSS) {}",
        field("VmHWM:"),
        field("VmRSS:")
    )
}

// ---------------------------------------------------------------------------------------------
// Slow and idle connections
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_header_section_followed_by_silence_is_closed_after_the_header_timeout() {
    let app = start().await;
    let mut s = connect(&app).await;
    s.write_all(b"GET /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        .await
        .expect("the partial head sent");
    let started = Instant::now();
    let closed = wait_for_close(&mut s, started, CLOSE_BOUND).await;
    eprintln!(
        "slowloris (partial head, then silence): closed after {:?} (header timeout {HEADER_TIMEOUT:?})",
        closed.after
    );
    assert!(
        closed.after.is_some(),
        "the server kept a connection with a half-sent head open for {CLOSE_BOUND:?}"
    );
    assert!(
        !closed.received.starts_with(b"HTTP/1.1 200"),
        "a half-sent request was answered as if complete"
    );
    // The server still serves everyone else.
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_section_trickled_one_byte_every_300_ms_is_closed() {
    let app = start().await;
    let mut s = connect(&app).await;
    s.write_all(b"GET /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .expect("the request line sent");
    let started = Instant::now();
    let trickle = b"X-Slowloris: keep-me-open\r\n";
    let mut closed_after = None;
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    // Bounded: one byte per round, at most CLOSE_BOUND / 300 ms rounds.
    let rounds = (CLOSE_BOUND.as_millis() / 300) as usize;
    'rounds: for i in 0..rounds {
        let byte = [trickle[i % trickle.len()]];
        if s.write_all(&byte).await.is_err() {
            closed_after = Some(started.elapsed());
            break;
        }
        let round_end = tokio::time::Instant::now() + Duration::from_millis(300);
        // Read whatever comes during this round; at most 16 reads a round.
        for _ in 0..16 {
            match tokio::time::timeout_at(round_end, s.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => {
                    closed_after = Some(started.elapsed());
                    break 'rounds;
                }
                Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
                Err(_) => break,
            }
        }
    }
    eprintln!(
        "slowloris (1 byte every 300 ms): closed after {closed_after:?} (header timeout {HEADER_TIMEOUT:?})"
    );
    assert!(
        closed_after.is_some(),
        "the server kept a trickling connection open for {CLOSE_BOUND:?}"
    );
    assert!(
        !received.starts_with(b"HTTP/1.1 200"),
        "a trickled, unfinished request was answered as if complete"
    );
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed_after_one_complete_request() {
    let app = start().await;
    let mut s = connect(&app).await;
    let request = get_head(&app, "");
    s.write_all(request.as_bytes())
        .await
        .expect("the request sent");
    let answer = read_response(&mut s, CLOSE_BOUND)
        .await
        .expect("an answer to a complete request");
    assert_eq!(answer.status, 200, "{}", answer.head);
    assert!(
        !answer
            .head
            .to_ascii_lowercase()
            .contains("connection: close"),
        "the connection should be kept alive after the answer: {}",
        answer.head
    );
    let started = Instant::now();
    let closed = wait_for_close(&mut s, started, CLOSE_BOUND).await;
    eprintln!(
        "idle keep-alive connection: closed {:?} after the answer (header timeout {HEADER_TIMEOUT:?})",
        closed.after
    );
    assert!(
        closed.after.is_some(),
        "an idle keep-alive connection stayed open for {CLOSE_BOUND:?}"
    );
    assert!(
        closed.received.is_empty(),
        "nothing more is sent on an idle connection"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_sends_a_byte_is_closed() {
    let app = start().await;
    let mut s = connect(&app).await;
    let started = Instant::now();
    let closed = wait_for_close(&mut s, started, CLOSE_BOUND).await;
    eprintln!(
        "silent connection (no byte ever sent): closed after {:?} (header timeout {HEADER_TIMEOUT:?})",
        closed.after
    );
    assert!(
        closed.after.is_some(),
        "a connection that never sent a byte was still open after {CLOSE_BOUND:?} \
         (header timeout {HEADER_TIMEOUT:?})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_http2_preface_is_closed() {
    let app = start().await;
    // Part of the HTTP/2 connection preface, then silence.
    let mut part = connect(&app).await;
    part.write_all(b"PRI * HTTP/2.0\r\n")
        .await
        .expect("half a preface sent");
    // The whole preface, then silence: no SETTINGS frame ever comes.
    let mut whole = connect(&app).await;
    whole
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .expect("the preface sent");
    let started = Instant::now();
    let (part, whole) = tokio::join!(
        wait_for_close(&mut part, started, CLOSE_BOUND),
        wait_for_close(&mut whole, started, CLOSE_BOUND)
    );
    eprintln!(
        "stalled HTTP/2: half a preface closed after {:?}; whole preface without SETTINGS \
         closed after {:?} (header timeout {HEADER_TIMEOUT:?})",
        part.after, whole.after
    );
    assert!(
        whole.after.is_some(),
        "an HTTP/2 connection that never sent SETTINGS was still open after {CLOSE_BOUND:?}"
    );
    assert!(
        part.after.is_some(),
        "a connection that sent half the HTTP/2 preface was still open after {CLOSE_BOUND:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Body and header limits
// ---------------------------------------------------------------------------------------------

/// A JSON webhook registration padded with spaces to exactly `len` bytes.
fn padded_webhook_body(len: usize) -> Vec<u8> {
    let json = br#"{"callback_url":"https://hooks.example.com/jobs"}"#;
    let mut body = json.to_vec();
    body.resize(len.max(json.len()), b' ');
    body
}

/// How a body's end is told.
#[derive(Clone, Copy, Debug)]
enum Framing {
    /// `Content-Length`.
    Length,
    /// `Transfer-Encoding: chunked`, with no length announced.
    Chunked,
}

/// Sends a webhook registration padded to `len` bytes (see [`padded_webhook_body`]) framed as
/// told, and reads the answer.
async fn send_padded(app: &TestApp, len: usize, framing: Framing) -> RawResponse {
    let body = padded_webhook_body(len);
    let (head, body) = match framing {
        Framing::Length => (webhook_head(app, Some(body.len())), body),
        Framing::Chunked => (webhook_head(app, None), chunked(&body)),
    };
    send_raw(app, head, body)
        .await
        .unwrap_or_else(|| panic!("no answer to a body of {len} bytes, {framing:?}"))
}

/// Sends a head and a body on a fresh connection, the body from a separate task so a server
/// that answers early cannot block the writer, and reads the answer.
async fn send_raw(app: &TestApp, head: String, body: Vec<u8>) -> Option<RawResponse> {
    let (mut read, mut write) = connect(app).await.into_split();
    let writer = tokio::spawn(async move {
        let _ = write.write_all(head.as_bytes()).await;
        let _ = write.write_all(&body).await;
        write
    });
    let answer = read_response(&mut read, CLOSE_BOUND).await;
    writer.abort();
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_64_kib_with_content_length_is_refused_with_413() {
    let app = start().await;

    // Exactly at the limit: read and served (a valid registration, padded with spaces).
    send_padded(&app, BODY_LIMIT, Framing::Length)
        .await
        .assert_created();

    // One byte over, and far over: 413 body_too_large.
    for len in [BODY_LIMIT + 1, 1024 * 1024] {
        let r = send_padded(&app, len, Framing::Length).await;
        assert_eq!(r.status, 413, "{len} bytes: {}", r.head);
        assert_eq!(r.json()["code"], "body_too_large", "{len} bytes");
        assert!(
            r.head
                .to_ascii_lowercase()
                .contains("content-type: application/problem+json"),
            "{}",
            r.head
        );
    }
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_started_and_never_finished_gets_408_and_the_connection_is_closed() {
    let app = start().await;
    // A declared length with one byte sent, and a chunked body whose last chunk never comes;
    // neither carries a key, since the body is read before anything else is looked at.
    let stalls = [
        (
            "POST /api/v1/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
            "declared length",
        ),
        (
            "POST /api/v1/webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
            "chunked",
        ),
    ];
    for (request, framing) in stalls {
        let started = Instant::now();
        let mut stream = connect(&app).await;
        stream
            .write_all(request.as_bytes())
            .await
            .expect("the request sent");
        let r = read_response(&mut stream, CLOSE_BOUND)
            .await
            .unwrap_or_else(|| panic!("{framing}: no answer within {CLOSE_BOUND:?}"));
        assert_eq!(r.status, 408, "{framing}: {}", r.head);
        assert_eq!(r.json()["code"], "body_timeout", "{framing}");
        assert!(
            r.json()["detail"]
                .as_str()
                .is_some_and(|d| d.contains("1 s")),
            "{framing}: {}",
            r.json()
        );
        let closed = wait_for_close(&mut stream, started, CLOSE_BOUND).await;
        assert!(closed.after.is_some(), "{framing}: still open");
        eprintln!("{framing}: answered and closed after {:?}", closed.after);
    }
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

/// `body` as HTTP/1.1 chunks of 4 KiB and the last chunk.
fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in body.chunks(4096) {
        out.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        out.extend_from_slice(part);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_over_64_kib_is_refused_with_413() {
    let app = start().await;

    // At the limit, chunked: served.
    send_padded(&app, BODY_LIMIT, Framing::Chunked)
        .await
        .assert_created();

    // Over it, with no length announced: the server counts and stops at the limit.
    for len in [BODY_LIMIT + 1, 1024 * 1024] {
        let r = send_padded(&app, len, Framing::Chunked).await;
        assert_eq!(r.status, 413, "{len} bytes chunked: {}", r.head);
        assert_eq!(r.json()["code"], "body_too_large", "{len} bytes chunked");
    }
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

/// A `GET /api/v1/jobs` head with the key and `extra` header lines.
fn get_head(app: &TestApp, extra: &str) -> String {
    format!(
        "GET /api/v1/jobs?per_page=1 HTTP/1.1\r\nHost: {}\r\nX-API-Key: {}\r\n{extra}\r\n",
        app.addr(),
        app.keys.enterprise.raw
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_section_over_16_kib_is_refused_with_431_and_a_problem_document() {
    let app = start().await;

    // 12 KiB of headers: under the limit, served.
    let fine = format!("X-Padding: {}\r\n", "a".repeat(12 * 1024));
    let r = send_raw(&app, get_head(&app, &fine), Vec::new())
        .await
        .expect("an answer under the limit");
    assert_eq!(r.status, 200, "{}", r.head);

    // One 20 KiB header, and many 1 KiB headers adding up to 20 KiB: 431.
    let one_big = format!("X-Padding: {}\r\n", "a".repeat(20 * 1024));
    let many: String = (0..20)
        .map(|i| format!("X-Padding-{i}: {}\r\n", "b".repeat(1024)))
        .collect();
    for (what, extra) in [
        ("one 20 KiB header", one_big),
        ("20 headers of 1 KiB", many),
    ] {
        let r = send_raw(&app, get_head(&app, &extra), Vec::new())
            .await
            .unwrap_or_else(|| panic!("an answer to {what}"));
        assert_eq!(r.status, 431, "{what}: {}", r.head);
        let problem = r.json();
        assert_eq!(problem["code"], "headers_too_large", "{what}: {}", r.head);
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("at most 16384"), "{what}: {detail}");
    }

    // Past what the server reads at all (32 KiB by default), hyper refuses it before any
    // request exists: a 431 still, without a body, and the server goes on.
    assert_eq!(ServerConfig::default().max_header_bytes, 32 * 1024);
    let huge = format!("X-Padding: {}\r\n", "c".repeat(256 * 1024));
    let r = send_raw(&app, get_head(&app, &huge), Vec::new())
        .await
        .expect("an answer to a 256 KiB head");
    assert_eq!(r.status, 431, "{}", r.head);
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

/// `limit` header fields are served, one more is refused with 431, and the server goes on.
async fn assert_header_field_limit(app: &TestApp, limit: usize) {
    let fields = |n: usize| -> String { (0..n).map(|i| format!("X-Field-{i}: {i}\r\n")).collect() };

    // Host and X-API-Key are two fields: `limit - 2` more make exactly `limit`.
    let r = send_raw(app, get_head(app, &fields(limit - 2)), Vec::new())
        .await
        .expect("an answer to as many fields as allowed");
    assert_eq!(r.status, 200, "{limit} fields: {}", r.head);

    for extra in [limit - 1, limit + 150] {
        let r = send_raw(app, get_head(app, &fields(extra)), Vec::new())
            .await
            .expect("an answer to too many fields");
        assert_eq!(r.status, 431, "{} fields: {}", extra + 2, r.head);
    }
    assert_eq!(status_of(app, "/api/v1/jobs?per_page=1").await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_than_100_header_fields_are_refused_with_431() {
    let app = start().await;
    assert_eq!(ServerConfig::default().max_headers, 100);
    assert_header_field_limit(&app, 100).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_header_field_limit_is_kept() {
    let app = start_with(ServerConfig::default().max_headers(20)).await;
    assert_header_field_limit(&app, 20).await;
}

// ---------------------------------------------------------------------------------------------
// Floods
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_normal_client_is_served_while_500_idle_connections_are_held_open() {
    let app = start().await;
    let held = open_many(&app, FLOOD, b"").await;
    let partial = open_many(&app, 50, b"GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n").await;

    // The normal client: back-to-back calls, so its own keep-alive connection is never idle.
    const CALLS: usize = 150;
    let mut latencies = Vec::with_capacity(CALLS);
    let mut failures = Vec::new();
    let paths = [
        "/api/v1/jobs?per_page=5",
        "/api/v1/jobs?remote_only=true&per_page=3",
        "/api/v1/companies?per_page=2",
    ];
    for i in 0..CALLS {
        let path = paths[i % paths.len()];
        let t = Instant::now();
        let status = status_of(&app, path).await;
        latencies.push(t.elapsed());
        if status != 200 {
            failures.push((i, path, status));
        }
    }
    latencies.sort();
    eprintln!(
        "normal client during a flood of {FLOOD} silent + 50 half-open connections: \
         {CALLS} calls, p50 {:?}, p99 {:?}, max {:?}",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default()
    );
    eprintln!("during the flood: {}", memory_report());
    assert!(
        failures.is_empty(),
        "normal calls failed during the flood (index, path, status; 0 = no answer): {failures:?}"
    );
    drop(held);
    drop(partial);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_half_sent_requests_are_shed_within_the_timeout() {
    let app = start().await;
    let streams = open_many(
        &app,
        FLOOD,
        b"GET /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\nX-Slow: ",
    )
    .await;
    let started = Instant::now();
    let (closed, open) = watch_all(streams, started).await;
    eprintln!(
        "{FLOOD} half-sent requests: {} closed (median {:?}, last {:?}), {open} still open after {CLOSE_BOUND:?}; {}",
        closed.len(),
        percentile(&closed, 0.5),
        closed.last(),
        memory_report()
    );
    assert_eq!(
        open, 0,
        "connections with a half-sent head outlived the header timeout ({HEADER_TIMEOUT:?}) tenfold"
    );
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_silent_connections_are_shed_within_the_timeout() {
    let app = start().await;
    let streams = open_many(&app, FLOOD, b"").await;
    let started = Instant::now();
    let (closed, open) = watch_all(streams, started).await;
    eprintln!(
        "{FLOOD} silent connections: {} closed (median {:?}, last {:?}), {open} still open after {CLOSE_BOUND:?}; {}",
        closed.len(),
        percentile(&closed, 0.5),
        closed.last(),
        memory_report()
    );
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
    assert_eq!(
        open, 0,
        "{open} of {FLOOD} connections that never sent a byte were still open after \
         {CLOSE_BOUND:?} (header timeout {HEADER_TIMEOUT:?}): each holds a connection slot \
         and a task for as long as the client likes"
    );
}

// ---------------------------------------------------------------------------------------------
// Connections kept idle or barely busy
// ---------------------------------------------------------------------------------------------

/// How an idle HTTP/2 client's connection went.
#[derive(Debug, Default)]
struct H2Idle {
    /// When the server closed it, from the client's start; `None` if still open at the bound.
    closed_after: Option<Duration>,
    /// Whether the server sent a GOAWAY.
    goaway: bool,
}

/// An HTTP/2 client that sends its preface and SETTINGS, then nothing but the
/// acknowledgements the protocol asks for (SETTINGS and PING), until the server closes the
/// connection or `limit` passes. `served` is told once the server's SETTINGS arrive, that
/// is, once the server is serving the connection.
async fn idle_h2_client(
    mut stream: TcpStream,
    limit: Duration,
    served: tokio::sync::oneshot::Sender<()>,
) -> H2Idle {
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + limit;
    let mut served = Some(served);
    let mut seen = h2_peer::Seen::default();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut reply = h2_peer::HELLO.to_vec();
    let closed_after = loop {
        // The server may already have closed its side; the read tells.
        if !reply.is_empty() && stream.write_all(&reply).await.is_err() {
            break Some(started.elapsed());
        }
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break Some(started.elapsed()),
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            Err(_) => break None,
        }
        reply = h2_peer::acknowledge(&mut received, &mut seen);
        if seen.settings {
            if let Some(tx) = served.take() {
                let _ = tx.send(());
            }
        }
    };
    H2Idle {
        closed_after,
        goaway: seen.goaway,
    }
}

/// Starts an idle HTTP/2 client on `stream` in a task and waits until the server serves it.
async fn hold_idle_h2(stream: TcpStream) -> tokio::task::JoinHandle<H2Idle> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let held = tokio::spawn(idle_h2_client(stream, HOLD_BOUND, tx));
    tokio::time::timeout(CLOSE_BOUND, rx)
        .await
        .expect("the server's SETTINGS within the bound")
        .expect("the server's SETTINGS before the connection closed");
    held
}

/// How long the held connections of these tests are held at most.
const HOLD_BOUND: Duration = Duration::from_secs(20);

/// A client that opens a new connection for its request, gives up after [`CLOSE_BOUND`], and
/// answers the status (0: no answer).
async fn fresh_client_status(app: &TestApp, path: &str) -> u16 {
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(CLOSE_BOUND)
        .build()
        .expect("an HTTP client");
    client
        .get(app.url(path))
        .header("X-API-Key", &app.keys.enterprise.raw)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

/// With every connection slot held by the tasks `held` (`held_by` says by what), a new
/// client must be served, and one of them closed for it: what that one saw.
async fn a_newcomer_is_served<T>(
    app: &TestApp,
    mut held: Vec<tokio::task::JoinHandle<T>>,
    held_by: &str,
) -> T {
    let t = Instant::now();
    let status = fresh_client_status(app, "/api/v1/jobs?per_page=1").await;
    eprintln!(
        "new client with every slot held by {held_by}: {status} after {:?}",
        t.elapsed()
    );
    assert_eq!(status, 200, "a new client was not served (0: no answer)");
    let deadline = Instant::now() + CLOSE_BOUND;
    // Bounded by the deadline: a look every 20 ms for the one closed.
    while Instant::now() < deadline {
        if let Some(i) = held.iter().position(|h| h.is_finished()) {
            return held.swap_remove(i).await.expect("a held connection's task");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no connection held by {held_by} was closed for the new client");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http2_connection_that_answers_pings_gets_a_goaway_after_the_idle_timeout() {
    let idle_timeout = Duration::from_secs(1);
    let app = start_with(ServerConfig::default().idle_timeout(idle_timeout)).await;
    let held = hold_idle_h2(connect(&app).await).await;
    let end = held.await.expect("the idle client");
    eprintln!(
        "idle HTTP/2 connection answering pings: closed after {:?}, GOAWAY {} (idle timeout {idle_timeout:?})",
        end.closed_after, end.goaway
    );
    assert!(
        end.closed_after.is_some(),
        "an HTTP/2 connection with no request for {HOLD_BOUND:?} was still open (idle timeout {idle_timeout:?})"
    );
    assert!(end.goaway, "the server closed without a GOAWAY");
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
}

/// The server of the full-slot tests: 8 connection slots, and an idle timeout longer than the
/// tests, so that only shedding can free a slot.
async fn start_with_8_slots() -> TestApp {
    start_with(
        ServerConfig::default()
            .max_connections(8)
            .idle_timeout(Duration::from_secs(600)),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_slot_held_by_idle_http2_connections_a_new_client_is_served() {
    let app = start_with_8_slots().await;
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(hold_idle_h2(connect(&app).await).await);
    }
    let end = a_newcomer_is_served(&app, held, "idle HTTP/2 connections").await;
    assert!(end.goaway, "the shed HTTP/2 connection got no GOAWAY");
}

/// An HTTP/1 keep-alive client that sends a keyless `OPTIONS` every `every`, reading each
/// answer, until the server closes the connection or `limit` passes. `served` is told after
/// the first answer. Its answers' statuses, and whether the server closed the connection.
async fn options_every(
    mut stream: TcpStream,
    every: Duration,
    limit: Duration,
    served: tokio::sync::oneshot::Sender<()>,
) -> (Vec<u16>, bool) {
    let deadline = Instant::now() + limit;
    let mut served = Some(served);
    let mut statuses = Vec::new();
    // Bounded by the deadline.
    while Instant::now() < deadline {
        let request = b"OPTIONS /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\n\r\n";
        if stream.write_all(request).await.is_err() {
            return (statuses, true);
        }
        match read_response(&mut stream, CLOSE_BOUND).await {
            Some(answer) => statuses.push(answer.status),
            None => return (statuses, true),
        }
        if let Some(tx) = served.take() {
            let _ = tx.send(());
        }
        tokio::time::sleep(every).await;
    }
    (statuses, false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_slot_held_by_http1_connections_sending_options_a_new_client_is_served() {
    let app = start_with_8_slots().await;
    // Each keeps its connection busier than the header timeout lets an idle one be.
    let every = HEADER_TIMEOUT / 3;
    let mut held = Vec::new();
    for _ in 0..8 {
        let (tx, rx) = tokio::sync::oneshot::channel();
        held.push(tokio::spawn(options_every(
            connect(&app).await,
            every,
            HOLD_BOUND,
            tx,
        )));
        tokio::time::timeout(CLOSE_BOUND, rx)
            .await
            .expect("a first answer within the bound")
            .expect("a first answer");
    }
    let held_by = format!("HTTP/1 connections sending OPTIONS every {every:?}");
    let (statuses, closed) = a_newcomer_is_served(&app, held, &held_by).await;
    assert!(closed, "the shed connection ended without being closed");
    assert!(
        statuses.iter().all(|s| *s == 204 || *s == 429),
        "{statuses:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Requests without a key
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyless_requests_beyond_the_address_budget_get_429_while_keyed_ones_are_served() {
    const BURST: u32 = 5;
    let app = TestApp::builder()
        .seed(Dataset::generate(11, 5, 60))
        .api_config(
            ApiConfig::default()
                // A refill too slow to matter at the test's pace.
                .unauthenticated_rate(Some(RateLimit {
                    per_second: 0.01,
                    burst: BURST,
                })),
        )
        .spawn()
        .await;
    let options = |key: Option<&str>| {
        let request = app
            .client
            .request(reqwest::Method::OPTIONS, app.url("/api/v1/jobs"));
        match key {
            Some(key) => request.header("X-API-Key", key),
            None => request,
        }
    };
    for i in 0..BURST {
        let r = options(None).send().await.expect("an answer");
        assert_eq!(r.status().as_u16(), 204, "OPTIONS {i} within the budget");
    }
    let refused = options(None).send().await.expect("an answer");
    assert_eq!(refused.status().as_u16(), 429);
    let retry_after: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .expect("a numeric Retry-After");
    assert!(retry_after >= 1, "Retry-After {retry_after}");
    assert!(refused
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json")));
    let problem: Value = refused.json().await.expect("a problem document");
    assert_eq!(problem["code"], "rate_limited", "{problem}");
    assert_eq!(problem["status"], 429, "{problem}");
    assert_eq!(problem["retry_after"], retry_after, "{problem}");

    // A request without a key, that would have been a 401, is charged as well.
    let unkeyed = app.client.get(app.url("/api/v1/jobs")).send().await;
    assert_eq!(unkeyed.map(|r| r.status().as_u16()).ok(), Some(429));
    // A valid key is not charged: its requests are served, OPTIONS too.
    let key = &app.keys.enterprise.raw;
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
    let keyed = options(Some(key)).send().await.expect("an answer");
    assert_eq!(keyed.status().as_u16(), 204);
}

// ---------------------------------------------------------------------------------------------
// Connections from one address
// ---------------------------------------------------------------------------------------------

/// A connection from a chosen loopback address (all of 127.0.0.0/8 is loopback on Linux).
async fn connect_from(app: &TestApp, source: [u8; 4]) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind((std::net::Ipv4Addr::from(source), 0).into())
        .expect("a loopback source address");
    socket
        .connect(app.addr())
        .await
        .expect("a connection to the server")
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_from_one_address_beyond_its_cap_are_closed_while_others_are_served() {
    const CAP: usize = 4;
    const SOURCE: [u8; 4] = [127, 0, 0, 2];
    let app = start_with(
        ServerConfig::default()
            .max_connections_per_address(CAP)
            .idle_timeout(Duration::from_secs(600)),
    )
    .await;
    let mut held = Vec::new();
    for _ in 0..CAP {
        held.push(hold_idle_h2(connect_from(&app, SOURCE).await).await);
    }
    // One more from the same address: a whole, keyed request, never answered.
    let started = Instant::now();
    let mut over = connect_from(&app, SOURCE).await;
    let _ = over.write_all(get_head(&app, "").as_bytes()).await;
    let answer = read_response(&mut over, CLOSE_BOUND).await;
    let closed = wait_for_close(&mut over, started, CLOSE_BOUND).await;
    eprintln!(
        "connection {} from 127.0.0.2 (cap {CAP}): answer {:?}, closed after {:?}",
        CAP + 1,
        answer.as_ref().map(|a| a.status),
        closed.after
    );
    assert!(
        answer.is_none(),
        "a connection over the per-address cap was served: {answer:?}"
    );
    assert!(
        closed.after.is_some(),
        "a connection over the cap stayed open"
    );
    // Another address is served, and the address's first connections are kept.
    assert_eq!(status_of(&app, "/api/v1/jobs?per_page=1").await, 200);
    assert!(
        held.iter().all(|h| !h.is_finished()),
        "connections within the cap were closed"
    );
}

// ---------------------------------------------------------------------------------------------
// Connection accounting and a listener that cannot take anyone new
// ---------------------------------------------------------------------------------------------

/// Waits, up to [`HOLD_BOUND`], until the listener reports no connection kept; the counts
/// (open, kept) it last reported otherwise.
async fn wait_for_no_connections(app: &TestApp) -> Result<(), (u64, u64)> {
    let report = app.service.listener_report();
    let deadline = Instant::now() + HOLD_BOUND;
    loop {
        let counts = report.connection_counts();
        if counts == (0, 0) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(counts);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_of_silent_connections_over_the_cap_leave_the_count_at_zero_each_time() {
    // Each round opens 60 silent connections against 50 slots: the server sheds the idle
    // ones longest waiting, the rest end at the header timeout, clients hang up. Every way a
    // connection ends must leave the table's count where the table is: back at 0 after each
    // round, and a keyed client served.
    const SLOTS: usize = 50;
    const ROUND: usize = 60;
    let app = start_with(ServerConfig::default().max_connections(SLOTS)).await;
    let report = app.service.listener_report();
    for round in 1..=10 {
        let mut silent = Vec::with_capacity(ROUND);
        for _ in 0..ROUND {
            silent.push(connect(&app).await);
        }
        let (open, kept) = report.connection_counts();
        assert!(
            open <= SLOTS as u64,
            "round {round}: {open} connections counted open over {SLOTS} slots"
        );
        assert!(
            kept <= (SLOTS + SLOTS / 4) as u64,
            "round {round}: {kept} kept"
        );
        // A third hang up; the others wait until the server closes them: shed for a
        // newcomer, or at the header timeout.
        silent.drain(..ROUND / 3);
        let started = Instant::now();
        for mut stream in silent {
            let closed = wait_for_close(&mut stream, started, CLOSE_BOUND).await;
            assert!(
                closed.after.is_some(),
                "round {round}: a silent connection outlived {CLOSE_BOUND:?}"
            );
        }
        if let Err((open, kept)) = wait_for_no_connections(&app).await {
            panic!("round {round}: the listener still counts {open} open, {kept} kept");
        }
        assert_eq!(
            fresh_client_status(&app, "/api/v1/jobs?per_page=1").await,
            200,
            "round {round}: a keyed client was not served after the silent connections"
        );
    }
    if let Err((open, kept)) = wait_for_no_connections(&app).await {
        panic!("after the rounds: {open} open, {kept} kept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_whose_every_slot_stays_busy_is_not_live_until_a_slot_frees() {
    let app = TestApp::builder()
        .seed(Dataset::generate(11, 5, 60))
        .api_config(
            ApiConfig::default()
                // Long enough that the unfinished bodies below keep their requests in flight.
                .body_timeout(Duration::from_secs(120)),
        )
        .server_config(
            ServerConfig::default()
                .header_read_timeout(HEADER_TIMEOUT)
                .shutdown_grace(Duration::from_secs(1))
                .max_connections(2)
                .accept_stall_limit(Duration::from_secs(1)),
        )
        .spawn()
        .await;
    assert!(app.service.health().await.live);
    // Two requests whose bodies never come hold both slots busy. Each asks for a `100
    // Continue`, which the server sends once it reads the body: the request is in flight
    // then, and its connection can no longer be shed for the newcomer.
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(&app).await;
        let head =
            webhook_head(&app, Some(100)).replace("\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n");
        stream
            .write_all(head.as_bytes())
            .await
            .expect("a request head");
        let mut seen = Vec::new();
        let mut chunk = [0u8; 256];
        while find(&seen, b"100 Continue").is_none() {
            let n = tokio::time::timeout(CLOSE_BOUND, stream.read(&mut chunk))
                .await
                .expect("a 100 Continue within the bound")
                .expect("a read");
            assert!(n > 0, "closed before 100 Continue: {seen:?}");
            seen.extend_from_slice(&chunk[..n]);
        }
        busy.push(stream);
    }
    // A third client waits for a slot.
    let waiting = tokio::spawn({
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(HOLD_BOUND * 2)
            .build()
            .expect("an HTTP client");
        let (url, key) = (
            app.url("/api/v1/jobs?per_page=1"),
            app.keys.enterprise.raw.clone(),
        );
        async move {
            client
                .get(url)
                .header("X-API-Key", key)
                .send()
                .await
                .map_or(0, |r| r.status().as_u16())
        }
    });
    let deadline = Instant::now() + HOLD_BOUND;
    let stalled = loop {
        let health = app.service.health().await;
        if !health.live {
            break health;
        }
        assert!(
            Instant::now() < deadline,
            "still live {HOLD_BOUND:?} after a connection began waiting with every slot busy"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(stalled.listener_stalled_since.is_some(), "{stalled:?}");
    assert!(
        stalled.ready,
        "a stalled listener is a restart, not a readiness, matter"
    );
    assert!(!waiting.is_finished(), "the waiting client was answered");
    // One busy request ends: the waiting client is served and the listener is live again.
    busy.pop();
    assert_eq!(waiting.await.expect("the waiting client"), 200);
    let health = app.service.health().await;
    assert!(health.live, "{health:?}");
    assert_eq!(health.listener_stalled_since, None);
}
