//! Paths and methods to handlers.

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::params::{company_query, job_query, Params, COMPANY_PARAMS, JOB_PARAMS};
use super::views::{
    CompanyDetailView, CompanySummaryView, DataList, JobDetailView, ListEnvelope, WebhookView,
};
use super::{api_key, Api, Reply, OPENAPI_JSON};
use crate::domain::{ApiKey, CallbackUrl, CompanyId, DomainError, DomainTag, JobId, WebhookId};
use crate::service::NewWebhook;

const PREFIX: &str = "/api/v1";

/// Every route: its path pattern and the methods it takes. The OpenAPI test reads this.
pub(crate) const ROUTES: &[(&str, &str)] = &[
    ("/api/v1/jobs", "GET"),
    ("/api/v1/jobs/{id}", "GET"),
    ("/api/v1/companies", "GET"),
    ("/api/v1/companies/{id}", "GET"),
    ("/api/v1/webhooks", "GET, POST"),
    ("/api/v1/webhooks/{id}", "GET, DELETE"),
    ("/api/v1/webhooks/{id}/deliveries", "GET"),
    ("/api/v1/usage", "GET"),
    ("/api/v1/openapi.json", "GET"),
];

/// The route pattern a path matches, with the path's `{id}` segment.
fn pattern_of<'p>(segments: &[&'p str]) -> Option<(&'static str, Option<&'p str>)> {
    Some(match segments {
        ["openapi.json"] => ("/api/v1/openapi.json", None),
        ["jobs"] => ("/api/v1/jobs", None),
        ["jobs", id] => ("/api/v1/jobs/{id}", Some(*id)),
        ["companies"] => ("/api/v1/companies", None),
        ["companies", id] => ("/api/v1/companies/{id}", Some(*id)),
        ["webhooks"] => ("/api/v1/webhooks", None),
        ["webhooks", id] => ("/api/v1/webhooks/{id}", Some(*id)),
        ["webhooks", id, "deliveries"] => ("/api/v1/webhooks/{id}/deliveries", Some(*id)),
        ["usage"] => ("/api/v1/usage", None),
        _ => return None,
    })
}

fn no_params(req: &Request<Bytes>) -> Result<(), ApiError> {
    Params::parse(req.uri().query(), &[], &[]).map(drop)
}

pub(crate) async fn route(api: &Api, req: &Request<Bytes>) -> Result<Reply, ApiError> {
    let rest = req
        .uri()
        .path()
        .strip_prefix(PREFIX)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or(ApiError::NoRoute)?;
    let segments: Vec<&str> = rest.split('/').collect();
    let (pattern, id) = pattern_of(&segments).ok_or(ApiError::NoRoute)?;
    let allow = ROUTES
        .iter()
        .find(|(p, _)| *p == pattern)
        .map_or("GET", |(_, methods)| *methods);
    let method = req.method();
    if !allow.split(", ").any(|m| m == method.as_str()) {
        return Err(ApiError::MethodNotAllowed { allow });
    }
    if pattern == "/api/v1/openapi.json" {
        return Ok(Reply {
            status: StatusCode::OK,
            body: Some(Bytes::from_static(OPENAPI_JSON.as_bytes())),
            quota: None,
            location: None,
        });
    }
    // A missing or invalid key is a 401 before any parameter is looked at.
    let key = api_key(req.headers())?;
    api.service().authenticate(&key)?;
    let id = id.unwrap_or_default();
    match (pattern, method) {
        ("/api/v1/jobs", _) => search_jobs(api, &key, req).await,
        ("/api/v1/jobs/{id}", _) => {
            no_params(req)?;
            let id = JobId::parse(id)?;
            let found = api.service().get_job(&key, id).await?;
            Ok(Reply::json(
                &JobDetailView::from(&found.value),
                Some(found.quota),
            ))
        }
        ("/api/v1/companies", _) => list_companies(api, &key, req).await,
        ("/api/v1/companies/{id}", _) => {
            no_params(req)?;
            let id = CompanyId::parse(id)?;
            let found = api.service().get_company(&key, id).await?;
            Ok(Reply::json(
                &CompanyDetailView::from(&found.value),
                Some(found.quota),
            ))
        }
        ("/api/v1/webhooks", &Method::POST) => {
            no_params(req)?;
            let new = webhook_body(req)?;
            let created = api.service().create_webhook(&key, new).await?;
            let mut reply =
                Reply::json(&WebhookView::of(&created.value, true), Some(created.quota));
            reply.status = StatusCode::CREATED;
            reply.location = Some(format!("{PREFIX}/webhooks/{}", created.value.id));
            Ok(reply)
        }
        ("/api/v1/webhooks", _) => {
            no_params(req)?;
            let list = api.service().list_webhooks(&key).await?;
            let views: Vec<WebhookView<'_>> = list
                .value
                .iter()
                .map(|w| WebhookView::of(w, false))
                .collect();
            Ok(Reply::json(&DataList { data: views }, Some(list.quota)))
        }
        ("/api/v1/webhooks/{id}", &Method::DELETE) => {
            no_params(req)?;
            let done = api
                .service()
                .delete_webhook(&key, WebhookId::parse(id)?)
                .await?;
            Ok(Reply {
                status: StatusCode::NO_CONTENT,
                body: None,
                quota: Some(done.quota),
                location: None,
            })
        }
        ("/api/v1/webhooks/{id}", _) => {
            no_params(req)?;
            let found = api
                .service()
                .get_webhook(&key, WebhookId::parse(id)?)
                .await?;
            Ok(Reply::json(
                &WebhookView::of(&found.value, false),
                Some(found.quota),
            ))
        }
        ("/api/v1/webhooks/{id}/deliveries", _) => {
            no_params(req)?;
            let list = api
                .service()
                .webhook_deliveries(&key, WebhookId::parse(id)?)
                .await?;
            Ok(Reply::json(
                &DataList { data: &list.value },
                Some(list.quota),
            ))
        }
        ("/api/v1/usage", _) => {
            no_params(req)?;
            let report = api.service().usage(&key)?;
            let quota = api.service().quota(&key).ok();
            Ok(Reply::json(&report, quota))
        }
        _ => Err(ApiError::NoRoute),
    }
}

async fn search_jobs(api: &Api, key: &ApiKey, req: &Request<Bytes>) -> Result<Reply, ApiError> {
    let params = Params::parse(req.uri().query(), JOB_PARAMS, &["domain", "seniority"])?;
    let query = job_query(&params)?;
    let filters = serde_json::to_value(&query.filter).unwrap_or_default();
    let found = api.service().search_jobs(key, query).await?;
    let page = found.value;
    let envelope = ListEnvelope::new(
        &page.jobs,
        page.page.get(),
        page.per_page.get(),
        page.total,
        "/api/v1/jobs",
        &params.without_page(),
        json!({ "filters": filters }),
    );
    Ok(Reply::json(&envelope, Some(found.quota)))
}

async fn list_companies(api: &Api, key: &ApiKey, req: &Request<Bytes>) -> Result<Reply, ApiError> {
    let params = Params::parse(req.uri().query(), COMPANY_PARAMS, &[])?;
    let query = company_query(&params)?;
    let stage = query.funding_stage.as_ref().map(|s| s.as_str().to_owned());
    let found = api.service().list_companies(key, query).await?;
    let page = found.value;
    let views: Vec<CompanySummaryView<'_>> = page.companies.iter().map(Into::into).collect();
    let envelope = ListEnvelope::new(
        views,
        page.page.get(),
        page.per_page.get(),
        page.total,
        "/api/v1/companies",
        &params.without_page(),
        json!({ "filters": { "funding_stage": stage } }),
    );
    Ok(Reply::json(&envelope, Some(found.quota)))
}

/// The body of `POST /webhooks`, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookBody {
    callback_url: Option<String>,
    #[serde(default)]
    domain_filters: Option<Vec<String>>,
    #[serde(default)]
    remote_only: Option<bool>,
}

fn webhook_body(req: &Request<Bytes>) -> Result<NewWebhook, ApiError> {
    let json = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/json" || v.ends_with("+json"));
    if !json {
        return Err(ApiError::UnsupportedMediaType);
    }
    let body: WebhookBody = serde_json::from_slice(req.body()).map_err(|e| {
        ApiError::InvalidBody(format!(
            "the body must be a JSON object with callback_url (string), domain_filters (array of strings) and remote_only (boolean): {e}"
        ))
    })?;
    let raw_url = body
        .callback_url
        .ok_or_else(|| DomainError::new("callback_url", "is required"))?;
    let domain_filters = body
        .domain_filters
        .unwrap_or_default()
        .iter()
        .map(|t| DomainTag::parse(t).map_err(|e| DomainError::new("domain_filters", e.reason)))
        .collect::<Result<Vec<_>, _>>()?;
    if domain_filters.len() > 50 {
        return Err(DomainError::new("domain_filters", "takes at most 50 tags").into());
    }
    Ok(NewWebhook {
        callback_url: CallbackUrl::parse(&raw_url)?,
        domain_filters,
        remote_only: body.remote_only.unwrap_or(false),
    })
}
