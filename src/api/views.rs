//! JSON shapes of responses. Single resources are sent bare; lists in the envelope
//! `{"data", "pagination", "links", "meta"}`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::domain::{Company, Job, Subscription};
use crate::service::{CompanyDetail, CompanySummary, JobDetail};

#[derive(Serialize)]
pub(crate) struct JobDetailView<'a> {
    #[serde(flatten)]
    pub job: &'a Job,
    pub company: Option<&'a Company>,
}

impl<'a> From<&'a JobDetail> for JobDetailView<'a> {
    fn from(d: &'a JobDetail) -> Self {
        Self {
            job: &d.job,
            company: d.company.as_deref(),
        }
    }
}

#[derive(Serialize)]
pub(crate) struct CompanyDetailView<'a> {
    #[serde(flatten)]
    pub company: &'a Company,
    pub active_jobs_total: u64,
    pub active_jobs: &'a [Job],
}

impl<'a> From<&'a CompanyDetail> for CompanyDetailView<'a> {
    fn from(d: &'a CompanyDetail) -> Self {
        Self {
            company: &d.company,
            active_jobs_total: d.active_jobs_total,
            active_jobs: &d.active_jobs,
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
    pub active_jobs: u64,
}

impl<'a> From<&'a CompanySummary> for CompanySummaryView<'a> {
    fn from(s: &'a CompanySummary) -> Self {
        Self {
            id: s.company.id,
            name: &s.company.name,
            domain: &s.company.domain,
            funding_stage: s.company.funding_stage.as_str(),
            blurb: &s.company.blurb,
            active_jobs: s.active_jobs,
        }
    }
}

/// A subscription as its owner sees it; the secret only when just created.
#[derive(Serialize)]
pub(crate) struct WebhookView<'a> {
    pub id: crate::domain::WebhookId,
    pub callback_url: &'a str,
    pub domain_filters: &'a [crate::domain::DomainTag],
    pub remote_only: bool,
    pub seniority: &'a [crate::domain::Seniority],
    pub q: Option<&'a str>,
    pub company: Option<&'a str>,
    pub min_confidence: Option<f64>,
    pub status: crate::domain::SubscriptionStatus,
    pub disabled_reason: Option<&'a str>,
    pub created_at: DateTime<Utc>,
    pub last_success_at: Option<DateTime<Utc>>,
    pub last_failure_at: Option<DateTime<Utc>>,
    pub last_failure_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<&'a str>,
}

impl<'a> WebhookView<'a> {
    pub(crate) fn of(s: &'a Subscription, with_secret: bool) -> Self {
        Self {
            id: s.id,
            callback_url: s.callback_url.as_str(),
            domain_filters: &s.domain_filters,
            remote_only: s.remote_only,
            seniority: &s.seniority,
            q: s.q.as_deref(),
            company: s.company.as_deref(),
            min_confidence: s.min_confidence.map(|c| c.get()),
            status: s.status,
            disabled_reason: s.disabled_reason.as_deref(),
            created_at: s.created_at,
            last_success_at: s.last_success_at,
            last_failure_at: s.last_failure_at,
            last_failure_reason: s.last_failure_reason.as_deref(),
            secret: with_secret.then(|| s.secret.expose()),
        }
    }
}

#[derive(Serialize)]
pub(crate) struct Pagination {
    pub page: u32,
    pub per_page: u32,
    pub total: u64,
    pub total_pages: u64,
}

#[derive(Serialize)]
pub(crate) struct Links {
    pub next: Option<String>,
    pub prev: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct ListEnvelope<T: Serialize> {
    pub data: T,
    pub pagination: Pagination,
    pub links: Links,
    pub meta: Value,
}

impl<T: Serialize> ListEnvelope<T> {
    /// An envelope for page `page` of `total` results; links keep every other parameter.
    pub(crate) fn new(
        data: T,
        page: u32,
        per_page: u32,
        total: u64,
        path: &str,
        other_params: &str,
        meta: Value,
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

/// A bare list: `{"data": [...]}`.
#[derive(Serialize)]
pub(crate) struct DataList<T: Serialize> {
    pub data: T,
}
