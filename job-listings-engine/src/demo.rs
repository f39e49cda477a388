//! A deterministic, realistic demo dataset: companies and the jobs they post.
//!
//! The same seed and sizes always give the same data. Vocabulary follows a Zipf-like skew
//! (a few words are everywhere, most are rare), as real postings do. The bundled server loads it
//! into an empty store; tests and benches use it as input.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use rand::distributions::{Distribution, WeightedIndex};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use crate::domain::{
    Company, CompanyId, Confidence, Country, DomainTag, Enrichment, FundingStage, Job, JobId,
    JobStatus, Place, RemoteRegion, SalaryRange, Seniority,
};

/// Every domain tag the demo data uses.
pub const DOMAINS: &[&str] = &[
    "engineering",
    "ai",
    "design",
    "product",
    "data",
    "devops",
    "security",
    "marketing",
    "sales",
    "finance",
    "operations",
    "research",
];

/// Every seniority level the demo data uses.
pub const SENIORITIES: &[&str] = &[
    "intern",
    "junior",
    "mid",
    "senior",
    "staff",
    "principal",
    "lead",
    "manager",
    "director",
];

/// Every funding stage the demo data uses.
pub const FUNDING_STAGES: &[&str] = &[
    "pre_seed",
    "seed",
    "series_a",
    "series_b",
    "series_c",
    "series_d",
    "growth",
    "public",
    "bootstrapped",
];

const ROLE_NOUNS: &[(&str, &str)] = &[
    ("Backend Engineer", "engineering"),
    ("Frontend Engineer", "engineering"),
    ("Full Stack Engineer", "engineering"),
    ("Machine Learning Engineer", "ai"),
    ("Research Scientist", "research"),
    ("Product Designer", "design"),
    ("Product Manager", "product"),
    ("Data Engineer", "data"),
    ("Data Scientist", "data"),
    ("Site Reliability Engineer", "devops"),
    ("Platform Engineer", "devops"),
    ("Security Engineer", "security"),
    ("Growth Marketer", "marketing"),
    ("Account Executive", "sales"),
    ("Financial Analyst", "finance"),
    ("Operations Manager", "operations"),
    ("Applied AI Engineer", "ai"),
    ("Mobile Engineer", "engineering"),
    ("UX Researcher", "design"),
    ("Solutions Engineer", "sales"),
];

const SKILLS: &[&str] = &[
    "rust",
    "python",
    "typescript",
    "go",
    "kubernetes",
    "postgres",
    "react",
    "aws",
    "llm",
    "pytorch",
    "terraform",
    "kafka",
    "graphql",
    "figma",
    "sql",
    "spark",
    "swift",
    "kotlin",
    "java",
    "scala",
    "elixir",
    "redis",
    "gcp",
    "azure",
    "docker",
    "node.js",
    "c++",
    "haskell",
    "clickhouse",
    "snowflake",
    "airflow",
    "dbt",
    "tensorflow",
    "jax",
    "cuda",
    "webassembly",
    "grpc",
    "linux",
    "ebpf",
    "nginx",
];

const FILLER: &[&str] = &[
    "we",
    "are",
    "looking",
    "for",
    "a",
    "to",
    "join",
    "our",
    "team",
    "and",
    "help",
    "build",
    "the",
    "future",
    "of",
    "with",
    "you",
    "will",
    "work",
    "on",
    "customers",
    "systems",
    "scale",
    "ship",
    "product",
    "platform",
    "remote",
    "friendly",
    "competitive",
    "salary",
    "equity",
    "benefits",
    "growth",
    "mission",
    "impact",
    "ownership",
    "collaborate",
    "experience",
    "years",
    "strong",
    "communication",
    "distributed",
    "infrastructure",
    "reliable",
    "fast",
    "users",
    "millions",
    "data",
    "models",
    "research",
    "design",
    "quality",
    "culture",
    "learning",
    "async",
    "hybrid",
    "office",
    "global",
    "startup",
    "fintech",
    "healthcare",
    "climate",
    "developer",
    "tools",
    "security",
    "privacy",
    "open",
    "source",
];

const NAME_PARTS_A: &[&str] = &[
    "Acme", "Nimbus", "Quantum", "Blue", "Red", "Bright", "North", "Vector", "Atlas", "Nova",
    "Lumen", "Cobalt", "Signal", "Orbit", "Pixel", "Forge", "Harbor", "Summit", "Echo", "Delta",
    "Prism", "Cedar", "Ion", "Helix", "Kite",
];
const NAME_PARTS_B: &[&str] = &[
    "Labs",
    "Systems",
    "AI",
    "Works",
    "Cloud",
    "Data",
    "Health",
    "Robotics",
    "Finance",
    "Analytics",
    "Security",
    "Bio",
    "Energy",
    "Logistics",
    "Media",
    "Networks",
    "Dynamics",
    "Studio",
    "Foundry",
    "Capital",
];
/// A city demo jobs are in.
struct City {
    /// The location as posted.
    location: &'static str,
    country: &'static str,
    region: Option<&'static str>,
    name: &'static str,
    lat: f64,
    lon: f64,
    /// The currency pay there is in.
    currency: &'static str,
}

/// Where demo jobs are.
const CITIES: &[City] = &[
    City {
        location: "San Francisco, CA",
        country: "US",
        region: Some("California"),
        name: "San Francisco",
        lat: 37.7749,
        lon: -122.4194,
        currency: "USD",
    },
    City {
        location: "New York, NY",
        country: "US",
        region: Some("New York"),
        name: "New York",
        lat: 40.7128,
        lon: -74.006,
        currency: "USD",
    },
    City {
        location: "London, UK",
        country: "GB",
        region: Some("England"),
        name: "London",
        lat: 51.5074,
        lon: -0.1278,
        currency: "GBP",
    },
    City {
        location: "Berlin, Germany",
        country: "DE",
        region: Some("Berlin"),
        name: "Berlin",
        lat: 52.52,
        lon: 13.405,
        currency: "EUR",
    },
    City {
        location: "Paris, France",
        country: "FR",
        region: Some("Île-de-France"),
        name: "Paris",
        lat: 48.8566,
        lon: 2.3522,
        currency: "EUR",
    },
    City {
        location: "Toronto, Canada",
        country: "CA",
        region: Some("Ontario"),
        name: "Toronto",
        lat: 43.6532,
        lon: -79.3832,
        currency: "CAD",
    },
    City {
        location: "Austin, TX",
        country: "US",
        region: Some("Texas"),
        name: "Austin",
        lat: 30.2672,
        lon: -97.7431,
        currency: "USD",
    },
    City {
        location: "Seattle, WA",
        country: "US",
        region: Some("Washington"),
        name: "Seattle",
        lat: 47.6062,
        lon: -122.3321,
        currency: "USD",
    },
    City {
        location: "Amsterdam, Netherlands",
        country: "NL",
        region: Some("North Holland"),
        name: "Amsterdam",
        lat: 52.3676,
        lon: 4.9041,
        currency: "EUR",
    },
    City {
        location: "Zürich, Switzerland",
        country: "CH",
        region: Some("Zürich"),
        name: "Zürich",
        lat: 47.3769,
        lon: 8.5417,
        currency: "CHF",
    },
    City {
        location: "Singapore",
        country: "SG",
        region: None,
        name: "Singapore",
        lat: 1.3521,
        lon: 103.8198,
        currency: "SGD",
    },
    City {
        location: "Bangalore, India",
        country: "IN",
        region: Some("Karnataka"),
        name: "Bengaluru",
        lat: 12.9716,
        lon: 77.5946,
        currency: "INR",
    },
];

/// Countries remote demo jobs take applicants from.
const REMOTE_COUNTRIES: &[&str] = &[
    "US", "CA", "GB", "DE", "FR", "NL", "ES", "PL", "PT", "IN", "BR", "SG",
];
const INVESTORS: &[&str] = &[
    "Sequoia",
    "Accel",
    "Index Ventures",
    "Benchmark",
    "Y Combinator",
    "a16z",
    "Lightspeed",
    "General Catalyst",
    "Founders Fund",
    "Balderton",
];

/// The instant the demo data is generated relative to, so the same seed gives the same data.
pub fn reference_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0)
        .single()
        .unwrap_or_else(Utc::now)
}

/// A generated set of companies and jobs.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// The companies.
    pub companies: Vec<Company>,
    /// The jobs; about one in ten is closed.
    pub jobs: Vec<Job>,
}

impl Dataset {
    /// Generates `companies` companies and `jobs` jobs from `seed`, posted in the 90 days
    /// before [`reference_time`].
    pub fn generate(seed: u64, companies: usize, jobs: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let reference = reference_time();
        let companies: Vec<Company> = (0..companies.max(1))
            .map(|i| company(&mut rng, i, reference))
            .collect();
        // Zipf-like weights: word k is about 1/(k+1) as common as the first.
        let filler_weights = zipf(FILLER.len());
        let skill_weights = zipf(SKILLS.len());
        let company_weights = zipf(companies.len());
        let jobs = (0..jobs)
            .map(|i| {
                let c = if i < companies.len() {
                    &companies[i]
                } else {
                    &companies[company_weights.sample(&mut rng)]
                };
                job(&mut rng, i, c, reference, &filler_weights, &skill_weights)
            })
            .collect();
        Self { companies, jobs }
    }
}

fn zipf(n: usize) -> WeightedIndex<f64> {
    WeightedIndex::new((0..n.max(1)).map(|k| 1.0 / (k as f64 + 1.0)))
        .unwrap_or_else(|_| unreachable!("weights are positive and finite"))
}

fn uuid_from(rng: &mut ChaCha8Rng) -> Uuid {
    uuid::Builder::from_random_bytes(rng.gen()).into_uuid()
}

fn company(rng: &mut ChaCha8Rng, i: usize, reference: DateTime<Utc>) -> Company {
    let a = NAME_PARTS_A[i % NAME_PARTS_A.len()];
    let b = NAME_PARTS_B[(i / NAME_PARTS_A.len()) % NAME_PARTS_B.len()];
    let round = i / (NAME_PARTS_A.len() * NAME_PARTS_B.len());
    let name = if round == 0 {
        format!("{a} {b}")
    } else {
        format!("{a} {b} {}", round + 1)
    };
    let slug = name.to_lowercase().replace(' ', "");
    let stage = FUNDING_STAGES[i % FUNDING_STAGES.len()];
    let mut links = BTreeMap::new();
    links.insert("website".to_owned(), format!("https://{slug}.example.com"));
    links.insert(
        "linkedin".to_owned(),
        format!("https://www.linkedin.com/company/{slug}"),
    );
    links.insert(
        "careers".to_owned(),
        format!("https://{slug}.example.com/careers"),
    );
    let mut extra = serde_json::Map::new();
    extra.insert(
        "tech_stack".to_owned(),
        serde_json::json!(SKILLS.choose_multiple(rng, 4).copied().collect::<Vec<_>>()),
    );
    extra.insert(
        "glassdoor_rating".to_owned(),
        serde_json::json!((rng.gen_range(30..=50) as f64) / 10.0),
    );
    let id = CompanyId(uuid_from(rng));
    let investor_count = rng.gen_range(0..=3);
    Company {
        id,
        name: name.clone(),
        domain: format!("{slug}.example.com"),
        funding_stage: FundingStage::parse(stage)
            .unwrap_or_else(|_| unreachable!("demo stages are valid labels")),
        blurb: format!(
            "{name} builds {} {} for {} teams.",
            FILLER[rng.gen_range(0..FILLER.len())],
            SKILLS[rng.gen_range(0..SKILLS.len())],
            ["modern", "global", "ambitious", "distributed"][rng.gen_range(0..4)]
        ),
        enrichment: Enrichment {
            headcount: Some(rng.gen_range(3..5_000)),
            founded_year: Some(rng.gen_range(1995..=2025)),
            headquarters: Some(CITIES[rng.gen_range(0..CITIES.len())].location.to_owned()),
            investors: INVESTORS
                .choose_multiple(rng, investor_count)
                .map(|s| (*s).to_owned())
                .collect(),
            total_funding_usd: (stage != "bootstrapped")
                .then(|| rng.gen_range(1..500u64) * 1_000_000),
            links,
            extra,
        },
        updated_at: reference,
    }
}

/// One generated job. Kept in one function of about 90 lines on purpose: every draw from
/// `rng` happens in a fixed order, which is what makes a seed give the same dataset, and
/// splitting the draws across functions would hide that order.
fn job(
    rng: &mut ChaCha8Rng,
    i: usize,
    company: &Company,
    reference: DateTime<Utc>,
    filler: &WeightedIndex<f64>,
    skills: &WeightedIndex<f64>,
) -> Job {
    let (noun, main_domain) = ROLE_NOUNS[rng.gen_range(0..ROLE_NOUNS.len())];
    // The first jobs walk through every tag and level so each is represented.
    let level = if i < SENIORITIES.len() {
        SENIORITIES[i]
    } else {
        SENIORITIES[rng.gen_range(0..SENIORITIES.len())]
    };
    let mut domains = vec![main_domain];
    if i < DOMAINS.len() {
        domains.push(DOMAINS[i]);
    }
    if rng.gen_bool(0.3) {
        domains.push(DOMAINS[rng.gen_range(0..DOMAINS.len())]);
    }
    domains.sort_unstable();
    domains.dedup();
    let mut levels = vec![level];
    if rng.gen_bool(0.15) {
        levels.push(SENIORITIES[rng.gen_range(0..SENIORITIES.len())]);
        levels.sort_unstable();
        levels.dedup();
    }
    let role = format!("{} {noun}", capitalise(level));
    let skill_list: Vec<&str> = (0..rng.gen_range(2..6))
        .map(|_| SKILLS[skills.sample(rng)])
        .collect();
    let body: Vec<&str> = (0..rng.gen_range(40..120))
        .map(|_| FILLER[filler.sample(rng)])
        .collect();
    let remote = rng.gen_bool(0.4);
    let article = if role.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    let description = format!(
        "{} is hiring {article} {role}. {}. Skills: {}.",
        company.name,
        body.join(" "),
        skill_list.join(", ")
    );
    let posted_at = reference - Duration::seconds(rng.gen_range(0..90 * 24 * 3600));
    let salary = rng.gen_bool(0.6).then(|| {
        let base = rng.gen_range(60..250u64) * 1_000;
        SalaryRange {
            min: Some(base),
            max: Some(base + rng.gen_range(10..80u64) * 1_000),
            currency: "USD".to_owned(),
            period: "year".to_owned(),
        }
    });
    let id = JobId(uuid_from(rng));
    let location = (!remote || rng.gen_bool(0.5)).then(|| &CITIES[rng.gen_range(0..CITIES.len())]);
    // Drawn from the id's bits, not the generator: the jobs drawn before places were
    // added stay as they were.
    let bits = id.0.as_u128();
    let place = location.map(|city| {
        let country = Country::parse(city.country);
        let mut place = Place::new(country.unwrap_or_else(|_| unreachable!("a listed country")));
        place.region = city.region.map(str::to_owned);
        place.city = Some(city.name.to_owned());
        (place.lat, place.lon) = (Some(city.lat), Some(city.lon));
        place
    });
    let remote_regions = if !remote {
        Vec::new()
    } else if bits % 5 < 2 {
        vec![RemoteRegion::Worldwide]
    } else {
        let mut regions: Vec<RemoteRegion> = (0..1 + (bits >> 8) % 3)
            .filter_map(|i| {
                let code = REMOTE_COUNTRIES
                    [((bits >> (12 + 4 * i)) % REMOTE_COUNTRIES.len() as u128) as usize];
                Country::parse(code).ok().map(RemoteRegion::Country)
            })
            .collect();
        regions.sort();
        regions.dedup();
        regions
    };
    // Pay in the place's currency, now and then by the month or the hour.
    let salary = salary.map(|yearly| {
        let currency = location.map_or("USD", |c| c.currency);
        let (period, per_year) = match (bits >> 24) % 8 {
            0 => ("month", 12),
            1 => ("hour", 2_080),
            _ => ("year", 1),
        };
        SalaryRange {
            min: yearly.min.map(|m| m / per_year),
            max: yearly.max.map(|m| m / per_year),
            currency: currency.to_owned(),
            period: period.to_owned(),
        }
    });
    Job {
        id,
        role,
        company_id: company.id,
        company_name: company.name.clone(),
        description,
        domains: domains
            .into_iter()
            .filter_map(|d| DomainTag::parse(d).ok())
            .collect(),
        seniority: levels
            .into_iter()
            .filter_map(|s| Seniority::parse(s).ok())
            .collect(),
        remote,
        location: location.map(|c| c.location.to_owned()),
        source_url: format!("https://{}/careers/{}", company.domain, id.0.simple()),
        salary,
        posted_at,
        confidence: Confidence::new(f64::from(rng.gen_range(50..=100u32)) / 100.0)
            .unwrap_or_else(|_| unreachable!("0.5..=1.0 is a valid confidence")),
        status: if rng.gen_bool(0.1) {
            JobStatus::Closed
        } else {
            JobStatus::Active
        },
        activated_at: None,
        first_seen_at: posted_at,
        updated_at: posted_at,
        places: place.into_iter().collect(),
        remote_regions,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_data_and_every_label_appears() {
        let a = Dataset::generate(1, 30, 400);
        let b = Dataset::generate(1, 30, 400);
        assert_eq!(a.jobs, b.jobs);
        assert_eq!(a.companies, b.companies);
        for d in DOMAINS {
            assert!(
                a.jobs
                    .iter()
                    .any(|j| j.domains.iter().any(|t| t.as_str() == *d)),
                "{d}"
            );
        }
        for s in SENIORITIES {
            assert!(
                a.jobs
                    .iter()
                    .any(|j| j.seniority.iter().any(|t| t.as_str() == *s)),
                "{s}"
            );
        }
        for f in FUNDING_STAGES {
            assert!(
                a.companies.iter().any(|c| c.funding_stage.as_str() == *f),
                "{f}"
            );
        }
        assert!(a.jobs.iter().all(|j| j.validate().is_ok()));
    }
}
