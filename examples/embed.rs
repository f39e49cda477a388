//! The README's embedding example: the whole API in a program of your own, on the sled store,
//! with webhook secrets sealed at rest and deliveries sent. Stop it with Ctrl-C.

use job_listings::service::{JobListingsService, SecretKey, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};
use job_listings::webhooks::{HttpNotifier, HttpNotifierConfig};
use job_listings::{
    api::Api,
    server::{Server, ServerConfig},
};
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = SledStore::open(&SledConfig::new("./jobs-data"))?;
    let config = ServiceConfig {
        // Seals webhook secrets at rest: kept apart from the database, made on first start
        // (the same file format as the bundled server's `secret.key`).
        secret_key: Some(SecretKey::load_or_create("./jobs-secret.key".as_ref())?),
        ..ServiceConfig::default()
    };
    // Sends webhook deliveries, to the addresses the same policy lets subscriptions name.
    let notifier = HttpNotifier::new(config.callback_policy, HttpNotifierConfig::default())?;
    let service = JobListingsService::builder()
        .store(Arc::new(store))
        .config(config)
        .notifier(Arc::new(notifier))
        .build()
        .await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    // On Ctrl-C, `run` lets open requests finish, then shuts the service down: usage counters
    // written, the search index saved for the next start.
    Server::new(listener, Api::new(service), ServerConfig::default())?
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
