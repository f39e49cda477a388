use chrono::{DateTime, Utc};

use crate::domain::{
    Delivery, DeliveryId, DeliveryStatus, EventId, Job, OutboxEvent, Subscription,
    SubscriptionStatus,
};
use crate::query::JobFilter;

/// The event type announced when a job is seen for the first time.
pub const JOB_NEW: &str = "job.new";

/// The search filter a subscription stands for: the same matcher decides for search and for
/// webhooks.
pub fn subscription_filter(sub: &Subscription) -> JobFilter {
    JobFilter {
        domains: sub.domain_filters.clone(),
        remote_only: sub.remote_only,
        ..JobFilter::default()
    }
}

/// The `job.new` event for a job, with a pending delivery for every active subscription that
/// matches it; `None` when no subscription matches.
pub fn new_job_event<'a>(
    job: &Job,
    subscriptions: impl IntoIterator<Item = &'a Subscription>,
    now: DateTime<Utc>,
) -> Option<OutboxEvent> {
    let id = EventId::new_random();
    let deliveries: Vec<Delivery> = subscriptions
        .into_iter()
        .filter(|s| s.status == SubscriptionStatus::Active)
        .filter(|s| subscription_filter(s).matches(job))
        .map(|s| Delivery {
            id: DeliveryId::new_random(),
            event_id: id,
            webhook_id: s.id,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: now,
            last_error: None,
        })
        .collect();
    (!deliveries.is_empty()).then(|| OutboxEvent {
        id,
        kind: JOB_NEW.to_owned(),
        created_at: now,
        job: job.clone(),
        deliveries,
    })
}
