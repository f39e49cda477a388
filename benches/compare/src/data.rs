//! A deterministic generator of job listings for the comparison.
//!
//! Every job is a pure function of `(seed, number, version)`: the same arguments always give the
//! same [`Job`], so the two engines can be fed from two separate passes over the data without
//! holding all of it in memory. Vocabulary is Zipf-skewed (word k is about 1/(k+1) as common as
//! the first) for descriptions, roles, skills, company names, tags and levels, and so are the
//! demo's cities and remote countries. About a quarter of the jobs share a "batch" timestamp
//! with many others, so the id tie-break matters. On-site jobs and half the remote ones are in a
//! city; remote jobs take applicants worldwide (about 40%) or from one to three countries; pay is
//! in the city's currency (US dollars without one), mostly by the year, else by the month, hour,
//! day or week.

use chrono::{DateTime, Duration, TimeZone, Utc};
use job_listings::demo;
use job_listings::domain::{
    CompanyId, Confidence, Country, DomainTag, Job, JobId, JobStatus, RemoteRegion, SalaryRange,
    Seniority,
};
use rand::distributions::{Distribution, WeightedIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

/// Domain tags beyond the demo's, using every character a label may hold.
const EXTRA_DOMAINS: &[&str] = &["customer-success", "web3", "ml.ops", "r+d", "hr_tech"];

/// Role nouns and the domain tag each one implies.
const ROLE_NOUNS: &[(&str, &str)] = &[
    ("Backend Engineer", "engineering"),
    ("Frontend Engineer", "engineering"),
    ("Software Engineer", "engineering"),
    ("Full Stack Engineer", "engineering"),
    ("Mobile Engineer", "engineering"),
    ("Embedded Engineer", "engineering"),
    ("Machine Learning Engineer", "ai"),
    ("Applied AI Engineer", "ai"),
    ("AI Research Engineer", "ai"),
    ("Research Scientist", "research"),
    ("Product Designer", "design"),
    ("Brand Designer", "design"),
    ("UX Researcher", "design"),
    ("Product Manager", "product"),
    ("Technical Program Manager", "product"),
    ("Data Engineer", "data"),
    ("Data Scientist", "data"),
    ("Analytics Engineer", "data"),
    ("Site Reliability Engineer", "devops"),
    ("Platform Engineer", "devops"),
    ("DevOps Engineer", "devops"),
    ("Security Engineer", "security"),
    ("Security Analyst", "security"),
    ("Growth Marketer", "marketing"),
    ("Content Marketing Manager", "marketing"),
    ("Account Executive", "sales"),
    ("Solutions Engineer", "sales"),
    ("Sales Development Representative", "sales"),
    ("Financial Analyst", "finance"),
    ("Controller", "finance"),
    ("Operations Manager", "operations"),
    ("Recruiter", "operations"),
    ("Customer Success Manager", "customer-success"),
    ("Smart Contract Engineer", "web3"),
    ("MLOps Engineer", "ml.ops"),
    ("Developer Advocate", "marketing"),
];

const TEAMS: &[&str] = &[
    "Payments",
    "Search",
    "Growth",
    "Infrastructure",
    "Core Platform",
    "Risk & Fraud",
    "Developer Experience",
    "Ads",
    "Identity",
    "Billing",
];

/// Skills, most common first; several exercise word segmentation (`node.js`, `c++`, `ci/cd`).
const SKILLS: &[&str] = &[
    "Python",
    "TypeScript",
    "SQL",
    "AWS",
    "React",
    "Kubernetes",
    "Go",
    "Java",
    "Rust",
    "Docker",
    "Postgres",
    "Terraform",
    "LLM",
    "PyTorch",
    "Node.js",
    "GCP",
    "Kafka",
    "Spark",
    "C++",
    "GraphQL",
    "Figma",
    "Kotlin",
    "Swift",
    "Azure",
    "Redis",
    "Scala",
    "dbt",
    "Airflow",
    "Snowflake",
    "TensorFlow",
    "CI/CD",
    "Linux",
    "gRPC",
    "C#",
    ".NET",
    "Elixir",
    "ClickHouse",
    "JAX",
    "CUDA",
    "WebAssembly",
    "eBPF",
    "Haskell",
    "OCaml",
    "Zig",
    "Solidity",
    "Salesforce",
    "HubSpot",
    "Excel",
    "Tableau",
    "Looker",
];

/// Common words of postings, most common first, separated by spaces (the last line holds words
/// outside ASCII, to exercise lowercasing and segmentation); the generator appends synthetic
/// rare words.
const COMMON_WORDS: &str = "\
the and to of a you we our in with for will team is on work are experience your as be or \
an that product help build data customers at join looking strong who us from new have \
skills years systems company this about role engineering across what platform business \
by teams can design working ability scale develop benefits all support their make high \
ownership impact quality growth mission culture remote hybrid office equity salary \
competitive health learning collaborate communication distributed infrastructure \
reliable fast users millions models research security privacy open source startup \
fintech healthcare climate developer tools global async ship future services solutions \
technical cross functional stakeholders roadmap features performance production testing \
code review mentor lead own end problems complex customer feedback metrics analytics \
pipeline pipelines architecture cloud api apis backend frontend mobile web ml ai machine \
learning deep training inference observability monitoring incident oncall automation \
deploy release agile sprint documentation standards best practices excellent written \
verbal english degree computer science equivalent bonus plus nice requirements \
responsibilities qualifications preferred minimum bachelor master phd visa sponsorship \
relocation parental leave vacation unlimited pto 401k insurance dental vision stipend \
home budget offsite diverse inclusive equal opportunity employer background gender \
identity orientation veteran status disability accommodation series funded investors \
revenue profitable hypergrowth enterprise consumer marketplace payments banking \
insurance logistics supply chain robotics hardware firmware semiconductor biotech \
genomics energy solar battery mobility autonomous vehicles gaming media creator \
education edtech legal govtech defense aerospace satellite quantum crypto blockchain \
wallet exchange trading risk fraud compliance audit accounting forecasting pricing sales \
pipeline quota territory partners channel brand campaigns seo content community events \
recruiting onboarding people operations vendor procurement facilities Zürich São Paulo \
Kraków İstanbul Αθήνα ΟΔΟΣ naïve Straße Ærø café résumé München Malmö Łódź";

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ren", "tor", "va", "sel", "qui", "dra", "nox", "bel", "cor", "fi", "gan",
    "hul", "jor", "kel", "lum", "mar", "nev", "os", "pra", "ryn", "sta", "tev", "ul", "vor", "wen",
    "xi", "yel", "zor", "ath", "bri", "cel", "dun", "eth", "fal", "gri", "hes", "ith",
];

const NAME_WORDS: &[&str] = &[
    "Acme", "Nimbus", "Quantum", "Blue", "Red", "Bright", "North", "Vector", "Atlas", "Nova",
    "Lumen", "Cobalt", "Signal", "Orbit", "Pixel", "Forge", "Harbor", "Summit", "Echo", "Delta",
    "Prism", "Cedar", "Ion", "Helix", "Kite", "Granite", "Falcon", "Aurora", "Beacon", "Comet",
    "Drift", "Ember", "Fjord", "Glacier", "Horizon", "Indigo", "Juniper", "Keystone", "Lattice",
    "Meridian", "Nimble", "Onyx", "Polaris", "Quill", "Radiant", "Sable", "Tidal", "Umbra",
    "Vertex", "Willow", "Xenon", "Yonder", "Zephyr", "Arc", "Birch", "Crest", "Dune", "Flux",
    "Grove", "Hive", "Iris", "Jade", "Koru", "Loom", "Mosaic", "Nest", "Oak", "Pulse", "Quartz",
    "Ridge", "Spark", "Tern", "Unity", "Vale", "Wave", "Zenith", "Zürich", "Søren", "Ñandú",
];

const NAME_KINDS: &[&str] = &[
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
    "Technologies",
    "Software",
    "Games",
    "Mobility",
    "Payments",
];

const NAME_SUFFIXES: &[&str] = &["Inc.", "GmbH", "Ltd", "& Co.", "S.A.", "B.V.", "Oy", "AB"];

/// Days over which jobs are posted, before the reference instant.
pub const DAYS: i64 = 90;

/// How much the index changes while it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Churn {
    /// Extra jobs, as a percentage of the final ones, indexed and then closed.
    pub closed_percent: usize,
    /// Final jobs, per thousand, first indexed in an earlier version.
    pub updated_permille: u64,
}

impl Churn {
    /// Every job indexed once.
    pub const NONE: Churn = Churn {
        closed_percent: 0,
        updated_permille: 0,
    };
    /// The default: 3% closed, 2% updated; fewer dead documents than `JobIndex` sweeps at.
    pub const LIGHT: Churn = Churn {
        closed_percent: 3,
        updated_permille: 20,
    };
    /// 40% closed and 30% updated: `JobIndex` sweeps its dead documents several times and
    /// reuses their numbers.
    pub const HEAVY: Churn = Churn {
        closed_percent: 40,
        updated_permille: 300,
    };
}

/// How a job number relates to the final set of active jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Indexed once, active at the end.
    Plain,
    /// Indexed in an earlier version first, then replaced by its final version.
    Updated,
    /// Indexed active, then closed: not in the final set.
    Closed,
}

/// How long the generated job posts are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Posts {
    /// 40 to 119 words of description (about 80), from a vocabulary of 3,000 words.
    #[default]
    Short,
    /// 80 to 300 words (the sum of two uniform draws of 40 to 150: about 190 on average,
    /// most near it), from a Zipf vocabulary of 30,000 words: the length of real posts,
    /// whose bodies no longer fit in memory's caches at a million jobs.
    Long,
}

/// Distinct description words of long posts.
const LONG_VOCABULARY: usize = 30_000;

/// The generator: vocabularies and their weights, and the companies.
pub struct Generator {
    seed: u64,
    posts: Posts,
    n: usize,
    churn: Churn,
    reference: DateTime<Utc>,
    words: Vec<String>,
    word_w: WeightedIndex<f64>,
    skill_w: WeightedIndex<f64>,
    companies: Vec<(CompanyId, String)>,
    company_w: WeightedIndex<f64>,
    domains: Vec<DomainTag>,
    domain_w: WeightedIndex<f64>,
    levels: Vec<Seniority>,
    level_w: WeightedIndex<f64>,
    batches: Vec<i64>,
    batch_w: WeightedIndex<f64>,
    city_w: WeightedIndex<f64>,
    remote_country_w: WeightedIndex<f64>,
}

fn zipf(n: usize) -> WeightedIndex<f64> {
    WeightedIndex::new((0..n.max(1)).map(|k| 1.0 / (k as f64 + 1.0)))
        .expect("weights are positive and finite")
}

pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

impl Generator {
    /// A generator for `n` final active jobs, with `churn` deciding how many jobs are closed
    /// or updated on the way.
    pub fn new(seed: u64, n: usize, churn: Churn) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(splitmix(seed ^ 0xC0FF_EE00));
        let reference = demo::reference_time();

        // Description vocabulary: the common words, then synthetic rare words (jargon, names,
        // product names) up to a few thousand distinct words.
        let mut words: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for w in COMMON_WORDS.split_whitespace() {
            if seen.insert(w.to_owned()) {
                words.push(w.to_owned());
            }
        }
        while words.len() < 3_000 {
            let parts = rng.gen_range(2..=3);
            let w: String = (0..parts)
                .map(|_| SYLLABLES[rng.gen_range(0..SYLLABLES.len())])
                .collect();
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let word_w = zipf(words.len());

        let n_companies = (n / 40).clamp(20, 30_000);
        let companies = (0..n_companies)
            .map(|c| {
                let mut r = ChaCha8Rng::seed_from_u64(splitmix(seed ^ 0xC0 ^ ((c as u64) << 8)));
                let a = NAME_WORDS[r.gen_range(0..NAME_WORDS.len())];
                let mut name = a.to_owned();
                if r.gen_bool(0.3) {
                    name.push(' ');
                    name.push_str(NAME_WORDS[r.gen_range(0..NAME_WORDS.len())]);
                }
                if r.gen_bool(0.8) {
                    name.push(' ');
                    name.push_str(NAME_KINDS[r.gen_range(0..NAME_KINDS.len())]);
                }
                if r.gen_bool(0.2) {
                    name.push(' ');
                    name.push_str(NAME_SUFFIXES[r.gen_range(0..NAME_SUFFIXES.len())]);
                }
                (CompanyId(uuid_of(splitmix(seed ^ 0xCAFE), c as u64)), name)
            })
            .collect::<Vec<_>>();
        let company_w = zipf(companies.len());

        let domains: Vec<DomainTag> = demo::DOMAINS
            .iter()
            .chain(EXTRA_DOMAINS)
            .map(|d| DomainTag::parse(d).expect("valid tag"))
            .collect();
        let domain_w = zipf(domains.len());
        let levels: Vec<Seniority> = demo::SENIORITIES
            .iter()
            .map(|d| Seniority::parse(d).expect("valid level"))
            .collect();
        // Mid and senior are the most common levels, directors and interns the rarest.
        let level_w = WeightedIndex::new([3.0, 8.0, 14.0, 16.0, 6.0, 2.0, 5.0, 4.0, 1.5])
            .expect("weights are positive");

        // Batch instants: whole seconds when a scraper run published many jobs at once.
        let n_batches = (n / 500).max(20);
        let batches = (0..n_batches)
            .map(|_| rng.gen_range(0..DAYS * 86_400) * 1_000_000_000)
            .collect::<Vec<_>>();
        let batch_w = zipf(batches.len());

        Self {
            seed,
            posts: Posts::Short,
            n,
            churn,
            reference,
            words,
            word_w,
            skill_w: zipf(SKILLS.len()),
            companies,
            company_w,
            domains,
            domain_w,
            levels,
            level_w,
            batches,
            batch_w,
            city_w: zipf(demo::CITIES.len()),
            remote_country_w: zipf(demo::REMOTE_COUNTRIES.len()),
        }
    }

    /// The same generator making posts of this length; short posts are as `new` makes them.
    pub fn with_posts(mut self, posts: Posts) -> Self {
        self.posts = posts;
        if posts == Posts::Long {
            let mut rng = ChaCha8Rng::seed_from_u64(splitmix(self.seed ^ 0x10C0_FFEE));
            let mut seen: std::collections::HashSet<String> = self.words.iter().cloned().collect();
            while self.words.len() < LONG_VOCABULARY {
                let parts = rng.gen_range(2..=4);
                let w: String = (0..parts)
                    .map(|_| SYLLABLES[rng.gen_range(0..SYLLABLES.len())])
                    .collect();
                if seen.insert(w.clone()) {
                    self.words.push(w);
                }
            }
            self.word_w = zipf(self.words.len());
        }
        self
    }

    /// The number of final active jobs.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Job numbers `0..total()` are generated; `0..n()` are the final active jobs.
    pub fn total(&self) -> usize {
        self.n + self.n * self.churn.closed_percent / 100
    }

    /// What happens to job number `i`.
    pub fn fate(&self, i: usize) -> Fate {
        if i >= self.n {
            Fate::Closed
        } else if splitmix(self.seed ^ (i as u64).wrapping_mul(31)) % 1_000
            < self.churn.updated_permille
        {
            Fate::Updated
        } else {
            Fate::Plain
        }
    }

    /// The reference instant: jobs are posted in the [`DAYS`] days before it.
    pub fn reference(&self) -> DateTime<Utc> {
        self.reference
    }

    /// The description vocabulary, most common first.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The skills, most common first.
    pub fn skills(&self) -> &'static [&'static str] {
        SKILLS
    }

    /// The words company names are made of.
    pub fn name_words(&self) -> (&'static [&'static str], &'static [&'static str]) {
        (NAME_WORDS, NAME_KINDS)
    }

    /// The domain tags, most common first.
    pub fn domains(&self) -> &[DomainTag] {
        &self.domains
    }

    /// The seniority levels.
    pub fn levels(&self) -> &[Seniority] {
        &self.levels
    }

    /// The batch instants, as nanoseconds before the reference, most common first.
    pub fn batches(&self) -> &[i64] {
        &self.batches
    }

    fn id(&self, i: usize) -> JobId {
        JobId(uuid_of(splitmix(self.seed ^ 0x1D), i as u64))
    }

    fn rng(&self, i: usize, version: u32) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(splitmix(
            self.seed ^ (i as u64).wrapping_mul(0x100_0000_01B3) ^ (u64::from(version) << 56),
        ))
    }

    fn posted_at(&self, rng: &mut ChaCha8Rng) -> DateTime<Utc> {
        let back = match rng.gen_range(0..100) {
            0..=24 => self.batches[self.batch_w.sample(rng)],
            25..=84 => rng.gen_range(0..DAYS * 86_400) * 1_000_000_000,
            _ => rng.gen_range(0..DAYS * 86_400 * 1_000_000_000),
        };
        self.reference - Duration::nanoseconds(back)
    }

    /// The id and `posted_at` of the final version of job `i`, without generating the rest.
    pub fn header(&self, i: usize) -> (JobId, DateTime<Utc>) {
        let mut rng = self.rng(i, 1);
        (self.id(i), self.posted_at(&mut rng))
    }

    /// The final version of job `i` (active for `i < n()`).
    pub fn job(&self, i: usize) -> Job {
        self.version(i, 1)
    }

    /// An earlier version of job `i`: same id and company, other text, tags and time.
    pub fn earlier(&self, i: usize) -> Job {
        self.version(i, 0)
    }

    fn version(&self, i: usize, version: u32) -> Job {
        let mut rng = self.rng(i, version);
        let posted_at = self.posted_at(&mut rng);
        let id = self.id(i);
        // The company does not change between versions.
        let mut crng = ChaCha8Rng::seed_from_u64(splitmix(self.seed ^ 0xC0C0 ^ ((i as u64) << 4)));
        let (company_id, company_name) = &self.companies[self.company_w.sample(&mut crng)];

        let (noun, main_domain) = ROLE_NOUNS[rng.gen_range(0..ROLE_NOUNS.len())];
        let mut levels = vec![self.level_w.sample(&mut rng)];
        if rng.gen_bool(0.15) {
            levels.push(self.level_w.sample(&mut rng));
        }
        levels.sort_unstable();
        levels.dedup();
        let mut domains = vec![DomainTag::parse(main_domain).expect("valid tag")];
        if rng.gen_bool(0.3) {
            domains.push(self.domains[self.domain_w.sample(&mut rng)].clone());
        }
        if rng.gen_bool(0.05) {
            domains.push(self.domains[self.domain_w.sample(&mut rng)].clone());
        }
        domains.sort_unstable();
        domains.dedup();

        let skills: Vec<&str> = (0..rng.gen_range(2..7))
            .map(|_| SKILLS[self.skill_w.sample(&mut rng)])
            .collect();
        let mut role = format!("{} {noun}", capitalise(self.levels[levels[0]].as_str()));
        if rng.gen_bool(0.3) {
            role.push_str(&format!(" ({})", skills[0]));
        }
        if rng.gen_bool(0.2) {
            role.push_str(&format!(", {}", TEAMS[rng.gen_range(0..TEAMS.len())]));
        }

        let body_len = match self.posts {
            Posts::Short => rng.gen_range(40..120),
            Posts::Long => rng.gen_range(40..=150) + rng.gen_range(40..=150),
        };
        let mut body = String::with_capacity(body_len * 8);
        for k in 0..body_len {
            let w = &self.words[self.word_w.sample(&mut rng)];
            if k > 0 {
                body.push_str(if rng.gen_ratio(1, 12) { ". " } else { " " });
            }
            body.push_str(w);
        }
        let remote = rng.gen_bool(0.4);
        let description = format!(
            "{company_name} is hiring a {role}. {body}. Skills: {}.",
            skills.join(", ")
        );
        let confidence = match rng.gen_range(0..10) {
            0..=4 => f64::from(rng.gen_range(30..=100u32)) / 100.0,
            5..=8 => rng.gen::<f64>(),
            // Boundary values, including the negative zero `Confidence` accepts.
            _ => [0.0, -0.0, 1.0, 0.5, 0.75, 0.9][rng.gen_range(0..6)],
        };
        let yearly = rng.gen_bool(0.5).then(|| {
            let base = rng.gen_range(60..250u64) * 1_000;
            (base, base + rng.gen_range(10..80u64) * 1_000)
        });
        // Where the job is, whom it takes and how its pay is put: drawn after every other
        // field, so that those stay as they were before jobs had places.
        let city =
            (!remote || rng.gen_bool(0.5)).then(|| &demo::CITIES[self.city_w.sample(&mut rng)]);
        let remote_regions = if !remote {
            Vec::new()
        } else if rng.gen_bool(0.4) {
            vec![RemoteRegion::Worldwide]
        } else {
            let mut regions: Vec<RemoteRegion> = (0..rng.gen_range(1..=3))
                .map(|_| {
                    let (code, _) = demo::REMOTE_COUNTRIES[self.remote_country_w.sample(&mut rng)];
                    RemoteRegion::Country(Country::parse(code).expect("a listed country"))
                })
                .collect();
            regions.sort_unstable();
            regions.dedup();
            regions
        };
        let salary = yearly.map(|(min, max)| {
            let (period, per_year) = match rng.gen_range(0..20) {
                0..=13 => ("year", 1),
                14 | 15 => ("month", 12),
                16 | 17 => ("hour", 2_080),
                18 => ("day", 260),
                _ => ("week", 52),
            };
            SalaryRange {
                min: Some(min / per_year),
                max: Some(max / per_year),
                currency: city.map_or("USD", |c| c.currency).to_owned(),
                period: period.to_owned(),
            }
        });
        Job {
            places: city.map(demo::City::place).into_iter().collect(),
            remote_regions,
            id,
            role,
            company_id: *company_id,
            company_name: company_name.clone(),
            description,
            domains,
            seniority: levels.iter().map(|&l| self.levels[l].clone()).collect(),
            remote,
            location: city.map(|c| c.location.to_owned()),
            source_url: format!("https://jobs.example.com/{}", id.0.simple()),
            salary,
            posted_at,
            confidence: Confidence::new(confidence).expect("confidence in 0..=1"),
            status: JobStatus::Active,
            activated_at: None,
            first_seen_at: posted_at,
            updated_at: posted_at,
            last_seen_at: None,
            last_posted_at: None,
            repost_of: None,
            reposts: Vec::new(),
        }
    }
}

fn uuid_of(salt: u64, i: u64) -> Uuid {
    let hi = splitmix(salt ^ i);
    let lo = splitmix(hi ^ i.rotate_left(17));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&hi.to_be_bytes());
    bytes[8..].copy_from_slice(&lo.to_be_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// A closed copy of a job.
pub fn closed(mut job: Job) -> Job {
    job.status = JobStatus::Closed;
    job
}

/// The instant `nanos_back` nanoseconds before `reference`.
pub fn before(reference: DateTime<Utc>, nanos_back: i64) -> DateTime<Utc> {
    reference - Duration::nanoseconds(nanos_back)
}

/// A fixed instant far outside the generated range, for edge-case queries.
pub fn far_past() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0)
        .single()
        .expect("valid date")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_posts_are_80_to_300_words_about_190_on_average() {
        let g = Generator::new(3, 2_000, Churn::NONE).with_posts(Posts::Long);
        let lengths: Vec<usize> = (0..2_000)
            .map(|i| {
                let d = g.job(i).description;
                // The body sits between the first sentence and the skills.
                let body = d.split_once(". ").expect("a first sentence").1;
                let body = body.rsplit_once(". Skills:").expect("skills").0;
                body.split_whitespace().count()
            })
            .collect();
        assert!(
            lengths.iter().all(|&n| (80..=300).contains(&n)),
            "{lengths:?}"
        );
        let mean = lengths.iter().sum::<usize>() as f64 / lengths.len() as f64;
        assert!((180.0..200.0).contains(&mean), "mean {mean}");
        assert!(g.words().len() >= LONG_VOCABULARY);
    }

    #[test]
    fn jobs_are_deterministic_valid_and_versions_share_ids() {
        let g = Generator::new(1, 2_000, Churn::LIGHT);
        for i in [0, 1, 7, 500, 1_999, 2_010] {
            let a = g.job(i);
            assert_eq!(a, Generator::new(1, 2_000, Churn::LIGHT).job(i));
            assert!(a.validate().is_ok(), "{a:?}");
            assert_eq!(g.header(i), (a.id, a.posted_at));
            let e = g.earlier(i);
            assert_eq!((e.id, e.company_id), (a.id, a.company_id));
        }
        assert_eq!(g.total(), 2_060);
        let updated = (0..2_000).filter(|&i| g.fate(i) == Fate::Updated).count();
        assert!((10..80).contains(&updated), "{updated}");
    }

    #[test]
    fn jobs_have_places_remote_regions_and_pay_in_their_city_s_currency() {
        use std::collections::BTreeSet;
        let g = Generator::new(5, 3_000, Churn::NONE);
        let jobs: Vec<Job> = (0..3_000).map(|i| g.job(i)).collect();
        let (mut countries, mut currencies, mut periods) =
            (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let (mut remote, mut worldwide) = (0, 0);
        for job in &jobs {
            assert!(job.validate().is_ok(), "{job:?}");
            assert!(job.places.len() <= 1);
            if job.remote {
                remote += 1;
                assert!(!job.remote_regions.is_empty(), "{job:?}");
                assert!(job.remote_regions.len() <= 3, "{job:?}");
                if job.remote_regions == [RemoteRegion::Worldwide] {
                    worldwide += 1;
                }
            } else {
                assert_eq!(job.places.len(), 1, "{job:?}");
                assert!(job.remote_regions.is_empty(), "{job:?}");
            }
            let city = job.places.first().map(|p| {
                countries.insert(p.country);
                let name = p.city.as_deref();
                demo::CITIES
                    .iter()
                    .find(|c| Some(c.name) == name)
                    .expect("a demo city")
            });
            assert_eq!(job.location.as_deref(), city.map(|c| c.location));
            if let Some(pay) = &job.salary {
                assert_eq!(pay.currency, city.map_or("USD", |c| c.currency), "{job:?}");
                currencies.insert(pay.currency.clone());
                periods.insert(pay.period.clone());
            }
        }
        assert!(countries.len() >= 25, "{countries:?}");
        assert!(currencies.len() >= 15, "{currencies:?}");
        assert_eq!(
            periods,
            ["day", "hour", "month", "week", "year"]
                .map(str::to_owned)
                .into(),
        );
        let share = f64::from(worldwide) / f64::from(remote);
        assert!(
            (0.33..0.47).contains(&share),
            "{worldwide} of {remote} worldwide"
        );
    }
}
