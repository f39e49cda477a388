use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use chrono::{DateTime, SubsecRound, Utc};
use rustc_hash::{FxHashMap, FxHashSet};

use super::metering::{period_at, period_start, Meter};
use super::metrics::StoreWrite;
use super::rate_limit::TokenBucket;
use super::{
    CallResult, Caller, JobListingsService, Metered, Metering, QuotaState, ServiceError,
    ServiceResult,
};
use crate::domain::{
    after_leap_second, ApiKey, ApiKeyRecord, BillingStatus, DomainError, KeyHash, KeyId, Plan,
    UsageReport,
};
use crate::store::{KeyStore, UsageCounter};

/// What is needed to issue a key.
#[derive(Clone, Debug)]
pub struct NewKey {
    /// The plan bought.
    pub plan: Plan,
    /// When monthly periods start counting: now (the default) or earlier; a later time is
    /// refused. A second written `:60` is the next minute's start.
    pub billing_anchor: Option<DateTime<Utc>>,
    /// A free-form label, such as the customer's e-mail.
    pub label: String,
}

impl NewKey {
    /// A key for `plan`, anchored now, unlabelled.
    pub fn new(plan: Plan) -> Self {
        Self {
            plan,
            billing_anchor: None,
            label: String::new(),
        }
    }
}

/// An issued key as the hot path sees it: the record and its meter.
#[derive(Debug)]
pub(crate) struct KeyEntry {
    pub(crate) record: ApiKeyRecord,
    pub(crate) meter: Arc<Meter>,
    pub(crate) bucket: Arc<TokenBucket>,
}

/// Issued keys by hash, with their meters. Read-mostly: a read lock on the hot path, a write
/// lock only when a key is issued or changed.
///
/// Hashed with Fx rather than SipHash, since every request looks one up: clients only look
/// keys up, never add them, so whatever digest a presented key has, its lookup probes no more
/// than the issued keys.
#[derive(Debug, Default)]
pub(crate) struct KeyRegistry {
    by_hash: RwLock<FxHashMap<KeyHash, Arc<KeyEntry>>>,
}

impl KeyRegistry {
    pub(crate) async fn load(store: &dyn KeyStore) -> ServiceResult<Self> {
        let usage: HashMap<KeyId, UsageCounter> = store
            .scan_usage()
            .await?
            .into_iter()
            .map(|u| (u.key_id, u))
            .collect();
        let mut by_hash = FxHashMap::default();
        for record in store.scan_keys().await? {
            let meter = match usage.get(&record.id) {
                Some(u) => {
                    let (period, _, _) = period_at(record.billing_anchor, u.period_start);
                    Meter::with(period, u.calls_used)
                }
                None => Meter::default(),
            };
            by_hash.insert(
                record.hash,
                Arc::new(KeyEntry {
                    record,
                    meter: Arc::new(meter),
                    bucket: Arc::default(),
                }),
            );
        }
        Ok(Self {
            by_hash: RwLock::new(by_hash),
        })
    }

    pub(crate) fn authenticate(&self, key: &ApiKey) -> ServiceResult<Arc<KeyEntry>> {
        let hash = key.hash();
        let entry = self
            .by_hash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&hash)
            .cloned()
            .ok_or(ServiceError::InvalidKey)?;
        // The map compares hashes, not keys; compare once more in constant time anyway.
        if !entry.record.hash.ct_eq(&hash) || entry.record.revoked_at.is_some() {
            return Err(ServiceError::InvalidKey);
        }
        if entry.record.billing_status != BillingStatus::Active {
            return Err(ServiceError::BillingInactive(entry.record.billing_status));
        }
        Ok(entry)
    }

    /// The keys whose webhook subscriptions are sent new jobs now
    /// ([`ApiKeyRecord::receives_webhooks`]).
    pub(crate) fn webhook_receivers(&self) -> FxHashSet<KeyId> {
        self.by_hash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|e| e.record.receives_webhooks())
            .map(|e| e.record.id)
            .collect()
    }

    /// Whether the key `id` is one of [`KeyRegistry::webhook_receivers`].
    pub(crate) fn receives_webhooks(&self, id: KeyId) -> bool {
        self.find(id).is_some_and(|e| e.record.receives_webhooks())
    }

    pub(super) fn find(&self, id: KeyId) -> Option<Arc<KeyEntry>> {
        self.by_hash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .find(|e| e.record.id == id)
            .cloned()
    }

    fn put(&self, record: ApiKeyRecord, meter: Arc<Meter>, bucket: Arc<TokenBucket>) {
        self.by_hash
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                record.hash,
                Arc::new(KeyEntry {
                    record,
                    meter,
                    bucket,
                }),
            );
    }

    /// Takes in a record another process wrote, keeping its meter and bucket if known.
    pub(crate) fn refresh(&self, record: ApiKeyRecord) {
        let (meter, bucket) = self
            .find(record.id)
            .map(|e| (e.meter.clone(), e.bucket.clone()))
            .unwrap_or_default();
        self.put(record, meter, bucket);
    }

    /// Calls `visit` with every record, under the read lock: for counting without copying.
    pub(crate) fn for_each_record(&self, mut visit: impl FnMut(&ApiKeyRecord)) {
        self.by_hash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .for_each(|e| visit(&e.record));
    }

    pub(crate) fn records(&self) -> Vec<ApiKeyRecord> {
        let mut all: Vec<ApiKeyRecord> = self
            .by_hash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|e| e.record.clone())
            .collect();
        all.sort_by_key(|r| (r.created_at, r.id));
        all
    }

    /// Every counter changed since it was last taken, each in the period it is on (not the
    /// period of a possibly stale clock), with its meter to mark again if writing fails.
    pub(crate) fn dirty_counters(&self) -> Vec<(Arc<Meter>, UsageCounter)> {
        self.by_hash
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|e| e.meter.take_dirty())
            .map(|e| {
                let (period, used) = e.meter.snapshot();
                let counter = UsageCounter {
                    key_id: e.record.id,
                    period_start: period_start(e.record.billing_anchor, period),
                    calls_used: used,
                };
                (e.meter.clone(), counter)
            })
            .collect()
    }
}

impl JobListingsService {
    /// Issues a key. The key itself is returned only here; the service keeps its hash.
    ///
    /// A billing anchor after now is refused: the key's first calls would fall in no period
    /// that has begun.
    pub async fn create_key(&self, new: NewKey) -> ServiceResult<(ApiKey, ApiKeyRecord)> {
        let now = self.now();
        let anchor = new.billing_anchor.map(after_leap_second);
        if let Some(anchor) = anchor.filter(|&anchor| anchor > now) {
            return Err(DomainError::new(
                "billing_anchor",
                format!(
                    "{} is in the future: the anchor is when the key's monthly periods begin, \
                     so it must be now or earlier (leave it out to begin now)",
                    anchor.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
                ),
            )
            .into());
        }
        let key = ApiKey::generate();
        let record = ApiKeyRecord {
            id: KeyId::new_random(),
            hash: key.hash(),
            hint: key.hint(),
            label: new.label,
            plan: new.plan,
            billing_status: BillingStatus::Active,
            // Whole seconds: every store keeps them exactly (PostgreSQL keeps microseconds),
            // so period starts computed from the anchor compare equal to stored ones.
            billing_anchor: anchor.unwrap_or(now).trunc_subsecs(0),
            created_at: now,
            revoked_at: None,
        };
        self.timed_write(StoreWrite::Keys, self.inner.access.store.put_key(&record))
            .await?;
        self.inner
            .access
            .keys
            .put(record.clone(), Arc::default(), Arc::default());
        tracing::info!(key_id = %record.id, plan = %record.plan, "key issued");
        Ok((key, record))
    }

    /// Every issued key record, oldest first.
    pub fn list_keys(&self) -> Vec<ApiKeyRecord> {
        self.inner.access.keys.records()
    }

    async fn update_key(
        &self,
        id: KeyId,
        change: impl FnOnce(&mut ApiKeyRecord),
    ) -> ServiceResult<ApiKeyRecord> {
        let entry = self
            .inner
            .access
            .keys
            .find(id)
            .ok_or(ServiceError::NotFound { resource: "key" })?;
        let mut record = entry.record.clone();
        change(&mut record);
        self.timed_write(StoreWrite::Keys, self.inner.access.store.put_key(&record))
            .await?;
        self.inner
            .access
            .keys
            .put(record.clone(), entry.meter.clone(), entry.bucket.clone());
        Ok(record)
    }

    /// Revokes a key for good.
    pub async fn revoke_key(&self, id: KeyId) -> ServiceResult<ApiKeyRecord> {
        let now = self.now();
        let record = self
            .update_key(id, |r| {
                r.revoked_at.get_or_insert(now);
            })
            .await?;
        tracing::info!(key_id = %id, "key revoked");
        Ok(record)
    }

    /// Sets a key's billing status (only `active` keys are accepted).
    pub async fn set_billing_status(
        &self,
        id: KeyId,
        status: BillingStatus,
    ) -> ServiceResult<ApiKeyRecord> {
        self.update_key(id, |r| r.billing_status = status).await
    }

    /// Moves a key to another plan; its usage in the current period is kept.
    pub async fn set_plan(&self, id: KeyId, plan: Plan) -> ServiceResult<ApiKeyRecord> {
        self.update_key(id, |r| r.plan = plan).await
    }

    /// A key's usage report and quota state, from one reading of its counter so the two
    /// always agree.
    pub(super) async fn usage_of(
        &self,
        entry: &KeyEntry,
    ) -> ServiceResult<(UsageReport, QuotaState)> {
        let quota = self.inner.config.quotas.of(entry.record.plan);
        let (period, start, end) = period_at(entry.record.billing_anchor, self.now());
        let used = match self.inner.config.metering {
            Metering::InMemory { .. } => entry.meter.used_in(period),
            Metering::InStore => self
                .inner
                .access
                .store
                .get_usage(entry.record.id)
                .await?
                .filter(|c| c.period_start == start)
                .map_or(0, |c| c.calls_used),
            Metering::Off => 0,
        };
        // More than the quota was used when the plan's quota was lowered during the period:
        // the report says so, and that nothing remains.
        let remaining = quota.saturating_sub(used);
        let report = UsageReport {
            plan: entry.record.plan,
            calls_used: used,
            calls_remaining: remaining,
            monthly_quota: quota,
            period_start: start,
        };
        let state = QuotaState {
            limit: quota,
            remaining,
            resets_at: end,
        };
        Ok((report, state))
    }
}

impl Caller {
    /// The caller's usage in the current billing period, with the quota it leaves. Not
    /// counted as a call, but subject to the key's rate limit like every other call.
    pub async fn usage(&self) -> CallResult<UsageReport> {
        if let Err(e) = self.check_rate() {
            return Err(self.refused(e).await);
        }
        match self.usage_and_quota().await {
            Ok((value, quota)) => Ok(Metered { value, quota }),
            Err(e) => Err(self.refused(e).await),
        }
    }
}
