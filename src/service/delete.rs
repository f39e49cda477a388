//! Deleting jobs and companies: an operator's calls (not metered), made under the ingest lock
//! so that no job write slips between the check, the store and the index.

use std::sync::Arc;

use super::metrics::StoreWrite;
use super::{Catalog, ServiceError, ServiceResult};
use crate::domain::{CompanyId, JobId};

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
    pub(super) async fn delete_job(self: &Arc<Self>, id: JobId) -> ServiceResult<()> {
        let writes = self.ingest.lock().await;
        let store = &self.store;
        // Whether it counts among the closed jobs (an operator's call: one read more is fine).
        let closed = store.get_job(id).await?.is_some_and(|j| !j.is_active());
        if !self
            .shared
            .timed_write(StoreWrite::Jobs, store.delete_job(id))
            .await?
        {
            return Err(ServiceError::NotFound { resource: "job" });
        }
        if closed {
            self.shared.stats.closed_jobs.record(&[(id, -1)]);
        }
        self.write_index().remove(id);
        self.compact_index_if_due(&writes).await;
        Ok(())
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
        let active_jobs = self.read_index().active_jobs_of(id);
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
