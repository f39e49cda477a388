//! What the admin API sends: keys without their hashes, subscriptions with their owner and
//! delivery health, never a secret (a key only in the answer that issues it).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;

use crate::api::views::WebhookView;
use crate::domain::{ApiKeyRecord, BillingStatus, KeyId, Plan};
use crate::service::WebhookHealth;

/// An issued API key's record: never the key itself (but in the answer that issues it) nor
/// its hash.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Key")]
pub(crate) struct KeyView<'a> {
    /// The record's identifier, which the commands and these paths take.
    pub id: KeyId,
    /// The key itself: in the answer to `POST /admin/v1/keys` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^jl_live_[A-Za-z0-9]{38}$"))]
    pub key: Option<&'a str>,
    /// Its first characters, such as `jl_live_Ab3d…`, to tell keys apart.
    pub hint: &'a str,
    /// Free-form label, such as the customer's e-mail.
    pub label: &'a str,
    /// The paid plan.
    pub plan: Plan,
    /// Only keys whose billing is active are accepted by the public API.
    pub billing_status: BillingStatus,
    /// The instant monthly periods are counted from.
    pub billing_anchor: DateTime<Utc>,
    /// When the key was issued.
    pub created_at: DateTime<Utc>,
    /// When the key was revoked, or null.
    pub revoked_at: Option<DateTime<Utc>>,
}

impl<'a> KeyView<'a> {
    pub(super) fn of(r: &'a ApiKeyRecord, key: Option<&'a str>) -> Self {
        Self {
            id: r.id,
            key,
            hint: &r.hint,
            label: &r.label,
            plan: r.plan,
            billing_status: r.billing_status,
            billing_anchor: r.billing_anchor,
            created_at: r.created_at,
            revoked_at: r.revoked_at,
        }
    }
}

/// A webhook subscription as its owner sees it (never its secret), with the key that
/// registered it and how its deliveries fare.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Webhook")]
pub(crate) struct WebhookHealthView<'a> {
    #[serde(flatten)]
    pub subscription: WebhookView<'a>,
    /// The id of the key that registered it (see `GET /admin/v1/keys/{id}`).
    pub owner: KeyId,
    /// When its deliveries started failing without a success since, or null; failing for 5
    /// days disables it.
    pub failing_since: Option<DateTime<Utc>>,
    /// Deliveries queued for it and not yet settled.
    pub pending_deliveries: usize,
}

impl<'a> WebhookHealthView<'a> {
    pub(super) fn of(h: &'a WebhookHealth) -> Self {
        Self {
            subscription: WebhookView::of(&h.subscription),
            owner: h.subscription.owner,
            failing_since: h.subscription.failing_since,
            pending_deliveries: h.pending_deliveries,
        }
    }
}

/// `{"data": [...]}`: the admin lists are whole, not paged (keys and subscriptions number in
/// the thousands at most).
#[derive(Serialize, JsonSchema)]
pub(crate) struct DataList<T: Serialize> {
    pub data: Vec<T>,
}
