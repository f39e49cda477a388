//! The service's search index while jobs arrive out of result order: with compaction held
//! off for an import and with the service compacting on its own, searches answer exactly what
//! a scan of the ingested jobs answers, before and after every compaction; and across
//! restarts, whether loaded from the saved snapshot, loaded and brought up to date with the
//! jobs written after it, or rebuilt. A bulk import stores, indexes and announces jobs as
//! one-batch ingest does. Real sled store.

use std::path::Path;
use std::sync::Arc;

use chrono::Duration;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, Job, JobId, Page, PerPage, Plan};
use job_listings::domain::{CallbackUrl, CompanyId, JobStatus};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::service::{
    Held, ImportError, IndexOrigin, JobListingsService, ManualClock, NewKey, NewWebhook, Quotas,
    RecordKind, ServiceConfig,
};

use crate::support::store::open_sled;
use crate::support::{StoreKind, StoredService, TestApp};

/// A service on the sled folder `dir` whose enterprise quota does not run out.
async fn open_service(dir: &Path) -> StoredService {
    service_on_clock(dir, None).await
}

/// [`open_service`], on a clock stopped where the test says when `clock` is given.
async fn service_on_clock(dir: &Path, clock: Option<Arc<ManualClock>>) -> StoredService {
    let config = ServiceConfig::default().quotas(Quotas::default().enterprise(1 << 30));
    let mut builder = TestApp::builder()
        .store(StoreKind::SledAt(dir.to_owned()))
        .config(config);
    if let Some(clock) = clock {
        builder = builder.clock(clock);
    }
    builder.service().await
}

/// A service on a sled folder with the companies of a demo dataset of `jobs` jobs, an
/// enterprise key, and the dataset's active jobs in the order [`oldest_first`] gives them
/// (not ingested yet).
async fn with_jobs_oldest_first(
    dir: &Path,
    seed: u64,
    jobs: usize,
) -> (StoredService, ApiKey, Vec<Job>) {
    let service = open_service(dir).await;
    let data = Dataset::generate(seed, 40, jobs);
    let key = with_companies_and_key(&service, &data).await;
    (service, key, oldest_first(&data))
}

/// Adds the dataset's companies and issues an enterprise key.
async fn with_companies_and_key(service: &JobListingsService, data: &Dataset) -> ApiKey {
    service
        .upsert_companies(data.companies.clone())
        .await
        .expect("companies");
    let (key, _) = service
        .create_key(NewKey::new(Plan::Enterprise))
        .await
        .expect("key");
    key
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
        JobFilter::default().remote_only(true).with_q("engineer"),
        JobFilter::default().with_q("senior"),
    ];
    for filter in filters {
        for (page, per_page) in [(1, 20), (3, 50), (40, 25)] {
            let query = JobQuery::new(filter.clone())
                .page(Page::new(page).expect("page"))
                .per_page(PerPage::new(per_page).expect("per_page"));
            let found = service
                .search_jobs(key, query, Held::Nothing)
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

/// The same service reopened on the same folder, once the last one has let go of it
/// (background tasks hold the store until they see the stop signal or their handle drops).
async fn reopen(dir: &Path, last: StoredService) -> StoredService {
    drop(last);
    open_service(dir).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_loads_the_saved_index_and_indexes_again_only_what_was_written_after_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key, jobs) = with_jobs_oldest_first(dir.path(), 13, 3_000).await;
    let (first, later) = jobs.split_at(2_000);
    for batch in first.chunks(500) {
        service.upsert_jobs(batch.to_vec()).await.expect("ingest");
    }
    service.shutdown().await.expect("shutdown saves the index");

    // Loaded from the snapshot: already saved as it is, and exact.
    let service = reopen(dir.path(), service).await;
    assert_eq!(service.index_origin(), IndexOrigin::Snapshot);
    assert!(!service.save_index_snapshot().await.expect("save"));
    assert_searches_exact(&service, &key, first).await;

    // New jobs, jobs of the snapshot closed and reworded, then no shutdown (as in a crash):
    // the snapshot is loaded and exactly the jobs written after it are indexed again.
    for batch in later.chunks(500) {
        service.upsert_jobs(batch.to_vec()).await.expect("ingest");
    }
    let mut now = jobs.clone();
    for (i, job) in now.iter_mut().take(300).enumerate() {
        if i % 2 == 0 {
            job.status = JobStatus::Closed;
        } else {
            job.role = format!("Zephyrologist {i}");
        }
    }
    service
        .upsert_jobs(now[..300].to_vec())
        .await
        .expect("closed and reworded");
    let service = reopen(dir.path(), service).await;
    assert_eq!(
        service.index_origin(),
        IndexOrigin::SnapshotAndWrites {
            jobs: later.len() + 300
        }
    );
    assert_searches_exact(&service, &key, &now).await;
    assert_word_finds_exactly(&service, &key, "zephyrologist", &now).await;
    assert!(service.save_index_snapshot().await.expect("save"));
    assert!(!service.save_index_snapshot().await.expect("save"));

    // A damaged snapshot is rebuilt from the jobs.
    service.shutdown().await.expect("shutdown");
    let saved = dir.path().join("search-index");
    let mut bytes = std::fs::read(&saved).expect("the snapshot is a file in the folder");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&saved, bytes).expect("damage it");
    let service = reopen(dir.path(), service).await;
    assert_eq!(service.index_origin(), IndexOrigin::Rebuilt);
    assert_searches_exact(&service, &key, &now).await;
    assert_word_finds_exactly(&service, &key, "zephyrologist", &now).await;
    assert!(service.save_index_snapshot().await.expect("save"));
}

/// A record of the jobs written after the snapshot that cannot be read does not stop the
/// service: it starts from every stored job instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_record_of_later_writes_makes_the_start_rebuild_the_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key, jobs) = with_jobs_oldest_first(dir.path(), 15, 600).await;
    let (first, later) = jobs.split_at(300);
    service.upsert_jobs(first.to_vec()).await.expect("ingest");
    assert!(service.save_index_snapshot().await.expect("save"));
    service.upsert_jobs(later.to_vec()).await.expect("ingest");
    let version = service
        .store
        .jobs_version()
        .await
        .expect("version")
        .expect("sled keeps one");
    drop(service);

    // No shutdown, as in a crash; then the last write's record damaged.
    let db = open_when_free(dir.path()).await;
    let changes = db.open_tree("job_changes").expect("the record");
    assert!(changes
        .insert(version.to_be_bytes(), &b"not ids"[..])
        .expect("written")
        .is_some());
    db.flush().expect("flushed");
    drop((changes, db));

    let service = open_service(dir.path()).await;
    assert_eq!(service.index_origin(), IndexOrigin::Rebuilt);
    assert_searches_exact(&service, &key, &jobs).await;
}

/// A stored job that cannot be read fails the rebuild at start-up with an error that names
/// it, rather than a panic or an index that silently lacks it.
#[tokio::test]
async fn a_stored_job_that_cannot_be_read_fails_the_rebuild_and_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, _key, jobs) = with_jobs_oldest_first(dir.path(), 16, 1_500).await;
    service.upsert_jobs(jobs.clone()).await.expect("ingest");
    drop(service);

    // No shutdown, so no snapshot: the next start rebuilds from the stored jobs.
    let db = open_when_free(dir.path()).await;
    let damaged = jobs[700].id;
    let stored = db.open_tree("jobs").expect("the jobs");
    assert!(stored
        .insert(damaged.0.as_bytes(), &br#"{"id": 42, "role": "no"}"#[..])
        .expect("written")
        .is_some());
    db.flush().expect("flushed");
    drop((stored, db));

    let store = open_sled(dir.path()).await.expect("sled opens");
    let started = JobListingsService::builder()
        .store(Arc::new(store))
        .build()
        .await;
    let Err(error) = started else {
        panic!("the start should fail on the damaged job");
    };
    let message = error.to_string();
    assert!(message.contains(&damaged.to_string()), "{message}");
    assert!(message.contains("could not be decoded"), "{message}");
}

/// `q=word` finds every active job with the word in its role, and no other.
async fn assert_word_finds_exactly(
    service: &JobListingsService,
    key: &ApiKey,
    word: &str,
    jobs: &[Job],
) {
    let filter = JobFilter::default().with_q(word);
    let query = JobQuery::new(filter.clone())
        .page(Page::new(1).expect("page"))
        .per_page(PerPage::new(50).expect("per_page"));
    let found = service
        .search_jobs(key, query, Held::Nothing)
        .await
        .expect("search")
        .value;
    let (total, want) = expected(jobs, &filter, 1, 50);
    assert!(total > 100, "the reworded jobs are active");
    assert_eq!(found.total, total);
    assert_eq!(found.jobs.iter().map(|j| j.id).collect::<Vec<_>>(), want);
}

/// The sled database in `dir`, once the service that held it has let go of it.
async fn open_when_free(dir: &Path) -> sled::Db {
    for _ in 0..200 {
        if let Ok(opened) = sled::open(dir) {
            return opened;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the folder at {} was not let go of", dir.display());
}

/// A service on `dir` that saves its index every `interval_ms`.
async fn saving_every(dir: &Path, interval_ms: u64) -> StoredService {
    TestApp::builder()
        .store(StoreKind::SledAt(dir.to_owned()))
        .config(
            ServiceConfig::default()
                .index_snapshot_interval(Some(std::time::Duration::from_millis(interval_ms))),
        )
        .service()
        .await
}

/// The service saves its index every `index_snapshot_interval` on its own, so a crash long
/// after the last shutdown still starts from a recent snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_is_saved_on_an_interval_and_a_start_after_a_crash_loads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let service = saving_every(dir.path(), 100).await;
    assert_eq!(service.index_origin(), IndexOrigin::Rebuilt, "a new folder");
    let data = Dataset::generate(14, 20, 800);
    let key = with_companies_and_key(&service, &data).await;
    let jobs = oldest_first(&data);
    service.upsert_jobs(jobs.clone()).await.expect("ingest");

    // Saved by the service within a few intervals; nothing else saves it.
    let store = service.store.clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let version = store.jobs_version().await.expect("version");
        let snapshot = store.load_index_snapshot().await.expect("snapshot");
        if snapshot.is_some_and(|s| Some(s.jobs_version) == version) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no snapshot of the current jobs was saved"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    drop(store);

    // No shutdown, as in a crash; saving only at shutdown from now on.
    drop(service);
    let service = saving_every(dir.path(), 3_600_000).await;
    assert_eq!(service.index_origin(), IndexOrigin::Snapshot);
    assert_searches_exact(&service, &key, &jobs).await;
}
/// A service with the dataset's companies, an enterprise key and a subscription to every new
/// job, on a clock stopped at `now`.
async fn subscribed(
    dir: &Path,
    data: &Dataset,
    now: chrono::DateTime<chrono::Utc>,
) -> (StoredService, ApiKey) {
    let service = service_on_clock(dir, Some(Arc::new(ManualClock::new(now)))).await;
    let key = with_companies_and_key(&service, data).await;
    let url = CallbackUrl::parse("https://hooks.example.com/jobs").expect("a callback URL");
    service
        .create_webhook(&key, NewWebhook::new(url))
        .await
        .expect("a subscription");
    (service, key)
}

/// Jobs as a bulk load meets them: in no order, some closed, some ids twice (changed, closed,
/// or closed first and active later).
fn jobs_with_repeats(data: &Dataset) -> Vec<Job> {
    let mut jobs = data.jobs.clone();
    jobs.reverse();
    for (i, job) in data.jobs.iter().step_by(13).enumerate() {
        let mut again = job.clone();
        again.role = format!("Quokka wrangler {i}");
        again.status = if i % 3 == 0 {
            JobStatus::Closed
        } else {
            JobStatus::Active
        };
        jobs.insert((i * 7) % jobs.len(), again);
    }
    for job in data.jobs.iter().filter(|j| !j.is_active()).take(50) {
        let mut active = job.clone();
        active.status = JobStatus::Active;
        jobs.push(active);
    }
    jobs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_stores_indexes_and_announces_as_upsert_jobs_does_and_survives_a_restart() {
    let data = Dataset::generate(21, 40, 9_000);
    let jobs = jobs_with_repeats(&data);
    let now = chrono::Utc::now();
    let (imported_dir, upserted_dir) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let (importer, key) = subscribed(imported_dir.path(), &data, now).await;
    let (upserter, _) = subscribed(upserted_dir.path(), &data, now).await;

    // Spawned, as a program serving requests meanwhile would run it.
    let reported = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (importing, sink, batch) = (importer.clone(), reported.clone(), jobs.clone());
    let summary = tokio::spawn(async move {
        importing
            .import_jobs(batch, move |n| sink.lock().expect("lock").push(n))
            .await
    })
    .await
    .expect("the import task")
    .expect("the import succeeds");
    let outcomes = upserter.upsert_jobs(jobs.clone()).await.expect("ingest");

    // The same counts, stored jobs and queued deliveries as one batch of `upsert_jobs`.
    let created = outcomes.iter().filter(|o| o.created).count();
    assert_eq!(summary.created, created);
    assert_eq!(summary.updated, jobs.len() - created);
    assert!(summary.updated > 0, "the repeated ids count as updates");
    assert_eq!(
        summary.announced,
        outcomes.iter().filter(|o| o.announced).count()
    );
    assert!(summary.announced > 0, "new active jobs are announced");
    let logged = importer
        .store
        .log_after(0, 1 << 20)
        .await
        .expect("the outbox log");
    assert_eq!(logged.len(), summary.announced);
    let mut ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    ids.sort();
    ids.dedup();
    let stored = importer.store.get_jobs(&ids).await.expect("stored");
    let expected_jobs = upserter.store.get_jobs(&ids).await.expect("stored");
    assert_eq!(stored, expected_jobs);
    let progress = reported.lock().expect("lock").clone();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    assert_eq!(progress.last(), Some(&jobs.len()));

    // Searchable at once, and again after a restart with no snapshot saved (as after a crash
    // right after the import returned).
    let active = active_of(stored);
    assert_searches_exact(&importer, &key, &active).await;
    let importer = reopen(imported_dir.path(), importer).await;
    assert_searches_exact(&importer, &key, &active).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_with_a_job_of_an_unknown_company_writes_nothing_and_names_the_job() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = Dataset::generate(22, 10, 500);
    let (service, key) = subscribed(dir.path(), &data, chrono::Utc::now()).await;
    let mut jobs = data.jobs.clone();
    jobs[321].company_id = CompanyId(uuid::Uuid::from_u128(7));
    let error = service
        .import_jobs(jobs.clone(), |_| panic!("nothing may be written"))
        .await
        .expect_err("the import is refused");
    let message = error.to_string();
    assert!(message.contains("job 321"), "{message}");
    assert!(message.contains(&jobs[321].id.to_string()), "{message}");
    assert!(message.contains("is unknown"), "{message}");
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    assert!(service.store.get_jobs(&ids).await.expect("read").is_empty());
    assert_searches_exact(&service, &key, &[]).await;
}

/// The active ones of jobs as a store shares them.
fn active_of(stored: Vec<Arc<Job>>) -> Vec<Job> {
    stored
        .into_iter()
        .filter(|j| j.is_active())
        .map(Arc::unwrap_or_clone)
        .collect()
}

/// The dataset's jobs sorted by id, in batches of `size`.
fn sorted_batches(data: &Dataset, size: usize) -> Vec<Vec<Job>> {
    let mut jobs = data.jobs.clone();
    jobs.sort_by_key(|j| j.id);
    jobs.chunks(size).map(<[Job]>::to_vec).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sorted_import_that_stops_keeps_the_batches_before_stored_and_searchable() {
    let data = Dataset::generate(23, 20, 3_000);
    let batches = sorted_batches(&data, 1_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key) = subscribed(dir.path(), &data, chrono::Utc::now()).await;

    // The source fails at its third batch: the two before are imported.
    let mut arriving: Vec<Result<Vec<Job>, String>> =
        batches.iter().take(2).cloned().map(Ok).collect();
    arriving.push(Err("the disk went away".to_owned()));
    arriving.push(Ok(batches[2].clone()));
    let reported = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reported.clone();
    let error = service
        .import_sorted_jobs(arriving, move |n| sink.lock().expect("lock").push(n))
        .await
        .expect_err("the source failed");
    assert!(
        matches!(&error, ImportError::Source(why) if why == "the disk went away"),
        "{error:?}"
    );
    assert_eq!(reported.lock().expect("lock").last(), Some(&2_000));
    let before: Vec<Job> = batches[..2].concat();
    let ids: Vec<JobId> = data.jobs.iter().map(|j| j.id).collect();
    let stored = service.store.get_jobs(&ids).await.expect("read");
    assert_eq!(stored.len(), 2_000);
    assert!(stored.iter().all(|s| before.iter().any(|j| j.id == s.id)));
    let active = active_of(stored);
    assert_searches_exact(&service, &key, &active).await;

    // A batch that does not come after the one before is refused, and named; the batch
    // before it is written, so every job is now stored and searchable.
    let out_of_order = vec![Ok::<_, String>(batches[2].clone()), Ok(batches[0].clone())];
    let error = service
        .import_sorted_jobs(out_of_order, |_| {})
        .await
        .expect_err("the second batch is out of order");
    let message = error.to_string();
    assert!(message.contains("batch 2"), "{message}");
    assert!(message.contains("ascending id order"), "{message}");
    let stored = service.store.get_jobs(&ids).await.expect("read");
    assert_eq!(stored.len(), 3_000);
    let active = active_of(stored);
    assert_searches_exact(&service, &key, &active).await;
    let summary = service
        .import_sorted_jobs(vec![Ok::<_, String>(batches[0].clone())], |_| {})
        .await
        .expect("a batch imports again");
    assert_eq!((summary.created, summary.updated), (0, 1_000));
}

/// The command's import of a sorted file: lines in id order through the one import routine,
/// with an id repeated on both sides of a batch's end. Every job is written once, the later
/// line of an id wins, and the searches answer exactly what is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_in_id_order_are_imported_whole_with_the_later_line_of_an_id_winning() {
    let data = Dataset::generate(29, 20, 10_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let (service, key) = subscribed(dir.path(), &data, chrono::Utc::now()).await;
    let mut jobs = data.jobs.clone();
    jobs.sort_by_key(|j| j.id);
    // Lines 4,094 to 4,099 (around the end of the first batch of 4,096) each come twice, the
    // second time with another role.
    let mut lines = Vec::new();
    for (n, job) in jobs.iter().enumerate() {
        lines.push(serde_json::to_vec(job).expect("a line"));
        if (4_093..4_099).contains(&n) {
            let mut again = job.clone();
            again.role = format!("{} (reposted)", job.role);
            lines.push(serde_json::to_vec(&again).expect("a line"));
        }
    }
    let mut import = service.import_lines(RecordKind::Jobs).in_id_order(true);
    for (n, line) in lines.iter().enumerate() {
        import.line(n + 1, line).await.expect("a line taken");
    }
    let report = import.finish().await.expect("imported");
    assert_eq!(report.records, 10_006);
    assert_eq!(
        (report.created, report.updated, report.refused),
        (10_000, 6, 0)
    );
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    let stored = service.store.get_jobs(&ids).await.expect("read");
    assert_eq!(stored.len(), 10_000);
    for (n, job) in jobs.iter().enumerate() {
        let kept = stored.iter().find(|s| s.id == job.id).expect("stored");
        assert_eq!(
            kept.role.ends_with("(reposted)"),
            (4_093..4_099).contains(&n),
            "job {n}"
        );
    }
    assert_searches_exact(&service, &key, &active_of(stored)).await;
}
