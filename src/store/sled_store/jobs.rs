//! [`JobStore`] on sled: jobs in their versioned records behind the decoded-job cache,
//! companies, the jobs version with the ids each write wrote, and the index snapshot file.

use super::*;
use crate::store::{FeedBounds, FeedEntry};

#[async_trait]
impl JobStore for SledStore {
    async fn get_job(&self, id: JobId) -> StoreResult<Option<Arc<Job>>> {
        self.cached_job(id)
    }

    async fn get_jobs(&self, ids: &[JobId]) -> StoreResult<Vec<Arc<Job>>> {
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            out.extend(self.cached_job(id)?);
        }
        Ok(out)
    }

    async fn write_jobs(&self, writes: &[JobWrite]) -> StoreResult<()> {
        let rows = encode_job_writes(writes)?;
        self.durably(move |s| s.write_job_rows(&rows)).await
    }

    async fn write_jobs_deferred(&self, writes: &[JobWrite]) -> StoreResult<()> {
        let rows = encode_job_writes(writes)?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            rows.chunks(DEFERRED_ROWS).try_for_each(|chunk| {
                // Per transaction, so a backup waits for one chunk at most.
                let _writing = this.writing();
                this.write_job_rows(chunk)
            })
        })
        .await
        .map_err(backend)?
    }

    async fn flush(&self) -> StoreResult<()> {
        self.durably(|_| Ok(())).await
    }

    async fn delete_job(&self, id: JobId) -> StoreResult<bool> {
        self.durably(move |s| s.delete_job_row(id)).await
    }

    async fn scan_jobs(&self, after: Option<JobId>, limit: usize) -> StoreResult<Vec<Job>> {
        // Reading and decoding a batch may wait on the disk for every page of it: off the
        // async threads, which serve requests meanwhile.
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let after = after.as_ref().map(|a| a.0.as_bytes().as_slice());
            Self::entries_after(&this.jobs, after)
                .take(limit)
                .map(|item| {
                    let (key, record) = item.map_err(backend)?;
                    decode_job(&key, &record)
                })
                .collect()
        })
        .await
        .map_err(backend)?
    }

    async fn jobs_version(&self) -> StoreResult<Option<u64>> {
        let stored = self.meta.get(JOBS_VERSION).map_err(backend)?;
        Ok(Some(version_of(stored.as_deref())))
    }

    async fn jobs_written_since(&self, version: u64) -> StoreResult<Option<Vec<JobId>>> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.job_changes_since(version))
            .await
            .map_err(backend)?
    }
}

#[async_trait]
impl IndexSnapshotStore for SledStore {
    async fn load_index_snapshot(&self) -> StoreResult<Option<IndexSnapshot>> {
        let path = self.index_snapshot.clone();
        tokio::task::spawn_blocking(move || snapshot_file::read(&path))
            .await
            .map_err(backend)?
    }

    async fn save_index_snapshot(&self, snapshot: IndexSnapshot) -> StoreResult<()> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            snapshot_file::write(&this.index_snapshot, &snapshot)?;
            let _writing = this.writing();
            this.forget_job_changes_through(snapshot.jobs_version)
        })
        .await
        .map_err(backend)?
    }
}

#[async_trait]
impl JobFeedStore for SledStore {
    async fn feed_after(&self, after: u64, limit: usize) -> StoreResult<Vec<FeedEntry>> {
        // A page may read its jobs from disk: off the async threads.
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.feed_entries_after(after, limit))
            .await
            .map_err(backend)?
    }

    async fn feed_bounds(&self) -> StoreResult<FeedBounds> {
        self.feed_bounds_now()
    }

    async fn prune_feed(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize> {
        self.durably(move |s| s.prune_feed_entries(before, limit))
            .await
    }
}

#[async_trait]
impl CompanyStore for SledStore {
    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>> {
        Self::get(&self.companies, id.0.as_bytes())
    }

    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()> {
        let mut batch = sled::Batch::default();
        for c in companies {
            batch.insert(c.id.0.as_bytes().as_slice(), encode(c)?);
        }
        self.durably(move |s| s.companies.apply_batch(batch).map_err(backend))
            .await
    }

    async fn delete_company(&self, id: CompanyId) -> StoreResult<bool> {
        self.durably(move |s| {
            s.companies
                .remove(id.0.as_bytes())
                .map(|old| old.is_some())
                .map_err(backend)
        })
        .await
    }

    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit: usize,
    ) -> StoreResult<Vec<Company>> {
        Self::scan(
            &self.companies,
            after.as_ref().map(|a| a.0.as_bytes().as_slice()),
            limit,
        )
    }
}
