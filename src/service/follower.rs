//! Follows the change feed of a store shared with other replicas, so this process's search
//! index, companies, keys and subscriptions take in what the others write and delete.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::{secrets, Inner, JobListingsService, ServiceError, ServiceResult};
use crate::domain::{KeyId, Subscription, WebhookId};
use crate::store::{ChangedRecord, Store, StoreError};

/// Changes read per round trip.
const BATCH: usize = 1_000;

/// Applies changes after `position` until stopped: as soon as the store announces them, and
/// at least every `poll` (the catch-up read that covers a lost notification or connection).
pub(super) async fn follow(
    inner: Weak<Inner>,
    store: Arc<dyn Store>,
    mut position: u64,
    poll: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let Some(feed) = store.change_feed() else {
        return;
    };
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let service = JobListingsService { inner: strong };
        let mut full = false;
        // The newest change known: the last one read, or the feed's head when more wait.
        let mut newest = position;
        match feed.changes_after(position, BATCH).await {
            Ok(changes) => {
                full = changes.len() == BATCH;
                newest = changes.last().map_or(position, |c| c.position);
                for change in changes {
                    match service.apply(change.record).await {
                        Ok(()) => {}
                        // Reading it again will not help (a record sealed with another secret
                        // key, say): skip it, loudly, rather than stop following.
                        Err(e @ ServiceError::Store(StoreError::Corrupt { .. })) => {
                            tracing::error!(error = %e, ?change, "another replica's change cannot be read; skipped");
                        }
                        Err(e) => {
                            // Not applied: read it again next round rather than skip it.
                            tracing::error!(error = %e, ?change, "applying another replica's change failed; will retry");
                            break;
                        }
                    }
                    position = change.position;
                }
            }
            Err(e) => tracing::error!(error = %e, "reading the change feed failed; will retry"),
        }
        if full {
            newest = feed.head().await.unwrap_or(newest);
        }
        service.inner.stats.follower.record(position, newest);
        drop(service);
        if full {
            continue;
        }
        tokio::select! {
            _ = feed.wait(poll) => {}
            _ = stop.changed() => return,
        }
    }
}

impl JobListingsService {
    /// Brings one record's in-memory state in line with the store. Idempotent, so applying a
    /// change this process made itself is harmless.
    async fn apply(&self, record: ChangedRecord) -> ServiceResult<()> {
        let store = &self.inner.store;
        match record {
            ChangedRecord::Job(id) => {
                let writes = self.inner.catalog.ingest.lock().await;
                let job = store.get_job(id).await?;
                let closed = job.as_ref().is_some_and(|j| !j.is_active());
                match job.filter(|j| j.is_active()) {
                    Some(job) => self.write_index().upsert(&job),
                    None => {
                        // An active job another replica closed. (Which jobs it stores
                        // closed from the start, this replica cannot tell from an update.)
                        if self.write_index().remove(id) && closed {
                            self.inner.stats.closed_jobs.record(&[(id, 1)]);
                        }
                    }
                }
                self.compact_index_if_due(&writes).await;
            }
            ChangedRecord::Company(id) => {
                let company = store.get_company(id).await?;
                let mut companies = self
                    .inner
                    .catalog
                    .companies
                    .write()
                    .unwrap_or_else(|e| e.into_inner());
                match company {
                    Some(company) => companies.insert(id, Arc::new(company)),
                    // Deleted by another replica.
                    None => companies.remove(&id),
                };
            }
            ChangedRecord::Key(id) => self.take_in_key(id).await?,
            ChangedRecord::Webhook(id) => {
                self.take_in_webhook(id).await?;
            }
        }
        Ok(())
    }

    /// Brings a key's record from the store into this process's memory.
    async fn take_in_key(&self, id: KeyId) -> ServiceResult<()> {
        if let Some(record) = self.inner.store.get_key(id).await? {
            self.inner.access.keys.refresh(record);
        }
        Ok(())
    }

    /// Brings a subscription from the store into this process's memory (or drops it, gone
    /// from the store), with its owner's key when that is not known here yet; returns it as
    /// stored. The follower does this for every change; fan-out and delivery do it ahead of
    /// the follower for a subscription registered on another replica moments ago, so the
    /// jobs announced to it are sent at once rather than when the change feed brings it.
    pub(super) async fn take_in_webhook(
        &self,
        id: WebhookId,
    ) -> ServiceResult<Option<Subscription>> {
        let Some(stored) = self.inner.store.get_webhook(id).await? else {
            self.write_webhooks().remove(&id);
            return Ok(None);
        };
        let sub = secrets::open(stored, self.inner.config.secret_key.as_ref())?;
        if self.inner.access.keys.find(sub.owner).is_none() {
            self.take_in_key(sub.owner).await?;
        }
        self.write_webhooks().insert(id, sub.clone());
        Ok(Some(sub))
    }
}
