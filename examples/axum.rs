//! # Mounting the job-listings API in an axum app
//!
//! ```text
//! cargo run --example axum                    # listens on 127.0.0.1:3000
//! cargo run --example axum -- 127.0.0.1:3001  # or on another address
//! ```
//!
//! [`Api`] is a plain `tower::Service` (request in, response out, never an error) and cheap to
//! clone, so any tower-based framework can serve it. In axum it is one line: give it to
//! `Router::fallback_service`, and your own routes keep working next to it — anything they do
//! not match goes to the API, which answers its own 404s and 405s.
//!
//! This example keeps its state in a [`MemoryStore`], so nothing touches the disk and every run
//! starts fresh. It:
//!
//! 1. builds a service on a memory store,
//! 2. seeds a little demo data,
//! 3. issues a developer key and prints it with a curl command to try,
//! 4. mounts the API under an axum router next to a `/` route of its own, and serves it until
//!    Ctrl-C, then flushes usage counters.

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::Plan;
use job_listings::service::{JobListingsService, NewKey};
use job_listings::store::MemoryStore;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".to_owned());

    // 1. The service, on a store that lives in memory.
    let service = JobListingsService::builder()
        .store(Arc::new(MemoryStore::new()))
        .build()
        .await?;

    // 2. A little demo data: companies first, since every job must name a known company.
    let data = Dataset::generate(42, 20, 500);
    service.upsert_companies(data.companies).await?;
    service.upsert_jobs(data.jobs).await?;

    // 3. A key. This is the only time the key itself exists; the service keeps its hash.
    let (key, _record) = service
        .create_key(NewKey::new(Plan::Developer).label("axum example".into()))
        .await?;

    // 4. Your routes, and the API for everything else.
    let api = Api::new(service.clone());
    let router = Router::new()
        .route(
            "/",
            get(|| async { "Hello from axum; the API is under /api/v1\n" }),
        )
        .fallback_service(api);

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let url = format!("http://{}", listener.local_addr()?);
    println!("developer key: {}", key.expose());
    println!("listening on {url}  (Ctrl-C to stop)");
    println!("try:");
    println!("  curl -s {url}/");
    println!(
        "  curl -s -H \"X-API-Key: {}\" \"{url}/api/v1/jobs?q=rust&per_page=2\"",
        key.expose()
    );

    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    // Write the usage counters one last time, whatever happened to the server.
    service.shutdown().await?;
    Ok(served?)
}
