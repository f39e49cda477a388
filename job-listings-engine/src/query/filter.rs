use chrono::{DateTime, Utc};
use serde::Serialize;

use super::facets::{Facet, FacetCounts};
use super::text::{has_all_words, words};
use crate::domain::{
    distance_km, CompanyId, Confidence, Country, Currency, DomainTag, Job, JobId, Page, PerPage,
    RemoteRegion, Seniority,
};

/// Which active jobs a search or a webhook subscription wants. Every field narrows the result;
/// a list matches when any of its entries matches.
///
/// New conditions are added as fields, so it is built from [`JobFilter::default`] (which
/// matches every active job) with the setters:
///
/// ```
/// use job_listings_engine::domain::DomainTag;
/// use job_listings_engine::query::JobFilter;
///
/// let filter = JobFilter::default()
///     .remote_only(true)
///     .domains([DomainTag::parse("engineering")?])
///     .with_q("rust");
/// assert_eq!(filter.q_words, ["rust"]);
/// # Ok::<(), job_listings_engine::domain::DomainError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(
        rename = "JobFilters",
        description = "The filters applied to a job search, after normalization."
    )
)]
#[non_exhaustive]
pub struct JobFilter {
    /// Any of these domain tags (empty: any).
    pub domains: Vec<DomainTag>,
    /// Any of these seniority levels (empty: any).
    pub seniority: Vec<Seniority>,
    /// Only remote jobs when true.
    pub remote_only: bool,
    /// Every one of these words is a word of the company name. Words as the index keeps
    /// them (lowercased, split as [`search_terms`] splits text): set them from free text
    /// with [`JobFilter::with_company`].
    #[cfg_attr(
        feature = "schema",
        schemars(
            description = "The terms every job's company name must contain: the normalized words of the company search. Text with no word in it is kept whole as one term, which matches nothing."
        )
    )]
    pub company_words: Vec<String>,
    /// Every one of these words is a word of the role, company name or post text. Words as
    /// the index keeps them (lowercased, split as [`search_terms`] splits text): set them
    /// from free text with [`JobFilter::with_q`]; `"Python"` set here matches nothing.
    #[cfg_attr(
        feature = "schema",
        schemars(
            description = "The terms every job matched must contain: the normalized words of the free-text search. Text with no word in it (such as `!!!`) is kept whole as one term, which no job contains, so it matches nothing."
        )
    )]
    pub q_words: Vec<String>,
    /// Confidence at least this.
    pub min_confidence: Option<Confidence>,
    /// Posted strictly after this instant.
    pub posted_after: Option<DateTime<Utc>>,
    /// Only this company's jobs (`GET /jobs?company_id=`, and the company detail view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_id: Option<CompanyId>,
    /// A place in any of these countries (empty: anywhere).
    #[serde(rename = "country")]
    pub countries: Vec<Country>,
    /// A place with coordinates within this circle.
    pub near: Option<Near>,
    /// Remote jobs whose applicants may live in this country: their remote regions hold it
    /// or `worldwide`.
    pub remote_from: Option<Country>,
    /// Paid at least this much a year, in [`JobFilter::salary_currency`]: the pay's `max`,
    /// else its `min`, times the periods in a year (see [`SalaryRange::yearly_max`]). Jobs
    /// without pay, or paid in another currency, do not match. Set with
    /// [`JobFilter::min_salary`], which sets both.
    ///
    /// [`SalaryRange::yearly_max`]: crate::domain::SalaryRange::yearly_max
    pub min_salary: Option<u64>,
    /// Paid in this currency, with an amount a year can be worked out from; the currency
    /// of [`JobFilter::min_salary`], which needs it.
    pub salary_currency: Option<Currency>,
    /// Whether reposts of another active job match (`reposts=include`) or not (the default).
    pub reposts: Reposts,
    /// Last seen by the crawler strictly after this instant (`last_seen_at`).
    pub seen_after: Option<DateTime<Utc>>,
}

/// Whether a search matches reposts: active jobs that are copies of another active job
/// ([`Job::repost_of`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reposts {
    /// Only the canonical job of each group of copies (the default).
    #[default]
    Hide,
    /// Every copy.
    Include,
}

impl Reposts {
    /// Reads `hide` or `include`.
    pub fn parse(s: &str) -> Option<Reposts> {
        match s {
            "hide" => Some(Reposts::Hide),
            "include" => Some(Reposts::Include),
            _ => None,
        }
    }

    /// The name [`Reposts::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Reposts::Hide => "hide",
            Reposts::Include => "include",
        }
    }
}

/// A circle on the Earth: a place within `radius_km` kilometres (great-circle distance) of a
/// point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Near {
    /// Latitude of the centre in degrees, -90 to 90.
    pub lat: f64,
    /// Longitude of the centre in degrees, -180 to 180.
    pub lon: f64,
    /// The radius in kilometres, 1 to 1,000.
    pub radius_km: f64,
}

impl Near {
    /// The radius `near` takes when none is given.
    pub const DEFAULT_RADIUS_KM: f64 = 50.0;

    /// A circle, when the centre is on the Earth and the radius from 1 to 1,000 km.
    pub fn new(lat: f64, lon: f64, radius_km: f64) -> Result<Self, crate::domain::DomainError> {
        use crate::domain::DomainError;
        let on_earth = lat.is_finite()
            && lon.is_finite()
            && (-90.0..=90.0).contains(&lat)
            && (-180.0..=180.0).contains(&lon);
        if !on_earth {
            return Err(DomainError::new(
                "near",
                "must be a latitude from -90 to 90 and a longitude from -180 to 180, as LAT,LON such as 52.52,13.40",
            ));
        }
        if !(radius_km.is_finite() && (1.0..=1_000.0).contains(&radius_km)) {
            return Err(DomainError::new(
                "radius_km",
                "must be a number of kilometres from 1 to 1000",
            ));
        }
        // Adding zero keeps -0.0 from being echoed with its sign.
        Ok(Self {
            lat: lat + 0.0,
            lon: lon + 0.0,
            radius_km,
        })
    }
}

// `new` admits only finite numbers, without -0.0: equal circles have equal bits.
impl Eq for Near {}

impl std::hash::Hash for Near {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for v in [self.lat, self.lon, self.radius_km] {
            v.to_bits().hash(state);
        }
    }
}

impl JobFilter {
    /// Sets the `q` words from free text (see [`search_terms`] for text without words).
    #[must_use]
    pub fn with_q(mut self, text: &str) -> Self {
        self.q_words = search_terms(text);
        self
    }

    /// Sets the company-name words from free text (see [`search_terms`] for text without
    /// words).
    #[must_use]
    pub fn with_company(mut self, text: &str) -> Self {
        self.company_words = search_terms(text);
        self
    }

    /// Sets the domain tags, any of which a job must have (none: any).
    #[must_use]
    pub fn domains(mut self, domains: impl IntoIterator<Item = DomainTag>) -> Self {
        self.domains = domains.into_iter().collect();
        self
    }

    /// Sets the seniority levels, any of which a job must have (none: any).
    #[must_use]
    pub fn seniority(mut self, seniority: impl IntoIterator<Item = Seniority>) -> Self {
        self.seniority = seniority.into_iter().collect();
        self
    }

    /// Keeps only remote jobs when true.
    #[must_use]
    pub fn remote_only(mut self, remote_only: bool) -> Self {
        self.remote_only = remote_only;
        self
    }

    /// Sets the company-name words as the index keeps them (already lowercased and split);
    /// [`JobFilter::with_company`] makes them from free text.
    #[must_use]
    pub fn company_words(mut self, words: impl IntoIterator<Item = String>) -> Self {
        self.company_words = words.into_iter().collect();
        self
    }

    /// Sets the `q` words as the index keeps them (already lowercased and split);
    /// [`JobFilter::with_q`] makes them from free text.
    #[must_use]
    pub fn q_words(mut self, words: impl IntoIterator<Item = String>) -> Self {
        self.q_words = words.into_iter().collect();
        self
    }

    /// Sets the lowest confidence a job may have (`None`: any).
    #[must_use]
    pub fn min_confidence(mut self, min: impl Into<Option<Confidence>>) -> Self {
        self.min_confidence = min.into();
        self
    }

    /// Keeps only jobs posted strictly after this instant (`None`: any time).
    #[must_use]
    pub fn posted_after(mut self, after: impl Into<Option<DateTime<Utc>>>) -> Self {
        self.posted_after = after.into();
        self
    }

    /// Sets the countries, any of which a job must have a place in (none: anywhere).
    #[must_use]
    pub fn countries(mut self, countries: impl IntoIterator<Item = Country>) -> Self {
        self.countries = countries.into_iter().collect();
        self
    }

    /// Keeps only jobs with a place in this circle (`None`: anywhere).
    #[must_use]
    pub fn near(mut self, near: impl Into<Option<Near>>) -> Self {
        self.near = near.into();
        self
    }

    /// Keeps only remote jobs open to applicants living in this country (`None`: no such
    /// condition).
    #[must_use]
    pub fn remote_from(mut self, country: impl Into<Option<Country>>) -> Self {
        self.remote_from = country.into();
        self
    }

    /// Keeps only jobs paid at least `yearly` a year in `currency` (`None`: any pay, or
    /// none).
    #[must_use]
    pub fn min_salary(mut self, floor: Option<(u64, Currency)>) -> Self {
        self.min_salary = floor.map(|(yearly, _)| yearly);
        self.salary_currency = floor.map(|(_, currency)| currency);
        self
    }

    /// Keeps only jobs paid in `currency`, any amount (`None`: any pay, or none); clears
    /// [`JobFilter::min_salary`].
    #[must_use]
    pub fn salary_currency(mut self, currency: Option<Currency>) -> Self {
        self.min_salary = None;
        self.salary_currency = currency;
        self
    }

    /// Matches reposts too ([`Reposts::Include`]) or not (the default).
    #[must_use]
    pub fn reposts(mut self, reposts: Reposts) -> Self {
        self.reposts = reposts;
        self
    }

    /// Keeps only jobs last seen strictly after this instant (`None`: any time).
    #[must_use]
    pub fn seen_after(mut self, after: impl Into<Option<DateTime<Utc>>>) -> Self {
        self.seen_after = after.into();
        self
    }

    /// Keeps only this company's jobs (`None`: any company's).
    #[must_use]
    pub fn company_id(mut self, company: impl Into<Option<CompanyId>>) -> Self {
        self.company_id = company.into();
        self
    }

    /// Whether one job matches, exactly as [`JobIndex::search`](super::JobIndex::search) would
    /// decide. Closed jobs never match.
    pub fn matches(&self, job: &Job) -> bool {
        job.is_active() && self.matches_content(job)
    }

    /// Whether one job matches as [`JobFilter::matches`] decides, whether it is active or
    /// closed: for the change feed, which reports closings too.
    pub fn matches_content(&self, job: &Job) -> bool {
        // A closed repost is reported closed like any job: the change feed must not keep a
        // canonical job's closing from those who hide reposts once the next copy leads.
        if self.reposts == Reposts::Hide && job.repost_of.is_some() && job.is_active() {
            return false;
        }
        if self.seen_after.is_some_and(|t| job.last_seen() <= t) {
            return false;
        }
        if !self.domains.is_empty() && !job.domains.iter().any(|d| self.domains.contains(d)) {
            return false;
        }
        if !self.seniority.is_empty() && !job.seniority.iter().any(|s| self.seniority.contains(s)) {
            return false;
        }
        if self.remote_only && !job.remote {
            return false;
        }
        if self.company_id.is_some_and(|c| c != job.company_id) {
            return false;
        }
        if self
            .min_confidence
            .is_some_and(|m| job.confidence.get() < m.get())
        {
            return false;
        }
        if self.posted_after.is_some_and(|t| job.posted_at <= t) {
            return false;
        }
        if !self.countries.is_empty()
            && !job
                .places
                .iter()
                .any(|p| self.countries.contains(&p.country))
        {
            return false;
        }
        if let Some(near) = self.near {
            let within = |p: (f64, f64)| distance_km((near.lat, near.lon), p) <= near.radius_km;
            if !job
                .places
                .iter()
                .filter_map(|p| p.coordinates())
                .any(within)
            {
                return false;
            }
        }
        if let Some(country) = self.remote_from {
            let open = |r: &RemoteRegion| {
                *r == RemoteRegion::Worldwide || *r == RemoteRegion::Country(country)
            };
            if !job.remote || !job.remote_regions.iter().any(open) {
                return false;
            }
        }
        if let Some(currency) = self.salary_currency {
            let floor = self.min_salary.unwrap_or(0);
            let paid = job.salary.as_ref().is_some_and(|s| {
                s.currency.eq_ignore_ascii_case(currency.as_str())
                    && s.yearly_max().is_some_and(|yearly| yearly >= floor)
            });
            if !paid {
                return false;
            }
        }
        if !self.company_words.is_empty()
            && !has_all_words(&self.company_words, &[&job.company_name])
        {
            return false;
        }
        self.q_words.is_empty()
            || has_all_words(
                &self.q_words,
                &[&job.role, &job.company_name, &job.description],
            )
    }

    /// Whether the filter asks for words, so that deciding on a job reads its text.
    pub fn reads_text(&self) -> bool {
        !self.q_words.is_empty() || !self.company_words.is_empty()
    }
}

/// The terms a search text asks for: its [`words`], sorted and once each.
///
/// Text that is not blank but has no word in it (`!!!`, `++`, an emoji) is kept whole as its
/// one term. No job has that term, since every indexed word holds a letter or digit and such
/// text holds none, so the search matches nothing, as Elasticsearch's `match` does by
/// default, instead of dropping the condition and matching every job. Blank text gives no
/// terms: no condition.
pub fn search_terms(text: &str) -> Vec<String> {
    let terms = dedup(words(text).collect());
    match text.trim() {
        wordless if terms.is_empty() && !wordless.is_empty() => vec![wordless.to_owned()],
        _ => terms,
    }
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    v.sort_unstable();
    v.dedup();
    v
}

/// A filter plus the page wanted.
///
/// New options are added as fields, so it is built with [`JobQuery::new`] and the setters:
///
/// ```
/// use job_listings_engine::domain::{Page, PerPage};
/// use job_listings_engine::query::{Facet, JobFilter, JobQuery};
///
/// let query = JobQuery::new(JobFilter::default().with_q("rust"))
///     .page(Page::new(2)?)
///     .per_page(PerPage::new(50)?)
///     .facets([Facet::Domain]);
/// assert_eq!(query.offset(), 50);
/// # Ok::<(), job_listings_engine::domain::DomainError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct JobQuery {
    /// Which jobs.
    pub filter: JobFilter,
    /// Which page, from 1.
    pub page: Page,
    /// How many per page.
    pub per_page: PerPage,
    /// The facets to count over all the matches (empty: none, and no cost). Each counts once
    /// however often it is listed.
    pub facets: Vec<Facet>,
    /// The order of the matches.
    pub sort: Sort,
}

/// The order a search answers in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Sort {
    /// Newest `posted_at` first, ties by id ascending.
    #[default]
    PostedAt,
    /// Highest BM25 score for the filter's `q` words first, ties newest first and then by
    /// id. A document's words are its role's twice, its company name's and its post's;
    /// k1 = 1.2, b = 0.75, and the inverse document frequency is
    /// ln(1 + (N − n + 0.5)/(n + 0.5)) over the N active jobs, n of which hold the word.
    /// Without `q` words every score is 0: newest first.
    Relevance,
}

impl Sort {
    /// Reads `posted_at` or `relevance`.
    pub fn parse(s: &str) -> Option<Sort> {
        match s {
            "posted_at" => Some(Sort::PostedAt),
            "relevance" => Some(Sort::Relevance),
            _ => None,
        }
    }

    /// The name [`Sort::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::PostedAt => "posted_at",
            Sort::Relevance => "relevance",
        }
    }
}

impl JobQuery {
    /// The first page of the default size for a filter, with no facets.
    pub fn new(filter: JobFilter) -> Self {
        Self {
            filter,
            ..Self::default()
        }
    }

    /// Sets the filter.
    #[must_use]
    pub fn filter(mut self, filter: JobFilter) -> Self {
        self.filter = filter;
        self
    }

    /// Sets the page wanted, from 1.
    #[must_use]
    pub fn page(mut self, page: Page) -> Self {
        self.page = page;
        self
    }

    /// Sets how many jobs a page holds.
    #[must_use]
    pub fn per_page(mut self, per_page: PerPage) -> Self {
        self.per_page = per_page;
        self
    }

    /// Sets the facets to count over all the matches.
    #[must_use]
    pub fn facets(mut self, facets: impl IntoIterator<Item = Facet>) -> Self {
        self.facets = facets.into_iter().collect();
        self
    }

    /// Sets the order.
    #[must_use]
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = sort;
        self
    }

    /// How many matches come before the requested page.
    pub fn offset(&self) -> usize {
        (self.page.get() as usize - 1) * self.per_page.get() as usize
    }
}

/// The answer to a [`JobQuery`]: how many jobs match and the ids on the requested page, in order.
///
/// It may gain fields; another engine answering the same queries builds one with
/// [`SearchResult::new`] and [`SearchResult::with_facets`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchResult {
    /// Matches in all.
    pub total: u64,
    /// The page's job ids, in the query's [`Sort`] order.
    pub ids: Vec<JobId>,
    /// The counts of the facets the query asked for, over all the matches.
    pub facets: FacetCounts,
}

impl SearchResult {
    /// A result of `total` matches with these ids on the page, and no facet counts.
    pub fn new(total: u64, ids: Vec<JobId>) -> Self {
        Self {
            total,
            ids,
            facets: FacetCounts::default(),
        }
    }

    /// Sets the facet counts.
    #[must_use]
    pub fn with_facets(mut self, facets: FacetCounts) -> Self {
        self.facets = facets;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_terms_are_the_words_or_wordless_text_whole_or_nothing_for_blank_text() {
        assert_eq!(search_terms("Node.js  node RUST"), ["js", "node", "rust"]);
        assert_eq!(search_terms("++c++"), ["c"]);
        assert_eq!(search_terms("  !!! "), ["!!!"]);
        assert_eq!(search_terms("🦘"), ["🦘"]);
        assert!(search_terms(" \t ").is_empty());
        assert!(search_terms("").is_empty());
        // A wordless term can never be a word: every word holds a letter or digit.
        assert!(words("!!!").next().is_none());
        assert_eq!(search_terms("\u{301}"), ["\u{301}"]);
        assert!(
            words("a_\u{301}_b 5\u{fe0f}\u{20e3}").all(|w| w.chars().any(char::is_alphanumeric))
        );
    }
}
