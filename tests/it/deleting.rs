//! Deleting jobs and companies through the service, on the memory store and on sled in a
//! temporary folder (PostgreSQL's deletes are held to the store suite, and its replicas to
//! `replicas.rs`): what is deleted is gone from searches, details and the store, also after a
//! restart and after a start from an index snapshot saved before the delete; a company is
//! kept while active jobs name it, and the closed jobs of a deleted one are still served.

use job_listings::demo::Dataset;
use job_listings::domain::{Company, CompanyId, Job, JobId, JobStatus, Plan};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::service::{Held, IndexOrigin, JobListingsService, NewKey, ServiceError};
use reqwest::StatusCode;
use uuid::Uuid;

use crate::support::data::known;
use crate::support::store::release;
use crate::support::{StoreKind, TestApp};

/// An app on `store` with the hand-made records, served on loopback.
async fn app(store: StoreKind) -> TestApp {
    let known = known();
    TestApp::builder()
        .store(store)
        .seed(Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .spawn()
        .await
}

fn active_jobs_of(company: &Company) -> Vec<Job> {
    known()
        .jobs()
        .into_iter()
        .filter(|j| j.company_id == company.id && j.status == JobStatus::Active)
        .collect()
}

/// Every id a search finds, through the API; the totals are checked against the pages.
async fn found(app: &TestApp, query: &str) -> Vec<String> {
    app.all_job_ids(query).await
}

async fn a_deleted_job_is_gone_from_search_detail_and_store(store: StoreKind) {
    let app = app(store).await;
    let job = known().rust_staff.clone();
    let id = job.id.to_string();
    assert!(found(&app, "q=zephyrine").await.contains(&id));
    assert_eq!(app.get_job(&id).await.status, StatusCode::OK);
    let quokka = app.get_company(&known().quokka.id.to_string()).await;
    let before = quokka.body["active_jobs_total"].as_u64();

    app.service.delete_job(job.id).await.expect("deleted");

    assert!(!found(&app, "q=zephyrine").await.contains(&id));
    assert!(!found(&app, "").await.contains(&id));
    app.get_job(&id)
        .await
        .assert_problem(404, "not_found", None);
    assert_eq!(app.store.get_job(job.id).await.expect("read"), None);
    let quokka = app.get_company(&known().quokka.id.to_string()).await;
    assert_eq!(
        quokka.body["active_jobs_total"].as_u64(),
        before.map(|n| n - 1)
    );
    assert!(matches!(
        app.service.delete_job(job.id).await,
        Err(ServiceError::NotFound { resource: "job" })
    ));
    assert!(matches!(
        app.service.delete_job(JobId(Uuid::new_v4())).await,
        Err(ServiceError::NotFound { resource: "job" })
    ));
}

#[tokio::test]
async fn a_deleted_job_is_gone_from_search_detail_and_store_in_memory() {
    a_deleted_job_is_gone_from_search_detail_and_store(StoreKind::Memory).await;
}

#[tokio::test]
async fn a_deleted_job_is_gone_from_search_detail_and_store_on_sled() {
    a_deleted_job_is_gone_from_search_detail_and_store(StoreKind::Sled).await;
}

#[tokio::test]
async fn a_deleted_job_stays_gone_after_a_restart() {
    let app = app(StoreKind::Sled).await;
    let (deleted, closed) = (known().designer.clone(), known().midnight.clone());
    app.service.delete_job(deleted.id).await.expect("deleted");
    // A closed job is the other way out of search, and stays on record.
    app.service.close_job(closed.id).await.expect("closed");

    let app = app.restart().await;

    let all = found(&app, "").await;
    assert!(!all.contains(&deleted.id.to_string()));
    assert!(!all.contains(&closed.id.to_string()));
    app.get_job(&deleted.id.to_string())
        .await
        .assert_problem(404, "not_found", None);
    let kept = app.get_job(&closed.id.to_string()).await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.text);
    assert_eq!(kept.body["status"], "closed");
    assert_eq!(app.store.get_job(deleted.id).await.expect("read"), None);
    let mut expected = app.expected_ids(|j| j.id != deleted.id && j.id != closed.id);
    expected.sort();
    let mut all = all;
    all.sort();
    assert_eq!(all, expected);
}

/// The service on a sled folder of the test's, with a key to search with.
async fn open(dir: &std::path::Path) -> crate::support::StoredService {
    TestApp::builder()
        .store(StoreKind::SledAt(dir.to_owned()))
        .service()
        .await
}

async fn search_ids(
    service: &JobListingsService,
    key: &job_listings::domain::ApiKey,
) -> Vec<JobId> {
    let query = JobQuery::new(JobFilter::default())
        .per_page(job_listings::domain::PerPage::new(50).expect("a page size"));
    let page = service
        .search_jobs(key, query, Held::Nothing)
        .await
        .expect("a search");
    // The total is the index's own count: a job left in the index but gone from the store
    // would be counted there even though the page skips it.
    assert_eq!(
        page.total,
        page.jobs.len() as u64,
        "one page holds them all"
    );
    page.jobs.iter().map(|j| j.id).collect()
}

#[tokio::test]
async fn a_start_from_a_snapshot_saved_before_a_delete_drops_the_job() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = dir.path().join("db");
    let known = known();
    let service = open(&db).await;
    service
        .upsert_companies(known.companies())
        .await
        .expect("companies");
    service.upsert_jobs(known.jobs()).await.expect("jobs");
    let (key, _) = service
        .create_key(NewKey::new(Plan::Enterprise))
        .await
        .expect("a key");
    assert!(service.save_index_snapshot().await.expect("saved"));
    let deleted = known.tie_first.id;
    assert!(search_ids(&service, &key).await.contains(&deleted));

    service.delete_job(deleted).await.expect("deleted");
    // No shutdown, as in a crash: the snapshot on disk still lists the job.
    release(service).await;

    let service = open(&db).await;
    assert_eq!(
        service.index_origin(),
        IndexOrigin::SnapshotAndWrites { jobs: 1 }
    );
    let ids = search_ids(&service, &key).await;
    assert!(!ids.contains(&deleted));
    let mut expected: Vec<JobId> = known
        .jobs()
        .iter()
        .filter(|j| j.status == JobStatus::Active && j.id != deleted)
        .map(|j| j.id)
        .collect();
    expected.sort();
    let mut ids = ids;
    ids.sort();
    assert_eq!(ids, expected);
    assert!(matches!(
        service.get_job(&key, deleted, Held::Nothing).await,
        Err(ServiceError::NotFound { resource: "job" })
    ));

    // Saved again after the delete, and loaded as it is.
    service.shutdown().await.expect("shut down");
    release(service).await;
    let service = open(&db).await;
    assert_eq!(service.index_origin(), IndexOrigin::Snapshot);
    assert!(!search_ids(&service, &key).await.contains(&deleted));
}

async fn a_company_is_deleted_only_once_no_active_job_names_it(store: StoreKind) {
    let app = app(store).await;
    let known = known();
    let quokka = known.quokka.clone();

    // Active jobs hold it back, each counted.
    let active = active_jobs_of(&quokka);
    match app.service.delete_company(quokka.id).await {
        Err(ServiceError::CompanyHasJobs {
            company,
            active_jobs,
        }) => {
            assert_eq!(company, quokka.id);
            assert_eq!(active_jobs, active.len() as u64);
        }
        other => panic!("refused while it has active jobs, got {other:?}"),
    }
    assert!(app.service.has_company(quokka.id));
    // One deleted and the others closed: only closed ones are left, which do not.
    let (first, rest) = active.split_first().expect("active jobs");
    app.service.delete_job(first.id).await.expect("deleted");
    for job in rest {
        app.service.close_job(job.id).await.expect("closed");
    }
    app.service
        .delete_company(quokka.id)
        .await
        .expect("deleted once only closed jobs name it");

    assert!(!app.service.has_company(quokka.id));
    assert_eq!(app.store.get_company(quokka.id).await.expect("read"), None);
    app.get_company(&quokka.id.to_string())
        .await
        .assert_problem(404, "not_found", None);
    let listed = app.get_companies("per_page=50").await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    assert!(!listed.ids().contains(&quokka.id.to_string()));
    // Its closed jobs are still served, with their company's name and no company record.
    for job in rest.iter().chain([&known.closed]) {
        let detail = app.get_job(&job.id.to_string()).await;
        assert_eq!(detail.status, StatusCode::OK, "{}", detail.text);
        assert_eq!(detail.body["status"], "closed");
        assert_eq!(detail.body["company_name"], quokka.name.as_str());
        assert!(detail.body["company"].is_null(), "{}", detail.text);
    }
    let searched = app.get_jobs("q=zephyrine").await;
    assert_eq!(searched.status, StatusCode::OK, "{}", searched.text);
    // A job for it is refused until it is added again.
    let mut revived = known.closed.clone();
    revived.status = JobStatus::Active;
    match app.service.upsert_job(revived.clone()).await {
        Err(ServiceError::InvalidInput(e)) => assert_eq!(e.field, "company_id"),
        other => panic!("a job of a deleted company is refused, got {other:?}"),
    }
    app.service
        .upsert_company(quokka.clone())
        .await
        .expect("added again");
    app.service.upsert_job(revived).await.expect("then taken");

    assert!(matches!(
        app.service.delete_company(CompanyId(Uuid::new_v4())).await,
        Err(ServiceError::NotFound {
            resource: "company"
        })
    ));
}

#[tokio::test]
async fn a_company_is_deleted_only_once_no_active_job_names_it_in_memory() {
    a_company_is_deleted_only_once_no_active_job_names_it(StoreKind::Memory).await;
}

#[tokio::test]
async fn a_company_is_deleted_only_once_no_active_job_names_it_on_sled() {
    a_company_is_deleted_only_once_no_active_job_names_it(StoreKind::Sled).await;
}

#[tokio::test]
async fn a_deleted_company_stays_gone_after_a_restart_and_its_closed_job_is_served() {
    let app = app(StoreKind::Sled).await;
    let known = known();
    // "Idle Marmoset" has one job, closed.
    app.service
        .delete_company(known.idle.id)
        .await
        .expect("deleted");
    let app = app.restart().await;
    assert!(!app.service.has_company(known.idle.id));
    app.get_company(&known.idle.id.to_string())
        .await
        .assert_problem(404, "not_found", None);
    let detail = app.get_job(&known.idle_closed.id.to_string()).await;
    assert_eq!(detail.status, StatusCode::OK, "{}", detail.text);
    assert!(detail.body["company"].is_null(), "{}", detail.text);
    assert!(matches!(
        app.service.delete_company(known.idle.id).await,
        Err(ServiceError::NotFound {
            resource: "company"
        })
    ));
}
