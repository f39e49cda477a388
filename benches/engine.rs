//! Query-engine benches over 100,000 generated jobs: filter-only, text, text + filters and
//! deep pages, similar jobs, looking for a job's copies, and loading an index from the jobs.
//! Run with `cargo bench --bench engine`.

// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;

use chrono::Duration;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use job_listings::demo::{self, Dataset};
use job_listings::domain::{Confidence, DomainTag, Page, PerPage, Seniority};
use job_listings::query::{is_repost_of, JobFilter, JobIndex, JobQuery, RepostProbe, Shingles};

/// The bundled server's allocator, so the figures are the server's (the `job-listings` binary's).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const JOBS: usize = 100_000;

fn tags(list: &[&str]) -> Vec<DomainTag> {
    list.iter()
        .filter_map(|t| DomainTag::parse(t).ok())
        .collect()
}

fn levels(list: &[&str]) -> Vec<Seniority> {
    list.iter()
        .filter_map(|t| Seniority::parse(t).ok())
        .collect()
}

fn query(filter: JobFilter, page: u32) -> JobQuery {
    JobQuery::new(filter)
        .page(Page::new(page).unwrap_or_default())
        .per_page(PerPage::default())
}

fn classes() -> Vec<(&'static str, JobQuery)> {
    let week_ago = demo::reference_time() - Duration::days(7);
    let conf = Confidence::new(0.8).ok();
    vec![
        (
            "filter_only",
            query(
                JobFilter::default()
                    .domains(tags(&["engineering", "ai"]))
                    .seniority(levels(&["senior", "staff"]))
                    .remote_only(true),
                1,
            ),
        ),
        (
            "filter_only_confidence_date",
            query(
                JobFilter::default()
                    .domains(tags(&["data"]))
                    .min_confidence(conf)
                    .posted_after(week_ago),
                1,
            ),
        ),
        (
            "text",
            query(JobFilter::default().with_q("rust kubernetes"), 1),
        ),
        (
            "text_company",
            query(JobFilter::default().with_company("nimbus"), 1),
        ),
        (
            "text_and_filters",
            query(
                JobFilter::default()
                    .remote_only(true)
                    .seniority(levels(&["senior"]))
                    .min_confidence(conf)
                    .with_q("python"),
                1,
            ),
        ),
        // Each deep page beside its first page, for "deep costs at most 2x shallow".
        ("first_page_all", query(JobFilter::default(), 1)),
        ("deep_page_all", query(JobFilter::default(), 40)),
        (
            "first_page_filtered",
            query(JobFilter::default().domains(tags(&["engineering"])), 1),
        ),
        (
            "deep_page_filtered",
            query(JobFilter::default().domains(tags(&["engineering"])), 60),
        ),
    ]
}

fn engine(c: &mut Criterion) {
    let data = Dataset::generate(1, 2_000, JOBS);
    let mut index = JobIndex::new();
    for job in &data.jobs {
        index.upsert(job);
    }
    let mut group = c.benchmark_group("engine_100k");
    for (name, q) in classes() {
        group.bench_with_input(BenchmarkId::from_parameter(name), &q, |b, q| {
            b.iter(|| black_box(index.search(black_box(q))))
        });
    }
    group.finish();

    // More like this, from jobs across the index.
    c.bench_function("engine_100k/similar_10", |b| {
        let mut i = 0;
        b.iter(|| {
            let job = &data.jobs[(i * 7_919) % data.jobs.len()];
            i += 1;
            black_box(index.similar(black_box(job), &[], 10))
        })
    });
    // What detecting a copy costs an arriving job: its probe (its post split into shingles
    // once), the candidates the index names, and the exact check of each.
    let by_id: std::collections::HashMap<_, _> = data.jobs.iter().map(|j| (j.id, j)).collect();
    c.bench_function("engine_100k/find_copies", |b| {
        let mut i = 0;
        b.iter(|| {
            let job = &data.jobs[(i * 7_919) % data.jobs.len()];
            i += 1;
            let probe = RepostProbe::of(black_box(job));
            let shingles = Shingles::of(&job.description);
            index
                .repost_candidates(&probe)
                .into_iter()
                .filter(|id| {
                    by_id
                        .get(id)
                        .is_some_and(|c| is_repost_of(job, &shingles, c))
                })
                .count()
        })
    });

    c.bench_function("engine_100k/upsert_one", |b| {
        let mut i = 0;
        b.iter(|| {
            let job = &data.jobs[i % data.jobs.len()];
            i += 1;
            index.upsert(black_box(job));
        })
    });
}

/// Building an index of every job at once, in id order as a rebuild reads them from the
/// store (`Extend`).
fn load(c: &mut Criterion) {
    let mut jobs = Dataset::generate(1, 2_000, JOBS).jobs;
    jobs.sort_by_key(|j| j.id);
    let mut group = c.benchmark_group("engine_100k_load");
    group.sample_size(10);
    group.bench_function("decoded_jobs", |b| {
        b.iter_with_large_drop(|| {
            let mut index = JobIndex::new();
            index.extend(black_box(&jobs));
            index
        })
    });
    group.finish();
}

criterion_group!(benches, engine, load);
criterion_main!(benches);
