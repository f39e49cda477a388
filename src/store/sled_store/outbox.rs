//! [`OutboxStore`] on sled: subscriptions, outbox events and their deliveries, with the
//! due-time index the delivery worker reads.

use super::*;

#[async_trait]
impl OutboxStore for SledStore {
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()> {
        let encoded = EncodedEvent::of(event)?;
        self.durably(move |s| {
            (&s.events, &s.deliveries, &s.due, &s.by_webhook)
                .transaction(|(events, deliveries, due, by_webhook)| {
                    encoded.insert(events, deliveries, due, by_webhook)
                })
                .map_err(tx_error)
        })
        .await
    }

    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()> {
        let (k, v) = (webhook.id.0.as_bytes().to_vec(), encode(webhook)?);
        self.durably(move |s| s.webhooks.insert(k, v).map(drop).map_err(backend))
            .await
    }

    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool> {
        let this = self.clone();
        let orphans: Vec<Delivery> = tokio::task::spawn_blocking(move || {
            this.deliveries_of_webhook(id).map(|all| {
                all.into_iter()
                    .filter(|d| d.status == DeliveryStatus::Pending)
                    .collect()
            })
        })
        .await
        .map_err(backend)??;
        self.durably(move |s| {
            (&s.webhooks, &s.deliveries, &s.due)
                .transaction(|(webhooks, deliveries, due)| {
                    let existed = webhooks.remove(id.0.as_bytes().as_slice())?.is_some();
                    for d in &orphans {
                        let mut failed = d.clone();
                        failed.status = DeliveryStatus::Failed;
                        failed.last_error = Some("subscription deleted".to_owned());
                        let bytes = encode(&failed).map_err(abort)?;
                        deliveries.insert(d.id.0.as_bytes().as_slice(), bytes)?;
                        due.remove(due_key(d))?;
                    }
                    Ok(existed)
                })
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

    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>> {
        Self::get(&self.events, id.0.as_bytes())
    }

    async fn pending_deliveries(
        &self,
        due: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<Delivery>> {
        let mut out = Vec::new();
        for item in self.due.iter() {
            if out.len() >= limit {
                break;
            }
            let (k, _) = item.map_err(backend)?;
            let Some(id) = k.get(8..24) else { continue };
            let Some(delivery) = Self::get::<Delivery>(&self.deliveries, id)? else {
                continue;
            };
            if delivery.next_attempt_at > due {
                break;
            }
            if delivery.status == DeliveryStatus::Pending && !self.leases.held(delivery.id, due) {
                out.push(delivery);
            }
        }
        Ok(out)
    }

    async fn deliveries_of(&self, webhook: WebhookId, limit: usize) -> StoreResult<Vec<Delivery>> {
        let this = self.clone();
        let mut list = tokio::task::spawn_blocking(move || this.deliveries_of_webhook(webhook))
            .await
            .map_err(backend)??;
        list.sort_by(|a, b| {
            b.next_attempt_at
                .cmp(&a.next_attempt_at)
                .then(a.id.cmp(&b.id))
        });
        list.truncate(limit);
        Ok(list)
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
        let old: Option<Delivery> = Self::get(&self.deliveries, delivery.id.0.as_bytes())?;
        let new = delivery.clone();
        let bytes = encode(&new)?;
        self.durably(move |s| {
            (&s.deliveries, &s.due)
                .transaction(|(deliveries, due)| {
                    if let Some(old) = &old {
                        due.remove(due_key(old))?;
                    }
                    deliveries.insert(new.id.0.as_bytes().as_slice(), bytes.as_slice())?;
                    if new.status == DeliveryStatus::Pending {
                        due.insert(due_key(&new), &[] as &[u8])?;
                    }
                    Ok(())
                })
                .map_err(tx_error)
        })
        .await?;
        self.leases.end(delivery.id);
        Ok(())
    }
}

impl SledStore {
    /// Every delivery of one subscription, through the by-subscription index: it reads that
    /// subscription's deliveries only, never another customer's. Blocking; run it off the
    /// async threads.
    fn deliveries_of_webhook(&self, webhook: WebhookId) -> StoreResult<Vec<Delivery>> {
        let mut list = Vec::new();
        for item in self.by_webhook.scan_prefix(webhook.0.as_bytes()) {
            let (key, _) = item.map_err(backend)?;
            let Some(id) = key.get(16..32) else { continue };
            if let Some(d) = Self::get::<Delivery>(&self.deliveries, id)? {
                list.push(d);
            }
        }
        Ok(list)
    }
}
