//! Webhooks: which callback addresses are allowed and which subscriptions a new job goes to.
//!
//! Registration checks a callback URL against the [`CallbackPolicy`]; ingest turns a job that
//! is seen for the first time into a `job.new` [`OutboxEvent`](crate::domain::OutboxEvent) with
//! one pending delivery per matching subscription, written in the same store transaction as
//! the job, so no announcement is ever lost.

mod outbox;
mod policy;
mod signature;

pub use outbox::{new_job_event, subscription_filter, JOB_NEW};
pub use policy::{is_public_ip, CallbackPolicy};
pub use signature::{sign, verify, SignatureError};
