//! What the index reads of a job, borrowed from the [`Job`].

use chrono::{DateTime, Utc};

use crate::domain::{
    CompanyId, DomainTag, Job, JobId, JobStatus, Place, RemoteRegion, SalaryRange, Seniority,
};

/// The fields of a job that indexing it reads, borrowed from wherever the job is held.
pub(crate) struct IndexedFields<'a> {
    pub(crate) id: JobId,
    pub(crate) active: bool,
    pub(crate) posted_at: DateTime<Utc>,
    pub(crate) confidence: f64,
    pub(crate) domains: &'a [DomainTag],
    pub(crate) seniority: &'a [Seniority],
    pub(crate) remote: bool,
    pub(crate) company_id: CompanyId,
    pub(crate) company_name: &'a str,
    pub(crate) role: &'a str,
    pub(crate) description: &'a str,
    pub(crate) places: &'a [Place],
    pub(crate) remote_regions: &'a [RemoteRegion],
    pub(crate) salary: Option<&'a SalaryRange>,
    /// A copy of another active job, left out of searches that hide reposts.
    pub(crate) repost: bool,
    pub(crate) last_seen: DateTime<Utc>,
}

/// A job the index can read.
pub(crate) trait IndexedJob {
    fn fields(&self) -> IndexedFields<'_>;
}

impl IndexedJob for Job {
    fn fields(&self) -> IndexedFields<'_> {
        IndexedFields {
            id: self.id,
            active: self.status == JobStatus::Active,
            posted_at: self.posted_at,
            confidence: self.confidence.get(),
            domains: &self.domains,
            seniority: &self.seniority,
            remote: self.remote,
            company_id: self.company_id,
            company_name: &self.company_name,
            role: &self.role,
            description: &self.description,
            places: &self.places,
            remote_regions: &self.remote_regions,
            salary: self.salary.as_ref(),
            repost: self.repost_of.is_some(),
            last_seen: self.last_seen(),
        }
    }
}

impl<J: IndexedJob> IndexedJob for &J {
    fn fields(&self) -> IndexedFields<'_> {
        (**self).fields()
    }
}
