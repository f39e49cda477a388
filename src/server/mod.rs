//! The hyper 1.x frontend: accept loop, HTTP/1 and HTTP/2, timeouts, limits and graceful
//! shutdown around an [`Api`], or around an [`AdminApi`] on a listener of its own. A thin
//! adapter: routing and errors live in [`crate::api`].
//!
//! ```no_run
//! # async fn run(api: job_listings::api::Api) -> std::io::Result<()> {
//! use job_listings::server::{Server, ServerConfig};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let server = Server::new(listener, api, ServerConfig::default())?;
//! println!("listening on http://{}", server.local_addr());
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

mod connections;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use tokio::net::{TcpListener, TcpStream};

use bytes::Bytes;

use crate::api::admin::AdminApi;
use crate::api::{Api, ClientAddr};
use crate::service::{JobListingsService, ListenerReport};
use connections::{Connections, Slot};

/// Binds a listener with a listen queue of `backlog` connections (the kernel caps it at
/// `net.core.somaxconn`). `tokio::net::TcpListener::bind` asks for 1,024, which a burst of
/// new connections (thousands of clients reconnecting at once, or a flood beside them) can
/// overflow: the kernel then drops connection attempts before the server sees them, and
/// shedding idle connections (see [`ServerConfig::max_connections`]) cannot help.
pub fn bind(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // As the standard library's bind does on Unix: a restart finds its port free at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

/// Connection-level limits of the server.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Time a client has to send a request's headers; an idle HTTP/1 keep-alive connection is
    /// closed after this too. Default 10 s.
    pub header_read_timeout: Duration,
    /// A connection, HTTP/1 or HTTP/2, with no request in flight for this long is closed
    /// gracefully (an HTTP/2 client gets a GOAWAY). HTTP/2 keep-alive pings tell a dead peer
    /// from a live one, not a busy one from an idle one. Default 30 s: an HTTP/2 client
    /// multiplexes all its calls over one connection, and one polling every few seconds
    /// keeps it; the memory of one left idle comes back within half a minute. An idle HTTP/1
    /// connection is closed after `header_read_timeout` already, when that is shorter.
    pub idle_timeout: Duration,
    /// Largest request head (line and headers) read at all, in bytes. Beyond it hyper
    /// answers a bare 431 and closes the connection, since no request was parsed. Default
    /// 32 KiB: heads between the API's own limit ([`crate::api::ApiConfig::max_header_bytes`],
    /// 16 KiB) and this one get the API's 431 problem document.
    pub max_header_bytes: usize,
    /// Most header fields accepted (431 beyond). Default 100, hyper's own limit, which it
    /// parses into buffers on the stack; any other number makes it set up buffers of that
    /// size for every request.
    pub max_headers: usize,
    /// Most connections served at once. A new connection beyond it is served all the same,
    /// and the connection that has had no request in flight for the longest is closed
    /// gracefully to make room, so idle connections cannot lock new clients out. Only while
    /// every connection has a request in flight do new ones wait in the accept queue:
    /// requests end (bodies within [`ApiConfig::body_timeout`]), and a client kept waiting
    /// a moment is served, where one refused would have to retry. Closing connections are
    /// kept until they end, up to a quarter more: the process needs that many file
    /// descriptors and more (`ulimit -n`). Default 10,000.
    ///
    /// [`ApiConfig::body_timeout`]: crate::api::ApiConfig::body_timeout
    pub max_connections: usize,
    /// Most connections open at once from one client address (an IPv6 client by its /64, see
    /// [`ClientAddr::group`]); a connection beyond it is closed as soon as it is accepted,
    /// which costs nobody else anything. Default 1,024, above what one honest client opens
    /// (a load test of 256 connections from one machine passes). Behind a proxy or load
    /// balancer every client has the proxy's address: raise it to `max_connections` there.
    pub max_connections_per_address: usize,
    /// How long shutdown waits for open requests before closing anyway. Default 10 s.
    pub shutdown_grace: Duration,
    /// How long an accepted connection may wait for a slot, while every slot has a request
    /// in flight, before the listener counts as stalled: `GET /livez` then answers 503 (with
    /// `listener.stalled_since`), so that an orchestrator restarts a process that can serve
    /// no one new, and `job_listings_listener_stalled` is 1 until a slot frees. Default 60 s,
    /// far beyond any request but a stream.
    pub accept_stall_limit: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_header_bytes: 32 * 1024,
            max_headers: HYPER_MAX_HEADERS,
            max_connections: 10_000,
            max_connections_per_address: 1_024,
            shutdown_grace: Duration::from_secs(10),
            accept_stall_limit: Duration::from_secs(60),
        }
    }
}

/// What a [`Server`] serves: the public [`Api`] (alone, or with the MCP endpoint beside it),
/// or the [`AdminApi`] on a listener of its own.
pub trait Handler: Clone + Send + Sync + std::fmt::Debug + 'static {
    /// The body of its answers: whole for the REST API ([`Full`]); an answer that streams
    /// (the server-sent events of MCP's streamable HTTP) needs a body that can.
    type Body: http_body::Body<Data = Bytes, Error = Self::BodyError> + Send + Unpin + 'static;

    /// What reading [`Handler::Body`] can fail with; [`Infallible`] for whole bodies.
    type BodyError: Into<Box<dyn std::error::Error + Send + Sync>>;

    /// Answers one request; every error is an answer.
    fn answer(
        &self,
        req: http::Request<Incoming>,
    ) -> impl Future<Output = http::Response<Self::Body>> + Send;

    /// The service to shut down when the server stops; `None` when another server owns it
    /// (the admin listener beside the public one).
    fn owned_service(&self) -> Option<&JobListingsService>;

    /// The server stops accepting connections: end what would hold its open ones past the
    /// grace period (event streams that never end by themselves). Nothing by default.
    fn shutting_down(&self) {}
}

impl Handler for Api {
    type Body = Full<Bytes>;
    type BodyError = Infallible;

    async fn answer(&self, req: http::Request<Incoming>) -> http::Response<Full<Bytes>> {
        self.handle_body(req).await.map(Full::new)
    }

    fn owned_service(&self) -> Option<&JobListingsService> {
        Some(self.service())
    }
}

impl Handler for AdminApi {
    type Body = Full<Bytes>;
    type BodyError = Infallible;

    async fn answer(&self, req: http::Request<Incoming>) -> http::Response<Full<Bytes>> {
        self.handle_body(req).await.map(Full::new)
    }

    fn owned_service(&self) -> Option<&JobListingsService> {
        None
    }
}

/// A bound server, ready to [`Server::run`].
#[derive(Debug)]
pub struct Server<H: Handler = Api> {
    listener: TcpListener,
    api: H,
    config: ServerConfig,
    local_addr: SocketAddr,
}

/// The limit on header fields that hyper applies when none is set.
const HYPER_MAX_HEADERS: usize = 100;

/// The HTTP/2 connection preface; the protocol is known once the first bytes differ from it
/// or all of it has arrived.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The protocol a client speaks, told by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    Http1,
    /// HTTP/2 with prior knowledge (h2c): the connection starts with [`H2_PREFACE`].
    Http2,
}

/// Waits, at most `limit`, until the client has sent enough to tell its protocol; `None`
/// when it sent nothing in time or hung up.
async fn request_starts(stream: &tokio::net::TcpStream, limit: Duration) -> Option<Protocol> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut buf = [0u8; 24];
    loop {
        let n = tokio::time::timeout_at(deadline, stream.peek(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        if buf[..n] != H2_PREFACE[..n] {
            return Some(Protocol::Http1);
        }
        if n == H2_PREFACE.len() {
            return Some(Protocol::Http2);
        }
        // Part of an HTTP/2 preface: peek again once more may have arrived.
        if tokio::time::timeout_at(deadline, tokio::time::sleep(Duration::from_millis(5)))
            .await
            .is_err()
        {
            return None;
        }
    }
}

impl<H: Handler> Server<H> {
    /// Wraps a bound listener (bind port 0 to let the system choose).
    pub fn new(listener: TcpListener, api: H, config: ServerConfig) -> std::io::Result<Self> {
        let local_addr = listener.local_addr()?;
        Ok(Self {
            listener,
            api,
            config,
            local_addr,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` completes, then stops accepting, lets open requests finish
    /// (up to `shutdown_grace`) and, serving an [`Api`], shuts the service down
    /// ([`JobListingsService::shutdown`](crate::service::JobListingsService::shutdown): usage
    /// counters written, the search index saved, background tasks stopped). Other clones of
    /// the service still answer afterwards, but nothing writes their usage counts any more:
    /// stop using them, or call `shutdown` again once done.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> std::io::Result<()> {
        let Server {
            listener,
            api,
            config,
            ..
        } = self;
        let builders = Arc::new(connection_builders(&config));
        let report = api.owned_service().map(JobListingsService::listener_report);
        let connections = Connections::new(
            config.max_connections,
            config.max_connections_per_address,
            report.clone(),
        );
        let stalls = StallWatch {
            report,
            limit: config.accept_stall_limit,
        };
        tokio::pin!(shutdown);

        'serving: loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            // Every connection busy with a request: the newcomer waits, with those behind it
            // in the accept queue, until one is idle or ends. Holding it tells how long
            // someone has waited.
            let waiting_since = (std::time::Instant::now(), chrono::Utc::now());
            let mut stalled = false;
            while !connections.has_room() {
                if !stalled && waiting_since.0.elapsed() >= stalls.limit {
                    stalls.stalled(waiting_since.1);
                    stalled = true;
                }
                tokio::select! {
                    _ = &mut shutdown => break 'serving,
                    _ = tokio::time::sleep(ROOM_POLL) => {}
                }
            }
            if stalled {
                stalls.accepting();
            }
            let Some(slot) = connections.admit(ClientAddr(peer.ip()).group()) else {
                tracing::debug!(%peer, "closed a connection over the per-address limit");
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(serve_connection(
                stream,
                peer,
                slot,
                api.clone(),
                builders.clone(),
                config,
            ));
        }

        drop(listener);
        api.shutting_down();
        connections.close_all();
        tokio::select! {
            _ = connections.all_ended() => tracing::info!("all connections closed"),
            _ = tokio::time::sleep(config.shutdown_grace) => {
                tracing::warn!("shutdown grace period over; closing open connections");
            }
        }
        if let Some(service) = api.owned_service() {
            if let Err(e) = service.shutdown().await {
                tracing::error!(error = %e, "final usage flush failed");
            }
        }
        Ok(())
    }
}

/// An answer's body with the mark that its request is in flight, dropped with the body.
struct Tracked<B> {
    body: B,
    /// Held for its drop.
    _in_flight: connections::InFlight,
}

impl<B> http_body::Body for Tracked<B>
where
    B: http_body::Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Tells the service's health when a waiting connection has not been taken for too long.
struct StallWatch {
    report: Option<Arc<ListenerReport>>,
    limit: Duration,
}

impl StallWatch {
    fn stalled(&self, since: chrono::DateTime<chrono::Utc>) {
        tracing::error!(
            waiting_since = %since,
            "every connection slot has been busy for the accept stall limit while a \
             connection waits: not live"
        );
        if let Some(report) = &self.report {
            report.stalled(since);
        }
    }

    fn accepting(&self) {
        tracing::info!("a connection slot is free again: accepting");
        if let Some(report) = &self.report {
            report.accepting();
        }
    }
}

/// How often a server whose every connection is busy looks again for one to close.
const ROOM_POLL: Duration = Duration::from_millis(10);

/// Serves one connection until it ends, the server wants its slot back, or it stays idle.
async fn serve_connection<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    slot: Slot,
    api: H,
    builders: Arc<(http1::Builder, http2::Builder<TokioExecutor>)>,
    config: ServerConfig,
) {
    // hyper's header timeout starts once a connection is served: a client that sends nothing
    // (or half an HTTP/2 preface) would hold its slot forever, so telling the protocol gets
    // the header timeout too.
    let protocol = tokio::select! {
        protocol = request_starts(&stream, config.header_read_timeout) => protocol,
        () = slot.close_requested() => None,
    };
    let slot = Arc::new(slot);
    let requests = slot.clone();
    let service = service_fn(move |mut req: http::Request<Incoming>| {
        req.extensions_mut().insert(ClientAddr(peer.ip()));
        let in_flight = requests.request();
        let api = api.clone();
        async move {
            // The request is in flight until its answer's body has been sent: a streamed
            // answer keeps its connection from counting as idle.
            let response = api.answer(req).await.map(|body| Tracked {
                body,
                _in_flight: in_flight,
            });
            Ok::<_, Infallible>(response)
        }
    });
    let (http1, http2) = &*builders;
    let io = TokioIo::new(stream);
    let served = match protocol {
        None => {
            tracing::debug!(%peer, "closed a connection that sent no request in time");
            Ok(())
        }
        Some(Protocol::Http1) => drive(http1.serve_connection(io, service), &slot, config).await,
        Some(Protocol::Http2) => drive(http2.serve_connection(io, service), &slot, config).await,
    };
    if let Err(e) = served {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// Runs a hyper connection until it ends; when the server wants it closed, or it has had no
/// request in flight for `idle_timeout`, shuts it down gracefully (requests in flight are
/// answered; HTTP/2 sends GOAWAY) and gives it `shutdown_grace` to finish.
async fn drive<C>(connection: C, slot: &Slot, config: ServerConfig) -> Result<(), C::Error>
where
    C: GracefulConnection,
{
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => return served,
        () = slot.close_requested() => {}
        () = slot.idle_for(config.idle_timeout) => slot.closing(),
    }
    connection.as_mut().graceful_shutdown();
    // An HTTP/2 client that never answers the shutdown's ping would hold the connection open
    // forever; past the grace, dropping it closes the socket.
    tokio::time::timeout(config.shutdown_grace, connection)
        .await
        .unwrap_or(Ok(()))
}

/// The HTTP/1 and HTTP/2 connection builders, with the configured timeouts and limits. The
/// protocol is told from the first bytes (see `request_starts`), so each connection goes
/// straight to its own builder instead of through hyper-util's auto-detecting one, which
/// reads and replays those bytes itself.
fn connection_builders(config: &ServerConfig) -> (http1::Builder, http2::Builder<TokioExecutor>) {
    let mut http1 = http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        .max_buf_size(config.max_header_bytes.max(8192));
    if config.max_headers != HYPER_MAX_HEADERS {
        http1.max_headers(config.max_headers);
    }
    let mut http2 = http2::Builder::new(TokioExecutor::new());
    http2
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(config.max_header_bytes).unwrap_or(u32::MAX))
        .max_concurrent_streams(256)
        .keep_alive_interval(config.header_read_timeout)
        .keep_alive_timeout(config.header_read_timeout);
    (http1, http2)
}

setters!(ServerConfig {
    header_read_timeout: Duration,
    idle_timeout: Duration,
    max_header_bytes: usize,
    max_headers: usize,
    max_connections: usize,
    max_connections_per_address: usize,
    shutdown_grace: Duration,
    accept_stall_limit: Duration,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bind_listens_and_refuses_a_port_in_use() {
        let listener = bind("127.0.0.1:0".parse().expect("an address"), 4_096).expect("bound");
        let addr = listener.local_addr().expect("its address");
        let client = tokio::net::TcpStream::connect(addr);
        let (accepted, connected) = tokio::join!(listener.accept(), client);
        assert!(accepted.is_ok() && connected.is_ok());
        let taken = bind(addr, 16).expect_err("the port is in use");
        assert_eq!(taken.kind(), std::io::ErrorKind::AddrInUse);
    }
}
