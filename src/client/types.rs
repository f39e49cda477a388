//! The answers of the public API that the library's own types do not already read: each
//! mirrors a schema of the OpenAPI document (`GET /api/v1/openapi.json`).
//!
//! Jobs ([`Job`]), companies ([`Company`]), deliveries ([`Delivery`](crate::domain::Delivery)) and usage reports
//! ([`UsageReport`](crate::domain::UsageReport)) are read into the domain's types, whose
//! fields the wire format shares; pages' [`Pagination`] and [`Links`], [`Warning`]s,
//! [`Webhook`]s and [`WebhookCreated`] into the types the server writes them from.

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
