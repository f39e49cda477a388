//! The embeddable query engine: an in-memory index over active jobs.
//!
//! [`JobIndex`] answers a [`JobQuery`] with the total number of matches, one page of job ids,
//! newest `posted_at` first with ties broken by id ascending, and the [`Facet`] counts the
//! query asks for. It is synchronous, does no I/O and
//! knows nothing of HTTP or storage, so another program can use it on its own:
//!
//! ```
//! use job_listings::query::{JobFilter, JobIndex, JobQuery};
//! # use job_listings::demo;
//! let mut index = JobIndex::new();
//! for job in demo::Dataset::generate(7, 10, 200).jobs {
//!     index.upsert(&job);
//! }
//! let query = JobQuery::new(JobFilter { remote_only: true, ..JobFilter::default() }.with_q("rust"));
//! let result = index.search(&query);
//! assert!(result.ids.len() as u64 <= result.total);
//! ```
//!
//! [`JobFilter::matches`] decides for a single job what the index decides for all of them; the
//! webhook outbox uses it to pick the subscriptions a new job goes to.

mod bitmap;
mod bulk;
mod compact;
mod confidence;
mod facets;
mod filter;
mod ids;
mod index;
mod indexed;
mod snapshot;
mod terms;
mod text;

/// The integration tests' reading of the search-word rule (NFC of the whole text, UAX #29, no
/// fast path), against which the unit tests of `text` check its fast paths.
#[cfg(test)]
#[path = "../../tests/it/support/words.rs"]
mod reference_words;

pub use bulk::PreparedJobs;
pub use facets::{Facet, FacetCounts, RemoteCounts, ValueCount};
pub use filter::{search_terms, JobFilter, JobQuery, SearchResult};
pub use index::JobIndex;
pub use snapshot::SnapshotError;
pub use text::words;
