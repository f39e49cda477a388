//! `/admin/v1/keys`: issue, list, read, change and revoke API keys, and read a key's usage.

use bytes::Bytes;
use http::{Request, StatusCode};

use super::json_with_status;
use super::wire::{AdminKey, DataList, KeyChange, NewKeyRequest};
use crate::api::error::ApiError;
use crate::api::handlers::{json_object, no_body, no_params, Handled};
use crate::api::Reply;
use crate::domain::KeyId;
use crate::service::{JobListingsService, NewKey};

/// Issues a key: 201 with the key, shown only here (the service keeps its hash).
pub(super) async fn create(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let body: NewKeyRequest = json_object(
        req,
        &["plan", "label", "billing_anchor"],
        "with `plan` and, optionally, `label` and `billing_anchor`",
    )?;
    let (key, record) = service
        .create_key(NewKey {
            plan: body.plan,
            billing_anchor: body.billing_anchor,
            label: body.label,
        })
        .await?;
    Ok(json_with_status(
        StatusCode::CREATED,
        &AdminKey::of(&record, Some(key.expose())),
    ))
}

/// Every issued key, oldest first.
pub(super) async fn list(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let records = service.list_keys();
    let data = records.iter().map(|r| AdminKey::of(r, None)).collect();
    Ok(Reply::json(&DataList { data }, None))
}

/// One key's record.
pub(super) async fn get(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let record = service.key_record(KeyId::parse(id)?)?;
    Ok(Reply::json(&AdminKey::of(&record, None), None))
}

/// Changes a key's plan or billing status (at least one).
pub(super) async fn update(
    service: &JobListingsService,
    id: &str,
    req: &Request<Bytes>,
) -> Handled {
    no_params(req)?;
    let id = KeyId::parse(id)?;
    let change: KeyChange = json_object(
        req,
        &["plan", "billing_status"],
        "with `plan`, `billing_status` or both",
    )?;
    if change.plan.is_none() && change.billing_status.is_none() {
        return Err(ApiError::InvalidBody(
            "send `plan`, `billing_status` or both: there is nothing else to change".into(),
        )
        .into());
    }
    let mut record = service.key_record(id)?;
    if let Some(plan) = change.plan {
        record = service.set_plan(id, plan).await?;
    }
    if let Some(status) = change.billing_status {
        record = service.set_billing_status(id, status).await?;
    }
    Ok(Reply::json(&AdminKey::of(&record, None), None))
}

/// Revokes a key for good; revoking it again changes nothing and answers the same.
pub(super) async fn revoke(
    service: &JobListingsService,
    id: &str,
    req: &Request<Bytes>,
) -> Handled {
    no_params(req)?;
    no_body(req)?;
    let record = service.revoke_key(KeyId::parse(id)?).await?;
    Ok(Reply::json(&AdminKey::of(&record, None), None))
}

/// A key's usage in its current billing period.
pub(super) async fn usage(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    Ok(Reply::json(
        &service.key_usage(KeyId::parse(id)?).await?,
        None,
    ))
}
