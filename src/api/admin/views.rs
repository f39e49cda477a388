//! What the admin API sends: keys without their hashes, subscriptions with their owner and
//! delivery health, never a secret (a key only in the answer that issues it).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::api::views::WebhookView;
use crate::domain::{ApiKeyRecord, BillingStatus, KeyId, Plan};
use crate::service::WebhookHealth;

/// An issued key as the operator sees it.
#[derive(Serialize)]
pub(super) struct KeyView<'a> {
    pub id: KeyId,
    /// The key itself, in the answer that issues it only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<&'a str>,
    pub hint: &'a str,
    pub label: &'a str,
    pub plan: Plan,
    pub billing_status: BillingStatus,
    pub billing_anchor: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
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

/// A subscription as its owner sees it (without the secret), with whose it is and how its
/// deliveries fare.
#[derive(Serialize)]
pub(super) struct WebhookHealthView<'a> {
    #[serde(flatten)]
    pub subscription: WebhookView<'a>,
    /// The key that registered it.
    pub owner: KeyId,
    /// When its deliveries started failing without a success since.
    pub failing_since: Option<DateTime<Utc>>,
    /// Deliveries queued for it and not yet settled.
    pub pending_deliveries: usize,
}

impl<'a> WebhookHealthView<'a> {
    pub(super) fn of(h: &'a WebhookHealth) -> Self {
        Self {
            subscription: WebhookView::of(&h.subscription, false),
            owner: h.subscription.owner,
            failing_since: h.subscription.failing_since,
            pending_deliveries: h.pending_deliveries,
        }
    }
}

/// `{"data": [...]}`: the admin lists are whole, not paged (keys and subscriptions number in
/// the thousands at most).
#[derive(Serialize)]
pub(super) struct DataList<T: Serialize> {
    pub data: Vec<T>,
}
