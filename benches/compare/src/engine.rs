//! What the harness needs from an engine: answer a [`JobQuery`] the way `JobIndex` does.

use job_listings::query::{JobQuery, SearchResult};

/// A search engine over the generated jobs, shared by reference between threads.
pub trait Engine: Sync {
    /// The row name in the report.
    fn name(&self) -> &'static str;

    /// The number of matches and the requested page of ids, newest `posted_at` first, ties by
    /// id ascending.
    fn search(&self, query: &JobQuery) -> SearchResult;
}
