//! Backups of a running service on sled, on disk, restored into fresh folders: everything
//! comes back (jobs, companies, keys with their usage, webhooks with readable secrets,
//! deliveries and their events, the index snapshot), a backup taken while jobs and counted
//! calls are written restores to a state the store was in and holds everything acknowledged
//! before it began, and what is not a whole backup is never restored. Through the admin API,
//! a target that is no new or empty folder outside the data, or on a disk without room, is
//! refused before anything is written, and one backup runs at a time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use job_listings::api::admin::{AdminApi, AdminToken};
use job_listings::demo::Dataset;
use job_listings::domain::{CallbackUrl, Company, CompanyId, Job, JobId, JobStatus};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::service::{
    restore_backup, Held, IndexOrigin, Metering, NewWebhook, SecretKey, ServiceConfig,
    ServiceError, BACKUP_MANIFEST,
};
use job_listings::store::{BackupSummary, Store, StoreError, StoreResult};
use job_listings::webhooks::CallbackPolicy;
use reqwest::StatusCode;
use uuid::Uuid;

use crate::support::data::known;
use crate::support::server::{server_config, RunningServer};
use crate::support::store::{all_jobs, open_sled, release};
use crate::support::tap::{Tap, TappedStore};
use crate::support::{eventually, Resp, StoreKind, StoredService, TestApp};

fn config(secret: &SecretKey) -> ServiceConfig {
    ServiceConfig::default()
        .secret_key(Some(secret.clone()))
        .callback_policy(CallbackPolicy::local_development())
}

/// The service on a folder of the test's, with the key in `secret.key` beside the data (as
/// the bundled server keeps it), nothing seeded.
async fn open_restored(data: &Path) -> StoredService {
    let key = SecretKey::load_or_create(&data.join("secret.key")).expect("the restored key");
    TestApp::builder()
        .store(StoreKind::SledAt(data.to_owned()))
        .config(config(&key))
        .service()
        .await
}

async fn all_companies(store: &dyn Store) -> Vec<Company> {
    store
        .scan_companies(None, usize::MAX)
        .await
        .expect("a scan")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_backup_serves_everything_the_store_held() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (data, backup, restored) = (
        dir.path().join("data"),
        dir.path().join("backup"),
        dir.path().join("restored"),
    );
    let secret = SecretKey::generate();
    let known = known();
    let app = TestApp::builder()
        .store(StoreKind::SledAt(data.clone()))
        .config(config(&secret))
        .seed(Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .spawn()
        .await;
    // Counted calls (written to the store by the backup itself, not yet by the meter's
    // round), a webhook with its secret, and a delivery waiting with its event.
    for _ in 0..3 {
        let r = app.get_as(&app.keys.developer.raw, "/api/v1/jobs").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let hook = app
        .service
        .create_webhook(
            &app.keys.agent_pro.key,
            NewWebhook::new(CallbackUrl::parse("https://hooks.example.com/b").expect("a URL")),
        )
        .await
        .expect("a webhook")
        .value;
    let fresh = crate::support::data::another(&known.designer);
    assert!(
        app.service
            .upsert_job(fresh)
            .await
            .expect("ingested")
            .announced
    );
    assert_eq!(app.service.fan_out_now().await.expect("fanned out"), 1);
    assert!(app.service.save_index_snapshot().await.expect("saved"));

    let summary = app.service.backup(&backup).await.expect("a backup");

    assert_eq!(
        (
            summary.jobs,
            summary.companies,
            summary.keys,
            summary.webhooks
        ),
        (known.jobs().len() as u64 + 1, 3, 3, 1)
    );
    assert!(summary.bytes > 0 && summary.writes_paused <= summary.took);
    assert!(backup.join(BACKUP_MANIFEST).is_file());
    assert!(backup.join("secret.key").is_file());

    let manifest = restore_backup(&backup, &restored, None).expect("restored");
    assert_eq!(
        (
            manifest.jobs,
            manifest.companies,
            manifest.keys,
            manifest.webhooks
        ),
        (
            summary.jobs,
            summary.companies,
            summary.keys,
            summary.webhooks
        )
    );
    assert!(manifest.secret_key);
    let copy = open_restored(&restored).await;
    assert_eq!(copy.index_origin(), IndexOrigin::Snapshot);

    let (from, to) = (app.store.as_ref(), copy.store.as_ref());
    assert_eq!(all_jobs(to).await, all_jobs(from).await);
    assert_eq!(all_companies(to).await, all_companies(from).await);
    assert_eq!(
        to.jobs_version().await.expect("read"),
        from.jobs_version().await.expect("read")
    );
    assert_eq!(copy.list_keys(), app.service.list_keys());
    assert_eq!(
        to.scan_usage().await.expect("read"),
        from.scan_usage().await.expect("read")
    );
    assert_eq!(
        copy.usage(&app.keys.developer.key)
            .await
            .expect("usage")
            .calls_used,
        3
    );
    assert_eq!(
        to.scan_webhooks().await.expect("read"),
        from.scan_webhooks().await.expect("read")
    );
    let served = copy
        .get_webhook(&app.keys.agent_pro.key, hook.id)
        .await
        .expect("the webhook, its secret opened with the restored key");
    assert_eq!(served.secret.expose(), hook.secret.expose());
    let deliveries = to.deliveries_of(hook.id, 10).await.expect("read");
    assert_eq!(
        deliveries,
        from.deliveries_of(hook.id, 10).await.expect("read")
    );
    assert_eq!(deliveries.len(), 1);
    assert!(to
        .get_event(deliveries[0].event_id)
        .await
        .expect("read")
        .is_some());
    assert_eq!(
        to.log_head().await.expect("read"),
        from.log_head().await.expect("read")
    );
    let query = JobQuery::new(JobFilter::default().with_q("zephyrine"));
    let ids =
        |page: job_listings::service::JobPage| page.jobs.iter().map(|j| j.id).collect::<Vec<_>>();
    assert_eq!(
        ids(copy
            .search_jobs(&app.keys.enterprise.key, query.clone(), Held::Nothing)
            .await
            .expect("a search")
            .value
            .value),
        ids(app
            .service
            .search_jobs(&app.keys.enterprise.key, query, Held::Nothing)
            .await
            .expect("a search")
            .value
            .value)
    );
    // The service goes on as before.
    assert_eq!(app.get_jobs("q=marmalade").await.status, StatusCode::OK);
    app.service
        .upsert_job(known.closed.clone())
        .await
        .expect("written after the backup");
}

#[tokio::test]
async fn what_is_not_a_whole_backup_is_never_restored_and_nothing_is_written_over() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (backup, restored) = (dir.path().join("backup"), dir.path().join("restored"));
    let secret = SecretKey::generate();
    let known = known();
    let app = TestApp::builder()
        .store(StoreKind::SledAt(dir.path().join("data")))
        .config(config(&secret))
        .seed(Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .spawn()
        .await;
    let invalid = |r: Result<_, ServiceError>, field: &str| match r {
        Err(ServiceError::InvalidInput(e)) => assert_eq!(e.field, field, "{}", e.reason),
        Err(other) => panic!("refused as invalid {field}, got {other}"),
        Ok(_) => panic!("refused as invalid {field}, but it went through"),
    };

    // Into a folder that holds something: refused, and the folder left as it was.
    std::fs::create_dir_all(&backup).expect("a folder");
    std::fs::write(backup.join("notes.txt"), b"mine").expect("a file");
    invalid(app.service.backup(&backup).await.map(drop), "dir");
    assert_eq!(std::fs::read_dir(&backup).expect("read").count(), 1);
    std::fs::remove_file(backup.join("notes.txt")).expect("removed");
    // An empty one is fine.
    app.service.backup(&backup).await.expect("a backup");

    // Into a data folder that holds something: refused, nothing there changed.
    std::fs::create_dir_all(&restored).expect("a folder");
    std::fs::write(restored.join("db"), b"old data").expect("a file");
    invalid(
        restore_backup(&backup, &restored, None).map(drop),
        "data_dir",
    );
    assert_eq!(
        std::fs::read(restored.join("db")).expect("read"),
        b"old data"
    );
    std::fs::remove_file(restored.join("db")).expect("removed");

    // A key file elsewhere holding another key: refused before anything is written.
    let other_key = dir.path().join("other.key");
    SecretKey::load_or_create(&other_key).expect("another key");
    invalid(
        restore_backup(&backup, &restored, Some(&other_key)).map(drop),
        "secret_key_file",
    );
    assert_eq!(std::fs::read_dir(&restored).expect("read").count(), 0);

    // A damaged file: the restore stops and removes what it wrote; a missing one, or a
    // backup without its manifest (cut short), is refused before anything is written.
    let copy_of = |name: &str| {
        let to = dir.path().join(name);
        copy_folder(&backup, &to);
        to
    };
    let damaged = copy_of("damaged");
    let db = damaged.join("db");
    let mut bytes = std::fs::read(&db).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&db, bytes).expect("damaged");
    invalid(restore_backup(&damaged, &restored, None).map(drop), "from");
    assert_eq!(std::fs::read_dir(&restored).expect("read").count(), 0);
    let missing = copy_of("missing");
    std::fs::remove_file(missing.join("secret.key")).expect("removed");
    invalid(restore_backup(&missing, &restored, None).map(drop), "from");
    let unfinished = copy_of("unfinished");
    std::fs::remove_file(unfinished.join(BACKUP_MANIFEST)).expect("removed");
    invalid(
        restore_backup(&unfinished, &restored, None).map(drop),
        "from",
    );
    let fresh = dir.path().join("never-made");
    invalid(restore_backup(&unfinished, &fresh, None).map(drop), "from");
    assert!(!fresh.exists());

    // The key kept elsewhere, where the same key already is (replicas share one): left as
    // it is, and the data restored.
    let shared_key = dir.path().join("shared.key");
    std::fs::copy(backup.join("secret.key"), &shared_key).expect("the same key");
    restore_backup(&backup, &restored, Some(&shared_key)).expect("restored");
    assert!(!restored.join("secret.key").exists());
    assert_eq!(
        SecretKey::load_or_create(&shared_key).expect("the key"),
        secret
    );
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("read") {
        let path = entry.expect("an entry").path();
        let target = to.join(path.file_name().expect("a name"));
        if path.is_dir() {
            copy_folder(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copied");
        }
    }
}

#[tokio::test]
async fn a_store_that_cannot_copy_itself_says_what_to_do_instead() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let backup = dir.path().join("backup");
    let service = TestApp::builder().store(StoreKind::Memory).service().await;
    match service.backup(&backup).await {
        Err(ServiceError::Unsupported { store, .. }) => assert_eq!(store, "the memory store"),
        other => panic!("unsupported, got {other:?}"),
    }
    assert!(!backup.exists(), "the folder it made is removed again");
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
async fn a_postgresql_store_is_backed_up_with_pg_dump() {
    let schema = crate::support::pg::TestSchema::create().await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let service = TestApp::builder()
        .store(StoreKind::Postgres(schema.config(2)))
        .service()
        .await;
    match service.backup(&dir.path().join("backup")).await {
        Err(e @ ServiceError::Unsupported { .. }) => {
            assert!(e.to_string().contains("pg_dump"), "{e}");
            assert!(e.to_string().contains("secret key"), "{e}");
        }
        other => panic!("unsupported, got {other:?}"),
    }
}

/// What the writer of the concurrent test has had acknowledged so far.
#[derive(Default)]
struct Acknowledged {
    jobs: AtomicUsize,
    calls: AtomicUsize,
    stop: AtomicBool,
}

/// The first id of the writer's records: after every id of the seeded data, so records
/// written while the jobs tree is copied land where its copy has not reached yet.
const WRITER_IDS: u128 = 0xFFFF << 112;

/// A company and an active job of it, the `n`th of the writer's.
fn pair(n: usize) -> (Company, Job) {
    let template = Dataset::generate(5, 1, 1);
    let mut company = template.companies[0].clone();
    company.id = CompanyId(Uuid::from_u128(WRITER_IDS + 2 * n as u128));
    company.name = format!("Backup Co {n}");
    let mut job = template.jobs[0].clone();
    job.id = JobId(Uuid::from_u128(WRITER_IDS + 2 * n as u128 + 1));
    job.company_id = company.id;
    job.company_name = company.name.clone();
    job.status = JobStatus::Active;
    job.activated_at = None;
    (company, job)
}

/// Jobs, their companies and counted calls written while a backup is taken: the backup holds
/// everything acknowledged before it began, and is a state the store was in: every job's
/// company is there, every job write's log entry and jobs version. The store holds 2,000
/// jobs first, and the writer's ids sort after theirs, so a write landing while the jobs are
/// copied would be copied without its company. (That writes wait for the copy is checked
/// write path by write path in the sled store's own tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_while_jobs_and_calls_are_written_is_a_state_the_store_was_in() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (data, backup, restored) = (
        dir.path().join("data"),
        dir.path().join("backup"),
        dir.path().join("restored"),
    );
    let secret = SecretKey::generate();
    let app = TestApp::builder()
        .store(StoreKind::SledAt(data))
        .seed(Dataset::generate(5, 20, 2_000))
        .config(
            config(&secret)
                // Counted durably before each answer, so "acknowledged" is exact.
                .metering(Metering::InStore)
                .rate_limits(None),
        )
        .spawn()
        .await;
    // A subscription, so every new job logs its announcement with it.
    app.service
        .create_webhook(
            &app.keys.agent_pro.key,
            NewWebhook::new(CallbackUrl::parse("https://hooks.example.com/c").expect("a URL")),
        )
        .await
        .expect("a webhook");
    let start_version = app
        .store
        .jobs_version()
        .await
        .expect("read")
        .expect("sled keeps one");
    let start_head = app.store.log_head().await.expect("read");

    let acked = Arc::new(Acknowledged::default());
    let writer = {
        let (service, acked) = (app.service.clone(), acked.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !acked.stop.load(Ordering::Acquire) {
                let (company, job) = pair(n);
                service.upsert_company(company).await.expect("a company");
                service.upsert_job(job).await.expect("a job");
                n += 1;
                acked.jobs.store(n, Ordering::Release);
            }
        })
    };
    let caller = {
        let (service, acked) = (app.service.clone(), acked.clone());
        let key = app.keys.enterprise.key.clone();
        tokio::spawn(async move {
            while !acked.stop.load(Ordering::Acquire) {
                let query = JobQuery::new(JobFilter::default());
                service
                    .search_jobs(&key, query, Held::Nothing)
                    .await
                    .expect("a search");
                acked.calls.fetch_add(1, Ordering::AcqRel);
            }
        })
    };
    let until = |what: &'static str, jobs: usize| {
        let acked = acked.clone();
        async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while acked.jobs.load(Ordering::Acquire) < jobs {
                assert!(std::time::Instant::now() < deadline, "{what}");
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
    };
    until("the writer got going", 50).await;
    let jobs_before = acked.jobs.load(Ordering::Acquire);
    let calls_before = acked.calls.load(Ordering::Acquire);
    let summary: BackupSummary = app.service.backup(&backup).await.expect("a backup");
    // Writes carry on after it.
    let after = acked.jobs.load(Ordering::Acquire) + 20;
    until("the writer went on", after).await;
    acked.stop.store(true, Ordering::Release);
    writer.await.expect("the writer");
    caller.await.expect("the caller");
    let jobs_after = acked.jobs.load(Ordering::Acquire);
    let calls_after = acked.calls.load(Ordering::Acquire);

    restore_backup(&backup, &restored, None).expect("restored");
    let copy = open_restored(&restored).await;
    let store = copy.store.as_ref();
    let every_job = all_jobs(store).await;
    let companies: std::collections::HashSet<CompanyId> = all_companies(store)
        .await
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(summary.jobs, every_job.len() as u64);
    assert!(every_job.iter().all(|j| companies.contains(&j.company_id)));
    let jobs: Vec<Job> = every_job
        .into_iter()
        .filter(|j| j.id.0.as_u128() >= WRITER_IDS)
        .collect();
    eprintln!(
        "backup: {} of the writer's {jobs_after} jobs, writes paused {:?}, took {:?}",
        jobs.len(),
        summary.writes_paused,
        summary.took
    );
    assert!(jobs.len() >= jobs_before, "{} < {jobs_before}", jobs.len());
    assert!(jobs.len() <= jobs_after);
    // The writer's jobs in order, each after its company: the copy holds a prefix of them,
    // each with its company.
    for (n, copied) in jobs.iter().enumerate() {
        let (company, job) = pair(n);
        assert!(companies.contains(&company.id), "company {n} is there");
        assert_eq!(copied.id, job.id);
    }
    // One jobs version and one announcement per job write.
    let written = jobs.len() as u64;
    assert_eq!(
        store.jobs_version().await.expect("read"),
        Some(start_version + written)
    );
    assert_eq!(store.log_head().await.expect("read"), start_head + written);
    assert_eq!(
        store
            .log_after(start_head, usize::MAX)
            .await
            .expect("the log")
            .iter()
            .map(|e| e.job_id)
            .collect::<Vec<_>>(),
        jobs.iter().map(|j| j.id).collect::<Vec<_>>()
    );
    // Every call acknowledged before the backup is counted in it; none that was not made
    // (the last may have been counted and not yet answered when the caller stopped).
    let used = copy
        .usage(&app.keys.enterprise.key)
        .await
        .expect("usage")
        .calls_used;
    assert!(used >= calls_before as u64, "{used} < {calls_before}");
    assert!(used <= calls_after as u64 + 1, "{used} > {calls_after} + 1");
    // And the restored service indexes exactly what it holds.
    let page = copy
        .search_jobs(
            &app.keys.enterprise.key,
            JobQuery::new(JobFilter::default()),
            Held::Nothing,
        )
        .await
        .expect("a search");
    let seeded_active = app
        .dataset
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Active)
        .count() as u64;
    assert_eq!(page.total, seeded_active + written);
    release(copy).await;
}

// ---------------------------------------------------------------------------------------------
// The admin API's backups: the target checked before anything is written, one at a time
// ---------------------------------------------------------------------------------------------

/// The admin API beside an app, on a listener of its own.
struct Admin {
    server: RunningServer,
    token: AdminToken,
}

impl Admin {
    async fn beside(app: &TestApp) -> Self {
        let token = AdminToken::generate();
        let api = AdminApi::new(app.api.clone(), token.hash());
        let server = RunningServer::start(api, server_config()).await;
        Self { server, token }
    }

    /// `POST /admin/v1/backup` into `to`.
    async fn backup(&self, to: &Path) -> Resp {
        let response = reqwest::Client::new()
            .post(format!("{}/admin/v1/backup", self.server.base))
            .bearer_auth(self.token.expose())
            .json(&serde_json::json!({ "to": to }))
            .send()
            .await
            .expect("answered");
        let status = response.status();
        let headers = response.headers().clone();
        Resp::new(status, headers, response.text().await.expect("a body"))
    }
}

/// A sled app with a few jobs, served, with the service settings given.
async fn served(config: ServiceConfig) -> TestApp {
    let known = known();
    TestApp::builder()
        .config(config)
        .seed(Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .spawn()
        .await
}

/// Asserts a 400 on `to` whose detail names the folder and says `why`.
#[track_caller]
fn refused_target(r: &Resp, to: &Path, why: &str) {
    r.assert_problem(400, "invalid_parameter", Some("to"));
    let detail = r.body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&to.display().to_string()) && detail.contains(why),
        "{} / {why}: {detail}",
        to.display()
    );
}

#[tokio::test]
async fn a_backup_target_that_is_no_new_or_empty_folder_outside_the_data_is_refused() {
    let app = served(ServiceConfig::default()).await;
    let admin = Admin::beside(&app).await;
    let data = app.dir.path().join("db");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "kept as it is").expect("a file");
    let into_data = dir.path().join("into-data");
    std::os::unix::fs::symlink(&data, &into_data).expect("a link");
    let mut cases = vec![
        (file.clone(), "is a file, not a folder"),
        (file.join("backup"), "a part of its path is a file"),
        (dir.path().join("missing/backup"), "does not exist"),
        (data.join("backup"), "inside the live data folder"),
        (data.clone(), "inside the live data folder"),
        (into_data.join("backup"), "inside the live data folder"),
        (app.dir.path().to_owned(), "holds the live data folder"),
    ];
    // A folder that cannot be made: answered 500 before.
    if cfg!(target_os = "linux") {
        cases.push(("/proc/self/backup".into(), "cannot be made"));
    }

    for (to, why) in &cases {
        refused_target(&admin.backup(to).await, to, why);
    }

    // Nothing was written anywhere.
    assert_eq!(
        std::fs::read_to_string(&file).expect("the file"),
        "kept as it is"
    );
    assert!(!dir.path().join("missing").exists());
    assert!(!data.join("backup").exists());
    assert!(!data.join(BACKUP_MANIFEST).exists());
    // And a good folder is backed up.
    let to = dir.path().join("backup");
    let r = admin.backup(&to).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(to.join(BACKUP_MANIFEST).is_file());
}

#[tokio::test]
async fn a_backup_that_would_not_fit_on_its_disk_is_refused_before_anything_is_written() {
    // More headroom than any disk has: the free space is never enough.
    let app = served(ServiceConfig::default().backup_headroom_bytes(u64::MAX / 2)).await;
    let admin = Admin::beside(&app).await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (missing, empty) = (dir.path().join("new"), dir.path().join("empty"));
    std::fs::create_dir(&empty).expect("a folder");

    for to in [&missing, &empty] {
        let r = admin.backup(to).await;
        r.assert_problem(507, "insufficient_storage", None);
        let detail = r.body["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(&to.display().to_string()) && detail.contains("nothing was written"),
            "{detail}"
        );
    }
    assert!(!missing.exists(), "the folder it made is removed again");
    assert_eq!(std::fs::read_dir(&empty).expect("read").count(), 0);
}

#[tokio::test]
async fn a_second_backup_while_one_runs_is_refused_and_the_first_finishes() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (began, mut started) = tokio::sync::mpsc::unbounded_channel();
    let held = Arc::new(HeldBackups {
        started: began,
        gate: tokio::sync::Semaphore::new(0),
        copying: AtomicBool::new(false),
    });
    let sled = Arc::new(open_sled(&dir.path().join("db")).await.expect("sled"));
    let app = TestApp::builder()
        .store(StoreKind::Given(Arc::new(TappedStore::new(
            sled,
            held.clone(),
        ))))
        .spawn()
        .await;
    let admin = Arc::new(Admin::beside(&app).await);
    let to = |name: &str| dir.path().join(name);

    // One under way, held in its copy: another is refused, naming it.
    let first = tokio::spawn({
        let (admin, to) = (admin.clone(), to("first"));
        async move { admin.backup(&to).await }
    });
    assert_eq!(started.recv().await, Some(to("first")));
    let r = admin.backup(&to("second")).await;
    r.assert_problem(409, "backup_in_progress", None);
    let detail = r.body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&to("first").display().to_string()),
        "{detail}"
    );
    assert!(!to("second").exists());
    // Let go, it finishes, and the next one goes through.
    held.gate.add_permits(1);
    let r = first.await.expect("the first backup's call");
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    held.gate.add_permits(1);
    let r = admin.backup(&to("third")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(started.recv().await, Some(to("third")));

    // A backup whose caller stops waiting runs to its end, and holds its place until then.
    let gone = tokio::spawn({
        let (admin, to) = (admin.clone(), to("fourth"));
        async move { admin.backup(&to).await }
    });
    assert_eq!(started.recv().await, Some(to("fourth")));
    gone.abort();
    let r = admin.backup(&to("fifth")).await;
    r.assert_problem(409, "backup_in_progress", None);
    held.gate.add_permits(10);
    let finished = eventually(Duration::from_secs(30), || async {
        to("fourth").join(BACKUP_MANIFEST).is_file()
    })
    .await;
    assert!(finished, "the backup whose caller left was not finished");
}

/// Backups of a tapped sled store that wait in their copy, once begun, until the test lets one
/// go: a backup under way for as long as a test needs.
struct HeldBackups {
    /// Told the folder of each backup as it begins its copy.
    started: tokio::sync::mpsc::UnboundedSender<PathBuf>,
    /// A permit per backup let go.
    gate: tokio::sync::Semaphore,
    /// A backup is in its copy.
    copying: AtomicBool,
}

#[async_trait::async_trait]
impl Tap for HeldBackups {
    /// A second backup while one is held fails at once (rather than waiting at the gate
    /// too), so a service that let two run would fail the test instead of hanging it.
    async fn before_backup(&self, dir: &Path) -> StoreResult<()> {
        if self.copying.swap(true, Ordering::SeqCst) {
            return Err(StoreError::backend(
                "backing up",
                "a second backup began while one was copying",
            ));
        }
        let _ = self.started.send(dir.to_owned());
        self.gate
            .acquire()
            .await
            .expect("the gate stays open")
            .forget();
        Ok(())
    }

    async fn after_backup(&self, _dir: &Path) {
        self.copying.store(false, Ordering::SeqCst);
    }
}
