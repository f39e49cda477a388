//! The domain model: values that validate once when built ("parse, don't validate").
//!
//! Every layer above speaks these types. Nothing here knows about HTTP, storage or search.

mod change;
pub mod jsonl;
pub(crate) mod key;
mod plan;
mod webhook;

pub use job_listings_engine::domain::*;

pub use change::{ChangeKind, FeedCursor};
pub(crate) use job_listings_engine::domain::shared::{after_leap_second, changed_at, truncate};
pub use key::{ApiKey, ApiKeyRecord, BillingStatus, KeyHash};
pub use plan::{Plan, UsageReport};
pub use webhook::{
    CallbackUrl, Delivery, DeliveryAttempt, DeliveryStatus, IdempotencyKey, JobEvent, LoggedEvent,
    OutboxEvent, PlacesAndPay, Subscription, SubscriptionStatus, WebhookSecret,
};
