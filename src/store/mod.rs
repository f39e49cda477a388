//! Persistence: one narrow trait per part of the service ([`JobStore`] for the catalog,
//! [`KeyStore`] for access, [`OutboxStore`] for subscriptions), [`Store`] their union, and
//! their implementations.
//!
//! [`SledStore`] (feature `sled`, on by default) keeps everything in an embedded sled database
//! on disk, for one process. `PgStore` (feature `postgres`) keeps it in PostgreSQL, so several
//! server replicas share one state. [`MemoryStore`] keeps it in memory, for tests and for
//! embedders that bring their own persistence. One shared test suite (`tests/it/store_suite.rs`)
//! runs against all three (PostgreSQL with `cargo test -- --ignored`).
//!
//! Every write method returns only once the write is durable: an acknowledged write survives a
//! crash of the process.

mod error;
#[cfg(feature = "sled")]
mod job_cache;
#[cfg(feature = "sled")]
mod job_record;
mod leases;
mod memory;
mod outbox;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sled")]
mod sled_store;
#[cfg(feature = "sled")]
mod snapshot_file;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use error::{BackendError, StoreError, StoreResult};
pub(crate) use leases::Leases;
pub use memory::MemoryStore;
pub use outbox::{CursorMove, FanOut, Pruned};

#[cfg(feature = "postgres")]
pub use postgres::{PgConfig, PgStore};
#[cfg(feature = "sled")]
pub use sled_store::{SledConfig, SledStore};

use crate::domain::{
    ApiKeyRecord, ChangeKind, Company, CompanyId, Delivery, DeliveryId, EventId, Job, JobEvent,
    JobId, KeyId, LoggedEvent, OutboxEvent, Subscription, WebhookId,
};

/// One job write: the job and the events it raises, stored in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct JobWrite {
    /// The job's new state.
    pub job: Job,
    /// Events to append to the outbox log atomically with it.
    pub events: Vec<JobEvent>,
    /// What the write is in the job change feed ([`JobStore::feed_after`]), recorded there
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

/// One entry of the job change feed, as read back ([`JobStore::feed_after`]).
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

/// Calls counted for one key in one billing period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageCounter {
    /// The key.
    pub key_id: KeyId,
    /// The period the count belongs to.
    pub period_start: DateTime<Utc>,
    /// Successful calls counted.
    pub calls_used: u64,
}

impl UsageCounter {
    /// The counter after one more call in the period starting `period_start`, or `None` when
    /// `quota` calls are already counted there. A counter on an earlier period starts over; a
    /// counter already on a later period (a caller with a stale clock) counts the call there.
    pub fn counted(
        stored: Option<UsageCounter>,
        key_id: KeyId,
        period_start: DateTime<Utc>,
        quota: u64,
    ) -> Option<UsageCounter> {
        let current = match stored {
            Some(c) if c.period_start >= period_start => c,
            _ => UsageCounter {
                key_id,
                period_start,
                calls_used: 0,
            },
        };
        (current.calls_used < quota).then_some(UsageCounter {
            calls_used: current.calls_used + 1,
            ..current
        })
    }

    /// The counter after giving back one call counted in the period starting `period_start`;
    /// `None` when there is nothing to give back there.
    pub fn uncounted(
        stored: Option<UsageCounter>,
        period_start: DateTime<Utc>,
    ) -> Option<UsageCounter> {
        stored
            .filter(|c| c.period_start == period_start && c.calls_used > 0)
            .map(|c| UsageCounter {
                calls_used: c.calls_used - 1,
                ..c
            })
    }
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

/// Jobs and companies: what the catalog part of the service keeps, with the search index
/// snapshots made of them. A job write carries the outbox events it raises, written in the
/// same transaction (the transactional outbox).
///
/// Scans return records in id order, `limit` at a time, starting after `after`, so callers can
/// page through collections of any size.
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
    /// brought up to date by dropping it), and a store with a [change feed](Store::change_feed)
    /// records it there (so every replica drops it from its index), and the job change feed
    /// gets a [`ChangeKind::Deleted`] entry ([`JobStore::feed_after`]). Returns whether it existed;
    /// deleting a job that does not exist changes nothing.
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
    /// the same transaction as the jobs; [`JobStore::save_index_snapshot`] may forget the record
    /// up to the snapshot's version.
    async fn jobs_written_since(&self, _version: u64) -> StoreResult<Option<Vec<JobId>>> {
        Ok(None)
    }
    /// The search index last saved with [`JobStore::save_index_snapshot`] and the
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
    /// One company by id.
    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>>;
    /// Writes companies, all or nothing, durably.
    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()>;
    /// Deletes a company, durably, recording it in the [change feed](Store::change_feed) if
    /// there is one; returns whether it existed. Jobs are not looked at: the caller checks that
    /// none still needs the company (the service refuses while active jobs do).
    async fn delete_company(&self, id: CompanyId) -> StoreResult<bool>;
    /// Up to `limit` companies with ids greater than `after`.
    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit: usize,
    ) -> StoreResult<Vec<Company>>;
}

/// API keys and their usage counters: what the access part of the service keeps.
#[async_trait]
pub trait KeyStore: Send + Sync + std::fmt::Debug + 'static {
    /// Creates or replaces a key record, durably.
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()>;
    /// One key record by id.
    async fn get_key(&self, id: KeyId) -> StoreResult<Option<ApiKeyRecord>>;
    /// Every key record.
    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>>;
    /// Records usage counters (replacing earlier values for the same key), durably.
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()>;
    /// Every usage counter.
    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>>;
    /// Counts one call for `key_id` in the period starting `period_start`, atomically and
    /// durably, unless `quota` calls are counted there already (see [`UsageCounter::counted`]).
    /// Returns the counter after the call, or `None` when the quota is used up. Several
    /// processes sharing one store may call it concurrently and exactly `quota` succeed.
    async fn count_call(
        &self,
        key_id: KeyId,
        period_start: DateTime<Utc>,
        quota: u64,
    ) -> StoreResult<Option<UsageCounter>>;
    /// Gives back one call counted by [`KeyStore::count_call`] in the period starting
    /// `period_start` (a call that failed), durably; nothing when none is counted there.
    async fn uncount_call(&self, key_id: KeyId, period_start: DateTime<Utc>) -> StoreResult<()>;
    /// The usage counter of one key, if it has one.
    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>>;
}

/// Webhook subscriptions, the outbox log and events, and deliveries: what the subscriptions
/// part of the service keeps and the delivery worker works through (see [`FanOut`]).
///
/// Every read a tenant's request makes costs what it returns: one subscription's deliveries
/// are found without reading another's.
#[async_trait]
pub trait OutboxStore: Send + Sync + std::fmt::Debug + 'static {
    /// Creates or replaces a webhook subscription, durably. A new subscription's fan-out
    /// cursor starts at the log's head: it receives the events logged after it.
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()>;
    /// Deletes a subscription and its cursor and fails its pending deliveries; returns whether
    /// it existed. Costs what that subscription holds, never more.
    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool>;
    /// One webhook subscription by id.
    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Subscription>>;
    /// Every webhook subscription.
    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>>;
    /// Writes an event outside the log (such as `webhook.test`) with its deliveries, all or
    /// nothing, durably.
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()>;
    /// One outbox event with its payload (its `deliveries` list is empty).
    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>>;
    /// The position of the newest log entry; 0 when nothing was ever logged.
    async fn log_head(&self) -> StoreResult<u64>;
    /// Up to `limit` log entries after position `after`, oldest first.
    async fn log_after(&self, after: u64, limit: usize) -> StoreResult<Vec<LoggedEvent>>;
    /// Every subscription's fan-out cursor: the last log position fanned out to it.
    async fn fan_out_cursors(&self) -> StoreResult<Vec<(WebhookId, u64)>>;
    /// How many of one subscription's deliveries are pending.
    async fn pending_count(&self, webhook: WebhookId) -> StoreResult<usize>;
    /// Applies one fan-out step, all or nothing; `false` (and nothing written) when a cursor
    /// was not where the step read it, or its subscription is gone. The step need not be
    /// durable when this returns, only once a later durable write of the store is (such as
    /// the attempt that sends one of its deliveries): a step lost to a crash is made again
    /// from the log, with the same events and so the same `webhook-id`s.
    async fn fan_out(&self, step: &FanOut) -> StoreResult<bool>;
    /// The pending deliveries due at or before `due` and not leased at `due` (see
    /// [`OutboxStore::claim_delivery`]): of each subscription, its `per_subscription` soonest
    /// due, so a subscription with a long backlog cannot hide another's.
    async fn due_deliveries(
        &self,
        due: DateTime<Utc>,
        per_subscription: usize,
    ) -> StoreResult<Vec<Delivery>>;
    /// Every delivery of one subscription, newest first, up to `limit`.
    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>>;
    /// One delivery by id.
    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>>;
    /// Claims one delivery for an attempt: returns it when it is pending, due at `now` and
    /// not leased at `now`, and leases it to the caller until `until`, so no other process
    /// sharing the store attempts it meanwhile. The lease ends when the delivery is written
    /// ([`OutboxStore::put_delivery`]) or at `until`, whichever comes first: a process that dies
    /// mid-attempt delays the delivery, never loses it.
    async fn claim_delivery(
        &self,
        id: DeliveryId,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;
    /// Updates a delivery after an attempt, durably, ending its lease.
    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()>;
    /// Removes, up to `limit` of each: deliveries settled (succeeded or failed) before
    /// `settled_before` (see [`Delivery::settled_at`]); events created before
    /// `events_before`; and the log entries every cursor has passed (a store may count
    /// those in groups, and remove more than `limit`). Call it again while it removes
    /// `limit` or more of something.
    async fn prune(
        &self,
        settled_before: DateTime<Utc>,
        events_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Pruned>;
}

/// Where the service keeps its state: every part's store in one.
///
/// The default implementation is [`SledStore`]; [`MemoryStore`] serves tests and embedders;
/// `PgStore` (feature `postgres`) lets several replicas share one state. One test suite runs
/// against all three.
#[async_trait]
pub trait Store: JobStore + KeyStore + OutboxStore {
    /// The change feed of a store that several processes share, so each can follow what the
    /// others write; `None` (the default) for a store only one process uses.
    fn change_feed(&self) -> Option<&dyn ChangeFeed> {
        None
    }

    /// Checks that the store takes a durable write now (a full disk, a lost connection),
    /// with the smallest write it can make. The default, for a store that cannot fail so,
    /// succeeds.
    async fn probe_write(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Copies the store, while it serves, into the folder `dir` (made when missing; it must be
    /// empty), as a store of the same kind that can be opened there: a consistent copy, holding
    /// every write acknowledged before the call and a state the store was actually in. Readers
    /// are served meanwhile; a store may hold writers back while it copies (the sled store
    /// does). The copy is not marked complete: the caller does that once it is
    /// (`JobListingsService::backup` writes a manifest last), so a copy cut short is never
    /// taken for a backup.
    ///
    /// The default refuses with [`StoreError::Unsupported`]: a store that keeps its data
    /// elsewhere (PostgreSQL) is backed up with that system's own tools.
    async fn backup_to(&self, _dir: &Path) -> StoreResult<BackupSummary> {
        Err(StoreError::Unsupported {
            operation: "an online backup",
            store: "this store",
            advice: "back up its data with the tools of the system that keeps it",
        })
    }

    /// Where the store keeps its data on this machine and how much of the disk it takes, for
    /// the checks a backup makes of its target before it writes anything: not inside the live
    /// data, and room for a copy. The default, for a store that keeps no folder here, knows
    /// neither.
    async fn backup_source(&self) -> StoreResult<BackupSource> {
        Ok(BackupSource::default())
    }
}

/// What a backup of a store starts from ([`Store::backup_source`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupSource {
    /// The folder the store keeps its live data in, if it keeps it in one: a backup must stay
    /// out of it.
    pub folder: Option<PathBuf>,
    /// The bytes a copy of the store would take on disk now, reckoned on the safe side: a
    /// backup is refused unless its disk has this much free.
    pub bytes: u64,
}

impl BackupSource {
    /// A store's data in `folder`, a copy of which takes `bytes` on disk.
    pub fn new(folder: Option<PathBuf>, bytes: u64) -> Self {
        Self { folder, bytes }
    }
}

/// What [`Store::backup_to`] copied, and what it cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackupSummary {
    /// Jobs copied, active and closed.
    pub jobs: u64,
    /// Companies copied.
    pub companies: u64,
    /// API keys copied (revoked ones too).
    pub keys: u64,
    /// Webhook subscriptions copied.
    pub webhooks: u64,
    /// Bytes the backup takes on disk.
    pub bytes: u64,
    /// How long the backup took, from start to finish.
    pub took: std::time::Duration,
    /// How long writes were held back while the copy was made (reads never were).
    pub writes_paused: std::time::Duration,
}

/// A record some process wrote, identified by kind and id: read it again to see its new state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangedRecord {
    /// A job was written (ingested, updated or closed) or deleted.
    Job(JobId),
    /// A company was written or deleted.
    Company(CompanyId),
    /// A key was issued or changed (plan, billing status, revocation).
    Key(KeyId),
    /// A webhook subscription was written or deleted.
    Webhook(WebhookId),
}

/// One entry of a [`ChangeFeed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// Position in the feed: strictly increasing in commit order.
    pub position: u64,
    /// What changed.
    pub record: ChangedRecord,
}

/// Every write of jobs, companies, keys and webhooks, in commit order, so processes sharing a
/// store keep their in-memory state (search index, keys, subscriptions) in step.
#[async_trait]
pub trait ChangeFeed: Send + Sync {
    /// The position of the newest change (0 when there is none).
    async fn head(&self) -> StoreResult<u64>;
    /// Up to `limit` changes after position `after`, oldest first.
    async fn changes_after(&self, after: u64, limit: usize) -> StoreResult<Vec<Change>>;
    /// Resolves when new changes may be waiting or after `timeout`, whichever comes first.
    /// A notification lost to a disconnect costs at most `timeout` of delay.
    async fn wait(&self, timeout: std::time::Duration);
}
