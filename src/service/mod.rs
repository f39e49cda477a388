//! The service: authentication, plan gates, quota metering, ingest and orchestration.
//!
//! [`JobListingsService`] is what the HTTP layer calls, and what a Rust program embeds to get the
//! whole API without HTTP. A customer's key is checked once into a [`Caller`]
//! ([`JobListingsService::caller`]), whose methods check the plan, meter the call and return
//! typed values with the quota after the call, or a [`Refused`] error with the quota as it
//! stands; the service knows nothing of HTTP. A read answers its value with its [`Version`],
//! and takes the versions the client holds ([`Held`]): one it holds is answered uncounted.
//!
//! Behind the facade are three parts, each with its own behaviour over its own narrow store
//! ([`crate::store`]): the catalog (companies, jobs, the search index and its snapshots,
//! ingest, the job change feed), access (keys, rate limits and the metering rule) and the
//! subscriptions (webhooks, the outbox's fan-out and delivery, test pings). The facade builds
//! them, starts their background tasks and hands each call to the part that owns it; a part
//! that needs another for a call is given it (ingest is given the subscriptions it announces
//! jobs to). A [`Caller`] holds the parts, not the service.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use job_listings::domain::Plan;
//! use job_listings::query::{JobFilter, JobQuery};
//! use job_listings::service::{Held, JobListingsService, NewKey};
//! use job_listings::store::MemoryStore;
//!
//! let service = JobListingsService::builder()
//!     .store(Arc::new(MemoryStore::new()))
//!     .build()
//!     .await?;
//! let (key, _record) = service.create_key(NewKey::new(Plan::Developer)).await?;
//! let caller = service.caller(&key)?;
//! let query = JobQuery::new(JobFilter::default().with_q("rust"));
//! let page = caller.search_jobs(query, Held::Nothing).await?;
//! println!("{} jobs, {} calls left", page.total, page.quota.remaining);
//! # Ok(()) }
//! ```

mod access;
mod backup;
mod bulk;
mod caller;
mod catalog;
mod changes;
mod clock;
mod conditional;
mod config;
mod delete;
mod delivery;
mod error;
mod facade;
mod fan_out;
mod follower;
mod health;
mod histogram;
mod import;
mod index_snapshots;
mod indexer;
mod ingest;
mod job_census;
mod keyed_locks;
mod keys;
mod listener;
mod metering;
mod metrics;
mod operator;
mod rate_limit;
mod reads;
mod reposts;
mod search_memo;
mod secrets;
mod stats;
mod subscriptions;
mod unseen;
mod webhooks;

use std::sync::Arc;

use chrono::{DateTime, Utc};

pub use backup::{
    check_backup_target, restore_backup, BackupFile, BackupManifest, BACKUP_MANIFEST,
};
pub use bulk::{
    read_record, unknown_company, BulkReport, LineError, LineImport, RecordKind, RecordLine,
};
pub use caller::{CallResult, Caller, Refused};
pub use changes::{ChangeEvent, ChangesPage, ChangesQuery, FeedStart};
pub use clock::{Clock, ManualClock, SystemClock};
pub use conditional::{Held, Read, Version};
pub use config::{DeliveryConfig, Metering, Quotas, ServiceConfig};
pub use error::{ServiceError, ServiceResult};
pub use health::Health;
pub use import::{ImportError, ImportSummary, IMPORT_BATCH};
pub use index_snapshots::IndexOrigin;
pub use ingest::{DeferredCompaction, IngestOutcome};
pub use keys::NewKey;
pub use listener::ListenerReport;
pub use operator::WebhookHealth;
pub use rate_limit::{RateLimit, RateLimits};
pub use reads::{
    CompanyDetail, CompanyPage, CompanyQuery, CompanySummary, JobDetail, JobPage, UnknownValue,
    MAX_KNOWN_VALUES,
};
pub use secrets::SecretKey;
pub use stats::{JobCounts, KeyCounts, ServiceStats, SubscriptionCounts};
pub use unseen::UnseenClosed;
pub use webhooks::{NewWebhook, WebhookChange, WebhookCreation};

use crate::store::{Store, StoreError};
use crate::webhooks::Notifier;
use access::Access;
use catalog::Catalog;
pub(crate) use histogram::DurationHistogram;
use subscriptions::Subscriptions;

/// The quota state after a call, for rate-limit headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuotaState {
    /// Calls allowed per period.
    pub limit: u64,
    /// Calls left in this period.
    pub remaining: u64,
    /// When the next period starts.
    pub resets_at: DateTime<Utc>,
}

/// A successful, metered answer: the value and the quota after counting the call. It derefs
/// to the value, so `page.jobs` reads the jobs of a `Metered<JobPage>`.
#[derive(Clone, Debug)]
pub struct Metered<T> {
    /// What the call returned.
    pub value: T,
    /// The caller's quota after this call.
    pub quota: QuotaState,
}

impl<T> std::ops::Deref for Metered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// The job-listings service. Cheap to clone; every clone shares one state.
///
/// Call [`JobListingsService::shutdown`] before the last clone is dropped (the bundled
/// [`Server::run`](crate::server::Server::run) does on its way out): calls counted with
/// in-memory metering since the last background write (every 100 ms) are written then, and the
/// search index is saved so the next start loads it. Dropping the service without it loses
/// those counts and makes the next start index again what was written since the last snapshot.
/// Nothing else is lost: jobs, keys and subscriptions are durable when their call returns.
#[derive(Clone, Debug)]
pub struct JobListingsService {
    inner: Arc<Inner>,
}

/// The service's state: the parts, and what only the facade keeps.
struct Inner {
    /// The whole store: the replica follower applies changes of every kind. Each part keeps
    /// the narrow store of its own records.
    store: Arc<dyn Store>,
    /// What every part uses.
    shared: Arc<Shared>,
    /// Companies and the search index over the active jobs (ingest, import, snapshots).
    catalog: Arc<Catalog>,
    /// Keys with their meters and rate-limit buckets (authentication, metering).
    access: Arc<Access>,
    /// Webhook subscriptions and the delivery worker's means.
    subscriptions: Arc<Subscriptions>,
    /// What the last write probes found.
    health: health::HealthState,
    /// The backup under way: one at a time.
    backups: backup::BackupPlace,
    /// Tells the background tasks to stop.
    stop: tokio::sync::watch::Sender<bool>,
}

/// What every part uses: the clock, the configuration and the counts kept for metrics.
struct Shared {
    clock: Arc<dyn Clock>,
    config: ServiceConfig,
    /// Whether the store is shared with other replicas (it has a change feed): then
    /// subscriptions and keys may exist that this process does not know yet.
    replicated: bool,
    /// What the service counts as it works, for metrics.
    metrics: metrics::ServiceMetrics,
    /// The counts behind [`JobListingsService::stats`] that no part keeps on its own.
    stats: stats::StatsState,
}

impl Shared {
    /// The current instant by the service's clock.
    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The default configuration on the system clock, for a part tested alone.
    #[cfg(test)]
    fn for_tests() -> Arc<Self> {
        Arc::new(Self {
            clock: Arc::new(SystemClock),
            config: ServiceConfig::default(),
            replicated: false,
            metrics: Default::default(),
            stats: Default::default(),
        })
    }
}

/// A summary: the state itself holds webhook secrets and is large.
impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobListingsService")
            .field("store", &self.store)
            .field("index", &*self.catalog.read_index())
            .field("notifier", &self.subscriptions.notifier.is_some())
            .finish_non_exhaustive()
    }
}

/// Builds a [`JobListingsService`]. Only the store is required.
#[derive(Debug, Default)]
pub struct ServiceBuilder {
    store: Option<Arc<dyn Store>>,
    clock: Option<Arc<dyn Clock>>,
    notifier: Option<Arc<dyn Notifier>>,
    config: ServiceConfig,
}

impl ServiceBuilder {
    /// The store to keep state in (a [`crate::store::SledStore`] by default in the server).
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// The clock (default: [`SystemClock`]).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The webhook sender (such as [`crate::webhooks::HttpNotifier`]). Without one, the outbox
    /// is written but nothing is delivered.
    pub fn notifier(mut self, notifier: Arc<dyn Notifier>) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Quotas, limits and webhook policy.
    pub fn config(mut self, config: ServiceConfig) -> Self {
        self.config = config;
        self
    }

    /// Loads state from the store, rebuilds the search index and starts the usage writer and,
    /// with a notifier, the delivery worker (when called inside a Tokio runtime).
    pub async fn build(self) -> ServiceResult<JobListingsService> {
        let store = self
            .store
            .ok_or_else(|| StoreError::backend("building the service", "no store was given"))?;
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        // Taken before loading, so whatever other replicas write meanwhile is applied after.
        let feed_position = match store.change_feed() {
            Some(feed) => Some(feed.head().await?),
            None => None,
        };

        let mut config = self.config;
        if feed_position.is_some() && matches!(config.metering, Metering::InMemory { .. }) {
            tracing::info!("the store is shared by replicas: calls are counted in the store");
            config.metering = Metering::InStore;
        }
        let shared = Arc::new(Shared {
            clock,
            config,
            replicated: feed_position.is_some(),
            metrics: Default::default(),
            stats: Default::default(),
        });
        let catalog = Catalog::load(shared.clone(), store.clone()).await?;
        let access = Access::load(shared.clone(), store.clone()).await?;
        let subscriptions =
            Subscriptions::load(shared.clone(), store.clone(), self.notifier).await?;
        let service = JobListingsService {
            inner: Arc::new(Inner {
                store,
                shared,
                catalog: Arc::new(catalog),
                access: Arc::new(access),
                subscriptions: Arc::new(subscriptions),
                health: Default::default(),
                backups: Default::default(),
                stop: tokio::sync::watch::channel(false).0,
            }),
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            service.spawn_background_tasks(feed_position);
        }
        tracing::info!(
            active_jobs = service.inner.catalog.read_index().len(),
            companies = service.inner.catalog.read_companies().len(),
            "service ready"
        );
        Ok(service)
    }
}

impl JobListingsService {
    /// Starts the closed-job census, the usage writer (in-memory metering), the index
    /// snapshot saver, the pruners, the replica follower (a shared store, from
    /// `feed_position`) and the delivery worker (with a notifier). Each holds its parts
    /// weakly and stops with [`JobListingsService::shutdown`].
    fn spawn_background_tasks(&self, feed_position: Option<u64>) {
        let inner = &self.inner;
        let config = &inner.shared.config;
        let (catalog, access) = (
            Arc::downgrade(&inner.catalog),
            Arc::downgrade(&inner.access),
        );
        let subscriptions = Arc::downgrade(&inner.subscriptions);
        let stop = || inner.stop.subscribe();
        tokio::spawn(job_census::count_closed_jobs(catalog.clone(), stop()));
        if let Metering::InMemory { flush_interval } = config.metering {
            tokio::spawn(every(
                access.clone(),
                flush_interval,
                stop(),
                "writing usage counters",
                |access| async move { access.flush_usage().await },
            ));
        }
        if let Some(interval) = config.index_snapshot_interval {
            // Saved while jobs are written, so that a start after a crash loads a recent
            // snapshot and indexes only the jobs written after it.
            tokio::spawn(every(
                catalog.clone(),
                interval,
                stop(),
                "saving the index snapshot",
                |catalog| async move { catalog.save_index_snapshot().await },
            ));
        }
        if let Some(position) = feed_position {
            tokio::spawn(follower::follow(
                Arc::downgrade(inner),
                inner.store.clone(),
                position,
                config.follow_poll_interval,
                stop(),
            ));
        }
        tokio::spawn(every(
            subscriptions.clone(),
            config.delivery.prune_interval,
            stop(),
            "pruning the outbox",
            |subscriptions| async move { subscriptions.prune_outbox().await },
        ));
        tokio::spawn(every(
            catalog.clone(),
            config.delivery.prune_interval,
            stop(),
            "pruning the change feed",
            |catalog| async move { catalog.prune_changes().await },
        ));
        if inner.subscriptions.notifier.is_some() {
            tokio::spawn(delivery::worker(
                subscriptions,
                access,
                catalog,
                stop(),
                inner.subscriptions.wake.clone(),
            ));
        }
    }
}

/// Runs `work` on a part every `interval` until shutdown. A failure is logged and tried
/// again, backing off while failures repeat (a full disk fails every write until space is
/// freed: retrying every 100 ms would fill the log instead), and back to `interval` after a
/// success. Holds the part only while working, so a dropped service is not kept alive.
async fn every<P, F, Fut, T>(
    part: std::sync::Weak<P>,
    interval: std::time::Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
    what: &'static str,
    work: F,
) where
    F: Fn(Arc<P>) -> Fut,
    Fut: std::future::Future<Output = ServiceResult<T>>,
{
    let mut failures = 0u32;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(retry_delay(interval, failures)) => {}
            _ = stop.changed() => return,
        }
        let Some(strong) = part.upgrade() else {
            return;
        };
        match work(strong).await {
            Ok(_) if failures > 0 => {
                tracing::info!(failures, "{what} works again");
                failures = 0;
            }
            Ok(_) => {}
            Err(e) => {
                failures = failures.saturating_add(1);
                let retry_in = retry_delay(interval, failures);
                tracing::error!(error = %e, failures, ?retry_in, "{what} failed; will retry");
            }
        }
    }
}

/// How long to wait before the next round after `failures` failures in a row: `interval`,
/// doubled for each failure, at most [`MAX_RETRY_DELAY`] (or `interval`, if longer).
fn retry_delay(interval: std::time::Duration, failures: u32) -> std::time::Duration {
    let backed_off = interval.saturating_mul(2u32.saturating_pow(failures.min(16)));
    backed_off.min(MAX_RETRY_DELAY.max(interval))
}

/// The longest wait between rounds of a background task that keeps failing.
const MAX_RETRY_DELAY: std::time::Duration = std::time::Duration::from_secs(30);

impl JobListingsService {
    /// Starts building a service.
    pub fn builder() -> ServiceBuilder {
        ServiceBuilder::default()
    }

    /// The configuration in force.
    pub fn config(&self) -> &ServiceConfig {
        &self.inner.shared.config
    }

    /// Writes every changed usage counter to the store now.
    pub async fn flush_usage(&self) -> ServiceResult<()> {
        self.inner.access.flush_usage().await
    }

    /// Stops the background tasks, writes usage one last time and saves the search index
    /// ([`JobListingsService::save_index_snapshot`]). Deliveries in flight are abandoned and
    /// retried on the next start (at-least-once, same `webhook-id`).
    pub async fn shutdown(&self) -> ServiceResult<()> {
        // A watch channel keeps the value, so a task busy right now still sees it.
        self.inner.stop.send_replace(true);
        let flushed = self.flush_usage().await;
        let saved = self.save_index_snapshot().await;
        flushed.and(saved.map(drop))
    }

    /// The current instant by the service's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.shared.now()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::retry_delay;

    #[test]
    fn a_failing_task_backs_off_to_thirty_seconds_and_starts_over_after_a_success() {
        let every = Duration::from_millis(100);
        assert_eq!(retry_delay(every, 0), every);
        assert_eq!(retry_delay(every, 1), Duration::from_millis(200));
        assert_eq!(retry_delay(every, 4), Duration::from_millis(1_600));
        assert_eq!(retry_delay(every, 9), Duration::from_secs(30));
        assert_eq!(retry_delay(every, u32::MAX), Duration::from_secs(30));
        // A task slower than the cap keeps its own interval.
        let hourly = Duration::from_secs(3_600);
        assert_eq!(retry_delay(hourly, 3), hourly);
    }
}
