//! The event streams `/mcp` answers with (a `GET` of a session's stream, a `POST` answered
//! as server-sent events), held to the key they were opened with: a stream ends when its key
//! is revoked or its billing stops being active, as every new request of that key is refused
//! then. Without this, a stream opened before the revocation would stay open for as long as
//! its client kept the connection. A stream of a session also holds its place among the
//! session's streams ([`StreamSlot`]) until it is dropped.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::Response;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

use super::session::StreamSlot;
use super::McpBody;
use crate::service::Caller;

/// What ends a held stream early.
type Ending = Pin<Box<dyn Future<Output = ()> + Send>>;

/// An event stream's body that ends when its key lapses.
struct HeldStream {
    body: McpBody,
    /// Completes when the key the stream was opened with is no longer accepted. In a
    /// `Mutex` only so the body is `Sync`, as [`McpBody`] asks: polling takes `&mut self`
    /// and never locks it.
    lapsed: Mutex<Ending>,
    /// Whether it ended: the future above is not polled again once it completed.
    ended: bool,
    /// Its place among its session's streams, freed when the body is dropped.
    _slot: Option<StreamSlot>,
}

impl Body for HeldStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        let lapsed = this.lapsed.get_mut().unwrap_or_else(|e| e.into_inner());
        if lapsed.as_mut().poll(cx).is_ready() {
            this.ended = true;
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(None) => {
                this.ended = true;
                Poll::Ready(None)
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.ended {
            SizeHint::with_exact(0)
        } else {
            self.body.size_hint()
        }
    }
}

/// Whether an answer is an event stream.
pub(crate) fn is_stream(response: &Response<McpBody>) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The answer with its event stream, if it is one, ending when `caller`'s key lapses and
/// holding `slot` until it is dropped; an answer that is no stream frees `slot` at once.
pub(crate) fn held(
    response: Response<McpBody>,
    caller: &Caller,
    slot: Option<StreamSlot>,
) -> Response<McpBody> {
    if !is_stream(&response) {
        return response;
    }
    let lapsed: Ending = Box::pin(caller.lapsed());
    response.map(|body| {
        HeldStream {
            body,
            lapsed: Mutex::new(lapsed),
            ended: false,
            _slot: slot,
        }
        .boxed()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use http_body_util::{Full, StreamBody};

    fn stream_of(frames: usize) -> McpBody {
        let frames = (0..frames).map(|_| Ok(Frame::data(Bytes::from_static(b": ping\n\n"))));
        let frames = futures_util::stream::iter(frames).chain(futures_util::stream::pending());
        BodyExt::boxed(StreamBody::new(frames))
    }

    #[tokio::test]
    async fn a_held_stream_ends_when_its_ending_completes_and_stays_ended() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let mut held = HeldStream {
            body: stream_of(1),
            lapsed: Mutex::new(Box::pin(async move {
                let _ = rx.await;
            })),
            ended: false,
            _slot: None,
        };
        let first = held.frame().await.expect("a frame").expect("infallible");
        assert!(first.is_data());
        tx.send(()).expect("sent");
        assert!(held.frame().await.is_none(), "ended by its key");
        assert!(held.frame().await.is_none() && held.is_end_stream());
    }

    #[test]
    fn only_an_event_stream_is_a_stream() {
        let mut sse = Response::new(Full::new(Bytes::new()).boxed());
        sse.headers_mut()
            .insert(CONTENT_TYPE, "text/event-stream".parse().expect("a value"));
        assert!(is_stream(&sse));
        let json = Response::new(Full::new(Bytes::new()).boxed());
        assert!(!is_stream(&json));
    }
}
