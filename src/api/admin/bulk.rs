//! `POST /admin/v1/jobs/bulk` and `POST /admin/v1/companies/bulk`: records as JSON Lines,
//! read as they arrive and handed to the service's import of lines
//! ([`JobListingsService::import_lines`](crate::service::JobListingsService::import_lines)),
//! which checks and writes them a batch at a time and reports every line refused and why.
//!
//! A bad line is refused alone; the others are written. `?dry_run=true` checks every line
//! (form, values, and for a job that its company is stored) and writes nothing, so a client
//! that wants all or nothing checks first. Once the answer comes, every line it counts as
//! written is durable and searchable.

mod lines;

use bytes::Buf;
use http::HeaderMap;
use http_body::Body;
use http_body_util::BodyExt;

use self::lines::Lines;
use super::AdminApi;
use crate::api::error::ApiError;
use crate::api::handlers::{refuse_compressed, Handled};
use crate::api::params::{takes, Params, Takes};
use crate::api::routes::Failure;
use crate::api::Reply;
use crate::service::LineImport;

/// The media types a bulk body may be sent as.
const NDJSON_TYPES: &[&str] = &[
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/jsonlines",
    "application/x-jsonlines",
];

/// What a bulk upload holds.
pub(super) use crate::service::RecordKind as Kind;

/// Reads a bulk body as it arrives and writes its records a batch at a time.
/// What the uploads take: `dry_run`.
const UPLOAD_QUERY: Takes = takes!(super::endpoints::BULK_JOBS);

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
    let dry_run = Params::parse(parts.uri.query(), &UPLOAD_QUERY)?
        .bool("dry_run")?
        .unwrap_or(false);
    check_media_type(&parts.headers)?;
    refuse_compressed(&parts.headers)?;
    // Held until the answer: the memory uploads hold is bounded by their number.
    let _slot = admin.upload_slot()?;
    let config = admin.config();
    let mut import = admin
        .service()
        .import_lines(kind)
        .dry_run(dry_run)
        .max_reported(config.max_reported_lines)
        .max_batch_bytes(config.max_batch_bytes);
    let mut body = body;
    let mut lines = Lines::default();
    let mut number = 0;
    let mut ended = false;
    while !ended {
        let frame = match tokio::time::timeout(config.body_idle_timeout, body.frame()).await {
            Err(_) => {
                let why = format!(
                    "no bytes arrived for {} s",
                    config.body_idle_timeout.as_secs()
                );
                return Err(stop(import, number + 1, &why).await);
            }
            Ok(None) => {
                ended = true;
                None
            }
            Ok(Some(Err(e))) => {
                let e: Box<dyn std::error::Error + Send + Sync> = e.into();
                let why = format!("the body could not be read: {e}");
                return Err(stop(import, number + 1, &why).await);
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
                return Err(stop(import, number, &why).await);
            }
            import.line(number, text).await?;
        }
        if lines.unfinished() > config.max_line_bytes {
            let why = too_long(config.max_line_bytes);
            return Err(stop(import, number + 1, &why).await);
        }
    }
    let report = import.finish().await?;
    Ok(Reply::json(&report, None))
}

/// The body cannot go on at line `line`: the lines before it are written, and the answer
/// says where and why it stopped and what was written.
async fn stop(import: LineImport, line: usize, why: &str) -> Failure {
    match import.stop(line, why).await {
        Ok(said) => ApiError::InvalidBody(said).into(),
        Err(e) => e.into(),
    }
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
