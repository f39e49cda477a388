//! `--places`: the filters of places and pay against `domain` filters, on our index alone. Each
//! kind of filter is asked with every value the generated jobs use (every country, every
//! remote country, every city's point with a 50 km radius, yearly pay floors in every
//! currency, every domain tag), first pages in newest-first order; every answer is checked
//! against a `JobFilter::matches` scan first. The table gives each kind's mean total beside its
//! times, so a filter is compared with domain filters of about the same selectivity.

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::{Duration, Instant};

use job_listings::demo::{CITIES, REMOTE_COUNTRIES};
use job_listings::domain::{Country, Currency};
use job_listings::query::{JobFilter, JobIndex, JobQuery, Near, SearchResult};

use crate::data::Generator;
use crate::report::{fmt_count, fmt_duration};

/// The queries of each kind.
fn queries(g: &Generator) -> Vec<(&'static str, String, JobQuery)> {
    let mut out = Vec::new();
    let mut add = |kind: &'static str, label: String, filter: JobFilter| {
        out.push((kind, label, JobQuery::new(filter)));
    };
    for tag in g.domains() {
        add(
            "domain",
            format!("domain={tag}"),
            JobFilter::default().domains([tag.clone()]),
        );
    }
    let countries: BTreeSet<&str> = CITIES.iter().map(|c| c.country).collect();
    for code in countries {
        let country = Country::parse(code).expect("a listed country");
        add(
            "country",
            format!("country={code}"),
            JobFilter::default().countries([country]),
        );
    }
    for (code, _) in REMOTE_COUNTRIES {
        let country = Country::parse(code).expect("a listed country");
        add(
            "remote_from",
            format!("remote_from={code}"),
            JobFilter::default().remote_from(Some(country)),
        );
    }
    let currencies: BTreeSet<&str> = CITIES.iter().map(|c| c.currency).collect();
    for code in currencies {
        let currency = Currency::parse(code).expect("a listed currency");
        for floor in [60_000, 120_000, 200_000] {
            add(
                "min_salary",
                format!("min_salary={floor}&salary_currency={code}"),
                JobFilter::default().min_salary(Some((floor, currency))),
            );
        }
    }
    for city in CITIES {
        let near = Near::new(city.lat, city.lon, 50.0).expect("a circle");
        add(
            "near, 50 km",
            format!("near={},{}", city.lat, city.lon),
            JobFilter::default().near(Some(near)),
        );
    }
    out
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted
        .get(rank.min(sorted.len()).saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

/// Checks every query against `oracle`, then times them and prints a table by kind. Returns
/// the number of answers that differed.
pub fn compare(
    index: &JobIndex,
    g: &Generator,
    oracle: &dyn Fn(&JobQuery) -> SearchResult,
    rounds: usize,
) -> usize {
    let queries = queries(g);
    let mut differ = 0;
    let mut totals: BTreeMap<&str, (u64, usize)> = BTreeMap::new();
    for (kind, label, query) in &queries {
        let (got, want) = (index.search(query), oracle(query));
        if got != want {
            println!("MISMATCH {label}: total {} vs {}", got.total, want.total);
            differ += 1;
        }
        let entry = totals.entry(kind).or_default();
        entry.0 += got.total;
        entry.1 += 1;
    }
    for (_, _, query) in &queries {
        black_box(index.search(query));
    }
    let mut samples: BTreeMap<&str, Vec<Duration>> = BTreeMap::new();
    for r in 0..rounds {
        for k in 0..queries.len() {
            let (kind, _, query) = &queries[(k * 89 + r * 37) % queries.len()];
            let t = Instant::now();
            black_box(index.search(black_box(query)));
            samples.entry(kind).or_default().push(t.elapsed());
        }
    }
    println!(
        "\n## Places and pay against domain filters ({rounds} rounds, first pages)\n\n\
         | filter | queries | mean total | median | p99 |\n|---|---|---|---|---|"
    );
    for (kind, mut times) in samples {
        times.sort_unstable();
        let (sum, n) = totals[kind];
        println!(
            "| {kind} | {n} | {} | {} | {} |",
            fmt_count(sum / n.max(1) as u64),
            fmt_duration(percentile(&times, 0.5)),
            fmt_duration(percentile(&times, 0.99)),
        );
    }
    differ
}
