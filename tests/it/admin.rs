//! The admin API end to end: the public API and the admin API each on its own real listener
//! on 127.0.0.1, over one service on sled in a temporary folder.

use std::time::Duration;

use job_listings::api::admin::{AdminApi, AdminConfig, AdminToken};
use job_listings::demo::Dataset;
use job_listings::domain::{Job, JobId};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::server::{server_config, RunningServer};
use crate::support::{eventually, Auth, Resp, TestApp};

/// The app's admin API on a listener of its own, with its token.
struct Admin {
    server: RunningServer,
    token: AdminToken,
    client: reqwest::Client,
}

impl Admin {
    async fn beside(app: &TestApp) -> Self {
        Self::beside_with(app, AdminConfig::default()).await
    }

    /// The admin API with settings of the test's.
    async fn beside_with(app: &TestApp, config: AdminConfig) -> Self {
        let token = AdminToken::generate();
        let server = RunningServer::start(
            AdminApi::with_config(app.api.clone(), token.hash(), config),
            server_config(),
        )
        .await;
        Self {
            server,
            token,
            client: reqwest::Client::new(),
        }
    }

    /// A request with the admin token.
    async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Resp {
        let token = self.token.expose().to_owned();
        self.send_as(method, path, Some(&token), body).await
    }

    /// A request with `Authorization: Bearer <bearer>`, or none.
    async fn send_as(
        &self,
        method: Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<Value>,
    ) -> Resp {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.server.base));
        if let Some(bearer) = bearer {
            req = req.bearer_auth(bearer);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        read(req.send().await.expect("answered")).await
    }

    /// A bulk upload of these lines.
    async fn upload(&self, path: &str, lines: &[String]) -> Resp {
        let req = self
            .client
            .post(format!("{}{path}", self.server.base))
            .bearer_auth(self.token.expose())
            .header("content-type", "application/x-ndjson")
            .body(lines.join("\n"));
        read(req.send().await.expect("answered")).await
    }
}

/// A bulk upload on a connection of its own, its body sent in HTTP/1.1 chunks as the test
/// says, answered once it is finished.
struct RawUpload {
    stream: TcpStream,
}

impl RawUpload {
    /// Sends the request's head.
    async fn start(admin: &Admin, path: &str) -> Self {
        let mut stream = TcpStream::connect(admin.server.addr)
            .await
            .expect("connected");
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer {}\r\n\
             content-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\
             connection: close\r\n\r\n",
            admin.server.addr,
            admin.token.expose()
        );
        stream.write_all(head.as_bytes()).await.expect("sent");
        Self { stream }
    }

    /// Sends `bytes` in chunks of `size` bytes, all in one write: the server decodes one
    /// body frame per chunk however the bytes arrive.
    async fn send(&mut self, bytes: &[u8], size: usize) {
        let mut chunked = Vec::with_capacity(bytes.len() * 7);
        for piece in bytes.chunks(size) {
            chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            chunked.extend_from_slice(piece);
            chunked.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&chunked).await.expect("sent");
    }

    /// Ends the body and reads the answer.
    async fn finish(mut self) -> (StatusCode, Value) {
        self.stream.write_all(b"0\r\n\r\n").await.expect("sent");
        let mut answer = Vec::new();
        self.stream
            .read_to_end(&mut answer)
            .await
            .expect("an answer");
        let text = String::from_utf8(answer).expect("UTF-8");
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .and_then(|s| StatusCode::from_u16(s).ok())
            .expect("a status");
        let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, body)
    }
}

async fn read(response: reqwest::Response) -> Resp {
    let status = response.status();
    let headers = response.headers().clone();
    Resp::new(status, headers, response.text().await.expect("a body"))
}

async fn app() -> TestApp {
    TestApp::builder()
        .seed(Dataset::generate(11, 20, 200))
        .spawn()
        .await
}

/// A new job of the app's first company, as an import line holds it.
fn new_job(app: &TestApp, role: &str) -> Value {
    let mut job: Value = serde_json::to_value(&app.dataset.jobs[0]).expect("a job");
    let object = job.as_object_mut().expect("an object");
    for generated in ["first_seen_at", "updated_at", "status", "company_name"] {
        object.remove(generated);
    }
    object.insert("id".into(), json!(JobId::new_random().to_string()));
    object.insert("role".into(), json!(role));
    job
}

async fn search_total(app: &TestApp, q: &str) -> u64 {
    let r = app.get_jobs(&format!("q={q}")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["pagination"]["total"].as_u64().expect("a total")
}

#[tokio::test]
async fn the_public_listener_has_no_admin_route() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    for path in [
        "/admin/v1/keys",
        "/admin/v1/jobs/bulk",
        "/admin/v1/webhooks",
    ] {
        let r = app
            .request(
                Method::GET,
                path,
                Auth::Bearer(admin.token.expose()),
                &[],
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.text);
    }
}

#[tokio::test]
async fn the_admin_api_refuses_api_keys_missing_and_wrong_tokens_without_echoing_them() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let missing = admin
        .send_as(Method::GET, "/admin/v1/keys", None, None)
        .await;
    assert_eq!(missing.status, StatusCode::UNAUTHORIZED);
    assert_eq!(missing.body["code"], "missing_admin_token");

    let other = AdminToken::generate();
    let key = app.keys.enterprise.raw.clone();
    for wrong in [key.as_str(), other.expose(), "x"] {
        let r = admin
            .send_as(Method::GET, "/admin/v1/keys", Some(wrong), None)
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
        assert_eq!(r.body["code"], "invalid_admin_token");
        assert!(!r.text.contains(wrong), "{}", r.text);
        assert!(!r.text.contains(admin.token.expose()), "{}", r.text);
    }
    // An API key in X-API-Key opens nothing either.
    let r = admin
        .client
        .get(format!("{}/admin/v1/keys", admin.server.base))
        .header("x-api-key", &key)
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    // The health probes and the document need no token.
    for path in ["/livez", "/readyz", "/admin/v1/openapi.json"] {
        let r = admin.send_as(Method::GET, path, None, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
    }
}

#[tokio::test]
async fn a_job_put_through_the_admin_api_is_searchable_when_the_call_returns() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    assert_eq!(search_total(&app, "zanzibarian").await, 0);
    let job = new_job(&app, "Zanzibarian Cartographer");
    let id = job["id"].as_str().expect("an id").to_owned();
    let path = format!("/admin/v1/jobs/{id}");

    let created = admin.send(Method::PUT, &path, Some(job.clone())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    assert_eq!(created.body["status"], "active");
    assert_eq!(search_total(&app, "zanzibarian").await, 1);

    let mut changed = job.clone();
    changed["role"] = json!("Zanzibarian Surveyor");
    changed.as_object_mut().expect("an object").remove("id");
    let replaced = admin.send(Method::PUT, &path, Some(changed)).await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.text);
    assert_eq!(search_total(&app, "surveyor").await, 1);
    let read = admin.send(Method::GET, &path, None).await;
    assert_eq!(read.body["role"], "Zanzibarian Surveyor");

    let closed = admin
        .send(Method::POST, &format!("{path}/close"), None)
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.text);
    assert_eq!(closed.body["status"], "closed");
    assert_eq!(search_total(&app, "zanzibarian").await, 0);
}

#[tokio::test]
async fn a_bad_job_body_is_refused_with_what_to_fix() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let mut job = new_job(&app, "Role");
    let id = job["id"].as_str().expect("an id").to_owned();
    job["confidence"] = json!(7);
    let r = admin
        .send(Method::PUT, &format!("/admin/v1/jobs/{id}"), Some(job))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap_or("")
            .contains("confidence"),
        "{}",
        r.text
    );

    let other = new_job(&app, "Role");
    let r = admin
        .send(Method::PUT, &format!("/admin/v1/jobs/{id}"), Some(other))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert_eq!(r.body["param"], "id");
    assert!(app
        .service
        .stored_job(id.parse().expect("an id"))
        .await
        .is_err());
}

#[tokio::test]
async fn a_bulk_upload_writes_the_good_lines_and_reports_each_bad_one() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let good: Vec<Value> = (0..5)
        .map(|i| new_job(&app, &format!("Quixotic Lamplighter {i}")))
        .collect();
    let mut unknown_company = new_job(&app, "Quixotic Orphan");
    let stranger = job_listings::domain::CompanyId::new_random();
    unknown_company["company_id"] = json!(stranger.to_string());
    let mut lines: Vec<String> = good.iter().map(Value::to_string).collect();
    lines.insert(1, "{not json".to_owned());
    lines.insert(3, String::new());
    lines.push(unknown_company.to_string());

    // A dry run checks and writes nothing.
    let checked = admin
        .upload("/admin/v1/jobs/bulk?dry_run=true", &lines)
        .await;
    assert_eq!(checked.status, StatusCode::OK, "{}", checked.text);
    assert_eq!(checked.body["dry_run"], true);
    assert_eq!(checked.body["created"], 5);
    assert_eq!(checked.body["refused"], 2);
    assert_eq!(search_total(&app, "quixotic").await, 0);

    let r = admin.upload("/admin/v1/jobs/bulk", &lines).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["records"], 7, "{}", r.text);
    assert_eq!(r.body["created"], 5);
    assert_eq!(r.body["updated"], 0);
    assert_eq!(r.body["refused"], 2);
    let errors = r.body["errors"].as_array().expect("errors");
    assert_eq!(errors[0]["line"], 2);
    assert!(errors[0]["message"]
        .as_str()
        .unwrap_or("")
        .contains("not valid JSON"));
    assert_eq!(errors[1]["line"], 8);
    assert_eq!(
        errors[1]["message"],
        format!(
            "company_id: company {stranger} is unknown; import the company first, or write \
             it (PUT /admin/v1/companies/{{id}})"
        )
    );
    assert_eq!(search_total(&app, "quixotic").await, 5);

    // Sent again, every line replaces its job.
    let again = admin.upload("/admin/v1/jobs/bulk", &lines[..1]).await;
    assert_eq!(again.body["updated"], 1, "{}", again.text);
}

#[tokio::test]
async fn a_bulk_upload_says_what_it_reads_and_refuses_other_bodies() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let r = admin
        .send(Method::POST, "/admin/v1/jobs/bulk", Some(json!({})))
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{}", r.text);
    assert!(r.body["detail"]
        .as_str()
        .unwrap_or("")
        .contains("application/x-ndjson"));
    let r = admin.send(Method::GET, "/admin/v1/jobs/bulk", None).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_long_line_sent_a_byte_at_a_time_is_read_and_written() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    // A job line of 64 KiB: a long description, then blanks up to the closing brace.
    let mut job = new_job(&app, "Unhurried Glassblower");
    job["description"] = json!("slow ".repeat(10_000));
    let text = job.to_string();
    let open = text.strip_suffix('}').expect("a JSON object");
    let mut line = open.as_bytes().to_vec();
    line.resize(64 * 1024 - 2, b' ');
    line.extend_from_slice(b"}\n");

    let mut upload = RawUpload::start(&admin, "/admin/v1/jobs/bulk").await;
    upload.send(&line, 1).await;
    let (status, report) = upload.finish().await;

    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        (report["records"].as_u64(), report["created"].as_u64()),
        (Some(1), Some(1)),
        "{report}"
    );
    assert_eq!(search_total(&app, "glassblower").await, 1);
}

#[tokio::test]
async fn batches_cut_by_their_bytes_write_and_report_every_line() {
    let app = app().await;
    // Every line a batch of its own.
    let admin = Admin::beside_with(&app, AdminConfig::default().max_batch_bytes(1)).await;
    let mut lines: Vec<String> = (0..5)
        .map(|i| new_job(&app, &format!("Sliced Cooper {i}")).to_string())
        .collect();
    lines.insert(2, "{not json".to_owned());
    let r = admin.upload("/admin/v1/jobs/bulk", &lines).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["created"], 5, "{}", r.text);
    assert_eq!(r.body["refused"], 1, "{}", r.text);
    assert_eq!(r.body["errors"][0]["line"], 3, "{}", r.text);
    assert_eq!(search_total(&app, "cooper").await, 5);
}

#[tokio::test]
async fn bulk_uploads_beyond_the_bound_are_refused_until_one_finishes() {
    let app = app().await;
    let admin = Admin::beside_with(&app, AdminConfig::default().max_bulk_uploads(2)).await;
    let job_line = |role: &str| {
        let mut text = new_job(&app, role).to_string();
        text.push('\n');
        text
    };
    // Two uploads under way, each with a line sent and the rest of its body to come.
    let mut held = Vec::new();
    for (path, role) in [
        ("/admin/v1/jobs/bulk", "Held Ropewalker"),
        ("/admin/v1/companies/bulk?dry_run=true", ""),
    ] {
        let mut upload = RawUpload::start(&admin, path).await;
        if !role.is_empty() {
            upload.send(job_line(role).as_bytes(), 64).await;
        }
        held.push(upload);
    }

    // A third is refused at once, as soon as the server has taken up both (a refusal only
    // says how long to wait, so the check asks until the two are under way).
    let refused = std::cell::RefCell::new(None);
    let (to, last) = (&admin, &refused);
    let third = move || async move {
        let r = to.upload("/admin/v1/jobs/bulk", &[]).await;
        let done = r.status == StatusCode::TOO_MANY_REQUESTS;
        *last.borrow_mut() = Some(r);
        done
    };
    assert!(
        eventually(Duration::from_secs(10), third).await,
        "a third upload was never refused: {:?}",
        refused.borrow().as_ref().map(|r| r.text.clone())
    );
    let r = refused.take().expect("an answer");
    assert_eq!(r.body["code"], "too_many_uploads", "{}", r.text);
    assert_eq!(r.header("retry-after"), Some("5"));
    assert_eq!(r.body["retry_after"], 5);
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap_or("")
            .contains("2 bulk uploads are under way"),
        "{}",
        r.text
    );

    // The held uploads finish as usual, and their places are free again.
    for upload in held {
        let (status, report) = upload.finish().await;
        assert_eq!(status, StatusCode::OK, "{report}");
    }
    assert_eq!(search_total(&app, "ropewalker").await, 1);
    let after = admin
        .upload("/admin/v1/jobs/bulk", &[job_line("Freed Ropewalker")])
        .await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.text);
    assert_eq!(after.body["created"], 1, "{}", after.text);
}

#[tokio::test]
async fn companies_are_written_one_at_a_time_or_in_bulk_and_looked_up() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let mut company: Value = serde_json::to_value(&app.dataset.companies[0]).expect("a company");
    let id = job_listings::domain::CompanyId::new_random();
    company["id"] = json!(id.to_string());
    company["name"] = json!("Obsidian Orchard");
    let r = admin
        .send(
            Method::PUT,
            &format!("/admin/v1/companies/{id}"),
            Some(company.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(app.service.has_company(id));

    let other = job_listings::domain::CompanyId::new_random();
    let mut second = company.clone();
    second["id"] = json!(other.to_string());
    let lines = vec![company.to_string(), second.to_string()];
    let r = admin.upload("/admin/v1/companies/bulk", &lines).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        (r.body["created"].clone(), r.body["updated"].clone()),
        (json!(1), json!(1))
    );

    let missing = job_listings::domain::CompanyId::new_random();
    let r = admin
        .send(
            Method::POST,
            "/admin/v1/companies/lookup",
            Some(json!({ "ids": [id, missing, other] })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["found"], json!([id, other]));
    assert_eq!(r.body["missing"], json!([missing]));
}

#[tokio::test]
async fn keys_are_issued_changed_and_revoked_and_the_public_api_follows() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let created = admin
        .send(
            Method::POST,
            "/admin/v1/keys",
            Some(json!({ "plan": "developer", "label": "ops@example.com" })),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let key = created.body["key"].as_str().expect("the key").to_owned();
    let id = created.body["id"].as_str().expect("an id").to_owned();
    assert_eq!(
        app.get_as(&key, "/api/v1/jobs").await.status,
        StatusCode::OK
    );

    // Listed without the key itself.
    let listed = admin.send(Method::GET, "/admin/v1/keys", None).await;
    assert!(!listed.text.contains(&key));
    assert!(listed.body["data"]
        .as_array()
        .expect("keys")
        .iter()
        .any(|k| k["id"] == id.as_str() && k["label"] == "ops@example.com"));

    // The plan follows at once: webhooks need agent_pro.
    let hook = json!({ "callback_url": "https://hooks.example.com/jobs" });
    let subscribe = || app.call(Method::POST, "/api/v1/webhooks", &key, Some(&hook));
    assert_eq!(subscribe().await.status, StatusCode::FORBIDDEN);
    let changed = admin
        .send(
            Method::PATCH,
            &format!("/admin/v1/keys/{id}"),
            Some(json!({ "plan": "agent_pro" })),
        )
        .await;
    assert_eq!(changed.body["plan"], "agent_pro", "{}", changed.text);
    assert_eq!(
        app.get_as(&key, "/api/v1/webhooks").await.status,
        StatusCode::OK
    );

    let usage = admin
        .send(Method::GET, &format!("/admin/v1/keys/{id}/usage"), None)
        .await;
    assert_eq!(usage.status, StatusCode::OK, "{}", usage.text);
    assert_eq!(usage.body["calls_used"], 2, "{}", usage.text);

    let past_due = admin
        .send(
            Method::PATCH,
            &format!("/admin/v1/keys/{id}"),
            Some(json!({ "billing_status": "past_due" })),
        )
        .await;
    assert_eq!(past_due.body["billing_status"], "past_due");
    assert_eq!(
        app.get_as(&key, "/api/v1/jobs").await.body["code"],
        "billing_inactive"
    );

    let revoked = admin
        .send(Method::DELETE, &format!("/admin/v1/keys/{id}"), None)
        .await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text);
    assert!(revoked.body["revoked_at"].is_string());
    assert_eq!(
        app.get_as(&key, "/api/v1/jobs").await.status,
        StatusCode::UNAUTHORIZED
    );
    let unknown = admin
        .send(
            Method::GET,
            &format!(
                "/admin/v1/keys/{}",
                job_listings::domain::KeyId::new_random()
            ),
            None,
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn every_keys_subscriptions_are_listed_and_can_be_disabled_and_enabled() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let created = app
        .call(
            Method::POST,
            "/api/v1/webhooks",
            &app.keys.agent_pro.raw,
            Some(&json!({ "callback_url": "https://hooks.example.com/jobs" })),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let hook = created.body["id"].as_str().expect("an id").to_owned();
    let secret = created.body["secret"]
        .as_str()
        .expect("a secret")
        .to_owned();

    let listed = admin.send(Method::GET, "/admin/v1/webhooks", None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    let all = listed.body["data"].as_array().expect("subscriptions");
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["id"], hook.as_str());
    assert_eq!(all[0]["owner"], app.keys.agent_pro.id.to_string());
    assert_eq!(all[0]["pending_deliveries"], 0);
    assert!(!listed.text.contains(&secret), "no secret in the list");

    let path = format!("/admin/v1/webhooks/{hook}");
    let disabled = admin
        .send(Method::PATCH, &path, Some(json!({ "status": "disabled" })))
        .await;
    assert_eq!(disabled.body["status"], "disabled", "{}", disabled.text);
    assert_eq!(disabled.body["disabled_reason"], "disabled by the operator");
    let seen_by_owner = app
        .get_as(&app.keys.agent_pro.raw, &format!("/api/v1/webhooks/{hook}"))
        .await;
    assert_eq!(seen_by_owner.body["status"], "disabled");

    let enabled = admin
        .send(Method::PATCH, &path, Some(json!({ "status": "active" })))
        .await;
    assert_eq!(enabled.body["status"], "active", "{}", enabled.text);
}

#[tokio::test]
async fn a_job_written_through_the_admin_api_survives_a_restart() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let job = new_job(&app, "Persistent Heliographer");
    let id: JobId = job["id"]
        .as_str()
        .expect("an id")
        .parse()
        .expect("a job id");
    let r = admin
        .send(Method::PUT, &format!("/admin/v1/jobs/{id}"), Some(job))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    drop(admin);
    let app = app.restart().await;
    let stored: std::sync::Arc<Job> = app.service.stored_job(id).await.expect("kept");
    assert_eq!(stored.role, "Persistent Heliographer");
    assert_eq!(search_total(&app, "heliographer").await, 1);
}

#[tokio::test]
async fn a_backup_of_the_live_store_restores_to_the_same_data() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let job = new_job(&app, "Archived Lighthouse Keeper");
    let id = job["id"].as_str().expect("an id").to_owned();
    let r = admin
        .send(Method::PUT, &format!("/admin/v1/jobs/{id}"), Some(job))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let folder = tempfile::tempdir().expect("a folder");
    let to = folder.path().join("backup");
    let r = admin
        .send(Method::POST, "/admin/v1/backup", Some(json!({ "to": to })))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let jobs = app.dataset.jobs.len() as u64 + 1;
    assert_eq!(r.body["jobs"], jobs, "{}", r.text);
    assert_eq!(r.body["keys"], 3);
    // The server still serves, and refuses a second backup into the same folder.
    assert_eq!(search_total(&app, "lighthouse").await, 1);
    let again = admin
        .send(Method::POST, "/admin/v1/backup", Some(json!({ "to": to })))
        .await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "{}", again.text);
    assert_eq!(again.body["param"], "to");

    let data = folder.path().join("restored");
    let manifest =
        job_listings::service::restore_backup(&to, &data.join("db"), None).expect("restored");
    assert_eq!(manifest.jobs, jobs);
    let restored = TestApp::builder()
        .store(crate::support::StoreKind::SledAt(data.join("db")))
        .service()
        .await;
    let found = restored
        .service
        .stored_job(id.parse().expect("a job id"))
        .await
        .expect("the job written before the backup");
    assert_eq!(found.role, "Archived Lighthouse Keeper");
    assert_eq!(restored.service.list_keys().len(), 3);
    assert_eq!(
        restored.service.company_count(),
        app.service.company_count()
    );
}

#[tokio::test]
async fn stats_and_metrics_are_on_the_admin_listener_behind_the_token() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    assert_eq!(app.get_jobs("q=engineer").await.status, StatusCode::OK);

    let stats = admin.send(Method::GET, "/admin/v1/stats", None).await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.text);
    let active = app
        .dataset
        .jobs
        .iter()
        .filter(|j| j.status == job_listings::domain::JobStatus::Active)
        .count();
    assert_eq!(
        stats.body["jobs"]["active"], active as u64,
        "{}",
        stats.text
    );
    assert_eq!(stats.body["companies"], app.dataset.companies.len() as u64);
    assert!(stats.body["follower_lag"].is_null(), "sled has no follower");

    let metrics = admin
        .client
        .get(format!("{}/metrics", admin.server.base))
        .bearer_auth(admin.token.expose())
        .send()
        .await
        .expect("answered");
    assert_eq!(metrics.status(), StatusCode::OK);
    assert!(metrics
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain")));
    let text = metrics.text().await.expect("a body");
    assert!(text.contains("job_listings_http_"), "{text}");
    for counted in [
        r#"route="/api/v1/jobs",method="GET",status="200""#,
        r#"route="/admin/v1/stats",method="GET",status="200""#,
    ] {
        assert!(text.contains(counted), "{counted} in {text}");
    }
    assert!(!text.contains(&app.keys.enterprise.raw));

    let without = admin.send_as(Method::GET, "/metrics", None, None).await;
    assert_eq!(without.status, StatusCode::UNAUTHORIZED);
    let on_public = app
        .request(Method::GET, "/metrics", Auth::None, &[], None)
        .await;
    assert_eq!(on_public.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_admin_listener_answers_no_origin_whatever_the_public_api_allows() {
    use job_listings::api::{ApiConfig, CorsOrigin};
    let app = TestApp::builder()
        .seed(Dataset::generate(11, 5, 20))
        .api_config(ApiConfig::default().cors_origins(vec![CorsOrigin::any()]))
        .spawn()
        .await;
    let admin = Admin::beside(&app).await;
    let origin = ("origin", "https://app.example.com");

    // The public API allows any origin...
    let public = app
        .request(
            Method::GET,
            "/api/v1/jobs",
            Auth::XApiKey(&app.keys.enterprise.raw),
            &[origin],
            None,
        )
        .await;
    assert_eq!(public.status, StatusCode::OK);
    assert_eq!(public.header("access-control-allow-origin"), Some("*"));

    // ... and the admin API none: not on an answer, not on a preflight.
    let answer = admin
        .client
        .get(format!("{}/admin/v1/stats", admin.server.base))
        .bearer_auth(admin.token.expose())
        .header(origin.0, origin.1)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::OK);
    let preflight = admin
        .client
        .request(
            Method::OPTIONS,
            format!("{}/admin/v1/stats", admin.server.base),
        )
        .header(origin.0, origin.1)
        .header("access-control-request-method", "GET")
        .send()
        .await
        .expect("answered");
    for r in [&answer, &preflight] {
        assert!(
            r.headers()
                .keys()
                .all(|name| !name.as_str().starts_with("access-control-")),
            "{:?}",
            r.headers()
        );
    }
}

#[tokio::test]
async fn close_unseen_closes_the_active_jobs_last_seen_before_a_time_after_a_dry_run() {
    let seeded = crate::support::at(2026, 12, 1, 0, 0, 0);
    let clock = std::sync::Arc::new(job_listings::service::ManualClock::new(seeded));
    let app = TestApp::builder()
        .clock(clock.clone())
        .seed(Dataset::generate(11, 20, 200))
        .spawn()
        .await;
    let admin = Admin::beside(&app).await;
    let active: Vec<Job> = app
        .dataset
        .jobs
        .iter()
        .filter(|j| j.is_active())
        .cloned()
        .collect();
    // The crawler sends five of them again, unchanged, a day later.
    let later = seeded + chrono::Duration::days(1);
    clock.set(later);
    for job in &active[..5] {
        app.service
            .upsert_job(job.clone())
            .await
            .expect("seen again");
    }
    let before = search_total(&app, "").await;
    assert_eq!(before, active.len() as u64);

    let body = json!({"seen_before": later.to_rfc3339(), "dry_run": true});
    let dry = admin
        .send(Method::POST, "/admin/v1/jobs/close-unseen", Some(body))
        .await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text);
    let unseen = active.len() as u64 - 5;
    assert_eq!(
        (dry.body["matched"].as_u64(), dry.body["closed"].as_u64()),
        (Some(unseen), Some(0))
    );
    assert_eq!(dry.body["dry_run"], true);
    assert_eq!(
        search_total(&app, "").await,
        before,
        "a dry run changes nothing"
    );

    let body = json!({"seen_before": later.to_rfc3339()});
    let done = admin
        .send(Method::POST, "/admin/v1/jobs/close-unseen", Some(body))
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert_eq!(
        (done.body["matched"].as_u64(), done.body["closed"].as_u64()),
        (Some(unseen), Some(unseen))
    );
    assert_eq!(search_total(&app, "").await, 5);
    let gone = admin
        .send(
            Method::GET,
            &format!("/admin/v1/jobs/{}", active[6].id),
            None,
        )
        .await;
    assert_eq!(gone.body["status"], "closed");
    assert_eq!(gone.body["last_seen_at"], json!(seeded));
    let kept = admin
        .send(
            Method::GET,
            &format!("/admin/v1/jobs/{}", active[0].id),
            None,
        )
        .await;
    assert_eq!(kept.body["status"], "active");
    assert_eq!(kept.body["last_seen_at"], json!(later));

    for (body, param) in [
        (json!({"dry_run": true}), None),
        (json!({"seen_before": "yesterday"}), None),
        (
            json!({"seen_before": later.to_rfc3339(), "everything": true}),
            Some("everything"),
        ),
    ] {
        let r = admin
            .send(
                Method::POST,
                "/admin/v1/jobs/close-unseen",
                Some(body.clone()),
            )
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
        if let Some(param) = param {
            assert_eq!(r.body["param"], param, "{body}");
        }
    }
}

#[tokio::test]
async fn copies_in_a_bulk_upload_are_grouped_as_live_writes_are() {
    let app = app().await;
    let admin = Admin::beside(&app).await;
    let original = new_job(&app, "Zygomorphic Copyist");
    let mut copy = original.clone();
    let copy_id = JobId::new_random().to_string();
    copy["id"] = json!(copy_id);
    copy["source_url"] = json!("https://x.com/recruiter/status/1");
    let posted: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(original["posted_at"].clone()).expect("a time");
    copy["posted_at"] = json!(posted + chrono::Duration::days(2));
    let lines = vec![original.to_string(), copy.to_string()];
    let r = admin.upload("/admin/v1/jobs/bulk", &lines).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["created"], 2, "{}", r.text);

    let stored = admin
        .send(Method::GET, &format!("/admin/v1/jobs/{copy_id}"), None)
        .await;
    assert_eq!(stored.body["repost_of"], original["id"], "{}", stored.text);
    assert_eq!(search_total(&app, "zygomorphic").await, 1);
    let every = app.get_jobs("q=zygomorphic&reposts=include").await;
    assert_eq!(every.body["pagination"]["total"], 2);
}
