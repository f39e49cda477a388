//! One API over a service on a memory store, for callers that are not async (property tests,
//! fuzz targets): a small demo dataset, a developer and an agent-pro key whose quotas cannot
//! run out, no rate limits (the library default), and subscriptions of the agent-pro key;
//! answered by `Api::handle` on a runtime of the fixture's own. Also the checks every answer
//! must pass.
//!
//! The fuzz crate compiles this file too (`fuzz/src/lib.rs`), so it uses only what the
//! library has without its default features, and no dev-dependency of the tests.

use std::sync::Arc;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Request, Response};
use http_body_util::Full;
use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, CallbackUrl, JobStatus, Plan};
use job_listings::service::{JobListingsService, NewKey, NewWebhook, Quotas, ServiceConfig};
use job_listings::store::MemoryStore;
use serde_json::Value;

/// The API and what a caller needs to address it.
pub struct Fixture {
    rt: tokio::runtime::Runtime,
    /// The API under test.
    pub api: Api,
    /// A developer-plan key (no webhooks).
    pub developer: ApiKey,
    /// An agent-pro key (webhooks allowed), holding the fixture's subscriptions.
    pub agent_pro: ApiKey,
    /// Active job ids.
    pub job_ids: Vec<String>,
    /// Company ids.
    pub company_ids: Vec<String>,
    /// The agent-pro key's subscriptions.
    pub webhook_ids: Vec<String>,
}

impl Fixture {
    /// Builds the fixture on `rt`, the agent-pro key holding `webhooks` subscriptions (of the
    /// 25 a key may hold).
    pub fn build(rt: tokio::runtime::Runtime, webhooks: usize) -> Self {
        let (api, developer, agent_pro, webhook_ids, data) = rt.block_on(async {
            let huge = 1_u64 << 50;
            let service = JobListingsService::builder()
                .store(Arc::new(MemoryStore::new()))
                .config(
                    ServiceConfig::default()
                        .quotas(
                            Quotas::default()
                                .developer(huge)
                                .agent_pro(huge)
                                .enterprise(huge),
                        )
                        .rate_limits(None),
                )
                .build()
                .await
                .expect("the service");
            let data = Dataset::generate(99, 4, 30);
            service
                .upsert_companies(data.companies.clone())
                .await
                .expect("companies");
            service.upsert_jobs(data.jobs.clone()).await.expect("jobs");
            let (developer, _) = service
                .create_key(NewKey::new(Plan::Developer))
                .await
                .expect("a key");
            let (agent_pro, _) = service
                .create_key(NewKey::new(Plan::AgentPro))
                .await
                .expect("a key");
            let webhook_ids = subscribe(&service, &agent_pro, webhooks).await;
            (Api::new(service), developer, agent_pro, webhook_ids, data)
        });
        Fixture {
            rt,
            api,
            developer,
            agent_pro,
            job_ids: data
                .jobs
                .iter()
                .filter(|j| j.status == JobStatus::Active)
                .map(|j| j.id.to_string())
                .collect(),
            company_ids: data.companies.iter().map(|c| c.id.to_string()).collect(),
            webhook_ids,
        }
    }

    /// A new agent-pro key holding `held` subscriptions of its own: for a property whose
    /// answers depend on how many a key holds, so that each case starts from a known state
    /// whatever the cases before it did.
    pub fn agent_pro_holding(&self, held: usize) -> ApiKey {
        self.rt.block_on(async {
            let service = self.api.service();
            let (key, _) = service
                .create_key(NewKey::new(Plan::AgentPro))
                .await
                .expect("a key");
            subscribe(service, &key, held).await;
            key
        })
    }

    /// Answers a request with `Api::handle`.
    pub fn send(&self, req: Request<Bytes>) -> Response<Bytes> {
        self.rt.block_on(self.api.handle(req))
    }

    /// Answers a request with `Api::handle_body` (which also reads `Content-Length`).
    pub fn send_body(&self, req: Request<Full<Bytes>>) -> Response<Bytes> {
        self.rt.block_on(self.api.handle_body(req))
    }
}

/// Registers `n` subscriptions of `key`; their ids.
async fn subscribe(service: &JobListingsService, key: &ApiKey, n: usize) -> Vec<String> {
    let url = CallbackUrl::parse("https://hooks.example.com/fuzz").expect("a URL");
    let mut ids = Vec::new();
    for _ in 0..n {
        let hook = service
            .create_webhook(key, NewWebhook::new(url.clone()))
            .await
            .expect("a webhook");
        ids.push(hook.value.id.to_string());
    }
    ids
}

/// What every answer must be, whatever was asked: no 5xx; an `X-Request-Id`; a body that is
/// empty or JSON; a 2xx with a body is `application/json`; anything else is an
/// `application/problem+json` document with a string `code` and an integer `status` equal to
/// the HTTP status. Returns the body (`Null` when empty), or what is wrong.
pub fn check_answer(resp: &Response<Bytes>) -> Result<Value, String> {
    let status = resp.status();
    let text = || String::from_utf8_lossy(resp.body());
    if status.is_server_error() {
        return Err(format!("{status} {}", text()));
    }
    if !resp.headers().contains_key("x-request-id") {
        return Err("no X-Request-Id".to_owned());
    }
    let body: Value = match resp.body().is_empty() {
        true => Value::Null,
        false => serde_json::from_slice(resp.body())
            .map_err(|e| format!("{status} body is not JSON ({e}): {}", text()))?,
    };
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if status.is_success() {
        if status.as_u16() != 204 && content_type != Some("application/json") {
            return Err(format!("{status} with content type {content_type:?}"));
        }
        return Ok(body);
    }
    if content_type != Some("application/problem+json") {
        return Err(format!("{status} with content type {content_type:?}"));
    }
    if body["code"].as_str().is_none_or(str::is_empty) {
        return Err(format!("problem without a string code: {body}"));
    }
    if body["status"].as_u64() != Some(u64::from(status.as_u16())) {
        return Err(format!("problem status is not {status}: {body}"));
    }
    Ok(body)
}
