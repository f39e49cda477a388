//! Paths and methods to handlers.

use std::borrow::Cow;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::params::{company_query, job_query, Params, COMPANY_PARAMS, JOB_PARAMS};
use super::views::{
    job_detail_json, CompanyDetailView, CompanySummaryView, DataList, FiltersMeta, ListEnvelope,
    WebhookView,
};
use super::{api_key, Api, Reply, OPENAPI_JSON};
use crate::domain::{
    ApiKey, CallbackUrl, CompanyId, Confidence, DomainError, DomainTag, IdempotencyKey, JobId,
    Seniority, SubscriptionStatus, WebhookId,
};
use crate::service::{Metered, NewWebhook, ServiceError, WebhookChange, WebhookCreation};
use crate::store::StoreError;

const PREFIX: &str = "/api/v1";

/// Every route: its path pattern, the methods the OpenAPI document lists for it (the
/// OpenAPI test reads these), and its `Allow` header: those methods, `HEAD` wherever `GET` is
/// (answered as `GET` without the body) and `OPTIONS`.
pub(crate) const ROUTES: &[(&str, &str, &str)] = &[
    ("/api/v1/jobs", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/jobs/{id}", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/companies", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/companies/{id}", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/webhooks", "GET, POST", "GET, HEAD, POST, OPTIONS"),
    (
        "/api/v1/webhooks/{id}",
        "GET, PATCH, DELETE",
        "GET, HEAD, PATCH, DELETE, OPTIONS",
    ),
    (
        "/api/v1/webhooks/{id}/deliveries",
        "GET",
        "GET, HEAD, OPTIONS",
    ),
    ("/api/v1/webhooks/{id}/test", "POST", "POST, OPTIONS"),
    ("/api/v1/usage", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/openapi.json", "GET", "GET, HEAD, OPTIONS"),
];

/// The route pattern a path matches, with the path's `{id}` segment.
fn pattern_of<'p>(segments: &[&'p str]) -> Option<(&'static str, Option<&'p str>)> {
    // A trailing slash (or `//`) names no endpoint, not an empty id.
    if segments.contains(&"") {
        return None;
    }
    Some(match segments {
        ["openapi.json"] => ("/api/v1/openapi.json", None),
        ["jobs"] => ("/api/v1/jobs", None),
        ["jobs", id] => ("/api/v1/jobs/{id}", Some(*id)),
        ["companies"] => ("/api/v1/companies", None),
        ["companies", id] => ("/api/v1/companies/{id}", Some(*id)),
        ["webhooks"] => ("/api/v1/webhooks", None),
        ["webhooks", id] => ("/api/v1/webhooks/{id}", Some(*id)),
        ["webhooks", id, "deliveries"] => ("/api/v1/webhooks/{id}/deliveries", Some(*id)),
        ["webhooks", id, "test"] => ("/api/v1/webhooks/{id}/test", Some(*id)),
        ["usage"] => ("/api/v1/usage", None),
        _ => return None,
    })
}

fn no_params(req: &Request<Bytes>) -> Result<(), ApiError> {
    Params::parse(req.uri().query(), &[], &[]).map(drop)
}

/// An endpoint that takes no body: none, or an empty JSON object, as a client library that
/// always sends one may.
fn no_body(req: &Request<Bytes>) -> Result<(), ApiError> {
    /// An object without fields.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoFields {}
    if req.body().trim_ascii().is_empty() {
        return Ok(());
    }
    json_object::<NoFields>(req, &[], "without fields (or no body at all)").map(drop)
}

pub(crate) async fn route(api: &Api, req: &Request<Bytes>) -> Result<Reply, ApiError> {
    let path = req.uri().path();
    let no_route = || ApiError::NoRoute {
        under_api: path.starts_with(PREFIX),
    };
    let rest = path
        .strip_prefix(PREFIX)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or_else(no_route)?;
    // A segment is read percent-decoded: RFC 3986 (6.2.2.2) makes an encoded unreserved
    // character the character itself, and a client library may encode more, such as the
    // braces of a braced id (`%7B…%7D`). One whose bytes are not UTF-8 stays as sent, which
    // matches no path and is no id, and so is named as sent.
    let decoded: Vec<Cow<'_, str>> = rest
        .split('/')
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .unwrap_or(Cow::Borrowed(s))
        })
        .collect();
    let segments: Vec<&str> = decoded.iter().map(|s| s.as_ref()).collect();
    let (pattern, id) = pattern_of(&segments).ok_or_else(no_route)?;
    let (_, methods, allow) = ROUTES
        .iter()
        .find(|(p, _, _)| *p == pattern)
        .ok_or_else(no_route)?;
    if req.method() == Method::OPTIONS {
        // Says what the path takes, like the 405 does: no key needed, nothing metered.
        return Ok(Reply::options(allow));
    }
    let method = match req.method() {
        &Method::HEAD => &Method::GET,
        other => other,
    };
    if !methods.split(", ").any(|m| m == method.as_str()) {
        return Err(ApiError::MethodNotAllowed { allow });
    }
    if pattern == "/api/v1/openapi.json" {
        no_params(req)?;
        return Ok(Reply::new(
            StatusCode::OK,
            Some(Bytes::from_static(OPENAPI_JSON.as_bytes())),
            None,
        ));
    }
    // A missing or invalid key is a 401 before any parameter is looked at.
    let key = api_key(req.headers())?;
    let caller = api.service().authenticate(&key)?;
    let id = id.unwrap_or_default();
    match (pattern, method) {
        ("/api/v1/jobs", _) => search_jobs(api, &key, req).await,
        ("/api/v1/jobs/{id}", _) => {
            no_params(req)?;
            let id = JobId::parse(id)?;
            let found = api.service().get_job_json(&key, id).await?;
            let company = match &found.value.company {
                Some(c) => Some(api.company_json(c).ok_or_else(|| {
                    unreadable(format!("companies/{}", c.id), "cannot be written as JSON")
                })?),
                None => None,
            };
            let body = job_detail_json(&found.value, company.as_deref())
                .ok_or_else(|| unreadable(format!("jobs/{id}"), "is not a JSON object"))?;
            Ok(Reply::json_bytes(body, Some(found.quota)))
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
            // A key whose plan cannot register webhooks learns that before fixing its body.
            caller.require_webhooks()?;
            let new = webhook_body(req)?;
            let created = match idempotency_key(req.headers())? {
                Some(once) => {
                    api.service()
                        .create_webhook_idempotent(&key, new, once)
                        .await?
                }
                None => {
                    let created = api.service().create_webhook(&key, new).await?;
                    Metered {
                        value: WebhookCreation {
                            subscription: created.value,
                            replayed: false,
                        },
                        quota: created.quota,
                    }
                }
            };
            let sub = &created.value.subscription;
            let mut reply = Reply::json(&WebhookView::of(sub, true), Some(created.quota));
            // A replay answers as the first request was answered, and says it is one.
            reply.status = StatusCode::CREATED;
            reply.location = Some(format!("{PREFIX}/webhooks/{}", sub.id));
            reply.replayed = created.value.replayed;
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
        ("/api/v1/webhooks/{id}", &Method::PATCH) => {
            no_params(req)?;
            let id = WebhookId::parse(id)?;
            caller.require_webhooks()?;
            let change = webhook_change(req)?;
            let changed = api.service().update_webhook(&key, id, change).await?;
            Ok(Reply::json(
                &WebhookView::of(&changed.value, false),
                Some(changed.quota),
            ))
        }
        ("/api/v1/webhooks/{id}", &Method::DELETE) => {
            no_params(req)?;
            let done = api
                .service()
                .delete_webhook(&key, WebhookId::parse(id)?)
                .await?;
            Ok(Reply::new(StatusCode::NO_CONTENT, None, Some(done.quota)))
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
        ("/api/v1/webhooks/{id}/test", _) => {
            no_params(req)?;
            let id = WebhookId::parse(id)?;
            caller.require_webhooks()?;
            no_body(req)?;
            let queued = api.service().test_webhook(&key, id).await?;
            let mut reply = Reply::json(&queued.value, Some(queued.quota));
            reply.status = StatusCode::ACCEPTED;
            Ok(reply)
        }
        ("/api/v1/usage", _) => {
            no_params(req)?;
            let (report, quota) = api.service().usage_with_quota(&key).await?;
            Ok(Reply::json(&report, Some(quota)))
        }
        _ => Err(no_route()),
    }
}

/// A stored record that cannot be sent: a storage fault (500), not the caller's.
fn unreadable(key: String, reason: &str) -> ApiError {
    ApiError::Service(ServiceError::Store(StoreError::Corrupt {
        key,
        reason: reason.to_owned(),
    }))
}

async fn search_jobs(api: &Api, key: &ApiKey, req: &Request<Bytes>) -> Result<Reply, ApiError> {
    let params = Params::parse(req.uri().query(), JOB_PARAMS, &["domain", "seniority"])?;
    let query = job_query(&params)?;
    let filters = query.filter.clone();
    let found = api.service().search_jobs_json(key, query).await?;
    let page = found.value;
    let envelope = ListEnvelope::new(
        (),
        page.page.get(),
        page.per_page.get(),
        page.total,
        "/api/v1/jobs",
        &params.without_page(),
        FiltersMeta { filters },
    );
    // The jobs go out as the store keeps them: no decoding and encoding per job.
    let body = envelope
        .to_json_around(&page.jobs)
        .ok_or_else(|| unreadable("a search page".to_owned(), "could not be encoded"))?;
    Ok(Reply::json_bytes(body, Some(found.quota)))
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
        FiltersMeta {
            filters: json!({ "funding_stage": stage }),
        },
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
    #[serde(default)]
    seniority: Option<Vec<String>>,
    #[serde(default)]
    q: Option<String>,
    #[serde(default)]
    company: Option<String>,
    #[serde(default)]
    min_confidence: Option<f64>,
}

/// The body of `PATCH /webhooks/{id}`, before validation: a field left out stays as it is,
/// and `null` sets it back to what `POST` leaves it at (`callback_url` has no such default).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookPatchBody {
    #[serde(default, deserialize_with = "present")]
    callback_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    domain_filters: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "present")]
    remote_only: Option<Option<bool>>,
    #[serde(default, deserialize_with = "present")]
    seniority: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "present")]
    q: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    company: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    min_confidence: Option<Option<f64>>,
    #[serde(default, deserialize_with = "present")]
    status: Option<Option<SubscriptionStatus>>,
}

/// A field that is present, `null` or not: serde reads a missing one as `None` by default.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

fn webhook_change(req: &Request<Bytes>) -> Result<WebhookChange, ApiError> {
    let body: WebhookPatchBody = json_object(
        req,
        WEBHOOK_CHANGE_FIELDS,
        &format!(
            "with any of callback_url (string), {FILTER_FIELDS}, status (\"active\" or \"disabled\")"
        ),
    )?;
    let callback_url = match body.callback_url {
        Some(Some(raw)) => Some(CallbackUrl::parse(&raw)?),
        Some(None) => return Err(DomainError::new("callback_url", "cannot be null").into()),
        None => None,
    };
    let status = match body.status {
        Some(None) => return Err(DomainError::new("status", "must be active or disabled").into()),
        other => other.flatten(),
    };
    let min_confidence = body
        .min_confidence
        .map(|c| c.map(confidence).transpose())
        .transpose()?;
    Ok(WebhookChange {
        callback_url,
        domain_filters: body
            .domain_filters
            .map(|d| labels("domain_filters", d, DomainTag::parse))
            .transpose()?,
        remote_only: body.remote_only.map(|r| r.unwrap_or(false)),
        seniority: body
            .seniority
            .map(|s| labels("seniority", s, Seniority::parse))
            .transpose()?,
        q: body.q.map(|q| search_text("q", q)).transpose()?,
        company: body
            .company
            .map(|c| search_text("company", c))
            .transpose()?,
        min_confidence,
        status,
    })
}

/// A `min_confidence` body field.
fn confidence(raw: f64) -> Result<Confidence, DomainError> {
    Confidence::new(raw).map_err(|e| DomainError::new("min_confidence", e.reason))
}

/// Parses each label of a list field, naming the field in errors.
fn labels<T>(
    field: &'static str,
    raw: Option<Vec<String>>,
    parse: impl Fn(&str) -> Result<T, DomainError>,
) -> Result<Vec<T>, DomainError> {
    let raw = raw.unwrap_or_default();
    if raw.len() > 50 {
        return Err(DomainError::new(field, "takes at most 50 entries"));
    }
    raw.iter()
        .map(|t| parse(t).map_err(|e| DomainError::new(field, e.reason)))
        .collect()
}

/// A saved-search text field: checked as search text in a query is; blank means none.
fn search_text(field: &'static str, raw: Option<String>) -> Result<Option<String>, DomainError> {
    match raw {
        Some(t) if t.trim().is_empty() => Ok(None),
        Some(t) => super::params::check_search_text(field, &t).map(|()| Some(t)),
        None => Ok(None),
    }
}

/// The `Idempotency-Key` header of `POST /webhooks`, if sent.
fn idempotency_key(headers: &http::HeaderMap) -> Result<Option<IdempotencyKey>, ApiError> {
    let Some(raw) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let text = raw.to_str().map_err(|_| {
        DomainError::new(
            "Idempotency-Key",
            "must be visible ASCII characters, such as a UUID",
        )
    })?;
    Ok(Some(IdempotencyKey::parse(text)?))
}

/// A JSON object body read as `T`, which takes the fields `takes`; `fields` says what they
/// are, for the error.
fn json_object<T: serde::de::DeserializeOwned>(
    req: &Request<Bytes>,
    takes: &'static [&'static str],
    fields: &str,
) -> Result<T, ApiError> {
    let compressed = req
        .headers()
        .get_all(http::header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .find(|coding| !coding.is_empty() && !coding.eq_ignore_ascii_case(b"identity"));
    if let Some(coding) = compressed {
        return Err(ApiError::UnsupportedContentEncoding {
            coding: String::from_utf8_lossy(coding).chars().take(64).collect(),
        });
    }
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
    // serde would also read a positional array into the struct: only an object is a body.
    if !req.body().trim_ascii_start().starts_with(b"{") {
        return Err(ApiError::InvalidBody(format!(
            "the body must be a JSON object {fields}"
        )));
    }
    let mut body = serde_json::Deserializer::from_slice(req.body());
    let value = serde_path_to_error::deserialize(&mut body).map_err(|e| {
        // A field of the wrong type or value is named, and so is a field the endpoint does
        // not take, as a query parameter would be; whatever else is wrong (the syntax, the
        // nesting) is the body's. Within a field's value a syntax error counts as a wrong
        // value: serde_json reports a number where a word such as `status` belongs as
        // "expected value", although the JSON itself is sound.
        let (data, syntax) = (e.inner().is_data(), e.inner().is_syntax());
        let key = match e.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.as_str()),
            _ => None,
        };
        match key.map(|k| (k, takes.iter().find(|f| **f == k))) {
            Some((_, Some(field))) if data || syntax => ApiError::InvalidParameter(
                DomainError::new(field, format!("has the wrong type or value: {}", e.inner())),
            ),
            Some((key, None)) if data => ApiError::unknown_parameter(key, takes),
            _ => ApiError::InvalidBody(format!(
                "the body must be a JSON object {fields}: {}",
                e.inner()
            )),
        }
    })?;
    // Whatever follows the object would otherwise be dropped unread, a second object too.
    body.end().map_err(|e| {
        ApiError::InvalidBody(format!(
            "the body must be one JSON object {fields}, with nothing after it: {e}"
        ))
    })?;
    Ok(value)
}

/// The fields of a `PATCH /webhooks/{id}` body: those of a `POST`, then `status`.
const WEBHOOK_CHANGE_FIELDS: &[&str] = &[
    "callback_url",
    "domain_filters",
    "remote_only",
    "seniority",
    "q",
    "company",
    "min_confidence",
    "status",
];

/// The fields of a `POST /webhooks` body.
const NEW_WEBHOOK_FIELDS: &[&str] = match WEBHOOK_CHANGE_FIELDS.split_last() {
    Some((_status, rest)) => rest,
    None => &[],
};

/// The filters a subscription takes, for body errors.
const FILTER_FIELDS: &str = "domain_filters and seniority (arrays of strings), remote_only (boolean), q and company (strings), min_confidence (number)";

fn webhook_body(req: &Request<Bytes>) -> Result<NewWebhook, ApiError> {
    let body: WebhookBody = json_object(
        req,
        NEW_WEBHOOK_FIELDS,
        &format!("with callback_url (string) and optionally {FILTER_FIELDS}"),
    )?;
    let raw_url = body
        .callback_url
        .ok_or_else(|| DomainError::new("callback_url", "is required"))?;
    let min_confidence = body.min_confidence.map(confidence).transpose()?;
    Ok(NewWebhook {
        callback_url: CallbackUrl::parse(&raw_url)?,
        domain_filters: labels("domain_filters", body.domain_filters, DomainTag::parse)?,
        remote_only: body.remote_only.unwrap_or(false),
        seniority: labels("seniority", body.seniority, Seniority::parse)?,
        q: search_text("q", body.q)?,
        company: search_text("company", body.company)?,
        min_confidence,
    })
}
