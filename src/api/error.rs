//! THE one table from errors to HTTP: status, stable code, title and body.

use chrono::{DateTime, Utc};

use thiserror::Error;

use super::error_code::ErrorCode;
use crate::domain::{BillingStatus, DomainError};
use crate::service::{RateLimit, ServiceError};
pub use crate::wire::Problem;

/// Why a request failed at the HTTP layer, or below it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The service refused or failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// A query, path or body value was malformed.
    #[error(transparent)]
    InvalidParameter(#[from] DomainError),
    /// A query parameter the endpoint does not take.
    #[error("unknown parameter {param}")]
    UnknownParameter {
        /// The parameter given.
        param: String,
        /// The parameters the endpoint takes.
        allowed: &'static [&'static str],
    },
    /// A value that is not one of the few a parameter takes.
    #[error("{param} does not take {value}")]
    NotOneOf {
        /// The parameter.
        param: &'static str,
        /// The value given, cut to 64 characters.
        value: String,
        /// The values it takes.
        allowed: &'static [&'static str],
    },
    /// The request body is not the JSON the endpoint takes.
    #[error("invalid body: {0}")]
    InvalidBody(String),
    /// Neither `X-API-Key` nor `Authorization: Bearer` was sent.
    #[error("missing API key")]
    MissingApiKey,
    /// The presented key is not of our form, or its checksum is wrong.
    #[error("malformed API key: {0}")]
    MalformedApiKey(DomainError),
    /// The admin API was called without `Authorization: Bearer <admin token>`.
    #[error("missing admin token")]
    MissingAdminToken,
    /// The admin API was called with a token that is not the admin token.
    #[error("invalid admin token")]
    InvalidAdminToken,
    /// No such path on the admin listener.
    #[error("no such admin path")]
    NoAdminRoute,
    /// No such path.
    #[error("no such path")]
    NoRoute {
        /// Whether the path starts with `/api/v1`.
        under_api: bool,
    },
    /// The path exists but not with this method.
    #[error("method not allowed")]
    MethodNotAllowed {
        /// The methods the path takes, for the `Allow` header.
        allow: &'static str,
    },
    /// The body is larger than the limit.
    #[error("body larger than {limit} bytes")]
    BodyTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The request line and headers are larger than the limit.
    #[error("request head of {size} bytes, over the limit of {limit}")]
    HeadersTooLarge {
        /// Their size, counted as HTTP/1.1 sends them.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The request line alone is larger than the limit on the request line and headers.
    #[error("request target of {size} bytes, over the limit of {limit}")]
    UriTooLong {
        /// The request line's size.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The body is not of the media type the endpoint reads.
    #[error("unsupported media type, expected {expected}")]
    UnsupportedMediaType {
        /// The `Content-Type` to send, such as `application/json`.
        expected: &'static str,
    },
    /// The body was sent compressed (`Content-Encoding` other than `identity`), which the API
    /// does not read.
    #[error("unsupported content coding {coding}")]
    UnsupportedContentEncoding {
        /// The `Content-Encoding` sent, cut to 64 characters.
        coding: String,
    },
    /// The client refuses every content coding the answer could have: `identity` by
    /// `Accept-Encoding` (`identity;q=0`, or `*;q=0` without naming it) and none of zstd,
    /// brotli and gzip accepted.
    #[error("no acceptable content coding")]
    NotAcceptable,
    /// The body could not be read from the connection.
    #[error("body could not be read: {0}")]
    BodyRead(String),
    /// The body did not arrive in time ([`crate::api::ApiConfig::body_timeout`]).
    #[error("body not read within {}s", after.as_secs_f64())]
    BodyTimeout {
        /// How long the body was waited for.
        after: std::time::Duration,
    },
    /// A request without a valid API key from an address that has sent more of them than
    /// [`crate::api::ApiConfig::unauthenticated_rate`] allows.
    #[error("too many requests without a valid API key from one address")]
    UnauthenticatedRateLimited {
        /// How long until the address may send another.
        retry_after: std::time::Duration,
        /// The budget it went over.
        limit: RateLimit,
    },
    /// An MCP request names a session that is not open for its key: never opened, closed,
    /// expired after its idle timeout, or opened with another key.
    #[error("no such MCP session")]
    UnknownSession,
    /// A bulk upload would be one more than the admin API reads at once
    /// ([`crate::api::admin::AdminConfig::max_bulk_uploads`]).
    #[error("{limit} bulk uploads are under way already")]
    TooManyUploads {
        /// How many may be under way at once.
        limit: usize,
        /// How long to wait before trying again.
        retry_after: std::time::Duration,
    },
    /// A new MCP session would be one more than the key, or the server, may hold open.
    #[error("too many open MCP sessions")]
    TooManySessions {
        /// How many may be open.
        limit: usize,
        /// Whether the limit is the key's own (else the server's, over all keys).
        per_key: bool,
        /// How long until an idle session expires and frees its place at the latest.
        retry_after: std::time::Duration,
    },
    /// An MCP request would open one more event stream in its session than a session may
    /// hold at once.
    #[error("too many open MCP event streams in one session")]
    TooManyStreams {
        /// How many one session may hold.
        limit: usize,
    },
}

impl ApiError {
    /// `value` of `param`, which takes only `allowed`.
    pub(crate) fn not_one_of(
        param: &'static str,
        value: &str,
        allowed: &'static [&'static str],
    ) -> Self {
        Self::NotOneOf {
            param,
            value: value.chars().take(64).collect(),
            allowed,
        }
    }

    /// A query parameter or body field named `name` that the endpoint does not take; the
    /// name is cut to 64 characters, as the client may have sent any amount of it.
    pub(crate) fn unknown_parameter(name: &str, allowed: &'static [&'static str]) -> Self {
        Self::UnknownParameter {
            param: name.chars().take(64).collect(),
            allowed,
        }
    }
}

/// How an error is answered, before the request id is known.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The code, which fixes the status and title.
    pub code: ErrorCode,
    pub detail: String,
    pub param: Option<String>,
    pub allowed: Option<&'static [&'static str]>,
    pub retry_after: Option<u64>,
    pub allow: Option<&'static str>,
    /// The content codings a body may have, for an `Accept-Encoding` header (RFC 9110,
    /// 15.5.16).
    pub accept_encoding: Option<&'static str>,
    pub links: Option<std::collections::BTreeMap<&'static str, &'static str>>,
}

impl Answer {
    fn new(code: ErrorCode, detail: String) -> Self {
        Self {
            code,
            detail,
            param: None,
            allowed: None,
            retry_after: None,
            allow: None,
            accept_encoding: None,
            links: None,
        }
    }

    fn param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    pub(crate) fn into_problem(self, request_id: &str) -> Problem {
        let mut problem = self.code.problem(self.detail);
        problem.param = self.param;
        problem.allowed = self
            .allowed
            .unwrap_or_default()
            .iter()
            .map(|a| (*a).to_owned())
            .collect();
        problem.retry_after = self.retry_after;
        problem.links = self
            .links
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        request_id.clone_into(&mut problem.request_id);
        problem
    }
}

fn seconds_until(t: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    u64::try_from((t - now).num_seconds()).unwrap_or(0).max(1)
}

/// Bytes as a person reads them, with the exact count.
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    match bytes {
        b if b < 1024 * 1024 => format!("{b} bytes"),
        b => format!("{:.1} MiB ({b} bytes)", b as f64 / MIB),
    }
}

/// A wait in whole seconds for `Retry-After`, rounded up and at least 1.
fn whole_seconds(wait: std::time::Duration) -> u64 {
    wait.as_secs_f64().ceil().max(1.0) as u64
}

impl ApiError {
    /// The status, code and body for this error. Internal failures say nothing beyond
    /// "internal error"; their detail goes to the log under the request id. One table, read
    /// by kind: what the request got wrong, what the service refused, what the state answers,
    /// where the request went and how it arrived. Every variant is named here, with no
    /// wildcard, so a new one does not compile until it has its place in the table; every
    /// answer carries an [`ErrorCode`], declared once with its status and title.
    pub(crate) fn answer(&self, now: DateTime<Utc>) -> Answer {
        match self {
            // What the request says: its parameters, body and key.
            ApiError::InvalidParameter(e) | ApiError::Service(ServiceError::InvalidInput(e)) => {
                Answer::new(
                    ErrorCode::InvalidParameter,
                    format!("`{}` {}", e.field, e.reason),
                )
                .param(e.field)
            }
            ApiError::UnknownParameter { param, allowed } => {
                let mut a = Answer::new(
                    ErrorCode::UnknownParameter,
                    if allowed.is_empty() {
                        format!("`{param}` is not a parameter of this endpoint, which takes none")
                    } else {
                        format!(
                            "`{param}` is not a parameter of this endpoint; it takes: {}",
                            allowed.join(", ")
                        )
                    },
                )
                .param(param.clone());
                a.allowed = (!allowed.is_empty()).then_some(*allowed);
                a
            }
            ApiError::NotOneOf {
                param,
                value,
                allowed,
            } => {
                let mut a = Answer::new(
                    ErrorCode::InvalidParameter,
                    format!(
                        "`{param}` takes any of: {}; `{value}` is not one",
                        allowed.join(", ")
                    ),
                )
                .param(*param);
                a.allowed = Some(*allowed);
                a
            }
            ApiError::InvalidBody(why) => Answer::new(ErrorCode::InvalidBody, why.clone()),
            ApiError::MissingApiKey => Answer::new(
                ErrorCode::MissingApiKey,
                "send your key in the X-API-Key header (or Authorization: Bearer <key>)".into(),
            ),
            ApiError::MalformedApiKey(e) => Answer::new(
                ErrorCode::InvalidApiKey,
                format!("the API key {}", e.reason),
            ),
            ApiError::MissingAdminToken => Answer::new(
                ErrorCode::MissingAdminToken,
                "send the admin token as Authorization: Bearer <token>; the server wrote it to \
                 admin.token in its data folder when it made it (API keys do not open the admin \
                 API)"
                    .into(),
            ),
            ApiError::InvalidAdminToken => Answer::new(
                ErrorCode::InvalidAdminToken,
                "this is not the server's admin token (API keys do not open the admin API); \
                 send the token from admin.token in the server's data folder"
                    .into(),
            ),
            // What the service refused the key (its validity, billing, plan, quota and rate),
            // the budget of requests without one, and the places of MCP sessions and uploads.
            ApiError::Service(ServiceError::InvalidKey) => Answer::new(
ErrorCode::InvalidApiKey,
                "the API key is not valid: it was never issued or has been revoked".into(),
            ),
            ApiError::Service(ServiceError::BillingInactive(status)) => Answer::new(
ErrorCode::BillingInactive,
                format!(
                    "billing for this key is {}; settle it to use the API again",
                    match status {
                        BillingStatus::Active => "active",
                        BillingStatus::PastDue => "past due",
                        BillingStatus::Canceled => "canceled",
                    }
                ),
            ),
            ApiError::Service(ServiceError::PlanUpgradeRequired { required, current }) => {
                Answer::new(
ErrorCode::PlanUpgradeRequired,
                    format!("this call needs the {required} plan or higher; your key is on the {current} plan"),
                )
            }
            ApiError::Service(ServiceError::QuotaExceeded { limit, resets_at }) => {
                let mut a = Answer::new(
ErrorCode::QuotaExceeded,
                    format!(
                        "the monthly quota of {limit} calls is used up; it resets at {}",
                        resets_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ),
                );
                a.retry_after = Some(seconds_until(*resets_at, now));
                a
            }
            ApiError::Service(ServiceError::RateLimited {
                retry_after,
                per_second,
                ..
            }) => {
                let mut a = Answer::new(
ErrorCode::RateLimited,
                    format!(
                        "this key sends more than its plan's {per_second} requests a second; slow down and retry after the Retry-After seconds"
                    ),
                );
                a.retry_after = Some(whole_seconds(*retry_after));
                a
            }
            ApiError::Service(ServiceError::TestPingsLimited {
                retry_after,
                per_minute,
            }) => {
                let mut a = Answer::new(
ErrorCode::RateLimited,
                    format!(
                        "a subscription takes at most {per_minute} test pings a minute; retry after the Retry-After seconds"
                    ),
                );
                a.retry_after = Some(whole_seconds(*retry_after));
                a
            }
            ApiError::UnauthenticatedRateLimited { retry_after, limit } => {
                let mut a = Answer::new(
ErrorCode::RateLimited,
                    format!(
                        "this address sends more than {} requests a second without a valid API key; send your key, or retry after the Retry-After seconds",
                        limit.per_second
                    ),
                );
                a.retry_after = Some(whole_seconds(*retry_after));
                a
            }
            ApiError::TooManySessions {
                limit,
                per_key,
                retry_after,
            } => {
                let mut a = Answer::new(
ErrorCode::TooManySessions,
                    format!(
                        "{} {limit} open MCP sessions; close one you no longer use (DELETE /mcp with its Mcp-Session-Id) or wait until an idle one expires",
                        if *per_key { "this key already has" } else { "the server already holds" },
                    ),
                );
                a.retry_after = Some(whole_seconds(*retry_after));
                a
            }
            ApiError::TooManyStreams { limit } => {
                let mut a = Answer::new(
ErrorCode::TooManyStreams,
                    format!(
                        "this session already holds {limit} open event streams (GET /mcp streams and answers still being sent); close one you no longer read before opening another"
                    ),
                );
                // A request's stream ends as soon as its answer is sent: a second later there
                // is usually room, unless the client holds its streams open.
                a.retry_after = Some(1);
                a
            }
            // 429 rather than 503: the server is well, and the uploads holding every place
            // are the operator's own, so it is theirs to pace; a 5xx would page whoever
            // watches the server's errors.
            ApiError::TooManyUploads { limit, retry_after } => {
                let mut a = Answer::new(
ErrorCode::TooManyUploads,
                    format!(
                        "{limit} bulk uploads are under way, the most this server reads at once; \
                         retry after the Retry-After seconds, once one has finished, or send \
                         the records in fewer uploads"
                    ),
                );
                a.retry_after = Some(whole_seconds(*retry_after));
                a
            }
            // What the state answers: nothing there, a conflict, what the store cannot do, or
            // a fault of ours.
            ApiError::Service(ServiceError::NotFound { resource }) => Answer::new(
ErrorCode::NotFound,
                format!("no {resource} with that id"),
            ),
            // 409 rather than the IETF draft's 422: the request itself is valid, and it is the
            // state (the key bound to another request) it conflicts with.
            ApiError::Service(ServiceError::IdempotencyKeyReused { key, webhook }) => Answer::new(
ErrorCode::IdempotencyKeyReused,
                format!(
                    "Idempotency-Key `{key}` was first sent with different fields, and registered webhook {webhook}; send a new key for a new request"
                ),
            ),
            ApiError::Service(ServiceError::WebhookDisabled { webhook, reason }) => Answer::new(
ErrorCode::WebhookDisabled,
                format!(
                    "webhook {webhook} is disabled ({reason}), so nothing is sent to it; once its receiver works, enable it with PATCH /api/v1/webhooks/{webhook} and {{\"status\": \"active\"}}"
                ),
            ),
            ApiError::Service(ServiceError::LimitReached(why)) => Answer::new(
ErrorCode::WebhookLimitReached,
                why.clone(),
            ),
            ApiError::Service(ServiceError::CompanyHasJobs {
                company,
                active_jobs,
            }) => Answer::new(
ErrorCode::CompanyHasJobs,
                format!(
                    "company {company} still has {active_jobs} active job{}; delete or close {} first, then delete the company",
                    if *active_jobs == 1 { "" } else { "s" },
                    if *active_jobs == 1 { "it" } else { "them" },
                ),
            ),
            ApiError::Service(ServiceError::CursorExpired {
                retention_days,
                ahead,
            }) => {
                let why = match ahead {
                    false => format!(
                        "the change feed keeps events for {retention_days} days and this cursor \
                         is older, so events after it are gone"
                    ),
                    true => "this cursor is after the change feed's newest event: the data was \
                             restored from an earlier backup, or the cursor is another \
                             deployment's, so following it would miss events"
                        .to_owned(),
                };
                let mut a = Answer::new(
ErrorCode::CursorExpired,
                    format!(
                        "{why}; start again: take a new cursor with GET \
                         /api/v1/changes?after=now, fetch the current listings with GET \
                         /api/v1/jobs (with the same filters), then follow the feed from that \
                         cursor"
                    ),
                )
                .param("after");
                a.links = Some(
                    [
                        ("search", "/api/v1/jobs"),
                        ("changes_from_now", "/api/v1/changes?after=now"),
                    ]
                    .into(),
                );
                a
            }
            // Not a failure of ours but the deployment's limit, so the answer says what to
            // do instead; 501 as the server does not support what was asked.
            ApiError::Service(ServiceError::Unsupported {
                operation,
                store,
                advice,
            }) => Answer::new(
ErrorCode::Unsupported,
                format!("{operation} is not supported by {store}: {advice}"),
            ),
            // Refused, not queued: the client learns at once that its backup did not start,
            // and which one is under way.
            ApiError::Service(ServiceError::BackupInProgress { to, since }) => Answer::new(
ErrorCode::BackupInProgress,
                format!(
                    "a backup into {} is under way since {}, and one runs at a time; try again \
                     once it has answered",
                    to.display(),
                    since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ),
            ),
            // 507 (RFC 4918): the request is fine, the disk it names is too full for it.
            ApiError::Service(ServiceError::InsufficientStorage {
                path,
                needed,
                available,
            }) => Answer::new(
ErrorCode::InsufficientStorage,
                format!(
                    "{} has {} free and the backup needs {} (a copy of the store, and room \
                     left over); nothing was written: free space there, or back up onto \
                     another disk",
                    path.display(),
                    size(*available),
                    size(*needed)
                ),
            ),
            ApiError::Service(ServiceError::Store(_)) => internal(),
            // Where the request went: a path or method the API does not have.
            ApiError::NoRoute { under_api: false } => Answer::new(
ErrorCode::NotFound,
                "no such path; the API lives under /api/v1 (see /api/v1/openapi.json)".into(),
            ),
            ApiError::NoRoute { under_api: true } => Answer::new(
ErrorCode::NotFound,
                format!(
                    "no endpoint at this path; paths are lower case and have no trailing slash, and they are: {} (see /api/v1/openapi.json)",
                    super::endpoints::ENDPOINTS.paths()
                ),
            ),
            ApiError::UnknownSession => Answer::new(
ErrorCode::NotFound,
                "no open MCP session with this Mcp-Session-Id for this key: it was closed, or \
                 expired after its idle timeout; initialize a new session"
                    .into(),
            ),
            ApiError::NoAdminRoute => Answer::new(
ErrorCode::NotFound,
                format!(
                    "no admin endpoint at this path; they are: {} (see /admin/v1/openapi.json)",
                    super::admin::ADMIN_ENDPOINTS.paths()
                ),
            ),
            ApiError::MethodNotAllowed { allow } => {
                let mut a = Answer::new(
ErrorCode::MethodNotAllowed,
                    format!("this path takes {allow}"),
                );
                a.allow = Some(allow);
                a
            }
            // How the request arrived: its size, its timing and its encoding.
            ApiError::BodyRead(why) => Answer::new(
ErrorCode::InvalidBody,
                format!("the body could not be read: {why}"),
            ),
            ApiError::BodyTimeout { after } => Answer::new(
ErrorCode::BodyTimeout,
                format!(
                    "the body did not arrive within {} s of the headers; send the whole body at once",
                    after.as_secs_f64()
                ),
            ),
            ApiError::BodyTooLarge { limit } => Answer::new(
ErrorCode::BodyTooLarge,
                format!("the body must be at most {limit} bytes"),
            ),
            ApiError::HeadersTooLarge { size, limit } => Answer::new(
ErrorCode::HeadersTooLarge,
                format!(
                    "the request line and headers come to {size} bytes; at most {limit} are accepted, so send fewer or shorter headers"
                ),
            ),
            ApiError::UriTooLong { size, limit } => Answer::new(
ErrorCode::UriTooLong,
                format!(
                    "the request line (method and URL) comes to {size} bytes; at most {limit} are accepted for it and the headers together, so shorten the query string (q and company take at most 500 characters each)"
                ),
            ),
            ApiError::UnsupportedMediaType { expected } => Answer::new(
ErrorCode::UnsupportedMediaType,
                format!("send the body with Content-Type: {expected}"),
            ),
            ApiError::UnsupportedContentEncoding { coding } => {
                let mut a = Answer::new(
ErrorCode::UnsupportedContentEncoding,
                    format!(
                        "the body was sent with Content-Encoding: {coding}, which this API does not read; send it uncompressed, without a Content-Encoding header"
                    ),
                );
                a.accept_encoding = Some("identity");
                a
            }
            ApiError::NotAcceptable => Answer::new(
ErrorCode::NotAcceptable,
                "Accept-Encoding refuses identity and accepts none of zstd, br and gzip, the \
                 content codings this API sends; accept one of them or identity"
                    .into(),
            ),
        }
    }
}

/// The answer to a failure of ours: it says nothing more.
fn internal() -> Answer {
    Answer::new(
        ErrorCode::Internal,
        "internal error; quote the request_id if you contact support".into(),
    )
}

#[cfg(test)]
mod tests {
    use http::StatusCode;

    use super::*;
    use crate::domain::CompanyId;

    #[test]
    fn a_company_with_jobs_is_a_conflict_that_says_what_to_do() {
        let company = CompanyId(uuid::Uuid::nil());
        let e = ApiError::Service(ServiceError::CompanyHasJobs {
            company,
            active_jobs: 3,
        });
        let answer = e.answer(Utc::now());
        assert_eq!(answer.code.status(), StatusCode::CONFLICT);
        assert_eq!(answer.code.as_str(), "company_has_jobs");
        assert_eq!(
            answer.detail,
            format!(
                "company {company} still has 3 active jobs; delete or close them first, then delete the company"
            )
        );
    }

    #[test]
    fn what_the_store_cannot_do_is_not_an_internal_error_and_says_what_to_do_instead() {
        let e = ApiError::Service(ServiceError::Unsupported {
            operation: "an online backup",
            store: "the PostgreSQL store",
            advice: "use pg_dump",
        });
        let answer = e.answer(Utc::now());
        assert_eq!(answer.code.status(), StatusCode::NOT_IMPLEMENTED);
        assert_eq!(answer.code.as_str(), "unsupported");
        assert_eq!(
            answer.detail,
            "an online backup is not supported by the PostgreSQL store: use pg_dump"
        );
    }
}
