//! Best first, why, and no more than asked: `sort=relevance` checked through every page against
//! BM25 worked out here from API.md's formula on the app's own data, `highlight=true`'s
//! `match` against its rules, and `fields=` against the whole jobs.

use std::collections::{BTreeSet, HashMap};

use job_listings::domain::{Job, JobStatus};

use super::{every_job, ids_of, spawn_app};
use crate::support::bm25::{Bm25, Counted};
use crate::support::words::words;
use crate::support::TestApp;

fn active(app: &TestApp) -> Vec<&Job> {
    app.dataset
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Active)
        .collect()
}

/// The ids of the active jobs holding every word of `q`, best BM25 score first, ties newest
/// first and then by id.
fn by_relevance(app: &TestApp, q: &str) -> Vec<String> {
    let jobs = active(app);
    let counted: Vec<Counted> = jobs.iter().map(|j| Counted::of(j)).collect();
    let bm25 = Bm25::new(q, &counted);
    let wanted = words(q);
    let mut hits: Vec<(f64, &Job)> = jobs
        .iter()
        .zip(&counted)
        .filter(|(_, c)| wanted.iter().all(|w| c.counts.contains_key(w)))
        .map(|(j, c)| (bm25.score(c), *j))
        .collect();
    hits.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.posted_at.cmp(&a.1.posted_at))
            .then(a.1.id.cmp(&b.1.id))
    });
    hits.iter().map(|(_, j)| j.id.to_string()).collect()
}

#[tokio::test]
async fn relevance_orders_every_page_by_bm25_with_the_same_matches() {
    let app = spawn_app().await;
    // A role word, two words, and a company word with a post word.
    let company_word = words(&active(&app)[0].company_name).remove(0);
    for q in [
        "engineer",
        "senior engineer",
        &format!("{company_word} rust"),
    ] {
        let want = by_relevance(&app, q);
        assert!(want.len() > 1, "{q}: the demo data holds matches");
        let encoded = q.replace(' ', "+");
        let (got, total) = every_job(&app, &format!("q={encoded}&sort=relevance")).await;
        assert_eq!(total, want.len() as u64, "{q}");
        assert_eq!(ids_of(&got), want, "{q}");
        // The same set as the default order.
        let (newest_first, total) = every_job(&app, &format!("q={encoded}")).await;
        assert_eq!(total, want.len() as u64);
        let a: BTreeSet<String> = ids_of(&newest_first).into_iter().collect();
        assert_eq!(a, want.iter().cloned().collect::<BTreeSet<_>>());
    }
}

#[tokio::test]
async fn a_highlight_names_the_words_found_and_marks_them_in_a_passage_of_the_post() {
    let app = spawn_app().await;
    let jobs: HashMap<String, &Job> = active(&app)
        .into_iter()
        .map(|j| (j.id.to_string(), j))
        .collect();
    // The words of q in q's order, as the engine reads them.
    let cases = [
        (
            "q=Remote+ENGINEER+remote&sort=relevance",
            vec!["remote", "engineer"],
        ),
        ("q=senior", vec!["senior"]),
    ];
    for (query, asked) in cases {
        let r = app
            .get_jobs(&format!("{query}&highlight=true&per_page=50"))
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let data = r.body["data"].as_array().expect("data");
        assert!(!data.is_empty(), "{query}");
        for got in data {
            let job = jobs[got["id"].as_str().expect("an id")];
            let matched = &got["match"];
            let terms: Vec<String> = matched["terms"]
                .as_array()
                .expect("terms")
                .iter()
                .map(|t| t.as_str().expect("a term").to_owned())
                .collect();
            // Every job matched holds every word of q.
            assert_eq!(terms, asked, "{}", got["id"]);
            let snippet = matched["snippet"].as_str().expect("a snippet");
            assert!(snippet.chars().count() <= 240, "{snippet}");
            assert!(
                job.description.contains(&snippet.replace("**", "")),
                "{snippet} is not a passage of the post"
            );
            // Each marked word is one of the terms.
            for (i, part) in snippet.split("**").enumerate() {
                if i % 2 == 1 {
                    assert!(terms.contains(&part.to_lowercase()), "{part} in {snippet}");
                }
            }
            // Around the first term the post holds.
            let post = words(&job.description);
            if let Some(first) = terms.iter().find(|t| post.contains(t)) {
                assert!(
                    snippet.to_lowercase().contains(&format!("**{first}**")),
                    "{snippet} is not around {first}"
                );
            }
        }
    }
}

#[tokio::test]
async fn fields_send_only_what_is_named_and_id_with_the_same_values() {
    let app = spawn_app().await;
    let whole = app.get_jobs("q=engineer&per_page=20").await;
    let small = app
        .get_jobs("q=engineer&per_page=20&fields=role,company_name&fields=salary")
        .await;
    assert_eq!(small.status, 200, "{}", small.text);
    assert_eq!(small.body["pagination"], whole.body["pagination"]);
    let (whole, small) = (
        whole.body["data"].as_array().expect("data"),
        small.body["data"].as_array().expect("data"),
    );
    assert_eq!(whole.len(), small.len());
    for (w, s) in whole.iter().zip(small) {
        let names: BTreeSet<&str> = s
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            names,
            BTreeSet::from(["id", "role", "company_name", "salary"])
        );
        for name in names {
            assert_eq!(s[name], w[name], "{name}");
        }
    }
    // With a highlight, `match` comes too.
    let r = app
        .get_jobs("q=engineer&fields=id&highlight=true&per_page=3")
        .await;
    for job in r.body["data"].as_array().expect("data") {
        let names: Vec<&String> = job.as_object().expect("an object").keys().collect();
        assert_eq!(names, ["id", "match"]);
    }
}

#[tokio::test]
async fn a_bad_order_or_field_is_refused_naming_what_is_allowed() {
    let app = spawn_app().await;
    let cases = [
        ("sort=best", "sort", Some(vec!["posted_at", "relevance"])),
        ("sort=relevance", "sort", None),
        ("sort=relevance&q=", "sort", None),
        ("fields=id,nope", "fields", Some(vec![])),
        ("highlight=maybe", "highlight", None),
    ];
    for (query, param, allowed) in cases {
        let r = app.get_jobs(query).await;
        assert_eq!(r.status, 400, "{query}: {}", r.text);
        assert_eq!(r.body["code"], "invalid_parameter", "{query}");
        assert_eq!(r.body["param"], param, "{query}");
        match allowed {
            Some(names) if names.is_empty() => {
                let listed = r.body["allowed"].as_array().expect("allowed");
                assert!(listed.iter().any(|n| n == "company_name"), "{query}");
                assert!(r.body["detail"].as_str().unwrap_or("").contains("nope"));
            }
            Some(names) => assert_eq!(r.body["allowed"], serde_json::json!(names)),
            None => assert!(r.body.get("allowed").is_none(), "{query}"),
        }
    }
}
