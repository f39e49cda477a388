//! The answers of the public API that the library's own types do not already read: each
//! mirrors a schema of the OpenAPI document (`GET /api/v1/openapi.json`).
//!
//! Jobs ([`Job`]), companies ([`Company`]), deliveries ([`Delivery`](crate::domain::Delivery)) and usage reports
//! ([`UsageReport`](crate::domain::UsageReport)) are read into the domain's types, whose
//! fields the wire format shares; pages' [`Pagination`] and [`Links`], [`Warning`]s,
//! [`Webhook`]s and [`WebhookCreated`] into the types the server writes them from.

pub use crate::api::views::{Links, Pagination, WarningView as Warning, Webhook, WebhookCreated};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::{
    ChangeKind, Company, CompanyId, DomainTag, FeedCursor, FundingStage, Job, JobId, Seniority,
    SubscriptionStatus,
};

/// `JobDetail`: a job with its company (`null` when the company is unknown).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct JobDetail {
    /// The job's own fields.
    #[serde(flatten)]
    pub job: Job,
    /// The hiring company, with its enrichment data.
    pub company: Option<Company>,
}

/// `CompanyDetail`: a company with its newest active jobs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct CompanyDetail {
    /// The company's own fields.
    #[serde(flatten)]
    pub company: Company,
    /// How many active jobs the company has in all.
    pub active_jobs_total: u64,
    /// Its newest active jobs, at most 100; `GET /jobs?company_id=` pages through them all
    /// ([`JobSearch::company_id`](super::JobSearch::company_id)).
    pub active_jobs: Vec<Job>,
}

/// `CompanySummary`: a company as company lists show it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct CompanySummary {
    /// The company's identifier.
    pub id: CompanyId,
    /// Its name.
    pub name: String,
    /// Its web domain.
    pub domain: String,
    /// Its latest funding stage.
    pub funding_stage: FundingStage,
    /// A short description.
    pub blurb: String,
    /// How many active jobs it has.
    pub active_jobs_total: u64,
}

/// The `meta` of a list: how the server read the filters, facets when asked for, warnings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ListMeta<F> {
    /// The filters as the server understood them (`JobFilters` for jobs, `{}` for webhook
    /// lists).
    pub filters: Value,
    /// The facet counts asked for, over the whole result.
    #[serde(default = "Option::default")]
    pub facets: Option<F>,
    /// One warning per filter value that nothing holds; empty when there are none.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// The envelope of every list: `JobList`, `CompanyList`, `WebhookList`, `DeliveryList`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>, F: Deserialize<'de>"))]
pub struct ListPage<T, F = Value> {
    /// This page's items.
    pub data: Vec<T>,
    /// Where the page sits.
    pub pagination: Pagination,
    /// The pages either side.
    pub links: Links,
    /// Filters, facets and warnings.
    pub meta: ListMeta<F>,
}

/// `FacetValue`: one value of a facet and how many matches hold it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct FacetValue {
    /// The value, normalised as filters take it.
    pub value: String,
    /// How many matches hold it.
    pub count: u64,
}

/// The remote facet: matches by remote or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct RemoteCounts {
    /// Remote matches.
    #[serde(rename = "true")]
    pub remote: u64,
    /// Other matches.
    #[serde(rename = "false")]
    pub on_site: u64,
}

/// `JobFacets`: counts over every match of a search, one member per facet asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct JobFacets {
    /// Counts by domain tag.
    pub domain: Option<Vec<FacetValue>>,
    /// Counts by seniority level.
    pub seniority: Option<Vec<FacetValue>>,
    /// Counts by remote or not.
    pub remote: Option<RemoteCounts>,
}

/// `CompanyFacets`: counts over every listed company.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct CompanyFacets {
    /// Counts by funding stage.
    pub funding_stage: Option<Vec<FacetValue>>,
}

/// A page of `GET /jobs`.
pub type JobList = ListPage<Job, JobFacets>;
/// A page of `GET /companies`.
pub type CompanyList = ListPage<CompanySummary, CompanyFacets>;

/// `NewWebhook`: the body of `POST /webhooks`. Fields left `None` take the server's
/// defaults (all domains, any seniority, remote and on-site jobs).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NewWebhook {
    /// Where deliveries go (https).
    pub callback_url: String,
    /// The domain tags wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain_filters: Option<Vec<DomainTag>>,
    /// Only remote jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_only: Option<bool>,
    /// The seniority levels wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seniority: Option<Vec<Seniority>>,
    /// Words every delivered job must contain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    /// Words every delivered job's company name must contain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company: Option<String>,
    /// The lowest confidence delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    /// The events to deliver: any of `job.new`, `job.updated` and `job.closed` (default
    /// `job.new` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<ChangeKind>>,
}

setters!(@some NewWebhook {
    domain_filters: Vec<DomainTag>,
    remote_only: bool,
    seniority: Vec<Seniority>,
    q: String,
    company: String,
    min_confidence: f64,
    event_types: Vec<ChangeKind>,
});

impl NewWebhook {
    /// A subscription to every new job, delivered to `callback_url`.
    pub fn new(callback_url: impl Into<String>) -> Self {
        Self {
            callback_url: callback_url.into(),
            ..Self::default()
        }
    }
}

/// `WebhookPatch`: the body of `PATCH /webhooks/{id}`. A field left `None` stays as it is;
/// `Some(None)` sets a filter back to what creating leaves it at.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WebhookPatch {
    /// A new callback URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
    /// New domain tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain_filters: Option<Option<Vec<DomainTag>>>,
    /// Only remote jobs, or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_only: Option<Option<bool>>,
    /// New seniority levels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seniority: Option<Option<Vec<Seniority>>>,
    /// New words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<Option<String>>,
    /// New company words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company: Option<Option<String>>,
    /// A new lowest confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<Option<f64>>,
    /// The events to deliver from now on; `Some(None)` is `job.new` only again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Option<Vec<ChangeKind>>>,
    /// Disable the subscription, or enable it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<SubscriptionStatus>,
}

setters!(@some WebhookPatch {
    callback_url: String,
    domain_filters: Option<Vec<DomainTag>>,
    remote_only: Option<bool>,
    seniority: Option<Vec<Seniority>>,
    q: Option<String>,
    company: Option<String>,
    min_confidence: Option<f64>,
    event_types: Option<Vec<ChangeKind>>,
    status: SubscriptionStatus,
});

/// `ChangeEvent`: one event of the change feed.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ChangeEvent {
    /// The event's place in the feed: following from it gives the events after it.
    pub cursor: FeedCursor,
    /// What happened: `job.new`, `job.updated`, `job.closed` or `job.deleted`.
    #[serde(rename = "type")]
    pub kind: ChangeKind,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// The job it happened to.
    pub job_id: JobId,
    /// The job as the event left it; `None` for `job.deleted`, and once the job is deleted.
    pub job: Option<Job>,
}

/// `ChangePage`: one page of `GET /changes`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ChangePage {
    /// The events, oldest first.
    pub data: Vec<ChangeEvent>,
    /// Where to continue from, on empty pages too.
    pub next_cursor: FeedCursor,
    /// Whether more events were waiting when the page was cut: ask again at once.
    pub has_more: bool,
    /// The next page's link: the same filters, after `next_cursor`.
    pub links: ChangeLinks,
    /// The filters as the server read them, and how long events are kept.
    pub meta: ChangeMeta,
}

/// The `links` of a [`ChangePage`].
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ChangeLinks {
    /// The next page.
    pub next: String,
}

/// The `meta` of a [`ChangePage`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ChangeMeta {
    /// The filters as the server understood them (`JobFilters`).
    pub filters: Value,
    /// How many days the feed keeps events.
    pub retention_days: u64,
}
