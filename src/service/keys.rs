use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use chrono::{DateTime, SubsecRound, Utc};
use rustc_hash::{FxHashMap, FxHashSet};

use super::metering::{period_at, period_start, Meter};
use super::metrics::StoreWrite;
use super::rate_limit::TokenBucket;
use super::{
    Access, CallResult, Caller, Metered, Metering, QuotaState, ServiceError, ServiceResult,
};
use crate::domain::{
    after_leap_second, ApiKey, ApiKeyRecord, BillingStatus, DomainError, KeyHash, KeyId, Plan,
    UsageReport,
};
use crate::store::{AccessStore, UsageCounter};

/// What is needed to issue a key.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct NewKey {
    /// The plan bought.
    pub plan: Plan,
    /// When monthly periods start counting: now (the default) or earlier; a later time is
    /// refused. A second written `:60` is the next minute's start.
    pub billing_anchor: Option<DateTime<Utc>>,
    /// A free-form label, such as the customer's e-mail.
    pub label: String,
}

setters!(NewKey { label: String });
setters!(@some NewKey {
    billing_anchor: DateTime<Utc>,
});

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
    pub(crate) standing: Arc<Standing>,
}

/// What a key carries from one record of it to the next: its meter, its rate-limit bucket and
/// its standing.
type Carried = (Arc<Meter>, Arc<TokenBucket>, Arc<Standing>);

impl KeyEntry {
    fn carried(&self) -> Carried {
        (
            self.meter.clone(),
            self.bucket.clone(),
            self.standing.clone(),
        )
    }
}

/// Whether a key is still accepted, for what outlives the request that was made with it (an
/// MCP event stream): told once, when the key is revoked or its billing stops being active.
/// Carried from record to record of the key, as its meter is; a key accepted again gets a new
/// one, so what the old one ended stays ended.
#[derive(Debug)]
pub(crate) struct Standing(tokio::sync::watch::Sender<bool>);

impl Default for Standing {
    fn default() -> Self {
        Self(tokio::sync::watch::Sender::new(false))
    }
}

impl Standing {
    /// The standing for `record`: this one while the key is accepted (a new one if this one
    /// had lapsed), this one lapsed once it is not.
    fn for_record(self: Arc<Self>, record: &ApiKeyRecord) -> Arc<Self> {
        let accepted =
            record.revoked_at.is_none() && record.billing_status == BillingStatus::Active;
        let lapsed = *self.0.borrow();
        match (accepted, lapsed) {
            (true, true) => Arc::default(),
            (true, false) => self,
            (false, _) => {
                self.0.send_replace(true);
                self
            }
        }
    }

    /// Completes once the key is no longer accepted (at once if it is not now), or the
    /// service is gone.
    #[cfg(feature = "mcp")]
    pub(crate) fn lapsed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut changes = self.0.subscribe();
        async move {
            // An error means the sender is gone with the service: nothing stands any more.
            let _ = changes.wait_for(|lapsed| *lapsed).await;
        }
    }
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
    pub(crate) async fn load(store: &dyn AccessStore) -> ServiceResult<Self> {
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
                    standing: Arc::default(),
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

    /// Takes in a key's record, new or changed, with what the key carries from record to
    /// record; a record no longer accepted ends what stands on the key ([`Standing`]).
    fn put(&self, record: ApiKeyRecord, carried: Carried) {
        let (meter, bucket, standing) = carried;
        let standing = standing.for_record(&record);
        self.by_hash
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                record.hash,
                Arc::new(KeyEntry {
                    record,
                    meter,
                    bucket,
                    standing,
                }),
            );
    }

    /// Takes in a record another process wrote, keeping its meter, bucket and standing if
    /// known.
    pub(crate) fn refresh(&self, record: ApiKeyRecord) {
        let carried = self
            .find(record.id)
            .map(|e| e.carried())
            .unwrap_or_default();
        self.put(record, carried);
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

impl Access {
    /// Issues a key. The key itself is returned only here; the service keeps its hash.
    ///
    /// A billing anchor after now is refused: the key's first calls would fall in no period
    /// that has begun.
    pub(super) async fn create_key(&self, new: NewKey) -> ServiceResult<(ApiKey, ApiKeyRecord)> {
        let now = self.shared.now();
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
        self.shared
            .timed_write(StoreWrite::Keys, self.store.put_key(&record))
            .await?;
        self.keys.put(record.clone(), Carried::default());
        tracing::info!(key_id = %record.id, plan = %record.plan, "key issued");
        Ok((key, record))
    }

    /// Every issued key record, oldest first.
    pub(super) fn list_keys(&self) -> Vec<ApiKeyRecord> {
        self.keys.records()
    }

    async fn update_key(
        &self,
        id: KeyId,
        change: impl FnOnce(&mut ApiKeyRecord),
    ) -> ServiceResult<ApiKeyRecord> {
        let entry = self
            .keys
            .find(id)
            .ok_or(ServiceError::NotFound { resource: "key" })?;
        let mut record = entry.record.clone();
        change(&mut record);
        self.shared
            .timed_write(StoreWrite::Keys, self.store.put_key(&record))
            .await?;
        self.keys.put(record.clone(), entry.carried());
        Ok(record)
    }

    /// Revokes a key for good.
    pub(super) async fn revoke_key(&self, id: KeyId) -> ServiceResult<ApiKeyRecord> {
        let now = self.shared.now();
        let record = self
            .update_key(id, |r| {
                r.revoked_at.get_or_insert(now);
            })
            .await?;
        tracing::info!(key_id = %id, "key revoked");
        Ok(record)
    }

    /// Sets a key's billing status (only `active` keys are accepted).
    pub(super) async fn set_billing_status(
        &self,
        id: KeyId,
        status: BillingStatus,
    ) -> ServiceResult<ApiKeyRecord> {
        self.update_key(id, |r| r.billing_status = status).await
    }

    /// Moves a key to another plan; its usage in the current period is kept.
    pub(super) async fn set_plan(&self, id: KeyId, plan: Plan) -> ServiceResult<ApiKeyRecord> {
        self.update_key(id, |r| r.plan = plan).await
    }

    /// A key's usage report and quota state, from one reading of its counter so the two
    /// always agree.
    pub(super) async fn usage_of(
        &self,
        entry: &KeyEntry,
    ) -> ServiceResult<(UsageReport, QuotaState)> {
        let quota = self.shared.config.quotas.of(entry.record.plan);
        let (period, start, end) = period_at(entry.record.billing_anchor, self.shared.now());
        let used = match self.shared.config.metering {
            Metering::InMemory { .. } => entry.meter.used_in(period),
            Metering::InStore => {
                let used = self
                    .store
                    .get_usage(entry.record.id)
                    .await?
                    .filter(|c| c.period_start == start)
                    .map_or(0, |c| c.calls_used);
                entry.meter.observe(period, used);
                used
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(revoked: bool, billing_status: BillingStatus) -> ApiKeyRecord {
        let key = ApiKey::generate();
        let now = Utc::now();
        ApiKeyRecord {
            id: KeyId::new_random(),
            hash: key.hash(),
            hint: key.hint(),
            label: String::new(),
            plan: Plan::Developer,
            billing_status,
            billing_anchor: now,
            created_at: now,
            revoked_at: revoked.then_some(now),
        }
    }

    #[test]
    fn a_standing_lapses_with_its_key_and_a_key_accepted_again_gets_a_new_one() {
        let lapsed = |s: &Standing| *s.0.borrow();
        let standing = Arc::<Standing>::default();
        let active = record(false, BillingStatus::Active);
        let kept = standing.clone().for_record(&active);
        assert!(Arc::ptr_eq(&standing, &kept) && !lapsed(&kept));
        let past_due = kept
            .clone()
            .for_record(&record(false, BillingStatus::PastDue));
        assert!(Arc::ptr_eq(&standing, &past_due) && lapsed(&standing));
        let renewed = past_due.for_record(&active);
        assert!(!Arc::ptr_eq(&standing, &renewed) && !lapsed(&renewed));
        assert!(lapsed(&standing), "what lapsed stays lapsed");
        let revoked = renewed
            .clone()
            .for_record(&record(true, BillingStatus::Active));
        assert!(Arc::ptr_eq(&renewed, &revoked) && lapsed(&revoked));
    }
}
