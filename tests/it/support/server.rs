//! The real hyper server over an API, on 127.0.0.1 port 0, until stopped.

use std::net::SocketAddr;
use std::time::Duration;

use job_listings::server::{Handler, Server, ServerConfig};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The server settings of the tests: the library's, with a 5 s shutdown grace.
pub fn server_config() -> ServerConfig {
    ServerConfig::default().shutdown_grace(Duration::from_secs(5))
}

/// The real server, serving in a task until [`RunningServer::stop`] or until it is dropped
/// (which asks it to stop without waiting).
pub struct RunningServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<std::io::Result<()>>>,
}

impl RunningServer {
    /// Binds 127.0.0.1 port 0 and serves `api` (the public API or the admin API) in a task.
    pub async fn start<H: Handler>(api: H, config: ServerConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let server = Server::new(listener, api, config).expect("the server");
        let addr = server.local_addr();
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(server.run(async move {
            let _ = rx.await;
        }));
        Self {
            addr,
            base: format!("http://{addr}"),
            shutdown: Some(tx),
            handle: Some(handle),
        }
    }

    /// Stops the server gracefully and waits until it has returned (it shuts the service
    /// down: usage is written and the search index saved).
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
