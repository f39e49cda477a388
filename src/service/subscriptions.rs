//! The subscriptions: every key's webhooks, the outbox's fan-out and the delivery worker's
//! means. Its behaviour is spread by concern: registration, fan-out, delivery, following.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::keyed_locks::KeyedLocks;
use super::metrics::StoreWrite;
use super::rate_limit::TokenBucket;
use super::{secrets, ServiceResult, Shared};
use crate::domain::{Subscription, WebhookId};
use crate::store::SubscriptionStore;
use crate::webhooks::Notifier;

/// The subscriptions: every key's webhooks, and the means to fan out and deliver.
pub(super) struct Subscriptions {
    /// What every part uses.
    pub(super) shared: Arc<Shared>,
    /// Where subscriptions, events and deliveries are kept.
    pub(super) store: Arc<dyn SubscriptionStore>,
    pub(super) webhooks: RwLock<HashMap<WebhookId, Subscription>>,
    /// Serialises writes of one subscription (change, deletion, delivery status), so a
    /// status update never resurrects a deleted subscription, and registrations of one key,
    /// so two cannot both see room under its limit; other tenants' writes never wait.
    pub(super) writes: KeyedLocks,
    /// Sends webhook deliveries; without one, deliveries wait in the outbox.
    pub(super) notifier: Option<Arc<dyn Notifier>>,
    /// Wakes the delivery worker when new deliveries are due.
    pub(super) wake: Arc<tokio::sync::Notify>,
    /// Each subscription's allowance of test pings.
    pub(super) test_pings: std::sync::Mutex<HashMap<WebhookId, TokenBucket>>,
    /// Whose turn it is among one key's subscriptions in fan-out.
    pub(super) fan_out_turn: std::sync::atomic::AtomicUsize,
    /// Subscriptions found holding their window of pending deliveries, and when.
    pub(super) full: std::sync::Mutex<HashMap<WebhookId, std::time::Instant>>,
}

impl Subscriptions {
    /// Loads the subscriptions from `store`, opening their secrets, and counts what each
    /// holds pending. Deliveries are sent through `notifier`; without one they wait.
    pub(super) async fn load(
        shared: Arc<Shared>,
        store: Arc<dyn SubscriptionStore>,
        notifier: Option<Arc<dyn Notifier>>,
    ) -> ServiceResult<Self> {
        let mut webhooks = HashMap::new();
        for stored in store.scan_webhooks().await? {
            let sub = secrets::open(stored, shared.config.secret_key.as_ref())?;
            webhooks.insert(sub.id, sub);
        }
        // What each subscription holds pending is bounded by its window: no scan.
        for id in webhooks.keys() {
            let pending = store.pending_count(*id).await?;
            shared
                .stats
                .add_pending(i64::try_from(pending).unwrap_or(i64::MAX));
        }
        if shared.config.secret_key.is_none() {
            tracing::warn!("no secret key configured: webhook secrets will be stored in clear");
        }
        Ok(Self {
            shared,
            store,
            webhooks: RwLock::new(webhooks),
            writes: Default::default(),
            notifier,
            wake: Arc::new(tokio::sync::Notify::new()),
            test_pings: Default::default(),
            fan_out_turn: Default::default(),
            full: Default::default(),
        })
    }

    /// Stores a subscription with its secret sealed (when a secret key is configured).
    pub(super) async fn store_webhook(&self, sub: &Subscription) -> ServiceResult<()> {
        let stored = secrets::seal(sub, self.shared.config.secret_key.as_ref())?;
        Ok(self
            .shared
            .timed_write(StoreWrite::Webhooks, self.store.put_webhook(&stored))
            .await?)
    }

    pub(super) fn read_webhooks(&self) -> RwLockReadGuard<'_, HashMap<WebhookId, Subscription>> {
        self.webhooks.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn write_webhooks(&self) -> RwLockWriteGuard<'_, HashMap<WebhookId, Subscription>> {
        self.webhooks.write().unwrap_or_else(|e| e.into_inner())
    }
}
