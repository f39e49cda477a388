//! `POST /admin/v1/jobs/bulk` and `POST /admin/v1/companies/bulk`: records as JSON Lines,
//! read as they arrive and written a batch at a time, with a report of every line refused and
//! why, in the words of the `import` command.
//!
//! A bad line is refused alone; the others are written. `?dry_run=true` checks every line
//! (form, values, and for a job that its company is stored) and writes nothing, so a client
//! that wants all or nothing checks first. Once the answer comes, every line it counts as
//! written is durable and searchable.

mod lines;

use std::collections::HashMap;

use bytes::Buf;
use http::HeaderMap;
use http_body::Body;
use http_body_util::BodyExt;
use serde::Serialize;

use self::lines::Lines;
use super::AdminApi;
use crate::api::error::ApiError;
use crate::api::handlers::{refuse_compressed, Handled};
use crate::api::params::Params;
use crate::api::routes::Failure;
use crate::api::Reply;
use crate::domain::jsonl::parse_record;
use crate::domain::{Company, Job};
use crate::service::{
    DeferredCompaction, IngestOutcome, JobListingsService, ServiceError, ServiceResult,
    IMPORT_BATCH,
};

/// Lines checked and written at a time, at most: the import batch
/// ([`super::AdminConfig::max_batch_bytes`] cuts a batch of long lines sooner).
const BATCH: usize = IMPORT_BATCH;

/// The media types a bulk body may be sent as.
const NDJSON_TYPES: &[&str] = &[
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/jsonlines",
    "application/x-jsonlines",
];

/// What a bulk upload holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Jobs,
    Companies,
}

/// What a bulk upload wrote and refused.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub(crate) struct Report {
    /// Nothing was written: the lines were only checked.
    dry_run: bool,
    /// Lines that held a record (blank lines are skipped).
    records: usize,
    /// Records written (or, on a dry run, that would be) that were not stored before.
    created: usize,
    /// Records written that replaced a stored one (a repeated id counts once created, then
    /// updated).
    updated: usize,
    /// New active jobs announced to webhook subscribers (jobs, and not on a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    announced: Option<usize>,
    /// Lines refused.
    refused: usize,
    /// The refused lines, first ones first, each with what is wrong with it.
    errors: Vec<LineError>,
    /// More lines were refused than `errors` lists.
    errors_truncated: bool,
}

/// A refused line.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct LineError {
    /// 1-based line number in the body.
    #[schemars(range(min = 1))]
    line: usize,
    /// What is wrong, as the `import` command says it.
    message: String,
}

/// A line of the body with its number.
struct Line {
    number: usize,
    text: Vec<u8>,
}

/// Reads a bulk body as it arrives and writes its records a batch at a time.
pub(super) async fn upload<B>(
    admin: &AdminApi,
    parts: &http::request::Parts,
    body: B,
    kind: Kind,
) -> Handled
where
    B: Body + Send + Unpin,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let dry_run = Params::parse(parts.uri.query(), &["dry_run"], &[])?
        .bool("dry_run")?
        .unwrap_or(false);
    check_media_type(&parts.headers)?;
    refuse_compressed(&parts.headers)?;
    // Held until the answer: the memory uploads hold is bounded by their number.
    let _slot = admin.upload_slot()?;
    let config = admin.config();
    let service = admin.service();
    let mut upload = Upload {
        service,
        kind,
        report: Report {
            dry_run,
            // A dry run writes nothing, so it announces nothing either.
            announced: (kind == Kind::Jobs && !dry_run).then_some(0),
            ..Report::default()
        },
        max_reported: config.max_reported_lines,
        parsing: None,
        written: false,
        compaction: None,
        writing: None,
    };
    let mut body = body;
    let mut lines = Lines::default();
    let mut batch: Vec<Line> = Vec::with_capacity(BATCH);
    let mut batch_bytes = 0;
    let mut number = 0;
    let mut ended = false;
    while !ended {
        let frame = match tokio::time::timeout(config.body_idle_timeout, body.frame()).await {
            Err(_) => {
                let why = format!(
                    "no bytes arrived for {} s",
                    config.body_idle_timeout.as_secs()
                );
                return Err(upload.stop(batch, number + 1, why).await);
            }
            Ok(None) => {
                ended = true;
                None
            }
            Ok(Some(Err(e))) => {
                let e: Box<dyn std::error::Error + Send + Sync> = e.into();
                let why = format!("the body could not be read: {e}");
                return Err(upload.stop(batch, number + 1, why).await);
            }
            Ok(Some(Ok(frame))) => frame.into_data().ok(),
        };
        if let Some(mut data) = frame {
            while data.has_remaining() {
                let chunk = data.chunk();
                lines.push(chunk);
                let n = chunk.len();
                data.advance(n);
            }
        }
        // Every whole line; at the end, the last one even without its newline.
        loop {
            let text = match lines.next_line() {
                Some(text) => text,
                None if ended => match lines.last_line() {
                    Some(text) => text,
                    None => break,
                },
                None => break,
            };
            number += 1;
            if text.len() > config.max_line_bytes {
                let why = too_long(config.max_line_bytes);
                return Err(upload.stop(batch, number, why).await);
            }
            batch_bytes += text.len();
            batch.push(Line {
                number,
                text: text.to_vec(),
            });
            if batch.len() == BATCH || batch_bytes >= config.max_batch_bytes {
                upload.push(std::mem::take(&mut batch)).await?;
                batch_bytes = 0;
            }
        }
        if lines.unfinished() > config.max_line_bytes {
            let why = too_long(config.max_line_bytes);
            return Err(upload.stop(batch, number + 1, why).await);
        }
    }
    upload.push(batch).await?;
    upload.finish().await?;
    Ok(Reply::json(&upload.report, None))
}

fn too_long(limit: usize) -> String {
    format!("the line is longer than {limit} bytes; records are one per line")
}

/// Refuses a body that does not say it is JSON Lines.
fn check_media_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let sent = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    match sent {
        Some(t) if NDJSON_TYPES.contains(&t.as_str()) => Ok(()),
        _ => Err(ApiError::UnsupportedMediaType {
            expected: "application/x-ndjson (one JSON object per line)",
        }),
    }
}

/// One upload's state: what it has written and refused so far, and the batch being parsed
/// while the one before is written.
struct Upload<'s> {
    service: &'s JobListingsService,
    kind: Kind,
    report: Report,
    max_reported: usize,
    parsing: Option<tokio::task::JoinHandle<Parsed>>,
    /// Jobs were written without a flush: the upload flushes before it answers.
    written: bool,
    /// Index compaction held off while jobs are written, done once before the answer: a
    /// large upload in no particular order would otherwise renumber the index every few
    /// percent of growth.
    compaction: Option<DeferredCompaction>,
    /// The batch of jobs being written.
    writing: Option<tokio::task::JoinHandle<ServiceResult<Vec<IngestOutcome>>>>,
}

/// A batch's lines, each parsed into its record or what is wrong with it.
enum Parsed {
    Jobs(Vec<(usize, Option<Result<Job, String>>)>),
    Companies(Vec<(usize, Option<Result<Company, String>>)>),
}

impl Upload<'_> {
    /// The upload cannot go on at line `line`: writes the lines before it that are still
    /// waiting in `batch`, then says why it stopped and what was written.
    async fn stop(&mut self, batch: Vec<Line>, line: usize, why: String) -> Failure {
        if let Err(failed) = self.push(batch).await {
            return failed;
        }
        if let Err(failed) = self.finish().await {
            return failed;
        }
        let r = &self.report;
        let written = if r.dry_run {
            "nothing was written (dry run)".to_owned()
        } else {
            format!(
                "every line before it was read: {} records written ({} created, {} updated) and {} refused",
                r.created + r.updated,
                r.created,
                r.updated,
                r.refused
            )
        };
        ApiError::InvalidBody(format!(
            "the upload stopped at line {line}: {why}; {written}"
        ))
        .into()
    }

    fn refuse(&mut self, line: usize, message: String) {
        self.report.refused += 1;
        if self.report.errors.len() < self.max_reported {
            self.report.errors.push(LineError { line, message });
        } else {
            self.report.errors_truncated = true;
        }
    }

    /// Starts parsing a batch of lines (off the async threads: parsing is most of an upload's
    /// work), and meanwhile checks and writes the batch parsed before it.
    async fn push(&mut self, lines: Vec<Line>) -> Result<(), Failure> {
        let next = (!lines.is_empty()).then(|| parse(self.kind, lines));
        match std::mem::replace(&mut self.parsing, next) {
            Some(previous) => self.write(previous).await,
            None => Ok(()),
        }
    }

    /// Writes the last batch, then makes every write durable.
    async fn finish(&mut self) -> Result<(), Failure> {
        if let Some(last) = self.parsing.take() {
            self.write(last).await?;
        }
        self.settle_writing().await?;
        if self.written {
            self.service.flush_jobs().await?;
            self.written = false;
        }
        if let Some(compaction) = self.compaction.take() {
            compaction.finish().await;
        }
        Ok(())
    }

    /// Checks a parsed batch and writes its good records.
    async fn write(&mut self, parsing: tokio::task::JoinHandle<Parsed>) -> Result<(), Failure> {
        // Only a panic in the parser fails the task.
        let parsed = parsing
            .await
            .map_err(|e| ApiError::InvalidBody(format!("the lines could not be parsed: {e}")))?;
        match parsed {
            Parsed::Jobs(jobs) => self.jobs(jobs).await,
            Parsed::Companies(companies) => self.companies(companies).await,
        }
    }

    async fn jobs(
        &mut self,
        parsed: Vec<(usize, Option<Result<Job, String>>)>,
    ) -> Result<(), Failure> {
        let mut good: Vec<Job> = Vec::with_capacity(parsed.len());
        for (line, record) in parsed {
            match record {
                None => {}
                Some(Err(message)) => {
                    self.report.records += 1;
                    self.refuse(line, message);
                }
                Some(Ok(job)) if !self.service.has_company(job.company_id) => {
                    self.report.records += 1;
                    self.refuse(
                        line,
                        format!(
                            "company_id: company {} is unknown; write the company first \
                             (PUT /admin/v1/companies/{{id}} or POST /admin/v1/companies/bulk)",
                            job.company_id
                        ),
                    );
                }
                Some(Ok(job)) => {
                    self.report.records += 1;
                    good.push(job);
                }
            }
        }
        let (jobs, repeats) = last_of_each(good, |j| j.id);
        if self.report.dry_run {
            for job in &jobs {
                let stored = self.service.stored_job(job.id).await;
                match stored {
                    Ok(_) => self.report.updated += 1,
                    Err(ServiceError::NotFound { .. }) => self.report.created += 1,
                    Err(e) => return Err(e.into()),
                }
            }
            self.report.updated += repeats;
            return Ok(());
        }
        if jobs.is_empty() {
            return Ok(());
        }
        // In id order, the store fills its tree along rather than here and there.
        let mut jobs = jobs;
        jobs.sort_by_key(|j| j.id);
        self.written = true;
        if self.compaction.is_none() {
            self.compaction = Some(self.service.defer_index_compaction());
        }
        self.report.updated += repeats;
        // Written while the next batch is read and parsed; one batch in flight at a time.
        self.settle_writing().await?;
        let service = self.service.clone();
        self.writing = Some(tokio::spawn(async move {
            service.upsert_jobs_deferred(jobs).await
        }));
        Ok(())
    }

    /// Waits for the batch being written, and counts what it wrote.
    async fn settle_writing(&mut self) -> Result<(), Failure> {
        let Some(writing) = self.writing.take() else {
            return Ok(());
        };
        let outcomes = writing.await.map_err(|e| {
            ServiceError::Store(crate::store::StoreError::backend("writing a batch", e))
        })??;
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
    ) -> Result<(), Failure> {
        let mut good = Vec::with_capacity(parsed.len());
        for (line, record) in parsed {
            match record {
                None => {}
                Some(Err(message)) => {
                    self.report.records += 1;
                    self.refuse(line, message);
                }
                Some(Ok(company)) => {
                    self.report.records += 1;
                    good.push(company);
                }
            }
        }
        let (companies, repeats) = last_of_each(good, |c: &Company| c.id);
        let known = companies
            .iter()
            .filter(|c| self.service.has_company(c.id))
            .count();
        if !self.report.dry_run && !companies.is_empty() {
            let len = companies.len();
            self.service.upsert_companies(companies).await?;
            self.report.created += len - known;
        } else {
            self.report.created += companies.len() - known;
        }
        self.report.updated += known + repeats;
        Ok(())
    }
}

/// Parses a batch's lines on a blocking thread.
fn parse(kind: Kind, lines: Vec<Line>) -> tokio::task::JoinHandle<Parsed> {
    fn each<T: serde::de::DeserializeOwned>(
        lines: Vec<Line>,
        validate: fn(&T) -> Result<(), crate::domain::DomainError>,
    ) -> Vec<(usize, Option<Result<T, String>>)> {
        lines
            .into_iter()
            .map(|l| (l.number, parse_record(&l.text, l.number == 1, validate)))
            .collect()
    }
    tokio::task::spawn_blocking(move || match kind {
        Kind::Jobs => Parsed::Jobs(each(lines, Job::validate)),
        Kind::Companies => Parsed::Companies(each(lines, Company::validate)),
    })
}

/// The records with repeated ids reduced to the last of each (as a file read in order
/// would leave them), in first-seen order, and how many earlier ones were dropped.
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
