//! Where and how much: `country`, `near` with `radius_km`, `remote_from` and `min_salary` with
//! `salary_currency`, checked against the rules of API.md worked out here on the app's own
//! data (the demo jobs carry places, remote regions and pay in several currencies and
//! periods), through every page, and in the change feed.

use job_listings::domain::{Job, JobStatus};

use super::{every_job, ids_of, spawn_app};
use crate::support::pay_and_place::{great_circle_km as km, yearly_in};
use crate::support::TestApp;

/// Which jobs a query should answer.
type Rule = Box<dyn Fn(&Job) -> bool>;

/// The active jobs `keep` holds, in result order (newest first, ties by id), as ids.
fn expected(app: &TestApp, keep: impl Fn(&Job) -> bool) -> Vec<String> {
    let mut jobs: Vec<&Job> = app
        .dataset
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Active && keep(j))
        .collect();
    jobs.sort_by_key(|j| (std::cmp::Reverse(j.posted_at), j.id));
    jobs.iter().map(|j| j.id.to_string()).collect()
}

#[tokio::test]
async fn each_filter_of_places_and_pay_answers_exactly_its_jobs() {
    let app = spawn_app().await;
    let berlin = (52.52, 13.405);
    let cases: Vec<(&str, Rule)> = vec![
        (
            "country=de,FR",
            Box::new(|j: &Job| {
                j.places
                    .iter()
                    .any(|p| ["DE", "FR"].contains(&p.country.as_str()))
            }),
        ),
        (
            // Paris is 878 km from Berlin, Amsterdam 577, Zürich 669, London 932.
            "near=52.52,13.405&radius_km=700",
            Box::new(move |j: &Job| {
                j.places
                    .iter()
                    .filter_map(|p| p.lat.zip(p.lon))
                    .any(|p| km(berlin, p) <= 700.0)
            }),
        ),
        (
            "near=52.52,13.405",
            Box::new(move |j: &Job| {
                j.places
                    .iter()
                    .filter_map(|p| p.lat.zip(p.lon))
                    .any(|p| km(berlin, p) <= 50.0)
            }),
        ),
        (
            "remote_from=de",
            Box::new(|j: &Job| {
                j.remote
                    && j.remote_regions
                        .iter()
                        .any(|r| ["DE", "worldwide"].contains(&r.as_str()))
            }),
        ),
        (
            "min_salary=150000&salary_currency=usd",
            Box::new(|j: &Job| yearly_in(j.salary.as_ref(), "USD").is_some_and(|y| y >= 150_000)),
        ),
        (
            // A currency alone: paid in it, any amount a year can be worked out from.
            "salary_currency=gbp",
            Box::new(|j: &Job| yearly_in(j.salary.as_ref(), "GBP").is_some()),
        ),
        (
            "min_salary=90000&salary_currency=EUR&remote_from=FR",
            Box::new(|j: &Job| {
                yearly_in(j.salary.as_ref(), "EUR").is_some_and(|y| y >= 90_000)
                    && j.remote
                    && j.remote_regions
                        .iter()
                        .any(|r| ["FR", "worldwide"].contains(&r.as_str()))
            }),
        ),
    ];
    for (query, keep) in cases {
        let want = expected(&app, keep);
        assert!(!want.is_empty(), "{query}: the demo data holds matches");
        let (got, total) = every_job(&app, query).await;
        let got = ids_of(&got);
        assert_eq!(total, want.len() as u64, "{query}");
        assert_eq!(got, want, "{query}");
    }
}

#[tokio::test]
async fn the_filters_are_echoed_as_read() {
    let app = spawn_app().await;
    let r = app
        .get_jobs("country=fr,de&near=48.85,2.35&radius_km=20&remote_from=nl&min_salary=1000&salary_currency=eur")
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let filters = &r.body["meta"]["filters"];
    assert_eq!(filters["country"], serde_json::json!(["DE", "FR"]));
    assert_eq!(
        filters["near"],
        serde_json::json!({"lat": 48.85, "lon": 2.35, "radius_km": 20.0})
    );
    assert_eq!(filters["remote_from"], "NL");
    assert_eq!(filters["min_salary"], 1000);
    assert_eq!(filters["salary_currency"], "EUR");
}

#[tokio::test]
async fn the_change_feed_takes_the_same_filters() {
    let app = spawn_app().await;
    let r = app.get("/api/v1/changes?limit=500&country=DE").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let events = r.body["data"].as_array().expect("events");
    assert!(!events.is_empty());
    for e in events {
        let places = e["job"]["places"].as_array().expect("places");
        assert!(places.iter().any(|p| p["country"] == "DE"), "{}", e["job"]);
    }
}

#[tokio::test]
async fn the_country_facet_counts_every_match_by_the_countries_of_its_places() {
    let app = spawn_app().await;
    let r = app
        .get_jobs("remote_only=true&facets=Country&per_page=1")
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mut want: std::collections::BTreeMap<String, u64> = Default::default();
    for job in app
        .dataset
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Active && j.remote)
    {
        let mut countries: Vec<&str> = job.places.iter().map(|p| p.country.as_str()).collect();
        countries.sort_unstable();
        countries.dedup();
        for c in countries {
            *want.entry(c.to_owned()).or_default() += 1;
        }
    }
    assert!(
        want.len() > 3,
        "the demo data has remote jobs in several countries"
    );
    let listed = r.body["meta"]["facets"]["country"]
        .as_array()
        .expect("country counts");
    let got: std::collections::BTreeMap<String, u64> = listed
        .iter()
        .map(|v| {
            (
                v["value"].as_str().unwrap().to_owned(),
                v["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    // Most first, then by code.
    let counts: Vec<(u64, &str)> = listed
        .iter()
        .map(|v| (v["count"].as_u64().unwrap(), v["value"].as_str().unwrap()))
        .collect();
    assert!(counts
        .windows(2)
        .all(|w| w[0].0 > w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
}
