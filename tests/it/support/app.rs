//! One builder for a test app: a service on a store of any kind, with its configuration,
//! clock and notifier, seeded with records and a key per plan, served by the real hyper
//! server on 127.0.0.1 port 0 ([`TestAppBuilder::spawn`]) or answered in-process by
//! `Api::handle` ([`TestAppBuilder::build`]), with typed requests that work either way.

use std::cmp::Reverse;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use job_listings::api::{Api, ApiConfig};
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, Company, Delivery, Job, JobStatus, KeyId, Plan, WebhookId};
use job_listings::server::ServerConfig;
use job_listings::service::{Clock, JobListingsService, ManualClock, NewKey, ServiceConfig};
use job_listings::store::{MemoryStore, PgConfig, PgStore, Store};
use job_listings::webhooks::Notifier;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tempfile::TempDir;

use super::server::{server_config, RunningServer};
use super::store::{open_sled, release, StoredService};
use super::wire::{client, Auth, Resp};

/// The store an app keeps its state in.
#[derive(Clone)]
pub enum StoreKind {
    /// A `MemoryStore`.
    Memory,
    /// A sled store in the app's own temporary folder (the default); a restart reopens it.
    Sled,
    /// A sled store in a folder the test owns (to open it again, or read its files).
    SledAt(PathBuf),
    /// A PostgreSQL store (a schema of a [`super::pg::TestSchema`], say).
    Postgres(PgConfig),
    /// A store the test made (one that slows or breaks something, say).
    Given(Arc<dyn Store>),
}

/// A key issued for a test, kept in clear.
#[derive(Clone, Debug)]
pub struct IssuedKey {
    /// The key as a client sends it.
    pub raw: String,
    pub key: ApiKey,
    pub id: KeyId,
}

/// One key per plan, issued when the app is built.
#[derive(Clone, Debug)]
pub struct Keys {
    pub developer: IssuedKey,
    pub agent_pro: IssuedKey,
    pub enterprise: IssuedKey,
}

/// What a test app is made of; see [`TestApp::builder`].
#[must_use]
pub struct TestAppBuilder {
    store: StoreKind,
    config: ServiceConfig,
    clock: Option<Arc<ManualClock>>,
    notifier: Option<Arc<dyn Notifier>>,
    api_config: ApiConfig,
    server_config: ServerConfig,
    seeds: Vec<Dataset>,
}

impl TestAppBuilder {
    /// The store (default: sled in the app's own temporary folder).
    pub fn store(mut self, store: StoreKind) -> Self {
        self.store = store;
        self
    }

    /// The service's configuration (default: the library's).
    pub fn config(mut self, config: ServiceConfig) -> Self {
        self.config = config;
        self
    }

    /// A clock the test moves (default: the system clock).
    pub fn clock(mut self, clock: Arc<ManualClock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The webhook sender (default: none, so nothing is delivered).
    pub fn notifier(mut self, notifier: Arc<dyn Notifier>) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// The HTTP layer's settings (default: the library's).
    pub fn api_config(mut self, config: ApiConfig) -> Self {
        self.api_config = config;
        self
    }

    /// The server's settings (default: [`server_config`]).
    pub fn server_config(mut self, config: ServerConfig) -> Self {
        self.server_config = config;
        self
    }

    /// Companies and jobs to write before the keys are issued, after those of any earlier
    /// `seed` (its companies, then its jobs). The app's [`TestApp::dataset`] is everything
    /// seeded.
    pub fn seed(mut self, data: Dataset) -> Self {
        self.seeds.push(data);
        self
    }

    /// Builds the app and serves it with the real server on 127.0.0.1 port 0.
    pub async fn spawn(self) -> TestApp {
        self.start(true).await
    }

    /// Builds the app without a socket: requests are answered by `Api::handle`.
    pub async fn build(self) -> TestApp {
        self.start(false).await
    }

    /// Builds only the service: nothing seeded, no key issued, no API. For tests that open a
    /// folder of their own ([`StoreKind::SledAt`]) again and again.
    pub async fn service(self) -> StoredService {
        assert!(
            self.seeds.is_empty(),
            "a service alone is not seeded; build an app"
        );
        self.parts().open(None).await
    }

    fn parts(&self) -> Parts {
        Parts {
            store: self.store.clone(),
            config: self.config.clone(),
            clock: self.clock.clone(),
            notifier: self.notifier.clone(),
            api_config: self.api_config.clone(),
            server_config: self.server_config,
        }
    }

    async fn start(self, with_socket: bool) -> TestApp {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let parts = self.parts();
        let opened = parts.open(Some(dir.path())).await;
        let service = &opened.service;
        let mut dataset = Dataset {
            companies: Vec::new(),
            jobs: Vec::new(),
        };
        for data in self.seeds {
            if !data.companies.is_empty() {
                service
                    .upsert_companies(data.companies.clone())
                    .await
                    .expect("the companies");
            }
            if !data.jobs.is_empty() {
                service
                    .upsert_jobs(data.jobs.clone())
                    .await
                    .expect("the jobs");
            }
            dataset.companies.extend(data.companies);
            dataset.jobs.extend(data.jobs);
        }
        let keys = Keys {
            developer: issue(service, NewKey::new(Plan::Developer)).await,
            agent_pro: issue(service, NewKey::new(Plan::AgentPro)).await,
            enterprise: issue(service, NewKey::new(Plan::Enterprise)).await,
        };
        TestApp::serve(parts, dir, opened, dataset, keys, with_socket).await
    }
}

/// What an app is built from, kept for a restart.
struct Parts {
    store: StoreKind,
    config: ServiceConfig,
    clock: Option<Arc<ManualClock>>,
    notifier: Option<Arc<dyn Notifier>>,
    api_config: ApiConfig,
    server_config: ServerConfig,
}

impl Parts {
    /// Opens the store (by default sled in `db` below `folder`, the app's own) and builds the
    /// service on it.
    async fn open(&self, folder: Option<&Path>) -> StoredService {
        let store: Arc<dyn Store> = match &self.store {
            StoreKind::Memory => Arc::new(MemoryStore::new()),
            StoreKind::Sled => Arc::new(
                open_sled(
                    &folder
                        .expect("an app's own folder; a service alone needs StoreKind::SledAt")
                        .join("db"),
                )
                .await
                .unwrap_or_else(|e| panic!("the sled store could not be opened: {e}")),
            ),
            StoreKind::SledAt(path) => Arc::new(
                open_sled(path)
                    .await
                    .unwrap_or_else(|e| panic!("the sled store could not be opened: {e}")),
            ),
            StoreKind::Postgres(config) => Arc::new(
                PgStore::open(config)
                    .await
                    .expect("the PostgreSQL store opens"),
            ),
            StoreKind::Given(store) => store.clone(),
        };
        let mut builder = JobListingsService::builder()
            .store(store.clone())
            .config(self.config.clone());
        if let Some(clock) = &self.clock {
            builder = builder.clock(clock.clone() as Arc<dyn Clock>);
        }
        if let Some(notifier) = &self.notifier {
            builder = builder.notifier(notifier.clone());
        }
        let service = builder.build().await.expect("the service");
        StoredService { service, store }
    }
}

async fn issue(service: &JobListingsService, new: NewKey) -> IssuedKey {
    let (key, record) = service.create_key(new).await.expect("a key");
    IssuedKey {
        raw: key.expose().to_owned(),
        key,
        id: record.id,
    }
}

/// A running app: the service, what it was seeded with, its keys, and the server in front of
/// it (or none: then `Api::handle` answers).
pub struct TestApp {
    pub service: JobListingsService,
    /// The store under the service, for tests that check what it holds.
    pub store: Arc<dyn Store>,
    /// The API the server serves, or that answers without one.
    pub api: Api,
    /// Every company and job the app was seeded with, in the order they were written.
    pub dataset: Dataset,
    pub keys: Keys,
    pub client: reqwest::Client,
    /// The app's temporary folder (a sled store's database is in `db` below it).
    pub dir: TempDir,
    parts: Parts,
    server: Option<RunningServer>,
}

impl TestApp {
    /// A builder: sled in a temporary folder, the library's settings, nothing seeded.
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder {
            store: StoreKind::Sled,
            config: ServiceConfig::default(),
            clock: None,
            notifier: None,
            api_config: ApiConfig::default(),
            server_config: server_config(),
            seeds: Vec::new(),
        }
    }

    async fn serve(
        parts: Parts,
        dir: TempDir,
        opened: StoredService,
        dataset: Dataset,
        keys: Keys,
        with_socket: bool,
    ) -> TestApp {
        let StoredService { service, store } = opened;
        let api = Api::with_config(service.clone(), parts.api_config.clone());
        let server = match with_socket {
            true => Some(RunningServer::start(api.clone(), parts.server_config).await),
            false => None,
        };
        TestApp {
            service,
            store,
            api,
            dataset,
            keys,
            client: client(),
            dir,
            parts,
            server,
        }
    }

    /// The address the server listens on; panics without a socket.
    pub fn addr(&self) -> SocketAddr {
        self.server.as_ref().expect("an app with a socket").addr
    }

    /// `http://127.0.0.1:PORT`; panics without a socket.
    pub fn base(&self) -> &str {
        &self.server.as_ref().expect("an app with a socket").base
    }

    /// Sets the manual clock the app was built with.
    pub fn set_time(&self, to: DateTime<Utc>) {
        self.parts.clock.as_ref().expect("a manual clock").set(to);
    }

    /// Issues a key of `plan`, anchored now.
    pub async fn issue(&self, plan: Plan) -> IssuedKey {
        issue(&self.service, NewKey::new(plan)).await
    }

    /// Issues a key of `plan` whose periods count from `anchor`.
    pub async fn issue_anchored(&self, plan: Plan, anchor: DateTime<Utc>) -> IssuedKey {
        let mut new = NewKey::new(plan);
        new.billing_anchor = Some(anchor);
        issue(&self.service, new).await
    }

    /// Stops gracefully, as the server does: the service is shut down (usage written, the
    /// search index saved) once open requests are done. The client's pooled connections are
    /// let go first, as departing clients do.
    pub async fn stop(&mut self) {
        self.client = client();
        match &mut self.server {
            Some(server) => server.stop().await,
            None => self
                .service
                .shutdown()
                .await
                .expect("the service shut down"),
        }
    }

    /// Stops, waits until the service and its store are dropped (sled holds a file lock), and
    /// starts again on the same store without seeding, with or without a socket as before.
    pub async fn restart(mut self) -> TestApp {
        self.stop().await;
        let with_socket = self.server.is_some();
        let TestApp {
            service,
            store,
            api,
            dataset,
            keys,
            dir,
            parts,
            server,
            client: _,
        } = self;
        drop((api, server));
        release(StoredService { service, store }).await;
        let opened = parts.open(Some(dir.path())).await;
        TestApp::serve(parts, dir, opened, dataset, keys, with_socket).await
    }

    /// Stops and waits until the store is let go of; the folder stays until the value
    /// returned is dropped.
    pub async fn close(mut self) -> TempDir {
        self.stop().await;
        let TestApp {
            service,
            store,
            api,
            dir,
            server,
            ..
        } = self;
        drop((api, server));
        release(StoredService { service, store }).await;
        dir
    }

    /// The URL of a path on the server.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base())
    }

    /// One request, over the socket or through `Api::handle`.
    pub async fn request(
        &self,
        method: Method,
        path_and_query: &str,
        auth: Auth<'_>,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Resp {
        let auth = auth.header();
        let headers = auth
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .chain(headers.iter().copied());
        let Some(server) = &self.server else {
            let mut req = http::Request::builder().method(method).uri(path_and_query);
            for (name, value) in headers {
                req = req.header(name, value);
            }
            let req = req
                .body(Bytes::from(body.unwrap_or_default()))
                .expect("a request");
            let (parts, body) = self.api.handle(req).await.into_parts();
            let text = String::from_utf8_lossy(&body).into_owned();
            return Resp::new(parts.status, parts.headers, text);
        };
        let mut req = self
            .client
            .request(method, format!("{}{path_and_query}", server.base));
        for (name, value) in headers {
            req = req.header(name, value);
        }
        if let Some(body) = body {
            req = req.body(body);
        }
        let response = req.send().await.expect("the request was answered");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("a body");
        Resp::new(status, headers, text)
    }

    /// A request with a JSON body (or none), the key in `X-API-Key`.
    pub async fn call(&self, method: Method, path: &str, key: &str, body: Option<&Value>) -> Resp {
        match body {
            Some(body) => {
                let bytes = serde_json::to_vec(body).expect("JSON");
                let json = [("content-type", "application/json")];
                self.request(method, path, Auth::XApiKey(key), &json, Some(bytes))
                    .await
            }
            None => {
                self.request(method, path, Auth::XApiKey(key), &[], None)
                    .await
            }
        }
    }

    /// GET with a key in `X-API-Key`.
    pub async fn get_as(&self, key: &str, path_and_query: &str) -> Resp {
        self.call(Method::GET, path_and_query, key, None).await
    }

    /// GET with the enterprise key.
    pub async fn get(&self, path_and_query: &str) -> Resp {
        self.get_as(&self.keys.enterprise.raw, path_and_query).await
    }

    /// `GET /api/v1/jobs?{query}` with the enterprise key.
    pub async fn get_jobs(&self, query: &str) -> Resp {
        self.get(&format!("/api/v1/jobs?{query}")).await
    }

    /// `GET /api/v1/jobs/{id}` with the enterprise key.
    pub async fn get_job(&self, id: &str) -> Resp {
        self.get(&format!("/api/v1/jobs/{id}")).await
    }

    /// `GET /api/v1/companies?{query}` with the enterprise key.
    pub async fn get_companies(&self, query: &str) -> Resp {
        self.get(&format!("/api/v1/companies?{query}")).await
    }

    /// `GET /api/v1/companies/{id}` with the enterprise key.
    pub async fn get_company(&self, id: &str) -> Resp {
        self.get(&format!("/api/v1/companies/{id}")).await
    }

    /// `GET /api/v1/usage` with a key.
    pub async fn get_usage(&self, key: &str) -> Resp {
        self.get_as(key, "/api/v1/usage").await
    }

    /// How many calls `key` has used this period: `calls_used` of `GET /api/v1/usage`, which
    /// must answer 200.
    pub async fn calls_used(&self, key: &str) -> u64 {
        let r = self.get_usage(key).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.body["calls_used"].as_u64().expect("calls_used")
    }

    /// `POST /api/v1/webhooks` with a JSON body.
    pub async fn post_webhook(&self, key: &str, body: &Value) -> Resp {
        self.call(Method::POST, "/api/v1/webhooks", key, Some(body))
            .await
    }

    /// `POST /api/v1/webhooks` with any content type and bytes.
    pub async fn post_webhook_raw(&self, key: &str, content_type: &str, body: Vec<u8>) -> Resp {
        self.request(
            Method::POST,
            "/api/v1/webhooks",
            Auth::XApiKey(key),
            &[("content-type", content_type)],
            Some(body),
        )
        .await
    }

    pub async fn list_webhooks(&self, key: &str) -> Resp {
        self.get_as(key, "/api/v1/webhooks").await
    }

    pub async fn get_webhook(&self, key: &str, id: &str) -> Resp {
        self.get_as(key, &format!("/api/v1/webhooks/{id}")).await
    }

    pub async fn delete_webhook(&self, key: &str, id: &str) -> Resp {
        self.call(Method::DELETE, &format!("/api/v1/webhooks/{id}"), key, None)
            .await
    }

    /// The deliveries to subscription `webhook` that are pending and due now, once the
    /// outbox log has been fanned out.
    pub async fn pending_deliveries(&self, webhook: &str) -> Vec<Delivery> {
        let id = WebhookId::parse(webhook).expect("a webhook id");
        self.service.fan_out_now().await.expect("fanned out");
        self.store
            .due_deliveries(Utc::now(), 100)
            .await
            .expect("the outbox")
            .into_iter()
            .filter(|d| d.webhook_id == id)
            .collect()
    }

    /// Every job of a search, page by page at 50 a page; also checks the totals agree.
    pub async fn all_job_ids(&self, query: &str) -> Vec<String> {
        let sep = if query.is_empty() { "" } else { "&" };
        let mut ids = Vec::new();
        let mut page = 1;
        loop {
            let r = self
                .get_jobs(&format!("{query}{sep}per_page=50&page={page}"))
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            let got = r.ids();
            let total = r.total();
            if got.is_empty() {
                assert_eq!(ids.len() as u64, total, "every page read for {query}");
                return ids;
            }
            ids.extend(got);
            page += 1;
        }
    }

    /// Every company the app was seeded with.
    pub fn all_companies(&self) -> &[Company] {
        &self.dataset.companies
    }

    /// Every job the app was seeded with, active or not.
    pub fn all_jobs(&self) -> &[Job] {
        &self.dataset.jobs
    }

    /// The ids of the seeded active jobs `keep` accepts, computed here without the service:
    /// newest `posted_at` first, ties by id ascending.
    pub fn expected_ids(&self, keep: impl Fn(&Job) -> bool) -> Vec<String> {
        let mut jobs: Vec<&Job> = self
            .all_jobs()
            .iter()
            .filter(|j| j.status == JobStatus::Active && keep(j))
            .collect();
        jobs.sort_by_key(|j| (Reverse(j.posted_at), j.id));
        jobs.into_iter().map(|j| j.id.to_string()).collect()
    }
}
