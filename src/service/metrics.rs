//! What the service counts while it works, and how it is written for a metrics scrape: jobs
//! ingested, webhook deliveries by outcome with the time each attempt took and the attempts
//! each delivery needed, how long store writes take, and the gauges of
//! [`JobListingsService::stats`], read at scrape time.
//!
//! Counters are plain atomics written out through a [`Collector`], so counting costs one
//! atomic addition and no label lookup. The service knows nothing of HTTP: the HTTP layer
//! registers [`JobListingsService::register_metrics`] beside its own.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Weak};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::histogram::DurationHistogram;
use super::stats::ServiceStats;
use super::{Inner, JobListingsService, Shared};

/// A kind of store write, timed apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoreWrite {
    /// Jobs with their outbox log entries (ingest, import, closing, deletion).
    Jobs,
    /// Companies (written, deleted).
    Companies,
    /// Key records (issued, changed).
    Keys,
    /// Usage counters (the in-memory meter's writes, or one call counted in the store).
    Usage,
    /// Webhook subscriptions (written, deleted).
    Webhooks,
    /// A delivery after an attempt.
    Deliveries,
    /// A fan-out step: deliveries made from the outbox log, cursors moved.
    FanOut,
    /// An event outside the log (a test ping) with its delivery.
    Events,
}

impl StoreWrite {
    const ALL: [StoreWrite; 8] = [
        StoreWrite::Jobs,
        StoreWrite::Companies,
        StoreWrite::Keys,
        StoreWrite::Usage,
        StoreWrite::Webhooks,
        StoreWrite::Deliveries,
        StoreWrite::FanOut,
        StoreWrite::Events,
    ];

    fn label(self) -> &'static str {
        match self {
            StoreWrite::Jobs => "jobs",
            StoreWrite::Companies => "companies",
            StoreWrite::Keys => "keys",
            StoreWrite::Usage => "usage",
            StoreWrite::Webhooks => "webhooks",
            StoreWrite::Deliveries => "deliveries",
            StoreWrite::FanOut => "fan_out",
            StoreWrite::Events => "events",
        }
    }
}

/// What became of a delivery attempt, or of a delivery dropped without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeliveryOutcome {
    /// The receiver answered 2xx.
    Succeeded,
    /// The attempt failed and the delivery is retried later.
    FailedWillRetry,
    /// The attempt failed and no retry is left (or the receiver answered 410).
    FailedFinal,
    /// Failed without an attempt: its subscription was deleted or disabled, its key lost
    /// webhooks, or its event is gone.
    FailedUnsent,
}

impl DeliveryOutcome {
    const ALL: [DeliveryOutcome; 4] = [
        DeliveryOutcome::Succeeded,
        DeliveryOutcome::FailedWillRetry,
        DeliveryOutcome::FailedFinal,
        DeliveryOutcome::FailedUnsent,
    ];

    fn label(self) -> &'static str {
        match self {
            DeliveryOutcome::Succeeded => "succeeded",
            DeliveryOutcome::FailedWillRetry => "failed_will_retry",
            DeliveryOutcome::FailedFinal => "failed_final",
            DeliveryOutcome::FailedUnsent => "failed_unsent",
        }
    }
}

/// Jobs written, by what the write did to each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct JobsWritten {
    /// Jobs not stored before.
    pub(crate) created: u64,
    /// Stored jobs written again, still active or still closed, or opened again.
    pub(crate) updated: u64,
    /// Active jobs closed.
    pub(crate) closed: u64,
}

/// The service's counters and histograms.
#[derive(Debug)]
pub(crate) struct ServiceMetrics {
    jobs_created: AtomicU64,
    jobs_updated: AtomicU64,
    jobs_closed: AtomicU64,
    /// Job searches answered from a kept result, and searched in the index.
    searches_kept: AtomicU64,
    searches_run: AtomicU64,
    deliveries: [AtomicU64; DeliveryOutcome::ALL.len()],
    /// How long each attempt took, answered or not.
    delivery_duration: DurationHistogram,
    /// Attempts a delivery took by the time it settled (succeeded or failed for good).
    attempts_to_settle: Histogram,
    store_writes: [DurationHistogram; StoreWrite::ALL.len()],
}

impl Default for ServiceMetrics {
    fn default() -> Self {
        Self {
            jobs_created: AtomicU64::new(0),
            jobs_updated: AtomicU64::new(0),
            jobs_closed: AtomicU64::new(0),
            searches_kept: AtomicU64::new(0),
            searches_run: AtomicU64::new(0),
            deliveries: Default::default(),
            delivery_duration: DurationHistogram::default(),
            // The retry policy's default schedule makes up to 9 attempts.
            attempts_to_settle: Histogram::new([1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 10.0, 15.0, 20.0]),
            store_writes: Default::default(),
        }
    }
}

impl ServiceMetrics {
    /// Counts jobs the store has taken.
    pub(crate) fn jobs_written(&self, written: JobsWritten) {
        self.jobs_created.fetch_add(written.created, Relaxed);
        self.jobs_updated.fetch_add(written.updated, Relaxed);
        self.jobs_closed.fetch_add(written.closed, Relaxed);
    }

    /// Counts a job search, answered from a kept result or searched in the index.
    pub(crate) fn search(&self, kept: bool) {
        let counter = if kept {
            &self.searches_kept
        } else {
            &self.searches_run
        };
        counter.fetch_add(1, Relaxed);
    }

    /// Counts a delivery attempt, or a delivery failed without one (`took` `None`).
    pub(crate) fn delivery(
        &self,
        outcome: DeliveryOutcome,
        took: Option<std::time::Duration>,
        attempts_if_settled: Option<u32>,
    ) {
        self.deliveries[outcome as usize].fetch_add(1, Relaxed);
        if let Some(took) = took {
            self.delivery_duration.observe(took);
        }
        if let Some(attempts) = attempts_if_settled {
            self.attempts_to_settle.observe(f64::from(attempts));
        }
    }

    fn encode(&self, encoder: &mut DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        counters(
            encoder,
            "job_listings_jobs_ingested",
            "Jobs written by ingest, import or closing, by what the write did to the job.",
            [
                ("created", &self.jobs_created),
                ("updated", &self.jobs_updated),
                ("closed", &self.jobs_closed),
            ]
            .map(|(outcome, n)| ([("outcome", outcome)], n.load(Relaxed))),
        )?;
        counters(
            encoder,
            "job_listings_job_searches",
            "Job searches by how they were answered: from a result kept since the index last \
             changed (kept), or searched in the index (searched).",
            [
                ("kept", &self.searches_kept),
                ("searched", &self.searches_run),
            ]
            .map(|(result, n)| ([("result", result)], n.load(Relaxed))),
        )?;
        counters(
            encoder,
            "job_listings_webhook_deliveries",
            "Webhook delivery attempts by outcome, and deliveries failed without an attempt \
             (failed_unsent).",
            DeliveryOutcome::ALL.map(|o| {
                (
                    [("outcome", o.label())],
                    self.deliveries[o as usize].load(Relaxed),
                )
            }),
        )?;
        let duration = encoder.encode_descriptor(
            "job_listings_webhook_delivery_duration_seconds",
            "How long webhook delivery attempts took, from sending to the answer or the failure.",
            None,
            MetricType::Histogram,
        )?;
        self.delivery_duration.encode(duration)?;
        let attempts = encoder.encode_descriptor(
            "job_listings_webhook_delivery_attempts",
            "Attempts each webhook delivery took by the time it succeeded or failed for good.",
            None,
            MetricType::Histogram,
        )?;
        self.attempts_to_settle.encode(attempts)?;
        let mut writes = encoder.encode_descriptor(
            "job_listings_store_write_duration_seconds",
            "How long durable store writes took, by what was written.",
            None,
            MetricType::Histogram,
        )?;
        for (what, histogram) in StoreWrite::ALL.iter().zip(&self.store_writes) {
            histogram.encode(writes.encode_family(&[("operation", what.label())])?)?;
        }
        Ok(())
    }
}

/// One counter family: a value per label set.
fn counters<L: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (L, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, value) in rows {
        family
            .encode_family(&labels)?
            .encode_counter::<NoLabelSet, _, u64>(&value, None)?;
    }
    Ok(())
}

/// One gauge family: a value per label set.
fn gauges<L: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (L, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, value) in rows {
        family.encode_family(&labels)?.encode_gauge(&value)?;
    }
    Ok(())
}

/// A gauge without labels.
fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    encoder
        .encode_descriptor(name, help, None, MetricType::Gauge)?
        .encode_gauge(&value)
}

/// The gauges of [`ServiceStats`]; a value that is unknown (`None`) is left out.
fn encode_stats(
    stats: &ServiceStats,
    encoder: &mut DescriptorEncoder<'_>,
) -> Result<(), std::fmt::Error> {
    let jobs = [
        ("active", Some(stats.jobs.active)),
        ("closed", stats.jobs.closed),
    ];
    gauges(
        encoder,
        "job_listings_jobs",
        "Stored jobs by status (closed is left out until counted after start).",
        jobs.into_iter()
            .filter_map(|(status, n)| Some(([("status", status)], n?))),
    )?;
    gauge(
        encoder,
        "job_listings_companies",
        "Stored companies.",
        stats.companies,
    )?;
    gauges(
        encoder,
        "job_listings_api_keys",
        "API keys accepted now (not revoked, billing active), by plan.",
        stats
            .keys
            .active_by_plan
            .iter()
            .map(|(plan, n)| ([("plan", plan.as_str())], *n)),
    )?;
    gauges(
        encoder,
        "job_listings_api_keys_refused",
        "API keys refused now, by why: revoked, or billing not active.",
        [
            ("revoked", stats.keys.revoked),
            ("billing_inactive", stats.keys.billing_inactive),
        ]
        .map(|(reason, n)| ([("reason", reason)], n)),
    )?;
    gauges(
        encoder,
        "job_listings_webhook_subscriptions",
        "Webhook subscriptions by status.",
        [
            ("active", stats.subscriptions.active),
            ("disabled", stats.subscriptions.disabled),
        ]
        .map(|(status, n)| ([("status", status)], n)),
    )?;
    gauge(
        encoder,
        "job_listings_outbox_pending_deliveries",
        "Webhook deliveries waiting to be sent or retried.",
        stats.outbox_backlog,
    )?;
    gauge(
        encoder,
        "job_listings_index_memory_bytes",
        "About how many bytes of heap the search index holds.",
        stats.index_memory_bytes,
    )?;
    if let Some(age) = stats.snapshot_age_seconds {
        gauge(
            encoder,
            "job_listings_index_snapshot_age_seconds",
            "Seconds since the saved search index snapshot was last known to reflect every job.",
            age,
        )?;
    }
    if let Some(lag) = stats.follower_lag {
        gauge(
            encoder,
            "job_listings_follower_lag_changes",
            "Changes of other replicas in the change feed not applied here yet.",
            lag,
        )?;
    }
    Ok(())
}

/// The public listener's gauges, as its server last reported them.
fn encode_listener(
    report: &super::ListenerReport,
    encoder: &mut DescriptorEncoder<'_>,
) -> Result<(), std::fmt::Error> {
    let (open, kept) = report.connection_counts();
    gauges(
        encoder,
        "job_listings_connections",
        "Connections of the public listener: served (open), and told to close but not ended \
         yet (closing).",
        [("open", open), ("closing", kept.saturating_sub(open))]
            .map(|(state, n)| ([("state", state)], n)),
    )?;
    gauge(
        encoder,
        "job_listings_listener_stalled",
        "1 while a connection has waited longer than the accept stall limit with every \
         connection slot busy (GET /livez answers 503 then), else 0.",
        u64::from(report.stalled_since().is_some()),
    )
}

/// Writes the service's metrics and gauges at each scrape. Holds the service weakly: a
/// registry kept after the service is dropped writes nothing for it.
#[derive(Debug)]
struct ServiceCollector {
    inner: Weak<Inner>,
}

impl Collector for ServiceCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let Some(inner) = self.inner.upgrade() else {
            return Ok(());
        };
        let service = JobListingsService { inner };
        service.inner.shared.metrics.encode(&mut encoder)?;
        encode_listener(&service.listener_report(), &mut encoder)?;
        match service.stats() {
            Ok(stats) => encode_stats(&stats, &mut encoder),
            Err(e) => {
                tracing::error!(error = %e, "reading the service's stats for metrics failed");
                Ok(())
            }
        }
    }
}

impl JobListingsService {
    /// Adds the service's counters, histograms and gauges to a registry. They belong to the
    /// service: every registry it is added to shows the same values.
    pub(crate) fn register_metrics(&self, registry: &mut Registry) {
        registry.register_collector(Box::new(ServiceCollector {
            inner: Arc::downgrade(&self.inner),
        }));
    }
}

impl Shared {
    /// Runs a store write and records how long it took, failed or not.
    pub(crate) async fn timed_write<T>(
        &self,
        what: StoreWrite,
        write: impl Future<Output = T>,
    ) -> T {
        let started = Instant::now();
        let written = write.await;
        self.metrics.store_writes[what as usize].observe(started.elapsed());
        written
    }
}
