//! Conjunctions of dense postings worked out on plain words, newest first.
//!
//! CRoaring intersects two dense bitmaps with SIMD, but when the result holds under one
//! document in 16 of a container it writes every match out as a sorted array, one at a time:
//! a word and a domain that each hold a tenth of the jobs cost that for tens of thousands of
//! matches, and the next filter reads them all again. Such a search goes on plain words
//! instead: each bitmap still to read is copied into words once, the words are intersected
//! in place, the total is their population count, and a page is read from the top words
//! only: no match is written out but the page's.

use std::borrow::Cow;

use croaring::Bitset;

use super::*;
use crate::query::bitmap::set_bits;
use crate::query::confidence::ConfidenceBitmaps;
use crate::query::facets::FacetCounts;

/// What CRoaring spends writing one match out of two dense bitmaps, in words of a plain
/// copy and intersection (as timed at a million documents: about 4 ns against 1.2 ns).
const A_MATCH_IN_WORDS: f64 = 3.3;

/// Document numbers as plain words: document `d` is bit `d % 64` of word `d / 64`.
pub(super) struct Words(Bitset);

impl Words {
    /// A copy of `docs`; `None` if it could not be allocated.
    fn of(docs: &Docs) -> Option<Self> {
        docs.to_bitset().map(Words)
    }

    /// The documents in any of `all` (at least one); sparse ones are set one by one rather
    /// than copied whole.
    fn any_of(index: &JobIndex, all: &[&Docs]) -> Option<Self> {
        let (first, rest) = all.split_first()?;
        let mut union = Words::of(first)?;
        for docs in rest {
            if index.is_sparse(docs) {
                let needed = docs.maximum().map_or(0, |max| max as usize / 64 + 1);
                if union.0.as_slice().len() < needed {
                    union.0.resize_words(needed, false);
                }
                let words = union.0.as_mut_slice();
                for doc in descending(docs) {
                    words[doc as usize / 64] |= 1 << (doc % 64);
                }
            } else {
                union.0 |= &docs.to_bitset()?;
            }
        }
        Some(union)
    }

    /// The documents of `term`.
    fn of_term(index: &JobIndex, term: &Term<'_>) -> Option<Self> {
        match term {
            Term::One(docs) => Words::of(docs),
            Term::AnyOf(all) => Words::any_of(index, all),
        }
    }

    fn words(&self) -> &[u64] {
        self.0.as_slice()
    }

    /// Keeps the documents also in `other`.
    fn and(&mut self, other: &[u64]) {
        let words = self.0.as_mut_slice();
        let common = words.len().min(other.len());
        for (w, o) in words[..common].iter_mut().zip(other) {
            *w &= *o;
        }
        words[common..].fill(0);
    }

    /// Drops the documents in `other`.
    fn and_not(&mut self, other: &[u64]) {
        for (w, o) in self.0.as_mut_slice().iter_mut().zip(other) {
            *w &= !*o;
        }
    }

    /// Drops the documents also in `other`, and returns them.
    fn take(&mut self, other: &[u64]) -> Vec<u32> {
        let mut taken = Vec::new();
        for (w, (word, o)) in self.0.as_mut_slice().iter_mut().zip(other).enumerate() {
            let both = *word & *o;
            if both != 0 {
                *word &= !both;
                taken.extend(set_bits(&[both]).map(|bit| w as u32 * 64 + bit));
            }
        }
        taken
    }

    /// Drops document `doc`.
    fn remove(&mut self, doc: u32) {
        if let Some(w) = self.0.as_mut_slice().get_mut(doc as usize / 64) {
            *w &= !(1 << (doc % 64));
        }
    }

    /// Drops every document numbered below `from`.
    fn remove_below(&mut self, from: u32) {
        let words = self.0.as_mut_slice();
        let whole = (from as usize / 64).min(words.len());
        words[..whole].fill(0);
        if let Some(w) = words.get_mut(whole) {
            *w &= u64::MAX << (from % 64);
        }
    }

    fn count(&self) -> u64 {
        self.words().iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// How many documents are numbered in `low..high`.
    fn count_in(&self, low: u32, high: u32) -> u64 {
        let mut count = 0;
        self.for_each_word_down(low, high, |_, word| {
            count += u64::from(word.count_ones());
            true
        });
        count
    }

    /// Reads the documents numbered in `low..high` from the highest down, steps over the
    /// first `skip` and pushes the next ones onto `page` until it holds `full`.
    fn read_down(&self, low: u32, high: u32, mut skip: u64, page: &mut Vec<u32>, full: usize) {
        self.for_each_word_down(low, high, |base, mut word| {
            let count = u64::from(word.count_ones());
            if skip >= count {
                skip -= count;
                return true;
            }
            while word != 0 && page.len() < full {
                let bit = 63 - word.leading_zeros();
                word &= !(1 << bit);
                if skip > 0 {
                    skip -= 1;
                } else {
                    page.push(base + bit);
                }
            }
            page.len() < full
        });
    }

    /// Calls `f` with each word's first number and its bits numbered in `low..high`, from
    /// the highest word down, while `f` returns true.
    fn for_each_word_down(&self, low: u32, high: u32, mut f: impl FnMut(u32, u64) -> bool) {
        let words = self.words();
        let high = u64::from(high).min(words.len() as u64 * 64) as u32;
        if low >= high {
            return;
        }
        let (first, last) = (low as usize / 64, (high as usize - 1) / 64);
        for w in (first..=last).rev() {
            let mut word = words[w];
            if w == last && !high.is_multiple_of(64) {
                word &= (1 << (high % 64)) - 1;
            }
            if w == first {
                word &= u64::MAX << (low % 64);
            }
            if word != 0 && !f(w as u32 * 64, word) {
                return;
            }
        }
    }
}

/// What a search's terms leave: a bitmap, or plain words once a bitmap would have been
/// written out one match at a time.
pub(super) enum Matches<'a> {
    Bitmap(Cow<'a, Docs>),
    Words(Words),
}

impl JobIndex {
    /// The live documents in every one of `terms` (fewest documents first), intersected by
    /// CRoaring as [`JobIndex::intersect`] does until two dense bitmaps would leave few
    /// matches (counted first, which writes nothing out); from there on plain words when
    /// `words_allowed` and writing those matches out would cost more than a copy of every
    /// bitmap still to read.
    pub(super) fn intersect_adaptive<'a>(
        &'a self,
        terms: Vec<Term<'a>>,
        words_allowed: bool,
    ) -> Option<Matches<'a>> {
        let words_a_copy = self.slots.len() as f64 / 64.0;
        let apart = [&self.dead, &self.unordered]
            .iter()
            .filter(|docs| !docs.is_empty())
            .count();
        let bitmaps_of = |term: &Term<'_>| match term {
            Term::One(_) => 1,
            Term::AnyOf(all) => all.len(),
        };
        let mut left_to_read: usize = terms.iter().map(bitmaps_of).sum();
        let mut iter = terms.into_iter();
        let Some(mut acc) = iter.next().map(Term::into_docs) else {
            return Some(Matches::Bitmap(Cow::Borrowed(&self.live)));
        };
        left_to_read -= 1;
        while let Some(term) = iter.next() {
            if acc.is_empty() {
                break;
            }
            left_to_read -= bitmaps_of(&term);
            if self.is_sparse(&acc) {
                acc = Cow::Owned(self.intersect_step(acc, term));
                continue;
            }
            let next = term.into_docs();
            // The copies: the two at hand, the bitmaps still to read, the dead and the
            // out-of-order documents.
            let copies = (left_to_read + 2 + apart) as f64;
            let on_words = words_allowed && {
                let left = acc.and_cardinality(&next);
                self.holds_few(left) && A_MATCH_IN_WORDS * left as f64 > words_a_copy * copies
            };
            if on_words {
                let mut words = Words::of(&acc)?;
                words.and(Words::of(&next)?.words());
                for term in iter {
                    words.and(Words::of_term(self, &term)?.words());
                }
                return Some(Matches::Words(words));
            }
            acc = Cow::Owned(match acc {
                Cow::Borrowed(acc) => acc & &*next,
                Cow::Owned(mut acc) => {
                    acc &= &*next;
                    acc
                }
            });
        }
        Some(Matches::Bitmap(self.without_dead(acc)))
    }

    /// Ranks `offset..want` of the matches left on plain words, after taking out the dead
    /// documents and, with `min_confidence`, those of the threshold's grid step that fall
    /// short of it (the words hold only documents at or above the step).
    pub(super) fn page_from_words(
        &self,
        mut matching: Words,
        filter: &JobFilter,
        offset: usize,
        want: usize,
    ) -> Option<SearchResult> {
        if let Some(min) = filter.min_confidence.map(|min| min.get()) {
            let (step, exact) = ConfidenceBitmaps::step_of(min);
            if !exact {
                // Only the documents below the next step can fall short of `min`.
                let mut band = Words(matching.0.clone());
                if let Some(next) = self.confidence.at_least(step + 1) {
                    band.and_not(Words::of(next)?.words());
                }
                for doc in set_bits(band.words()) {
                    if self.confidences[doc as usize] < min {
                        matching.remove(doc);
                    }
                }
            }
        }
        if !self.dead.is_empty() {
            matching.and_not(Words::of(&self.dead)?.words());
        }
        // Out-of-order documents are ranked apart and merged in; the rest are in result order.
        let mut apart = match self.unordered.is_empty() {
            true => Vec::new(),
            false => matching.take(Words::of(&self.unordered)?.words()),
        };
        if let Some(after) = filter.posted_after.map(nanos_clamped) {
            apart.retain(|&d| self.slots[d as usize].posted_nanos > after);
            let first = self
                .ordered
                .partition_point(|&d| self.slots[d as usize].posted_nanos <= after);
            matching.remove_below(self.ordered.get(first).copied().unwrap_or(u32::MAX));
        }
        let total = matching.count() + apart.len() as u64;
        let apart = self.top_sorted(apart, want);
        Some(SearchResult {
            facets: FacetCounts::default(),
            total,
            ids: self
                .page_of_words(&matching, &apart, offset, want)
                .into_iter()
                .map(|d| self.slots[d as usize].id)
                .collect(),
        })
    }

    /// Ranks `offset..want` of the numbered documents in `numbered` merged with `apart`
    /// (out-of-order documents in result order): the numbered ones that come before an
    /// out-of-order one are those numbered from the first numbered document ranked above it,
    /// so the page is found by counting words, not by walking every document above it.
    fn page_of_words(
        &self,
        numbered: &Words,
        apart: &[u32],
        offset: usize,
        want: usize,
    ) -> Vec<u32> {
        let mut page = Vec::with_capacity(want.saturating_sub(offset));
        let full = want.saturating_sub(offset);
        let mut placed = 0u64;
        let mut high = u32::MAX;
        let offset = offset as u64;
        let thresholds = apart.iter().map(|&doc| {
            let rank = self.slots[doc as usize].rank();
            let first_above = self
                .ordered
                .partition_point(|&d| self.slots[d as usize].rank() > rank);
            (
                Some(doc),
                self.ordered.get(first_above).copied().unwrap_or(u32::MAX),
            )
        });
        for (doc, low) in thresholds.chain([(None, 0)]) {
            let low = low.min(high);
            let skip = offset.saturating_sub(placed);
            if skip == 0 || doc.is_none() {
                // Past the page's start, or below the last out-of-order document: the
                // walk skips what is left to skip by whole words and nothing needs counting.
                numbered.read_down(low, high, skip, &mut page, full);
                placed = offset;
            } else {
                let count = numbered.count_in(low, high);
                if count > skip {
                    numbered.read_down(low, high, skip, &mut page, full);
                }
                placed += count;
            }
            high = low;
            if page.len() == full {
                break;
            }
            if let Some(doc) = doc {
                if placed >= offset {
                    page.push(doc);
                }
                placed += 1;
                if page.len() == full {
                    break;
                }
            }
        }
        page
    }
}
