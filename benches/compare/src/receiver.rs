//! A minimal HTTP/1 webhook receiver on loopback for the delivery benches: it reads each
//! request whole and answers 200 after the hold its handler chooses.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Decides, from a request's head (lower-cased) and body, how long to hold it before the 200.
pub type Handler = Arc<dyn Fn(&str, &[u8]) -> Duration + Send + Sync>;

/// Serves every connection the listener accepts, keep-alive, until the process ends.
pub async fn receive(listener: TcpListener, handler: Handler) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let handler = handler.clone();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 16 * 1024];
            loop {
                let Ok(n) = stream.read(&mut chunk).await else {
                    return;
                };
                if n == 0 {
                    return;
                }
                buf.extend_from_slice(&chunk[..n]);
                let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                    continue;
                };
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if buf.len() < end + 4 + length {
                    continue;
                }
                let hold = handler(&head, &buf[end + 4..end + 4 + length]);
                buf.drain(..end + 4 + length);
                if !hold.is_zero() {
                    tokio::time::sleep(hold).await;
                }
                let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
                if stream.write_all(ok).await.is_err() {
                    return;
                }
            }
        });
    }
}
