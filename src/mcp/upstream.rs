//! Where a tool's call goes: the API in this process ([`super::in_process`]) or a running
//! server over HTTP(S) through the typed client (`super::stdio`). Both answer one call of
//! the public API with its JSON, or with its problem document, so the tools above them are
//! one implementation whichever way the calls travel.

use std::future::Future;

use http::Method;
use rmcp::model::Extensions;
use serde::Serialize;
use serde_json::Value;

use crate::api::ErrorCode;
use crate::domain::Plan;
use crate::wire::Problem;
pub(crate) use crate::wire::Quota;

/// One call of the public API: a method, a path under `/api/v1`, query pairs and a JSON body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RestCall {
    /// The method.
    pub(crate) method: Method,
    /// The path, its id segment already percent-encoded, such as `/api/v1/jobs/…`.
    pub(crate) path: String,
    /// The query parameters, as REST reads them (lists joined with commas).
    pub(crate) query: Vec<(String, String)>,
    /// The JSON body of a `POST`.
    pub(crate) body: Option<Value>,
}

/// A refused or failed call (boxed where it travels: it is large beside an answer): the
/// API's problem document, with the same stable `code` REST answers (`invalid_parameter`,
/// `plan_upgrade_required`, `quota_exceeded`…), and the quota its headers gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ToolProblem {
    #[serde(flatten)]
    pub(crate) problem: Problem,
    /// The caller's quota, when the key is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) quota: Option<Quota>,
}

impl ToolProblem {
    /// A problem found before any call was made: an argument of a shape no call can carry.
    pub(crate) fn invalid_argument(param: &str, detail: impl Into<String>) -> Box<Self> {
        let mut problem =
            ErrorCode::InvalidParameter.problem(format!("`{param}` {}", detail.into()));
        problem.param = Some(param.into());
        Box::new(Self {
            problem,
            quota: None,
        })
    }

    /// The API could not be reached or answered what it does not document.
    pub(crate) fn unavailable(detail: impl Into<String>) -> Box<Self> {
        Box::new(Self {
            problem: Problem::new("upstream_unavailable", 503, "Upstream unavailable", detail),
            quota: None,
        })
    }
}

/// Sends calls of the public API on behalf of a tool.
pub(crate) trait Upstream: Clone + Send + Sync + 'static {
    /// Answers `call` for the client of the MCP request whose extensions are `request`
    /// (the in-process API reads the caller's key from its HTTP head; a client already has
    /// its key). `Value::Null` stands for an answer without a body (`204`).
    fn call(
        &self,
        request: &Extensions,
        call: RestCall,
    ) -> impl Future<Output = Result<Value, Box<ToolProblem>>> + Send;

    /// The plan of the key of the MCP request whose extensions are `request`, so that a
    /// listing shows only the tools it may call; `None` when it cannot be learnt.
    fn plan(&self, request: &Extensions) -> impl Future<Output = Option<Plan>> + Send;
}
