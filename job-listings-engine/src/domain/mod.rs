//! The values the engine works on, which validate once when built ("parse, don't validate"):
//! jobs as ingested and as stored, companies, ids, tags, confidence and paging.
//!
//! Nothing here knows about HTTP, storage or search.

mod company;
mod error;
mod ids;
mod job;
mod new_job;
mod paging;
mod place;
mod tags;
mod timestamp;

pub use company::{Company, Enrichment, FundingStage};
pub use error::DomainError;
pub use ids::{CompanyId, DeliveryId, EventId, JobId, KeyId, WebhookId};
pub use job::{Confidence, Job, JobStatus, Repost, SalaryRange};
pub use new_job::NewJob;
pub use paging::{page_of, Page, PerPage};
pub use place::{
    distance_km, Country, Currency, Place, RemoteRegion, EARTH_RADIUS_KM, MAX_PLACES,
    MAX_REMOTE_REGIONS,
};
pub use tags::{DomainTag, Seniority};

/// Helpers the library's own values share with these; not for embedders.
#[doc(hidden)]
pub mod shared {
    pub use super::ids::truncate;
    pub use super::timestamp::{after_leap_second, changed_at};
}
