//! One helper module for the whole API suite: `spawn_app()` starts the real hyper server on
//! 127.0.0.1 port 0 over a real sled store in its own temporary folder, seeded with a
//! deterministic demo dataset plus a few hand-made records whose words, tags and dates are
//! known, and hands back typed request helpers.

use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use chrono::{DateTime, TimeZone, Utc};
use job_listings::demo::Dataset;
use job_listings::domain::{
    Company, CompanyId, Confidence, DomainTag, Enrichment, FundingStage, Job, JobId, JobStatus,
    KeyId, Plan, Seniority,
};
use job_listings::query::words;

use crate::common::{open_sled, release, RunningServer};
use job_listings::service::{JobListingsService, NewKey, ServiceConfig};
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tempfile::TempDir;
use uuid::Uuid;

/// The seed of the demo dataset every app is seeded with.
pub const DEMO_SEED: u64 = 20_261_101;
/// Demo companies and jobs generated.
pub const DEMO_COMPANIES: usize = 20;
pub const DEMO_JOBS: usize = 400;

/// A key issued for a test, kept in clear.
#[derive(Clone, Debug)]
pub struct IssuedKey {
    pub raw: String,
    pub id: KeyId,
}

/// One key per plan.
#[derive(Clone, Debug)]
pub struct Keys {
    pub developer: IssuedKey,
    pub agent_pro: IssuedKey,
    pub enterprise: IssuedKey,
}

/// Hand-made records with known words, tags and dates, all posted in December 2026, after
/// every demo job (the demo data ends at 2026-11-01).
#[derive(Clone, Debug)]
pub struct Known {
    /// "Quokka Frobnitz", funding stage given as "Series A".
    pub quokka: Company,
    /// "Wombat Zephyr Works", seed stage.
    pub wombat: Company,
    /// "Idle Marmoset": only a closed job.
    pub idle: Company,
    /// Quokka; remote; engineering + ai; staff; 2026-12-10T12:00Z; 0.9; words zephyrine, node, js.
    pub rust_staff: Job,
    /// Quokka; on site; design; lead; 2026-12-09T08:00Z; confidence exactly 0.7; word marmalade.
    pub designer: Job,
    /// Quokka; remote; data; junior; 2026-12-08T09:00Z; 0.5; the lower id of a posted_at tie.
    pub tie_first: Job,
    /// Quokka; on site; data + engineering; junior; same posted_at as `tie_first`; higher id.
    pub tie_second: Job,
    /// Quokka; remote; security; senior; posted exactly 2026-12-01T00:00:00Z; 0.8.
    pub midnight: Job,
    /// Wombat; remote; research + ai; principal; 2026-12-01T00:00:01Z; 0.95.
    pub after_midnight: Job,
    /// Wombat; on site; devops; staff + lead; 2026-12-05T00:00Z; 0.6; word zephyrine.
    pub wombat_job: Job,
    /// Quokka; closed; word zephyrine; 2026-12-11.
    pub closed: Job,
    /// Idle; closed.
    pub idle_closed: Job,
}

impl Known {
    pub fn companies(&self) -> Vec<Company> {
        vec![self.quokka.clone(), self.wombat.clone(), self.idle.clone()]
    }

    /// Every hand-made job, in the order they are ingested (the tie's second id first).
    pub fn jobs(&self) -> Vec<Job> {
        vec![
            self.rust_staff.clone(),
            self.designer.clone(),
            self.tie_second.clone(),
            self.tie_first.clone(),
            self.midnight.clone(),
            self.after_midnight.clone(),
            self.wombat_job.clone(),
            self.closed.clone(),
            self.idle_closed.clone(),
        ]
    }
}

pub fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .expect("a valid UTC time")
}

fn company(n: u128, name: &str, stage: &str) -> Company {
    let slug = name.to_lowercase().replace(' ', "");
    Company {
        id: CompanyId(Uuid::from_u128(0xC0_0000 + n)),
        name: name.to_owned(),
        domain: format!("{slug}.example.org"),
        funding_stage: FundingStage::parse(stage).expect("a valid stage"),
        blurb: format!("{name} makes things."),
        enrichment: Enrichment {
            headcount: Some(40 + n as u32),
            founded_year: Some(2019),
            headquarters: Some("Hobart, Australia".to_owned()),
            investors: vec!["Marsupial Ventures".to_owned()],
            total_funding_usd: Some(12_000_000),
            links: [("website".to_owned(), format!("https://{slug}.example.org"))]
                .into_iter()
                .collect(),
            extra: serde_json::json!({ "mascot": name })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        },
        updated_at: at(2026, 12, 1, 0, 0, 0),
    }
}

#[allow(clippy::too_many_arguments)]
fn job(
    id: u128,
    company: &Company,
    role: &str,
    description: &str,
    domains: &[&str],
    seniority: &[&str],
    remote: bool,
    posted_at: DateTime<Utc>,
    confidence: f64,
    status: JobStatus,
) -> Job {
    Job {
        id: JobId(Uuid::from_u128(id)),
        role: role.to_owned(),
        company_id: company.id,
        company_name: company.name.clone(),
        description: description.to_owned(),
        domains: domains
            .iter()
            .map(|d| DomainTag::parse(d).expect("a valid tag"))
            .collect(),
        seniority: seniority
            .iter()
            .map(|s| Seniority::parse(s).expect("a valid level"))
            .collect(),
        remote,
        location: (!remote).then(|| "Hobart, Australia".to_owned()),
        source_url: format!("https://{}/jobs/{id}", company.domain),
        salary: None,
        posted_at,
        confidence: Confidence::new(confidence).expect("a valid confidence"),
        status,
        activated_at: None,
        first_seen_at: posted_at,
        updated_at: posted_at,
    }
}

pub fn known() -> Known {
    use JobStatus::{Active, Closed};
    let quokka = company(1, "Quokka Frobnitz", "Series A");
    let wombat = company(2, "Wombat Zephyr Works", "seed");
    let idle = company(3, "Idle Marmoset", "growth");
    // Ids: 0x5EED_0000_0000_0001.. so the tie's order is known: tie_first < tie_second.
    let base = 0x5EED_u128 << 64;
    Known {
        rust_staff: job(
            base + 10,
            &quokka,
            "Staff Rust Engineer",
            "Ship the zephyrine pipeline in Node.js and Rust.",
            &["Engineering", "AI"],
            &["Staff"],
            true,
            at(2026, 12, 10, 12, 0, 0),
            0.9,
            Active,
        ),
        designer: job(
            base + 11,
            &quokka,
            "Lead Product Designer",
            "Own the marmalade design system; remote-friendly team.",
            &["design"],
            &["lead"],
            false,
            at(2026, 12, 9, 8, 0, 0),
            0.7,
            Active,
        ),
        tie_first: job(
            base + 1,
            &quokka,
            "Junior Data Analyst",
            "Dashboards for the zephyrine team.",
            &["data"],
            &["junior"],
            true,
            at(2026, 12, 8, 9, 0, 0),
            0.5,
            Active,
        ),
        tie_second: job(
            base + 2,
            &quokka,
            "Junior Data Engineer",
            "Pipelines in Python.",
            &["data", "engineering"],
            &["junior"],
            false,
            at(2026, 12, 8, 9, 0, 0),
            0.55,
            Active,
        ),
        midnight: job(
            base + 12,
            &quokka,
            "Senior Security Engineer",
            "Harden the kumquat platform.",
            &["security"],
            &["senior"],
            true,
            at(2026, 12, 1, 0, 0, 0),
            0.8,
            Active,
        ),
        after_midnight: job(
            base + 13,
            &wombat,
            "Principal Research Scientist",
            "Research kumquat models.",
            &["research", "ai"],
            &["principal"],
            true,
            at(2026, 12, 1, 0, 0, 1),
            0.95,
            Active,
        ),
        wombat_job: job(
            base + 14,
            &wombat,
            "Staff Platform Engineer",
            "Scale zephyrine clusters.",
            &["devops"],
            &["staff", "lead"],
            false,
            at(2026, 12, 5, 0, 0, 0),
            0.6,
            Active,
        ),
        closed: job(
            base + 15,
            &quokka,
            "Staff Zephyrine Engineer",
            "zephyrine zephyrine kumquat",
            &["engineering"],
            &["staff"],
            true,
            at(2026, 12, 11, 0, 0, 0),
            1.0,
            Closed,
        ),
        idle_closed: job(
            base + 16,
            &idle,
            "Closed Role",
            "Nothing to see.",
            &["operations"],
            &["mid"],
            true,
            at(2026, 12, 6, 0, 0, 0),
            0.9,
            Closed,
        ),
        quokka,
        wombat,
        idle,
    }
}

/// An answer from the server, body parsed as JSON when it is JSON (`Null` otherwise).
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    pub body: Value,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The problem document's `code`.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// The problem document's `param`.
    pub fn param(&self) -> &str {
        self.body["param"].as_str().unwrap_or("")
    }

    /// The ids in a list envelope's `data`, in order.
    pub fn ids(&self) -> Vec<String> {
        self.body["data"]
            .as_array()
            .expect("a list envelope with data")
            .iter()
            .map(|j| j["id"].as_str().expect("an id").to_owned())
            .collect()
    }

    pub fn total(&self) -> u64 {
        self.body["pagination"]["total"]
            .as_u64()
            .expect("pagination.total")
    }

    /// Asserts an RFC 9457 problem with this status, code and (when given) param.
    #[track_caller]
    pub fn assert_problem(&self, status: u16, code: &str, param: Option<&str>) {
        assert_eq!(self.status.as_u16(), status, "status; body: {}", self.text);
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "content type; body: {}",
            self.text
        );
        assert_eq!(self.code(), code, "code; body: {}", self.text);
        assert_eq!(self.body["status"].as_u64(), Some(u64::from(status)));
        for field in ["type", "title", "detail", "request_id"] {
            assert!(
                self.body[field].as_str().is_some_and(|s| !s.is_empty()),
                "problem field {field} missing in {}",
                self.text
            );
        }
        if let Some(param) = param {
            assert_eq!(self.param(), param, "param; body: {}", self.text);
        }
    }
}

/// How the key travels.
#[derive(Clone, Copy, Debug)]
pub enum Auth<'a> {
    None,
    XApiKey(&'a str),
    Bearer(&'a str),
    /// A raw `Authorization` header value.
    Authorization(&'a str),
}

/// A running app.
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub service: JobListingsService,
    pub dataset: Dataset,
    pub known: Known,
    pub keys: Keys,
    pub config: ServiceConfig,
    dir: TempDir,
    server: RunningServer,
}

/// The demo dataset, generated once per test binary (the same seed gives the same data).
pub fn demo_dataset() -> Dataset {
    static DATASET: OnceLock<Dataset> = OnceLock::new();
    DATASET
        .get_or_init(|| Dataset::generate(DEMO_SEED, DEMO_COMPANIES, DEMO_JOBS))
        .clone()
}

/// Starts an app with the default service configuration.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(ServiceConfig::default()).await
}

/// Starts an app with the given service configuration (quotas, webhook limit and policy).
pub async fn spawn_app_with(config: ServiceConfig) -> TestApp {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let service = open_service(&dir, &config).await;

    let dataset = demo_dataset();
    let known = known();
    service
        .upsert_companies(dataset.companies.clone())
        .await
        .expect("demo companies");
    service
        .upsert_jobs(dataset.jobs.clone())
        .await
        .expect("demo jobs");
    service
        .upsert_companies(known.companies())
        .await
        .expect("known companies");
    service.upsert_jobs(known.jobs()).await.expect("known jobs");

    let issue = |plan| {
        let service = service.clone();
        async move {
            let (key, record) = service.create_key(NewKey::new(plan)).await.expect("a key");
            IssuedKey {
                raw: key.expose().to_owned(),
                id: record.id,
            }
        }
    };
    let keys = Keys {
        developer: issue(Plan::Developer).await,
        agent_pro: issue(Plan::AgentPro).await,
        enterprise: issue(Plan::Enterprise).await,
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client");
    serve(dir, service, config, dataset, known, keys, client).await
}

async fn open_service(dir: &TempDir, config: &ServiceConfig) -> JobListingsService {
    let store = open_sled(&dir.path().join("db")).await;
    JobListingsService::builder()
        .store(Arc::new(store))
        .config(config.clone())
        .build()
        .await
        .expect("the service")
}

async fn serve(
    dir: TempDir,
    service: JobListingsService,
    config: ServiceConfig,
    dataset: Dataset,
    known: Known,
    keys: Keys,
    client: reqwest::Client,
) -> TestApp {
    let server = RunningServer::start(&service).await;
    TestApp {
        base: server.base.clone(),
        client,
        service,
        dataset,
        known,
        keys,
        config,
        dir,
        server,
    }
}

impl TestApp {
    /// Stops the server gracefully and waits until it has returned (usage is flushed then).
    pub async fn stop(&mut self) {
        self.server.stop().await;
    }

    /// Stops the server, waits until the service and its sled database are dropped (sled
    /// holds a file lock), and starts a new server on the same folder without seeding.
    pub async fn restart(mut self) -> TestApp {
        self.stop().await;
        let TestApp {
            dir,
            config,
            dataset,
            known,
            keys,
            client,
            service,
            ..
        } = self;
        release(service).await;
        let service = open_service(&dir, &config).await;
        serve(dir, service, config, dataset, known, keys, client).await
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base)
    }

    pub async fn request(
        &self,
        method: Method,
        path_and_query: &str,
        auth: Auth<'_>,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Resp {
        let mut req = self.client.request(method, self.url(path_and_query));
        req = match auth {
            Auth::None => req,
            Auth::XApiKey(k) => req.header("X-API-Key", k),
            Auth::Bearer(k) => req.header("Authorization", format!("Bearer {k}")),
            Auth::Authorization(v) => req.header("Authorization", v),
        };
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        if let Some(body) = body {
            req = req.body(body);
        }
        let response = req.send().await.expect("the request was answered");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("a body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp {
            status,
            headers,
            text,
            body,
        }
    }

    /// GET with a key in `X-API-Key`.
    pub async fn get_as(&self, key: &str, path_and_query: &str) -> Resp {
        self.request(Method::GET, path_and_query, Auth::XApiKey(key), &[], None)
            .await
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

    /// `POST /api/v1/webhooks` with a JSON body.
    pub async fn post_webhook(&self, key: &str, body: &Value) -> Resp {
        self.post_webhook_raw(
            key,
            "application/json",
            serde_json::to_vec(body).expect("JSON"),
        )
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
        self.request(
            Method::DELETE,
            &format!("/api/v1/webhooks/{id}"),
            Auth::XApiKey(key),
            &[],
            None,
        )
        .await
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

    /// Every job in the store as ingested (demo and hand-made), active or not.
    pub fn all_jobs(&self) -> Vec<Job> {
        let mut all = self.dataset.jobs.clone();
        all.extend(self.known.jobs());
        all
    }

    /// The ids of the active jobs `keep` accepts, computed here without the service:
    /// newest `posted_at` first, ties by id ascending.
    pub fn expected_ids(&self, keep: impl Fn(&Job) -> bool) -> Vec<String> {
        let mut jobs: Vec<Job> = self
            .all_jobs()
            .into_iter()
            .filter(|j| j.status == JobStatus::Active && keep(j))
            .collect();
        jobs.sort_by_key(|j| (Reverse(j.posted_at), j.id));
        jobs.into_iter().map(|j| j.id.to_string()).collect()
    }
}

/// The search words of a text (the documented rule).
pub fn word_set(text: &str) -> BTreeSet<String> {
    words(text).collect()
}

/// Whether every word of `query` is a word of the job's role, company name or post text.
pub fn q_matches(job: &Job, query: &str) -> bool {
    let mut all = word_set(&job.role);
    all.extend(word_set(&job.company_name));
    all.extend(word_set(&job.description));
    word_set(query).iter().all(|w| all.contains(w))
}

pub fn has_domain(job: &Job, tag: &str) -> bool {
    job.domains.iter().any(|d| d.as_str() == tag)
}

pub fn has_level(job: &Job, level: &str) -> bool {
    job.seniority.iter().any(|s| s.as_str() == level)
}

pub fn id_of(job: &Job) -> String {
    job.id.to_string()
}

/// Ids as strings, in the order given.
pub fn ids(jobs: &[&Job]) -> Vec<String> {
    jobs.iter().map(|j| id_of(j)).collect()
}
