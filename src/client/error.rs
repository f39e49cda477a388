//! What a call of the client can fail with.

use std::time::Duration;

use http::StatusCode;

use super::Quota;
use crate::wire::Problem;

/// An error answer of the API: its problem document, with what the answer's headers say
/// (the caller's quota, when to come back). It dereferences to the document.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiProblem {
    /// The HTTP status.
    pub status: StatusCode,
    /// The problem document: `code` (such as `invalid_parameter` or `rate_limited`),
    /// `detail`, the `param` at fault, the `allowed` parameters, the `request_id`.
    pub problem: Problem,
    /// The caller's quota as the answer's headers gave it; `None` when the caller was not
    /// known (a missing or invalid key).
    pub quota: Option<Quota>,
    /// How long to wait before trying again: the `Retry-After` header of a `429` or `503`.
    pub retry_after: Option<Duration>,
}

impl std::ops::Deref for ApiProblem {
    type Target = Problem;

    fn deref(&self) -> &Problem {
        &self.problem
    }
}

/// An error of a [`Client`](super::Client) call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The API answered with an error (4xx or 5xx) and its problem document.
    #[error("{} {}: {}", .0.status.as_u16(), .0.code, .0.detail)]
    Api(Box<ApiProblem>),
    /// No answer: the connection failed or timed out.
    #[error("transport: {0}")]
    Transport(#[from] reqwest::Error),
    /// An answer that is not what the API documents: a body that does not read as the
    /// expected JSON.
    #[error("unexpected answer ({status}): {source}")]
    Decode {
        /// The answer's status.
        status: StatusCode,
        /// Why it did not read.
        #[source]
        source: serde_json::Error,
    },
    /// A base URL or a link of an answer that is not a URL.
    #[error("invalid URL `{url}`: {source}")]
    Url {
        /// The text.
        url: String,
        /// Why it is not a URL.
        #[source]
        source: url::ParseError,
    },
}

impl ClientError {
    /// The problem document of an error answer, if the error is one.
    pub fn problem(&self) -> Option<&ApiProblem> {
        match self {
            Self::Api(p) => Some(p),
            _ => None,
        }
    }

    /// The API's machine code (`not_found`, `quota_exceeded`, …) of an error answer.
    pub fn code(&self) -> Option<&str> {
        self.problem().map(|p| p.code.as_str())
    }

    /// The HTTP status of an error answer.
    pub fn status(&self) -> Option<StatusCode> {
        self.problem().map(|p| p.status)
    }
}

/// The result of a [`Client`](super::Client) call.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;
