//! Persistence: the [`Store`] trait and its implementations.
//!
//! [`SledStore`] (feature `sled`, on by default) keeps everything in an embedded sled database
//! on disk. [`MemoryStore`] keeps it in memory, for tests and for embedders that bring their own
//! persistence. One shared test suite (`tests/store_suite.rs`) runs against both.
//!
//! Every write method returns only once the write is durable: an acknowledged write survives a
//! crash of the process.

mod error;
mod memory;
#[cfg(feature = "sled")]
mod sled_store;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use error::{StoreError, StoreResult};
pub use memory::MemoryStore;
#[cfg(feature = "sled")]
pub use sled_store::{SledConfig, SledStore};

use crate::domain::{
    ApiKeyRecord, Company, CompanyId, Delivery, DeliveryId, EventId, Job, JobId, KeyId,
    OutboxEvent, Subscription, WebhookId,
};

/// One job write: the job and the outbox events it raises, stored in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct JobWrite {
    /// The job's new state.
    pub job: Job,
    /// Events (with their pending deliveries) to store atomically with it.
    pub events: Vec<OutboxEvent>,
}

/// Calls counted for one key in one billing period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageCounter {
    /// The key.
    pub key_id: KeyId,
    /// The period the count belongs to.
    pub period_start: DateTime<Utc>,
    /// Successful calls counted.
    pub calls_used: u64,
}

/// Where the service keeps its state.
///
/// The default implementation is [`SledStore`]; [`MemoryStore`] serves tests. Scans return
/// records in id order, `limit` at a time, starting after `after`, so callers can page through
/// collections of any size.
#[async_trait]
pub trait Store: Send + Sync + std::fmt::Debug + 'static {
    /// One job by id, active or closed.
    async fn get_job(&self, id: JobId) -> StoreResult<Option<Job>>;
    /// Several jobs by id, in the order asked; unknown ids are skipped.
    async fn get_jobs(&self, ids: &[JobId]) -> StoreResult<Vec<Job>>;
    /// Writes jobs and their outbox events, all or nothing, durably.
    async fn write_jobs(&self, writes: &[JobWrite]) -> StoreResult<()>;
    /// Up to `limit` jobs with ids greater than `after`.
    async fn scan_jobs(&self, after: Option<JobId>, limit: usize) -> StoreResult<Vec<Job>>;

    /// One company by id.
    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>>;
    /// Writes companies, all or nothing, durably.
    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()>;
    /// Up to `limit` companies with ids greater than `after`.
    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit: usize,
    ) -> StoreResult<Vec<Company>>;

    /// Creates or replaces a key record, durably.
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()>;
    /// Every key record.
    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>>;

    /// Records usage counters (replacing earlier values for the same key), durably.
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()>;
    /// Every usage counter.
    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>>;

    /// Creates or replaces a webhook subscription, durably.
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()>;
    /// Deletes a subscription and fails its pending deliveries; returns whether it existed.
    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool>;
    /// Every webhook subscription.
    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>>;

    /// Writes an event that belongs to no job (such as `webhook.test`) with its deliveries,
    /// all or nothing, durably.
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()>;
    /// One outbox event (its `deliveries` list is empty; see [`Store::pending_deliveries`]).
    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>>;
    /// Up to `limit` pending deliveries due at or before `due`, soonest first.
    async fn pending_deliveries(
        &self,
        due: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<Delivery>>;
    /// Every delivery of one subscription, newest first, up to `limit`.
    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>>;
    /// One delivery by id.
    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>>;
    /// Updates a delivery after an attempt, durably.
    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()>;
}
