//! The outbox on sled ([`WebhookStore`], [`EventLog`], [`FanOutStore`], [`DeliveryQueue`]):
//! subscriptions and their fan-out cursors, the outbox log, events and deliveries, each index
//! keyed so that one subscription's reads and deletes touch only its own records. Scans run
//! off the async threads.

use super::outbox_keys::{after_prefix, decode_segment, event_time_key, time_key, DeliveryTrees};
use super::*;
use crate::store::{FanOut, Pruned};

/// The meta key of the newest log position: a big-endian `u64`.
pub(super) const LOG_HEAD: &[u8] = b"outbox_log_head";

/// A position as its key in the log and the cursors tree.
fn position_of(stored: &[u8]) -> u64 {
    version_of(Some(stored))
}

#[async_trait]
impl WebhookStore for SledStore {
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()> {
        let (k, v) = (webhook.id.0.as_bytes().to_vec(), encode(webhook)?);
        self.durably(move |s| {
            (&s.webhooks, &s.cursors, &s.meta)
                .transaction(|(webhooks, cursors, meta)| {
                    webhooks.insert(k.as_slice(), v.as_slice())?;
                    if cursors.get(k.as_slice())?.is_none() {
                        let head = version_of(meta.get(LOG_HEAD)?.as_deref());
                        cursors.insert(k.as_slice(), &head.to_be_bytes())?;
                    }
                    Ok(())
                })
                .map_err(tx_error)
        })
        .await
    }

    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool> {
        self.durably(move |s| {
            let pending = s.pending_of(id)?;
            (
                &s.webhooks,
                &s.cursors,
                &s.deliveries,
                &s.due,
                &s.by_webhook,
                &s.settled,
            )
                .transaction(
                    |(webhooks, cursors, deliveries, due, by_webhook, settled)| {
                        let existed = webhooks.remove(id.0.as_bytes().as_slice())?.is_some();
                        cursors.remove(id.0.as_bytes().as_slice())?;
                        let trees = DeliveryTrees {
                            deliveries,
                            due,
                            by_webhook,
                            settled,
                        };
                        for d in &pending {
                            let mut failed = d.clone();
                            failed.status = DeliveryStatus::Failed;
                            failed.last_error = Some("subscription deleted".to_owned());
                            trees.write(&failed)?;
                        }
                        Ok(existed)
                    },
                )
                .map_err(tx_error)
        })
        .await
    }

    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Subscription>> {
        Self::get(&self.webhooks, id.0.as_bytes())
    }

    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>> {
        Self::scan(&self.webhooks, None, usize::MAX)
    }
}

#[async_trait]
impl EventLog for SledStore {
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()> {
        let event = event.clone();
        self.durably(move |s| {
            (
                &s.events,
                &s.events_by_time,
                &s.deliveries,
                &s.due,
                &s.by_webhook,
                &s.settled,
            )
                .transaction(|(events, by_time, deliveries, due, by_webhook, settled)| {
                    insert_event(events, by_time, &event)?;
                    let trees = DeliveryTrees {
                        deliveries,
                        due,
                        by_webhook,
                        settled,
                    };
                    event.deliveries.iter().try_for_each(|d| trees.write(d))
                })
                .map_err(tx_error)
        })
        .await
    }

    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>> {
        Self::get(&self.events, id.0.as_bytes())
    }

    async fn log_head(&self) -> StoreResult<u64> {
        Ok(version_of(
            self.meta.get(LOG_HEAD).map_err(backend)?.as_deref(),
        ))
    }

    async fn log_after(&self, after: u64, limit: usize) -> StoreResult<Vec<LoggedEvent>> {
        self.blocking(move |s| {
            let first = after.saturating_add(1);
            // The segment holding `first`, if any, starts at or before it.
            let start = match s.log.range(..=first.to_be_bytes()).next_back() {
                Some(item) => item.map_err(backend)?.0.to_vec(),
                None => first.to_be_bytes().to_vec(),
            };
            let mut out = Vec::new();
            for item in s.log.range(start..) {
                let (key, value) = item.map_err(backend)?;
                let base = position_of(&key);
                let entries = decode_segment(&key, &value)?;
                for (position, entry) in (base..).zip(entries) {
                    if out.len() >= limit {
                        return Ok(out);
                    }
                    if position > after {
                        out.push(entry.logged(position));
                    }
                }
            }
            Ok(out)
        })
        .await
    }
}

#[async_trait]
impl FanOutStore for SledStore {
    async fn fan_out_cursors(&self) -> StoreResult<Vec<(WebhookId, u64)>> {
        self.blocking(|s| {
            s.cursors
                .iter()
                .map(|item| {
                    let (k, v) = item.map_err(backend)?;
                    let id = uuid::Uuid::from_slice(&k).map_err(|e| StoreError::Corrupt {
                        key: "fan_out_cursors".to_owned(),
                        reason: e.to_string(),
                    })?;
                    Ok((WebhookId(id), position_of(&v)))
                })
                .collect()
        })
        .await
    }

    async fn pending_count(&self, webhook: WebhookId) -> StoreResult<usize> {
        self.blocking(move |s| Ok(s.due.scan_prefix(webhook.0.as_bytes()).count()))
            .await
    }

    async fn fan_out(&self, step: &FanOut) -> StoreResult<bool> {
        let step = step.clone();
        // Not flushed: sled's flush is the whole database's, so the attempt that sends one of
        // these deliveries makes the step durable when it records itself.
        self.blocking(move |s| {
            let _writing = s.writing();
            (
                &s.cursors,
                &s.events,
                &s.events_by_time,
                &s.deliveries,
                &s.due,
                &s.by_webhook,
                &s.settled,
            )
                .transaction(
                    |(cursors, events, by_time, deliveries, due, by_webhook, settled)| {
                        for m in &step.cursors {
                            let at = cursors.get(m.webhook.0.as_bytes())?;
                            if at.as_deref().map(position_of) != Some(m.from) {
                                return Ok(false);
                            }
                        }
                        for m in &step.cursors {
                            cursors
                                .insert(m.webhook.0.as_bytes().as_slice(), &m.to.to_be_bytes())?;
                        }
                        for event in &step.events {
                            if events.get(event.id.0.as_bytes())?.is_none() {
                                insert_event(events, by_time, event)?;
                            }
                        }
                        let trees = DeliveryTrees {
                            deliveries,
                            due,
                            by_webhook,
                            settled,
                        };
                        step.deliveries.iter().try_for_each(|d| trees.write(d))?;
                        Ok(true)
                    },
                )
                .map_err(tx_error)
        })
        .await
    }
}

#[async_trait]
impl DeliveryQueue for SledStore {
    async fn due_deliveries(
        &self,
        due: DateTime<Utc>,
        per_subscription: usize,
    ) -> StoreResult<Vec<Delivery>> {
        self.blocking(move |s| {
            let mut out = Vec::new();
            let mut from: Vec<u8> = Vec::new();
            // One range per subscription with pending deliveries, then a jump past it.
            while let Some(first) = s.due.range(from.as_slice()..).next() {
                let (key, _) = first.map_err(backend)?;
                let Some(webhook) = key.get(..16).and_then(|w| uuid::Uuid::from_slice(w).ok())
                else {
                    break;
                };
                out.extend(s.due_of(WebhookId(webhook), due, per_subscription)?);
                match after_prefix(&key) {
                    Some(next) => from = next,
                    None => break,
                }
            }
            Ok(out)
        })
        .await
    }

    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>> {
        self.blocking(move |s| s.deliveries_of_webhook(webhook, limit))
            .await
    }

    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>> {
        Self::get(&self.deliveries, id.0.as_bytes())
    }

    async fn claim_delivery(
        &self,
        id: DeliveryId,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let due = Self::get::<Delivery>(&self.deliveries, id.0.as_bytes())?
            .filter(|d| d.status == DeliveryStatus::Pending && d.next_attempt_at <= now);
        Ok(due.filter(|_| self.leases.take(id, now, until)))
    }

    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()> {
        let new = delivery.clone();
        self.durably(move |s| {
            (&s.deliveries, &s.due, &s.by_webhook, &s.settled)
                .transaction(|(deliveries, due, by_webhook, settled)| {
                    DeliveryTrees {
                        deliveries,
                        due,
                        by_webhook,
                        settled,
                    }
                    .write(&new)
                })
                .map_err(tx_error)
        })
        .await?;
        self.leases.end(delivery.id);
        Ok(())
    }

    async fn prune(
        &self,
        settled_before: DateTime<Utc>,
        events_before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Pruned> {
        self.durably(move |s| {
            Ok(Pruned {
                deliveries: s.prune_settled(settled_before, limit)?,
                events: s.prune_events(events_before, limit)?,
                log_entries: s.prune_log(limit)?,
            })
        })
        .await
    }
}

/// Stores an event without its deliveries, with its entry in the retention index.
fn insert_event(
    events: &TransactionalTree,
    by_time: &TransactionalTree,
    event: &OutboxEvent,
) -> Result<(), ConflictableTransactionError<StoreError>> {
    let bare = OutboxEvent {
        deliveries: Vec::new(),
        ..event.clone()
    };
    events.insert(
        event.id.0.as_bytes().as_slice(),
        encode(&bare).map_err(abort)?,
    )?;
    by_time.insert(event_time_key(event), &[] as &[u8])?;
    Ok(())
}

impl SledStore {
    /// Runs blocking sled reads off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SledStore) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || work(&this))
            .await
            .map_err(backend)?
    }

    /// One subscription's pending deliveries, soonest due first, through the due index:
    /// never another subscription's. Blocking.
    fn pending_of(&self, webhook: WebhookId) -> StoreResult<Vec<Delivery>> {
        self.due_of(webhook, DateTime::<Utc>::MAX_UTC, usize::MAX)
    }

    /// Up to `limit` of one subscription's pending deliveries due at `due` and not leased
    /// then, soonest first; only those are read. Blocking.
    fn due_of(
        &self,
        webhook: WebhookId,
        due: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<Delivery>> {
        let mut end = webhook.0.as_bytes().to_vec();
        end.extend_from_slice(&time_key(due));
        end.extend_from_slice(&[0xff; 16]);
        let mut list = Vec::new();
        for item in self.due.range(webhook.0.as_bytes().to_vec()..end) {
            if list.len() >= limit {
                break;
            }
            let (key, _) = item.map_err(backend)?;
            let Some(id) = key
                .get(24..40)
                .and_then(|id| uuid::Uuid::from_slice(id).ok())
            else {
                continue;
            };
            if self.leases.held(DeliveryId(id), due) {
                continue;
            }
            if let Some(d) = Self::get::<Delivery>(&self.deliveries, id.as_bytes())? {
                list.push(d);
            }
        }
        Ok(list)
    }

    /// The latest `limit` deliveries of one subscription (latest next attempt first),
    /// through the by-subscription index: it reads those only, never another subscription's
    /// nor the rest of its own. Blocking.
    fn deliveries_of_webhook(
        &self,
        webhook: WebhookId,
        limit: usize,
    ) -> StoreResult<Vec<Delivery>> {
        let mut list = Vec::new();
        for item in self.by_webhook.scan_prefix(webhook.0.as_bytes()).rev() {
            if list.len() >= limit {
                break;
            }
            let (key, _) = item.map_err(backend)?;
            let Some(id) = key.get(24..40) else { continue };
            if let Some(d) = Self::get::<Delivery>(&self.deliveries, id)? {
                list.push(d);
            }
        }
        Ok(list)
    }

    /// Removes up to `limit` deliveries settled before `before`, with their index entries.
    fn prune_settled(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize> {
        let mut doomed = Vec::new();
        for item in self.settled.range(..time_key(before)).take(limit) {
            let (key, by_webhook) = item.map_err(backend)?;
            doomed.push((key, by_webhook));
        }
        let mut records = sled::Batch::default();
        let mut index = sled::Batch::default();
        let mut owners = sled::Batch::default();
        for (key, by_webhook) in &doomed {
            let Some(id) = key.get(8..24) else { continue };
            records.remove(id);
            owners.remove(by_webhook.as_ref());
            index.remove(key.as_ref());
        }
        // Records first: an index entry left by a crash here points at nothing, which every
        // reader skips and the next prune removes.
        self.deliveries.apply_batch(records).map_err(backend)?;
        self.by_webhook.apply_batch(owners).map_err(backend)?;
        self.settled.apply_batch(index).map_err(backend)?;
        Ok(doomed.len())
    }

    /// Removes up to `limit` events created before `before`.
    fn prune_events(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize> {
        let mut records = sled::Batch::default();
        let mut index = sled::Batch::default();
        let mut removed = 0;
        for item in self.events_by_time.range(..time_key(before)).take(limit) {
            let (key, _) = item.map_err(backend)?;
            if let Some(id) = key.get(8..24) {
                records.remove(id);
            }
            index.remove(key);
            removed += 1;
        }
        self.events.apply_batch(records).map_err(backend)?;
        self.events_by_time.apply_batch(index).map_err(backend)?;
        Ok(removed)
    }

    /// Removes up to `limit` log segments whose every entry every subscription's cursor has
    /// passed; returns the entries removed.
    fn prune_log(&self, limit: usize) -> StoreResult<usize> {
        let mut passed = version_of(self.meta.get(LOG_HEAD).map_err(backend)?.as_deref());
        for item in self.cursors.iter() {
            let (_, v) = item.map_err(backend)?;
            passed = passed.min(position_of(&v));
        }
        let mut batch = sled::Batch::default();
        let mut removed = 0;
        for item in self.log.range(..=passed.to_be_bytes()).take(limit) {
            let (key, value) = item.map_err(backend)?;
            let entries = decode_segment(&key, &value)?.len();
            let last = position_of(&key) + u64::try_from(entries).unwrap_or(u64::MAX) - 1;
            if entries > 0 && last > passed {
                break;
            }
            batch.remove(key);
            removed += entries;
        }
        self.log.apply_batch(batch).map_err(backend)?;
        Ok(removed)
    }
}
