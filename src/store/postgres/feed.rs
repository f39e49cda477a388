//! The change feed: positions handed out in commit order, read back by every replica, and a
//! LISTEN connection that wakes them when something was written.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio_postgres::{AsyncMessage, NoTls};
use uuid::Uuid;

use super::{pg_error, PgStore};
use crate::domain::{CompanyId, JobId, KeyId, WebhookId};
use crate::store::{Change, ChangeFeed, ChangedRecord, StoreError, StoreResult};

impl ChangedRecord {
    fn parts(self) -> (&'static str, Uuid) {
        match self {
            ChangedRecord::Job(id) => ("job", id.0),
            ChangedRecord::Company(id) => ("company", id.0),
            ChangedRecord::Key(id) => ("key", id.0),
            ChangedRecord::Webhook(id) => ("webhook", id.0),
        }
    }

    fn from_parts(kind: &str, id: Uuid) -> Option<Self> {
        match kind {
            "job" => Some(ChangedRecord::Job(JobId(id))),
            "company" => Some(ChangedRecord::Company(CompanyId(id))),
            "key" => Some(ChangedRecord::Key(KeyId(id))),
            "webhook" => Some(ChangedRecord::Webhook(WebhookId(id))),
            _ => None,
        }
    }
}

/// Takes the change feed's lock for the rest of the transaction: every write that records a
/// change takes it, so writers that hold it run one at a time. Taken again by the same
/// transaction, it is held once more, at no cost.
pub(super) async fn lock(tx: &tokio_postgres::Transaction<'_>) -> StoreResult<()> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('job_listings_changes:' || current_schema()))",
        &[],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

/// Records changes inside a write transaction. The advisory lock is held until the
/// transaction ends, so positions become visible in the order they were handed out and a
/// reader that has seen position `n` never later finds a smaller one committed.
pub(super) async fn record(
    tx: &tokio_postgres::Transaction<'_>,
    channel: &str,
    records: &[ChangedRecord],
) -> StoreResult<()> {
    if records.is_empty() {
        return Ok(());
    }
    lock(tx).await?;
    let (kinds, ids): (Vec<&str>, Vec<Uuid>) = records.iter().map(|r| r.parts()).unzip();
    tx.execute(
        "INSERT INTO changes (position, kind, id)
         SELECT nextval('change_position'), kind, id FROM unnest($1::text[], $2::uuid[]) AS c(kind, id)",
        &[&kinds, &ids],
    )
    .await
    .map_err(pg_error)?;
    tx.execute("SELECT pg_notify($1, '')", &[&channel])
        .await
        .map_err(pg_error)?;
    Ok(())
}

#[async_trait]
impl ChangeFeed for PgStore {
    async fn head(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT coalesce(max(position), 0) FROM changes", &[])
            .await
            .map_err(pg_error)?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    async fn changes_after(&self, after: u64, limit: usize) -> StoreResult<Vec<Change>> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT position, kind, id FROM changes WHERE position > $1 ORDER BY position LIMIT $2",
                &[&to_i64(after), &to_i64(limit as u64)],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|row| {
                let position: i64 = row.get(0);
                let kind: &str = row.get(1);
                let record = ChangedRecord::from_parts(kind, row.get(2)).ok_or_else(|| {
                    StoreError::Corrupt {
                        key: format!("changes/{position}"),
                        reason: format!("unknown record kind `{kind}`"),
                    }
                })?;
                Ok(Change {
                    position: u64::try_from(position).unwrap_or(0),
                    record,
                })
            })
            .collect()
    }

    async fn wait(&self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.inner.woken.notified()).await;
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Keeps one connection listening on the store's channel and wakes the follower on every
/// notification, reconnecting after a second when the connection drops (the follower's
/// periodic catch-up read covers what was missed meanwhile). Stops when `woken` is the last
/// reference, i.e. the store was dropped.
pub(super) fn spawn_listener(
    config: tokio_postgres::Config,
    channel: String,
    woken: std::sync::Weak<Notify>,
) {
    tokio::spawn(async move {
        loop {
            if woken.strong_count() == 0 {
                return;
            }
            if let Err(e) = listen(&config, &channel, &woken).await {
                tracing::warn!(error = %e, "the change listener lost its connection; reconnecting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
}

async fn listen(
    config: &tokio_postgres::Config,
    channel: &str,
    woken: &std::sync::Weak<Notify>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let client = Arc::new(client);
    let listener = client.clone();
    let listen = format!("LISTEN \"{channel}\"");
    // The statement completes only while the connection is polled below.
    tokio::spawn(async move { listener.batch_execute(&listen).await });
    loop {
        let message = tokio::select! {
            message = std::future::poll_fn(|cx| connection.poll_message(cx)) => message,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {
                if woken.strong_count() == 0 {
                    return Ok(());
                }
                continue;
            }
        };
        match message {
            Some(Ok(AsyncMessage::Notification(_))) => match woken.upgrade() {
                Some(notify) => notify.notify_one(),
                None => return Ok(()),
            },
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => return Ok(()),
        }
    }
}
