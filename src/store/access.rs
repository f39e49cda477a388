//! What the access part of the service keeps: API keys and their usage counters, each behind a
//! trait of its own, and [`AccessStore`], their union.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StoreResult;
use crate::domain::{ApiKeyRecord, KeyId};

/// Calls counted for one key in one billing period. The store keeps it as it is given; what a
/// call counts, and when a period starts over, is the service's metering rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageCounter {
    /// The key.
    pub key_id: KeyId,
    /// The period the count belongs to.
    pub period_start: DateTime<Utc>,
    /// Successful calls counted.
    pub calls_used: u64,
}

/// API key records, revoked ones too: what authentication loads and key administration writes.
#[async_trait]
pub trait KeyStore: Send + Sync + std::fmt::Debug + 'static {
    /// Creates or replaces a key record, durably.
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()>;
    /// One key record by id.
    async fn get_key(&self, id: KeyId) -> StoreResult<Option<ApiKeyRecord>>;
    /// Every key record.
    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>>;
}

/// Usage counters, one per key: written in batches by metering in memory, and changed one
/// call at a time with [`UsageStore::swap_usage`] by metering in the store, which replicas
/// sharing the store use to count exactly together.
#[async_trait]
pub trait UsageStore: Send + Sync + std::fmt::Debug + 'static {
    /// The usage counter of one key, if it has one.
    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>>;
    /// Every usage counter.
    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>>;
    /// Records usage counters (replacing earlier values for the same key), durably.
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()>;
    /// Replaces the counter of `new.key_id` with `new`, atomically and durably, if the counter
    /// stored now is `expected` (`None`: the key has none); returns whether it did, and
    /// writes nothing when it did not. Of concurrent swaps from one stored counter, by any
    /// number of processes sharing the store, exactly one succeeds: that is what makes
    /// counting in the store exact.
    async fn swap_usage(
        &self,
        expected: Option<UsageCounter>,
        new: UsageCounter,
    ) -> StoreResult<bool>;
}

/// Everything access keeps, in one: implemented for every type that implements its parts,
/// never by hand.
pub trait AccessStore: KeyStore + UsageStore {}

impl<T> AccessStore for T where T: KeyStore + UsageStore + ?Sized {}
