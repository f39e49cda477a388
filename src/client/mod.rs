//! A typed client of the public API (feature `client`), on reqwest with rustls, and with
//! [`AdminClient`] of the admin API.
//!
//! It speaks HTTP to the documented API (`GET /api/v1/openapi.json`) and knows nothing of the
//! server's internals: requests are built from the library's query and domain types
//! ([`JobSearch`] of a [`JobFilter`] of [`DomainTag`](crate::domain::DomainTag)s,
//! [`Seniority`](crate::domain::Seniority) levels…), answers are
//! read into its domain types ([`Job`], [`Company`](crate::domain::Company),
//! [`UsageReport`], [`Delivery`]) or the views of [`types`], and error answers become a
//! [`ClientError::Api`] with the problem document's `code`, `detail`, `param` and
//! `request_id`, the caller's quota and the `Retry-After` wait.
//!
//! Every successful call returns a [`Response`]: the value (which it dereferences to) with the
//! quota headers of its answer (`X-RateLimit-Limit`, `-Remaining`, `-Reset`) as a [`Quota`]
//! and the `X-Request-Id`. The client keeps no state between calls, so concurrent calls never
//! see each other's quota.
//!
//! Retries are opt in ([`ClientBuilder::retry`] with a [`RetryPolicy`]): see there for what is
//! retried. Pages of a search come one job at a time from [`Client::search_all`].
//!
//! ```no_run
//! # async fn run() -> Result<(), job_listings::client::ClientError> {
//! use futures_util::TryStreamExt;
//! use job_listings::client::{Client, JobSearch, RetryPolicy};
//! use job_listings::domain::DomainTag;
//! use job_listings::query::JobFilter;
//!
//! let client = Client::builder("http://127.0.0.1:8080")
//!     .api_key("jl_live_...")
//!     .retry(RetryPolicy::default())
//!     .build()?;
//! let ai = DomainTag::parse("ai").unwrap();
//! let search = JobSearch::from(JobFilter::default().with_q("rust").domains([ai]).remote_only(true));
//! let page = client.search_jobs(&search).await?;
//! println!("{} jobs; {:?} calls left", page.pagination.total, page.quota.map(|q| q.remaining));
//! let every_job: Vec<_> = client.search_all(&search).try_collect().await?;
//! # let _ = every_job; Ok(()) }
//! ```

mod admin;
mod error;
pub mod types;

use std::collections::VecDeque;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures_util::Stream;
use http::{HeaderMap, Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;
use url::Url;

pub use admin::AdminClient;
pub use error::{ApiProblem, ClientError, Result};
pub use types::{
    ChangeEvent, ChangeLinks, ChangeMeta, ChangePage, CompanyDetail, CompanyFacets, CompanyList,
    CompanySummary, HitList, JobDetail, JobFacets, JobHit, JobList, ListPage, NewWebhook, Webhook,
    WebhookCreated, WebhookPatch,
};

use crate::api::filter_pairs;
use crate::api::ErrorCode;
use crate::domain::{
    CompanyId, Delivery, FeedCursor, FundingStage, Job, JobId, Page, PerPage, UsageReport,
    WebhookId,
};
use crate::query::{Facet, JobFilter, Sort};
use crate::wire::Problem;

pub use crate::wire::Quota;

/// A successful answer: its value, with the quota and request id of its headers. It
/// dereferences to the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Response<T> {
    /// What the API answered.
    pub value: T,
    /// The caller's quota after this call; `None` on answers that are not metered and carry
    /// no quota (`GET /openapi.json`).
    pub quota: Option<Quota>,
    /// The answer's `X-Request-Id`.
    pub request_id: Option<String>,
}

impl<T> Response<T> {
    /// The value, without the headers.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for Response<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// When the client tries a refused call again, waiting as the answer's `Retry-After` says.
///
/// Retried: `429 rate_limited` (the per-key rate; the call was refused before any work, and
/// its `Retry-After` is seconds) and `503` answers. Never retried: `429 quota_exceeded`,
/// whose `Retry-After` runs to the end of the billing period (the error carries it), every
/// other error, and transport failures. A `POST` is retried only when it carries an
/// `Idempotency-Key`: [`Client::create_webhook`] sends one (a fresh UUID) whenever a policy
/// is set, so the server answers a repeat with the first subscription; `POST
/// /webhooks/{id}/test` is never retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The longest the waits of one call may add up to; a wait that would pass it is not
    /// made, and the error is returned.
    pub max_total_wait: Duration,
    /// The wait when an answer has no `Retry-After`.
    pub default_wait: Duration,
}

impl Default for RetryPolicy {
    /// Four attempts, at most 30 s of waiting in all, 1 s without `Retry-After`.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            max_total_wait: Duration::from_secs(30),
            default_wait: Duration::from_secs(1),
        }
    }
}

/// Builds a [`Client`].
#[derive(Debug)]
pub struct ClientBuilder {
    base: String,
    key: Option<String>,
    timeout: Duration,
    connect_timeout: Duration,
    retry: Option<RetryPolicy>,
}

impl ClientBuilder {
    /// The key sent in `X-API-Key` (none: only `GET /openapi.json` answers).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The longest a call's request and answer may take, per attempt (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest connecting may take (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Retries refused calls as `policy` says (default: none).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// The client. Fails on a base URL that is not an `http` or `https` URL.
    pub fn build(self) -> Result<Client> {
        let key = self.key.clone();
        Ok(Client {
            inner: Arc::new(self.inner(Auth::Key(key))?),
        })
    }

    /// A client of the admin API of the server at the builder's base (its admin listener,
    /// such as `http://127.0.0.1:8081`), sending `token` as the bearer credential; an
    /// [`api_key`](Self::api_key) is not sent.
    pub fn build_admin(self, token: impl Into<String>) -> Result<AdminClient> {
        let inner = self.inner(Auth::Bearer(token.into()))?;
        Ok(AdminClient::new(Arc::new(inner)))
    }

    fn inner(self, auth: Auth) -> Result<Inner> {
        let trimmed = self.base.trim_end_matches('/');
        let base = trimmed
            .strip_suffix("/api/v1")
            .unwrap_or(trimmed)
            .to_owned();
        let parsed = Url::parse(&base).map_err(|source| ClientError::Url {
            url: self.base.clone(),
            source,
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ClientError::Url {
                url: self.base,
                source: url::ParseError::RelativeUrlWithoutBase,
            });
        }
        // The per-call limit is set on each request, so that a call that streams an upload
        // can go without one.
        let http = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!("job-listings-client/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Inner {
            http,
            base,
            auth,
            timeout: self.timeout,
            retry: self.retry,
        })
    }
}

/// A client of the public API. Cheap to clone: clones share one connection pool.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// The server's origin (and any path prefix), without `/api/v1` or a trailing slash.
    base: String,
    auth: Auth,
    /// The longest a call may take, per attempt, unless it streams an upload.
    timeout: Duration,
    retry: Option<RetryPolicy>,
}

/// The credential every call sends.
enum Auth {
    /// An API key in `X-API-Key`, for the public API.
    Key(Option<String>),
    /// The admin token as a bearer credential, for the admin API.
    Bearer(String),
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.inner.base)
            .field(
                "key",
                &matches!(self.inner.auth, Auth::Key(Some(_))).then_some("jl_live_…"),
            )
            .field("retry", &self.inner.retry)
            .finish()
    }
}

/// The parameters of `GET /jobs`: a [`JobFilter`] (sent as the filter parameters that set
/// it), the page and the facets; every one is optional.
///
/// ```
/// use job_listings::client::JobSearch;
/// use job_listings::domain::DomainTag;
/// use job_listings::query::JobFilter;
///
/// let search = JobSearch::new()
///     .filter(JobFilter::default().with_q("rust").remote_only(true))
///     .per_page(job_listings::domain::PerPage::new(5).unwrap());
/// # let _ = (search, DomainTag::parse("ai"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct JobSearch {
    /// The filters (`q`, `domain`, `seniority`, `remote_only`, …).
    pub filter: JobFilter,
    /// The page (`page`, from 1).
    pub page: Option<Page>,
    /// Jobs per page (`per_page`, 1 to 50).
    pub per_page: Option<PerPage>,
    /// The facets to count (`facets`).
    pub facets: Vec<Facet>,
    /// The order (`sort`): newest first by default, or by relevance to the filter's `q`.
    pub sort: Sort,
}

setters!(JobSearch {
    filter: JobFilter,
    sort: Sort,
});
setters!(@some JobSearch {
    page: Page,
    per_page: PerPage,
});

impl JobSearch {
    /// Every active job.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a facet to count.
    pub fn facet(mut self, facet: Facet) -> Self {
        self.facets.push(facet);
        self
    }

    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = filter_pairs(&self.filter);
        paging(&mut out, self.page, self.per_page);
        if !self.facets.is_empty() {
            let names: Vec<&str> = self.facets.iter().map(|f| f.name()).collect();
            out.push(("facets", names.join(",")));
        }
        if self.sort != Sort::default() {
            out.push(("sort", self.sort.as_str().to_owned()));
        }
        out
    }
}

/// How the jobs of a search page are written ([`Client::search_hits`]): only some fields
/// (`fields`; `id` always comes), and why each matched (`highlight`).
///
/// ```
/// use job_listings::client::Shape;
///
/// let shape = Shape::default().fields(["role", "company_name"]).highlight(true);
/// # let _ = shape;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shape {
    /// The top-level job fields to send (`fields`); empty sends every one.
    pub fields: Vec<String>,
    /// Whether each job comes with `match` (`highlight=true`): the words of `q` it holds
    /// and a snippet of its post.
    pub highlight: bool,
}

setters!(Shape { highlight: bool });

impl Shape {
    /// Sets [`fields`](Self::fields).
    #[must_use]
    pub fn fields<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.fields = names.into_iter().map(Into::into).collect();
        self
    }

    fn pairs(&self, out: &mut Vec<(&'static str, String)>) {
        if !self.fields.is_empty() {
            out.push(("fields", self.fields.join(",")));
        }
        if self.highlight {
            out.push(("highlight", "true".to_owned()));
        }
    }
}

impl From<JobFilter> for JobSearch {
    fn from(filter: JobFilter) -> Self {
        Self::new().filter(filter)
    }
}

/// Where a read of the change feed starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChangesFrom {
    /// The oldest event the feed still holds.
    #[default]
    Oldest,
    /// The newest: an empty page whose `next_cursor` is where to follow from.
    Now,
    /// After this cursor (a page's `next_cursor`, or an event's `cursor`).
    After(FeedCursor),
}

/// The parameters of `GET /changes`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ChangesRequest {
    /// Where to start (`after`).
    pub from: ChangesFrom,
    /// Most events on the page (`limit`, 1 to 500; the server's default is 100).
    pub limit: Option<u16>,
    /// The filters, as a search takes them.
    pub filter: JobFilter,
}

setters!(@some ChangesRequest {
    limit: u16,
});
setters!(ChangesRequest { filter: JobFilter });

impl ChangesRequest {
    /// Every event, from `from`.
    pub fn from(from: ChangesFrom) -> Self {
        Self {
            from,
            ..Self::default()
        }
    }

    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        match self.from {
            ChangesFrom::Oldest => {}
            ChangesFrom::Now => out.push(("after", "now".to_owned())),
            ChangesFrom::After(cursor) => out.push(("after", cursor.encode())),
        }
        if let Some(limit) = self.limit {
            out.push(("limit", limit.to_string()));
        }
        out.extend(filter_pairs(&self.filter));
        out
    }
}

/// The parameters of `GET /companies`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CompanySearch {
    /// Companies at this funding stage (`funding_stage`).
    pub funding_stage: Option<FundingStage>,
    /// Count the companies by funding stage (`facets=funding_stage`).
    pub facets: bool,
    /// The page (`page`).
    pub page: Option<Page>,
    /// Companies per page (`per_page`).
    pub per_page: Option<PerPage>,
}

setters!(@some CompanySearch {
    funding_stage: FundingStage,
    page: Page,
    per_page: PerPage,
});
setters!(CompanySearch { facets: bool });

impl CompanySearch {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(stage) = &self.funding_stage {
            out.push(("funding_stage", stage.as_str().to_owned()));
        }
        if self.facets {
            out.push(("facets", "funding_stage".to_owned()));
        }
        paging(&mut out, self.page, self.per_page);
        out
    }
}

/// A page of a list that only pages: webhooks and deliveries. Defaults are the server's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Paging {
    /// The page (`page`).
    pub page: Option<Page>,
    /// Items per page (`per_page`).
    pub per_page: Option<PerPage>,
}

fn paging(out: &mut Vec<(&'static str, String)>, page: Option<Page>, per_page: Option<PerPage>) {
    if let Some(p) = page {
        out.push(("page", p.get().to_string()));
    }
    if let Some(p) = per_page {
        out.push(("per_page", p.get().to_string()));
    }
}

/// One request, as sent on each attempt.
struct Call {
    method: Method,
    url: Url,
    body: Option<Vec<u8>>,
    idempotency_key: Option<String>,
    /// No time limit: the call takes as long as the work it asks for (a backup).
    unbounded: bool,
}

impl Call {
    fn new(method: Method, url: Url) -> Self {
        Self {
            method,
            url,
            body: None,
            idempotency_key: None,
            unbounded: false,
        }
    }

    /// The call with `body` as its JSON body.
    fn json(mut self, body: &impl serde::Serialize) -> Self {
        // The request types serialize to JSON without fail.
        self.body = Some(serde_json::to_vec(body).unwrap_or_default());
        self
    }

    /// Whether sending it twice does what sending it once does.
    fn idempotent(&self) -> bool {
        self.method != Method::POST || self.idempotency_key.is_some()
    }
}

/// A successful answer before its body is read.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Client {
    /// A builder for a client of the server at `base` (such as `https://jobs.example.com`;
    /// a trailing `/api/v1` is allowed).
    pub fn builder(base: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base.into(),
            key: None,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retry: None,
        }
    }

    /// `GET /jobs`: one page of a search.
    pub async fn search_jobs(&self, search: &JobSearch) -> Result<Response<JobList>> {
        let url = self.url("/api/v1/jobs", &search.pairs())?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// One page of a search with its jobs in a [`Shape`]: fewer fields, and why each matched.
    /// One metered call.
    pub async fn search_hits(
        &self,
        search: &JobSearch,
        shape: &Shape,
    ) -> Result<Response<HitList>> {
        let mut pairs = search.pairs();
        shape.pairs(&mut pairs);
        let url = self.url("/api/v1/jobs", &pairs)?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// Every job of a search, page after page (following `links.next`), one at a time. Each
    /// page is one metered call; a failed page ends the stream with its error.
    pub fn search_all(&self, search: &JobSearch) -> impl Stream<Item = Result<Job>> + 'static {
        let client = self.clone();
        let first = self.url("/api/v1/jobs", &search.pairs());
        let state = (VecDeque::<Job>::new(), Some(first));
        futures_util::stream::try_unfold(state, move |(mut buffer, mut next)| {
            let client = client.clone();
            async move {
                loop {
                    if let Some(job) = buffer.pop_front() {
                        return Ok(Some((job, (buffer, next))));
                    }
                    let Some(url) = next.take() else {
                        return Ok(None);
                    };
                    let page: Response<JobList> = client.json(Call::new(Method::GET, url?)).await?;
                    let page = page.into_inner();
                    next = page.links.next.map(|link| client.link(&link));
                    buffer.extend(page.data);
                }
            }
        })
    }

    /// `GET /jobs/{id}`: a job (active or closed) with its company.
    pub async fn get_job(&self, id: JobId) -> Result<Response<JobDetail>> {
        let url = self.url(&format!("/api/v1/jobs/{id}"), &[])?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `GET /jobs/{id}/similar`: the active jobs most like one, best first, at most
    /// `per_page` (the server's default, 10, for `None`).
    pub async fn similar_jobs(
        &self,
        id: JobId,
        per_page: Option<PerPage>,
    ) -> Result<Response<JobList>> {
        let pairs: Vec<(&str, String)> = per_page
            .map(|p| ("per_page", p.get().to_string()))
            .into_iter()
            .collect();
        let url = self.url(&format!("/api/v1/jobs/{id}/similar"), &pairs)?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `GET /companies`: one page of the companies with active jobs.
    pub async fn list_companies(&self, search: &CompanySearch) -> Result<Response<CompanyList>> {
        let url = self.url("/api/v1/companies", &search.pairs())?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `GET /companies/{id}`: a company with its newest active jobs.
    pub async fn get_company(&self, id: CompanyId) -> Result<Response<CompanyDetail>> {
        let url = self.url(&format!("/api/v1/companies/{id}"), &[])?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `GET /changes`: one page of the change feed. Follow it with
    /// [`ChangesFrom::After`] the page's `next_cursor`; a cursor the feed no longer holds is
    /// [`ClientError::Api`] with code `cursor_expired`.
    pub async fn changes(&self, request: &ChangesRequest) -> Result<Response<ChangePage>> {
        let url = self.url("/api/v1/changes", &request.pairs())?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `GET /usage`: this period's usage of the key (not a metered call).
    pub async fn usage(&self) -> Result<Response<UsageReport>> {
        let url = self.url("/api/v1/usage", &[])?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `POST /webhooks` (Agent Pro or higher): a new subscription with its secret. With a
    /// retry policy, the call carries a fresh `Idempotency-Key`, so a retry cannot register
    /// twice.
    pub async fn create_webhook(&self, new: &NewWebhook) -> Result<Response<WebhookCreated>> {
        let key = self.inner.retry.map(|_| uuid::Uuid::new_v4().to_string());
        self.create_webhook_inner(new, key).await
    }

    /// `POST /webhooks` with an `Idempotency-Key` of the caller's: sent again with the same
    /// key and fields, the server answers with the subscription the first call created.
    pub async fn create_webhook_idempotent(
        &self,
        new: &NewWebhook,
        idempotency_key: &str,
    ) -> Result<Response<WebhookCreated>> {
        self.create_webhook_inner(new, Some(idempotency_key.to_owned()))
            .await
    }

    async fn create_webhook_inner(
        &self,
        new: &NewWebhook,
        idempotency_key: Option<String>,
    ) -> Result<Response<WebhookCreated>> {
        let mut call = Call::new(Method::POST, self.url("/api/v1/webhooks", &[])?);
        call.body = Some(serde_json::to_vec(new).expect("a webhook serializes"));
        call.idempotency_key = idempotency_key;
        self.json(call).await
    }

    /// `GET /webhooks`: a page of the key's subscriptions, oldest first.
    pub async fn list_webhooks(&self, paging: Paging) -> Result<Response<ListPage<Webhook>>> {
        let mut pairs = Vec::new();
        self::paging(&mut pairs, paging.page, paging.per_page);
        let url = self.url("/api/v1/webhooks", &pairs)?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `GET /webhooks/{id}`: one of the key's subscriptions.
    pub async fn get_webhook(&self, id: WebhookId) -> Result<Response<Webhook>> {
        let url = self.url(&format!("/api/v1/webhooks/{id}"), &[])?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `PATCH /webhooks/{id}`: changes a subscription (Agent Pro or higher).
    pub async fn update_webhook(
        &self,
        id: WebhookId,
        patch: &WebhookPatch,
    ) -> Result<Response<Webhook>> {
        let mut call = Call::new(
            Method::PATCH,
            self.url(&format!("/api/v1/webhooks/{id}"), &[])?,
        );
        call.body = Some(serde_json::to_vec(patch).expect("a patch serializes"));
        self.json(call).await
    }

    /// `DELETE /webhooks/{id}`: removes a subscription (`204`).
    pub async fn delete_webhook(&self, id: WebhookId) -> Result<Response<()>> {
        let url = self.url(&format!("/api/v1/webhooks/{id}"), &[])?;
        let answer = self.send(Call::new(Method::DELETE, url)).await?;
        Ok(respond((), &answer.headers))
    }

    /// `GET /webhooks/{id}/deliveries`: a page of the subscription's latest deliveries.
    pub async fn webhook_deliveries(
        &self,
        id: WebhookId,
        paging: Paging,
    ) -> Result<Response<ListPage<Delivery>>> {
        let mut pairs = Vec::new();
        self::paging(&mut pairs, paging.page, paging.per_page);
        let url = self.url(&format!("/api/v1/webhooks/{id}/deliveries"), &pairs)?;
        self.json(Call::new(Method::GET, url)).await
    }

    /// `POST /webhooks/{id}/test`: queues a `webhook.test` ping (`202`) and returns its
    /// delivery. Never retried.
    pub async fn test_webhook(&self, id: WebhookId) -> Result<Response<Delivery>> {
        let url = self.url(&format!("/api/v1/webhooks/{id}/test"), &[])?;
        self.json(Call::new(Method::POST, url)).await
    }

    /// Any call of the public API by its path (`/api/v1/…`, an id segment already
    /// percent-encoded), answered with its JSON exactly as the server sent it (`null` for an
    /// answer without a body, such as a `204`). For programs that pass answers on unchanged,
    /// such as an MCP bridge; the typed methods above are for everyone else. Errors, quota and
    /// the retry policy are as for every call (a `POST` is never retried).
    pub async fn request_json(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Response<Value>> {
        let pairs: Vec<(&str, String)> =
            query.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let mut call = Call::new(method, self.url(path, &pairs)?);
        if let Some(body) = body {
            // Serialising a JSON value cannot fail.
            call.body = Some(serde_json::to_vec(body).unwrap_or_default());
        }
        let answer = self.send(call).await?;
        if answer.body.is_empty() {
            return Ok(respond(Value::Null, &answer.headers));
        }
        let value = serde_json::from_slice(&answer.body).map_err(|source| ClientError::Decode {
            status: answer.status,
            source,
        })?;
        Ok(respond(value, &answer.headers))
    }

    /// `GET /openapi.json`: the OpenAPI document, as JSON.
    pub async fn openapi(&self) -> Result<Response<Value>> {
        let url = self.url("/api/v1/openapi.json", &[])?;
        self.json(Call::new(Method::GET, url)).await
    }

    fn url(&self, path: &str, pairs: &[(&str, String)]) -> Result<Url> {
        self.inner.url(path, pairs)
    }

    fn link(&self, link: &str) -> Result<Url> {
        self.inner.link(link)
    }

    async fn json<T: DeserializeOwned>(&self, call: Call) -> Result<Response<T>> {
        self.inner.json(call).await
    }

    async fn send(&self, call: Call) -> Result<Answer> {
        self.inner.send(call).await
    }
}

/// The calls' machinery, shared by [`Client`] and [`AdminClient`]: URLs under the base, the
/// credential, the time limit, retries and the reading of answers and problems.
impl Inner {
    fn url(&self, path: &str, pairs: &[(&str, String)]) -> Result<Url> {
        let text = format!("{}{path}", self.base);
        let mut url = Url::parse(&text).map_err(|source| ClientError::Url { url: text, source })?;
        if !pairs.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
        }
        Ok(url)
    }

    /// A link of an answer (`/api/v1/jobs?…`), as a URL under the base.
    fn link(&self, link: &str) -> Result<Url> {
        let text = format!("{}{link}", self.base);
        Url::parse(&text).map_err(|source| ClientError::Url { url: text, source })
    }

    async fn json<T: DeserializeOwned>(&self, call: Call) -> Result<Response<T>> {
        let answer = self.send(call).await?;
        let value = serde_json::from_slice(&answer.body).map_err(|source| ClientError::Decode {
            status: answer.status,
            source,
        })?;
        Ok(respond(value, &answer.headers))
    }

    /// Sends a call, again while the retry policy allows; a 2xx answer, or the last error.
    async fn send(&self, call: Call) -> Result<Answer> {
        let mut attempts = 0u32;
        let mut waited = Duration::ZERO;
        loop {
            attempts += 1;
            let error = match self.attempt(&call).await? {
                Ok(answer) => return Ok(answer),
                Err(problem) => problem,
            };
            let Some(policy) = self.retry else {
                return Err(ClientError::Api(error));
            };
            let retryable = (error.status == StatusCode::TOO_MANY_REQUESTS
                && error.code == ErrorCode::RateLimited.as_str())
                || error.status == StatusCode::SERVICE_UNAVAILABLE;
            let wait = error.retry_after.unwrap_or(policy.default_wait);
            if !retryable
                || !call.idempotent()
                || attempts >= policy.max_attempts
                || waited + wait > policy.max_total_wait
            {
                return Err(ClientError::Api(error));
            }
            tokio::time::sleep(wait).await;
            waited += wait;
        }
    }

    /// One attempt: a 2xx answer, or the problem of an error answer.
    async fn attempt(&self, call: &Call) -> Result<std::result::Result<Answer, Box<ApiProblem>>> {
        let mut request = self
            .http
            .request(call.method.clone(), call.url.clone())
            .header(http::header::ACCEPT, "application/json");
        request = self.authorize(request);
        if !call.unbounded {
            request = request.timeout(self.timeout);
        }
        if let Some(key) = &call.idempotency_key {
            request = request.header("idempotency-key", key);
        }
        if let Some(body) = &call.body {
            request = request
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        self.answer(request.send().await?).await
    }

    /// The request with the client's credential.
    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.auth {
            Auth::Key(Some(key)) => request.header("x-api-key", key),
            Auth::Key(None) => request,
            Auth::Bearer(token) => request.bearer_auth(token),
        }
    }

    /// A 2xx answer, or the problem of an error answer.
    async fn answer(
        &self,
        response: reqwest::Response,
    ) -> Result<std::result::Result<Answer, Box<ApiProblem>>> {
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await?;
        if status.is_success() {
            return Ok(Ok(Answer {
                status,
                headers,
                body,
            }));
        }
        let mut problem: Problem = serde_json::from_slice(&body)
            .map_err(|source| ClientError::Decode { status, source })?;
        let retry_after = retry_after(&headers).or(problem.retry_after.map(Duration::from_secs));
        if problem.request_id.is_empty() {
            problem.request_id = request_id(&headers).unwrap_or_default();
        }
        Ok(Err(Box::new(ApiProblem {
            status,
            problem,
            quota: Quota::of(&headers),
            retry_after,
        })))
    }
}

fn respond<T>(value: T, headers: &HeaderMap) -> Response<T> {
    Response {
        value,
        quota: Quota::of(headers),
        request_id: request_id(headers),
    }
}

fn request_id(headers: &HeaderMap) -> Option<String> {
    Some(headers.get("x-request-id")?.to_str().ok()?.to_owned())
}

/// `Retry-After`: a number of seconds, or an HTTP date (a wait of zero once it has passed).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(text).ok()?.with_timezone(&Utc);
    Some((at - Utc::now()).to_std().unwrap_or(Duration::ZERO))
}

setters!(RetryPolicy {
    max_attempts: u32,
    max_total_wait: Duration,
    default_wait: Duration,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "7".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(
            "retry-after",
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        headers.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn a_search_is_sent_as_the_documented_parameters() {
        let ai_and_data = ["ai", "data"].map(|d| crate::domain::DomainTag::parse(d).unwrap());
        let search = JobSearch::new()
            .filter(
                JobFilter::default()
                    .with_q("rust")
                    .domains(ai_and_data)
                    .remote_only(true),
            )
            .facet(Facet::Domain)
            .facet(Facet::Remote)
            .per_page(PerPage::new(5).unwrap());
        let client = Client::builder("http://127.0.0.1:1/api/v1/")
            .build()
            .unwrap();
        let url = client.url("/api/v1/jobs", &search.pairs()).unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:1/api/v1/jobs?domain=ai%2Cdata&remote_only=true&q=rust&per_page=5&facets=domain%2Cremote"
        );
    }
}
