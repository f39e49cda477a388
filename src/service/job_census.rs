//! The count of closed jobs. The search index knows the active jobs; closed ones are only in
//! the store, where counting them means reading every job. So they are counted once after
//! start, in the background, a batch at a time under the ingest lock, and every job write
//! keeps the count from then on: a write to a job the census has read changes the count, a
//! write to one it has yet to read is counted when it reads it. Writes and batches take turns
//! on the lock, so no job is counted twice or missed.

use std::sync::{Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::{retry_delay, Catalog, ServiceResult};
use crate::domain::JobId;

/// Jobs read per batch: the ingest lock is held for one batch at a time, a few milliseconds.
const BATCH: usize = 1_024;

/// The closed jobs counted so far, and how far the census has read.
#[derive(Debug, Default)]
pub(super) struct ClosedJobs {
    census: Mutex<Census>,
}

#[derive(Debug, Default)]
struct Census {
    closed: i64,
    /// The last job id read (the store hands jobs out in id order); `None` before the first
    /// batch.
    through: Option<JobId>,
    done: bool,
}

impl ClosedJobs {
    /// The count, once the census is done.
    pub(super) fn count(&self) -> Option<u64> {
        let census = self.lock();
        census
            .done
            .then(|| u64::try_from(census.closed).unwrap_or(0))
    }

    /// A write changed whether these jobs are closed: +1 closed now, -1 open again. The caller
    /// holds the ingest lock.
    pub(super) fn record(&self, changes: &[(JobId, i64)]) {
        let mut census = self.lock();
        for (id, change) in changes {
            if census.done || census.through.is_some_and(|through| *id <= through) {
                census.closed += change;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Census> {
        self.census.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts the stored closed jobs, a batch at a time, until done or stopped; a failed batch is
/// read again after a pause.
pub(super) async fn count_closed_jobs(catalog: Weak<Catalog>, mut stop: watch::Receiver<bool>) {
    let mut failures = 0;
    loop {
        if *stop.borrow() {
            return;
        }
        let Some(catalog) = catalog.upgrade() else {
            return;
        };
        let started = std::time::Instant::now();
        let step = catalog.census_step().await;
        let pause = match step {
            Ok(true) => return,
            // As long again as the batch took: the census, which only feeds a gauge, takes
            // at most half a core from the requests served meanwhile (at a million long
            // posts it reads gigabytes), and writes get the lock in between.
            Ok(false) => started.elapsed(),
            Err(e) => {
                failures += 1;
                let pause = retry_delay(Duration::from_secs(1), failures);
                tracing::error!(error = %e, ?pause, "counting the closed jobs failed; will retry");
                pause
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.changed() => return,
        }
    }
}

impl Catalog {
    /// Reads the next batch of the census under the ingest lock; `true` once every job is read.
    async fn census_step(&self) -> ServiceResult<bool> {
        let _writes = self.ingest.lock().await;
        let closed_jobs = &self.shared.stats.closed_jobs;
        let after = closed_jobs.lock().through;
        let batch = self.store.scan_jobs(after, BATCH).await?;
        let closed = batch.iter().filter(|j| !j.is_active()).count();
        let mut census = closed_jobs.lock();
        census.closed += i64::try_from(closed).unwrap_or(i64::MAX);
        census.through = batch.last().map(|j| j.id).or(after);
        census.done = batch.len() < BATCH;
        if census.done {
            tracing::debug!(closed = census.closed, "closed jobs counted");
        }
        Ok(census.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> JobId {
        JobId(uuid::Uuid::from_bytes([n; 16]))
    }

    #[test]
    fn a_write_counts_when_the_census_has_read_the_job_and_waits_for_it_otherwise() {
        let closed = ClosedJobs::default();
        {
            let mut census = closed.lock();
            census.closed = 5;
            census.through = Some(id(10));
        }
        closed.record(&[(id(3), 1), (id(10), -1), (id(11), 1)]);
        assert_eq!(closed.count(), None, "not done yet");
        closed.lock().done = true;
        assert_eq!(closed.count(), Some(5));
        closed.record(&[(id(11), 1)]);
        assert_eq!(closed.count(), Some(6));
    }
}
