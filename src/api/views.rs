//! JSON shapes of responses. Single resources are sent bare; lists in the envelope
//! `{"data", "pagination", "links", "meta"}`.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::domain::{Company, Job, Subscription};
use crate::service::{CompanyDetail, CompanySummary, JobDetail};

/// `GET /jobs/{id}`: the job's fields and a `company` field, written around the job's stored
/// JSON (an object) without decoding it. `None` if that JSON is not an object.
/// `company` is the company's JSON (`None` writes `null`).
pub(crate) fn job_detail_json(
    detail: &JobDetail<Bytes>,
    company: Option<&[u8]>,
) -> Option<Vec<u8>> {
    let fields = detail.job.strip_suffix(b"}")?;
    if !fields.starts_with(b"{") || fields.len() < 2 {
        return None;
    }
    let company = company.unwrap_or(b"null");
    let mut out = Vec::with_capacity(detail.job.len() + company.len() + 12);
    out.extend_from_slice(fields);
    out.extend_from_slice(b",\"company\":");
    out.extend_from_slice(company);
    out.push(b'}');
    Some(out)
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
pub(crate) struct ListEnvelope<T: Serialize, M: Serialize = Value> {
    pub data: T,
    pub pagination: Pagination,
    pub links: Links,
    pub meta: M,
}

/// The `meta` of a list: the filters it applied.
#[derive(Serialize)]
pub(crate) struct FiltersMeta<F: Serialize> {
    pub filters: F,
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
    /// The envelope with `items`, JSON objects already encoded (stored jobs), as its `data`
    /// in place of `self.data`: each is written as it is.
    pub(crate) fn to_json_around(&self, items: &[Bytes]) -> Option<Vec<u8>> {
        let pagination = serde_json::to_vec(&self.pagination).ok()?;
        let links = serde_json::to_vec(&self.links).ok()?;
        let meta = serde_json::to_vec(&self.meta).ok()?;
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
        Some(out)
    }
}

/// A bare list: `{"data": [...]}`.
#[derive(Serialize)]
pub(crate) struct DataList<T: Serialize> {
    pub data: T,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use std::sync::Arc;

    fn stored(jobs: &[Job]) -> Vec<Bytes> {
        jobs.iter()
            .map(|j| Bytes::from(serde_json::to_vec(j).unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_list_written_around_stored_json_equals_the_typed_encoding() {
        let data = Dataset::generate(3, 4, 5);
        for jobs in [&data.jobs[..], &data.jobs[..1], &[]] {
            let typed = ListEnvelope::new(
                jobs,
                2,
                5,
                17,
                "/api/v1/jobs",
                "q=x",
                serde_json::json!({"filters": {"q": "x"}}),
            );
            let expected = serde_json::to_vec(&typed).unwrap_or_default();
            assert_eq!(typed.to_json_around(&stored(jobs)), Some(expected));
        }
    }

    #[derive(Serialize)]
    struct TypedDetail<'a> {
        #[serde(flatten)]
        job: &'a Job,
        company: Option<&'a Company>,
    }

    #[test]
    fn a_detail_written_around_stored_json_equals_the_typed_encoding() {
        let data = Dataset::generate(3, 2, 2);
        let job = &data.jobs[0];
        for company in [Some(Arc::new(data.companies[0].clone())), None] {
            let typed = TypedDetail {
                job,
                company: company.as_deref(),
            };
            let expected = serde_json::to_vec(&typed).unwrap_or_default();
            let company_json = company
                .as_deref()
                .map(|c| serde_json::to_vec(c).unwrap_or_default());
            let detail = JobDetail {
                job: stored(std::slice::from_ref(job)).remove(0),
                company,
            };
            assert_eq!(
                job_detail_json(&detail, company_json.as_deref()),
                Some(expected)
            );
        }
        let not_an_object = JobDetail {
            job: Bytes::from_static(b"[1]"),
            company: None,
        };
        assert_eq!(job_detail_json(&not_an_object, None), None);
    }
}
