//! # job-listings-engine
//!
//! The query engine of job-listings, usable on its own: [`query::JobIndex`] holds the active
//! jobs' searchable attributes in memory and answers a [`query::JobQuery`] with the total
//! count, one page of ids and, on request, facet counts; [`domain`] holds the values it works
//! on. Synchronous, allocation-aware, no I/O: no async runtime, HTTP, storage, compression,
//! crypto or metrics crate. The `job-listings` library builds its service and API on it and
//! re-exports both modules as `job_listings::query` and `job_listings::domain`.
//!
//! ```
//! use chrono::Utc;
//! use job_listings_engine::domain::{Company, CompanyId, Confidence, FundingStage, Job, JobId};
//! use job_listings_engine::query::{JobFilter, JobIndex, JobQuery};
//!
//! let company = Company::new(CompanyId::new_random(), "Nimbus", "nimbus.example",
//!     FundingStage::parse("seed")?);
//! let job = Job::new(JobId::new_random(), "Rust Engineer", &company, "Tokio and sled.",
//!     "https://nimbus.example/jobs/1", Utc::now(), Confidence::new(0.9)?);
//! let mut index = JobIndex::new();
//! index.upsert(&job);
//! let found = index.search(&JobQuery::new(JobFilter::default().with_q("tokio")));
//! assert_eq!(found.ids, vec![job.id]);
//! # Ok::<(), job_listings_engine::domain::DomainError>(())
//! ```
//!
//! ## Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `demo` | no | `demo`, a deterministic demo dataset generator |
//! | `schema` | no | `schemars::JsonSchema` for the values the API sends and reads |

#[cfg(any(test, feature = "demo"))]
pub mod demo;
pub mod domain;
pub mod query;
