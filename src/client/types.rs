//! The answers of the public API as the client reads them: the very types the server writes
//! them from (`api::views`), read into their owned forms, and the bodies of the webhook
//! calls.
//!
//! Jobs ([`Job`]), companies ([`Company`](crate::domain::Company)), deliveries
//! ([`Delivery`](crate::domain::Delivery)) and usage reports
//! ([`UsageReport`](crate::domain::UsageReport)) are read into the domain's types, whose
//! fields the wire format shares.

pub use crate::api::views::{
    ChangeEvent, ChangeLinks, ChangeMeta, ChangePage, CompanyDetail, CompanyFacets, CompanySummary,
    FacetList, FacetValue, FiltersMeta, JobDetail, JobFacets, Links, ListEnvelope, Pagination,
    RemoteCounts, WarningView as Warning, Webhook, WebhookCreated,
};

use serde::Serialize;
use serde_json::Value;

use crate::domain::{ChangeKind, DomainTag, Job, Seniority, SubscriptionStatus};

/// The `meta` of a list: how the server read the filters, facets when asked for, warnings.
pub type ListMeta<F> = FiltersMeta<Value, F>;

/// The envelope of every list: `JobList`, `CompanyList`, `WebhookList`, `DeliveryList`.
pub type ListPage<T, F = Value> = ListEnvelope<Vec<T>, ListMeta<F>>;

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
