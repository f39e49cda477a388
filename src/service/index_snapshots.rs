//! The search index at start-up and shutdown: loaded from the store's snapshot when that
//! still reflects every stored job, loaded and brought up to date when the store can say which
//! jobs were written since, else rebuilt from the jobs; saved again on shutdown and every
//! [`ServiceConfig::index_snapshot_interval`] when jobs were written since.
//!
//! [`ServiceConfig::index_snapshot_interval`]: super::ServiceConfig::index_snapshot_interval

use std::sync::Arc;

use crate::domain::{Job, JobId};
use crate::query::JobIndex;
use crate::store::{CatalogStore, IndexSnapshot, JobStore};

use super::indexer::{indexing_failed, spawn_indexer};
use super::{Catalog, ServiceResult};

/// How the search index was made ready when the service started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexOrigin {
    /// Loaded from the store's snapshot, which reflected every stored job.
    Snapshot,
    /// Loaded from the store's snapshot, then the jobs written after it (perhaps before a
    /// crash) indexed again.
    SnapshotAndWrites {
        /// Distinct jobs indexed again.
        jobs: usize,
    },
    /// Rebuilt from every stored job: no usable snapshot, or no record of what was written
    /// after it.
    Rebuilt,
}

/// The index, how it was made, and the jobs version it reflects when that is the saved
/// snapshot's (so shutdown need not save it again).
pub(super) struct LoadedIndex {
    pub(super) index: JobIndex,
    pub(super) origin: IndexOrigin,
    pub(super) saved_version: Option<u64>,
}

/// The index from the store's snapshot when there is a usable one, else rebuilt.
pub(super) async fn load_index(store: &dyn CatalogStore) -> ServiceResult<LoadedIndex> {
    if let Some(version) = store.jobs_version().await? {
        match store.load_index_snapshot().await {
            Ok(Some(snapshot)) if snapshot.jobs_version == version => {
                if let Some(index) = from_snapshot(snapshot).await? {
                    return Ok(LoadedIndex {
                        index: ready_to_serve(index).await?,
                        origin: IndexOrigin::Snapshot,
                        saved_version: Some(version),
                    });
                }
            }
            Ok(Some(snapshot)) => match store.jobs_written_since(snapshot.jobs_version).await {
                Ok(Some(written)) => {
                    if let Some(index) = from_snapshot(snapshot).await? {
                        let jobs = written.len();
                        let index = reindex(store, index, written).await?;
                        tracing::info!(
                            jobs,
                            "index snapshot loaded; the jobs written after it indexed again"
                        );
                        return Ok(LoadedIndex {
                            index,
                            origin: IndexOrigin::SnapshotAndWrites { jobs },
                            saved_version: None,
                        });
                    }
                }
                Ok(None) => tracing::info!(
                    "index snapshot out of date and the store cannot say which jobs were written \
                     after it; rebuilding the index from the stored jobs"
                ),
                Err(e) => tracing::warn!(
                    error = %e,
                    "the record of the jobs written after the index snapshot is unreadable; \
                     rebuilding the index from the stored jobs"
                ),
            },
            Ok(None) => {}
            Err(e) => tracing::warn!(
                error = %e,
                "index snapshot unreadable; rebuilding the index from the stored jobs"
            ),
        }
    }
    Ok(LoadedIndex {
        index: rebuild(store).await?,
        origin: IndexOrigin::Rebuilt,
        saved_version: None,
    })
}

/// The index a snapshot holds; `None` (and a warning) when it cannot be read: damaged, or
/// written by another version of this crate.
async fn from_snapshot(snapshot: IndexSnapshot) -> ServiceResult<Option<JobIndex>> {
    let loaded = tokio::task::spawn_blocking(move || JobIndex::from_snapshot(&snapshot.bytes))
        .await
        .map_err(indexing_failed)?;
    Ok(match loaded {
        Ok(index) => Some(index),
        Err(e) => {
            tracing::warn!(
                error = %e,
                "index snapshot not used; rebuilding the index from the stored jobs"
            );
            None
        }
    })
}

/// Indexes the stored state of `ids` again: added or replaced if active, removed if not,
/// and removed if no longer stored (deleted).
async fn reindex(
    store: &dyn JobStore,
    index: JobIndex,
    ids: Vec<JobId>,
) -> ServiceResult<JobIndex> {
    let (to_index, indexer) = spawn_indexer(index);
    let mut deleted = Vec::new();
    for chunk in ids.chunks(REBUILD_BATCH) {
        let batch: Vec<Job> = store
            .get_jobs(chunk)
            .await?
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect();
        // `get_jobs` skips unknown ids and keeps the order asked, so what it skipped is
        // what is gone.
        let mut found = batch.iter().map(|j| j.id).peekable();
        for &id in chunk {
            match found.peek() == Some(&id) {
                true => drop(found.next()),
                false => deleted.push(id),
            }
        }
        if to_index.send(batch).await.is_err() {
            break;
        }
    }
    drop(to_index);
    let mut index = indexer.await.map_err(indexing_failed)?;
    for id in deleted {
        index.remove(id);
    }
    ready_to_serve(index).await
}

/// Jobs read from the store at a time while rebuilding: two of the indexer's parts, so the
/// second part's words are gathered while the first's are added.
const REBUILD_BATCH: usize = 16_384;

/// Indexes every stored job in bulk: read here while the indexer indexes the batches before.
async fn rebuild(store: &dyn JobStore) -> ServiceResult<JobIndex> {
    let (to_index, indexer) = spawn_indexer(JobIndex::new());
    let mut after = None;
    loop {
        let batch = store.scan_jobs(after, REBUILD_BATCH).await?;
        let Some(last) = batch.last() else {
            break;
        };
        after = Some(last.id);
        // The indexer stops early only by panicking, which `indexer.await` reports.
        if to_index.send(batch).await.is_err() {
            break;
        }
    }
    drop(to_index);
    let index = indexer.await.map_err(indexing_failed)?;
    ready_to_serve(index).await
}

/// Compacted once, and from then on only by the service, on a copy
/// (`compact_index_if_due`), so searches never wait for a compaction.
async fn ready_to_serve(mut index: JobIndex) -> ServiceResult<JobIndex> {
    index.set_auto_compact(false);
    if !index.needs_compaction() {
        return Ok(index);
    }
    let index = tokio::task::spawn_blocking(move || {
        index.compact();
        index
    })
    .await
    .map_err(indexing_failed)?;
    Ok(index)
}

impl Catalog {
    /// Saves the search index to the store, so the next start loads it instead of indexing
    /// every job again; [`JobListingsService::shutdown`] does this, and the service every
    /// [`ServiceConfig::index_snapshot_interval`]. Does nothing when the store's snapshot
    /// already reflects every job, or the store keeps none (returns whether it saved one).
    /// Job writes wait while the index is copied out, not while the copy is written;
    /// searches never wait.
    ///
    /// [`ServiceConfig::index_snapshot_interval`]: super::ServiceConfig::index_snapshot_interval
    pub(super) async fn save_index_snapshot(self: &Arc<Self>) -> ServiceResult<bool> {
        let writes = self.ingest.lock().await;
        let Some(version) = self.store.jobs_version().await? else {
            return Ok(false);
        };
        let mut saved = self.saved_snapshot.lock().await;
        if *saved == Some(version) {
            self.shared
                .stats
                .snapshot_current_at(std::time::Instant::now());
            return Ok(false);
        }
        let this = self.clone();
        let started = std::time::Instant::now();
        let bytes = tokio::task::spawn_blocking(move || this.read_index().to_snapshot())
            .await
            .map_err(indexing_failed)?;
        // The bytes are the index at `version`; what is written after it is recorded under
        // later versions, which the store keeps.
        drop(writes);
        let copied = started.elapsed();
        let size = bytes.len();
        let snapshot = IndexSnapshot {
            jobs_version: version,
            bytes,
        };
        self.store.save_index_snapshot(snapshot).await?;
        *saved = Some(version);
        // It reflects every job as of the copy, made while job writes waited.
        self.shared.stats.snapshot_current_at(started + copied);
        tracing::info!(
            bytes = size,
            writes_waited = ?copied,
            saved_in = ?started.elapsed(),
            "index snapshot saved"
        );
        Ok(true)
    }

    /// How the search index was made ready when the service started.
    pub(super) fn index_origin(&self) -> IndexOrigin {
        self.index_origin
    }
}
