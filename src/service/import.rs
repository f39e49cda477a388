//! Loading many jobs at once: each job is ingested as [`JobListingsService::upsert_jobs`] would
//! ingest it, but the work is arranged for volume.
//!
//! - Jobs are written in id order, so the store fills its tree from one end instead of
//!   touching a random page for every job (at a million jobs the tree no longer fits in
//!   sled's cache, and random writes were most of an import's time).
//! - Batches are written without a flush each ([`JobStore::write_jobs_deferred`]); one flush at
//!   the end makes the whole import durable.
//! - The search index is built on a copy, a batch at a time, on its own thread while the next
//!   batch is checked and written; the copy is compacted once and replaces the live index at
//!   the end, so searches never wait for the import and never see jobs not yet written.
//!
//! [`JobStore::write_jobs_deferred`]: crate::store::JobStore::write_jobs_deferred

use std::convert::Infallible;

use tokio::sync::mpsc;

use crate::domain::{DomainError, Job, JobId, NewJob};
use crate::store::StoreError;

use super::indexer::{indexing_failed, spawn_indexer};
use super::ingest::{checked_company, WriteTally};
use super::metrics::StoreWrite;
use super::reposts::Pending;
use super::{JobListingsService, ServiceError, ServiceResult};

/// Jobs checked and written per store transaction, by every import path: the offline import,
/// the admin bulk upload and the command that streams a file to a running server.
pub const IMPORT_BATCH: usize = 4_096;

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportSummary {
    /// Jobs that were not known before.
    pub created: usize,
    /// Jobs that replaced a stored version (a repeated id counts once created, then updated).
    pub updated: usize,
    /// Jobs announced to webhook subscribers: active for the first time while subscriptions
    /// exist (see [`IngestOutcome::announced`](super::IngestOutcome::announced)).
    pub announced: usize,
}

impl JobListingsService {
    /// Adds or updates many jobs, each as [`JobListingsService::upsert_jobs`] would (first
    /// seen and activation times, `job.new` events for webhook subscribers), built
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
        jobs: Vec<impl Into<NewJob>>,
        progress: impl Fn(usize) + Send + Sync,
    ) -> ServiceResult<ImportSummary> {
        let mut jobs: Vec<NewJob> = jobs.into_iter().map(Into::into).collect();
        {
            let companies = self.inner.catalog.read_companies();
            for (position, job) in jobs.iter().enumerate() {
                checked_company(job, &companies).map_err(|e| {
                    DomainError::new(
                        e.field,
                        format!("job {position} (id {}): {}", job.id, e.reason),
                    )
                })?;
            }
        }
        // Stable: of jobs with the same id, the later one is still written last.
        jobs.sort_by_key(|j| j.id);
        let mut rest = jobs.into_iter().peekable();
        let batches = std::iter::from_fn(move || {
            rest.peek()
                .is_some()
                .then(|| Ok::<_, Infallible>(next_batch(&mut rest)))
        });
        self.import_sorted_jobs(batches, progress)
            .await
            .map_err(|e| match e {
                ImportError::Service(e) => e,
                ImportError::Source(never) => match never {},
            })
    }

    /// Adds or updates jobs that arrive in batches in ascending id order, as
    /// [`JobListingsService::import_jobs`] does, without holding them all at once: a program
    /// that reads a large file can check it whole first, then read it again in id order, a
    /// batch at a time, while the batch before is written and indexed.
    ///
    /// `batches` is read on a thread of its own, one batch ahead of the writing. Within a
    /// batch the jobs may come in any order (of equal ids the later wins), but every batch's
    /// ids must come after every id of the batch before. Batches of a few thousand jobs
    /// write fastest.
    ///
    /// Each batch is checked as it arrives. An invalid job, a job whose company is unknown,
    /// a batch out of order, a failed write or an `Err` from `batches` stops the import: the
    /// batches written before stay written, durable and searchable, and `progress` (called
    /// with the number of jobs written so far after each batch) has said how many. A caller
    /// that needs all or nothing checks every job before the first batch.
    ///
    /// One function of about 90 lines: the loop overlaps reading, writing and indexing, and
    /// the state it threads through (the write in flight, the order check, the summary, the
    /// first failure) reads more plainly in one place than passed between helpers.
    pub async fn import_sorted_jobs<B, J, E>(
        &self,
        batches: B,
        progress: impl Fn(usize) + Send + Sync,
    ) -> Result<ImportSummary, ImportError<E>>
    where
        B: IntoIterator<Item = Result<Vec<J>, E>>,
        B::IntoIter: Send + 'static,
        J: Into<NewJob> + Send + 'static,
        E: Send + 'static,
    {
        let writes_lock = self.inner.catalog.ingest.lock().await;
        let now = self.now();
        // Converted on the reading thread, with the reading.
        let mut arriving = read_ahead(batches.into_iter().map(|batch| {
            batch.map(|jobs| jobs.into_iter().map(Into::into).collect::<Vec<NewJob>>())
        }));

        // As everywhere in the service, the index compacts only when told to: here once, at
        // the end.
        let (to_index, indexer) = spawn_indexer(self.inner.catalog.read_index().clone());

        let mut summary = ImportSummary::default();
        let mut written = 0;
        let mut writing: Option<Writing> = None;
        let mut failure = None;
        let mut order = BatchOrder::default();
        let mut imported = Pending::default();
        while let Some(arrived) = arriving.recv().await {
            let batch = match arrived
                .map_err(ImportError::Source)
                .and_then(|batch| order.check(batch).map_err(ImportError::Service))
            {
                Ok(batch) if batch.is_empty() => continue,
                Ok(batch) => batch,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            // The previous batch may still be on its way to the store: no id is in both, so
            // this batch's stored state is already what it will be, but for the jobs of that
            // batch a copy in this one regroups, which `imported` holds as that batch left
            // them (and copies are looked for among every batch's jobs: they reach the index
            // only at the end).
            let (writes, outcomes, tally) = match self
                .inner
                .catalog
                .prepare_job_writes(&self.inner.subscriptions, batch, now, Some(&mut imported))
                .await
            {
                Ok(prepared) => prepared,
                Err(e) => {
                    failure = Some(e.into());
                    break;
                }
            };
            if let Some(previous) = writing.take() {
                if let Err(e) = self
                    .finish_write(previous, &to_index, &mut written, &progress)
                    .await
                {
                    failure = Some(e.into());
                    break;
                }
            }
            for o in &outcomes {
                if o.created {
                    summary.created += 1;
                } else {
                    summary.updated += 1;
                }
                summary.announced += usize::from(o.announced);
            }
            let service = self.clone();
            writing = Some(tokio::spawn(async move {
                let store = &service.inner.catalog.store;
                service
                    .inner
                    .shared
                    .timed_write(StoreWrite::Jobs, store.write_jobs_deferred(&writes))
                    .await?;
                Ok((writes.into_iter().map(|w| w.job).collect(), tally))
            }));
        }
        // The reading thread stops at its next batch.
        drop(arriving);
        if let Some(last) = writing.take() {
            if let Err(e) = self
                .finish_write(last, &to_index, &mut written, &progress)
                .await
            {
                failure = failure.or(Some(e.into()));
            }
        }
        drop(to_index);

        let store = &self.inner.catalog.store;
        let flushed = self
            .inner
            .shared
            .timed_write(StoreWrite::Jobs, store.flush())
            .await;
        let indexed = indexer.await.map_err(indexing_failed);
        let indexed = match indexed {
            Ok(indexed) => indexed,
            Err(e) => return Err(failure.unwrap_or(ServiceError::from(e).into())),
        };
        let old = std::mem::replace(&mut *self.inner.catalog.write_index(), indexed);
        tokio::task::spawn_blocking(move || drop(old));
        drop(writes_lock);
        if summary.announced > 0 {
            self.inner.subscriptions.wake_deliveries();
        }
        match (failure, flushed) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(ServiceError::from(e).into()),
            (None, Ok(())) => Ok(summary),
        }
    }
}

/// Why [`JobListingsService::import_sorted_jobs`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError<E> {
    /// The batches' source failed.
    #[error("reading the jobs to import failed: {0}")]
    Source(E),
    /// The service refused a batch, or storage failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
}

/// Batches read on a blocking thread, one ahead of the one being written.
fn read_ahead<I, T>(batches: I) -> mpsc::Receiver<T>
where
    I: Iterator<Item = T> + Send + 'static,
    T: Send + 'static,
{
    let (sender, arriving) = mpsc::channel(1);
    tokio::task::spawn_blocking(move || {
        for batch in batches {
            if sender.blocking_send(batch).is_err() {
                break;
            }
        }
    });
    arriving
}

/// Holds each batch to coming after the one before, so that no id is in two batches.
#[derive(Default)]
struct BatchOrder {
    batches: usize,
    last: Option<JobId>,
}

impl BatchOrder {
    /// The batch sorted by id (stably: of equal ids the later stays later), if all of its ids
    /// come after the previous batch's.
    fn check(&mut self, mut batch: Vec<NewJob>) -> ServiceResult<Vec<NewJob>> {
        batch.sort_by_key(|j| j.id);
        self.batches += 1;
        if let (Some(first), Some(last)) = (batch.first(), self.last) {
            if first.id <= last {
                return Err(DomainError::new(
                    "jobs",
                    format!(
                        "batch {} holds job {}, which is not after job {last} of the batch \
                         before: batches must come in ascending id order",
                        self.batches, first.id
                    ),
                )
                .into());
            }
        }
        if let Some(l) = batch.last() {
            self.last = Some(l.id);
        }
        Ok(batch)
    }
}

/// Up to `IMPORT_BATCH` jobs, and then any more with the last one's id, so that no id is split
/// between two batches.
fn next_batch(rest: &mut std::iter::Peekable<std::vec::IntoIter<NewJob>>) -> Vec<NewJob> {
    let mut batch: Vec<NewJob> = rest.by_ref().take(IMPORT_BATCH).collect();
    if let Some(last) = batch.last().map(|j| j.id) {
        while let Some(same) = rest.next_if(|j| j.id == last) {
            batch.push(same);
        }
    }
    batch
}

/// A batch on its way to the store: its jobs and what they change in the counts.
type Writing = tokio::task::JoinHandle<ServiceResult<(Vec<Job>, WriteTally)>>;

impl JobListingsService {
    /// Waits for a batch's store write, counts its jobs as written and hands them to the
    /// indexer.
    async fn finish_write(
        &self,
        writing: Writing,
        to_index: &mpsc::Sender<Vec<Job>>,
        written: &mut usize,
        progress: &impl Fn(usize),
    ) -> ServiceResult<()> {
        let (jobs, tally) = writing
            .await
            .map_err(|e| StoreError::backend("writing imported jobs", e))??;
        self.inner.catalog.count_written(&tally);
        *written += jobs.len();
        progress(*written);
        // The indexer only stops early by panicking, which `indexer.await` reports.
        let _ = to_index.send(jobs).await;
        Ok(())
    }
}
