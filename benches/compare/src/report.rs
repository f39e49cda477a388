//! Timing, percentiles, memory readings and the markdown tables.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::mix::{Class, MixQuery};

/// Latency samples per class.
pub type Samples = BTreeMap<Class, Vec<Duration>>;

/// Median and p99 of one class.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// 50th percentile (nearest rank).
    pub median: Duration,
    /// 99th percentile (nearest rank).
    pub p99: Duration,
    /// The mean, which bounds throughput where the median does not.
    pub mean: Duration,
}

/// The nearest-rank percentile `p` (0..=1) of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Median and p99 per class.
pub fn stats(samples: &Samples) -> BTreeMap<Class, Stats> {
    samples
        .iter()
        .map(|(class, v)| {
            let mut v = v.clone();
            v.sort_unstable();
            (
                *class,
                Stats {
                    median: percentile(&v, 0.5),
                    p99: percentile(&v, 0.99),
                    mean: v.iter().sum::<Duration>() / v.len().max(1) as u32,
                },
            )
        })
        .collect()
}

/// A fixed permutation of the mix for round `r`, so no query always follows the same one.
fn round_order(len: usize, r: usize) -> impl Iterator<Item = usize> {
    // 89 is prime and does not divide 200, so `(k * 89 + r * 37) % len` visits every index
    // when `len` is 200; for other lengths fall back to plain rotation.
    let step = if len.is_multiple_of(89) { 1 } else { 89 };
    (0..len).map(move |k| (k * step + r * 37) % len)
}

/// Runs the mix `warmup` times untimed, then `rounds` times timing every query, on one thread.
/// Returns the samples per class and the median of each query.
pub fn time_mix(
    engine: &dyn Engine,
    mix: &[MixQuery],
    warmup: usize,
    rounds: usize,
) -> (Samples, Vec<Duration>) {
    for r in 0..warmup {
        for i in round_order(mix.len(), r) {
            black_box(engine.search(&mix[i].query));
        }
    }
    let mut samples: Samples = BTreeMap::new();
    let mut per_query: Vec<Vec<Duration>> = vec![Vec::new(); mix.len()];
    for r in 0..rounds {
        for i in round_order(mix.len(), warmup + r) {
            let q = &mix[i];
            let t = Instant::now();
            let res = engine.search(black_box(&q.query));
            let elapsed = t.elapsed();
            black_box(res);
            samples.entry(q.class).or_default().push(elapsed);
            per_query[i].push(elapsed);
        }
    }
    let medians = per_query
        .into_iter()
        .map(|mut v| {
            v.sort_unstable();
            percentile(&v, 0.5)
        })
        .collect();
    (samples, medians)
}

/// Queries per second with `threads` threads each running the mix (from different starting
/// points) over the same shared engine for about `seconds`.
pub fn throughput(engine: &dyn Engine, mix: &[MixQuery], threads: usize, seconds: f64) -> f64 {
    let barrier = Barrier::new(threads);
    let limit = Duration::from_secs_f64(seconds);
    let results: Vec<(u64, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let mut done = 0u64;
                    let mut i = t * mix.len() / threads.max(1);
                    loop {
                        black_box(engine.search(&mix[i % mix.len()].query));
                        done += 1;
                        i += 1;
                        if done.is_multiple_of(8) && start.elapsed() >= limit {
                            break;
                        }
                    }
                    (done, start.elapsed())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("throughput thread"))
            .collect()
    });
    let total: u64 = results.iter().map(|r| r.0).sum();
    let wall = results
        .iter()
        .map(|r| r.1)
        .max()
        .unwrap_or(Duration::from_secs(1));
    total as f64 / wall.as_secs_f64()
}

/// The resident set size of this process, in bytes (from `/proc/self/status`; 0 elsewhere).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The 1, 5 and 15 minute load averages (from `/proc/loadavg`), to judge how quiet the
/// machine was.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// A duration for a table: µs below 10 ms, ms above.
pub fn fmt_duration(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 10.0 {
        format!("{us:.2} µs")
    } else if us < 100.0 {
        format!("{us:.1} µs")
    } else if us < 10_000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1_000.0)
    }
}

/// A count with thousands separators.
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes as MiB.
pub fn fmt_mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "–".to_owned()
    }
}

/// One engine's row of figures.
pub struct Row {
    /// The engine's name.
    pub name: &'static str,
    /// Median and p99 per class.
    pub stats: BTreeMap<Class, Stats>,
    /// Queries per second from two threads.
    pub qps2: f64,
}

/// The markdown latency table: our row first, then each tantivy row, then one ratio row
/// (that engine / ours) per tantivy row.
pub fn table(n: usize, rows: &[Row]) -> String {
    let mut out = format!(
        "| engine, N = {} active jobs, one thread: median / p99 |",
        fmt_count(n as u64)
    );
    for c in Class::ALL {
        out.push_str(&format!(" {} |", c.name()));
    }
    out.push_str(" 2-thread qps |\n|---|");
    for _ in Class::ALL {
        out.push_str("---|");
    }
    out.push_str("---|\n");
    for row in rows {
        out.push_str(&format!("| {} |", row.name));
        for c in Class::ALL {
            match row.stats.get(&c) {
                Some(s) => out.push_str(&format!(
                    " {} / {} |",
                    fmt_duration(s.median),
                    fmt_duration(s.p99)
                )),
                None => out.push_str(" – |"),
            }
        }
        out.push_str(&format!(" {} |\n", fmt_count(row.qps2.round() as u64)));
    }
    let Some((ours, others)) = rows.split_first() else {
        return out;
    };
    for theirs in others {
        let label = if theirs.name.contains("sorted") {
            "ours faster by (tantivy sorted time / ours; qps ours / tantivy sorted)"
        } else {
            "ours faster by (tantivy time / ours; qps ours / tantivy)"
        };
        out.push_str(&format!("| {label} |"));
        for c in Class::ALL {
            match (theirs.stats.get(&c), ours.stats.get(&c)) {
                (Some(a), Some(b)) => out.push_str(&format!(
                    " {} / {} |",
                    ratio(a.median.as_secs_f64(), b.median.as_secs_f64()),
                    ratio(a.p99.as_secs_f64(), b.p99.as_secs_f64())
                )),
                _ => out.push_str(" – |"),
            }
        }
        out.push_str(&format!(" {} |\n", ratio(ours.qps2, theirs.qps2)));
    }
    for row in rows {
        out.push_str(&format!("| {}: mean |", row.name));
        for c in Class::ALL {
            let mean = row.stats.get(&c).map(|s| fmt_duration(s.mean));
            out.push_str(&format!(" {} |", mean.as_deref().unwrap_or("–")));
        }
        out.push_str(" |\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile(&v, 0.5), Duration::from_micros(50));
        assert_eq!(percentile(&v, 0.99), Duration::from_micros(99));
        assert_eq!(percentile(&v[..1], 0.99), Duration::from_micros(1));
        assert_eq!(fmt_count(1_234_567), "1,234,567");
        assert_eq!(fmt_count(999), "999");
    }

    #[test]
    fn every_round_visits_every_query_once() {
        for r in 0..7 {
            let mut seen: Vec<usize> = round_order(200, r).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..200).collect::<Vec<_>>());
        }
    }
}
