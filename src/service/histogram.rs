//! A histogram of durations that records with two atomic additions and no lock.
//!
//! The HTTP layer records one per request on every core at once, and the client crate's own
//! histogram takes a mutex for each observation: under load every core would queue on it.
//! Buckets and sum are read one by one at scrape time, so a scrape may see an observation in
//! its bucket but not yet in the sum; the next scrape sees both.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use prometheus_client::encoding::{MetricEncoder, NoLabelSet};

/// Upper bounds of the buckets, in seconds: 100 µs to 10 s, about 2.5 times apart, so a cached
/// answer (well under a millisecond) and a slow disk flush (tens of milliseconds) fall in
/// buckets of their own.
pub(crate) const DURATION_BUCKETS: [f64; 16] = [
    0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// The same bounds in nanoseconds, to find a bucket with integer comparisons.
const BOUNDS_NANOS: [u64; 16] = [
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// Durations counted in [`DURATION_BUCKETS`], with their sum.
#[derive(Debug, Default)]
pub(crate) struct DurationHistogram {
    /// Observations per bucket, not cumulative; the last counts those above every bound.
    counts: [AtomicU64; BOUNDS_NANOS.len() + 1],
    /// The sum of every observation, in nanoseconds: exact, and added without a
    /// compare-and-swap loop as an `f64` would need.
    sum_nanos: AtomicU64,
}

impl DurationHistogram {
    /// Counts one duration.
    pub(crate) fn observe(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_NANOS.partition_point(|&bound| bound < nanos);
        self.counts[bucket].fetch_add(1, Relaxed);
        self.sum_nanos.fetch_add(nanos, Relaxed);
    }

    /// How many durations were counted.
    pub(crate) fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Relaxed)).sum()
    }

    /// Writes the histogram as the client crate writes its own: `_bucket`, `_sum`, `_count`.
    pub(crate) fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        let mut buckets = [(0.0, 0); BOUNDS_NANOS.len()];
        for ((bucket, bound), count) in buckets.iter_mut().zip(DURATION_BUCKETS).zip(&self.counts) {
            *bucket = (bound, count.load(Relaxed));
        }
        let count = self.count();
        let sum = Duration::from_nanos(self.sum_nanos.load(Relaxed)).as_secs_f64();
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_in_nanoseconds_are_the_bounds_in_seconds() {
        for (nanos, secs) in BOUNDS_NANOS.iter().zip(DURATION_BUCKETS) {
            assert_eq!(Duration::from_nanos(*nanos).as_secs_f64(), secs);
        }
    }

    #[test]
    fn a_duration_on_a_bound_counts_in_that_bound_s_bucket_and_a_long_one_above_all() {
        let h = DurationHistogram::default();
        h.observe(Duration::from_micros(100));
        h.observe(Duration::from_micros(101));
        h.observe(Duration::from_secs(60));
        assert_eq!(h.counts[0].load(Relaxed), 1);
        assert_eq!(h.counts[1].load(Relaxed), 1);
        assert_eq!(h.counts[BOUNDS_NANOS.len()].load(Relaxed), 1);
        assert_eq!(h.count(), 3);
        assert_eq!(h.sum_nanos.load(Relaxed), 60_000_201_000);
    }
}
