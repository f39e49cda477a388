//! A snapshot of the service's state for operators: how many jobs, companies, keys and
//! subscriptions it holds, what waits in the outbox, and how fresh its search index and
//! replica state are. The metrics exposition reads it as gauges on every scrape, and an admin
//! endpoint can send it as JSON, so it reads only what the service keeps in memory: never a
//! scan of the store.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use super::job_census::ClosedJobs;
use super::{Access, JobListingsService, ServiceResult, Subscriptions};
use crate::domain::{BillingStatus, Plan, SubscriptionStatus, WebhookId};

/// The service's state in numbers; see [`JobListingsService::stats`].
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Stats")]
#[non_exhaustive]
pub struct ServiceStats {
    /// Stored jobs, active and closed.
    pub jobs: JobCounts,
    /// Stored companies.
    pub companies: u64,
    /// Issued API keys.
    pub keys: KeyCounts,
    /// Webhook subscriptions.
    pub subscriptions: SubscriptionCounts,
    /// Webhook deliveries waiting to be sent or retried.
    pub outbox_backlog: u64,
    /// About how many bytes of heap the search index holds (allocator overhead aside).
    pub index_memory_bytes: u64,
    /// Seconds since the saved search index snapshot was last found to reflect every job (when
    /// saved, when found unchanged by the periodic save, or when loaded up to date at start):
    /// what a restart would index again grows with it. `None` while no snapshot is known to be
    /// current, and with a store that keeps none.
    pub snapshot_age_seconds: Option<u64>,
    /// Changes other replicas made that this one has not applied yet, as of its last look at
    /// the change feed. `None` with a store only one process uses (sled, memory).
    pub follower_lag: Option<u64>,
}

/// Stored jobs by status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct JobCounts {
    /// Searchable jobs: those in the search index.
    pub active: u64,
    /// Closed jobs, kept for the record. `None` until the count made after start-up is done
    /// (it reads every stored job once, in the background). On a store shared by replicas it
    /// is this replica's view: counted at start, then kept by its own writes and by the
    /// closings of active jobs it follows; jobs another replica stores already closed appear
    /// at its next start.
    pub closed: Option<u64>,
}

/// Issued API keys by whether they are accepted now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct KeyCounts {
    /// Keys accepted now (not revoked, billing active), by plan; every plan is listed.
    pub active_by_plan: BTreeMap<Plan, u64>,
    /// Keys revoked for good.
    pub revoked: u64,
    /// Keys not revoked whose billing is past due or canceled, so refused until settled.
    pub billing_inactive: u64,
}

/// Webhook subscriptions by status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(inline)]
#[non_exhaustive]
pub struct SubscriptionCounts {
    /// Subscriptions that are sent what matches them.
    pub active: u64,
    /// Subscriptions stopped after a 410 or days of failures, or by their owner.
    pub disabled: u64,
}

/// What the service keeps for [`ServiceStats`] beyond what its parts hold anyway.
#[derive(Debug, Default)]
pub(super) struct StatsState {
    /// Closed jobs, counted once after start and kept by every write since.
    pub(super) closed_jobs: ClosedJobs,
    /// Pending deliveries: counted per subscription at start, then kept by fan-out, test
    /// pings, settled attempts and deletions (signed: a settlement may be counted before the
    /// step that made the delivery is, on a store shared with replicas).
    pub(super) pending_deliveries: AtomicI64,
    /// When the saved index snapshot was last known to reflect every job.
    pub(super) snapshot_current_at: Mutex<Option<Instant>>,
    /// Where the replica follower is in the change feed, when there is one.
    pub(super) follower: FollowerPosition,
}

/// The change feed position the follower has applied, and the newest it has seen.
#[derive(Debug, Default)]
pub(super) struct FollowerPosition {
    following: AtomicBool,
    applied: AtomicU64,
    head: AtomicU64,
}

impl FollowerPosition {
    /// Records a round of the follower: what it applied and the newest change it knows of.
    pub(super) fn record(&self, applied: u64, head: u64) {
        self.applied.store(applied, Relaxed);
        self.head.store(head.max(applied), Relaxed);
        self.following.store(true, Relaxed);
    }

    pub(super) fn lag(&self) -> Option<u64> {
        self.following.load(Relaxed).then(|| {
            self.head
                .load(Relaxed)
                .saturating_sub(self.applied.load(Relaxed))
        })
    }
}

impl StatsState {
    /// Adds to (or, negative, takes from) the pending deliveries.
    pub(super) fn add_pending(&self, deliveries: i64) {
        self.pending_deliveries.fetch_add(deliveries, Relaxed);
    }

    /// The saved index snapshot reflected every job at `at`.
    pub(super) fn snapshot_current_at(&self, at: Instant) {
        *self
            .snapshot_current_at
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(at);
    }
}

impl JobListingsService {
    /// The service's state in numbers, for monitoring: jobs, companies, keys, subscriptions,
    /// the outbox backlog, the search index's memory and snapshot age, and a replica's lag.
    ///
    /// Cheap enough for every scrape: it reads counts the service keeps in memory as it works
    /// (loaded at start, kept by every write), never the store. Not metered. An error is
    /// reserved for a state that cannot be read; today every part of it is in memory.
    pub fn stats(&self) -> ServiceResult<ServiceStats> {
        let state = &self.inner.shared.stats;
        let (active, index_memory_bytes) = {
            let index = self.inner.catalog.read_index();
            (index.len(), index.heap_bytes())
        };
        let snapshot_age_seconds = state
            .snapshot_current_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|at| at.elapsed().as_secs());
        Ok(ServiceStats {
            jobs: JobCounts {
                active,
                closed: state.closed_jobs.count(),
            },
            companies: self.inner.catalog.read_companies().len() as u64,
            keys: self.inner.access.key_counts(),
            subscriptions: self.inner.subscriptions.counts(),
            outbox_backlog: u64::try_from(state.pending_deliveries.load(Relaxed)).unwrap_or(0),
            index_memory_bytes,
            snapshot_age_seconds,
            follower_lag: state.follower.lag(),
        })
    }
}

impl Subscriptions {
    /// The subscriptions, active and disabled.
    fn counts(&self) -> SubscriptionCounts {
        let webhooks = self.read_webhooks();
        let active = webhooks
            .values()
            .filter(|s| s.status == SubscriptionStatus::Active)
            .count() as u64;
        SubscriptionCounts {
            active,
            disabled: webhooks.len() as u64 - active,
        }
    }

    /// Counts the pending deliveries again, subscription by subscription (each holds at most
    /// its window): on a store shared with replicas, whose fan-outs and attempts this process
    /// does not see as they happen.
    pub(super) async fn recount_pending_deliveries(&self) -> ServiceResult<()> {
        let ids: Vec<WebhookId> = self.read_webhooks().keys().copied().collect();
        let mut pending = 0usize;
        for id in ids {
            pending += self.store.pending_count(id).await?;
        }
        self.shared
            .stats
            .pending_deliveries
            .store(i64::try_from(pending).unwrap_or(i64::MAX), Relaxed);
        Ok(())
    }
}

impl Access {
    /// The issued keys: active by plan, revoked, and those whose billing is not active.
    fn key_counts(&self) -> KeyCounts {
        let mut counts = KeyCounts {
            active_by_plan: Plan::ALL.iter().map(|p| (*p, 0)).collect(),
            revoked: 0,
            billing_inactive: 0,
        };
        self.keys.for_each_record(|record| {
            if record.revoked_at.is_some() {
                counts.revoked += 1;
            } else if record.billing_status != BillingStatus::Active {
                counts.billing_inactive += 1;
            } else {
                *counts.active_by_plan.entry(record.plan).or_default() += 1;
            }
        });
        counts
    }
}
