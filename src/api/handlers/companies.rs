//! `GET /companies` and `GET /companies/{id}`.

use bytes::Bytes;
use http::Request;

use super::{fresh, kept_json, no_params, Handled};
use crate::api::etag::Asked;
use crate::api::params::{company_query, Params, COMPANY_QUERY};
use crate::api::render::render;
use crate::api::views::{
    value_counts_json, CompanyDetail, CompanyFacets, CompanyFilters, CompanySummary, FiltersMeta,
    ListEnvelope,
};
use crate::api::Api;
use crate::domain::CompanyId;
use crate::service::Caller;

/// One page of companies with active jobs, by name.
pub(crate) async fn list(api: &Api, caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), &COMPANY_QUERY)?;
    let query = company_query(&params)?;
    let stage = query.funding_stage.as_ref().map(|s| s.as_str().to_owned());
    let asked = Asked::new("companies", req.uri().query());
    let found = caller
        .list_companies(query, asked.held(req.headers()))
        .await?;
    let (found, quota, tag) = match fresh(asked, found) {
        Ok(fresh) => fresh,
        Err(not_modified) => return Ok(not_modified.into()),
    };
    Ok(kept_json(api, tag, quota, || {
        let views: Vec<CompanySummary> = found.companies.iter().map(Into::into).collect();
        let envelope = ListEnvelope::new(
            views,
            found.page.get(),
            found.per_page.get(),
            found.total,
            "/api/v1/companies",
            &params.without_page(),
            FiltersMeta {
                filters: CompanyFilters {
                    funding_stage: stage,
                },
                facets: found
                    .funding_stage_counts
                    .as_deref()
                    .map(|c| CompanyFacets {
                        funding_stage: Some(value_counts_json(c)),
                    }),
                warnings: found.warnings.iter().map(Into::into).collect(),
            },
        );
        render(&envelope)
    }))
}

/// One company with its enrichment data and its newest active jobs.
pub(crate) async fn get(api: &Api, caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = CompanyId::parse(id)?;
    let asked = Asked::new("company", None);
    let found = caller.get_company(id, asked.held(req.headers())).await?;
    let (found, quota, tag) = match fresh(asked, found) {
        Ok(fresh) => fresh,
        Err(not_modified) => return Ok(not_modified.into()),
    };
    Ok(kept_json(api, tag, quota, || {
        render(&CompanyDetail::from(&found))
    }))
}
