//! Closing what the crawler stopped seeing: the active jobs last seen before a time.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{Catalog, ServiceResult, Subscriptions};
use crate::domain::JobId;

/// What [`JobListingsService::close_unseen_jobs`](super::JobListingsService::close_unseen_jobs)
/// found and did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnseenClosed {
    /// Active jobs last seen before the time (reposts included).
    pub matched: u64,
    /// How many of them were closed: none on a dry run.
    pub closed: u64,
}

/// Jobs closed per durable write.
const CLOSE_PER_WRITE: usize = 512;

impl Catalog {
    /// Closes the active jobs last seen strictly before `before` (or only counts them, on a
    /// dry run), a batch at a time; each closing is a `job.closed`.
    pub(super) async fn close_unseen(
        self: &Arc<Self>,
        subscriptions: &Subscriptions,
        before: DateTime<Utc>,
        dry_run: bool,
    ) -> ServiceResult<UnseenClosed> {
        let ingest = self.ingest.lock().await;
        let unseen: Vec<JobId> = self.read_index().unseen_since(before);
        let matched = unseen.len() as u64;
        if dry_run {
            return Ok(UnseenClosed { matched, closed: 0 });
        }
        let mut closed = 0;
        for ids in unseen.chunks(CLOSE_PER_WRITE) {
            // As stored now: a job closed by grouping an earlier batch is left alone.
            let jobs: Vec<_> = self
                .store
                .get_jobs(ids)
                .await?
                .into_iter()
                .filter(|j| j.is_active())
                .collect();
            if jobs.is_empty() {
                continue;
            }
            closed += self.close_active(subscriptions, jobs, &ingest).await?.len() as u64;
        }
        Ok(UnseenClosed { matched, closed })
    }
}
