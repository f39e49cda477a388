//! Every integration test of the library, in one binary (one build, one link) with one helper
//! module, [`support`]. The crash tests, which kill child processes of their own binary, run
//! apart (`tests/crash_safety.rs`, `tests/webhook_crash.rs`) on the same helpers.
//!
//! `cargo test --test it` runs them; the PostgreSQL tests are listed as ignored unless asked
//! for: `cargo test --test it -- --ignored` with a server at `DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`).

mod support;

mod admin;
mod admin_openapi;
mod api;
mod backup;
#[cfg(feature = "client")]
mod client;
mod deleting;
mod docs;
mod hostile_clients;
mod index_compaction;
mod layering;
mod mcp;
mod parser_fuzz;
mod query_props;
mod quota;
mod replicas;
mod secrets;
mod store_suite;
mod webhook_delivery;
