//! `GET /jobs`, `GET /jobs/{id}` and `GET /jobs/{id}/similar`.

use bytes::Bytes;
use http::Request;

use super::{fresh, kept_json, no_params, Handled};
use crate::api::etag::Asked;
use crate::api::params::{job_query, job_shape, Params, JOB_QUERY, SIMILAR_QUERY};
use crate::api::views::{job_detail_json, job_facets_json, FiltersMeta, ListEnvelope};
use crate::api::Api;
use crate::domain::JobId;
use crate::service::Caller;

/// One page of active jobs, in the list envelope; each job as the render cache has it, or in
/// the shape `fields` and `highlight` ask for.
pub(crate) async fn search(api: &Api, caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), &JOB_QUERY)?;
    let query = job_query(&params)?;
    let shape = job_shape(&params)?;
    let filters = query.filter.clone();
    let asked = Asked::new("jobs", req.uri().query());
    let found = caller.search_jobs(query, asked.held(req.headers())).await?;
    let (found, quota, tag) = match fresh(asked, found) {
        Ok(fresh) => fresh,
        Err(not_modified) => return Ok(not_modified.into()),
    };
    Ok(kept_json(api, tag, quota, || {
        let envelope = ListEnvelope::new(
            (),
            found.page.get(),
            found.per_page.get(),
            found.total,
            "/api/v1/jobs",
            &params.without_page(),
            FiltersMeta {
                filters,
                facets: job_facets_json(&found.facets),
                warnings: found.warnings.iter().map(Into::into).collect(),
            },
        );
        let rendered = api.rendered();
        let jobs: Vec<Bytes> = found
            .jobs
            .iter()
            .map(|j| shape.write(rendered.job(j), j))
            .collect();
        envelope.to_json_around(&jobs)
    }))
}

/// The active jobs most like one, in the list envelope on one page.
pub(crate) async fn similar(api: &Api, caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), &SIMILAR_QUERY)?;
    let id = JobId::parse(id)?;
    let per_page = params.per_page_or(SIMILAR_PER_PAGE)?;
    let asked = Asked::new("similar", req.uri().query());
    let found = caller
        .similar_jobs(id, per_page, asked.held(req.headers()))
        .await?;
    let (found, quota, tag) = match fresh(asked, found) {
        Ok(fresh) => fresh,
        Err(not_modified) => return Ok(not_modified.into()),
    };
    Ok(kept_json(api, tag, quota, || {
        let envelope = ListEnvelope::new(
            (),
            1,
            found.per_page.get(),
            found.total,
            &format!("/api/v1/jobs/{id}/similar"),
            &params.without_page(),
            FiltersMeta {
                filters: crate::query::JobFilter::default(),
                facets: None::<serde_json::Value>,
                warnings: Vec::new(),
            },
        );
        let rendered = api.rendered();
        let jobs: Vec<Bytes> = found.jobs.iter().map(|j| rendered.job(j)).collect();
        envelope.to_json_around(&jobs)
    }))
}

/// How many similar jobs `GET /jobs/{id}/similar` answers unless `per_page` says.
pub(crate) const SIMILAR_PER_PAGE: u32 = 10;

/// One job, active or closed, with its company's enrichment data.
pub(crate) async fn get(api: &Api, caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = JobId::parse(id)?;
    let asked = Asked::new("job", None);
    let found = caller.get_job(id, asked.held(req.headers())).await?;
    let (found, quota, tag) = match fresh(asked, found) {
        Ok(fresh) => fresh,
        Err(not_modified) => return Ok(not_modified.into()),
    };
    Ok(kept_json(api, tag, quota, || {
        let rendered = api.rendered();
        let company = found.company.as_deref().map(|c| rendered.company(c));
        job_detail_json(&rendered.job(&found.job), company.as_deref())
    }))
}
