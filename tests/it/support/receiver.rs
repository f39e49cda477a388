//! Scripted webhook receivers on 127.0.0.1 that record every request (headers, body, arrival
//! time) and answer what a script tells them, an answer held until the test opens a [`Latch`],
//! plus a bounded "eventually" poller.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::task::JoinHandle;

/// One request a receiver got.
#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    /// The query string, when there is one.
    // Read by the crash tests, which run apart.
    #[allow(dead_code)]
    pub query: Option<String>,
    /// `webhook-id`.
    pub id: Option<String>,
    /// `webhook-timestamp`, as sent.
    pub timestamp: Option<String>,
    /// `webhook-signature`.
    pub signature: Option<String>,
    pub content_type: Option<String>,
    pub user_agent: Option<String>,
    pub body: Bytes,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub json: Value,
    /// When it arrived (monotonic).
    pub at: Instant,
    /// When it arrived (wall clock, comparable with the service's `SystemClock`).
    pub utc: DateTime<Utc>,
    /// The status the script answered.
    pub answered: u16,
}

impl Hit {
    /// `data.id` of the body.
    pub fn data_id(&self) -> Option<&str> {
        self.json["data"]["id"].as_str()
    }

    /// The body's `type`.
    pub fn kind(&self) -> Option<&str> {
        self.json["type"].as_str()
    }

    pub fn ok(&self) -> bool {
        (200..300).contains(&self.answered)
    }
}

/// What the receiver answers.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Waits this long before answering.
    pub delay: Duration,
    /// Holds the answer until this many requests have arrived in all (at most `HOLD_LIMIT`).
    pub hold_until_seen: usize,
    /// Holds the answer until the test opens this latch (at most `LATCH_LIMIT`).
    pub latch: Option<Latch>,
}

/// The longest an answer is held for `Answer::once_seen`.
const HOLD_LIMIT: Duration = Duration::from_secs(10);

/// The longest an answer is held on a latch: far longer than any test waits, so that only a
/// test that never opens it (one that failed) sees the answer go out on its own.
const LATCH_LIMIT: Duration = Duration::from_secs(120);

/// A gate the test opens: answers held on it ([`Answer::until`]) wait until then, so a test
/// knows a request is in flight for exactly as long as it wants, whatever the machine's speed.
#[derive(Clone, Debug)]
pub struct Latch(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Latch {
    fn default() -> Self {
        Self::new()
    }
}

impl Latch {
    /// A closed latch.
    pub fn new() -> Self {
        Self(Arc::new(tokio::sync::watch::Sender::new(false)))
    }

    /// Opens it: every answer held on it goes out, and later ones are not held.
    pub fn open(&self) {
        self.0.send_replace(true);
    }

    /// Resolves once the latch is open, or after `limit`; returns whether it was opened.
    pub async fn opened(&self, limit: Duration) -> bool {
        let mut rx = self.0.subscribe();
        let opened = tokio::time::timeout(limit, rx.wait_for(|open| *open)).await;
        matches!(opened, Ok(Ok(_)))
    }
}

impl Answer {
    pub fn ok() -> Self {
        Self::status(200)
    }

    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            delay: Duration::ZERO,
            hold_until_seen: 0,
            latch: None,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Answers only once `requests` requests have arrived, counting this one, so a test can
    /// know that several attempts were all in flight before any of them was answered.
    pub fn once_seen(mut self, requests: usize) -> Self {
        self.hold_until_seen = requests;
        self
    }

    /// Answers only once `latch` is opened: the request stays in flight until the test says.
    pub fn until(mut self, latch: &Latch) -> Self {
        self.latch = Some(latch.clone());
        self
    }
}

/// Where a request stands among those seen before it.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    /// Requests before this one, in all.
    pub nth: usize,
    /// Requests before this one with the same path and `webhook-id`.
    pub nth_same: usize,
}

pub type Script = Arc<dyn Fn(&Hit, Seen) -> Answer + Send + Sync>;

/// A script from a closure.
pub fn script(f: impl Fn(&Hit, Seen) -> Answer + Send + Sync + 'static) -> Script {
    Arc::new(f)
}

/// Always 200.
pub fn always_ok() -> Script {
    script(|_, _| Answer::ok())
}

#[derive(Clone)]
struct Shared {
    hits: Arc<Mutex<Vec<Hit>>>,
    script: Script,
}

/// A scripted HTTP receiver on 127.0.0.1; stops when dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let mut hit = Hit {
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
        content_type: header("content-type"),
        user_agent: header("user-agent"),
        json: serde_json::from_slice(&body).unwrap_or(Value::Null),
        body,
        at: Instant::now(),
        utc: Utc::now(),
        answered: 0,
    };
    let answer = {
        let mut hits = shared.hits.lock().unwrap_or_else(|e| e.into_inner());
        let seen = Seen {
            nth: hits.len(),
            nth_same: hits
                .iter()
                .filter(|h| h.path == hit.path && h.id == hit.id)
                .count(),
        };
        let answer = (shared.script)(&hit, seen);
        hit.answered = answer.status;
        hits.push(hit);
        answer
    };
    let held = Instant::now();
    while shared.hits.lock().unwrap_or_else(|e| e.into_inner()).len() < answer.hold_until_seen {
        if held.elapsed() >= HOLD_LIMIT {
            eprintln!(
                "receiver: an answer held until {} requests had arrived was sent after {HOLD_LIMIT:?} without them",
                answer.hold_until_seen
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if let Some(latch) = &answer.latch {
        if !latch.opened(LATCH_LIMIT).await {
            eprintln!("receiver: an answer held on a latch was sent after {LATCH_LIMIT:?} without it being opened");
        }
    }
    if !answer.delay.is_zero() {
        tokio::time::sleep(answer.delay).await;
    }
    let mut response = StatusCode::from_u16(answer.status)
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        .into_response();
    for (name, value) in &answer.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(n, v);
        }
    }
    response
}

impl Receiver {
    /// Starts a receiver on a free port of 127.0.0.1.
    pub async fn start(script: Script) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port for the receiver");
        Self::serve(listener, script)
    }

    /// Starts a receiver on a given address (for "down, then up").
    pub async fn start_on(addr: SocketAddr, script: Script) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        Ok(Self::serve(listener, script))
    }

    fn serve(listener: tokio::net::TcpListener, script: Script) -> Self {
        let addr = listener.local_addr().expect("the receiver's address");
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let app = Router::new().fallback(handle).with_state(Shared {
            hits: hits.clone(),
            script,
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, hits, task }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Requests so far to one path.
    pub fn hits_to(&self, path: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }

    pub fn count(&self) -> usize {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
pub fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address")
}

/// Polls `check` every 10 ms until it holds or `limit` passes; returns whether it held.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
