//! `GET /changes`: every change to a job, in commit order, from a cursor, filtered like a
//! search, metered per page, within a retention window.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use job_listings::domain::{Job, JobStatus};
use job_listings::service::{DeliveryConfig, ManualClock, ServiceConfig};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::spawn_app;
use crate::support::data::{demo_dataset, id_of, known};
use crate::support::{Auth, Resp, TestApp};

/// One page of the feed as the enterprise key reads it.
async fn changes(app: &TestApp, query: &str) -> Resp {
    let r = app
        .get_as(
            &app.keys.enterprise.raw,
            &format!("/api/v1/changes?{query}"),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text);
    r
}

/// The cursor to follow from now.
async fn now_cursor(app: &TestApp, filters: &str) -> String {
    let r = changes(app, &format!("after=now&{filters}")).await;
    assert_eq!(r.body["data"], Value::Array(Vec::new()));
    assert_eq!(r.body["has_more"], false);
    r.body["next_cursor"].as_str().expect("a cursor").to_owned()
}

/// `(type, job id, role, status)` of each event on a page.
fn events(r: &Resp) -> Vec<(String, String, Option<String>, Option<String>)> {
    r.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| {
            (
                e["type"].as_str().expect("type").to_owned(),
                e["job_id"].as_str().expect("job_id").to_owned(),
                e["job"]["role"].as_str().map(str::to_owned),
                e["job"]["status"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn fresh(template: &Job) -> Job {
    crate::support::data::another(template)
}

#[tokio::test]
async fn the_feed_reports_each_change_once_in_order_with_the_job_as_it_then_was() {
    let app = spawn_app().await;
    let k = known();
    let cursor = now_cursor(&app, "").await;

    let job = fresh(&k.rust_staff);
    app.service.upsert_job(job.clone()).await.expect("ingested");
    let mut changed = job.clone();
    changed.role = "Principal Rust Engineer".to_owned();
    app.service
        .upsert_job(changed.clone())
        .await
        .expect("updated");
    // The same job again is no change.
    app.service.upsert_job(changed.clone()).await.expect("same");
    app.service.close_job(job.id).await.expect("closed");
    // Closing a closed job changes nothing either.
    app.service.close_job(job.id).await.expect("closed again");
    let doomed = fresh(&k.designer);
    app.service
        .upsert_job(doomed.clone())
        .await
        .expect("ingested");
    app.service.delete_job(doomed.id).await.expect("deleted");

    let page = changes(&app, &format!("after={cursor}")).await;
    let id = id_of(&job);
    let doomed_id = id_of(&doomed);
    let role = |s: &str| Some(s.to_owned());
    assert_eq!(
        events(&page),
        vec![
            (
                "job.new".into(),
                id.clone(),
                role(&job.role),
                role("active")
            ),
            (
                "job.updated".into(),
                id.clone(),
                role("Principal Rust Engineer"),
                role("active")
            ),
            (
                "job.closed".into(),
                id.clone(),
                role("Principal Rust Engineer"),
                role("closed")
            ),
            // A job deleted since: its content is gone from every event.
            ("job.new".into(), doomed_id.clone(), None, None),
            ("job.deleted".into(), doomed_id, None, None),
        ]
    );
    let data = page.body["data"].as_array().expect("data");
    let last = data.last().expect("an event")["cursor"].clone();
    assert_eq!(page.body["next_cursor"], last);
    assert_eq!(page.body["has_more"], false);
    assert_eq!(page.body["meta"]["retention_days"], 30);
    let times: Vec<&str> = data
        .iter()
        .map(|e| e["occurred_at"].as_str().expect("a time"))
        .collect();
    let parsed: Vec<chrono::DateTime<Utc>> =
        times.iter().map(|t| t.parse().expect("RFC 3339")).collect();
    assert!(parsed[..3].windows(2).all(|w| w[0] < w[1]), "{times:?}");
    // The event's job is the job as `GET /jobs/{id}` sends it, once it is the current state.
    let mut detail = app.get_job(&id).await.body;
    detail.as_object_mut().expect("an object").remove("company");
    assert_eq!(data[2]["job"], detail);

    // Following from the last cursor: nothing new, the same cursor to poll from.
    let next = last.as_str().expect("a cursor");
    let empty = changes(&app, &format!("after={next}")).await;
    assert_eq!(empty.body["data"], Value::Array(Vec::new()));
    assert_eq!(empty.body["next_cursor"], last);
    assert_eq!(empty.body["has_more"], false);
    assert_eq!(
        empty.body["links"]["next"],
        format!("/api/v1/changes?after={next}")
    );
}

#[tokio::test]
async fn pages_follow_one_another_without_gap_or_repeat_from_the_oldest_event() {
    let app = spawn_app().await;
    let mut seen = Vec::new();
    let mut link = "/api/v1/changes?limit=7".to_owned();
    let mut pages = 0;
    loop {
        let r = app.get_as(&app.keys.enterprise.raw, &link).await;
        assert_eq!(r.status, StatusCode::OK, "{link}: {}", r.text);
        pages += 1;
        let page = events(&r);
        assert!(page.len() <= 7);
        seen.extend(page);
        link = r.body["links"]["next"].as_str().expect("next").to_owned();
        assert!(link.contains("limit=7"), "{link}");
        if r.body["has_more"] == false {
            break;
        }
        assert!(pages < 1_000, "the feed ends");
    }
    // Every seeded job that is active was new once, and nothing else happened to them.
    let active: HashSet<String> = app
        .all_jobs()
        .iter()
        .filter(|j| j.status == JobStatus::Active)
        .map(id_of)
        .collect();
    let ids: Vec<String> = seen.iter().map(|(_, id, _, _)| id.clone()).collect();
    assert_eq!(ids.len(), active.len(), "each once");
    assert_eq!(ids.iter().cloned().collect::<HashSet<_>>(), active);
    assert!(seen.iter().all(|(kind, ..)| kind == "job.new"));
    assert!(pages > 1);
}

#[tokio::test]
async fn filters_apply_to_the_job_as_of_each_event_closings_included() {
    let app = spawn_app().await;
    let k = known();
    let cursor = now_cursor(&app, "domain=design").await;
    let design = fresh(&k.designer);
    let engineering = fresh(&k.rust_staff);
    app.service
        .upsert_jobs(vec![design.clone(), engineering.clone()])
        .await
        .expect("ingested");
    app.service.close_job(design.id).await.expect("closed");
    app.service.close_job(engineering.id).await.expect("closed");
    let deleted = fresh(&k.rust_staff);
    app.service
        .upsert_job(deleted.clone())
        .await
        .expect("ingested");
    app.service.delete_job(deleted.id).await.expect("deleted");

    let page = changes(&app, &format!("domain=design&after={cursor}")).await;
    let kinds: Vec<(String, String)> = events(&page)
        .into_iter()
        .map(|(kind, id, ..)| (kind, id))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("job.new".into(), id_of(&design)),
            ("job.closed".into(), id_of(&design)),
            // A deletion is in every feed: nothing is left to filter on.
            ("job.deleted".into(), id_of(&deleted)),
        ]
    );
    assert_eq!(page.body["meta"]["filters"]["domains"][0], "design");
    assert!(page.body["links"]["next"]
        .as_str()
        .is_some_and(|l| l.contains("domain=design")));

    // Text filters too: `q` is matched against the job as the event left it.
    let page = changes(&app, &format!("q=marmalade&after={cursor}")).await;
    assert_eq!(events(&page).len(), 3);
    let page = changes(
        &app,
        &format!("q=zephyrine&remote_only=true&after={cursor}"),
    )
    .await;
    let ids: Vec<String> = events(&page).into_iter().map(|e| e.1).collect();
    assert_eq!(
        ids,
        vec![id_of(&engineering), id_of(&engineering), id_of(&deleted)]
    );
}

#[tokio::test]
async fn each_page_counts_one_call_and_bad_requests_none() {
    let app = spawn_app().await;
    let key = &app.keys.developer.raw;
    let before = app.calls_used(key).await;
    for query in ["", "after=now", "limit=3&domain=ai"] {
        let r = app.get_as(key, &format!("/api/v1/changes?{query}")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(r.header("x-ratelimit-remaining").is_some());
    }
    assert_eq!(app.calls_used(key).await, before + 3);

    let head = now_cursor(&app, "").await;
    let ahead = job_listings::domain::FeedCursor(u64::MAX).encode();
    for (query, param) in [
        ("after=", "after"),
        ("after=not-a-cursor", "after"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("min_confidence=2", "min_confidence"),
        (&*format!("after={head}&after={head}"), "after"),
    ] {
        let r = app.get_as(key, &format!("/api/v1/changes?{query}")).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.text);
        assert_eq!(r.body["code"], "invalid_parameter", "{query}");
        assert_eq!(r.body["param"], param, "{query}");
    }
    // A cursor after the newest event (data restored from an older backup, another
    // deployment's cursor) cannot be followed either: following it would miss events.
    let r = app
        .get_as(key, &format!("/api/v1/changes?after={ahead}"))
        .await;
    assert_eq!(r.status, StatusCode::GONE, "{}", r.text);
    assert_eq!(r.body["code"], "cursor_expired");
    assert!(r.body["detail"]
        .as_str()
        .is_some_and(|d| d.contains("restored")));
    let r = app.get_as(key, "/api/v1/changes?page=2").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.body["code"], "unknown_parameter");
    assert_eq!(
        app.calls_used(key).await,
        before + 3,
        "refusals are not counted"
    );
    let r = app
        .request(Method::GET, "/api/v1/changes", Auth::None, &[], None)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.body["code"], "missing_api_key");
}

#[tokio::test]
async fn a_cursor_older_than_the_retention_window_is_gone_with_links_to_start_again() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let known = known();
    let app = TestApp::builder()
        .clock(clock.clone())
        .config(
            ServiceConfig::default()
                .delivery(DeliveryConfig::default().prune_interval(Duration::from_millis(50)))
                .change_retention(Duration::from_secs(3_600)),
        )
        .seed(demo_dataset())
        .spawn()
        .await;
    let old = now_cursor(&app, "").await;
    let job = Job {
        company_id: app.all_companies()[0].id,
        company_name: app.all_companies()[0].name.clone(),
        ..fresh(&known.rust_staff)
    };
    app.service.upsert_job(job.clone()).await.expect("ingested");
    let page = changes(&app, &format!("after={old}")).await;
    assert_eq!(events(&page).len(), 1);
    let kept = page.body["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();

    // Two hours on, the retention of one hour has passed for everything so far.
    clock.set(Utc::now() + chrono::Duration::hours(2));
    let mut gone = None;
    for _ in 0..200 {
        let r = app
            .get_as(
                &app.keys.enterprise.raw,
                &format!("/api/v1/changes?after={old}"),
            )
            .await;
        if r.status == StatusCode::GONE {
            gone = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let gone = gone.expect("the old cursor expires once pruned");
    assert_eq!(gone.body["code"], "cursor_expired");
    assert_eq!(gone.body["param"], "after");
    assert_eq!(gone.body["links"]["search"], "/api/v1/jobs");
    assert_eq!(
        gone.body["links"]["changes_from_now"],
        "/api/v1/changes?after=now"
    );
    assert!(gone.body["detail"]
        .as_str()
        .is_some_and(|d| d.contains("1 days") || d.contains("0 days")));
    // The newest cursor is still good, and so is starting over.
    let r = changes(&app, &format!("after={kept}")).await;
    assert_eq!(r.body["data"], Value::Array(Vec::new()));
    let r = changes(&app, "").await;
    assert_eq!(r.body["data"], Value::Array(Vec::new()));
    assert_eq!(r.body["next_cursor"], kept);
}

#[tokio::test]
async fn cursors_hold_across_a_restart_and_the_feed_goes_on_from_them() {
    let app = spawn_app().await;
    let k = known();
    let cursor = now_cursor(&app, "").await;
    let first = fresh(&k.rust_staff);
    app.service
        .upsert_job(first.clone())
        .await
        .expect("ingested");
    let app = app.restart().await;
    let second = fresh(&k.designer);
    app.service
        .upsert_job(second.clone())
        .await
        .expect("ingested");
    let page = changes(&app, &format!("after={cursor}")).await;
    let ids: Vec<String> = events(&page).into_iter().map(|e| e.1).collect();
    assert_eq!(ids, vec![id_of(&first), id_of(&second)]);
}

#[tokio::test]
async fn a_job_twice_in_one_batch_is_new_then_updated_each_with_its_own_state() {
    let app = spawn_app().await;
    let k = known();
    let cursor = now_cursor(&app, "").await;
    let first = fresh(&k.rust_staff);
    let second = Job {
        role: "Rust Engineer, second thoughts".to_owned(),
        ..first.clone()
    };
    app.service
        .upsert_jobs(vec![first.clone(), second.clone(), second.clone()])
        .await
        .expect("ingested");
    let page = changes(&app, &format!("after={cursor}")).await;
    let id = id_of(&first);
    let role = |s: &str| Some(s.to_owned());
    let active = role("active");
    assert_eq!(
        events(&page),
        vec![
            (
                "job.new".into(),
                id.clone(),
                role(&first.role),
                active.clone()
            ),
            ("job.updated".into(), id, role(&second.role), active),
        ]
    );
    let data = page.body["data"].as_array().expect("data");
    assert_ne!(
        data[0]["job"]["updated_at"], data[1]["job"]["updated_at"],
        "each state has its own updated_at, which answers are cached by"
    );
}

/// Follows the feed from the oldest event with `filters`: each page's event count and
/// `has_more`, and the cursor positions it started and ended at.
async fn follow_all(app: &TestApp, filters: &str) -> Vec<(usize, bool, u64, u64)> {
    let mut pages = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(cursor) => format!("after={cursor}&limit=500&{filters}"),
            None => format!("limit=500&{filters}"),
        };
        let r = changes(app, &query).await;
        let next = r.body["next_cursor"].as_str().expect("a cursor").to_owned();
        let from = after.as_deref().map_or(0, position);
        let has_more = r.body["has_more"] == true;
        pages.push((events(&r).len(), has_more, from, position(&next)));
        after = Some(next);
        if !has_more {
            return pages;
        }
        assert!(pages.len() < 1_000, "the feed ends");
    }
}

/// The position a cursor stands at.
fn position(cursor: &str) -> u64 {
    job_listings::domain::FeedCursor::decode(cursor)
        .expect("a cursor the feed made")
        .0
}

#[tokio::test]
async fn a_page_of_a_word_filter_reads_a_bounded_amount_of_post_text() {
    use job_listings::demo::Dataset;
    use job_listings::service::ChangesQuery;
    // 600 jobs with posts of 8 KiB: 4.7 MiB of text, more than two pages may read.
    const POST: usize = 8 << 10;
    let mut data = Dataset::generate(5, 4, 600);
    for (i, job) in data.jobs.iter_mut().enumerate() {
        job.description = format!("post {i} ").repeat(POST / 4)[..POST].to_owned();
    }
    let text: usize = data
        .jobs
        .iter()
        .map(|j| j.role.len() + j.company_name.len() + j.description.len())
        .sum();
    let app = TestApp::builder().seed(data).spawn().await;
    let pages = follow_all(&app, "q=zzzznomatch").await;
    assert!(pages.iter().all(|(events, ..)| *events == 0), "{pages:?}");
    // Every page but the last stops at the text bound, with `has_more`, and the pages
    // together read the whole feed without a gap.
    let per_page = ChangesQuery::MAX_TEXT_BYTES.div_ceil(POST) as u64 + 1;
    assert!(
        pages.len() >= text.div_ceil(ChangesQuery::MAX_TEXT_BYTES),
        "{} pages read {text} bytes of text: {pages:?}",
        pages.len()
    );
    for pair in pages.windows(2) {
        assert_eq!(pair[0].3, pair[1].2, "pages follow one another");
    }
    for (_, _, from, to) in &pages {
        assert!(to - from <= per_page, "a page read {} entries", to - from);
    }
    // A filter that every post matches finds every event the unfiltered feed holds.
    let count = |pages: Vec<(usize, bool, u64, u64)>| pages.iter().map(|p| p.0).sum::<usize>();
    let all = count(follow_all(&app, "").await);
    assert!(all > 0);
    assert_eq!(count(follow_all(&app, "q=post").await), all);
}

#[tokio::test]
async fn a_page_of_a_filter_that_matches_nothing_reads_a_bounded_number_of_events() {
    use job_listings::demo::Dataset;
    use job_listings::service::ChangesQuery;
    let jobs = ChangesQuery::MAX_SCANNED + 500;
    let app = TestApp::builder()
        .seed(Dataset::generate(6, 4, jobs))
        .spawn()
        .await;
    // A tag no demo job carries: nothing matches, and no text is read.
    let pages = follow_all(&app, "domain=zzzz-no-such-tag").await;
    assert!(pages.iter().all(|(events, ..)| *events == 0), "{pages:?}");
    assert_eq!(pages.len(), 2, "{pages:?}");
    let (_, has_more, from, to) = pages[0];
    assert!(has_more, "a short page says more waits");
    assert_eq!(to - from, ChangesQuery::MAX_SCANNED as u64);
    assert!(!pages[1].1);
}
