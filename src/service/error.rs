use std::path::PathBuf;

use chrono::{DateTime, Utc};
use thiserror::Error;

use crate::domain::{BillingStatus, CompanyId, DomainError, IdempotencyKey, Plan, WebhookId};
use crate::store::StoreError;

/// Why a service call failed. The first variants are the caller's doing; [`ServiceError::Store`]
/// is ours. `api::error` alone turns these into HTTP answers.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// A parameter or field was malformed or out of range.
    #[error(transparent)]
    InvalidInput(#[from] DomainError),
    /// The key is not one the service issued, or it was revoked.
    #[error("the API key is not valid")]
    InvalidKey,
    /// The key exists but its billing is not active.
    #[error("billing for this key is {0:?}")]
    BillingInactive(BillingStatus),
    /// The key's plan is below what the call needs.
    #[error("this call needs the {required} plan or higher; the key is on {current}")]
    PlanUpgradeRequired {
        /// The lowest plan that may make the call.
        required: Plan,
        /// The key's plan.
        current: Plan,
    },
    /// The monthly quota is used up.
    #[error("the monthly quota of {limit} calls is used up until {resets_at}")]
    QuotaExceeded {
        /// Calls allowed per period.
        limit: u64,
        /// When the next period starts.
        resets_at: DateTime<Utc>,
    },
    /// The key sends requests faster than its plan's rate limit.
    #[error("more than {per_second} requests a second; retry in {retry_after:?}")]
    RateLimited {
        /// How long until a request will be accepted.
        retry_after: std::time::Duration,
        /// The plan's sustained rate.
        per_second: f64,
        /// The requests the plan allows at once after a quiet spell.
        burst: u32,
    },
    /// A subscription was sent more test pings than it may queue a minute.
    #[error("more than {per_minute} test pings a minute; retry in {retry_after:?}")]
    TestPingsLimited {
        /// How long until a ping will be accepted.
        retry_after: std::time::Duration,
        /// The pings a subscription may queue a minute.
        per_minute: u32,
    },
    /// No such resource (or not one this key may see).
    #[error("no {resource} with that id")]
    NotFound {
        /// What was looked for: `job`, `company`, `webhook`, `key`.
        resource: &'static str,
    },
    /// An idempotency key was sent again with a request different from the one it was first
    /// sent with.
    #[error(
        "idempotency key {key} was first used to register webhook {webhook} with other fields"
    )]
    IdempotencyKeyReused {
        /// The key.
        key: IdempotencyKey,
        /// The subscription the first request registered.
        webhook: WebhookId,
    },
    /// The subscription was disabled (its receiver answered 410 Gone, or failed for days), so
    /// nothing is sent to it.
    #[error("webhook {webhook} is disabled: {reason}")]
    WebhookDisabled {
        /// The subscription.
        webhook: WebhookId,
        /// Why it was disabled.
        reason: String,
    },
    /// A per-key limit was reached.
    #[error("limit reached: {0}")]
    LimitReached(String),
    /// A company cannot be deleted while active jobs name it: they would be listed under a
    /// company that no longer exists. Delete or close them first.
    #[error("company {company} still has {active_jobs} active jobs")]
    CompanyHasJobs {
        /// The company.
        company: CompanyId,
        /// Its active jobs.
        active_jobs: u64,
    },
    /// The store the service runs on cannot do this at all (an online backup of PostgreSQL,
    /// say): not a failure, and retrying will not help. The message says what to do instead.
    #[error("{operation} is not supported by {store}: {advice}")]
    Unsupported {
        /// What was asked, such as "an online backup".
        operation: &'static str,
        /// Which store was asked, such as "the PostgreSQL store".
        store: &'static str,
        /// What to do instead.
        advice: &'static str,
    },
    /// A change feed cursor the feed cannot go on from: it stands before the oldest event the
    /// feed still holds (events after it were removed by retention), or after the newest (the
    /// data was restored from an older backup, or the cursor is another deployment's), so a
    /// client following from it would miss events.
    #[error("the cursor is outside the change feed (retention {retention_days} days)")]
    CursorExpired {
        /// How long the feed keeps events, in days.
        retention_days: u64,
        /// The cursor is after the feed's newest event rather than before its oldest.
        ahead: bool,
    },
    /// A backup is under way already: one runs at a time, as each holds writes back while
    /// it copies and needs the store's size in free space. Retry once it has finished.
    #[error("a backup into {} is under way since {since}", to.display())]
    BackupInProgress {
        /// The folder the backup under way writes.
        to: PathBuf,
        /// When it started.
        since: DateTime<Utc>,
    },
    /// The disk a backup would be written to has too little free space for it: nothing was
    /// written. Not the request's fault, and not a failure: retrying helps once space is
    /// freed there, or with a folder on another disk.
    #[error("{} has {available} bytes free, a backup needs {needed}", path.display())]
    InsufficientStorage {
        /// The backup's folder.
        path: PathBuf,
        /// The bytes it needs free: a copy of the store ([`BackupSource::bytes`]), and the
        /// headroom it must leave ([`ServiceConfig::backup_headroom_bytes`]).
        ///
        /// [`BackupSource::bytes`]: crate::store::BackupSource::bytes
        /// [`ServiceConfig::backup_headroom_bytes`]: super::ServiceConfig::backup_headroom_bytes
        needed: u64,
        /// The bytes free there.
        available: u64,
    },
    /// Storage failed.
    #[error(transparent)]
    Store(StoreError),
}

/// A store's [`StoreError::Unsupported`] is the service's [`ServiceError::Unsupported`]: the
/// deployment's limit, not a storage failure. Every other store error is one.
impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unsupported {
                operation,
                store,
                advice,
            } => ServiceError::Unsupported {
                operation,
                store,
                advice,
            },
            e => ServiceError::Store(e),
        }
    }
}

/// The result of a service call.
pub type ServiceResult<T> = Result<T, ServiceError>;
