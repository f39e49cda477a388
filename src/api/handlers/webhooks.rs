//! `/webhooks`: register, list, read, change, delete and test subscriptions, and list their
//! deliveries. Only the owner's subscriptions are ever found.

use bytes::Bytes;
use http::{Request, StatusCode};

use serde::Serialize;

use super::webhook_bodies::{idempotency_key, webhook_body, webhook_change};
use super::{no_body, no_params, Handled};
use crate::api::error::ApiError;
use crate::api::params::{Params, PAGE_QUERY};
use crate::api::views::{ListEnvelope, NoFilters, NoFiltersMeta, Webhook, WebhookCreated};
use crate::api::Reply;
use crate::domain::{page_of, WebhookId};
use crate::service::{Caller, Metered, WebhookCreation};

/// `POST /webhooks`: 201 with the subscription and its secret, shown only now; with an
/// `Idempotency-Key` already used for the same fields, the same answer again.
pub(crate) async fn create(caller: &Caller, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    // A key whose plan cannot register webhooks learns that before fixing its body.
    caller.require_webhooks()?;
    let new = webhook_body(req)?;
    let created = match idempotency_key(req.headers())? {
        Some(once) => caller.create_webhook_idempotent(new, once).await?,
        None => {
            let created = caller.create_webhook(new).await?;
            Metered {
                value: WebhookCreation {
                    subscription: created.value,
                    replayed: false,
                },
                quota: created.quota,
            }
        }
    };
    let sub = &created.subscription;
    let mut reply = Reply::json(&WebhookCreated::of(sub), Some(created.quota));
    // A replay answers as the first request was answered, and says it is one.
    reply.status = StatusCode::CREATED;
    reply.location = Some(format!("/api/v1/webhooks/{}", sub.id));
    reply.replayed = created.replayed;
    Ok(reply)
}

/// `GET /webhooks`: a page of the caller's subscriptions, oldest first.
pub(crate) async fn list(caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), &PAGE_QUERY)?;
    let list = caller.list_webhooks().await?;
    let views: Vec<Webhook> = list.iter().map(Webhook::of).collect();
    Ok(Reply::json(
        &paged(views, &params, "/api/v1/webhooks")?,
        Some(list.quota),
    ))
}

/// `GET /webhooks/{id}`.
pub(crate) async fn get(caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let found = caller.get_webhook(WebhookId::parse(id)?).await?;
    Ok(Reply::json(&Webhook::of(&found.value), Some(found.quota)))
}

/// `PATCH /webhooks/{id}`: a field left out stays as it is.
pub(crate) async fn update(caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = WebhookId::parse(id)?;
    caller.require_webhooks()?;
    let change = webhook_change(req)?;
    let changed = caller.update_webhook(id, change).await?;
    Ok(Reply::json(
        &Webhook::of(&changed.value),
        Some(changed.quota),
    ))
}

/// `DELETE /webhooks/{id}`: 204.
pub(crate) async fn delete(caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let done = caller.delete_webhook(WebhookId::parse(id)?).await?;
    Ok(Reply::new(StatusCode::NO_CONTENT, None, Some(done.quota)))
}

/// `GET /webhooks/{id}/deliveries`: a page of the latest deliveries, latest scheduled attempt
/// first.
pub(crate) async fn deliveries(caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), &PAGE_QUERY)?;
    let id = WebhookId::parse(id)?;
    let list = caller.webhook_deliveries(id).await?;
    let path = format!("/api/v1/webhooks/{id}/deliveries");
    Ok(Reply::json(
        &paged(list.iter().collect(), &params, &path)?,
        Some(list.quota),
    ))
}

/// One page of `items`, in the list envelope every list has; these lists filter nothing.
fn paged<T: Serialize>(
    items: Vec<T>,
    params: &Params,
    path: &str,
) -> Result<ListEnvelope<Vec<T>, NoFiltersMeta>, ApiError> {
    let (page, per_page) = params.page()?;
    let total = items.len() as u64;
    Ok(ListEnvelope::new(
        page_of(items, page, per_page),
        page.get(),
        per_page.get(),
        total,
        path,
        &params.without_page(),
        NoFiltersMeta {
            filters: NoFilters {},
        },
    ))
}

/// `POST /webhooks/{id}/test`: 202 with the queued ping's delivery.
pub(crate) async fn test(caller: &Caller, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = WebhookId::parse(id)?;
    caller.require_webhooks()?;
    no_body(req)?;
    let queued = caller.test_webhook(id).await?;
    let mut reply = Reply::json(&queued.value, Some(queued.quota));
    reply.status = StatusCode::ACCEPTED;
    Ok(reply)
}
