//! What the operator reads and changes without an API key: the calls behind the admin API.
//! None of them is metered or rate limited; the frontend that offers them authenticates its
//! own credential first (see `crate::api::admin`).

use std::sync::Arc;

use super::webhooks::WebhookChange;
use super::{Access, Catalog, ServiceError, ServiceResult, Subscriptions};
use crate::domain::{
    ApiKeyRecord, Company, CompanyId, Job, JobId, KeyId, Subscription, SubscriptionStatus,
    UsageReport, WebhookId,
};

/// A webhook subscription as the operator sees it: its state and what waits for it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WebhookHealth {
    /// The subscription.
    pub subscription: Subscription,
    /// Deliveries queued for it and not yet settled.
    pub pending_deliveries: usize,
}

impl Catalog {
    /// One stored job, active or closed, as stored.
    pub(super) async fn stored_job(&self, id: JobId) -> ServiceResult<Arc<Job>> {
        self.store
            .get_job(id)
            .await?
            .ok_or(ServiceError::NotFound { resource: "job" })
    }

    /// One stored company.
    pub(super) fn stored_company(&self, id: CompanyId) -> ServiceResult<Arc<Company>> {
        self.read_companies()
            .get(&id)
            .cloned()
            .ok_or(ServiceError::NotFound {
                resource: "company",
            })
    }
}

impl Access {
    /// One issued key's record (never the key itself: only its hash is kept).
    pub(super) fn key_record(&self, id: KeyId) -> ServiceResult<ApiKeyRecord> {
        self.keys
            .find(id)
            .map(|entry| entry.record.clone())
            .ok_or(ServiceError::NotFound { resource: "key" })
    }

    /// A key's usage in its current billing period, as its owner's `GET /usage` reports it.
    pub(super) async fn key_usage(&self, id: KeyId) -> ServiceResult<UsageReport> {
        let entry = self
            .keys
            .find(id)
            .ok_or(ServiceError::NotFound { resource: "key" })?;
        Ok(self.usage_of(&entry).await?.0)
    }
}

impl Subscriptions {
    /// Every webhook subscription of every key, oldest first, with its pending deliveries.
    pub(super) async fn all_webhooks(&self) -> ServiceResult<Vec<WebhookHealth>> {
        let mut all: Vec<Subscription> = self.read_webhooks().values().cloned().collect();
        all.sort_by_key(|w| (w.created_at, w.id));
        let store = &self.store;
        let mut health = Vec::with_capacity(all.len());
        for subscription in all {
            let pending_deliveries = store.pending_count(subscription.id).await?;
            health.push(WebhookHealth {
                subscription,
                pending_deliveries,
            });
        }
        Ok(health)
    }

    /// One subscription with its pending deliveries.
    pub(super) async fn webhook_health(&self, id: WebhookId) -> ServiceResult<WebhookHealth> {
        let subscription = self.any_webhook(id)?;
        let pending_deliveries = self.store.pending_count(id).await?;
        Ok(WebhookHealth {
            subscription,
            pending_deliveries,
        })
    }

    /// Enables or disables any key's subscription, as its owner's `PATCH` does: a disabled one
    /// is queued nothing and its pending deliveries fail; enabled again, its failure streak
    /// starts over.
    pub(super) async fn set_webhook_status(
        &self,
        id: WebhookId,
        status: SubscriptionStatus,
    ) -> ServiceResult<WebhookHealth> {
        {
            let _writer = self.writes.lock(id.0).await;
            let mut sub = self.any_webhook(id)?;
            let change = WebhookChange {
                status: Some(status),
                ..WebhookChange::default()
            };
            change.apply_to(&mut sub, self.shared.now(), "disabled by the operator");
            self.store_webhook(&sub).await?;
            self.write_webhooks().insert(sub.id, sub.clone());
            tracing::info!(webhook_id = %sub.id, status = ?sub.status, "webhook changed by the operator");
        }
        if status == SubscriptionStatus::Active {
            self.wake_deliveries();
        }
        self.webhook_health(id).await
    }

    fn any_webhook(&self, id: WebhookId) -> ServiceResult<Subscription> {
        self.read_webhooks()
            .get(&id)
            .cloned()
            .ok_or(ServiceError::NotFound {
                resource: "webhook",
            })
    }
}
