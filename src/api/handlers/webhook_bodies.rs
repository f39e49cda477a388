//! The bodies of `POST /webhooks` and `PATCH /webhooks/{id}`, and the `Idempotency-Key`
//! header, read into the service's typed values.

use bytes::Bytes;
use http::Request;

use super::json_object;
use crate::api::error::ApiError;
use crate::api::requests::{NewWebhook as WebhookBody, WebhookPatch as WebhookPatchBody};
use crate::domain::{
    CallbackUrl, ChangeKind, Confidence, DomainError, DomainTag, IdempotencyKey, Seniority,
};
use crate::service::{NewWebhook, WebhookChange};

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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::domain::SubscriptionStatus;

    /// The names of a body type's fields, as its schema lists them.
    fn fields_of<T: schemars::JsonSchema>() -> BTreeSet<String> {
        let schema = schemars::schema_for!(T);
        let properties = schema.get("properties").and_then(|p| p.as_object());
        properties
            .into_iter()
            .flat_map(|p| p.keys().cloned())
            .collect()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn the_fields_named_in_errors_are_the_body_types_fields() {
        assert_eq!(set(NEW_WEBHOOK_FIELDS), fields_of::<WebhookBody>());
        assert_eq!(set(WEBHOOK_CHANGE_FIELDS), fields_of::<WebhookPatchBody>());
    }

    #[test]
    fn a_body_the_client_writes_is_read_back_the_same() {
        let new = WebhookBody::new("https://hooks.example.com/x")
            .domain_filters([DomainTag::parse("ai").unwrap()])
            .seniority([Seniority::parse("senior").unwrap()])
            .remote_only(true)
            .q("rust")
            .company("acme")
            .min_confidence(0.5)
            .event_types([ChangeKind::New, ChangeKind::Closed]);
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(serde_json::from_str::<WebhookBody>(&text).unwrap(), new);

        let patch = WebhookPatchBody::new()
            .callback_url("https://hooks.example.com/y")
            .domain_filters(None)
            .q(Some("go".into()))
            .status(SubscriptionStatus::Disabled);
        let text = serde_json::to_string(&patch).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::json!({
                "callback_url": "https://hooks.example.com/y",
                "domain_filters": null,
                "q": "go",
                "status": "disabled"
            })
        );
        assert_eq!(
            serde_json::from_str::<WebhookPatchBody>(&text).unwrap(),
            patch
        );
    }
}
