//! Loading many jobs at once: each job is ingested as [`JobListingsService::upsert_jobs`] would
//! ingest it, but the work is arranged for volume.
//!
//! - Jobs are written in id order, so the store fills its tree from one end instead of
//!   touching a random page for every job (at a million jobs the tree no longer fits in
//!   sled's cache, and random writes were most of an import's time).
//! - Batches are written without a flush each ([`Store::write_jobs_deferred`]); one flush at
//!   the end makes the whole import durable.
//! - The search index is built on a copy, a batch at a time, on its own thread while the next
//!   batch is checked and written; the copy is compacted once and replaces the live index at
//!   the end, so searches never wait for the import and never see jobs not yet written.
//!
//! [`Store::write_jobs_deferred`]: crate::store::Store::write_jobs_deferred

use tokio::sync::mpsc;

use crate::domain::{DomainError, Job};
use crate::store::StoreError;

use super::indexer::{indexing_failed, spawn_indexer};
use super::ingest::checked_company;
use super::{JobListingsService, ServiceResult};

/// Jobs checked and written per store transaction.
const BATCH: usize = 4_096;

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Jobs that were not known before.
    pub created: usize,
    /// Jobs that replaced a stored version (a repeated id counts once created, then updated).
    pub updated: usize,
    /// Webhook deliveries queued for jobs that became active for the first time.
    pub deliveries: usize,
}

impl JobListingsService {
    /// Adds or updates many jobs, each as [`JobListingsService::upsert_jobs`] would (first
    /// seen and activation times, `job.new` events for every matching subscription), built
    /// for bulk loads.
    ///
    /// Every job is checked before any is written: an invalid job, or one whose company is
    /// unknown, fails the import with nothing written, and the error names the job's position
    /// in `jobs`. When the same id occurs more than once, the later job wins. `progress` is
    /// called with the number of jobs written so far after each batch.
    ///
    /// The import is durable when it returns. Other job writes wait until it ends; searches
    /// do not, and see every imported job at once when it ends (the additions are indexed on
    /// a copy of the index, so memory holds the index twice meanwhile). Should storage fail
    /// midway, the batches written before stay written and searchable, and the error is
    /// returned.
    pub async fn import_jobs(
        &self,
        mut jobs: Vec<Job>,
        progress: impl Fn(usize) + Send + Sync,
    ) -> ServiceResult<ImportSummary> {
        let writes_lock = self.inner.ingest.lock().await;
        let now = self.now();
        {
            let companies = self.read_companies();
            for (position, job) in jobs.iter().enumerate() {
                checked_company(job, &companies).map_err(|e| DomainError {
                    field: e.field,
                    reason: format!("job {position} (id {}): {}", job.id, e.reason),
                })?;
            }
        }
        // Stable: of jobs with the same id, the later one is still written last.
        jobs.sort_by_key(|j| j.id);

        // As everywhere in the service, the index compacts only when told to: here once, at
        // the end.
        let (to_index, indexer) = spawn_indexer(self.read_index().clone());

        let mut summary = ImportSummary::default();
        let mut written = 0;
        let mut writing: Option<tokio::task::JoinHandle<ServiceResult<Vec<Job>>>> = None;
        let mut failure = None;
        let mut rest = jobs.into_iter().peekable();
        while rest.peek().is_some() {
            let batch = next_batch(&mut rest);
            // The previous batch may still be on its way to the store: no id is in both, so
            // this batch's stored state is already what it will be.
            let (writes, outcomes) = match self.prepare_job_writes(batch, now).await {
                Ok(prepared) => prepared,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            if let Some(previous) = writing.take() {
                if let Err(e) = finish_write(previous, &to_index, &mut written, &progress).await {
                    failure = Some(e);
                    break;
                }
            }
            for o in &outcomes {
                if o.created {
                    summary.created += 1;
                } else {
                    summary.updated += 1;
                }
                summary.deliveries += o.deliveries;
            }
            let store = self.inner.store.clone();
            writing = Some(tokio::spawn(async move {
                store.write_jobs_deferred(&writes).await?;
                Ok(writes.into_iter().map(|w| w.job).collect())
            }));
        }
        if let Some(last) = writing.take() {
            if let Err(e) = finish_write(last, &to_index, &mut written, &progress).await {
                failure = failure.or(Some(e));
            }
        }
        drop(to_index);

        let flushed = self.inner.store.flush().await;
        let indexed = indexer.await.map_err(indexing_failed)??;
        let old = std::mem::replace(&mut *self.write_index(), indexed);
        tokio::task::spawn_blocking(move || drop(old));
        drop(writes_lock);
        if summary.deliveries > 0 {
            self.wake_deliveries();
        }
        match (failure, flushed) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(e.into()),
            (None, Ok(())) => Ok(summary),
        }
    }
}

/// Up to `BATCH` jobs, and then any more with the last one's id, so that no id is split
/// between two batches.
fn next_batch(rest: &mut std::iter::Peekable<std::vec::IntoIter<Job>>) -> Vec<Job> {
    let mut batch: Vec<Job> = rest.by_ref().take(BATCH).collect();
    if let Some(last) = batch.last().map(|j| j.id) {
        while let Some(same) = rest.next_if(|j| j.id == last) {
            batch.push(same);
        }
    }
    batch
}

/// Waits for a batch's store write, counts its jobs as written and hands them to the indexer.
async fn finish_write(
    writing: tokio::task::JoinHandle<ServiceResult<Vec<Job>>>,
    to_index: &mpsc::Sender<Vec<Job>>,
    written: &mut usize,
    progress: &impl Fn(usize),
) -> ServiceResult<()> {
    let jobs = writing
        .await
        .map_err(|e| StoreError::Backend(format!("writing imported jobs failed: {e}")))??;
    *written += jobs.len();
    progress(*written);
    // The indexer only stops early by panicking, which `indexer.await` reports.
    let _ = to_index.send(jobs).await;
    Ok(())
}
