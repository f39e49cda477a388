//! One job once: copies of a job grouped as they arrive (same company, same role words, word
//! 3-shingle Jaccard at least 0.6, posted within 60 days), hidden unless `reposts=include`,
//! announced once; when the crawler last saw a job (`last_seen_at`, `seen_after`); and
//! `GET /jobs/{id}/similar`.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use job_listings::domain::{Company, Job, JobId, JobStatus, NewJob};
use job_listings::service::{ManualClock, ServiceConfig};
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;

use super::spawn_app;
use crate::support::data::{at, demo_dataset, id_of, job};
use crate::support::{Resp, TestApp};

/// A post of `n` words no other job holds, each marked with `tag`.
fn post(tag: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{tag}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// An active job of `company` with this role and post, posted at `posted_at`.
fn listing(company: &Company, role: &str, post: &str, posted_at: DateTime<Utc>) -> Job {
    job(
        JobId(Uuid::new_v4()),
        company,
        role,
        post,
        &["engineering"],
        &["senior"],
        true,
        posted_at,
        0.9,
        JobStatus::Active,
    )
}

/// `original` posted again: a new id and source, `days` later, its post as `edit` leaves it.
fn copy(original: &Job, days: i64, edit: impl Fn(&str) -> String) -> Job {
    let id = JobId(Uuid::new_v4());
    Job {
        id,
        source_url: format!(
            "https://x.com/recruiter/status/{}",
            id.0.as_u128() % 1_000_000
        ),
        posted_at: original.posted_at + Duration::days(days),
        description: edit(&original.description),
        ..original.clone()
    }
}

/// The post with its `n`-th word replaced.
fn one_word_changed(n: usize) -> impl Fn(&str) -> String {
    move |text: &str| {
        let mut words: Vec<&str> = text.split(' ').collect();
        words[n] = "changed";
        words.join(" ")
    }
}

async fn ingest(app: &TestApp, jobs: &[&Job]) {
    for job in jobs {
        app.service
            .upsert_job((*job).clone())
            .await
            .expect("ingested");
    }
}

async fn detail(app: &TestApp, job: &Job) -> Value {
    let r = app.get_job(&id_of(job)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

fn ids_of(r: &Resp) -> Vec<String> {
    r.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|j| j["id"].as_str().expect("an id").to_owned())
        .collect()
}

#[tokio::test]
async fn a_repost_names_its_canonical_job_which_lists_it_and_only_the_canonical_job_is_counted() {
    let app = spawn_app().await;
    let company = app.dataset.companies[0].clone();
    let t0 = at(2026, 11, 2, 9, 0, 0);
    let original = listing(&company, "Senior Quokka Wrangler", &post("wrangle", 40), t0);
    let repost = copy(&original, 5, one_word_changed(20));
    let before = app.get_company(&company.id.to_string()).await.body["active_jobs_total"]
        .as_u64()
        .expect("a count");
    ingest(&app, &[&original, &repost]).await;

    let r = detail(&app, &repost).await;
    assert_eq!(r["repost_of"], json!(original.id));
    assert_eq!(r["reposts"], json!([]));
    let c = detail(&app, &original).await;
    assert_eq!(c["repost_of"], Value::Null);
    assert_eq!(
        c["reposts"],
        json!([{"id": repost.id, "source_url": repost.source_url, "posted_at": repost.posted_at}])
    );
    assert_eq!(c["last_posted_at"], json!(repost.posted_at));
    assert_eq!(r["last_posted_at"], json!(repost.posted_at));

    // Searches, totals and facets count the canonical job; `reposts=include` every copy.
    let hidden = app.get_jobs("q=wrangle3&facets=domain").await;
    assert_eq!(ids_of(&hidden), [id_of(&original)]);
    assert_eq!(hidden.body["pagination"]["total"], 1);
    assert_eq!(hidden.body["meta"]["filters"]["reposts"], "hide");
    let domains = &hidden.body["meta"]["facets"]["domain"];
    assert_eq!(domains, &json!([{"value": "engineering", "count": 1}]));
    let every = app
        .get_jobs("q=wrangle3&facets=domain&reposts=include")
        .await;
    assert_eq!(every.body["pagination"]["total"], 2);
    assert_eq!(ids_of(&every), [id_of(&repost), id_of(&original)]);
    assert_eq!(every.body["meta"]["filters"]["reposts"], "include");
    assert_eq!(
        every.body["meta"]["facets"]["domain"],
        json!([{"value": "engineering", "count": 2}])
    );
    let company_detail = app.get_company(&company.id.to_string()).await.body;
    assert_eq!(company_detail["active_jobs_total"], before + 1);
    let listed: Vec<&str> = company_detail["active_jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["id"].as_str())
        .collect();
    assert!(listed.contains(&id_of(&original).as_str()));
    assert!(!listed.contains(&id_of(&repost).as_str()));
    let bad = app.get_jobs("reposts=all").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.body["param"], "reposts");
}

/// Each pair: the second job, and whether it is a copy of the first.
#[tokio::test]
async fn copies_are_told_from_other_jobs_at_the_edges_of_the_rule() {
    let app = spawn_app().await;
    let (a, b) = (
        app.dataset.companies[0].clone(),
        app.dataset.companies[1].clone(),
    );
    let t0 = at(2026, 11, 2, 9, 0, 0);
    let short = |n: usize, text: &str| listing(&a, &format!("Edge {n} Engineer"), text, t0);
    let mut cases: Vec<(&str, Job, Job, bool)> = Vec::new();
    // 4 shingles each, 3 shared: 3/5 = 0.6, a copy.
    let first = short(1, "we are hiring a rust engineer");
    let second = copy(&first, 1, |_| "we are hiring a rust developer".into());
    cases.push(("one word of six changed (Jaccard 0.6)", first, second, true));
    // 2 of 6 shared: 0.33.
    let first = short(2, "we are hiring a rust engineer");
    let second = copy(&first, 1, |_| "we are hiring a go developer".into());
    cases.push((
        "two words of six changed (Jaccard 0.33)",
        first,
        second,
        false,
    ));
    let first = short(3, &post("samepost", 30));
    let mut second = copy(&first, 1, |t| t.to_owned());
    second.company_id = b.id;
    second.company_name = b.name.clone();
    cases.push(("another company's same post", first, second, false));
    let first = short(4, &post("one", 30));
    let second = copy(&first, 1, |_| post("other", 30));
    cases.push(("the same company's other post", first, second, false));
    let first = short(5, &post("late", 30));
    let second = copy(&first, 61, |t| t.to_owned());
    cases.push(("61 days apart", first, second, false));
    let first = short(6, &post("intime", 30));
    let second = copy(&first, 60, |t| t.to_owned());
    cases.push(("60 days apart", first, second, true));
    let first = short(7, &post("earlier", 30));
    let second = copy(&first, -60, |t| t.to_owned());
    cases.push(("60 days earlier", first, second, true));
    let first = short(8, &post("role", 30));
    let mut second = copy(&first, 1, |t| t.to_owned());
    second.role = "Edge 8 Engineer Lead".into();
    cases.push(("another role", first, second, false));
    let first = short(9, &post("case", 30));
    let mut second = copy(&first, 1, |t| t.to_uppercase());
    second.role = "edge 9 engineer!".into();
    cases.push(("the same words in other case", first, second, true));
    // 40 words: 38 shingles; 3 words changed far apart leave 29 shared of 47.
    let first = short(10, &post("long", 40));
    let second = copy(&first, 2, |t| {
        let mut words: Vec<String> = t.split(' ').map(str::to_owned).collect();
        for n in [5, 20, 35] {
            words[n] = format!("edit{n}");
        }
        words.join(" ")
    });
    cases.push((
        "three words of forty changed (Jaccard 0.62)",
        first,
        second,
        true,
    ));

    for (what, first, second, is_copy) in &cases {
        ingest(&app, &[first, second]).await;
        let got = detail(&app, second).await;
        let (canonical, repost) = if second.posted_at < first.posted_at {
            (second, first)
        } else {
            (first, second)
        };
        if *is_copy {
            let repost = detail(&app, repost).await;
            assert_eq!(repost["repost_of"], json!(canonical.id), "{what}");
        } else {
            assert_eq!(got["repost_of"], Value::Null, "{what}");
            assert_eq!(detail(&app, first).await["reposts"], json!([]), "{what}");
        }
    }
}

#[tokio::test]
async fn the_earliest_open_copy_leads_when_the_lead_closes_is_deleted_or_an_earlier_one_comes() {
    let app = spawn_app().await;
    let company = app.dataset.companies[2].clone();
    let t0 = at(2026, 10, 1, 9, 0, 0);
    let a = listing(&company, "Lead Taker", &post("lead", 30), t0);
    let b = copy(&a, 3, one_word_changed(1));
    let c = copy(&a, 6, one_word_changed(2));
    ingest(&app, &[&a, &c, &b]).await;
    let lead = |j: &Job| json!(j.id);
    let listed = |jobs: &[&Job]| -> Value {
        jobs.iter()
            .map(|j| json!({"id": j.id, "source_url": j.source_url, "posted_at": j.posted_at}))
            .collect()
    };
    assert_eq!(detail(&app, &a).await["reposts"], listed(&[&c, &b]));
    assert_eq!(ids_of(&app.get_jobs("q=lead7").await), [id_of(&a)]);

    // The lead closes: the next earliest open copy leads; the closed one points to it.
    app.service.close_job(a.id).await.expect("closed");
    let now_b = detail(&app, &b).await;
    assert_eq!(now_b["repost_of"], Value::Null);
    assert_eq!(now_b["reposts"], listed(&[&c, &a]));
    let closed = detail(&app, &a).await;
    assert_eq!(
        (closed["status"].clone(), closed["repost_of"].clone()),
        (json!("closed"), lead(&b))
    );
    assert_eq!(detail(&app, &c).await["repost_of"], lead(&b));
    assert_eq!(ids_of(&app.get_jobs("q=lead7").await), [id_of(&b)]);

    // The lead is deleted: the next one leads.
    app.service.delete_job(b.id).await.expect("deleted");
    let now_c = detail(&app, &c).await;
    assert_eq!(now_c["reposts"], listed(&[&a]));
    assert_eq!(detail(&app, &a).await["repost_of"], lead(&c));
    assert_eq!(ids_of(&app.get_jobs("q=lead7").await), [id_of(&c)]);

    // A copy posted before every other one arrives: it leads.
    let d = copy(&a, -2, one_word_changed(3));
    ingest(&app, &[&d]).await;
    assert_eq!(detail(&app, &d).await["reposts"], listed(&[&c, &a]));
    assert_eq!(detail(&app, &c).await["repost_of"], lead(&d));
    assert_eq!(ids_of(&app.get_jobs("q=lead7").await), [id_of(&d)]);
    let every = app.get_jobs("q=lead7&reposts=include").await;
    assert_eq!(ids_of(&every), [id_of(&c), id_of(&d)]);

    // The group lives in the records: a restart serves it whole.
    let app = app.restart().await;
    assert_eq!(detail(&app, &d).await["reposts"], listed(&[&c, &a]));
    assert_eq!(ids_of(&app.get_jobs("q=lead7").await), [id_of(&d)]);
}

#[tokio::test]
async fn a_repost_is_announced_as_an_update_of_its_canonical_job_never_as_a_second_new_job() {
    let app = spawn_app().await;
    let key = app.keys.agent_pro.raw.clone();
    let hook = app
        .post_webhook(
            &key,
            &json!({"callback_url": "https://hooks.example.com/jobs", "event_types": ["job.new"]}),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let feed = |query: String| {
        let app = &app;
        async move {
            let r = app
                .get_as(
                    &app.keys.enterprise.raw,
                    &format!("/api/v1/changes?{query}"),
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            r
        }
    };
    let start = feed("after=now".into()).await.body["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    let company = app.dataset.companies[3].clone();
    let original = listing(
        &company,
        "Announced Once",
        &post("once", 30),
        at(2026, 11, 5, 0, 0, 0),
    );
    let repost = copy(&original, 7, one_word_changed(9));
    let first = app
        .service
        .upsert_job(original.clone())
        .await
        .expect("ingested");
    let second = app
        .service
        .upsert_job(repost.clone())
        .await
        .expect("ingested");
    assert!(first.announced, "the first copy is a new job");
    assert!(!second.announced, "a repost is no second job.new");

    let events = |r: &Resp| -> Vec<(String, String)> {
        r.body["data"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().expect("a type").to_owned(),
                    e["job_id"].as_str().expect("an id").to_owned(),
                )
            })
            .collect()
    };
    let hidden = feed(format!("after={start}")).await;
    assert_eq!(
        events(&hidden),
        [
            ("job.new".to_owned(), id_of(&original)),
            ("job.updated".to_owned(), id_of(&original)),
        ]
    );
    let every = feed(format!("after={start}&reposts=include")).await;
    assert_eq!(
        events(&every),
        [
            ("job.new".to_owned(), id_of(&original)),
            ("job.new".to_owned(), id_of(&repost)),
            ("job.updated".to_owned(), id_of(&original)),
        ]
    );
    // The canonical job's update carries the repost.
    let update = &hidden.body["data"][1]["job"];
    assert_eq!(update["reposts"][0]["id"], json!(repost.id));
}

#[tokio::test]
async fn a_job_sent_again_unchanged_only_moves_when_it_was_last_seen() {
    let clock = Arc::new(ManualClock::new(at(2026, 12, 1, 8, 0, 0)));
    let app = TestApp::builder()
        .clock(clock.clone())
        .config(ServiceConfig::default())
        .seed(demo_dataset())
        .spawn()
        .await;
    let company = app.dataset.companies[0].clone();
    let seen = listing(
        &company,
        "Seen Again",
        &post("seen", 20),
        at(2026, 11, 20, 0, 0, 0),
    );
    let unseen = listing(
        &company,
        "Not Seen Again",
        &post("unseen", 20),
        at(2026, 11, 21, 0, 0, 0),
    );
    ingest(&app, &[&seen, &unseen]).await;
    let first = app.get_job(&id_of(&seen)).await;
    let cursor = app
        .get_as(&app.keys.enterprise.raw, "/api/v1/changes?after=now")
        .await
        .body["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();

    let later = at(2026, 12, 3, 8, 0, 0);
    clock.set(later);
    let again = app
        .service
        .upsert_job(seen.clone())
        .await
        .expect("ingested");
    assert!(!again.created && !again.announced);
    let second = app.get_job(&id_of(&seen)).await;
    assert_eq!(second.body["updated_at"], first.body["updated_at"]);
    assert_eq!(first.body["last_seen_at"], json!(at(2026, 12, 1, 8, 0, 0)));
    assert_eq!(second.body["last_seen_at"], json!(later));
    assert_ne!(
        second.header("etag"),
        first.header("etag"),
        "the answer changed"
    );
    let feed = app
        .get_as(
            &app.keys.enterprise.raw,
            &format!("/api/v1/changes?after={cursor}"),
        )
        .await;
    assert_eq!(feed.body["data"], json!([]), "no change to report");

    let fresh = app.get_jobs("seen_after=2026-12-02&reposts=include").await;
    assert_eq!(ids_of(&fresh), [id_of(&seen)]);
    assert_eq!(
        fresh.body["meta"]["filters"]["seen_after"],
        json!(at(2026, 12, 2, 0, 0, 0))
    );
    // Strictly after: the instant it was seen is not after itself.
    let exact = app.get_jobs("seen_after=2026-12-03T08:00:00Z").await;
    assert_eq!(exact.body["pagination"]["total"], 0);
    let bad = app.get_jobs("seen_after=yesterday").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.body["param"], "seen_after");

    // As the index has it after a restart, too.
    let app = app.restart().await;
    let fresh = app.get_jobs("seen_after=2026-12-02").await;
    assert_eq!(ids_of(&fresh), [id_of(&seen)]);
}

#[tokio::test]
async fn similar_jobs_share_the_rarer_words_and_never_include_the_job_or_its_copies() {
    let app = spawn_app().await;
    let company = app.dataset.companies[4].clone();
    let other = app.dataset.companies[5].clone();
    let t0 = at(2026, 11, 10, 0, 0, 0);
    let text = "zyzzyva quixotic marmoset build the search engine with us";
    let target = listing(&company, "Search Engineer", text, t0);
    let repost = copy(&target, 2, |t| t.to_owned());
    let both = listing(&other, "Engineer", "zyzzyva quixotic marmoset tools", t0);
    let one = listing(
        &other,
        "Designer",
        "a zyzzyva marmoset in the logo",
        t0 + Duration::hours(1),
    );
    ingest(&app, &[&target, &repost, &both, &one]).await;
    let key = app.keys.developer.raw.clone();
    let used = app.calls_used(&key).await;

    let r = app
        .get_as(&key, &format!("/api/v1/jobs/{}/similar", target.id))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let found = ids_of(&r);
    assert!(found.len() <= 10, "{found:?}");
    let place = |j: &Job| found.iter().position(|f| *f == id_of(j));
    assert_eq!(
        place(&both),
        Some(0),
        "the most rare words shared first: {found:?}"
    );
    assert!(place(&one).is_some(), "{found:?}");
    assert!(!found.contains(&id_of(&target)) && !found.contains(&id_of(&repost)));
    assert_eq!(app.calls_used(&key).await, used + 1, "one call");
    // From the repost: neither it nor its canonical job.
    let r = app
        .get_as(
            &key,
            &format!("/api/v1/jobs/{}/similar?per_page=1", repost.id),
        )
        .await;
    assert_eq!(ids_of(&r), [id_of(&both)]);
    assert_eq!(r.body["pagination"]["per_page"], 1);

    for (query, status, code) in [
        ("per_page=51", 400, "invalid_parameter"),
        ("per_page=0", 400, "invalid_parameter"),
        ("page=2", 400, "unknown_parameter"),
    ] {
        let r = app
            .get_as(&key, &format!("/api/v1/jobs/{}/similar?{query}", target.id))
            .await;
        assert_eq!(
            (r.status.as_u16(), r.body["code"].as_str()),
            (status, Some(code)),
            "{query}"
        );
    }
    let unknown = app
        .get_as(&key, &format!("/api/v1/jobs/{}/similar", Uuid::new_v4()))
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let malformed = app.get_as(&key, "/api/v1/jobs/nope/similar").await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        app.calls_used(&key).await,
        used + 2,
        "refusals are not counted"
    );
}

#[tokio::test]
async fn an_import_groups_copies_across_its_batches_as_live_writes_do() {
    let app = TestApp::builder().seed(demo_dataset()).spawn().await;
    let company = app.dataset.companies[0].clone();
    let t0 = at(2026, 9, 1, 0, 0, 0);
    let mut jobs: Vec<Job> = (0..3_000)
        .map(|n| {
            listing(
                &company,
                &format!("Imported {n}"),
                &post(&format!("imp{n}x"), 12),
                t0,
            )
        })
        .collect();
    // A copy of the first job far behind it, in another batch, and one of a later job.
    let first_id = jobs[0].id;
    let first_copy = copy(&jobs[0], 3, one_word_changed(11));
    let later_copy = copy(&jobs[2_500], -1, one_word_changed(0));
    jobs.insert(2_900, first_copy.clone());
    jobs.push(later_copy.clone());
    let summary = app
        .service
        .import_jobs(
            jobs.into_iter().map(NewJob::from).collect::<Vec<_>>(),
            |_| {},
        )
        .await
        .expect("imported");
    assert_eq!(summary.created, 3_002);
    assert_eq!(
        detail(&app, &first_copy).await["repost_of"],
        json!(first_id)
    );
    let later = detail(&app, &later_copy).await;
    assert_eq!(later["repost_of"], Value::Null, "posted earlier: it leads");
    assert_eq!(later["reposts"].as_array().map(Vec::len), Some(1));
    let r = app.get_jobs("q=imp0x0").await;
    assert_eq!(r.body["pagination"]["total"], 1);
}

/// A small random number generator: the churn's steps from a seed.
struct Steps(u64);

impl Steps {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Every group holds together after each of a random sequence of every event that touches
/// one: copies arriving (later or earlier than the rest), copies sent again unchanged or
/// edited, closed, reopened and deleted. After each step: each repost names a canonical job
/// that lists it; each canonical job lists exactly the jobs that name it, newest first, and
/// is the earliest posted open one of them if any is open; `last_posted_at` is the group's
/// newest posting; searches list exactly the open jobs that name no canonical job, or with
/// `reposts=include` every open job.
#[tokio::test]
async fn groups_hold_together_through_random_arrivals_closings_reopenings_and_deletions() {
    let app = TestApp::builder()
        .store(crate::support::StoreKind::Memory)
        .seed(demo_dataset())
        .build()
        .await;
    let company = app.dataset.companies[6].clone();
    let t0 = at(2026, 10, 1, 0, 0, 0);
    let templates: Vec<Job> = (0..3)
        .map(|g| {
            listing(
                &company,
                &format!("Churn {g} Engineer"),
                &post(&format!("churn{g}w"), 40),
                t0,
            )
        })
        .collect();
    let mut rng = Steps(0x5eed_1234_abcd_0042);
    let mut known: Vec<Job> = Vec::new();
    let mut deleted: std::collections::HashSet<JobId> = Default::default();
    for step in 0..160 {
        let live: Vec<&Job> = known.iter().filter(|j| !deleted.contains(&j.id)).collect();
        let event = if live.is_empty() { 0 } else { rng.below(6) };
        match event {
            // A copy of a template, some days either way, one word of its own changed.
            0 | 1 => {
                let template = &templates[rng.below(3) as usize];
                let days = rng.below(41) as i64 - 20;
                let word = rng.below(40) as usize;
                let job = copy(template, days, one_word_changed(word));
                app.service.upsert_job(job.clone()).await.expect("ingested");
                known.push(job);
            }
            2 => {
                let id = live[rng.below(live.len() as u64) as usize].id;
                app.service.close_job(id).await.expect("closed");
            }
            // Reopened or sent again as it was first sent.
            3 => {
                let job = live[rng.below(live.len() as u64) as usize].clone();
                app.service.upsert_job(job).await.expect("reopened");
            }
            4 => {
                let id = live[rng.below(live.len() as u64) as usize].id;
                app.service.delete_job(id).await.expect("deleted");
                deleted.insert(id);
            }
            // Posted again with a new source.
            _ => {
                let mut job = live[rng.below(live.len() as u64) as usize].clone();
                job.source_url = format!("{}?step={step}", job.source_url);
                app.service.upsert_job(job).await.expect("updated");
            }
        }
        check_groups(&app, &known, &deleted, step).await;
    }
}

async fn check_groups(
    app: &TestApp,
    known: &[Job],
    deleted: &std::collections::HashSet<JobId>,
    step: usize,
) {
    let ids: Vec<JobId> = known
        .iter()
        .map(|j| j.id)
        .filter(|id| !deleted.contains(id))
        .collect();
    let stored = app.store.get_jobs(&ids).await.expect("read");
    assert_eq!(
        stored.len(),
        ids.len(),
        "step {step}: every job not deleted is kept"
    );
    let by_id: std::collections::HashMap<JobId, &Job> =
        stored.iter().map(|j| (j.id, &**j)).collect();
    for job in by_id.values() {
        if let Some(lead) = job.repost_of {
            let lead = by_id
                .get(&lead)
                .unwrap_or_else(|| panic!("step {step}: {} names a gone lead", job.id));
            assert_eq!(lead.repost_of, None, "step {step}: a lead names no lead");
            assert!(
                lead.reposts.iter().any(|r| r.id == job.id),
                "step {step}: the lead lists {}",
                job.id
            );
            assert!(job.reposts.is_empty(), "step {step}: a repost lists none");
        }
        if job.repost_of.is_none() && !job.reposts.is_empty() {
            let members: Vec<&Job> = by_id
                .values()
                .filter(|m| m.repost_of == Some(job.id))
                .copied()
                .collect();
            let mut expected: Vec<&Job> = members.clone();
            expected.sort_by(|a, b| b.posted_at.cmp(&a.posted_at).then(a.id.cmp(&b.id)));
            let listed: Vec<(JobId, &str, DateTime<Utc>)> = job
                .reposts
                .iter()
                .map(|r| (r.id, r.source_url.as_str(), r.posted_at))
                .collect();
            let wanted: Vec<(JobId, &str, DateTime<Utc>)> = expected
                .iter()
                .map(|m| (m.id, m.source_url.as_str(), m.posted_at))
                .collect();
            assert_eq!(
                listed, wanted,
                "step {step}: the lead lists its members, newest first"
            );
            let group: Vec<&Job> = members.iter().copied().chain([*job]).collect();
            let earliest_open = group
                .iter()
                .filter(|m| m.is_active())
                .min_by_key(|m| (m.posted_at, m.id));
            if let Some(first) = earliest_open {
                assert_eq!(
                    first.id, job.id,
                    "step {step}: the earliest open copy leads"
                );
            }
            let newest = group.iter().map(|m| m.posted_at).max();
            assert_eq!(job.last_posted_at, newest, "step {step}: last_posted_at");
        }
    }
    let open = |include: bool| -> std::collections::BTreeSet<String> {
        by_id
            .values()
            .filter(|j| j.is_active() && (include || j.repost_of.is_none()))
            .map(|j| id_of(j))
            .collect()
    };
    for (query, include) in [("", false), ("&reposts=include", true)] {
        let (found, total) =
            super::every_job(app, &format!("company_id={}{query}", known[0].company_id)).await;
        let found: std::collections::BTreeSet<String> = found
            .iter()
            .filter_map(|j| j["id"].as_str().map(str::to_owned))
            .filter(|id| by_id.keys().any(|k| k.to_string() == *id))
            .collect();
        assert_eq!(found, open(include), "step {step}: searched{query}");
        assert!(total >= found.len() as u64);
    }
}
