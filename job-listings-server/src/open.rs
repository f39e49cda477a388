//! Opening the store and the service on it, for every command.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};

use job_listings::service::{JobListingsService, SecretKey, ServiceBuilder, ServiceConfig};
use job_listings::store::{PgConfig, PgStore, SledConfig, SledStore, Store, StoreError};
use job_listings::webhooks::{CallbackPolicy, HttpNotifier, HttpNotifierConfig};

use crate::cli::StoreArgs;
use crate::memory::CacheSizes;

/// Whether the service should send webhooks, or only queue them in the outbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deliver {
    /// Start the delivery worker (the server).
    Webhooks,
    /// Leave deliveries in the outbox for the server to send (admin commands).
    Nothing,
}

/// Opens the sled folder and loads the service from it.
pub(crate) async fn open_service(
    args: &StoreArgs,
    mut config: ServiceConfig,
    deliver: Deliver,
) -> Result<JobListingsService> {
    let store = open_store(args).await?;
    let key_file = args
        .secret_key_file
        .clone()
        .unwrap_or_else(|| args.data_dir.join("secret.key"));
    let key_was_there = key_file.exists();
    config.secret_key = Some(
        SecretKey::load_or_create(&key_file)
            .with_context(|| format!("the secret key file {}", key_file.display()))?,
    );
    let policy = config.callback_policy;
    let builder = JobListingsService::builder().store(store).config(config);
    let builder = match deliver {
        Deliver::Webhooks => with_notifier(builder, policy)?,
        Deliver::Nothing => builder,
    };
    match builder.build().await {
        Ok(service) => Ok(service),
        Err(e) => {
            let mut failed = anyhow::Error::new(e)
                .context(format!("loading the data from {}", describe_store(args)));
            // A key made just now for data that may need another one would only mislead
            // the next start.
            if !key_was_there && std::fs::remove_file(&key_file).is_ok() {
                failed = failed.context(format!(
                    "{} was made for this start and removed again; if the data holds webhook \
                     secrets written with another key, give --secret-key-file that key's file",
                    key_file.display()
                ));
            }
            Err(failed)
        }
    }
}

/// PostgreSQL when a database URL is given, else the sled folder.
async fn open_store(args: &StoreArgs) -> Result<Arc<dyn Store>> {
    if let Some(url) = &args.database_url {
        let config = PgConfig::new(url.clone()).schema(args.database_schema.clone());
        let store = PgStore::open(&config)
            .await
            .with_context(|| format!("opening {}", describe_store(args)))?;
        return Ok(Arc::new(store));
    }
    let caches = CacheSizes::of(args, None);
    let sled = SledConfig::new(&args.data_dir)
        .cache_bytes(caches.sled_mb.saturating_mul(1024 * 1024))
        .job_cache_bytes(caches.jobs_mb.saturating_mul(1024 * 1024));
    let store = SledStore::open(&sled).map_err(|e| explain_open_error(&args.data_dir, e))?;
    Ok(Arc::new(store))
}

/// Where the data lives, for messages: never the database URL itself (it may hold a password).
pub(crate) fn describe_store(args: &StoreArgs) -> String {
    match &args.database_url {
        Some(_) => format!("the PostgreSQL database (schema {})", args.database_schema),
        None => format!("the data folder {}", args.data_dir.display()),
    }
}

/// Adds the webhook sender. It enforces the same address policy as registration, on the
/// addresses it actually connects to.
fn with_notifier(builder: ServiceBuilder, policy: CallbackPolicy) -> Result<ServiceBuilder> {
    let notifier = HttpNotifier::new(policy, HttpNotifierConfig::default())?;
    Ok(builder.notifier(Arc::new(notifier)))
}

/// A folder held by another process gets advice; anything else keeps its cause.
fn explain_open_error(dir: &Path, e: StoreError) -> anyhow::Error {
    if matches!(e, StoreError::Locked { .. }) {
        anyhow!(
            "the data folder {} is in use by another process, most likely a running server \
             whose admin API could not be found: give its admin address with --admin-url \
             (a server started with --no-admin has none), or stop the server, run this \
             command, then start the server again.",
            dir.display()
        )
    } else {
        anyhow::Error::new(e).context(format!("opening the data folder {}", dir.display()))
    }
}
