//! The job change feed on PostgreSQL: one row per change with the job as written, positions
//! handed out under the change feed's lock so they become visible in commit order, on every
//! replica alike.

use chrono::{DateTime, Utc};
use tokio_postgres::types::Json;
use uuid::Uuid;

use super::{limit, pg_error, PgStore};
use crate::domain::{ChangeKind, Job, JobId};
use crate::store::{FeedBounds, FeedEntry, JobWrite, StoreError, StoreResult};

/// Appends the feed entries of job writes. The caller holds the change feed's lock
/// (`feed::record`), so positions become visible in the order they were handed out.
pub(super) async fn record_writes(
    tx: &tokio_postgres::Transaction<'_>,
    writes: &[JobWrite],
) -> StoreResult<()> {
    for w in writes {
        if let Some(kind) = w.change {
            insert(tx, kind, w.job.id, w.job.updated_at, Some(&w.job)).await?;
        }
    }
    Ok(())
}

/// Appends one feed entry; the caller holds the change feed's lock.
pub(super) async fn insert(
    tx: &tokio_postgres::Transaction<'_>,
    kind: ChangeKind,
    id: JobId,
    at: DateTime<Utc>,
    job: Option<&Job>,
) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO job_feed (position, kind, job_id, at, doc)
         VALUES (nextval('job_feed_position'), $1, $2, $3, $4)",
        &[&kind.as_str(), &id.0, &at, &job.map(Json)],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

impl PgStore {
    pub(super) async fn job_feed_after(
        &self,
        after: u64,
        limit_to: usize,
    ) -> StoreResult<Vec<FeedEntry>> {
        let client = self.client().await?;
        // A deleted job's content is not served, whatever entry kept it.
        let rows = client
            .query(
                "SELECT f.position, f.kind, f.job_id, f.at,
                        CASE WHEN EXISTS (SELECT 1 FROM jobs j WHERE j.id = f.job_id)
                             THEN f.doc END
                 FROM job_feed f WHERE f.position > $1 ORDER BY f.position LIMIT $2",
                &[&i64::try_from(after).unwrap_or(i64::MAX), &limit(limit_to)],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|row| {
                let position: i64 = row.get(0);
                let kind: String = row.get(1);
                let corrupt = |reason: String| StoreError::Corrupt {
                    key: format!("job_feed/{position}"),
                    reason,
                };
                let kind = ChangeKind::parse(&kind)
                    .ok_or_else(|| corrupt(format!("unknown kind {kind}")))?;
                let job = row
                    .try_get::<_, Option<Json<Job>>>(4)
                    .map_err(|e| corrupt(e.to_string()))?
                    .map(|Json(job)| std::sync::Arc::new(job));
                Ok(FeedEntry {
                    position: u64::try_from(position).unwrap_or(0),
                    kind,
                    job_id: JobId(row.get::<_, Uuid>(2)),
                    at: row.get(3),
                    job,
                })
            })
            .collect()
    }

    pub(super) async fn job_feed_bounds(&self) -> StoreResult<FeedBounds> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT (SELECT through FROM job_feed_pruned),
                        coalesce((SELECT max(position) FROM job_feed), 0)",
                &[],
            )
            .await
            .map_err(pg_error)?;
        let position = |col: usize| u64::try_from(row.get::<_, i64>(col)).unwrap_or(0);
        // The newest entry may have been pruned: the head is never behind what was pruned.
        Ok(FeedBounds {
            pruned_through: position(0),
            head: position(0).max(position(1)),
        })
    }

    pub(super) async fn prune_job_feed(
        &self,
        before: DateTime<Utc>,
        limit_to: usize,
    ) -> StoreResult<usize> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let removed = tx
            .query(
                "DELETE FROM job_feed WHERE position IN (
                    SELECT position FROM job_feed WHERE at < $1 ORDER BY position LIMIT $2)
                 RETURNING position",
                &[&before, &limit(limit_to)],
            )
            .await
            .map_err(pg_error)?;
        // Readers before the newest removed position have missed events; those after it
        // have not (an entry removed out of position order only moves the mark further).
        if let Some(last) = removed.iter().map(|r| r.get::<_, i64>(0)).max() {
            tx.execute(
                "UPDATE job_feed_pruned SET through = greatest(through, $1)",
                &[&last],
            )
            .await
            .map_err(pg_error)?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(removed.len())
    }
}
