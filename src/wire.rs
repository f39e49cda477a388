//! What a caller of the HTTP API reads back from its answers: the quota headers and the
//! fields of a problem document. Shared by the typed client and the MCP frontend, which both
//! turn the API's answers into their own.

use chrono::{DateTime, Utc};
use http::HeaderMap;
use serde::{Deserialize, Serialize};

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
    pub(crate) fn of(headers: &HeaderMap) -> Option<Self> {
        let number = |name: &str| -> Option<u64> { headers.get(name)?.to_str().ok()?.parse().ok() };
        Some(Self {
            limit: number("x-ratelimit-limit")?,
            remaining: number("x-ratelimit-remaining")?,
            reset: DateTime::from_timestamp(i64::try_from(number("x-ratelimit-reset")?).ok()?, 0)?,
        })
    }
}

/// The fields of a problem document that a caller acts on.
#[derive(Deserialize)]
pub(crate) struct ProblemFields {
    pub(crate) code: String,
    #[serde(default)]
    pub(crate) detail: String,
    #[serde(default)]
    pub(crate) param: Option<String>,
    #[serde(default)]
    pub(crate) allowed: Vec<String>,
    #[serde(default)]
    pub(crate) retry_after: Option<u64>,
    #[serde(default)]
    pub(crate) request_id: Option<String>,
}
