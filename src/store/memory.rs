use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{
    CompanyStore, DeliveryQueue, EventLog, FanOut, FanOutStore, FeedBounds, FeedEntry,
    IndexSnapshotStore, JobFeedStore, JobStore, JobWrite, KeyStore, Leases, Pruned, Store,
    StoreError, StoreResult, UsageCounter, UsageStore, WebhookStore,
};
use crate::domain::{
    ApiKeyRecord, ChangeKind, Company, CompanyId, Delivery, DeliveryId, DeliveryStatus, EventId,
    Job, JobEvent, JobId, KeyId, LoggedEvent, OutboxEvent, Subscription, WebhookId,
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
    /// Each subscription's deliveries, so one subscription's reads touch only its own.
    of_webhook: BTreeMap<WebhookId, BTreeSet<DeliveryId>>,
    /// The outbox log by position, and the newest position handed out.
    log: BTreeMap<u64, (JobId, JobEvent)>,
    log_head: u64,
    cursors: BTreeMap<WebhookId, u64>,
    /// The job change feed by position, each entry with its job as written.
    feed: BTreeMap<u64, FeedEntry>,
    feed_bounds: FeedBounds,
}

impl State {
    fn record_change(
        &mut self,
        kind: ChangeKind,
        job_id: JobId,
        at: DateTime<Utc>,
        job: Option<Job>,
    ) {
        self.feed_bounds.head += 1;
        let position = self.feed_bounds.head;
        self.feed.insert(
            position,
            FeedEntry {
                position,
                kind,
                job_id,
                at,
                job: job.map(Arc::new),
            },
        );
    }

    fn insert_event(&mut self, event: &OutboxEvent) {
        for d in &event.deliveries {
            self.put_delivery(d.clone());
        }
        let mut bare = event.clone();
        bare.deliveries.clear();
        self.events.insert(event.id, bare);
    }

    fn put_delivery(&mut self, delivery: Delivery) {
        self.of_webhook
            .entry(delivery.webhook_id)
            .or_default()
            .insert(delivery.id);
        self.deliveries.insert(delivery.id, delivery);
    }

    fn deliveries_of(&self, webhook: WebhookId) -> impl Iterator<Item = &Delivery> {
        self.of_webhook
            .get(&webhook)
            .into_iter()
            .flatten()
            .filter_map(|id| self.deliveries.get(id))
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
            if let Some(kind) = write.change {
                let job = write.job.clone();
                state.record_change(kind, job.id, job.updated_at, Some(job));
            }
            for event in &write.events {
                state.log_head += 1;
                let position = state.log_head;
                state.log.insert(position, (write.job.id, event.clone()));
            }
        }
        Ok(())
    }

    async fn scan_jobs(&self, after: Option<JobId>, limit: usize) -> StoreResult<Vec<Job>> {
        Ok(page(&self.state()?.jobs, after, limit))
    }

    async fn delete_job(&self, id: JobId) -> StoreResult<bool> {
        let mut state = self.state()?;
        let existed = state.jobs.remove(&id).is_some();
        if existed {
            state.record_change(ChangeKind::Deleted, id, Utc::now(), None);
        }
        Ok(existed)
    }
}

/// No snapshots: a memory store starts empty, so there is never an index to load.
impl IndexSnapshotStore for MemoryStore {}

#[async_trait]
impl JobFeedStore for MemoryStore {
    async fn feed_after(&self, after: u64, limit: usize) -> StoreResult<Vec<FeedEntry>> {
        let state = self.state()?;
        Ok(state
            .feed
            .range(after.saturating_add(1)..)
            .take(limit)
            .map(|(_, entry)| FeedEntry {
                // A deleted job's content is not served, whatever entry kept it.
                job: entry
                    .job
                    .clone()
                    .filter(|_| state.jobs.contains_key(&entry.job_id)),
                ..entry.clone()
            })
            .collect())
    }

    async fn feed_bounds(&self) -> StoreResult<FeedBounds> {
        Ok(self.state()?.feed_bounds)
    }

    async fn prune_feed(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize> {
        let mut state = self.state()?;
        let old: Vec<u64> = state
            .feed
            .values()
            .take(limit)
            .take_while(|e| e.at < before)
            .map(|e| e.position)
            .collect();
        for position in &old {
            state.feed.remove(position);
            state.feed_bounds.pruned_through = *position;
        }
        Ok(old.len())
    }
}

#[async_trait]
impl CompanyStore for MemoryStore {
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

    async fn delete_company(&self, id: CompanyId) -> StoreResult<bool> {
        Ok(self.state()?.companies.remove(&id).is_some())
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
}

#[async_trait]
impl UsageStore for MemoryStore {
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

    async fn swap_usage(
        &self,
        expected: Option<UsageCounter>,
        new: UsageCounter,
    ) -> StoreResult<bool> {
        let mut state = self.state()?;
        if state.usage.get(&new.key_id) != expected.as_ref() {
            return Ok(false);
        }
        state.usage.insert(new.key_id, new);
        Ok(true)
    }

    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>> {
        Ok(self.state()?.usage.get(&key_id).copied())
    }
}

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()> {
        let mut state = self.state()?;
        let head = state.log_head;
        state.cursors.entry(webhook.id).or_insert(head);
        state.webhooks.insert(webhook.id, webhook.clone());
        Ok(())
    }

    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool> {
        let mut state = self.state()?;
        let existed = state.webhooks.remove(&id).is_some();
        state.cursors.remove(&id);
        let ids: Vec<DeliveryId> = state
            .of_webhook
            .get(&id)
            .into_iter()
            .flatten()
            .copied()
            .collect();
        for id in ids {
            if let Some(d) = state.deliveries.get_mut(&id) {
                if d.status == DeliveryStatus::Pending {
                    d.status = DeliveryStatus::Failed;
                    d.last_error = Some("subscription deleted".to_owned());
                }
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
}

#[async_trait]
impl EventLog for MemoryStore {
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()> {
        self.state()?.insert_event(event);
        Ok(())
    }

    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>> {
        Ok(self.state()?.events.get(&id).cloned())
    }

    async fn log_head(&self) -> StoreResult<u64> {
        Ok(self.state()?.log_head)
    }

    async fn log_after(&self, after: u64, limit: usize) -> StoreResult<Vec<LoggedEvent>> {
        let state = self.state()?;
        Ok(state
            .log
            .range(after.saturating_add(1)..)
            .take(limit)
            .map(|(position, (job_id, event))| LoggedEvent {
                position: *position,
                job_id: *job_id,
                event: event.clone(),
            })
            .collect())
    }
}

#[async_trait]
impl FanOutStore for MemoryStore {
    async fn fan_out_cursors(&self) -> StoreResult<Vec<(WebhookId, u64)>> {
        Ok(self
            .state()?
            .cursors
            .iter()
            .map(|(w, c)| (*w, *c))
            .collect())
    }

    async fn pending_count(&self, webhook: WebhookId) -> StoreResult<usize> {
        let state = self.state()?;
        let count = state
            .deliveries_of(webhook)
            .filter(|d| d.status == DeliveryStatus::Pending)
            .count();
        Ok(count)
    }

    async fn fan_out(&self, step: &FanOut) -> StoreResult<bool> {
        let mut state = self.state()?;
        let in_place = step
            .cursors
            .iter()
            .all(|m| state.cursors.get(&m.webhook) == Some(&m.from));
        if !in_place {
            return Ok(false);
        }
        for m in &step.cursors {
            state.cursors.insert(m.webhook, m.to);
        }
        for event in &step.events {
            state.events.entry(event.id).or_insert_with(|| OutboxEvent {
                deliveries: Vec::new(),
                ..event.clone()
            });
        }
        for d in &step.deliveries {
            state.put_delivery(d.clone());
        }
        Ok(true)
    }
}

#[async_trait]
impl DeliveryQueue for MemoryStore {
    async fn due_deliveries(
        &self,
        due: DateTime<Utc>,
        per_subscription: usize,
    ) -> StoreResult<Vec<Delivery>> {
        let state = self.state()?;
        let mut out = Vec::new();
        for webhook in state.of_webhook.keys() {
            let mut of_one: Vec<&Delivery> = state
                .deliveries_of(*webhook)
                .filter(|d| d.status == DeliveryStatus::Pending && d.next_attempt_at <= due)
                .filter(|d| !self.leases.held(d.id, due))
                .collect();
            of_one.sort_by_key(|d| (d.next_attempt_at, d.id));
            out.extend(of_one.into_iter().take(per_subscription).cloned());
        }
        Ok(out)
    }

    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>> {
        let state = self.state()?;
        let mut list: Vec<Delivery> = state.deliveries_of(webhook).cloned().collect();
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
        self.state()?.put_delivery(delivery.clone());
        self.leases.end(delivery.id);
        Ok(())
    }

    async fn prune(
        &self,
        settled_before: DateTime<Utc>,
        events_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Pruned> {
        let mut state = self.state()?;
        let mut pruned = Pruned::default();
        let settled: Vec<(DeliveryId, WebhookId)> = state
            .deliveries
            .values()
            .filter(|d| d.status != DeliveryStatus::Pending && d.settled_at() < settled_before)
            .take(limit)
            .map(|d| (d.id, d.webhook_id))
            .collect();
        for (id, webhook) in settled {
            state.deliveries.remove(&id);
            if let Some(set) = state.of_webhook.get_mut(&webhook) {
                set.remove(&id);
                if set.is_empty() {
                    state.of_webhook.remove(&webhook);
                }
            }
            pruned.deliveries += 1;
        }
        let old: Vec<EventId> = state
            .events
            .values()
            .filter(|e| e.created_at < events_before)
            .take(limit)
            .map(|e| e.id)
            .collect();
        for id in old {
            state.events.remove(&id);
            pruned.events += 1;
        }
        let passed = state
            .cursors
            .values()
            .min()
            .copied()
            .unwrap_or(state.log_head);
        let gone: Vec<u64> = state
            .log
            .range(..=passed)
            .take(limit)
            .map(|(p, _)| *p)
            .collect();
        for position in gone {
            state.log.remove(&position);
            pruned.log_entries += 1;
        }
        Ok(pruned)
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn backup_to(&self, _dir: &std::path::Path) -> StoreResult<super::BackupSummary> {
        Err(StoreError::Unsupported {
            operation: "a backup",
            store: "the memory store",
            advice: "it keeps nothing on disk; back up wherever the program that embeds it \
                     keeps its data",
        })
    }
}
