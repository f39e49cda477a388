//! Versioned schema migrations, applied at start-up by whichever replica gets there first.

use deadpool_postgres::Object;

use super::pg_error;
use crate::store::StoreResult;

/// Every migration, in order; a migration is never edited once released, only followed.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "jobs, companies, keys, usage, webhooks, outbox and the change feed",
        r#"
    CREATE TABLE jobs (id uuid PRIMARY KEY, doc jsonb NOT NULL);
    CREATE TABLE companies (id uuid PRIMARY KEY, doc jsonb NOT NULL);
    CREATE TABLE api_keys (id uuid PRIMARY KEY, doc jsonb NOT NULL);
    CREATE TABLE usage (
        key_id uuid PRIMARY KEY,
        period_start timestamptz NOT NULL,
        calls_used bigint NOT NULL CHECK (calls_used >= 0)
    );
    CREATE TABLE webhooks (id uuid PRIMARY KEY, doc jsonb NOT NULL);
    CREATE TABLE events (
        id uuid PRIMARY KEY,
        job_id uuid,
        kind text NOT NULL,
        doc jsonb NOT NULL
    );
    -- A job is announced once, even when two replicas ingest it at the same moment.
    CREATE UNIQUE INDEX events_one_announcement_per_job ON events (job_id)
        WHERE kind = 'job.new' AND job_id IS NOT NULL;
    CREATE TABLE deliveries (
        id uuid PRIMARY KEY,
        event_id uuid NOT NULL,
        webhook_id uuid NOT NULL,
        status text NOT NULL,
        next_attempt_at timestamptz NOT NULL,
        leased_until timestamptz,
        doc jsonb NOT NULL
    );
    CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
    CREATE INDEX deliveries_of_webhook ON deliveries (webhook_id, next_attempt_at DESC);
    CREATE SEQUENCE change_position;
    CREATE TABLE changes (
        position bigint PRIMARY KEY,
        kind text NOT NULL,
        id uuid NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
    );
    "#,
    ),
    (
        2,
        "the outbox log and fan-out cursors; deliveries due per subscription; retention",
        r#"
    CREATE SEQUENCE outbox_position;
    CREATE TABLE outbox_log (
        position bigint PRIMARY KEY,
        job_id uuid NOT NULL,
        event_id uuid NOT NULL,
        kind text NOT NULL,
        created_at timestamptz NOT NULL
    );
    -- A job is announced once, even when two replicas ingest it at the same moment.
    CREATE UNIQUE INDEX outbox_log_one_announcement_per_job ON outbox_log (job_id)
        WHERE kind = 'job.new';
    CREATE TABLE fan_out_cursors (webhook_id uuid PRIMARY KEY, position bigint NOT NULL);
    INSERT INTO fan_out_cursors (webhook_id, position) SELECT id, 0 FROM webhooks;
    ALTER TABLE events ADD COLUMN created_at timestamptz;
    UPDATE events SET created_at = (doc->>'created_at')::timestamptz;
    CREATE INDEX events_by_time ON events (created_at);
    ALTER TABLE deliveries ADD COLUMN settled_at timestamptz;
    UPDATE deliveries SET settled_at = coalesce(
            (doc->'history'->-1->>'at')::timestamptz,
            (doc->>'created_at')::timestamptz,
            next_attempt_at)
        WHERE status <> 'pending';
    CREATE INDEX deliveries_settled ON deliveries (settled_at) WHERE status <> 'pending';
    DROP INDEX deliveries_due;
    CREATE INDEX deliveries_due ON deliveries (webhook_id, next_attempt_at, id)
        WHERE status = 'pending';
    "#,
    ),
    (
        3,
        "the job change feed",
        r#"
    CREATE SEQUENCE job_feed_position;
    CREATE TABLE job_feed (
        position bigint PRIMARY KEY,
        kind text NOT NULL,
        job_id uuid NOT NULL,
        at timestamptz NOT NULL,
        doc jsonb
    );
    CREATE INDEX job_feed_by_time ON job_feed (at);
    CREATE TABLE job_feed_pruned (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        through bigint NOT NULL
    );
    INSERT INTO job_feed_pruned (through) VALUES (0);
    "#,
    ),
];

/// Applies the migrations not yet applied, in one transaction under an advisory lock, so
/// replicas starting together apply each exactly once. Returns the schema version.
pub(super) async fn apply(client: &mut Object, schema: &str) -> StoreResult<i32> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('job_listings_migrations:' || $1::text))",
        &[&schema],
    )
    .await
    .map_err(pg_error)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer PRIMARY KEY,
            description text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(pg_error)?;
    let current: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .map_err(pg_error)?
        .get(0);
    let mut version = current;
    for (number, description, sql) in MIGRATIONS.iter().filter(|(n, _, _)| *n > current) {
        tx.batch_execute(sql).await.map_err(pg_error)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, description) VALUES ($1, $2)",
            &[number, description],
        )
        .await
        .map_err(pg_error)?;
        tracing::info!(version = number, description, "database migration applied");
        version = *number;
    }
    tx.commit().await.map_err(pg_error)?;
    Ok(version)
}

/// The newest schema version this build knows.
pub(super) fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |(n, _, _)| *n)
}
