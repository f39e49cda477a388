//! Answering a query in relevance order (BM25), exactly, without scoring every match.
//!
//! The matches are split into classes by how often each word of `q` occurs in them (the bit
//! planes of the words' counts). Within a class every document holds the words equally often,
//! so its score only falls as its length grows: a class is read by length, shortest first,
//! one length's documents at a time, and each length's score is known before its documents
//! are read. The classes are merged by that score, so a page reads only the lengths whose
//! score can reach it. Small classes are scored document by document instead.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Bound;

use super::*;
use crate::query::bm25::Scorer;
use crate::query::facets::FacetCounts;

/// Up to this many documents, a class is scored one document at a time: reading its
/// documents' lengths costs less than a walk through the lengths.
const SCORE_EACH_AT_MOST: u64 = 1_024;

/// The matches that hold each word of `q` equally often.
struct Class {
    counts: Vec<u32>,
    docs: Docs,
}

/// A score, ordered as a number (scores are finite).
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Score(pub(super) f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl JobIndex {
    /// Answers a query in relevance order.
    pub(super) fn search_by_relevance(&self, query: &JobQuery) -> SearchResult {
        let matching = self.all_matches(&query.filter);
        let offset = query.offset();
        let want = offset + query.per_page.get() as usize;
        let top = self.top_by_relevance(&matching, &query.filter.q_words, want);
        SearchResult {
            total: matching.cardinality(),
            ids: top
                .into_iter()
                .skip(offset)
                .map(|d| self.slots[d as usize].id)
                .collect(),
            facets: if query.facets.is_empty() {
                FacetCounts::default()
            } else {
                self.facet_counts(&matching, &query.facets)
            },
        }
    }

    /// The first `want` of `matching` (live documents that hold every one of `words`) by
    /// BM25 score for `words`, ties newest first and then by id.
    fn top_by_relevance(&self, matching: &Docs, words: &[String], want: usize) -> Vec<u32> {
        let postings: Option<Vec<&Docs>> =
            words.iter().map(|w| self.text.get(w.as_str())).collect();
        let Some(postings) = postings.filter(|_| want > 0 && !matching.is_empty()) else {
            return Vec::new();
        };
        let holding: Vec<u64> = postings.iter().map(|p| self.live_among(p)).collect();
        let scorer = Scorer::new(&holding, self.live.cardinality(), self.counts.live_length);
        let (small, large): (Vec<Class>, Vec<Class>) = self
            .classes(matching, words)
            .into_iter()
            .partition(|c| c.docs.cardinality() <= SCORE_EACH_AT_MOST);

        // The small classes' documents, each scored, best first.
        let mut scored: Vec<(Score, u32)> = small
            .iter()
            .flat_map(|class| {
                class.docs.iter().map(|d| {
                    let length = self.counts.lengths[d as usize];
                    (Score(scorer.score(&class.counts, length)), d)
                })
            })
            .collect();
        self.keep_best(&mut scored, want);
        let mut scored = scored.into_iter().peekable();

        // The large classes, each at the shortest length it has not been read at.
        let lengths = &self.counts.by_length;
        let mut walks: BinaryHeap<(Score, usize, u32)> = BinaryHeap::new();
        if let Some(&shortest) = lengths.keys().next() {
            for (i, class) in large.iter().enumerate() {
                walks.push((Score(scorer.score(&class.counts, shortest)), i, shortest));
            }
        }

        let mut top = Vec::with_capacity(want);
        let mut tied = Vec::new();
        while top.len() < want {
            let best = match (scored.peek(), walks.peek()) {
                (None, None) => break,
                (Some(s), None) => s.0,
                (None, Some(w)) => w.0,
                (Some(s), Some(w)) => s.0.max(w.0),
            };
            // Every document of this score, from every source, then in rank order.
            tied.clear();
            while let Some(&(_, d)) = scored.peek().filter(|s| s.0 == best) {
                tied.push(d);
                scored.next();
            }
            while let Some(&(_, i, length)) = walks.peek().filter(|w| w.0 == best) {
                walks.pop();
                if let Some(docs) = lengths.get(&length) {
                    tied.extend((&large[i].docs & docs).iter());
                }
                let next = lengths.range((Bound::Excluded(length), Bound::Unbounded));
                if let Some((&longer, _)) = next.into_iter().next() {
                    let score = Score(scorer.score(&large[i].counts, longer));
                    walks.push((score, i, longer));
                }
            }
            let room = want - top.len();
            let rank = |d: &u32| self.slots[*d as usize].rank();
            if room < tied.len() {
                tied.select_nth_unstable_by_key(room - 1, rank);
                tied.truncate(room);
            }
            tied.sort_unstable_by_key(rank);
            top.append(&mut tied);
        }
        top
    }

    /// `matching` split by how often each of `words` occurs in a document.
    fn classes(&self, matching: &Docs, words: &[String]) -> Vec<Class> {
        let mut classes = vec![Class {
            counts: vec![1; words.len()],
            docs: matching.clone(),
        }];
        for (i, word) in words.iter().enumerate() {
            let Some(planes) = self.counts.repeats.get(word.as_str()) else {
                continue;
            };
            for (k, plane) in planes.iter().enumerate() {
                let mut split = Vec::new();
                for class in &mut classes {
                    if !class.docs.intersect(plane) {
                        continue;
                    }
                    let inside = &class.docs & plane;
                    class.docs -= &inside;
                    let mut counts = class.counts.clone();
                    counts[i] += 1 << k;
                    split.push(Class {
                        counts,
                        docs: inside,
                    });
                }
                classes.retain(|c| !c.docs.is_empty());
                classes.extend(split);
            }
        }
        classes
    }
}

impl JobIndex {
    /// The best `want` of scored documents, best first: highest score, ties in result order
    /// (newest first, then by id).
    pub(super) fn keep_best(&self, scored: &mut Vec<(Score, u32)>, want: usize) {
        let best_first = |a: &(Score, u32), b: &(Score, u32)| {
            b.0.cmp(&a.0).then_with(|| {
                self.slots[a.1 as usize]
                    .rank()
                    .cmp(&self.slots[b.1 as usize].rank())
            })
        };
        if want == 0 {
            scored.clear();
        } else if want < scored.len() {
            scored.select_nth_unstable_by(want - 1, best_first);
            scored.truncate(want);
        }
        scored.sort_unstable_by(best_first);
    }
}
