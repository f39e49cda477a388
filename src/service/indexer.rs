//! An index grown from batches of jobs on its own blocking thread, while the caller reads or
//! writes the next batches: the bulk paths (import, start-up) share it.

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::domain::{Job, JobId};
use crate::query::JobIndex;
use crate::store::StoreError;

/// Batches the caller may be ahead of the indexer by: enough that a reader never waits for
/// one slow batch, few enough that memory holds only a few batches of jobs.
const BATCHES_AHEAD: usize = 3;

/// A batch of jobs the indexer adds.
pub(super) trait IndexBatch: Send + Sized + 'static {
    /// Adds or replaces the jobs of every batch, in order.
    fn add_all(index: &mut JobIndex, batches: &[Self]) -> Result<(), StoreError>;
}

/// Decoded jobs.
impl IndexBatch for Vec<Job> {
    fn add_all(index: &mut JobIndex, batches: &[Self]) -> Result<(), StoreError> {
        index.extend(batches.iter().flatten());
        Ok(())
    }
}

/// Stored jobs as their JSON ([`Store::scan_jobs_json`]): only the fields the index reads are
/// decoded, on the index's own threads. A job that cannot be read stops the indexing with
/// [`StoreError::Corrupt`], as reading it whole would have.
///
/// [`Store::scan_jobs_json`]: crate::store::Store::scan_jobs_json
impl IndexBatch for Vec<(JobId, Bytes)> {
    fn add_all(index: &mut JobIndex, batches: &[Self]) -> Result<(), StoreError> {
        let stored: Vec<&(JobId, Bytes)> = batches.iter().flatten().collect();
        let json: Vec<&[u8]> = stored.iter().map(|(_, json)| &json[..]).collect();
        index
            .extend_from_json(&json)
            .map_err(|e| StoreError::Corrupt {
                key: stored[e.position].0.to_string(),
                reason: e.reason,
            })
    }
}

/// Starts indexing into `index` (which is not compacted meanwhile) every batch sent to the
/// returned sender, in order. Once the sender is dropped, the task compacts the index if it
/// needs it and returns it. A batch that cannot be indexed ends the task with its error (and
/// the sender's next send fails).
pub(super) fn spawn_indexer<B: IndexBatch>(
    mut index: JobIndex,
) -> (mpsc::Sender<B>, JoinHandle<Result<JobIndex, StoreError>>) {
    let (to_index, mut batches) = mpsc::channel::<B>(BATCHES_AHEAD);
    index.set_auto_compact(false);
    let indexer = tokio::task::spawn_blocking(move || {
        index.start_bulk_load();
        while let Some(batch) = batches.blocking_recv() {
            // Whatever else has arrived meanwhile goes in the same call: the index overlaps
            // the parts of one call (one part's jobs are read while the one before is
            // added), so the further behind it is, the more it overlaps.
            let mut waiting = vec![batch];
            while let Ok(more) = batches.try_recv() {
                waiting.push(more);
            }
            B::add_all(&mut index, &waiting)?;
        }
        index.finish_bulk_load();
        if index.needs_compaction() {
            index.compact();
        }
        Ok(index)
    });
    (to_index, indexer)
}

/// An indexing task that panicked or was cancelled, as the store error the bulk paths report.
pub(super) fn indexing_failed(e: tokio::task::JoinError) -> StoreError {
    StoreError::Backend(format!("building the search index failed: {e}"))
}
