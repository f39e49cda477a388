//! The answers of the public API as the client reads them: the very types the server writes
//! them from (`api::views`), read into their owned forms, and the bodies of the webhook
//! calls.
//!
//! Jobs ([`Job`]), companies ([`Company`](crate::domain::Company)), deliveries
//! ([`Delivery`](crate::domain::Delivery)) and usage reports
//! ([`UsageReport`](crate::domain::UsageReport)) are read into the domain's types, whose
//! fields the wire format shares.

pub use crate::api::requests::{NewWebhook, WebhookPatch};
pub use crate::api::views::{
    ChangeEvent, ChangeLinks, ChangeMeta, ChangePage, CompanyDetail, CompanyFacets, CompanySummary,
    FacetList, FacetValue, FiltersMeta, JobDetail, JobFacets, JobHit, Links, ListEnvelope,
    Pagination, RemoteCounts, WarningView as Warning, Webhook, WebhookCreated,
};

use serde_json::Value;

use crate::domain::Job;

/// The `meta` of a list: how the server read the filters, facets when asked for, warnings.
pub type ListMeta<F> = FiltersMeta<Value, F>;

/// The envelope of every list: `JobList`, `CompanyList`, `WebhookList`, `DeliveryList`.
pub type ListPage<T, F = Value> = ListEnvelope<Vec<T>, ListMeta<F>>;

/// A page of `GET /jobs`.
pub type JobList = ListPage<Job, JobFacets>;
/// A page of `GET /jobs` asked for in a [`Shape`](super::Shape): `fields`, `highlight`.
pub type HitList = ListPage<JobHit, JobFacets>;
/// A page of `GET /companies`.
pub type CompanyList = ListPage<CompanySummary, CompanyFacets>;
