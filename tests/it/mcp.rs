//! The MCP endpoint (`job_listings::mcp`, feature `mcp`) against the real server on loopback:
//! driven through the official SDK's client (`rmcp`) over streamable HTTP, every tool valid
//! and invalid, its structured results compared with the REST answers to the same calls;
//! metering, the 401 before any session, the plan gate and the tools each plan is shown,
//! quota exhaustion as a tool error, and over plain HTTP the key's rate limit on every
//! message, CORS preflights and headers, batches and unreadable bodies as JSON-RPC errors,
//! the session bounds, ownership and idle expiry, the bound on a session's event streams and
//! their end when the key is revoked, the body limit, and a sessionless (protocol
//! 2026-07-28) call.

use std::time::Duration;

use job_listings::api::{Api, ApiConfig, CorsOrigin};
use job_listings::demo::Dataset;
use job_listings::domain::{BillingStatus, Plan};
use job_listings::mcp::{Mcp, McpConfig, WithMcp};
use job_listings::service::{RateLimit, ServiceConfig};
use reqwest::StatusCode;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::support::config::{developer_quota, rate_limited};
use crate::support::data::{demo_dataset, known};
use crate::support::server::{server_config, RunningServer};
use crate::support::TestApp;

/// An app seeded as the API suite's, served with MCP beside REST.
struct McpApp {
    app: TestApp,
    /// The endpoint the server serves (a clone: it counts the sessions).
    mcp: Mcp,
    server: RunningServer,
    http: reqwest::Client,
}

async fn spawn(config: ServiceConfig, mcp: McpConfig) -> McpApp {
    spawn_with(config, ApiConfig::default(), mcp).await
}

/// [`spawn`] with the library's settings.
async fn spawn_default() -> McpApp {
    spawn(ServiceConfig::default(), McpConfig::default()).await
}

async fn spawn_with(config: ServiceConfig, api_config: ApiConfig, mcp: McpConfig) -> McpApp {
    let known = known();
    let app = TestApp::builder()
        .config(config)
        .api_config(api_config)
        .seed(demo_dataset())
        .seed(Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .build()
        .await;
    let api: Api = app.api.clone();
    let mcp = Mcp::new(api.clone(), mcp);
    let server = RunningServer::start(WithMcp::new(api, mcp.clone()), server_config()).await;
    McpApp {
        app,
        mcp,
        server,
        http: crate::support::wire::client(),
    }
}

impl McpApp {
    fn url(&self) -> String {
        format!("{}/mcp", self.server.base)
    }

    /// An SDK client of `/mcp` with `key` as a bearer token, initialized.
    async fn connect(&self, key: &str) -> RunningService<RoleClient, ()> {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(self.url()).auth_header(key),
        );
        ().serve(transport).await.expect("initialized")
    }

    /// `GET /api/v1{path}` with `key`: status and JSON body.
    async fn rest(&self, key: &str, path_and_query: &str) -> (StatusCode, Value) {
        let answer = self
            .http
            .get(format!("{}/api/v1{path_and_query}", self.server.base))
            .header("x-api-key", key)
            .send()
            .await
            .expect("an answer");
        let status = answer.status();
        (status, answer.json().await.unwrap_or(Value::Null))
    }

    /// A raw JSON-RPC POST to `/mcp`: status, headers and the body's JSON-RPC message.
    async fn post(
        &self,
        key: Option<&str>,
        session: Option<&str>,
        message: Value,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut request = self
            .http
            .post(self.url())
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        let answer = request.send().await.expect("an answer");
        let (status, headers) = (answer.status(), answer.headers().clone());
        let text = answer.text().await.expect("a body");
        (status, headers, message_of(&text))
    }

    /// Opens a session with `key` over plain HTTP: its id, or the refusal.
    async fn open_session(&self, key: &str) -> Result<String, (StatusCode, Value)> {
        let (status, headers, body) = self.post(Some(key), None, initialize()).await;
        match headers.get("mcp-session-id") {
            Some(id) if status.is_success() => Ok(id.to_str().expect("ascii").to_owned()),
            _ => Err((status, body)),
        }
    }

    /// Opens a session and completes its handshake (`notifications/initialized`), as SDK
    /// clients do before anything else.
    async fn initialized_session(&self, key: &str) -> String {
        let session = self.open_session(key).await.expect("a session");
        let (status, _, _) = self.post(Some(key), Some(&session), initialized()).await;
        assert_eq!(status, StatusCode::ACCEPTED, "the handshake completes");
        session
    }

    /// `GET /mcp`: the session's event stream, its body left unread (open) when answered.
    async fn open_stream(&self, key: &str, session: &str) -> reqwest::Response {
        self.http
            .get(self.url())
            .header("accept", "text/event-stream")
            .header("x-api-key", key)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .expect("an answer")
    }
}

/// Whether an event stream ends, its body closed by the server, within a bound far beyond any
/// machine's pace (and within the test client's own timeout, which is no end): a stream that
/// is never closed fails, never a slow one.
async fn ends(mut stream: reqwest::Response) -> bool {
    let read_to_end = async {
        loop {
            match stream.chunk().await {
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read_to_end)
        .await
        .unwrap_or(false)
}

/// The JSON of a whole answer, or of the last `data:` line of an event stream.
fn message_of(text: &str) -> Value {
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    text.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str(d.trim()).ok())
        .unwrap_or(Value::Null)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "it", "version": "1"}}})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn tools_list(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

fn search_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "search_jobs", "arguments": {"per_page": 1}}})
}

fn args(value: Value) -> JsonObject {
    value.as_object().cloned().expect("an object")
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await
        .unwrap_or_else(|e| panic!("{tool} answered no result: {e}"))
}

fn structured(result: &CallToolResult) -> &Value {
    assert_eq!(result.is_error, Some(false), "a refusal: {result:?}");
    result
        .structured_content
        .as_ref()
        .expect("structured content")
}

/// The code and the problem of a tool error.
fn refusal(result: &CallToolResult) -> (&str, &Value) {
    assert_eq!(result.is_error, Some(true), "not a refusal: {result:?}");
    let problem = result.structured_content.as_ref().expect("the problem");
    (problem["code"].as_str().expect("a code"), problem)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn every_tool_is_listed_with_input_and_output_schemas() {
    let app = spawn_default().await;
    // An Agent Pro key may call every tool, the webhook ones too.
    let client = app.connect(&app.app.keys.agent_pro.raw).await;
    // The SDK's client negotiates a protocol version with sessions: one is open, the key's.
    assert_eq!(app.mcp.open_sessions(), 1);
    let tools = client.list_all_tools().await.expect("the tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "search_jobs",
            "get_job",
            "similar_jobs",
            "list_companies",
            "get_company",
            "follow_changes",
            "get_usage",
            "create_webhook",
            "list_webhooks",
            "delete_webhook"
        ]
    );
    for tool in &tools {
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        let output = tool.output_schema.as_ref().expect("an output schema");
        assert_eq!(output["type"], "object", "{}", tool.name);
        // Short, for a model, but saying what the tool does.
        assert!(tool.description.as_ref().is_some_and(|d| d.len() > 40));
    }
    let search = &tools[0];
    for param in job_listings::api::JOB_PARAMS {
        assert!(
            search.input_schema["properties"].get(*param).is_some(),
            "search_jobs takes {param}"
        );
    }
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn read_tools_answer_what_rest_answers_for_the_same_calls() {
    let app = spawn_default().await;
    let key = app.app.keys.developer.raw.clone();
    let client = app.connect(&key).await;

    let search = call(
        &client,
        "search_jobs",
        json!({"domain": ["engineering", "ai"], "remote_only": true, "per_page": 5,
            "facets": ["seniority"]}),
    )
    .await;
    let (status, rest) = app
        .rest(
            &key,
            // In the order MCP writes the arguments: that of the parameters.
            "/jobs?domain=engineering,ai&remote_only=true&facets=seniority&per_page=5",
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(structured(&search), &rest, "search_jobs is GET /jobs");
    assert!(rest["pagination"]["total"].as_u64().unwrap() > 5);
    let first = &rest["data"][0];
    let id = first["id"].as_str().expect("an id");
    let shown = text(&search);
    assert!(
        shown.contains(id) && shown.contains(first["role"].as_str().unwrap()),
        "{shown}"
    );

    let job = call(&client, "get_job", json!({"id": id})).await;
    assert_eq!(
        structured(&job),
        &app.rest(&key, &format!("/jobs/{id}")).await.1
    );

    let companies = call(&client, "list_companies", json!({"per_page": 3, "page": 2})).await;
    assert_eq!(
        structured(&companies),
        &app.rest(&key, "/companies?page=2&per_page=3").await.1
    );
    let company_id = first["company_id"].as_str().expect("its company");
    let company = call(&client, "get_company", json!({"id": company_id})).await;
    assert_eq!(
        structured(&company),
        &app.rest(&key, &format!("/companies/{company_id}")).await.1
    );

    let usage = call(&client, "get_usage", json!({})).await;
    let (_, rest_usage) = app.rest(&key, "/usage").await;
    assert_eq!(
        structured(&usage),
        &rest_usage,
        "usage is not counted, so it stands still"
    );
    client.cancel().await.expect("closed");
}

/// `search_jobs` takes `sort`, `fields` (a list) and `highlight` as `GET /jobs` does, and its
/// text shows only the fields asked for, with why each job matched.
#[tokio::test]
async fn search_jobs_answers_best_first_with_fewer_fields_and_matches() {
    let app = spawn_default().await;
    let key = app.app.keys.developer.raw.clone();
    let client = app.connect(&key).await;
    let search = call(
        &client,
        "search_jobs",
        json!({"q": "senior engineer", "sort": "relevance", "highlight": true,
            "fields": ["role", "company_name"], "per_page": 20}),
    )
    .await;
    let (status, rest) = app
        .rest(
            &key,
            "/jobs?q=senior+engineer&sort=relevance&highlight=true&fields=role,company_name&per_page=20",
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(structured(&search), &rest);
    let first = &rest["data"][0];
    let names: std::collections::BTreeSet<&str> = first
        .as_object()
        .expect("a job")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["company_name", "id", "match", "role"].into());
    let shown = text(&search);
    assert!(
        shown.contains(first["role"].as_str().expect("a role")),
        "{shown}"
    );
    assert!(shown.contains("Matched senior, engineer"), "{shown}");
    assert!(
        !shown.contains("posted -"),
        "no placeholder for fields not asked: {shown}"
    );
    client.cancel().await.expect("closed");
}

/// `follow_changes` is `GET /changes`: a cursor from `after: "now"`, then the events after
/// it, each with its job, as REST answers them.
#[tokio::test]
async fn follow_changes_answers_the_change_feed_from_a_cursor() {
    let app = spawn_default().await;
    let key = app.app.keys.developer.raw.clone();
    let client = app.connect(&key).await;
    let start = call(&client, "follow_changes", json!({"after": "now"})).await;
    let cursor = structured(&start)["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    assert!(text(&start).contains(&cursor), "{}", text(&start));

    let job = crate::support::data::another(&known().designer);
    app.app
        .service
        .upsert_job(job.clone())
        .await
        .expect("ingested");
    let events = call(
        &client,
        "follow_changes",
        json!({"after": cursor, "domain": ["design"], "limit": 10}),
    )
    .await;
    let (status, rest) = app
        .rest(
            &key,
            &format!("/changes?after={cursor}&limit=10&domain=design"),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(structured(&events), &rest, "follow_changes is GET /changes");
    assert_eq!(rest["data"][0]["type"], "job.new");
    assert_eq!(rest["data"][0]["job_id"], job.id.to_string());
    let shown = text(&events);
    assert!(
        shown.contains("job.new") && shown.contains(&job.role),
        "{shown}"
    );
    let refused = call(&client, "follow_changes", json!({"after": "yesterday"})).await;
    assert_eq!(refusal(&refused).0, "invalid_parameter");
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn refusals_are_tool_errors_with_rest_codes() {
    let app = spawn_default().await;
    let client = app.connect(&app.app.keys.developer.raw).await;

    let too_many = call(&client, "search_jobs", json!({"per_page": 51})).await;
    let (code, problem) = refusal(&too_many);
    assert_eq!(
        (code, problem["param"].as_str()),
        ("invalid_parameter", Some("per_page"))
    );
    assert_eq!(problem["status"], 400);

    let typo = call(&client, "search_jobs", json!({"domains": ["ai"]})).await;
    let (code, problem) = refusal(&typo);
    assert_eq!(code, "unknown_parameter");
    assert!(problem["allowed"]
        .as_array()
        .is_some_and(|a| a.contains(&json!("domain"))));

    let confidence = call(&client, "search_jobs", json!({"min_confidence": 2})).await;
    assert_eq!(refusal(&confidence).0, "invalid_parameter");
    let date = call(&client, "search_jobs", json!({"posted_after": "yesterday"})).await;
    assert_eq!(refusal(&date).0, "invalid_parameter");

    let malformed = call(&client, "get_job", json!({"id": "not-a-uuid"})).await;
    assert_eq!(refusal(&malformed).1["param"], "id");
    let unknown = call(&client, "get_job", json!({"id": uuid::Uuid::new_v4()})).await;
    assert_eq!(refusal(&unknown).0, "not_found");
    let missing = call(&client, "get_company", json!({})).await;
    assert_eq!(refusal(&missing).0, "invalid_parameter");
    let no_company = call(&client, "get_company", json!({"id": uuid::Uuid::new_v4()})).await;
    assert_eq!(refusal(&no_company).0, "not_found");
    let stage = call(&client, "list_companies", json!({"per_page": 0})).await;
    assert_eq!(refusal(&stage).0, "invalid_parameter");
    let usage = call(&client, "get_usage", json!({"page": 1})).await;
    assert_eq!(refusal(&usage).0, "unknown_parameter");

    let no_tool = client
        .call_tool(CallToolRequestParams::new("search_everything"))
        .await;
    assert!(no_tool.is_err(), "an unknown tool is a protocol error");
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn each_answered_tool_call_counts_one_call_and_refusals_none() {
    let app = spawn_default().await;
    let key = app.app.keys.developer.raw.clone();
    let before = app.app.calls_used(&key).await;
    let client = app.connect(&key).await;
    let answered = 4;
    for page in 1..=answered {
        let result = call(&client, "search_jobs", json!({"page": page, "per_page": 2})).await;
        structured(&result);
    }
    let refused = call(&client, "search_jobs", json!({"per_page": 0})).await;
    refusal(&refused);
    let usage = call(&client, "get_usage", json!({})).await;
    structured(&usage);
    assert_eq!(app.app.calls_used(&key).await, before + answered);
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn webhook_tools_need_agent_pro_and_show_the_secret_once() {
    let app = spawn_default().await;
    let developer = app.connect(&app.app.keys.developer.raw).await;
    let hook = json!({"callback_url": "https://hooks.example.com/mcp", "domain_filters": ["ai"]});
    // As REST: registering is refused below Agent Pro; such a key's list is empty, and it
    // has no webhook to delete.
    let refused = call(&developer, "create_webhook", hook.clone()).await;
    let (code, problem) = refusal(&refused);
    assert_eq!(
        (code, &problem["status"]),
        ("plan_upgrade_required", &json!(403))
    );
    let listed = call(&developer, "list_webhooks", json!({})).await;
    let developer_key = app.app.keys.developer.raw.clone();
    assert_eq!(
        structured(&listed),
        &app.rest(&developer_key, "/webhooks").await.1
    );
    let none = call(
        &developer,
        "delete_webhook",
        json!({"id": uuid::Uuid::new_v4()}),
    )
    .await;
    assert_eq!(refusal(&none).0, "not_found");
    developer.cancel().await.expect("closed");

    let key = app.app.keys.agent_pro.raw.clone();
    let pro = app.connect(&key).await;
    let created = call(&pro, "create_webhook", hook).await;
    let webhook = structured(&created);
    let secret = webhook["secret"].as_str().expect("the secret, this once");
    assert!(secret.starts_with("whsec_") && text(&created).contains(secret));
    let id = webhook["id"].as_str().expect("its id").to_owned();

    let listed = call(&pro, "list_webhooks", json!({})).await;
    assert_eq!(structured(&listed), &app.rest(&key, "/webhooks").await.1);
    let hooks = structured(&listed)["data"].as_array().expect("a list");
    assert!(hooks
        .iter()
        .any(|h| h["id"] == id.as_str() && h.get("secret").is_none()));

    let bad = call(&pro, "create_webhook", json!({"callback_url": "ftp://x"})).await;
    assert_eq!(refusal(&bad).0, "invalid_parameter");
    let deleted = call(&pro, "delete_webhook", json!({"id": id})).await;
    assert_eq!(structured(&deleted), &json!({"id": id, "deleted": true}));
    let again = call(&pro, "delete_webhook", json!({"id": id})).await;
    assert_eq!(refusal(&again).0, "not_found");
    pro.cancel().await.expect("closed");
}

#[tokio::test]
async fn an_exhausted_quota_is_a_tool_error_with_its_reset_and_wait() {
    let app = spawn(developer_quota(2), McpConfig::default()).await;
    let client = app.connect(&app.app.keys.developer.raw).await;
    for _ in 0..2 {
        structured(&call(&client, "search_jobs", json!({"per_page": 1})).await);
    }
    let over = call(&client, "search_jobs", json!({"per_page": 1})).await;
    let (code, problem) = refusal(&over);
    assert_eq!((code, &problem["status"]), ("quota_exceeded", &json!(429)));
    assert!(problem["retry_after"].as_u64().is_some_and(|s| s > 0));
    assert_eq!(problem["quota"]["remaining"], 0);
    assert!(problem["quota"]["reset"].is_string());
    assert!(text(&over).contains("resets at"));
    client.cancel().await.expect("closed");
}

/// A refusal of the key's rate, as REST answers it: 429 `rate_limited` with `Retry-After`,
/// the monthly quota's headers and the burst's.
fn assert_rate_limited(status: StatusCode, headers: &reqwest::header::HeaderMap, body: &Value) {
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("rate_limited")),
        "{body}"
    );
    assert_eq!(headers["content-type"], "application/problem+json");
    let retry_after: u64 = headers["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!(retry_after >= 1);
    assert!(headers.get("x-ratelimit-remaining").is_some());
    let policy = headers["ratelimit-policy"].to_str().expect("ascii");
    assert!(
        policy.contains("\"monthly\"") && policy.contains("\"burst\""),
        "{policy}"
    );
}

/// Four tokens, then one every 100 s: whatever the machine's pace, the fifth request is over.
const FOUR_THEN_NONE: RateLimit = RateLimit {
    per_second: 0.01,
    burst: 4,
};

#[tokio::test]
async fn every_mcp_message_takes_a_token_of_the_keys_rate_as_a_rest_request_does() {
    let app = spawn(rate_limited(FOUR_THEN_NONE), McpConfig::default()).await;
    let key = app.app.issue(Plan::Developer).await;
    let raw = key.raw.as_str();
    // initialize, its notification, a ping and a tools/list: four messages, four tokens.
    let session = app.initialized_session(raw).await;
    let (status, _, _) = app.post(Some(raw), Some(&session), ping(2)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = app.post(Some(raw), Some(&session), tools_list(3)).await;
    assert_eq!(status, StatusCode::OK);

    // The fifth, whatever it is, is refused as REST refuses a request over the rate.
    for message in [ping(4), tools_list(5), initialized(), search_call(6)] {
        let (status, headers, body) = app.post(Some(raw), Some(&session), message).await;
        assert_rate_limited(status, &headers, &body);
    }
    let (status, headers, body) = app.post(Some(raw), None, initialize()).await;
    assert_rate_limited(status, &headers, &body);
    let stream = app.open_stream(raw, &session).await;
    let (status, headers) = (stream.status(), stream.headers().clone());
    let body: Value = stream.json().await.expect("a problem document");
    assert_rate_limited(status, &headers, &body);
    // One bucket for both doors: REST is over the rate too.
    let rest = app
        .http
        .get(format!("{}/api/v1/jobs", app.server.base))
        .header("x-api-key", raw)
        .send()
        .await
        .expect("an answer");
    let (status, headers) = (rest.status(), rest.headers().clone());
    assert_rate_limited(status, &headers, &rest.json().await.expect("a problem"));
    // Nothing of it is metered: no tool call was answered.
    let usage = app.app.service.key_usage(key.id).await.expect("usage");
    assert_eq!(usage.calls_used, 0);
}

#[tokio::test]
async fn a_tool_call_takes_one_token_and_counts_one_call() {
    let app = spawn(rate_limited(FOUR_THEN_NONE), McpConfig::default()).await;
    let key = app.app.issue(Plan::Developer).await;
    let raw = key.raw.as_str();
    let session = app.initialized_session(raw).await;
    // Two tokens left: two tool calls, each answered (not a second token taken by the REST
    // call it stands for), then the next message is over.
    for id in [2, 3] {
        let (status, _, body) = app.post(Some(raw), Some(&session), search_call(id)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["result"]["isError"], false, "{body}");
    }
    let (status, headers, body) = app.post(Some(raw), Some(&session), ping(4)).await;
    assert_rate_limited(status, &headers, &body);
    let usage = app.app.service.key_usage(key.id).await.expect("usage");
    assert_eq!(
        usage.calls_used, 2,
        "the answered tool calls, the refusal not"
    );
}

#[tokio::test]
async fn a_sessionless_client_is_keyed_and_metered_as_well() {
    // Protocol 2026-07-28 has no sessions: each request stands alone, with its key.
    let app = spawn_default().await;
    let key = app.app.keys.developer.raw.clone();
    let before = app.app.calls_used(&key).await;
    let call = |key: Option<String>| {
        let mut request = app
            .http
            .post(app.url())
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "search_jobs")
            .json(
                &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "search_jobs", "arguments": {"per_page": 3},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}}}),
            );
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        request.send()
    };
    let answer = call(Some(key.clone())).await.expect("an answer");
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(answer.headers().get("mcp-session-id").is_none());
    assert_eq!(
        answer.headers()["content-type"],
        "application/json",
        "one message, so plain JSON"
    );
    let message = message_of(&answer.text().await.expect("a body"));
    let (_, rest) = app.rest(&key, "/jobs?per_page=3").await;
    assert_eq!(message["result"]["structuredContent"], rest);
    assert_eq!(
        app.app.calls_used(&key).await,
        before + 2,
        "the tool call and the REST call"
    );
    let refused = call(None).await.expect("an answer");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(app.mcp.open_sessions(), 0);
}

#[tokio::test]
async fn mcp_without_a_valid_key_is_the_rest_401_before_any_session() {
    let app = spawn_default().await;
    let (status, headers, body) = app.post(None, None, initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["code"], "missing_api_key");
    assert!(headers.get("mcp-session-id").is_none());
    let forged = "jl_live_0000000000000000000000000000000000000000";
    let (status, _, body) = app.post(Some(forged), None, initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["code"], "invalid_api_key");
}

#[tokio::test]
async fn sessions_are_bounded_per_key_and_in_all_and_belong_to_their_key() {
    let mcp = McpConfig::default().max_sessions_per_key(2).max_sessions(3);
    let app = spawn(ServiceConfig::default(), mcp).await;
    let (a, b) = (
        app.app.keys.developer.raw.clone(),
        app.app.keys.agent_pro.raw.clone(),
    );
    let a1 = app.open_session(&a).await.expect("a's first");
    let _a2 = app.open_session(&a).await.expect("a's second");
    let (status, problem) = app.open_session(&a).await.expect_err("a's third");
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("too_many_sessions"))
    );
    assert!(problem["retry_after"].as_u64().is_some());
    let _b1 = app.open_session(&b).await.expect("b's first");
    let (status, _) = app.open_session(&b).await.expect_err("over the total");
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);

    // Another key cannot use, nor close, a's session.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, body) = app.post(Some(&b), Some(&a1), list.clone()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, _, body) = app.post(Some(&a), Some(&a1), list).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body["result"]["tools"]
        .as_array()
        .is_some_and(|t| t.len() == 7));

    // Closed by its owner, a session frees its place.
    let closed = app
        .http
        .delete(app.url())
        .header("x-api-key", &a)
        .header("mcp-session-id", &a1)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .expect("an answer");
    assert!(closed.status().is_success());
    app.open_session(&b)
        .await
        .expect("b's second, in a1's place");
}

#[tokio::test]
async fn an_initialize_written_with_escapes_counts_against_the_bounds_too() {
    let mcp = McpConfig::default().max_sessions_per_key(1);
    let app = spawn(ServiceConfig::default(), mcp).await;
    let key = app.app.keys.developer.raw.clone();
    app.open_session(&key).await.expect("the key's one session");
    // JSON may spell the method with escapes; it is still an `initialize`.
    let body = r#"{"jsonrpc": "2.0", "id": 1, "method": "initiali\u007ae", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "it", "version": "1"}}}"#;
    let answer = app
        .http
        .post(app.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("x-api-key", &key)
        .body(body)
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(answer.headers().get("mcp-session-id").is_none());
    assert_eq!(app.mcp.open_sessions(), 1);
}

#[tokio::test]
async fn an_idle_session_expires_and_frees_its_place() {
    let mcp = McpConfig::default()
        .max_sessions_per_key(1)
        .idle_timeout(Duration::ZERO);
    let app = spawn(ServiceConfig::default(), mcp).await;
    let key = app.app.keys.developer.raw.clone();
    let first = app.open_session(&key).await.expect("opened");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, _) = app.post(Some(&key), Some(&first), list).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "idle past the timeout");
    app.open_session(&key)
        .await
        .expect("the expired session's place is free");
}

#[tokio::test]
async fn a_body_over_the_api_limit_is_the_rest_413() {
    let app = spawn_default().await;
    let big = "x".repeat(app.app.api.config().max_body_bytes + 1);
    let (status, _, body) = app
        .post(Some(&app.app.keys.developer.raw), None, json!({"pad": big}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("body_too_large"))
    );
}

const APP_ORIGIN: &str = "https://app.example.com";

/// An app whose pages on [`APP_ORIGIN`] may call the API from a browser.
async fn spawn_with_origin(config: ServiceConfig) -> McpApp {
    let api =
        ApiConfig::default().cors_origins(vec![CorsOrigin::parse(APP_ORIGIN).expect("an origin")]);
    spawn_with(config, api, McpConfig::default()).await
}

/// The names in a comma-separated header, lower case.
fn header_list(headers: &reqwest::header::HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .flat_map(|v| v.to_str().expect("ascii").split(','))
        .map(|v| v.trim().to_ascii_lowercase())
        .collect()
}

#[tokio::test]
async fn a_browser_preflight_of_mcp_is_answered_without_a_key() {
    let app = spawn_with_origin(ServiceConfig::default()).await;
    let preflight = app
        .http
        .request(reqwest::Method::OPTIONS, app.url())
        .header("origin", APP_ORIGIN)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type, x-api-key, mcp-session-id, mcp-protocol-version, last-event-id",
        )
        .send()
        .await
        .expect("an answer");
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    let h = preflight.headers();
    assert_eq!(h["access-control-allow-origin"], APP_ORIGIN);
    let methods = header_list(h, "access-control-allow-methods");
    for method in ["get", "post", "delete"] {
        assert!(
            methods.contains(&method.to_owned()),
            "{method} in {methods:?}"
        );
    }
    let allowed = header_list(h, "access-control-allow-headers");
    for name in [
        "content-type",
        "x-api-key",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
    ] {
        assert!(allowed.contains(&name.to_owned()), "{name} in {allowed:?}");
    }
    assert!(h.get("access-control-allow-credentials").is_none());
}

#[tokio::test]
async fn a_page_on_an_allowed_origin_reads_the_session_id_of_mcp_answers() {
    let app = spawn_with_origin(ServiceConfig::default()).await;
    let key = &app.app.keys.developer.raw;
    let answer = app
        .http
        .post(app.url())
        .header("origin", APP_ORIGIN)
        .header("accept", "application/json, text/event-stream")
        .header("x-api-key", key)
        .json(&initialize())
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), StatusCode::OK);
    let h = answer.headers();
    assert!(h.get("mcp-session-id").is_some());
    assert_eq!(h["access-control-allow-origin"], APP_ORIGIN);
    let exposed = header_list(h, "access-control-expose-headers");
    for name in ["mcp-session-id", "mcp-protocol-version", "x-request-id"] {
        assert!(exposed.contains(&name.to_owned()), "{name} in {exposed:?}");
    }
    // A refusal is readable by the page too, as REST's are.
    let refused = app
        .http
        .post(app.url())
        .header("origin", APP_ORIGIN)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize())
        .send()
        .await
        .expect("an answer");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(refused.headers()["access-control-allow-origin"], APP_ORIGIN);
}

#[tokio::test]
async fn an_mcp_preflight_is_never_charged_to_a_key() {
    let app = spawn_with_origin(rate_limited(FOUR_THEN_NONE)).await;
    let key = app.app.issue(Plan::Developer).await;
    for _ in 0..8 {
        let preflight = app
            .http
            .request(reqwest::Method::OPTIONS, app.url())
            .header("origin", APP_ORIGIN)
            .header("access-control-request-method", "POST")
            .header("x-api-key", &key.raw)
            .send()
            .await
            .expect("an answer");
        assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    }
    // The key's four tokens are all there.
    let session = app.initialized_session(&key.raw).await;
    for id in [2, 3] {
        let (status, _, _) = app.post(Some(&key.raw), Some(&session), ping(id)).await;
        assert_eq!(status, StatusCode::OK);
    }
}

#[tokio::test]
async fn a_batch_or_an_unreadable_body_is_a_json_rpc_error_never_plain_text() {
    let app = spawn_default().await;
    let key = app.app.keys.developer.raw.clone();
    let session = app.initialized_session(&key).await;
    for session in [None, Some(session.as_str())] {
        let (status, headers, body) = app
            .post(Some(&key), session, json!([ping(1), tools_list(2)]))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], Value::Null);
        assert_eq!(body["error"]["code"], -32600, "{body}");
        let message = body["error"]["message"].as_str().expect("a message");
        assert!(message.contains("batch"), "{message}");
    }
    // Not JSON, and JSON that is no JSON-RPC message: a parse error and an invalid request.
    for (body, code) in [
        ("{\"jsonrpc\": ", -32700),
        (r#"{"hello": "world"}"#, -32600),
    ] {
        let answer = app
            .http
            .post(app.url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("x-api-key", &key)
            .body(body)
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(answer.headers()["content-type"], "application/json");
        let error: Value = answer.json().await.expect("JSON");
        assert_eq!(error["error"]["code"], code, "{body}: {error}");
        assert_eq!(error["id"], Value::Null);
    }
}

#[tokio::test]
async fn tools_list_shows_only_the_tools_the_keys_plan_may_call() {
    let app = spawn_default().await;
    let names = |body: &Value| -> Vec<String> {
        body["result"]["tools"]
            .as_array()
            .expect("the tools")
            .iter()
            .map(|t| t["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    let webhooks = ["create_webhook", "list_webhooks", "delete_webhook"];
    for (key, with_webhooks) in [
        (&app.app.keys.developer.raw, false),
        (&app.app.keys.agent_pro.raw, true),
        (&app.app.keys.enterprise.raw, true),
    ] {
        let session = app.initialized_session(key).await;
        let (status, _, body) = app.post(Some(key), Some(&session), tools_list(2)).await;
        assert_eq!(status, StatusCode::OK);
        let listed = names(&body);
        assert_eq!(
            listed.len(),
            if with_webhooks { 10 } else { 7 },
            "{listed:?}"
        );
        for tool in webhooks {
            assert_eq!(listed.contains(&tool.to_owned()), with_webhooks, "{tool}");
        }
    }
}

#[tokio::test]
async fn an_event_stream_ends_when_its_key_is_revoked_or_its_billing_lapses() {
    let app = spawn_default().await;
    let service = &app.app.service;
    let (revoked, lapsed, kept) = (
        app.app.issue(Plan::AgentPro).await,
        app.app.issue(Plan::Developer).await,
        app.app.issue(Plan::Developer).await,
    );
    let mut streams = Vec::new();
    for key in [&revoked, &lapsed, &kept] {
        let session = app.initialized_session(&key.raw).await;
        let stream = app.open_stream(&key.raw, &session).await;
        assert_eq!(stream.status(), StatusCode::OK);
        assert_eq!(stream.headers()["content-type"], "text/event-stream");
        streams.push(stream);
    }
    let kept_stream = streams.pop().expect("kept");
    let lapsed_stream = streams.pop().expect("lapsed");
    let revoked_stream = streams.pop().expect("revoked");
    service.revoke_key(revoked.id).await.expect("revoked");
    assert!(ends(revoked_stream).await, "the revoked key's stream ends");
    service
        .set_billing_status(lapsed.id, BillingStatus::PastDue)
        .await
        .expect("past due");
    assert!(ends(lapsed_stream).await, "the lapsed key's stream ends");
    // Another key's stream is left alone: still open, its session still answered.
    let session = app.initialized_session(&kept.raw).await;
    let (status, _, _) = app.post(Some(&kept.raw), Some(&session), ping(2)).await;
    assert_eq!(status, StatusCode::OK);
    drop(kept_stream);
}

#[tokio::test]
async fn a_session_holds_a_bounded_number_of_event_streams() {
    let app = spawn_default().await;
    let bound = McpConfig::default().max_streams_per_session;
    let key = app.app.keys.developer.raw.clone();
    let session = app.initialized_session(&key).await;
    let mut open = Vec::new();
    for _ in 0..bound {
        let stream = app.open_stream(&key, &session).await;
        assert_eq!(stream.status(), StatusCode::OK);
        open.push(stream);
    }
    let refused = app.open_stream(&key, &session).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    assert!(refused.headers().get("retry-after").is_some());
    let problem: Value = refused.json().await.expect("a problem document");
    assert_eq!(problem["code"], "too_many_streams");
    // A request, whose answer would be one more stream, is refused the same way; a
    // notification, answered without one, is not.
    let (status, _, body) = app.post(Some(&key), Some(&session), tools_list(2)).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("too_many_streams"))
    );
    let (status, _, _) = app.post(Some(&key), Some(&session), initialized()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // The bound is the session's: another session of the key opens its own.
    let other = app.initialized_session(&key).await;
    assert_eq!(app.open_stream(&key, &other).await.status(), StatusCode::OK);
    drop(open);
}
