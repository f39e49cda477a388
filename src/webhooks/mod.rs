//! Webhooks: callback policy, outbox events, Standard Webhooks signatures, retries and the
//! HTTP sender.
//!
//! Registration checks a callback URL against the [`CallbackPolicy`]; ingest logs a job that
//! is active for the first time as a `job.new` event, and its changes and closing as
//! `job.updated` and `job.closed` for subscriptions that ask for them ([`job_event`]), in the
//! same store transaction as the job, so no announcement is ever lost. The service's delivery worker fans
//! each logged event out to the matching subscriptions ([`announcement`], [`subscribes_to`]),
//! signs each delivery ([`sign`]) and sends it through a [`Notifier`] ([`HttpNotifier`] by
//! default), retrying on the [`RetryPolicy`]. Receivers check deliveries with [`verify`].

#[cfg(feature = "webhooks")]
mod http_notifier;
mod notifier;
mod outbox;
mod payload;
mod policy;
mod retry;
mod signature;

#[cfg(feature = "webhooks")]
pub use http_notifier::{HttpNotifier, HttpNotifierConfig, NotifierSetupError};
pub use notifier::{AttemptOutcome, Notifier, WebhookRequest};
pub use outbox::{
    announcement, job_event, pending_delivery, subscribes_to, subscription_filter, test_event,
    JOB_NEW, WEBHOOK_TEST,
};
pub use payload::{payload, MAX_PAYLOAD_BYTES};
pub use policy::{is_public_ip, CallbackPolicy};
pub use retry::RetryPolicy;
pub use signature::{sign, verify, SignatureError};
