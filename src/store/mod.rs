//! Persistence: one small trait for each kind of record the service keeps, grouped by the part
//! of the service they serve; [`Store`], their union; and their implementations.
//!
//! | Part | Traits | Union |
//! |---|---|---|
//! | catalog | [`JobStore`], [`JobFeedStore`], [`IndexSnapshotStore`], [`CompanyStore`] | [`CatalogStore`] |
//! | access | [`KeyStore`], [`UsageStore`] | [`AccessStore`] |
//! | subscriptions | [`WebhookStore`], [`EventLog`], [`FanOutStore`], [`DeliveryQueue`] | [`SubscriptionStore`] |
//! | replicas | [`ChangeFeed`] (through [`Store::change_feed`]) | |
//!
//! A store implements each trait and [`Store`]; the unions come with them.
//!
//! [`SledStore`] (feature `sled`, on by default) keeps everything in an embedded sled database
//! on disk, for one process. `PgStore` (feature `postgres`) keeps it in PostgreSQL, so several
//! server replicas share one state. [`MemoryStore`] keeps it in memory, for tests and for
//! embedders that bring their own persistence. One shared test suite (`tests/it/store_suite.rs`)
//! runs against all three (PostgreSQL with `cargo test -- --ignored`).
//!
//! Every write method returns only once the write is durable: an acknowledged write survives a
//! crash of the process.

mod access;
mod catalog;
mod error;
#[cfg(feature = "sled")]
mod job_cache;
#[cfg(feature = "sled")]
mod job_record;
mod leases;
mod memory;
mod outbox;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sled")]
mod sled_store;
#[cfg(feature = "sled")]
mod snapshot_file;
mod subscriptions;

use std::path::{Path, PathBuf};

use async_trait::async_trait;

pub use access::{AccessStore, KeyStore, UsageCounter, UsageStore};
pub use catalog::{
    CatalogStore, CompanyStore, DecidedOn, FeedBounds, FeedEntry, IndexSnapshot,
    IndexSnapshotStore, JobFeedStore, JobStore, JobWrite,
};
pub use error::{BackendError, StoreError, StoreResult};
pub(crate) use leases::Leases;
pub use memory::MemoryStore;
pub use outbox::{CursorMove, FanOut, Pruned};

#[cfg(feature = "postgres")]
pub use postgres::{PgConfig, PgStore};
#[cfg(feature = "sled")]
pub use sled_store::{SledConfig, SledStore};
pub use subscriptions::{DeliveryQueue, EventLog, FanOutStore, SubscriptionStore, WebhookStore};

use crate::domain::{CompanyId, JobId, KeyId, WebhookId};

/// Where the service keeps its state: every part's store in one, with what concerns the store
/// as a whole (replicas following one another, health probes, backups).
///
/// The default implementation is [`SledStore`]; [`MemoryStore`] serves tests and embedders;
/// `PgStore` (feature `postgres`) lets several replicas share one state. One test suite runs
/// against all three.
#[async_trait]
pub trait Store: CatalogStore + AccessStore + SubscriptionStore {
    /// The change feed of a store that several processes share, so each can follow what the
    /// others write; `None` (the default) for a store only one process uses.
    fn change_feed(&self) -> Option<&dyn ChangeFeed> {
        None
    }

    /// Checks that the store takes a durable write now (a full disk, a lost connection),
    /// with the smallest write it can make. The default, for a store that cannot fail so,
    /// succeeds.
    async fn probe_write(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Copies the store, while it serves, into the folder `dir` (made when missing; it must be
    /// empty), as a store of the same kind that can be opened there: a consistent copy, holding
    /// every write acknowledged before the call and a state the store was actually in. Readers
    /// are served meanwhile; a store may hold writers back while it copies (the sled store
    /// does). The copy is not marked complete: the caller does that once it is
    /// (`JobListingsService::backup` writes a manifest last), so a copy cut short is never
    /// taken for a backup.
    ///
    /// The default refuses with [`StoreError::Unsupported`]: a store that keeps its data
    /// elsewhere (PostgreSQL) is backed up with that system's own tools.
    async fn backup_to(&self, _dir: &Path) -> StoreResult<BackupSummary> {
        Err(StoreError::Unsupported {
            operation: "an online backup",
            store: "this store",
            advice: "back up its data with the tools of the system that keeps it",
        })
    }

    /// Where the store keeps its data on this machine and how much of the disk it takes, for
    /// the checks a backup makes of its target before it writes anything: not inside the live
    /// data, and room for a copy. The default, for a store that keeps no folder here, knows
    /// neither.
    async fn backup_source(&self) -> StoreResult<BackupSource> {
        Ok(BackupSource::default())
    }
}

/// What a backup of a store starts from ([`Store::backup_source`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupSource {
    /// The folder the store keeps its live data in, if it keeps it in one: a backup must stay
    /// out of it.
    pub folder: Option<PathBuf>,
    /// The bytes a copy of the store would take on disk now, reckoned on the safe side: a
    /// backup is refused unless its disk has this much free.
    pub bytes: u64,
}

impl BackupSource {
    /// A store's data in `folder`, a copy of which takes `bytes` on disk.
    pub fn new(folder: Option<PathBuf>, bytes: u64) -> Self {
        Self { folder, bytes }
    }
}

/// What [`Store::backup_to`] copied, and what it cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackupSummary {
    /// Jobs copied, active and closed.
    pub jobs: u64,
    /// Companies copied.
    pub companies: u64,
    /// API keys copied (revoked ones too).
    pub keys: u64,
    /// Webhook subscriptions copied.
    pub webhooks: u64,
    /// Bytes the backup takes on disk.
    pub bytes: u64,
    /// How long the backup took, from start to finish.
    pub took: std::time::Duration,
    /// How long writes were held back while the copy was made (reads never were).
    pub writes_paused: std::time::Duration,
}

/// A record some process wrote, identified by kind and id: read it again to see its new state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangedRecord {
    /// A job was written (ingested, updated or closed) or deleted.
    Job(JobId),
    /// A company was written or deleted.
    Company(CompanyId),
    /// A key was issued or changed (plan, billing status, revocation).
    Key(KeyId),
    /// A webhook subscription was written or deleted.
    Webhook(WebhookId),
}

/// One entry of a [`ChangeFeed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// Position in the feed: strictly increasing in commit order.
    pub position: u64,
    /// What changed.
    pub record: ChangedRecord,
}

/// Every write of jobs, companies, keys and webhooks, in commit order, so processes sharing a
/// store keep their in-memory state (search index, keys, subscriptions) in step.
#[async_trait]
pub trait ChangeFeed: Send + Sync {
    /// The position of the newest change (0 when there is none).
    async fn head(&self) -> StoreResult<u64>;
    /// Up to `limit` changes after position `after`, oldest first.
    async fn changes_after(&self, after: u64, limit: usize) -> StoreResult<Vec<Change>>;
    /// Resolves when new changes may be waiting or after `timeout`, whichever comes first.
    /// A notification lost to a disconnect costs at most `timeout` of delay.
    async fn wait(&self, timeout: std::time::Duration);
}
