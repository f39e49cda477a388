//! `GET /changes`: the job change feed.

use bytes::Bytes;
use http::Request;

use super::Handled;
use crate::api::params::{changes_query, Params, CHANGE_QUERY};
use crate::api::render::{render, JobView};
use crate::api::views::{self, ChangeLinks, ChangeMeta, ChangePage};
use crate::api::{Api, Reply};
use crate::domain::FeedCursor;
use crate::query::JobFilter;
use crate::service::{Caller, ChangeEvent};

/// One page of events after the cursor, oldest first, each with the job as the event left it.
pub(crate) async fn list(api: &Api, caller: &Caller, req: &Request<Bytes>) -> Handled {
    let params = Params::parse(req.uri().query(), &CHANGE_QUERY)?;
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
    out.push(b']');
    let empty: ChangePage<JobView<'_>, JobFilter> = ChangePage {
        data: Vec::new(),
        next_cursor: page.next_cursor,
        has_more: page.has_more,
        links: ChangeLinks {
            next: next_link(&params.without("after"), page.next_cursor),
        },
        meta: ChangeMeta {
            filters,
            retention_days: page.retention.as_secs() / 86_400,
        },
    };
    // The page without events, from after its empty `data`: the events are written above.
    let rest = render(&empty);
    out.extend_from_slice(rest.get(EMPTY_DATA.len()..).unwrap_or_default());
    Ok(Reply::json_bytes(out, Some(quota)))
}

/// How a page without events starts.
const EMPTY_DATA: &[u8] = b"{\"data\":[]";

/// Writes one event: its head, then its job as rendered (or `null`).
fn write_event(
    out: &mut Vec<u8>,
    event: &ChangeEvent,
    job_json: impl Fn(&crate::domain::Job) -> Bytes,
) {
    let without_job: views::ChangeEvent<JobView<'_>> = views::ChangeEvent {
        cursor: event.cursor,
        kind: event.kind,
        occurred_at: event.occurred_at,
        job_id: event.job_id,
        job: None,
    };
    // The job comes last: the event as written up to its `null`, then the job itself.
    let head = render(&without_job);
    out.extend_from_slice(
        head.get(..head.len().saturating_sub(b"null}".len()))
            .unwrap_or_default(),
    );
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
    use crate::domain::ChangeKind;

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
        let page = |data| ChangePage {
            data,
            next_cursor: FeedCursor(99),
            has_more: true,
            links: ChangeLinks {
                next: next_link("domain=ai", FeedCursor(99)),
            },
            meta: ChangeMeta {
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
        written.push(b']');
        let rest = render(&page(Vec::new()));
        written.extend_from_slice(rest.get(EMPTY_DATA.len()..).unwrap_or_default());
        let typed = page(
            events
                .iter()
                .map(|e| views::ChangeEvent {
                    cursor: e.cursor,
                    kind: e.kind,
                    occurred_at: e.occurred_at,
                    job_id: e.job_id,
                    job: e.job.as_deref().map(JobView::from),
                })
                .collect(),
        );
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&render(&typed))
        );
    }
}
