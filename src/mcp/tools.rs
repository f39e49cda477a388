//! The MCP server: the tools of [`super::schemas`], each a call of the public API through an
//! [`Upstream`]. A tool's arguments become the endpoint's query parameters or body unchanged,
//! so the API's own validation reads them (an unknown argument is `unknown_parameter`, a bad
//! value `invalid_parameter`, naming it), and its answer is the tool's structured result as
//! REST sends it, with a short text rendering a model reads well.

use http::Method;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::render;
use super::schemas::{self, ToolSpec};
use super::upstream::{RestCall, ToolProblem, Upstream};

/// What the server tells a model when it connects.
const INSTRUCTIONS: &str = "Job listings for AI agents: search active jobs (search_jobs), read \
one (get_job), browse hiring companies (list_companies, get_company), stay in sync with what \
changes (follow_changes), check the monthly quota (get_usage) and, on the Agent Pro plan or higher, manage webhooks that announce new jobs \
(create_webhook, list_webhooks, delete_webhook). Ids come from earlier results. A refused call \
is a tool error whose structured content has a stable `code` (invalid_parameter, \
unknown_parameter, not_found, plan_upgrade_required, quota_exceeded, rate_limited…), a \
`detail`, and for 429s `retry_after` seconds and the quota's `reset` time.";

/// The tools over one [`Upstream`]: the in-process API for `/mcp`, a client for stdio.
#[derive(Clone, Debug)]
pub(crate) struct JobTools<U> {
    upstream: U,
}

impl<U: Upstream> JobTools<U> {
    /// The tools, calling through `upstream`.
    pub(crate) fn new(upstream: U) -> Self {
        Self { upstream }
    }

    /// Runs one tool: its arguments as a call, the call through the upstream, and the answer
    /// (or the refusal) as the tool's result.
    async fn run(
        &self,
        spec: &ToolSpec,
        arguments: JsonObject,
        request: &rmcp::model::Extensions,
    ) -> CallToolResult {
        let id = arguments
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let answer = match rest_call(spec, arguments) {
            Ok(call) => self.upstream.call(request, call).await,
            Err(problem) => Err(problem),
        };
        match answer {
            Ok(Value::Null) => {
                // An answer without a body: the deletion REST confirms with 204.
                let value = json!({ "id": id, "deleted": true });
                success(render::render(spec.name, &value), value)
            }
            Ok(value) => success(render::render(spec.name, &value), value),
            Err(problem) => refusal(spec.name, &problem),
        }
    }
}

fn success(text: String, value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// A refusal as a tool error: the problem in words, and as structured content for a program.
fn refusal(tool: &str, refused: &ToolProblem) -> CallToolResult {
    let problem = &refused.problem;
    let mut text = format!("{tool} failed: {} ({})", problem.detail, problem.code);
    if let Some(seconds) = problem.retry_after {
        text.push_str(&format!("; retry after {seconds} s"));
    }
    if let Some(quota) = refused.quota.filter(|_| problem.status == 429) {
        text.push_str(&format!(
            "; the monthly quota resets at {}",
            quota
                .reset
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(refused).ok();
    result
}

/// A tool's arguments as the call of its endpoint: `id` into the path, the rest into the
/// query (`GET`, `DELETE`) or the JSON body (`POST`). Values go as REST reads them: strings
/// as they are, numbers and booleans as JSON writes them, lists joined with commas; `null`
/// is an argument left out. What the endpoint does not take is passed on for it to refuse.
pub(crate) fn rest_call(
    spec: &ToolSpec,
    mut arguments: JsonObject,
) -> Result<RestCall, Box<ToolProblem>> {
    let mut path = spec.path.to_owned();
    if spec.takes_id() {
        let id = match arguments.remove("id") {
            Some(Value::String(id)) if !id.is_empty() => id,
            Some(Value::Null) | None => {
                return Err(ToolProblem::invalid_argument(
                    "id",
                    "is required: the id from an earlier result",
                ))
            }
            Some(_) => return Err(ToolProblem::invalid_argument("id", "must be a string")),
        };
        let encoded = utf8_percent_encode(&id, NON_ALPHANUMERIC).to_string();
        path = path.replace("{id}", &encoded);
    }
    if spec.method == Method::POST {
        return Ok(RestCall {
            method: spec.method.clone(),
            path,
            query: Vec::new(),
            body: Some(Value::Object(arguments)),
        });
    }
    let mut query = Vec::with_capacity(arguments.len());
    for (name, value) in arguments {
        if let Some(text) = query_value(&name, value)? {
            query.push((name, text));
        }
    }
    // REST's own order, whatever order the arguments came in; what it does not take last.
    query.sort_by_key(|(name, _)| {
        spec.params
            .iter()
            .position(|p| p == name)
            .unwrap_or(usize::MAX)
    });
    Ok(RestCall {
        method: spec.method.clone(),
        path,
        query,
        body: None,
    })
}

/// One argument as a query value; `None` for `null`.
fn query_value(name: &str, value: Value) -> Result<Option<String>, Box<ToolProblem>> {
    Ok(Some(match value {
        Value::Null => return Ok(None),
        Value::String(s) => s,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => {
            let mut joined = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => joined.push(s),
                    Value::Number(n) => joined.push(n.to_string()),
                    Value::Bool(b) => joined.push(b.to_string()),
                    _ => {
                        return Err(ToolProblem::invalid_argument(
                            name,
                            "must be a list of strings",
                        ))
                    }
                }
            }
            joined.join(",")
        }
        Value::Object(_) => {
            return Err(ToolProblem::invalid_argument(
                name,
                "must be a string, number, boolean or list, not an object",
            ))
        }
    }))
}

impl<U: Upstream> ServerHandler for JobTools<U> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "job-listings",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Only what the key's plan may call: a tool a model is shown but refused every time
        // costs it a call to learn so. Called anyway, such a tool answers REST's refusal.
        let plan = self.upstream.plan(&context.extensions).await;
        Ok(ListToolsResult::with_all_items(schemas::tools_for(plan)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // An unknown tool is a protocol error (the call cannot be routed); everything a tool
        // refuses is a tool error the model can read.
        let Some(spec) = schemas::spec(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named `{}`; the tools are: {}",
                    request.name,
                    schemas::TOOLS
                        .iter()
                        .map(|t| t.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        Ok(self.run(spec, arguments, &context.extensions).await.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> JsonObject {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn search_arguments_become_the_query_rest_reads() {
        let spec = schemas::spec("search_jobs").expect("search_jobs");
        let call = rest_call(
            spec,
            args(
                json!({"q": "rust", "domain": ["ai", "data"], "remote_only": true,
                "min_confidence": 0.5, "page": 2, "company": null}),
            ),
        )
        .expect("a call");
        assert_eq!(call.method, Method::GET);
        assert_eq!(call.path, "/api/v1/jobs");
        assert_eq!(
            call.query,
            [
                ("domain", "ai,data"),
                ("remote_only", "true"),
                ("q", "rust"),
                ("min_confidence", "0.5"),
                ("page", "2"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn an_id_goes_into_the_path_encoded_and_is_required() {
        let spec = schemas::spec("get_job").expect("get_job");
        let call = rest_call(spec, args(json!({"id": "a/b?c"}))).expect("a call");
        assert_eq!(call.path, "/api/v1/jobs/a%2Fb%3Fc");
        let missing = rest_call(spec, JsonObject::new()).expect_err("no id");
        assert_eq!(
            (
                missing.problem.code.as_str(),
                missing.problem.param.as_deref()
            ),
            ("invalid_parameter", Some("id"))
        );
    }

    #[test]
    fn an_object_argument_is_refused_naming_it() {
        let spec = schemas::spec("search_jobs").expect("search_jobs");
        let refused = rest_call(spec, args(json!({"q": {"x": 1}}))).expect_err("refused");
        assert_eq!(refused.problem.param.as_deref(), Some("q"));
    }

    #[test]
    fn create_webhook_sends_its_arguments_as_the_body() {
        let spec = schemas::spec("create_webhook").expect("create_webhook");
        let body = json!({"callback_url": "https://example.com/hook", "remote_only": true});
        let call = rest_call(spec, args(body.clone())).expect("a call");
        assert_eq!((call.method, call.body), (Method::POST, Some(body)));
    }
}
