//! [`PgStore`]: the [`Store`] on PostgreSQL, so several server replicas share one state.

mod feed;
mod job_feed;
mod migrations;
mod outbox;

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use tokio_postgres::types::{Json, ToSql};
use tokio_postgres::{NoTls, Row};
use uuid::Uuid;

use super::{
    ChangeFeed, ChangedRecord, CompanyStore, DecidedOn, FeedBounds, FeedEntry, IndexSnapshotStore,
    JobFeedStore, JobStore, JobWrite, KeyStore, Store, StoreError, StoreResult, UsageCounter,
    UsageStore,
};
use crate::domain::{changed_at, ApiKeyRecord, ChangeKind, Company, CompanyId, Job, JobId, KeyId};

fn pg_error(e: impl Into<super::BackendError>) -> StoreError {
    StoreError::backend("postgres", e)
}

/// Where the PostgreSQL store lives.
#[derive(Clone)]
#[non_exhaustive]
pub struct PgConfig {
    /// A connection URL such as `postgres://user@127.0.0.1:5432/jobs`.
    pub url: String,
    /// The schema holding the tables; created when missing. Default `public`. Letters,
    /// digits and `_` only.
    pub schema: String,
    /// Most pooled connections; default 16.
    pub pool_size: usize,
}

/// Never shows the URL: it may hold a password.
impl std::fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConfig")
            .field("schema", &self.schema)
            .field("pool_size", &self.pool_size)
            .finish_non_exhaustive()
    }
}

impl PgConfig {
    /// A configuration for `url` with the `public` schema and 16 connections.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            schema: "public".to_owned(),
            pool_size: 16,
        }
    }
}

/// A [`Store`] on PostgreSQL: several processes (server replicas) may share one database.
///
/// Records are JSON documents (`jsonb`) keyed by id, with the columns queries need beside
/// them. Every write is one transaction, committed before the method returns. Writes of jobs,
/// companies, keys and webhooks append to a change feed in commit order and `NOTIFY` the
/// other replicas ([`Store::change_feed`]); usage is counted with one atomic statement per
/// call; deliveries are claimed with a lease. Schema migrations are versioned and applied when
/// the store opens.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    schema: String,
    channel: String,
    woken: Arc<Notify>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.inner.pool.status();
        f.debug_struct("PgStore")
            .field("schema", &self.inner.schema)
            .field("connections", &status.size)
            .finish_non_exhaustive()
    }
}

fn valid_schema(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 48
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl PgStore {
    /// Connects, creates the schema when missing, applies pending migrations and starts
    /// listening for other replicas' changes. Must be called inside a Tokio runtime.
    pub async fn open(config: &PgConfig) -> StoreResult<Self> {
        if !valid_schema(&config.schema) {
            return Err(StoreError::backend(
                "opening the PostgreSQL store",
                format!(
                    "schema name `{}` must be lowercase letters, digits and `_` (at most 48)",
                    config.schema
                ),
            ));
        }
        let mut pg: tokio_postgres::Config = config
            .url
            .parse()
            .map_err(|e| StoreError::backend("the database URL is not valid", e))?;
        pg.options(format!("-c search_path={}", config.schema));
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(std::time::Duration::from_secs(10));
        }
        let manager = Manager::from_config(
            pg.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .build()
            .map_err(pg_error)?;
        let channel = format!("job_listings_{}", config.schema);
        let store = PgStore {
            inner: Arc::new(Inner {
                pool,
                schema: config.schema.clone(),
                channel: channel.clone(),
                woken: Arc::new(Notify::new()),
            }),
        };
        let mut client = store.client().await?;
        client
            .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", config.schema))
            .await
            .map_err(pg_error)?;
        let version = migrations::apply(&mut client, &config.schema).await?;
        if version > migrations::latest() {
            return Err(StoreError::backend(
                "opening the PostgreSQL store",
                format!(
                    "the database schema is at version {version}, newer than this build knows \
                     ({}): upgrade the server",
                    migrations::latest()
                ),
            ));
        }
        // Running replicas read the feed within seconds and a starting one loads everything,
        // so a day of changes is ample; older ones only take space.
        client
            .execute(
                "DELETE FROM changes WHERE at < now() - interval '1 day'",
                &[],
            )
            .await
            .map_err(pg_error)?;
        feed::spawn_listener(pg, channel, Arc::downgrade(&store.inner.woken));
        Ok(store)
    }

    async fn client(&self) -> StoreResult<Object> {
        self.inner.pool.get().await.map_err(pg_error)
    }

    async fn get_doc<T: DeserializeOwned>(&self, sql: &str, id: Uuid) -> StoreResult<Option<T>> {
        let client = self.client().await?;
        let row = client.query_opt(sql, &[&id]).await.map_err(pg_error)?;
        row.map(|r| doc(&r, 0)).transpose()
    }

    async fn docs<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<T>> {
        let client = self.client().await?;
        let rows = client.query(sql, params).await.map_err(pg_error)?;
        rows.iter().map(|r| doc(r, 0)).collect()
    }

    /// Upserts one document per id in a table with columns `(id, doc)`, recording the changes.
    async fn put_docs<T: serde::Serialize + std::fmt::Debug + Sync>(
        &self,
        table: &str,
        rows: &[(Uuid, &T)],
        changed: Vec<ChangedRecord>,
    ) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let sql = format!(
            "INSERT INTO {table} (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc"
        );
        let statement = tx.prepare(&sql).await.map_err(pg_error)?;
        for (id, value) in rows {
            tx.execute(&statement, &[id, &Json(value)])
                .await
                .map_err(pg_error)?;
        }
        feed::record(&tx, &self.inner.channel, &changed).await?;
        tx.commit().await.map_err(pg_error)
    }

    /// Deletes one row of a table keyed by `id`, recording the change in the feed when there
    /// was one to delete (the others' followers then drop it too); returns whether there was.
    async fn delete_row(&self, table: &str, id: Uuid, changed: ChangedRecord) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let deleted = tx
            .execute(&format!("DELETE FROM {table} WHERE id = $1"), &[&id])
            .await
            .map_err(pg_error)?
            > 0;
        if deleted {
            feed::record(&tx, &self.inner.channel, &[changed]).await?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(deleted)
    }
}

/// Decodes the JSON document in column `col`.
fn doc<T: DeserializeOwned>(row: &Row, col: usize) -> StoreResult<T> {
    row.try_get::<_, Json<T>>(col)
        .map(|Json(v)| v)
        .map_err(|e| StoreError::Corrupt {
            key: "a stored document".to_owned(),
            reason: e.to_string(),
        })
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn counter(row: &Row) -> StoreResult<UsageCounter> {
    let used: i64 = row.get("calls_used");
    Ok(UsageCounter {
        key_id: KeyId(row.get("key_id")),
        period_start: row.get("period_start"),
        calls_used: u64::try_from(used).map_err(|_| StoreError::Corrupt {
            key: "usage".to_owned(),
            reason: format!("negative count {used}"),
        })?,
    })
}

#[async_trait]
impl JobStore for PgStore {
    async fn get_job(&self, id: JobId) -> StoreResult<Option<Arc<Job>>> {
        let job: Option<Job> = self
            .get_doc("SELECT doc FROM jobs WHERE id = $1", id.0)
            .await?;
        Ok(job.map(Arc::new))
    }

    async fn get_jobs(&self, ids: &[JobId]) -> StoreResult<Vec<Arc<Job>>> {
        let wanted: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
        let found: Vec<Job> = self
            .docs("SELECT doc FROM jobs WHERE id = ANY($1)", &[&wanted])
            .await?;
        let by_id: HashMap<JobId, Arc<Job>> =
            found.into_iter().map(|j| (j.id, Arc::new(j))).collect();
        Ok(ids.iter().filter_map(|id| by_id.get(id).cloned()).collect())
    }

    async fn write_jobs(&self, writes: &[JobWrite]) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        // The feed's lock first: log positions are then handed out in commit order too, and
        // no other replica writes a job until this commits. The writes were decided against
        // a read made before the lock: another replica may have written the same jobs since
        // (two crawlers sending one job to two replicas), so they are decided again against
        // what is stored now, and a job is announced once.
        feed::lock(&tx).await?;
        let ids: Vec<Uuid> = writes.iter().map(|w| w.job.id.0).collect();
        let stored: HashMap<JobId, Job> = tx
            .query("SELECT doc FROM jobs WHERE id = ANY($1)", &[&ids])
            .await
            .map_err(pg_error)?
            .iter()
            .map(|r| doc::<Job>(r, 0).map(|j| (j.id, j)))
            .collect::<StoreResult<_>>()?;
        let decided = decide_again(writes, stored);
        let writes = decided.as_deref().unwrap_or(writes);
        if writes.is_empty() {
            return tx.commit().await.map_err(pg_error);
        }
        let upsert = tx
            .prepare(
                "INSERT INTO jobs (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc",
            )
            .await
            .map_err(pg_error)?;
        for w in writes {
            tx.execute(&upsert, &[&w.job.id.0, &Json(&w.job)])
                .await
                .map_err(pg_error)?;
        }
        let changed: Vec<ChangedRecord> = writes
            .iter()
            .map(|w| ChangedRecord::Job(w.job.id))
            .collect();
        feed::record(&tx, &self.inner.channel, &changed).await?;
        job_feed::record_writes(&tx, writes).await?;
        outbox::log_events(&tx, writes).await?;
        tx.commit().await.map_err(pg_error)
    }

    async fn scan_jobs(&self, after: Option<JobId>, limit_to: usize) -> StoreResult<Vec<Job>> {
        self.docs(
            "SELECT doc FROM jobs WHERE $1::uuid IS NULL OR id > $1 ORDER BY id LIMIT $2",
            &[&after.map(|a| a.0), &limit(limit_to)],
        )
        .await
    }

    async fn delete_job(&self, id: JobId) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let deleted = tx
            .execute("DELETE FROM jobs WHERE id = $1", &[&id.0])
            .await
            .map_err(pg_error)?
            > 0;
        if deleted {
            feed::record(&tx, &self.inner.channel, &[ChangedRecord::Job(id)]).await?;
            job_feed::insert(&tx, ChangeKind::Deleted, id, Utc::now(), None).await?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(deleted)
    }
}

/// No snapshots: a replica indexes every job at start, as it cannot tell which jobs other
/// replicas wrote after a snapshot.
impl IndexSnapshotStore for PgStore {}

#[async_trait]
impl JobFeedStore for PgStore {
    async fn feed_after(&self, after: u64, limit: usize) -> StoreResult<Vec<FeedEntry>> {
        self.job_feed_after(after, limit).await
    }

    async fn feed_bounds(&self) -> StoreResult<FeedBounds> {
        self.job_feed_bounds().await
    }

    async fn prune_feed(&self, before: DateTime<Utc>, limit: usize) -> StoreResult<usize> {
        self.prune_job_feed(before, limit).await
    }
}

#[async_trait]
impl CompanyStore for PgStore {
    async fn get_company(&self, id: CompanyId) -> StoreResult<Option<Company>> {
        self.get_doc("SELECT doc FROM companies WHERE id = $1", id.0)
            .await
    }

    async fn delete_company(&self, id: CompanyId) -> StoreResult<bool> {
        self.delete_row("companies", id.0, ChangedRecord::Company(id))
            .await
    }

    async fn put_companies(&self, companies: &[Company]) -> StoreResult<()> {
        let rows: Vec<(Uuid, &Company)> = companies.iter().map(|c| (c.id.0, c)).collect();
        let changed = companies
            .iter()
            .map(|c| ChangedRecord::Company(c.id))
            .collect();
        self.put_docs("companies", &rows, changed).await
    }

    async fn scan_companies(
        &self,
        after: Option<CompanyId>,
        limit_to: usize,
    ) -> StoreResult<Vec<Company>> {
        self.docs(
            "SELECT doc FROM companies WHERE $1::uuid IS NULL OR id > $1 ORDER BY id LIMIT $2",
            &[&after.map(|a| a.0), &limit(limit_to)],
        )
        .await
    }
}

#[async_trait]
impl KeyStore for PgStore {
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()> {
        self.put_docs(
            "api_keys",
            &[(key.id.0, key)],
            vec![ChangedRecord::Key(key.id)],
        )
        .await
    }

    async fn get_key(&self, id: KeyId) -> StoreResult<Option<ApiKeyRecord>> {
        self.get_doc("SELECT doc FROM api_keys WHERE id = $1", id.0)
            .await
    }

    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>> {
        self.docs("SELECT doc FROM api_keys ORDER BY id", &[]).await
    }
}

#[async_trait]
impl UsageStore for PgStore {
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        for c in counters {
            tx.execute(
                "INSERT INTO usage (key_id, period_start, calls_used) VALUES ($1, $2, $3)
                 ON CONFLICT (key_id) DO UPDATE SET period_start = EXCLUDED.period_start,
                    calls_used = EXCLUDED.calls_used",
                &[&c.key_id.0, &c.period_start, &limit(c.calls_used as usize)],
            )
            .await
            .map_err(pg_error)?;
        }
        tx.commit().await.map_err(pg_error)
    }

    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT key_id, period_start, calls_used FROM usage ORDER BY key_id",
                &[],
            )
            .await
            .map_err(pg_error)?;
        rows.iter().map(counter).collect()
    }

    async fn swap_usage(
        &self,
        expected: Option<UsageCounter>,
        new: UsageCounter,
    ) -> StoreResult<bool> {
        let client = self.client().await?;
        // One statement either way, so concurrent swaps on any replica serialise on the row
        // (or on its key, for the first counter) and only the first of them finds `expected`.
        let swapped =
            match expected {
                None => client
                    .execute(
                        "INSERT INTO usage (key_id, period_start, calls_used) VALUES ($1, $2, $3)
                         ON CONFLICT (key_id) DO NOTHING",
                        &[
                            &new.key_id.0,
                            &new.period_start,
                            &limit(new.calls_used as usize),
                        ],
                    )
                    .await,
                Some(old) => {
                    client
                        .execute(
                            "UPDATE usage SET period_start = $2, calls_used = $3
                         WHERE key_id = $1 AND period_start = $4 AND calls_used = $5",
                            &[
                                &new.key_id.0,
                                &new.period_start,
                                &limit(new.calls_used as usize),
                                &old.period_start,
                                &limit(old.calls_used as usize),
                            ],
                        )
                        .await
                }
            }
            .map_err(pg_error)?;
        Ok(swapped == 1)
    }

    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT key_id, period_start, calls_used FROM usage WHERE key_id = $1",
                &[&key_id.0],
            )
            .await
            .map_err(pg_error)?;
        row.as_ref().map(counter).transpose()
    }
}

#[async_trait]
impl Store for PgStore {
    fn change_feed(&self) -> Option<&dyn ChangeFeed> {
        Some(self)
    }

    async fn probe_write(&self) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute("SELECT 1", &[])
            .await
            .map(drop)
            .map_err(pg_error)
    }

    async fn backup_to(&self, _dir: &std::path::Path) -> StoreResult<super::BackupSummary> {
        Err(StoreError::Unsupported {
            operation: "an online backup",
            store: "the PostgreSQL store",
            advice:
                "back up the database with pg_dump (pg_dump --format=custom --schema=<schema>) \
                     and restore it with pg_restore; keep a copy of the secret key file with the \
                     dump, as the webhook secrets in it cannot be read without it",
        })
    }
}

/// `writes` decided again against `stored` where a write was decided against another state
/// of its job; `None`, with nothing copied, when every decision stands (the common case: no
/// other replica wrote these jobs meanwhile). A job twice in one batch has its second write
/// decided against its first (and so always takes the copying path).
fn decide_again(writes: &[JobWrite], mut stored: HashMap<JobId, Job>) -> Option<Vec<JobWrite>> {
    let stands = |w: &JobWrite| match w.decided_on {
        DecidedOn::Nothing => true,
        DecidedOn::Read(read) => read == stored.get(&w.job.id).map(|s| s.updated_at),
    };
    if writes.iter().all(stands) {
        return None;
    }
    let mut decided = Vec::with_capacity(writes.len());
    for w in writes {
        if let Some(w) = w.clone().against(stored.get(&w.job.id)) {
            stored.insert(w.job.id, w.job.clone());
            decided.push(w);
        }
    }
    Some(decided)
}

impl JobWrite {
    /// This write as it stands against `stored`, the job as the store holds it now, where the
    /// writer decided it against an earlier read that `stored` no longer is: another replica
    /// may have written the job in between. What the store keeps of a job's history (when it
    /// was first seen and first active) comes from `stored`; then the same content already
    /// stored is nothing to write (`None`: no feed entry, no event, the stored `updated_at`
    /// kept), and otherwise the kind of change is the one from `stored`, and the events, if
    /// any, take that kind.
    fn against(mut self, stored: Option<&Job>) -> Option<Self> {
        match self.decided_on {
            DecidedOn::Read(read) if read != stored.map(|s| s.updated_at) => {}
            _ => return Some(self),
        }
        if let Some(s) = stored {
            self.job.first_seen_at = s.first_seen_at;
            self.job.activated_at = s.activated_at.or(self.job.activated_at);
            if s.same_content(&self.job) {
                return None;
            }
            self.job.updated_at = changed_at(s.updated_at, self.job.updated_at);
        }
        let change = ChangeKind::of_write(stored, &self.job);
        if change != self.change {
            self.change = change;
            match change {
                Some(kind) => self
                    .events
                    .iter_mut()
                    .for_each(|e| e.kind = kind.as_str().to_owned()),
                None => self.events.clear(),
            }
        }
        Some(self)
    }
}

setters!(PgConfig {
    schema: String,
    pool_size: usize,
});
