//! # job-listings
//!
//! A job-listings API as a library: search and filter active job listings, read a listing
//! with its company's enrichment data, browse hiring companies, register webhooks that announce
//! new jobs, and check monthly usage — every call authenticated by a paid API key.
//!
//! The crate is layered so each part can be used alone; dependencies point down only:
//!
//! | module | what it is | knows |
//! |---|---|---|
//! | `mcp` | the Model Context Protocol frontend: tools over streamable HTTP and stdio (feature `mcp`) | rmcp, [`api`] |
//! | `client` | a typed client of the public and admin APIs over HTTP (feature `client`) | reqwest, [`domain`] |
//! | [`server`] | hyper 1.x frontend: accept loop, timeouts, limits, graceful shutdown | hyper, [`api`] |
//! | [`api`] | framework-agnostic HTTP: routes, parameters, auth headers, errors, OpenAPI; a `tower::Service` | `http`, [`service`] |
//! | [`service`] | [`JobListingsService`](service::JobListingsService): keys, plans, quotas, ingest | [`query`], [`store`], [`webhooks`] |
//! | [`query`] | the embeddable search engine (the `job-listings-engine` crate, re-exported), pure and synchronous | [`domain`] |
//! | [`store`] | the [`Store`](store::Store) trait; sled (default), PostgreSQL and memory stores | [`domain`] |
//! | [`webhooks`] | callback policy, outbox events, Standard Webhooks signing, retries, the HTTP sender | [`query`], [`domain`] |
//! | [`domain`] | validated values: ids, tags, keys, plans, jobs, companies | — |
//! | `demo` | a deterministic demo dataset (feature `demo`) | [`domain`] |
//!
//! ## Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `sled` | yes | [`store::SledStore`], the on-disk default store |
//! | `server` | yes | `server`, the hyper frontend |
//! | `webhooks` | yes | `webhooks::HttpNotifier`, the reqwest sender that delivers webhooks |
//! | `postgres` | no | `store::PgStore`, the PostgreSQL store several server replicas share |
//! | `demo` | no | `demo`, a deterministic demo dataset generator |
//! | `client` | no | `client`, a typed client of the public and admin APIs (reqwest with rustls) |
//! | `mcp` | no | `mcp`, the MCP frontend on rmcp (`/mcp`); with `client`, MCP over stdio too |
//!
//! With no features you get the domain, the query engine, the service, the HTTP layer, the
//! memory store and the webhook outbox. The operator's program (serve, import, keys) is the
//! `job-listings` binary of the `job-listings-server` package beside this crate.
//!
//! ## The query engine alone
//!
//! [`query::JobIndex`] is synchronous and does no I/O: index jobs, then search them.
//!
//! ```
//! use chrono::Utc;
//! use job_listings::domain::{Company, CompanyId, Confidence, FundingStage, Job, JobId};
//! use job_listings::query::{JobFilter, JobIndex, JobQuery};
//!
//! let company = Company::new(CompanyId::new_random(), "Nimbus", "nimbus.example",
//!     FundingStage::parse("seed")?);
//! let job = Job::new(JobId::new_random(), "Rust Engineer", &company, "Tokio and sled.",
//!     "https://nimbus.example/jobs/1", Utc::now(), Confidence::new(0.9)?);
//! let mut index = JobIndex::new();
//! index.upsert(&job);
//! let found = index.search(&JobQuery::new(JobFilter::default().with_q("tokio")));
//! assert_eq!(found.ids, vec![job.id]);
//! # Ok::<(), job_listings::domain::DomainError>(())
//! ```
//!
//! ## The typed service, without HTTP
//!
//! [`service::JobListingsService`] is what the HTTP layer calls: keys, plans, quotas, search,
//! companies, webhooks and usage, as typed values and typed errors.
//!
//! ```
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
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
//! let query = JobQuery::new(JobFilter::default().with_q("rust"));
//! let page = service.search_jobs(&key, query, Held::Nothing).await?;
//! println!("{} jobs, {} calls left", page.total, page.quota.remaining);
//! # Ok(()) }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(run())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Embedding the whole API
//!
//! ```no_run
//! # #[cfg(all(feature = "sled", feature = "server"))]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use job_listings::api::Api;
//! use job_listings::server::{Server, ServerConfig};
//! use job_listings::service::JobListingsService;
//! use job_listings::store::{SledConfig, SledStore};
//!
//! let store = SledStore::open(&SledConfig::new("./data"))?;
//! let service = JobListingsService::builder().store(Arc::new(store)).build().await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! Server::new(listener, Api::new(service), ServerConfig::default())?
//!     .run(std::future::pending())
//!     .await?;
//! # Ok(()) }
//! ```

#[macro_use]
mod setters;

pub mod api;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "demo")]
pub use job_listings_engine::demo;
pub mod domain;
#[cfg(feature = "mcp")]
pub mod mcp;
pub use job_listings_engine::query;
#[cfg(feature = "server")]
pub mod server;
pub mod service;
pub mod store;
pub mod webhooks;
pub mod wire;
