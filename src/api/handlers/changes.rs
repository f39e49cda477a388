//! `GET /changes`: the job change feed.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::Request;
use schemars::JsonSchema;
use serde::Serialize;

use super::Handled;
use crate::api::params::{changes_query, Params, CHANGE_LISTS, CHANGE_PARAMS};
use crate::api::render::{render, JobView};
use crate::api::{Api, Reply};
use crate::domain::{ChangeKind, FeedCursor, JobId};
use crate::query::JobFilter;
use crate::service::{Caller, ChangeEvent};

/// One event of the change feed.
// What `write_event` writes, as a type: the schema's source (the test below holds the two to
// each other).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "ChangeEvent")]
pub(crate) struct ChangeEventView<'a> {
    #[serde(flatten)]
    head: EventHead,
    /// The job as the event left it; null for `job.deleted`, and for events of a job deleted
    /// since.
    job: Option<JobView<'a>>,
}

/// A page of the change feed.
// What `list` writes, as a type.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "ChangePage")]
pub(crate) struct ChangePage<'a> {
    /// The events, oldest first.
    data: Vec<ChangeEventView<'a>>,
    #[serde(flatten)]
    tail: PageTail,
}

/// An event as sent, but for its job, which is spliced in from the render cache.
#[derive(Serialize, JsonSchema)]
struct EventHead {
    /// The event's place in the feed: `after` this cursor gives the events after it.
    cursor: FeedCursor,
    /// What happened: the job became active for the first time, changed (or was opened
    /// again), closed, or was deleted by the operator.
    #[serde(rename = "type")]
    kind: ChangeKind,
    /// When it happened (the job's `updated_at` as the event left it).
    occurred_at: DateTime<Utc>,
    /// The job it happened to.
    job_id: JobId,
}

/// Everything of a page after its `data`.
#[derive(Serialize, JsonSchema)]
struct PageTail {
    /// Where to continue from (`after`): the last event read, or where the page started when
    /// it read none.
    next_cursor: FeedCursor,
    /// Whether more events are waiting now: ask again at once rather than after a pause.
    has_more: bool,
    links: NextLink,
    meta: FeedMeta,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct NextLink {
    /// The next page: the same filters, after `next_cursor`.
    next: String,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct FeedMeta {
    filters: JobFilter,
    /// How many days the feed keeps events.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::render::RenderCache;
    use crate::demo::Dataset;

    /// The bytes a page is written as are those of its type, whose schema the API document
    /// gives.
    #[test]
    fn a_page_written_around_rendered_jobs_equals_the_typed_encoding() {
        let data = Dataset::generate(2, 3, 3);
        let cache = RenderCache::new(0);
        let events: Vec<ChangeEvent> = data
            .jobs
            .iter()
            .enumerate()
            .map(|(i, job)| ChangeEvent {
                cursor: FeedCursor(i as u64 + 7),
                kind: ChangeKind::ALL[i % ChangeKind::ALL.len()],
                occurred_at: job.updated_at,
                job_id: job.id,
                job: (i % 2 == 0).then(|| std::sync::Arc::new(job.clone())),
            })
            .collect();
        let tail = || PageTail {
            next_cursor: FeedCursor(99),
            has_more: true,
            links: NextLink {
                next: next_link("domain=ai", FeedCursor(99)),
            },
            meta: FeedMeta {
                filters: JobFilter::default(),
                retention_days: 30,
            },
        };
        let mut written = b"{\"data\":[".to_vec();
        for (i, event) in events.iter().enumerate() {
            if i > 0 {
                written.push(b',');
            }
            write_event(&mut written, event, |job| cache.job(job));
        }
        written.extend_from_slice(b"],");
        written.extend_from_slice(render(&tail()).get(1..).unwrap_or_default());
        let typed = ChangePage {
            data: events
                .iter()
                .map(|e| ChangeEventView {
                    head: EventHead {
                        cursor: e.cursor,
                        kind: e.kind,
                        occurred_at: e.occurred_at,
                        job_id: e.job_id,
                    },
                    job: e.job.as_deref().map(JobView::from),
                })
                .collect(),
            tail: tail(),
        };
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&render(&typed))
        );
    }
}
