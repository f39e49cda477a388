use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{
    JobStore, JobWrite, KeyStore, Leases, OutboxStore, Store, StoreError, StoreResult, UsageCounter,
};
use crate::domain::{
    ApiKeyRecord, Company, CompanyId, Delivery, DeliveryId, DeliveryStatus, EventId, Job, JobId,
    KeyId, OutboxEvent, Subscription, WebhookId,
};

/// A [`Store`] in memory: for tests and for embedders that persist elsewhere. Nothing survives
/// the process.
#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
    leases: Leases,
}

/// Counts records, never shows them (they include webhook secrets).
impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("MemoryStore");
        if let Ok(state) = self.state.lock() {
            d.field("jobs", &state.jobs.len())
                .field("webhooks", &state.webhooks.len());
        }
        d.finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct State {
    jobs: BTreeMap<JobId, Job>,
    companies: BTreeMap<CompanyId, Company>,
    keys: BTreeMap<KeyId, ApiKeyRecord>,
    usage: BTreeMap<KeyId, UsageCounter>,
    webhooks: BTreeMap<WebhookId, Subscription>,
    events: BTreeMap<EventId, OutboxEvent>,
    deliveries: BTreeMap<DeliveryId, Delivery>,
}

impl State {
    fn insert_event(&mut self, event: &OutboxEvent) {
        for d in &event.deliveries {
            self.deliveries.insert(d.id, d.clone());
        }
        let mut bare = event.clone();
        bare.deliveries.clear();
        self.events.insert(event.id, bare);
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> StoreResult<std::sync::MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| StoreError::backend("the memory store", "its lock is poisoned"))
    }
}

fn page<K: Ord + Copy, V: Clone>(map: &BTreeMap<K, V>, after: Option<K>, limit: usize) -> Vec<V> {
    use std::ops::Bound;
    let start = after.map_or(Bound::Unbounded, Bound::Excluded);
    map.range((start, Bound::Unbounded))
        .take(limit)
        .map(|(_, v)| v.clone())
        .collect()
}

#[async_trait]
impl JobStore for MemoryStore {
    async fn get_job(&self, id: JobId) -> StoreResult<Option<Arc<Job>>> {
        Ok(self.state()?.jobs.get(&id).cloned().map(Arc::new))
    }

    async fn get_jobs(&self, ids: &[JobId]) -> StoreResult<Vec<Arc<Job>>> {
        let state = self.state()?;
        Ok(ids
            .iter()
            .filter_map(|id| state.jobs.get(id).cloned().map(Arc::new))
            .collect())
    }

    async fn write_jobs(&self, writes: &[JobWrite]) -> StoreResult<()> {
        let mut state = self.state()?;
        for write in writes {
            state.jobs.insert(write.job.id, write.job.clone());
            for event in &write.events {
                state.insert_event(event);
            }
        }
        Ok(())
    }

    async fn scan_jobs(&self, after: Option<JobId>, limit: usize) -> StoreResult<Vec<Job>> {
        Ok(page(&self.state()?.jobs, after, limit))
    }

    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>> {
        Ok(self.state()?.companies.get(&id).cloned())
    }

    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()> {
        let mut state = self.state()?;
        for c in companies {
            state.companies.insert(c.id, c.clone());
        }
        Ok(())
    }

    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit: usize,
    ) -> StoreResult<Vec<Company>> {
        Ok(page(&self.state()?.companies, after, limit))
    }
}

#[async_trait]
impl KeyStore for MemoryStore {
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()> {
        self.state()?.keys.insert(key.id, key.clone());
        Ok(())
    }

    async fn get_key(&self, id: KeyId) -> StoreResult<Option<ApiKeyRecord>> {
        Ok(self.state()?.keys.get(&id).cloned())
    }

    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>> {
        Ok(self.state()?.keys.values().cloned().collect())
    }

    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()> {
        let mut state = self.state()?;
        for c in counters {
            state.usage.insert(c.key_id, *c);
        }
        Ok(())
    }

    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>> {
        Ok(self.state()?.usage.values().copied().collect())
    }

    async fn count_call(
        &self,
        key_id: KeyId,
        period_start: DateTime<Utc>,
        quota: u64,
    ) -> StoreResult<Option<UsageCounter>> {
        let mut state = self.state()?;
        let next = UsageCounter::counted(
            state.usage.get(&key_id).copied(),
            key_id,
            period_start,
            quota,
        );
        if let Some(c) = next {
            state.usage.insert(key_id, c);
        }
        Ok(next)
    }

    async fn uncount_call(&self, key_id: KeyId, period_start: DateTime<Utc>) -> StoreResult<()> {
        let mut state = self.state()?;
        if let Some(c) = UsageCounter::uncounted(state.usage.get(&key_id).copied(), period_start) {
            state.usage.insert(key_id, c);
        }
        Ok(())
    }

    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>> {
        Ok(self.state()?.usage.get(&key_id).copied())
    }
}

#[async_trait]
impl OutboxStore for MemoryStore {
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()> {
        self.state()?.insert_event(event);
        Ok(())
    }

    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()> {
        self.state()?.webhooks.insert(webhook.id, webhook.clone());
        Ok(())
    }

    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool> {
        let mut state = self.state()?;
        let existed = state.webhooks.remove(&id).is_some();
        for d in state.deliveries.values_mut() {
            if d.webhook_id == id && d.status == DeliveryStatus::Pending {
                d.status = DeliveryStatus::Failed;
                d.last_error = Some("subscription deleted".to_owned());
            }
        }
        Ok(existed)
    }

    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Subscription>> {
        Ok(self.state()?.webhooks.get(&id).cloned())
    }

    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>> {
        Ok(self.state()?.webhooks.values().cloned().collect())
    }

    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>> {
        Ok(self.state()?.events.get(&id).cloned())
    }

    async fn pending_deliveries(
        &self,
        due: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<Delivery>> {
        let state = self.state()?;
        let mut due: Vec<Delivery> = state
            .deliveries
            .values()
            .filter(|d| d.status == DeliveryStatus::Pending && d.next_attempt_at <= due)
            .filter(|d| !self.leases.held(d.id, due))
            .cloned()
            .collect();
        due.sort_by_key(|d| (d.next_attempt_at, d.id));
        due.truncate(limit);
        Ok(due)
    }

    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>> {
        let state = self.state()?;
        let mut list: Vec<Delivery> = state
            .deliveries
            .values()
            .filter(|d| d.webhook_id == webhook)
            .cloned()
            .collect();
        list.sort_by(|a, b| {
            b.next_attempt_at
                .cmp(&a.next_attempt_at)
                .then(a.id.cmp(&b.id))
        });
        list.truncate(limit);
        Ok(list)
    }

    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>> {
        Ok(self.state()?.deliveries.get(&id).cloned())
    }

    async fn claim_delivery(
        &self,
        id: DeliveryId,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let state = self.state()?;
        let due = state
            .deliveries
            .get(&id)
            .filter(|d| d.status == DeliveryStatus::Pending && d.next_attempt_at <= now);
        Ok(due.filter(|_| self.leases.take(id, now, until)).cloned())
    }

    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()> {
        self.state()?
            .deliveries
            .insert(delivery.id, delivery.clone());
        self.leases.end(delivery.id);
        Ok(())
    }
}

impl Store for MemoryStore {}
