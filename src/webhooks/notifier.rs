use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::domain::CallbackUrl;

/// One signed webhook POST, ready to send.
#[derive(Clone, Debug)]
pub struct WebhookRequest {
    /// Where to POST.
    pub url: CallbackUrl,
    /// `webhook-id`: the event id, the same on every retry.
    pub id: String,
    /// `webhook-timestamp`: seconds since the epoch when this attempt was signed.
    pub timestamp: i64,
    /// `webhook-signature`: `v1,<base64>`.
    pub signature: String,
    /// The JSON body.
    pub body: Bytes,
}

/// What one attempt got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptOutcome {
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// The receiver's `Retry-After`, when it sent one (429 and 5xx).
    pub retry_after: Option<Duration>,
    /// Why the attempt failed, when it did (timeout, refused address, reset, non-2xx).
    pub error: Option<String>,
    /// How long the attempt took.
    pub latency: Duration,
}

impl AttemptOutcome {
    /// Only a 2xx answer is a success.
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Sends webhook requests. The default is [`HttpNotifier`](super::HttpNotifier) (feature
/// `webhooks`); tests and embedders may bring their own transport. Without a notifier the
/// service still writes the outbox, and deliveries wait until one is configured.
#[async_trait]
pub trait Notifier: Send + Sync + std::fmt::Debug + 'static {
    /// Makes one attempt. Never panics; every failure is an [`AttemptOutcome`] with `error`.
    async fn send(&self, request: &WebhookRequest) -> AttemptOutcome;
}
