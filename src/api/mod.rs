//! The framework-agnostic HTTP layer: `http::Request` in, `http::Response` out.
//!
//! [`Api`] knows the paths, parameters, headers, status codes and error bodies of the API and
//! nothing of sockets: the hyper frontend (`crate::server`) and any tower-based framework (via
//! the [`tower_service::Service`] impl) are thin adapters around [`Api::handle_body`].

mod access_log;
pub mod admin;
#[cfg(feature = "mcp")]
mod admission;
mod budget;
mod cors;
mod encoding;
mod endpoints;
mod error;
mod error_code;
mod etag;
mod handlers;
mod job_shape;
mod llms;
mod metrics;
mod openapi;
mod params;
mod render;
pub mod requests;
mod route_table;
mod routes;
mod tower;
pub(crate) mod views;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};

pub use access_log::ACCESS_LOG_TARGET;
#[cfg(feature = "mcp")]
pub(crate) use admission::{cors_head, Admitted, RateTokenTaken};
pub use budget::ClientAddr;
pub use cors::CorsOrigin;
pub use error::{ApiError, Problem};
pub use error_code::ErrorCode;
pub use llms::LLMS_TXT;
pub use openapi::openapi_json;
#[cfg(feature = "client")]
pub(crate) use params::filter_pairs;
pub use params::{CHANGE_PARAMS, COMPANY_PARAMS, JOB_PARAMS};
#[cfg(feature = "mcp")]
pub(crate) use params::{PAGE_PARAMS, SIMILAR_PARAMS};

use crate::domain::{ApiKey, KeyId};
use crate::service::{Caller, JobListingsService, QuotaState, RateLimit, ServiceError};
use metrics::{HttpMetrics, RouteLabel};

/// The `Content-Type` of [`Api::metrics_text`]: the Prometheus text format, version 0.0.4.
pub const METRICS_CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Settings of the HTTP layer.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ApiConfig {
    /// The largest request body accepted, in bytes; default 64 KiB.
    pub max_body_bytes: usize,
    /// The largest request line and header section accepted, counted as HTTP/1.1 sends them
    /// (`name: value` and a line end per field); default 16 KiB. Beyond it the answer is a
    /// 431 problem document. A frontend keeps its own, higher cap on what it reads at all
    /// ([`crate::server::ServerConfig::max_header_bytes`]).
    pub max_header_bytes: usize,
    /// The longest a request body may take to arrive once its head is read; default 10 s.
    /// Beyond it the answer is a 408 problem document (`body_timeout`), so a client that
    /// starts a body and never finishes it cannot hold a connection open.
    pub body_timeout: Duration,
    /// Bytes of rendered job JSON kept for the answers that send them again (search pages,
    /// job details); default 64 MiB, 0 turns it off. Companies get a sixteenth more.
    pub render_cache_bytes: u64,
    /// The budget of requests that carry no valid API key (`OPTIONS`, the OpenAPI document,
    /// and whatever is answered 401, 404, 405, 413… to a request without one), per client
    /// address ([`ClientAddr::group`]); beyond it they are answered 429 `rate_limited` with
    /// `Retry-After`. Default 20 a second with bursts of 100; `None` turns it off. Requests
    /// with a valid key are not charged: their plan's rate applies. Only requests that carry
    /// a [`ClientAddr`] are charged (the bundled server sets it): behind a proxy every client
    /// shares the proxy's address, so raise the budget or set the client's address.
    pub unauthenticated_rate: Option<RateLimit>,
    /// Whether each answered request is logged on the target [`ACCESS_LOG_TARGET`] at `info`
    /// (request id, key id, route pattern, method, status, body bytes, latency); default on.
    /// Off, nothing of it is gathered at all; on, only when a subscriber takes the events.
    pub access_log: bool,
    /// The origins whose pages may call the API from a browser (CORS); default none, which
    /// turns CORS off. [`CorsOrigin::any`] allows every origin; keys are sent by script, never
    /// as cookies, so no answer allows credentials. Preflights are answered without a key,
    /// with the path's methods and the headers the API reads (MCP's `Mcp-Session-Id`,
    /// `MCP-Protocol-Version` and `Last-Event-ID` too); answers expose the quota, request-id
    /// and MCP session headers. The MCP endpoint ([`crate::mcp`]) follows the same policy.
    pub cors_origins: Vec<CorsOrigin>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 64 * 1024,
            max_header_bytes: 16 * 1024,
            body_timeout: Duration::from_secs(10),
            render_cache_bytes: 64 * 1024 * 1024,
            unauthenticated_rate: Some(RateLimit {
                per_second: 20.0,
                burst: 100,
            }),
            access_log: true,
            cors_origins: Vec::new(),
        }
    }
}

/// The HTTP API over a [`JobListingsService`]. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Api {
    inner: Arc<ApiInner>,
}

#[derive(Debug)]
struct ApiInner {
    service: JobListingsService,
    config: ApiConfig,
    /// Rendered jobs and companies, sent again as they are, and compressed answers.
    rendered: render::RenderCache,
    /// Which origins browsers may call the API from.
    cors: cors::Cors,
    /// What each address may still send without a valid key.
    unauthenticated: budget::AddressBudget,
    /// Requests and problem answers counted.
    metrics: Arc<HttpMetrics>,
    /// This API's metrics with its service's: one registry per API, so two APIs in one
    /// process (or test) count apart.
    registry: prometheus_client::registry::Registry,
}

/// What the layer learns of a request on its way through, for its metrics, its access log,
/// and the quota headers of an answer refused without a quota of its own.
#[derive(Clone, Debug)]
pub(crate) struct Trace {
    started: Instant,
    /// The route it matched; set by the router.
    route: RouteLabel,
    /// The key it was served for, once the key is found valid.
    key_id: Option<KeyId>,
    /// The caller its valid key was found to be, checked once: a refusal that carries no
    /// quota carries this caller's as it stood then ([`Caller::quota_at_check`]).
    caller: Option<Caller>,
}

impl Trace {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            route: RouteLabel::UNMATCHED,
            key_id: None,
            caller: None,
        }
    }

    /// The request matched this route.
    pub(crate) fn route(&mut self, route: RouteLabel) {
        self.route = route;
    }

    /// The request is served for this caller.
    pub(crate) fn key(&mut self, caller: &Caller) {
        self.key_id = Some(caller.key_id());
        self.caller = Some(caller.clone());
    }

    /// The quota for the headers of a refusal that carries none: the caller's, if the
    /// request carries a valid key.
    fn quota(&self) -> Option<QuotaState> {
        self.caller.as_ref().map(Caller::quota_at_check)
    }
}

/// A handler's successful answer before headers are added.
pub(crate) struct Reply {
    status: StatusCode,
    body: Option<Bytes>,
    quota: Option<QuotaState>,
    location: Option<String>,
    allow: Option<&'static str>,
    /// An answer repeated for a request with an idempotency key already used.
    replayed: bool,
    /// The body's media type when it is not JSON.
    content_type: Option<&'static str>,
    /// The answer's entity tag, for `ETag` and to find its compressed bytes.
    etag: Option<etag::ETag>,
}

impl Reply {
    /// A reply with this status and body and no other headers yet.
    pub(crate) fn new(status: StatusCode, body: Option<Bytes>, quota: Option<QuotaState>) -> Self {
        Self {
            status,
            body,
            quota,
            location: None,
            allow: None,
            replayed: false,
            content_type: None,
            etag: None,
        }
    }

    /// This reply with an entity tag.
    pub(crate) fn tagged(self, etag: etag::ETag) -> Self {
        Self {
            etag: Some(etag),
            ..self
        }
    }

    /// The answer to a conditional `GET` whose copy the client holds: 304, no body, not
    /// counted (the quota is as the call left it).
    pub(crate) fn not_modified(etag: etag::ETag, quota: QuotaState) -> Self {
        Self::new(StatusCode::NOT_MODIFIED, None, Some(quota)).tagged(etag)
    }

    /// A 200 with a JSON body already encoded.
    pub(crate) fn json_bytes(body: impl Into<Bytes>, quota: Option<QuotaState>) -> Self {
        Self::new(StatusCode::OK, Some(body.into()), quota)
    }

    pub(crate) fn json(body: &impl serde::Serialize, quota: Option<QuotaState>) -> Self {
        // Serialising our own view types cannot fail: they hold only strings, numbers, maps
        // with string keys and JSON values.
        Self::json_bytes(serde_json::to_vec(body).unwrap_or_default(), quota)
    }

    /// A 200 with a body of another media type than JSON.
    pub(crate) fn text(body: String, content_type: &'static str) -> Self {
        Self {
            content_type: Some(content_type),
            ..Self::new(StatusCode::OK, Some(Bytes::from(body)), None)
        }
    }

    /// The answer to `OPTIONS`: 204 with the path's methods in `Allow`.
    pub(crate) fn options(allow: &'static str) -> Self {
        Self {
            allow: Some(allow),
            ..Self::new(StatusCode::NO_CONTENT, None, None)
        }
    }
}

static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// On an answer repeated for an idempotency key already used, as Stripe's API says it.
static IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
static X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
static X_RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
static X_RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
static X_RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");
static RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
static RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

impl Api {
    /// The API over a service, with default settings.
    pub fn new(service: JobListingsService) -> Self {
        Self::with_config(service, ApiConfig::default())
    }

    /// The API over a service, with the given settings.
    pub fn with_config(service: JobListingsService, config: ApiConfig) -> Self {
        let mut registry = prometheus_client::registry::Registry::default();
        let metrics = HttpMetrics::registered(&mut registry);
        service.register_metrics(&mut registry);
        Self {
            inner: Arc::new(ApiInner {
                service,
                rendered: render::RenderCache::new(config.render_cache_bytes),
                cors: cors::Cors::new(&config.cors_origins),
                unauthenticated: budget::AddressBudget::new(config.unauthenticated_rate),
                config,
                metrics,
                registry,
            }),
        }
    }

    /// Every metric of this API and its service in the Prometheus text format (version 0.0.4,
    /// [`METRICS_CONTENT_TYPE`]), for a `GET /metrics` on a listener of the operator's (never
    /// the public one): requests by route pattern, method and status with their durations,
    /// problem answers by code, what the service counts (jobs ingested, webhook deliveries,
    /// store writes), and the gauges of [`JobListingsService::stats`], read now.
    pub fn metrics_text(&self) -> String {
        let mut text = String::new();
        // Writing to a `String` cannot fail, and no collector of ours fails.
        if let Err(e) =
            prometheus_client::encoding::prometheus_text::encode(&mut text, &self.inner.registry)
        {
            tracing::error!(error = %e, "writing the metrics failed");
        }
        text
    }

    /// The service behind the API.
    pub fn service(&self) -> &JobListingsService {
        &self.inner.service
    }

    /// Rendered jobs and companies.
    pub(crate) fn rendered(&self) -> &render::RenderCache {
        &self.inner.rendered
    }

    /// The settings in force.
    pub fn config(&self) -> &ApiConfig {
        &self.inner.config
    }

    /// Answers a request whose body is still a stream: refuses an oversized head (431), reads
    /// at most `max_body_bytes` of the body (413 beyond) for at most `body_timeout` (408
    /// beyond), then answers as [`Api::handle`] does. This is what frontends call.
    pub async fn handle_body<B>(&self, req: Request<B>) -> Response<Bytes>
    where
        B: Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let trace = Trace::new();
        let limit = self.inner.config.max_body_bytes;
        let (parts, body) = req.into_parts();
        if let Err(e) = self.check_head(&parts) {
            return self.refuse_unrouted(&parts, e, trace).await;
        }
        let read = read_body(&parts, body, limit, self.inner.config.body_timeout).await;
        match read {
            Ok(bytes) => self.route(Request::from_parts(parts, bytes), trace).await,
            Err(e) => self.refuse_unrouted(&parts, e, trace).await,
        }
    }

    /// Answers a request whose body has been read. Never panics, never fails: every error
    /// becomes a problem document. `HEAD` is answered as `GET` without the body, and
    /// `OPTIONS` with the path's methods in `Allow`.
    pub async fn handle(&self, req: Request<Bytes>) -> Response<Bytes> {
        let trace = Trace::new();
        let (parts, body) = req.into_parts();
        match self.check_head(&parts) {
            Ok(()) => self.route(Request::from_parts(parts, body), trace).await,
            Err(e) => self.refuse_unrouted(&parts, e, trace).await,
        }
    }

    async fn route(&self, req: Request<Bytes>, mut trace: Trace) -> Response<Bytes> {
        let accepted = if negotiable(req.method()) {
            encoding::Accepted::of(req.headers())
        } else {
            encoding::Accepted::IDENTITY
        };
        if !accepted.identity && accepted.coding.is_none() {
            let (parts, _) = req.into_parts();
            return self
                .refuse_unrouted(&parts, ApiError::NotAcceptable, trace)
                .await;
        }
        let result = routes::route(self, &req, &mut trace).await;
        let (parts, _) = req.into_parts();
        self.respond_negotiated(&parts, result, &trace, accepted)
            .await
    }

    /// Answers a request refused before it reached a handler, after charging it to its
    /// address's budget; over the budget, the answer is that instead.
    async fn refuse_unrouted(
        &self,
        parts: &http::request::Parts,
        error: ApiError,
        mut trace: Trace,
    ) -> Response<Bytes> {
        let error = match self.identify(&parts.headers, &parts.extensions, &mut trace) {
            Err(over_budget) => over_budget,
            Ok(()) => error,
        };
        trace.route(routes::label_of(parts.uri.path()));
        self.respond(parts, Err(error.into()), &trace).await
    }

    /// Finds, once, who sent a request that is answered without a handler's call (`OPTIONS`,
    /// the OpenAPI document, no such path, a head or body refused…). A valid key's caller
    /// goes in `trace`, so that a refusal carries its quota, and the request is charged
    /// nothing: a client with a key answers for its requests through its key's own rate.
    /// Any other request is charged to its address's budget ([`Api::charge_keyless`]).
    pub(crate) fn identify(
        &self,
        headers: &HeaderMap,
        extensions: &http::Extensions,
        trace: &mut Trace,
    ) -> Result<(), ApiError> {
        match api_key(headers).map(|key| self.inner.service.caller(&key)) {
            Ok(Ok(caller)) => {
                trace.caller = Some(caller);
                Ok(())
            }
            _ => self.charge_keyless(extensions),
        }
    }

    /// Charges a request known to carry no valid key to its address's budget
    /// ([`ApiConfig::unauthenticated_rate`]); a request without a [`ClientAddr`] is free.
    pub(crate) fn charge_keyless(&self, extensions: &http::Extensions) -> Result<(), ApiError> {
        let budget = &self.inner.unauthenticated;
        let (Some(limit), Some(addr)) = (budget.limit(), extensions.get::<ClientAddr>()) else {
            return Ok(());
        };
        budget
            .try_take(addr.group(), Instant::now())
            .map_err(|retry_after| ApiError::UnauthenticatedRateLimited { retry_after, limit })
    }

    /// Refuses a request line and header section over `max_header_bytes`.
    fn check_head(&self, parts: &http::request::Parts) -> Result<(), ApiError> {
        let limit = self.inner.config.max_header_bytes;
        let (line, size) = head_bytes(parts);
        if line > limit {
            return Err(ApiError::UriTooLong { size: line, limit });
        }
        if size > limit {
            return Err(ApiError::HeadersTooLarge { size, limit });
        }
        Ok(())
    }

    async fn respond(
        &self,
        request: &http::request::Parts,
        result: Result<Reply, routes::Failure>,
        trace: &Trace,
    ) -> Response<Bytes> {
        self.respond_negotiated(request, result, trace, encoding::Accepted::IDENTITY)
            .await
    }

    /// Answers with the body in the coding `accepted` picks, where it is worth one.
    async fn respond_negotiated(
        &self,
        request: &http::request::Parts,
        result: Result<Reply, routes::Failure>,
        trace: &Trace,
        accepted: encoding::Accepted,
    ) -> Response<Bytes> {
        let headers = &request.headers;
        let request_id = request_id(headers);
        let now = self.inner.service.now();
        let response = match result {
            Ok(reply) => {
                let quota = reply.quota;
                let etag = reply.etag;
                let json = reply.content_type.is_none();
                let mut response = ok_response(reply);
                quota_headers(response.headers_mut(), quota, now);
                if negotiable(&request.method) {
                    self.encode(&mut response, &request.method, etag, json, accepted);
                }
                response
            }
            Err(routes::Failure { error, quota }) => {
                // Plain ASCII either way: the client's only when it is, a UUID otherwise.
                let id = request_id.to_str().unwrap_or_default();
                let (mut response, code) = self.problem_response(&error, id, now);
                self.inner.metrics.problem(code);
                // Answers to a valid key carry its quota, errors included: the quota after
                // the call when the service refused it, the key's as it was checked when
                // the request was refused before any call.
                let quota = quota.or_else(|| trace.quota());
                quota_headers(response.headers_mut(), quota, now);
                let bucket = match &error {
                    ApiError::Service(ServiceError::RateLimited {
                        per_second, burst, ..
                    }) => Some((*per_second, *burst)),
                    ApiError::UnauthenticatedRateLimited { limit, .. } => {
                        Some((limit.per_second, limit.burst))
                    }
                    _ => None,
                };
                if let Some((per_second, burst)) = bucket {
                    // The wait the answer's Retry-After already gives.
                    let retry_after = response
                        .headers()
                        .get(http::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok()?.parse().ok())
                        .unwrap_or(1);
                    burst_headers(response.headers_mut(), per_second, burst, retry_after);
                }
                response
            }
        };
        let mut response = finish(response, request_id, &request.method);
        self.inner.cors.apply(request, response.headers_mut());
        self.count(request, &response, trace);
        response
    }

    /// Tags and codes an answer to a `GET` or `HEAD`: its `ETag` in the coding chosen, `Vary:
    /// Accept-Encoding`, and a JSON body of 200 compressed when it is worth it (never for
    /// `HEAD`, whose answer carries no body). The compressed bytes of a tagged answer are kept,
    /// so a page asked for again is not compressed again.
    fn encode(
        &self,
        response: &mut Response<Bytes>,
        method: &http::Method,
        etag: Option<etag::ETag>,
        json: bool,
        accepted: encoding::Accepted,
    ) {
        let status = response.status();
        if status != StatusCode::OK && status != StatusCode::NOT_MODIFIED {
            return;
        }
        let coding = if method == http::Method::HEAD {
            None
        } else if status == StatusCode::NOT_MODIFIED {
            accepted.coding
        } else {
            accepted.coding.filter(|_| json)
        };
        let h = response.headers_mut();
        h.insert(
            http::header::VARY,
            HeaderValue::from_static("accept-encoding"),
        );
        if let Some(tag) = etag {
            h.insert(http::header::ETAG, tag.header(coding));
            // A tagged answer may be kept by the client's own cache, to be asked for again
            // with `If-None-Match`; never by a shared one, as it needs a key.
            h.insert(
                http::header::CACHE_CONTROL,
                HeaderValue::from_static("private, no-cache"),
            );
        }
        let Some(coding) = coding.filter(|_| status == StatusCode::OK) else {
            return;
        };
        if accepted.coding_for(response.body().len()).is_none() {
            return;
        }
        let body = response.body();
        let compressed = match etag {
            Some(tag) => self.inner.rendered.compressed(tag, coding, body),
            None => coding.compress(body),
        };
        *response.body_mut() = compressed;
        response
            .headers_mut()
            .insert(http::header::CONTENT_ENCODING, coding.header());
    }

    /// Counts an answer in the metrics and writes it to the access log.
    fn count(&self, request: &http::request::Parts, response: &Response<Bytes>, trace: &Trace) {
        let took = trace.started.elapsed();
        let status = response.status();
        self.inner
            .metrics
            .request(trace.route, &request.method, status, took);
        if self.inner.config.access_log {
            access_log::log(access_log::AccessRecord {
                request_id: response.headers().get(&X_REQUEST_ID),
                key_id: trace.key_id,
                route: trace.route,
                method: &request.method,
                status,
                bytes: response.body().len(),
                took,
            });
        }
    }

    fn error_response(
        &self,
        error: &ApiError,
        request_id: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Response<Bytes> {
        self.problem_response(error, request_id, now).0
    }

    /// The problem document answering `error`, with its stable code.
    fn problem_response(
        &self,
        error: &ApiError,
        request_id: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> (Response<Bytes>, &'static str) {
        let answer = error.answer(now);
        let code = answer.code.as_str();
        let status = answer.code.status();
        if status.is_server_error() {
            tracing::error!(request_id, error = %error, "request failed");
        } else {
            tracing::debug!(request_id, code, "request refused");
        }
        let allow = answer.allow;
        let retry_after = answer.retry_after;
        let accept_encoding = answer.accept_encoding;
        let problem = answer.into_problem(request_id);
        let mut response = response_with_room(Bytes::from(
            serde_json::to_vec(&problem).unwrap_or_default(),
        ));
        *response.status_mut() = status;
        let h = response.headers_mut();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        h.insert(
            http::header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        );
        if let Some(allow) = allow {
            h.insert(http::header::ALLOW, HeaderValue::from_static(allow));
        }
        if let Some(secs) = retry_after {
            h.insert(http::header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(codings) = accept_encoding {
            h.insert(
                http::header::ACCEPT_ENCODING,
                HeaderValue::from_static(codings),
            );
        }
        if status == StatusCode::UNAUTHORIZED {
            h.insert(
                http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"job-listings\""),
            );
        }
        (response, code)
    }
}

/// Reads a whole request body: at most `limit` bytes (413 beyond, refused at once when its
/// `Content-Length` says so), within `timeout` (408 beyond).
async fn read_body<B>(
    parts: &http::request::Parts,
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, ApiError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::BodyTooLarge { limit });
    }
    if body.is_end_stream() {
        // Most requests (every GET) have no body: no timer to set for them.
        return Ok(Bytes::new());
    }
    match tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::BodyTooLarge { limit })
        }
        Ok(Err(e)) => Err(ApiError::BodyRead(e.to_string())),
        Err(_) => Err(ApiError::BodyTimeout { after: timeout }),
    }
}

/// Whether answers to this method are negotiated: content codings and entity tags.
fn negotiable(method: &http::Method) -> bool {
    method == http::Method::GET || method == http::Method::HEAD
}

/// What every answer gets last: the request id, and for `HEAD` the length the `GET` would
/// have had without its bytes (RFC 9110, 9.3.2).
fn finish(
    mut response: Response<Bytes>,
    request_id: HeaderValue,
    method: &http::Method,
) -> Response<Bytes> {
    response
        .headers_mut()
        .insert(X_REQUEST_ID.clone(), request_id);
    if method == http::Method::HEAD {
        let length = HeaderValue::from(response.body().len());
        response
            .headers_mut()
            .insert(http::header::CONTENT_LENGTH, length);
        *response.body_mut() = Bytes::new();
    }
    response
}

fn ok_response(reply: Reply) -> Response<Bytes> {
    let has_body = reply.body.is_some();
    let mut response = response_with_room(reply.body.unwrap_or_default());
    *response.status_mut() = reply.status;
    let h = response.headers_mut();
    if has_body {
        let media_type = reply.content_type.unwrap_or("application/json");
        h.insert(CONTENT_TYPE, HeaderValue::from_static(media_type));
    }
    h.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    if let Some(location) = reply.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        h.insert(http::header::LOCATION, location);
    }
    if let Some(allow) = reply.allow {
        h.insert(http::header::ALLOW, HeaderValue::from_static(allow));
    }
    if reply.replayed {
        h.insert(
            IDEMPOTENT_REPLAYED.clone(),
            HeaderValue::from_static("true"),
        );
    }
    response
}

/// The size of a request's line, and of its line and header section, as HTTP/1.1 sends them:
/// `METHOD target HTTP/1.1` and `name: value`, each with its line end, and the blank line
/// after.
fn head_bytes(parts: &http::request::Parts) -> (usize, usize) {
    const LINE_END: usize = 2;
    let target = parts.uri.path_and_query().map_or(1, |p| p.as_str().len());
    let line = parts.method.as_str().len() + 1 + target + " HTTP/1.1".len() + LINE_END;
    let fields: usize = parts
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + ": ".len() + value.len() + LINE_END)
        .sum();
    (line, line + fields + LINE_END)
}

/// Most headers a response carries (an error to a valid key: content type, cache control,
/// `Allow` or `Retry-After`, five quota headers and the request id), so that adding them
/// never grows the map.
const MOST_RESPONSE_HEADERS: usize = 10;

fn response_with_room(body: Bytes) -> Response<Bytes> {
    let mut response = Response::new(body);
    *response.headers_mut() = HeaderMap::with_capacity(MOST_RESPONSE_HEADERS);
    response
}

/// The quota headers that change only with the limit and the period's end.
struct PeriodHeaders {
    limit: u64,
    reset: u64,
    limit_value: HeaderValue,
    reset_value: HeaderValue,
    policy_value: HeaderValue,
}

impl PeriodHeaders {
    fn new(limit: u64, reset: u64) -> Self {
        Self {
            limit,
            reset,
            limit_value: HeaderValue::from(limit),
            reset_value: HeaderValue::from(reset),
            policy_value: ascii_header(&["\"monthly\";q=", itoa::Buffer::new().format(limit)]),
        }
    }
}

thread_local! {
    /// The last [`PeriodHeaders`] this thread sent: answers in a row mostly go to keys of one
    /// plan in one period, so three of the five quota headers are built once, not per request.
    static PERIOD_HEADERS: std::cell::RefCell<Option<PeriodHeaders>> =
        const { std::cell::RefCell::new(None) };
}

/// `X-RateLimit-*` and the IETF draft `RateLimit-Policy`/`RateLimit` headers.
fn quota_headers(h: &mut HeaderMap, quota: Option<QuotaState>, now: chrono::DateTime<chrono::Utc>) {
    let Some(q) = quota else { return };
    let reset = q.resets_at.timestamp().max(0) as u64;
    let window = u64::try_from((q.resets_at - now).num_seconds()).unwrap_or(0);
    let (limit, reset, policy) = PERIOD_HEADERS.with_borrow_mut(|last| {
        let same = last
            .as_ref()
            .is_some_and(|p| p.limit == q.limit && p.reset == reset);
        let p = match last {
            Some(p) if same => p,
            _ => last.insert(PeriodHeaders::new(q.limit, reset)),
        };
        (
            p.limit_value.clone(),
            p.reset_value.clone(),
            p.policy_value.clone(),
        )
    });
    h.insert(X_RATELIMIT_LIMIT.clone(), limit);
    h.insert(
        X_RATELIMIT_REMAINING.clone(),
        HeaderValue::from(q.remaining),
    );
    h.insert(X_RATELIMIT_RESET.clone(), reset);
    h.insert(RATELIMIT_POLICY.clone(), policy);
    let (mut remaining, mut seconds) = (itoa::Buffer::new(), itoa::Buffer::new());
    h.insert(
        RATELIMIT.clone(),
        ascii_header(&[
            "\"monthly\";r=",
            remaining.format(q.remaining),
            ";t=",
            seconds.format(window),
        ]),
    );
}

/// Describes the per-second limit a 429 `rate_limited` hit beside the monthly quota: a bucket
/// of `burst` requests refilled at `per_second` is a quota of `burst` per the seconds a refill
/// takes, none of it left for `retry_after` seconds.
fn burst_headers(h: &mut HeaderMap, per_second: f64, burst: u32, retry_after: u64) {
    let window = (f64::from(burst) / per_second.max(f64::MIN_POSITIVE))
        .ceil()
        .clamp(1.0, u32::MAX.into()) as u64;
    append_list_item(
        h,
        &RATELIMIT_POLICY,
        &format!("\"burst\";q={burst};w={window}"),
    );
    append_list_item(h, &RATELIMIT, &format!("\"burst\";r=0;t={retry_after}"));
}

/// Adds an item to a header that holds a structured-field list.
fn append_list_item(h: &mut HeaderMap, name: &HeaderName, item: &str) {
    let joined = match h.get(name).and_then(|v| v.to_str().ok()) {
        Some(list) => format!("{list}, {item}"),
        None => item.to_owned(),
    };
    if let Ok(value) = HeaderValue::from_str(&joined) {
        h.insert(name.clone(), value);
    }
}

/// A header value of pieces known to be visible ASCII, built in one allocation (`format!`
/// and `HeaderValue::from_str` would take three, per header, per request).
fn ascii_header(pieces: &[&str]) -> HeaderValue {
    let mut value = Vec::with_capacity(pieces.iter().map(|p| p.len()).sum());
    for piece in pieces {
        value.extend_from_slice(piece.as_bytes());
    }
    HeaderValue::from_maybe_shared(Bytes::from(value))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The client's `X-Request-Id` when it is short and plain, else a new one.
fn request_id(headers: &HeaderMap) -> HeaderValue {
    headers
        .get(&X_REQUEST_ID)
        .filter(|v| {
            let v = v.as_bytes();
            !v.is_empty()
                && v.len() <= 64
                && v.iter()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
        })
        .cloned()
        .unwrap_or_else(|| {
            // A v4 id from the thread's generator: `Uuid::new_v4` asks the OS for every one,
            // a system call per request.
            let id = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
            let mut text = uuid::Uuid::encode_buffer();
            ascii_header(&[id.hyphenated().encode_lower(&mut text)])
        })
}

/// The API key from `X-API-Key` or `Authorization: Bearer`, checked for form. A request that
/// carries two different keys (the header twice, or both headers) is refused rather than
/// served as whichever came first: which plan and quota it meant is not ours to guess.
pub(crate) fn api_key(headers: &HeaderMap) -> Result<ApiKey, ApiError> {
    let malformed = |reason: &str| {
        ApiError::MalformedApiKey(crate::domain::DomainError::new("api_key", reason))
    };
    let two_keys = || {
        malformed("was sent twice with different values; send one key, in X-API-Key or Authorization: Bearer")
    };
    let mut in_header = headers.get_all(&X_API_KEY).iter();
    let from_header = in_header.next();
    if in_header.any(|other| Some(other) != from_header) {
        return Err(two_keys());
    }
    // An empty `X-API-Key:` or `Authorization:`, as a script with an unset variable sends,
    // is no key sent.
    let sent = |v: &&HeaderValue| !v.as_bytes().trim_ascii().is_empty();
    let from_header = from_header.filter(sent);
    // Every Authorization header counts, as every X-API-Key does: a second one with another
    // key must not be ignored (the request would be served and billed as the first).
    let mut authorizations = headers
        .get_all(http::header::AUTHORIZATION)
        .iter()
        .filter(sent);
    let authorization = authorizations.next();
    if authorizations.any(|other| Some(other) != authorization) {
        return Err(two_keys());
    }
    let bearer = authorization.map(|v| {
        let v = v.to_str().unwrap_or("");
        let (scheme, token) = v.trim().split_once(' ').unwrap_or((v, ""));
        (scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()).then(|| token.trim())
    });
    let raw = match (from_header, bearer) {
        (Some(v), bearer) => {
            let key = v
                .to_str()
                .map_err(|_| malformed("contains characters that are not allowed"))?
                .trim();
            if bearer.flatten().is_some_and(|token| token != key) {
                return Err(two_keys());
            }
            key
        }
        (None, Some(Some(token))) => token,
        (None, Some(None)) => {
            return Err(malformed(
                "must be sent as `Authorization: Bearer <key>` or in the X-API-Key header",
            ))
        }
        (None, None) => return Err(ApiError::MissingApiKey),
    };
    ApiKey::parse(raw).map_err(ApiError::MalformedApiKey)
}

setters!(ApiConfig {
    max_body_bytes: usize,
    max_header_bytes: usize,
    body_timeout: Duration,
    render_cache_bytes: u64,
    unauthenticated_rate: Option<RateLimit>,
    access_log: bool,
    cors_origins: Vec<CorsOrigin>,
});
