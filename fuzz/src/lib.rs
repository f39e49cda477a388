//! What the HTTP fuzz targets share: one `Api` over a service on a `MemoryStore` with a small
//! demo dataset, keys whose quota cannot run out and no rate limits (the library default), and
//! the checks every answer must pass.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Request, Response};
use http_body_util::Full;
use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, CallbackUrl, JobStatus, Plan, WebhookId};
use job_listings::service::{JobListingsService, NewKey, NewWebhook, Quotas, ServiceConfig};
use job_listings::store::MemoryStore;
use serde_json::Value;

/// The shared API and what the targets need to address it.
pub struct Fixture {
    rt: tokio::runtime::Runtime,
    /// The API under test.
    pub api: Api,
    /// A developer-plan key (no webhooks).
    pub developer: ApiKey,
    /// An agent-pro key (webhooks allowed); holds [`Fixture::WEBHOOKS`] subscriptions.
    pub agent_pro: ApiKey,
    /// Active job ids.
    pub job_ids: Vec<String>,
    /// Company ids.
    pub company_ids: Vec<String>,
    /// The agent-pro key's subscriptions.
    pub webhook_ids: Vec<String>,
}

impl Fixture {
    /// Subscriptions the agent-pro key holds from the start.
    pub const WEBHOOKS: usize = 3;

    /// Runs a future on the fixture's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Answers a request with `Api::handle`.
    pub fn send(&self, req: Request<Bytes>) -> Response<Bytes> {
        self.block_on(self.api.handle(req))
    }

    /// Answers a request with `Api::handle_body` (which also reads `Content-Length`).
    pub fn send_body(&self, req: Request<Full<Bytes>>) -> Response<Bytes> {
        self.block_on(self.api.handle_body(req))
    }

    /// Deletes a subscription a fuzzed request created, so the key never fills up and state
    /// stays bounded across runs.
    pub fn forget_created_webhook(&self, resp: &Response<Bytes>) {
        if resp.status().as_u16() != 201 {
            return;
        }
        let body: Value = serde_json::from_slice(resp.body()).expect("a 201 body is JSON");
        let id = body["id"].as_str().expect("a 201 body has an id");
        let id = WebhookId::parse(id).expect("the id is a UUID");
        self.block_on(self.api.service().delete_webhook(&self.agent_pro, id))
            .expect("the created webhook can be deleted");
    }
}

/// The shared fixture, built on first use.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(build)
}

fn build() -> Fixture {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let (api, developer, agent_pro, job_ids, company_ids, webhook_ids) = rt.block_on(async {
        let huge = 1_u64 << 50;
        let service = JobListingsService::builder()
            .store(Arc::new(MemoryStore::new()))
            .config(ServiceConfig {
                quotas: Quotas {
                    developer: huge,
                    agent_pro: huge,
                    enterprise: huge,
                },
                rate_limits: None,
                ..ServiceConfig::default()
            })
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
        let url = CallbackUrl::parse("https://hooks.example.com/fuzz").expect("a URL");
        let mut webhook_ids = Vec::new();
        for _ in 0..Fixture::WEBHOOKS {
            let hook = service
                .create_webhook(&agent_pro, NewWebhook::new(url.clone()))
                .await
                .expect("a webhook");
            webhook_ids.push(hook.value.id.to_string());
        }
        let job_ids = data
            .jobs
            .iter()
            .filter(|j| j.status == JobStatus::Active)
            .map(|j| j.id.to_string())
            .collect();
        let company_ids = data.companies.iter().map(|c| c.id.to_string()).collect();
        (
            Api::new(service),
            developer,
            agent_pro,
            job_ids,
            company_ids,
            webhook_ids,
        )
    });
    Fixture {
        rt,
        api,
        developer,
        agent_pro,
        job_ids,
        company_ids,
        webhook_ids,
    }
}

/// Panics unless the answer is no 5xx, carries `X-Request-Id`, and, when it is not a 2xx, is an
/// `application/problem+json` document with a string `code` and an integer `status` equal to
/// the HTTP status. `what` names the request in the panic message.
pub fn check(resp: &Response<Bytes>, what: &dyn std::fmt::Debug) {
    let status = resp.status();
    let text = || String::from_utf8_lossy(resp.body());
    assert!(!status.is_server_error(), "{what:?}: {status} {}", text());
    assert!(
        resp.headers().contains_key("x-request-id"),
        "{what:?}: no X-Request-Id"
    );
    if status.is_success() {
        return;
    }
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    assert_eq!(
        content_type,
        Some("application/problem+json"),
        "{what:?}: {status}"
    );
    let body: Value = serde_json::from_slice(resp.body())
        .unwrap_or_else(|e| panic!("{what:?}: {status} body is not JSON ({e}): {}", text()));
    assert!(
        body["code"].as_str().is_some_and(|c| !c.is_empty()),
        "{what:?}: problem without a string code: {body}"
    );
    assert_eq!(
        body["status"].as_u64(),
        Some(u64::from(status.as_u16())),
        "{what:?}: problem status: {body}"
    );
}
