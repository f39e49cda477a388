//! The outbox on PostgreSQL ([`WebhookStore`], [`EventLog`], [`FanOutStore`],
//! [`DeliveryQueue`]): the outbox log with positions in commit order, fan-out cursors moved
//! with compare-and-set (of several replicas, one makes each delivery), and deliveries read
//! per subscription through partial indexes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio_postgres::types::Json;
use uuid::Uuid;

use super::{doc, feed, limit, pg_error, PgStore};
use crate::domain::{
    Delivery, DeliveryId, DeliveryStatus, EventId, JobEvent, JobId, LoggedEvent, OutboxEvent,
    Subscription, WebhookId,
};
use crate::store::{
    ChangedRecord, DeliveryQueue, EventLog, FanOut, FanOutStore, JobWrite, Pruned, StoreResult,
    WebhookStore,
};

fn status_name(status: DeliveryStatus) -> &'static str {
    match status {
        DeliveryStatus::Pending => "pending",
        DeliveryStatus::Succeeded => "succeeded",
        DeliveryStatus::Failed => "failed",
    }
}

async fn insert_deliveries(
    tx: &tokio_postgres::Transaction<'_>,
    deliveries: &[Delivery],
) -> StoreResult<()> {
    for d in deliveries {
        let settled_at = (d.status != DeliveryStatus::Pending).then(|| d.settled_at());
        tx.execute(
            "INSERT INTO deliveries (id, event_id, webhook_id, status, next_attempt_at, settled_at, doc)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status,
                next_attempt_at = EXCLUDED.next_attempt_at, settled_at = EXCLUDED.settled_at,
                leased_until = NULL, doc = EXCLUDED.doc",
            &[
                &d.id.0,
                &d.event_id.0,
                &d.webhook_id.0,
                &status_name(d.status),
                &d.next_attempt_at,
                &settled_at,
                &Json(d),
            ],
        )
        .await
        .map_err(pg_error)?;
    }
    Ok(())
}

/// Inserts an event without its deliveries unless it is stored already.
async fn insert_event(
    tx: &tokio_postgres::Transaction<'_>,
    event: &OutboxEvent,
) -> StoreResult<()> {
    let bare = OutboxEvent {
        deliveries: Vec::new(),
        ..event.clone()
    };
    tx.execute(
        "INSERT INTO events (id, kind, created_at, doc) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING",
        &[&event.id.0, &event.kind, &event.created_at, &Json(&bare)],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

/// Appends job writes' events to the log. The caller holds the change feed's lock, so
/// positions become visible in the order they were handed out. A job is announced once, even
/// when two replicas ingest it at the same moment.
pub(super) async fn log_events(
    tx: &tokio_postgres::Transaction<'_>,
    writes: &[JobWrite],
) -> StoreResult<()> {
    for w in writes {
        for e in &w.events {
            tx.execute(
                "INSERT INTO outbox_log (position, job_id, event_id, kind, created_at)
                 VALUES (nextval('outbox_position'), $1, $2, $3, $4) ON CONFLICT DO NOTHING",
                &[&w.job.id.0, &e.id.0, &e.kind, &e.created_at],
            )
            .await
            .map_err(pg_error)?;
        }
    }
    Ok(())
}

fn position(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

fn stored_position(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[async_trait]
impl WebhookStore for PgStore {
    async fn put_webhook(&self, webhook: &Subscription) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.execute(
            "INSERT INTO webhooks (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc",
            &[&webhook.id.0, &Json(webhook)],
        )
        .await
        .map_err(pg_error)?;
        // Under the feed's lock no log entry is waiting to commit: the head read is final.
        feed::record(
            &tx,
            &self.inner.channel,
            &[ChangedRecord::Webhook(webhook.id)],
        )
        .await?;
        tx.execute(
            "INSERT INTO fan_out_cursors (webhook_id, position)
             SELECT $1, coalesce(max(position), 0) FROM outbox_log
             ON CONFLICT (webhook_id) DO NOTHING",
            &[&webhook.id.0],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)
    }

    async fn delete_webhook(&self, id: WebhookId) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let existed = tx
            .execute("DELETE FROM webhooks WHERE id = $1", &[&id.0])
            .await
            .map_err(pg_error)?
            == 1;
        tx.execute(
            "DELETE FROM fan_out_cursors WHERE webhook_id = $1",
            &[&id.0],
        )
        .await
        .map_err(pg_error)?;
        let rows = tx
            .query(
                "SELECT doc FROM deliveries WHERE webhook_id = $1 AND status = 'pending' FOR UPDATE",
                &[&id.0],
            )
            .await
            .map_err(pg_error)?;
        let mut orphans: Vec<Delivery> =
            rows.iter().map(|r| doc(r, 0)).collect::<StoreResult<_>>()?;
        for d in &mut orphans {
            d.status = DeliveryStatus::Failed;
            d.last_error = Some("subscription deleted".to_owned());
        }
        insert_deliveries(&tx, &orphans).await?;
        feed::record(&tx, &self.inner.channel, &[ChangedRecord::Webhook(id)]).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(existed)
    }

    async fn get_webhook(&self, id: WebhookId) -> StoreResult<Option<Subscription>> {
        self.get_doc("SELECT doc FROM webhooks WHERE id = $1", id.0)
            .await
    }

    async fn scan_webhooks(&self) -> StoreResult<Vec<Subscription>> {
        self.docs("SELECT doc FROM webhooks ORDER BY id", &[]).await
    }
}

#[async_trait]
impl EventLog for PgStore {
    async fn put_event(&self, event: &OutboxEvent) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        insert_event(&tx, event).await?;
        insert_deliveries(&tx, &event.deliveries).await?;
        tx.commit().await.map_err(pg_error)
    }

    async fn get_event(&self, id: EventId) -> StoreResult<Option<OutboxEvent>> {
        self.get_doc("SELECT doc FROM events WHERE id = $1", id.0)
            .await
    }

    async fn log_head(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT coalesce(max(position), 0) FROM outbox_log", &[])
            .await
            .map_err(pg_error)?;
        Ok(position(row.get(0)))
    }

    async fn log_after(&self, after: u64, limit_to: usize) -> StoreResult<Vec<LoggedEvent>> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT position, job_id, event_id, kind, created_at FROM outbox_log
                 WHERE position > $1 ORDER BY position LIMIT $2",
                &[&stored_position(after), &limit(limit_to)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| LoggedEvent {
                position: position(r.get(0)),
                job_id: JobId(r.get(1)),
                event: JobEvent {
                    id: EventId(r.get(2)),
                    kind: r.get(3),
                    created_at: r.get(4),
                },
            })
            .collect())
    }
}

#[async_trait]
impl FanOutStore for PgStore {
    async fn fan_out_cursors(&self) -> StoreResult<Vec<(WebhookId, u64)>> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT webhook_id, position FROM fan_out_cursors", &[])
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| (WebhookId(r.get::<_, Uuid>(0)), position(r.get(1))))
            .collect())
    }

    async fn pending_count(&self, webhook: WebhookId) -> StoreResult<usize> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT count(*) FROM deliveries WHERE webhook_id = $1 AND status = 'pending'",
                &[&webhook.0],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    async fn fan_out(&self, step: &FanOut) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        for m in &step.cursors {
            let moved = tx
                .execute(
                    "UPDATE fan_out_cursors SET position = $3 WHERE webhook_id = $1 AND position = $2",
                    &[
                        &m.webhook.0,
                        &stored_position(m.from),
                        &stored_position(m.to),
                    ],
                )
                .await
                .map_err(pg_error)?;
            if moved != 1 {
                // Another replica moved it first: it made these deliveries.
                tx.rollback().await.map_err(pg_error)?;
                return Ok(false);
            }
        }
        for event in &step.events {
            insert_event(&tx, event).await?;
        }
        insert_deliveries(&tx, &step.deliveries).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(true)
    }
}

#[async_trait]
impl DeliveryQueue for PgStore {
    async fn due_deliveries(
        &self,
        due: DateTime<Utc>,
        per_subscription: usize,
    ) -> StoreResult<Vec<Delivery>> {
        self.docs(
            "SELECT doc FROM (
                SELECT doc, row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, id) AS rank
                FROM deliveries
                WHERE status = 'pending' AND next_attempt_at <= $1
                  AND (leased_until IS NULL OR leased_until <= $1)
             ) due WHERE rank <= $2",
            &[&due, &limit(per_subscription)],
        )
        .await
    }

    async fn deliveries_of(
        &self,
        webhook: WebhookId,
        limit_to: usize,
    ) -> StoreResult<Vec<Delivery>> {
        self.docs(
            "SELECT doc FROM deliveries WHERE webhook_id = $1
             ORDER BY next_attempt_at DESC, id LIMIT $2",
            &[&webhook.0, &limit(limit_to)],
        )
        .await
    }

    async fn get_delivery(&self, id: DeliveryId) -> StoreResult<Option<Delivery>> {
        self.get_doc("SELECT doc FROM deliveries WHERE id = $1", id.0)
            .await
    }

    async fn claim_delivery(
        &self,
        id: DeliveryId,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let client = self.client().await?;
        // The row lock makes this a compare-and-set: of several replicas, one gets the row.
        let row = client
            .query_opt(
                "UPDATE deliveries SET leased_until = $3
                 WHERE id = $1 AND status = 'pending' AND next_attempt_at <= $2
                   AND (leased_until IS NULL OR leased_until <= $2)
                 RETURNING doc",
                &[&id.0, &now, &until],
            )
            .await
            .map_err(pg_error)?;
        row.map(|r| doc(&r, 0)).transpose()
    }

    async fn put_delivery(&self, delivery: &Delivery) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        insert_deliveries(&tx, std::slice::from_ref(delivery)).await?;
        tx.commit().await.map_err(pg_error)
    }

    async fn prune(
        &self,
        settled_before: DateTime<Utc>,
        events_before: DateTime<Utc>,
        limit_to: usize,
    ) -> StoreResult<Pruned> {
        let client = self.client().await?;
        let n = limit(limit_to);
        let count = |removed: u64| usize::try_from(removed).unwrap_or(usize::MAX);
        let deliveries = client
            .execute(
                "DELETE FROM deliveries WHERE id IN (
                    SELECT id FROM deliveries
                    WHERE status <> 'pending' AND settled_at < $1 LIMIT $2)",
                &[&settled_before, &n],
            )
            .await
            .map_err(pg_error)?;
        let events = client
            .execute(
                "DELETE FROM events WHERE id IN (
                    SELECT id FROM events WHERE created_at < $1 LIMIT $2)",
                &[&events_before, &n],
            )
            .await
            .map_err(pg_error)?;
        let log_entries = client
            .execute(
                "DELETE FROM outbox_log WHERE position IN (
                    SELECT position FROM outbox_log
                    WHERE position <= coalesce(
                        (SELECT min(position) FROM fan_out_cursors),
                        (SELECT max(position) FROM outbox_log))
                    ORDER BY position LIMIT $1)",
                &[&n],
            )
            .await
            .map_err(pg_error)?;
        Ok(Pruned {
            deliveries: count(deliveries),
            events: count(events),
            log_entries: count(log_entries),
        })
    }
}
