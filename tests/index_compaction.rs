//! The service's search index while jobs arrive out of result order: with compaction held
//! off for an import and with the service compacting on its own, searches answer exactly what
//! a scan of the ingested jobs answers, before and after every compaction; and across
//! restarts, loaded from the saved snapshot only while it reflects every stored job. Real
//! sled store.

use std::sync::Arc;

use chrono::Duration;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, Job, JobId, Page, PerPage, Plan};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::service::{JobListingsService, NewKey, Quotas, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};

async fn service(dir: &std::path::Path) -> JobListingsService {
    let store = SledStore::open(&SledConfig::new(dir)).expect("sled opens");
    let config = ServiceConfig {
        quotas: Quotas {
            enterprise: 1 << 30,
            ..Quotas::default()
        },
        ..ServiceConfig::default()
    };
    JobListingsService::builder()
        .store(Arc::new(store))
        .config(config)
        .build()
        .await
        .expect("service builds")
}

/// A service on a sled folder with the companies of a demo dataset of `jobs` jobs, an
/// enterprise key, and the dataset's active jobs in the order [`oldest_first`] gives them
/// (not ingested yet).
async fn with_jobs_oldest_first(
    dir: &std::path::Path,
    seed: u64,
    jobs: usize,
) -> (JobListingsService, ApiKey, Vec<Job>) {
    let service = service(dir).await;
    let data = Dataset::generate(seed, 40, jobs);
    service
        .upsert_companies(data.companies.clone())
        .await
        .expect("companies");
    let (key, _) = service
        .create_key(NewKey::new(Plan::Enterprise))
        .await
        .expect("key");
    (service, key, oldest_first(&data))
}

/// Jobs in the worst order for the index: oldest first, so each is older than the last.
fn oldest_first(data: &Dataset) -> Vec<Job> {
    let mut jobs: Vec<Job> = data
        .jobs
        .iter()
        .filter(|j| j.is_active())
        .cloned()
        .collect();
    // Each job a little older than the one before it.
    let newest = jobs.iter().map(|j| j.posted_at).max().expect("jobs");
    for (i, job) in jobs.iter_mut().enumerate() {
        job.posted_at = newest - Duration::seconds(i as i64);
    }
    jobs
}

/// What a search must answer, by scanning the jobs themselves.
fn expected(jobs: &[Job], filter: &JobFilter, page: u32, per_page: u32) -> (u64, Vec<JobId>) {
    let mut matching: Vec<&Job> = jobs.iter().filter(|j| filter.matches(j)).collect();
    matching.sort_by_key(|j| (std::cmp::Reverse(j.posted_at), j.id));
    let ids = matching
        .iter()
        .skip(((page - 1) * per_page) as usize)
        .take(per_page as usize)
        .map(|j| j.id)
        .collect();
    (matching.len() as u64, ids)
}

async fn assert_searches_exact(service: &JobListingsService, key: &ApiKey, jobs: &[Job]) {
    let filters = [
        JobFilter::default(),
        JobFilter {
            remote_only: true,
            ..JobFilter::default()
        }
        .with_q("engineer"),
        JobFilter::default().with_q("senior"),
    ];
    for filter in filters {
        for (page, per_page) in [(1, 20), (3, 50), (40, 25)] {
            let query = JobQuery {
                filter: filter.clone(),
                page: Page::new(page).expect("page"),
                per_page: PerPage::new(per_page).expect("per_page"),
            };
            let found = service
                .search_jobs(key, query)
                .await
                .expect("search answers")
                .value;
            let ids: Vec<JobId> = found.jobs.iter().map(|j| j.id).collect();
            let (total, want) = expected(jobs, &filter, page, per_page);
            assert_eq!(found.total, total, "{filter:?} total");
            assert_eq!(ids, want, "{filter:?} page {page} of {per_page}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_with_compaction_held_off_searches_exactly_before_and_after_it_compacts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key, jobs) = with_jobs_oldest_first(dir.path(), 11, 6_000).await;
    assert!(jobs.len() > 2_000, "enough jobs to be worth compacting");

    let deferred = service.defer_index_compaction();
    for batch in jobs.chunks(500) {
        service.upsert_jobs(batch.to_vec()).await.expect("ingest");
    }
    assert_searches_exact(&service, &key, &jobs).await;
    deferred.finish().await;
    assert_searches_exact(&service, &key, &jobs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_arriving_out_of_order_one_at_a_time_are_found_exactly_through_compactions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key, jobs) = with_jobs_oldest_first(dir.path(), 12, 3_000).await;
    // Past the point (1,024 out of order) where the service compacts on its own.
    for (i, job) in jobs.iter().enumerate() {
        service.upsert_job(job.clone()).await.expect("ingest");
        if i == 1_000 || i == 1_100 {
            assert_searches_exact(&service, &key, &jobs[..=i]).await;
        }
    }
    assert_searches_exact(&service, &key, &jobs).await;
}

/// The same service reopened on the same folder, once the last one has let go of it.
async fn reopen(dir: &std::path::Path, last: JobListingsService) -> JobListingsService {
    drop(last);
    // Background tasks hold the store until they see the stop signal or their handle drops.
    for _ in 0..200 {
        match SledStore::open(&SledConfig::new(dir)) {
            Ok(store) => {
                drop(store);
                return service(dir).await;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(25)).await,
        }
    }
    panic!("the folder stayed locked after the service was dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_loads_the_saved_index_unless_jobs_were_written_after_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key, jobs) = with_jobs_oldest_first(dir.path(), 13, 3_000).await;
    let (first, later) = jobs.split_at(2_000);
    for batch in first.chunks(500) {
        service.upsert_jobs(batch.to_vec()).await.expect("ingest");
    }
    service.shutdown().await.expect("shutdown saves the index");

    // Loaded from the snapshot: already saved as it is, and exact.
    let service = reopen(dir.path(), service).await;
    assert!(!service.save_index_snapshot().await.expect("save"));
    assert_searches_exact(&service, &key, first).await;

    // Jobs written, then no shutdown (as in a crash): the snapshot is out of date and must
    // not be used, or these jobs would be missing.
    for batch in later.chunks(500) {
        service.upsert_jobs(batch.to_vec()).await.expect("ingest");
    }
    let service = reopen(dir.path(), service).await;
    assert_searches_exact(&service, &key, &jobs).await;
    assert!(service.save_index_snapshot().await.expect("save"));
    assert!(!service.save_index_snapshot().await.expect("save"));

    // A damaged snapshot is rebuilt from the jobs too.
    service.shutdown().await.expect("shutdown");
    let saved = dir.path().join("search-index");
    let mut bytes = std::fs::read(&saved).expect("the snapshot is a file in the folder");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&saved, bytes).expect("damage it");
    let service = reopen(dir.path(), service).await;
    assert_searches_exact(&service, &key, &jobs).await;
    assert!(service.save_index_snapshot().await.expect("save"));
}
