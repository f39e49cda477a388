//! The BM25 of API.md worked out here for the tests' oracles, apart from the engine's code, on
//! the words of the tests' own reading of the word rule (`support::words`).

use std::collections::{BTreeSet, HashMap};

use job_listings::domain::Job;

use super::words::words;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How often each word of a job counts, and how many words count: the role's words twice,
/// then the company name's and the post's once.
#[derive(Clone, Debug, Default)]
pub struct Counted {
    pub counts: HashMap<String, u32>,
    pub length: u32,
}

impl Counted {
    pub fn of(job: &Job) -> Self {
        let mut counted = Self::default();
        let weighted = [
            (&job.role, 2),
            (&job.company_name, 1),
            (&job.description, 1),
        ];
        for (text, weight) in weighted {
            for word in words(text) {
                *counted.counts.entry(word).or_default() += weight;
                counted.length += weight;
            }
        }
        counted
    }
}

/// BM25 for the words of a search text over a collection of active jobs.
pub struct Bm25 {
    idfs: Vec<(String, f64)>,
    mean_length: f64,
}

impl Bm25 {
    /// For `q` over the active jobs `all`: each distinct word of `q` weighs
    /// ln(1 + (N − n + 0.5)/(n + 0.5)), n of the N jobs holding it. The words are summed in
    /// sorted order, as the engine sums them (another order may differ in the last bit).
    pub fn new<'a>(q: &str, all: impl IntoIterator<Item = &'a Counted>) -> Self {
        let all: Vec<&Counted> = all.into_iter().collect();
        let total_length = all.iter().map(|c| u64::from(c.length)).sum();
        Self::from_counts(q, all.len() as u64, total_length, |word| {
            all.iter().filter(|c| c.counts.contains_key(word)).count() as u64
        })
    }

    /// The same from the collection's figures: `n_docs` active jobs whose lengths add up
    /// to `total_length`, `holding(word)` of which hold a word.
    pub fn from_counts(
        q: &str,
        n_docs: u64,
        total_length: u64,
        holding: impl Fn(&str) -> u64,
    ) -> Self {
        let n_docs = n_docs as f64;
        let distinct: BTreeSet<String> = words(q).into_iter().collect();
        let idfs = distinct
            .into_iter()
            .map(|word| {
                let n = holding(&word) as f64;
                let idf = (1.0 + (n_docs - n + 0.5) / (n + 0.5)).ln();
                (word, idf)
            })
            .collect();
        Self {
            idfs,
            mean_length: total_length as f64 / n_docs,
        }
    }

    /// The score of one job: Σ idf · tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl)).
    pub fn score(&self, job: &Counted) -> f64 {
        let norm = K1 * (1.0 - B + B * f64::from(job.length) / self.mean_length);
        self.idfs
            .iter()
            .map(|(word, idf)| {
                let tf = f64::from(job.counts.get(word).copied().unwrap_or(0));
                idf * tf * (K1 + 1.0) / (tf + norm)
            })
            .sum()
    }
}
