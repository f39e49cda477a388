//! JSON shapes of responses. Single resources are sent bare; lists in the envelope
//! `{"data", "pagination", "links", "meta"}`. The owned ones are also what the typed
//! client reads (`client::types` re-exports them), so a field added here reaches it.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::render::JobView;
use crate::domain::{Company, Subscription};
use crate::query::{FacetCounts, ValueCount};
use crate::service::UnknownValue;

/// A job listing with its company embedded. The server writes it around a rendered job
/// (`job_detail_json`, held to this type's form by the test below) and the typed client
/// reads it into the owned default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JobDetail")]
#[non_exhaustive]
pub struct JobDetail<J = crate::domain::Job, C = Company> {
    /// The job's own fields.
    #[serde(flatten)]
    pub job: J,
    /// The hiring company, or null if unavailable.
    pub company: Option<C>,
}

/// `GET /jobs/{id}`: the job's fields and a `company` field, written around the job's
/// rendered JSON (an object). `company` is the company's rendered JSON (`None` writes `null`).
pub(crate) fn job_detail_json(job: &[u8], company: Option<&[u8]>) -> Vec<u8> {
    // A rendered job is an object: `{…}`.
    let fields = &job[..job.len().saturating_sub(1)];
    let company = company.unwrap_or(b"null");
    let mut out = Vec::with_capacity(job.len() + company.len() + 12);
    out.extend_from_slice(fields);
    out.extend_from_slice(b",\"company\":");
    out.extend_from_slice(company);
    out.push(b'}');
    out
}

/// A company with its active job listings. The server writes it from borrowed records; the
/// typed client reads it into the owned default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CompanyDetail")]
#[non_exhaustive]
pub struct CompanyDetail<C = Company, J = crate::domain::Job> {
    /// The company's own fields.
    #[serde(flatten)]
    pub company: C,
    /// Total number of active job listings.
    pub active_jobs_total: u64,
    /// Active job listings, newest first (at most 100; every one, paged:
    /// `GET /api/v1/jobs?company_id={id}`).
    #[schemars(length(max = 100))]
    pub active_jobs: Vec<J>,
}

impl<'a> From<&'a crate::service::CompanyDetail> for CompanyDetail<&'a Company, JobView<'a>> {
    fn from(d: &'a crate::service::CompanyDetail) -> Self {
        Self {
            company: &d.company,
            active_jobs_total: d.active_jobs_total,
            active_jobs: d.active_jobs.iter().map(|j| JobView::from(&**j)).collect(),
        }
    }
}

/// A company as shown in list results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct CompanySummary {
    /// Company identifier.
    pub id: crate::domain::CompanyId,
    /// Company name.
    pub name: String,
    /// Company web domain.
    pub domain: String,
    /// Funding stage, e.g. seed, series_a.
    #[schemars(with = "String")]
    pub funding_stage: crate::domain::FundingStage,
    /// Short company description.
    pub blurb: String,
    /// Number of active job listings (as `active_jobs_total` in the company's detail).
    pub active_jobs_total: u64,
}

impl From<&crate::service::CompanySummary> for CompanySummary {
    fn from(s: &crate::service::CompanySummary) -> Self {
        Self {
            id: s.company.id,
            name: s.company.name.clone(),
            domain: s.company.domain.clone(),
            funding_stage: s.company.funding_stage.clone(),
            blurb: s.company.blurb.clone(),
            active_jobs_total: s.active_jobs_total,
        }
    }
}

/// A webhook subscription as its owner sees it, never with its secret. The server writes it
/// and the typed client reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Webhook {
    /// Webhook identifier.
    pub id: crate::domain::WebhookId,
    /// URL that receives event deliveries.
    #[schemars(url)]
    pub callback_url: String,
    /// Domain tags this webhook is subscribed to; empty means all domains.
    pub domain_filters: Vec<crate::domain::DomainTag>,
    /// Whether only remote jobs are delivered.
    pub remote_only: bool,
    /// Saved search: any of these seniority levels (empty: any).
    pub seniority: Vec<crate::domain::Seniority>,
    /// Saved search: every word must be a word of the role, company name or post text.
    pub q: Option<String>,
    /// Saved search: every word must be a word of the company name.
    pub company: Option<String>,
    /// Saved search: minimum classification confidence.
    #[schemars(range(min = 0, max = 1))]
    pub min_confidence: Option<f64>,
    /// Saved search: `country`, `near`, `remote_from`, `min_salary` and `salary_currency`, as
    /// `GET /jobs` reads them.
    #[serde(flatten)]
    pub places: crate::domain::PlacesAndPay,
    /// The events sent to this webhook: `job.new` (a job active for the first time),
    /// `job.updated` (an active job changed, or a closed one opened again) and `job.closed`
    /// (an active job closed); `["job.new"]` unless it asked for more.
    #[serde(default = "crate::domain::ChangeKind::webhook_default")]
    #[schemars(with = "Vec<WebhookEventType>")]
    pub event_types: Vec<crate::domain::ChangeKind>,
    /// Whether it is sent deliveries.
    pub status: crate::domain::SubscriptionStatus,
    /// Why the webhook was disabled, or null.
    pub disabled_reason: Option<String>,
    /// When the webhook was created.
    pub created_at: DateTime<Utc>,
    /// Time of the last successful delivery, or null.
    pub last_success_at: Option<DateTime<Utc>>,
    /// Time of the last failed delivery, or null.
    pub last_failure_at: Option<DateTime<Utc>>,
    /// Reason for the last failed delivery, or null.
    pub last_failure_reason: Option<String>,
}

// The job events a webhook may be sent: every `ChangeKind` but `job.deleted`, which is the
// feed's alone.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: the wire form is `ChangeKind`'s.
pub(crate) enum WebhookEventType {
    #[serde(rename = "job.new")]
    New,
    #[serde(rename = "job.updated")]
    Updated,
    #[serde(rename = "job.closed")]
    Closed,
}

impl Webhook {
    /// A stored subscription as its owner sees it.
    pub fn of(s: &Subscription) -> Self {
        Self {
            id: s.id,
            callback_url: s.callback_url.as_str().to_owned(),
            domain_filters: s.domain_filters.clone(),
            remote_only: s.remote_only,
            seniority: s.seniority.clone(),
            q: s.q.clone(),
            company: s.company.clone(),
            min_confidence: s.min_confidence.map(|c| c.get()),
            places: s.places.clone(),
            event_types: s.event_types.clone(),
            status: s.status,
            disabled_reason: s.disabled_reason.clone(),
            created_at: s.created_at,
            last_success_at: s.last_success_at,
            last_failure_at: s.last_failure_at,
            last_failure_reason: s.last_failure_reason.clone(),
        }
    }
}

/// A newly created webhook, with its signing secret.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct WebhookCreated {
    /// The subscription.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// Signing secret for verifying deliveries. Shown only in this response; store it safely.
    #[schemars(regex(pattern = "^whsec_"))]
    pub secret: String,
}

impl WebhookCreated {
    /// A subscription just created, with its secret.
    pub fn of(s: &Subscription) -> Self {
        Self {
            webhook: Webhook::of(s),
            secret: s.secret.expose().to_owned(),
        }
    }
}

impl std::fmt::Debug for WebhookCreated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookCreated")
            .field("webhook", &self.webhook)
            .field("secret", &"whsec_…")
            .finish()
    }
}

/// Pagination information.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Pagination {
    /// Current page (1-based).
    #[schemars(range(min = 1))]
    pub page: u32,
    /// Items per page.
    #[schemars(range(min = 1, max = 50))]
    pub per_page: u32,
    /// Total number of matching items.
    pub total: u64,
    /// Total number of pages (0 for an empty list).
    pub total_pages: u64,
}

/// Relative navigation links.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Links {
    /// Relative URL of the next page, e.g. `/api/v1/jobs?q=rust&page=2`, or null.
    pub next: Option<String>,
    /// Relative URL of the previous page, or null.
    pub prev: Option<String>,
}

/// A page of a list: `{"data", "pagination", "links", "meta"}`. The server writes it and
/// the typed client reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ListEnvelope<T, M = Value> {
    /// This page's items.
    pub data: T,
    /// Where the page sits.
    pub pagination: Pagination,
    /// The pages either side.
    pub links: Links,
    /// Filters, facets and warnings.
    pub meta: M,
}

/// The `meta` of a list: the filters it applied, the facet counts asked for, and warnings
/// about filter values nothing holds. `facets` and `warnings` are left out when there are
/// none, so an answer without them reads as it did before they existed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct FiltersMeta<F, X = Value> {
    /// The filters as the server read them.
    pub filters: F,
    /// The facet counts asked for, over the whole result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facets: Option<X>,
    /// Present only when there is something to warn about: one `unknown_value` warning per
    /// filter value that nothing holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1))]
    pub warnings: Vec<WarningView>,
}

/// The `meta` of a list that filters nothing: `{"filters": {}}`.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub(crate) struct NoFiltersMeta {
    /// These lists filter nothing: always empty.
    pub filters: NoFilters,
}

/// No filters: `{}`.
#[derive(Serialize, JsonSchema)]
#[schemars(inline, extend("maxProperties" = 0))]
pub(crate) struct NoFilters {}

/// The filters a company list applied, after normalization.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub(crate) struct CompanyFilters {
    /// Normalized funding stage filter, or null.
    pub funding_stage: Option<String>,
}

/// A page of job search results: the list the search handler writes around its rendered
/// jobs (`ListEnvelope::to_json_around`), as a type.
pub(crate) type JobList =
    ListEnvelope<Vec<JobHit>, FiltersMeta<crate::query::JobFilter, JobFacets>>;

/// A job of a search page: every field of a job, or with `fields` only those named and `id`;
/// with `highlight=true` also `match`. The typed client reads pages asked in a shape into it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JobHit {
    /// The job's id, always sent.
    pub id: crate::domain::JobId,
    /// Why it matched, with `highlight=true`.
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<crate::query::Match>,
    /// The job's other fields sent, by name, as in [`Job`](crate::domain::Job).
    #[serde(flatten)]
    pub fields: serde_json::Map<String, Value>,
}

#[cfg(feature = "client")]
impl JobHit {
    /// The whole job, when every field was sent (no `fields`).
    pub fn job(&self) -> Result<crate::domain::Job, serde_json::Error> {
        let mut fields = self.fields.clone();
        fields.insert("id".into(), serde_json::to_value(self.id)?);
        serde_json::from_value(Value::Object(fields))
    }
}

/// A job's schema, with only `id` required (`fields` may leave out the others) and `match`.
impl JsonSchema for JobHit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JobHit".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = crate::domain::Job::json_schema(generator);
        let matched = generator.subschema_for::<crate::query::Match>();
        schema.insert("required".into(), serde_json::json!(["id"]));
        // Its fields are left out when `fields` does not name them, not when they are empty.
        schema.insert("x-fields-asked".into(), true.into());
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.insert("match".into(), matched.to_value());
        }
        schema.insert(
            "description".into(),
            "A job of a search page: every field of a job unless `fields` names some (`id` always comes), and with `highlight=true` why it matched (`match`).".into(),
        );
        schema
    }
}

/// A page of companies.
pub(crate) type CompanyList =
    ListEnvelope<Vec<CompanySummary>, FiltersMeta<CompanyFilters, CompanyFacets>>;

/// A page of the webhooks belonging to the calling API key, oldest first.
pub(crate) type WebhookList = ListEnvelope<Vec<Webhook>, NoFiltersMeta>;

/// A page of the 100 most recent deliveries of a webhook, latest scheduled attempt first.
pub(crate) type DeliveryList<'a> = ListEnvelope<Vec<&'a crate::domain::Delivery>, NoFiltersMeta>;

/// One event of the change feed. The server writes its job from the render cache (held to
/// this type's form by a test); the typed client reads it into the owned default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ChangeEvent")]
#[non_exhaustive]
pub struct ChangeEvent<J = crate::domain::Job> {
    /// The event's place in the feed: `after` this cursor gives the events after it.
    pub cursor: crate::domain::FeedCursor,
    /// What happened: the job became active for the first time, changed (or was opened
    /// again), closed, or was deleted by the operator.
    #[serde(rename = "type")]
    pub kind: crate::domain::ChangeKind,
    /// When it happened (the job's `updated_at` as the event left it).
    pub occurred_at: DateTime<Utc>,
    /// The job it happened to.
    pub job_id: crate::domain::JobId,
    /// The job as the event left it; null for `job.deleted`, and for events of a job deleted
    /// since. Last, so that the server can write it as rendered.
    pub job: Option<J>,
}

/// A page of the change feed: `data` first, so that the server can write its events as
/// rendered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ChangePage")]
#[non_exhaustive]
pub struct ChangePage<J = crate::domain::Job, F = Value> {
    /// The events, oldest first.
    pub data: Vec<ChangeEvent<J>>,
    /// Where to continue from (`after`): the last event read, or where the page started when
    /// it read none.
    pub next_cursor: crate::domain::FeedCursor,
    /// Whether more events are waiting now: ask again at once rather than after a pause.
    pub has_more: bool,
    /// The next page's link.
    pub links: ChangeLinks,
    /// The filters as the server read them, and how long events are kept.
    pub meta: ChangeMeta<F>,
}

/// The `links` of a [`ChangePage`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct ChangeLinks {
    /// The next page: the same filters, after `next_cursor`.
    pub next: String,
}

/// The `meta` of a [`ChangePage`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct ChangeMeta<F = Value> {
    /// The filters as the server read them (`JobFilters`).
    pub filters: F,
    /// How many days the feed keeps events.
    pub retention_days: u64,
}

/// Something about the request worth knowing that did not stop it: a filter value that
/// nothing in the data holds (code `unknown_value`), in `meta.warnings`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Warning")]
#[non_exhaustive]
pub struct WarningView {
    /// A stable machine code. `unknown_value`: a filter value nothing in the data holds, so
    /// it matches nothing.
    #[schemars(example = &"unknown_value")]
    pub code: String,
    /// The parameter the value was given in.
    #[schemars(example = &"domain")]
    pub param: String,
    /// The value, normalized.
    #[schemars(example = &"unknowndomain")]
    pub value: String,
    /// What happened, in words, with the known values.
    pub detail: String,
    /// The values the data holds, most common first, at most 100.
    pub known: Vec<String>,
    /// How many values the data holds in all; more than the length of `known` when the list
    /// is cut.
    pub known_total: u64,
}

impl From<&UnknownValue> for WarningView {
    fn from(u: &UnknownValue) -> Self {
        let holder = match u.param {
            "funding_stage" => "no company has",
            _ => "no active job has",
        };
        let more = if u.known_total > u.known.len() {
            format!(" (the {} most common of {})", u.known.len(), u.known_total)
        } else {
            String::new()
        };
        let detail = if u.known.is_empty() {
            format!(
                "{holder} {} `{}`, so this value matches nothing; there are no values yet",
                u.param, u.value
            )
        } else {
            format!(
                "{holder} {} `{}`, so this value matches nothing; known values{more}: {}",
                u.param,
                u.value,
                u.known.join(", ")
            )
        };
        Self {
            code: "unknown_value".to_owned(),
            param: u.param.to_owned(),
            value: u.value.clone(),
            detail,
            known: u.known.clone(),
            known_total: u64::try_from(u.known_total).unwrap_or(u64::MAX),
        }
    }
}

/// Counts over all the matches of the search (every page), one member per facet asked for.
// Members in name order, as they were sent when this was a JSON map.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "JobFacets", example = job_facets_example())]
#[serde(default)]
#[non_exhaustive]
pub struct JobFacets {
    /// Counts by the country of a place (ISO 3166-1 alpha-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<FacetList>,
    /// Counts by domain tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<FacetList>,
    /// Counts by remote or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteCounts>,
    /// Counts by seniority level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seniority: Option<FacetList>,
}

fn job_facets_example() -> Value {
    serde_json::json!({
        "domain": [{"value": "engineering", "count": 1234}, {"value": "ai", "count": 310}],
        "seniority": [{"value": "senior", "count": 900}],
        "remote": {"true": 700, "false": 844},
        "country": [{"value": "DE", "count": 212}, {"value": "US", "count": 180}]
    })
}

/// Matches by remote or not; the two add up to the total.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct RemoteCounts {
    /// Other matches.
    #[serde(rename = "false")]
    pub on_site: u64,
    /// Remote matches.
    #[serde(rename = "true")]
    pub remote: u64,
}

/// Counts over all the listed companies (every page), present when asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CompanyFacets", example = company_facets_example())]
#[serde(default)]
#[non_exhaustive]
pub struct CompanyFacets {
    /// Counts by funding stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_stage: Option<FacetList>,
}

fn company_facets_example() -> Value {
    serde_json::json!({
        "funding_stage": [{"value": "series_a", "count": 12}, {"value": "seed", "count": 9}]
    })
}

/// Every value the matches hold, most matches first, then by value. A job with two tags
/// counts under each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(rename = "FacetList")]
pub struct FacetList(pub Vec<FacetValue>);

impl std::ops::Deref for FacetList {
    type Target = [FacetValue];

    fn deref(&self) -> &[FacetValue] {
        &self.0
    }
}

/// One value of a facet and how many matches hold it.
// Members in name order, as they were sent when this was a JSON map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct FacetValue {
    /// How many matches hold it.
    #[schemars(range(min = 1))]
    pub count: u64,
    /// A value the matches hold, normalized as filters take it.
    pub value: String,
}

/// `meta.facets` of `GET /jobs`: lists of `{value, count}` and, for `remote`, the counts of
/// `true` and `false`.
pub(crate) fn job_facets_json(f: &FacetCounts) -> Option<JobFacets> {
    if f.is_empty() {
        return None;
    }
    Some(JobFacets {
        country: f.country.as_deref().map(value_counts_json),
        domain: f.domain.as_deref().map(value_counts_json),
        remote: f.remote.as_ref().map(|r| RemoteCounts {
            on_site: r.on_site,
            remote: r.remote,
        }),
        seniority: f.seniority.as_deref().map(value_counts_json),
    })
}

/// A facet's counts as `[{"value", "count"}]`, in the engine's order.
pub(crate) fn value_counts_json(counts: &[ValueCount]) -> FacetList {
    FacetList(
        counts
            .iter()
            .map(|c| FacetValue {
                count: c.count,
                value: c.value.clone(),
            })
            .collect(),
    )
}

impl<T, M> ListEnvelope<T, M> {
    /// An envelope for page `page` of `total` results; links keep every other parameter.
    pub(crate) fn new(
        data: T,
        page: u32,
        per_page: u32,
        total: u64,
        path: &str,
        other_params: &str,
        meta: M,
    ) -> Self {
        let total_pages = total.div_ceil(u64::from(per_page));
        let link = |p: u64| {
            if other_params.is_empty() {
                format!("{path}?page={p}")
            } else {
                format!("{path}?{other_params}&page={p}")
            }
        };
        let page64 = u64::from(page);
        Self {
            data,
            pagination: Pagination {
                page,
                per_page,
                total,
                total_pages,
            },
            links: Links {
                next: (page64 < total_pages).then(|| link(page64 + 1)),
                prev: (page64 > 1).then(|| link((page64 - 1).min(total_pages.max(1)))),
            },
            meta,
        }
    }
}

impl<T: Serialize, M: Serialize> ListEnvelope<T, M> {
    /// The envelope with `items`, JSON already rendered (jobs from the render cache), as its
    /// `data` in place of `self.data`: each is written as it is.
    pub(crate) fn to_json_around(&self, items: &[Bytes]) -> Vec<u8> {
        let pagination = super::render::render(&self.pagination);
        let links = super::render::render(&self.links);
        let meta = super::render::render(&self.meta);
        let size = items.iter().map(|i| i.len() + 1).sum::<usize>() + pagination.len() + 64;
        let mut out = Vec::with_capacity(size + links.len() + meta.len());
        out.extend_from_slice(b"{\"data\":[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(item);
        }
        out.extend_from_slice(b"],\"pagination\":");
        out.extend_from_slice(&pagination);
        out.extend_from_slice(b",\"links\":");
        out.extend_from_slice(&links);
        out.extend_from_slice(b",\"meta\":");
        out.extend_from_slice(&meta);
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::render::RenderCache;
    use crate::demo::Dataset;
    use crate::domain::Job;

    fn rendered(jobs: &[Job]) -> Vec<Bytes> {
        let cache = RenderCache::new(0);
        jobs.iter().map(|j| cache.job(j)).collect()
    }

    #[test]
    fn a_list_written_around_rendered_jobs_equals_the_typed_encoding() {
        let data = Dataset::generate(3, 4, 5);
        for jobs in [&data.jobs[..], &data.jobs[..1], &[]] {
            let views: Vec<JobView<'_>> = jobs.iter().map(JobView::from).collect();
            let typed = ListEnvelope::new(
                views,
                2,
                5,
                17,
                "/api/v1/jobs",
                "q=x",
                serde_json::json!({"filters": {"q": "x"}}),
            );
            let expected = serde_json::to_vec(&typed).unwrap_or_default();
            assert_eq!(typed.to_json_around(&rendered(jobs)), expected);
        }
    }

    #[test]
    fn a_detail_written_around_rendered_json_equals_the_typed_encoding() {
        let data = Dataset::generate(3, 2, 2);
        let job = &data.jobs[0];
        let cache = RenderCache::new(0);
        for company in [Some(&data.companies[0]), None] {
            let typed = JobDetail {
                job: JobView::from(job),
                company,
            };
            let expected = serde_json::to_vec(&typed).unwrap_or_default();
            let company_json = company.map(|c| cache.company(c));
            assert_eq!(
                job_detail_json(&cache.job(job), company_json.as_deref()),
                expected
            );
        }
    }
}
