//! Access: whose key is accepted, at what rate, and how its calls are counted against its
//! quota (the metering rule, applied in memory or in the store).

use std::future::Future;

use std::sync::Arc;

use super::caller::{CallResult, Refused};
use super::keys::{KeyEntry, KeyRegistry};
use super::metering::{period_at, Reservation};
use super::metrics::StoreWrite;
use super::{Metered, Metering, QuotaState, ServiceError, ServiceResult, Shared};
use crate::domain::ApiKey;
use crate::store::AccessStore;

/// Access: the keys, where they and their usage are kept, and the metering rule.
pub(super) struct Access {
    /// What every part uses.
    pub(super) shared: Arc<Shared>,
    pub(super) keys: KeyRegistry,
    pub(super) store: Arc<dyn AccessStore>,
}

impl Access {
    /// Loads the keys with their usage counters from `store`.
    pub(super) async fn load(
        shared: Arc<Shared>,
        store: Arc<dyn AccessStore>,
    ) -> ServiceResult<Self> {
        let keys = KeyRegistry::load(store.as_ref()).await?;
        Ok(Self {
            shared,
            keys,
            store,
        })
    }

    /// The entry of a key issued here, not revoked, billing active.
    pub(super) fn authenticate(&self, key: &ApiKey) -> ServiceResult<Arc<KeyEntry>> {
        self.keys.authenticate(key)
    }

    /// Writes every changed usage counter to the store now.
    pub(super) async fn flush_usage(&self) -> ServiceResult<()> {
        let dirty = self.keys.dirty_counters();
        if dirty.is_empty() {
            return Ok(());
        }
        let counters: Vec<_> = dirty.iter().map(|(_, c)| *c).collect();
        let written = self
            .shared
            .timed_write(StoreWrite::Usage, self.store.put_usage(&counters))
            .await;
        if let Err(e) = written {
            // Not written: keep them marked so the next flush tries again.
            dirty.iter().for_each(|(meter, _)| meter.mark_dirty());
            return Err(e.into());
        }
        Ok(())
    }

    /// Takes a token from the key's bucket when rate limits are configured. Fails with
    /// [`ServiceError::RateLimited`]; nothing is counted against the quota either way.
    pub(super) fn check_rate(&self, entry: &KeyEntry) -> ServiceResult<()> {
        let Some(limits) = &self.shared.config.rate_limits else {
            return Ok(());
        };
        let limit = limits.of(entry.record.plan);
        entry
            .bucket
            .try_take(limit, std::time::Instant::now())
            .map_err(|retry_after| ServiceError::RateLimited {
                retry_after,
                per_second: limit.per_second,
                burst: limit.burst,
            })
    }

    /// The key's quota as its meter stood at `checked` (its period and the calls used in
    /// it), read without I/O.
    pub(super) fn quota_at(&self, entry: &KeyEntry, checked: (u64, u64)) -> QuotaState {
        let record = &entry.record;
        let limit = self.shared.config.quotas.of(record.plan);
        let (period, _, resets_at) = period_at(record.billing_anchor, self.shared.now());
        let used = match (self.shared.config.metering, checked) {
            (Metering::Off, _) => 0,
            (_, (counted_in, used)) if counted_in == period => used,
            _ => 0,
        };
        QuotaState {
            limit,
            remaining: limit.saturating_sub(used),
            resets_at,
        }
    }

    /// `error`, with the key's quota as it stands, for a refusal before anything was counted.
    pub(super) async fn refused(&self, entry: &KeyEntry, error: ServiceError) -> Refused {
        Refused {
            quota: self.usage_of(entry).await.ok().map(|(_, quota)| quota),
            error,
        }
    }

    /// Reserves one call of the key's, runs `work`, and counts the call only if it succeeds:
    /// with Q calls left, exactly Q succeed however many race.
    pub(super) async fn counted<T, F>(
        &self,
        entry: &KeyEntry,
        work: impl FnOnce() -> F,
    ) -> CallResult<T>
    where
        F: Future<Output = ServiceResult<T>>,
    {
        let record = &entry.record;
        let limit = self.shared.config.quotas.of(record.plan);
        let (period, start, resets_at) = period_at(record.billing_anchor, self.shared.now());
        let state = |used: u64| QuotaState {
            limit,
            remaining: limit.saturating_sub(used),
            resets_at,
        };
        let exceeded = || Refused {
            error: ServiceError::QuotaExceeded { limit, resets_at },
            quota: Some(state(limit)),
        };
        let (reservation, used) = match self.shared.config.metering {
            Metering::InMemory { .. } => {
                let Some((counted_in, used)) = entry.meter.try_reserve(period, limit) else {
                    return Err(exceeded());
                };
                let meter = entry.meter.clone();
                (Reservation::in_memory(meter, counted_in), used)
            }
            Metering::InStore => {
                let counted = self
                    .shared
                    .timed_write(
                        StoreWrite::Usage,
                        self.count_call(record.id, &entry.meter, start, limit),
                    )
                    .await;
                let counter = match counted {
                    Ok(Some(counter)) => counter,
                    Ok(None) => {
                        entry.meter.observe(period, limit);
                        return Err(exceeded());
                    }
                    Err(e) => return Err(self.refused(entry, e.into()).await),
                };
                entry.meter.observe(period, counter.calls_used);
                (
                    Reservation::in_store(self.store.clone(), entry.meter.clone(), counter),
                    counter.calls_used,
                )
            }
            Metering::Off => (Reservation::uncounted(), 0),
        };
        match work().await {
            Ok(value) => {
                reservation.commit();
                Ok(Metered {
                    value,
                    quota: state(used),
                })
            }
            Err(error) => {
                reservation.give_back().await;
                // The call just given back is not counted.
                let counted = used.saturating_sub(u64::from(used > 0));
                if self.shared.config.metering == Metering::InStore {
                    entry.meter.observe(period, counted);
                }
                Err(Refused {
                    error,
                    quota: Some(state(counted)),
                })
            }
        }
    }
}
