//! What the HTTP fuzz targets share: the integration tests' in-process API (one `Api` over a
//! service on a `MemoryStore` with a small demo dataset, keys whose quota cannot run out and
//! no rate limits) and the checks every answer must pass, compiled from the tests' own file so
//! that the two cannot drift apart.

use std::sync::OnceLock;

use bytes::Bytes;
use http::{Method, Request, Response};
use serde_json::Value;

#[path = "../../tests/it/support/fixture.rs"]
mod shared;

pub use shared::{check_answer, Fixture};

/// Subscriptions the agent-pro key holds from the start.
pub const WEBHOOKS: usize = 3;

/// The shared fixture, built on first use on a single-threaded runtime (libFuzzer calls a
/// target from one thread).
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        Fixture::build(rt, WEBHOOKS)
    })
}

/// Panics unless the answer passes [`check_answer`]; `what` names the request in the panic
/// message.
pub fn check(resp: &Response<Bytes>, what: &dyn std::fmt::Debug) {
    if let Err(wrong) = check_answer(resp) {
        panic!("{what:?}: {wrong}");
    }
}

impl Fixture {
    /// Deletes a subscription a fuzzed request created, so the key never fills up and state
    /// stays bounded across runs.
    pub fn forget_created_webhook(&self, resp: &Response<Bytes>) {
        if resp.status().as_u16() != 201 {
            return;
        }
        let body: Value = serde_json::from_slice(resp.body()).expect("a 201 body is JSON");
        let id = body["id"].as_str().expect("a 201 body has an id");
        let delete = Request::builder()
            .method(Method::DELETE)
            .uri(format!("/api/v1/webhooks/{id}"))
            .header("x-api-key", self.agent_pro.expose())
            .body(Bytes::new())
            .expect("a request");
        let deleted = self.send(delete);
        assert_eq!(
            deleted.status().as_u16(),
            204,
            "the created webhook can be deleted: {}",
            String::from_utf8_lossy(deleted.body())
        );
    }
}
