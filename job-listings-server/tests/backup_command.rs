//! The `job-listings` binary's `backup` and `restore` commands, run as an operator runs them:
//! a data folder with jobs, companies, keys with counted calls, a webhook with its sealed
//! secret and a delivery waiting, backed up into a folder and restored into a new data
//! folder that holds the same, and what is refused: a folder that is not empty, inside the
//! data folder or a file, a folder that is not a backup, PostgreSQL.

mod support;

use std::path::Path;
use std::sync::Arc;

use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, CallbackUrl, Job, JobId, Plan, Subscription};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::service::{
    JobListingsService, NewKey, NewWebhook, SecretKey, ServiceConfig, BACKUP_MANIFEST,
};
use job_listings::store::{SledConfig, SledStore, Store};

use support::{all_jobs, path, refused, run, sled_let_go, succeeded};

/// A service on the data folder `data` as the server opens it: sled, and the secret key in
/// `secret.key` there.
async fn open(data: &Path) -> (Arc<dyn Store>, JobListingsService) {
    let store: Arc<dyn Store> =
        Arc::new(SledStore::open(&SledConfig::new(data)).expect("sled opens"));
    let key = SecretKey::load_or_create(&data.join("secret.key")).expect("the key file");
    let service = JobListingsService::builder()
        .store(store.clone())
        .config(ServiceConfig::default().secret_key(Some(key)))
        .build()
        .await
        .expect("the service builds");
    (store, service)
}

/// Shuts the service down and waits until sled has let go of the folder (it holds a lock on
/// its `db` file until its last thread is done), so the binary can open it.
async fn close(data: &Path, opened: (Arc<dyn Store>, JobListingsService)) {
    let (store, service) = opened;
    service.shutdown().await.expect("shut down");
    drop((store, service));
    sled_let_go(data).await;
}

/// What the original folder held, to compare the restored one with.
struct Held {
    jobs: Vec<Job>,
    key: ApiKey,
    hook: Subscription,
    calls: u64,
}

/// A data folder with companies, jobs, keys, counted calls, a webhook and a delivery.
async fn fill(data: &Path) -> Held {
    let opened = open(data).await;
    let service = &opened.1;
    let dataset = Dataset::generate(41, 12, 600);
    service
        .upsert_companies(dataset.companies.clone())
        .await
        .expect("companies");
    service
        .upsert_jobs(dataset.jobs.clone())
        .await
        .expect("jobs");
    let (key, _) = service
        .create_key(NewKey::new(Plan::AgentPro))
        .await
        .expect("a key");
    service
        .create_key(NewKey::new(Plan::Developer))
        .await
        .expect("a key");
    let hook = service
        .create_webhook(
            &key,
            NewWebhook::new(CallbackUrl::parse("https://hooks.example.com/j").expect("a URL")),
        )
        .await
        .expect("a webhook")
        .value;
    for _ in 0..4 {
        service
            .search_jobs(
                &key,
                JobQuery::new(JobFilter::default()),
                job_listings::service::Held::Nothing,
            )
            .await
            .expect("a search");
    }
    let mut fresh = dataset.jobs[0].clone();
    fresh.id = JobId(uuid::Uuid::new_v4());
    // Another role: a new job, not a repost of the first.
    fresh.role = format!("{} for the second team", fresh.role);
    assert!(service.upsert_job(fresh).await.expect("a job").announced);
    assert_eq!(service.fan_out_now().await.expect("fanned out"), 1);
    let calls = service.usage(&key).await.expect("usage").calls_used;
    assert_eq!(calls, 5, "four searches and the registration");
    let jobs = all_jobs(opened.0.as_ref()).await;
    close(data, opened).await;
    Held {
        jobs,
        key,
        hook,
        calls,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_restores_into_a_data_folder_that_holds_the_same() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (data, backup, restored) = (
        dir.path().join("data"),
        dir.path().join("backup"),
        dir.path().join("restored"),
    );
    let held = fill(&data).await;

    let said = succeeded(&run(&data, &["backup", "--to", path(&backup)]));
    assert!(
        said.contains("601 jobs, 12 companies, 2 keys and 1 webhook"),
        "{said}"
    );
    assert!(backup.join(BACKUP_MANIFEST).is_file());
    assert!(backup.join("secret.key").is_file());

    // Nothing is written over: not the backup, not a data folder.
    let again = refused(&run(&data, &["backup", "--to", path(&backup)]));
    assert!(again.contains("is not empty"), "{again}");
    let said = succeeded(&run(&restored, &["restore", "--from", path(&backup)]));
    assert!(said.contains("Restored 601 jobs"), "{said}");
    let again = refused(&run(&restored, &["restore", "--from", path(&backup)]));
    assert!(again.contains("is not empty"), "{again}");

    let opened = open(&restored).await;
    let (store, service) = (&opened.0, &opened.1);
    assert_eq!(all_jobs(store.as_ref()).await, held.jobs);
    assert_eq!(service.company_count(), 12);
    assert_eq!(service.list_keys().len(), 2);
    assert_eq!(
        service.usage(&held.key).await.expect("usage").calls_used,
        held.calls
    );
    let hook = service
        .get_webhook(&held.key, held.hook.id)
        .await
        .expect("the webhook, its secret opened with the restored key")
        .value;
    assert_eq!(hook.secret.expose(), held.hook.secret.expose());
    let deliveries = store.deliveries_of(hook.id, 10).await.expect("deliveries");
    assert_eq!(deliveries.len(), 1);
    assert!(store
        .get_event(deliveries[0].event_id)
        .await
        .expect("read")
        .is_some());
    close(&restored, opened).await;
}

#[tokio::test]
async fn what_is_not_a_backup_or_not_sled_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (data, elsewhere) = (dir.path().join("data"), dir.path().join("elsewhere"));
    // A data folder is not a backup: nothing is made.
    succeeded(&run(&data, &["keys", "create", "--plan", "developer"]));
    let said = refused(&run(&elsewhere, &["restore", "--from", path(&data)]));
    assert!(said.contains("holds no backup-manifest.json"), "{said}");
    assert!(!elsewhere.exists());
    // No data folder to back up: nothing is made either.
    let said = refused(&run(
        &dir.path().join("missing"),
        &["backup", "--to", path(&elsewhere)],
    ));
    assert!(said.contains("there is no data folder"), "{said}");
    assert!(!dir.path().join("missing").exists());
    // PostgreSQL is backed up with its own tools.
    for args in [
        ["backup", "--to", path(&elsewhere)],
        ["restore", "--from", path(&data)],
    ] {
        let mut with_pg = vec!["--database-url", "postgres://nobody@127.0.0.1:9/none"];
        with_pg.extend(args);
        let said = refused(&run(&data, &with_pg));
        assert!(
            said.contains("pg_dump") || said.contains("pg_restore"),
            "{said}"
        );
    }
    assert!(!elsewhere.exists());
}

#[test]
fn a_target_that_is_no_new_or_empty_folder_outside_the_data_is_refused_before_opening() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("data");
    succeeded(&run(&data, &["keys", "create", "--plan", "developer"]));
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "kept as it is").expect("a file");
    for (to, why) in [
        (data.join("backup"), "is inside the live data folder"),
        (file.clone(), "is a file, not a folder"),
        (dir.path().join("missing/backup"), "does not exist"),
    ] {
        let said = refused(&run(&data, &["backup", "--to", path(&to)]));
        assert!(
            said.contains(path(&to)) && said.contains(why),
            "{}: {said}",
            to.display()
        );
    }
    assert!(!data.join("backup").exists());
    assert!(!dir.path().join("missing").exists());
    assert_eq!(
        std::fs::read_to_string(&file).expect("the file"),
        "kept as it is"
    );
}
