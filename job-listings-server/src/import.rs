//! The server's `import` command.
//!
//! An import reads its files twice. The first pass checks every line, keeping only each
//! record's id (and a job's company) and place in its file, so that a bad line stops the
//! import before anything is written. The second reads the lines again — the companies in
//! file order, then the jobs in id order, so the store fills its tree from one end — and
//! hands them to the service's import of lines: in this process when the command opens the
//! store itself, or streamed to a running server's bulk uploads, which run the same import
//! there. Either way the lines are checked, written and reported in the same words.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use job_listings::client::AdminClient;
use job_listings::domain::{Company, CompanyId, Job, JobId};
use job_listings::service::{
    read_record, unknown_company, BulkReport, JobListingsService, RecordKind, RecordLine,
};

use crate::cli::ImportArgs;

/// The command stops checking after this many bad lines.
const MAX_REPORTED_ERRORS: usize = 20;
/// Lines read before they are parsed, all of them at once on every core.
const BLOCK_LINES: usize = 8_192;
/// Ids sent to the server's company lookup at a time.
const LOOKUP_BATCH: usize = 10_000;
/// Bytes of a file sent to a running server at a time.
const UPLOAD_CHUNK: usize = 256 * 1024;

/// Where an import writes: the store, through the service opened on it, or a running
/// server's admin API.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    /// The service, opened on the store by the command.
    Local(&'a JobListingsService),
    /// A running server.
    Remote(&'a AdminClient),
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
    /// Each company's id, with its line.
    companies: Source<(Line, CompanyId)>,
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
        Some(path) => read_jsonl(path, |c: Company, l| (l, c.id), &mut problems)?,
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
            read_jsonl(path, keep, &mut problems)?
        }
        _ => Source::empty(),
    };
    Ok(ImportInput {
        companies,
        jobs,
        problems,
    })
}

/// Parses a JSON Lines file: one `T` per non-blank line, each read and checked as every
/// import reads a line, of which `keep` keeps what the import needs.
fn read_jsonl<T: RecordLine, K: Send>(
    path: &Path,
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
                        let record = read_record::<T>(line.number, text);
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
// Reading the lines again
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

/// Where a file's checked lines are read again from, and those lines in the order to send
/// them.
struct Reading {
    path: PathBuf,
    reread: Reread,
    lines: Vec<Line>,
}

impl Reading {
    /// The lines of `source` in the order `order` leaves them.
    fn of<T>(source: Source<T>, line: impl Fn(&T) -> Line) -> Result<Self> {
        let Source {
            path,
            records,
            copy,
        } = source;
        let reread = match copy {
            Some(bytes) => Reread::Copy(bytes),
            // No file, or one without a record: nothing to read again.
            None if records.is_empty() => Reread::Copy(Vec::new()),
            None => Reread::File(
                File::open(&path).with_context(|| format!("opening {} again", path.display()))?,
            ),
        };
        let lines = records.iter().map(line).collect();
        Ok(Self {
            path,
            reread,
            lines,
        })
    }

    /// One line read again.
    fn read(&self, line: &Line, text: &mut Vec<u8>) -> std::io::Result<()> {
        self.reread.line(line, text).map_err(|e| {
            std::io::Error::other(format!(
                "{}:{}: reading the line again failed: {e}",
                self.path.display(),
                line.number
            ))
        })
    }
}

/// Imports what `read_import` checked: companies first, then the jobs in id order. The jobs'
/// companies are checked first against the store's (or the running server's), so that a
/// file with a bad line imports nothing; the service then checks every line again as it
/// writes.
pub(crate) async fn import(target: Target<'_>, input: ImportInput) -> Result<()> {
    let started = Instant::now();
    let ImportInput {
        companies,
        mut jobs,
        mut problems,
    } = input;

    // 1. Every job's company must be in the companies file or already stored.
    if problems.companies_unchecked.is_none() && !problems.full() {
        let mut unknown = companies_not_in_file(&companies, &jobs);
        match target {
            Target::Local(service) => unknown.retain(|id| !service.has_company(*id)),
            Target::Remote(admin) => {
                let asked: Vec<CompanyId> = unknown.iter().copied().collect();
                for ids in asked.chunks(LOOKUP_BATCH) {
                    let looked_up = admin
                        .lookup_companies(ids)
                        .await
                        .context("checking the jobs' companies with the server")?;
                    for id in &looked_up.found {
                        unknown.remove(id);
                    }
                }
            }
        }
        report_unknown_companies(&jobs, &unknown, &mut problems);
    }
    problems.check()?;

    // 2. Companies in file order, then jobs in id order (stably: of lines with the same id,
    //    the later stays later and wins).
    let companies = Reading::of(companies, |(line, _)| *line)?;
    let company_report = send(target, RecordKind::Companies, companies, None).await?;
    jobs.records.sort_by_key(|j| j.id);
    let bar = progress_bar(jobs.records.len() as u64, "jobs");
    let job_report = send(
        target,
        RecordKind::Jobs,
        Reading::of(jobs, |j| j.line)?,
        Some(&bar),
    )
    .await;
    bar.finish_and_clear();
    let job_report = job_report?;

    // 3. Report.
    let serving = match target {
        Target::Local(_) => "Start the server again to serve the new data.".to_owned(),
        Target::Remote(admin) => format!(
            "The server at {} serves them now: they are searchable.",
            admin.base()
        ),
    };
    print_summary(&company_report, &job_report, started.elapsed(), &serving);
    Ok(())
}

/// Hands a file's checked lines to the import of lines, moving `bar` by the lines sent, and
/// returns its report with every refused line told by its place in the file. Fails, after
/// telling each of them, when lines the command had checked were refused (the store or the
/// file changed meanwhile); the other lines were written.
async fn send(
    target: Target<'_>,
    kind: RecordKind,
    reading: Reading,
    bar: Option<&ProgressBar>,
) -> Result<BulkReport> {
    if reading.lines.is_empty() {
        return Ok(BulkReport::default());
    }
    let path = reading.path.clone();
    let what = match kind {
        RecordKind::Jobs => "jobs",
        _ => "companies",
    };
    let report = match target {
        Target::Local(service) => {
            // The jobs are sent sorted by id, and nothing else writes to the data folder.
            let mut import = service
                .import_lines(kind)
                .in_id_order(kind == RecordKind::Jobs);
            let mut text = Vec::new();
            for line in &reading.lines {
                reading.read(line, &mut text)?;
                import
                    .line(line.number, &text)
                    .await
                    .with_context(|| stopped(&path, what, import.written()))?;
                if let Some(bar) = bar {
                    bar.inc(1);
                }
            }
            import
                .finish()
                .await
                .with_context(|| format!("{}: the import of {what} stopped", path.display()))?
        }
        Target::Remote(admin) => {
            // The server numbers the lines in the order they are sent.
            let sent: Vec<usize> = reading.lines.iter().map(|l| l.number).collect();
            let mut report = admin
                .bulk_upload(kind, false, chunks(reading, bar.cloned()))
                .await
                .with_context(|| format!("sending {}", path.display()))?
                .into_inner();
            for e in &mut report.errors {
                e.line = sent.get(e.line.wrapping_sub(1)).copied().unwrap_or(e.line);
            }
            report
        }
    };
    if report.refused == 0 {
        return Ok(report);
    }
    for e in &report.errors {
        eprintln!("{}:{}: {}", path.display(), e.line, e.message);
    }
    bail!(
        "{} of the {what} were refused; the {} others were imported. Fix the lines and import \
         them again.",
        plural(report.refused, "line", "lines"),
        report.created + report.updated
    )
}

/// What an import that stopped had written.
fn stopped(path: &Path, what: &str, written: usize) -> String {
    format!(
        "{}: the import of {what} stopped ({} had been written)",
        path.display(),
        plural(written, "record", "records")
    )
}

/// A file's lines, read again in their order, as pieces of a body.
fn chunks(
    reading: Reading,
    bar: Option<ProgressBar>,
) -> impl futures_util::Stream<Item = std::io::Result<Vec<u8>>> + Send + 'static {
    let mut next = 0;
    futures_util::stream::iter(std::iter::from_fn(move || {
        if next == reading.lines.len() {
            return None;
        }
        let mut chunk = Vec::with_capacity(UPLOAD_CHUNK + 4096);
        let mut text = Vec::new();
        let first = next;
        while next < reading.lines.len() && chunk.len() < UPLOAD_CHUNK {
            if let Err(e) = reading.read(&reading.lines[next], &mut text) {
                return Some(Err(e));
            }
            chunk.extend_from_slice(&text);
            chunk.push(b'\n');
            next += 1;
        }
        if let Some(bar) = &bar {
            bar.inc((next - first) as u64);
        }
        Some(Ok(chunk))
    }))
}

/// What an import says once it is done, the same whichever way it went.
fn print_summary(companies: &BulkReport, jobs: &BulkReport, took: Duration, serving: &str) {
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
    let announced = jobs.announced.unwrap_or(0);
    if announced > 0 {
        println!(
            "{} to webhook subscribers; the server sends them to the matching ones.",
            plural(
                announced,
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
    companies: &Source<(Line, CompanyId)>,
    jobs: &Source<JobLine>,
) -> HashSet<CompanyId> {
    let in_file: HashSet<CompanyId> = companies.records.iter().map(|(_, id)| *id).collect();
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
        if !problems.report(&jobs.path, job.line.number, unknown_company(job.company_id)) {
            break;
        }
    }
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
