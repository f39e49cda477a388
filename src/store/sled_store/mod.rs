use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sled::transaction::{
    ConflictableTransactionError, TransactionError, Transactional, TransactionalTree,
};
use sled::{Db, Tree};

mod backup;
mod feed;
mod jobs;
mod keys;
mod outbox;
mod outbox_keys;

use super::job_cache::JobCache;
use super::{
    job_record, snapshot_file, CompanyStore, DeliveryQueue, EventLog, FanOutStore, IndexSnapshot,
    IndexSnapshotStore, JobFeedStore, JobStore, JobWrite, KeyStore, Leases, Store, StoreError,
    StoreResult, UsageCounter, UsageStore, WebhookStore,
};
use crate::domain::{
    ApiKeyRecord, ChangeKind, Company, CompanyId, Delivery, DeliveryId, DeliveryStatus, EventId,
    Job, JobEvent, JobId, KeyId, LoggedEvent, OutboxEvent, Subscription, WebhookId,
};

/// How to open a [`SledStore`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SledConfig {
    /// The database folder; created when missing.
    pub path: PathBuf,
    /// Bytes of page cache sled may use (sled's own default is 1 GiB; ours is 256 MiB).
    pub cache_bytes: u64,
    /// Bytes of decoded jobs kept in front of sled for search pages and job details
    /// (default 64 MiB; 0 turns it off).
    pub job_cache_bytes: u64,
}

impl SledConfig {
    /// A configuration for a folder with the default cache size.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            path: path.as_ref().to_owned(),
            cache_bytes: 256 * 1024 * 1024,
            job_cache_bytes: 64 * 1024 * 1024,
        }
    }
}

/// The default [`Store`]: an embedded sled database in one folder.
///
/// Records are in one tree per collection: jobs in a versioned record format of the store's
/// own (see `job_record`), everything else as JSON. Every write method flushes before it returns,
/// so an acknowledged write survives a crash. sled is single-process: one server per folder.
/// The search index snapshot ([`IndexSnapshotStore::save_index_snapshot`]) is the file `search-index` in
/// the same folder; deleting it only makes the next start rebuild the index.
///
/// Every write passes a gate that an online backup ([`Store::backup_to`]) closes while it
/// copies the database: writes wait meanwhile, reads never do.
#[derive(Clone)]
pub struct SledStore {
    db: Db,
    jobs: Tree,
    companies: Tree,
    keys: Tree,
    usage: Tree,
    webhooks: Tree,
    /// Events with their payloads, by id.
    events: Tree,
    /// Events by creation time (`time ++ event id` → empty), for retention.
    events_by_time: Tree,
    deliveries: Tree,
    /// Pending deliveries: `webhook id ++ due time ++ delivery id` → empty.
    due: Tree,
    /// Every delivery by its subscription: `webhook id ++ next attempt ++ delivery id` →
    /// empty, so listing one subscription's latest deliveries reads only them.
    by_webhook: Tree,
    /// Settled deliveries: `settled time ++ delivery id` → by-subscription key, for retention.
    settled: Tree,
    /// The outbox log in segments: the position of a segment's first entry (big-endian) →
    /// the entries of one job write.
    log: Tree,
    /// Each subscription's fan-out cursor: webhook id → position (big-endian).
    cursors: Tree,
    /// The jobs version ([`JobStore::jobs_version`]).
    meta: Tree,
    /// The ids of the jobs each job write wrote ([`JobStore::jobs_written_since`]): the jobs
    /// version it made (big-endian) → the ids, 16 bytes each.
    job_changes: Tree,
    /// The job change feed: position (big-endian) → kind, job id and time (see `feed`).
    feed: Tree,
    /// The job states feed entries refer to that later writes replaced: position → record.
    feed_states: Tree,
    /// The newest feed position known to be on disk: readers of the feed see no further, as
    /// sled shows a write before it is flushed, and an entry a crash then loses could be
    /// read, and its position handed out again to another.
    feed_durable: Arc<std::sync::atomic::AtomicU64>,
    /// The folder sled and the index snapshot are kept in.
    folder: PathBuf,
    /// Where [`IndexSnapshotStore::save_index_snapshot`] keeps the index: a file beside sled's own.
    index_snapshot: PathBuf,
    leases: Arc<Leases>,
    job_cache: Arc<JobCache>,
    /// Taken shared by every write, from its first change to its flush, and exclusively by
    /// a backup while it copies the trees: sled has no snapshot of several trees at once, so
    /// the copy is made while no write is under way (see [`SledStore::backup_to`]).
    write_gate: Arc<RwLock<()>>,
}

/// The meta key of [`JobStore::jobs_version`]: a big-endian `u64`.
const JOBS_VERSION: &[u8] = b"jobs_version";

fn version_of(stored: Option<&[u8]>) -> u64 {
    stored
        .and_then(|v| v.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

fn backend(e: impl Into<super::BackendError>) -> StoreError {
    StoreError::backend("sled", e)
}

fn encode<T: Serialize>(value: &T) -> StoreResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(backend)
}

fn decode<T: DeserializeOwned>(key: &[u8], bytes: &[u8]) -> StoreResult<T> {
    let corrupt = |reason: String| StoreError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        reason,
    };
    // The record's UTF-8 checked once, as a whole: `from_slice` checks each string on its
    // own, which was a tenth of decoding a job.
    let text = std::str::from_utf8(bytes).map_err(|e| corrupt(e.to_string()))?;
    serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))
}

/// A job from its record; a record that cannot be read is [`StoreError::Corrupt`].
fn decode_job(key: &[u8], record: &[u8]) -> StoreResult<Job> {
    job_record::decode(record).map_err(|reason| StoreError::Corrupt {
        key: format!("jobs/{}", display_key(key)),
        reason,
    })
}

/// A record's key as text: a job's UUID, or the bytes as they are.
fn display_key(key: &[u8]) -> String {
    uuid::Uuid::from_slice(key).map_or_else(
        |_| String::from_utf8_lossy(key).into_owned(),
        |id| id.to_string(),
    )
}

fn abort(e: StoreError) -> ConflictableTransactionError<StoreError> {
    ConflictableTransactionError::Abort(e)
}

fn tx_error(e: TransactionError<StoreError>) -> StoreError {
    match e {
        TransactionError::Abort(e) => e,
        TransactionError::Storage(e) => backend(e),
    }
}

/// Names the database, never its contents (sled's own `Debug` prints every record).
impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore")
            .field("jobs", &self.jobs.len())
            .field("webhooks", &self.webhooks.len())
            .finish_non_exhaustive()
    }
}

/// How long [`SledStore::open`] waits for a folder's lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl SledStore {
    /// Opens (or creates) the database folder.
    ///
    /// A folder whose lock is held is waited for, up to two seconds, before the open fails
    /// with [`StoreError::Locked`]: sled's background threads let go of the lock a moment after
    /// the last handle of a store is dropped, so a program that closes a folder and opens it
    /// again at once would otherwise find it locked by itself.
    pub fn open(config: &SledConfig) -> StoreResult<Self> {
        let started = std::time::Instant::now();
        let db = loop {
            let opened = sled::Config::new()
                .path(&config.path)
                .cache_capacity(config.cache_bytes)
                .open();
            match opened {
                Ok(db) => break db,
                Err(sled::Error::Io(io)) if io.to_string().contains("could not acquire lock") => {
                    if started.elapsed() >= LOCK_WAIT {
                        return Err(StoreError::Locked {
                            path: config.path.display().to_string(),
                        });
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(backend(e)),
            }
        };
        let tree = |name: &str| db.open_tree(name).map_err(backend);
        let store = Self {
            jobs: tree("jobs")?,
            companies: tree("companies")?,
            keys: tree("keys")?,
            usage: tree("usage")?,
            webhooks: tree("webhooks")?,
            events: tree("events")?,
            events_by_time: tree("events_by_time")?,
            deliveries: tree("deliveries")?,
            due: tree("deliveries_due_by_webhook")?,
            by_webhook: tree("deliveries_by_webhook")?,
            settled: tree("deliveries_settled")?,
            log: tree("outbox_log")?,
            cursors: tree("fan_out_cursors")?,
            meta: tree("meta")?,
            job_changes: tree("job_changes")?,
            feed: tree("job_feed")?,
            feed_states: tree("job_feed_states")?,
            feed_durable: Default::default(),
            folder: config.path.clone(),
            index_snapshot: config.path.join("search-index"),
            leases: Default::default(),
            job_cache: Arc::new(JobCache::new(config.job_cache_bytes)),
            write_gate: Default::default(),
            db,
        };
        store.migrate_outbox()?;
        // What a start finds is on disk.
        store.mark_feed_durable()?;
        Ok(store)
    }

    /// Builds the outbox's indexes once for a folder written before they were kept (due and
    /// by-subscription deliveries, settled deliveries and events for retention, a fan-out
    /// cursor per subscription): every write since keeps them in its own transaction.
    fn migrate_outbox(&self) -> StoreResult<()> {
        const KEY: &[u8] = b"outbox_layout_3";
        if self.meta.get(KEY).map_err(backend)?.is_some() {
            return Ok(());
        }
        for tree in [
            &self.due,
            &self.by_webhook,
            &self.settled,
            &self.events_by_time,
        ] {
            tree.clear().map_err(backend)?;
        }
        let mut indexed = 0u64;
        for item in self.deliveries.iter() {
            let (k, v) = item.map_err(backend)?;
            // A record that cannot be read is left out of the indexes, as it could not be
            // listed anyway; the folder still opens.
            let d: Delivery = match decode(&k, &v) {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "a delivery record could not be read");
                    continue;
                }
            };
            (&self.deliveries, &self.due, &self.by_webhook, &self.settled)
                .transaction(|(deliveries, due, by_webhook, settled)| {
                    outbox_keys::DeliveryTrees {
                        deliveries,
                        due,
                        by_webhook,
                        settled,
                    }
                    .write(&d)
                })
                .map_err(tx_error)?;
            indexed += 1;
        }
        for item in self.events.iter() {
            let (k, v) = item.map_err(backend)?;
            if let Ok(e) = decode::<OutboxEvent>(&k, &v) {
                self.events_by_time
                    .insert(outbox_keys::event_time_key(&e), &[] as &[u8])
                    .map_err(backend)?;
            }
        }
        let head = version_of(self.meta.get(outbox::LOG_HEAD).map_err(backend)?.as_deref());
        for item in self.webhooks.iter() {
            let (k, _) = item.map_err(backend)?;
            if self.cursors.get(&k).map_err(backend)?.is_none() {
                self.cursors
                    .insert(k, &head.to_be_bytes())
                    .map_err(backend)?;
            }
        }
        let _ = self.db.drop_tree("deliveries_due");
        self.meta.insert(KEY, &[1u8]).map_err(backend)?;
        self.db.flush().map_err(backend)?;
        if indexed > 0 {
            tracing::info!(indexed, "outbox deliveries indexed");
        }
        Ok(())
    }

    /// Runs blocking sled writes, then flushes, off the async threads, inside the write gate.
    async fn durably<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SledStore) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let _writing = this.writing();
            let out = work(&this)?;
            // Read before the flush, so every entry up to it is on disk after it.
            let feed_head = this.feed_head()?;
            this.db.flush().map_err(backend)?;
            this.feed_durable
                .fetch_max(feed_head, std::sync::atomic::Ordering::AcqRel);
            Ok(out)
        })
        .await
        .map_err(backend)?
    }

    /// Enters the write gate: every write holds this from its first change until it is
    /// flushed, so a backup never copies half of one. Blocking, and never taken twice by one
    /// write (a backup waiting between the two would wait forever). Nothing is changed while
    /// the lock is held exclusively, so a panic there cannot leave anything half done: a
    /// poisoned gate is entered as it is.
    fn writing(&self) -> RwLockReadGuard<'_, ()> {
        self.write_gate.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Deletes a job's record in one transaction that also bumps the jobs version, records
    /// the id as written in it (so an index snapshot taken before drops it) and appends a
    /// `job.deleted` entry to the change feed; without flushing.
    fn delete_job_row(&self, id: JobId) -> StoreResult<bool> {
        let key = id.0.as_bytes();
        let now = Utc::now();
        let deleted = (&self.jobs, &self.meta, &self.job_changes, &self.feed)
            .transaction(|(jobs, meta, job_changes, feed)| {
                if jobs.remove(key.as_slice())?.is_none() {
                    return Ok(false);
                }
                let version = version_of(meta.get(JOBS_VERSION)?.as_deref()) + 1;
                meta.insert(JOBS_VERSION, &version.to_be_bytes())?;
                job_changes.insert(&version.to_be_bytes(), key.as_slice())?;
                // The deletion's entry; the states of the job's earlier entries are served
                // no more (there is no job) and go with their entries.
                let mut appender = feed::FeedAppender::new(meta);
                appender.append(feed, ChangeKind::Deleted, id, now)?;
                appender.finish()?;
                Ok(true)
            })
            .map_err(tx_error)?;
        // Only once the tree no longer answers it.
        self.job_cache.invalidate(&id);
        Ok(deleted)
    }

    /// Writes encoded jobs, their events and their feed entries in one transaction that also
    /// bumps the jobs version, without flushing.
    fn write_job_rows(&self, rows: &[JobRow]) -> StoreResult<()> {
        let ids: Vec<u8> = rows.iter().flat_map(|row| *row.id.0.as_bytes()).collect();
        let entries: Vec<outbox_keys::StoredLogEntry> = rows
            .iter()
            .flat_map(|row| {
                row.events
                    .iter()
                    .map(|e| outbox_keys::StoredLogEntry::of(row.id, e))
            })
            .collect();
        let logged = u64::try_from(entries.len()).unwrap_or(u64::MAX);
        let segment = outbox_keys::encode_segment(&entries)?;
        (
            &self.jobs,
            &self.log,
            &self.meta,
            &self.job_changes,
            &self.feed,
            &self.feed_states,
        )
            .transaction(|(jobs, log, meta, job_changes, feed, states)| {
                let mut appender = feed::FeedAppender::new(meta);
                for row in rows {
                    let key = row.id.0.as_bytes();
                    match row.change {
                        Some((kind, at)) => {
                            let position = appender.append(feed, kind, row.id, at)?;
                            let record = job_record::with_feed_position(&row.record, position);
                            if let Some(replaced) = jobs.insert(key, record)? {
                                appender.keep_replaced(states, replaced)?;
                            }
                        }
                        // The same state again: it stays the state of the entry it was.
                        None => {
                            let position = jobs
                                .get(key)?
                                .and_then(|stored| job_record::feed_position(&stored));
                            match position {
                                Some(p) => jobs
                                    .insert(key, job_record::with_feed_position(&row.record, p))?,
                                None => jobs.insert(key, row.record.as_slice())?,
                            };
                        }
                    }
                }
                appender.finish()?;
                if logged > 0 {
                    let head = version_of(meta.get(outbox::LOG_HEAD)?.as_deref());
                    log.insert(&(head + 1).to_be_bytes(), segment.as_slice())?;
                    meta.insert(outbox::LOG_HEAD, &(head + logged).to_be_bytes())?;
                }
                let version = version_of(meta.get(JOBS_VERSION)?.as_deref()) + 1;
                meta.insert(JOBS_VERSION, &version.to_be_bytes())?;
                job_changes.insert(&version.to_be_bytes(), ids.as_slice())?;
                Ok(())
            })
            .map_err(tx_error)?;
        // Only once the new record is what the tree answers.
        for row in rows {
            self.job_cache.invalidate(&row.id);
        }
        Ok(())
    }

    /// Replaces a key's usage counter by `change(stored)` with compare-and-swap, so concurrent
    /// changes never overwrite each other; `None` from `change` leaves it as it is.
    fn update_usage(
        &self,
        key_id: KeyId,
        change: impl Fn(Option<UsageCounter>) -> Option<UsageCounter>,
    ) -> StoreResult<Option<UsageCounter>> {
        let key = key_id.0.as_bytes();
        loop {
            let old = self.usage.get(key).map_err(backend)?;
            let stored = old.as_deref().map(|b| decode(key, b)).transpose()?;
            let Some(next) = change(stored) else {
                return Ok(None);
            };
            let swapped = self
                .usage
                .compare_and_swap(key, old, Some(encode(&next)?))
                .map_err(backend)?;
            if swapped.is_ok() {
                return Ok(Some(next));
            }
        }
    }

    /// The ids recorded for every jobs version after `version`; `None` unless there is one
    /// record for each. A version without one was made by a write that kept no record (a
    /// rewrite of every job in a new JSON form, or a build before records were kept), so the
    /// records cannot say what changed.
    fn job_changes_since(&self, version: u64) -> StoreResult<Option<Vec<JobId>>> {
        let current = version_of(self.meta.get(JOBS_VERSION).map_err(backend)?.as_deref());
        let Some(expected) = current.checked_sub(version) else {
            return Ok(None);
        };
        let mut ids = Vec::new();
        let mut records = 0u64;
        for item in self.job_changes.range((version + 1).to_be_bytes()..) {
            let (key, written) = item.map_err(backend)?;
            records += 1;
            let (chunks, rest) = written.as_chunks::<16>();
            if !rest.is_empty() {
                return Err(StoreError::Corrupt {
                    key: format!("job_changes/{}", version_of(Some(&key))),
                    reason: format!("{} bytes is not a list of 16-byte ids", written.len()),
                });
            }
            ids.extend(chunks.iter().map(|id| JobId(uuid::Uuid::from_bytes(*id))));
        }
        if records != expected {
            return Ok(None);
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(Some(ids))
    }

    /// Drops the records of job writes up to `version`, which a snapshot now covers. Not
    /// flushed: records that outlive a crash are only read again for versions after it.
    fn forget_job_changes_through(&self, version: u64) -> StoreResult<()> {
        let mut batch = sled::Batch::default();
        for item in self.job_changes.range(..=version.to_be_bytes()) {
            let (key, _) = item.map_err(backend)?;
            batch.remove(key);
        }
        self.job_changes.apply_batch(batch).map_err(backend)
    }

    /// A job, from the cache or else from the tree (then kept in the cache).
    fn cached_job(&self, id: JobId) -> StoreResult<Option<Arc<Job>>> {
        if let Some(job) = self.job_cache.get(&id) {
            return Ok(Some(job));
        }
        let ticket = self.job_cache.ticket(&id);
        let Some(stored) = self.jobs.get(id.0.as_bytes()).map_err(backend)? else {
            return Ok(None);
        };
        let job = Arc::new(decode_job(id.0.as_bytes(), &stored)?);
        self.job_cache.fill(ticket, id, job.clone());
        Ok(Some(job))
    }

    fn get<T: DeserializeOwned>(tree: &Tree, key: &[u8]) -> StoreResult<Option<T>> {
        match tree.get(key).map_err(backend)? {
            Some(bytes) => decode(key, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The tree's entries in key order, from the first after `after` (or the first).
    fn entries_after(tree: &Tree, after: Option<&[u8]>) -> sled::Iter {
        match after {
            Some(a) => {
                tree.range::<&[u8], _>((std::ops::Bound::Excluded(a), std::ops::Bound::Unbounded))
            }
            None => tree.iter(),
        }
    }

    fn scan<T: DeserializeOwned>(
        tree: &Tree,
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<T>> {
        Self::entries_after(tree, after)
            .take(limit)
            .map(|item| {
                let (k, v) = item.map_err(backend)?;
                decode(&k, &v)
            })
            .collect()
    }
}

/// Rows per transaction of a deferred write: sled's transactions slow down with their size,
/// and a million 1.1 KB values took 5.4–7.1 s in 512-row transactions against 9.5 s in
/// 4,096-row ones.
const DEFERRED_ROWS: usize = 512;

/// A job as stored: its id, its record, the events it logs and its change feed entry.
struct JobRow {
    id: JobId,
    record: Vec<u8>,
    events: Vec<JobEvent>,
    change: Option<(ChangeKind, DateTime<Utc>)>,
}

/// Encodes job writes before a transaction, so a retry of its closure does no serialisation.
fn encode_job_writes(writes: &[JobWrite]) -> StoreResult<Vec<JobRow>> {
    writes
        .iter()
        .map(|w| {
            Ok(JobRow {
                id: w.job.id,
                record: job_record::encode(&w.job).map_err(backend)?,
                events: w.events.clone(),
                change: w.change.map(|kind| (kind, w.job.updated_at)),
            })
        })
        .collect()
}

#[async_trait]
impl Store for SledStore {
    /// Outside the write gate, so health checks keep answering while a backup holds writes
    /// back: the probe's record means nothing, and a backup may or may not copy it.
    async fn probe_write(&self) -> StoreResult<()> {
        let now = Utc::now().timestamp_nanos_opt().unwrap_or_default();
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            this.meta
                .insert(b"write_probe", &now.to_be_bytes())
                .map_err(backend)?;
            this.db.flush().map(drop).map_err(backend)
        })
        .await
        .map_err(backend)?
    }

    /// Copies every tree into a new sled database in `dir`, with the search index snapshot
    /// beside it, as a data folder [`SledStore::open`] opens.
    ///
    /// Writes wait while the trees are copied (the write gate: sled cannot snapshot several
    /// trees at once, and a job is written with its log entry and jobs version in three);
    /// readers never wait. The copy is then read back and compared with what was copied,
    /// with writes flowing again. The index snapshot is copied first, before the trees: a
    /// snapshot saved meanwhile only makes the copy's first start rebuild the index (the
    /// record of the jobs written since the older snapshot is gone), never miss a job.
    async fn backup_to(&self, dir: &Path) -> StoreResult<super::BackupSummary> {
        let this = self.clone();
        let dir = dir.to_owned();
        tokio::task::spawn_blocking(move || backup::copy(&this, &dir))
            .await
            .map_err(backend)?
    }

    /// The store's folder, and half as much again as its files take: sled lays a copy's
    /// pages out anew, and copies measured 1.16 times the live files at 60,000 jobs (160 MB)
    /// and 1.5 times at 6,000 (12 MB).
    async fn backup_source(&self) -> StoreResult<super::BackupSource> {
        let folder = self.folder.clone();
        tokio::task::spawn_blocking(move || {
            let live = backup::folder_bytes(&folder)?;
            let copy = live.saturating_add(live / 2);
            Ok(super::BackupSource::new(Some(folder), copy))
        })
        .await
        .map_err(backend)?
    }
}

setters!(SledConfig {
    cache_bytes: u64,
    job_cache_bytes: u64,
});
