//! Recent search results, each kept until the index next changes.
//!
//! Clients ask the same searches again and again: the first page of a filter, the page a
//! list view refreshes, the poll of a saved search. At a million jobs with long posts, the
//! postings of common words are dense, and counting a search's matches exactly means
//! intersecting them in full, most of a page's work. A result depends only on the query and
//! the index, so it is kept under the index generation it was read at
//! ([`IndexGeneration`]); any change of the index makes every kept result stale at once,
//! and a stale one is searched again, never served.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;

use super::reads::UnknownValue;
use crate::query::{JobQuery, SearchResult};

/// The number of changes made to the index since start: bumped by every writer while it
/// holds the index's write lock, and read by readers while they hold its read lock, so a
/// reader's generation always names the state it searched.
#[derive(Debug, Default)]
pub(super) struct IndexGeneration(AtomicU64);

impl IndexGeneration {
    /// Called by a writer holding the write lock, before it changes anything.
    pub(super) fn advance(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }

    /// Called by a reader holding the read lock.
    pub(super) fn current(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// What a search found, with the filter values no job holds, as of one index generation.
#[derive(Debug)]
pub(super) struct Memoized {
    generation: u64,
    /// The matches' count, the page's ids and the facet counts.
    pub(super) found: SearchResult,
    /// The query's filter values that no active job holds.
    pub(super) warnings: Vec<UnknownValue>,
}

/// The results of recent queries, at most a fixed number of them; capacity 0 keeps none.
pub(super) struct SearchMemo {
    entries: Option<Cache<JobQuery, Arc<Memoized>>>,
}

impl SearchMemo {
    /// A memo of at most `capacity` results.
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            entries: (capacity > 0).then(|| Cache::new(capacity)),
        }
    }

    /// The result kept for `query`, if it was read at `generation`.
    pub(super) fn get(&self, query: &JobQuery, generation: u64) -> Option<Arc<Memoized>> {
        self.entries
            .as_ref()?
            .get(query)
            .filter(|m| m.generation == generation)
    }

    /// Keeps what `query` found at `generation`, and returns it.
    pub(super) fn keep(
        &self,
        query: &JobQuery,
        generation: u64,
        found: SearchResult,
        warnings: Vec<UnknownValue>,
    ) -> Arc<Memoized> {
        let memoized = Arc::new(Memoized {
            generation,
            found,
            warnings,
        });
        if let Some(entries) = &self.entries {
            entries.insert(query.clone(), memoized.clone());
        }
        memoized
    }
}

impl std::fmt::Debug for SearchMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchMemo")
            .field("entries", &self.entries.as_ref().map_or(0, Cache::len))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::JobFilter;

    fn found(total: u64) -> SearchResult {
        SearchResult::new(total, Vec::new())
    }

    #[test]
    fn a_result_is_served_only_at_the_generation_it_was_read_at() {
        let memo = SearchMemo::new(16);
        let rust = JobQuery::new(JobFilter::default().with_q("rust"));
        memo.keep(&rust, 7, found(3), Vec::new());
        assert_eq!(memo.get(&rust, 7).map(|m| m.found.total), Some(3));
        assert!(
            memo.get(&rust, 8).is_none(),
            "a later index must search again"
        );
        let go = JobQuery::new(JobFilter::default().with_q("go"));
        assert!(
            memo.get(&go, 7).is_none(),
            "another query has its own result"
        );
    }

    #[test]
    fn capacity_zero_keeps_nothing_but_still_answers_what_was_found() {
        let memo = SearchMemo::new(0);
        let q = JobQuery::default();
        assert_eq!(memo.keep(&q, 1, found(5), Vec::new()).found.total, 5);
        assert!(memo.get(&q, 1).is_none());
    }

    #[test]
    fn generations_advance() {
        let g = IndexGeneration::default();
        let before = g.current();
        g.advance();
        assert_eq!(g.current(), before + 1);
    }
}
