//! The job change feed as clients read it (`GET /changes`): what happened to which job, in
//! commit order, from a cursor, filtered like a search, within a retention window.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{CallResult, Caller, Catalog, ServiceError, ServiceResult};
use crate::domain::{ChangeKind, DomainError, FeedCursor, Job, JobId};
use crate::query::{JobFilter, Reposts};
use crate::store::{FeedEntry, StoreError};

/// Where a read of the change feed starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FeedStart {
    /// At the oldest event the feed still holds.
    #[default]
    Oldest,
    /// At the newest event: the page is empty and its cursor is where to follow from. Taken
    /// before a full search, it lets a client search once and then follow only changes.
    Now,
    /// After the event the cursor names.
    After(FeedCursor),
}

/// A read of the change feed.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ChangesQuery {
    /// Where to start.
    pub start: FeedStart,
    /// Most events to return, 1 to [`ChangesQuery::MAX_LIMIT`].
    pub limit: usize,
    /// Only events whose job, as the event left it, matches; active or closed alike.
    pub filter: JobFilter,
}

setters!(ChangesQuery {
    start: FeedStart,
    limit: usize,
    filter: JobFilter,
});

impl ChangesQuery {
    /// The most events one page holds.
    pub const MAX_LIMIT: usize = 500;
    /// The events a page holds when the client does not say.
    pub const DEFAULT_LIMIT: usize = 100;
    /// The most feed entries one page reads to find its events: a filter that matches
    /// little ends the page early (with `has_more`) rather than scan the whole window on
    /// one request.
    pub const MAX_SCANNED: usize = 4_096;
    /// The most bytes of job text (role, company name and post) one page reads to decide a
    /// filter with words (`q`, `company`): posts are long, and a page of a filter that
    /// matches nothing would otherwise read thousands of them for one answer. About what
    /// serializing a full page of events costs. A page always reads at least one entry.
    pub const MAX_TEXT_BYTES: usize = 2 << 20;

    /// Checks `limit` as a client sent it.
    pub fn checked_limit(limit: usize) -> Result<usize, DomainError> {
        if (1..=Self::MAX_LIMIT).contains(&limit) {
            Ok(limit)
        } else {
            Err(DomainError::new(
                "limit",
                format!("must be between 1 and {}", Self::MAX_LIMIT),
            ))
        }
    }
}

/// One event of the change feed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ChangeEvent {
    /// The event's place in the feed: following from it gives the events after it.
    pub cursor: FeedCursor,
    /// What happened.
    pub kind: ChangeKind,
    /// The job it happened to.
    pub job_id: JobId,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// The job as the event left it; `None` for a job deleted since (and for
    /// [`ChangeKind::Deleted`]).
    pub job: Option<Arc<Job>>,
}

/// One page of the change feed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ChangesPage {
    /// The events, oldest first.
    pub events: Vec<ChangeEvent>,
    /// Where to continue from: the last event read (matching or not), or the start when
    /// nothing was read. An empty page carries it too, to poll from.
    pub next_cursor: FeedCursor,
    /// Whether more events were already waiting when the page was cut: ask again at once
    /// rather than after a polling pause.
    pub has_more: bool,
    /// How long the feed keeps events.
    pub retention: Duration,
}

impl Caller {
    /// Reads one page of the job change feed; metered as one call.
    pub async fn changes(&self, query: ChangesQuery) -> CallResult<ChangesPage> {
        self.metered(|| self.catalog.read_changes(query)).await
    }
}

impl Catalog {
    /// One page of the job change feed, from the start the query names.
    pub(super) async fn read_changes(&self, query: ChangesQuery) -> ServiceResult<ChangesPage> {
        let store = &self.store;
        let retention = self.shared.config.change_retention;
        let bounds = store.feed_bounds().await?;
        let start = match query.start {
            FeedStart::Oldest => bounds.pruned_through,
            FeedStart::Now => bounds.head,
            FeedStart::After(cursor)
                if cursor.0 < bounds.pruned_through || cursor.0 > bounds.head =>
            {
                return Err(ServiceError::CursorExpired {
                    retention_days: retention.as_secs() / 86_400,
                    ahead: cursor.0 > bounds.head,
                })
            }
            FeedStart::After(cursor) => cursor.0,
        };
        let limit = query.limit.clamp(1, ChangesQuery::MAX_LIMIT);
        let filter = Arc::new(query.filter);
        // Reposts hidden (the default) is a filter too.
        let unfiltered = *filter == JobFilter::default().reposts(Reposts::Include);
        let mut events = Vec::with_capacity(limit.min(64));
        let mut position = start;
        let mut work = PageWork::default();
        let mut at_head = matches!(query.start, FeedStart::Now);
        while !at_head && events.len() < limit && !work.spent() {
            // Unfiltered, every entry read is an event of the page.
            let want = if unfiltered {
                limit - events.len()
            } else {
                limit.max(256)
            };
            let want = want.min(ChangesQuery::MAX_SCANNED - work.entries);
            let entries = store.feed_after(position, want).await?;
            at_head = entries.len() < want;
            let room = limit - events.len();
            let batch = if unfiltered {
                Batch::unfiltered(entries, room)
            } else {
                // Deciding a filter may read long posts: off the async threads.
                let filter = filter.clone();
                tokio::task::spawn_blocking(move || Batch::filtered(&filter, entries, room, work))
                    .await
                    .map_err(|e| StoreError::backend("filtering the change feed", e))?
            };
            if batch.cut {
                at_head = false;
            }
            position = batch.through.unwrap_or(position);
            work = batch.work;
            events.extend(batch.events);
        }
        let has_more = !at_head && store.feed_bounds().await?.head > position;
        Ok(ChangesPage {
            events,
            next_cursor: FeedCursor(position),
            has_more,
            retention,
        })
    }

    /// Removes the change feed's events older than its retention window, in batches; runs
    /// with the outbox's pruning.
    pub(super) async fn prune_changes(&self) -> ServiceResult<usize> {
        const BATCH: usize = 1_000;
        let retention = chrono::Duration::from_std(self.shared.config.change_retention)
            .unwrap_or(chrono::Duration::MAX);
        let cutoff = self
            .shared
            .now()
            .checked_sub_signed(retention)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let mut pruned = 0;
        loop {
            let batch = self.store.prune_feed(cutoff, BATCH).await?;
            pruned += batch;
            if batch < BATCH {
                break;
            }
        }
        if pruned > 0 {
            tracing::info!(events = pruned, "change feed pruned");
        }
        Ok(pruned)
    }
}

/// What a page has read so far, against [`ChangesQuery::MAX_SCANNED`] and
/// [`ChangesQuery::MAX_TEXT_BYTES`].
#[derive(Clone, Copy, Debug, Default)]
struct PageWork {
    entries: usize,
    text_bytes: usize,
}

impl PageWork {
    fn spent(&self) -> bool {
        self.entries >= ChangesQuery::MAX_SCANNED || self.text_bytes >= ChangesQuery::MAX_TEXT_BYTES
    }
}

/// The events of one batch of feed entries.
struct Batch {
    events: Vec<ChangeEvent>,
    /// The position of the last entry read, if any was.
    through: Option<u64>,
    work: PageWork,
    /// Entries were left unread: the page's room is full, or its work spent.
    cut: bool,
}

impl Batch {
    fn unfiltered(entries: Vec<FeedEntry>, room: usize) -> Batch {
        let cut = entries.len() > room;
        let events: Vec<ChangeEvent> = entries.into_iter().take(room).map(event).collect();
        Batch {
            through: events.last().map(|e| e.cursor.0),
            work: PageWork {
                entries: events.len(),
                text_bytes: 0,
            },
            events,
            cut,
        }
    }

    /// Reads entries until `room` events match or the page's work is spent.
    fn filtered(filter: &JobFilter, entries: Vec<FeedEntry>, room: usize, work: PageWork) -> Batch {
        let reads_text = filter.reads_text();
        let mut batch = Batch {
            events: Vec::new(),
            through: None,
            work,
            cut: false,
        };
        let mut entries = entries.into_iter();
        for entry in entries.by_ref() {
            batch.work.entries += 1;
            if let (true, Some(job)) = (reads_text, &entry.job) {
                batch.work.text_bytes +=
                    job.role.len() + job.company_name.len() + job.description.len();
            }
            batch.through = Some(entry.position);
            if wanted(filter, &entry) {
                batch.events.push(event(entry));
            }
            if batch.events.len() == room || batch.work.spent() {
                break;
            }
        }
        batch.cut = entries.next().is_some();
        batch
    }
}

/// Whether an entry is an event of a feed with `filter`. A deletion is in every feed: the
/// job's content is gone, so no filter can be asked of it, and a client must drop its copy.
/// An event of a job deleted since is only in the feed that no filter but the hiding of
/// reposts narrows, for the same reason.
fn wanted(filter: &JobFilter, entry: &FeedEntry) -> bool {
    match (&entry.job, entry.kind) {
        (_, ChangeKind::Deleted) => true,
        (Some(job), _) => filter.matches_content(job),
        (None, _) => *filter == JobFilter::default(),
    }
}

fn event(entry: FeedEntry) -> ChangeEvent {
    ChangeEvent {
        cursor: FeedCursor(entry.position),
        kind: entry.kind,
        job_id: entry.job_id,
        occurred_at: entry.at,
        job: entry.job,
    }
}
