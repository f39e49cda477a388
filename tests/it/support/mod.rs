//! The one helper module of the integration tests.
//!
//! - [`app`]: [`TestApp`], built with [`TestApp::builder`]: a service on a store of any kind
//!   (memory, sled in a temporary folder, PostgreSQL, or one the test made), with its
//!   configuration, clock and notifier, seeded, a key per plan, and served by the real hyper
//!   server on 127.0.0.1 port 0 or answered in-process by `Api::handle`; typed requests.
//! - [`wire`]: the HTTP client, how a key travels ([`Auth`]) and an answer ([`Resp`]).
//! - [`config`]: the library's service settings but for a quota or a rate limit.
//! - [`data`]: records with known words, tags and dates, and the demo dataset.
//! - [`store`]: opening a sled folder once its previous owner let go, letting go, and every
//!   job of a store.
//! - [`server`]: the real server over an API, until stopped.
//! - [`receiver`]: scripted webhook receivers on 127.0.0.1, answers held on a latch the test
//!   opens, and a bounded poller.
//! - [`tap`]: a store that passes every call to another, with hooks a test uses to see or hold
//!   the calls of the delivery worker and the replica follower.
//! - [`metrics`]: one sample of a metrics exposition, by name and labels.
//! - [`openapi`]: the operations an OpenAPI document holds, beside a route table.
//! - [`pg`]: a throwaway schema per test on the PostgreSQL server `DATABASE_URL` names.
//! - [`child`]: a test that re-executes its own binary as a child process.
//! - [`fixture`]: one API over a memory store for synchronous callers (properties, fuzz
//!   targets) and the checks every answer must pass; the fuzz crate compiles this file too.
//! - [`words`]: search words read from the documented rule on the Unicode crates, for the
//!   oracles (never the engine's tokenizer); the library's unit tests compile this file too.
//! - [`h2_peer`]: the frames of an idle HTTP/2 client that answers pings; the load tool
//!   `hostile_connections` compiles this file too.
//!
//! The crash tests, which run apart (they re-execute their own binary), include this module
//! with `#[path]`.

pub mod app;
pub mod bm25;
// Used by the crash tests, which run apart.
#[allow(dead_code)]
pub mod child;
pub mod config;
pub mod data;
pub mod fixture;
pub mod h2_peer;
pub mod metrics;
pub mod openapi;
pub mod pay_and_place;
pub mod pg;
pub mod receiver;
pub mod server;
pub mod store;
pub mod tap;
pub mod wire;
pub mod words;

pub use app::{StoreKind, TestApp, TestAppBuilder};
pub use data::at;
pub use receiver::{always_ok, eventually, script, Answer, Latch, Receiver};
pub use store::StoredService;
pub use wire::{Auth, Resp};

/// A property's case count: `n` at default settings, scaled as `PROPTEST_CASES` scales
/// proptest's own default of 256 (`PROPTEST_CASES=2560` runs each property ten times as many
/// cases; never fewer than one).
pub fn scaled(n: u32) -> u32 {
    const PROPTEST_DEFAULT: u64 = 256;
    // `ProptestConfig::default()` reads `PROPTEST_CASES`.
    let asked = u64::from(proptest::test_runner::Config::default().cases);
    u32::try_from((u64::from(n) * asked).div_ceil(PROPTEST_DEFAULT))
        .unwrap_or(u32::MAX)
        .max(1)
}
