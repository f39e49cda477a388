//! The admin API: the operator's calls on a running server, under `/admin/v1`, on a listener
//! of its own and behind a credential of its own ([`AdminToken`]).
//!
//! It writes and deletes jobs and companies (one at a time, or streamed as JSON Lines with a
//! report of every line refused), issues and changes keys, enables or disables any key's
//! webhook subscriptions, backs the live store up, and reports the service's state
//! (`/admin/v1/stats` as JSON, `/metrics` in the Prometheus text format). A job written here is searchable when the call returns, and a new active one
//! is announced to webhook subscribers as any ingest is. `/livez`, `/readyz` and the admin
//! OpenAPI document answer without the token.
//!
//! [`AdminApi`] is framework-agnostic like [`Api`]: `http::Request` in, `http::Response` out.
//! Never serve it on the public API's listener: anyone who can reach it with the token can
//! change everything. The bundled server binds it to a loopback address by default.

mod backup;
mod bulk;
mod companies;
mod endpoints;
mod jobs;
mod keys;
mod routes;
mod token;
mod views;
mod webhooks;
pub mod wire;

/// The types of the admin API's bodies, which its document's schemas are generated from.
pub(crate) mod bodies {
    pub(crate) use super::views::WebhookHealthView;
    pub(crate) use super::webhooks::StatusChange;
}
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response};
use http_body::Body;

pub(crate) use endpoints::{AdminOperation, ADMIN_ENDPOINTS, ADMIN_ROUTES};
pub use token::AdminToken;

use super::error::ApiError;
use super::routes::Failure;
use super::{finish, ok_response, read_body, request_id, Api, Reply, Trace};
use crate::domain::KeyHash;
use crate::service::JobListingsService;

pub use crate::api::openapi::admin_openapi_json;

/// How long a refused bulk upload is told to wait: uploads take seconds to minutes, so an
/// earlier retry would mostly be refused again.
const UPLOAD_RETRY_AFTER: Duration = Duration::from_secs(5);

/// Settings of the admin API.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct AdminConfig {
    /// The largest body of a single-record call (a job, a company, a key), in bytes;
    /// default 1 MiB. Bulk uploads are streamed and have no total limit.
    pub max_body_bytes: usize,
    /// The longest line of a bulk upload, in bytes; default 1 MiB. A longer one is refused
    /// with the rest of the upload.
    pub max_line_bytes: usize,
    /// The most bulk uploads read at once, jobs and companies together; default 4. One more
    /// is refused at once (`429 too_many_uploads` with `Retry-After`) rather than queued: the
    /// uploads under way already keep the cores busy parsing, so another would only slow
    /// them, and each holds up to about `2 × (max_batch_bytes + max_line_bytes)` of lines.
    pub max_bulk_uploads: usize,
    /// The most bytes of lines a bulk upload gathers into one batch before it checks and
    /// writes them; default 8 MiB. A batch is cut at 4,096 lines or at this, whichever comes
    /// first, so an upload of long lines holds two batches of this size (one parsed while the
    /// next is read), not 4,096 lines of up to `max_line_bytes` each.
    pub max_batch_bytes: usize,
    /// The longest a bulk upload may go without sending a byte; default 30 s.
    pub body_idle_timeout: Duration,
    /// The most refused lines a bulk report lists one by one (all are counted); default 1,000.
    pub max_reported_lines: usize,
}

impl Default for AdminConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            max_line_bytes: 1024 * 1024,
            max_bulk_uploads: 4,
            max_batch_bytes: 8 * 1024 * 1024,
            body_idle_timeout: Duration::from_secs(30),
            max_reported_lines: 1_000,
        }
    }
}

/// The admin API over the same [`Api`] (and so the same service) that serves the public one.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct AdminApi {
    inner: Arc<AdminInner>,
}

#[derive(Debug)]
struct AdminInner {
    api: Api,
    /// The hash of the one token accepted.
    token: KeyHash,
    config: AdminConfig,
    /// A permit per bulk upload under way ([`AdminConfig::max_bulk_uploads`]).
    uploads: Arc<tokio::sync::Semaphore>,
}

impl AdminApi {
    /// The admin API beside `api`, accepting the token whose hash is `token`
    /// ([`AdminToken::hash`]), with default settings.
    pub fn new(api: Api, token: KeyHash) -> Self {
        Self::with_config(api, token, AdminConfig::default())
    }

    /// The admin API with the given settings.
    pub fn with_config(api: Api, token: KeyHash, config: AdminConfig) -> Self {
        Self {
            inner: Arc::new(AdminInner {
                api,
                token,
                config,
                uploads: Arc::new(tokio::sync::Semaphore::new(
                    config
                        .max_bulk_uploads
                        .min(tokio::sync::Semaphore::MAX_PERMITS),
                )),
            }),
        }
    }

    /// The service behind it.
    pub fn service(&self) -> &JobListingsService {
        self.inner.api.service()
    }

    /// The public API it stands beside.
    pub fn api(&self) -> &Api {
        &self.inner.api
    }

    /// The settings in force.
    pub fn config(&self) -> AdminConfig {
        self.inner.config
    }

    /// A place for one more bulk upload, held until it is dropped; refused when
    /// [`AdminConfig::max_bulk_uploads`] are under way.
    fn upload_slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.inner
            .uploads
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::TooManyUploads {
                limit: self.inner.config.max_bulk_uploads,
                retry_after: UPLOAD_RETRY_AFTER,
            })
    }

    /// Answers a request whose body is still a stream. Never panics, never fails: every error
    /// becomes a problem document. Bulk uploads are read as they arrive; any other body is
    /// read whole, up to [`AdminConfig::max_body_bytes`].
    pub async fn handle_body<B>(&self, req: Request<B>) -> Response<Bytes>
    where
        B: Body + Send + Unpin,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut trace = Trace::new();
        let (parts, body) = req.into_parts();
        let answered = self.answer(&parts, body, &mut trace).await;
        let request_id = request_id(&parts.headers);
        let response = match answered {
            Ok(reply) => ok_response(reply),
            Err(Failure { error, .. }) => {
                let id = request_id.to_str().unwrap_or_default().to_owned();
                self.inner
                    .api
                    .error_response(&error, &id, self.service().now())
            }
        };
        let response = finish(response, request_id, &parts.method);
        self.inner.api.count(&parts, &response, &trace);
        response
    }

    async fn answer<B>(
        &self,
        parts: &http::request::Parts,
        body: B,
        trace: &mut Trace,
    ) -> Result<Reply, Failure>
    where
        B: Body + Send + Unpin,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let api = &self.inner.api;
        api.check_head(parts)?;
        let route = routes::Route::of(parts)?;
        trace.route(route.label());
        // `OPTIONS` says what a path takes, as the OpenAPI document does, without a token.
        if route.needs_token() && parts.method != http::Method::OPTIONS {
            self.authorize(&parts.headers)?;
        }
        let route = route.with_method(&parts.method)?;
        if route.streams_body() {
            return routes::call_streaming(self, parts, route, body).await;
        }
        let config = &self.inner.config;
        let bytes = read_body(
            parts,
            body,
            config.max_body_bytes,
            api.config().body_timeout,
        )
        .await?;
        let req = Request::from_parts(parts.clone(), bytes);
        routes::call(self, &req, route).await
    }

    /// Checks `Authorization: Bearer <admin token>`, in time that does not depend on how
    /// much of a wrong token was right.
    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let mut sent = headers.get_all(http::header::AUTHORIZATION).iter();
        let (Some(value), None) = (sent.next(), sent.next()) else {
            return Err(if headers.contains_key(http::header::AUTHORIZATION) {
                ApiError::InvalidAdminToken
            } else {
                ApiError::MissingAdminToken
            });
        };
        let value = value.as_bytes().trim_ascii();
        let token = match value.split_at_checked(7) {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case(b"bearer ") => rest.trim_ascii(),
            _ => return Err(ApiError::MissingAdminToken),
        };
        if token::hash_presented(token).ct_eq(&self.inner.token) {
            Ok(())
        } else {
            Err(ApiError::InvalidAdminToken)
        }
    }
}

/// A JSON answer with a status other than 200.
fn json_with_status(status: http::StatusCode, body: &impl serde::Serialize) -> Reply {
    let mut reply = Reply::json(body, None);
    reply.status = status;
    reply
}

setters!(AdminConfig {
    max_body_bytes: usize,
    max_line_bytes: usize,
    max_bulk_uploads: usize,
    max_batch_bytes: usize,
    body_idle_timeout: Duration,
    max_reported_lines: usize,
});
