//! `--reposts SHARE`: grouping copies of a job, measured through the service on the
//! generator's jobs with copies and near misses added whose truth is known by construction.
//!
//! Copies (SHARE of the jobs): a job posted again 1 to 30 days later, from another source,
//! one to three words of its post changed. Near misses (half as many): the same job with
//! every other word of its post changed, posted 61 to 90 days later, under another role, or
//! by another company: none is a copy. Each copy and near miss has a base job of its own.
//!
//! The jobs are imported into a new sled folder with grouping on (detection precision and
//! recall read back from the stored jobs) and into another with it off; the import times,
//! then the latency of single upserts (a tenth of them copies) and of `similar_jobs` on the
//! loaded service, are printed.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use job_listings::domain::{Company, Job, JobId, NewJob, PerPage, Plan};
use job_listings::service::{Held, JobListingsService, NewKey, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};
use uuid::Uuid;

use crate::data::{splitmix, Generator};
use crate::report::fmt_count;

/// A job added to the generator's, and what it is of its base job.
struct Extra {
    job: Job,
    base: JobId,
    copy: bool,
}

/// The copies and near misses for `share` of `g`'s jobs.
fn extras(g: &Generator, share: f64) -> Vec<Extra> {
    let n = g.n();
    let copies = ((n as f64 * share) as usize).min(n / 2);
    let near = (copies / 2).min(n / 2);
    let id = |k: u64| JobId(Uuid::from_u64_pair(0x5e9a_0000_0000_0000 | k, splitmix(k)));
    let mut out = Vec::with_capacity(copies + near);
    for k in 0..copies {
        // Bases of their own: even jobs for copies, odd ones for near misses.
        let base = g.job(2 * k);
        let h = splitmix(k as u64 ^ 0xc0b1e5);
        let mut job = base.clone();
        job.id = id(k as u64);
        job.source_url = format!("{}/reposted/{k}", base.source_url);
        job.posted_at = base.posted_at + chrono::Duration::days(1 + (h % 30) as i64);
        let mut words: Vec<String> = job.description.split(' ').map(str::to_owned).collect();
        for e in 0..1 + (h >> 8) % 3 {
            let at = ((h >> (16 + 8 * e)) as usize) % words.len();
            words[at] = format!("edited{k}x{e}");
        }
        job.description = words.join(" ");
        out.push(Extra {
            job,
            base: base.id,
            copy: true,
        });
    }
    for m in 0..near {
        let base = g.job(2 * m + 1);
        let mut job = base.clone();
        job.id = id((1 << 40) | m as u64);
        job.source_url = format!("{}/near/{m}", base.source_url);
        job.posted_at = base.posted_at + chrono::Duration::days(1 + (m % 30) as i64);
        match m % 4 {
            0 => {
                let words: Vec<String> = job
                    .description
                    .split(' ')
                    .enumerate()
                    .map(|(i, w)| match i % 2 {
                        0 => format!("rewritten{m}x{i}"),
                        _ => w.to_owned(),
                    })
                    .collect();
                job.description = words.join(" ");
            }
            1 => job.posted_at = base.posted_at + chrono::Duration::days(61 + (m % 30) as i64),
            2 => job.role = format!("{} Lead {m}", job.role),
            _ => {
                let other = g.job(2 * m + 3);
                if other.company_id == base.company_id {
                    job.role = format!("{} Other {m}", job.role);
                }
                job.company_id = other.company_id;
                job.company_name = other.company_name;
            }
        }
        out.push(Extra {
            job,
            base: base.id,
            copy: false,
        });
    }
    out
}

/// Times `JobIndex::similar`, 10 jobs like each of 2,000 of `g`'s, and prints p50 and p99.
pub fn similar_in_engine(index: &job_listings::query::JobIndex, g: &Generator) {
    let mut times = Vec::with_capacity(2_000);
    let mut found = 0;
    for k in 0..2_000 {
        let job = g.job((k * 7_919) % g.n());
        let t = Instant::now();
        found += index.similar(&job, &[], 10).len();
        times.push(t.elapsed());
    }
    let (p50, p99) = percentiles(times);
    println!("JobIndex::similar (2,000 jobs, 10 each; {found} found): p50 {p50:?} p99 {p99:?}");
}

/// Opens a service on a new sled folder under `dir` and imports the companies and jobs.
async fn imported(
    dir: &std::path::Path,
    group: bool,
    companies: Vec<Company>,
    jobs: Vec<NewJob>,
) -> Result<(JobListingsService, Duration), String> {
    let store = SledStore::open(&SledConfig::new(dir)).map_err(|e| e.to_string())?;
    let service = JobListingsService::builder()
        .store(Arc::new(store))
        .config(ServiceConfig::default().group_reposts(group))
        .build()
        .await
        .map_err(|e| e.to_string())?;
    service
        .upsert_companies(companies)
        .await
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    service
        .import_jobs(jobs, |_| {})
        .await
        .map_err(|e| e.to_string())?;
    Ok((service, t.elapsed()))
}

/// The p50 and p99 of some timings.
fn percentiles(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    (at(0.5), at(0.99))
}

/// Times `count` single upserts into `service`: new jobs of `g` beyond its own, every tenth
/// a copy of one of its jobs.
async fn upsert_latency(
    service: &JobListingsService,
    g: &Generator,
    count: usize,
) -> Vec<Duration> {
    let mut times = Vec::with_capacity(count);
    for k in 0..count {
        let job = if k % 10 == 0 {
            let mut copy = g.job(4 * k + 7);
            copy.id = JobId(Uuid::from_u64_pair(0x0b5e_0000_0000_0000 | k as u64, 1));
            copy.posted_at += chrono::Duration::days(2);
            copy
        } else {
            g.job(g.n() + 1_000_000 + k)
        };
        let t = Instant::now();
        if let Err(e) = service.upsert_job(job).await {
            eprintln!("an upsert failed: {e}");
        }
        times.push(t.elapsed());
    }
    times
}

pub fn run(g: &Generator, share: f64, companies: Vec<Company>, work: &std::path::Path) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        match measure(g, share, companies, work).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        }
    })
}

async fn measure(
    g: &Generator,
    share: f64,
    companies: Vec<Company>,
    work: &std::path::Path,
) -> Result<(), String> {
    let extras = extras(g, share);
    let copies = extras.iter().filter(|e| e.copy).count();
    println!(
        "reposts: {} jobs, {} copies and {} near misses added",
        fmt_count(g.n() as u64),
        fmt_count(copies as u64),
        fmt_count((extras.len() - copies) as u64)
    );
    let all = || -> Vec<NewJob> {
        (0..g.n())
            .map(|i| NewJob::from(g.job(i)))
            .chain(extras.iter().map(|e| NewJob::from(e.job.clone())))
            .collect()
    };
    std::fs::create_dir_all(work).map_err(|e| e.to_string())?;
    let off_dir = work.join("grouping-off");
    let on_dir = work.join("grouping-on");
    for dir in [&off_dir, &on_dir] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| e.to_string())?;
        }
    }
    let (off, off_took) = imported(&off_dir, false, companies.clone(), all()).await?;
    println!("import, grouping off: {:.1} s", off_took.as_secs_f64());
    let off_upserts = percentiles(upsert_latency(&off, g, 2_000).await);
    drop(off);
    let (on, on_took) = imported(&on_dir, true, companies, all()).await?;
    println!(
        "import, grouping on:  {:.1} s ({:.2}x)",
        on_took.as_secs_f64(),
        on_took.as_secs_f64() / off_took.as_secs_f64()
    );

    // Detection against the truth: a copy is found when it is in its base job's group; a
    // near miss or a base job in another's group is a false find.
    let canonical = |j: &Job| j.repost_of.unwrap_or(j.id);
    let (mut found, mut missed, mut false_finds) = (0u64, 0u64, 0u64);
    for e in &extras {
        let job = on.stored_job(e.job.id).await.map_err(|e| e.to_string())?;
        let base = on.stored_job(e.base).await.map_err(|e| e.to_string())?;
        match (e.copy, canonical(&job) == canonical(&base)) {
            (true, true) => found += 1,
            (true, false) => missed += 1,
            (false, true) => false_finds += 1,
            (false, false) => {}
        }
    }
    for i in 0..g.n() {
        let job = on
            .stored_job(g.job(i).id)
            .await
            .map_err(|e| e.to_string())?;
        false_finds += u64::from(job.repost_of.is_some());
    }
    let precision = found as f64 / (found + false_finds).max(1) as f64;
    let recall = found as f64 / (found + missed).max(1) as f64;
    println!(
        "detection: {found} copies found, {missed} missed, {false_finds} false finds: precision {precision:.4}, recall {recall:.4}"
    );

    let on_upserts = percentiles(upsert_latency(&on, g, 2_000).await);
    println!(
        "single upserts (2,000, a tenth copies): grouping off p50 {:?} p99 {:?}; on p50 {:?} p99 {:?} ({:.2}x at p99)",
        off_upserts.0,
        off_upserts.1,
        on_upserts.0,
        on_upserts.1,
        on_upserts.1.as_secs_f64() / off_upserts.1.as_secs_f64()
    );

    let (key, _) = on
        .create_key(NewKey::new(Plan::Enterprise))
        .await
        .map_err(|e| e.to_string())?;
    let per_page = PerPage::new(10).map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(2_000);
    for k in 0..2_000 {
        let id = g.job((k * 7_919) % g.n()).id;
        let t = Instant::now();
        on.similar_jobs(&key, id, per_page, Held::default())
            .await
            .map_err(|e| e.to_string())?;
        times.push(t.elapsed());
    }
    let (p50, p99) = percentiles(times);
    println!("similar_jobs (2,000 jobs, 10 each, service call with its store reads): p50 {p50:?} p99 {p99:?}");
    Ok(())
}
