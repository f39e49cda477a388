use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::MutexGuard;

use super::indexer::indexing_failed;
use super::metrics::{JobsWritten, StoreWrite};
use super::reposts::{Batch, Pending};
use super::{Catalog, ServiceError, ServiceResult, Subscriptions};
use crate::domain::{
    changed_at, ChangeKind, Company, CompanyId, DomainError, Job, JobId, JobStatus, NewJob,
};
use crate::query::{JobIndex, PreparedJobs};
use crate::store::{DecidedOn, JobWrite};
use crate::webhooks::job_event;

/// What one ingested job did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IngestOutcome {
    /// The job's id.
    pub id: JobId,
    /// It was not known before.
    pub created: bool,
    /// It became active for the first time while webhook subscriptions exist (or may exist:
    /// on a store shared by replicas, always), so a `job.new` event was logged for them; the
    /// delivery worker sends it to those that match.
    pub announced: bool,
}

impl Catalog {
    /// Adds or updates companies. Their jobs' company names follow on the jobs' next ingest.
    pub(super) async fn upsert_companies(&self, companies: Vec<Company>) -> ServiceResult<()> {
        let now = self.shared.now();
        let mut companies = companies;
        {
            let known = self.read_companies();
            for c in &mut companies {
                c.validate()?;
                c.updated_at = known
                    .get(&c.id)
                    .map_or(now, |k| changed_at(k.updated_at, now));
            }
        }
        let store = &self.store;
        self.shared
            .timed_write(StoreWrite::Companies, store.put_companies(&companies))
            .await?;
        let mut cache = self.companies.write().unwrap_or_else(|e| e.into_inner());
        for c in companies {
            cache.insert(c.id, Arc::new(c));
        }
        Ok(())
    }

    /// Adds or updates one company.
    pub(super) async fn upsert_company(&self, company: Company) -> ServiceResult<()> {
        self.upsert_companies(vec![company]).await
    }

    /// Whether a company with this id is stored: for loaders that report what they created and
    /// what they updated. Not metered (an operator's call, not a customer's).
    pub(super) fn has_company(&self, id: CompanyId) -> bool {
        self.read_companies().contains_key(&id)
    }

    /// How many companies are stored. Not metered.
    pub(super) fn company_count(&self) -> usize {
        self.read_companies().len()
    }

    /// Adds or updates one job; see [`JobListingsService::upsert_jobs`].
    pub(super) async fn upsert_job(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        job: impl Into<NewJob>,
    ) -> ServiceResult<IngestOutcome> {
        let mut outcomes = self.upsert_jobs(subscriptions, vec![job]).await?;
        outcomes
            .pop()
            .ok_or_else(|| ServiceError::InvalidInput(DomainError::new("jobs", "nothing ingested")))
    }

    /// Adds or updates jobs in one durable write. Each job's company must already exist. A job
    /// that becomes active for the first time logs a `job.new` event in the same transaction
    /// (when any subscription is active), one per job whatever the number of subscriptions:
    /// the delivery worker fans it out to the matching ones. All or nothing: one invalid job
    /// rejects the batch. A stored [`Job`] converts into the [`NewJob`] taken.
    pub(super) async fn upsert_jobs(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        jobs: Vec<impl Into<NewJob>>,
    ) -> ServiceResult<Vec<IngestOutcome>> {
        self.upsert(subscriptions, jobs, true).await
    }

    /// Adds or updates jobs as [`JobListingsService::upsert_jobs`] does, searchable at once,
    /// but durable only once [`JobListingsService::flush_jobs`] (or a later durable write)
    /// returns: for streams of batches that pay for durability once, at the end, before they
    /// acknowledge anything. A crash before then may lose the latest batches, never part of
    /// one.
    pub(super) async fn upsert_jobs_deferred(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        jobs: Vec<impl Into<NewJob>>,
    ) -> ServiceResult<Vec<IngestOutcome>> {
        self.upsert(subscriptions, jobs, false).await
    }

    /// Makes every job write so far durable.
    pub(super) async fn flush_jobs(&self) -> ServiceResult<()> {
        let store = &self.store;
        Ok(self
            .shared
            .timed_write(StoreWrite::Jobs, store.flush())
            .await?)
    }

    /// Writes jobs, durably or not; the jobs' events are announced to `subscriptions`.
    async fn upsert(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        jobs: Vec<impl Into<NewJob>>,
        durable: bool,
    ) -> ServiceResult<Vec<IngestOutcome>> {
        let jobs: Vec<NewJob> = jobs.into_iter().map(Into::into).collect();
        let _ingest = self.ingest.lock().await;
        let (writes, outcomes, tally) = self
            .prepare_job_writes(subscriptions, jobs, self.shared.now(), None)
            .await?;
        // A job sent again unchanged only moves when it was last seen: no need to index it
        // again, where the index holds it.
        let unchanged = |w: &JobWrite| w.change.is_none() && w.job.is_active();
        // A batch's words are gathered while it is written: most of indexing it, done
        // before any lock on the index is taken.
        let prepared = (writes.len() >= PREPARE_FROM).then(|| {
            let jobs: Vec<Job> = writes
                .iter()
                .filter(|w| !unchanged(w))
                .map(|w| w.job.clone())
                .collect();
            tokio::task::spawn_blocking(move || prepare_in_parts(jobs))
        });
        let store = &self.store;
        if durable {
            self.shared
                .timed_write(StoreWrite::Jobs, store.write_jobs(&writes))
                .await?;
        } else {
            self.shared
                .timed_write(StoreWrite::Jobs, store.write_jobs_deferred(&writes))
                .await?;
        }
        self.count_written(&tally);
        let touch = |w: &JobWrite| {
            // Not indexed (closed, say): indexed whole.
            unchanged(w) && self.write_index().touch(w.job.id, w.job.last_seen())
        };
        match prepared {
            Some(prepared) => {
                for part in prepared.await.map_err(indexing_failed)? {
                    // One part per lock: searches wait for one part's numbering at most.
                    let added = self.write_index().add_prepared(part);
                    drop(added);
                }
                for w in writes.iter().filter(|w| unchanged(w)) {
                    if !touch(w) {
                        self.write_index().upsert(&w.job);
                    }
                }
            }
            None => {
                for w in &writes {
                    // One job per lock: searches wait for one job's update at most.
                    if !touch(w) {
                        self.write_index().upsert(&w.job);
                    }
                }
            }
        }
        self.compact_index_if_due(&_ingest).await;
        if writes.iter().any(|w| !w.events.is_empty()) {
            subscriptions.wake_deliveries();
        }
        Ok(outcomes)
    }

    /// Checks jobs and turns them into their stored state and outbox events, as of `now`,
    /// against the store's current state of each, with what writing them changes in the
    /// counts; the caller holds the ingest lock. Copies of a job already written are looked
    /// for in the index and in `pending`, which takes this batch's jobs in turn.
    pub(super) async fn prepare_job_writes(
        &self,
        subscriptions: &Subscriptions,
        jobs: Vec<NewJob>,
        now: DateTime<Utc>,
        pending: Option<&mut Pending>,
    ) -> ServiceResult<(Vec<JobWrite>, Vec<IngestOutcome>, WriteTally)> {
        let previous: HashMap<JobId, Arc<Job>> = self
            .store
            .get_jobs(&jobs.iter().map(|j| j.id).collect::<Vec<_>>())
            .await?
            .into_iter()
            .map(|j| (j.id, j))
            .collect();
        let mut writes = Vec::with_capacity(jobs.len());
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut tally = WriteTally::default();
        // Nobody to announce to: no event, as a bulk load with no subscriptions would log a
        // million for nothing. Who receives what is decided at fan-out. A store shared with
        // other replicas always gets the events: a subscription registered on another one
        // moments ago may not have reached this one's memory yet, and its cursor already
        // stands before this job.
        let announcing = subscriptions.announced_kinds();
        {
            let companies = self.read_companies();
            let mut seen = std::collections::HashSet::new();
            // Jobs twice in one batch: the second changes what the first left.
            let mut earlier: HashMap<JobId, Job> = HashMap::new();
            for new in jobs {
                let company = checked_company(&new, &companies)?;
                let prev = previous.get(&new.id);
                let created = prev.is_none() && seen.insert(new.id);
                // What the job was before this write: as stored, or as an earlier occurrence
                // in this batch left it, whose `updated_at` this one must move past.
                let before = earlier.get(&new.id).or(prev.map(|p| &**p));
                let activated_at = before
                    .and_then(|b| b.activated_at)
                    .or_else(|| new.is_active().then_some(now));
                let mut job = new.into_stored(
                    company.name.clone(),
                    before.map_or(now, |b| b.first_seen_at),
                    activated_at,
                    before.map_or(now, |b| changed_at(b.updated_at, now)),
                );
                job.last_seen_at = Some(now);
                // Its group stays as it was; grouping below settles it if this changes it.
                if let Some(b) = before {
                    job.repost_of = b.repost_of;
                    job.reposts = b.reposts.clone();
                    job.last_posted_at = b.last_posted_at;
                }
                // The same job sent again is no change: it keeps its `updated_at` (and so its
                // ETag), and the change feed has nothing to report; only `last_seen_at` moves.
                if let Some(b) = before.filter(|b| b.same_content(&job)) {
                    job.updated_at = b.updated_at;
                }
                let change = ChangeKind::of_write(before, &job);
                let decided_on = DecidedOn::Read(before.map(|b| b.updated_at));
                earlier.insert(job.id, job.clone());
                // A job is announced the first time it is active (new and active, or known
                // but never active before), and then as it changes and closes.
                let events = match change {
                    Some(kind) if announcing.contains(&kind) => vec![job_event(kind, now)],
                    _ => Vec::new(),
                };
                outcomes.push(IngestOutcome {
                    id: job.id,
                    created,
                    announced: !events.is_empty(),
                });
                tally.add(&job, prev.map(|p| p.is_active()), created);
                writes.push(JobWrite {
                    job,
                    events,
                    change,
                    decided_on,
                });
            }
        }
        self.group_copies(Batch {
            writes: &mut writes,
            outcomes: &mut outcomes,
            tally: &mut tally,
            stored: &previous,
            deleted: Vec::new(),
            announcing: &announcing,
            now,
            pending,
        })
        .await?;
        Ok((writes, outcomes, tally))
    }

    /// Counts jobs the store has taken; the caller holds the ingest lock.
    pub(super) fn count_written(&self, tally: &WriteTally) {
        self.shared.metrics.jobs_written(tally.written);
        self.shared.stats.closed_jobs.record(&tally.closed_changes);
    }

    /// Closes a job: it stays on record but is no longer searchable. A closed job is
    /// returned as it is, unchanged.
    pub(super) async fn close_job(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        id: JobId,
    ) -> ServiceResult<Job> {
        let ingest = self.ingest.lock().await;
        let stored = self
            .store
            .get_job(id)
            .await?
            .ok_or(ServiceError::NotFound { resource: "job" })?;
        if !stored.is_active() {
            return Ok(Arc::unwrap_or_clone(stored));
        }
        let mut closed = self
            .close_active(subscriptions, vec![stored], &ingest)
            .await?;
        Ok(closed.swap_remove(0))
    }

    /// Closes active jobs in one durable write, each announced as `job.closed`, and hands the
    /// lead of their groups on; the caller holds the ingest lock (`ingest`). Returns them
    /// closed, in the order given.
    pub(super) async fn close_active(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        jobs: Vec<Arc<Job>>,
        ingest: &MutexGuard<'_, ()>,
    ) -> ServiceResult<Vec<Job>> {
        let now = self.shared.now();
        let announcing = subscriptions.announced_kinds();
        let mut tally = WriteTally::default();
        let mut writes: Vec<JobWrite> = jobs
            .iter()
            .map(|stored| {
                let mut job = (**stored).clone();
                job.status = JobStatus::Closed;
                job.updated_at = changed_at(stored.updated_at, now);
                tally.add(&job, Some(true), false);
                JobWrite {
                    job,
                    events: match announcing.contains(&ChangeKind::Closed) {
                        true => vec![job_event(ChangeKind::Closed, now)],
                        false => Vec::new(),
                    },
                    change: Some(ChangeKind::Closed),
                    decided_on: DecidedOn::Read(Some(stored.updated_at)),
                }
            })
            .collect();
        let closing = jobs.len();
        // The next copy of each, if any, leads its group now.
        self.group_copies(Batch {
            writes: &mut writes,
            outcomes: &mut Vec::new(),
            tally: &mut tally,
            stored: &jobs.into_iter().map(|j| (j.id, j)).collect(),
            deleted: Vec::new(),
            announcing: &announcing,
            now,
            pending: None,
        })
        .await?;
        self.write_regrouped(&writes, &tally, ingest).await?;
        writes.truncate(closing);
        Ok(writes.into_iter().map(|w| w.job).collect())
    }

    /// Writes a close or a delete and what it changes of its job's group, durably, and
    /// indexes them; the caller holds the ingest lock (`_writes`).
    pub(super) async fn write_regrouped(
        self: &Arc<Self>,
        writes: &[JobWrite],
        tally: &WriteTally,
        writes_lock: &MutexGuard<'_, ()>,
    ) -> ServiceResult<()> {
        if !writes.is_empty() {
            let store = &self.store;
            self.shared
                .timed_write(StoreWrite::Jobs, store.write_jobs(writes))
                .await?;
        }
        self.count_written(tally);
        for w in writes {
            self.write_index().upsert(&w.job);
        }
        self.compact_index_if_due(writes_lock).await;
        Ok(())
    }

    /// Renumbers the index once it holds many dead or out-of-order documents. The work runs
    /// on a copy, off the async threads, while searches keep reading the current index; only
    /// the swap takes the write lock. Holding the ingest lock (`_writes`) keeps every other
    /// index writer out meanwhile, so no change can miss the copy.
    pub(super) async fn compact_index_if_due(self: &Arc<Self>, _writes: &MutexGuard<'_, ()>) {
        if self.compaction_deferrals.load(Ordering::Acquire) > 0
            || !self.read_index().needs_compaction()
        {
            return;
        }
        let this = self.clone();
        match tokio::task::spawn_blocking(move || this.read_index().compacted()).await {
            Ok(compacted) => {
                let old = std::mem::replace(&mut *self.write_index(), compacted);
                // Freeing the old index takes a while at a million jobs: not under the lock,
                // and not on an async thread.
                tokio::task::spawn_blocking(move || drop(old));
            }
            Err(e) => tracing::error!(error = %e, "compacting the search index failed"),
        }
    }

    /// Holds off index compaction until the returned guard is finished or dropped: for
    /// loading many jobs with [`JobListingsService::upsert_jobs`], which would otherwise
    /// compact the index every few percent of growth when the jobs come in no particular
    /// order. Searches stay exact meanwhile; [`DeferredCompaction::finish`] compacts once at
    /// the end. ([`JobListingsService::import_jobs`] needs none: it compacts once itself.)
    pub(super) fn defer_index_compaction(self: &Arc<Self>) -> DeferredCompaction {
        self.compaction_deferrals.fetch_add(1, Ordering::AcqRel);
        DeferredCompaction {
            catalog: Some(self.clone()),
        }
    }
}

/// What a job write changes in the counts: jobs created, updated and closed, and the jobs
/// whose closed state it changes (+1 closed now, -1 open again).
#[derive(Debug, Default)]
pub(super) struct WriteTally {
    written: JobsWritten,
    closed_changes: Vec<(JobId, i64)>,
    /// Whether each job of the write is active, as the write leaves it so far: a job twice in
    /// one write changes from what its first occurrence left.
    active_after: HashMap<JobId, bool>,
}

impl WriteTally {
    /// Counts a job as written, given whether it was active before (`None`: not stored).
    pub(super) fn add(&mut self, job: &Job, was_active: Option<bool>, created: bool) {
        let was_active = self.active_after.get(&job.id).copied().or(was_active);
        let active = job.is_active();
        self.active_after.insert(job.id, active);
        match was_active {
            _ if created => self.written.created += 1,
            Some(true) if !active => self.written.closed += 1,
            _ => self.written.updated += 1,
        }
        let closed_change = match (was_active, active) {
            (None | Some(true), false) => 1,
            (Some(false), true) => -1,
            _ => 0,
        };
        if closed_change != 0 {
            self.closed_changes.push((job.id, closed_change));
        }
    }
}

/// Checks a job and returns its company, which must be known.
pub(super) fn checked_company<'c>(
    job: &NewJob,
    companies: &'c HashMap<CompanyId, Arc<Company>>,
) -> Result<&'c Company, DomainError> {
    job.validate()?;
    companies.get(&job.company_id).map(|c| &**c).ok_or_else(|| {
        DomainError::new(
            "company_id",
            format!(
                "company {} is unknown; add the company first",
                job.company_id
            ),
        )
    })
}

/// Index compaction held off; see [`JobListingsService::defer_index_compaction`](super::JobListingsService::defer_index_compaction).
#[must_use = "compaction resumes when this is finished or dropped"]
pub struct DeferredCompaction {
    /// Taken when compaction resumes.
    catalog: Option<Arc<Catalog>>,
}

/// Whether it still holds compaction off; the catalog itself is large.
impl std::fmt::Debug for DeferredCompaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredCompaction")
            .field("holding", &self.catalog.is_some())
            .finish()
    }
}

impl DeferredCompaction {
    /// Lets compaction resume and compacts now if it is due.
    pub async fn finish(mut self) {
        if let Some(catalog) = self.resume() {
            let writes = catalog.ingest.lock().await;
            catalog.compact_index_if_due(&writes).await;
        }
    }

    fn resume(&mut self) -> Option<Arc<Catalog>> {
        let catalog = self.catalog.take()?;
        catalog.compaction_deferrals.fetch_sub(1, Ordering::AcqRel);
        Some(catalog)
    }
}

impl Drop for DeferredCompaction {
    /// Dropped unfinished (a load that failed or was abandoned midway): compaction resumes
    /// and, when a runtime is at hand, runs now rather than at the next write.
    fn drop(&mut self) {
        let Some(catalog) = self.resume() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let writes = catalog.ingest.lock().await;
                catalog.compact_index_if_due(&writes).await;
            });
        }
    }
}

/// Batches of at least this many jobs have their words gathered apart from the index; a
/// smaller one is indexed a job at a time (a thread's hand-off would cost more).
const PREPARE_FROM: usize = 64;

/// Jobs added to the index per lock of it.
const INDEX_PART: usize = 512;

/// The jobs made ready for the index, [`INDEX_PART`] at a time, in order.
fn prepare_in_parts(mut jobs: Vec<Job>) -> Vec<PreparedJobs> {
    let mut parts = Vec::with_capacity(jobs.len().div_ceil(INDEX_PART));
    while !jobs.is_empty() {
        let rest = jobs.split_off(jobs.len().min(INDEX_PART));
        parts.push(JobIndex::prepare(std::mem::replace(&mut jobs, rest)));
    }
    parts
}
