use chrono::{DateTime, Utc};

use crate::domain::{
    ChangeKind, Delivery, DeliveryId, DeliveryStatus, EventId, Job, JobEvent, LoggedEvent,
    OutboxEvent, Subscription, SubscriptionStatus, WebhookId,
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
    let filter = JobFilter::default()
        .domains(sub.domain_filters.iter().cloned())
        .seniority(sub.seniority.iter().cloned())
        .remote_only(sub.remote_only)
        .min_confidence(sub.min_confidence)
        .countries(sub.places.country.iter().copied())
        .near(sub.places.near)
        .remote_from(sub.places.remote_from);
    let filter = match (sub.places.min_salary, sub.places.salary_currency) {
        (Some(amount), Some(currency)) => filter.min_salary(Some((amount, currency))),
        (_, currency) => filter.salary_currency(currency),
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

/// The event a job write logs for its subscribers: `job.new` when the job is active for the
/// first time, `job.updated` and `job.closed` as it changes. Its deliveries are made later,
/// in the delivery path (see [`announcement`]).
pub fn job_event(kind: ChangeKind, now: DateTime<Utc>) -> JobEvent {
    JobEvent {
        id: EventId::new_random(),
        kind: kind.as_str().to_owned(),
        created_at: now,
    }
}

/// A logged event with its payload, the job as it is when the event is fanned out: the same
/// for every subscription and every retry, since it is stored with the first deliveries.
pub fn announcement(logged: &LoggedEvent, job: &Job) -> OutboxEvent {
    OutboxEvent {
        id: logged.event.id,
        kind: logged.event.kind.clone(),
        created_at: logged.event.created_at,
        data: serde_json::to_value(job).unwrap_or_default(),
        deliveries: Vec::new(),
    }
}

/// A new pending delivery of an event to one subscription, due at once.
pub fn pending_delivery(event: &OutboxEvent, webhook: WebhookId, now: DateTime<Utc>) -> Delivery {
    pending(event.id, &event.kind, webhook, now)
}

/// Whether a subscription receives a logged event about a job: it asked for the event's
/// kind, and the job, as it is when the event goes out (which the payload shows), matches its
/// filters, open or closed. So a job closed moments after it opened is still announced, and
/// a subscriber of closings hears of both.
pub fn subscribes_to(sub: &Subscription, event: &JobEvent, job: &Job) -> bool {
    let asked = ChangeKind::parse(&event.kind).is_some_and(|k| sub.event_types.contains(&k));
    sub.status == SubscriptionStatus::Active
        && asked
        && subscription_filter(sub).matches_content(job)
}
