//! Entity tags and `If-None-Match`: a client that holds the answer gets a 304, which counts
//! in neither its quota nor its usage; tags change exactly when the answer does.

use reqwest::{Method, StatusCode};

use super::compression::raw;
use super::rate_limits::tight;
use super::{spawn_app, spawn_app_with};
use crate::support::config::developer_quota;
use crate::support::data::{id_of, known};
use crate::support::{Auth, Resp, TestApp};

async fn get_if(app: &TestApp, key: &str, path: &str, if_none_match: &str) -> Resp {
    app.request(
        Method::GET,
        path,
        Auth::XApiKey(key),
        &[("if-none-match", if_none_match)],
        None,
    )
    .await
}

fn etag(r: &Resp) -> String {
    let tag = r
        .header("etag")
        .unwrap_or_else(|| panic!("no ETag: {:?}", r.headers))
        .to_owned();
    assert!(
        tag.starts_with('"') && tag.ends_with('"'),
        "a strong tag: {tag}"
    );
    tag
}

fn paths() -> Vec<String> {
    vec![
        "/api/v1/jobs?q=zephyrine".to_owned(),
        format!("/api/v1/jobs/{}", id_of(&known().rust_staff)),
        "/api/v1/companies?per_page=5".to_owned(),
        format!("/api/v1/companies/{}", known().quokka.id),
    ]
}

#[tokio::test]
async fn a_304_answers_a_held_copy_with_the_quota_headers_and_counts_nothing() {
    let app = spawn_app().await;
    let key = &app.keys.developer.raw;
    for path in paths() {
        let first = app.get_as(key, &path).await;
        assert_eq!(first.status, StatusCode::OK, "{path}: {}", first.text);
        let tag = etag(&first);
        assert_eq!(first.header("cache-control"), Some("private, no-cache"));
        let before = app.calls_used(key).await;
        let remaining = first.header_u64("x-ratelimit-remaining");

        let again = get_if(&app, key, &path, &tag).await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(again.text.is_empty());
        assert_eq!(etag(&again), tag, "{path}");
        assert_eq!(
            again.header_u64("x-ratelimit-remaining"),
            remaining,
            "{path}"
        );
        assert!(again.header("x-ratelimit-limit").is_some());
        assert!(again.header("ratelimit").is_some());
        assert!(again.header("x-request-id").is_some());
        assert_eq!(
            app.calls_used(key).await,
            before,
            "{path}: a 304 is not counted"
        );

        // HEAD is answered as GET is, conditionally too.
        let head = app
            .request(
                Method::HEAD,
                &path,
                Auth::XApiKey(key),
                &[("if-none-match", &tag)],
                None,
            )
            .await;
        assert_eq!(head.status, StatusCode::NOT_MODIFIED, "{path}");
        assert_eq!(app.calls_used(key).await, before, "{path}");
    }
}

#[tokio::test]
async fn if_none_match_compares_weakly_and_takes_lists_and_a_star() {
    let app = spawn_app().await;
    let key = &app.keys.enterprise.raw;
    let path = "/api/v1/jobs?q=zephyrine";
    let tag = etag(&app.get_as(key, path).await);
    let bare = tag.trim_matches('"');
    for held in [
        tag.clone(),
        format!("W/{tag}"),
        format!("\"other\", {tag}"),
        format!("\"{bare}-gzip\""),
        "*".to_owned(),
    ] {
        let r = get_if(&app, key, path, &held).await;
        assert_eq!(r.status, StatusCode::NOT_MODIFIED, "{held}");
    }
    for not_held in [
        "\"0000000000000000\"".to_owned(),
        bare.to_owned(),
        "garbage, \"".to_owned(),
        format!("\"{bare}-deflate\""),
    ] {
        let r = get_if(&app, key, path, &not_held).await;
        assert_eq!(r.status, StatusCode::OK, "{not_held}: {}", r.text);
        assert_eq!(etag(&r), tag);
    }
}

#[tokio::test]
async fn each_coding_has_its_own_tag_and_any_of_them_revalidates() {
    let app = spawn_app().await;
    let path = "/api/v1/jobs?per_page=50";
    let plain = raw(&app, Method::GET, path, &[]).await;
    let plain_tag = plain.headers["etag"].to_str().unwrap().to_owned();
    let mut seen = vec![plain_tag.clone()];
    for coding in ["zstd", "br", "gzip"] {
        let coded = raw(&app, Method::GET, path, &[("accept-encoding", coding)]).await;
        let tag = coded.headers["etag"].to_str().unwrap().to_owned();
        assert_eq!(
            tag,
            format!("{}-{coding}\"", plain_tag.trim_end_matches('"'))
        );
        assert!(!seen.contains(&tag));
        seen.push(tag.clone());
        let r = raw(
            &app,
            Method::GET,
            path,
            &[("accept-encoding", "identity"), ("if-none-match", &tag)],
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_MODIFIED, "{coding}");
        assert_eq!(r.headers["etag"].to_str().unwrap(), plain_tag);
    }
}

#[tokio::test]
async fn a_304_is_answered_even_with_the_quota_used_up() {
    let app = spawn_app_with(developer_quota(1)).await;
    let key = &app.keys.developer.raw;
    let path = "/api/v1/jobs?q=zephyrine";
    let first = app.get_as(key, path).await;
    assert_eq!(first.status, StatusCode::OK);
    let tag = etag(&first);
    let held = get_if(&app, key, path, &tag).await;
    assert_eq!(held.status, StatusCode::NOT_MODIFIED);
    assert_eq!(held.header_u64("x-ratelimit-remaining"), 0);
    // Anything new would be a call, and there is none left.
    get_if(&app, key, path, "\"0000000000000000\"")
        .await
        .assert_problem(429, "quota_exceeded", None);
    assert_eq!(app.calls_used(key).await, 1);
}

#[tokio::test]
async fn a_304_takes_a_token_of_the_rate_limit_but_no_call_of_the_quota() {
    // Three tokens, and a refill slower than the test: the fourth request of any kind is over.
    let app = spawn_app_with(tight(0.05, 3)).await;
    let key = &app.keys.developer.raw;
    let path = "/api/v1/jobs?q=zephyrine";
    let tag = etag(&app.get_as(key, path).await);
    for _ in 0..2 {
        assert_eq!(
            get_if(&app, key, path, &tag).await.status,
            StatusCode::NOT_MODIFIED
        );
    }
    get_if(&app, key, path, &tag)
        .await
        .assert_problem(429, "rate_limited", None);
    // The one 200 is the only call counted, read by the service (a request would need a token).
    let api_key = job_listings::domain::ApiKey::parse(key).expect("a key");
    let quota = app.service.quota(&api_key).await.expect("quota");
    assert_eq!(quota.remaining, quota.limit - 1);
}

/// The tags of these answers now.
async fn current_tags(app: &TestApp, paths: [&str; 4]) -> Vec<String> {
    let mut out = Vec::new();
    for path in paths {
        let r = app.get(path).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        out.push(etag(&r));
    }
    out
}

#[tokio::test]
async fn tags_change_exactly_when_the_answer_does() {
    let app = spawn_app().await;
    let k = known();
    let page = "/api/v1/jobs?q=zephyrine";
    let other_page = "/api/v1/jobs?q=marmalade";
    let detail = format!("/api/v1/jobs/{}", id_of(&k.rust_staff));
    let company = format!("/api/v1/companies/{}", k.quokka.id);
    let paths = [page, other_page, detail.as_str(), company.as_str()];
    let tags = |app| current_tags(app, paths);
    let start = tags(&app).await;
    // Nothing written: the same tags, however often asked.
    assert_eq!(tags(&app).await, start);

    // A new job on another page only: that page's tag changes, no other.
    let marmalade = crate::support::data::another(&k.designer);
    app.service.upsert_job(marmalade).await.expect("ingested");
    let after_other = tags(&app).await;
    assert_eq!(after_other[0], start[0], "the zephyrine page is unchanged");
    assert_ne!(after_other[1], start[1], "the marmalade page has a new job");
    assert_eq!(after_other[2], start[2]);

    // A new job on the page.
    let new = crate::support::data::another(&k.rust_staff);
    app.service.upsert_job(new).await.expect("ingested");
    let after_new = tags(&app).await;
    assert_ne!(after_new[0], after_other[0], "ingest");
    assert_eq!(
        after_new[2], after_other[2],
        "another job's detail is unchanged"
    );

    // An update of a job on the page changes the page, its detail and its company's.
    let mut changed = k.rust_staff.clone();
    changed.role = "Principal Rust Engineer (updated)".to_owned();
    app.service.upsert_job(changed).await.expect("updated");
    let after_update = tags(&app).await;
    assert_ne!(after_update[0], after_new[0], "update: page");
    assert_ne!(after_update[2], after_new[2], "update: detail");
    assert_ne!(after_update[3], after_new[3], "update: company's jobs");
    assert_eq!(after_update[1], after_new[1], "update: another page");

    // Closing a job on the page.
    app.service
        .close_job(k.wombat_job.id)
        .await
        .expect("closed");
    let after_close = tags(&app).await;
    assert_ne!(after_close[0], after_update[0], "close");
    assert_eq!(
        after_close[2], after_update[2],
        "close: another job's detail"
    );
    assert_eq!(after_close[1], after_update[1], "close: another page");

    // The held tag of the page before the close no longer matches.
    let r = get_if(&app, &app.keys.enterprise.raw, page, &after_update[0]).await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn usage_is_tagged_and_revalidates_until_a_call_is_counted() {
    let app = spawn_app().await;
    let key = &app.keys.developer.raw;
    let first = app.get_usage(key).await;
    let tag = etag(&first);
    assert_eq!(
        get_if(&app, key, "/api/v1/usage", &tag).await.status,
        StatusCode::NOT_MODIFIED
    );
    assert_eq!(app.get_as(key, "/api/v1/jobs").await.status, StatusCode::OK);
    let after = get_if(&app, key, "/api/v1/usage", &tag).await;
    assert_eq!(after.status, StatusCode::OK);
    assert_eq!(after.body["calls_used"], 1);
}

#[tokio::test]
async fn the_openapi_document_is_tagged_without_a_key() {
    let app = spawn_app().await;
    let first = app
        .request(Method::GET, "/api/v1/openapi.json", Auth::None, &[], None)
        .await;
    let tag = etag(&first);
    let again = app
        .request(
            Method::GET,
            "/api/v1/openapi.json",
            Auth::None,
            &[("if-none-match", &tag)],
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
}
