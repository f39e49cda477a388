//! A bare hyper 1.x server: the ceiling `benches/load/ceiling.sh` measures our server against.
//!
//! Every request, whatever its method and path, gets `200`, `content-type: application/json`
//! and the same valid JSON body of exactly `--body-bytes` bytes, served on the runtime shape of
//! the `job-listings` binary: a multi-thread tokio runtime, HTTP/1.1 keep-alive, `TCP_NODELAY`. No
//! routing, auth, metering, timeouts or limits: what our server costs beyond this is what the
//! script reports.
//!
//! ```text
//! cargo run --release --bin bare_hyper -- --addr 127.0.0.1:18200 --body-bytes 20000
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// The bundled server's allocator, so the ceiling is measured on the same one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Answer every request with a fixed JSON body, as fast as bare hyper can.
#[derive(Parser, Debug)]
struct Args {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:18200")]
    addr: SocketAddr,
    /// Length of every answer's body, in bytes (at least 1).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    body_bytes: u32,
}

/// A valid JSON text of exactly `len` bytes: `{"data":"xx…"}`, or a number (`1…1`) when that
/// object would not fit.
fn json_body(len: usize) -> Bytes {
    const OPEN: &str = r#"{"data":""#;
    const CLOSE: &str = r#""}"#;
    let body = match len.checked_sub(OPEN.len() + CLOSE.len()) {
        Some(pad) => format!("{OPEN}{}{CLOSE}", "x".repeat(pad)),
        None => "1".repeat(len),
    };
    debug_assert_eq!(body.len(), len);
    Bytes::from(body)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let body = json_body(args.body_bytes as usize);
    let listener = TcpListener::bind(args.addr).await?;
    println!("Listening on http://{}", listener.local_addr()?);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                eprintln!("accept failed: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let body = body.clone();
        let service = service_fn(move |_: Request<Incoming>| {
            let mut answer = Response::new(Full::new(body.clone()));
            let json = HeaderValue::from_static("application/json");
            answer.headers_mut().insert(header::CONTENT_TYPE, json);
            async move { Ok::<_, Infallible>(answer) }
        });
        tokio::spawn(async move {
            // Keep-alive is hyper's default; a client hanging up is not worth reporting.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
