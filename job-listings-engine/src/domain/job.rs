use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::place::check_places;
use super::{
    timestamp, Company, CompanyId, DomainError, DomainTag, JobId, Place, RemoteRegion, Seniority,
};

const RANGE: &str = "must be a number from 0 to 1, such as 0.8";

/// A classification confidence between 0 and 1 inclusive, compared exactly as stored.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Confidence(f64);

impl Confidence {
    /// Validates a confidence: a finite number from 0 to 1. `-0.0` is kept as `0.0`, so it is
    /// never echoed back with its sign.
    pub fn new(value: f64) -> Result<Self, DomainError> {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            // Adding zero turns -0.0 into 0.0 and leaves every other value as it is.
            Ok(Self(value + 0.0))
        } else {
            Err(DomainError::new("confidence", RANGE))
        }
    }

    /// Parses the `min_confidence` query parameter.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        raw.trim()
            .parse::<f64>()
            .ok()
            .and_then(|v| Self::new(v).ok())
            .ok_or_else(|| DomainError::new("min_confidence", RANGE))
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

// `new` admits no NaN and turns -0.0 into 0.0, so equal confidences have equal bits: equality
// is total and hashing the bits agrees with it.
impl Eq for Confidence {}

impl std::hash::Hash for Confidence {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Confidence {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Confidence".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "number", "minimum": 0, "maximum": 1 })
    }
}

impl TryFrom<f64> for Confidence {
    type Error = DomainError;
    fn try_from(v: f64) -> Result<Self, Self::Error> {
        Self::new(v)
    }
}

impl From<Confidence> for f64 {
    fn from(c: Confidence) -> f64 {
        c.0
    }
}

/// Whether a listing is open. Only active listings are searchable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(inline))]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Open and searchable.
    #[default]
    Active,
    /// Filled or withdrawn; kept for the record, never searched.
    Closed,
}

/// Advertised pay. On input, at most 16 bytes of `currency` and 32 of `period`, and `min`
/// not above `max`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SalaryRange {
    /// Lower bound, in whole currency units.
    pub min: Option<u64>,
    /// Upper bound, in whole currency units.
    pub max: Option<u64>,
    /// ISO 4217 code such as `USD`.
    pub currency: String,
    /// What the amounts are per: `year`, `month`, `hour`.
    #[serde(default = "default_salary_period")]
    pub period: String,
}

fn default_salary_period() -> String {
    "year".to_owned()
}

impl SalaryRange {
    /// The yearly upper bound: `max`, else `min`, times the periods in a year (hour 2,080,
    /// day 260, week 52, month 12, year 1; `period` in any case). `None` without an amount,
    /// for another period, or beyond `u64`.
    pub fn yearly_max(&self) -> Option<u64> {
        let per_year: u64 = match self.period.to_ascii_lowercase().as_str() {
            "hour" => 2_080,
            "day" => 260,
            "week" => 52,
            "month" => 12,
            "year" => 1,
            _ => return None,
        };
        self.max.or(self.min)?.checked_mul(per_year)
    }
}

/// A job listing, active or closed, as the API sends it and as an import line or
/// `PUT /admin/v1/jobs/{id}` takes it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Job {
    /// The listing's identifier.
    pub id: JobId,
    /// The role title, such as "Senior Backend Engineer": not blank, at most 300 bytes.
    /// Searchable by `q`.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub role: String,
    /// The hiring company.
    pub company_id: CompanyId,
    /// The hiring company's name. Searchable by `q` and `company`. The service fills it in
    /// from the company record on ingest, so importers may leave it out.
    #[serde(default)]
    pub company_name: String,
    /// The text of the post. Searchable by `q`.
    pub description: String,
    /// Domain tags (an open vocabulary), such as `engineering` or `ai`, kept in lower case;
    /// at most 32.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = 32)))]
    pub domains: Vec<DomainTag>,
    /// Seniority levels (an open vocabulary), such as `senior` or `staff`, kept in lower
    /// case; at most 16.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = 16)))]
    pub seniority: Vec<Seniority>,
    /// Whether the job can be done remotely.
    #[serde(default)]
    pub remote: bool,
    /// Where the job is, when it is not only remote.
    #[serde(default)]
    pub location: Option<String>,
    /// Where the original post can be read: not blank, at most 2,000 bytes.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub source_url: String,
    /// The advertised pay, when there is one.
    #[serde(default)]
    pub salary: Option<SalaryRange>,
    /// When the listing was posted.
    #[serde(deserialize_with = "timestamp::deserialize")]
    pub posted_at: DateTime<Utc>,
    /// How sure the classifier is of the tags, 0 to 1.
    pub confidence: Confidence,
    /// Active or closed.
    #[serde(default)]
    pub status: JobStatus,
    /// When the listing first became active, which is when it was announced to webhooks
    /// (set by the service on ingest).
    #[serde(default, deserialize_with = "timestamp::deserialize_option")]
    pub activated_at: Option<DateTime<Utc>>,
    /// When the service first saw the listing (set by the service on ingest).
    #[serde(default = "Utc::now", deserialize_with = "timestamp::deserialize")]
    pub first_seen_at: DateTime<Utc>,
    /// When the listing last changed (set by the service on ingest).
    #[serde(default = "Utc::now", deserialize_with = "timestamp::deserialize")]
    pub updated_at: DateTime<Utc>,
    /// Where the job is: countries, and cities with coordinates where known; at most 20.
    /// Beside the free-text `location`. Last but one: stored records of earlier versions
    /// end before it.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = 20)))]
    pub places: Vec<Place>,
    /// Where remote applicants may live: countries, or `worldwide`; at most 60.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = 60)))]
    pub remote_regions: Vec<RemoteRegion>,
    /// When the crawler last sent the listing, changed or not (set by the service on
    /// ingest; sent as [`Job::last_seen`], its `updated_at` for a listing stored before
    /// this was kept and not sent since). Filtered by `seen_after`.
    #[serde(default, deserialize_with = "timestamp::deserialize_option")]
    pub last_seen_at: Option<DateTime<Utc>>,
    /// The newest `posted_at` of the listing and its reposts (set by the service on
    /// ingest on a listing with reposts; sent as [`Job::last_posted`]).
    #[serde(default, deserialize_with = "timestamp::deserialize_option")]
    pub last_posted_at: Option<DateTime<Utc>>,
    /// The canonical listing this one is a repost of: the earliest posted open copy of the
    /// same job (set by the service on ingest). A repost is left out of searches, totals,
    /// facets and the change feed's `job.new` unless `reposts=include` is asked for.
    #[serde(default)]
    pub repost_of: Option<JobId>,
    /// On a canonical listing, the other copies of the same job, newest posted first (set by
    /// the service on ingest); empty otherwise.
    #[serde(default)]
    pub reposts: Vec<Repost>,
}

/// Another copy of a job: the same company, the same role, a near-identical post, posted
/// within 60 days.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Repost {
    /// The copy's own listing id (`GET /jobs/{id}` answers it, with `repost_of`).
    pub id: JobId,
    /// Where the copy was posted.
    pub source_url: String,
    /// When the copy was posted.
    #[serde(deserialize_with = "timestamp::deserialize")]
    pub posted_at: DateTime<Utc>,
}

impl Repost {
    /// A copy as its canonical job lists it.
    pub fn new(id: JobId, source_url: impl Into<String>, posted_at: DateTime<Utc>) -> Self {
        Self {
            id,
            source_url: source_url.into(),
            posted_at,
        }
    }
}

impl Job {
    /// An active listing of `company` (its id and its name, which `company` searches match)
    /// with what a posting must have; the other fields start empty (no tags, on site, no
    /// location or salary) for the caller to set. The times the service keeps
    /// (`activated_at`, `first_seen_at`, `updated_at`) are set by the service on ingest; until
    /// then they are empty and `posted_at`.
    ///
    /// ```
    /// use chrono::Utc;
    /// use job_listings_engine::domain::{
    ///     Company, CompanyId, Confidence, DomainTag, FundingStage, Job, JobId,
    /// };
    ///
    /// let company = Company::new(
    ///     CompanyId::new_random(),
    ///     "Nimbus Labs",
    ///     "nimbus.example",
    ///     FundingStage::parse("series_a")?,
    /// );
    /// let mut job = Job::new(
    ///     JobId::new_random(),
    ///     "Senior Rust Engineer",
    ///     &company,
    ///     "Build the search engine.",
    ///     "https://example.com/jobs/1",
    ///     Utc::now(),
    ///     Confidence::new(0.9)?,
    /// );
    /// job.remote = true;
    /// job.domains = vec![DomainTag::parse("engineering")?];
    /// assert!(job.is_active());
    /// assert_eq!(job.company_name, "Nimbus Labs");
    /// # Ok::<(), job_listings_engine::domain::DomainError>(())
    /// ```
    pub fn new(
        id: JobId,
        role: impl Into<String>,
        company: &Company,
        description: impl Into<String>,
        source_url: impl Into<String>,
        posted_at: DateTime<Utc>,
        confidence: Confidence,
    ) -> Self {
        Self {
            id,
            role: role.into(),
            company_id: company.id,
            company_name: company.name.clone(),
            description: description.into(),
            domains: Vec::new(),
            seniority: Vec::new(),
            remote: false,
            location: None,
            source_url: source_url.into(),
            salary: None,
            posted_at,
            confidence,
            status: JobStatus::Active,
            activated_at: None,
            first_seen_at: posted_at,
            updated_at: posted_at,
            places: Vec::new(),
            remote_regions: Vec::new(),
            last_seen_at: None,
            last_posted_at: None,
            repost_of: None,
            reposts: Vec::new(),
        }
    }

    /// Whether the listing is active (searchable).
    pub fn is_active(&self) -> bool {
        self.status == JobStatus::Active
    }

    /// What tells one state of the listing as sent from another: its id and when it was
    /// last seen (`updated_at` moves with every change; `last_seen_at` also without one).
    pub fn revision(&self) -> (JobId, DateTime<Utc>) {
        (self.id, self.last_seen())
    }

    /// When the crawler last sent the listing: `last_seen_at`, else `updated_at`.
    pub fn last_seen(&self) -> DateTime<Utc> {
        self.last_seen_at.unwrap_or(self.updated_at)
    }

    /// The newest `posted_at` of the listing and its reposts: `last_posted_at`, else
    /// `posted_at`.
    pub fn last_posted(&self) -> DateTime<Utc> {
        self.last_posted_at.unwrap_or(self.posted_at)
    }

    /// Whether two states of a job differ only in when they were written (`updated_at`) and
    /// last seen (`last_seen_at`).
    pub fn same_content(&self, other: &Job) -> bool {
        self.updated_at == other.updated_at
            && self.last_seen_at == other.last_seen_at
            && self == other
            || *self
                == Job {
                    updated_at: self.updated_at,
                    last_seen_at: self.last_seen_at,
                    ..other.clone()
                }
    }

    /// Checks the invariants that types alone do not carry.
    pub fn validate(&self) -> Result<(), DomainError> {
        if self.company_name.len() > 300 {
            return Err(DomainError::new(
                "company_name",
                "must be at most 300 bytes",
            ));
        }
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
}

/// What a posting says, borrowed, for the checks a job and a new job share.
pub(super) struct Posting<'a> {
    pub(super) role: &'a str,
    pub(super) description: &'a str,
    pub(super) source_url: &'a str,
    pub(super) location: Option<&'a str>,
    pub(super) salary: Option<&'a SalaryRange>,
    pub(super) domains: usize,
    pub(super) seniority: usize,
    pub(super) posted_at: DateTime<Utc>,
    pub(super) places: &'a [Place],
    pub(super) remote_regions: &'a [RemoteRegion],
}

impl Posting<'_> {
    /// Checks the invariants that types alone do not carry.
    pub(super) fn check(&self) -> Result<(), DomainError> {
        non_empty("role", self.role, 300)?;
        if self.description.len() > 100_000 {
            return Err(DomainError::new(
                "description",
                "must be at most 100000 bytes",
            ));
        }
        non_empty("source_url", self.source_url, 2_000)?;
        // Every field but the post text is bounded, so that a webhook body can always be
        // made to fit by shortening the post text alone.
        if self.location.is_some_and(|l| l.len() > 300) {
            return Err(DomainError::new("location", "must be at most 300 bytes"));
        }
        if let Some(s) = self.salary {
            if s.currency.len() > 16 || s.period.len() > 32 {
                return Err(DomainError::new(
                    "salary",
                    "currency must be at most 16 bytes and period at most 32",
                ));
            }
        }
        if self.domains > 32 || self.seniority > 16 {
            return Err(DomainError::new(
                "domains",
                "at most 32 domain tags and 16 seniority levels",
            ));
        }
        // Timestamps are indexed as nanoseconds; keep them inside that range.
        if self.posted_at.timestamp_nanos_opt().is_none() {
            return Err(DomainError::new(
                "posted_at",
                "must be between the years 1678 and 2261",
            ));
        }
        if let Some(s) = self.salary {
            if let (Some(min), Some(max)) = (s.min, s.max) {
                if min > max {
                    return Err(DomainError::new("salary", "min must not exceed max"));
                }
            }
        }
        check_places(self.places, self.remote_regions)
    }
}

fn non_empty(field: &'static str, value: &str, max: usize) -> Result<(), DomainError> {
    if value.trim().is_empty() {
        Err(DomainError::new(field, "must not be empty"))
    } else if value.len() > max {
        Err(DomainError::new(
            field,
            format!("must be at most {max} bytes"),
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_is_bounded_and_finite() {
        assert!(Confidence::parse("0").is_ok());
        assert!(Confidence::parse("1").is_ok());
        assert!(Confidence::parse("0.75").is_ok());
        assert!(Confidence::parse("1.01").is_err());
        assert!(Confidence::parse("-0.1").is_err());
        assert!(Confidence::parse("NaN").is_err());
        assert!(Confidence::parse("high").is_err());
    }

    #[test]
    fn every_field_but_the_post_text_is_bounded() {
        let job = crate::demo::Dataset::generate(1, 1, 1).jobs.remove(0);
        assert!(job.validate().is_ok());
        let long = "x".repeat(301);
        let mut placed = job.clone();
        placed.location = Some(long.clone());
        assert_eq!(placed.validate().err().map(|e| e.field), Some("location"));
        let mut paid = job;
        paid.salary = Some(SalaryRange {
            min: None,
            max: None,
            currency: long,
            period: "year".into(),
        });
        assert_eq!(paid.validate().err().map(|e| e.field), Some("salary"));
    }

    #[test]
    fn negative_zero_confidence_is_kept_as_zero() {
        let zero = Confidence::parse("-0.0").map(|c| c.get().is_sign_negative());
        assert_eq!(zero.ok(), Some(false));
        let json = serde_json::from_str::<Confidence>("-0.0").map(|c| serde_json::json!(c));
        assert_eq!(json.ok().map(|j| j.to_string()).as_deref(), Some("0.0"));
    }
}
