//! The domain model: values that validate once when built ("parse, don't validate").
//!
//! Every layer above speaks these types. Nothing here knows about HTTP, storage or search.

mod change;
mod company;
mod error;
mod ids;
mod job;
pub mod jsonl;
pub(crate) mod key;
mod new_job;
mod paging;
mod plan;
mod tags;
mod timestamp;
mod webhook;

pub use change::{ChangeKind, FeedCursor};
pub use company::{Company, Enrichment, FundingStage};
pub use error::DomainError;
pub use ids::{CompanyId, DeliveryId, EventId, JobId, KeyId, WebhookId};
pub use job::{Confidence, Job, JobStatus, SalaryRange};
pub use key::{ApiKey, ApiKeyRecord, BillingStatus, KeyHash};
pub use new_job::NewJob;
pub use paging::{page_of, Page, PerPage};
pub use plan::{Plan, UsageReport};
pub use tags::{DomainTag, Seniority};
pub(crate) use timestamp::{after_leap_second, changed_at};
pub use webhook::{
    CallbackUrl, Delivery, DeliveryAttempt, DeliveryStatus, IdempotencyKey, JobEvent, LoggedEvent,
    OutboxEvent, Subscription, SubscriptionStatus, WebhookSecret,
};
