//! The Model Context Protocol frontend: the API's calls as MCP tools, for AI agents.
//!
//! Tools: `search_jobs`, `get_job`, `list_companies`, `get_company`, `follow_changes`,
//! `get_usage`, and on the Agent Pro plan or higher `create_webhook`, `list_webhooks`,
//! `delete_webhook` (listed only to keys whose plan may call them). Each is one call of the public API, made on the same path a REST call
//! takes (key, plan, validation, search, metering, the one error table): its structured
//! result is the REST answer's JSON, and a refusal is a tool error carrying the same `code`
//! REST answers. Every request to the endpoint with a key, a tool call or any other message,
//! takes one token of the key's rate limit, as a REST request does.
//!
//! Two transports share the tools (`tools.rs`, `schemas.rs`):
//!
//! - [`Mcp`]: streamable HTTP (on the official SDK, `rmcp`), for mounting beside the REST API
//!   at [`PATH`]. Every request needs a valid key as REST does (a 401 problem document before
//!   any session starts); sessions belong to the key that opened them and are bounded per
//!   key and in all, and close after an idle timeout ([`McpConfig`]); an event stream ends
//!   when its key is revoked or its billing stops being active. [`WithMcp`] serves both
//!   on one listener of the bundled [`crate::server::Server`].
//! - `serve_stdio` (with the `client` feature): MCP over stdin/stdout, the calls forwarded to
//!   a running server through [`crate::client::Client`], for desktop agents that launch MCP
//!   servers as processes.
//!
//! ```no_run
//! # #[cfg(feature = "server")]
//! # async fn run(api: job_listings::api::Api) -> std::io::Result<()> {
//! use job_listings::mcp::{Mcp, McpConfig, WithMcp};
//! use job_listings::server::{Server, ServerConfig};
//!
//! let mcp = Mcp::new(api.clone(), McpConfig::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! Server::new(listener, WithMcp::new(api, mcp), ServerConfig::default())?
//!     .run(std::future::pending())
//!     .await
//! # }
//! ```

mod in_process;
mod render;
mod schemas;
mod session;
#[cfg(feature = "client")]
mod stdio;
mod streams;
mod tools;
mod upstream;

use std::convert::Infallible;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Full};
use rmcp::model::ErrorCode;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::api::{cors_head, Admitted, Api, ApiError};
use in_process::{ApiUpstream, KeyPlan};
use session::{Ledger, Limits, Lookup, Reservation, StreamSlot};
use tools::JobTools;

#[cfg(feature = "client")]
pub use stdio::serve_stdio;

/// The path the bundled server serves MCP at.
pub const PATH: &str = "/mcp";

/// How much longer than the ledger the SDK keeps an idle session's task.
const SDK_IDLE_MARGIN: Duration = Duration::from_secs(60);

/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The methods [`PATH`] takes: messages, the event stream, closing a session, and the
/// preflight.
const ALLOW: &str = "GET, POST, DELETE, OPTIONS";

/// The body of an MCP answer: whole, or a stream of server-sent events.
pub type McpBody = BoxBody<Bytes, Infallible>;

/// Settings of the MCP endpoint.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct McpConfig {
    /// Sessions one key may hold open at once; default 16. One more is answered 429
    /// `too_many_sessions` until one closes or expires.
    pub max_sessions_per_key: usize,
    /// Sessions open at once over all keys; default 10,000.
    pub max_sessions: usize,
    /// A session with no request for this long is closed; default 10 minutes. Its client
    /// gets 404 and initializes a new one, as the protocol says.
    pub idle_timeout: Duration,
    /// How often an open event stream carries a keep-alive comment; default 15 s, so proxies
    /// do not close a quiet stream.
    pub keep_alive: Duration,
    /// Event streams one session may hold open at once (its `GET` streams, and the answers to
    /// its requests still being sent, each an event stream); default 8. One more is answered
    /// 429 `too_many_streams` until one ends, so a session cannot hold streams, and the
    /// server's memory, without end. A notification, answered without a stream, is never
    /// refused for it.
    pub max_streams_per_session: usize,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            max_sessions_per_key: 16,
            max_sessions: 10_000,
            idle_timeout: Duration::from_secs(600),
            keep_alive: Duration::from_secs(15),
            max_streams_per_session: 8,
        }
    }
}

/// The MCP endpoint over an [`Api`]: streamable HTTP with sessions. Cheap to clone.
#[derive(Clone)]
pub struct Mcp {
    inner: Arc<McpInner>,
}

struct McpInner {
    api: Api,
    sdk: StreamableHttpService<JobTools<ApiUpstream>, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    ledger: Ledger,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp")
            .field("open_sessions", &self.inner.ledger.open())
            .finish_non_exhaustive()
    }
}

impl Mcp {
    /// The endpoint over `api`, whose keys, quotas and limits it shares.
    pub fn new(api: Api, config: McpConfig) -> Self {
        let mut session_config = SessionConfig::default();
        // The ledger expires an idle session (404, its place freed, the SDK told to close it);
        // the SDK's own idle timer, a minute later, only ends a task nobody asked about
        // again, so a request never finds a session the ledger holds but the SDK dropped.
        session_config.keep_alive = Some(config.idle_timeout.saturating_add(SDK_IDLE_MARGIN));
        let mut sessions = LocalSessionManager::default();
        sessions.session_config = session_config;
        let sessions = Arc::new(sessions);
        let upstream = ApiUpstream::new(api.clone());
        let sdk_config = StreamableHttpServerConfig::default()
            // Every request carries an API key, which a page rebinding a name to this server
            // cannot have: the SDK's `Host` check (loopback names only, for servers on a
            // desktop) would lock out every deployment behind a real name.
            .disable_allowed_hosts()
            .with_sse_keep_alive(Some(config.keep_alive))
            // A call without a session (protocol 2026-07-28) is answered with plain JSON when
            // its answer is one message, as every tool's is: no event stream to frame.
            .with_json_response(true)
            .with_max_request_body_bytes(api.config().max_body_bytes);
        let sdk = StreamableHttpService::new(
            move || Ok(JobTools::new(upstream.clone())),
            sessions.clone(),
            sdk_config,
        );
        let ledger = Ledger::new(Limits {
            per_key: config.max_sessions_per_key,
            total: config.max_sessions,
            idle_timeout: config.idle_timeout,
            streams_per_session: config.max_streams_per_session,
        });
        Self {
            inner: Arc::new(McpInner {
                api,
                sdk,
                sessions,
                ledger,
            }),
        }
    }

    /// How many sessions are open.
    pub fn open_sessions(&self) -> usize {
        self.inner.ledger.open()
    }

    /// Closes every session and ends their event streams, as a server does when it stops.
    pub fn close_all(&self) {
        self.inner.sdk.config.cancellation_token.cancel();
    }

    /// Answers one request to the endpoint. Never fails: refusals are the API's problem
    /// documents (401 without a valid key, 429 `rate_limited` over the key's rate, 413 for a
    /// body over the API's limit, 404 for a session that is not the key's, 429
    /// `too_many_sessions` and `too_many_streams`), everything else is MCP. `OPTIONS` is answered first, without a
    /// key, as REST answers it, and every answer carries the API's CORS headers.
    pub async fn handle<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body,
        B::Error: Into<Box<dyn Error + Send + Sync>>,
    {
        let api = &self.inner.api;
        if req.method() == Method::OPTIONS {
            // Before admission: a browser's preflight carries no key.
            return whole(api.options(&req.into_parts().0, ALLOW).await);
        }
        let Admitted {
            mut parts,
            body,
            caller,
        } = match api.admit(req).await {
            Ok(admitted) => admitted,
            Err(refused) => return whole(refused),
        };
        let key_id = caller.key_id();
        parts.extensions.insert(KeyPlan(caller.plan()));
        let cors = cors_head(&parts);
        if parts.method == Method::POST && is_batch(&body) {
            // Protocol 2025-06-18 removed batches; the SDK reads none and would answer in
            // plain text. One error for the whole array, as JSON-RPC answers an array it
            // cannot take.
            return self.unreadable(
                &cors,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches (an array of messages) are not supported \
                 since MCP 2025-06-18; send each message in a request of its own"
                    .into(),
            );
        }
        let now = Instant::now();
        let ledger = &self.inner.ledger;
        // A session id that is not text names no session of ours: refused here, so the SDK
        // never reads a session header the ledger did not check.
        let session = match parts.headers.get(SESSION_HEADER).map(|v| v.to_str()) {
            None => None,
            Some(Ok(id)) => Some(id.to_owned()),
            Some(Err(_)) => {
                return whole(api.refuse(&parts, &caller, ApiError::UnknownSession).await)
            }
        };
        let mut reservation: Option<Reservation> = None;
        let mut stream: Option<StreamSlot> = None;
        match &session {
            Some(id) => match ledger.touch(id, key_id, now) {
                Lookup::Owned => {
                    // In a session, a GET is a stream and so is the answer to a request;
                    // its place is held before the SDK opens it (and does the work).
                    let streams = parts.method == Method::GET
                        || (parts.method == Method::POST && is_request(&body));
                    if streams {
                        match ledger.hold_stream(id) {
                            Ok(slot) => stream = Some(slot),
                            Err(e) => return whole(api.refuse(&parts, &caller, e).await),
                        }
                    }
                }
                Lookup::Expired => {
                    self.close_in_sdk(id).await;
                    return whole(api.refuse(&parts, &caller, ApiError::UnknownSession).await);
                }
                Lookup::Unknown => {
                    return whole(api.refuse(&parts, &caller, ApiError::UnknownSession).await)
                }
            },
            None if parts.method == Method::POST && opens_session(&body) => {
                for id in ledger.expire_idle(now) {
                    self.close_in_sdk(&id).await;
                }
                match ledger.reserve(key_id) {
                    Ok(held) => reservation = Some(held),
                    Err(e) => return whole(api.refuse(&parts, &caller, e).await),
                }
            }
            None => {}
        }
        let closing = parts.method == Method::DELETE;
        let json_post = parts.method == Method::POST && is_json(&parts.headers);
        let sent = body.clone();
        // What a refusal after the SDK's answer needs of the request (only a POST without a
        // session can open one).
        let head = (session.is_none() && parts.method == Method::POST).then(|| head_of(&parts));
        let mut response = self
            .inner
            .sdk
            .handle(Request::from_parts(parts, Full::new(body)))
            .await;
        api.cors(&cors, response.headers_mut());
        if json_post && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            // A JSON body the SDK read no message from, answered in plain text: said in
            // JSON-RPC instead, as the client reads every other error.
            return match serde_json::from_slice::<serde::de::IgnoredAny>(&sent) {
                Err(e) => self.unreadable(
                    &cors,
                    ErrorCode::PARSE_ERROR,
                    format!("Parse error: the body is not JSON: {e}"),
                ),
                Ok(_) => self.unreadable(
                    &cors,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: the body is not a JSON-RPC 2.0 request, notification \
                     or response"
                        .into(),
                ),
            };
        }
        let answered = response.status().is_success();
        let opened = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|_| answered && session.is_none())
            .map(str::to_owned);
        if let Some(id) = opened {
            // Every session the SDK opens is in the ledger, even one whose request did not
            // read as an `initialize` here: one over the bounds is closed again at once.
            let held = match reservation {
                Some(held) => Ok(held),
                None => ledger.reserve(key_id),
            };
            match held {
                Ok(held) => held.keep(&id, now),
                Err(e) => {
                    self.close_in_sdk(&id).await;
                    let head = head.unwrap_or_else(|| head_of(&Request::new(()).into_parts().0));
                    return whole(api.refuse(&head, &caller, e).await);
                }
            }
        }
        if let (true, true, Some(id)) = (closing, answered, &session) {
            ledger.close(id, key_id);
        }
        streams::held(response, &caller, stream)
    }

    /// The JSON-RPC error answering a body no message was read from: 400, the error as
    /// JSON with a null id (JSON-RPC 2.0, section 5: no id could be read), and the CORS
    /// headers of the request whose [`cors_head`] is `cors`.
    fn unreadable(
        &self,
        cors: &http::request::Parts,
        code: ErrorCode,
        message: String,
    ) -> Response<McpBody> {
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": code.0, "message": message},
        });
        let mut response = whole(Response::new(Bytes::from(error.to_string())));
        *response.status_mut() = StatusCode::BAD_REQUEST;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.inner.api.cors(cors, response.headers_mut());
        response
    }

    async fn close_in_sdk(&self, id: &str) {
        if let Err(e) = self.inner.sessions.close_session(&Arc::from(id)).await {
            tracing::debug!(error = %e, "closing an idle MCP session");
        }
    }
}

/// Whether a body is an `initialize` request, which opens a session.
fn opens_session(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method {
        method: Option<String>,
    }
    serde_json::from_slice::<Method>(body)
        .ok()
        .and_then(|m| m.method)
        .as_deref()
        == Some("initialize")
}

/// Whether a body is a JSON-RPC request (a method and an id), answered in a session with an
/// event stream of its own; a notification or a response is not.
fn is_request(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<serde::de::IgnoredAny>,
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Message>(body).is_ok_and(|m| m.method.is_some() && m.id.is_some())
}

/// Whether a body is a JSON array: a JSON-RPC batch.
fn is_batch(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// Whether a request says its body is JSON, as the SDK reads `Content-Type`.
fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// A copy of a request's method, URI and headers.
fn head_of(parts: &http::request::Parts) -> http::request::Parts {
    let mut copy = Request::new(());
    *copy.method_mut() = parts.method.clone();
    *copy.uri_mut() = parts.uri.clone();
    *copy.headers_mut() = parts.headers.clone();
    copy.into_parts().0
}

fn whole(response: Response<Bytes>) -> Response<McpBody> {
    response.map(|b| Full::new(b).boxed())
}

/// The REST API with the MCP endpoint beside it at [`PATH`], on one listener. Cheap to
/// clone.
#[derive(Clone, Debug)]
pub struct WithMcp {
    api: Api,
    mcp: Mcp,
}

impl WithMcp {
    /// REST from `api`, MCP from `mcp` (made over the same `api`).
    pub fn new(api: Api, mcp: Mcp) -> Self {
        Self { api, mcp }
    }

    /// The REST API.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The MCP endpoint.
    pub fn mcp(&self) -> &Mcp {
        &self.mcp
    }

    /// Answers a request: [`PATH`] by MCP, any other by REST.
    pub async fn handle<B>(&self, req: Request<B>) -> Response<Either<Full<Bytes>, McpBody>>
    where
        B: Body + Send + 'static,
        B::Error: Into<Box<dyn Error + Send + Sync>>,
    {
        if req.uri().path() == PATH {
            self.mcp.handle(req).await.map(Either::Right)
        } else {
            self.api
                .handle_body(req)
                .await
                .map(|b| Either::Left(Full::new(b)))
        }
    }
}

#[cfg(feature = "server")]
impl crate::server::Handler for WithMcp {
    type Body = Either<Full<Bytes>, McpBody>;
    type BodyError = Box<dyn Error + Send + Sync>;

    async fn answer(&self, req: Request<hyper::body::Incoming>) -> Response<Self::Body> {
        self.handle(req).await
    }

    fn owned_service(&self) -> Option<&crate::service::JobListingsService> {
        Some(self.api.service())
    }

    fn shutting_down(&self) {
        self.mcp.close_all();
    }
}

/// For tower-based frameworks: mount it on a route of their own (`/mcp`).
impl<B> tower_service::Service<Request<B>> for Mcp
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn Error + Send + Sync>>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Infallible>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let mcp = self.clone();
        Box::pin(async move { Ok(mcp.handle(req).await) })
    }
}

setters!(McpConfig {
    max_sessions_per_key: usize,
    max_sessions: usize,
    idle_timeout: Duration,
    keep_alive: Duration,
    max_streams_per_session: usize,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_initialize_request_opens_a_session() {
        assert!(opens_session(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#
        ));
        assert!(!opens_session(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        ));
        assert!(!opens_session(b"not json"));
    }

    #[test]
    fn a_request_has_a_method_and_an_id() {
        assert!(is_request(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        ));
        assert!(is_request(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#));
        assert!(!is_request(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ));
        assert!(!is_request(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#));
        assert!(!is_request(b"not json"));
    }

    #[test]
    fn an_array_body_is_a_batch() {
        assert!(is_batch(
            b" \n [{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"
        ));
        assert!(is_batch(b"[]"));
        assert!(!is_batch(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
        assert!(!is_batch(b""));
    }
}
