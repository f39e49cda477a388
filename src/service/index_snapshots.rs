//! The search index at start-up and shutdown: loaded from the store's snapshot when that
//! still reflects every stored job, else rebuilt from the jobs; saved again on shutdown when
//! jobs were written since.

use crate::query::JobIndex;
use crate::store::{IndexSnapshot, Store};

use super::indexer::{indexing_failed, spawn_indexer};
use super::{JobListingsService, ServiceResult};

/// The index and, when it came from the store's snapshot, that snapshot's jobs version.
pub(super) async fn load_index(store: &dyn Store) -> ServiceResult<(JobIndex, Option<u64>)> {
    if let Some(version) = store.jobs_version().await? {
        match store.load_index_snapshot().await {
            Ok(Some(snapshot)) if snapshot.jobs_version == version => {
                let loaded =
                    tokio::task::spawn_blocking(move || JobIndex::from_snapshot(&snapshot.bytes))
                        .await
                        .map_err(indexing_failed)?;
                match loaded {
                    Ok(index) => return Ok((ready_to_serve(index).await?, Some(version))),
                    Err(e) => tracing::warn!(
                        error = %e,
                        "index snapshot not used; rebuilding the index from the stored jobs"
                    ),
                }
            }
            Ok(Some(_)) => tracing::info!(
                "index snapshot out of date (jobs were written after it, perhaps before a \
                 crash); rebuilding the index from the stored jobs"
            ),
            Ok(None) => {}
            Err(e) => tracing::warn!(
                error = %e,
                "index snapshot unreadable; rebuilding the index from the stored jobs"
            ),
        }
    }
    Ok((rebuild(store).await?, None))
}

/// Jobs read from the store at a time while rebuilding: two of the indexer's parts, so the
/// second part's words are gathered while the first's are added.
const REBUILD_BATCH: usize = 16_384;

/// Indexes every stored job in bulk: read and decoded here while the indexer indexes the
/// batches before.
async fn rebuild(store: &dyn Store) -> ServiceResult<JobIndex> {
    let (to_index, indexer) = spawn_indexer(JobIndex::new());
    let mut after = None;
    loop {
        let batch = store.scan_jobs(after, REBUILD_BATCH).await?;
        let Some(last) = batch.last() else { break };
        after = Some(last.id);
        // The indexer only stops early by panicking, which `indexer.await` reports.
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

impl JobListingsService {
    /// Saves the search index to the store, so the next start loads it instead of indexing
    /// every job again; [`JobListingsService::shutdown`] does this. Does nothing when the
    /// store's snapshot already reflects every job, or the store keeps none (returns whether
    /// it saved one). Job writes wait meanwhile; searches do not.
    pub async fn save_index_snapshot(&self) -> ServiceResult<bool> {
        let _writes = self.inner.ingest.lock().await;
        let Some(version) = self.inner.store.jobs_version().await? else {
            return Ok(false);
        };
        let mut saved = self.inner.saved_snapshot.lock().await;
        if *saved == Some(version) {
            return Ok(false);
        }
        let this = self.clone();
        let bytes = tokio::task::spawn_blocking(move || this.read_index().to_snapshot())
            .await
            .map_err(indexing_failed)?;
        let snapshot = IndexSnapshot {
            jobs_version: version,
            bytes,
        };
        self.inner.store.save_index_snapshot(snapshot).await?;
        *saved = Some(version);
        Ok(true)
    }
}
