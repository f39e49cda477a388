//! `/admin/v1/webhooks`: every key's subscriptions with their delivery health; enable or
//! disable one.

use bytes::Bytes;
use http::Request;
use serde::Deserialize;

use super::views::WebhookHealthView;
use super::wire::DataList;
use crate::api::handlers::{json_object, no_params, Handled};
use crate::api::Reply;
use crate::domain::{SubscriptionStatus, WebhookId};
use crate::service::JobListingsService;

/// The body of `PATCH /admin/v1/webhooks/{id}`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "WebhookStatus")]
pub(crate) struct StatusChange {
    /// `active` enables the subscription, `disabled` stops it.
    status: SubscriptionStatus,
}

/// Every subscription, oldest first.
pub(super) async fn list(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let all = service.all_webhooks().await?;
    let data = all.iter().map(WebhookHealthView::of).collect();
    Ok(Reply::json(&DataList { data }, None))
}

/// One subscription.
pub(super) async fn get(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let health = service.webhook_health(WebhookId::parse(id)?).await?;
    Ok(Reply::json(&WebhookHealthView::of(&health), None))
}

/// Enables (`{"status": "active"}`) or disables (`{"status": "disabled"}`) a subscription.
pub(super) async fn update(
    service: &JobListingsService,
    id: &str,
    req: &Request<Bytes>,
) -> Handled {
    no_params(req)?;
    let id = WebhookId::parse(id)?;
    let change: StatusChange =
        json_object(req, &["status"], "with `status`: `active` or `disabled`")?;
    let health = service.set_webhook_status(id, change.status).await?;
    Ok(Reply::json(&WebhookHealthView::of(&health), None))
}
