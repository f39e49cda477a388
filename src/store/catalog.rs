//! What the catalog part of the service keeps: jobs, the job change feed, search index
//! snapshots and companies, each behind a trait of its own, and [`CatalogStore`], their union.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;
use crate::domain::{ChangeKind, Company, CompanyId, Job, JobEvent, JobId};

/// One job write: the job and the events it raises, stored in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct JobWrite {
    /// The job's new state.
    pub job: Job,
    /// Events to append to the outbox log atomically with it.
    pub events: Vec<JobEvent>,
    /// What the write is in the job change feed ([`JobFeedStore::feed_after`]), recorded there
    /// atomically with it; `None` for a write that changes nothing a reader of the feed sees
    /// (the same content again). A write that changes a job's content must name a kind: the
    /// feed keeps each state of a job that an entry refers to.
    pub change: Option<ChangeKind>,
    /// What the writer decided `change` and `events` against. A store shared by replicas
    /// decides them again, under its write lock, when the job stored now is not that one (it
    /// keeps the stored job's history, writes nothing for the same content, and names the
    /// change from the stored state); a single-process store, written under the service's
    /// ingest lock, has nothing to check.
    pub decided_on: DecidedOn,
}

/// What a [`JobWrite`] was decided against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecidedOn {
    /// Nothing: the write is stored as given.
    #[default]
    Nothing,
    /// The job as the writer read it: its `updated_at`, or `None` where it read no job.
    Read(Option<DateTime<Utc>>),
}

/// One entry of the job change feed, as read back ([`JobFeedStore::feed_after`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FeedEntry {
    /// Its position: positions increase in commit order, from 1 (with gaps on some stores).
    pub position: u64,
    /// What happened.
    pub kind: ChangeKind,
    /// The job it happened to.
    pub job_id: JobId,
    /// When: the job's `updated_at` as written (for [`ChangeKind::Deleted`], the deletion's
    /// time).
    pub at: DateTime<Utc>,
    /// The job as the write left it; `None` once the job is deleted for good (and for the
    /// deletion itself): a deleted job's content is served by no part of the API.
    pub job: Option<Arc<Job>>,
}

/// How far the job change feed reaches: readers may continue from any position at or after
/// `pruned_through`, up to `head`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedBounds {
    /// The last position retention removed (0 when none was): a reader that stands before it
    /// has missed events.
    pub pruned_through: u64,
    /// The position of the newest entry (0 when there is none).
    pub head: u64,
}

/// A saved search index ([`crate::query::JobIndex::to_snapshot`]) and the
/// [`JobStore::jobs_version`] of the jobs it indexes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSnapshot {
    /// The store's jobs version when it was taken.
    pub jobs_version: u64,
    /// The index, as bytes.
    pub bytes: Vec<u8>,
}

/// Jobs, active and closed: what ingest, import, reads and deletion write and read. A job
/// write carries the outbox events it raises and its entry in the job change feed
/// ([`JobFeedStore`]), written in the same transaction (the transactional outbox).
///
/// Scans return records in id order, `limit` at a time, starting after `after`, so callers can
/// page through collections of any size. The default implementation is
/// [`SledStore`](super::SledStore); [`MemoryStore`](super::MemoryStore) serves tests.
#[async_trait]
pub trait JobStore: Send + Sync + std::fmt::Debug + 'static {
    /// One job by id, active or closed. Shared, so that a store keeping recently read jobs in
    /// memory (sled) hands them out without copying.
    async fn get_job(&self, id: JobId) -> StoreResult<Option<Arc<Job>>>;
    /// Several jobs by id, in the order asked; unknown ids are skipped.
    async fn get_jobs(&self, ids: &[JobId]) -> StoreResult<Vec<Arc<Job>>>;
    /// Writes jobs and their outbox events, all or nothing, durably.
    async fn write_jobs(&self, writes: &[JobWrite]) -> StoreResult<()>;
    /// Writes jobs as [`JobStore::write_jobs`] does, but they need not be durable before
    /// [`JobStore::flush`]: for bulk loads, which pay for durability once at the end. A store may
    /// split the write into several transactions, each with its jobs' events and its own jobs
    /// version. A crash before the flush may lose the latest of them, never part of one. The
    /// default is [`JobStore::write_jobs`].
    async fn write_jobs_deferred(&self, writes: &[JobWrite]) -> StoreResult<()> {
        self.write_jobs(writes).await
    }
    /// Makes every write so far durable. The default does nothing: a store whose writes are
    /// durable when they return.
    async fn flush(&self) -> StoreResult<()> {
        Ok(())
    }
    /// Up to `limit` jobs with ids greater than `after`.
    async fn scan_jobs(&self, after: Option<JobId>, limit: usize) -> StoreResult<Vec<Job>>;
    /// Deletes a job for good, durably, as one write of jobs: the jobs version changes and the
    /// job is among [`JobStore::jobs_written_since`] (so an index snapshot taken before is
    /// brought up to date by dropping it), and a store with a
    /// [change feed](super::Store::change_feed) records it there (so every replica drops it
    /// from its index), and the job change feed gets a [`ChangeKind::Deleted`] entry
    /// ([`JobFeedStore::feed_after`]). Returns whether it existed; deleting a job that does not
    /// exist changes nothing.
    ///
    /// The outbox log entries and events about the job stay: fan-out skips an entry whose job
    /// is gone, and an event already fanned out carries its own copy of the job.
    async fn delete_job(&self, id: JobId) -> StoreResult<bool>;
    /// A number that changes, durably and in the same transaction, with every write of jobs
    /// ([`JobStore::write_jobs`], [`JobStore::write_jobs_deferred`], [`JobStore::delete_job`] or
    /// any rewrite of stored jobs): equal numbers mean the same jobs.
    /// `None` (the default) for a store that does not keep one; it then keeps no index
    /// snapshots either.
    async fn jobs_version(&self) -> StoreResult<Option<u64>> {
        Ok(None)
    }
    /// The ids of the jobs written after jobs version `version` (each once, ascending), so
    /// that an index snapshot taken at `version` is brought up to date by indexing just
    /// them again. `None` when the store cannot tell (the default), or no longer can for
    /// `version`: the index is then rebuilt from every job.
    ///
    /// A store that answers it keeps a record of the ids written in each version, written in
    /// the same transaction as the jobs; [`IndexSnapshotStore::save_index_snapshot`] may forget
    /// the record up to the snapshot's version.
    async fn jobs_written_since(&self, _version: u64) -> StoreResult<Option<Vec<JobId>>> {
        Ok(None)
    }
}

/// The saved search index, so a start loads it and indexes only the jobs written since
/// instead of every job. Only a store that keeps a [`JobStore::jobs_version`] keeps one; the
/// defaults keep none (every start then indexes every job).
#[async_trait]
pub trait IndexSnapshotStore: Send + Sync + std::fmt::Debug + 'static {
    /// The search index last saved with [`IndexSnapshotStore::save_index_snapshot`] and the
    /// [`JobStore::jobs_version`] it reflects; `None` when none was saved (or the default: the
    /// store keeps none).
    async fn load_index_snapshot(&self) -> StoreResult<Option<IndexSnapshot>> {
        Ok(None)
    }
    /// Keeps a search index snapshot in place of the last one, durably. A store without
    /// [`JobStore::jobs_version`] ignores it (the default).
    async fn save_index_snapshot(&self, _snapshot: IndexSnapshot) -> StoreResult<()> {
        Ok(())
    }
}

/// The job change feed, which the API's `/changes` serves: every state of every job, in commit
/// order. Entries are written by [`JobStore`]'s writes, in their own transactions; this trait
/// reads and retires them.
#[async_trait]
pub trait JobFeedStore: Send + Sync + std::fmt::Debug + 'static {
    /// Up to `limit` entries of the job change feed after position `after`, oldest first,
    /// each with the job as that write left it. The feed records every [`JobWrite::change`]
    /// and every [`JobStore::delete_job`] in the write's own transaction, in commit order.
    async fn feed_after(&self, after: u64, limit: usize) -> StoreResult<Vec<FeedEntry>>;
    /// How far the job change feed reaches.
    async fn feed_bounds(&self) -> StoreResult<FeedBounds>;
    /// Removes up to `limit` of the oldest feed entries made before `before` (with the job
    /// states kept for them), durably; returns how many it removed. Call it again while it
    /// removes `limit`.
    async fn prune_feed(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize>;
}

/// Companies, which jobs refer to. Scans page as [`JobStore::scan_jobs`] does.
#[async_trait]
pub trait CompanyStore: Send + Sync + std::fmt::Debug + 'static {
    /// One company by id.
    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>>;
    /// Writes companies, all or nothing, durably.
    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()>;
    /// Deletes a company, durably, recording it in the [change feed](super::Store::change_feed)
    /// if there is one; returns whether it existed. Jobs are not looked at: the caller checks
    /// that none still needs the company (the service refuses while active jobs do).
    async fn delete_company(&self, id: CompanyId) -> StoreResult<bool>;
    /// Up to `limit` companies with ids greater than `after`.
    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit: usize,
    ) -> StoreResult<Vec<Company>>;
}

/// Everything the catalog keeps, in one: implemented for every type that implements its
/// parts, never by hand.
pub trait CatalogStore: JobStore + IndexSnapshotStore + JobFeedStore + CompanyStore {}

impl<T> CatalogStore for T where
    T: JobStore + IndexSnapshotStore + JobFeedStore + CompanyStore + ?Sized
{
}
