//! `GET /companies` and `GET /companies/{id}`.

use bytes::Bytes;
use http::Request;
use serde_json::json;

use super::{no_params, Handled};
use crate::api::params::{company_query, Params, COMPANY_PARAMS};
use crate::api::views::{CompanyDetailView, CompanySummaryView, FiltersMeta, ListEnvelope};
use crate::api::Reply;
use crate::domain::CompanyId;
use crate::service::Caller;

/// One page of companies with active jobs, by name.
pub(crate) async fn list(caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), COMPANY_PARAMS, &[])?;
    let query = company_query(&params)?;
    let stage = query.funding_stage.as_ref().map(|s| s.as_str().to_owned());
    let found = caller.list_companies(query).await?;
    let views: Vec<CompanySummaryView<'_>> = found.companies.iter().map(Into::into).collect();
    let envelope = ListEnvelope::new(
        views,
        found.page.get(),
        found.per_page.get(),
        found.total,
        "/api/v1/companies",
        &params.without_page(),
        FiltersMeta {
            filters: json!({ "funding_stage": stage }),
        },
    );
    Ok(Reply::json(&envelope, Some(found.quota)))
}

/// One company with its enrichment data and its newest active jobs.
pub(crate) async fn get(caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let found = caller.get_company(CompanyId::parse(id)?).await?;
    Ok(Reply::json(
        &CompanyDetailView::from(&found.value),
        Some(found.quota),
    ))
}
