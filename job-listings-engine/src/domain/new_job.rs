//! A job as a source posts it: what ingest takes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::job::Posting;
use super::{
    timestamp, CompanyId, Confidence, DomainError, DomainTag, Job, JobId, JobStatus, Place,
    RemoteRegion, SalaryRange, Seniority,
};

/// A job as a source posts it, which is what an importer or an embedder gives ingest
/// (`JobListingsService::upsert_jobs`, `import_jobs`). The service makes the stored [`Job`]
/// from it, with what the service owns: the company's name (from the company record), and
/// when the job was first seen, first active and last changed.
///
/// A [`Job`] converts into it, dropping those fields, so a stored or generated job can be
/// ingested as it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewJob {
    /// The listing's identifier, the source's: posting the same id again updates the job.
    pub id: JobId,
    /// The role title, such as "Senior Backend Engineer". Searchable by `q`.
    pub role: String,
    /// The hiring company, which must be known to the service.
    pub company_id: CompanyId,
    /// The text of the post. Searchable by `q`.
    pub description: String,
    /// Domain tags, such as `engineering` or `ai`.
    #[serde(default)]
    pub domains: Vec<DomainTag>,
    /// Seniority levels, such as `senior` or `staff`.
    #[serde(default)]
    pub seniority: Vec<Seniority>,
    /// Whether the job can be done remotely.
    #[serde(default)]
    pub remote: bool,
    /// Where the job is, when it is not only remote.
    #[serde(default)]
    pub location: Option<String>,
    /// Where the original post can be read.
    pub source_url: String,
    /// The advertised pay, when there is one.
    #[serde(default)]
    pub salary: Option<SalaryRange>,
    /// When the listing was posted.
    #[serde(deserialize_with = "timestamp::deserialize")]
    pub posted_at: DateTime<Utc>,
    /// How sure the classifier is of the tags, 0 to 1.
    pub confidence: Confidence,
    /// Active (the default) or closed.
    #[serde(default)]
    pub status: JobStatus,
    /// Where the job is: countries, and cities with coordinates where known.
    #[serde(default)]
    pub places: Vec<Place>,
    /// Where remote applicants may live: countries, or `worldwide`.
    #[serde(default)]
    pub remote_regions: Vec<RemoteRegion>,
}

impl NewJob {
    /// Checks the invariants that types alone do not carry.
    pub fn validate(&self) -> Result<(), DomainError> {
        Posting {
            role: &self.role,
            description: &self.description,
            source_url: &self.source_url,
            location: self.location.as_deref(),
            salary: self.salary.as_ref(),
            domains: self.domains.len(),
            seniority: self.seniority.len(),
            posted_at: self.posted_at,
            places: &self.places,
            remote_regions: &self.remote_regions,
        }
        .check()
    }

    /// Whether the posting is active.
    pub fn is_active(&self) -> bool {
        self.status == JobStatus::Active
    }

    /// The job as stored, with what the service owns: the company's name and the times it
    /// was first seen, first active and last changed.
    pub fn into_stored(
        self,
        company_name: String,
        first_seen_at: DateTime<Utc>,
        activated_at: Option<DateTime<Utc>>,
        updated_at: DateTime<Utc>,
    ) -> Job {
        Job {
            id: self.id,
            role: self.role,
            company_id: self.company_id,
            company_name,
            description: self.description,
            domains: self.domains,
            seniority: self.seniority,
            remote: self.remote,
            location: self.location,
            source_url: self.source_url,
            salary: self.salary,
            posted_at: self.posted_at,
            confidence: self.confidence,
            status: self.status,
            activated_at,
            first_seen_at,
            updated_at,
            places: self.places,
            remote_regions: self.remote_regions,
            last_seen_at: None,
            last_posted_at: None,
            repost_of: None,
            reposts: Vec::new(),
        }
    }
}

/// A stored or generated job posted again: what the service owns is dropped.
impl From<Job> for NewJob {
    fn from(job: Job) -> Self {
        Self {
            id: job.id,
            role: job.role,
            company_id: job.company_id,
            description: job.description,
            domains: job.domains,
            seniority: job.seniority,
            remote: job.remote,
            location: job.location,
            source_url: job.source_url,
            salary: job.salary,
            posted_at: job.posted_at,
            confidence: job.confidence,
            status: job.status,
            places: job.places,
            remote_regions: job.remote_regions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;

    #[test]
    fn a_job_posted_again_and_stored_is_the_job_with_the_services_fields() {
        let job = Dataset::generate(6, 2, 3).jobs.remove(0);
        let again = NewJob::from(job.clone()).into_stored(
            job.company_name.clone(),
            job.first_seen_at,
            job.activated_at,
            job.updated_at,
        );
        assert_eq!(again, job);
    }

    #[test]
    fn a_new_job_is_checked_as_a_job_is() {
        let mut new = NewJob::from(Dataset::generate(6, 2, 3).jobs.remove(0));
        assert!(new.validate().is_ok());
        new.role = " ".to_owned();
        assert_eq!(new.validate().map_err(|e| e.field), Err("role"));
    }
}
