//! What the access part of the service keeps: API keys and their usage counters, each behind a
//! trait of its own, and [`AccessStore`], their union.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StoreResult;
use crate::domain::{ApiKeyRecord, KeyId};

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

impl UsageCounter {
    /// The counter after one more call in the period starting `period_start`, or `None` when
    /// `quota` calls are already counted there. A counter on an earlier period starts over; a
    /// counter already on a later period (a caller with a stale clock) counts the call there.
    pub fn counted(
        stored: Option<UsageCounter>,
        key_id: KeyId,
        period_start: DateTime<Utc>,
        quota: u64,
    ) -> Option<UsageCounter> {
        let current = match stored {
            Some(c) if c.period_start >= period_start => c,
            _ => UsageCounter {
                key_id,
                period_start,
                calls_used: 0,
            },
        };
        (current.calls_used < quota).then_some(UsageCounter {
            calls_used: current.calls_used + 1,
            ..current
        })
    }

    /// The counter after giving back one call counted in the period starting `period_start`;
    /// `None` when there is nothing to give back there.
    pub fn uncounted(
        stored: Option<UsageCounter>,
        period_start: DateTime<Utc>,
    ) -> Option<UsageCounter> {
        stored
            .filter(|c| c.period_start == period_start && c.calls_used > 0)
            .map(|c| UsageCounter {
                calls_used: c.calls_used - 1,
                ..c
            })
    }
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

/// Usage counters, one per key: written in batches by metering in memory, and counted one
/// call at a time by metering in the store, which replicas sharing the store use to count
/// exactly together.
#[async_trait]
pub trait UsageStore: Send + Sync + std::fmt::Debug + 'static {
    /// Records usage counters (replacing earlier values for the same key), durably.
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()>;
    /// Every usage counter.
    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>>;
    /// Counts one call for `key_id` in the period starting `period_start`, atomically and
    /// durably, unless `quota` calls are counted there already (see [`UsageCounter::counted`]).
    /// Returns the counter after the call, or `None` when the quota is used up. Several
    /// processes sharing one store may call it concurrently and exactly `quota` succeed.
    async fn count_call(
        &self,
        key_id: KeyId,
        period_start: DateTime<Utc>,
        quota: u64,
    ) -> StoreResult<Option<UsageCounter>>;
    /// Gives back one call counted by [`UsageStore::count_call`] in the period starting
    /// `period_start` (a call that failed), durably; nothing when none is counted there.
    async fn uncount_call(&self, key_id: KeyId, period_start: DateTime<Utc>) -> StoreResult<()>;
    /// The usage counter of one key, if it has one.
    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>>;
}

/// Everything access keeps, in one: implemented for every type that implements its parts,
/// never by hand.
pub trait AccessStore: KeyStore + UsageStore {}

impl<T> AccessStore for T where T: KeyStore + UsageStore + ?Sized {}
