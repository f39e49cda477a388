//! The query mix: 250 queries in five classes, 50 of each, deterministic from the seed.
//!
//! Every query is a [`JobQuery`] built the way the HTTP layer builds one (text goes through
//! [`JobFilter::with_q`] and [`JobFilter::with_company`], tags and levels through their
//! parsers), with a label that reads like the `GET /jobs` query string it stands for.

use std::fmt::Write as _;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use job_listings::domain::{Confidence, DomainTag, Page, PerPage, Seniority};
use job_listings::query::{JobFilter, JobQuery, Sort};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::data::{self, Generator};

/// The query classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Tags, levels, remote, confidence and date filters, first pages.
    FilterOnly,
    /// `q` and `company` words alone, first pages.
    Text,
    /// Words and filters together, first pages.
    TextFilter,
    /// Pages 20 to 60, with or without filters.
    DeepPage,
    /// `q` words, sometimes with filters, best BM25 match first (`sort=relevance`).
    Relevance,
}

impl Class {
    /// Every class, in table order.
    pub const ALL: [Class; 5] = [
        Class::FilterOnly,
        Class::Text,
        Class::TextFilter,
        Class::DeepPage,
        Class::Relevance,
    ];

    /// The column name.
    pub fn name(self) -> &'static str {
        match self {
            Class::FilterOnly => "filter-only",
            Class::Text => "text",
            Class::TextFilter => "text+filter",
            Class::DeepPage => "deep page",
            Class::Relevance => "relevance",
        }
    }
}

/// One query of the mix.
#[derive(Clone, Debug)]
pub struct MixQuery {
    /// Its class.
    pub class: Class,
    /// The query.
    pub query: JobQuery,
    /// The query as a `GET /jobs` query string.
    pub label: String,
}

/// How many queries of each class the mix holds.
pub const PER_CLASS: usize = 50;

struct Builder<'a> {
    g: &'a Generator,
    rng: ChaCha8Rng,
    /// Exact `posted_at` and confidence values of a few generated jobs, for boundary queries.
    exact_times: Vec<DateTime<Utc>>,
    exact_confidences: Vec<f64>,
}

/// A query under construction: the filter and its label.
#[derive(Default)]
struct Draft {
    filter: JobFilter,
    label: Vec<String>,
}

impl Draft {
    fn q(&mut self, text: &str) {
        self.filter = std::mem::take(&mut self.filter).with_q(text);
        self.label.push(format!("q={text}"));
    }

    fn company(&mut self, text: &str) {
        self.filter = std::mem::take(&mut self.filter).with_company(text);
        self.label.push(format!("company={text}"));
    }

    fn finish(mut self, class: Class, page: u32) -> MixQuery {
        let sort = match class {
            Class::Relevance => {
                self.label.push("sort=relevance".to_owned());
                Sort::Relevance
            }
            _ => Sort::PostedAt,
        };
        let mut label = self.label.join("&");
        if page > 1 {
            if !label.is_empty() {
                label.push('&');
            }
            let _ = write!(label, "page={page}");
        }
        if label.is_empty() {
            label.push_str("(no parameters)");
        }
        MixQuery {
            class,
            query: JobQuery::new(self.filter)
                .sort(sort)
                .page(Page::new(page).expect("page in range"))
                .per_page(PerPage::default()),
            label,
        }
    }
}

impl<'a> Builder<'a> {
    /// An index skewed towards the start of `0..len` (the common end of a Zipf list).
    fn skewed(&mut self, len: usize) -> usize {
        let u: f64 = self.rng.gen();
        ((u * u * u) * len as f64) as usize % len.max(1)
    }

    fn domains(&mut self, d: &mut Draft) {
        let n = [1, 1, 1, 2, 2, 3][self.rng.gen_range(0..6)];
        let mut raw: Vec<String> = (0..n)
            .map(|_| {
                let i = self.skewed(self.g.domains().len());
                self.g.domains()[i].as_str().to_owned()
            })
            .collect();
        match self.rng.gen_range(0..20) {
            // A tag no job carries, next to real ones: nothing extra matches.
            0 => raw.push("quantum-computing".to_owned()),
            // Tags are case-insensitive.
            1 => raw[0] = raw[0].to_uppercase(),
            _ => {}
        }
        raw.dedup();
        d.filter.domains = raw
            .iter()
            .map(|t| DomainTag::parse(t).expect("valid tag"))
            .collect();
        d.label.push(format!("domain={}", raw.join(",")));
    }

    fn levels(&mut self, d: &mut Draft) {
        let n = if self.rng.gen_bool(0.3) { 2 } else { 1 };
        let raw: Vec<String> = self
            .g
            .levels()
            .choose_multiple(&mut self.rng, n)
            .map(|s| s.as_str().to_owned())
            .collect();
        d.filter.seniority = raw
            .iter()
            .map(|t| Seniority::parse(t).expect("valid level"))
            .collect();
        d.label.push(format!("seniority={}", raw.join(",")));
    }

    fn remote(&mut self, d: &mut Draft) {
        d.filter.remote_only = true;
        d.label.push("remote_only=true".to_owned());
    }

    fn min_confidence(&mut self, d: &mut Draft) {
        let v = match self.rng.gen_range(0..12) {
            0..=2 => 0.5,
            3..=4 => 0.75,
            5..=6 => 0.8,
            7 => 0.9,
            8 => 0.95,
            9 => 1.0,
            10 => 0.0,
            // An exact stored value: `>=` must keep the job that holds it.
            _ => self.exact_confidences[self.rng.gen_range(0..self.exact_confidences.len())],
        };
        d.filter.min_confidence = Some(Confidence::new(v).expect("in range"));
        d.label.push(format!("min_confidence={v:?}"));
    }

    fn posted_after(&mut self, d: &mut Draft) {
        let reference = self.g.reference();
        let t = match self.rng.gen_range(0..14) {
            0..=1 => reference - Duration::days(1),
            2..=3 => reference - Duration::days(3),
            4..=6 => reference - Duration::days(7),
            7..=8 => reference - Duration::days(14),
            9 => reference - Duration::days(30),
            // A batch instant that many jobs share: "strictly after" must drop all of them.
            10..=11 => {
                let b = self.skewed(self.g.batches().len().min(10));
                data::before(reference, self.g.batches()[b])
            }
            // One job's exact timestamp, to the nanosecond where it has any.
            12 => {
                let precise: Vec<_> = self
                    .exact_times
                    .iter()
                    .filter(|t| t.timestamp_subsec_nanos() != 0)
                    .copied()
                    .collect();
                let pool = if precise.is_empty() {
                    &self.exact_times
                } else {
                    &precise
                };
                pool[self.rng.gen_range(0..pool.len())]
            }
            _ => data::far_past(),
        };
        d.filter.posted_after = Some(t);
        d.label.push(format!(
            "posted_after={}",
            t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
        ));
    }

    /// One to four filters, each at most once; at least one.
    fn filters(&mut self, d: &mut Draft, max: usize) {
        let mut kinds = [0, 1, 2, 3, 4];
        kinds.shuffle(&mut self.rng);
        let n = self.rng.gen_range(1..=max);
        let mut chosen = kinds[..n].to_vec();
        chosen.sort_unstable();
        for k in chosen {
            match k {
                0 => self.domains(d),
                1 => self.levels(d),
                2 => self.remote(d),
                3 => self.min_confidence(d),
                _ => self.posted_after(d),
            }
        }
    }

    /// One `q` word, written the way a person might type it.
    fn q_word(&mut self) -> String {
        let words = self.g.words();
        let skills = self.g.skills();
        let roles = [
            "engineer",
            "Senior",
            "manager",
            "designer",
            "scientist",
            "Staff",
            "analyst",
        ];
        let unicode = [
            "Zürich",
            "ZÜRICH",
            "İstanbul",
            "οδος",
            "ΟΔΟΣ",
            "Straße",
            "São",
        ];
        match self.rng.gen_range(0..40) {
            0..=7 => words[self.rng.gen_range(0..40)].clone(),
            8..=15 => words[self.rng.gen_range(40..400)].clone(),
            16..=21 => words[self.rng.gen_range(1_000..words.len())].clone(),
            22..=30 => skills[self.skewed(skills.len())].to_owned(),
            31..=35 => roles[self.rng.gen_range(0..roles.len())].to_owned(),
            36..=37 => unicode[self.rng.gen_range(0..unicode.len())].to_owned(),
            // Not a word of any job.
            _ => "xylograph".to_owned(),
        }
    }

    fn q(&mut self, d: &mut Draft) {
        let n = [1, 1, 2, 2, 2, 3][self.rng.gen_range(0..6)];
        let words: Vec<String> = (0..n).map(|_| self.q_word()).collect();
        let sep = [" ", " ", ", ", " "][self.rng.gen_range(0..4)];
        d.q(&words.join(sep));
    }

    fn company(&mut self, d: &mut Draft) {
        let (names, kinds) = self.g.name_words();
        let text = match self.rng.gen_range(0..6) {
            0..=2 => names[self.skewed(names.len())].to_owned(),
            3 => names[self.skewed(names.len())].to_lowercase(),
            4 => format!(
                "{} {}",
                names[self.skewed(names.len())],
                kinds[self.rng.gen_range(0..kinds.len())]
            ),
            _ => kinds[self.rng.gen_range(0..kinds.len())].to_owned(),
        };
        d.company(&text);
    }

    fn text(&mut self, d: &mut Draft) {
        match self.rng.gen_range(0..10) {
            0..=6 => self.q(d),
            7..=8 => self.company(d),
            _ => {
                self.q(d);
                self.company(d);
            }
        }
    }

    fn first_page(&mut self) -> u32 {
        [1, 1, 1, 1, 1, 1, 2, 2, 3][self.rng.gen_range(0..9)]
    }
}

/// The 200-query mix for a generator's data.
pub fn build(g: &Generator, seed: u64) -> Vec<MixQuery> {
    let probes: Vec<usize> = (0..32).map(|k| (k * 7_919) % g.n()).collect();
    let sample: Vec<_> = probes.iter().map(|&i| g.job(i)).collect();
    let mut b = Builder {
        g,
        rng: ChaCha8Rng::seed_from_u64(seed ^ 0x0005_EED0_F9E7),
        exact_times: sample.iter().map(|j| j.posted_at).collect(),
        exact_confidences: sample.iter().map(|j| j.confidence.get()).collect(),
    };
    let mut out = Vec::with_capacity(Class::ALL.len() * PER_CLASS);
    for _ in 0..PER_CLASS {
        let mut d = Draft::default();
        b.filters(&mut d, 4);
        let page = b.first_page();
        out.push(d.finish(Class::FilterOnly, page));
    }
    for _ in 0..PER_CLASS {
        let mut d = Draft::default();
        b.text(&mut d);
        let page = b.first_page();
        out.push(d.finish(Class::Text, page));
    }
    for _ in 0..PER_CLASS {
        let mut d = Draft::default();
        b.text(&mut d);
        b.filters(&mut d, 3);
        let page = b.first_page();
        out.push(d.finish(Class::TextFilter, page));
    }
    for _ in 0..PER_CLASS {
        let mut d = Draft::default();
        match b.rng.gen_range(0..10) {
            0..=1 => {}
            2..=3 => b.domains(&mut d),
            4 => b.remote(&mut d),
            5 => b.levels(&mut d),
            6 => {
                let w = b.g.words()[b.rng.gen_range(0..40)].clone();
                d.q(&w);
            }
            7 => {
                let s = b.g.skills()[b.rng.gen_range(0..6)];
                d.q(s);
            }
            _ => b.filters(&mut d, 2),
        }
        let page = b.rng.gen_range(20..=60);
        out.push(d.finish(Class::DeepPage, page));
    }
    for _ in 0..PER_CLASS {
        let mut d = Draft::default();
        b.q(&mut d);
        if b.rng.gen_bool(0.3) {
            b.filters(&mut d, 2);
        }
        let page = b.first_page();
        out.push(d.finish(Class::Relevance, page));
    }
    out
}
