//! `/admin/v1/jobs/{id}`: read, create or replace, and close one job; and
//! `/admin/v1/jobs/close-unseen`: close those the crawler stopped seeing.

use bytes::Bytes;
use http::{Request, StatusCode};

use super::json_with_status;
use super::wire::{CloseUnseen, UnseenClosedView};
use crate::api::error::ApiError;
use crate::api::handlers::{json_object, no_body, no_params, Handled};
use crate::api::Reply;
use crate::domain::{DomainError, Job, JobId};
use crate::service::JobListingsService;

/// One job as stored, active or closed.
pub(super) async fn get(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let job = service.stored_job(JobId::parse(id)?).await?;
    Ok(Reply::json(&*job, None))
}

/// Creates (201) or replaces (200) a job; the body is the job as the `import` command reads
/// it, its `id` the path's or left out.
pub(super) async fn put(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let id = JobId::parse(id)?;
    let job: Job = record_with_id(req, &id.to_string(), Job::validate)?;
    let outcome = service.upsert_job(job).await?;
    let stored = service.stored_job(outcome.id).await?;
    let status = if outcome.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json_with_status(status, &*stored))
}

/// Closes a job: it leaves searches at once; its detail says it is closed.
pub(super) async fn close(service: &JobListingsService, id: &str, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    no_body(req)?;
    let job = service.close_job(JobId::parse(id)?).await?;
    Ok(Reply::json(&job, None))
}

/// Closes the active jobs last seen before a time, or counts them on a dry run.
pub(super) async fn close_unseen(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let asked: CloseUnseen = json_object(
        req,
        &["seen_before", "dry_run"],
        "with `seen_before`, an RFC 3339 time, and optionally `dry_run`",
    )?;
    let done = service
        .close_unseen_jobs(asked.seen_before, asked.dry_run)
        .await?;
    Ok(Reply::json(
        &UnseenClosedView {
            seen_before: asked.seen_before,
            dry_run: asked.dry_run,
            matched: done.matched,
            closed: done.closed,
        },
        None,
    ))
}

/// Deletes a job for good (204): unlike a closed one, nothing of it stays.
pub(super) async fn delete(
    service: &JobListingsService,
    id: &str,
    req: &Request<Bytes>,
) -> Handled {
    no_params(req)?;
    no_body(req)?;
    service.delete_job(JobId::parse(id)?).await?;
    Ok(Reply::new(StatusCode::NO_CONTENT, None, None))
}

/// A record body in the form of an import line, read as the `import` command reads a line
/// (same checks, same messages); its `id` must be the path's, or is taken from it when left
/// out.
pub(super) fn record_with_id<T: serde::de::DeserializeOwned>(
    req: &Request<Bytes>,
    id: &str,
    validate: fn(&T) -> Result<(), DomainError>,
) -> Result<T, ApiError> {
    let mut body: serde_json::Map<String, serde_json::Value> =
        json_object(req, &[], "in the form of an import line")?;
    // Read the body as sent, so that a message's column is the client's; one without an id
    // is read with the path's put in (its columns then count in that form).
    let with_id;
    let text: &[u8] = match body.get("id") {
        None => {
            body.insert("id".to_owned(), serde_json::Value::String(id.to_owned()));
            with_id = serde_json::to_vec(&body).unwrap_or_default();
            &with_id
        }
        Some(given) if given.as_str() == Some(id) => req.body(),
        Some(_) => {
            return Err(DomainError::new(
                "id",
                "differs from the id in the path; leave it out or send the same one",
            )
            .into())
        }
    };
    match crate::domain::jsonl::parse_record(text, false, validate) {
        Some(Ok(record)) => Ok(record),
        Some(Err(problem)) => Err(ApiError::InvalidBody(problem)),
        None => Err(ApiError::InvalidBody("the body is empty".into())),
    }
}
