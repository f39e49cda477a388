//! Everything written survives a graceful stop and a restart on the same folder.

use job_listings::domain::Plan;
use job_listings::service::NewKey;
use reqwest::StatusCode;
use serde_json::json;

use super::spawn_app;
use crate::support::at;
use crate::support::data::known;

#[tokio::test]
async fn data_keys_webhooks_and_usage_survive_a_restart_on_the_same_folder() {
    let app = spawn_app().await;
    let pro = app.keys.agent_pro.raw.clone();
    let dev = app.keys.developer.raw.clone();

    // Written through the API: a webhook and counted calls.
    let created = app
        .post_webhook(
            &pro,
            &json!({ "callback_url": "https://hooks.example.com/r", "domain_filters": ["design"] }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let hook = created.body["id"].as_str().expect("an id").to_owned();
    for _ in 0..4 {
        assert_eq!(
            app.get_as(&pro, "/api/v1/jobs").await.status,
            StatusCode::OK
        );
    }
    for _ in 0..2 {
        assert_eq!(
            app.get_as(&dev, "/api/v1/companies").await.status,
            StatusCode::OK
        );
    }

    // Written through the service: a new job (queuing a delivery), a closed job, a revoked key.
    let mut fresh = crate::support::data::another(&known().designer);
    fresh.role = "Restart Survivor Designer".to_owned();
    fresh.posted_at = at(2026, 12, 24, 0, 0, 0);
    let outcome = app
        .service
        .upsert_job(fresh.clone())
        .await
        .expect("ingested");
    assert!(outcome.announced);
    app.service
        .close_job(known().rust_staff.id)
        .await
        .expect("closed");
    let (revoked, record) = app
        .service
        .create_key(NewKey::new(Plan::Developer))
        .await
        .expect("a key");
    app.service.revoke_key(record.id).await.expect("revoked");

    let before = app.get_jobs("per_page=50").await;
    let total_before = before.total();
    let ids_before = before.ids();
    let pro_used = app.calls_used(&pro).await;
    let dev_used = app.calls_used(&dev).await;
    assert_eq!(pro_used, 5, "one webhook and four searches");
    assert_eq!(dev_used, 2);

    let app = app.restart().await;

    // Usage first, before any new call is counted.
    assert_eq!(app.calls_used(&pro).await, pro_used);
    assert_eq!(app.calls_used(&dev).await, dev_used);

    let listed = app.list_webhooks(&pro).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    assert_eq!(listed.ids(), vec![hook.clone()]);
    assert_eq!(listed.body["data"][0]["domain_filters"], json!(["design"]));
    assert_eq!(
        listed.body["data"][0]["callback_url"],
        "https://hooks.example.com/r"
    );

    let after = app.get_jobs("per_page=50").await;
    assert_eq!(after.total(), total_before);
    assert_eq!(after.ids(), ids_before);
    let r = app.get_job(&fresh.id.to_string()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["role"], "Restart Survivor Designer");
    assert_eq!(r.body["company"]["name"], "Quokka Frobnitz");
    let closed = app.get_job(&known().rust_staff.id.to_string()).await;
    assert_eq!(closed.body["status"], "closed", "{}", closed.text);
    assert!(!after.ids().contains(&known().rust_staff.id.to_string()));

    for key in [&app.keys.enterprise.raw, &dev, &pro] {
        assert_eq!(
            app.get_as(key, "/api/v1/jobs?per_page=1").await.status,
            StatusCode::OK
        );
    }
    app.get_as(revoked.expose(), "/api/v1/jobs")
        .await
        .assert_problem(401, "invalid_api_key", None);

    let pending = app.pending_deliveries(&hook).await;
    assert_eq!(pending.len(), 1, "the queued delivery survived");
    assert_eq!(app.calls_used(&pro).await, 7);
}
