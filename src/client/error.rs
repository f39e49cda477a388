//! What a call of the client can fail with.

use std::time::Duration;

use http::StatusCode;

use super::Quota;

/// An error answer of the API: its RFC 9457 problem document, with the headers that say when
/// to come back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiProblem {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable machine code, such as `invalid_parameter` or `rate_limited` (the `code`
    /// enumeration of the OpenAPI document's `Problem`).
    pub code: String,
    /// What happened, in words.
    pub detail: String,
    /// The parameter, path id, body field or header at fault, when there is one.
    pub param: Option<String>,
    /// The parameters the endpoint takes, on `unknown_parameter`.
    pub allowed: Vec<String>,
    /// The request's id (`X-Request-Id`), which finds it in the server's logs.
    pub request_id: Option<String>,
    /// The caller's quota as the answer's headers gave it; `None` when the caller was not
    /// known (a missing or invalid key).
    pub quota: Option<Quota>,
    /// How long to wait before trying again: the `Retry-After` header of a `429` or `503`.
    pub retry_after: Option<Duration>,
}

/// An error of a [`Client`](super::Client) call.
#[derive(Debug, thiserror::Error)]
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
