//! Deleting jobs and companies: an operator's calls (not metered), made under the ingest lock
//! so that no job write slips between the check, the store and the index.

use std::sync::Arc;

use super::ingest::WriteTally;
use super::metrics::StoreWrite;
use super::reposts::Batch;
use super::{Catalog, ServiceError, ServiceResult, Subscriptions};
use crate::domain::{CompanyId, JobId};
use crate::query::{JobFilter, Reposts};

impl Catalog {
    /// Deletes a job for good: from the store, durably, and from the search index at once,
    /// so no search answered after this returns lists it, and reading it answers not found.
    /// Unlike [`JobListingsService::close_job`], nothing of it stays on record.
    ///
    /// Webhook deliveries already made for it are still sent (each event carries its own copy
    /// of the job); a `job.new` not yet fanned out is sent to no one. On a shared store the
    /// other replicas drop it from their indexes as they follow the change feed.
    ///
    /// An unknown id is [`ServiceError::NotFound`].
    /// The rest of its group of copies is settled again: if it led, the next copy leads.
    pub(super) async fn delete_job(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        id: JobId,
    ) -> ServiceResult<()> {
        let writes_lock = self.ingest.lock().await;
        let store = &self.store;
        let stored = store.get_job(id).await?;
        if !self
            .shared
            .timed_write(StoreWrite::Jobs, store.delete_job(id))
            .await?
        {
            return Err(ServiceError::NotFound { resource: "job" });
        }
        // Whether it counted among the closed jobs.
        if stored.as_ref().is_some_and(|j| !j.is_active()) {
            self.shared.stats.closed_jobs.record(&[(id, -1)]);
        }
        self.write_index().remove(id);
        let mut writes = Vec::new();
        let mut tally = WriteTally::default();
        if let Some(stored) = stored.filter(|j| j.repost_of.is_some() || !j.reposts.is_empty()) {
            self.group_copies(Batch {
                writes: &mut writes,
                outcomes: &mut Vec::new(),
                tally: &mut tally,
                stored: &Default::default(),
                deleted: vec![stored],
                announcing: &subscriptions.announced_kinds(),
                now: self.shared.now(),
                pending: None,
            })
            .await?;
        }
        self.write_regrouped(&writes, &tally, &writes_lock).await
    }

    /// Deletes a company, durably, and from the catalog at once.
    ///
    /// Refused with [`ServiceError::CompanyHasJobs`] while any active job names it: delete
    /// or close those first. Closed jobs do not hold it back: they stay on record with the
    /// company's name as it was when they were written, and a job's detail then shows no
    /// company record (`JobDetail::company` is `None`). Such a job can be written again
    /// only once its company is added again.
    ///
    /// An unknown id is [`ServiceError::NotFound`]. On a shared store the check is this
    /// replica's: another replica that has not yet seen the deletion may still take a job
    /// for the company meanwhile (it is then shown without a company record, as a closed one
    /// is).
    pub(super) async fn delete_company(&self, id: CompanyId) -> ServiceResult<()> {
        // Held throughout: every job write checks its company under this lock, so none
        // names the company between the count and the deletion.
        let _writes = self.ingest.lock().await;
        // Reposts too: each is an active job of the company.
        let every_copy = JobFilter::default()
            .company_id(id)
            .reposts(Reposts::Include);
        let active_jobs = self.read_index().search_top(&every_copy, 0).total;
        if active_jobs > 0 {
            return Err(ServiceError::CompanyHasJobs {
                company: id,
                active_jobs,
            });
        }
        let store = &self.store;
        let deleted = self
            .shared
            .timed_write(StoreWrite::Companies, store.delete_company(id))
            .await?;
        let cached = self
            .companies
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
            .is_some();
        match deleted || cached {
            true => Ok(()),
            false => Err(ServiceError::NotFound {
                resource: "company",
            }),
        }
    }
}
