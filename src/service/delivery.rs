//! The webhook delivery worker: reads due deliveries from the outbox, signs and sends them
//! through the notifier off the request path, and records every attempt.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use chrono::{DateTime, Utc};
use tokio::sync::{watch, Notify, Semaphore};

use super::metrics::{DeliveryOutcome, StoreWrite};
use super::rate_limit::RateLimit;
use super::{Access, CallResult, Caller, Catalog, ServiceError, ServiceResult, Subscriptions};
use crate::domain::{
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, KeyId, Subscription, SubscriptionStatus,
    WebhookId,
};
use crate::store::{JobStore, Pruned};
use crate::webhooks::{payload, sign, test_event, AttemptOutcome, WebhookRequest};

/// Attempts kept on a delivery's record.
const HISTORY: usize = 20;

/// A duration in the largest whole unit that fits: "5 days", "3 hours", "90 seconds".
fn span(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    let (n, unit) = match secs {
        s if s >= 86_400 => (s / 86_400, "day"),
        s if s >= 3_600 => (s / 3_600, "hour"),
        s if s >= 60 => (s / 60, "minute"),
        s => (s, "second"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

fn release(in_flight: &InFlight, id: DeliveryId) {
    if let Ok(mut map) = in_flight.lock() {
        map.remove(&id);
    }
}

/// Deliveries in flight: each one's subscription and the key that owns it, so one receiver's
/// and one customer's shares can be bounded.
type InFlight = Arc<Mutex<HashMap<DeliveryId, (WebhookId, KeyId)>>>;

/// Fan-out steps per round of the worker before it sends what is due; a round whose step
/// moved a cursor runs again at once.
const FAN_OUT_STEPS: usize = 1;

/// Runs until stopped: wakes on new work, on a finished attempt, or every `poll_interval`,
/// fans logged events out to subscriptions and sends what is due.
/// Holds the parts weakly, so a dropped service is not kept alive.
pub(super) async fn worker(
    subscriptions: Weak<Subscriptions>,
    access: Weak<Access>,
    catalog: Weak<Catalog>,
    mut stop: watch::Receiver<bool>,
    wake: Arc<Notify>,
) {
    let in_flight: InFlight = Arc::default();
    let Some(slots) = subscriptions.upgrade().map(|s| {
        let config = &s.shared.config.delivery;
        Arc::new(Semaphore::new(config.max_in_flight.max(1)))
    }) else {
        return;
    };
    let mut round = 0usize;
    loop {
        let (Some(service), Some(access), Some(catalog)) =
            (subscriptions.upgrade(), access.upgrade(), catalog.upgrade())
        else {
            return;
        };
        let jobs: Arc<dyn JobStore> = catalog.store.clone();
        let poll = service.shared.config.delivery.poll_interval;
        // One step, then what is due: a long fan-out never keeps due deliveries waiting.
        match service.fan_out(&access, &jobs, FAN_OUT_STEPS).await {
            Ok(progress) if progress.moved => wake.notify_one(),
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "fanning out the outbox log failed; will retry"),
        }
        if let Err(e) = service
            .dispatch_due(&access, &in_flight, &slots, &stop, round)
            .await
        {
            tracing::error!(error = %e, "reading the outbox failed; will retry");
        }
        round = round.wrapping_add(1);
        drop((service, access, catalog, jobs));
        tokio::select! {
            _ = tokio::time::sleep(poll) => {}
            _ = wake.notified() => {}
            _ = stop.changed() => return,
        }
    }
}

/// Orders due deliveries so that every subscription gets its first before any gets its
/// second, starting from a different subscription each round: when slots run short, they go
/// round the subscriptions instead of to whichever came first.
fn round_robin(due: Vec<Delivery>, round: usize) -> Vec<Delivery> {
    let mut queues: Vec<std::collections::VecDeque<Delivery>> = Vec::new();
    let mut index: HashMap<WebhookId, usize> = HashMap::new();
    for d in due {
        let at = *index.entry(d.webhook_id).or_insert_with(|| {
            queues.push(Default::default());
            queues.len() - 1
        });
        queues[at].push_back(d);
    }
    if !queues.is_empty() {
        let first = round % queues.len();
        queues.rotate_left(first);
    }
    let mut out = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        out.extend(queues.iter_mut().filter_map(|q| q.pop_front()));
    }
    out
}

impl Subscriptions {
    /// Starts an attempt for due deliveries not already in flight, while slots last and no
    /// subscription or key holds more than its share of them, taking subscriptions in turn.
    async fn dispatch_due(
        self: &Arc<Self>,
        access: &Arc<Access>,
        in_flight: &InFlight,
        slots: &Arc<Semaphore>,
        stop: &watch::Receiver<bool>,
        round: usize,
    ) -> ServiceResult<()> {
        let config = &self.shared.config.delivery;
        let per_subscription = config.max_in_flight_per_subscription.max(1);
        let per_key = config.max_in_flight_per_key.max(1);
        let due = self
            .store
            .due_deliveries(self.shared.now(), per_subscription)
            .await?;
        let owners: HashMap<WebhookId, KeyId> = {
            let webhooks = self.read_webhooks();
            due.iter()
                .filter_map(|d| webhooks.get(&d.webhook_id).map(|s| (s.id, s.owner)))
                .collect()
        };
        for delivery in round_robin(due, round) {
            if slots.available_permits() == 0 {
                break;
            }
            // A deleted subscription's delivery counts against no customer: it only fails.
            let owner = owners
                .get(&delivery.webhook_id)
                .copied()
                .unwrap_or(KeyId(uuid::Uuid::nil()));
            let claimed = in_flight.lock().is_ok_and(|mut map| {
                let (busy, busy_key) = map.values().fold((0, 0), |(w, k), (hook, key)| {
                    (
                        w + usize::from(*hook == delivery.webhook_id),
                        k + usize::from(*key == owner),
                    )
                });
                if busy >= per_subscription || busy_key >= per_key || map.contains_key(&delivery.id)
                {
                    return false;
                }
                map.insert(delivery.id, (delivery.webhook_id, owner));
                true
            });
            if !claimed {
                continue;
            }
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                release(in_flight, delivery.id);
                break;
            };
            let service = self.clone();
            let access = access.clone();
            let in_flight = in_flight.clone();
            let mut stop = stop.clone();
            tokio::spawn(async move {
                let id = delivery.id;
                tokio::select! {
                    result = service.attempt_if_due(&access, id) => {
                        if let Err(e) = result {
                            tracing::error!(delivery_id = %id, error = %e, "recording a delivery attempt failed");
                        }
                    }
                    // On shutdown the attempt is dropped; the delivery stays pending and is
                    // sent again after the restart, with the same webhook-id.
                    _ = stop.wait_for(|stopped| *stopped) => {}
                }
                release(&in_flight, id);
                drop(slot);
                // A slot is free, and the subscription has room for one more delivery: look
                // for more work now rather than at the next poll.
                service.wake_deliveries();
            });
        }
        Ok(())
    }

    /// Claims a delivery in the store, which an attempt that just finished (here or in
    /// another process sharing the store) may have settled or rescheduled since the outbox was
    /// read, and attempts it only if it is still due and nobody else holds it.
    async fn attempt_if_due(&self, access: &Access, id: DeliveryId) -> ServiceResult<()> {
        let now = self.shared.now();
        let lease = chrono::Duration::from_std(self.shared.config.delivery.lease)
            .unwrap_or(chrono::Duration::MAX);
        let until = now
            .checked_add_signed(lease)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        match self.store.claim_delivery(id, now, until).await? {
            Some(d) => self.attempt(access, d).await,
            None => Ok(()),
        }
    }

    /// Records a delivery as failed without an attempt, saying why.
    async fn fail_unsent(&self, mut delivery: Delivery, reason: &str) -> ServiceResult<()> {
        delivery.status = DeliveryStatus::Failed;
        delivery.last_error = Some(reason.to_owned());
        let store = &self.store;
        self.shared
            .timed_write(StoreWrite::Deliveries, store.put_delivery(&delivery))
            .await?;
        self.shared
            .metrics
            .delivery(DeliveryOutcome::FailedUnsent, None, None);
        self.shared.stats.add_pending(-1);
        self.may_have_room(delivery.webhook_id);
        Ok(())
    }

    /// Makes one attempt of one delivery and records the outcome.
    async fn attempt(&self, access: &Access, delivery: Delivery) -> ServiceResult<()> {
        let Some(notifier) = self.notifier.clone() else {
            return Ok(());
        };
        let known = self.read_webhooks().get(&delivery.webhook_id).cloned();
        // Not known here: registered (or enabled again) on another replica moments ago, and
        // not yet brought by the follower; or deleted. The store says which.
        let subscription = match known {
            Some(known) => Some(known),
            None => self.take_in_webhook(access, delivery.webhook_id).await?,
        };
        let Some(subscription) = subscription.filter(|s| s.status == SubscriptionStatus::Active)
        else {
            return self
                .fail_unsent(delivery, "the subscription was deleted or disabled")
                .await;
        };
        if !access.keys.receives_webhooks(subscription.owner) {
            return self.fail_unsent(delivery, "the API key that registered the subscription was revoked, its billing is not active, or its plan no longer includes webhooks").await;
        }
        let Some(event) = self.store.get_event(delivery.event_id).await? else {
            return self
                .fail_unsent(delivery, "the event is missing from the outbox")
                .await;
        };
        // Pending when the subscription was disabled: what was missed stays missed, rather
        // than arriving late and out of order once it is enabled again.
        if subscription
            .enabled_again_at
            .is_some_and(|enabled| event.created_at < enabled)
        {
            return self.fail_unsent(delivery, "the subscription was disabled while this delivery was pending; it is not sent after the subscription was enabled again").await;
        }

        let started = self.shared.now();
        let body = payload(&event);
        let id = event.id.to_string();
        let timestamp = started.timestamp();
        let outcome = match sign(subscription.secret.expose(), &id, timestamp, &body) {
            Ok(signature) => {
                let request = WebhookRequest {
                    url: subscription.callback_url.clone(),
                    id,
                    timestamp,
                    signature,
                    body,
                };
                notifier.send(&request).await
            }
            Err(e) => AttemptOutcome {
                status: None,
                retry_after: None,
                error: Some(format!("could not sign: {e}")),
                latency: std::time::Duration::ZERO,
            },
        };
        self.record(delivery, &subscription, started, &outcome)
            .await
    }

    async fn record(
        &self,
        mut delivery: Delivery,
        subscription: &Subscription,
        started: DateTime<Utc>,
        outcome: &AttemptOutcome,
    ) -> ServiceResult<()> {
        let now = self.shared.now();
        let policy = &self.shared.config.delivery.retry;
        delivery.attempts += 1;
        delivery.history.push(DeliveryAttempt {
            at: started,
            status_code: outcome.status,
            latency_ms: u64::try_from(outcome.latency.as_millis()).unwrap_or(u64::MAX),
            error: outcome.error.clone(),
        });
        if delivery.history.len() > HISTORY {
            delivery.history.remove(0);
        }
        delivery.last_error.clone_from(&outcome.error);

        let gone = outcome.status == Some(410);
        let succeeded = outcome.succeeded();
        if succeeded {
            delivery.status = DeliveryStatus::Succeeded;
        } else {
            let retry_in = (!gone)
                .then(|| policy.next_delay(delivery.attempts, outcome.retry_after))
                .flatten();
            match retry_in.and_then(|d| chrono::Duration::from_std(d).ok()) {
                Some(delay) => delivery.next_attempt_at = now + delay,
                None => delivery.status = DeliveryStatus::Failed,
            }
        }
        // The receiver's status when it answered, else what stopped the attempt (a refused
        // address, a timeout, a connection error): never a bare "None".
        tracing::info!(
            delivery_id = %delivery.id,
            webhook_id = %subscription.id,
            attempt = delivery.attempts,
            status = outcome.status.map_or_else(|| "no answer".to_owned(), |s| s.to_string()),
            error = outcome.error.as_deref().unwrap_or("none"),
            ok = succeeded,
            "webhook delivery attempt"
        );
        let store = &self.store;
        self.shared
            .timed_write(StoreWrite::Deliveries, store.put_delivery(&delivery))
            .await?;
        let (counted_as, settled) = match delivery.status {
            DeliveryStatus::Succeeded => (DeliveryOutcome::Succeeded, true),
            DeliveryStatus::Pending => (DeliveryOutcome::FailedWillRetry, false),
            DeliveryStatus::Failed => (DeliveryOutcome::FailedFinal, true),
        };
        self.shared.metrics.delivery(
            counted_as,
            Some(outcome.latency),
            settled.then_some(delivery.attempts),
        );
        if settled {
            self.shared.stats.add_pending(-1);
            self.may_have_room(delivery.webhook_id);
        }

        let disable_after = policy.disable_after;
        let error = outcome.error.clone();
        self.update_subscription(subscription.id, move |sub| {
            if succeeded {
                sub.last_success_at = Some(now);
                sub.failing_since = None;
                return;
            }
            sub.last_failure_at = Some(now);
            sub.last_failure_reason = error;
            let since = *sub.failing_since.get_or_insert(now);
            let too_long =
                chrono::Duration::from_std(disable_after).is_ok_and(|limit| now - since >= limit);
            if gone {
                sub.status = SubscriptionStatus::Disabled;
                sub.disabled_reason = Some("the receiver answered 410 Gone".to_owned());
            } else if too_long && sub.status == SubscriptionStatus::Active {
                sub.status = SubscriptionStatus::Disabled;
                sub.disabled_reason = Some(format!(
                    "deliveries failed for {} without a success",
                    span(disable_after)
                ));
            }
        })
        .await
    }

    /// Applies a change to the stored subscription as it is now (another attempt may have
    /// changed it meanwhile), unless it was deleted. A disabled subscription stays disabled.
    async fn update_subscription(
        &self,
        id: WebhookId,
        change: impl FnOnce(&mut Subscription),
    ) -> ServiceResult<()> {
        let _writer = self.writes.lock(id.0).await;
        let Some(mut sub) = self.read_webhooks().get(&id).cloned() else {
            return Ok(());
        };
        let before = sub.clone();
        change(&mut sub);
        if before.status == SubscriptionStatus::Disabled {
            sub.status = before.status;
            sub.disabled_reason.clone_from(&before.disabled_reason);
        }
        // A run of successes only moves `last_success_at`; writing that to disk at most once
        // a second keeps one fsync per delivery off a busy receiver's path.
        let only_fresher_success = Subscription {
            last_success_at: before.last_success_at,
            ..sub.clone()
        } == before
            && before
                .last_success_at
                .zip(sub.last_success_at)
                .is_some_and(|(old, new)| new - old < chrono::Duration::seconds(1));
        if !only_fresher_success {
            self.store_webhook(&sub).await?;
        }
        self.write_webhooks().insert(sub.id, sub);
        Ok(())
    }

    /// Removes deliveries settled longer ago than the retention window
    /// ([`DeliveryConfig::retention`](super::DeliveryConfig::retention)) and events created
    /// before it, and the log entries every subscription has been given; runs every
    /// `prune_interval`. Works in small batches off the async threads, so tenants' requests
    /// never wait behind it.
    pub(super) async fn prune_outbox(&self) -> ServiceResult<Pruned> {
        const BATCH: usize = 1_000;
        let retention = chrono::Duration::from_std(self.shared.config.delivery.retention)
            .unwrap_or(chrono::Duration::MAX);
        let cutoff = self
            .shared
            .now()
            .checked_sub_signed(retention)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let mut pruned = Pruned::default();
        loop {
            let batch = self.store.prune(cutoff, cutoff, BATCH).await?;
            pruned.deliveries += batch.deliveries;
            pruned.events += batch.events;
            pruned.log_entries += batch.log_entries;
            let more = [batch.deliveries, batch.events, batch.log_entries]
                .iter()
                .any(|n| *n >= BATCH);
            if !more {
                break;
            }
        }
        if self.shared.replicated {
            self.recount_pending_deliveries().await?;
        }
        if pruned.total() > 0 {
            tracing::info!(
                deliveries = pruned.deliveries,
                events = pruned.events,
                log_entries = pruned.log_entries,
                "outbox pruned"
            );
        }
        Ok(pruned)
    }

    /// Wakes the delivery worker: new deliveries are due.
    pub(super) fn wake_deliveries(&self) {
        self.wake.notify_one();
    }

    /// Takes one of a subscription's test pings, or says when the next one may be queued.
    fn take_test_ping(&self, id: WebhookId) -> ServiceResult<()> {
        let per_minute = self.shared.config.delivery.test_pings_per_minute;
        let allowance = RateLimit {
            per_second: f64::from(per_minute) / 60.0,
            burst: per_minute,
        };
        let mut buckets = self.test_pings.lock().unwrap_or_else(|e| e.into_inner());
        buckets
            .entry(id)
            .or_default()
            .try_take(allowance, std::time::Instant::now())
            .map_err(|retry_after| ServiceError::TestPingsLimited {
                retry_after,
                per_minute,
            })
    }

    /// Queues a signed `webhook.test` ping to `owner`'s subscription `id` and returns its
    /// pending delivery.
    async fn queue_test_ping(&self, owner: KeyId, id: WebhookId) -> ServiceResult<Delivery> {
        let sub = self.own_webhook(owner, id)?;
        if sub.status != SubscriptionStatus::Active {
            return Err(ServiceError::WebhookDisabled {
                webhook: sub.id,
                reason: sub.disabled_reason.unwrap_or_default(),
            });
        }
        self.take_test_ping(sub.id)?;
        let event = test_event(&sub, self.shared.now());
        let store = &self.store;
        self.shared
            .timed_write(StoreWrite::Events, store.put_event(&event))
            .await?;
        self.shared
            .stats
            .add_pending(i64::try_from(event.deliveries.len()).unwrap_or(0));
        self.wake_deliveries();
        event
            .deliveries
            .into_iter()
            .next()
            .ok_or(ServiceError::NotFound {
                resource: "webhook",
            })
    }
}

impl Caller {
    /// Queues a signed `webhook.test` ping to one of the caller's subscriptions and returns
    /// its pending delivery; the worker sends it right away. Fails with
    /// [`ServiceError::PlanUpgradeRequired`] when the caller's plan no longer includes
    /// webhooks (nothing would be sent), and [`ServiceError::WebhookDisabled`] when the
    /// subscription is disabled.
    pub async fn test_webhook(&self, id: WebhookId) -> CallResult<Delivery> {
        if let Err(e) = self.require_webhooks() {
            return Err(self.refused(e).await);
        }
        self.metered(|| self.subscriptions.queue_test_ping(self.key_id(), id))
            .await
    }
}
