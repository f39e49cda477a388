//! Follows the change feed of a store shared with other replicas, so this process's search
//! index, companies, keys and subscriptions take in what the others write and delete.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::{
    secrets, Access, Catalog, Inner, JobListingsService, ServiceError, ServiceResult, Subscriptions,
};
use crate::domain::{CompanyId, JobId, KeyId, Subscription, WebhookId};
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
        service.inner.shared.stats.follower.record(position, newest);
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
    /// Brings one record's in-memory state in line with the store, in the part that keeps
    /// it. Idempotent, so applying a change this process made itself is harmless.
    async fn apply(&self, record: ChangedRecord) -> ServiceResult<()> {
        let inner = &self.inner;
        match record {
            ChangedRecord::Job(id) => inner.catalog.take_in_job(id).await,
            ChangedRecord::Company(id) => inner.catalog.take_in_company(id).await,
            ChangedRecord::Key(id) => inner.access.take_in_key(id).await,
            ChangedRecord::Webhook(id) => inner
                .subscriptions
                .take_in_webhook(&inner.access, id)
                .await
                .map(drop),
        }
    }
}

impl Catalog {
    /// Brings a job from the store into the search index, or out of it (closed or deleted).
    async fn take_in_job(self: &Arc<Self>, id: JobId) -> ServiceResult<()> {
        let writes = self.ingest.lock().await;
        let job = self.store.get_job(id).await?;
        let closed = job.as_ref().is_some_and(|j| !j.is_active());
        match job.filter(|j| j.is_active()) {
            Some(job) => self.write_index().upsert(&job),
            None => {
                // An active job another replica closed. (Which jobs it stores
                // closed from the start, this replica cannot tell from an update.)
                if self.write_index().remove(id) && closed {
                    self.shared.stats.closed_jobs.record(&[(id, 1)]);
                }
            }
        }
        self.compact_index_if_due(&writes).await;
        Ok(())
    }

    /// Brings a company from the store into memory, or drops it (deleted by another replica).
    async fn take_in_company(&self, id: CompanyId) -> ServiceResult<()> {
        let company = self.store.get_company(id).await?;
        let mut companies = self.companies.write().unwrap_or_else(|e| e.into_inner());
        match company {
            Some(company) => companies.insert(id, Arc::new(company)),
            None => companies.remove(&id),
        };
        Ok(())
    }
}

impl Access {
    /// Brings a key's record from the store into this process's memory.
    async fn take_in_key(&self, id: KeyId) -> ServiceResult<()> {
        if let Some(record) = self.store.get_key(id).await? {
            self.keys.refresh(record);
        }
        Ok(())
    }
}

impl Subscriptions {
    /// Brings a subscription from the store into this process's memory (or drops it, gone
    /// from the store), with its owner's key when `access` does not know it yet; returns it
    /// as stored. The follower does this for every change; fan-out and delivery do it ahead
    /// of the follower for a subscription registered on another replica moments ago, so the
    /// jobs announced to it are sent at once rather than when the change feed brings it.
    pub(super) async fn take_in_webhook(
        &self,
        access: &Access,
        id: WebhookId,
    ) -> ServiceResult<Option<Subscription>> {
        let Some(stored) = self.store.get_webhook(id).await? else {
            self.write_webhooks().remove(&id);
            return Ok(None);
        };
        let sub = secrets::open(stored, self.shared.config.secret_key.as_ref())?;
        if access.keys.find(sub.owner).is_none() {
            access.take_in_key(sub.owner).await?;
        }
        self.write_webhooks().insert(id, sub.clone());
        Ok(Some(sub))
    }
}
