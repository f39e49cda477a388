//! The bodies of `POST /webhooks` and `PATCH /webhooks/{id}`, and the `Idempotency-Key`
//! header, read into the service's typed values.

use bytes::Bytes;
use http::Request;

use super::json_object;
use crate::api::error::ApiError;
use crate::api::params::{read_near, salary_floor};
use crate::api::requests::{NewWebhook as WebhookBody, WebhookPatch as WebhookPatchBody};
use crate::domain::{
    CallbackUrl, ChangeKind, Confidence, Country, DomainError, DomainTag, IdempotencyKey,
    PlacesAndPay, Seniority,
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
        country: body
            .country
            .map(|c| labels("country", c, Country::parse_code))
            .transpose()?,
        near: match (body.near, body.radius_km.flatten()) {
            (Some(Some(centre)), radius) => Some(Some(read_near(&centre, radius)?)),
            (_, Some(_)) => return Err(radius_without_near().into()),
            (Some(None), None) => Some(None),
            (None, None) => None,
        },
        remote_from: body
            .remote_from
            .map(|c| c.as_deref().map(remote_from).transpose())
            .transpose()?,
        min_salary: match (body.min_salary, body.salary_currency) {
            (None, None) => None,
            (Some(None) | None, Some(None) | None) => Some(None),
            (amount, currency) => Some(salary_floor(
                amount.flatten(),
                currency.flatten().as_deref(),
            )?),
        },
        status,
    })
}

/// The `radius_km` of a body that has no `near`.
fn radius_without_near() -> DomainError {
    DomainError::new(
        "radius_km",
        "needs near=LAT,LON, the centre it is measured from",
    )
}

/// A `remote_from` body field.
fn remote_from(raw: &str) -> Result<Country, DomainError> {
    Country::parse_code(raw).map_err(|e| DomainError::new("remote_from", e.reason))
}

/// The places and pay of a `POST /webhooks` body.
fn places_of(body: &WebhookBody) -> Result<PlacesAndPay, DomainError> {
    let near = match (&body.near, body.radius_km) {
        (Some(centre), radius) => Some(read_near(centre, radius)?),
        (None, Some(_)) => return Err(radius_without_near()),
        (None, None) => None,
    };
    let floor = salary_floor(body.min_salary, body.salary_currency.as_deref())?;
    Ok(PlacesAndPay {
        country: labels("country", body.country.clone(), Country::parse_code)?,
        near,
        remote_from: body.remote_from.as_deref().map(remote_from).transpose()?,
        min_salary: floor.and_then(|(amount, _)| amount),
        salary_currency: floor.map(|(_, currency)| currency),
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
    "country",
    "near",
    "radius_km",
    "remote_from",
    "min_salary",
    "salary_currency",
    "event_types",
    "status",
];

/// The fields of a `POST /webhooks` body.
const NEW_WEBHOOK_FIELDS: &[&str] = match WEBHOOK_CHANGE_FIELDS.split_last() {
    Some((_status, rest)) => rest,
    None => &[],
};

/// The filters a subscription takes, for body errors.
const FILTER_FIELDS: &str = "domain_filters, seniority and country (arrays of strings), remote_only (boolean), q, company, near (\"LAT,LON\"), remote_from and salary_currency (strings), min_confidence, radius_km and min_salary (numbers), event_types (array of job.new, job.updated, job.closed)";

pub(super) fn webhook_body(req: &Request<Bytes>) -> Result<NewWebhook, ApiError> {
    let body: WebhookBody = json_object(
        req,
        NEW_WEBHOOK_FIELDS,
        &format!("with callback_url (string) and optionally {FILTER_FIELDS}"),
    )?;
    let raw_url = body
        .callback_url
        .clone()
        .ok_or_else(|| DomainError::new("callback_url", "is required"))?;
    let min_confidence = body.min_confidence.map(confidence).transpose()?;
    let places = places_of(&body)?;
    Ok(NewWebhook {
        callback_url: CallbackUrl::parse(&raw_url)?,
        domain_filters: labels("domain_filters", body.domain_filters, DomainTag::parse)?,
        remote_only: body.remote_only.unwrap_or(false),
        seniority: labels("seniority", body.seniority, Seniority::parse)?,
        q: search_text("q", body.q)?,
        company: search_text("company", body.company)?,
        min_confidence,
        places,
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
            .country([Country::parse("de").unwrap()])
            .near(crate::query::Near::new(52.52, 13.405, 80.0).unwrap())
            .remote_from(Country::parse("FR").unwrap())
            .min_salary(60_000, crate::domain::Currency::parse("EUR").unwrap())
            .event_types([ChangeKind::New, ChangeKind::Closed]);
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(serde_json::from_str::<WebhookBody>(&text).unwrap(), new);
        let places = places_of(&new).unwrap();
        assert_eq!(
            places.near.map(|n| (n.lat, n.lon, n.radius_km)),
            Some((52.52, 13.405, 80.0))
        );
        assert_eq!(places.min_salary, Some(60_000));

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
