//! The typed client (`job_listings::client`, feature `client`) against the real server on
//! loopback: every public endpoint, the error codes as typed errors, the quota and the
//! rate-limit state, the retry policy and the paged stream of a search.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use http::StatusCode;
use job_listings::client::{
    ChangesFrom, ChangesRequest, Client, ClientError, CompanySearch, JobSearch, NewWebhook, Paging,
    RetryPolicy, Shape, WebhookPatch,
};
use job_listings::demo::Dataset;
use job_listings::domain::{
    ChangeKind, DeliveryStatus, DomainTag, FeedCursor, JobId, PerPage, Plan, SubscriptionStatus,
    WebhookId,
};
use job_listings::query::{Facet, JobFilter, Sort};
use job_listings::service::{ManualClock, RateLimit, ServiceConfig};

use crate::api::spawn_app_with;
use crate::support::config::{developer_quota, rate_limited};
use crate::support::metrics::count;
use crate::support::{at, TestApp};

const HOOK: &str = "https://hooks.example.com/client";

fn client(app: &TestApp, key: &str) -> Client {
    Client::builder(app.base())
        .api_key(key)
        .build()
        .expect("a client")
}

#[tokio::test]
async fn the_client_reads_every_job_and_company_endpoint_into_typed_values() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let c = client(&app, &app.keys.developer.raw);

    let search = JobSearch::new()
        .per_page(PerPage::new(5).unwrap())
        .facet(Facet::Domain)
        .facet(Facet::Remote);
    let page = c.search_jobs(&search).await.expect("a search");
    assert_eq!(page.data.len(), 5);
    assert!(page.pagination.total > 5);
    assert!(page.links.next.is_some());
    let facets = page.meta.facets.as_ref().expect("facets asked for");
    let remote = facets.remote.expect("the remote facet");
    assert_eq!(remote.remote + remote.on_site, page.pagination.total);
    assert!(facets.domain.as_ref().is_some_and(|d| !d.is_empty()));
    let quota = page.quota.expect("a metered answer carries its quota");
    assert_eq!(quota.limit, 10_000);
    assert_eq!(quota.remaining, 9_999);

    let first = &page.data[0];
    let detail = c.get_job(first.id).await.expect("a job");
    assert_eq!(&detail.job, first);
    let similar = c
        .similar_jobs(first.id, Some(PerPage::new(4).unwrap()))
        .await
        .expect("similar jobs");
    assert!(!similar.data.is_empty() && similar.data.len() <= 4);
    assert!(similar.data.iter().all(|j| j.id != first.id));
    assert_eq!(similar.pagination.per_page, 4);
    let by_default = c.similar_jobs(first.id, None).await.expect("similar jobs");
    assert_eq!(by_default.pagination.per_page, 10);
    let company = detail.company.as_ref().expect("its company");
    assert_eq!(company.id, first.company_id);

    let companies = c
        .list_companies(
            &CompanySearch::default()
                .facets(true)
                .per_page(PerPage::new(3).unwrap()),
        )
        .await
        .expect("companies");
    assert_eq!(companies.data.len(), 3);
    assert!(companies
        .meta
        .facets
        .as_ref()
        .unwrap()
        .funding_stage
        .is_some());

    let detail = c.get_company(company.id).await.expect("a company");
    assert_eq!(detail.company.id, company.id);
    assert!(detail.active_jobs.iter().any(|j| j.id == first.id));
    let only_its_jobs = c
        .search_jobs(&JobFilter::default().company_id(company.id).into())
        .await
        .expect("its jobs");
    assert_eq!(only_its_jobs.pagination.total, detail.active_jobs_total);

    let usage = c.usage().await.expect("usage");
    assert_eq!(usage.plan, Plan::Developer);
    assert_eq!(
        usage.calls_used + usage.calls_remaining,
        usage.monthly_quota
    );
    assert_eq!(usage.calls_used, 7);

    let doc = Client::builder(app.base()).build().unwrap().openapi().await;
    let doc = doc.expect("the OpenAPI document needs no key");
    assert_eq!(doc["openapi"].as_str().map(|v| &v[..2]), Some("3."));
}

#[tokio::test]
async fn the_client_asks_for_relevance_fewer_fields_and_highlights() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let c = client(&app, &app.keys.developer.raw);
    let search = JobSearch::from(JobFilter::default().with_q("senior engineer"))
        .sort(Sort::Relevance)
        .per_page(PerPage::new(10).unwrap());
    let whole = c.search_jobs(&search).await.expect("a search");
    assert!(whole.pagination.total > 10);
    let rest = app
        .get_jobs("q=senior+engineer&sort=relevance&per_page=10")
        .await;
    assert_eq!(whole.data.len(), 10);
    let rest_ids = rest.ids();
    let ids: Vec<String> = whole.data.iter().map(|j| j.id.to_string()).collect();
    assert_eq!(ids, rest_ids, "the client asks for relevance order");

    let shape = Shape::default().fields(["role", "salary"]).highlight(true);
    let hits = c
        .search_hits(&search, &shape)
        .await
        .expect("a shaped search");
    assert_eq!(hits.pagination, whole.pagination);
    for (hit, job) in hits.data.iter().zip(&whole.data) {
        assert_eq!(hit.id, job.id);
        let names: Vec<&String> = hit.fields.keys().collect();
        assert_eq!(names, ["role", "salary"]);
        assert_eq!(hit.fields["role"], job.role.as_str());
        let matched = hit.matched.as_ref().expect("a match");
        // In the order the client sends `q`: the filter's words, which it keeps sorted.
        assert_eq!(matched.terms, ["engineer", "senior"]);
        assert!(job.description.contains(&matched.snippet.replace("**", "")));
    }
    // Without `fields` a hit holds the whole job.
    let full = c
        .search_hits(&search, &Shape::default().highlight(true))
        .await
        .expect("a highlighted search");
    assert_eq!(full.data[0].job().expect("every field"), whole.data[0]);
}

#[tokio::test]
async fn the_client_manages_webhooks_from_creation_to_deletion() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let c = client(&app, &app.keys.agent_pro.raw);

    let new = NewWebhook::new(HOOK)
        .domain_filters([DomainTag::parse("ai").unwrap()])
        .remote_only(true)
        .event_types([ChangeKind::New, ChangeKind::Closed]);
    let created = c.create_webhook(&new).await.expect("created");
    assert_eq!(
        created.webhook.event_types,
        [ChangeKind::New, ChangeKind::Closed]
    );
    assert!(created.secret.starts_with("whsec_"));
    assert_eq!(created.webhook.callback_url, HOOK);
    assert!(created.webhook.remote_only);
    assert!(!format!("{created:?}").contains(&created.secret));
    let id = created.webhook.id;

    let again = c
        .create_webhook_idempotent(&NewWebhook::new(HOOK), "client-test-1")
        .await
        .expect("created with a key");
    let replayed = c
        .create_webhook_idempotent(&NewWebhook::new(HOOK), "client-test-1")
        .await
        .expect("the same answer again");
    assert_eq!(again.webhook.id, replayed.webhook.id);

    let list = c.list_webhooks(Paging::default()).await.expect("listed");
    let ids: Vec<WebhookId> = list.data.iter().map(|w| w.id).collect();
    assert_eq!(ids, vec![id, again.webhook.id]);
    assert_eq!(c.get_webhook(id).await.expect("read").value, list.data[0]);

    let patch = WebhookPatch::default()
        .status(SubscriptionStatus::Disabled)
        .domain_filters(None);
    let changed = c.update_webhook(id, &patch).await.expect("changed");
    assert_eq!(changed.status, SubscriptionStatus::Disabled);
    assert!(changed.domain_filters.is_empty());
    let disabled = c.test_webhook(id).await.expect_err("a disabled webhook");
    assert_eq!(disabled.code(), Some("webhook_disabled"));
    let enable = WebhookPatch::default().status(SubscriptionStatus::Active);
    c.update_webhook(id, &enable).await.expect("enabled");

    let ping = c.test_webhook(id).await.expect("a test delivery");
    assert_eq!(ping.webhook_id, id);
    assert_eq!(ping.event_type.as_deref(), Some("webhook.test"));
    let deliveries = c
        .webhook_deliveries(id, Paging::default())
        .await
        .expect("deliveries");
    assert!(deliveries.data.iter().any(|d| d.id == ping.id));
    assert!(deliveries.data.iter().all(|d| matches!(
        d.status,
        DeliveryStatus::Pending | DeliveryStatus::Succeeded | DeliveryStatus::Failed
    )));

    c.delete_webhook(id).await.expect("deleted");
    let gone = c.get_webhook(id).await.expect_err("deleted");
    assert_eq!(gone.status(), Some(StatusCode::NOT_FOUND));
    assert_eq!(gone.code(), Some("not_found"));
}

#[tokio::test]
async fn error_answers_become_typed_errors_with_their_code() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let search = JobSearch::new();

    let none = Client::builder(app.base()).build().unwrap();
    let e = none.search_jobs(&search).await.expect_err("no key");
    let p = e.problem().expect("a problem document");
    assert_eq!(
        (p.status, p.code.as_str()),
        (StatusCode::UNAUTHORIZED, "missing_api_key")
    );
    assert!(!p.request_id.is_empty());
    assert!(p.quota.is_none());

    let wrong = client(&app, "jl_live_not_a_key");
    let e = wrong.search_jobs(&search).await.expect_err("a wrong key");
    assert_eq!(e.code(), Some("invalid_api_key"));

    let developer = client(&app, &app.keys.developer.raw);
    let e = developer
        .create_webhook(&NewWebhook::new(HOOK))
        .await
        .expect_err("below Agent Pro");
    assert_eq!(e.status(), Some(StatusCode::FORBIDDEN));
    assert_eq!(e.code(), Some("plan_upgrade_required"));
    assert!(
        e.problem().unwrap().quota.is_some(),
        "a known caller's quota"
    );

    let e = developer
        .get_job(JobId::new_random())
        .await
        .expect_err("no such job");
    assert_eq!(e.code(), Some("not_found"));

    let pro = client(&app, &app.keys.agent_pro.raw);
    let e = pro
        .create_webhook(&NewWebhook::new("ftp://hooks.example.com/x"))
        .await
        .expect_err("not an https URL");
    let p = e.problem().unwrap();
    assert_eq!(
        (p.status, p.code.as_str()),
        (StatusCode::BAD_REQUEST, "invalid_parameter")
    );
    assert_eq!(p.param.as_deref(), Some("callback_url"));
}

#[tokio::test]
async fn a_used_up_quota_is_a_typed_error_with_the_quota_and_retry_after() {
    let config = developer_quota(2);
    // One second before the key's period ends, so the quota's Retry-After is 1 s: well within
    // the retry policy's budget, so only the client's rule keeps it from retrying. The clock
    // stands still, so a retry would be refused again, and counted.
    let anchor = at(2026, 1, 31, 10, 0, 0);
    let clock = Arc::new(ManualClock::new(anchor));
    let app = TestApp::builder()
        .config(config)
        .clock(clock)
        .seed(Dataset::generate(7, 2, 5))
        .spawn()
        .await;
    let key = app.issue_anchored(Plan::Developer, anchor).await;
    app.set_time(at(2026, 2, 28, 9, 59, 59));
    let c = Client::builder(app.base())
        .api_key(&key.raw)
        .retry(RetryPolicy::default())
        .build()
        .unwrap();
    let search = JobSearch::new().per_page(PerPage::new(1).unwrap());
    let first = c.search_jobs(&search).await.expect("call 1 of 2");
    assert_eq!(first.quota.unwrap().remaining, 1);
    let second = c.search_jobs(&search).await.expect("call 2 of 2");
    assert_eq!(second.quota.unwrap().remaining, 0);

    // Bounded: a client that retried would come back after each second, up to its attempts.
    let e = tokio::time::timeout(Duration::from_secs(30), c.search_jobs(&search))
        .await
        .expect("the call over the quota returned")
        .expect_err("over the quota");
    let p = e.problem().unwrap();
    assert_eq!(p.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(p.code, "quota_exceeded");
    let quota = p.quota.expect("the quota state");
    assert_eq!((quota.limit, quota.remaining), (2, 0));
    assert_eq!(p.retry_after, Some(Duration::from_secs(1)));
    // The server answered quota_exceeded once: the client sent the call once, not again.
    let refused = count(
        &app.api.metrics_text(),
        "job_listings_http_problems_total",
        &[("code", "quota_exceeded")],
    );
    assert_eq!(refused, 1.0, "requests over the quota the server answered");
    assert_eq!(c.usage().await.expect("usage is free").calls_used, 2);
}

#[tokio::test]
async fn the_retry_policy_waits_out_a_rate_limit_and_succeeds() {
    let limit = RateLimit {
        per_second: 1.0,
        burst: 1,
    };
    let app = spawn_app_with(rate_limited(limit)).await;
    let search = JobSearch::new().per_page(PerPage::new(1).unwrap());

    let plain = client(&app, &app.keys.developer.raw);
    plain.search_jobs(&search).await.expect("within the burst");
    let e = plain.search_jobs(&search).await.expect_err("over the rate");
    let p = e.problem().unwrap();
    assert_eq!(
        (p.status, p.code.as_str()),
        (StatusCode::TOO_MANY_REQUESTS, "rate_limited")
    );
    assert!(p.retry_after.is_some());

    let patient = Client::builder(app.base())
        .api_key(&app.keys.developer.raw)
        .retry(RetryPolicy::default())
        .build()
        .unwrap();
    for _ in 0..2 {
        let page = patient
            .search_jobs(&search)
            .await
            .expect("retried until allowed");
        assert_eq!(page.data.len(), 1);
    }
    // Only the answered calls were counted.
    assert_eq!(patient.usage().await.unwrap().calls_used, 3);
}

#[tokio::test]
async fn the_retry_policy_never_sends_a_post_without_an_idempotency_key_again() {
    // Two tokens, refilled one every 2 s: a refused call's Retry-After (2 s) is well within
    // the policy's budget, so only the client's rule for POST keeps it from retrying.
    let app = spawn_app_with(rate_limited(RateLimit {
        per_second: 0.5,
        burst: 2,
    }))
    .await;
    let c = Client::builder(app.base())
        .api_key(&app.keys.agent_pro.raw)
        .retry(RetryPolicy::default())
        .build()
        .unwrap();
    let refused_by_rate = || {
        count(
            &app.api.metrics_text(),
            "job_listings_http_problems_total",
            &[("code", "rate_limited")],
        )
    };
    let id = c
        .create_webhook(&NewWebhook::new(HOOK))
        .await
        .expect("token 1")
        .value
        .webhook
        .id;
    c.test_webhook(id).await.expect("token 2");
    // `POST /webhooks/{id}/test` carries no Idempotency-Key: refused once, and returned.
    let e = c.test_webhook(id).await.expect_err("no token left");
    let p = e.problem().unwrap();
    assert_eq!(p.code, "rate_limited");
    assert_eq!(refused_by_rate(), 1.0, "the POST was sent once");
    // The same client does retry a GET: refused once more, then answered.
    c.get_webhook(id).await.expect("retried until allowed");
    assert_eq!(
        refused_by_rate(),
        2.0,
        "the GET was refused once, then retried"
    );
}

#[tokio::test]
async fn search_all_streams_every_page_of_a_search() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let c = client(&app, &app.keys.enterprise.raw);
    let search = JobSearch::new()
        .filter(JobFilter::default().domains([DomainTag::parse("engineering").unwrap()]))
        .per_page(PerPage::new(7).unwrap());
    let total = c.search_jobs(&search).await.unwrap().pagination.total;
    assert!(total > 7, "more than one page: {total}");

    let jobs: Vec<_> = c
        .search_all(&search)
        .try_collect()
        .await
        .expect("every page");
    assert_eq!(jobs.len() as u64, total);
    let ids: HashSet<JobId> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids.len(), jobs.len(), "no job twice");
    let engineering = DomainTag::parse("engineering").unwrap();
    assert!(jobs.iter().all(|j| j.domains.contains(&engineering)));
    let expected = app.all_job_ids("domain=engineering").await;
    let streamed: Vec<String> = jobs.iter().map(|j| j.id.to_string()).collect();
    assert_eq!(streamed, expected);
}

#[tokio::test]
async fn the_client_follows_the_change_feed_from_a_cursor() {
    let app = spawn_app_with(ServiceConfig::default()).await;
    let c = client(&app, &app.keys.developer.raw);
    let start = c
        .changes(&ChangesRequest::from(ChangesFrom::Now))
        .await
        .expect("the head");
    assert!(start.data.is_empty() && !start.has_more);
    assert_eq!(start.meta.retention_days, 30);

    let job = crate::support::data::another(&crate::support::data::known().designer);
    app.service.upsert_job(job.clone()).await.expect("ingested");
    app.service.close_job(job.id).await.expect("closed");
    let request = ChangesRequest::from(ChangesFrom::After(start.next_cursor))
        .limit(10)
        .filter(JobFilter::default().domains([DomainTag::parse("design").unwrap()]));
    let page = c.changes(&request).await.expect("the events");
    let kinds: Vec<(ChangeKind, JobId)> = page.data.iter().map(|e| (e.kind, e.job_id)).collect();
    assert_eq!(
        kinds,
        [(ChangeKind::New, job.id), (ChangeKind::Closed, job.id)]
    );
    assert_eq!(page.data[0].job.as_ref().map(|j| &j.role), Some(&job.role));
    assert_eq!(page.next_cursor, page.data[1].cursor);
    assert!(page.links.next.contains("domain=design"));
    assert!(page.quota.is_some(), "a metered page");

    // A cursor this feed never handed out: the typed error with the API's code.
    let ahead = c
        .changes(&ChangesRequest::from(ChangesFrom::After(FeedCursor(
            u64::MAX,
        ))))
        .await;
    match ahead {
        Err(ClientError::Api(problem)) => {
            assert_eq!(problem.status, StatusCode::GONE);
            assert_eq!(problem.code, "cursor_expired");
        }
        other => panic!("expected cursor_expired, got {other:?}"),
    }
}
