//! A store that passes every call to another (sled, PostgreSQL, any), with hooks at the calls a
//! race turns on: the delivery worker's read of due deliveries and its claims, the replica
//! follower's reads of the change feed, and a backup's copy. A hook may look (where a cursor
//! is) or hold the call at a barrier until the test lets it go, so a race is staged step by
//! step instead of with sleeps.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use job_listings::domain::{
    ApiKeyRecord, Company, CompanyId, Delivery, DeliveryId, EventId, Job, JobId, KeyId,
    LoggedEvent, OutboxEvent, Subscription, WebhookId,
};
use job_listings::store::{
    BackupSource, BackupSummary, Change, ChangeFeed, CompanyStore, DeliveryQueue, EventLog, FanOut,
    FanOutStore, FeedBounds, FeedEntry, IndexSnapshot, IndexSnapshotStore, JobFeedStore, JobStore,
    JobWrite, KeyStore, Pruned, Store, StoreError, StoreResult, UsageCounter, UsageStore,
    WebhookStore,
};

/// What a test does at the tapped calls. Every hook does nothing by default.
#[async_trait]
pub trait Tap: Send + Sync + 'static {
    /// The outbox was read for due deliveries; the worker gets `due` once this returns.
    async fn due_read(&self, _due: &[Delivery]) {}
    /// A delivery is about to be claimed for an attempt.
    async fn before_claim(&self, _id: DeliveryId) {}
    /// A claim was made: `claimed` says whether the caller got the delivery.
    async fn after_claim(&self, _id: DeliveryId, _claimed: bool) {}
    /// Up to `limit` changes of the feed are about to be read after position `after`: the
    /// follower has applied every change up to `after`.
    async fn before_changes(&self, _after: u64, _limit: usize) {}
    /// The change feed was read; the follower gets `changes` once this returns.
    async fn after_changes(&self, _after: u64, _limit: usize, _changes: &[Change]) {}
    /// Asked before a job write and a health probe's write: an error refuses the write, as
    /// a full disk would, without it reaching the inner store.
    fn refuse_write(&self) -> Option<StoreError> {
        None
    }
    /// A backup into `dir` is about to copy the store; an error fails the backup with it,
    /// before anything is copied.
    async fn before_backup(&self, _dir: &Path) -> StoreResult<()> {
        Ok(())
    }
    /// The backup into `dir` has copied the store, or failed to.
    async fn after_backup(&self, _dir: &Path) {}
}

/// A store that passes every call to `inner`, and the tapped ones through the [`Tap`] too.
pub struct TappedStore {
    inner: Arc<dyn Store>,
    tap: Arc<dyn Tap>,
}

impl TappedStore {
    pub fn new(inner: Arc<dyn Store>, tap: Arc<dyn Tap>) -> Self {
        Self { inner, tap }
    }
}

impl std::fmt::Debug for TappedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TappedStore")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl JobStore for TappedStore {
    async fn get_job(&self, id: JobId) -> StoreResult<Option<Arc<Job>>> {
        self.inner.get_job(id).await
    }

    async fn get_jobs(&self, ids: &[JobId]) -> StoreResult<Vec<Arc<Job>>> {
        self.inner.get_jobs(ids).await
    }

    async fn write_jobs(&self, writes: &[JobWrite]) -> StoreResult<()> {
        if let Some(refused) = self.tap.refuse_write() {
            return Err(refused);
        }
        self.inner.write_jobs(writes).await
    }

    async fn write_jobs_deferred(&self, writes: &[JobWrite]) -> StoreResult<()> {
        self.inner.write_jobs_deferred(writes).await
    }

    async fn flush(&self) -> StoreResult<()> {
        self.inner.flush().await
    }

    async fn scan_jobs(&self, after: Option<JobId>, limit: usize) -> StoreResult<Vec<Job>> {
        self.inner.scan_jobs(after, limit).await
    }

    async fn delete_job(&self, id: JobId) -> StoreResult<bool> {
        self.inner.delete_job(id).await
    }

    async fn jobs_version(&self) -> StoreResult<Option<u64>> {
        self.inner.jobs_version().await
    }

    async fn jobs_written_since(&self, version: u64) -> StoreResult<Option<Vec<JobId>>> {
        self.inner.jobs_written_since(version).await
    }
}

#[async_trait]
impl IndexSnapshotStore for TappedStore {
    async fn load_index_snapshot(&self) -> StoreResult<Option<IndexSnapshot>> {
        self.inner.load_index_snapshot().await
    }

    async fn save_index_snapshot(&self, snapshot: IndexSnapshot) -> StoreResult<()> {
        self.inner.save_index_snapshot(snapshot).await
    }
}

#[async_trait]
impl JobFeedStore for TappedStore {
    async fn feed_after(&self, after: u64, limit: usize) -> StoreResult<Vec<FeedEntry>> {
        self.inner.feed_after(after, limit).await
    }

    async fn feed_bounds(&self) -> StoreResult<FeedBounds> {
        self.inner.feed_bounds().await
    }

    async fn prune_feed(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize> {
        self.inner.prune_feed(before, limit).await
    }
}

#[async_trait]
impl CompanyStore for TappedStore {
    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>> {
        self.inner.get_company(id).await
    }

    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()> {
        self.inner.put_companies(companies).await
    }

    async fn delete_company(&self, id: CompanyId) -> StoreResult<bool> {
        self.inner.delete_company(id).await
    }

    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit: usize,
    ) -> StoreResult<Vec<Company>> {
        self.inner.scan_companies(after, limit).await
    }
}

#[async_trait]
impl KeyStore for TappedStore {
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()> {
        self.inner.put_key(key).await
    }

    async fn get_key(&self, id: KeyId) -> StoreResult<Option<ApiKeyRecord>> {
        self.inner.get_key(id).await
    }

    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>> {
        self.inner.scan_keys().await
    }
}

#[async_trait]
impl UsageStore for TappedStore {
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()> {
        self.inner.put_usage(counters).await
    }

    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>> {
        self.inner.scan_usage().await
    }

    async fn swap_usage(
        &self,
        expected: Option<UsageCounter>,
        new: UsageCounter,
    ) -> StoreResult<bool> {
        self.inner.swap_usage(expected, new).await
    }

    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>> {
        self.inner.get_usage(key_id).await
    }
}

#[async_trait]
impl WebhookStore for TappedStore {
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()> {
        self.inner.put_webhook(webhook).await
    }

    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool> {
        self.inner.delete_webhook(id).await
    }

    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Subscription>> {
        self.inner.get_webhook(id).await
    }

    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>> {
        self.inner.scan_webhooks().await
    }
}

#[async_trait]
impl EventLog for TappedStore {
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()> {
        self.inner.put_event(event).await
    }

    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>> {
        self.inner.get_event(id).await
    }

    async fn log_head(&self) -> StoreResult<u64> {
        self.inner.log_head().await
    }

    async fn log_after(&self, after: u64, limit: usize) -> StoreResult<Vec<LoggedEvent>> {
        self.inner.log_after(after, limit).await
    }
}

#[async_trait]
impl FanOutStore for TappedStore {
    async fn fan_out_cursors(&self) -> StoreResult<Vec<(WebhookId, u64)>> {
        self.inner.fan_out_cursors().await
    }

    async fn pending_count(&self, webhook: WebhookId) -> StoreResult<usize> {
        self.inner.pending_count(webhook).await
    }

    async fn fan_out(&self, step: &FanOut) -> StoreResult<bool> {
        self.inner.fan_out(step).await
    }
}

#[async_trait]
impl DeliveryQueue for TappedStore {
    async fn due_deliveries(
        &self,
        due: DateTime<Utc>,
        per_subscription: usize,
    ) -> StoreResult<Vec<Delivery>> {
        let read = self.inner.due_deliveries(due, per_subscription).await?;
        self.tap.due_read(&read).await;
        Ok(read)
    }

    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>> {
        self.inner.deliveries_of(webhook, limit).await
    }

    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>> {
        self.inner.get_delivery(id).await
    }

    async fn claim_delivery(
        &self,
        id: DeliveryId,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        self.tap.before_claim(id).await;
        let claimed = self.inner.claim_delivery(id, now, until).await?;
        self.tap.after_claim(id, claimed.is_some()).await;
        Ok(claimed)
    }

    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()> {
        self.inner.put_delivery(delivery).await
    }

    async fn prune(
        &self,
        settled_before: DateTime<Utc>,
        events_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Pruned> {
        self.inner.prune(settled_before, events_before, limit).await
    }
}

#[async_trait]
impl ChangeFeed for TappedStore {
    async fn head(&self) -> StoreResult<u64> {
        self.feed().head().await
    }

    async fn changes_after(&self, after: u64, limit: usize) -> StoreResult<Vec<Change>> {
        self.tap.before_changes(after, limit).await;
        let changes = self.feed().changes_after(after, limit).await?;
        self.tap.after_changes(after, limit, &changes).await;
        Ok(changes)
    }

    async fn wait(&self, timeout: std::time::Duration) {
        self.feed().wait(timeout).await;
    }
}

impl TappedStore {
    /// The inner store's change feed; only called when it has one.
    fn feed(&self) -> &dyn ChangeFeed {
        self.inner
            .change_feed()
            .expect("the tapped store has a change feed")
    }
}

#[async_trait]
impl Store for TappedStore {
    fn change_feed(&self) -> Option<&dyn ChangeFeed> {
        self.inner.change_feed().map(|_| self as &dyn ChangeFeed)
    }

    async fn probe_write(&self) -> StoreResult<()> {
        if let Some(refused) = self.tap.refuse_write() {
            return Err(refused);
        }
        self.inner.probe_write().await
    }

    async fn backup_to(&self, dir: &Path) -> StoreResult<BackupSummary> {
        self.tap.before_backup(dir).await?;
        let copied = self.inner.backup_to(dir).await;
        self.tap.after_backup(dir).await;
        copied
    }

    async fn backup_source(&self) -> StoreResult<BackupSource> {
        self.inner.backup_source().await
    }
}
