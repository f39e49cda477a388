use chrono::{DateTime, Utc};

use crate::domain::{
    Delivery, DeliveryId, DeliveryStatus, EventId, Job, OutboxEvent, Subscription,
    SubscriptionStatus, WebhookId,
};
use crate::query::JobFilter;

/// The event type announced when a job is seen for the first time.
pub const JOB_NEW: &str = "job.new";
/// The event type of a test ping (`POST /webhooks/{id}/test`).
pub const WEBHOOK_TEST: &str = "webhook.test";

fn pending(event: EventId, kind: &str, webhook: WebhookId, now: DateTime<Utc>) -> Delivery {
    Delivery {
        id: DeliveryId::new_random(),
        event_id: event,
        webhook_id: webhook,
        status: DeliveryStatus::Pending,
        attempts: 0,
        next_attempt_at: now,
        last_error: None,
        history: Vec::new(),
        event_type: Some(kind.to_owned()),
        created_at: Some(now),
    }
}

/// A `webhook.test` ping for one subscription, with its one pending delivery.
pub fn test_event(sub: &Subscription, now: DateTime<Utc>) -> OutboxEvent {
    let id = EventId::new_random();
    OutboxEvent {
        id,
        kind: WEBHOOK_TEST.to_owned(),
        created_at: now,
        data: serde_json::json!({
            "webhook_id": sub.id,
            "message": "This is a test delivery from job-listings.",
        }),
        deliveries: vec![pending(id, WEBHOOK_TEST, sub.id, now)],
    }
}

/// The search filter a subscription stands for: the same matcher decides for search and for
/// webhooks.
pub fn subscription_filter(sub: &Subscription) -> JobFilter {
    let filter = JobFilter {
        domains: sub.domain_filters.clone(),
        seniority: sub.seniority.clone(),
        remote_only: sub.remote_only,
        min_confidence: sub.min_confidence,
        ..JobFilter::default()
    };
    let filter = match &sub.q {
        Some(q) => filter.with_q(q),
        None => filter,
    };
    match &sub.company {
        Some(c) => filter.with_company(c),
        None => filter,
    }
}

/// The `job.new` event for a job, with a pending delivery for every active subscription that
/// matches it; `None` when no subscription matches.
pub fn new_job_event<'a>(
    job: &Job,
    subscriptions: impl IntoIterator<Item = &'a Subscription>,
    now: DateTime<Utc>,
) -> Option<OutboxEvent> {
    let mut matching = subscriptions
        .into_iter()
        .filter(|s| s.status == SubscriptionStatus::Active)
        .filter(|s| subscription_filter(s).matches(job))
        .peekable();
    // A random id costs a system call: only an event that goes somewhere gets one (a bulk
    // load with no subscriptions made a million of them).
    matching.peek()?;
    let id = EventId::new_random();
    let deliveries: Vec<Delivery> = matching.map(|s| pending(id, JOB_NEW, s.id, now)).collect();
    Some(OutboxEvent {
        id,
        kind: JOB_NEW.to_owned(),
        created_at: now,
        data: serde_json::to_value(job).unwrap_or_default(),
        deliveries,
    })
}
