//! What the outbox keeps besides deliveries: the log of job events that ingest appends to, and
//! the fan-out steps that turn its entries into deliveries, one subscription at a time.
//!
//! Ingest writes one small log entry per announced job, whatever the number of subscriptions,
//! so its cost stays with the jobs. The delivery worker reads the log after each
//! subscription's cursor and writes that subscription's deliveries as it has room for them:
//! a subscription that falls behind (a slow or dead receiver) keeps its place in the log
//! instead of piling up pending deliveries, and costs nobody else anything.

use crate::domain::{Delivery, OutboxEvent, WebhookId};

/// Moves one subscription's fan-out cursor, if nobody moved it meanwhile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CursorMove {
    /// The subscription.
    pub webhook: WebhookId,
    /// Where its cursor was read.
    pub from: u64,
    /// The last log position now fanned out to it.
    pub to: u64,
}

/// One step of fan-out, written all or nothing: events with their payloads (kept unless an
/// earlier step kept them), the deliveries made of them, and the cursors moved past them.
/// Applied only when every cursor is still where the step read it, so two processes sharing
/// a store never make the same delivery twice.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FanOut {
    /// Events the deliveries refer to (their `deliveries` list is ignored).
    pub events: Vec<OutboxEvent>,
    /// The new pending deliveries.
    pub deliveries: Vec<Delivery>,
    /// The cursors moved.
    pub cursors: Vec<CursorMove>,
}

/// What [`DeliveryQueue::prune`](super::DeliveryQueue::prune) removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Settled (succeeded or failed) deliveries.
    pub deliveries: usize,
    /// Events with their payloads.
    pub events: usize,
    /// Log entries every subscription's cursor has passed.
    pub log_entries: usize,
}

impl Pruned {
    /// Records removed in all.
    pub fn total(&self) -> usize {
        self.deliveries + self.events + self.log_entries
    }
}
