//! A deterministic, realistic demo dataset: companies and the jobs they post.
//!
//! The same seed and sizes always give the same data. Each post is four to nine sentences in one
//! of a few wordings each, written from the job's own fields (its role, skills, city or remote
//! countries and pay), so that search, snippets and similar jobs can be judged by eye. Skills
//! follow a Zipf-like skew (a few are everywhere, most are rare), as in real postings. Jobs are in
//! 36 cities over 33 countries, paid in the local currency. The bundled server loads it into an
//! empty store; tests and benches use it as input.

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

/// A role demo jobs are for.
struct Role {
    /// The title without the level, such as "Backend Engineer".
    noun: &'static str,
    /// The domain tag the role implies.
    domain: &'static str,
    /// What the role does, as a post's "You will …" goes on.
    duties: &'static [&'static str],
}

const ROLES: &[Role] = &[
    Role {
        noun: "Backend Engineer",
        domain: "engineering",
        duties: &[
            "design and run the APIs and services behind the product",
            "make slow requests fast and keep the data consistent",
        ],
    },
    Role {
        noun: "Frontend Engineer",
        domain: "engineering",
        duties: &[
            "build the screens our customers use every day",
            "turn designs into fast, accessible interfaces",
        ],
    },
    Role {
        noun: "Full Stack Engineer",
        domain: "engineering",
        duties: &[
            "ship features end to end, from the database to the browser",
            "own small products from the first sketch to production",
        ],
    },
    Role {
        noun: "Machine Learning Engineer",
        domain: "ai",
        duties: &[
            "train, evaluate and ship the models behind the product",
            "build the pipelines that take a model from a notebook to production",
        ],
    },
    Role {
        noun: "Research Scientist",
        domain: "research",
        duties: &[
            "run experiments, publish what we learn and turn it into prototypes",
            "explore new methods and measure them on real data",
        ],
    },
    Role {
        noun: "Product Designer",
        domain: "design",
        duties: &[
            "design the flows customers use every day, from sketches to polished screens",
            "test ideas with users and turn what you learn into designs",
        ],
    },
    Role {
        noun: "Product Manager",
        domain: "product",
        duties: &[
            "decide with engineers and designers what we build next",
            "talk to customers and turn what they need into a clear roadmap",
        ],
    },
    Role {
        noun: "Data Engineer",
        domain: "data",
        duties: &[
            "build the pipelines that bring data from every part of the product together",
            "keep our warehouse fast, tested and well documented",
        ],
    },
    Role {
        noun: "Data Scientist",
        domain: "data",
        duties: &[
            "answer the questions that decide our roadmap with data",
            "build models that forecast demand and spot churn early",
        ],
    },
    Role {
        noun: "Site Reliability Engineer",
        domain: "devops",
        duties: &[
            "keep the platform fast and available and lead the response to incidents",
            "set service level objectives and automate away toil",
        ],
    },
    Role {
        noun: "Platform Engineer",
        domain: "devops",
        duties: &[
            "build the internal platform our engineers deploy to",
            "automate deployments and make our builds faster",
        ],
    },
    Role {
        noun: "Security Engineer",
        domain: "security",
        duties: &[
            "find and fix weaknesses before attackers do",
            "review designs, run threat models and respond to incidents",
        ],
    },
    Role {
        noun: "Growth Marketer",
        domain: "marketing",
        duties: &[
            "plan and measure the campaigns that bring new customers to us",
            "run experiments on our website and onboarding to turn visitors into users",
        ],
    },
    Role {
        noun: "Account Executive",
        domain: "sales",
        duties: &[
            "win new customers, from the first call to the signed contract",
            "run demos and guide buyers through their trials",
        ],
    },
    Role {
        noun: "Financial Analyst",
        domain: "finance",
        duties: &[
            "build the models behind our budgets and forecasts",
            "track spending and report to the leadership team every month",
        ],
    },
    Role {
        noun: "Operations Manager",
        domain: "operations",
        duties: &[
            "keep the company running smoothly as it grows",
            "improve how we hire, buy and work with our vendors",
        ],
    },
    Role {
        noun: "Applied AI Engineer",
        domain: "ai",
        duties: &[
            "build features on large language models and measure how well they work",
            "design the prompts, retrieval and evaluations of our assistant",
        ],
    },
    Role {
        noun: "Mobile Engineer",
        domain: "engineering",
        duties: &[
            "build our iOS and Android apps",
            "make the app fast, reliable and pleasant on every phone",
        ],
    },
    Role {
        noun: "UX Researcher",
        domain: "design",
        duties: &[
            "interview customers and share what you learn with the whole company",
            "plan the studies that tell us what to build and what to drop",
        ],
    },
    Role {
        noun: "Solutions Engineer",
        domain: "sales",
        duties: &[
            "help customers set up the product and connect it to their systems",
            "answer technical questions in sales calls and build proofs of concept",
        ],
    },
];

/// Skills, most common first, as posts write them; companies' tech stacks list them in
/// lower case.
const SKILLS: &[&str] = &[
    "Rust",
    "Python",
    "TypeScript",
    "Go",
    "Kubernetes",
    "Postgres",
    "React",
    "AWS",
    "LLM",
    "PyTorch",
    "Terraform",
    "Kafka",
    "GraphQL",
    "Figma",
    "SQL",
    "Spark",
    "Swift",
    "Kotlin",
    "Java",
    "Scala",
    "Elixir",
    "Redis",
    "GCP",
    "Azure",
    "Docker",
    "Node.js",
    "C++",
    "Haskell",
    "ClickHouse",
    "Snowflake",
    "Airflow",
    "dbt",
    "TensorFlow",
    "JAX",
    "CUDA",
    "WebAssembly",
    "gRPC",
    "Linux",
    "eBPF",
    "nginx",
];

/// Words company blurbs are drawn from, as they were when posts were made of them too: the
/// same seed still gives the same companies.
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
#[derive(Debug)]
pub struct City {
    /// The location as posted, such as "Berlin, Germany".
    pub location: &'static str,
    /// The ISO 3166-1 alpha-2 code of its country.
    pub country: &'static str,
    /// The state, province or other region it is in, where one is commonly named.
    pub region: Option<&'static str>,
    /// The city's name.
    pub name: &'static str,
    /// Latitude, in degrees.
    pub lat: f64,
    /// Longitude, in degrees.
    pub lon: f64,
    /// The ISO 4217 code of the currency pay there is in.
    pub currency: &'static str,
}

impl City {
    /// The place of a job in this city, with its region and coordinates.
    pub fn place(&self) -> Place {
        let country = Country::parse(self.country);
        let mut place = Place::new(country.unwrap_or_else(|_| unreachable!("a listed country")));
        place.region = self.region.map(str::to_owned);
        place.city = Some(self.name.to_owned());
        (place.lat, place.lon) = (Some(self.lat), Some(self.lon));
        place
    }
}

/// Where demo jobs are: 36 cities in 33 countries on every continent but Antarctica.
pub const CITIES: &[City] = &[
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
    City {
        location: "Madrid, Spain",
        country: "ES",
        region: Some("Community of Madrid"),
        name: "Madrid",
        lat: 40.4168,
        lon: -3.7038,
        currency: "EUR",
    },
    City {
        location: "Lisbon, Portugal",
        country: "PT",
        region: Some("Lisbon"),
        name: "Lisbon",
        lat: 38.7223,
        lon: -9.1393,
        currency: "EUR",
    },
    City {
        location: "Warsaw, Poland",
        country: "PL",
        region: Some("Masovia"),
        name: "Warsaw",
        lat: 52.2297,
        lon: 21.0122,
        currency: "PLN",
    },
    City {
        location: "São Paulo, Brazil",
        country: "BR",
        region: Some("São Paulo"),
        name: "São Paulo",
        lat: -23.5505,
        lon: -46.6333,
        currency: "BRL",
    },
    City {
        location: "Stockholm, Sweden",
        country: "SE",
        region: Some("Stockholm County"),
        name: "Stockholm",
        lat: 59.3293,
        lon: 18.0686,
        currency: "SEK",
    },
    City {
        location: "Copenhagen, Denmark",
        country: "DK",
        region: Some("Capital Region"),
        name: "Copenhagen",
        lat: 55.6761,
        lon: 12.5683,
        currency: "DKK",
    },
    City {
        location: "Oslo, Norway",
        country: "NO",
        region: None,
        name: "Oslo",
        lat: 59.9139,
        lon: 10.7522,
        currency: "NOK",
    },
    City {
        location: "Helsinki, Finland",
        country: "FI",
        region: Some("Uusimaa"),
        name: "Helsinki",
        lat: 60.1699,
        lon: 24.9384,
        currency: "EUR",
    },
    City {
        location: "Dublin, Ireland",
        country: "IE",
        region: Some("Leinster"),
        name: "Dublin",
        lat: 53.3498,
        lon: -6.2603,
        currency: "EUR",
    },
    City {
        location: "Vienna, Austria",
        country: "AT",
        region: None,
        name: "Vienna",
        lat: 48.2082,
        lon: 16.3738,
        currency: "EUR",
    },
    City {
        location: "Prague, Czechia",
        country: "CZ",
        region: None,
        name: "Prague",
        lat: 50.0755,
        lon: 14.4378,
        currency: "CZK",
    },
    City {
        location: "Tallinn, Estonia",
        country: "EE",
        region: Some("Harju County"),
        name: "Tallinn",
        lat: 59.437,
        lon: 24.7536,
        currency: "EUR",
    },
    City {
        location: "Tel Aviv, Israel",
        country: "IL",
        region: Some("Tel Aviv District"),
        name: "Tel Aviv",
        lat: 32.0853,
        lon: 34.7818,
        currency: "ILS",
    },
    City {
        location: "Dubai, UAE",
        country: "AE",
        region: None,
        name: "Dubai",
        lat: 25.2048,
        lon: 55.2708,
        currency: "AED",
    },
    City {
        location: "Tokyo, Japan",
        country: "JP",
        region: None,
        name: "Tokyo",
        lat: 35.6762,
        lon: 139.6503,
        currency: "JPY",
    },
    City {
        location: "Seoul, South Korea",
        country: "KR",
        region: None,
        name: "Seoul",
        lat: 37.5665,
        lon: 126.978,
        currency: "KRW",
    },
    City {
        location: "Sydney, Australia",
        country: "AU",
        region: Some("New South Wales"),
        name: "Sydney",
        lat: -33.8688,
        lon: 151.2093,
        currency: "AUD",
    },
    City {
        location: "Auckland, New Zealand",
        country: "NZ",
        region: Some("Auckland"),
        name: "Auckland",
        lat: -36.8485,
        lon: 174.7633,
        currency: "NZD",
    },
    City {
        location: "Mexico City, Mexico",
        country: "MX",
        region: None,
        name: "Mexico City",
        lat: 19.4326,
        lon: -99.1332,
        currency: "MXN",
    },
    City {
        location: "Buenos Aires, Argentina",
        country: "AR",
        region: None,
        name: "Buenos Aires",
        lat: -34.6037,
        lon: -58.3816,
        currency: "ARS",
    },
    City {
        location: "Bogotá, Colombia",
        country: "CO",
        region: None,
        name: "Bogotá",
        lat: 4.711,
        lon: -74.0721,
        currency: "COP",
    },
    City {
        location: "Lagos, Nigeria",
        country: "NG",
        region: Some("Lagos State"),
        name: "Lagos",
        lat: 6.5244,
        lon: 3.3792,
        currency: "NGN",
    },
    City {
        location: "Nairobi, Kenya",
        country: "KE",
        region: None,
        name: "Nairobi",
        lat: -1.2921,
        lon: 36.8219,
        currency: "KES",
    },
    City {
        location: "Cape Town, South Africa",
        country: "ZA",
        region: Some("Western Cape"),
        name: "Cape Town",
        lat: -33.9249,
        lon: 18.4241,
        currency: "ZAR",
    },
];

/// A job's city is drawn among this many, as many as [`CITIES`] first held, so that the
/// draws after it are as they were; the job's id then moves it into one of the table's
/// blocks of that many cities. Company headquarters stay among the first ones.
const CITY_DRAW: usize = 12;
const _: () = assert!(CITIES.len().is_multiple_of(CITY_DRAW));

/// Countries remote demo jobs take applicants from (those of [`CITIES`]): the ISO 3166-1
/// alpha-2 code and the name as a post writes it.
pub const REMOTE_COUNTRIES: &[(&str, &str)] = &[
    ("US", "the United States"),
    ("CA", "Canada"),
    ("GB", "the United Kingdom"),
    ("DE", "Germany"),
    ("FR", "France"),
    ("NL", "the Netherlands"),
    ("ES", "Spain"),
    ("PL", "Poland"),
    ("PT", "Portugal"),
    ("IN", "India"),
    ("BR", "Brazil"),
    ("SG", "Singapore"),
    ("CH", "Switzerland"),
    ("SE", "Sweden"),
    ("DK", "Denmark"),
    ("NO", "Norway"),
    ("FI", "Finland"),
    ("IE", "Ireland"),
    ("AT", "Austria"),
    ("CZ", "Czechia"),
    ("EE", "Estonia"),
    ("IL", "Israel"),
    ("AE", "the United Arab Emirates"),
    ("JP", "Japan"),
    ("KR", "South Korea"),
    ("AU", "Australia"),
    ("NZ", "New Zealand"),
    ("MX", "Mexico"),
    ("AR", "Argentina"),
    ("CO", "Colombia"),
    ("NG", "Nigeria"),
    ("KE", "Kenya"),
    ("ZA", "South Africa"),
];

/// What demo companies make, as a post names it; a company's is picked by its id.
const PRODUCTS: &[&str] = &[
    "a billing platform that thousands of teams rely on",
    "a payments API for online shops",
    "the search engine behind a large online marketplace",
    "a delivery planning tool for small shippers",
    "an open-source observability stack",
    "a banking app for freelancers",
    "a clinical records system used in hospitals",
    "a platform that measures the carbon footprint of supply chains",
    "developer tools for data teams",
    "an AI assistant for customer support teams",
    "a booking system for clinics and salons",
    "a fraud detection service for banks",
    "a language learning app",
    "a design tool for product teams",
    "inventory planning software for retailers",
    "a security scanner for cloud infrastructure",
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
        // Zipf-like weights: skill k is about 1/(k+1) as common as the first.
        let skill_weights = zipf(SKILLS.len());
        let company_weights = zipf(companies.len());
        let jobs = (0..jobs)
            .map(|i| {
                let c = if i < companies.len() {
                    &companies[i]
                } else {
                    &companies[company_weights.sample(&mut rng)]
                };
                job(&mut rng, i, c, reference, &skill_weights)
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
        serde_json::json!(SKILLS
            .choose_multiple(rng, 4)
            .map(|s| s.to_lowercase())
            .collect::<Vec<_>>()),
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
            SKILLS[rng.gen_range(0..SKILLS.len())].to_lowercase(),
            ["modern", "global", "ambitious", "distributed"][rng.gen_range(0..4)]
        ),
        enrichment: Enrichment {
            headcount: Some(rng.gen_range(3..5_000)),
            founded_year: Some(rng.gen_range(1995..=2025)),
            headquarters: Some(CITIES[rng.gen_range(0..CITY_DRAW)].location.to_owned()),
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
    skills: &WeightedIndex<f64>,
) -> Job {
    let role = &ROLES[rng.gen_range(0..ROLES.len())];
    // The first jobs walk through every tag and level so each is represented.
    let level = if i < SENIORITIES.len() {
        SENIORITIES[i]
    } else {
        SENIORITIES[rng.gen_range(0..SENIORITIES.len())]
    };
    let mut domains = vec![role.domain];
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
    let title = format!("{} {}", capitalise(level), role.noun);
    let skill_list: Vec<&str> = (0..rng.gen_range(2..6))
        .map(|_| SKILLS[skills.sample(rng)])
        .collect();
    // Posts were once 40 to 119 filler words, a draw of two 32-bit words each. That stretch
    // of the stream is still taken, so that every field drawn after it stays as it was: its
    // first draw seeds the post's own generator and the rest are skipped.
    let stretch = u128::from(rng.gen_range(40..120u32));
    let mut post_rng = ChaCha8Rng::seed_from_u64(rng.gen());
    rng.set_word_pos(rng.get_word_pos() + 2 * (stretch - 1));
    let remote = rng.gen_bool(0.4);
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
    // Drawn from the id's bits, not the generator: the jobs drawn before places were
    // added stay as they were.
    let bits = id.0.as_u128();
    let city = (!remote || rng.gen_bool(0.5)).then(|| {
        let block = (bits >> 32) % (CITIES.len() / CITY_DRAW) as u128;
        &CITIES[rng.gen_range(0..CITY_DRAW) + CITY_DRAW * block as usize]
    });
    let worldwide = remote && bits % 5 < 2;
    let mut remote_countries: Vec<(&str, &str)> = if remote && !worldwide {
        (0..1 + (bits >> 8) % 3)
            .map(|i| {
                REMOTE_COUNTRIES[((bits >> (12 + 4 * i)) % REMOTE_COUNTRIES.len() as u128) as usize]
            })
            .collect()
    } else {
        Vec::new()
    };
    remote_countries.sort_unstable();
    remote_countries.dedup();
    let remote_regions = if worldwide {
        vec![RemoteRegion::Worldwide]
    } else {
        remote_countries
            .iter()
            .filter_map(|(code, _)| Country::parse(code).ok().map(RemoteRegion::Country))
            .collect()
    };
    // Pay in the place's currency, now and then by the month or the hour.
    let salary = salary.map(|yearly| {
        let currency = city.map_or("USD", |c| c.currency);
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
    let remote_from = if worldwide {
        Some("from anywhere in the world".to_owned())
    } else {
        let names: Vec<&str> = remote_countries.iter().map(|(_, name)| *name).collect();
        remote.then(|| format!("from {}", listed(&names, "or")))
    };
    let facts = Facts {
        company,
        title: &title,
        role,
        skills: distinct_skills(skill_list, &mut post_rng, skills),
        city,
        remote_from,
        salary: salary.as_ref(),
    };
    let description = post(&mut post_rng, &facts);
    Job {
        id,
        role: title,
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
        location: city.map(|c| c.location.to_owned()),
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
        places: city.map(City::place).into_iter().collect(),
        remote_regions,
        last_seen_at: None,
        last_posted_at: None,
        repost_of: None,
        reposts: Vec::new(),
    }
}

/// The skills drawn for a job, each once, in the order drawn; topped up to two from the same
/// skew when the draws repeated one.
fn distinct_skills(
    drawn: Vec<&'static str>,
    rng: &mut ChaCha8Rng,
    weights: &WeightedIndex<f64>,
) -> Vec<&'static str> {
    let mut skills: Vec<&'static str> = Vec::with_capacity(drawn.len().max(2));
    for skill in drawn {
        if !skills.contains(&skill) {
            skills.push(skill);
        }
    }
    while skills.len() < 2 {
        let skill = SKILLS[weights.sample(rng)];
        if !skills.contains(&skill) {
            skills.push(skill);
        }
    }
    skills
}

/// What a demo post says: the facts of the job it is for.
struct Facts<'a> {
    company: &'a Company,
    /// The role with its level, such as "Senior Backend Engineer".
    title: &'a str,
    role: &'a Role,
    /// Two to five, each once.
    skills: Vec<&'static str>,
    city: Option<&'a City>,
    /// Where remote applicants may live, as "from …" says it; `None` for an on-site job.
    remote_from: Option<String>,
    salary: Option<&'a SalaryRange>,
}

/// The sentences a post may hold besides those every post has, in the order they come.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Extra {
    Product,
    Duties,
    Team,
    Culture,
    Benefits,
    Hiring,
}

impl Extra {
    const ALL: [Extra; 6] = [
        Extra::Product,
        Extra::Duties,
        Extra::Team,
        Extra::Culture,
        Extra::Benefits,
        Extra::Hiring,
    ];
}

/// A post of 4 to 9 sentences: who is hiring whom, what the company makes and the role
/// does, the stack, the team and how it works, where, the pay, benefits and how to apply.
/// Every post names the role, its skills, its city or remote countries and its pay as the
/// job's fields hold them; the rest is picked by `rng` among a few wordings each.
fn post(rng: &mut ChaCha8Rng, facts: &Facts) -> String {
    let company = &facts.company.name;
    let title = facts.title;
    let article = if title.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    // Every post has an opening, the stack, where and how to apply, and the pay if it has
    // one; the extras fill it up to its length.
    let required = 4 + usize::from(facts.salary.is_some());
    let length: usize = rng.gen_range(4..=9);
    let mut extras: Vec<Extra> = Extra::ALL
        .choose_multiple(rng, length.saturating_sub(required))
        .copied()
        .collect();
    extras.sort_unstable();
    let mut sentences: Vec<String> = Vec::with_capacity(length.max(required));

    sentences.push(match rng.gen_range(0..4) {
        0 => format!("{company} is hiring {article} {title}."),
        1 => format!("{company} is looking for {article} {title} to join the team."),
        2 => format!("Join {company} as {article} {title}."),
        _ => format!("We are hiring {article} {title} at {company}."),
    });
    if extras.contains(&Extra::Product) {
        let bits = facts.company.id.0.as_u128();
        let product = PRODUCTS[(bits % PRODUCTS.len() as u128) as usize];
        sentences.push(match rng.gen_range(0..3) {
            0 => format!("{company} builds {product}."),
            1 => format!("We build {product}."),
            _ => format!(
                "Our product is {product}, used by customers in {} countries.",
                rng.gen_range(5..60)
            ),
        });
    }
    if extras.contains(&Extra::Duties) {
        let duty = facts.role.duties[rng.gen_range(0..facts.role.duties.len())];
        sentences.push(match rng.gen_range(0..3) {
            0 => format!("You will {duty}."),
            1 => format!("In this role you will {duty}."),
            _ => format!("Your job is to {duty}."),
        });
    }
    let skills = listed(&facts.skills, "and");
    sentences.push(match rng.gen_range(0..4) {
        0 => format!("You will work with {skills}."),
        1 => format!("Our stack includes {skills}."),
        2 => format!("Day to day you will use {skills}."),
        _ => format!("Experience with {skills} helps."),
    });
    if extras.contains(&Extra::Team) {
        let people = rng.gen_range(3..=12);
        sentences.push(match rng.gen_range(0..3) {
            0 => format!("You will join a team of {people} people."),
            1 => format!("The team is {people} people today and still growing."),
            _ => format!(
                "You will be one of {people} people in the team and work closely with product and design."
            ),
        });
    }
    if extras.contains(&Extra::Culture) {
        sentences.push(
            [
                "We ship every day, review each other's code and write things down.",
                "Small teams own what they build, from the idea to production.",
                "We keep meetings few and short and prefer written proposals.",
                "We value clear writing, kind reviews and steady progress over heroics.",
                "Everyone talks to customers, and what they tell us shapes the roadmap.",
            ][rng.gen_range(0..5)]
            .to_owned(),
        );
    }
    sentences.push(match (facts.city, &facts.remote_from) {
        (Some(city), None) => match rng.gen_range(0..3) {
            0 => format!("The role is based in our {} office.", city.name),
            1 => format!("You will work from our office in {}.", city.name),
            _ => format!("This is an on-site role in {}.", city.name),
        },
        (Some(city), Some(from)) => match rng.gen_range(0..2) {
            0 => format!("Work remotely {from} or from our {} office.", city.name),
            _ => format!(
                "Remote {from}, or in our office in {} if you prefer.",
                city.name
            ),
        },
        (None, Some(from)) => match rng.gen_range(0..3) {
            0 => format!("This role is fully remote: you can work {from}."),
            1 => format!("Work remotely {from}."),
            _ => format!("We are a remote team, and you can work {from}."),
        },
        (None, None) => unreachable!("an on-site job has a city"),
    });
    if let Some(SalaryRange {
        min: Some(min),
        max: Some(max),
        currency,
        period,
    }) = facts.salary
    {
        sentences.push(match rng.gen_range(0..3) {
            0 => format!("Salary {min}–{max} {currency} per {period}."),
            1 => format!(
                "The pay is {min} to {max} {currency} per {period}, depending on experience."
            ),
            _ => format!("We pay between {min} and {max} {currency} per {period}."),
        });
    }
    if extras.contains(&Extra::Benefits) {
        sentences.push(
            [
                "You get equity, 30 days of paid leave and a yearly learning budget.",
                "Benefits include health insurance, parental leave and a home office budget.",
                "We offer equity, flexible hours and a yearly team offsite.",
                "You get a new laptop, a conference budget and four weeks of holiday.",
            ][rng.gen_range(0..4)]
            .to_owned(),
        );
    }
    if extras.contains(&Extra::Hiring) {
        sentences.push(
            [
                "Our hiring process is a short call, a paid take-home task and a talk with the team.",
                "We answer every application within a week.",
                "Interviews are two conversations with the team and one practical exercise.",
            ][rng.gen_range(0..3)]
                .to_owned(),
        );
    }
    sentences.push(match rng.gen_range(0..4) {
        0 => "Apply with your CV and a few lines about something you built.".to_owned(),
        1 => "To apply, send us your CV and tell us why this role fits you.".to_owned(),
        2 => format!("Apply on our careers page at {}.", facts.company.domain),
        _ => "Apply today; we read every application.".to_owned(),
    });
    sentences.join(" ")
}

/// "A", "A and B", "A, B and C", with `and` or another word before the last.
fn listed(items: &[&str], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., final_item] => format!("{} {last} {final_item}", rest.join(", ")),
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

    #[test]
    fn the_fields_drawn_before_posts_were_written_stay_as_they_were() {
        // The 200th job of seed 42 as it was when posts were filler words: its id comes
        // after every draw of the jobs before it.
        let job = Dataset::generate(42, 30, 200).jobs.remove(199);
        assert_eq!(job.id.to_string(), "d37cb60a-34b0-45e6-bd80-41bbb4b6ffda");
        assert_eq!(job.role, "Principal Operations Manager");
        assert_eq!(job.posted_at.to_rfc3339(), "2026-10-31T05:53:55+00:00");
        assert_eq!(job.confidence.get(), 0.93);
    }

    #[test]
    fn every_post_names_its_role_skills_place_and_pay() {
        let data = Dataset::generate(42, 30, 600);
        for job in &data.jobs {
            let text = &job.description;
            assert!(text.starts_with(|c: char| c.is_uppercase()), "{text}");
            assert!(text.contains(&job.role), "{text}");
            assert!(text.contains(&job.company_name), "{text}");
            let sentences = text.matches(". ").count() + 1;
            assert!((4..=9).contains(&sentences), "{sentences}: {text}");
            let words: Vec<&str> = text
                .split([' ', ','])
                .map(|w| w.trim_end_matches(['.', ':', ';']))
                .collect();
            let skills = SKILLS.iter().filter(|s| words.contains(s)).count();
            assert!((2..=5).contains(&skills), "{skills}: {text}");
            for place in &job.places {
                let city = place.city.as_deref().unwrap_or_default();
                assert!(text.contains(city), "{city}: {text}");
            }
            for region in &job.remote_regions {
                let name = match region {
                    RemoteRegion::Worldwide => "anywhere in the world",
                    RemoteRegion::Country(code) => REMOTE_COUNTRIES
                        .iter()
                        .find(|(c, _)| *c == code.as_str())
                        .map(|(_, name)| *name)
                        .unwrap_or_else(|| panic!("{code} is not listed")),
                };
                assert!(text.contains(name), "{name}: {text}");
            }
            if let Some(pay) = &job.salary {
                let (min, max) = (pay.min.unwrap_or(0), pay.max.unwrap_or(0));
                let (currency, period) = (&pay.currency, &pay.period);
                let said = [
                    format!("{min}–{max} {currency} per {period}"),
                    format!("{min} to {max} {currency} per {period}"),
                    format!("between {min} and {max} {currency} per {period}"),
                ];
                assert!(said.iter().any(|s| text.contains(s)), "{pay:?}: {text}");
            }
        }
    }

    #[test]
    fn some_skills_are_common_and_some_rare() {
        let data = Dataset::generate(7, 30, 3_000);
        let posts_naming = |skill: &str| {
            data.jobs
                .iter()
                .filter(|j| j.description.contains(&format!(" {skill}")))
                .count()
        };
        let (first, last) = (
            posts_naming(SKILLS[0]),
            posts_naming(SKILLS[SKILLS.len() - 1]),
        );
        assert!(first > 10 * last.max(1), "{first} against {last}");
    }

    #[test]
    fn every_city_and_remote_country_is_a_valid_place() {
        for city in CITIES {
            assert!(Country::parse(city.country).is_ok(), "{city:?}");
            assert!((-90.0..=90.0).contains(&city.lat) && (-180.0..=180.0).contains(&city.lon));
            assert!(
                city.currency.len() == 3 && city.currency.bytes().all(|b| b.is_ascii_uppercase()),
                "{city:?}"
            );
            assert!(
                REMOTE_COUNTRIES
                    .iter()
                    .any(|(code, _)| *code == city.country),
                "{city:?}"
            );
        }
        for (code, _) in REMOTE_COUNTRIES {
            assert!(Country::parse(code).is_ok(), "{code}");
            assert!(
                CITIES.iter().any(|c| c.country == *code),
                "{code} has no city"
            );
        }
    }
}
