//! Records as JSON Lines, checked and written a batch at a time, with every refused line
//! reported by its number: the one import routine, behind the admin API's bulk uploads and
//! the server's `import` command alike, so both say the same words about the same line.
//!
//! A bad line is refused alone; the others are written. A dry run checks every line (form,
//! values, and for a job that its company is stored) and writes nothing, so a caller that
//! wants all or nothing checks first. Once [`LineImport::finish`] returns, every line the
//! report counts as written is durable and searchable.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::import::{ImportError, ImportSummary, IMPORT_BATCH};
use super::ingest::{DeferredCompaction, IngestOutcome};
use super::{JobListingsService, ServiceError, ServiceResult};
use crate::domain::jsonl::parse_record;
use crate::domain::{Company, CompanyId, DomainError, Job};
use crate::store::StoreError;

/// What the lines of an import hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordKind {
    /// Jobs, in the serde form of [`Job`].
    Jobs,
    /// Companies, in the serde form of [`Company`].
    Companies,
}

/// What an import of lines did: the answer of the admin API's bulk uploads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct BulkReport {
    /// Nothing was written: the lines were only checked.
    pub dry_run: bool,
    /// Lines that held a record (blank lines are skipped).
    pub records: usize,
    /// Records written (or, on a dry run, that would be) that were not stored before.
    pub created: usize,
    /// Records written that replaced a stored one (a repeated id counts once created, then
    /// updated).
    pub updated: usize,
    /// New active jobs announced to webhook subscribers (jobs, and not on a dry run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announced: Option<usize>,
    /// Lines refused.
    pub refused: usize,
    /// The refused lines, first ones first, each with what is wrong with it.
    pub errors: Vec<LineError>,
    /// More lines were refused than `errors` lists.
    pub errors_truncated: bool,
}

/// A refused line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct LineError {
    /// 1-based line number in the input.
    #[schemars(range(min = 1))]
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl LineError {
    /// A refused line and why.
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// What is said of a job whose company is not stored: by every import, so that the same
/// line gets the same words whichever way it came.
pub fn unknown_company(id: CompanyId) -> String {
    format!(
        "company_id: company {id} is unknown; import the company first, or write it \
         (PUT /admin/v1/companies/{{id}})"
    )
}

/// Reads a record from one line, as every import does: `None` for a blank line, else the
/// record or what is wrong with it (column, field and what to fix). Line 1 may start with a
/// byte order mark.
pub fn read_record<T: RecordLine>(number: usize, text: &[u8]) -> Option<Result<T, String>> {
    parse_record(text, number == 1, T::validate_record)
}

/// A record an import reads from a line.
pub trait RecordLine: serde::de::DeserializeOwned + Send + 'static {
    /// Checks the record's values once it is read.
    fn validate_record(&self) -> Result<(), DomainError>;
}

impl RecordLine for Job {
    fn validate_record(&self) -> Result<(), DomainError> {
        self.validate()
    }
}

impl RecordLine for Company {
    fn validate_record(&self) -> Result<(), DomainError> {
        self.validate()
    }
}

/// An import of lines under way: lines go in with [`LineImport::line`], in any order and
/// with any numbers, and are checked and written [`IMPORT_BATCH`] at a time (fewer when
/// their bytes reach the batch's byte limit), each batch parsed while the one before is
/// written.
#[must_use = "nothing is durable until the import is finished"]
pub struct LineImport {
    service: JobListingsService,
    kind: RecordKind,
    report: BulkReport,
    max_reported: usize,
    max_batch_bytes: usize,
    batch: Vec<(usize, Vec<u8>)>,
    batch_bytes: usize,
    parsing: Option<tokio::task::JoinHandle<Parsed>>,
    /// Jobs were written without a flush: the import flushes before it ends.
    written: bool,
    /// Index compaction held off while jobs are written, done once at the end: a large import
    /// in no particular order would otherwise renumber the index every few percent of growth.
    compaction: Option<DeferredCompaction>,
    /// The batch of jobs being written.
    writing: Option<tokio::task::JoinHandle<ServiceResult<Vec<IngestOutcome>>>>,
    /// The lines come in ascending job id order: jobs go through the sorted import.
    in_id_order: bool,
    /// The sorted import under way.
    sorted: Option<SortedLoad>,
}

/// Jobs handed to [`JobListingsService::import_sorted_jobs`] a batch at a time.
struct SortedLoad {
    batches: tokio::sync::mpsc::Sender<Vec<Job>>,
    /// The jobs with the highest id seen, held back: the next lines may hold that id again,
    /// and no id may be in two batches.
    held_back: Vec<Job>,
    /// Jobs written so far.
    written: Arc<AtomicUsize>,
    importing:
        tokio::task::JoinHandle<Result<ImportSummary, ImportError<std::convert::Infallible>>>,
}

impl SortedLoad {
    fn start(service: &JobListingsService) -> Self {
        // One batch waits while one is read: the sorted import reads one ahead itself.
        let (batches, mut arriving) = tokio::sync::mpsc::channel(1);
        let written = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&written);
        let service = service.clone();
        let importing = tokio::spawn(async move {
            let batches = std::iter::from_fn(move || arriving.blocking_recv().map(Ok));
            service
                .import_sorted_jobs(batches, move |n| count.store(n, Ordering::Relaxed))
                .await
        });
        Self {
            batches,
            held_back: Vec::new(),
            written,
            importing,
        }
    }

    /// Hands on `jobs` (sorted by id) and the jobs held back before them, holding back those
    /// with the highest id; `false` once the import has stopped.
    async fn send(&mut self, jobs: Vec<Job>) -> bool {
        let mut batch = std::mem::take(&mut self.held_back);
        batch.extend(jobs);
        let Some(highest) = batch.last().map(|j| j.id) else {
            return true;
        };
        self.held_back = batch.split_off(batch.partition_point(|j| j.id < highest));
        batch.is_empty() || self.batches.send(batch).await.is_ok()
    }

    /// Hands on what is held back and waits for the import to end.
    async fn finish(mut self) -> ServiceResult<ImportSummary> {
        let rest = std::mem::take(&mut self.held_back);
        if !rest.is_empty() {
            // Should the import have stopped, its error says why.
            let _ = self.batches.send(rest).await;
        }
        drop(self.batches);
        match self
            .importing
            .await
            .map_err(|e| StoreError::backend("importing jobs", e))?
        {
            Ok(summary) => Ok(summary),
            Err(ImportError::Service(e)) => Err(e),
            Err(ImportError::Source(never)) => match never {},
        }
    }
}

/// A batch's lines, each read into its record or what is wrong with it.
enum Parsed {
    Jobs(Vec<(usize, Option<Result<Job, String>>)>),
    Companies(Vec<(usize, Option<Result<Company, String>>)>),
}

impl JobListingsService {
    /// Starts an import of records of `kind` from lines: see [`LineImport`].
    pub fn import_lines(&self, kind: RecordKind) -> LineImport {
        LineImport {
            service: self.clone(),
            kind,
            report: BulkReport {
                announced: (kind == RecordKind::Jobs).then_some(0),
                ..BulkReport::default()
            },
            max_reported: 1_000,
            max_batch_bytes: usize::MAX,
            batch: Vec::with_capacity(IMPORT_BATCH),
            batch_bytes: 0,
            parsing: None,
            written: false,
            compaction: None,
            writing: None,
            in_id_order: false,
            sorted: None,
        }
    }
}

impl LineImport {
    /// Checks every line and writes nothing (default: off).
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.report.dry_run = dry_run;
        // A dry run writes nothing, so it announces nothing either.
        self.report.announced = (self.kind == RecordKind::Jobs && !dry_run).then_some(0);
        self
    }

    /// Lists at most this many refused lines in the report (default 1,000); the others are
    /// counted.
    pub fn max_reported(mut self, lines: usize) -> Self {
        self.max_reported = lines;
        self
    }

    /// Ends a batch early once its lines hold this many bytes (default: no limit), which
    /// bounds the memory a batch of long lines takes.
    pub fn max_batch_bytes(mut self, bytes: usize) -> Self {
        self.max_batch_bytes = bytes;
        self
    }

    /// The lines come in ascending job id order, and nothing else writes jobs until the
    /// import finishes (default: off), as in an offline load of a sorted file. The jobs are
    /// then indexed on a copy of the index on a thread of their own, while the next batch is
    /// read and written, and the copy replaces the live index at the end; other job writes
    /// wait until then. A job whose id comes before one already written stops the import.
    pub fn in_id_order(mut self, in_id_order: bool) -> Self {
        self.in_id_order = in_id_order;
        self
    }

    /// What the import has done so far.
    pub fn report(&self) -> &BulkReport {
        &self.report
    }

    /// Records written so far.
    pub fn written(&self) -> usize {
        let sorted = self
            .sorted
            .as_ref()
            .map_or(0, |load| load.written.load(Ordering::Relaxed));
        self.report.created + self.report.updated + sorted
    }

    /// Adds line `number`, without its newline. A storage failure stops the import: the
    /// batches written before stay written.
    pub async fn line(&mut self, number: usize, text: &[u8]) -> ServiceResult<()> {
        self.batch_bytes += text.len();
        self.batch.push((number, text.to_vec()));
        if self.batch.len() >= IMPORT_BATCH || self.batch_bytes >= self.max_batch_bytes {
            self.push_batch().await?;
        }
        Ok(())
    }

    /// Writes the lines still waiting, makes every write durable and returns the report.
    pub async fn finish(mut self) -> ServiceResult<BulkReport> {
        self.settle().await?;
        Ok(self.report)
    }

    /// The input cannot go on at line `line` (`why` says why): writes the lines before it
    /// that are still waiting, and returns what to say: where the import stopped, why, and
    /// what was written.
    pub async fn stop(mut self, line: usize, why: &str) -> ServiceResult<String> {
        self.settle().await?;
        let r = &self.report;
        let written = if r.dry_run {
            "nothing was written (dry run)".to_owned()
        } else {
            format!(
                "every line before it was read: {} records written ({} created, {} updated) \
                 and {} refused",
                r.created + r.updated,
                r.created,
                r.updated,
                r.refused
            )
        };
        Ok(format!(
            "the upload stopped at line {line}: {why}; {written}"
        ))
    }

    /// Writes what is waiting, then makes every write durable.
    async fn settle(&mut self) -> ServiceResult<()> {
        self.push_batch().await?;
        if let Some(last) = self.parsing.take() {
            self.write(last).await?;
        }
        self.settle_writing().await?;
        if let Some(load) = self.sorted.take() {
            let summary = load.finish().await?;
            self.report.created += summary.created;
            self.report.updated += summary.updated;
            *self.report.announced.get_or_insert(0) += summary.announced;
        }
        if self.written {
            self.service.flush_jobs().await?;
            self.written = false;
        }
        if let Some(compaction) = self.compaction.take() {
            compaction.finish().await;
        }
        Ok(())
    }

    /// Starts parsing the waiting lines (off the async threads: parsing is most of an
    /// import's work), and meanwhile checks and writes the batch parsed before them.
    async fn push_batch(&mut self) -> ServiceResult<()> {
        self.batch_bytes = 0;
        let lines = std::mem::replace(&mut self.batch, Vec::with_capacity(IMPORT_BATCH));
        let next = (!lines.is_empty()).then(|| parse(self.kind, lines));
        match std::mem::replace(&mut self.parsing, next) {
            Some(previous) => self.write(previous).await,
            None => Ok(()),
        }
    }

    fn refuse(&mut self, line: usize, message: String) {
        self.report.refused += 1;
        if self.report.errors.len() < self.max_reported {
            self.report.errors.push(LineError { line, message });
        } else {
            self.report.errors_truncated = true;
        }
    }

    /// Checks a parsed batch and writes its good records.
    async fn write(&mut self, parsing: tokio::task::JoinHandle<Parsed>) -> ServiceResult<()> {
        // Only a panic in the parser fails the task.
        let parsed = parsing
            .await
            .map_err(|e| StoreError::backend("parsing a batch of lines", e))?;
        match parsed {
            Parsed::Jobs(jobs) => self.jobs(jobs).await,
            Parsed::Companies(companies) => self.companies(companies).await,
        }
    }

    /// The records read, counted; the lines that are not records refused.
    fn records<T>(&mut self, parsed: Vec<(usize, Option<Result<T, String>>)>) -> Vec<(usize, T)> {
        let mut good = Vec::with_capacity(parsed.len());
        for (line, record) in parsed {
            match record {
                None => {}
                Some(Err(message)) => {
                    self.report.records += 1;
                    self.refuse(line, message);
                }
                Some(Ok(record)) => {
                    self.report.records += 1;
                    good.push((line, record));
                }
            }
        }
        good
    }

    async fn jobs(
        &mut self,
        parsed: Vec<(usize, Option<Result<Job, String>>)>,
    ) -> ServiceResult<()> {
        let mut good: Vec<Job> = Vec::with_capacity(parsed.len());
        for (line, job) in self.records(parsed) {
            if self.service.has_company(job.company_id) {
                good.push(job);
            } else {
                self.refuse(line, unknown_company(job.company_id));
            }
        }
        let (jobs, repeats) = last_of_each(good, |j| j.id);
        self.report.updated += repeats;
        if self.report.dry_run {
            for job in &jobs {
                match self.service.stored_job(job.id).await {
                    Ok(_) => self.report.updated += 1,
                    Err(ServiceError::NotFound { .. }) => self.report.created += 1,
                    Err(e) => return Err(e),
                }
            }
            return Ok(());
        }
        if jobs.is_empty() {
            return Ok(());
        }
        // In id order, the store fills its tree along rather than here and there.
        let mut jobs = jobs;
        jobs.sort_by_key(|j| j.id);
        if self.in_id_order {
            let load = self
                .sorted
                .get_or_insert_with(|| SortedLoad::start(&self.service));
            if load.send(jobs).await {
                return Ok(());
            }
            // The import stopped: its error says why.
            let Some(load) = self.sorted.take() else {
                return Ok(());
            };
            return Err(match load.finish().await {
                Err(e) => e,
                Ok(_) => StoreError::backend("importing jobs", "the import ended early").into(),
            });
        }
        self.written = true;
        if self.compaction.is_none() {
            self.compaction = Some(self.service.defer_index_compaction());
        }
        // Written while the next batch is read and parsed; one batch in flight at a time.
        self.settle_writing().await?;
        let service = self.service.clone();
        self.writing = Some(tokio::spawn(async move {
            service.upsert_jobs_deferred(jobs).await
        }));
        Ok(())
    }

    /// Waits for the batch being written, and counts what it wrote.
    async fn settle_writing(&mut self) -> ServiceResult<()> {
        let Some(writing) = self.writing.take() else {
            return Ok(());
        };
        let outcomes = writing
            .await
            .map_err(|e| StoreError::backend("writing a batch", e))??;
        for o in outcomes {
            if o.created {
                self.report.created += 1;
            } else {
                self.report.updated += 1;
            }
            if o.announced {
                *self.report.announced.get_or_insert(0) += 1;
            }
        }
        Ok(())
    }

    async fn companies(
        &mut self,
        parsed: Vec<(usize, Option<Result<Company, String>>)>,
    ) -> ServiceResult<()> {
        let good: Vec<Company> = self.records(parsed).into_iter().map(|(_, c)| c).collect();
        let (companies, repeats) = last_of_each(good, |c: &Company| c.id);
        self.report.updated += repeats;
        let written = if self.report.dry_run {
            let known = companies
                .iter()
                .filter(|c| self.service.has_company(c.id))
                .count();
            (companies.len() - known, known)
        } else {
            self.service.import_companies(companies).await?
        };
        self.report.created += written.0;
        self.report.updated += written.1;
        Ok(())
    }
}

impl JobListingsService {
    /// Adds or updates companies [`IMPORT_BATCH`] at a time, as every import writes them;
    /// returns how many were new and how many replaced a stored one. Should storage fail, the
    /// batches before stay written.
    pub async fn import_companies(&self, companies: Vec<Company>) -> ServiceResult<(usize, usize)> {
        let (mut created, mut updated) = (0, 0);
        let mut rest = companies.into_iter().peekable();
        while rest.peek().is_some() {
            let batch: Vec<Company> = rest.by_ref().take(IMPORT_BATCH).collect();
            let known = batch.iter().filter(|c| self.has_company(c.id)).count();
            let len = batch.len();
            self.upsert_companies(batch).await?;
            created += len - known;
            updated += known;
        }
        Ok((created, updated))
    }
}

/// Parses a batch's lines on blocking threads, a share of the lines on each core.
fn parse(kind: RecordKind, lines: Vec<(usize, Vec<u8>)>) -> tokio::task::JoinHandle<Parsed> {
    fn each<T: RecordLine>(
        lines: Vec<(usize, Vec<u8>)>,
    ) -> Vec<(usize, Option<Result<T, String>>)> {
        lines
            .into_iter()
            .map(|(number, text)| (number, read_record(number, &text)))
            .collect()
    }
    async fn shared<T: RecordLine>(
        lines: Vec<(usize, Vec<u8>)>,
    ) -> Vec<(usize, Option<Result<T, String>>)> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let share = lines.len().div_ceil(cores).max(256);
        let mut rest = lines.into_iter().peekable();
        let mut parts = Vec::new();
        while rest.peek().is_some() {
            let part: Vec<_> = rest.by_ref().take(share).collect();
            parts.push(tokio::task::spawn_blocking(move || each::<T>(part)));
        }
        let mut parsed = Vec::new();
        for part in parts {
            match part.await {
                Ok(p) => parsed.extend(p),
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        parsed
    }
    tokio::spawn(async move {
        match kind {
            RecordKind::Jobs => Parsed::Jobs(shared(lines).await),
            RecordKind::Companies => Parsed::Companies(shared(lines).await),
        }
    })
}

/// The records with repeated ids reduced to the last of each (as input read in order would
/// leave them), in first-seen order, and how many earlier ones were dropped.
fn last_of_each<T, K>(records: Vec<T>, id: impl Fn(&T) -> K) -> (Vec<T>, usize)
where
    K: std::hash::Hash + Eq,
{
    let total = records.len();
    let mut at: HashMap<K, usize> = HashMap::with_capacity(total);
    let mut kept: Vec<T> = Vec::with_capacity(total);
    for record in records {
        match at.get(&id(&record)) {
            Some(&i) => kept[i] = record,
            None => {
                at.insert(id(&record), kept.len());
                kept.push(record);
            }
        }
    }
    let repeats = total - kept.len();
    (kept, repeats)
}

#[cfg(test)]
mod tests {
    use super::last_of_each;

    #[test]
    fn the_last_record_of_an_id_wins_in_first_seen_order() {
        let (kept, repeats) = last_of_each(vec![(1, "a"), (2, "b"), (1, "c")], |r| r.0);
        assert_eq!(kept, vec![(1, "c"), (2, "b")]);
        assert_eq!(repeats, 1);
    }
}
