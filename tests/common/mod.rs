//! Shared by the integration test binaries that restart a server on the same sled folder:
//! opening the store once the previous owner let go, the real hyper server on 127.0.0.1 port 0,
//! and a graceful stop.

use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use job_listings::api::Api;
use job_listings::server::{Server, ServerConfig};
use job_listings::service::JobListingsService;
use job_listings::store::{SledConfig, SledStore, Store};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Opens the sled folder `path`. A previous owner may still be closing its files on another
/// thread, so the lock gets a moment (bounded).
pub async fn open_sled(path: &Path) -> SledStore {
    let config = SledConfig {
        path: path.to_owned(),
        cache_bytes: 16 * 1024 * 1024,
        job_cache_bytes: 4 * 1024 * 1024,
    };
    for _ in 0..100 {
        if let Ok(store) = SledStore::open(&config) {
            return store;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    SledStore::open(&config).unwrap_or_else(|e| panic!("sled store could not be opened: {e}"))
}

/// Drops `service` and waits (bounded) until nothing holds its store any more: the connection
/// tasks and the usage writer let go shortly after the server returns, and sled keeps a file
/// lock until then.
pub async fn release(service: JobListingsService) {
    let store: Weak<dyn Store> = Arc::downgrade(service.store());
    drop(service);
    for _ in 0..500 {
        if store.strong_count() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        store.strong_count(),
        0,
        "the stopped server still holds its store"
    );
}

/// The real server over `service`, until [`RunningServer::stop`].
pub struct RunningServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<std::io::Result<()>>>,
}

impl RunningServer {
    /// Binds 127.0.0.1 port 0 and serves in a task.
    pub async fn start(service: &JobListingsService) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let server = Server::new(
            listener,
            Api::new(service.clone()),
            ServerConfig {
                shutdown_grace: Duration::from_secs(5),
                ..ServerConfig::default()
            },
        )
        .expect("the server");
        let base = format!("http://{}", server.local_addr());
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(server.run(async move {
            let _ = rx.await;
        }));
        Self {
            base,
            shutdown: Some(tx),
            handle: Some(handle),
        }
    }

    /// Stops the server gracefully and waits until it has returned (usage is flushed then).
    pub async fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(handle) = self.handle.take() {
            handle
                .await
                .expect("the server task did not panic")
                .expect("the server stopped cleanly");
        }
    }
}
