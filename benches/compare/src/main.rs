//! Side-by-side comparison of `job_listings::query::JobIndex` against tantivy.
//!
//! Both engines index the same generated jobs and answer the same 200-query mix; every answer
//! (total and page of ids) must be identical before anything is timed. See README.md.

/// The integration tests' BM25 and word rule, for the oracle (which reads the collection's
/// figures itself rather than from every job's counts kept at once).
#[allow(dead_code)]
#[path = "../../../tests/it/support/bm25.rs"]
mod bm25;
mod data;
mod engine;
mod facets;
mod jsonl;
mod mix;
mod ours;
mod paths;
mod places;
mod report;
mod reposts;
mod tant;
#[path = "../../../tests/it/support/words.rs"]
mod words;

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use job_listings::domain::{Job, JobId};
use job_listings::query::{JobQuery, SearchResult, Sort};

use crate::bm25::{Bm25, Counted};

use crate::data::{Fate, Generator};
use crate::engine::Engine;
use crate::mix::{Class, MixQuery};
use crate::report::{fmt_count, fmt_duration, fmt_mib, Row};

/// The bundled server's allocator, for both engines: through its `override` feature it is C's
/// `malloc` too, which CRoaring's bitmaps allocate with on every search.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Compare the job-listings query engine with tantivy on the same data and queries.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Active jobs in the final index (10000, 100000, 1000000, 5000000, or any other number).
    #[arg(long, default_value_t = 100_000)]
    jobs: usize,
    /// Seed of the data and of the query mix.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Only build both indexes and run the correctness gate.
    #[arg(long)]
    check_only: bool,
    /// Timed rounds of the whole mix per engine (after the warm-up rounds).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Untimed warm-up rounds per engine.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Seconds of each throughput run.
    #[arg(long, default_value_t = 3.0)]
    qps_seconds: f64,
    /// Threads of the throughput run.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// No churn: index every job once (by default 3% more jobs are indexed and then closed,
    /// and 2% are first indexed in an earlier version, as the service's ingest does).
    #[arg(long, conflicts_with = "heavy_churn")]
    no_churn: bool,
    /// Heavy churn: 40% more jobs indexed and then closed, 30% first indexed in an earlier
    /// version, so `JobIndex` sweeps dead documents and reuses their numbers.
    #[arg(long)]
    heavy_churn: bool,
    /// Also check every answer against a brute-force scan with `JobFilter::matches`
    /// (on by default up to 20,000 jobs; slow beyond).
    #[arg(long)]
    oracle: bool,
    /// Keep tantivy's segments as committed instead of merging them into one.
    #[arg(long)]
    no_merge: bool,
    /// tantivy's indexing memory budget, MiB (one indexing thread).
    #[arg(long, default_value_t = 1_024)]
    tantivy_budget_mib: usize,
    /// Run only the queries whose label contains this text (for profiling one query).
    #[arg(long)]
    only: Option<String>,
    /// Run only the queries of this class: `filter-only`, `text`, `text+filter` or `deep
    /// page` (for profiling one class).
    #[arg(long)]
    class: Option<String>,
    /// Time only this engine: `ours`, `tantivy` or `sorted` (for profiling).
    #[arg(long)]
    engine: Option<String>,
    /// How many queries to list as the slowest for us and the worst against tantivy.
    #[arg(long, default_value_t = 8)]
    top: usize,
    /// Also build and time a second tantivy configuration: an index sorted by rank with a
    /// custom first-in-document-order collector (a third row; the ratio row stays against the
    /// rank tie-break configuration).
    #[arg(long)]
    sorted_variant: bool,
    /// Time the engines even when the correctness gate found differences (the program still
    /// exits non-zero at the end).
    #[arg(long)]
    keep_going: bool,
    /// Print every query of the mix with its total during the correctness gate.
    #[arg(long)]
    list: bool,
    /// How long the job posts are: `short` (about 80 words) or `long` (80 to 300, about 190).
    #[arg(long, value_enum, default_value_t = data::Posts::Short)]
    posts: data::Posts,
    /// Only write the final active versions of the `--jobs` jobs to DIR/jobs.jsonl and their
    /// companies to DIR/companies.jsonl, in the JSON Lines form the bundled server's `import`
    /// reads, then exit (see benches/load/bulk.sh).
    #[arg(long, value_name = "DIR")]
    write_jsonl: Option<std::path::PathBuf>,
    /// Only time our engine on the mix without and with facets (domain, seniority, remote),
    /// query by query, and print the comparison; tantivy is not built.
    #[arg(long)]
    facets: bool,
    /// Only check and time our engine on the `GET /jobs` paths in FILE (one a line, as the
    /// HTTP load scripts list them), query by query; tantivy is not built.
    #[arg(long, value_name = "FILE")]
    paths: Option<std::path::PathBuf>,
    /// Only time our engine on filters of places and pay (`country`, `remote_from`,
    /// `min_salary`, `near` with 50 km) against `domain` filters, each answer checked against
    /// a `JobFilter::matches` scan first; tantivy is not built.
    #[arg(long)]
    places: bool,
    /// Only measure the grouping of copies through the service: SHARE of the jobs (0 to
    /// 0.5, such as 0.1) posted again as copies, half as many near misses, imported into sled
    /// folders under --work-dir with grouping off and on; prints both import times, detection
    /// precision and recall, single upsert and `similar_jobs` latencies. tantivy is not built.
    #[arg(long, value_name = "SHARE")]
    reposts: Option<f64>,
    /// Only time `JobIndex::similar` (10 jobs like each of 2,000 jobs) on our engine;
    /// tantivy is not built.
    #[arg(long)]
    similar: bool,
    /// Where `--reposts` writes its sled folders (emptied first).
    #[arg(long, value_name = "DIR", default_value = "target/reposts-bench")]
    work_dir: std::path::PathBuf,
}

const CHUNK: usize = 20_000;

/// The tantivy release this crate is locked to.
const TANTIVY: &str = "0.27";

/// Generates jobs `range` with `make`, in chunks, and hands each chunk to `use_chunk`; returns
/// the time spent in `use_chunk` only.
fn chunked(
    range: std::ops::Range<usize>,
    make: impl Fn(usize) -> Job,
    mut use_chunk: impl FnMut(usize, &[Job]),
) -> Duration {
    let mut spent = Duration::ZERO;
    let mut start = range.start;
    while start < range.end {
        let end = (start + CHUNK).min(range.end);
        let jobs: Vec<Job> = (start..end).map(&make).collect();
        let t = Instant::now();
        use_chunk(start, &jobs);
        spent += t.elapsed();
        start = end;
    }
    spent
}

fn build_ours(g: &Generator) -> (ours::Ours, Duration, u64) {
    let rss_before = report::rss_bytes();
    let mut ours = ours::Ours::new();
    let n = g.n();
    // Every job as first seen, loaded in bulk: earlier versions of the jobs that change
    // later, and the jobs that are closed later; then the closures and the updates, one by one.
    let mut spent = chunked(
        0..g.total(),
        |i| match g.fate(i) {
            Fate::Updated => g.earlier(i),
            _ => g.job(i),
        },
        |_, jobs| ours.load(jobs),
    );
    let loaded = spent;
    let t = Instant::now();
    ours.finish_load();
    spent += t.elapsed();
    println!(
        "ours:    bulk load {:.2} s, then one compaction {:.2} s",
        loaded.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    spent += chunked(
        n..g.total(),
        |i| data::closed(g.job(i)),
        |_, jobs| jobs.iter().for_each(|j| ours.upsert(j)),
    );
    let updated: Vec<usize> = (0..n).filter(|&i| g.fate(i) == Fate::Updated).collect();
    for part in updated.chunks(CHUNK) {
        let jobs: Vec<Job> = part.iter().map(|&i| g.job(i)).collect();
        let t = Instant::now();
        jobs.iter().for_each(|j| ours.upsert(j));
        spent += t.elapsed();
    }
    let rss_after = report::rss_bytes();
    (ours, spent, rss_after.saturating_sub(rss_before))
}

struct TantivyBuilt {
    engine: tant::Tantivy,
    info: tant::BuildInfo,
    build: Duration,
    rss: u64,
    tied: usize,
}

fn build_tantivy(
    g: &Generator,
    merge: bool,
    budget: usize,
    sorted: bool,
) -> tantivy::Result<TantivyBuilt> {
    let rss_before = report::rss_bytes();
    let n = g.n();
    let t = Instant::now();
    let headers: Vec<_> = (0..n).map(|i| g.header(i)).collect();
    let tied = {
        let mut times: Vec<i64> = headers
            .iter()
            .map(|h| h.1.timestamp_nanos_opt().unwrap_or_default())
            .collect();
        times.sort_unstable();
        times
            .iter()
            .enumerate()
            .filter(|&(k, t)| {
                (k > 0 && times[k - 1] == *t) || (k + 1 < times.len() && times[k + 1] == *t)
            })
            .count()
    };
    let mut builder = tant::Builder::new(headers, budget, sorted)?;
    let mut spent = t.elapsed();
    let mut failure = None;
    spent += chunked(
        0..n,
        |i| g.job(i),
        |start, jobs| {
            for (k, j) in jobs.iter().enumerate() {
                if let Err(e) = builder.add(start + k, j) {
                    failure.get_or_insert(e);
                }
            }
        },
    );
    if let Some(e) = failure {
        return Err(e);
    }
    let t = Instant::now();
    let (engine, info) = builder.finish(merge)?;
    spent += t.elapsed();
    let rss_after = report::rss_bytes();
    Ok(TantivyBuilt {
        engine,
        info,
        build: spent,
        rss: rss_after.saturating_sub(rss_before),
        tied,
    })
}

/// The brute-force answer: every final job through `JobFilter::matches`, sorted by the API's
/// order, or for `sort=relevance` by BM25 worked out from the formula on the tests' own word
/// rule (`tests/it/support`), apart from the engine's code.
pub(crate) struct Oracle {
    jobs: Vec<Job>,
    /// The collection's figures BM25 reads: its length, and how many jobs hold each word
    /// of the mix's relevance queries.
    total_length: u64,
    holding: HashMap<String, u64>,
}

impl Oracle {
    fn new(g: &Generator, mix: &[MixQuery]) -> Self {
        let mut jobs: Vec<Job> = (0..g.n()).map(|i| g.job(i)).collect();
        jobs.sort_by(|a, b| b.posted_at.cmp(&a.posted_at).then(a.id.cmp(&b.id)));
        let mut holding: HashMap<String, u64> = mix
            .iter()
            .filter(|q| q.query.sort == Sort::Relevance)
            .flat_map(|q| q.query.filter.q_words.iter().map(|w| (w.clone(), 0)))
            .collect();
        let mut total_length = 0;
        if !holding.is_empty() {
            for job in &jobs {
                let counted = Counted::of(job);
                total_length += u64::from(counted.length);
                for (word, n) in holding.iter_mut() {
                    *n += u64::from(counted.counts.contains_key(word));
                }
            }
        }
        Self {
            jobs,
            total_length,
            holding,
        }
    }

    fn search(&self, q: &JobQuery) -> SearchResult {
        let mut hits: Vec<&Job> = self.jobs.iter().filter(|j| q.filter.matches(j)).collect();
        if q.sort == Sort::Relevance && !q.filter.q_words.is_empty() {
            let text = q.filter.q_words.join(" ");
            let bm25 = Bm25::from_counts(&text, self.jobs.len() as u64, self.total_length, |w| {
                self.holding.get(w).copied().unwrap_or(0)
            });
            let scores: HashMap<JobId, f64> = hits
                .iter()
                .map(|j| (j.id, bm25.score(&Counted::of(j))))
                .collect();
            // Stable: equal scores keep the API's order.
            hits.sort_by(|a, b| scores[&b.id].total_cmp(&scores[&a.id]));
        }
        let hits: Vec<JobId> = hits.iter().map(|j| j.id).collect();
        SearchResult::new(
            hits.len() as u64,
            hits.iter()
                .skip(q.offset())
                .take(q.per_page.get() as usize)
                .copied()
                .collect(),
        )
    }
}

fn describe_difference(a: &SearchResult, b: &SearchResult) -> String {
    if a.total != b.total {
        return format!("totals differ: {} vs {}", a.total, b.total);
    }
    if a.ids.len() != b.ids.len() {
        return format!("page lengths differ: {} vs {}", a.ids.len(), b.ids.len());
    }
    let k = a
        .ids
        .iter()
        .zip(&b.ids)
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    format!(
        "pages differ from position {k}: {} vs {}",
        a.ids[k], b.ids[k]
    )
}

/// Runs every query on every engine (and the oracle); returns the number of disagreements.
/// Relevance answers are compared with tantivy's by total only: its BM25 keeps field norms
/// to a byte, so its scores and ties differ a little; their order is checked by the oracle.
pub(crate) fn gate(
    mix: &[MixQuery],
    engines: &[&dyn Engine],
    oracle: Option<&Oracle>,
    list: bool,
) -> usize {
    let mut failures = 0;
    let mut per_class: std::collections::BTreeMap<Class, (u64, usize, usize)> = Default::default();
    for (k, q) in mix.iter().enumerate() {
        let answers: Vec<(&str, SearchResult)> = engines
            .iter()
            .map(|e| (e.name(), e.search(&q.query)))
            .chain(oracle.map(|o| ("JobFilter::matches scan", o.search(&q.query))))
            .collect();
        let (first_name, first) = &answers[0];
        if list {
            println!(
                "  #{k:<3} {:<11} total {:>9}  {}",
                q.class.name(),
                first.total,
                q.label
            );
        }
        let entry = per_class.entry(q.class).or_default();
        entry.0 += first.total;
        entry.1 += usize::from(first.total == 0);
        entry.2 += usize::from(first.ids.is_empty());
        for (name, other) in &answers[1..] {
            let by_score_elsewhere = q.query.sort == Sort::Relevance && name.starts_with("tantivy");
            let differ = match by_score_elsewhere {
                true => other.total != first.total,
                false => other != first,
            };
            if differ {
                failures += 1;
                eprintln!(
                    "MISMATCH query #{k} [{}] `{}`: {first_name} total {} page {:?}; {name} total {} page {:?}; {}",
                    q.class.name(),
                    q.label,
                    first.total,
                    first.ids.iter().map(|i| i.to_string()).collect::<Vec<_>>(),
                    other.total,
                    other.ids.iter().map(|i| i.to_string()).collect::<Vec<_>>(),
                    describe_difference(first, other)
                );
            }
        }
    }
    for (class, (sum, zero, empty_pages)) in per_class {
        let count = mix.iter().filter(|q| q.class == class).count().max(1);
        println!(
            "  {:<12} {count} queries, mean total {}, {zero} with no match, {empty_pages} empty pages",
            class.name(),
            fmt_count(sum / count as u64),
        );
    }
    failures
}

/// Lists our slowest queries and the queries where we do worst against tantivy (medians).
fn print_extremes(mix: &[MixQuery], ours: &[Duration], theirs: &[Duration], top: usize) {
    if top == 0 {
        return;
    }
    let line = |k: usize| {
        format!(
            "| {} | {} | {} | {:.2}× | `{}` |",
            fmt_duration(ours[k]),
            fmt_duration(theirs[k]),
            mix[k].class.name(),
            ours[k].as_secs_f64() / theirs[k].as_secs_f64().max(1e-9),
            mix[k].label
        )
    };
    let header = "| ours | tantivy | class | ours / tantivy | query |\n|---|---|---|---|---|";
    let mut by_time: Vec<usize> = (0..mix.len()).collect();
    by_time.sort_by(|&a, &b| ours[b].cmp(&ours[a]));
    println!("\nOur slowest queries (median of the timed rounds):\n\n{header}");
    for &k in by_time.iter().take(top) {
        println!("{}", line(k));
    }
    let mut by_ratio: Vec<usize> = (0..mix.len()).collect();
    let r = |k: usize| ours[k].as_secs_f64() / theirs[k].as_secs_f64().max(1e-9);
    by_ratio.sort_by(|&a, &b| r(b).total_cmp(&r(a)));
    println!("\nWhere we do worst against tantivy:\n\n{header}");
    for &k in by_ratio.iter().take(top) {
        println!("{}", line(k));
    }
}

/// `--write-jsonl DIR`: writes the JSON Lines files and reports what it wrote.
fn write_jsonl(g: &Generator, dir: &std::path::Path) -> ExitCode {
    let t = Instant::now();
    match jsonl::write(g, dir) {
        Ok(w) => {
            println!(
                "wrote {} jobs to {} and {} companies to {} in {:.2} s",
                fmt_count(w.jobs as u64),
                dir.join("jobs.jsonl").display(),
                fmt_count(w.companies as u64),
                dir.join("companies.jsonl").display(),
                t.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("writing JSON Lines to {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.jobs == 0 {
        eprintln!("--jobs must be at least 1");
        return ExitCode::FAILURE;
    }
    let churn = if args.no_churn {
        data::Churn::NONE
    } else if args.heavy_churn {
        data::Churn::HEAVY
    } else {
        data::Churn::LIGHT
    };
    let g = Generator::new(args.seed, args.jobs, churn).with_posts(args.posts);
    if let Some(dir) = &args.write_jsonl {
        return write_jsonl(&g, dir);
    }
    if let Some(share) = args.reposts {
        if !(0.0..=0.5).contains(&share) {
            eprintln!("--reposts takes a share from 0 to 0.5, such as 0.1");
            return ExitCode::FAILURE;
        }
        return reposts::run(&g, share, jsonl::companies(&g), &args.work_dir);
    }
    println!(
        "# job-listings JobIndex vs tantivy {TANTIVY} — {} active jobs, seed {}",
        fmt_count(args.jobs as u64),
        args.seed
    );

    let (ours, ours_build, ours_rss) = build_ours(&g);
    assert_eq!(
        ours.index.len(),
        args.jobs as u64,
        "active jobs in our index"
    );
    println!(
        "ours:    built in {:.2} s ({} upserts: {} first versions, {} closures, {} updates), index memory ≈ {} (RSS growth), heap ≈ {} ({} bytes a job)",
        ours_build.as_secs_f64(),
        fmt_count((2 * g.total() - g.n() + (0..g.n()).filter(|&i| g.fate(i) == Fate::Updated).count()) as u64),
        fmt_count(g.total() as u64),
        fmt_count((g.total() - g.n()) as u64),
        fmt_count((0..g.n()).filter(|&i| g.fate(i) == Fate::Updated).count() as u64),
        fmt_mib(ours_rss),
        fmt_mib(ours.index.heap_bytes()),
        ours.index.heap_bytes() / args.jobs.max(1) as u64,
    );
    let parts: Vec<String> = ours
        .index
        .heap_parts()
        .into_iter()
        .map(|(part, bytes)| format!("{part} {}", bytes / args.jobs.max(1) as u64))
        .collect();
    println!("ours:    bytes a job by part: {}", parts.join(", "));

    if args.similar {
        reposts::similar_in_engine(&ours.index, &g);
        return ExitCode::SUCCESS;
    }
    if args.places {
        let oracle = Oracle::new(&g, &[]);
        let differ = places::compare(&ours.index, &g, &|q| oracle.search(q), args.rounds);
        return if differ == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    if let Some(file) = &args.paths {
        let mix = match std::fs::read_to_string(file)
            .map_err(|e| format!("{}: {e}", file.display()))
            .and_then(|text| paths::read(&text))
        {
            Ok(mix) => mix,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        };
        let oracle = args.oracle.then(|| Oracle::new(&g, &mix));
        println!("\nload average before timing: {}", report::loadavg());
        let differ = paths::compare(&ours, &mix, oracle.as_ref(), args.warmup, args.rounds);
        return if differ == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    if args.facets {
        let mix = mix::build(&g, args.seed);
        println!("\nload average before timing: {}", report::loadavg());
        let differ = facets::compare(&ours.index, &mix, args.warmup, args.rounds);
        return if differ == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }

    let budget = args.tantivy_budget_mib.clamp(16, 4_000) * 1024 * 1024;
    let mut variants = vec![false];
    if args.sorted_variant {
        variants.push(true);
    }
    let mut built = Vec::new();
    for sorted in variants {
        let tv = match build_tantivy(&g, !args.no_merge, budget, sorted) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("tantivy build failed: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!(
            "tantivy{}: built in {:.2} s (1 indexing thread, {} MiB budget; {} segment(s) committed, {} searched), index files {}, RSS growth {}",
            if sorted { " (rank-sorted)" } else { "" },
            tv.build.as_secs_f64(),
            budget / (1024 * 1024),
            tv.info.segments_committed,
            tv.info.segments,
            fmt_mib(tv.info.bytes),
            fmt_mib(tv.rss),
        );
        built.push(tv);
    }
    let tv = &built[0];
    println!(
        "data:    {} of {} active jobs share their posted_at with another job",
        fmt_count(tv.tied as u64),
        fmt_count(args.jobs as u64)
    );

    let mut mix = mix::build(&g, args.seed);
    if let Some(class) = &args.class {
        mix.retain(|q| q.class.name() == class);
        if mix.is_empty() {
            eprintln!("no query class is named `{class}`");
            return ExitCode::FAILURE;
        }
    }
    if let Some(only) = &args.only {
        mix.retain(|q| q.label.contains(only.as_str()));
        if mix.is_empty() {
            eprintln!("no query label contains `{only}`");
            return ExitCode::FAILURE;
        }
    }
    let use_oracle = args.oracle || args.jobs <= 20_000;
    let oracle = use_oracle.then(|| Oracle::new(&g, &mix));
    println!(
        "\n## Correctness gate: {} queries, totals and page ids compared{}",
        mix.len(),
        if use_oracle {
            " (also against a JobFilter::matches scan)"
        } else {
            ""
        }
    );
    let mut engines: Vec<&dyn Engine> = vec![&ours];
    engines.extend(built.iter().map(|t| &t.engine as &dyn Engine));
    let failures = gate(&mix, &engines, oracle.as_ref(), args.list);
    drop(oracle);
    if failures > 0 {
        eprintln!("FAILED: {failures} answer(s) differ; see MISMATCH lines above");
        if !args.keep_going || args.check_only {
            return ExitCode::FAILURE;
        }
        println!("  {failures} answer(s) differ; timing anyway (--keep-going), exit status 1");
    } else {
        println!("  every answer identical");
    }
    if args.check_only {
        return ExitCode::SUCCESS;
    }

    println!("\nload average before timing: {}", report::loadavg());
    let selected = |e: &dyn Engine| {
        args.engine.as_deref().is_none_or(|want| {
            (want == "ours" && e.name().starts_with("job-listings"))
                || (want == "tantivy" && e.name().starts_with("tantivy (rank tie"))
                || (want == "sorted" && e.name().contains("sorted"))
        })
    };
    let mut rows = Vec::new();
    let mut per_query: Vec<Vec<Duration>> = Vec::new();
    for &e in &engines {
        if !selected(e) {
            continue;
        }
        let (samples, medians) = report::time_mix(e, &mix, args.warmup, args.rounds);
        let qps1 = report::throughput(e, &mix, 1, args.qps_seconds);
        let qps2 = report::throughput(e, &mix, args.threads, args.qps_seconds);
        println!(
            "{}: 1-thread {} qps, {}-thread {} qps",
            e.name(),
            fmt_count(qps1.round() as u64),
            args.threads,
            fmt_count(qps2.round() as u64)
        );
        rows.push(Row {
            name: e.name(),
            stats: report::stats(&samples),
            qps2,
        });
        per_query.push(medians);
    }
    println!("load average after timing: {}", report::loadavg());
    if rows.len() >= 2 && rows.len() == engines.len() {
        println!(
            "\n## Latency ({} timed rounds after {} warm-up over {} queries)\n",
            args.rounds,
            args.warmup,
            mix.len()
        );
        print!("{}", report::table(args.jobs, &rows));
        println!(
            "\nbuild: ours {:.2} s, tantivy {:.2} s; memory: ours ≈ {}, tantivy index files {}",
            ours_build.as_secs_f64(),
            tv.build.as_secs_f64(),
            fmt_mib(ours_rss),
            fmt_mib(tv.info.bytes)
        );
        print_extremes(&mix, &per_query[0], &per_query[1], args.top);
        if rows.len() > 2 {
            println!("\nAgainst the rank-sorted tantivy configuration:");
            print_extremes(&mix, &per_query[0], &per_query[2], args.top.min(5));
        }
    } else {
        for r in &rows {
            for c in Class::ALL {
                if let Some(s) = r.stats.get(&c) {
                    println!(
                        "{} {}: median {} p99 {}",
                        r.name,
                        c.name(),
                        fmt_duration(s.median),
                        fmt_duration(s.p99)
                    );
                }
            }
        }
    }
    if failures > 0 {
        eprintln!("FAILED: {failures} answer(s) differed in the correctness gate");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use job_listings::query::JobFilter;

    struct Fixed(&'static str, SearchResult);

    impl Engine for Fixed {
        fn name(&self) -> &'static str {
            self.0
        }
        fn search(&self, _: &JobQuery) -> SearchResult {
            self.1.clone()
        }
    }

    #[test]
    fn the_gate_counts_every_disagreement() {
        let mix = vec![MixQuery {
            class: Class::Text,
            query: JobQuery::new(JobFilter::default().with_q("rust")),
            label: "q=rust".to_owned(),
        }];
        let id = |n: u128| JobId(uuid::Uuid::from_u128(n));
        let a = SearchResult::new(2, vec![id(1), id(2)]);
        let swapped = SearchResult::new(2, vec![id(2), id(1)]);
        let fewer = SearchResult::new(1, vec![id(1)]);
        let same = Fixed("a", a.clone());
        assert_eq!(gate(&mix, &[&same, &Fixed("b", a)], None, false), 0);
        assert_eq!(gate(&mix, &[&same, &Fixed("b", swapped)], None, false), 1);
        assert_eq!(gate(&mix, &[&same, &Fixed("b", fewer)], None, false), 1);
    }
}
