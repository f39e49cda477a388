//! The catalog: companies, jobs and the search index over the active ones. Its behaviour is
//! spread by concern: reads, ingest, deletion, snapshots, the change feed.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::index_snapshots::load_index;
use super::search_memo::{IndexGeneration, SearchMemo};
use super::{IndexOrigin, ServiceResult, Shared};
use crate::domain::{Company, CompanyId};
use crate::query::JobIndex;
use crate::store::{CatalogStore, CompanyStore};

/// The catalog: companies, jobs and the search index over the active ones.
pub(super) struct Catalog {
    /// What every part uses.
    pub(super) shared: Arc<Shared>,
    /// Where jobs, the job change feed, index snapshots and companies are kept.
    pub(super) store: Arc<dyn CatalogStore>,
    pub(super) index: RwLock<JobIndex>,
    /// Counts the changes of `index`, so results read at one state are known stale after.
    pub(super) index_generation: IndexGeneration,
    /// Recent search results, valid while the index generation they were read at lasts.
    pub(super) search_memo: SearchMemo,
    /// The jobs version of the index snapshot the store holds, when this process loaded or
    /// saved it: a shutdown with nothing written since has nothing to save.
    pub(super) saved_snapshot: tokio::sync::Mutex<Option<u64>>,
    /// How the index was made ready at start-up.
    pub(super) index_origin: IndexOrigin,
    pub(super) companies: RwLock<HashMap<CompanyId, Arc<Company>>>,
    /// Serialises ingest so "read previous state, write new state" is atomic per job.
    pub(super) ingest: tokio::sync::Mutex<()>,
    /// How many [`DeferredCompaction`]s are open; the index is not compacted while any is.
    pub(super) compaction_deferrals: std::sync::atomic::AtomicUsize,
}

impl Catalog {
    /// Loads the companies and the search index (from its snapshot when the store holds a
    /// current one) from `store`.
    pub(super) async fn load(
        shared: Arc<Shared>,
        store: Arc<dyn CatalogStore>,
    ) -> ServiceResult<Self> {
        let companies = load_companies(store.as_ref()).await?;
        let loaded = load_index(store.as_ref()).await?;
        if loaded.origin == IndexOrigin::Snapshot {
            shared.stats.snapshot_current_at(std::time::Instant::now());
        }
        let search_memo = SearchMemo::new(shared.config.search_memo_entries);
        Ok(Self {
            shared,
            store,
            index: RwLock::new(loaded.index),
            index_generation: Default::default(),
            search_memo,
            index_origin: loaded.origin,
            saved_snapshot: tokio::sync::Mutex::new(loaded.saved_version),
            companies: RwLock::new(companies),
            ingest: tokio::sync::Mutex::new(()),
            compaction_deferrals: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// A read guard on the search index. The lock is never held across an await, so a
    /// poisoned lock only means a panic elsewhere; the index itself is still consistent.
    pub(super) fn read_index(&self) -> RwLockReadGuard<'_, JobIndex> {
        self.index.read().unwrap_or_else(|e| e.into_inner())
    }

    /// A write guard on the search index. Taking it advances the index generation, so no
    /// result read before it is served after it (`search_memo`).
    pub(super) fn write_index(&self) -> RwLockWriteGuard<'_, JobIndex> {
        let guard = self.index.write().unwrap_or_else(|e| e.into_inner());
        self.index_generation.advance();
        guard
    }

    pub(super) fn read_companies(&self) -> RwLockReadGuard<'_, HashMap<CompanyId, Arc<Company>>> {
        self.companies.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// Every stored company, read 1,000 at a time.
async fn load_companies(
    store: &dyn CompanyStore,
) -> ServiceResult<HashMap<CompanyId, Arc<Company>>> {
    let mut companies = HashMap::new();
    let mut after = None;
    loop {
        let batch = store.scan_companies(after, 1_000).await?;
        let Some(last) = batch.last() else { break };
        after = Some(last.id);
        companies.extend(batch.into_iter().map(|c| (c.id, Arc::new(c))));
    }
    Ok(companies)
}
