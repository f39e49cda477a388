//! `GET /jobs` and `GET /jobs/{id}`.

use bytes::Bytes;
use http::Request;

use super::{no_params, Handled};
use crate::api::params::{job_query, Params, JOB_PARAMS};
use crate::api::views::{job_detail_json, FiltersMeta, ListEnvelope};
use crate::api::{Api, Reply};
use crate::domain::JobId;
use crate::service::Caller;

/// One page of active jobs, in the list envelope; each job as the render cache has it.
pub(crate) async fn search(api: &Api, caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), JOB_PARAMS, &["domain", "seniority"])?;
    let query = job_query(&params)?;
    let filters = query.filter.clone();
    let found = caller.search_jobs(query).await?;
    let envelope = ListEnvelope::new(
        (),
        found.page.get(),
        found.per_page.get(),
        found.total,
        "/api/v1/jobs",
        &params.without_page(),
        FiltersMeta { filters },
    );
    let rendered = api.rendered();
    let jobs: Vec<Bytes> = found.jobs.iter().map(|j| rendered.job(j)).collect();
    Ok(Reply::json_bytes(
        envelope.to_json_around(&jobs),
        Some(found.quota),
    ))
}

/// One job, active or closed, with its company's enrichment data.
pub(crate) async fn get(api: &Api, caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = JobId::parse(id)?;
    let found = caller.get_job(id).await?;
    let rendered = api.rendered();
    let company = found.company.as_deref().map(|c| rendered.company(c));
    let body = job_detail_json(&rendered.job(&found.job), company.as_deref());
    Ok(Reply::json_bytes(body, Some(found.quota)))
}
