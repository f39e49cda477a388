//! The server's `import` command, and loading records into the service (also for the demo).
//!
//! An import reads the jobs file twice. The first pass checks every line, keeping only each
//! job's id, company and place in the file, so that a bad line stops the import before
//! anything is written. The second reads the lines again in id order, a batch at a time,
//! while the batch before is written and indexed: the store fills its tree from one end, and
//! memory holds a few batches of jobs instead of all of them (fresh memory was a large part
//! of an import's time).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::de::DeserializeOwned;

use job_listings::domain::jsonl::parse_record;
use job_listings::domain::{Company, CompanyId, DomainError, Job, JobId};
use job_listings::service::{
    ImportError, ImportSummary, JobListingsService, ServiceError, IMPORT_BATCH,
};

use crate::cli::ImportArgs;
use crate::remote::Remote;

/// Companies written per store transaction.
const COMPANY_BATCH: usize = 1_000;
/// Jobs read again and handed to the service at a time, in id order: the library's import
/// batch.
const JOB_BATCH: usize = IMPORT_BATCH;
/// The command stops checking after this many bad lines.
const MAX_REPORTED_ERRORS: usize = 20;
/// Lines read before they are parsed, all of them at once on every core.
const BLOCK_LINES: usize = 8_192;

// ---------------------------------------------------------------------------------------------
// Loading records
// ---------------------------------------------------------------------------------------------

/// How many companies a load created and updated.
#[derive(Debug, Default)]
pub struct CompaniesLoaded {
    pub created: usize,
    pub updated: usize,
}

/// The service refused a batch of companies; earlier batches are stored.
#[derive(Debug)]
pub struct CompaniesRefused {
    /// Index of the batch's first company in the input.
    first: usize,
    /// Companies in the batch.
    len: usize,
    pub error: ServiceError,
}

/// Writes companies `COMPANY_BATCH` at a time.
pub async fn load_companies(
    service: &JobListingsService,
    companies: Vec<Company>,
) -> Result<CompaniesLoaded, CompaniesRefused> {
    let mut loaded = CompaniesLoaded::default();
    let mut rest = companies.into_iter().peekable();
    let mut first = 0;
    while rest.peek().is_some() {
        let batch: Vec<Company> = rest.by_ref().take(COMPANY_BATCH).collect();
        let len = batch.len();
        let refused = |error| CompaniesRefused { first, len, error };
        let known = count_known(service, &batch);
        service.upsert_companies(batch).await.map_err(refused)?;
        loaded.created += len - known;
        loaded.updated += known;
        first += len;
    }
    Ok(loaded)
}

/// How many of these companies the store already holds.
fn count_known(service: &JobListingsService, companies: &[Company]) -> usize {
    companies
        .iter()
        .filter(|c| service.has_company(c.id))
        .count()
}

/// A progress bar on stderr, hidden when stderr is not a terminal.
pub fn progress_bar(len: u64, what: &'static str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style =
        ProgressStyle::with_template("{msg:>12} [{bar:40.cyan/blue}] {pos}/{len} ({eta} left)")
            .map_or_else(
                |_| ProgressStyle::default_bar(),
                |s| s.progress_chars("=> "),
            );
    ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(what)
}

// ---------------------------------------------------------------------------------------------
// Reading and checking the files
// ---------------------------------------------------------------------------------------------

/// Where a record's line is in its file.
#[derive(Clone, Copy, Debug, Default)]
struct Line {
    /// 1-based line number.
    number: usize,
    /// Byte offset of the line's start.
    at: u64,
    /// The line's length in bytes, without its newline.
    len: usize,
}

/// A checked job, as much of it as the import keeps until it reads the line again.
#[derive(Clone, Copy, Debug)]
struct JobLine {
    id: JobId,
    company_id: CompanyId,
    line: Line,
}

/// A file's checked records, as much of each as the import keeps.
#[derive(Debug)]
struct Source<T> {
    path: PathBuf,
    records: Vec<T>,
    /// Every byte read, when the file cannot be read again (a pipe, such as `/dev/stdin`).
    copy: Option<Vec<u8>>,
}

impl<T> Source<T> {
    fn empty() -> Self {
        Self {
            path: PathBuf::new(),
            records: Vec::new(),
            copy: None,
        }
    }
}

/// The checked contents of the files to import, and the bad lines found in them.
#[derive(Debug)]
pub struct ImportInput {
    /// Each company with its line number.
    companies: Source<(usize, Company)>,
    jobs: Source<JobLine>,
    problems: Problems,
}

/// Bad lines, printed as they are found, up to `MAX_REPORTED_ERRORS`.
#[derive(Debug, Default)]
struct Problems {
    count: usize,
    /// Why the jobs' companies could not be checked, when they could not: said with the
    /// count, so that nobody takes the lines told for all there are.
    companies_unchecked: Option<String>,
}

impl Problems {
    /// Reports one bad line; returns `false` once enough have been reported.
    fn report(&mut self, path: &Path, line: usize, what: impl std::fmt::Display) -> bool {
        self.count += 1;
        eprintln!("{}:{line}: {what}", path.display());
        self.count < MAX_REPORTED_ERRORS
    }

    fn full(&self) -> bool {
        self.count >= MAX_REPORTED_ERRORS
    }

    /// Fails when any line was bad, saying that nothing was imported.
    fn check(&self) -> Result<()> {
        let said = match self.count {
            0 => return Ok(()),
            n if self.full() => {
                format!(
                    "stopped after {n} bad lines; nothing was imported. Fix them and run again."
                )
            }
            1 => "1 bad line; nothing was imported. Fix it and run again.".to_owned(),
            n => format!("{n} bad lines; nothing was imported. Fix them and run again."),
        };
        match &self.companies_unchecked {
            Some(why) if !self.full() => {
                bail!("{said} The jobs' companies were not checked, {why}.")
            }
            _ => bail!("{said}"),
        }
    }
}

/// Reads and checks every line of the files given, reporting the bad ones; imports nothing.
/// [`import`] (or, for a new folder, [`checked_for_a_new_store`]) then checks the jobs'
/// companies too before it refuses the import for any bad line, so that one run reports every
/// kind of problem.
pub fn read_import(args: &ImportArgs) -> Result<ImportInput> {
    if args.companies.is_none() && args.jobs.is_none() {
        bail!("nothing to import: give --companies FILE, --jobs FILE or both");
    }
    let mut problems = Problems::default();
    let companies = match &args.companies {
        Some(path) => read_jsonl(path, Company::validate, |c, l| (l.number, c), &mut problems)?,
        None => Source::empty(),
    };
    if problems.count > 0 {
        // A company on a bad line would be taken for an unknown one.
        problems.companies_unchecked = Some("as the companies file has bad lines".to_owned());
    }
    let jobs = match &args.jobs {
        Some(path) if !problems.full() => {
            let keep = |job: Job, line| JobLine {
                id: job.id,
                company_id: job.company_id,
                line,
            };
            read_jsonl(path, Job::validate, keep, &mut problems)?
        }
        _ => Source::empty(),
    };
    Ok(ImportInput {
        companies,
        jobs,
        problems,
    })
}

/// Parses a JSON Lines file: one `T` per non-blank line, each checked with `validate`, of
/// which `keep` keeps what the import needs.
fn read_jsonl<T: DeserializeOwned + Send, K: Send>(
    path: &Path,
    validate: fn(&T) -> Result<(), DomainError>,
    keep: impl Fn(T, Line) -> K + Sync,
    problems: &mut Problems,
) -> Result<Source<K>> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let metadata = file.metadata().ok();
    let size = metadata.as_ref().map_or(0, std::fs::Metadata::len);
    let mut lines = LineReader {
        path,
        reader: BufReader::new(file),
        number: 0,
        bytes_read: 0,
        // The import reads a regular file's lines again from the file; anything else it
        // reads again from a copy.
        copy: (!metadata.is_some_and(|m| m.is_file())).then(Vec::new),
    };
    let mut records = Vec::new();
    let (mut parsing, mut reading) = (Block::default(), Block::default());
    lines.fill(&mut parsing)?;
    if parsing.filled == BLOCK_LINES {
        // Room for about every record at once, guessed from the first block's lines:
        // doubling up to a million records copied them again and again.
        let expected = (size / (lines.bytes_read / lines.number as u64).max(1)) as usize;
        records.reserve(expected + expected / 16);
    }
    while parsing.filled > 0 {
        // The next block is read while this one is parsed, each line on its own: parsing is
        // most of the time of reading a file.
        let (read, parsed) = rayon::join(
            || lines.fill(&mut reading),
            || -> Vec<(Line, Option<Result<K, String>>)> {
                parsing.lines[..parsing.filled]
                    .par_iter()
                    .map(|(line, text)| {
                        let record = parse_record(text, line.number == 1, validate);
                        (*line, record.map(|r| r.map(|value| keep(value, *line))))
                    })
                    .collect()
            },
        );
        for (line, outcome) in parsed {
            match outcome {
                None => {}
                Some(Ok(value)) => records.push(value),
                Some(Err(problem)) if !problems.report(path, line.number, &problem) => {
                    return Ok(Source {
                        path: path.to_owned(),
                        records,
                        copy: lines.copy,
                    });
                }
                Some(Err(_)) => {}
            }
        }
        read?;
        std::mem::swap(&mut parsing, &mut reading);
    }
    Ok(Source {
        path: path.to_owned(),
        records,
        copy: lines.copy,
    })
}

/// Up to `BLOCK_LINES` lines, each with where it is in its file. Each line's buffer is kept
/// for the line that takes its place in the next block.
#[derive(Default)]
struct Block {
    lines: Vec<(Line, Vec<u8>)>,
    filled: usize,
}

/// A file read a line at a time, counting lines and bytes.
struct LineReader<'p> {
    path: &'p Path,
    reader: BufReader<File>,
    number: usize,
    bytes_read: u64,
    /// Every byte read so far, kept when the file cannot be read again.
    copy: Option<Vec<u8>>,
}

impl LineReader<'_> {
    /// Fills `block` with the next lines; none at the end of the file.
    fn fill(&mut self, block: &mut Block) -> Result<()> {
        block.filled = 0;
        while block.filled < BLOCK_LINES {
            if block.filled == block.lines.len() {
                block.lines.push((Line::default(), Vec::new()));
            }
            let (line, text) = &mut block.lines[block.filled];
            text.clear();
            let read = self
                .reader
                .read_until(b'\n', text)
                .with_context(|| format!("reading {}", self.path.display()))?;
            if read == 0 {
                break;
            }
            if let Some(copy) = &mut self.copy {
                copy.extend_from_slice(text);
            }
            self.number += 1;
            *line = Line {
                number: self.number,
                at: self.bytes_read,
                len: text.strip_suffix(b"\n").map_or(text.len(), <[u8]>::len),
            };
            self.bytes_read += read as u64;
            block.filled += 1;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the jobs again, in id order
// ---------------------------------------------------------------------------------------------

/// Where the checked lines are read again from.
enum Reread {
    /// The file, by position.
    File(File),
    /// The copy of a stream (`at` is where the line began in the stream).
    Copy(Vec<u8>),
}

impl Reread {
    fn line(&self, line: &Line, text: &mut Vec<u8>) -> std::io::Result<()> {
        text.resize(line.len, 0);
        match self {
            Self::File(file) => read_exact_at(file, text, line.at),
            Self::Copy(bytes) => {
                let start = usize::try_from(line.at).unwrap_or(usize::MAX);
                let kept = bytes
                    .get(start..start.saturating_add(line.len))
                    .ok_or(std::io::ErrorKind::UnexpectedEof)?;
                text.copy_from_slice(kept);
                Ok(())
            }
        }
    }
}

/// The checked jobs' lines read again, in id order, `JOB_BATCH` at a time (and more while
/// the next has the same id, so that no id spans two batches). A line that no longer reads
/// as the job it was is an error: the file changed since it was checked.
fn jobs_in_id_order(
    source: Source<JobLine>,
) -> Result<impl Iterator<Item = Result<Vec<Job>>> + Send + 'static> {
    let path = source.path.clone();
    let (reread, lines) = reread_in_id_order(source)?;
    let mut start = 0;
    Ok(std::iter::from_fn(move || {
        if start == lines.len() {
            return None;
        }
        let mut end = (start + JOB_BATCH).min(lines.len());
        while end < lines.len() && lines[end].id == lines[end - 1].id {
            end += 1;
        }
        let batch = &lines[start..end];
        start = end;
        Some(
            batch
                .par_iter()
                .map_init(Vec::new, |text, job| {
                    read_job_again(&reread, &path, job, text)
                })
                .collect(),
        )
    }))
}

/// Where the checked jobs' lines can be read again, and those lines in id order (stably: of
/// lines with the same id, the later one stays later and wins).
fn reread_in_id_order(source: Source<JobLine>) -> Result<(Reread, Vec<JobLine>)> {
    let Source {
        path,
        records: mut lines,
        copy,
    } = source;
    let reread = match copy {
        Some(bytes) => Reread::Copy(bytes),
        // No jobs file, or one without a job: nothing to read again.
        None if lines.is_empty() => Reread::Copy(Vec::new()),
        None => Reread::File(
            File::open(&path).with_context(|| format!("opening {} again", path.display()))?,
        ),
    };
    lines.sort_by_key(|l| l.id);
    Ok((reread, lines))
}

/// One checked job's line, read and parsed again.
fn read_job_again(reread: &Reread, path: &Path, job: &JobLine, text: &mut Vec<u8>) -> Result<Job> {
    let at = format!("{}:{}", path.display(), job.line.number);
    let changed = |what: &dyn std::fmt::Display| {
        anyhow!("{at}: the file changed while it was imported: {what}")
    };
    reread
        .line(&job.line, text)
        .map_err(|e| anyhow!("{at}: reading the line again failed: {e}"))?;
    match parse_record::<Job>(text, job.line.number == 1, Job::validate) {
        Some(Ok(read)) if read.id == job.id && read.company_id == job.company_id => Ok(read),
        Some(Ok(read)) => Err(changed(&format_args!("it now holds job {}", read.id))),
        Some(Err(problem)) => Err(changed(&problem)),
        None => Err(changed(&"it is now blank")),
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The import
// ---------------------------------------------------------------------------------------------

/// Imports what `read_import` checked: companies first, then the jobs in id order.
pub async fn import(service: &JobListingsService, input: ImportInput) -> Result<()> {
    let started = Instant::now();
    let ImportInput {
        companies,
        jobs,
        mut problems,
    } = input;

    // 1. Every job's company must be in the companies file or already in the store; check
    //    them all now so a missing one stops the import before anything is written.
    if problems.companies_unchecked.is_none() && !problems.full() {
        let mut unknown = companies_not_in_file(&companies, &jobs);
        unknown.retain(|id| !service.has_company(*id));
        report_unknown_companies(&jobs, &unknown, &mut problems);
    }
    problems.check()?;

    // 2. Write companies a batch at a time, then every job in one import.
    let (company_lines, company_records): (Vec<usize>, Vec<Company>) =
        companies.records.into_iter().unzip();
    let companies_loaded = load_companies(service, company_records)
        .await
        .map_err(|refused| explain_refused_companies(&companies.path, &company_lines, refused))?;
    let bar = progress_bar(jobs.records.len() as u64, "jobs");
    let written = AtomicUsize::new(0);
    let jobs_path = jobs.path.clone();
    let batches = jobs_in_id_order(jobs)?;
    let imported = service
        .import_sorted_jobs(batches, |n| {
            bar.set_position(n as u64);
            written.store(n, Ordering::Relaxed);
        })
        .await;
    bar.finish_and_clear();
    let imported = imported.map_err(|error| {
        explain_stopped_jobs(&jobs_path, written.load(Ordering::Relaxed), error)
    })?;

    // 3. Report.
    print_summary(
        &companies_loaded,
        &imported,
        started.elapsed(),
        "Start the server again to serve the new data.",
    );
    Ok(())
}

/// What an import says once it is done, the same whichever way it went.
fn print_summary(companies: &CompaniesLoaded, jobs: &ImportSummary, took: Duration, serving: &str) {
    let jobs_total = jobs.created + jobs.updated;
    let parts: Vec<String> = [
        counted(companies.created, companies.updated, "company", "companies"),
        counted(jobs.created, jobs.updated, "job", "jobs"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let rate = if jobs_total > 0 {
        format!(", {:.0} jobs/s", per_second(jobs_total, took))
    } else {
        String::new()
    };
    if parts.is_empty() {
        println!("The files held no records; nothing was imported.");
        return;
    }
    println!("Imported {} in {took:.2?}{rate}.", parts.join(" and "));
    if jobs.announced > 0 {
        println!(
            "{} to webhook subscribers; the server sends them to the matching ones.",
            plural(
                jobs.announced,
                "new job was announced",
                "new jobs were announced"
            )
        );
    }
    println!("{serving}");
}

/// The input checked as for a store that holds no company yet (a new folder), where every
/// company the companies file lacks is unknown: refused with every bad line told, without
/// making the store for an import that cannot be.
pub fn checked_for_a_new_store(mut input: ImportInput) -> Result<ImportInput> {
    if input.problems.companies_unchecked.is_none() && !input.problems.full() {
        let unknown = companies_not_in_file(&input.companies, &input.jobs);
        report_unknown_companies(&input.jobs, &unknown, &mut input.problems);
    }
    input.problems.check()?;
    Ok(input)
}

/// Refuses an import with bad lines whose store could not be opened (`unopened` says why), so
/// that the jobs' companies could not be checked.
pub fn refuse_unopened(input: ImportInput, unopened: anyhow::Error) -> anyhow::Error {
    let mut problems = input.problems;
    problems
        .companies_unchecked
        .get_or_insert_with(|| format!("as the store could not be opened: {unopened:#}"));
    problems.check().err().unwrap_or(unopened)
}

/// The companies the checked jobs name that the companies file does not hold.
fn companies_not_in_file(
    companies: &Source<(usize, Company)>,
    jobs: &Source<JobLine>,
) -> HashSet<CompanyId> {
    let in_file: HashSet<CompanyId> = companies.records.iter().map(|(_, c)| c.id).collect();
    jobs.records
        .iter()
        .map(|job| job.company_id)
        .filter(|id| !in_file.contains(id))
        .collect()
}

/// Reports each checked job whose company is `unknown`, in the order of the file.
fn report_unknown_companies(
    jobs: &Source<JobLine>,
    unknown: &HashSet<CompanyId>,
    problems: &mut Problems,
) {
    for job in jobs
        .records
        .iter()
        .filter(|j| unknown.contains(&j.company_id))
    {
        let what = format!(
            "company_id: company {} is unknown; add it to --companies or import it first",
            job.company_id
        );
        if !problems.report(&jobs.path, job.line.number, what) {
            break;
        }
    }
}

/// Says which lines a refused batch of companies held, and what was stored before.
fn explain_refused_companies(
    path: &Path,
    company_lines: &[usize],
    refused: CompaniesRefused,
) -> anyhow::Error {
    let CompaniesRefused { first, len, error } = refused;
    let lines =
        &company_lines[first.min(company_lines.len())..(first + len).min(company_lines.len())];
    let range = match (lines.first(), lines.last()) {
        (Some(a), Some(b)) => format!("lines {a} to {b}"),
        _ => "a batch".to_owned(),
    };
    let earlier = if first == 0 {
        "nothing was imported".to_owned()
    } else {
        format!("the {first} companies before it were imported")
    };
    anyhow!(
        "{}: the service refused the batch of companies on {range} ({earlier}): {error}",
        path.display()
    )
}

/// Says how many jobs were stored before the import of jobs stopped.
fn explain_stopped_jobs(
    path: &Path,
    written: usize,
    error: ImportError<anyhow::Error>,
) -> anyhow::Error {
    let earlier = match written {
        0 => "no job was imported".to_owned(),
        n => format!("{} were imported, in id order", plural(n, "job", "jobs")),
    };
    let why = match error {
        ImportError::Source(e) => e,
        ImportError::Service(e) => anyhow::Error::new(e),
    };
    anyhow!(
        "{}: the import of jobs stopped ({earlier}; every company was imported): {why:#}",
        path.display()
    )
}

/// "N records (C new, U updated)"; nothing when there were none.
fn counted(created: usize, updated: usize, one: &str, many: &str) -> Option<String> {
    let total = created + updated;
    (total > 0).then(|| {
        format!(
            "{} ({created} new, {updated} updated)",
            plural(total, one, many)
        )
    })
}

pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub fn per_second(n: usize, took: Duration) -> f64 {
    n as f64 / took.as_secs_f64().max(1e-9)
}

// ---------------------------------------------------------------------------------------------
// Through a running server
// ---------------------------------------------------------------------------------------------

/// Ids sent to the server's company lookup at a time.
const LOOKUP_BATCH: usize = 10_000;
/// Bytes of a file sent at a time.
const UPLOAD_CHUNK: usize = 256 * 1024;

/// What a bulk upload answered.
#[derive(Debug, Default, serde::Deserialize)]
struct BulkReport {
    created: usize,
    updated: usize,
    #[serde(default)]
    announced: Option<usize>,
    refused: usize,
    errors: Vec<BulkLineError>,
}

#[derive(Debug, serde::Deserialize)]
struct BulkLineError {
    line: usize,
    message: String,
}

/// Imports what `read_import` checked through a running server's admin API: the jobs'
/// companies are checked against the server's first, so that a file with a bad line imports
/// nothing, as without a server; then each file is sent as it is, and the server checks
/// every line again as it writes.
pub async fn import_remote(remote: &Remote, input: ImportInput) -> Result<()> {
    let started = Instant::now();
    let ImportInput {
        companies,
        jobs,
        mut problems,
    } = input;
    if problems.companies_unchecked.is_none() && !problems.full() {
        let mut unknown = companies_not_in_file(&companies, &jobs);
        let asked: Vec<CompanyId> = unknown.iter().copied().collect();
        for ids in asked.chunks(LOOKUP_BATCH) {
            #[derive(serde::Deserialize)]
            struct LookedUp {
                found: Vec<CompanyId>,
            }
            let looked_up: LookedUp = remote
                .call(
                    remote
                        .request(reqwest::Method::POST, "/companies/lookup")
                        .json(&serde_json::json!({ "ids": ids })),
                )
                .await?
                .ok_or_else(|| anyhow!("the server at {} has no company lookup", remote.base()))?;
            for id in looked_up.found {
                unknown.remove(&id);
            }
        }
        report_unknown_companies(&jobs, &unknown, &mut problems);
    }
    problems.check()?;

    let company_report = match companies.records.is_empty() {
        true => BulkReport::default(),
        false => upload(remote, "/companies/bulk", &companies, None).await?,
    };
    refused_lines(&companies.path, &company_report, "companies")?;
    let bar = progress_bar(jobs.records.len() as u64, "jobs");
    let jobs_path = jobs.path.clone();
    let (job_report, sent_lines) = match jobs.records.is_empty() {
        true => (Ok(BulkReport::default()), Vec::new()),
        false => upload_in_id_order(remote, jobs, &bar).await?,
    };
    bar.finish_and_clear();
    let mut job_report = job_report?;
    // The server counts lines in the order they were sent: name them by their place in the file.
    for e in &mut job_report.errors {
        e.line = sent_lines
            .get(e.line.wrapping_sub(1))
            .copied()
            .unwrap_or(e.line);
    }
    refused_lines(&jobs_path, &job_report, "jobs")?;
    print_summary(
        &CompaniesLoaded {
            created: company_report.created,
            updated: company_report.updated,
        },
        &ImportSummary {
            created: job_report.created,
            updated: job_report.updated,
            announced: job_report.announced.unwrap_or(0),
        },
        started.elapsed(),
        &format!(
            "The server at {} serves them now: they are searchable.",
            remote.base()
        ),
    );
    Ok(())
}

/// Fails, after telling each of them, when the server refused lines the command had checked
/// (the store changed meanwhile, such as a company deleted); the other lines were written.
fn refused_lines(path: &Path, report: &BulkReport, what: &str) -> Result<()> {
    if report.refused == 0 {
        return Ok(());
    }
    for e in &report.errors {
        eprintln!("{}:{}: {}", path.display(), e.line, e.message);
    }
    bail!(
        "the server refused {} of the {what}; the {} others were imported. Fix the lines and \
         import them again.",
        plural(report.refused, "line", "lines"),
        report.created + report.updated
    )
}

/// Sends the checked jobs' lines as they are, in id order (as the import without a server
/// writes them, so the store fills its tree from one end), moving `bar` by the lines sent.
/// Returns the server's report and the file's line number of each line sent, in order.
async fn upload_in_id_order(
    remote: &Remote,
    jobs: Source<JobLine>,
    bar: &ProgressBar,
) -> Result<(Result<BulkReport>, Vec<usize>)> {
    let path = jobs.path.clone();
    let (reread, lines) = reread_in_id_order(jobs)?;
    let sent_lines: Vec<usize> = lines.iter().map(|l| l.line.number).collect();
    let bar = bar.clone();
    let mut next = 0;
    let chunks = futures_util::stream::iter(std::iter::from_fn(move || {
        if next == lines.len() {
            return None;
        }
        let mut chunk = Vec::with_capacity(UPLOAD_CHUNK + 4096);
        let mut text = Vec::new();
        let first = next;
        while next < lines.len() && chunk.len() < UPLOAD_CHUNK {
            let line = &lines[next].line;
            if let Err(e) = reread.line(line, &mut text) {
                return Some(Err(std::io::Error::other(format!(
                    "{}:{}: reading the line again failed: {e}",
                    path.display(),
                    line.number
                ))));
            }
            chunk.extend_from_slice(&text);
            chunk.push(b'\n');
            next += 1;
        }
        bar.inc((next - first) as u64);
        Some(Ok::<_, std::io::Error>(chunk))
    }));
    let report = remote
        .call(
            remote
                .request(reqwest::Method::POST, "/jobs/bulk")
                .header(reqwest::header::CONTENT_TYPE, "application/x-ndjson")
                .body(reqwest::Body::wrap_stream(chunks)),
        )
        .await
        .context("sending the jobs")
        .and_then(|r| {
            r.ok_or_else(|| anyhow!("the server at {} has no /jobs/bulk", remote.base()))
        });
    Ok((report, sent_lines))
}

/// Sends a checked file (or the copy of a stream) to a bulk endpoint as it is read, moving
/// `bar` by the lines sent.
async fn upload<T>(
    remote: &Remote,
    endpoint: &str,
    source: &Source<T>,
    bar: Option<&ProgressBar>,
) -> Result<BulkReport> {
    let body = match &source.copy {
        Some(bytes) => {
            if let Some(bar) = bar {
                bar.set_position(source.records.len() as u64);
            }
            reqwest::Body::from(bytes.clone())
        }
        None => {
            let file = tokio::fs::File::open(&source.path)
                .await
                .with_context(|| format!("opening {} again", source.path.display()))?;
            let bar = bar.cloned();
            let chunks = futures_util::stream::try_unfold(file, move |mut file| {
                let bar = bar.clone();
                async move {
                    use tokio::io::AsyncReadExt;
                    let mut chunk = vec![0; UPLOAD_CHUNK];
                    let n = file.read(&mut chunk).await?;
                    if n == 0 {
                        return Ok::<_, std::io::Error>(None);
                    }
                    chunk.truncate(n);
                    if let Some(bar) = &bar {
                        bar.inc(chunk.iter().filter(|&&b| b == b'\n').count() as u64);
                    }
                    Ok(Some((chunk, file)))
                }
            });
            reqwest::Body::wrap_stream(chunks)
        }
    };
    remote
        .call(
            remote
                .request(reqwest::Method::POST, endpoint)
                .header(reqwest::header::CONTENT_TYPE, "application/x-ndjson")
                .body(body),
        )
        .await
        .with_context(|| format!("sending {}", source.path.display()))?
        .ok_or_else(|| anyhow!("the server at {} has no {endpoint}", remote.base()))
}
