//! A job read from its JSON for what searching it needs, without making a [`Job`] of it.
//!
//! Decoding a whole job allocates a string for each of its texts and drops fields a search
//! never reads; when the index is rebuilt from a million stored jobs, that was most of the
//! time spent decoding them. A view borrows its texts from the JSON (a text with an escape in
//! it is the only one copied) and skips the fields the index does not read.
//!
//! [`Job`]: super::Job

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{timestamp, CompanyId, Confidence, DomainTag, JobId, JobStatus, Seniority};

/// The fields of a job's JSON (as `serde_json::to_vec(&job)` writes it) that the search index
/// reads, each decoded as [`Job`](super::Job) decodes it.
#[derive(Debug, Deserialize)]
pub(crate) struct JobJsonFields<'a> {
    pub(crate) id: JobId,
    #[serde(borrow)]
    pub(crate) role: Cow<'a, str>,
    pub(crate) company_id: CompanyId,
    #[serde(borrow, default)]
    pub(crate) company_name: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) description: Cow<'a, str>,
    #[serde(default)]
    pub(crate) domains: Vec<DomainTag>,
    #[serde(default)]
    pub(crate) seniority: Vec<Seniority>,
    #[serde(default)]
    pub(crate) remote: bool,
    #[serde(deserialize_with = "timestamp::deserialize")]
    pub(crate) posted_at: DateTime<Utc>,
    pub(crate) confidence: Confidence,
    #[serde(default)]
    pub(crate) status: JobStatus,
}

impl<'a> JobJsonFields<'a> {
    /// Reads a job's JSON.
    pub(crate) fn from_json(json: &'a [u8]) -> Result<Self, String> {
        // The UTF-8 checked once, as a whole: `from_slice` checks each string on its own.
        let text = std::str::from_utf8(json).map_err(|e| e.to_string())?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;

    /// Every field reads as the whole job's does, texts with escapes included.
    #[test]
    fn a_view_reads_the_fields_a_whole_job_decodes() {
        let mut jobs = Dataset::generate(5, 10, 50).jobs;
        jobs[0].description = "Line one\nline \"two\" — ünïcode\t\\".to_owned();
        jobs[1].role = "C++ \u{1F998} dev".to_owned();
        jobs[2].status = JobStatus::Closed;
        for job in &jobs {
            let json = serde_json::to_vec(job).unwrap();
            let view = JobJsonFields::from_json(&json).unwrap();
            assert_eq!(view.id, job.id);
            assert_eq!(view.role, job.role);
            assert_eq!(view.company_id, job.company_id);
            assert_eq!(view.company_name, job.company_name);
            assert_eq!(view.description, job.description);
            assert_eq!(view.domains, job.domains);
            assert_eq!(view.seniority, job.seniority);
            assert_eq!(view.remote, job.remote);
            assert_eq!(view.posted_at, job.posted_at);
            assert_eq!(view.confidence, job.confidence);
            assert_eq!(view.status, job.status);
        }
        let plain = serde_json::to_vec(&jobs[3]).unwrap();
        assert!(matches!(
            JobJsonFields::from_json(&plain).unwrap().description,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn json_that_is_not_a_job_is_an_error_that_says_why() {
        let error = JobJsonFields::from_json(br#"{"id": "not-a-uuid"}"#).unwrap_err();
        assert!(error.contains("UUID") || error.contains("uuid"), "{error}");
        assert!(JobJsonFields::from_json(b"\xff\xfe").is_err());
    }
}
