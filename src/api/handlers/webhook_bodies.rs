//! The bodies of `POST /webhooks` and `PATCH /webhooks/{id}`, and the `Idempotency-Key`
//! header, read into the service's typed values.

use bytes::Bytes;
use http::Request;
use schemars::JsonSchema;
use serde::Deserialize;

use super::json_object;
use crate::api::error::ApiError;
use crate::api::views::WebhookEventType;
use crate::domain::{
    CallbackUrl, ChangeKind, Confidence, DomainError, DomainTag, IdempotencyKey, Seniority,
    SubscriptionStatus,
};
use crate::service::{NewWebhook, WebhookChange};

/// Request body for creating a webhook. Unknown fields are rejected with 400.
///
/// Read as it is sent, then validated field by field: the schema says what validation takes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "NewWebhook")]
pub(crate) struct WebhookBody {
    /// HTTPS URL that will receive deliveries. Plain http and private/loopback addresses are
    /// accepted only in local development mode.
    // Left out or null is refused as "is required" by `webhook_body`.
    #[schemars(required, with = "String", url, length(max = 2048))]
    #[schemars(regex(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://"))]
    callback_url: Option<String>,
    /// Domain tags to subscribe to; each 1-40 characters of letters, digits, '-', '_', '.',
    /// '+'. Empty (the default) means all domains.
    #[serde(default)]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50), extend("default" = []))]
    domain_filters: Option<Vec<String>>,
    /// Deliver only remote jobs.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    remote_only: Option<bool>,
    /// Optional saved search: seniority levels (any of).
    #[serde(default)]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50))]
    seniority: Option<Vec<String>>,
    /// Optional saved search: words that must all appear in role, company name or post text.
    /// Control characters other than tabs and line breaks are refused.
    #[serde(default)]
    #[schemars(with = "Option<SearchText>")]
    q: Option<String>,
    /// Optional saved search: words that must all appear in the company name. Control
    /// characters other than tabs and line breaks are refused.
    #[serde(default)]
    #[schemars(with = "Option<SearchText>")]
    company: Option<String>,
    /// Optional saved search: minimum classification confidence.
    #[serde(default)]
    #[schemars(range(min = 0, max = 1))]
    min_confidence: Option<f64>,
    /// The events to send: any of `job.new`, `job.updated` and `job.closed`. Left out, empty
    /// or null: `["job.new"]` only, as before there was a choice. A `job.updated` or
    /// `job.closed` delivery carries the job as it is when the event is sent, with the same
    /// filters applied (a closed job for `job.closed`).
    #[serde(default)]
    #[schemars(with = "Option<Vec<WebhookEventType>>", length(max = 50))]
    event_types: Option<Vec<String>>,
}

/// A label as a filter takes it: a domain tag or a seniority level.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: labels are read as strings, then parsed.
struct Label(
    #[schemars(length(min = 1, max = 40), regex(pattern = "^[A-Za-z0-9._+-]{1,40}$"))] String,
);

/// Saved-search text, checked as the `q` and `company` query parameters are.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: the text is read as a string, then checked.
struct SearchText(
    #[schemars(
        length(max = 500),
        regex(pattern = "^[^\\u0000-\\u0008\\u000E-\\u001F\\u007F-\\u0084\\u0086-\\u009F]*$")
    )]
    String,
);

/// Request body for changing a webhook: every field is optional, a field left out stays as
/// it is, and null sets a filter back to what creating leaves it at (all domains, any
/// seniority, no words, no lowest confidence, remote and on-site jobs). Unknown fields are
/// rejected with 400.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "WebhookPatch")]
pub(crate) struct WebhookPatchBody {
    /// HTTPS URL that will receive deliveries. Plain http and private/loopback addresses are
    /// accepted only in local development mode.
    // Null is refused: a subscription always has a URL.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", url, length(max = 2048))]
    #[schemars(regex(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://"))]
    callback_url: Option<Option<String>>,
    /// Domain tags to subscribe to; each 1-40 characters of letters, digits, '-', '_', '.',
    /// '+'. Empty means all domains.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50))]
    domain_filters: Option<Option<Vec<String>>>,
    /// Deliver only remote jobs.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<bool>")]
    remote_only: Option<Option<bool>>,
    /// Optional saved search: seniority levels (any of).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50))]
    seniority: Option<Option<Vec<String>>>,
    /// Optional saved search: words that must all appear in role, company name or post text.
    /// Control characters other than tabs and line breaks are refused.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<SearchText>")]
    q: Option<Option<String>>,
    /// Optional saved search: words that must all appear in the company name. Control
    /// characters other than tabs and line breaks are refused.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<SearchText>")]
    company: Option<Option<String>>,
    /// Optional saved search: minimum classification confidence.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<f64>", range(min = 0, max = 1))]
    min_confidence: Option<Option<f64>>,
    /// The events to send: any of `job.new`, `job.updated` and `job.closed`. Empty or null:
    /// `["job.new"]` only.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<Vec<WebhookEventType>>", length(max = 50))]
    event_types: Option<Option<Vec<String>>>,
    /// `active` enables a disabled webhook again, with the same id and secret (its failure
    /// streak starts over); `disabled` stops it: while disabled, new jobs are not queued for
    /// it and its pending deliveries fail.
    // Null is refused: a subscription is either.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "SubscriptionStatus")]
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

pub(super) fn webhook_change(req: &Request<Bytes>) -> Result<WebhookChange, ApiError> {
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
        event_types: body
            .event_types
            .map(|kinds| labels("event_types", kinds, event_type))
            .transpose()?,
        status,
    })
}

/// One entry of `event_types`: a job event a webhook may be sent.
fn event_type(raw: &str) -> Result<ChangeKind, DomainError> {
    ChangeKind::parse(raw)
        .filter(|k| ChangeKind::WEBHOOK.contains(k))
        .ok_or_else(|| {
            DomainError::new(
                "event_types",
                format!(
                    "takes any of job.new, job.updated and job.closed; `{}` is not one",
                    raw.chars().take(64).collect::<String>()
                ),
            )
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
        Some(t) => crate::api::params::check_search_text(field, &t).map(|()| Some(t)),
        None => Ok(None),
    }
}

/// The `Idempotency-Key` header of `POST /webhooks`, if sent.
pub(super) fn idempotency_key(
    headers: &http::HeaderMap,
) -> Result<Option<IdempotencyKey>, ApiError> {
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

/// The fields of a `PATCH /webhooks/{id}` body: those of a `POST`, then `status`.
const WEBHOOK_CHANGE_FIELDS: &[&str] = &[
    "callback_url",
    "domain_filters",
    "remote_only",
    "seniority",
    "q",
    "company",
    "min_confidence",
    "event_types",
    "status",
];

/// The fields of a `POST /webhooks` body.
const NEW_WEBHOOK_FIELDS: &[&str] = match WEBHOOK_CHANGE_FIELDS.split_last() {
    Some((_status, rest)) => rest,
    None => &[],
};

/// The filters a subscription takes, for body errors.
const FILTER_FIELDS: &str = "domain_filters and seniority (arrays of strings), remote_only (boolean), q and company (strings), min_confidence (number), event_types (array of job.new, job.updated, job.closed)";

pub(super) fn webhook_body(req: &Request<Bytes>) -> Result<NewWebhook, ApiError> {
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
        event_types: labels("event_types", body.event_types, event_type)?,
    })
}
