//! Sled folders in tests: one configuration, opening a folder once its previous owner let go
//! (a restart in this process, or a child process killed a moment ago), and letting go; and
//! reading every job of a store.

use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use job_listings::domain::Job;
use job_listings::service::JobListingsService;
use job_listings::store::{SledConfig, SledStore, Store, StoreError};

/// The sled configuration of the tests: small caches, the database in `path`.
pub fn sled_config(path: &Path) -> SledConfig {
    SledConfig::new(path)
        .cache_bytes(16 * 1024 * 1024)
        .job_cache_bytes(4 * 1024 * 1024)
}

/// Opens the sled database in `path`. Its previous owner may still be letting go of the lock
/// (sled's threads, or a child process just killed), so a locked folder is tried again for up
/// to 10 s; any other error is returned at once.
pub async fn open_sled(path: &Path) -> Result<SledStore, StoreError> {
    when_unlocked(
        || SledStore::open(&sled_config(path)),
        |e| matches!(e, StoreError::Locked { .. }),
    )
    .await
}

/// Calls `open` until it succeeds or fails with an error other than a lock someone else still
/// holds (`locked` tells which), for up to 10 s; then returns what it last gave.
pub async fn when_unlocked<T, E>(
    mut open: impl FnMut() -> Result<T, E>,
    locked: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match open() {
            Err(e) if locked(&e) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            opened => return opened,
        }
    }
}

/// A service and the store it was built on, which a test reads around the service (the
/// service itself offers no way around it). Derefs to the service.
pub struct StoredService {
    pub service: JobListingsService,
    pub store: Arc<dyn Store>,
}

impl std::ops::Deref for StoredService {
    type Target = JobListingsService;
    fn deref(&self) -> &JobListingsService {
        &self.service
    }
}

/// Drops `service` and waits (bounded) until nothing holds its store any more: the connection
/// tasks and the usage writer let go shortly after the server returns, and sled keeps a file
/// lock until then.
pub async fn release(service: StoredService) {
    let store: Weak<dyn Store> = Arc::downgrade(&service.store);
    drop(service);
    for _ in 0..500 {
        if store.strong_count() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        store.strong_count(),
        0,
        "the stopped service still holds its store"
    );
}

/// Every job of a store, page by page.
pub async fn all_jobs(store: &dyn Store) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    loop {
        let page = store
            .scan_jobs(jobs.last().map(|j| j.id), 500)
            .await
            .expect("a scan");
        if page.is_empty() {
            return jobs;
        }
        jobs.extend(page);
    }
}
