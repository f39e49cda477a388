//! # The whole API inside a program of your own
//!
//! ```text
//! cargo run --example embed                    # data in a new temporary folder
//! cargo run --example embed -- ./my-data       # or in a folder of your choice
//! ```
//!
//! The embedding example of the README and docs/embedding.md, on the sled store, with
//! webhook secrets sealed at rest and deliveries sent:
//!
//! 1. opens (or creates) the sled folder, by default a new temporary folder, so nothing is
//!    left in the working folder;
//! 2. keeps the secret key that seals webhook secrets beside it (in production, keep it apart
//!    from backups of the data);
//! 3. builds the service with a webhook sender, and issues one key to call it with;
//! 4. serves on a port the system picks, prints the address and a call to try, and stops on
//!    Ctrl-C, letting open requests finish and saving the search index.

use std::path::PathBuf;
use std::sync::Arc;

use job_listings::api::Api;
use job_listings::domain::Plan;
use job_listings::server::{Server, ServerConfig};
use job_listings::service::{JobListingsService, NewKey, SecretKey, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};
use job_listings::webhooks::{HttpNotifier, HttpNotifierConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. The folder: the first argument, or a new temporary folder.
    let folder = match std::env::args_os().nth(1) {
        Some(path) => PathBuf::from(path),
        None => std::env::temp_dir().join(format!("job-listings-embed-{}", std::process::id())),
    };
    let store = SledStore::open(&SledConfig::new(folder.join("db")))?;

    // 2. The secret key, made on first start (the same file format as the server's).
    let config = ServiceConfig::default()
        .secret_key(Some(SecretKey::load_or_create(&folder.join("secret.key"))?));

    // 3. The service, sending deliveries to the addresses the same policy lets subscriptions
    //    name, and a key to call it with (only its hash is stored).
    let notifier = HttpNotifier::new(config.callback_policy, HttpNotifierConfig::default())?;
    let service = JobListingsService::builder()
        .store(Arc::new(store))
        .config(config)
        .notifier(Arc::new(notifier))
        .build()
        .await?;
    let (key, _record) = service.create_key(NewKey::new(Plan::AgentPro)).await?;

    // 4. Serve until Ctrl-C.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    println!("Data in {}", folder.display());
    println!("Listening on {base}");
    println!(
        "Try: curl -H \"X-API-Key: {}\" {base}/api/v1/usage",
        key.expose()
    );
    Server::new(listener, Api::new(service), ServerConfig::default())?
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
