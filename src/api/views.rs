//! JSON shapes of responses. Single resources are sent bare; lists in the envelope
//! `{"data", "pagination", "links", "meta"}`. The owned ones are also what the typed
//! client reads (`client::types` re-exports them), so a field added here reaches it.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::render::JobView;
use crate::domain::{Company, Subscription};
use crate::query::{FacetCounts, ValueCount};
use crate::service::{CompanyDetail, CompanySummary, UnknownValue};

/// `GET /jobs/{id}`: the job's fields and a `company` field, written around the job's
/// rendered JSON (an object). `company` is the company's rendered JSON (`None` writes `null`).
pub(crate) fn job_detail_json(job: &[u8], company: Option<&[u8]>) -> Vec<u8> {
    // A rendered job is an object: `{…}`.
    let fields = &job[..job.len().saturating_sub(1)];
    let company = company.unwrap_or(b"null");
    let mut out = Vec::with_capacity(job.len() + company.len() + 12);
    out.extend_from_slice(fields);
    out.extend_from_slice(b",\"company\":");
    out.extend_from_slice(company);
    out.push(b'}');
    out
}

#[derive(Serialize)]
pub(crate) struct CompanyDetailView<'a> {
    #[serde(flatten)]
    pub company: &'a Company,
    pub active_jobs_total: u64,
    pub active_jobs: Vec<JobView<'a>>,
}

impl<'a> From<&'a CompanyDetail> for CompanyDetailView<'a> {
    fn from(d: &'a CompanyDetail) -> Self {
        Self {
            company: &d.company,
            active_jobs_total: d.active_jobs_total,
            active_jobs: d.active_jobs.iter().map(|j| JobView::from(&**j)).collect(),
        }
    }
}

#[derive(Serialize)]
pub(crate) struct CompanySummaryView<'a> {
    pub id: crate::domain::CompanyId,
    pub name: &'a str,
    pub domain: &'a str,
    pub funding_stage: &'a str,
    pub blurb: &'a str,
    /// The same name and meaning as in a company's detail.
    pub active_jobs_total: u64,
}

impl<'a> From<&'a CompanySummary> for CompanySummaryView<'a> {
    fn from(s: &'a CompanySummary) -> Self {
        Self {
            id: s.company.id,
            name: &s.company.name,
            domain: &s.company.domain,
            funding_stage: s.company.funding_stage.as_str(),
            blurb: &s.company.blurb,
            active_jobs_total: s.active_jobs_total,
        }
    }
}

/// `Webhook`: a subscription as its owner sees it, without its secret. The server writes it
/// and the typed client reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Webhook {
    /// The subscription's identifier.
    pub id: crate::domain::WebhookId,
    /// Where deliveries go.
    pub callback_url: String,
    /// The domain tags it wants; empty for all.
    pub domain_filters: Vec<crate::domain::DomainTag>,
    /// Whether only remote jobs are delivered.
    pub remote_only: bool,
    /// The seniority levels it wants; empty for any.
    pub seniority: Vec<crate::domain::Seniority>,
    /// Words every delivered job must contain.
    pub q: Option<String>,
    /// Words every delivered job's company name must contain.
    pub company: Option<String>,
    /// The lowest confidence delivered.
    pub min_confidence: Option<f64>,
    /// The events delivered: `job.new` unless it asked for more.
    #[serde(default = "crate::domain::ChangeKind::webhook_default")]
    pub event_types: Vec<crate::domain::ChangeKind>,
    /// Active or disabled.
    pub status: crate::domain::SubscriptionStatus,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// The last successful delivery.
    pub last_success_at: Option<DateTime<Utc>>,
    /// The last failed delivery.
    pub last_failure_at: Option<DateTime<Utc>>,
    /// Why the last delivery failed.
    pub last_failure_reason: Option<String>,
}

impl Webhook {
    /// A stored subscription as its owner sees it.
    pub fn of(s: &Subscription) -> Self {
        Self {
            id: s.id,
            callback_url: s.callback_url.as_str().to_owned(),
            domain_filters: s.domain_filters.clone(),
            remote_only: s.remote_only,
            seniority: s.seniority.clone(),
            q: s.q.clone(),
            company: s.company.clone(),
            min_confidence: s.min_confidence.map(|c| c.get()),
            event_types: s.event_types.clone(),
            status: s.status,
            disabled_reason: s.disabled_reason.clone(),
            created_at: s.created_at,
            last_success_at: s.last_success_at,
            last_failure_at: s.last_failure_at,
            last_failure_reason: s.last_failure_reason.clone(),
        }
    }
}

/// `WebhookCreated`: a new subscription with its signing secret, shown only once.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WebhookCreated {
    /// The subscription.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The signing secret (`whsec_…`): keep it to verify deliveries.
    pub secret: String,
}

impl WebhookCreated {
    /// A subscription just created, with its secret.
    pub fn of(s: &Subscription) -> Self {
        Self {
            webhook: Webhook::of(s),
            secret: s.secret.expose().to_owned(),
        }
    }
}

impl std::fmt::Debug for WebhookCreated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookCreated")
            .field("webhook", &self.webhook)
            .field("secret", &"whsec_…")
            .finish()
    }
}

/// `Pagination`: where a page sits in its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Pagination {
    /// This page, from 1.
    pub page: u32,
    /// Items per page.
    pub per_page: u32,
    /// Items in the whole list.
    pub total: u64,
    /// Pages in the whole list (0 for an empty list).
    pub total_pages: u64,
}

/// `Links`: the relative URLs of the pages either side, `None` at either end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Links {
    /// The next page, such as `/api/v1/jobs?q=rust&page=2`.
    pub next: Option<String>,
    /// The previous page.
    pub prev: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct ListEnvelope<T: Serialize, M: Serialize = Value> {
    pub data: T,
    pub pagination: Pagination,
    pub links: Links,
    pub meta: M,
}

/// The `meta` of a list: the filters it applied, the facet counts asked for, and warnings
/// about filter values nothing holds. `facets` and `warnings` are left out when there are
/// none, so an answer without them reads as it did before they existed.
#[derive(Serialize)]
pub(crate) struct FiltersMeta<F: Serialize> {
    pub filters: F,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facets: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningView>,
}

/// `Warning`: a filter value that nothing in the data holds (code `unknown_value`), in
/// `meta.warnings`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WarningView {
    /// A stable machine code, such as `unknown_value`.
    pub code: String,
    /// The parameter the value was given in.
    pub param: String,
    /// The value, normalised.
    pub value: String,
    /// What happened, in words.
    pub detail: String,
    /// The values the data holds, most common first, at most 100.
    pub known: Vec<String>,
    /// How many values the data holds in all.
    pub known_total: u64,
}

impl From<&UnknownValue> for WarningView {
    fn from(u: &UnknownValue) -> Self {
        let holder = match u.param {
            "funding_stage" => "no company has",
            _ => "no active job has",
        };
        let more = if u.known_total > u.known.len() {
            format!(" (the {} most common of {})", u.known.len(), u.known_total)
        } else {
            String::new()
        };
        let detail = if u.known.is_empty() {
            format!(
                "{holder} {} `{}`, so this value matches nothing; there are no values yet",
                u.param, u.value
            )
        } else {
            format!(
                "{holder} {} `{}`, so this value matches nothing; known values{more}: {}",
                u.param,
                u.value,
                u.known.join(", ")
            )
        };
        Self {
            code: "unknown_value".to_owned(),
            param: u.param.to_owned(),
            value: u.value.clone(),
            detail,
            known: u.known.clone(),
            known_total: u64::try_from(u.known_total).unwrap_or(u64::MAX),
        }
    }
}

/// `meta.facets` of `GET /jobs`: lists of `{value, count}` and, for `remote`, the counts of
/// `true` and `false`.
pub(crate) fn job_facets_json(f: &FacetCounts) -> Option<Value> {
    if f.is_empty() {
        return None;
    }
    let mut out = serde_json::Map::new();
    if let Some(d) = &f.domain {
        out.insert("domain".into(), value_counts_json(d));
    }
    if let Some(s) = &f.seniority {
        out.insert("seniority".into(), value_counts_json(s));
    }
    if let Some(r) = &f.remote {
        out.insert(
            "remote".into(),
            serde_json::json!({ "true": r.remote, "false": r.on_site }),
        );
    }
    Some(Value::Object(out))
}

/// A facet's counts as `[{"value", "count"}]`, in the engine's order.
pub(crate) fn value_counts_json(counts: &[ValueCount]) -> Value {
    Value::Array(
        counts
            .iter()
            .map(|c| serde_json::json!({ "value": c.value, "count": c.count }))
            .collect(),
    )
}

impl<T: Serialize, M: Serialize> ListEnvelope<T, M> {
    /// An envelope for page `page` of `total` results; links keep every other parameter.
    pub(crate) fn new(
        data: T,
        page: u32,
        per_page: u32,
        total: u64,
        path: &str,
        other_params: &str,
        meta: M,
    ) -> Self {
        let total_pages = total.div_ceil(u64::from(per_page));
        let link = |p: u64| {
            if other_params.is_empty() {
                format!("{path}?page={p}")
            } else {
                format!("{path}?{other_params}&page={p}")
            }
        };
        let page64 = u64::from(page);
        Self {
            data,
            pagination: Pagination {
                page,
                per_page,
                total,
                total_pages,
            },
            links: Links {
                next: (page64 < total_pages).then(|| link(page64 + 1)),
                prev: (page64 > 1).then(|| link((page64 - 1).min(total_pages.max(1)))),
            },
            meta,
        }
    }
}

impl<T: Serialize, M: Serialize> ListEnvelope<T, M> {
    /// The envelope with `items`, JSON already rendered (jobs from the render cache), as its
    /// `data` in place of `self.data`: each is written as it is.
    pub(crate) fn to_json_around(&self, items: &[Bytes]) -> Vec<u8> {
        let pagination = super::render::render(&self.pagination);
        let links = super::render::render(&self.links);
        let meta = super::render::render(&self.meta);
        let size = items.iter().map(|i| i.len() + 1).sum::<usize>() + pagination.len() + 64;
        let mut out = Vec::with_capacity(size + links.len() + meta.len());
        out.extend_from_slice(b"{\"data\":[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(item);
        }
        out.extend_from_slice(b"],\"pagination\":");
        out.extend_from_slice(&pagination);
        out.extend_from_slice(b",\"links\":");
        out.extend_from_slice(&links);
        out.extend_from_slice(b",\"meta\":");
        out.extend_from_slice(&meta);
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::render::RenderCache;
    use crate::demo::Dataset;
    use crate::domain::Job;

    fn rendered(jobs: &[Job]) -> Vec<Bytes> {
        let cache = RenderCache::new(0);
        jobs.iter().map(|j| cache.job(j)).collect()
    }

    #[test]
    fn a_list_written_around_rendered_jobs_equals_the_typed_encoding() {
        let data = Dataset::generate(3, 4, 5);
        for jobs in [&data.jobs[..], &data.jobs[..1], &[]] {
            let views: Vec<JobView<'_>> = jobs.iter().map(JobView::from).collect();
            let typed = ListEnvelope::new(
                views,
                2,
                5,
                17,
                "/api/v1/jobs",
                "q=x",
                serde_json::json!({"filters": {"q": "x"}}),
            );
            let expected = serde_json::to_vec(&typed).unwrap_or_default();
            assert_eq!(typed.to_json_around(&rendered(jobs)), expected);
        }
    }

    #[derive(Serialize)]
    struct TypedDetail<'a> {
        #[serde(flatten)]
        job: JobView<'a>,
        company: Option<&'a Company>,
    }

    #[test]
    fn a_detail_written_around_rendered_json_equals_the_typed_encoding() {
        let data = Dataset::generate(3, 2, 2);
        let job = &data.jobs[0];
        let cache = RenderCache::new(0);
        for company in [Some(&data.companies[0]), None] {
            let typed = TypedDetail {
                job: JobView::from(job),
                company,
            };
            let expected = serde_json::to_vec(&typed).unwrap_or_default();
            let company_json = company.map(|c| cache.company(c));
            assert_eq!(
                job_detail_json(&cache.job(job), company_json.as_deref()),
                expected
            );
        }
    }
}
