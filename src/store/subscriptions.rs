//! What the subscriptions part of the service keeps: webhook subscriptions, the outbox's event
//! log, the fan-out cursors and the delivery queue, each behind a trait of its own, and
//! [`SubscriptionStore`], their union. See [`FanOut`] for how the log becomes deliveries.
//!
//! Every read a tenant's request makes costs what it returns: one subscription's deliveries
//! are found without reading another's.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{FanOut, Pruned, StoreResult};
use crate::domain::{
    Delivery, DeliveryId, EventId, LoggedEvent, OutboxEvent, Subscription, WebhookId,
};

/// Webhook subscriptions, with their secrets as the service hands them over (sealed when it
/// has a secret key).
#[async_trait]
pub trait WebhookStore: Send + Sync + std::fmt::Debug + 'static {
    /// Creates or replaces a webhook subscription, durably. A new subscription's fan-out
    /// cursor starts at the log's head: it receives the events logged after it.
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()>;
    /// Deletes a subscription and its cursor and fails its pending deliveries; returns whether
    /// it existed. Costs what that subscription holds, never more.
    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool>;
    /// One webhook subscription by id.
    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Subscription>>;
    /// Every webhook subscription.
    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>>;
}

/// The outbox's events: the log that job writes append to
/// ([`JobWrite::events`](super::JobWrite::events)), and events outside it, with their
/// payloads.
#[async_trait]
pub trait EventLog: Send + Sync + std::fmt::Debug + 'static {
    /// Writes an event outside the log (such as `webhook.test`) with its deliveries, all or
    /// nothing, durably.
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()>;
    /// One outbox event with its payload (its `deliveries` list is empty).
    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>>;
    /// The position of the newest log entry; 0 when nothing was ever logged.
    async fn log_head(&self) -> StoreResult<u64>;
    /// Up to `limit` log entries after position `after`, oldest first.
    async fn log_after(&self, after: u64, limit: usize) -> StoreResult<Vec<LoggedEvent>>;
}

/// Fan-out: each subscription's cursor in the log, and the steps that move cursors and make
/// deliveries of the entries they pass.
#[async_trait]
pub trait FanOutStore: Send + Sync + std::fmt::Debug + 'static {
    /// Every subscription's fan-out cursor: the last log position fanned out to it.
    async fn fan_out_cursors(&self) -> StoreResult<Vec<(WebhookId, u64)>>;
    /// How many of one subscription's deliveries are pending.
    async fn pending_count(&self, webhook: WebhookId) -> StoreResult<usize>;
    /// Applies one fan-out step, all or nothing; `false` (and nothing written) when a cursor
    /// was not where the step read it, or its subscription is gone. The step need not be
    /// durable when this returns, only once a later durable write of the store is (such as
    /// the attempt that sends one of its deliveries): a step lost to a crash is made again
    /// from the log, with the same events and so the same `webhook-id`s.
    async fn fan_out(&self, step: &FanOut) -> StoreResult<bool>;
}

/// The deliveries the delivery worker works through: due ones found, claimed under a lease,
/// updated after each attempt, and removed with the rest of the outbox once settled.
#[async_trait]
pub trait DeliveryQueue: Send + Sync + std::fmt::Debug + 'static {
    /// The pending deliveries due at or before `due` and not leased at `due` (see
    /// [`DeliveryQueue::claim_delivery`]): of each subscription, its `per_subscription`
    /// soonest due, so a subscription with a long backlog cannot hide another's.
    async fn due_deliveries(
        &self,
        due: DateTime<Utc>,
        per_subscription: usize,
    ) -> StoreResult<Vec<Delivery>>;
    /// Every delivery of one subscription, newest first, up to `limit`.
    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>>;
    /// One delivery by id.
    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>>;
    /// Claims one delivery for an attempt: returns it when it is pending, due at `now` and
    /// not leased at `now`, and leases it to the caller until `until`, so no other process
    /// sharing the store attempts it meanwhile. The lease ends when the delivery is written
    /// ([`DeliveryQueue::put_delivery`]) or at `until`, whichever comes first: a process that
    /// dies mid-attempt delays the delivery, never loses it.
    async fn claim_delivery(
        &self,
        id: DeliveryId,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;
    /// Updates a delivery after an attempt, durably, ending its lease.
    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()>;
    /// The outbox's retention, run by the delivery worker. Removes, up to `limit` of each:
    /// deliveries settled (succeeded or failed) before `settled_before` (see
    /// [`Delivery::settled_at`]); events created before `events_before`; and the log entries
    /// every cursor has passed (a store may count those in groups, and remove more than
    /// `limit`). Call it again while it removes `limit` or more of something.
    async fn prune(
        &self,
        settled_before: DateTime<Utc>,
        events_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Pruned>;
}

/// Everything the subscriptions part keeps, in one: implemented for every type that
/// implements its parts, never by hand.
pub trait SubscriptionStore: WebhookStore + EventLog + FanOutStore + DeliveryQueue {}

impl<T> SubscriptionStore for T where
    T: WebhookStore + EventLog + FanOutStore + DeliveryQueue + ?Sized
{
}
