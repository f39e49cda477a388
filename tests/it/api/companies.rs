//! GET /companies and GET /companies/{id}.

use std::collections::BTreeMap;

use job_listings::domain::{Company, CompanyId};
use reqwest::StatusCode;
use uuid::Uuid;

use super::spawn_app;
use crate::support::data::{id_of, ids, known};
use crate::support::{Resp, TestApp};

/// Companies with at least one active job, with their counts, by name (case-insensitive)
/// then id: computed from the seeded data, not asked of the service.
fn expected_companies(app: &TestApp, keep: impl Fn(&Company) -> bool) -> Vec<(String, u64)> {
    let mut counts: BTreeMap<CompanyId, u64> = BTreeMap::new();
    for job in app.all_jobs().iter().filter(|j| j.is_active()) {
        *counts.entry(job.company_id).or_default() += 1;
    }
    let mut with_jobs: Vec<(Company, u64)> = app
        .all_companies()
        .iter()
        .filter(|c| keep(c))
        .filter_map(|c| counts.get(&c.id).map(|n| (c.clone(), *n)))
        .collect();
    with_jobs.sort_by(|(a, _), (b, _)| {
        a.name
            .to_lowercase()
            .cmp(&b.name.to_lowercase())
            .then(a.id.cmp(&b.id))
    });
    with_jobs
        .into_iter()
        .map(|(c, n)| (c.id.to_string(), n))
        .collect()
}

fn listed(r: &Resp) -> Vec<(String, u64)> {
    r.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_owned(),
                c["active_jobs_total"].as_u64().expect("active_jobs_total"),
            )
        })
        .collect()
}

#[tokio::test]
async fn get_companies_lists_only_companies_with_active_jobs() {
    let app = spawn_app().await;
    let expected = expected_companies(&app, |_| true);
    let r = app.get_companies("per_page=50").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(listed(&r), expected);
    assert_eq!(r.total(), expected.len() as u64);
    let idle = known().idle.id.to_string();
    assert!(!r.ids().contains(&idle), "a company with only closed jobs");
}

#[tokio::test]
async fn get_companies_entries_carry_funding_stage_domain_and_blurb() {
    let app = spawn_app().await;
    let r = app
        .get_companies("funding_stage=series_a&per_page=50")
        .await;
    let quokka = r.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|c| c["id"] == known().quokka.id.to_string())
        .expect("Quokka is listed")
        .clone();
    assert_eq!(quokka["name"], "Quokka Frobnitz");
    assert_eq!(quokka["funding_stage"], "series_a");
    assert_eq!(quokka["domain"], "quokkafrobnitz.example.org");
    assert_eq!(quokka["blurb"], "Quokka Frobnitz makes things.");
    assert_eq!(quokka["active_jobs_total"], 5);
    assert!(
        quokka.get("active_jobs").is_none(),
        "the list gives the count only"
    );
}

#[tokio::test]
async fn get_companies_filters_by_funding_stage_in_any_spelling() {
    let app = spawn_app().await;
    let expected = expected_companies(&app, |c| c.funding_stage.as_str() == "series_a");
    assert!(expected.len() >= 2, "Quokka and demo companies");
    assert!(expected.contains(&(known().quokka.id.to_string(), 5)));
    for spelling in ["series_a", "Series%20A", "series-a", "SERIES_A"] {
        let r = app
            .get_companies(&format!("funding_stage={spelling}&per_page=50"))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{spelling}: {}", r.text);
        assert_eq!(listed(&r), expected, "{spelling}");
        assert_eq!(r.body["meta"]["filters"]["funding_stage"], "series_a");
    }
    assert_eq!(app.get_companies("funding_stage=series_z").await.total(), 0);
}

#[tokio::test]
async fn get_companies_pages_through_the_list() {
    let app = spawn_app().await;
    let expected = expected_companies(&app, |_| true);
    let first = app.get_companies("per_page=5").await;
    assert_eq!(first.body["pagination"]["per_page"], 5);
    assert_eq!(
        first.body["pagination"]["total_pages"],
        expected.len().div_ceil(5) as u64
    );
    let mut all = Vec::new();
    let mut page = 1;
    loop {
        let r = app.get_companies(&format!("per_page=5&page={page}")).await;
        assert_eq!(r.status, StatusCode::OK);
        let got = listed(&r);
        if got.is_empty() {
            break;
        }
        assert!(got.len() <= 5);
        all.extend(got);
        page += 1;
    }
    assert_eq!(all, expected);
    let default = app.get_companies("").await;
    assert_eq!(default.body["pagination"]["page"], 1);
    assert_eq!(default.body["pagination"]["per_page"], 20);
}

#[tokio::test]
async fn get_companies_drops_a_company_whose_last_active_job_closes() {
    let app = spawn_app().await;
    let wombat = known().wombat.id.to_string();
    assert!(app
        .get_companies("per_page=50")
        .await
        .ids()
        .contains(&wombat));
    for job in [&known().wombat_job, &known().after_midnight] {
        app.service.close_job(job.id).await.expect("closed");
    }
    assert!(!app
        .get_companies("per_page=50")
        .await
        .ids()
        .contains(&wombat));
}

#[tokio::test]
async fn get_companies_returns_400_for_a_malformed_funding_stage() {
    let app = spawn_app().await;
    app.get_companies("funding_stage=a/b").await.assert_problem(
        400,
        "invalid_parameter",
        Some("funding_stage"),
    );
}

#[tokio::test]
async fn get_companies_returns_400_for_an_unknown_parameter() {
    let app = spawn_app().await;
    app.get_companies("stage=seed")
        .await
        .assert_problem(400, "unknown_parameter", Some("stage"));
}

#[tokio::test]
async fn get_company_returns_enrichment_and_active_jobs_newest_first() {
    let app = spawn_app().await;
    let k = known();
    let r = app.get_company(&k.quokka.id.to_string()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["id"], k.quokka.id.to_string());
    assert_eq!(r.body["name"], "Quokka Frobnitz");
    assert_eq!(r.body["funding_stage"], "series_a");
    assert_eq!(r.body["domain"], "quokkafrobnitz.example.org");
    assert_eq!(r.body["blurb"], "Quokka Frobnitz makes things.");
    assert_eq!(
        r.body["enrichment"],
        serde_json::to_value(&k.quokka.enrichment).expect("JSON")
    );
    assert_eq!(r.body["active_jobs_total"], 5);
    let jobs: Vec<String> = r.body["active_jobs"]
        .as_array()
        .expect("active_jobs")
        .iter()
        .map(|j| j["id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(
        jobs,
        ids(&[
            &k.rust_staff,
            &k.designer,
            &k.tie_first,
            &k.tie_second,
            &k.midnight
        ])
    );
    assert!(!jobs.contains(&id_of(&k.closed)));
}

#[tokio::test]
async fn get_company_of_a_demo_company_lists_all_its_active_jobs() {
    let app = spawn_app().await;
    let c = &app.dataset.companies[0];
    let expected = app.expected_ids(|j| j.company_id == c.id);
    let r = app.get_company(&c.id.to_string()).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["active_jobs_total"], expected.len() as u64);
    let jobs: Vec<String> = r.body["active_jobs"]
        .as_array()
        .expect("active_jobs")
        .iter()
        .map(|j| j["id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(jobs, expected[..expected.len().min(100)]);
}

#[tokio::test]
async fn get_jobs_by_company_id_pages_through_every_job_the_detail_cuts_at_100() {
    let app = spawn_app().await;
    // The demo company with the most active jobs: more than the detail lists.
    let (company, expected) = app
        .dataset
        .companies
        .iter()
        .map(|c| (c.id, app.expected_ids(|j| j.company_id == c.id)))
        .max_by_key(|(_, ids)| ids.len())
        .expect("demo companies");
    assert!(expected.len() > 100, "{} jobs", expected.len());

    let all = app.all_job_ids(&format!("company_id={company}")).await;
    assert_eq!(all, expected);
    let detail = app.get_company(&company.to_string()).await;
    assert_eq!(detail.body["active_jobs_total"], expected.len() as u64);
    let listed: Vec<&str> = detail.body["active_jobs"]
        .as_array()
        .expect("active_jobs")
        .iter()
        .filter_map(|j| j["id"].as_str())
        .collect();
    assert_eq!(listed, expected[..100]);

    let first = app
        .get_jobs(&format!("company_id={company}&per_page=5"))
        .await;
    assert_eq!(
        first.body["meta"]["filters"]["company_id"],
        company.to_string()
    );
    assert!(first.body["links"]["next"]
        .as_str()
        .is_some_and(|next| next.contains(&format!("company_id={company}"))));

    // With another filter, both apply; another company's id finds none of these.
    let remote = app.expected_ids(|j| j.company_id == company && j.remote);
    assert_eq!(
        app.all_job_ids(&format!("company_id={company}&remote_only=true"))
            .await,
        remote
    );
    let unfiltered = app.get_jobs("").await;
    assert!(unfiltered.body["meta"]["filters"]
        .get("company_id")
        .is_none());
    assert_eq!(
        app.get_jobs(&format!("company_id={}", CompanyId::new_random()))
            .await
            .total(),
        0
    );
}

#[tokio::test]
async fn get_jobs_returns_400_naming_company_id_when_it_is_not_a_uuid() {
    let app = spawn_app().await;
    for query in ["company_id=acme", "company_id="] {
        let r = app.get_jobs(query).await;
        r.assert_problem(400, "invalid_parameter", Some("company_id"));
    }
}

#[tokio::test]
async fn get_company_with_only_closed_jobs_has_an_empty_job_list() {
    let app = spawn_app().await;
    let r = app.get_company(&known().idle.id.to_string()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["active_jobs_total"], 0);
    assert_eq!(r.body["active_jobs"], serde_json::json!([]));
}

#[tokio::test]
async fn get_company_returns_404_for_an_unknown_id() {
    let app = spawn_app().await;
    app.get_company(&Uuid::new_v4().to_string())
        .await
        .assert_problem(404, "not_found", None);
}

#[tokio::test]
async fn get_company_returns_400_naming_id_when_the_id_is_not_a_uuid() {
    let app = spawn_app().await;
    app.get_company("acme")
        .await
        .assert_problem(400, "invalid_parameter", Some("id"));
}
