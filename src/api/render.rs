//! How jobs and companies look on the wire, and a bounded cache of their rendered JSON.
//!
//! The store keeps records; the API decides what a client sees. [`JobView`] is a job as every
//! endpoint sends it (search pages, details, a company's jobs). Rendering a job is most of the
//! work of a search page, so [`RenderCache`] keeps each one's JSON, keyed by the job's id and
//! `updated_at`: the service gives every change of a record a new `updated_at`, so a changed
//! job is a new key and the old entry simply ages out. A new response field changes
//! [`JobView`] and nothing stored.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use serde::Serialize;

use super::encoding::Coding;
use super::etag::ETag;
use crate::domain::{
    Company, CompanyId, DomainTag, Job, JobId, JobStatus, Place, RemoteRegion, Repost, SalaryRange,
    Seniority,
};

/// The fields of [`JobView`], in the order it sends them: what `fields=` may name (a test
/// holds the two together).
pub(crate) const JOB_FIELDS: &[&str] = &[
    "id",
    "role",
    "company_id",
    "company_name",
    "description",
    "domains",
    "seniority",
    "remote",
    "location",
    "places",
    "remote_regions",
    "source_url",
    "salary",
    "posted_at",
    "confidence",
    "status",
    "activated_at",
    "first_seen_at",
    "updated_at",
    "last_seen_at",
    "last_posted_at",
    "repost_of",
    "reposts",
];

/// A job as the API sends it.
#[derive(Serialize)]
pub(crate) struct JobView<'a> {
    id: JobId,
    role: &'a str,
    company_id: CompanyId,
    company_name: &'a str,
    description: &'a str,
    domains: &'a [DomainTag],
    seniority: &'a [Seniority],
    remote: bool,
    location: Option<&'a str>,
    places: &'a [Place],
    remote_regions: &'a [RemoteRegion],
    source_url: &'a str,
    salary: Option<SalaryView<'a>>,
    posted_at: DateTime<Utc>,
    confidence: f64,
    status: JobStatus,
    activated_at: Option<DateTime<Utc>>,
    first_seen_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    last_seen_at: DateTime<Utc>,
    last_posted_at: DateTime<Utc>,
    repost_of: Option<JobId>,
    reposts: &'a [Repost],
}

/// A view sends exactly the serde form of the job it shows (the tests below hold it to that),
/// so its schema is the job's: one `Job` component, whichever of the two a type holds.
impl schemars::JsonSchema for JobView<'_> {
    fn inline_schema() -> bool {
        Job::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        Job::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        Job::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Job::json_schema(generator)
    }
}

/// A job's advertised pay as the API sends it.
#[derive(Serialize)]
struct SalaryView<'a> {
    min: Option<u64>,
    max: Option<u64>,
    currency: &'a str,
    period: &'a str,
}

impl<'a> From<&'a Job> for JobView<'a> {
    fn from(job: &'a Job) -> Self {
        Self {
            id: job.id,
            role: &job.role,
            company_id: job.company_id,
            company_name: &job.company_name,
            description: &job.description,
            domains: &job.domains,
            seniority: &job.seniority,
            remote: job.remote,
            location: job.location.as_deref(),
            places: &job.places,
            remote_regions: &job.remote_regions,
            source_url: &job.source_url,
            salary: job.salary.as_ref().map(SalaryView::from),
            posted_at: job.posted_at,
            confidence: job.confidence.get(),
            status: job.status,
            activated_at: job.activated_at,
            first_seen_at: job.first_seen_at,
            updated_at: job.updated_at,
            last_seen_at: job.last_seen(),
            last_posted_at: job.last_posted(),
            repost_of: job.repost_of,
            reposts: &job.reposts,
        }
    }
}

impl<'a> From<&'a SalaryRange> for SalaryView<'a> {
    fn from(salary: &'a SalaryRange) -> Self {
        Self {
            min: salary.min,
            max: salary.max,
            currency: &salary.currency,
            period: &salary.period,
        }
    }
}

/// What identifies one rendering: a record's id and the `updated_at` of the state rendered.
type RenderKey<Id> = (Id, DateTime<Utc>);

/// A job's id and when it was last seen ([`Job::revision`]).
type JobRevision = (JobId, DateTime<Utc>);

/// What an entry costs besides its bytes: the key, the `Bytes` handle and the table slot.
const ENTRY_OVERHEAD: u64 = 80;

/// Weighs an entry by its bytes, so the bound is in memory rather than in records.
#[derive(Clone, Copy)]
struct ByLength;

impl<Id> Weighter<RenderKey<Id>, Bytes> for ByLength {
    fn weight(&self, _key: &RenderKey<Id>, json: &Bytes) -> u64 {
        json.len() as u64 + ENTRY_OVERHEAD
    }
}

/// Rendered JSON of recently sent jobs and companies, bounded in bytes (0 turns it off).
pub(crate) struct RenderCache {
    /// Keyed by [`Job::revision`] as well: `last_seen_at` moves without `updated_at`.
    jobs: Option<Cache<RenderKey<JobRevision>, Bytes, ByLength>>,
    companies: Option<Cache<RenderKey<CompanyId>, Bytes, ByLength>>,
    /// Whole answers by entity tag: as JSON, and compressed in each coding asked for.
    answers: Option<Cache<AnswerKey, Bytes, ByLength>>,
}

/// What identifies a kept answer: its entity tag (a 64-bit hash of what was asked and one
/// of what the answer is made of), and for a compressed one its coding and its length before coding, so that even two
/// answers whose tags collided would also need one length to be confused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum AnswerKey {
    Json(ETag),
    Coded(ETag, Coding, usize),
}

impl Weighter<AnswerKey, Bytes> for ByLength {
    fn weight(&self, _key: &AnswerKey, body: &Bytes) -> u64 {
        body.len() as u64 + ENTRY_OVERHEAD
    }
}

impl std::fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderCache")
            .field("jobs", &self.jobs.as_ref().map_or(0, Cache::len))
            .field("companies", &self.companies.as_ref().map_or(0, Cache::len))
            .field("answers", &self.answers.as_ref().map_or(0, Cache::len))
            .finish()
    }
}

impl RenderCache {
    /// A cache holding up to `capacity_bytes` of rendered jobs; companies, fewer and sent
    /// with each job detail, get a sixteenth of that on top, and whole answers a quarter.
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        Self {
            jobs: bounded(capacity_bytes),
            companies: bounded(capacity_bytes / 16),
            answers: (capacity_bytes > 0).then(|| {
                let bytes = capacity_bytes / 4;
                // Answers run from a few kilobytes (a detail, a compressed page) to a hundred
                // (a page of 100 long posts); this only sizes the tables.
                let estimated = usize::try_from(bytes / 8192).unwrap_or(usize::MAX);
                Cache::with_weighter(estimated.max(16), bytes, ByLength)
            }),
        }
    }

    /// The JSON of the answer tagged `tag`: as kept, or `render`ed now and kept. A page or
    /// record asked for again is then sent from memory without being put together again:
    /// at a page of long posts, allocating and filling the body was a fifth of the request.
    pub(crate) fn json(&self, tag: ETag, render: impl FnOnce() -> Vec<u8>) -> Bytes {
        self.answer(AnswerKey::Json(tag), || Bytes::from(render()))
    }

    /// The answer tagged `tag`, whose JSON is `body`, in `coding`: as kept, or compressed
    /// now and kept.
    pub(crate) fn compressed(&self, tag: ETag, coding: Coding, body: &[u8]) -> Bytes {
        let key = AnswerKey::Coded(tag, coding, body.len());
        self.answer(key, || coding.compress(body))
    }

    fn answer(&self, key: AnswerKey, make: impl FnOnce() -> Bytes) -> Bytes {
        if let Some(bytes) = self.answers.as_ref().and_then(|c| c.get(&key)) {
            return bytes;
        }
        let bytes = make();
        if let Some(cache) = &self.answers {
            cache.insert(key, bytes.clone());
        }
        bytes
    }

    /// A job's JSON as the API sends it.
    pub(crate) fn job(&self, job: &Job) -> Bytes {
        cached(self.jobs.as_ref(), (job.revision(), job.updated_at), || {
            JobView::from(job)
        })
    }

    /// A company's JSON as the API sends it.
    pub(crate) fn company(&self, company: &Company) -> Bytes {
        cached(
            self.companies.as_ref(),
            (company.id, company.updated_at),
            || company,
        )
    }
}

/// A cache of up to `bytes` of renderings; none for 0.
fn bounded<Id: Eq + std::hash::Hash + Clone>(
    bytes: u64,
) -> Option<Cache<RenderKey<Id>, Bytes, ByLength>> {
    (bytes > 0).then(|| {
        // A typical job renders to about a kilobyte; this only sizes the tables.
        let estimated = usize::try_from(bytes / 1024).unwrap_or(usize::MAX);
        Cache::with_weighter(estimated.max(16), bytes, ByLength)
    })
}

/// The cached rendering under `key`, or `view()` rendered now and kept.
fn cached<Id, V: Serialize>(
    cache: Option<&Cache<RenderKey<Id>, Bytes, ByLength>>,
    key: RenderKey<Id>,
    view: impl FnOnce() -> V,
) -> Bytes
where
    Id: Eq + std::hash::Hash + Clone,
{
    if let Some(json) = cache.and_then(|c| c.get(&key)) {
        return json;
    }
    let json = Bytes::from(render(&view()));
    if let Some(cache) = cache {
        cache.insert(key, json.clone());
    }
    json
}

/// A view's JSON. Our views hold only strings, numbers, booleans, times and lists of them,
/// which always encode.
pub(crate) fn render(view: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(view).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;

    #[test]
    fn a_job_renders_every_field_of_the_record() {
        let mut job = Dataset::generate(2, 3, 4).jobs.remove(0);
        // Stored without them (an older record, a job without copies), the times are sent
        // as `updated_at` and `posted_at`.
        let rendered: serde_json::Value =
            serde_json::from_slice(&RenderCache::new(0).job(&job)).unwrap();
        assert_eq!(rendered["last_seen_at"], serde_json::json!(job.updated_at));
        assert_eq!(rendered["last_posted_at"], serde_json::json!(job.posted_at));
        job.last_seen_at = Some(job.updated_at + chrono::Duration::seconds(5));
        job.last_posted_at = Some(job.posted_at + chrono::Duration::days(3));
        job.location = Some("Lisbon".to_owned());
        job.salary = Some(SalaryRange {
            min: Some(1),
            max: None,
            currency: "EUR".to_owned(),
            period: "month".to_owned(),
        });
        let rendered: serde_json::Value =
            serde_json::from_slice(&RenderCache::new(0).job(&job)).unwrap();
        assert_eq!(rendered, serde_json::to_value(&job).unwrap());
    }

    #[test]
    fn the_fields_a_search_may_name_are_those_a_job_renders_in_order() {
        let job = Dataset::generate(2, 3, 4).jobs.remove(0);
        let rendered = RenderCache::new(0).job(&job);
        let text = std::str::from_utf8(&rendered).unwrap();
        let mut at = 0;
        for name in JOB_FIELDS {
            let key = format!("\"{name}\":");
            let found = text[at..].find(&key).map(|i| at + i);
            assert!(
                found.is_some(),
                "{name} is not rendered after the fields before it"
            );
            at = found.unwrap_or(at);
        }
        let rendered: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).unwrap();
        assert_eq!(rendered.len(), JOB_FIELDS.len());
    }

    #[test]
    fn a_changed_job_is_rendered_again_and_an_unchanged_one_is_not() {
        let cache = RenderCache::new(1 << 20);
        let mut job = Dataset::generate(2, 3, 4).jobs.remove(0);
        let first = cache.job(&job);
        // The same state is served from the cache: the very same bytes.
        assert_eq!(cache.job(&job).as_ptr(), first.as_ptr());
        job.role = "Changed".to_owned();
        job.updated_at += chrono::Duration::nanoseconds(1);
        let second = cache.job(&job);
        assert!(String::from_utf8_lossy(&second).contains("\"role\":\"Changed\""));
    }
}
