//! Records for tests: hand-made companies and jobs whose words, tags and dates are known, the
//! demo dataset, and the rules a search follows, written again here as plain loops (an
//! oracle for the API's answers), on the test's own reading of words ([`super::words`]).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use chrono::{DateTime, TimeZone, Utc};
use job_listings::demo::Dataset;
use job_listings::domain::{
    Company, CompanyId, Confidence, DomainTag, Enrichment, FundingStage, Job, JobId, JobStatus,
    Seniority,
};
use uuid::Uuid;

use super::words::words;

/// The seed of the demo dataset of [`demo_dataset`].
pub const DEMO_SEED: u64 = 20_261_101;
/// Demo companies and jobs generated.
pub const DEMO_COMPANIES: usize = 20;
pub const DEMO_JOBS: usize = 400;

/// The demo dataset, generated once per test binary (the same seed gives the same data).
pub fn demo_dataset() -> Dataset {
    static DATASET: OnceLock<Dataset> = OnceLock::new();
    DATASET
        .get_or_init(|| Dataset::generate(DEMO_SEED, DEMO_COMPANIES, DEMO_JOBS))
        .clone()
}

/// An instant in UTC.
pub fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .expect("a valid UTC time")
}

/// Hand-made records with known words, tags and dates, all posted in December 2026, after
/// every demo job (the demo data ends at 2026-11-01).
#[derive(Clone, Debug)]
pub struct Known {
    /// "Quokka Frobnitz", funding stage given as "Series A".
    pub quokka: Company,
    /// "Wombat Zephyr Works", seed stage.
    pub wombat: Company,
    /// "Idle Marmoset": only a closed job.
    pub idle: Company,
    /// Quokka; remote; engineering + ai; staff; 2026-12-10T12:00Z; 0.9; words zephyrine, node, js.
    pub rust_staff: Job,
    /// Quokka; on site; design; lead; 2026-12-09T08:00Z; confidence exactly 0.7; word marmalade.
    pub designer: Job,
    /// Quokka; remote; data; junior; 2026-12-08T09:00Z; 0.5; the lower id of a posted_at tie.
    pub tie_first: Job,
    /// Quokka; on site; data + engineering; junior; same posted_at as `tie_first`; higher id.
    pub tie_second: Job,
    /// Quokka; remote; security; senior; posted exactly 2026-12-01T00:00:00Z; 0.8.
    pub midnight: Job,
    /// Wombat; remote; research + ai; principal; 2026-12-01T00:00:01Z; 0.95.
    pub after_midnight: Job,
    /// Wombat; on site; devops; staff + lead; 2026-12-05T00:00Z; 0.6; word zephyrine.
    pub wombat_job: Job,
    /// Quokka; closed; word zephyrine; 2026-12-11.
    pub closed: Job,
    /// Idle; closed.
    pub idle_closed: Job,
}

impl Known {
    /// The hand-made companies.
    pub fn companies(&self) -> Vec<Company> {
        vec![self.quokka.clone(), self.wombat.clone(), self.idle.clone()]
    }

    /// Every hand-made job, in the order they are ingested (the tie's second id first).
    pub fn jobs(&self) -> Vec<Job> {
        vec![
            self.rust_staff.clone(),
            self.designer.clone(),
            self.tie_second.clone(),
            self.tie_first.clone(),
            self.midnight.clone(),
            self.after_midnight.clone(),
            self.wombat_job.clone(),
            self.closed.clone(),
            self.idle_closed.clone(),
        ]
    }
}

/// A company with a name, a funding stage and enrichment data, id `0xC0_0000 + n`.
fn company(n: u128, name: &str, stage: &str) -> Company {
    let slug = name.to_lowercase().replace(' ', "");
    Company {
        id: CompanyId(Uuid::from_u128(0xC0_0000 + n)),
        name: name.to_owned(),
        domain: format!("{slug}.example.org"),
        funding_stage: FundingStage::parse(stage).expect("a valid stage"),
        blurb: format!("{name} makes things."),
        enrichment: Enrichment {
            headcount: Some(40 + n as u32),
            founded_year: Some(2019),
            headquarters: Some("Hobart, Australia".to_owned()),
            investors: vec!["Marsupial Ventures".to_owned()],
            total_funding_usd: Some(12_000_000),
            links: [("website".to_owned(), format!("https://{slug}.example.org"))]
                .into_iter()
                .collect(),
            extra: serde_json::json!({ "mascot": name })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        },
        updated_at: at(2026, 12, 1, 0, 0, 0),
    }
}

/// A job of `company` with the fields a test cares about; the rest follow from them: a
/// location for an on-site job, a source URL on the company's domain, first seen and updated
/// when posted, never activated before.
#[allow(clippy::too_many_arguments)]
pub fn job(
    id: JobId,
    company: &Company,
    role: &str,
    description: &str,
    domains: &[&str],
    seniority: &[&str],
    remote: bool,
    posted_at: DateTime<Utc>,
    confidence: f64,
    status: JobStatus,
) -> Job {
    Job {
        places: Vec::new(),
        remote_regions: Vec::new(),
        id,
        role: role.to_owned(),
        company_id: company.id,
        company_name: company.name.clone(),
        description: description.to_owned(),
        domains: domains
            .iter()
            .map(|d| DomainTag::parse(d).expect("a valid tag"))
            .collect(),
        seniority: seniority
            .iter()
            .map(|s| Seniority::parse(s).expect("a valid level"))
            .collect(),
        remote,
        location: (!remote).then(|| "Hobart, Australia".to_owned()),
        source_url: format!("https://{}/jobs/{id}", company.domain),
        salary: None,
        posted_at,
        confidence: Confidence::new(confidence).expect("a valid confidence"),
        status,
        activated_at: None,
        first_seen_at: posted_at,
        updated_at: posted_at,
        last_seen_at: None,
        last_posted_at: None,
        repost_of: None,
        reposts: Vec::new(),
    }
}

/// The hand-made records, made once per test binary.
pub fn known() -> &'static Known {
    static KNOWN: OnceLock<Known> = OnceLock::new();
    KNOWN.get_or_init(make_known)
}

fn make_known() -> Known {
    use JobStatus::{Active, Closed};
    let quokka = company(1, "Quokka Frobnitz", "Series A");
    let wombat = company(2, "Wombat Zephyr Works", "seed");
    let idle = company(3, "Idle Marmoset", "growth");
    // Ids: 0x5EED_0000_0000_0001.. so the tie's order is known: tie_first < tie_second.
    let base = 0x5EED_u128 << 64;
    Known {
        rust_staff: job(
            JobId(Uuid::from_u128(base + 10)),
            &quokka,
            "Staff Rust Engineer",
            "Ship the zephyrine pipeline in Node.js and Rust.",
            &["Engineering", "AI"],
            &["Staff"],
            true,
            at(2026, 12, 10, 12, 0, 0),
            0.9,
            Active,
        ),
        designer: job(
            JobId(Uuid::from_u128(base + 11)),
            &quokka,
            "Lead Product Designer",
            "Own the marmalade design system; remote-friendly team.",
            &["design"],
            &["lead"],
            false,
            at(2026, 12, 9, 8, 0, 0),
            0.7,
            Active,
        ),
        tie_first: job(
            JobId(Uuid::from_u128(base + 1)),
            &quokka,
            "Junior Data Analyst",
            "Dashboards for the zephyrine team.",
            &["data"],
            &["junior"],
            true,
            at(2026, 12, 8, 9, 0, 0),
            0.5,
            Active,
        ),
        tie_second: job(
            JobId(Uuid::from_u128(base + 2)),
            &quokka,
            "Junior Data Engineer",
            "Pipelines in Python.",
            &["data", "engineering"],
            &["junior"],
            false,
            at(2026, 12, 8, 9, 0, 0),
            0.55,
            Active,
        ),
        midnight: job(
            JobId(Uuid::from_u128(base + 12)),
            &quokka,
            "Senior Security Engineer",
            "Harden the kumquat platform.",
            &["security"],
            &["senior"],
            true,
            at(2026, 12, 1, 0, 0, 0),
            0.8,
            Active,
        ),
        after_midnight: job(
            JobId(Uuid::from_u128(base + 13)),
            &wombat,
            "Principal Research Scientist",
            "Research kumquat models.",
            &["research", "ai"],
            &["principal"],
            true,
            at(2026, 12, 1, 0, 0, 1),
            0.95,
            Active,
        ),
        wombat_job: job(
            JobId(Uuid::from_u128(base + 14)),
            &wombat,
            "Staff Platform Engineer",
            "Scale zephyrine clusters.",
            &["devops"],
            &["staff", "lead"],
            false,
            at(2026, 12, 5, 0, 0, 0),
            0.6,
            Active,
        ),
        closed: job(
            JobId(Uuid::from_u128(base + 15)),
            &quokka,
            "Staff Zephyrine Engineer",
            "zephyrine zephyrine kumquat",
            &["engineering"],
            &["staff"],
            true,
            at(2026, 12, 11, 0, 0, 0),
            1.0,
            Closed,
        ),
        idle_closed: job(
            JobId(Uuid::from_u128(base + 16)),
            &idle,
            "Closed Role",
            "Nothing to see.",
            &["operations"],
            &["mid"],
            true,
            at(2026, 12, 6, 0, 0, 0),
            0.9,
            Closed,
        ),
        quokka,
        wombat,
        idle,
    }
}

/// The search words of a text (the documented rule, read by [`super::words`]).
pub fn word_set(text: &str) -> BTreeSet<String> {
    words(text).into_iter().collect()
}

/// Whether every word of `query` is a word of the job's role, company name or post text.
/// Text that is not blank but holds no word (`!!!`, an emoji) matches nothing.
pub fn q_matches(job: &Job, query: &str) -> bool {
    let wanted = word_set(query);
    if wanted.is_empty() && !query.trim().is_empty() {
        return false;
    }
    let mut all = word_set(&job.role);
    all.extend(word_set(&job.company_name));
    all.extend(word_set(&job.description));
    wanted.iter().all(|w| all.contains(w))
}

pub fn has_domain(job: &Job, tag: &str) -> bool {
    job.domains.iter().any(|d| d.as_str() == tag)
}

pub fn has_level(job: &Job, level: &str) -> bool {
    job.seniority.iter().any(|s| s.as_str() == level)
}

pub fn id_of(job: &Job) -> String {
    job.id.to_string()
}

/// Ids as strings, in the order given.
pub fn ids(jobs: &[&Job]) -> Vec<String> {
    jobs.iter().map(|j| id_of(j)).collect()
}

/// `template` as another job: a new id, and the post's words in an order of their own (a
/// short post gets words of its own too), so that it is not a copy of the template or of
/// another job made from it (see `job_listings::query::is_repost`), while it holds the same
/// words for `q`.
pub fn another(template: &Job) -> Job {
    let id = JobId(uuid::Uuid::new_v4());
    let mut seed = id.0.as_u128() as u64 | 1;
    let mut next = move || {
        // xorshift64: any order will do, as long as each id gives its own.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut words: Vec<String> = template
        .description
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if words.len() < 12 {
        let own = words.len() + 4;
        words.extend((0..own).map(|_| format!("x{:x}", next() % 0xfff_ffff)));
    }
    for i in (1..words.len()).rev() {
        words.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    Job {
        id,
        description: words.join(" "),
        ..template.clone()
    }
}
