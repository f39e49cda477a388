//! One suite of `Store` checks, written once and run against every implementation: the
//! in-memory store, the sled store (in a temporary folder) and the PostgreSQL store (in a
//! schema of its own, on the server `DATABASE_URL` names; ignored unless asked for with
//! `--ignored`). A new store joins by adding one line to the `store_suite!` invocations at the
//! bottom.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use job_listings::domain::{
    ApiKey, ApiKeyRecord, BillingStatus, CallbackUrl, ChangeKind, Company, CompanyId, Confidence,
    Delivery, DeliveryAttempt, DeliveryId, DeliveryStatus, DomainTag, Enrichment, EventId,
    FundingStage, IdempotencyKey, Job, JobEvent, JobId, JobStatus, KeyId, OutboxEvent, Plan,
    SalaryRange, Seniority, Subscription, SubscriptionStatus, WebhookId, WebhookSecret,
};
use job_listings::store::{
    ChangedRecord, CompanyStore, CursorMove, DecidedOn, DeliveryQueue, EventLog, FanOut,
    FeedBounds, IndexSnapshot, IndexSnapshotStore, JobFeedStore, JobStore, JobWrite, KeyStore,
    MemoryStore, PgStore, Pruned, SledStore, Store, UsageCounter, UsageStore, WebhookStore,
};
use uuid::Uuid;

use crate::support::pg::TestSchema;
use crate::support::store::{sled_config, when_unlocked};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0)
        .single()
        .expect("a time")
}

/// Deterministic ids whose order differs from creation order.
fn uuid(n: u64) -> Uuid {
    Uuid::from_u128(u128::from(n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) << 32 | u128::from(n))
}

fn company(n: u64) -> Company {
    Company {
        id: CompanyId(uuid(n)),
        name: format!("Company {n}"),
        domain: format!("c{n}.example.com"),
        funding_stage: FundingStage::parse("series_b").expect("a stage"),
        blurb: format!("Blurb {n}"),
        enrichment: Enrichment {
            headcount: Some(10),
            investors: vec!["Someone".to_owned()],
            ..Enrichment::default()
        },
        updated_at: t0(),
    }
}

fn job(n: u64) -> Job {
    Job {
        places: Vec::new(),
        remote_regions: Vec::new(),
        id: JobId(uuid(n)),
        role: format!("Role {n}"),
        company_id: CompanyId(uuid(1)),
        company_name: "Company 1".to_owned(),
        description: format!("Description of job {n}: Node.js, Zürich, ünïcode ✓"),
        domains: vec![DomainTag::parse("ai").expect("a tag")],
        seniority: vec![Seniority::parse("senior").expect("a level")],
        remote: n.is_multiple_of(2),
        location: Some("Berlin".to_owned()),
        source_url: format!("https://example.com/jobs/{n}"),
        salary: Some(SalaryRange {
            min: Some(100_000),
            max: Some(150_000),
            currency: "EUR".to_owned(),
            period: "year".to_owned(),
        }),
        posted_at: t0() - Duration::nanoseconds(n as i64 * 1_000_000_007),
        confidence: Confidence::new(0.1 + 0.2).expect("a confidence"),
        status: JobStatus::Active,
        activated_at: None,
        first_seen_at: t0(),
        updated_at: t0() + Duration::nanoseconds(123_456_789),
        // The service's group and freshness fields go through every store as they are.
        last_seen_at: Some(t0() + Duration::nanoseconds(987_654_321)),
        last_posted_at: n.is_multiple_of(3).then(t0),
        repost_of: None,
        reposts: if n.is_multiple_of(3) {
            vec![job_listings::domain::Repost::new(
                JobId(uuid(n + 1_000)),
                format!("https://x.example/{n}"),
                t0(),
            )]
        } else {
            Vec::new()
        },
    }
}

fn key_record(n: u64, plan: Plan) -> ApiKeyRecord {
    let key = ApiKey::generate();
    ApiKeyRecord {
        id: KeyId(uuid(n)),
        hash: key.hash(),
        hint: key.hint(),
        label: format!("customer {n}"),
        plan,
        billing_status: BillingStatus::Active,
        billing_anchor: t0(),
        created_at: t0(),
        revoked_at: None,
    }
}

fn webhook(n: u64) -> Subscription {
    Subscription {
        places: Default::default(),
        id: WebhookId(uuid(n)),
        owner: KeyId(uuid(1)),
        callback_url: CallbackUrl::parse("https://hooks.example.com/x").expect("a URL"),
        domain_filters: vec![DomainTag::parse("ai").expect("a tag")],
        remote_only: !n.is_multiple_of(2),
        seniority: Vec::new(),
        q: None,
        company: None,
        min_confidence: None,
        // Every third one asks for more than new jobs, which must be kept.
        event_types: match n % 3 {
            0 => vec![ChangeKind::New, ChangeKind::Updated, ChangeKind::Closed],
            _ => ChangeKind::webhook_default(),
        },
        secret: WebhookSecret::generate(),
        status: SubscriptionStatus::Active,
        disabled_reason: None,
        created_at: t0(),
        last_success_at: None,
        last_failure_at: None,
        last_failure_reason: None,
        failing_since: None,
        enabled_again_at: None,
        // Every other one registered with an idempotency key, which must be kept.
        idempotency_key: n
            .is_multiple_of(2)
            .then(|| IdempotencyKey::parse(&format!("request-{n}")).expect("a key")),
        idempotency_request: n.is_multiple_of(2).then(|| format!("digest-{n}")),
    }
}

fn delivery(n: u64, event: EventId, hook: WebhookId, due: DateTime<Utc>) -> Delivery {
    Delivery {
        id: DeliveryId(uuid(1_000 + n)),
        event_id: event,
        webhook_id: hook,
        status: DeliveryStatus::Pending,
        attempts: 0,
        next_attempt_at: due,
        last_error: None,
        history: Vec::new(),
        // Every other one as stored before these were kept, which must read back as such.
        event_type: n.is_multiple_of(2).then(|| "job.new".to_owned()),
        created_at: n.is_multiple_of(2).then_some(due),
    }
}

/// An event about `job` with the given deliveries, as [`EventLog::put_event`] takes it.
fn event_with(job: &Job, event: EventId, deliveries: Vec<Delivery>) -> OutboxEvent {
    OutboxEvent {
        id: event,
        kind: "job.new".to_owned(),
        created_at: t0(),
        data: serde_json::to_value(job).unwrap_or_default(),
        deliveries,
    }
}

/// A write of `job` that logs one `job.new` event.
fn announcing(job: Job, event: EventId, at: DateTime<Utc>) -> JobWrite {
    JobWrite {
        job,
        events: vec![JobEvent {
            id: event,
            kind: "job.new".to_owned(),
            created_at: at,
        }],
        change: Some(ChangeKind::New),
        decided_on: DecidedOn::Nothing,
    }
}

fn plain(job: Job) -> JobWrite {
    JobWrite {
        job,
        events: Vec::new(),
        change: None,
        decided_on: DecidedOn::Nothing,
    }
}

// ---------------------------------------------------------------------------------------------
// The checks, written once.
// ---------------------------------------------------------------------------------------------

async fn a_job_round_trips_exactly(store: &dyn Store) {
    let mut closed = job(2);
    closed.status = JobStatus::Closed;
    closed.salary = None;
    closed.location = None;
    let jobs = [job(1), closed];
    store
        .write_jobs(&jobs.iter().cloned().map(plain).collect::<Vec<_>>())
        .await
        .expect("written");
    for j in &jobs {
        assert_eq!(store.get_job(j.id).await.expect("read").as_deref(), Some(j));
    }
    assert_eq!(store.get_job(JobId(uuid(99))).await.expect("read"), None);
}

async fn a_job_write_replaces_the_previous_version(store: &dyn Store) {
    store.write_jobs(&[plain(job(1))]).await.expect("written");
    // Read it first, so a store that keeps what it read has the old version to forget.
    assert_eq!(
        store.get_job(job(1).id).await.expect("read").as_deref(),
        Some(&job(1))
    );
    let mut changed = job(1);
    changed.role = "Changed".to_owned();
    changed.status = JobStatus::Closed;
    store
        .write_jobs(&[plain(changed.clone())])
        .await
        .expect("written");
    assert_eq!(
        store.get_job(changed.id).await.expect("read").as_deref(),
        Some(&changed)
    );
    let read: Vec<Job> = unshared(store.get_jobs(&[changed.id]).await.expect("read"));
    assert_eq!(read, vec![changed.clone()]);
    assert_eq!(
        store.scan_jobs(None, 10).await.expect("scan"),
        vec![changed]
    );
}

/// Readers racing a writer never see a version older than one already written: a store that
/// keeps what it read must not keep a version read just before a write.
async fn reads_racing_rewrites_never_go_back(store: Arc<dyn Store>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    const VERSIONS: u64 = 300;
    let version = |v: u64| {
        let mut j = job(1);
        j.role = format!("Version {v}");
        j
    };
    let version_of =
        |job: &Job| -> u64 { job.role["Version ".len()..].parse().expect("a version") };
    store
        .write_jobs(&[plain(version(0))])
        .await
        .expect("written");
    // The last version whose write has returned; u64::MAX once the writer is done.
    let written = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (store, written) = (store.clone(), written.clone());
            tokio::spawn(async move {
                loop {
                    let before = written.load(Ordering::SeqCst);
                    let read = store.get_jobs(&[job(1).id]).await.expect("read");
                    let seen = version_of(&read[0]);
                    if before == u64::MAX {
                        return seen;
                    }
                    assert!(
                        seen >= before,
                        "read version {seen} after {before} was written"
                    );
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for v in 1..=VERSIONS {
        store
            .write_jobs(&[plain(version(v))])
            .await
            .expect("written");
        written.store(v, Ordering::SeqCst);
    }
    written.store(u64::MAX, Ordering::SeqCst);
    for r in readers {
        assert_eq!(r.await.expect("reader"), VERSIONS);
    }
    let last = version(VERSIONS);
    assert_eq!(
        store.get_job(last.id).await.expect("read").as_deref(),
        Some(&last)
    );
    assert_eq!(
        unshared(store.get_jobs(&[last.id]).await.expect("read")),
        vec![last]
    );
}

async fn confidences_round_trip_bit_for_bit(store: &dyn Store) {
    // Values a classifier produces are arbitrary f64s, not short decimals.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut values = vec![
        0.0,
        1.0,
        0.1 + 0.2,
        0.7,
        f64::EPSILON,
        1.0 - f64::EPSILON / 2.0,
    ];
    for _ in 0..500 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push((x >> 11) as f64 / (1u64 << 53) as f64);
    }
    let writes: Vec<JobWrite> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut j = job(i as u64 + 1);
            j.confidence = Confidence::new(*v).expect("in range");
            plain(j)
        })
        .collect();
    store.write_jobs(&writes).await.expect("written");
    for w in &writes {
        let back = store.get_job(w.job.id).await.expect("read").expect("found");
        assert_eq!(
            back.confidence.get().to_bits(),
            w.job.confidence.get().to_bits(),
            "confidence {:e} came back as {:e}",
            w.job.confidence.get(),
            back.confidence.get()
        );
    }
}

async fn get_jobs_keeps_the_order_asked_and_skips_unknown_ids(store: &dyn Store) {
    let jobs: Vec<Job> = (1..=5).map(job).collect();
    store
        .write_jobs(&jobs.iter().cloned().map(plain).collect::<Vec<_>>())
        .await
        .expect("written");
    let ask = [
        jobs[3].id,
        JobId(uuid(77)),
        jobs[0].id,
        jobs[4].id,
        JobId(uuid(78)),
        jobs[0].id,
    ];
    let got: Vec<JobId> = store
        .get_jobs(&ask)
        .await
        .expect("read")
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(got, [jobs[3].id, jobs[0].id, jobs[4].id, jobs[0].id]);
    assert!(store.get_jobs(&[]).await.expect("read").is_empty());
}

async fn scan_jobs_and_their_json_page_through_every_job_in_id_order(store: &dyn Store) {
    let jobs: Vec<Job> = (1..=25).map(job).collect();
    store
        .write_jobs(&jobs.iter().cloned().map(plain).collect::<Vec<_>>())
        .await
        .expect("written");
    let mut expected: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    expected.sort();
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store.scan_jobs(after, 10).await.expect("scan");
        assert!(page.len() <= 10);
        let Some(last) = page.last() else { break };
        after = Some(last.id);
        seen.extend(page.iter().map(|j| j.id));
    }
    assert_eq!(seen, expected);
    // Starting after an id that is not stored still starts at the next one.
    let between = JobId(Uuid::from_u128(expected[4].0.as_u128() + 1));
    let rest = store.scan_jobs(Some(between), 100).await.expect("scan");
    assert_eq!(rest.first().map(|j| j.id), Some(expected[5]));
    assert_eq!(rest.len(), 20);
}

async fn companies_are_stored_replaced_and_scanned_in_id_order(store: &dyn Store) {
    let companies: Vec<Company> = (1..=7).map(company).collect();
    store.put_companies(&companies).await.expect("written");
    for c in &companies {
        assert_eq!(
            store.get_company(c.id).await.expect("read").as_ref(),
            Some(c)
        );
    }
    assert_eq!(
        store.get_company(CompanyId(uuid(99))).await.expect("read"),
        None
    );

    let mut renamed = companies[2].clone();
    renamed.name = "Renamed".to_owned();
    store
        .put_companies(std::slice::from_ref(&renamed))
        .await
        .expect("written");
    assert_eq!(
        store.get_company(renamed.id).await.expect("read"),
        Some(renamed)
    );

    let mut expected: Vec<CompanyId> = companies.iter().map(|c| c.id).collect();
    expected.sort();
    let first = store.scan_companies(None, 4).await.expect("scan");
    let rest = store
        .scan_companies(first.last().map(|c| c.id), 4)
        .await
        .expect("scan");
    let seen: Vec<CompanyId> = first.iter().chain(rest.iter()).map(|c| c.id).collect();
    assert_eq!(seen, expected);
}

async fn keys_are_stored_and_replaced(store: &dyn Store) {
    let a = key_record(1, Plan::Developer);
    let b = key_record(2, Plan::AgentPro);
    store.put_key(&a).await.expect("written");
    store.put_key(&b).await.expect("written");
    let mut revoked = a.clone();
    revoked.revoked_at = Some(t0() + Duration::days(3));
    revoked.billing_status = BillingStatus::PastDue;
    store.put_key(&revoked).await.expect("written");
    let mut keys = store.scan_keys().await.expect("scan");
    keys.sort_by_key(|k| k.id);
    let mut expected = vec![revoked, b];
    expected.sort_by_key(|k| k.id);
    assert_eq!(keys, expected);
    assert!(keys.iter().any(|k| k.hash.ct_eq(&expected[0].hash)));
}

/// What `get_usage` says the key has used, if it has a counter.
async fn calls_used(store: &dyn Store, key: KeyId) -> Option<u64> {
    store
        .get_usage(key)
        .await
        .expect("read")
        .map(|c| c.calls_used)
}

async fn get_jobs_gives_each_job_in_the_order_asked(store: &dyn Store) {
    let jobs: Vec<Job> = (1..=3).map(job).collect();
    store
        .write_jobs(&jobs.iter().cloned().map(plain).collect::<Vec<_>>())
        .await
        .expect("written");
    let asked = [jobs[2].id, JobId(uuid(99)), jobs[0].id, jobs[2].id];
    let got = unshared(store.get_jobs(&asked).await.expect("read"));
    assert_eq!(got, vec![jobs[2].clone(), jobs[0].clone(), jobs[2].clone()]);
}

async fn get_key_and_get_webhook_read_one_record_by_id(store: &dyn Store) {
    let k = key_record(1, Plan::AgentPro);
    let w = webhook(2);
    store.put_key(&k).await.expect("written");
    store.put_webhook(&w).await.expect("written");
    assert_eq!(store.get_key(k.id).await.expect("read"), Some(k));
    assert_eq!(store.get_key(KeyId(uuid(9))).await.expect("read"), None);
    let read = store
        .get_webhook(w.id)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(read, w);
    assert_eq!(read.secret.expose(), w.secret.expose());
    assert!(store.delete_webhook(w.id).await.expect("deleted"));
    assert_eq!(store.get_webhook(w.id).await.expect("read"), None);
}

fn usage(key: KeyId, period_start: DateTime<Utc>, calls_used: u64) -> UsageCounter {
    UsageCounter {
        key_id: key,
        period_start,
        calls_used,
    }
}

async fn swap_usage_writes_only_over_the_counter_expected(store: &dyn Store) {
    let key = KeyId(uuid(1));
    let next = t0() + Duration::days(30);
    let first = usage(key, t0(), 1);
    assert!(store.swap_usage(None, first).await.expect("swapped"));
    assert_eq!(store.get_usage(key).await.expect("read"), Some(first));
    // The key has a counter now: a swap from none fails, as does one from another counter.
    let second = usage(key, t0(), 2);
    assert!(!store.swap_usage(None, second).await.expect("refused"));
    for stale in [usage(key, t0(), 2), usage(key, next, 1)] {
        assert!(!store
            .swap_usage(Some(stale), second)
            .await
            .expect("refused"));
    }
    assert_eq!(store.get_usage(key).await.expect("read"), Some(first));
    assert!(store
        .swap_usage(Some(first), second)
        .await
        .expect("swapped"));
    // A new period is a counter like any other.
    let over = usage(key, next, 1);
    assert!(store.swap_usage(Some(second), over).await.expect("swapped"));
    assert_eq!(store.get_usage(key).await.expect("read"), Some(over));
    // Another key is not touched.
    assert_eq!(store.get_usage(KeyId(uuid(2))).await.expect("read"), None);
}

async fn swapping_keeps_a_period_start_with_microseconds_exactly(store: &dyn Store) {
    let key = KeyId(uuid(1));
    let start = t0() + Duration::microseconds(123_456);
    assert!(store
        .swap_usage(None, usage(key, start, 1))
        .await
        .expect("swapped"));
    for n in 2..=3 {
        let read = store.get_usage(key).await.expect("read");
        assert_eq!(read, Some(usage(key, start, n - 1)));
        assert!(store
            .swap_usage(read, usage(key, start, n))
            .await
            .expect("swapped from what was read"));
    }
    assert_eq!(calls_used(store, key).await, Some(3));
}

async fn of_concurrent_swaps_from_one_counter_exactly_one_succeeds(store: &dyn Store) {
    let key = KeyId(uuid(1));
    let from = usage(key, t0(), 7);
    store.put_usage(&[from]).await.expect("written");
    let swaps = (0..20).map(|n| store.swap_usage(Some(from), usage(key, t0(), 100 + n)));
    let won: Vec<u64> = futures::future::join_all(swaps)
        .await
        .into_iter()
        .zip(100..)
        .filter_map(|(swapped, n)| swapped.expect("no store error").then_some(n))
        .collect();
    assert_eq!(won.len(), 1, "one swap wins: {won:?}");
    assert_eq!(calls_used(store, key).await, Some(won[0]));
}

/// Counts one call up to `quota` with swaps, as metering in the store does: the counter
/// after the call, or `None` when the quota is used up.
async fn count_by_swaps(store: &dyn Store, key: KeyId, quota: u64) -> Option<u64> {
    loop {
        let stored = store.get_usage(key).await.expect("read");
        let used = stored.map_or(0, |c| c.calls_used);
        if used >= quota {
            return None;
        }
        let next = usage(key, t0(), used + 1);
        if store
            .swap_usage(stored, next)
            .await
            .expect("no store error")
        {
            return Some(used + 1);
        }
    }
}

async fn counting_with_concurrent_swaps_hands_out_each_count_once(store: &dyn Store) {
    let key = KeyId(uuid(1));
    let calls = (0..60).map(|_| count_by_swaps(store, key, 25));
    let mut used: Vec<u64> = futures::future::join_all(calls)
        .await
        .into_iter()
        .flatten()
        .collect();
    used.sort_unstable();
    assert_eq!(
        used,
        (1..=25).collect::<Vec<u64>>(),
        "each count handed out once"
    );
    assert_eq!(calls_used(store, key).await, Some(25));
}

async fn a_claimed_delivery_is_not_claimed_again_until_written_or_its_lease_ends(
    store: &dyn Store,
) {
    let hook = webhook(1);
    store.put_webhook(&hook).await.expect("written");
    let event = EventId(uuid(50));
    let d = delivery(1, event, hook.id, t0());
    store
        .put_event(&event_with(&job(1), event, vec![d.clone()]))
        .await
        .expect("written");
    let now = t0() + Duration::seconds(1);
    let lease = now + Duration::seconds(60);
    // Not due yet: not claimed.
    let early = t0() - Duration::seconds(1);
    assert_eq!(
        store
            .claim_delivery(d.id, early, lease)
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        store
            .claim_delivery(d.id, now, lease)
            .await
            .expect("claimed"),
        Some(d.clone())
    );
    assert_eq!(
        store.claim_delivery(d.id, now, lease).await.expect("read"),
        None,
        "leased"
    );
    assert!(
        store
            .due_deliveries(now, 10)
            .await
            .expect("read")
            .is_empty(),
        "leased"
    );
    // The lease runs out: claimable again, and listed again.
    let later = lease + Duration::seconds(1);
    assert_eq!(
        store.due_deliveries(later, 10).await.expect("read").len(),
        1
    );
    let relet = later + Duration::seconds(60);
    assert!(store
        .claim_delivery(d.id, later, relet)
        .await
        .expect("claimed")
        .is_some());
    // Writing the delivery ends the lease: due again at once, claimable again.
    let mut retried = d.clone();
    retried.attempts = 1;
    retried.next_attempt_at = later;
    store.put_delivery(&retried).await.expect("written");
    assert_eq!(
        store
            .claim_delivery(d.id, later, relet)
            .await
            .expect("claimed"),
        Some(retried.clone())
    );
    // A settled delivery is never claimed.
    retried.status = DeliveryStatus::Succeeded;
    store.put_delivery(&retried).await.expect("written");
    let far = relet + Duration::days(1);
    assert_eq!(
        store.claim_delivery(d.id, far, far).await.expect("read"),
        None
    );
    assert_eq!(
        store
            .claim_delivery(DeliveryId(uuid(77)), far, far)
            .await
            .expect("read"),
        None
    );
}

async fn usage_counters_replace_earlier_values(store: &dyn Store) {
    let a = KeyId(uuid(1));
    let b = KeyId(uuid(2));
    store
        .put_usage(&[
            UsageCounter {
                key_id: a,
                period_start: t0(),
                calls_used: 5,
            },
            UsageCounter {
                key_id: b,
                period_start: t0(),
                calls_used: 1,
            },
        ])
        .await
        .expect("written");
    let next_period = t0() + Duration::days(30);
    store
        .put_usage(&[UsageCounter {
            key_id: a,
            period_start: next_period,
            calls_used: 2,
        }])
        .await
        .expect("written");
    let mut usage = store.scan_usage().await.expect("scan");
    usage.sort_by_key(|u| u.key_id);
    let mut expected = vec![
        UsageCounter {
            key_id: a,
            period_start: next_period,
            calls_used: 2,
        },
        UsageCounter {
            key_id: b,
            period_start: t0(),
            calls_used: 1,
        },
    ];
    expected.sort_by_key(|u| u.key_id);
    assert_eq!(usage, expected);
}

async fn webhooks_are_stored_scanned_and_deleted(store: &dyn Store) {
    let hooks: Vec<Subscription> = (1..=3).map(webhook).collect();
    for h in &hooks {
        store.put_webhook(h).await.expect("written");
    }
    let mut disabled = hooks[1].clone();
    disabled.status = SubscriptionStatus::Disabled;
    disabled.disabled_reason = Some("410 Gone".to_owned());
    store.put_webhook(&disabled).await.expect("written");

    let mut all = store.scan_webhooks().await.expect("scan");
    all.sort_by_key(|h| h.id);
    let mut expected = vec![hooks[0].clone(), disabled, hooks[2].clone()];
    expected.sort_by_key(|h| h.id);
    assert_eq!(all, expected);
    assert_eq!(all[0].secret.expose(), expected[0].secret.expose());

    assert!(store.delete_webhook(hooks[0].id).await.expect("deleted"));
    assert!(!store.delete_webhook(hooks[0].id).await.expect("deleted"));
    assert!(!store
        .delete_webhook(WebhookId(uuid(42)))
        .await
        .expect("deleted"));
    let left: Vec<WebhookId> = store
        .scan_webhooks()
        .await
        .expect("scan")
        .iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(left.len(), 2);
    assert!(!left.contains(&hooks[0].id));
}

async fn deleting_a_webhook_fails_its_pending_deliveries(store: &dyn Store) {
    let doomed = webhook(1);
    let kept = webhook(2);
    store.put_webhook(&doomed).await.expect("written");
    store.put_webhook(&kept).await.expect("written");
    let event = EventId(uuid(500));
    let d_doomed = delivery(1, event, doomed.id, t0());
    let d_kept = delivery(2, event, kept.id, t0());
    store
        .put_event(&event_with(
            &job(1),
            event,
            vec![d_doomed.clone(), d_kept.clone()],
        ))
        .await
        .expect("written");
    assert!(store.delete_webhook(doomed.id).await.expect("deleted"));

    let pending = store
        .due_deliveries(t0() + Duration::days(1), 100)
        .await
        .expect("pending");
    assert_eq!(pending, vec![d_kept]);
    let of_doomed = store
        .deliveries_of(doomed.id, 10)
        .await
        .expect("deliveries");
    assert_eq!(of_doomed.len(), 1);
    assert_eq!(of_doomed[0].id, d_doomed.id);
    assert_eq!(of_doomed[0].status, DeliveryStatus::Failed);
    assert!(of_doomed[0].last_error.is_some());
}

async fn put_event_stores_an_event_and_its_pending_deliveries(store: &dyn Store) {
    let hook = WebhookId(uuid(7));
    let event = EventId(uuid(600));
    let deliveries = vec![
        delivery(1, event, hook, t0()),
        delivery(2, event, WebhookId(uuid(8)), t0()),
    ];
    let j = job(3);
    store
        .put_event(&event_with(&j, event, deliveries.clone()))
        .await
        .expect("written");
    let stored = store
        .get_event(event)
        .await
        .expect("read")
        .expect("the event");
    assert_eq!(stored.id, event);
    assert_eq!(stored.kind, "job.new");
    assert_eq!(stored.created_at, t0());
    assert_eq!(stored.data, serde_json::to_value(&j).unwrap_or_default());
    assert!(stored.deliveries.is_empty(), "deliveries live apart");
    assert_eq!(
        store.get_event(EventId(uuid(601))).await.expect("read"),
        None
    );
    let mut pending = store.due_deliveries(t0(), 100).await.expect("pending");
    pending.sort_by_key(|d| d.id);
    let mut expected = deliveries;
    expected.sort_by_key(|d| d.id);
    assert_eq!(pending, expected);
}

async fn write_jobs_logs_events_in_order_and_new_webhooks_start_at_the_head(store: &dyn Store) {
    let early = webhook(1);
    store.put_webhook(&early).await.expect("written");
    assert_eq!(store.log_head().await.expect("head"), 0);
    store
        .write_jobs(&[
            announcing(job(1), EventId(uuid(601)), t0()),
            plain(job(2)),
            announcing(job(3), EventId(uuid(603)), t0() + Duration::seconds(1)),
        ])
        .await
        .expect("written");
    store
        .write_jobs(&[announcing(job(4), EventId(uuid(604)), t0())])
        .await
        .expect("written");
    let log = store.log_after(0, 10).await.expect("the log");
    let seen: Vec<(JobId, EventId)> = log.iter().map(|e| (e.job_id, e.event.id)).collect();
    assert_eq!(
        seen,
        [
            (job(1).id, EventId(uuid(601))),
            (job(3).id, EventId(uuid(603))),
            (job(4).id, EventId(uuid(604)))
        ]
    );
    assert!(log.windows(2).all(|w| w[0].position < w[1].position));
    assert_eq!(log[1].event.created_at, t0() + Duration::seconds(1));
    assert_eq!(store.log_head().await.expect("head"), log[2].position);
    assert_eq!(
        store.log_after(log[0].position, 1).await.expect("the log"),
        vec![log[1].clone()]
    );
    // A subscription hears of what is logged after it: the early one from the start, a new
    // one from the head; a re-registration keeps its place.
    let late = webhook(2);
    store.put_webhook(&late).await.expect("written");
    store.put_webhook(&early).await.expect("rewritten");
    let mut cursors = store.fan_out_cursors().await.expect("cursors");
    cursors.sort();
    let mut expected = vec![(early.id, 0), (late.id, log[2].position)];
    expected.sort();
    assert_eq!(cursors, expected);
    assert!(store.delete_webhook(late.id).await.expect("deleted"));
    assert_eq!(
        store.fan_out_cursors().await.expect("cursors"),
        vec![(early.id, 0)]
    );
}

async fn fan_out_applies_only_from_where_the_cursors_were_read(store: &dyn Store) {
    let (a, b) = (webhook(1), webhook(2));
    store.put_webhook(&a).await.expect("written");
    store.put_webhook(&b).await.expect("written");
    store
        .write_jobs(&[
            announcing(job(1), EventId(uuid(701)), t0()),
            announcing(job(2), EventId(uuid(702)), t0()),
        ])
        .await
        .expect("written");
    let head = store.log_head().await.expect("head");
    let event = event_with(&job(1), EventId(uuid(701)), Vec::new());
    let step = FanOut {
        events: vec![event.clone()],
        deliveries: vec![delivery(1, event.id, a.id, t0())],
        cursors: vec![
            CursorMove {
                webhook: a.id,
                from: 0,
                to: head,
            },
            CursorMove {
                webhook: b.id,
                from: 0,
                to: head,
            },
        ],
    };
    assert!(store.fan_out(&step).await.expect("applied"));
    assert_eq!(store.pending_count(a.id).await.expect("count"), 1);
    assert_eq!(store.pending_count(b.id).await.expect("count"), 0);
    let stored_payload = || async {
        store
            .get_event(event.id)
            .await
            .expect("read")
            .map(|e| e.data)
    };
    assert_eq!(stored_payload().await, Some(event.data.clone()));
    // Applied again from the old place (another process got there first): nothing written.
    let again = FanOut {
        deliveries: vec![delivery(2, event.id, a.id, t0())],
        ..step.clone()
    };
    assert!(!store.fan_out(&again).await.expect("refused"));
    assert_eq!(store.pending_count(a.id).await.expect("count"), 1);
    let mut cursors = store.fan_out_cursors().await.expect("cursors");
    cursors.sort();
    let mut expected = vec![(a.id, head), (b.id, head)];
    expected.sort();
    assert_eq!(cursors, expected);
    // A stored event keeps its payload: a later step does not replace it.
    let changed = OutboxEvent {
        data: serde_json::json!({"changed": true}),
        ..event.clone()
    };
    store
        .write_jobs(&[announcing(job(3), EventId(uuid(703)), t0())])
        .await
        .expect("written");
    let next = store.log_head().await.expect("head");
    assert!(store
        .fan_out(&FanOut {
            events: vec![changed],
            deliveries: vec![delivery(3, event.id, b.id, t0())],
            cursors: vec![CursorMove {
                webhook: b.id,
                from: head,
                to: next,
            }],
        })
        .await
        .expect("applied"));
    assert_eq!(stored_payload().await, Some(event.data.clone()));
}

async fn due_deliveries_gives_each_subscription_its_soonest(store: &dyn Store) {
    let (busy, quiet) = (WebhookId(uuid(7)), WebhookId(uuid(8)));
    let event = EventId(uuid(750));
    let mut ds: Vec<Delivery> = (1..=6)
        .map(|n| delivery(n, event, busy, t0() + Duration::seconds(n as i64)))
        .collect();
    ds.push(delivery(7, event, quiet, t0() + Duration::seconds(30)));
    store
        .put_event(&event_with(&job(1), event, ds.clone()))
        .await
        .expect("written");
    let mut due = store
        .due_deliveries(t0() + Duration::minutes(1), 2)
        .await
        .expect("due");
    due.sort_by_key(|d| d.id);
    let mut expected = vec![ds[0].clone(), ds[1].clone(), ds[6].clone()];
    expected.sort_by_key(|d| d.id);
    assert_eq!(due, expected);
    assert_eq!(store.pending_count(busy).await.expect("count"), 6);
}

async fn prune_removes_what_is_settled_old_and_passed(store: &dyn Store) {
    let hook = webhook(1);
    store.put_webhook(&hook).await.expect("written");
    let old = EventId(uuid(800));
    let mut settled = delivery(1, old, hook.id, t0());
    settled.status = DeliveryStatus::Succeeded;
    let pending = delivery(2, old, hook.id, t0());
    let mut recent = delivery(3, old, hook.id, t0());
    recent.status = DeliveryStatus::Failed;
    recent.history.push(DeliveryAttempt {
        at: t0() + Duration::days(40),
        status_code: Some(500),
        latency_ms: 3,
        error: None,
    });
    store
        .put_event(&event_with(
            &job(1),
            old,
            vec![settled.clone(), pending.clone(), recent.clone()],
        ))
        .await
        .expect("written");
    // Two writes: a store may keep one write's entries together and prune them together.
    for (n, event) in [(2, 801), (3, 802)] {
        store
            .write_jobs(&[announcing(job(n), EventId(uuid(event)), t0())])
            .await
            .expect("written");
    }
    let log = store.log_after(0, 10).await.expect("the log");
    // The subscription has been given the first entry only.
    assert!(store
        .fan_out(&FanOut {
            cursors: vec![CursorMove {
                webhook: hook.id,
                from: 0,
                to: log[0].position,
            }],
            ..FanOut::default()
        })
        .await
        .expect("applied"));

    let cutoff = t0() + Duration::days(30);
    let pruned = store.prune(cutoff, cutoff, 100).await.expect("pruned");
    assert_eq!(
        pruned,
        Pruned {
            deliveries: 1,
            events: 1,
            log_entries: 1
        }
    );
    let mut left: Vec<DeliveryId> = store
        .deliveries_of(hook.id, 10)
        .await
        .expect("deliveries")
        .into_iter()
        .map(|d| d.id)
        .collect();
    left.sort();
    assert_eq!(
        left,
        [pending.id, recent.id],
        "pending ones are never pruned"
    );
    assert_eq!(store.get_delivery(settled.id).await.expect("read"), None);
    assert_eq!(store.get_event(old).await.expect("read"), None);
    assert_eq!(
        store.log_after(0, 10).await.expect("the log"),
        log[1..].to_vec(),
        "entries the subscription has not been given stay"
    );
    assert_eq!(
        store.prune(cutoff, cutoff, 100).await.expect("pruned"),
        Pruned::default()
    );
}

async fn pending_deliveries_are_due_ones_soonest_first_up_to_the_limit(store: &dyn Store) {
    let hook = WebhookId(uuid(7));
    let event = EventId(uuid(700));
    let at = |mins: i64| t0() + Duration::minutes(mins);
    // Written out of order; one before the epoch to check the ordering of negative times.
    let ds = vec![
        delivery(1, event, hook, at(30)),
        delivery(2, event, hook, at(-10)),
        delivery(3, event, hook, at(90)),
        delivery(4, event, hook, at(0)),
        delivery(
            5,
            event,
            hook,
            Utc.with_ymd_and_hms(1960, 1, 1, 0, 0, 0)
                .single()
                .expect("a time"),
        ),
        delivery(6, event, hook, at(1)),
    ];
    store
        .put_event(&event_with(&job(1), event, ds.clone()))
        .await
        .expect("written");
    let ids = |v: Vec<Delivery>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
    let due = store.due_deliveries(at(30), 100).await.expect("pending");
    assert_eq!(
        ids(due),
        [ds[4].id, ds[1].id, ds[3].id, ds[5].id, ds[0].id],
        "due at or before the time, soonest first"
    );
    let two = store.due_deliveries(at(30), 2).await.expect("pending");
    assert_eq!(ids(two), [ds[4].id, ds[1].id]);
    assert!(store
        .due_deliveries(
            Utc.with_ymd_and_hms(1950, 1, 1, 0, 0, 0)
                .single()
                .expect("t"),
            10
        )
        .await
        .expect("pending")
        .is_empty());
    assert_eq!(
        store
            .due_deliveries(at(1000), 100)
            .await
            .expect("pending")
            .len(),
        6
    );
}

async fn put_delivery_moves_a_delivery_out_of_pending_when_it_succeeds(store: &dyn Store) {
    let hook = WebhookId(uuid(7));
    let event = EventId(uuid(800));
    let a = delivery(1, event, hook, t0());
    let b = delivery(2, event, hook, t0() + Duration::minutes(1));
    store
        .put_event(&event_with(&job(1), event, vec![a.clone(), b.clone()]))
        .await
        .expect("written");

    let mut done = a.clone();
    done.status = DeliveryStatus::Succeeded;
    done.attempts = 1;
    store.put_delivery(&done).await.expect("written");
    let later = t0() + Duration::hours(1);
    let pending = store.due_deliveries(later, 10).await.expect("pending");
    assert_eq!(pending, vec![b.clone()]);

    // A retry moves a delivery's due time: it is due at the new time only.
    let mut retry = b.clone();
    retry.attempts = 1;
    retry.last_error = Some("HTTP 503".to_owned());
    retry.next_attempt_at = t0() + Duration::hours(2);
    store.put_delivery(&retry).await.expect("written");
    assert!(store
        .due_deliveries(later, 10)
        .await
        .expect("pending")
        .is_empty());
    assert_eq!(
        store
            .due_deliveries(t0() + Duration::hours(2), 10)
            .await
            .expect("pending"),
        vec![retry.clone()]
    );

    let mut failed = retry;
    failed.status = DeliveryStatus::Failed;
    store.put_delivery(&failed).await.expect("written");
    assert!(store
        .due_deliveries(t0() + Duration::days(9), 10)
        .await
        .expect("pending")
        .is_empty());
    let mut all = store.deliveries_of(hook, 10).await.expect("deliveries");
    all.sort_by_key(|d| d.id);
    let mut expected = vec![done, failed];
    expected.sort_by_key(|d| d.id);
    assert_eq!(all, expected);
}

async fn deliveries_of_lists_one_webhooks_deliveries_newest_first_up_to_the_limit(
    store: &dyn Store,
) {
    let hook = WebhookId(uuid(7));
    let other = WebhookId(uuid(8));
    let event = EventId(uuid(900));
    let at = |mins: i64| t0() + Duration::minutes(mins);
    let ds = vec![
        delivery(1, event, hook, at(5)),
        delivery(2, event, other, at(50)),
        delivery(3, event, hook, at(20)),
        delivery(4, event, hook, at(-3)),
    ];
    store
        .put_event(&event_with(&job(1), event, ds.clone()))
        .await
        .expect("written");
    let ids = |v: Vec<Delivery>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.deliveries_of(hook, 10).await.expect("deliveries")),
        [ds[2].id, ds[0].id, ds[3].id]
    );
    assert_eq!(
        ids(store.deliveries_of(hook, 2).await.expect("deliveries")),
        [ds[2].id, ds[0].id]
    );
    assert_eq!(
        ids(store.deliveries_of(other, 10).await.expect("deliveries")),
        [ds[1].id]
    );
    assert!(store
        .deliveries_of(WebhookId(uuid(9)), 10)
        .await
        .expect("deliveries")
        .is_empty());
}

/// The feed's changes after `after`, or `None` for a store without a feed.
async fn feed_after(store: &dyn Store, after: Option<u64>) -> Option<Vec<ChangedRecord>> {
    let (feed, after) = (store.change_feed()?, after?);
    let changes = feed.changes_after(after, 1_000).await.expect("the feed");
    Some(changes.into_iter().map(|c| c.record).collect())
}

async fn feed_head(store: &dyn Store) -> Option<u64> {
    match store.change_feed() {
        Some(feed) => Some(feed.head().await.expect("the feed's head")),
        None => None,
    }
}

async fn deleting_a_job_removes_it_for_good_and_counts_as_a_write_of_jobs(store: &dyn Store) {
    let announced = announcing(job(2), EventId(uuid(602)), t0());
    store
        .write_jobs(&[plain(job(1)), announced, plain(job(3))])
        .await
        .expect("written");
    // Read first, so a store that keeps what it read has it to forget.
    assert!(store.get_job(job(2).id).await.expect("read").is_some());
    let version = store.jobs_version().await.expect("the version");
    let head = feed_head(store).await;

    assert!(store.delete_job(job(2).id).await.expect("deleted"));

    assert_eq!(store.get_job(job(2).id).await.expect("read"), None);
    let ids = [job(1).id, job(2).id, job(3).id];
    assert_eq!(
        unshared(store.get_jobs(&ids).await.expect("read")),
        vec![job(1), job(3)]
    );
    let mut left = vec![job(1), job(3)];
    left.sort_by_key(|j| j.id);
    assert_eq!(store.scan_jobs(None, 10).await.expect("scan"), left);
    // A store that versions its jobs counts the delete as a write of the job, so an index
    // snapshot taken before it is brought up to date by dropping the job.
    if let Some(before) = version {
        let after = store.jobs_version().await.expect("the version");
        assert_ne!(after, Some(before), "the delete changes the jobs version");
        if let Some(written) = store.jobs_written_since(before).await.expect("read") {
            assert_eq!(written, vec![job(2).id]);
        }
    }
    // A store shared by replicas tells them, so each drops the job from its index.
    if let Some(changes) = feed_after(store, head).await {
        assert_eq!(changes, vec![ChangedRecord::Job(job(2).id)]);
    }
    // The log entry stays: fan-out skips an entry whose job is gone.
    let log = store.log_after(0, 10).await.expect("the log");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].job_id, job(2).id);

    // Deleting what is not there changes nothing.
    let version = store.jobs_version().await.expect("the version");
    let head = feed_head(store).await;
    assert!(!store.delete_job(job(2).id).await.expect("deleted"));
    assert!(!store.delete_job(JobId(uuid(99))).await.expect("deleted"));
    assert_eq!(store.jobs_version().await.expect("the version"), version);
    if let Some(changes) = feed_after(store, head).await {
        assert_eq!(changes, Vec::new());
    }
    // And a deleted job can be written again, as a new one.
    store.write_jobs(&[plain(job(2))]).await.expect("written");
    assert_eq!(
        store.get_job(job(2).id).await.expect("read").as_deref(),
        Some(&job(2))
    );
}

/// A write of `job` recorded in the job change feed as `kind`.
fn changing(job: Job, kind: ChangeKind) -> JobWrite {
    JobWrite {
        job,
        events: Vec::new(),
        change: Some(kind),
        decided_on: DecidedOn::Nothing,
    }
}

/// The feed's entries after `after` as (kind, job id, the job's state), for comparing.
async fn feed_states(store: &dyn Store, after: u64) -> Vec<(ChangeKind, JobId, Option<Job>)> {
    store
        .feed_after(after, 100)
        .await
        .expect("the job feed")
        .into_iter()
        .map(|e| (e.kind, e.job_id, e.job.map(Arc::unwrap_or_clone)))
        .collect()
}

async fn the_job_feed_keeps_each_state_an_entry_refers_to(store: &dyn Store) {
    assert_eq!(
        store.feed_bounds().await.expect("bounds"),
        FeedBounds::default()
    );
    let v1 = job(1);
    let mut v2 = job(1);
    v2.role = "Second state".to_owned();
    v2.updated_at = t0() + Duration::seconds(1);
    let mut v3 = v2.clone();
    v3.status = JobStatus::Closed;
    v3.updated_at = t0() + Duration::seconds(2);
    let other = job(2);
    store
        .write_jobs(&[
            changing(v1.clone(), ChangeKind::New),
            changing(other.clone(), ChangeKind::New),
        ])
        .await
        .expect("written");
    // A job twice in one write: each state kept for its own entry.
    store
        .write_jobs(&[
            changing(v2.clone(), ChangeKind::Updated),
            changing(v3.clone(), ChangeKind::Closed),
        ])
        .await
        .expect("written");
    // The same content again, with no entry: the entries keep their states.
    store
        .write_jobs(&[plain(v3.clone())])
        .await
        .expect("written");
    let want = vec![
        (ChangeKind::New, v1.id, Some(v1.clone())),
        (ChangeKind::New, other.id, Some(other.clone())),
        (ChangeKind::Updated, v1.id, Some(v2.clone())),
        (ChangeKind::Closed, v1.id, Some(v3.clone())),
    ];
    assert_eq!(feed_states(store, 0).await, want);
    let entries = store.feed_after(0, 100).await.expect("the job feed");
    let positions: Vec<u64> = entries.iter().map(|e| e.position).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert_eq!(entries[2].at, v2.updated_at);
    let bounds = store.feed_bounds().await.expect("bounds");
    assert_eq!(bounds.head, positions[3]);
    assert_eq!(bounds.pruned_through, 0);
    // Reading from the middle gives the rest, in order.
    assert_eq!(feed_states(store, positions[1]).await, want[2..].to_vec());
    assert_eq!(
        store.feed_after(positions[3], 10).await.expect("read"),
        Vec::new()
    );

    // Deleted for good: its content is served by no entry, and the deletion is one.
    assert!(store.delete_job(v1.id).await.expect("deleted"));
    let after_delete = feed_states(store, 0).await;
    assert_eq!(
        after_delete,
        vec![
            (ChangeKind::New, v1.id, None),
            (ChangeKind::New, other.id, Some(other.clone())),
            (ChangeKind::Updated, v1.id, None),
            (ChangeKind::Closed, v1.id, None),
            (ChangeKind::Deleted, v1.id, None),
        ]
    );

    // Retention removes the oldest entries made before the cutoff, and says how far.
    let removed = store
        .prune_feed(t0() + Duration::milliseconds(1500), 2)
        .await
        .expect("pruned");
    assert_eq!(removed, 2);
    let bounds = store.feed_bounds().await.expect("bounds");
    assert_eq!(bounds.pruned_through, positions[1]);
    assert_eq!(feed_states(store, 0).await, after_delete[2..].to_vec());
    // Entries after the cutoff stay, however large the limit.
    let removed = store
        .prune_feed(t0() + Duration::milliseconds(1500), 100)
        .await
        .expect("pruned");
    assert_eq!(removed, 1, "only the update was made before the cutoff");
    assert_eq!(
        store.feed_bounds().await.expect("bounds").pruned_through,
        positions[2]
    );

    // A job written after its entries were pruned is in the feed again from then on.
    store
        .write_jobs(&[changing(other.clone(), ChangeKind::Updated)])
        .await
        .expect("written");
    let last = store.feed_after(positions[3], 10).await.expect("read");
    assert_eq!(last.len(), 2);
    assert_eq!(last[1].job.as_deref(), Some(&other));
}

async fn deleting_a_company_removes_it_for_good(store: &dyn Store) {
    store
        .put_companies(&[company(1), company(2)])
        .await
        .expect("written");
    let head = feed_head(store).await;
    assert!(store.delete_company(company(1).id).await.expect("deleted"));
    assert_eq!(store.get_company(company(1).id).await.expect("read"), None);
    assert_eq!(
        store.scan_companies(None, 10).await.expect("scan"),
        vec![company(2)]
    );
    if let Some(changes) = feed_after(store, head).await {
        assert_eq!(changes, vec![ChangedRecord::Company(company(1).id)]);
    }
    assert!(!store.delete_company(company(1).id).await.expect("deleted"));
    assert!(!store
        .delete_company(CompanyId(uuid(99)))
        .await
        .expect("deleted"));
}

async fn an_empty_store_has_nothing(store: &dyn Store) {
    assert!(store.scan_jobs(None, 10).await.expect("scan").is_empty());
    assert!(store
        .scan_companies(None, 10)
        .await
        .expect("scan")
        .is_empty());
    assert!(store.scan_keys().await.expect("scan").is_empty());
    assert!(store.scan_usage().await.expect("scan").is_empty());
    assert!(store.scan_webhooks().await.expect("scan").is_empty());
    assert!(store
        .due_deliveries(t0() + Duration::days(10_000), 10)
        .await
        .expect("pending")
        .is_empty());
}

/// Writes one of everything; used by the reopen check.
async fn write_one_of_everything(store: &dyn Store) -> (Job, Company, ApiKeyRecord, Subscription) {
    let j = job(1);
    let c = company(1);
    let k = key_record(1, Plan::Enterprise);
    let w = webhook(1);
    let event = EventId(uuid(1_500));
    store
        .put_companies(std::slice::from_ref(&c))
        .await
        .expect("written");
    store
        .write_jobs(&[plain(j.clone())])
        .await
        .expect("written");
    store
        .put_event(&event_with(&j, event, vec![delivery(1, event, w.id, t0())]))
        .await
        .expect("written");
    store.put_key(&k).await.expect("written");
    store.put_webhook(&w).await.expect("written");
    store
        .put_usage(&[UsageCounter {
            key_id: k.id,
            period_start: t0(),
            calls_used: 17,
        }])
        .await
        .expect("written");
    (j, c, k, w)
}

// ---------------------------------------------------------------------------------------------
// The implementations.
// ---------------------------------------------------------------------------------------------

/// A fresh store of one kind, plus whatever must live as long as it.
trait Fixture: Sized {
    async fn open() -> (Arc<dyn Store>, Self);
}

struct Memory;

impl Fixture for Memory {
    async fn open() -> (Arc<dyn Store>, Self) {
        (Arc::new(MemoryStore::new()), Memory)
    }
}

struct Sled(#[allow(dead_code)] tempfile::TempDir);

impl Fixture for Sled {
    async fn open() -> (Arc<dyn Store>, Self) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store = SledStore::open(&sled_config(&dir.path().join("db"))).expect("sled opens");
        (Arc::new(store), Sled(dir))
    }
}

/// A PostgreSQL store on a schema of its own, dropped afterwards.
struct Pg(#[allow(dead_code)] TestSchema);

impl Fixture for Pg {
    async fn open() -> (Arc<dyn Store>, Self) {
        let schema = TestSchema::create().await;
        let store = PgStore::open(&schema.config(4))
            .await
            .expect("the PostgreSQL store opens");
        (Arc::new(store), Pg(schema))
    }
}

/// Generates one `#[tokio::test]` per check for one store, each with the attributes given
/// after the fixture.
macro_rules! store_suite {
    ($module:ident, $fixture:ty $(, #[$attr:meta])*) => {
        mod $module {
            use super::*;

            macro_rules! check {
                ($name:ident) => {
                    #[tokio::test]
                    $(#[$attr])*
                    async fn $name() {
                        let (store, _keep) = <$fixture as Fixture>::open().await;
                        super::$name(store.as_ref()).await;
                    }
                };
            }

            check!(an_empty_store_has_nothing);
            check!(a_job_round_trips_exactly);
            check!(a_job_write_replaces_the_previous_version);

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            $(#[$attr])*
            async fn reads_racing_rewrites_never_go_back() {
                let (store, _keep) = <$fixture as Fixture>::open().await;
                super::reads_racing_rewrites_never_go_back(store).await;
            }
            check!(confidences_round_trip_bit_for_bit);
            check!(get_jobs_keeps_the_order_asked_and_skips_unknown_ids);
            check!(scan_jobs_and_their_json_page_through_every_job_in_id_order);
            check!(companies_are_stored_replaced_and_scanned_in_id_order);
            check!(keys_are_stored_and_replaced);
            check!(usage_counters_replace_earlier_values);
            check!(get_key_and_get_webhook_read_one_record_by_id);
            check!(get_jobs_gives_each_job_in_the_order_asked);
            check!(swap_usage_writes_only_over_the_counter_expected);
            check!(swapping_keeps_a_period_start_with_microseconds_exactly);
            check!(of_concurrent_swaps_from_one_counter_exactly_one_succeeds);
            check!(counting_with_concurrent_swaps_hands_out_each_count_once);
            check!(a_claimed_delivery_is_not_claimed_again_until_written_or_its_lease_ends);
            check!(webhooks_are_stored_scanned_and_deleted);
            check!(deleting_a_webhook_fails_its_pending_deliveries);
            check!(put_event_stores_an_event_and_its_pending_deliveries);
            check!(write_jobs_logs_events_in_order_and_new_webhooks_start_at_the_head);
            check!(fan_out_applies_only_from_where_the_cursors_were_read);
            check!(due_deliveries_gives_each_subscription_its_soonest);
            check!(prune_removes_what_is_settled_old_and_passed);
            check!(pending_deliveries_are_due_ones_soonest_first_up_to_the_limit);
            check!(put_delivery_moves_a_delivery_out_of_pending_when_it_succeeds);
            check!(deliveries_of_lists_one_webhooks_deliveries_newest_first_up_to_the_limit);
            check!(deleting_a_job_removes_it_for_good_and_counts_as_a_write_of_jobs);
            check!(deleting_a_company_removes_it_for_good);
            check!(the_job_feed_keeps_each_state_an_entry_refers_to);
        }
    };
}

store_suite!(memory_store, Memory);
store_suite!(sled_store, Sled);
store_suite!(
    postgres_store,
    Pg,
    #[ignore = "needs PostgreSQL: set DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and run cargo test -- --ignored"]
);

/// sled shows a write before it is on disk; the job feed does not: an entry a crash could
/// still lose is never read, or a reader could pass a position that is then handed out again
/// to another entry. A deferred write's entries appear once it is flushed.
#[tokio::test]
async fn sled_job_feed_shows_only_entries_on_disk() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = sled_config(&dir.path().join("db"));
    let store = SledStore::open(&config).expect("sled opens");
    store
        .write_jobs_deferred(&[changing(job(1), ChangeKind::New)])
        .await
        .expect("written");
    assert!(store.get_job(job(1).id).await.expect("read").is_some());
    assert_eq!(store.feed_after(0, 10).await.expect("read"), Vec::new());
    assert_eq!(store.feed_bounds().await.expect("bounds").head, 0);
    store.flush().await.expect("flushed");
    assert_eq!(store.feed_after(0, 10).await.expect("read").len(), 1);
    assert_eq!(store.feed_bounds().await.expect("bounds").head, 1);
    // A durable write shows its entries as it returns; a reopen finds them all on disk.
    store
        .write_jobs(&[changing(job(2), ChangeKind::New)])
        .await
        .expect("written");
    assert_eq!(store.feed_after(0, 10).await.expect("read").len(), 2);
    drop(store);
    let store = SledStore::open(&config).expect("sled reopens");
    assert_eq!(store.feed_bounds().await.expect("bounds").head, 2);
    assert_eq!(store.feed_after(1, 10).await.expect("read").len(), 1);
}

/// A folder written before job records had versions holds each job as its JSON: it opens as it
/// is, its jobs read as they were (a field an earlier version did not write takes its
/// default), and a job written again is kept in the current record format.
#[tokio::test]
async fn sled_store_reads_jobs_an_earlier_version_stored_as_json() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = sled_config(&dir.path().join("db"));
    let mut j = job(7);
    j.activated_at = Some(t0());
    {
        let db = raw_sled(&config.path).await;
        let jobs = db.open_tree("jobs").expect("the jobs tree");
        let mut old = serde_json::to_value(&j).expect("encoded");
        let fields = old.as_object_mut().expect("an object");
        fields.remove("activated_at");
        let reordered: serde_json::Map<String, serde_json::Value> =
            fields.clone().into_iter().rev().collect();
        let bytes = serde_json::to_vec(&reordered).expect("encoded");
        jobs.insert(j.id.0.as_bytes(), bytes).expect("written");
        db.flush().expect("flushed");
    }
    {
        let store = SledStore::open(&config).expect("sled opens");
        let as_stored = Job {
            activated_at: None,
            ..j.clone()
        };
        assert_eq!(
            store.get_job(j.id).await.expect("read").as_deref(),
            Some(&as_stored)
        );
        assert_eq!(
            store.scan_jobs(None, 10).await.expect("scan"),
            vec![as_stored]
        );
        store
            .write_jobs(&[plain(j.clone())])
            .await
            .expect("written");
        assert_eq!(
            store.get_job(j.id).await.expect("read").as_deref(),
            Some(&j)
        );
    }
    // Written again, the record is no longer JSON; and it reads back after a reopen.
    {
        let db = raw_sled(&config.path).await;
        let jobs = db.open_tree("jobs").expect("the jobs tree");
        let record = jobs.get(j.id.0.as_bytes()).expect("read").expect("stored");
        assert_ne!(record.first(), Some(&b'{'), "a versioned record");
    }
    let store = SledStore::open(&config).expect("sled reopens");
    assert_eq!(
        store.get_job(j.id).await.expect("read").as_deref(),
        Some(&j)
    );
}

/// One subscription's deliveries are read through their own index: a folder written before
/// the index was kept gets it at its next open, and another subscription's records (even one
/// that cannot be read) are never read for them.
#[tokio::test]
async fn sled_store_reads_one_webhooks_deliveries_without_reading_the_others() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = sled_config(&dir.path().join("db"));
    let (hook, other, event) = (WebhookId(uuid(7)), WebhookId(uuid(8)), EventId(uuid(900)));
    let ds = vec![
        delivery(1, event, hook, t0()),
        delivery(2, event, other, t0()),
        delivery(3, event, hook, t0() + Duration::minutes(1)),
    ];
    {
        let store = SledStore::open(&config).expect("sled opens");
        store
            .put_event(&event_with(&job(1), event, ds.clone()))
            .await
            .expect("written");
    }
    // As an earlier version left the folder: no indexes, and one record nobody can read.
    {
        let db = raw_sled(&config.path).await;
        db.drop_tree("deliveries_by_webhook").expect("dropped");
        db.drop_tree("deliveries_due_by_webhook").expect("dropped");
        db.open_tree("meta")
            .expect("the meta tree")
            .remove("outbox_layout_3")
            .expect("removed");
        db.open_tree("deliveries")
            .expect("the deliveries tree")
            .insert(uuid(5_000).as_bytes(), b"not a delivery".as_slice())
            .expect("written");
        db.flush().expect("flushed");
    }
    let store = SledStore::open(&config).expect("the folder opens and is indexed");
    let ids = |v: Vec<Delivery>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
    let mine = store
        .deliveries_of(hook, 10)
        .await
        .expect("this webhook's deliveries");
    assert_eq!(ids(mine), [ds[2].id, ds[0].id]);
    let theirs = store.deliveries_of(other, 10).await.expect("the other's");
    assert_eq!(ids(theirs), [ds[1].id]);
    // Deleting a subscription (none was registered here) fails its pending deliveries only.
    assert!(!store.delete_webhook(hook).await.expect("deleted"));
    let failed = store
        .deliveries_of(hook, 10)
        .await
        .expect("after the delete");
    assert!(failed.iter().all(|d| d.status == DeliveryStatus::Failed));
    let untouched = store.deliveries_of(other, 10).await.expect("the other's");
    assert_eq!(untouched[0].status, DeliveryStatus::Pending);
    // The due index was rebuilt too: the other's delivery is due, the deleted one's not.
    let due = store.due_deliveries(t0(), 10).await.expect("due");
    assert_eq!(ids(due), [ds[1].id]);
}

#[tokio::test]
async fn sled_store_keeps_everything_after_the_folder_is_closed_and_reopened() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = sled_config(&dir.path().join("db"));
    let (j, c, k, w) = {
        let store = SledStore::open(&config).expect("sled opens");
        write_one_of_everything(&store).await
        // The store (and its file lock) is dropped here.
    };
    let store = SledStore::open(&config).expect("sled reopens");
    assert_eq!(
        store.get_job(j.id).await.expect("read").as_deref(),
        Some(&j)
    );
    assert_eq!(store.get_company(c.id).await.expect("read"), Some(c));
    assert_eq!(store.scan_keys().await.expect("scan"), vec![k.clone()]);
    let hooks = store.scan_webhooks().await.expect("scan");
    assert_eq!(hooks, vec![w.clone()]);
    assert_eq!(hooks[0].secret.expose(), w.secret.expose());
    assert_eq!(
        store.scan_usage().await.expect("scan"),
        vec![UsageCounter {
            key_id: k.id,
            period_start: t0(),
            calls_used: 17,
        }]
    );
    let pending = store.due_deliveries(t0(), 10).await.expect("pending");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].webhook_id, w.id);
    assert!(store
        .get_event(pending[0].event_id)
        .await
        .expect("read")
        .is_some());
}

/// A start after a crash loads the last index snapshot and indexes again only the jobs
/// written after it: the store names them, durably, until a newer snapshot covers them.
#[tokio::test]
async fn sled_store_names_the_jobs_written_after_a_version_until_a_snapshot_covers_them() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let config = sled_config(&dir.path().join("db"));
    let ids = |ns: &[u64]| {
        let mut ids: Vec<JobId> = ns.iter().map(|&n| job(n).id).collect();
        ids.sort();
        ids
    };
    let (v0, v1, v3) = {
        let store = SledStore::open(&config).expect("sled opens");
        let v0 = store.jobs_version().await.expect("version").expect("kept");
        store
            .write_jobs(&[plain(job(1)), plain(job(2))])
            .await
            .expect("written");
        let v1 = store.jobs_version().await.expect("version").expect("kept");
        store
            .write_jobs(&[plain(job(2)), plain(job(3)), plain(job(3))])
            .await
            .expect("written");
        store
            .write_jobs_deferred(&[plain(job(4))])
            .await
            .expect("written");
        store.flush().await.expect("flushed");
        let v3 = store.jobs_version().await.expect("version").expect("kept");
        assert_eq!((v1, v3), (v0 + 1, v0 + 3), "one version per write");

        let since = |v| store.jobs_written_since(v);
        assert_eq!(since(v0).await.expect("read"), Some(ids(&[1, 2, 3, 4])));
        assert_eq!(since(v1).await.expect("read"), Some(ids(&[2, 3, 4])));
        assert_eq!(since(v3).await.expect("read"), Some(Vec::new()));
        assert_eq!(
            since(v3 + 1).await.expect("read"),
            None,
            "a version not reached"
        );
        (v0, v1, v3)
    };

    // Reopened: the record outlives the process.
    let store = SledStore::open(&config).expect("sled reopens");
    let since = |v| store.jobs_written_since(v);
    assert_eq!(since(v1).await.expect("read"), Some(ids(&[2, 3, 4])));

    // A snapshot at v1 covers what was written up to it: the store forgets that part, and
    // can no longer say what changed since v0.
    store
        .save_index_snapshot(IndexSnapshot {
            jobs_version: v1,
            bytes: vec![1, 2, 3],
        })
        .await
        .expect("saved");
    assert_eq!(since(v0).await.expect("read"), None);
    assert_eq!(since(v1).await.expect("read"), Some(ids(&[2, 3, 4])));
    assert_eq!(since(v3).await.expect("read"), Some(Vec::new()));
}

/// Jobs as a store shares them, as values to compare.
fn unshared(jobs: Vec<Arc<Job>>) -> Vec<Job> {
    jobs.into_iter().map(Arc::unwrap_or_clone).collect()
}

/// The sled database in `path` opened directly, as an earlier version of the store left it.
/// A store dropped a moment ago may still hold its lock (sled's threads let go shortly
/// after), so a locked folder is tried again for up to 10 s.
async fn raw_sled(path: &std::path::Path) -> sled::Db {
    when_unlocked(
        || sled::open(path),
        |e| matches!(e, sled::Error::Io(io) if io.to_string().contains("lock")),
    )
    .await
    .unwrap_or_else(|e| panic!("sled opens: {e}"))
}
