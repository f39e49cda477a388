//! Our engine: `job_listings::query::JobIndex`, fed with `JobIndex::upsert` as the service does.

use job_listings::domain::Job;
use job_listings::query::{JobIndex, JobQuery, SearchResult};

use crate::engine::Engine;

/// The adapter: the index itself answers.
pub struct Ours {
    /// The index.
    pub index: JobIndex,
}

impl Ours {
    /// An empty index.
    pub fn new() -> Self {
        Self {
            index: JobIndex::new(),
        }
    }

    /// Adds, replaces or (for a closed job) removes one job.
    pub fn upsert(&mut self, job: &Job) {
        self.index.upsert(job);
    }
}

impl Engine for Ours {
    fn name(&self) -> &'static str {
        "job-listings JobIndex"
    }

    fn search(&self, query: &JobQuery) -> SearchResult {
        self.index.search(query)
    }
}
