//! What travels between the HTTP API and its callers beside the resources: the problem
//! document of every error, which the API writes and the typed client and the MCP frontend
//! read back, and the quota an answer's headers state.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// An RFC 9457 problem details object: the body of every error answer of the API, and what
/// the typed client and the MCP tools read back from one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Problem {
    /// URI naming the problem type, e.g. `https://job-listings.dev/errors/invalid_parameter`.
    #[serde(rename = "type", default)]
    #[schemars(extend("format" = "uri-reference"))]
    pub kind: String,
    /// Short, fixed summary of the problem type.
    #[serde(default)]
    pub title: String,
    /// HTTP status code.
    #[serde(default)]
    pub status: u16,
    /// What happened and what to do about it.
    #[serde(default)]
    pub detail: String,
    /// Stable machine-readable code (one of the API's error table).
    pub code: String,
    /// The offending parameter or body field, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// With code `unknown_parameter`: the query parameters (or, for a body field it does not
    /// take, the body fields) the endpoint takes; absent for an endpoint that takes none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<String>,
    /// Seconds to wait before retrying, when applicable (as in the `Retry-After` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub retry_after: Option<u64>,
    /// Where to start again, when the request cannot go on from where it stands: for
    /// `cursor_expired`, `search` (`GET /api/v1/jobs`) and `changes_from_now`
    /// (`GET /api/v1/changes?after=now`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub links: BTreeMap<String, String>,
    /// Identifier of the request (same as the `X-Request-Id` header), to find it in the logs.
    #[serde(default)]
    pub request_id: String,
}

impl Problem {
    /// A problem of `code` with its status and title, saying `detail`; no request id yet.
    pub fn new(code: &str, status: u16, title: &str, detail: impl Into<String>) -> Self {
        Self {
            kind: format!("https://job-listings.dev/errors/{code}"),
            title: title.to_owned(),
            status,
            detail: detail.into(),
            code: code.to_owned(),
            param: None,
            allowed: Vec::new(),
            retry_after: None,
            links: BTreeMap::new(),
            request_id: String::new(),
        }
    }
}

/// The caller's monthly quota, as an answer's `X-RateLimit-*` headers state it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Quota {
    /// Calls a period (`X-RateLimit-Limit`).
    pub limit: u64,
    /// Calls left in this period (`X-RateLimit-Remaining`).
    pub remaining: u64,
    /// When the period ends (`X-RateLimit-Reset`, Unix seconds).
    pub reset: DateTime<Utc>,
}

impl Quota {
    /// The quota an answer's headers state; `None` when they do not (a caller not known).
    #[cfg(any(feature = "client", feature = "mcp"))]
    pub(crate) fn of(headers: &http::HeaderMap) -> Option<Self> {
        let number = |name: &str| -> Option<u64> { headers.get(name)?.to_str().ok()?.parse().ok() };
        Some(Self {
            limit: number("x-ratelimit-limit")?,
            remaining: number("x-ratelimit-remaining")?,
            reset: DateTime::from_timestamp(i64::try_from(number("x-ratelimit-reset")?).ok()?, 0)?,
        })
    }
}
