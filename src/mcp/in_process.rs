//! The upstream of `/mcp`: the [`Api`] in this process. A tool's call is handed to the API
//! as the REST request it stands for, with the key of the MCP request that carries it, so
//! it takes the one path every REST call takes (key, plan, validation, search, metering,
//! the one error table) and its answer is REST's answer, byte for byte. Its rate-limit token
//! is the one the MCP request took at admission: one request, one token.

use bytes::Bytes;
use http::header::{HeaderName, AUTHORIZATION, CONTENT_TYPE};
use http::{Request, Response};
use rmcp::model::Extensions;
use serde_json::Value;

use super::upstream::{Quota, RestCall, ToolProblem, Upstream};
use crate::api::{Api, RateTokenTaken};
use crate::domain::Plan;
use crate::wire::Problem;

/// In an admitted MCP request's extensions: the plan of its key when it was admitted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyPlan(pub(crate) Plan);

/// Calls the API in this process for the client whose MCP request is being served.
#[derive(Clone, Debug)]
pub(crate) struct ApiUpstream {
    api: Api,
}

impl ApiUpstream {
    /// Calls go to `api`.
    pub(crate) fn new(api: Api) -> Self {
        Self { api }
    }
}

static X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");

impl Upstream for ApiUpstream {
    async fn call(&self, request: &Extensions, call: RestCall) -> Result<Value, Box<ToolProblem>> {
        let mut uri = call.path;
        if !call.query.is_empty() {
            uri.push('?');
            uri.push_str(&serde_urlencoded::to_string(&call.query).unwrap_or_default());
        }
        let mut builder = Request::builder().method(call.method).uri(uri);
        // The key exactly as the MCP request sent it: the API reads it as it reads any.
        if let Some(parts) = request.get::<http::request::Parts>() {
            for name in [&X_API_KEY, &AUTHORIZATION] {
                for value in parts.headers.get_all(name) {
                    builder = builder.header(name, value);
                }
            }
            if let Some(taken) = parts.extensions.get::<RateTokenTaken>() {
                builder = builder.extension(*taken);
            }
        }
        let body = match call.body {
            Some(body) => {
                builder = builder.header(CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(&body).unwrap_or_default())
            }
            None => Bytes::new(),
        };
        let request = builder.body(body).map_err(|e| {
            ToolProblem::invalid_argument("arguments", format!("do not make a request: {e}"))
        })?;
        answer(self.api.handle(request).await)
    }

    async fn plan(&self, request: &Extensions) -> Option<Plan> {
        let parts = request.get::<http::request::Parts>()?;
        parts.extensions.get::<KeyPlan>().map(|plan| plan.0)
    }
}

/// The API's answer as a tool's: the JSON of a success (`null` without a body), or the
/// problem document of a refusal with the quota its headers give.
fn answer(response: Response<Bytes>) -> Result<Value, Box<ToolProblem>> {
    let status = response.status();
    let body = response.body();
    if status.is_success() {
        if body.is_empty() {
            return Ok(Value::Null);
        }
        return serde_json::from_slice(body).map_err(|e| {
            ToolProblem::unavailable(format!(
                "the API answered {status} with a body that is not JSON: {e}"
            ))
        });
    }
    let problem: Problem = serde_json::from_slice(body).map_err(|e| {
        ToolProblem::unavailable(format!(
            "the API answered {status} without a problem document: {e}"
        ))
    })?;
    Err(Box::new(ToolProblem {
        problem,
        quota: Quota::of(response.headers()),
    }))
}
