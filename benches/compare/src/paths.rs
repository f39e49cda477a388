//! `--paths FILE`: our engine alone on `GET /jobs` queries as the HTTP load scripts send
//! them (for example `benches/load/jobs_queries_unseen.lua`), each answer first checked
//! against a `JobFilter::matches` scan, then every query timed: its median, mean and p99.

use chrono::{DateTime, NaiveDate, Utc};
use job_listings::domain::{Confidence, DomainTag, Page, PerPage, Seniority};
use job_listings::query::{JobFilter, JobQuery, Sort};

use crate::mix::{Class, MixQuery};

/// The `/api/v1/jobs?…` paths in `text` (one a line, quoted or not), as queries of the class
/// they belong to: deep page past page 1, else words with filters, words, or filters.
pub fn read(text: &str) -> Result<Vec<MixQuery>, String> {
    text.lines()
        .filter_map(|line| {
            let start = line.find("\"/api/v1/jobs")? + 1;
            let path = line[start..].split('"').next()?.trim();
            Some(query_of(path))
        })
        .collect()
}

fn query_of(path: &str) -> Result<MixQuery, String> {
    let bad = |what: &str| format!("{path}: {what}");
    let query = path.split_once('?').map_or("", |(_, q)| q);
    let (mut filter, mut page, mut per_page, mut sort) =
        (JobFilter::default(), 1, PerPage::default(), Sort::PostedAt);
    let (mut words, mut filters) = (false, false);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| bad("a parameter without ="))?;
        let value = value.replace("%20", " ").replace('+', " ");
        let list = || value.split(',').map(str::to_owned).collect::<Vec<_>>();
        match name {
            "q" => {
                filter = filter.with_q(&value);
                words = true;
            }
            "company" => {
                filter = filter.with_company(&value);
                words = true;
            }
            "domain" => {
                filter.domains = list()
                    .iter()
                    .map(|t| DomainTag::parse(t).map_err(|e| bad(&e.to_string())))
                    .collect::<Result<_, _>>()?;
            }
            "seniority" => {
                filter.seniority = list()
                    .iter()
                    .map(|t| Seniority::parse(t).map_err(|e| bad(&e.to_string())))
                    .collect::<Result<_, _>>()?;
            }
            "remote_only" => filter.remote_only = value == "true",
            "min_confidence" => {
                let v: f64 = value.parse().map_err(|_| bad("min_confidence"))?;
                filter.min_confidence = Some(Confidence::new(v).map_err(|e| bad(&e.to_string()))?);
            }
            "posted_after" => {
                filter.posted_after = Some(instant(&value).ok_or_else(|| bad("posted_after"))?)
            }
            "page" => page = value.parse().map_err(|_| bad("page"))?,
            "per_page" => {
                let n: u32 = value.parse().map_err(|_| bad("per_page"))?;
                per_page = PerPage::new(n).map_err(|e| bad(&e.to_string()))?;
            }
            "sort" => {
                sort = if value == "relevance" {
                    Sort::Relevance
                } else {
                    Sort::PostedAt
                }
            }
            other => return Err(bad(&format!("`{other}` is not read here"))),
        }
        filters |= !matches!(name, "q" | "company" | "page" | "per_page" | "sort");
    }
    let class = match (page > 1, words, filters) {
        (true, ..) => Class::DeepPage,
        _ if sort == Sort::Relevance => Class::Relevance,
        (false, true, true) => Class::TextFilter,
        (false, true, false) => Class::Text,
        (false, false, _) => Class::FilterOnly,
    };
    Ok(MixQuery {
        class,
        query: JobQuery::new(filter)
            .sort(sort)
            .page(Page::new(page).map_err(|e| bad(&e.to_string()))?)
            .per_page(per_page),
        label: query.to_owned(),
    })
}

/// A date (midnight UTC) or an RFC 3339 instant.
fn instant(value: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(value) {
        return Some(t.with_timezone(&Utc));
    }
    let day = NaiveDate::parse_from_str(value, "%Y-%m-%d").ok()?;
    Some(day.and_hms_opt(0, 0, 0)?.and_utc())
}

/// Checks every answer (against the scan when there is one), times the queries and prints
/// each one's median and each class's median, mean and p99. Returns the answers that differ.
pub fn compare(
    ours: &dyn crate::engine::Engine,
    mix: &[MixQuery],
    oracle: Option<&crate::Oracle>,
    warmup: usize,
    rounds: usize,
) -> usize {
    use crate::report::{self, fmt_duration};
    let differ = crate::gate(mix, &[ours], oracle, true);
    match (differ, oracle.is_some()) {
        (0, true) => println!("  every answer as the scan's"),
        (0, false) => println!("  answers not checked (--oracle checks each against a scan)"),
        (n, _) => println!("  {n} answer(s) differ; see MISMATCH lines above"),
    }
    let (samples, medians) = report::time_mix(ours, mix, warmup, rounds);
    println!(
        "\n## Our engine on {} queries × {rounds} rounds\n",
        mix.len()
    );
    println!("| query | class | median |");
    println!("|---|---|---|");
    for (q, median) in mix.iter().zip(&medians) {
        println!(
            "| `{}` | {} | {} |",
            q.label,
            q.class.name(),
            fmt_duration(*median)
        );
    }
    println!("\n| class | median | mean | p99 |");
    println!("|---|---|---|---|");
    let all: Vec<_> = samples.values().flatten().copied().collect();
    let mut rows: Vec<(String, report::Stats)> = report::stats(&samples)
        .into_iter()
        .map(|(class, s)| (class.name().to_owned(), s))
        .collect();
    let every = report::stats(&[(Class::FilterOnly, all)].into_iter().collect());
    rows.extend(every.into_values().map(|s| ("all".to_owned(), s)));
    for (name, s) in rows {
        println!(
            "| {name} | {} | {} | {} |",
            fmt_duration(s.median),
            fmt_duration(s.mean),
            fmt_duration(s.p99)
        );
    }
    differ
}
