//! An index grown from batches of jobs on its own blocking thread, while the caller reads or
//! writes the next batches: the bulk paths (import, start-up) share it.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::domain::Job;
use crate::query::JobIndex;
use crate::store::StoreError;

/// Batches the caller may be ahead of the indexer by: enough that a reader never waits for
/// one slow batch, few enough that memory holds only a few batches of jobs.
const BATCHES_AHEAD: usize = 3;

/// Starts indexing into `index` (which is not compacted meanwhile) every batch sent to the
/// returned sender, in order. Once the sender is dropped, the task compacts the index if it
/// needs it and returns it. It stops early only by panicking, which its handle reports (and
/// the sender's next send fails).
pub(super) fn spawn_indexer(mut index: JobIndex) -> (mpsc::Sender<Vec<Job>>, JoinHandle<JobIndex>) {
    let (to_index, mut batches) = mpsc::channel::<Vec<Job>>(BATCHES_AHEAD);
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
            index.extend(waiting.iter().flatten());
        }
        index.finish_bulk_load();
        if index.needs_compaction() {
            index.compact();
        }
        index
    });
    (to_index, indexer)
}

/// An indexing task that panicked or was cancelled, as the store error the bulk paths report.
pub(super) fn indexing_failed(e: tokio::task::JoinError) -> StoreError {
    StoreError::backend("building the search index", e)
}
