//! What the admin API sends of subscriptions: with their owner and delivery health, never a
//! secret.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;

use crate::api::views::Webhook;
use crate::domain::KeyId;
use crate::service::WebhookHealth;

/// A webhook subscription as its owner sees it (never its secret), with the key that
/// registered it and how its deliveries fare.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Webhook")]
pub(crate) struct WebhookHealthView {
    #[serde(flatten)]
    pub subscription: Webhook,
    /// The key that registered it.
    pub owner: KeyId,
    /// When its deliveries started failing without a success since, or null; failing for 5
    /// days disables it.
    pub failing_since: Option<DateTime<Utc>>,
    /// Deliveries queued for it and not yet settled.
    pub pending_deliveries: usize,
}

impl WebhookHealthView {
    pub(super) fn of(h: &WebhookHealth) -> Self {
        Self {
            subscription: Webhook::of(&h.subscription),
            owner: h.subscription.owner,
            failing_since: h.subscription.failing_since,
            pending_deliveries: h.pending_deliveries,
        }
    }
}
