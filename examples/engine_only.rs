//! # Embedding only the query engine
//!
//! ```text
//! cargo run --release --example engine_only
//! ```
//!
//! `job_listings_engine` is the search engine behind the API (the library re-exports it as
//! `job_listings::query`), and it stands on its own: it is synchronous, does no I/O, and needs
//! no service, store, HTTP layer or async runtime. This example is a tour of it on the
//! deterministic demo dataset:
//!
//! 1. generate 50 companies and 20,000 jobs (about one in ten closed),
//! 2. index them into a [`JobIndex`] (closed jobs are skipped by the index itself),
//! 3. run a handful of [`JobQuery`]s — tag filters, free-text `q`, company words, a confidence
//!    floor, a date cut-off and a deep page — printing totals, the ids on each page and how long
//!    each search took,
//! 4. check one answer against [`JobFilter::matches`], the single-job predicate the engine
//!    promises to agree with.
//!
//! Only the engine crate is used: `job_listings_engine::{demo, domain, query}`. Build with
//! `--release` for meaningful timings; a debug build is several times slower.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::Duration as Span;
use job_listings_engine::demo::{self, Dataset};
use job_listings_engine::domain::{Confidence, DomainTag, Job, JobId, Page, PerPage, Seniority};
use job_listings_engine::query::{Facet, JobFilter, JobIndex, JobQuery, SearchResult};

fn main() -> anyhow::Result<()> {
    // 1. Generate the data. The same seed always gives the same jobs, so the ids printed below
    //    are the same on every run and every machine.
    let started = Instant::now();
    let data = Dataset::generate(7, 50, 20_000);
    println!(
        "1. generated {} companies and {} jobs in {}",
        data.companies.len(),
        data.jobs.len(),
        ms(started.elapsed())
    );

    // 2. Index every job. `upsert` adds or replaces; a job that is not active is removed (or
    //    never added), so the index holds exactly the searchable jobs.
    let started = Instant::now();
    let mut index = JobIndex::new();
    for job in &data.jobs {
        index.upsert(job);
    }
    println!(
        "2. indexed {} active jobs ({} closed ones skipped) in {}",
        index.len(),
        data.jobs.len() as u64 - index.len(),
        ms(started.elapsed())
    );

    // The index answers with ids only; keep a lookup table to show what they are.
    let by_id: HashMap<JobId, &Job> = data.jobs.iter().map(|j| (j.id, j)).collect();

    // 3. Query. Every field of a `JobFilter` narrows the result; lists match when any entry
    //    matches. Results are newest `posted_at` first, ties by id.
    println!("\n3. queries");

    // 3a. Everything: the default filter matches every active job.
    let everything = JobQuery::new(JobFilter::default());
    run(&index, &by_id, "3a. every active job", &everything);

    // 3b. Tag filters plus free text: remote senior or staff engineering jobs mentioning rust.
    //     Tags are validated values; `with_q` splits text into words the same way the index does.
    let engineering = JobFilter::default()
        .domains([DomainTag::parse("engineering")?])
        .seniority([Seniority::parse("senior")?, Seniority::parse("staff")?])
        .remote_only(true)
        .with_q("Rust");
    run(
        &index,
        &by_id,
        "3b. remote senior/staff engineering, q=rust",
        &JobQuery::new(engineering.clone()),
    );

    // 3c. Company-name words: every word must be a word of the company name.
    run(
        &index,
        &by_id,
        "3c. company=\"nimbus labs\"",
        &JobQuery::new(JobFilter::default().with_company("nimbus labs")),
    );

    // 3d. Confidence floor and a date cut-off: confident AI jobs from the last week of the data.
    let last_week = demo::reference_time() - Span::days(7);
    let recent_ai = JobFilter::default()
        .domains([DomainTag::parse("ai")?])
        .min_confidence(Confidence::new(0.9)?)
        .posted_after(last_week);
    run(
        &index,
        &by_id,
        "3d. ai, confidence >= 0.9, posted in the last 7 days",
        &JobQuery::new(recent_ai),
    );

    // 3e. A deep page: page 300 of 50 skips 14,950 matches. Page and size are validated
    //     (pages from 1, 1 to 50 per page) before they ever reach the engine.
    let deep = JobQuery::new(JobFilter::default())
        .page(Page::new(300)?)
        .per_page(PerPage::new(50)?);
    run(
        &index,
        &by_id,
        "3e. every active job, page 300 of 50",
        &deep,
    );

    // 3f. Past the end: a page beyond the last match is empty but still reports the total.
    let past_the_end = JobQuery::new(JobFilter::default().with_q("rust"))
        .page(Page::new(10_000)?)
        .per_page(PerPage::new(50)?);
    run(&index, &by_id, "3f. q=rust, page 10,000", &past_the_end);

    // 3g. Facets: the same search also counts all its matches by domain, seniority and
    //     remote, from the bitmaps it already holds. The vocabularies are open, so this is
    //     how a client learns which labels the data uses.
    let faceted = JobQuery::new(JobFilter::default().with_q("rust")).facets([
        Facet::Domain,
        Facet::Seniority,
        Facet::Remote,
    ]);
    run(&index, &by_id, "3g. q=rust with facets", &faceted);

    // 4. Cross-check: `JobFilter::matches` decides for one job what the index decides for all.
    //    Counting by brute force gives the same total as the index, just much more slowly.
    let started = Instant::now();
    let brute = data.jobs.iter().filter(|j| engineering.matches(j)).count() as u64;
    let brute_time = started.elapsed();
    let indexed = index.search(&JobQuery::new(engineering)).total;
    println!(
        "\n4. cross-check of 3b: the index says {indexed}, a scan of every job with \
         JobFilter::matches says {brute} ({})",
        ms(brute_time)
    );
    anyhow::ensure!(brute == indexed, "the index and the filter disagree");
    Ok(())
}

/// Runs one query, timing it, and prints the total and the first ids of the page.
fn run(index: &JobIndex, by_id: &HashMap<JobId, &Job>, title: &str, query: &JobQuery) {
    let started = Instant::now();
    let SearchResult {
        total, ids, facets, ..
    } = index.search(query);
    let took = started.elapsed();
    println!(
        "\n{title}\n    {total} matches; page {} holds {} ids; searched in {}",
        query.page.get(),
        ids.len(),
        ms(took)
    );
    for id in ids.iter().take(3) {
        if let Some(job) = by_id.get(id) {
            println!(
                "    {id}  {}  {} @ {}",
                job.posted_at.format("%Y-%m-%d"),
                job.role,
                job.company_name
            );
        }
    }
    if ids.len() > 3 {
        println!("    … and {} more on this page", ids.len() - 3);
    }
    let top = |counts: &[job_listings_engine::query::ValueCount]| {
        let top: Vec<String> = counts
            .iter()
            .take(4)
            .map(|c| format!("{} {}", c.value, c.count))
            .collect();
        top.join(", ")
    };
    if let Some(domains) = &facets.domain {
        println!("    by domain: {} …", top(domains));
    }
    if let Some(levels) = &facets.seniority {
        println!("    by seniority: {} …", top(levels));
    }
    if let Some(remote) = facets.remote {
        println!("    remote: {}, on site: {}", remote.remote, remote.on_site);
    }
}

/// A duration as milliseconds with microsecond precision.
fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1_000.0)
}
