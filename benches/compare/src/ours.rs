//! Our engine: `job_listings::query::JobIndex`, fed as the service feeds it: loaded in bulk
//! (`Extend`, one compaction at the end) as at start-up, then changed with `JobIndex::upsert`.

use job_listings::domain::Job;
use job_listings::query::{JobIndex, JobQuery, SearchResult};

use crate::engine::Engine;

/// The adapter: the index itself answers.
pub struct Ours {
    /// The index.
    pub index: JobIndex,
}

impl Ours {
    /// An empty index, ready for [`Ours::load`].
    pub fn new() -> Self {
        let mut index = JobIndex::new();
        index.set_auto_compact(false);
        Self { index }
    }

    /// Adds jobs in bulk, as the service loads its store at start-up.
    pub fn load(&mut self, jobs: &[Job]) {
        self.index.extend(jobs);
    }

    /// Ends the bulk load: one compaction, then compacting as changes come, as the service does.
    pub fn finish_load(&mut self) {
        self.index.compact();
        self.index.set_auto_compact(true);
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
