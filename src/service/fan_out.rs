//! Fan-out: the delivery worker turns the outbox log's entries into deliveries, for each
//! subscription as it has room for them (see [`crate::store::FanOut`]). Ingest only logs one
//! entry per announced job; what that costs per subscription is paid here, off the ingest
//! path, and a subscription that falls behind keeps its place in the log instead of piling
//! up pending deliveries.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::metrics::StoreWrite;
use super::{Access, ServiceResult, Subscriptions};
use crate::domain::{
    ChangeKind, EventId, Job, JobId, KeyId, LoggedEvent, OutboxEvent, Subscription,
    SubscriptionStatus, WebhookId,
};
use crate::store::{CursorMove, FanOut, JobStore};
use crate::webhooks::{announcement, pending_delivery, subscribes_to};

/// Log entries read per fan-out step.
const STEP_ENTRIES: usize = 512;
/// Deliveries made for one subscription per step: a step stays small, and subscriptions
/// with much to catch up take turns with those that have little.
const STEP_DELIVERIES: usize = 32;
/// How long a subscription found full is skipped before its pending deliveries are counted
/// again (sooner when one of them settles in this process).
const RECOUNT_FULL: std::time::Duration = std::time::Duration::from_secs(1);

/// What fan-out did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Progress {
    /// Deliveries made.
    pub(super) deliveries: usize,
    /// Some cursor moved, with or without deliveries: there may be more to do at once.
    pub(super) moved: bool,
}

/// What one fan-out step did.
enum Step {
    /// Moved cursors, making this many deliveries.
    Made(usize),
    /// Found a cursor moved since it was read; wrote nothing.
    Lost,
    /// Found no subscription that can move: all caught up, or full.
    Idle,
}

/// One subscription behind the log's head.
struct Lane {
    webhook: WebhookId,
    cursor: u64,
    /// The subscription, when it receives events now: active, and its key's plan and billing
    /// include webhooks. Otherwise its cursor skips to the head: what it misses stays missed.
    receiver: Option<Subscription>,
    /// Deliveries it may be given in this step: at most [`STEP_DELIVERIES`], and no more
    /// than its pending ones leave of the window.
    room: usize,
}

impl Subscriptions {
    /// Fans the outbox log out to the subscriptions now, until every one is caught up or
    /// holds its window of pending deliveries; returns how many deliveries it made. The
    /// delivery worker does this on its own; without a notifier (nothing sends), logged
    /// events wait in the log until this is called or a server with one runs.
    pub(super) async fn fan_out_now(
        self: &Arc<Self>,
        access: &Arc<Access>,
        jobs: &Arc<dyn JobStore>,
    ) -> ServiceResult<usize> {
        Ok(self.fan_out(access, jobs, usize::MAX).await?.deliveries)
    }

    /// Fans out the log to every subscription behind its head, until all are caught up, full,
    /// or `max_steps` steps were written. `access` says whose subscriptions receive, `jobs`
    /// holds the jobs the log announces.
    pub(super) async fn fan_out(
        self: &Arc<Self>,
        access: &Arc<Access>,
        jobs: &Arc<dyn JobStore>,
        max_steps: usize,
    ) -> ServiceResult<Progress> {
        let mut progress = Progress::default();
        for _ in 0..max_steps {
            match self.fan_out_step(access, jobs).await? {
                Step::Made(n) => {
                    progress.deliveries += n;
                    progress.moved = true;
                }
                // Another task or process moved a cursor first: read again.
                Step::Lost => {}
                Step::Idle => break,
            }
        }
        Ok(progress)
    }

    /// One fan-out step: for every subscription behind the head that can move, up to
    /// [`STEP_ENTRIES`] log entries after its cursor. Each key's subscriptions are written in
    /// a step of their own, the keys' steps side by side, so one customer's large step never
    /// holds up another's; subscriptions far apart in the log read it apart.
    async fn fan_out_step(
        self: &Arc<Self>,
        access: &Access,
        jobs: &Arc<dyn JobStore>,
    ) -> ServiceResult<Step> {
        let store = &self.store;
        let head = store.log_head().await?;
        let behind: Vec<(WebhookId, u64)> = store
            .fan_out_cursors()
            .await?
            .into_iter()
            .filter(|(_, cursor)| *cursor < head)
            .collect();
        if behind.is_empty() {
            return Ok(Step::Idle);
        }
        let mut by_owner: HashMap<Option<KeyId>, Vec<Lane>> = HashMap::new();
        for lane in self.lanes(access, behind).await? {
            by_owner
                .entry(lane.receiver.as_ref().map(|s| s.owner))
                .or_default()
                .push(lane);
        }
        let mut running = tokio::task::JoinSet::new();
        for lanes in by_owner.into_values() {
            let (service, jobs) = (self.clone(), jobs.clone());
            running.spawn(async move { service.fan_out_lanes(jobs.as_ref(), lanes, head).await });
        }
        let mut steps = Vec::new();
        while let Some(done) = running.join_next().await {
            steps.push(done.map_err(|e| {
                crate::store::StoreError::backend("a fan-out step", e.to_string())
            })??);
        }
        let made: usize = steps
            .iter()
            .map(|s| match *s {
                Step::Made(n) => n,
                _ => 0,
            })
            .sum();
        Ok(if steps.iter().any(|s| matches!(s, Step::Made(_))) {
            Step::Made(made)
        } else if steps.iter().any(|s| matches!(s, Step::Lost)) {
            Step::Lost
        } else {
            Step::Idle
        })
    }

    /// Writes one step for these lanes.
    async fn fan_out_lanes(
        &self,
        jobs: &dyn JobStore,
        mut lanes: Vec<Lane>,
        head: u64,
    ) -> ServiceResult<Step> {
        let store = &self.store;
        lanes.sort_by_key(|l| l.cursor);
        let mut step = FanOut::default();
        let mut events = HashMap::new();
        let mut rest = lanes.as_slice();
        while let Some(first) = rest.first() {
            let entries = store.log_after(first.cursor, STEP_ENTRIES).await?;
            let end = entries.last().map_or(head, |e| e.position);
            let (group, later) = rest.split_at(rest.partition_point(|l| l.cursor < end));
            rest = later;
            let jobs = announced_jobs(jobs, &entries).await?;
            self.add_to_step(&mut step, &mut events, group, &entries, &jobs, head);
        }
        if step.cursors.is_empty() {
            return Ok(Step::Idle);
        }
        step.events = events.into_values().collect();
        let made = step.deliveries.len();
        Ok(
            match self
                .shared
                .timed_write(StoreWrite::FanOut, store.fan_out(&step))
                .await?
            {
                true => {
                    self.shared
                        .stats
                        .add_pending(i64::try_from(made).unwrap_or(i64::MAX));
                    Step::Made(made)
                }
                false => Step::Lost,
            },
        )
    }

    /// The subscriptions behind the head that move in this step: every one that skips, and
    /// of each key's receiving ones the next in turn that has room. One key's subscriptions
    /// thus add at most [`STEP_DELIVERIES`] to a step however many it holds, and a step
    /// stays short for the customers who share it.
    async fn lanes(
        &self,
        access: &Access,
        behind: Vec<(WebhookId, u64)>,
    ) -> ServiceResult<Vec<Lane>> {
        // A subscription registered on another replica moments ago, not yet brought here by
        // the follower, is read from the store now: the jobs announced to it go out at once.
        let unseen: Vec<WebhookId> = {
            let webhooks = self.read_webhooks();
            behind
                .iter()
                .map(|(id, _)| *id)
                .filter(|id| !webhooks.contains_key(id))
                .collect()
        };
        for id in unseen {
            // One subscription that cannot be read (sealed with another secret key, say) must
            // not stop fan-out for every other: it keeps its place and is tried again.
            if let Err(e) = self.take_in_webhook(access, id).await {
                tracing::warn!(error = %e, webhook = %id, "a subscription could not be read from the store; its events wait");
            }
        }
        let receivers = access.keys.webhook_receivers();
        let window = self
            .shared
            .config
            .delivery
            .max_pending_per_subscription
            .max(1);
        let mut lanes = Vec::new();
        let mut by_owner: HashMap<KeyId, Vec<(u64, Subscription)>> = HashMap::new();
        {
            let webhooks = self.read_webhooks();
            for (webhook, cursor) in behind {
                // Deleted since its cursor was read: its cursor goes with it.
                let Some(known) = webhooks.get(&webhook) else {
                    continue;
                };
                match Some(known).filter(|s| {
                    s.status == SubscriptionStatus::Active && receivers.contains(&s.owner)
                }) {
                    Some(sub) => by_owner
                        .entry(sub.owner)
                        .or_default()
                        .push((cursor, sub.clone())),
                    None => lanes.push(Lane {
                        webhook,
                        cursor,
                        receiver: None,
                        room: usize::MAX,
                    }),
                }
            }
        }
        let turn = self.fan_out_turn.fetch_add(1, Ordering::Relaxed);
        for (_, mut subs) in by_owner {
            subs.sort_by_key(|(_, s)| s.id);
            let first = turn % subs.len();
            subs.rotate_left(first);
            for (cursor, sub) in subs {
                if self.known_full(sub.id) {
                    continue;
                }
                let pending = self.store.pending_count(sub.id).await?;
                let room = window.saturating_sub(pending).min(STEP_DELIVERIES);
                if room == 0 {
                    self.mark_full(sub.id);
                } else {
                    lanes.push(Lane {
                        webhook: sub.id,
                        cursor,
                        receiver: Some(sub),
                        room,
                    });
                    break;
                }
            }
        }
        Ok(lanes)
    }

    /// Whether the subscription held its window of pending deliveries when last counted,
    /// less than [`RECOUNT_FULL`] ago, and none of them has settled here since: counting its
    /// deliveries again on every step would make its backlog cost everyone's steps.
    fn known_full(&self, id: WebhookId) -> bool {
        self.full
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .is_some_and(|at| at.elapsed() < RECOUNT_FULL)
    }

    fn mark_full(&self, id: WebhookId) {
        self.full
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, std::time::Instant::now());
    }

    /// The job events some subscription may be sent, which job writes log in the outbox: what
    /// active subscriptions ask for, or every kind on a store shared with other replicas
    /// (whose subscriptions this one may not know yet).
    pub(super) fn announced_kinds(&self) -> Vec<ChangeKind> {
        if self.shared.replicated {
            return ChangeKind::WEBHOOK.to_vec();
        }
        let mut kinds: Vec<ChangeKind> = self
            .read_webhooks()
            .values()
            .filter(|s| s.status == SubscriptionStatus::Active)
            .flat_map(|s| s.event_types.iter().copied())
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }

    /// One of the subscription's pending deliveries settled: it may have room again.
    pub(super) fn may_have_room(&self, id: WebhookId) {
        self.full
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    /// Adds to a step the deliveries and cursor moves of a group of lanes over the log
    /// entries read for them. The payload is the job as it is at its event's first fan-out
    /// (moments after ingest while the worker keeps up), stored with the event so every
    /// subscription and retry sends the same.
    fn add_to_step(
        &self,
        step: &mut FanOut,
        events: &mut HashMap<EventId, OutboxEvent>,
        lanes: &[Lane],
        entries: &[LoggedEvent],
        jobs: &HashMap<JobId, Arc<Job>>,
        head: u64,
    ) {
        let now = self.shared.now();
        for lane in lanes {
            let Some(sub) = &lane.receiver else {
                step.cursors.push(CursorMove {
                    webhook: lane.webhook,
                    from: lane.cursor,
                    to: head,
                });
                continue;
            };
            let mut to = lane.cursor;
            let mut made = 0;
            for entry in entries.iter().filter(|e| e.position > lane.cursor) {
                if made == lane.room {
                    break;
                }
                to = entry.position;
                // Logged while the subscription was disabled: missed, as while disabled.
                if sub
                    .enabled_again_at
                    .is_some_and(|enabled| entry.event.created_at < enabled)
                {
                    continue;
                }
                let Some(job) = jobs
                    .get(&entry.job_id)
                    .filter(|j| subscribes_to(sub, &entry.event, j))
                else {
                    continue;
                };
                let event = events
                    .entry(entry.event.id)
                    .or_insert_with(|| announcement(entry, job));
                step.deliveries.push(pending_delivery(event, sub.id, now));
                made += 1;
            }
            if to > lane.cursor {
                step.cursors.push(CursorMove {
                    webhook: lane.webhook,
                    from: lane.cursor,
                    to,
                });
            }
        }
    }
}

/// The jobs the entries announce, as they are now, read once for every subscription.
async fn announced_jobs(
    jobs: &dyn JobStore,
    entries: &[LoggedEvent],
) -> ServiceResult<HashMap<JobId, Arc<Job>>> {
    let ids: Vec<JobId> = entries.iter().map(|e| e.job_id).collect();
    Ok(jobs
        .get_jobs(&ids)
        .await?
        .into_iter()
        .map(|j| (j.id, j))
        .collect())
}
