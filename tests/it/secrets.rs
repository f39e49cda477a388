//! Secrets stay secret: API keys and webhook signing secrets never reach the logs (every event
//! of every crate, at TRACE), `Debug` output, error bodies, other answers or the sled files.
//!
//! One scenario runs once per test binary on the real hyper server over sled in a temporary
//! folder, with the real `HttpNotifier` delivering to a receiver on 127.0.0.1: good calls,
//! a mistyped key, an unknown key, a revoked key, bad parameters, a key on a tiny quota used
//! up, a webhook registered, pinged and delivered to. The service seals webhook secrets with a
//! `SecretKey`, as the bundled server does; the key is a secret too. Each test then checks one
//! property of what the scenario captured.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine;
use chrono::Utc;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, CallbackUrl, JobStatus, Plan, WebhookId};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::server::ServerConfig;
use job_listings::service::{
    DeliveryConfig, Held, NewKey, NewWebhook, Quotas, SecretKey, ServiceConfig,
};
use job_listings::webhooks::{verify, CallbackPolicy, HttpNotifier, HttpNotifierConfig};
use reqwest::Method;
use serde_json::{json, Value};
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;
use uuid::Uuid;

use crate::support::{always_ok, eventually, Auth, Receiver, TestApp};

/// Calls per period of the developer plan in the scenario: used up on purpose.
const TINY_QUOTA: u64 = 2;
/// The longest any wait in the scenario may take.
const DEADLINE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// Log capture: every event and span of every crate (`log` records too), at TRACE
// ---------------------------------------------------------------------------------------------

/// Everything the test binary logged, as formatted text.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

struct CapturedWriter(Arc<Mutex<Vec<u8>>>);

impl Write for CapturedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = CapturedWriter;
    fn make_writer(&'a self) -> Self::Writer {
        CapturedWriter(self.0.clone())
    }
}

/// Whether the capture records: from the start of the scenario until its outcome is taken.
/// The other tests of the binary that run meanwhile are captured too (their secrets are not
/// the scenario's, so they change no check); before and after, nothing is kept.
static RECORDING: AtomicBool = AtomicBool::new(false);

/// Installs the capturing subscriber for the whole binary, once.
fn logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let captured = Captured::default();
        let everything_while_recording = tracing_subscriber::fmt::layer()
            .with_span_events(FmtSpan::FULL)
            .with_ansi(false)
            .with_writer(captured.clone())
            .with_filter(filter_fn(|_| RECORDING.load(Ordering::Acquire)));
        tracing_subscriber::registry()
            .with(everything_while_recording)
            .try_init()
            .expect("the capturing subscriber is the only one");
        captured
    })
}

// ---------------------------------------------------------------------------------------------
// The scenario
// ---------------------------------------------------------------------------------------------

/// One HTTP exchange of the scenario.
#[derive(Debug)]
struct Exchange {
    what: String,
    /// The key (or would-be key) sent, if any.
    presented: Option<String>,
    status: u16,
    headers: String,
    body: String,
}

/// What the scenario saw and kept.
struct Outcome {
    /// Every key the scenario issued or made up, in clear: (what, key).
    keys: Vec<(&'static str, String)>,
    /// The webhook's signing secret, from the 201.
    secret: String,
    /// The signing secret of a second subscription, made through the service.
    other_secret: String,
    /// The key that seals webhook secrets at rest.
    secret_key: [u8; 32],
    /// Every HTTP exchange.
    exchanges: Vec<Exchange>,
    /// `Debug` and `Display` renderings of keys, records, subscriptions, secrets and errors.
    renderings: Vec<(String, String)>,
    /// `Debug` of the service (and so of everything it holds, the store included).
    service_debug: String,
    /// The delivered `job.new` and `webhook.test` bodies as the receiver got them.
    deliveries: Vec<String>,
    /// Every file of the sled folder after shutdown: (path, bytes).
    files: Vec<(String, Vec<u8>)>,
    /// Text that must be in the sled files (a positive control for the byte search).
    stored_in_clear: Vec<String>,
    /// Everything logged until the service was dropped.
    logs: String,
}

impl Outcome {
    fn key(&self, what: &str) -> &str {
        &self
            .keys
            .iter()
            .find(|(w, _)| *w == what)
            .unwrap_or_else(|| panic!("no key {what}"))
            .1
    }

    fn exchange(&self, what: &str) -> &Exchange {
        self.exchanges
            .iter()
            .find(|e| e.what == what)
            .unwrap_or_else(|| panic!("no exchange {what}"))
    }

    /// Every secret string and the random part of each: what must never show.
    fn needles(&self) -> Vec<(String, String)> {
        let mut needles = Vec::new();
        for (what, key) in &self.keys {
            needles.push((format!("{what} API key"), key.clone()));
            // The 32 random characters after `jl_live_`.
            needles.push((format!("{what} API key body"), key[8..40].to_owned()));
        }
        for (what, secret) in [
            ("webhook", &self.secret),
            ("second webhook", &self.other_secret),
        ] {
            needles.push((format!("{what} secret"), secret.clone()));
            needles.push((
                format!("{what} secret body"),
                secret["whsec_".len()..].to_owned(),
            ));
        }
        // The sealing key, as hex, base64 and a Debug byte list.
        let key = self.secret_key;
        needles.push((
            "secret key (hex)".into(),
            key.iter().map(|b| format!("{b:02x}")).collect(),
        ));
        needles.push((
            "secret key (base64)".into(),
            base64::engine::general_purpose::STANDARD.encode(key),
        ));
        let list = format!("{key:?}");
        needles.push((
            "secret key (byte list)".into(),
            list[1..list.len() - 1].to_owned(),
        ));
        needles
    }
}

fn outcome() -> &'static Outcome {
    static OUTCOME: OnceLock<Result<Outcome, String>> = OnceLock::new();
    let result = OUTCOME.get_or_init(|| {
        logs();
        RECORDING.store(true, Ordering::Release);
        let (sender, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runtime.block_on(scenario())
            }));
            // Neither this thread nor the runtime's ends before the process does. A thread
            // that ends runs its thread-local destructors, and whatever they drop may log at
            // TRACE; an event logged after the fmt layer's own thread-local buffer is gone
            // panics inside a destructor, which aborts the whole test binary.
            let _ = sender.send(ran);
            loop {
                std::thread::park();
            }
        });
        let outcome = outcome
            .recv()
            .unwrap_or_else(|_| Err(Box::new("the scenario's thread ended without an outcome")));
        RECORDING.store(false, Ordering::Release);
        outcome.map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "the scenario panicked".to_owned())
        })
    });
    match result {
        Ok(outcome) => outcome,
        Err(why) => panic!("the scenario failed: {why}"),
    }
}

/// Changes one character of the key's random part: the checksum no longer matches.
fn mistype(key: &str) -> String {
    let mut bytes = key.as_bytes().to_vec();
    bytes[12] = if bytes[12] == b'a' { b'b' } else { b'a' };
    String::from_utf8(bytes).expect("ASCII")
}

/// The scenario's calls, each recorded.
struct Client<'a> {
    app: &'a TestApp,
    exchanges: Vec<Exchange>,
}

impl Client<'_> {
    /// One call; `key` goes in `X-API-Key` (or `Authorization: Bearer` when `bearer`).
    async fn call(
        &mut self,
        what: &str,
        method: Method,
        path: &str,
        key: Option<&str>,
        bearer: bool,
        body: Option<Value>,
    ) -> &Exchange {
        let auth = match key {
            None => Auth::None,
            Some(key) if bearer => Auth::Bearer(key),
            Some(key) => Auth::XApiKey(key),
        };
        let r = match body {
            Some(body) => {
                let json = [("content-type", "application/json")];
                let bytes = serde_json::to_vec(&body).expect("JSON");
                self.app
                    .request(method, path, auth, &json, Some(bytes))
                    .await
            }
            None => self.app.request(method, path, auth, &[], None).await,
        };
        self.exchanges.push(Exchange {
            what: what.to_owned(),
            presented: key.map(str::to_owned),
            status: r.status.as_u16(),
            headers: format!("{:?}", r.headers),
            body: r.text,
        });
        self.exchanges.last().expect("just pushed")
    }

    async fn get(&mut self, what: &str, path: &str, key: &str) -> &Exchange {
        self.call(what, Method::GET, path, Some(key), false, None)
            .await
    }

    /// `POST /api/v1/webhooks` with `body`.
    async fn post_webhook(&mut self, what: &str, key: &str, body: Value) -> &Exchange {
        let path = "/api/v1/webhooks";
        self.call(what, Method::POST, path, Some(key), false, Some(body))
            .await
    }
}

#[track_caller]
fn expect_status(e: &Exchange, status: u16) -> Value {
    assert_eq!(e.status, status, "{}: {}", e.what, e.body);
    serde_json::from_str(&e.body).unwrap_or(Value::Null)
}

async fn scenario() -> Outcome {
    tracing::trace!(
        canary = "trace-canary-7f3a",
        "the capture sees TRACE events"
    );

    // 1. The service over sled, with the real notifier and a receiver on 127.0.0.1; the
    //    server stops within 2 s.
    let secret_key = SecretKey::generate();
    let config = ServiceConfig::default()
        .quotas(Quotas::default().developer(TINY_QUOTA))
        .callback_policy(CallbackPolicy::local_development())
        .secret_key(Some(secret_key.clone()))
        .delivery(DeliveryConfig::default().poll_interval(Duration::from_millis(20)));
    let notifier = HttpNotifier::new(config.callback_policy, HttpNotifierConfig::default())
        .expect("the notifier");
    let config_debug = format!("{config:?}");
    let data = Dataset::generate(5, 3, 30);
    let app = TestApp::builder()
        .config(config)
        .notifier(Arc::new(notifier))
        .server_config(ServerConfig::default().shutdown_grace(Duration::from_secs(2)))
        .seed(data.clone())
        .spawn()
        .await;
    let service = app.service.clone();
    let receiver = Receiver::start(always_ok()).await;
    let hook = json!({ "callback_url": receiver.url("/hook") });

    // 2. Keys: a good one, one on a tiny quota, one revoked, one never issued, one mistyped.
    let (good, good_record) = service
        .create_key(NewKey::new(Plan::AgentPro))
        .await
        .expect("a key");
    let (tiny, _) = service
        .create_key(NewKey::new(Plan::Developer))
        .await
        .expect("a key");
    let (revoked, revoked_record) = service
        .create_key(NewKey::new(Plan::Enterprise))
        .await
        .expect("a key");
    service
        .revoke_key(revoked_record.id)
        .await
        .expect("revoked");
    let unknown = ApiKey::generate();
    let mistyped = mistype(good.expose());
    let keys = vec![
        ("good", good.expose().to_owned()),
        ("tiny-quota", tiny.expose().to_owned()),
        ("revoked", revoked.expose().to_owned()),
        ("unknown", unknown.expose().to_owned()),
        ("mistyped", mistyped.clone()),
    ];

    let mut client = Client {
        app: &app,
        exchanges: Vec::new(),
    };

    // 4. Good calls, both ways of sending the key.
    let g = good.expose();
    let job_id = data
        .jobs
        .iter()
        .find(|j| j.is_active())
        .expect("an active job")
        .id;
    expect_status(
        client.get("search", "/api/v1/jobs?per_page=2", g).await,
        200,
    );
    expect_status(
        client
            .call(
                "search (bearer)",
                Method::GET,
                "/api/v1/jobs?q=engineer",
                Some(g),
                true,
                None,
            )
            .await,
        200,
    );
    expect_status(
        client
            .get("job", &format!("/api/v1/jobs/{job_id}"), g)
            .await,
        200,
    );
    expect_status(client.get("companies", "/api/v1/companies", g).await, 200);
    expect_status(client.get("usage", "/api/v1/usage", g).await, 200);

    // 5. Failing calls.
    expect_status(
        client.get("mistyped key", "/api/v1/jobs", &mistyped).await,
        401,
    );
    expect_status(
        client
            .call(
                "mistyped key (bearer)",
                Method::GET,
                "/api/v1/jobs",
                Some(&mistyped),
                true,
                None,
            )
            .await,
        401,
    );
    expect_status(
        client
            .get("unknown key", "/api/v1/jobs", unknown.expose())
            .await,
        401,
    );
    expect_status(
        client
            .get("revoked key", "/api/v1/jobs", revoked.expose())
            .await,
        401,
    );
    let truncated = &g[..40];
    expect_status(
        client.get("truncated key", "/api/v1/jobs", truncated).await,
        401,
    );
    expect_status(
        client
            .get("bad parameter", "/api/v1/jobs?per_page=0", g)
            .await,
        400,
    );
    expect_status(
        client
            .get("unknown parameter", "/api/v1/jobs?domains=ai", g)
            .await,
        400,
    );
    expect_status(
        client
            .get(
                "unknown job",
                &format!("/api/v1/jobs/{}", Uuid::new_v4()),
                g,
            )
            .await,
        404,
    );
    let t = tiny.expose();
    for i in 0..TINY_QUOTA {
        expect_status(
            client
                .get(
                    &format!("tiny quota call {i}"),
                    "/api/v1/jobs?per_page=1",
                    t,
                )
                .await,
            200,
        );
    }
    expect_status(
        client
            .get("tiny quota used up", "/api/v1/jobs?per_page=1", t)
            .await,
        429,
    );
    expect_status(
        client
            .post_webhook("webhook on the developer plan", t, hook.clone())
            .await,
        403,
    );
    expect_status(
        client
            .post_webhook("webhook with a bad body", g, json!({ "callback_url": 7 }))
            .await,
        400,
    );

    // 6. A webhook: registered (the only answer with the secret), read, pinged, delivered to.
    let created = expect_status(client.post_webhook("webhook created", g, hook).await, 201);
    let secret = created["secret"]
        .as_str()
        .expect("the 201 carries the secret")
        .to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let webhook_id = WebhookId::parse(created["id"].as_str().expect("an id")).expect("a uuid");
    expect_status(client.get("webhooks", "/api/v1/webhooks", g).await, 200);
    expect_status(
        client
            .get("webhook", &format!("/api/v1/webhooks/{webhook_id}"), g)
            .await,
        200,
    );
    expect_status(
        client
            .call(
                "webhook test ping",
                Method::POST,
                &format!("/api/v1/webhooks/{webhook_id}/test"),
                Some(g),
                false,
                None,
            )
            .await,
        202,
    );
    let mut new_job = data
        .jobs
        .iter()
        .find(|j| j.is_active())
        .expect("an active job")
        .clone();
    new_job = crate::support::data::another(&new_job);
    new_job.status = JobStatus::Active;
    new_job.posted_at = Utc::now() - chrono::Duration::minutes(5);
    new_job.first_seen_at = new_job.posted_at;
    new_job.updated_at = new_job.posted_at;
    let outcome = service.upsert_job(new_job.clone()).await.expect("ingested");
    assert!(outcome.announced, "the new job is announced");
    let delivered = eventually(DEADLINE, || async {
        receiver
            .hits_to("/hook")
            .iter()
            .filter(|h| h.ok())
            .filter_map(|h| h.kind().map(str::to_owned))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            >= 2
    })
    .await;
    assert!(delivered, "the ping and the job.new were delivered");
    let hits = receiver.hits_to("/hook");
    for hit in &hits {
        let timestamp: i64 = hit
            .timestamp
            .as_deref()
            .and_then(|t| t.parse().ok())
            .expect("a webhook-timestamp");
        verify(
            &secret,
            hit.id.as_deref().expect("a webhook-id"),
            timestamp,
            &hit.body,
            hit.signature.as_deref().expect("a webhook-signature"),
        )
        .expect("deliveries are signed with the secret from the 201");
    }
    let deliveries = hits
        .iter()
        .map(|h| String::from_utf8_lossy(&h.body).into_owned())
        .collect();
    expect_status(
        client
            .get(
                "webhook deliveries",
                &format!("/api/v1/webhooks/{webhook_id}/deliveries"),
                g,
            )
            .await,
        200,
    );
    expect_status(
        client
            .get(
                "webhook after delivery",
                &format!("/api/v1/webhooks/{webhook_id}"),
                g,
            )
            .await,
        200,
    );

    // 7. `Debug` and `Display` of what holds a secret, and of the errors a bad key gets.
    let mut renderings: Vec<(String, String)> = Vec::new();
    let mut render = |what: &str, debug: String, display: Option<String>| {
        renderings.push((format!("{what} (Debug)"), debug));
        if let Some(display) = display {
            renderings.push((format!("{what} (Display)"), display));
        }
    };
    render("SecretKey", format!("{secret_key:?}"), None);
    render("ServiceConfig", config_debug, None);
    render("ApiKey", format!("{good:?}"), None);
    render("ApiKey (alternate)", format!("{good:#?}"), None);
    render("ApiKeyRecord", format!("{good_record:?}"), None);
    render(
        "revoked ApiKeyRecord",
        format!("{:?}", service.list_keys()),
        None,
    );
    let subscription = service
        .get_webhook(&good, webhook_id)
        .await
        .expect("the subscription");
    render("Metered<Subscription>", format!("{subscription:?}"), None);
    render(
        "Subscription (alternate)",
        format!("{:#?}", subscription.value),
        None,
    );
    render(
        "WebhookSecret",
        format!("{:?}", subscription.value.secret),
        None,
    );
    let created_sub = service
        .create_webhook(
            &good,
            NewWebhook::new(CallbackUrl::parse(&receiver.url("/other")).expect("a URL")),
        )
        .await
        .expect("a second subscription");
    render(
        "Subscription from create_webhook",
        format!("{:?}", created_sub.value),
        None,
    );
    let other_secret = created_sub.value.secret.expose().to_owned();
    for (what, result) in [
        ("caller(revoked)", service.caller(&revoked).err()),
        ("caller(unknown)", service.caller(&unknown).err()),
        (
            "search_jobs(used-up key)",
            service
                .search_jobs(&tiny, JobQuery::new(JobFilter::default()), Held::Nothing)
                .await
                .err(),
        ),
        (
            "create_webhook(developer key)",
            service
                .create_webhook(
                    &tiny,
                    NewWebhook::new(CallbackUrl::parse(&receiver.url("/x")).expect("a URL")),
                )
                .await
                .err(),
        ),
        ("usage(revoked)", service.usage(&revoked).await.err()),
    ] {
        let e = result.unwrap_or_else(|| panic!("{what} fails"));
        render(
            &format!("ServiceError from {what}"),
            format!("{e:?}"),
            Some(e.to_string()),
        );
    }
    for (what, raw) in [("mistyped", mistyped.as_str()), ("truncated", truncated)] {
        let e = ApiKey::parse(raw).expect_err("refused by form");
        render(
            &format!("DomainError from ApiKey::parse({what})"),
            format!("{e:?}"),
            Some(e.to_string()),
        );
    }
    let service_debug = format!("{service:?}");

    // 8. Shut down; wait until the sled database is closed, then read every file it wrote.
    let exchanges = client.exchanges;
    let mut app = app;
    app.stop().await;
    service.shutdown().await.expect("usage written");
    drop(service);
    drop(receiver);
    let dir = app.close().await;
    let mut files = Vec::new();
    read_tree(dir.path(), &mut files);
    assert!(!files.is_empty(), "sled wrote files");

    Outcome {
        keys,
        secret,
        other_secret,
        secret_key: secret_key.to_bytes(),
        exchanges,
        renderings,
        service_debug,
        deliveries,
        files,
        stored_in_clear: vec![
            good_record.hint.clone(),
            good_record
                .hash
                .0
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            created["callback_url"]
                .as_str()
                .expect("the callback URL")
                .to_owned(),
        ],
        logs: logs().text(),
    }
}

/// Every file under `dir`, recursively (bounded depth).
fn read_tree(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<(String, Vec<u8>)>) {
        if depth > 8 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, depth + 1, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path.display().to_string(), bytes));
            }
        }
    }
    walk(dir, 0, out);
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

#[test]
fn the_log_capture_sees_trace_events_and_the_services_own_events() {
    let o = outcome();
    for expected in [
        "trace-canary-7f3a",
        "key issued",
        "key revoked",
        "webhook registered",
        "request refused",
        "invalid_api_key",
        "quota_exceeded",
    ] {
        assert!(
            o.logs.contains(expected),
            "the captured logs lack {expected:?}; the capture is not seeing everything"
        );
    }
    eprintln!("captured {} bytes of logs", o.logs.len());
}

#[test]
fn logs_at_trace_level_never_contain_a_key_or_a_webhook_secret() {
    let o = outcome();
    for (what, needle) in o.needles() {
        assert!(
            !o.logs.contains(&needle),
            "the logs contain the {what}: {}",
            o.logs
                .lines()
                .filter(|l| l.contains(&needle))
                .take(3)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn debug_and_display_of_keys_records_subscriptions_secrets_and_errors_hide_the_secrets() {
    let o = outcome();
    assert!(o.renderings.len() >= 15, "{:?}", o.renderings.len());
    for (rendered, text) in &o.renderings {
        for (what, needle) in o.needles() {
            assert!(
                !text.contains(&needle),
                "{rendered} shows the {what}: {text}"
            );
        }
    }
    // The redacted forms are there, so these are real renderings.
    assert!(o
        .renderings
        .iter()
        .any(|(_, t)| t.contains("ApiKey(jl_live_[redacted])")));
    assert!(o
        .renderings
        .iter()
        .any(|(_, t)| t.contains("WebhookSecret(whsec_[redacted])")));
}

/// `{:?}` of the service renders everything it holds, the sled store included (sled's `Debug`
/// prints every tree's nodes, values as byte lists). No secret may be recoverable from it,
/// neither as text nor as such a byte list.
#[test]
fn debug_of_the_service_does_not_reveal_a_secret() {
    let o = outcome();
    let as_byte_list = |s: &str| {
        let list = format!("{:?}", s.as_bytes());
        list[1..list.len() - 1].to_owned()
    };
    assert!(o.service_debug.contains("JobListingsService"));
    for (what, needle) in o.needles() {
        let shown = if o.service_debug.contains(&needle) {
            Some("in clear")
        } else if o.service_debug.contains(&as_byte_list(&needle)) {
            Some("as a Debug byte list")
        } else {
            None
        };
        assert!(
            shown.is_none(),
            "format!(\"{{:?}}\", service) ({} bytes) shows the {what} {}",
            o.service_debug.len(),
            shown.unwrap_or_default()
        );
    }
}

#[test]
fn only_the_201_of_post_webhooks_carries_the_webhook_secret() {
    let o = outcome();
    let body = &o.secret["whsec_".len()..];
    let created = o.exchange("webhook created");
    assert!(created.body.contains(&o.secret), "the 201 shows the secret");
    for e in o.exchanges.iter().filter(|e| e.what != "webhook created") {
        assert!(
            !e.body.contains(body) && !e.headers.contains(body),
            "{} ({}) shows the webhook secret: {}",
            e.what,
            e.status,
            e.body
        );
    }
    for (i, d) in o.deliveries.iter().enumerate() {
        assert!(!d.contains(body), "delivery {i} carries the secret: {d}");
    }
    assert!(
        o.deliveries.len() >= 2,
        "a ping and a job.new were delivered"
    );
}

#[test]
fn answers_never_echo_a_presented_key() {
    let o = outcome();
    let refused: Vec<&Exchange> = o.exchanges.iter().filter(|e| e.status >= 400).collect();
    assert!(refused.len() >= 10, "{} refused calls", refused.len());
    for e in &o.exchanges {
        for (what, needle) in o.needles().iter().filter(|(w, _)| w.contains("API key")) {
            assert!(
                !e.body.contains(needle.as_str()) && !e.headers.contains(needle.as_str()),
                "{} ({}) echoes the {what}: {} {}",
                e.what,
                e.status,
                e.headers,
                e.body
            );
        }
        if let Some(presented) = &e.presented {
            assert!(!e.body.contains(presented.as_str()), "{}", e.what);
        }
    }
    for e in refused {
        let problem: Value = serde_json::from_str(&e.body).unwrap_or(Value::Null);
        assert!(
            problem["code"].is_string() && problem["request_id"].is_string(),
            "{} answers a problem document: {}",
            e.what,
            e.body
        );
    }
}

/// Asserts the exchange `what` was answered 401 `invalid_api_key` with a detail `detail`
/// accepts; returns it.
#[track_caller]
fn refused_as_invalid_key<'a>(
    o: &'a Outcome,
    what: &str,
    detail: impl Fn(&str) -> bool,
) -> &'a Exchange {
    let e = o.exchange(what);
    let problem = expect_status(e, 401);
    assert_eq!(problem["code"], "invalid_api_key", "{what}: {}", e.body);
    assert!(
        problem["detail"].as_str().is_some_and(detail),
        "{what}: {}",
        e.body
    );
    e
}

#[test]
fn a_mistyped_key_is_refused_by_its_checksum_before_any_lookup() {
    let o = outcome();
    for what in ["mistyped key", "mistyped key (bearer)"] {
        // The detail names the checksum, so no lookup was made.
        let e = refused_as_invalid_key(o, what, |d| d.contains("checksum"));
        assert!(
            e.headers.to_ascii_lowercase().contains("www-authenticate"),
            "{what}: {}",
            e.headers
        );
    }
    // A well-formed key that was never issued, or was revoked, passes the checksum and is
    // refused by the lookup, with another detail.
    for what in ["unknown key", "revoked key"] {
        refused_as_invalid_key(o, what, |d| {
            !d.contains("checksum") && d.contains("never issued")
        });
    }
    assert_ne!(o.key("good"), o.key("mistyped"));
    assert!(ApiKey::parse(o.key("good")).is_ok());
    assert!(ApiKey::parse(o.key("mistyped"))
        .expect_err("a mistyped key is refused by form")
        .reason
        .contains("checksum"));
}

#[test]
fn the_used_up_quota_and_the_plan_gate_answer_without_the_key() {
    let o = outcome();
    let e = o.exchange("tiny quota used up");
    assert_eq!(expect_status(e, 429)["code"], "quota_exceeded");
    let e = o.exchange("webhook on the developer plan");
    assert_eq!(expect_status(e, 403)["code"], "plan_upgrade_required");
}

/// The byte search over the sled files finds what is stored in clear: the key's hint and hash,
/// the callback URL. Without this, "not found" below could mean "not searchable".
fn assert_the_files_are_searchable(o: &Outcome) {
    for marker in &o.stored_in_clear {
        assert!(
            o.files
                .iter()
                .any(|(_, bytes)| contains(bytes, marker.as_bytes())),
            "{marker:?} was not found in the sled files; the search cannot be trusted"
        );
    }
}

#[test]
fn api_keys_are_not_stored_in_clear() {
    let o = outcome();
    assert_the_files_are_searchable(o);
    for (what, needle) in o.needles().iter().filter(|(w, _)| w.contains("API key")) {
        for (path, bytes) in &o.files {
            assert!(
                !contains(bytes, needle.as_bytes()),
                "{path} holds the {what} in clear"
            );
        }
    }
}

/// Subscriptions are stored as JSON; their `whsec_` secrets must be sealed (the service runs
/// with a `SecretKey`, as the bundled server does), and the sealing key is never stored.
#[test]
fn webhook_secrets_are_not_stored_in_clear() {
    let o = outcome();
    assert_the_files_are_searchable(o);
    let raw_key = o.secret_key;
    for (path, bytes) in &o.files {
        assert!(
            !contains(bytes, &raw_key),
            "{path} holds the sealing key's raw bytes"
        );
    }
    for (what, needle) in o.needles().iter().filter(|(w, _)| w.contains("secret")) {
        let holding: Vec<&str> = o
            .files
            .iter()
            .filter(|(_, bytes)| contains(bytes, needle.as_bytes()))
            .map(|(path, _)| path.as_str())
            .collect();
        assert!(
            holding.is_empty(),
            "the {what} is stored in clear in {holding:?}"
        );
    }
}
