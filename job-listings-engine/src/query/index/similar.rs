//! More like this: the active jobs that share a job's rarest words and its tags.

use rustc_hash::FxHashMap;

use super::relevance::Score;
use super::*;
use crate::query::bm25::idf;

/// The most words of a job a similar-jobs search looks for: its highest-weighted ones.
const WORDS_AT_MOST: usize = 24;

/// A word held by more than this share of the active jobs says little of what a job is (and
/// its idf is low): it is left out, unless the job has no rarer word.
const HELD_BY_AT_MOST: u64 = 50;

/// The most postings a similar-jobs search reads, summed over its words, rarest first: the
/// bound on its work whatever the job.
const POSTINGS_AT_MOST: u64 = 60_000;

impl JobIndex {
    /// The active jobs most like `job`, best first, at most `limit`: each scores the inverse
    /// document frequency (BM25's) of every one of `job`'s highest-weighted words it holds
    /// (weight: how often `job` uses the word times its inverse document frequency; words of
    /// the role count twice; at most 24 words, none held by more than one active job in 50
    /// unless the job has no rarer word, and as many of them, rarest first, as hold 60,000
    /// postings) and of every domain tag and seniority level it shares; ties go newest first,
    /// then by id. Never `job` itself, nor any of `excluded` (its copies), nor a repost; a job
    /// sharing none of those words is not listed.
    pub fn similar<'a>(&self, job: &'a Job, excluded: &[JobId], limit: usize) -> Vec<JobId> {
        let jobs = self.live.cardinality();
        if limit == 0 || jobs == 0 {
            return Vec::new();
        }
        let idf = |n: u64| idf(n, jobs);
        // The job's words by weight; each posting's size stands in for its live count (dead
        // documents are few and are left out below).
        let mut uses: FxHashMap<&str, (u32, &Docs)> = FxHashMap::default();
        for_each_job_word(job, |word, field| {
            if let Some((key, docs)) = self.text.get_key_value(word) {
                let times = if field == Field::Role { 2 } else { 1 };
                uses.entry(&**key).or_insert((0, docs)).0 += times;
            }
        });
        let common = jobs / HELD_BY_AT_MOST;
        let mut words: Vec<(f64, f64, &Docs)> = uses
            .into_values()
            .filter(|(_, docs)| docs.cardinality() > 1)
            .map(|(times, docs)| {
                let weight = idf(docs.cardinality());
                (f64::from(times) * weight, weight, docs)
            })
            .collect();
        // The rarer words by weight; the rarest few when every word is common.
        words.sort_by_key(|(_, _, docs)| docs.cardinality());
        let rare = words
            .iter()
            .take_while(|(_, _, docs)| docs.cardinality() <= common)
            .count();
        words.truncate(rare.max(4));
        words.sort_by(|a, b| b.0.total_cmp(&a.0));
        words.truncate(WORDS_AT_MOST);
        words.sort_by_key(|(_, _, docs)| docs.cardinality());

        let mut scores: FxHashMap<u32, f64> = FxHashMap::default();
        let mut read = 0;
        for (_, weight, docs) in words {
            read += docs.cardinality();
            if read > POSTINGS_AT_MOST && !scores.is_empty() {
                break;
            }
            let held = docs & &self.canonical;
            scores.reserve(held.cardinality() as usize);
            for d in held.to_vec() {
                *scores.entry(d).or_default() += weight;
            }
        }
        // The tags shared, by each document's combination of them: one lookup a document.
        let weighed = |postings: &HashMap<String, Docs>, label: &'a str| {
            postings
                .get(label)
                .map(|docs| (label, idf(docs.cardinality())))
        };
        let domains: Vec<(&str, f64)> = job
            .domains
            .iter()
            .filter_map(|t| weighed(&self.domains, t.as_str()))
            .collect();
        let seniority: Vec<(&str, f64)> = job
            .seniority
            .iter()
            .filter_map(|l| weighed(&self.seniority, l.as_str()))
            .collect();
        if !domains.is_empty() || !seniority.is_empty() {
            let mut of_combo: FxHashMap<u32, f64> = FxHashMap::default();
            for (d, score) in scores.iter_mut() {
                let combo = self.combos.of_doc[*d as usize];
                *score += *of_combo
                    .entry(combo)
                    .or_insert_with(|| self.combos.weight_of(combo, &domains, &seniority));
            }
        }
        let mut ranked: Vec<(Score, u32)> = scores
            .into_iter()
            .map(|(d, score)| (Score(score), d))
            .filter(|&(_, d)| {
                let id = self.slots[d as usize].id;
                id != job.id && !excluded.contains(&id)
            })
            .collect();
        self.keep_best(&mut ranked, limit);
        ranked
            .into_iter()
            .map(|(_, d)| self.slots[d as usize].id)
            .collect()
    }
}
