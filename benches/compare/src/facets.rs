//! `--facets`: what counting facets adds to a search. Each query of the mix is timed as it is
//! and again asking for every facet (`domain`, `seniority`, `remote`), one right after the
//! other, so both see the same caches and the same load.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use job_listings::query::{Facet, JobIndex, JobQuery};

use crate::mix::{Class, MixQuery};
use crate::report::fmt_duration;

/// Median and p99 (nearest rank) of samples.
fn median_p99(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort_unstable();
    let at = |p: f64| {
        let rank = (p * v.len() as f64).ceil().max(1.0) as usize;
        v.get(rank.min(v.len()).saturating_sub(1))
            .copied()
            .unwrap_or_default()
    };
    (at(0.5), at(0.99))
}

/// Checks that asking for facets leaves every answer's total and page as they are, then times
/// the mix both ways and prints a table. Returns the number of answers that differed.
pub fn compare(index: &JobIndex, mix: &[MixQuery], warmup: usize, rounds: usize) -> usize {
    let faceted: Vec<JobQuery> = mix
        .iter()
        .map(|q| q.query.clone().facets(Facet::ALL))
        .collect();
    let mut differ = 0;
    for (q, f) in mix.iter().zip(&faceted) {
        let (plain, with) = (index.search(&q.query), index.search(f));
        if plain.total != with.total || plain.ids != with.ids {
            println!("MISMATCH with facets: {}", q.label);
            differ += 1;
        }
    }
    for _ in 0..warmup {
        for (q, f) in mix.iter().zip(&faceted) {
            black_box(index.search(&q.query));
            black_box(index.search(f));
        }
    }
    let mut samples: BTreeMap<Option<Class>, (Vec<Duration>, Vec<Duration>)> = BTreeMap::new();
    for r in 0..rounds {
        for k in 0..mix.len() {
            let i = (k * 89 + r * 37) % mix.len();
            let time = |query: &JobQuery| {
                let t = Instant::now();
                black_box(index.search(black_box(query)));
                t.elapsed()
            };
            // Alternate which goes first, so neither always runs on the other's warm caches.
            let (plain, with) = if (k + r) % 2 == 0 {
                let p = time(&mix[i].query);
                (p, time(&faceted[i]))
            } else {
                let w = time(&faceted[i]);
                (time(&mix[i].query), w)
            };
            for key in [Some(mix[i].class), None] {
                let entry = samples.entry(key).or_default();
                entry.0.push(plain);
                entry.1.push(with);
            }
        }
    }
    println!(
        "\n## Facets: each query without and with facets=domain,seniority,remote ({} queries × {rounds} rounds)\n",
        mix.len()
    );
    println!("| class | without: median | p99 | with facets: median | p99 | ratio of medians | ratio of p99s |");
    println!("|---|---|---|---|---|---|---|");
    let order = Class::ALL.into_iter().map(Some).chain([None]);
    for key in order {
        let Some((plain, with)) = samples.remove(&key) else {
            continue;
        };
        let (pm, pp) = median_p99(plain);
        let (wm, wp) = median_p99(with);
        println!(
            "| {} | {} | {} | {} | {} | {:.2}× | {:.2}× |",
            key.map_or("all", Class::name),
            fmt_duration(pm),
            fmt_duration(pp),
            fmt_duration(wm),
            fmt_duration(wp),
            wm.as_secs_f64() / pm.as_secs_f64().max(1e-9),
            wp.as_secs_f64() / pp.as_secs_f64().max(1e-9),
        );
    }
    differ
}
