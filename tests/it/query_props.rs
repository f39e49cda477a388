//! Property tests of `job_listings::query::JobIndex` against a brute-force oracle written here:
//! plain loops over the job structs with the documented rules (words are read by the tests' own
//! tokenizer, `support::words`, from the documented rule; every other rule is re-implemented),
//! newest `posted_at` first with ties by id ascending, or by BM25 scores it computes from the
//! documented formula (docs/api.md, "Relevance") with ties the same way. The oracle also checks
//! `JobFilter::matches`, the matcher webhooks use. The generated text mixes ASCII with what
//! Unicode text brings: decomposed letters, lone combining marks, emoji and their ZWJ
//! sequences, variation selectors, keycaps, capital sigmas, CJK and Thai. A table written by
//! hand pins the word rule itself, for the engine and the oracle alike.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Duration, TimeZone, Utc};
use job_listings::domain::{
    CompanyId, Confidence, Country, Currency, DomainTag, Job, JobId, JobStatus, Page, PerPage,
    Place, RemoteRegion, SalaryRange, Seniority,
};
use job_listings::query::{
    words, Facet, FacetCounts, JobFilter, JobIndex, JobQuery, Near, RemoteCounts, Reposts, Sort,
    ValueCount,
};
use proptest::prelude::*;
use uuid::Uuid;

use crate::support::bm25::{Bm25, Counted};
use crate::support::pay_and_place::{great_circle_km, yearly_in};
use crate::support::scaled;
use crate::support::words::words as oracle_words;

/// A small vocabulary so words collide, with case, punctuation and non-ASCII variants: the
/// same word precomposed and decomposed (NFC and NFD, marks in either order), lone combining
/// marks that join the piece before them when no separator comes between, emoji and their ZWJ
/// sequences, VS16, keycaps, capital sigmas that end a word or do not, CJK and Thai.
const VOCAB: &[&str] = &[
    "rust",
    "Rust",
    "RUST",
    "go",
    "node",
    "js",
    "node.js",
    "Node.JS",
    "data",
    "lead",
    "zürich",
    "ZÜRICH",
    "c++",
    "don't",
    "ai",
    "x-ray",
    "café",
    "v2",
    "42",
    "senior",
    "remote",
    "ΟΔΟΣ",
    "οδος",
    "ΑΘΗΝΑΣ",
    // Precomposed and decomposed.
    "cafe",
    "Cafe\u{301}",
    "CAFÉ",
    "\u{301}",
    "Zu\u{308}rich",
    "\u{212b}ngstro\u{308}m",
    "ångström",
    "vi\u{1ec7}t",
    "Vie\u{302}\u{323}t",
    "q\u{303}uery",
    "\u{308}",
    "\u{1112}\u{1161}\u{11ab}",
    "한",
    "\u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}",
    // Emoji, ZWJ sequences, VS16, keycaps.
    "\u{1f980}",
    "\u{1f469}\u{200d}\u{1f4bb}",
    "\u{1f44d}\u{1f3fd}",
    "\u{2139}\u{fe0f}",
    "\u{2139}",
    "5\u{fe0f}\u{20e3}",
    "5",
    "#\u{fe0f}\u{20e3}",
    // Final sigma, Turkish dotted I.
    "ΣΑΣ",
    "σας",
    "Σ",
    "İstanbul",
    // CJK and Thai.
    "東京",
    "京",
    "エンジニア",
    "か\u{3099}",
    "が",
    "ภาษาไทย",
    "ไทย",
    "ที่",
];
const SEPARATORS: &[&str] = &[
    " ", ", ", " - ", "/", " (", ") ", ". ", "; ", "\n", " — ", ".",
    // Nothing between: the pieces join (a mark onto a letter, a word onto an emoji).
    "", "", "\u{200d}", "\u{fe0f}", "\u{a0}", "\u{3000}", "\u{2019}", "_",
];
const TAGS: &[&str] = &["ai", "AI", "data", "Design", "eng", "ops"];
const LEVELS: &[&str] = &["junior", "Senior", "staff", "LEAD"];
const CONFIDENCES: &[f64] = &[
    0.0,
    1.0,
    0.5,
    0.7,
    0.75,
    0.300_000_000_000_000_04,
    0.3,
    0.999_999_999_999_999_9,
];
const COMPANIES: u64 = 4;
/// Places jobs are at: a country and maybe coordinates, some on either side of the
/// antimeridian and near a pole.
const PLACES: &[(&str, Option<(f64, f64)>)] = &[
    ("DE", Some((52.52, 13.405))),
    ("DE", Some((48.137, 11.575))),
    ("FR", Some((48.8566, 2.3522))),
    ("FR", None),
    ("US", Some((40.7128, -74.006))),
    ("FJ", Some((-17.7, 179.9))),
    ("FJ", Some((-17.7, -179.95))),
    ("NO", Some((89.9, 10.0))),
    ("BR", None),
];
const REGIONS: &[&str] = &["DE", "FR", "US", "worldwide"];
const CURRENCIES: &[&str] = &["EUR", "USD", "eur"];
const PERIODS: &[&str] = &["year", "month", "hour", "day", "week", "Year", "decade"];
const AMOUNTS: &[u64] = &[0, 40, 1_000, 4_000, 50_000, 80_000, 120_000];
const RADII: &[f64] = &[1.0, 50.0, 300.0, 700.0, 1_000.0];
/// posted_at is `base + slot` hours: few slots, many ties.
const SLOTS: i64 = 12;

fn base_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 10, 1, 0, 0, 0)
        .single()
        .expect("a time")
}

/// Job ids that do not sort in creation order.
fn job_id(n: u64) -> JobId {
    JobId(Uuid::from_u128(
        u128::from(n.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17)) << 64 | u128::from(n),
    ))
}

fn company_id(n: u64) -> CompanyId {
    CompanyId(Uuid::from_u128(0xC0 + u128::from(n)))
}

/// Raw text made of vocabulary words and separators.
fn join(parts: &[(usize, usize)]) -> String {
    let mut s = String::new();
    for (i, (w, sep)) in parts.iter().enumerate() {
        if i > 0 {
            s.push_str(SEPARATORS[sep % SEPARATORS.len()]);
        }
        s.push_str(VOCAB[w % VOCAB.len()]);
    }
    s
}

/// Every input a job is made from, so both the proptest strategies and the seeded generator
/// of the large test build jobs the same way.
#[derive(Clone, Debug)]
struct JobSpec {
    n: u64,
    role: Vec<(usize, usize)>,
    company: u64,
    description: Vec<(usize, usize)>,
    tags: Vec<usize>,
    levels: Vec<usize>,
    remote: bool,
    slot: i64,
    confidence: f64,
    closed: bool,
    /// Places, remote regions and pay, chosen by its bits (see `geo_of`).
    geo: u64,
}

/// The `n`th entry of a table, wrapping.
fn pick<T: Copy>(table: &[T], n: u64) -> T {
    table[(n % table.len() as u64) as usize]
}

/// The places, remote regions and pay the bits of `geo` choose.
fn geo_of(geo: u64) -> (Vec<Place>, Vec<RemoteRegion>, Option<SalaryRange>) {
    let places = (0..geo % 3)
        .map(|i| {
            let (country, point) = pick(PLACES, geo >> (4 + 4 * i));
            let mut place = Place::new(Country::parse(country).expect("a country"));
            place.lat = point.map(|p| p.0);
            place.lon = point.map(|p| p.1);
            place
        })
        .collect();
    let regions = (0..(geo >> 16) % 3)
        .map(|i| RemoteRegion::parse(pick(REGIONS, geo >> (20 + 2 * i))).expect("a region"))
        .collect();
    let salary = (!(geo >> 28).is_multiple_of(4)).then(|| {
        let min = pick(AMOUNTS, geo >> 32);
        let max = (!(geo >> 36).is_multiple_of(3)).then(|| min + pick(AMOUNTS, geo >> 40));
        SalaryRange {
            min: (!(geo >> 44).is_multiple_of(4)).then_some(min),
            max,
            currency: pick(CURRENCIES, geo >> 48).to_owned(),
            period: pick(PERIODS, geo >> 52).to_owned(),
        }
    });
    (places, regions, salary)
}

fn company_name(company: u64) -> String {
    // Names share words: "rust data", "data go", ...
    let names = [
        "Rust Data Labs",
        "Data Go",
        "Node.js Zürich AI",
        "Café Lead",
    ];
    names[company as usize % names.len()].to_owned()
}

fn build(spec: &JobSpec) -> Job {
    let role = join(&spec.role);
    let posted_at = base_time() + Duration::hours(spec.slot);
    let (places, remote_regions, salary) = geo_of(spec.geo);
    Job {
        id: job_id(spec.n),
        role: if role.trim().is_empty() {
            "role".to_owned()
        } else {
            role
        },
        company_id: company_id(spec.company),
        company_name: company_name(spec.company),
        description: join(&spec.description),
        domains: spec
            .tags
            .iter()
            .map(|t| DomainTag::parse(TAGS[t % TAGS.len()]).expect("a tag"))
            .collect(),
        seniority: spec
            .levels
            .iter()
            .map(|l| Seniority::parse(LEVELS[l % LEVELS.len()]).expect("a level"))
            .collect(),
        remote: spec.remote,
        location: None,
        source_url: format!("https://example.com/{}", spec.n),
        salary,
        posted_at,
        confidence: Confidence::new(spec.confidence).expect("a confidence"),
        status: if spec.closed {
            JobStatus::Closed
        } else {
            JobStatus::Active
        },
        activated_at: None,
        first_seen_at: posted_at,
        updated_at: posted_at,
        places,
        remote_regions,
        last_posted_at: None,
        // The high bits of `geo`, which places and pay leave alone: one job in five a repost
        // (of some job: the index takes the service's word for it), and when it was last seen.
        repost_of: (spec.geo >> 56)
            .is_multiple_of(5)
            .then(|| job_id(spec.n + 1)),
        reposts: Vec::new(),
        last_seen_at: Some(base_time() + Duration::hours(((spec.geo >> 58) % SLOTS as u64) as i64)),
    }
}

/// A search as the oracle sees it: raw strings, as a client would type them.
#[derive(Clone, Debug, Default)]
struct QuerySpec {
    tags: Vec<String>,
    levels: Vec<String>,
    remote_only: bool,
    company: Option<String>,
    q: Option<String>,
    min_confidence: Option<f64>,
    posted_after: Option<DateTime<Utc>>,
    /// Where and what pay, chosen by its bits (see `QuerySpec::wherever`); 0 asks neither.
    geo: u64,
    /// `sort=relevance`.
    relevance: bool,
    page: u32,
    per_page: u32,
}

/// The conditions of places and pay a query's `geo` bits choose.
struct GeoAsked {
    countries: Vec<&'static str>,
    near: Option<((f64, f64), f64)>,
    remote_from: Option<&'static str>,
    min_salary: Option<(u64, &'static str)>,
}

impl QuerySpec {
    /// Whether reposts are asked for, and `seen_after`, from the high bits of `geo` (none in
    /// a broad query).
    fn freshness(&self) -> (bool, Option<DateTime<Utc>>) {
        let g = self.geo;
        (
            g != 0 && (g >> 56).is_multiple_of(3),
            ((g >> 58) % 4 == 1)
                .then(|| base_time() + Duration::hours(((g >> 60) % SLOTS as u64) as i64)),
        )
    }

    fn wherever(&self) -> GeoAsked {
        let g = self.geo;
        let with_point = |n: u64| {
            let points: Vec<(f64, f64)> = PLACES.iter().filter_map(|p| p.1).collect();
            pick(&points, n)
        };
        GeoAsked {
            countries: (0..g % 3)
                .map(|i| pick(PLACES, g >> (2 + 3 * i)).0)
                .collect(),
            near: ((g >> 10) % 4 == 1).then(|| (with_point(g >> 12), pick(RADII, g >> 16))),
            remote_from: ((g >> 20) % 4 == 1).then(|| pick(&["DE", "FR", "US", "BR"], g >> 22)),
            min_salary: ((g >> 26) % 4 == 1)
                .then(|| (pick(AMOUNTS, g >> 28) * 10, pick(CURRENCIES, g >> 32))),
        }
    }
}

impl QuerySpec {
    fn to_query(&self) -> JobQuery {
        let mut filter = JobFilter::default()
            .domains(
                self.tags
                    .iter()
                    .map(|t| DomainTag::parse(t).expect("a tag")),
            )
            .seniority(
                self.levels
                    .iter()
                    .map(|l| Seniority::parse(l).expect("a level")),
            )
            .remote_only(self.remote_only)
            .min_confidence(
                self.min_confidence
                    .map(|c| Confidence::new(c).expect("a confidence")),
            )
            .posted_after(self.posted_after);
        let geo = self.wherever();
        filter = filter
            .countries(
                geo.countries
                    .iter()
                    .map(|c| Country::parse(c).expect("a country")),
            )
            .near(
                geo.near
                    .map(|((lat, lon), r)| Near::new(lat, lon, r).expect("a circle")),
            )
            .remote_from(
                geo.remote_from
                    .map(|c| Country::parse(c).expect("a country")),
            )
            .min_salary(
                geo.min_salary
                    .map(|(floor, c)| (floor, Currency::parse(c).expect("a currency"))),
            );
        if let Some(q) = &self.q {
            filter = filter.with_q(q);
        }
        if let Some(c) = &self.company {
            filter = filter.with_company(c);
        }
        let (reposts, seen_after) = self.freshness();
        filter = filter
            .reposts(if reposts {
                Reposts::Include
            } else {
                Reposts::Hide
            })
            .seen_after(seen_after);
        let sort = if self.relevance {
            Sort::Relevance
        } else {
            Sort::PostedAt
        };
        JobQuery::new(filter)
            .sort(sort)
            .page(Page::new(self.page).expect("a page"))
            .per_page(PerPage::new(self.per_page).expect("a page size"))
    }
}

/// A job with its words worked out once.
struct Entry {
    job: Job,
    text: HashSet<String>,
    company: HashSet<String>,
    /// How often each word counts for BM25.
    counted: Counted,
}

/// The model: what the index should hold, and the oracle over it.
#[derive(Default)]
struct Model {
    jobs: BTreeMap<JobId, Entry>,
    /// The words of each company name, read once.
    company_words: HashMap<String, Vec<String>>,
}

/// What a search text asks for, as the oracle reads it.
enum Wanted {
    /// No text, or blank text: no condition.
    Anything,
    /// Text that is not blank but holds no word (`...`, an emoji): no job matches.
    Nothing,
    /// Every one of these words.
    Words(Vec<String>),
}

impl Wanted {
    fn of(text: Option<&str>) -> Self {
        let Some(text) = text else {
            return Self::Anything;
        };
        match oracle_words(text) {
            w if !w.is_empty() => Self::Words(w),
            _ if text.trim().is_empty() => Self::Anything,
            _ => Self::Nothing,
        }
    }

    fn holds(&self, words: &HashSet<String>) -> bool {
        match self {
            Self::Anything => true,
            Self::Nothing => false,
            Self::Words(w) => w.iter().all(|w| words.contains(w)),
        }
    }
}

/// A query with its texts read once.
struct Asked<'a> {
    spec: &'a QuerySpec,
    q: Wanted,
    company: Wanted,
}

impl<'a> Asked<'a> {
    fn new(spec: &'a QuerySpec) -> Self {
        Self {
            spec,
            q: Wanted::of(spec.q.as_deref()),
            company: Wanted::of(spec.company.as_deref()),
        }
    }
}

/// Whether a job holding the labels `held` passes a filter asking for `asked`: none asked, or
/// one of them held. Labels are ASCII, so comparing them without case is comparing them
/// ASCII-wise.
fn any_asked<'a>(asked: &[String], mut held: impl Iterator<Item = &'a str>) -> bool {
    asked.is_empty() || held.any(|h| asked.iter().any(|a| a.eq_ignore_ascii_case(h)))
}

impl Model {
    fn upsert(&mut self, job: &Job) {
        let company_words = self
            .company_words
            .entry(job.company_name.clone())
            .or_insert_with(|| oracle_words(&job.company_name));
        let company: HashSet<String> = company_words.iter().cloned().collect();
        let counted = Counted::of(job);
        self.jobs.insert(
            job.id,
            Entry {
                job: job.clone(),
                text: counted.counts.keys().cloned().collect(),
                company,
                counted,
            },
        );
    }

    /// Whether the model holds the job as active.
    fn is_active(&self, id: JobId) -> bool {
        self.jobs
            .get(&id)
            .is_some_and(|e| e.job.status == JobStatus::Active)
    }

    fn remove(&mut self, id: JobId) -> bool {
        let was = self.is_active(id);
        self.jobs.remove(&id);
        was
    }

    fn matches(e: &Entry, asked: &Asked) -> bool {
        let (job, q) = (&e.job, asked.spec);
        if job.status != JobStatus::Active {
            return false;
        }
        let (reposts, seen_after) = q.freshness();
        if job.repost_of.is_some() && !reposts {
            return false;
        }
        if seen_after.is_some_and(|t| job.last_seen() <= t) {
            return false;
        }
        if !any_asked(&q.tags, job.domains.iter().map(|d| d.as_str()))
            || !any_asked(&q.levels, job.seniority.iter().map(|s| s.as_str()))
        {
            return false;
        }
        if q.remote_only && !job.remote {
            return false;
        }
        if !asked.company.holds(&e.company) || !asked.q.holds(&e.text) {
            return false;
        }
        if let Some(m) = q.min_confidence {
            if job.confidence.get() < m {
                return false;
            }
        }
        if let Some(t) = q.posted_after {
            if job.posted_at <= t {
                return false;
            }
        }
        let geo = q.wherever();
        if !geo.countries.is_empty()
            && !job
                .places
                .iter()
                .any(|p| geo.countries.contains(&p.country.as_str()))
        {
            return false;
        }
        if let Some((centre, radius)) = geo.near {
            let near = job.places.iter().any(|p| match (p.lat, p.lon) {
                (Some(lat), Some(lon)) => great_circle_km(centre, (lat, lon)) <= radius,
                _ => false,
            });
            if !near {
                return false;
            }
        }
        if let Some(home) = geo.remote_from {
            let open = job
                .remote_regions
                .iter()
                .any(|r| matches!(r.as_str(), "worldwide") || r.as_str() == home);
            if !job.remote || !open {
                return false;
            }
        }
        if let Some((floor, currency)) = geo.min_salary {
            let yearly = yearly_in(job.salary.as_ref(), currency);
            if yearly.is_none_or(|y| y < floor) {
                return false;
            }
        }
        true
    }

    /// Every match, in result order.
    fn hits(&self, asked: &Asked) -> Vec<&Job> {
        let mut hits: Vec<&Entry> = self
            .jobs
            .values()
            .filter(|e| Self::matches(e, asked))
            .collect();
        hits.sort_by_key(|e| (Reverse(e.job.posted_at), e.job.id));
        if let (true, Wanted::Words(_), Some(q)) =
            (asked.spec.relevance, &asked.q, asked.spec.q.as_deref())
        {
            let active = self
                .jobs
                .values()
                .filter(|e| e.job.status == JobStatus::Active);
            let bm25 = Bm25::new(q, active.map(|e| &e.counted));
            let scores: HashMap<JobId, f64> = hits
                .iter()
                .map(|e| (e.job.id, bm25.score(&e.counted)))
                .collect();
            // Stable: equal scores keep result order.
            hits.sort_by(|a, b| scores[&b.job.id].total_cmp(&scores[&a.job.id]));
        }
        hits.into_iter().map(|e| &e.job).collect()
    }

    /// The facet counts of the matches, counted job by job: each distinct value of a job
    /// once, lists by count descending then value.
    fn facets(hits: &[&Job]) -> FacetCounts {
        let tally = |values: &dyn Fn(&Job) -> BTreeSet<&str>| {
            let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
            for job in hits {
                for v in values(job) {
                    *counts.entry(v).or_default() += 1;
                }
            }
            let mut list: Vec<ValueCount> = counts
                .into_iter()
                .map(|(value, count)| ValueCount {
                    value: value.to_owned(),
                    count,
                })
                .collect();
            list.sort_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
            list
        };
        let remote = hits.iter().filter(|j| j.remote).count() as u64;
        FacetCounts::default()
            .domain(tally(&|j: &Job| {
                j.domains.iter().map(|d| d.as_str()).collect()
            }))
            .seniority(tally(&|j: &Job| {
                j.seniority.iter().map(|s| s.as_str()).collect()
            }))
            .remote(RemoteCounts {
                remote,
                on_site: hits.len() as u64 - remote,
            })
            .country(tally(&|j: &Job| {
                j.places.iter().map(|p| p.country.as_str()).collect()
            }))
    }

    fn active(&self) -> impl Iterator<Item = &Job> {
        self.jobs
            .values()
            .map(|e| &e.job)
            .filter(|j| j.status == JobStatus::Active)
    }
}

/// Checks one query against the oracle; `sample` limits how many jobs `matches` is checked on.
fn check_query(index: &JobIndex, model: &Model, q: &QuerySpec, sample: usize) {
    let query = q.to_query();
    let asked = Asked::new(q);
    let hits = model.hits(&asked);
    let all: Vec<JobId> = hits.iter().map(|j| j.id).collect();
    let from = ((q.page - 1) * q.per_page) as usize;
    let page: Vec<JobId> = all
        .iter()
        .skip(from)
        .take(q.per_page as usize)
        .copied()
        .collect();
    let got = index.search(&query);
    assert_eq!(got.total, all.len() as u64, "total for {q:?}");
    assert_eq!(got.ids, page, "page for {q:?}");
    assert!(got.facets.is_empty(), "no facets asked for {q:?}");

    // Facets are counted over all the matches, and asking for them changes nothing else.
    let faceted = index.search(&query.clone().facets([
        Facet::Remote,
        Facet::Domain,
        Facet::Country,
        Facet::Seniority,
        Facet::Domain,
    ]));
    assert_eq!(faceted.total, got.total, "faceted total for {q:?}");
    assert_eq!(faceted.ids, got.ids, "faceted page for {q:?}");
    assert_eq!(faceted.facets, Model::facets(&hits), "facets for {q:?}");
    let one = index.search(&query.clone().facets([Facet::Seniority]));
    assert_eq!(one.facets.seniority, faceted.facets.seniority);
    assert!(one.facets.domain.is_none() && one.facets.remote.is_none());
    assert!(one.facets.country.is_none());
    let countries = index.search(&query.clone().facets([Facet::Country]));
    assert_eq!(countries.facets.country, faceted.facets.country);
    assert_eq!(countries.ids, got.ids);

    // `search_top` answers newest first, whatever the query's order.
    let newest_first = QuerySpec {
        relevance: false,
        ..q.clone()
    };
    let newest_first: Vec<JobId> = model
        .hits(&Asked::new(&newest_first))
        .iter()
        .map(|j| j.id)
        .collect();
    let top = index.search_top(&query.filter, from + q.per_page as usize);
    assert_eq!(top.total, all.len() as u64);
    assert_eq!(
        top.ids,
        newest_first[..all.len().min(from + q.per_page as usize)],
        "top for {q:?}"
    );

    let step = (model.jobs.len() / sample.max(1)).max(1);
    for e in model.jobs.values().step_by(step) {
        assert_eq!(
            query.filter.matches(&e.job),
            Model::matches(e, &asked),
            "JobFilter::matches on {:?} for {q:?}",
            e.job
        );
    }
}

/// The count of `value` in a facet's counts: 0 when it is not among them.
fn count_of(counts: &Option<Vec<ValueCount>>, value: &str) -> u64 {
    counts
        .iter()
        .flatten()
        .find(|v| v.value == value)
        .map_or(0, |v| v.count)
}

/// The index's own bookkeeping against the model.
fn check_structure(index: &JobIndex, model: &Model) {
    let active: Vec<&Job> = model.active().collect();
    assert_eq!(index.len(), active.len() as u64);
    assert_eq!(index.is_empty(), active.is_empty());
    // The known values are the facets of a search with no filter.
    let everything = Model::facets(&model.hits(&Asked::new(&QuerySpec::default())));
    assert_eq!(Some(index.domain_values()), everything.domain);
    assert_eq!(Some(index.seniority_values()), everything.seniority);
    for tag in TAGS {
        let tag = DomainTag::parse(tag).expect("a tag");
        let n = count_of(&everything.domain, tag.as_str());
        assert_eq!(index.jobs_with_domain(&tag), n);
    }
    for level in LEVELS {
        let level = Seniority::parse(level).expect("a level");
        let n = count_of(&everything.seniority, level.as_str());
        assert_eq!(index.jobs_with_seniority(&level), n);
    }
    for e in model.jobs.values() {
        assert_eq!(index.contains(e.job.id), e.job.status == JobStatus::Active);
    }
    let mut per_company: BTreeMap<CompanyId, u64> = BTreeMap::new();
    for j in active.iter().filter(|j| j.repost_of.is_none()) {
        *per_company.entry(j.company_id).or_default() += 1;
    }
    let listed: BTreeMap<CompanyId, u64> = index.companies_with_active_jobs().collect();
    assert_eq!(listed, per_company);
    for c in 0..COMPANIES {
        let id = company_id(c);
        assert_eq!(
            index.active_jobs_of(id),
            per_company.get(&id).copied().unwrap_or(0)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------------------------

fn text_parts(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0..VOCAB.len(), 0..SEPARATORS.len()), len)
}

fn confidence() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(CONFIDENCES),
        (0u32..=20).prop_map(|n| f64::from(n) / 20.0),
        0.0f64..=1.0,
    ]
}

fn job_spec(ids: u64) -> impl Strategy<Value = JobSpec> {
    (
        0..ids,
        text_parts(1..4),
        0..COMPANIES,
        text_parts(0..8),
        prop::collection::vec(0..TAGS.len(), 0..3),
        prop::collection::vec(0..LEVELS.len(), 0..3),
        any::<bool>(),
        0..SLOTS,
        confidence(),
        prop::bool::weighted(0.15),
        any::<u64>(),
    )
        .prop_map(
            |(
                n,
                role,
                company,
                description,
                tags,
                levels,
                remote,
                slot,
                confidence,
                closed,
                geo,
            )| {
                JobSpec {
                    n,
                    role,
                    company,
                    description,
                    tags,
                    levels,
                    remote,
                    slot,
                    confidence,
                    closed,
                    geo,
                }
            },
        )
}

#[derive(Clone, Debug)]
enum Op {
    Upsert(JobSpec),
    /// Upsert the job of this id, closed (if it is known).
    Close(u64),
    /// `JobIndex::remove` of this id.
    Remove(u64),
    /// `JobIndex::compact`: renumber in result order.
    Compact,
    /// Upserts of a batch, through `JobIndex::prepare` and `add_prepared`.
    Prepared(Vec<JobSpec>),
    /// `JobIndex::touch`: the job of this id seen again at this slot.
    Touch(u64, i64),
}

fn op(ids: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => job_spec(ids).prop_map(Op::Upsert),
        1 => (0..ids).prop_map(Op::Close),
        1 => (0..ids).prop_map(Op::Remove),
        1 => Just(Op::Compact),
        1 => prop::collection::vec(job_spec(ids), 0..12).prop_map(Op::Prepared),
        1 => (0..ids, 0..SLOTS).prop_map(|(n, slot)| Op::Touch(n, slot)),
    ]
}

fn posted_after() -> impl Strategy<Value = DateTime<Utc>> {
    prop_oneof![
        // Exactly on a slot (ties with the boundary), or between slots, or outside the data.
        (-1..=SLOTS).prop_map(|s| base_time() + Duration::hours(s)),
        (0..SLOTS).prop_map(|s| base_time() + Duration::hours(s) + Duration::minutes(30)),
        (0..SLOTS).prop_map(|s| base_time() + Duration::hours(s) - Duration::nanoseconds(1)),
    ]
}

fn query_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => text_parts(1..3).prop_map(|p| join(&p)),
        1 => Just("nomatchword".to_owned()),
        1 => Just("...".to_owned()),
        1 => text_parts(1..2).prop_map(|p| join(&p).to_uppercase()),
    ]
}

fn query_spec() -> impl Strategy<Value = QuerySpec> {
    (
        prop::collection::vec(prop::sample::select(TAGS), 0..3),
        prop::collection::vec(prop::sample::select(LEVELS), 0..3),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.2, query_text()),
        prop::option::weighted(0.4, query_text()),
        prop::option::weighted(0.3, confidence()),
        prop::option::weighted(0.3, posted_after()),
        1u32..=5,
        1u32..=10,
        any::<u64>(),
        prop::bool::weighted(0.4),
    )
        .prop_map(
            |(
                tags,
                levels,
                remote_only,
                company,
                q,
                min_confidence,
                posted_after,
                page,
                per_page,
                geo,
                relevance,
            )| {
                let case = |v: Vec<&str>, upper: bool| -> Vec<String> {
                    v.into_iter()
                        .map(|s| {
                            if upper {
                                s.to_uppercase()
                            } else {
                                s.to_owned()
                            }
                        })
                        .collect()
                };
                QuerySpec {
                    tags: case(tags, page.is_multiple_of(2)),
                    levels: case(levels, per_page.is_multiple_of(2)),
                    remote_only,
                    company,
                    q,
                    min_confidence,
                    posted_after,
                    geo,
                    relevance,
                    page,
                    per_page,
                }
            },
        )
}

fn apply(index: &mut JobIndex, model: &mut Model, op: &Op) {
    match op {
        Op::Upsert(spec) => {
            let job = build(spec);
            index.upsert(&job);
            model.upsert(&job);
        }
        Op::Close(n) => {
            let id = job_id(*n);
            if let Some(mut job) = model.jobs.get(&id).map(|e| e.job.clone()) {
                job.status = JobStatus::Closed;
                index.upsert(&job);
                model.upsert(&job);
            }
        }
        Op::Remove(n) => {
            let id = job_id(*n);
            let was_active = model.remove(id);
            assert_eq!(
                index.remove(id),
                was_active,
                "remove reports whether it was indexed"
            );
        }
        Op::Compact => index.compact(),
        Op::Touch(n, slot) => {
            let id = job_id(*n);
            let at = base_time() + Duration::hours(*slot) + Duration::minutes(1);
            let active = model.is_active(id);
            if let Some(mut job) = model.jobs.get(&id).map(|e| e.job.clone()) {
                job.last_seen_at = Some(at);
                model.upsert(&job);
            }
            assert_eq!(
                index.touch(id, at),
                active,
                "touch reports whether it is indexed"
            );
        }
        Op::Prepared(specs) => {
            let jobs: Vec<Job> = specs.iter().map(build).collect();
            for job in &jobs {
                model.upsert(job);
            }
            let prepared = JobIndex::prepare(jobs.clone());
            assert_eq!(prepared.len(), jobs.len());
            let added = index.add_prepared(prepared);
            assert_eq!(added.len(), jobs.len(), "the jobs come back");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(scaled(96)))]

    /// Random upserts, changes, closes and removals interleaved with random searches.
    #[test]
    fn the_index_answers_every_query_like_the_oracle(
        ops in prop::collection::vec(op(40), 0..90),
        queries in prop::collection::vec(query_spec(), 1..8),
    ) {
        let mut index = JobIndex::new();
        let mut model = Model::default();
        for (i, op) in ops.iter().enumerate() {
            apply(&mut index, &mut model, op);
            if i % 25 == 24 {
                check_structure(&index, &model);
                for q in &queries {
                    check_query(&index, &model, q, usize::MAX);
                }
            }
        }
        check_structure(&index, &model);
        for q in &queries {
            check_query(&index, &model, q, usize::MAX);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Thousands of jobs: the walk over the global order, and the sweep of dead documents.
// ---------------------------------------------------------------------------------------------

/// splitmix64: a small seeded generator for the large test's bulk data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn parts(&mut self, max: u64) -> Vec<(usize, usize)> {
        (0..self.below(max + 1))
            .map(|_| {
                (
                    self.below(VOCAB.len() as u64) as usize,
                    self.below(SEPARATORS.len() as u64) as usize,
                )
            })
            .collect()
    }

    fn job(&mut self, n: u64) -> JobSpec {
        let tags = (0..self.below(3))
            .map(|_| self.below(TAGS.len() as u64) as usize)
            .collect();
        let levels = (0..self.below(3))
            .map(|_| self.below(LEVELS.len() as u64) as usize)
            .collect();
        let confidence = if self.chance(50) {
            CONFIDENCES[self.below(CONFIDENCES.len() as u64) as usize]
        } else {
            self.below(1001) as f64 / 1000.0
        };
        JobSpec {
            n,
            role: {
                let mut p = self.parts(3);
                if p.is_empty() {
                    p.push((0, 0));
                }
                p
            },
            company: self.below(COMPANIES),
            description: self.parts(6),
            tags,
            levels,
            remote: self.chance(50),
            slot: self.below(SLOTS as u64 * 4) as i64,
            confidence,
            closed: false,
            geo: self.next(),
        }
    }

    /// A random query; pages reach up to a little past `results` results.
    fn query(&mut self, results: u32) -> QuerySpec {
        let pick = |rng: &mut Rng, from: &[&str]| -> Vec<String> {
            (0..rng.below(3))
                .map(|_| from[rng.below(from.len() as u64) as usize].to_owned())
                .collect()
        };
        let broad = self.chance(50);
        let per_page = 1 + self.below(50) as u32;
        let page = 1 + self.below(u64::from(results / per_page + 2)) as u32;
        QuerySpec {
            tags: if broad { Vec::new() } else { pick(self, TAGS) },
            levels: if broad {
                Vec::new()
            } else {
                pick(self, LEVELS)
            },
            remote_only: self.chance(30),
            company: (!broad && self.chance(20)).then(|| join(&self.parts(2))),
            q: (!broad && self.chance(40)).then(|| join(&self.parts(2))),
            min_confidence: (!broad && self.chance(30))
                .then(|| CONFIDENCES[self.below(CONFIDENCES.len() as u64) as usize]),
            posted_after: (!broad && self.chance(30))
                .then(|| base_time() + Duration::hours(self.below(SLOTS as u64 * 4) as i64)),
            // No condition of places or pay in a broad query (`geo` 0).
            geo: if broad { 0 } else { self.next() },
            relevance: self.chance(40),
            page,
            per_page,
        }
    }
}

fn check_many(index: &JobIndex, model: &Model, rng: &mut Rng, n: usize) {
    check_structure(index, model);
    let live = model.active().count() as u32;
    for _ in 0..n {
        // Pages across the whole result, past its end now and then.
        let q = rng.query(live);
        check_query(index, model, &q, 64);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(scaled(3)))]

    /// 6000 jobs loaded in bulk, in random order; 5000 out (the index compacts itself once
    /// more than 4096 are dead and they outnumber a quarter of the live ones); then new jobs
    /// one at a time in random order (out of result order, so the index keeps them apart and
    /// compacts once they are more than 1/64 of it) and changed ones. Searches are checked at
    /// every stage, including broad ones and deep pages.
    #[test]
    fn the_index_stays_exact_through_bulk_loads_and_compactions(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut index = JobIndex::new();
        let mut model = Model::default();

        let jobs: Vec<Job> = (0..6_000).map(|n| build(&rng.job(n))).collect();
        index.extend(&jobs);
        for job in &jobs {
            model.upsert(job);
        }
        check_many(&index, &model, &mut rng, 30);

        let mut order: Vec<u64> = (0..6_000).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for (i, n) in order.iter().take(5_000).enumerate() {
            let op = if i.is_multiple_of(3) { Op::Close(*n) } else { Op::Remove(*n) };
            apply(&mut index, &mut model, &op);
            if i == 4_090 || i == 4_100 {
                check_many(&index, &model, &mut rng, 5);
            }
        }
        check_many(&index, &model, &mut rng, 30);

        for n in 6_000..7_000 {
            let job = build(&rng.job(n));
            index.upsert(&job);
            model.upsert(&job);
        }
        // Change some survivors, bring some closed jobs back.
        for n in order.iter().skip(5_000).take(200).chain(order.iter().take(300)) {
            let mut spec = rng.job(*n);
            spec.closed = rng.chance(10);
            let op = Op::Upsert(spec);
            apply(&mut index, &mut model, &op);
        }
        check_many(&index, &model, &mut rng, 30);
    }
}

// ---------------------------------------------------------------------------------------------
// Edges the generators stay away from.
// ---------------------------------------------------------------------------------------------

fn small_index() -> (JobIndex, Vec<Job>) {
    let mut rng = Rng(7);
    let jobs: Vec<Job> = (0..50).map(|n| build(&rng.job(n))).collect();
    let mut index = JobIndex::new();
    for j in &jobs {
        index.upsert(j);
    }
    (index, jobs)
}

/// Jobs posted after the first instant of `year`.
fn posted_after_new_year(year: i32) -> JobFilter {
    JobFilter::default().posted_after(
        Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0)
            .single()
            .expect("t"),
    )
}

#[test]
fn posted_after_beyond_the_nanosecond_range_matches_nothing() {
    let (index, jobs) = small_index();
    // 2300 is past the last instant an i64 of nanoseconds can hold (2262).
    let filter = posted_after_new_year(2300);
    assert!(jobs.iter().all(|j| !filter.matches(j)));
    let found = index.search(&JobQuery::new(filter));
    assert_eq!(found.total, 0, "no job is posted after 2300");
    assert!(found.ids.is_empty());
}

#[test]
fn posted_after_before_the_nanosecond_range_matches_everything() {
    let (index, jobs) = small_index();
    // Reposts too: this is about the date.
    let filter = posted_after_new_year(1600).reposts(Reposts::Include);
    assert!(jobs.iter().all(|j| filter.matches(j)));
    assert_eq!(
        index.search(&JobQuery::new(filter)).total,
        jobs.len() as u64
    );
}

// ---------------------------------------------------------------------------------------------
// The word rule itself, written out by hand.
// ---------------------------------------------------------------------------------------------

/// Texts and their words, worked out by hand from the documented rule (docs/api.md, "Search
/// semantics", and `job_listings::query::words`): NFC, then the words of UAX #29 (no
/// dictionary: Han, Hiragana and Thai letters are words one character each, a run of
/// Katakana is one word), cut at every character that is not a letter, a digit or a mark
/// within a word (variation selectors and enclosing marks are not), lowercased whole.
const WORD_TABLE: &[(&str, &[&str])] = &[
    // ASCII: punctuation cuts, case folds.
    (
        "Senior Node.js Engineer (Remote) — Zürich, C++",
        &["senior", "node", "js", "engineer", "remote", "zürich", "c"],
    ),
    ("don't stop", &["don", "t", "stop"]),
    ("don\u{2019}t", &["don", "t"]),
    ("3.14 1,000.5", &["3", "14", "1", "000", "5"]),
    (
        "a_b x--y e-mail@host.io",
        &["a", "b", "x", "y", "e", "mail", "host", "io"],
    ),
    ("C# and F#, v2 42nd", &["c", "and", "f", "v2", "42nd"]),
    ("\tfoo\nBAR\r\n\u{b}baz\u{c}", &["foo", "bar", "baz"]),
    ("  ...  ", &[]),
    // NFC: decomposed letters are their precomposed selves.
    ("Caf\u{e9}", &["caf\u{e9}"]),
    ("Cafe\u{301}", &["caf\u{e9}"]),
    ("CAFE\u{301}", &["caf\u{e9}"]),
    (
        "Zu\u{308}rich ZU\u{308}RICH",
        &["z\u{fc}rich", "z\u{fc}rich"],
    ),
    ("A\u{30a}ngstro\u{308}m", &["\u{e5}ngstr\u{f6}m"]),
    // ANGSTROM SIGN is canonically U+00C5.
    ("\u{212b}ngstr\u{f6}m", &["\u{e5}ngstr\u{f6}m"]),
    // Marks in either order compose to the same letter (canonical ordering: dot below first).
    ("Vie\u{323}\u{302}t", &["vi\u{1ec7}t"]),
    ("Vie\u{302}\u{323}t", &["vi\u{1ec7}t"]),
    ("VI\u{1ec6}T", &["vi\u{1ec7}t"]),
    // Conjoining jamo compose to Hangul syllables.
    (
        "\u{1112}\u{1161}\u{11ab}\u{1100}\u{1173}\u{11af}",
        &["\u{d55c}\u{ae00}"],
    ),
    (
        "\u{d55c}\u{ad6d}\u{c5b4} \u{ac1c}\u{bc1c}\u{c790}",
        &["\u{d55c}\u{ad6d}\u{c5b4}", "\u{ac1c}\u{bc1c}\u{c790}"],
    ),
    // Combining marks without a precomposed letter stay in their word.
    ("q\u{303}uery", &["q\u{303}uery"]),
    (
        "Hindi: \u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}",
        &["hindi", "\u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}"],
    ),
    // A mark with nothing to sit on is no word.
    ("a_\u{301}_b", &["a", "b"]),
    ("\u{301}abc", &["abc"]),
    ("a \u{301}b", &["a", "b"]),
    ("a\u{20dd} \u{301}", &["a"]),
    // VS16 and keycaps: the letter or digit is the word; a keycap of `#` is none.
    ("\u{2139}\u{fe0f} info", &["\u{2139}", "info"]),
    ("\u{2764}\u{fe0f} rust", &["rust"]),
    ("5\u{fe0f}\u{20e3}", &["5"]),
    ("5\u{20e3} #\u{fe0f}\u{20e3} *\u{fe0f}\u{20e3}", &["5"]),
    ("1\u{fe0f}\u{20e3}2\u{fe0f}\u{20e3}", &["1", "2"]),
    // Emoji, ZWJ sequences, skin tones and flags are no words; the letters beside them are.
    ("\u{1f469}\u{200d}\u{1f4bb} dev", &["dev"]),
    ("rust\u{1f980}dev", &["rust", "dev"]),
    ("rust\u{200d}\u{1f980}", &["rust"]),
    ("\u{1f44d}\u{1f3fd}great", &["great"]),
    ("\u{1f1e9}\u{1f1ea} \u{1f3f3}\u{fe0f}\u{200d}\u{1f308}", &[]),
    ("a\u{200d}b", &["a", "b"]),
    // Format characters and other spaces cut too.
    (
        "data\u{ad}base a\u{200b}b a\u{a0}b a\u{3000}b",
        &["data", "base", "a", "b", "a", "b", "a", "b"],
    ),
    // Final sigma: a capital sigma ending a word lowercases to `ς`, elsewhere to `σ`.
    (
        "\u{39f}\u{394}\u{39f}\u{3a3}",
        &["\u{3bf}\u{3b4}\u{3bf}\u{3c2}"],
    ),
    ("\u{3a3}\u{391}\u{3a3}", &["\u{3c3}\u{3b1}\u{3c2}"]),
    ("\u{3a3}", &["\u{3c3}"]),
    (
        "\u{39f}\u{394}\u{39f}\u{3a3}.\u{391}\u{398}\u{397}\u{39d}\u{391}\u{3a3}",
        &[
            "\u{3bf}\u{3b4}\u{3bf}\u{3c2}",
            "\u{3b1}\u{3b8}\u{3b7}\u{3bd}\u{3b1}\u{3c2}",
        ],
    ),
    (
        "\u{39f}\u{394}\u{39f}\u{3a3}'s",
        &["\u{3bf}\u{3b4}\u{3bf}\u{3c2}", "s"],
    ),
    (
        "\u{39f}\u{394}\u{39f}\u{3a3}rust",
        &["\u{3bf}\u{3b4}\u{3bf}\u{3c3}rust"],
    ),
    // Other cases: whole-word lowercasing, no folding.
    ("STRASSE Stra\u{df}e", &["strasse", "stra\u{df}e"]),
    ("\u{130}stanbul", &["i\u{307}stanbul"]),
    ("\u{fb01}nance", &["\u{fb01}nance"]),
    (
        "\u{ff32}\u{ff35}\u{ff33}\u{ff34}\u{ff12}\u{ff10}\u{ff12}\u{ff16}",
        &["\u{ff52}\u{ff55}\u{ff53}\u{ff54}\u{ff12}\u{ff10}\u{ff12}\u{ff16}"],
    ),
    // CJK: an ideograph or a hiragana letter is a word of its own; katakana runs are one.
    (
        "\u{6771}\u{4eac}\u{90fd}",
        &["\u{6771}", "\u{4eac}", "\u{90fd}"],
    ),
    (
        "\u{6771}\u{4eac}\u{3067}Rust\u{958b}\u{767a}",
        &[
            "\u{6771}", "\u{4eac}", "\u{3067}", "rust", "\u{958b}", "\u{767a}",
        ],
    ),
    (
        "\u{30a8}\u{30f3}\u{30b8}\u{30cb}\u{30a2}\u{52df}\u{96c6}",
        &[
            "\u{30a8}\u{30f3}\u{30b8}\u{30cb}\u{30a2}",
            "\u{52df}",
            "\u{96c6}",
        ],
    ),
    (
        "Rust\u{30c7}\u{30fc}\u{30bf}",
        &["rust", "\u{30c7}\u{30fc}\u{30bf}"],
    ),
    ("\u{304b}\u{3099}", &["\u{304c}"]),
    (
        "\u{ff76}\u{ff80}\u{ff76}\u{ff85}",
        &["\u{ff76}\u{ff80}\u{ff76}\u{ff85}"],
    ),
    // Thai: letters are words one by one, with the vowel signs and tone marks above them.
    (
        "\u{e20}\u{e32}\u{e29}\u{e32}\u{e44}\u{e17}\u{e22}",
        &[
            "\u{e20}", "\u{e32}", "\u{e29}", "\u{e32}", "\u{e44}", "\u{e17}", "\u{e22}",
        ],
    ),
    (
        "\u{e2a}\u{e27}\u{e31}\u{e2a}\u{e14}\u{e35}",
        &["\u{e2a}", "\u{e27}\u{e31}", "\u{e2a}", "\u{e14}\u{e35}"],
    ),
    ("\u{e17}\u{e35}\u{e48}", &["\u{e17}\u{e35}\u{e48}"]),
    // Right-to-left scripts and other digits.
    (
        "\u{5e2}\u{5d1}\u{5e8}\u{5d9}\u{5ea}",
        &["\u{5e2}\u{5d1}\u{5e8}\u{5d9}\u{5ea}"],
    ),
    (
        "\u{5e6}'\u{5d9}\u{5e4}\u{5e1}",
        &["\u{5e6}", "\u{5d9}\u{5e4}\u{5e1}"],
    ),
    (
        "\u{645}\u{631}\u{62d}\u{628}\u{627} \u{662}\u{660}\u{662}\u{666}",
        &[
            "\u{645}\u{631}\u{62d}\u{628}\u{627}",
            "\u{662}\u{660}\u{662}\u{666}",
        ],
    ),
];

/// The engine and the oracles' own reading of words both give the table's words.
#[test]
fn the_word_rule_gives_the_words_written_out_by_hand() {
    let mut wrong = Vec::new();
    for (text, expected) in WORD_TABLE {
        let engine: Vec<String> = words(text).collect();
        let oracle = oracle_words(text);
        if engine != *expected {
            wrong.push(format!("engine   {text:?}: {engine:?}, not {expected:?}"));
        }
        if oracle != *expected {
            wrong.push(format!("oracle   {text:?}: {oracle:?}, not {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
