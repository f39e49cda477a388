//! `GET /changes`: the job change feed.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::Request;
use serde::Serialize;

use super::Handled;
use crate::api::params::{changes_query, Params, CHANGE_LISTS, CHANGE_PARAMS};
use crate::api::render::render;
use crate::api::{Api, Reply};
use crate::domain::{ChangeKind, FeedCursor, JobId};
use crate::query::JobFilter;
use crate::service::{Caller, ChangeEvent};

/// An event as sent, but for its job, which is spliced in from the render cache.
#[derive(Serialize)]
struct EventHead {
    cursor: FeedCursor,
    #[serde(rename = "type")]
    kind: ChangeKind,
    occurred_at: DateTime<Utc>,
    job_id: JobId,
}

/// Everything of a page after its `data`.
#[derive(Serialize)]
struct PageTail {
    next_cursor: FeedCursor,
    has_more: bool,
    links: NextLink,
    meta: FeedMeta,
}

#[derive(Serialize)]
struct NextLink {
    next: String,
}

#[derive(Serialize)]
struct FeedMeta {
    filters: JobFilter,
    retention_days: u64,
}

/// One page of events after the cursor, oldest first, each with the job as the event left it.
pub(crate) async fn list(api: &Api, caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), CHANGE_PARAMS, CHANGE_LISTS)?;
    let query = changes_query(&params)?;
    let filters = query.filter.clone();
    let page = caller.changes(query).await?;
    let (page, quota) = (page.value, page.quota);
    let rendered = api.rendered();
    let mut out = Vec::with_capacity(256 + page.events.len() * 1024);
    out.extend_from_slice(b"{\"data\":[");
    for (i, event) in page.events.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_event(&mut out, event, |job| rendered.job(job));
    }
    out.extend_from_slice(b"],");
    let tail = render(&PageTail {
        next_cursor: page.next_cursor,
        has_more: page.has_more,
        links: NextLink {
            next: next_link(&params.without("after"), page.next_cursor),
        },
        meta: FeedMeta {
            filters,
            retention_days: page.retention.as_secs() / 86_400,
        },
    });
    // The tail's own opening brace is the page's, already written.
    out.extend_from_slice(tail.get(1..).unwrap_or_default());
    Ok(Reply::json_bytes(out, Some(quota)))
}

/// Writes one event: its head, then its job as rendered (or `null`).
fn write_event(
    out: &mut Vec<u8>,
    event: &ChangeEvent,
    job_json: impl Fn(&crate::domain::Job) -> Bytes,
) {
    let head = render(&EventHead {
        cursor: event.cursor,
        kind: event.kind,
        occurred_at: event.occurred_at,
        job_id: event.job_id,
    });
    // The head without its closing brace, then the job.
    out.extend_from_slice(head.get(..head.len().saturating_sub(1)).unwrap_or_default());
    out.extend_from_slice(b",\"job\":");
    match &event.job {
        Some(job) => out.extend_from_slice(&job_json(job)),
        None => out.extend_from_slice(b"null"),
    }
    out.push(b'}');
}

/// The link to the next page: the same filters, from `cursor`.
fn next_link(other_params: &str, cursor: FeedCursor) -> String {
    if other_params.is_empty() {
        format!("/api/v1/changes?after={cursor}")
    } else {
        format!("/api/v1/changes?{other_params}&after={cursor}")
    }
}
