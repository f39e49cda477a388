//! The embeddable query engine: an in-memory index over active jobs.
//!
//! [`JobIndex`] answers a [`JobQuery`] with the total number of matches, one page of job ids,
//! newest `posted_at` first with ties broken by id ascending, and the [`Facet`] counts the
//! query asks for. It is synchronous, does no I/O and
//! knows nothing of HTTP or storage, so another program can use it on its own:
//!
//! ```
//! use chrono::Utc;
//! use job_listings_engine::domain::{Company, CompanyId, Confidence, FundingStage, Job, JobId};
//! use job_listings_engine::query::{JobFilter, JobIndex, JobQuery};
//!
//! let company = Company::new(CompanyId::new_random(), "Nimbus", "nimbus.example",
//!     FundingStage::parse("seed")?);
//! let mut index = JobIndex::new();
//! for (n, role) in ["Rust Engineer", "Designer", "Rust Developer"].into_iter().enumerate() {
//!     let mut job = Job::new(JobId::new_random(), role, &company, "Remote, async Rust.",
//!         &format!("https://nimbus.example/jobs/{n}"), Utc::now(), Confidence::new(0.9)?);
//!     job.remote = n != 2;
//!     index.upsert(&job);
//! }
//! let query = JobQuery::new(JobFilter::default().remote_only(true).with_q("rust"));
//! let result = index.search(&query);
//! // Remote, and "rust" in the role or the post: the first two.
//! assert_eq!(result.total, 2);
//! # Ok::<(), job_listings_engine::domain::DomainError>(())
//! ```
//!
//! [`JobFilter::matches`] decides for a single job what the index decides for all of them; the
//! webhook outbox uses it to pick the subscriptions a new job goes to.

mod bitmap;
mod bm25;
mod bulk;
mod compact;
mod confidence;
mod facets;
mod filter;
mod highlight;
mod ids;
mod index;
mod indexed;
mod places;
mod reposts;
mod snapshot;
mod terms;
mod text;

/// The integration tests' reading of the search-word rule (NFC of the whole text, UAX #29, no
/// fast path), against which the unit tests of `text` check its fast paths.
#[cfg(test)]
#[path = "../../../tests/it/support/words.rs"]
mod reference_words;

pub use bulk::PreparedJobs;
pub use facets::{Facet, FacetCounts, RemoteCounts, ValueCount};
pub use filter::{search_terms, JobFilter, JobQuery, Near, Reposts, SearchResult, Sort};
pub use highlight::{Match, SNIPPET_CHARS};
pub use index::JobIndex;
pub use reposts::{
    is_repost, is_repost_of, repost_similarity, same_role, CopyFinder, RepostProbe, Shingles,
    REPOST_JACCARD, REPOST_WINDOW_DAYS,
};
pub use snapshot::SnapshotError;
pub use text::words;
