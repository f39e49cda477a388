//! Facets (`facets=` on GET /jobs and GET /companies) and the warnings about filter values
//! nothing in the data holds: the vocabularies are open, so an unknown label is answered, not
//! refused, and the answer names the labels that exist.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use job_listings::domain::{CompanyId, DomainTag, Job};
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::spawn_app;
use crate::support::data::{has_domain, has_level, known, q_matches, word_set};
use crate::support::{at, TestApp};

/// `[{"value", "count"}]` from counts, most first then by value, zeros left out.
fn ranked(counts: BTreeMap<String, u64>) -> Value {
    let mut list: Vec<(String, u64)> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Value::Array(
        list.into_iter()
            .map(|(value, count)| json!({ "value": value, "count": count }))
            .collect(),
    )
}

/// The `meta.facets` a search for the active jobs `keep` accepts should answer, counted here
/// over the seeded data.
fn expected_job_facets(app: &TestApp, keep: impl Fn(&Job) -> bool) -> Value {
    let hits: Vec<&Job> = app
        .all_jobs()
        .iter()
        .filter(|j| j.is_active() && keep(j))
        .collect();
    let mut domains = BTreeMap::new();
    let mut levels = BTreeMap::new();
    for job in &hits {
        let tags: BTreeSet<&str> = job.domains.iter().map(|d| d.as_str()).collect();
        for tag in tags {
            *domains.entry(tag.to_owned()).or_default() += 1;
        }
        let own: BTreeSet<&str> = job.seniority.iter().map(|s| s.as_str()).collect();
        for level in own {
            *levels.entry(level.to_owned()).or_default() += 1;
        }
    }
    let remote = hits.iter().filter(|j| j.remote).count();
    json!({
        "domain": ranked(domains),
        "seniority": ranked(levels),
        "remote": { "true": remote, "false": hits.len() - remote },
    })
}

/// Which seeded jobs a search should match.
type Keep = Box<dyn Fn(&Job) -> bool>;

/// The values of a facet list, in order.
fn values(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a facet list")
        .iter()
        .map(|v| v["value"].as_str().expect("value").to_owned())
        .collect()
}

#[tokio::test]
async fn job_facets_count_the_whole_filtered_result_as_a_count_over_the_data_does() {
    let app = spawn_app().await;
    let quokka = known().quokka.name.clone();
    let company_words = word_set(&quokka);
    let cases: Vec<(String, Keep)> = vec![
        (String::new(), Box::new(|_| true)),
        ("q=engineer".into(), Box::new(|j| q_matches(j, "engineer"))),
        ("remote_only=true".into(), Box::new(|j| j.remote)),
        (
            "domain=ai,data&remote_only=true".into(),
            Box::new(|j| j.remote && (has_domain(j, "ai") || has_domain(j, "data"))),
        ),
        (
            "seniority=senior&q=engineer".into(),
            Box::new(|j| has_level(j, "senior") && q_matches(j, "engineer")),
        ),
        (
            format!("company={quokka}"),
            Box::new(move |j| company_words.is_subset(&word_set(&j.company_name))),
        ),
        (
            "min_confidence=0.8&posted_after=2026-06-01".into(),
            Box::new(|j| j.confidence.get() >= 0.8 && j.posted_at > at(2026, 6, 1, 0, 0, 0)),
        ),
    ];
    for (filters, keep) in cases {
        let expected = expected_job_facets(&app, keep);
        let sep = if filters.is_empty() { "" } else { "&" };
        let r = app
            .get_jobs(&format!("{filters}{sep}facets=domain,seniority,remote"))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{filters}: {}", r.text);
        let facets = &r.body["meta"]["facets"];
        assert_eq!(*facets, expected, "{filters}");
        let total = r.total();
        assert_eq!(
            facets["remote"]["true"].as_u64().unwrap()
                + facets["remote"]["false"].as_u64().unwrap(),
            total,
            "{filters}: remote counts add up to the total"
        );
        for list in [&facets["domain"], &facets["seniority"]] {
            for v in list.as_array().unwrap() {
                assert!(v["count"].as_u64().unwrap() <= total, "{filters}: {v}");
            }
        }
        // Counts are of the result, not the page: the second page has the first's.
        let second = app
            .get_jobs(&format!(
                "{filters}{sep}facets=domain,seniority,remote&per_page=3&page=2"
            ))
            .await;
        assert_eq!(second.body["meta"]["facets"], expected, "{filters}, page 2");
    }
}

#[tokio::test]
async fn job_facets_come_only_as_asked_and_names_repeat_harmlessly() {
    let app = spawn_app().await;
    let plain = app.get_jobs("remote_only=true").await;
    assert!(plain.body["meta"].get("facets").is_none(), "{}", plain.text);
    assert!(
        plain.body["meta"].get("warnings").is_none(),
        "{}",
        plain.text
    );

    let r = app
        .get_jobs("remote_only=true&facets=Seniority&facets=seniority")
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let facets = r.body["meta"]["facets"].as_object().unwrap();
    assert_eq!(facets.keys().collect::<Vec<_>>(), ["seniority"]);
    assert_eq!(
        r.ids(),
        plain.ids(),
        "asking for facets leaves the page as it is"
    );
    assert_eq!(r.total(), plain.total());

    let none = app
        .get_jobs("q=nomatchwordatall&facets=domain,remote")
        .await;
    assert_eq!(
        none.body["meta"]["facets"],
        json!({ "domain": [], "remote": { "true": 0, "false": 0 } })
    );
}

#[tokio::test]
async fn an_unknown_facet_is_a_400_that_names_the_facets_there_are() {
    let app = spawn_app().await;
    for (path, allowed) in [
        (
            "/api/v1/jobs?facets=domain,salary",
            "domain, seniority, remote",
        ),
        (
            "/api/v1/jobs?facets=funding_stage",
            "domain, seniority, remote",
        ),
        ("/api/v1/companies?facets=domain", "funding_stage"),
    ] {
        let r = app.get(path).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.text);
        assert_eq!(r.body["code"], "invalid_parameter", "{path}");
        assert_eq!(r.body["param"], "facets", "{path}");
        let detail = r.body["detail"].as_str().unwrap();
        assert!(detail.contains(allowed), "{path}: {detail}");
    }
}

#[tokio::test]
async fn company_facets_count_the_listed_companies_by_funding_stage() {
    let app = spawn_app().await;
    let with_jobs: HashSet<CompanyId> = app
        .all_jobs()
        .iter()
        .filter(|j| j.is_active())
        .map(|j| j.company_id)
        .collect();
    let mut stages: BTreeMap<String, u64> = BTreeMap::new();
    for c in app
        .all_companies()
        .iter()
        .filter(|c| with_jobs.contains(&c.id))
    {
        *stages
            .entry(c.funding_stage.as_str().to_owned())
            .or_default() += 1;
    }
    let r = app.get_companies("facets=funding_stage&per_page=2").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let expected = ranked(stages.clone());
    assert_eq!(
        r.body["meta"]["facets"],
        json!({ "funding_stage": expected })
    );
    let sum: u64 = stages.values().sum();
    assert_eq!(sum, r.total());

    let page2 = app
        .get_companies("facets=funding_stage&per_page=2&page=2")
        .await;
    assert_eq!(page2.body["meta"]["facets"], r.body["meta"]["facets"]);

    let (stage, n) = stages.iter().next().unwrap();
    let one = app
        .get_companies(&format!("funding_stage={stage}&facets=funding_stage"))
        .await;
    assert_eq!(
        one.body["meta"]["facets"],
        json!({ "funding_stage": [{ "value": stage, "count": n }] })
    );
    let plain = app.get_companies("").await;
    assert!(plain.body["meta"].get("facets").is_none());
}

/// The labels the data holds, most common first, as a warning names them.
fn known_job_values(app: &TestApp, of: fn(&Job) -> Vec<String>) -> Vec<String> {
    let mut counts = BTreeMap::new();
    for job in app.all_jobs().iter().filter(|j| j.is_active()) {
        let own: BTreeSet<String> = of(job).into_iter().collect();
        for v in own {
            *counts.entry(v).or_default() += 1;
        }
    }
    values(&ranked(counts))
}

#[tokio::test]
async fn an_unknown_domain_or_seniority_answers_200_with_a_warning_naming_the_known_ones() {
    let app = spawn_app().await;
    let domains = known_job_values(&app, |j| {
        j.domains.iter().map(|d| d.as_str().to_owned()).collect()
    });
    let levels = known_job_values(&app, |j| {
        j.seniority.iter().map(|s| s.as_str().to_owned()).collect()
    });
    for (query, param, value, known) in [
        ("domain=unknowndomain", "domain", "unknowndomain", &domains),
        ("seniority=Bogus", "seniority", "bogus", &levels),
    ] {
        let r = app.get_jobs(query).await;
        assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text);
        assert_eq!(r.total(), 0, "{query}");
        let warnings = r.body["meta"]["warnings"].as_array().expect("warnings");
        assert_eq!(warnings.len(), 1, "{query}: {warnings:?}");
        let w = &warnings[0];
        assert_eq!(w["code"], "unknown_value");
        assert_eq!(w["param"], param);
        assert_eq!(w["value"], value);
        let named: Vec<String> = serde_json::from_value(w["known"].clone()).unwrap();
        assert_eq!(&named, known, "{query}");
        assert_eq!(w["known_total"], known.len());
        let detail = w["detail"].as_str().unwrap();
        assert!(
            detail.contains(value) && detail.contains(&known[0]),
            "{detail}"
        );
    }

    // A known value next to an unknown one: results, and a warning for the unknown only.
    let r = app
        .get_jobs("domain=ai,unknowndomain&seniority=senior")
        .await;
    assert!(r.total() > 0);
    let warnings = r.body["meta"]["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0]["value"], "unknowndomain");

    let both = app.get_jobs("domain=nope1,nope2&seniority=nope3").await;
    let flagged: Vec<&str> = both.body["meta"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["value"].as_str().unwrap())
        .collect();
    assert_eq!(flagged, ["nope1", "nope2", "nope3"]);
}

#[tokio::test]
async fn known_values_answer_without_warnings() {
    let app = spawn_app().await;
    for query in ["domain=ai,engineering&seniority=senior", "domain=AI", ""] {
        let r = app.get_jobs(query).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(
            r.body["meta"].get("warnings").is_none(),
            "{query}: {}",
            r.text
        );
    }
    let stage = known().quokka.funding_stage.as_str().to_owned();
    let r = app.get_companies(&format!("funding_stage={stage}")).await;
    assert!(r.body["meta"].get("warnings").is_none(), "{}", r.text);
}

#[tokio::test]
async fn an_unknown_funding_stage_answers_200_with_a_warning_naming_the_stored_stages() {
    let app = spawn_app().await;
    let mut stages: BTreeMap<String, u64> = BTreeMap::new();
    for c in app.all_companies() {
        *stages
            .entry(c.funding_stage.as_str().to_owned())
            .or_default() += 1;
    }
    let r = app.get_companies("funding_stage=seed_z").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.total(), 0);
    let w = &r.body["meta"]["warnings"][0];
    assert_eq!(w["code"], "unknown_value");
    assert_eq!(w["param"], "funding_stage");
    assert_eq!(w["value"], "seed_z");
    let named: Vec<String> = serde_json::from_value(w["known"].clone()).unwrap();
    assert_eq!(named, values(&ranked(stages)));
}

#[tokio::test]
async fn a_search_with_facets_and_warnings_counts_one_call() {
    let app = spawn_app().await;
    let key = app.keys.developer.raw.clone();
    let before = app.calls_used(&key).await;
    for path in [
        "/api/v1/jobs?facets=domain,seniority,remote",
        "/api/v1/jobs?domain=unknowndomain&facets=domain",
        "/api/v1/companies?facets=funding_stage&funding_stage=seed_z",
    ] {
        let r = app.get_as(&key, path).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
    }
    assert_eq!(app.calls_used(&key).await, before + 3);
    let r = app.get_as(&key, "/api/v1/jobs?facets=nope").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        app.calls_used(&key).await,
        before + 3,
        "a refused facet is not counted"
    );
}

#[tokio::test]
async fn the_etag_changes_when_facet_counts_do_though_the_page_does_not() {
    let app = spawn_app().await;
    let plain = "/api/v1/jobs?q=zephyrine&per_page=1";
    let faceted = "/api/v1/jobs?q=zephyrine&per_page=1&facets=domain";
    let before = (app.get(plain).await, app.get(faceted).await);
    let first = before.0.ids()[0].clone();
    assert!(before.0.total() >= 2, "a match off the page to change");
    // A match below the first page gets another domain: same page, same total.
    let below = app
        .all_jobs()
        .iter()
        .find(|j| j.is_active() && q_matches(j, "zephyrine") && j.id.to_string() != first)
        .cloned()
        .expect("a second match");
    let mut changed = below.clone();
    changed.domains = vec![DomainTag::parse("cartography").unwrap()];
    app.service.upsert_job(changed).await.expect("updated");
    let after = (app.get(plain).await, app.get(faceted).await);
    assert_eq!(after.0.ids(), before.0.ids());
    assert_eq!(after.0.total(), before.0.total());
    assert_eq!(
        after.0.header("etag"),
        before.0.header("etag"),
        "without facets the answer is the same"
    );
    assert_ne!(
        after.1.header("etag"),
        before.1.header("etag"),
        "the facet counts changed"
    );
    assert_ne!(
        after.1.body["meta"]["facets"],
        before.1.body["meta"]["facets"]
    );
}

#[tokio::test]
async fn a_warning_names_at_most_the_100_most_common_values() {
    let app = spawn_app().await;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for job in app.all_jobs().iter().filter(|j| j.is_active()) {
        let own: BTreeSet<&str> = job.domains.iter().map(|d| d.as_str()).collect();
        for tag in own {
            *counts.entry(tag.to_owned()).or_default() += 1;
        }
    }
    for i in 0..120 {
        let mut job = crate::support::data::another(&known().designer);
        job.id = job_listings::domain::JobId(uuid::Uuid::from_u128(0xFACE_0000 + i));
        let tag = format!("imported-{i:03}");
        job.domains = vec![DomainTag::parse(&tag).unwrap()];
        app.service.upsert_job(job).await.expect("ingested");
        *counts.entry(tag).or_default() += 1;
    }
    let all = values(&ranked(counts));
    assert!(all.len() > 120);
    let r = app.get_jobs("domain=unknowndomain").await;
    let w = &r.body["meta"]["warnings"][0];
    let named: Vec<String> = serde_json::from_value(w["known"].clone()).unwrap();
    assert_eq!(named, all[..100], "the most common first");
    assert_eq!(w["known_total"], all.len());
    let detail = w["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("the 100 most common of {}", all.len())),
        "{detail}"
    );
}
