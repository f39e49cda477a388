//! # The whole API on the sled store, in about a page
//!
//! ```text
//! cargo run --release --example server
//! ```
//!
//! 1. opens (or creates) a sled database in `./data`;
//! 2. builds the service on it, with webhook deliveries sent over HTTPS;
//! 3. binds 127.0.0.1:8080 (before making keys, so a port in use stops it early);
//! 4. on a first start, loads the demo dataset and issues one key per plan, printing each once
//!    (only their hashes are stored);
//! 5. serves until Ctrl-C, then lets open requests finish and saves the search index.
//!
//! The operator's program, with every option (import, keys, PostgreSQL replicas, quotas), is the
//! `job-listings` binary of the `job-listings-server` package.

use std::sync::Arc;

use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::Plan;
use job_listings::server::{Server, ServerConfig};
use job_listings::service::{JobListingsService, NewKey, SecretKey, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};
use job_listings::webhooks::{HttpNotifier, HttpNotifierConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. The store. The secret key seals webhook secrets at rest; keep it apart from backups
    //    of the data in production.
    let store = SledStore::open(&SledConfig::new("./data"))?;
    let config = ServiceConfig::default().secret_key(Some(SecretKey::load_or_create(
        "./data/secret.key".as_ref(),
    )?));

    // 2. The service, loaded from the store.
    let notifier = HttpNotifier::new(config.callback_policy, HttpNotifierConfig::default())?;
    let service = JobListingsService::builder()
        .store(Arc::new(store))
        .config(config)
        .notifier(Arc::new(notifier))
        .build()
        .await?;

    // 3. The listener.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    let base = format!("http://{}", listener.local_addr()?);

    // 4. Demo data and one key per plan on a first start.
    if service.company_count() == 0 {
        let demo = Dataset::generate(42, 600, 6_000);
        service.upsert_companies(demo.companies).await?;
        service.import_jobs(demo.jobs, |_| {}).await?;
        println!("API keys (shown only now):");
        for plan in Plan::ALL {
            let (key, _record) = service.create_key(NewKey::new(plan)).await?;
            println!("  {:<11} {}", plan.as_str(), key.expose());
        }
        println!("Try: curl -H \"X-API-Key: <a key above>\" \"{base}/api/v1/jobs?q=rust\"");
    } else {
        println!(
            "Keys are shown only when they are made: issue one with `job-listings keys create`."
        );
    }

    // 5. Serve until Ctrl-C.
    println!("Listening on {base}");
    Server::new(listener, Api::new(service), ServerConfig::default())?
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
