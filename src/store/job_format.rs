//! The JSON form of a job that stores keep and search pages are served from, and a fingerprint
//! of its shape, so a store can tell whether records an earlier version wrote still have it.

use crate::domain::Job;

/// A job's JSON, `serde_json::to_vec(job)`, written into room for all of it from the start:
/// `to_vec` begins with 128 bytes and copied a job's text four or five times as it grew.
pub(crate) fn encode(job: &Job) -> serde_json::Result<Vec<u8>> {
    let mut json = Vec::with_capacity(ROOM_BESIDE_TEXT + job.role.len() + job.description.len());
    serde_json::to_writer(&mut json, job)?;
    Ok(json)
}

/// Bytes for a job's JSON beside its role and description: field names, ids, timestamps,
/// tags, the company name, the URL and the salary, with room to spare.
const ROOM_BESIDE_TEXT: usize = 1_024;

/// A fingerprint of the shape of `serde_json::to_vec(&job)` in this build: the CRC32 of the
/// encoding of a fixed job with every field set. It changes when a field is added, removed,
/// renamed or encoded differently.
#[cfg(feature = "sled")]
pub(crate) fn fingerprint() -> u32 {
    use crate::domain::{
        CompanyId, Confidence, DomainTag, JobId, JobStatus, SalaryRange, Seniority,
    };
    use chrono::DateTime;
    use uuid::Uuid;

    let at = DateTime::from_timestamp(1_700_000_000, 123_456_789).unwrap_or_default();
    let Ok(confidence) = Confidence::new(0.25) else {
        return 0;
    };
    // A struct literal, so that a new field fails to compile here until it is set.
    let sample = Job {
        id: JobId(Uuid::from_u128(1)),
        role: "role".to_owned(),
        company_id: CompanyId(Uuid::from_u128(2)),
        company_name: "company".to_owned(),
        description: "text".to_owned(),
        domains: DomainTag::parse("ai").into_iter().collect(),
        seniority: Seniority::parse("senior").into_iter().collect(),
        remote: true,
        location: Some("place".to_owned()),
        source_url: "https://example.com/job".to_owned(),
        salary: Some(SalaryRange {
            min: Some(1),
            max: Some(2),
            currency: "EUR".to_owned(),
            period: "year".to_owned(),
        }),
        posted_at: at,
        confidence,
        status: JobStatus::Active,
        activated_at: Some(at),
        first_seen_at: at,
        updated_at: at,
    };
    crc32fast::hash(&serde_json::to_vec(&sample).unwrap_or_default())
}
