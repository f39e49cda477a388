//! Answering a query: the bitmaps of its terms intersected, then one page of ids in result
//! order (newest `posted_at` first, ties by id), read only as far as the page needs.

use std::borrow::Cow;

use super::dense::Matches;
use super::*;
use crate::query::facets::FacetCounts;
use crate::query::places::Circle;
use crate::query::Sort;

impl JobIndex {
    /// Answers a query: the number of matches, the requested page of ids and the facet
    /// counts it asks for.
    pub fn search(&self, query: &JobQuery) -> SearchResult {
        if query.sort == Sort::Relevance && !query.filter.q_words.is_empty() {
            return self.search_by_relevance(query);
        }
        if !query.facets.is_empty() {
            return self.search_faceted(query);
        }
        let offset = query.offset();
        self.search_range(
            &query.filter,
            offset,
            offset + query.per_page.get() as usize,
        )
    }

    /// The number of matches and the first `limit` ids, for callers that want more than a page.
    pub fn search_top(&self, filter: &JobFilter, limit: usize) -> SearchResult {
        // "Everything" may be asked as `usize::MAX`: room is made for at most every job.
        let everything = usize::try_from(self.len()).unwrap_or(usize::MAX);
        self.search_range(filter, 0, limit.min(everything))
    }

    /// The number of matches and the ids ranked `offset..want`.
    fn search_range(&self, filter: &JobFilter, offset: usize, want: usize) -> SearchResult {
        let Some(terms) = self.search_terms(filter) else {
            return SearchResult::default();
        };
        let checks_each = self.checks_each(filter);
        if filter.min_confidence.is_none() && filter.posted_after.is_none() && !checks_each {
            if let Some(found) = self.page_in_place(&terms, offset, want) {
                return found;
            }
        }
        // The words could not be allocated: the same search on bitmaps only.
        let on_bitmaps = || {
            self.search_terms(filter)
                .map_or(Cow::Owned(Docs::new()), |terms| self.intersect(terms))
        };
        let words_allowed = !checks_each;
        let mut matching = match self.intersect_adaptive(terms, words_allowed) {
            Some(Matches::Bitmap(matching)) => matching,
            Some(Matches::Words(words)) => {
                match self.page_from_words(words, filter, offset, want) {
                    Some(found) => return found,
                    None => on_bitmaps(),
                }
            }
            None => on_bitmaps(),
        };
        if let Some(min) = filter.min_confidence {
            self.confidence
                .retain_in_step(matching.to_mut(), min.get(), |d| {
                    self.confidences[d as usize]
                });
        }
        self.keep_exact(&mut matching, filter);
        let after = filter.posted_after.map(nanos_clamped);
        if self.unordered.is_empty() {
            if let Some(after) = after {
                self.keep_numbered_after(matching.to_mut(), after);
            }
            return SearchResult {
                facets: FacetCounts::default(),
                total: matching.cardinality(),
                ids: self.page_of_ordered(&matching, offset, want),
            };
        }
        // Some documents are out of order: rank the matching ones apart and merge them in.
        // Matches are live documents: as many as the live ones are all of them, the
        // out-of-order ones too, which are then read in order, only as far as the page needs,
        // without a check each.
        if after.is_none() && matching.cardinality() == self.live.cardinality() {
            let apart = self.unordered_ranked.values().copied();
            return SearchResult {
                facets: FacetCounts::default(),
                total: matching.cardinality(),
                ids: self.page_merged(&matching, &self.unordered, apart, offset, want),
            };
        }
        let no_unordered = Docs::new();
        let (apart_total, apart, unordered_in_matching) = match after {
            None => (0, self.top_unordered(&matching, want), &self.unordered),
            Some(after) => {
                let docs = matching.to_mut();
                let split = &*docs & &self.unordered;
                *docs = &*docs - &split;
                self.keep_numbered_after(docs, after);
                // Read out in one call: iterating costs a foreign call a document.
                let mut passing = split.to_vec();
                passing.retain(|&d| self.slots[d as usize].posted_nanos > after);
                let total = passing.len() as u64;
                (total, self.top_sorted(passing, want), &no_unordered)
            }
        };
        SearchResult {
            facets: FacetCounts::default(),
            total: matching.cardinality() + apart_total,
            ids: self.page_merged(
                &matching,
                unordered_in_matching,
                apart.into_iter(),
                offset,
                want,
            ),
        }
    }

    /// Ranks `offset..want` of the live documents in one posting, or in both of two (the
    /// shorter first, the other dense), read where they are: matches are counted, not
    /// written out, and the page is found by walking down the first posting. `None` when
    /// the page lies deep or the matches are sparse in the first posting: writing them out
    /// costs less than that walk. So it does when both postings are sparse
    /// ([`JobIndex::is_sparse`]).
    fn page_in_place(
        &self,
        terms: &[Term<'_>],
        offset: usize,
        want: usize,
    ) -> Option<SearchResult> {
        let (first, second) = match terms {
            [Term::One(first)] => (*first, None),
            [Term::One(first), Term::One(second)] if !self.is_sparse(second) => {
                (*first, Some(*second))
            }
            _ => return None,
        };
        if offset > WALK_AT_MOST {
            return None;
        }
        let total = match second {
            None => self.live_among(first),
            Some(second) if self.dead.is_empty() => first.and_cardinality(second),
            Some(second) => {
                first.and_cardinality(second) - (first & &self.dead).and_cardinality(second)
            }
        };
        if total == 0 {
            return Some(SearchResult {
                facets: FacetCounts::default(),
                total,
                ids: Vec::new(),
            });
        }
        // Out-of-order documents have the highest numbers, so the walk steps over every one
        // in the first posting, then over as many non-matches as the matches are sparse.
        let steps =
            (want as u64).saturating_mul(first.cardinality()) / total + self.unordered_among(first);
        if steps > STEP_OVER_AT_MOST {
            return None;
        }
        let apart = match second {
            _ if self.unordered.is_empty() => Vec::new(),
            None => self.top_unordered(first, want),
            Some(second) => {
                let mut unordered = first & &self.unordered;
                unordered &= second;
                self.top_sorted(unordered.to_vec(), want)
            }
        };
        let numbered = descending(first).filter(|&d| {
            !self.stepped_over.contains(d) && second.is_none_or(|second| second.contains(d))
        });
        Some(SearchResult {
            facets: FacetCounts::default(),
            total,
            ids: self.merge_ranked(
                numbered,
                apart.into_iter(),
                offset,
                want.saturating_sub(offset),
            ),
        })
    }

    /// Whether a bitmap holds under one document in 16 of the index. CRoaring then keeps it
    /// mostly as sorted arrays (up to 4,096 of each 65,536 numbers), which intersect by SIMD
    /// merges about as cheaply as they are counted; denser ones are bitsets, whose
    /// intersections are written out one match at a time.
    pub(in crate::query) fn is_sparse(&self, docs: &Docs) -> bool {
        self.holds_few(docs.cardinality())
    }

    /// Whether `count` documents are under one in 16 of the index ([`JobIndex::is_sparse`]).
    pub(super) fn holds_few(&self, count: u64) -> bool {
        count * 16 < self.slots.len() as u64
    }

    /// About how many out-of-order documents `docs` holds, taking them to be spread like
    /// the rest: counting them exactly costs as much as the search.
    fn unordered_among(&self, docs: &Docs) -> u64 {
        docs.cardinality()
            .saturating_mul(self.unordered.cardinality())
            / self.live.cardinality().max(1)
    }

    /// Drops the numbered documents posted at or before `after`. Numbered documents are in
    /// posting order, so the ones posted after it are exactly those from the first such one up.
    pub(super) fn keep_numbered_after(&self, docs: &mut Docs, after: i64) {
        let first = self
            .ordered
            .partition_point(|&d| self.slots[d as usize].posted_nanos <= after);
        match self.ordered.get(first) {
            Some(&0) => {}
            Some(&from) => {
                docs.remove_range(..from);
            }
            None => docs.clear(),
        }
    }

    /// The first `want` out-of-order documents among `docs`, in result order: by walking
    /// all out-of-order documents in result order until `want` are in `docs`, or by sorting
    /// those in `docs`, whichever should cost less. A step of the walk (a B-tree step and a
    /// lookup in `docs`) costs about as much as a dozen of the sort's comparisons or of the
    /// intersection's checks that find the ones to sort.
    pub(super) fn top_unordered(&self, docs: &Docs, want: usize) -> Vec<u32> {
        let expected = self.unordered_among(docs);
        let walk =
            (want as u64).saturating_mul(self.live.cardinality()) / docs.cardinality().max(1);
        let sort = expected.saturating_mul(u64::from(expected.max(2).ilog2()))
            + self.unordered.cardinality().min(docs.cardinality());
        if walk.saturating_mul(12) <= sort {
            let mut top = Vec::with_capacity(want.min(self.unordered.cardinality() as usize));
            for &d in self.unordered_ranked.values() {
                if top.len() == want {
                    break;
                }
                if docs.contains(d) {
                    top.push(d);
                }
            }
            return top;
        }
        let apart = docs & &self.unordered;
        self.top_sorted(apart.to_vec(), want)
    }

    /// The first `want` of `docs` in result order.
    pub(super) fn top_sorted(&self, docs: Vec<u32>, want: usize) -> Vec<u32> {
        if want == 0 {
            return Vec::new();
        }
        // Sorted by posting time read once, next to each document (comparing through `slots`
        // would fetch two scattered slots per comparison); ids are read only for equal times.
        let mut keyed: Vec<(Reverse<i64>, u32)> = docs
            .into_iter()
            .map(|d| (Reverse(self.slots[d as usize].posted_nanos), d))
            .collect();
        let cmp = |a: &(Reverse<i64>, u32), b: &(Reverse<i64>, u32)| {
            a.0.cmp(&b.0).then_with(|| {
                self.slots[a.1 as usize]
                    .id
                    .cmp(&self.slots[b.1 as usize].id)
            })
        };
        if want < keyed.len() {
            keyed.select_nth_unstable_by(want - 1, cmp);
            keyed.truncate(want);
        }
        keyed.sort_unstable_by(cmp);
        keyed.into_iter().map(|(_, d)| d).collect()
    }

    /// Ranks `offset..want` of documents numbered in result order: the highest numbers.
    pub(super) fn page_of_ordered(&self, docs: &Docs, offset: usize, want: usize) -> Vec<JobId> {
        let Some(from_top) = below_top(docs, offset) else {
            return Vec::new();
        };
        self.merge_ranked(from_top, std::iter::empty(), 0, want.saturating_sub(offset))
    }

    /// Ranks `offset..want` of the numbered documents of `docs` merged with `apart`, the
    /// out-of-order ones in result order (read only as far as needed); `unordered` may be in
    /// `docs`, and are not numbered ones.
    pub(super) fn page_merged(
        &self,
        docs: &Docs,
        unordered: &Docs,
        apart: impl Iterator<Item = u32>,
        offset: usize,
        want: usize,
    ) -> Vec<JobId> {
        let take = want.saturating_sub(offset);
        // Out-of-order documents have the highest numbers (they are numbered as they come),
        // so a walk from the top steps over every one of them among `docs`.
        let stepped_over = if unordered.is_empty() {
            0
        } else {
            self.unordered_among(docs)
        };
        if offset <= WALK_AT_MOST && stepped_over <= WALK_AT_MOST as u64 {
            let numbered = descending(docs).filter(|&d| !unordered.contains(d));
            return self.merge_ranked(numbered, apart, offset, take);
        }
        // Else work out where the page starts in each sequence instead of walking there.
        // `k` out-of-order documents and `offset - k` numbered ones fill the places above
        // it; the place of the k-th out-of-order one only grows with k.
        let numbered = docs - unordered;
        let place_of = |k: usize, doc: u32| {
            let rank = self.slots[doc as usize].rank();
            let first_above = self
                .ordered
                .partition_point(|&d| self.slots[d as usize].rank() > rank);
            let above = self
                .ordered
                .get(first_above)
                .map_or(0, |&from| numbered.range_cardinality(from..));
            k as u64 + above
        };
        // The search doubles a bound first, so it reads about as many out-of-order
        // documents as lie above the page, not as many as the page's depth.
        let mut apart = ReadAsNeeded::new(apart);
        let (mut low, mut high) = (0, 1);
        loop {
            match apart.get(high - 1) {
                None => {
                    high = apart.read_so_far();
                    break;
                }
                Some(doc) if place_of(high - 1, doc) >= offset as u64 => break,
                Some(_) => (low, high) = (high, high * 2),
            }
        }
        while low < high {
            let mid = low + (high - low) / 2;
            let below = apart
                .get(mid)
                .is_none_or(|doc| place_of(mid, doc) < offset as u64);
            if below {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let k = low;
        match below_top(&numbered, offset - k) {
            Some(from_top) => self.merge_ranked(from_top, apart.from(k), 0, take),
            None => self.merge_ranked(std::iter::empty(), apart.from(k), 0, take),
        }
    }

    /// Merges documents in result order (`numbered`, highest number first) with `apart`
    /// (sorted by rank), skips `skip` and ranks the next `take`.
    fn merge_ranked(
        &self,
        numbered: impl Iterator<Item = u32>,
        apart: impl Iterator<Item = u32>,
        skip: usize,
        take: usize,
    ) -> Vec<JobId> {
        let rank = |d: u32| self.slots[d as usize].rank();
        let mut numbered = numbered.peekable();
        let mut apart = apart.peekable();
        let mut page = Vec::with_capacity(take);
        for position in 0..skip.saturating_add(take) {
            let next = match (numbered.peek(), apart.peek()) {
                (Some(&a), Some(&b)) if rank(b) < rank(a) => apart.next(),
                (Some(_), _) => numbered.next(),
                (None, _) => apart.next(),
            };
            let Some(doc) = next else { break };
            if position >= skip {
                page.push(self.slots[doc as usize].id);
            }
        }
        page
    }
}

/// An iterator's items, read into a buffer only as far as they are asked for.
struct ReadAsNeeded<I> {
    read: Vec<u32>,
    rest: I,
}

impl<I: Iterator<Item = u32>> ReadAsNeeded<I> {
    fn new(rest: I) -> Self {
        Self {
            read: Vec::new(),
            rest,
        }
    }

    /// The item at `index`; `None` past the last.
    fn get(&mut self, index: usize) -> Option<u32> {
        while self.read.len() <= index {
            self.read.push(self.rest.next()?);
        }
        Some(self.read[index])
    }

    fn read_so_far(&self) -> usize {
        self.read.len()
    }

    /// Every item from `index` on.
    fn from(self, index: usize) -> impl Iterator<Item = u32> {
        let read = self.read.into_iter().skip(index);
        read.chain(self.rest)
    }
}

impl JobIndex {
    /// Whether a filter asks what only some documents' own values answer: their pay, or the
    /// distance of their places where the cells they are in do not settle it.
    fn checks_each(&self, filter: &JobFilter) -> bool {
        (filter.min_salary.is_some() && filter.salary_currency.is_some())
            || filter.seen_after.is_some()
            || filter
                .near
                .is_some_and(|near| self.places.cells_near(Circle::from(near)).any_measured())
    }

    /// Keeps the documents that pass the filter's checks that postings only narrow down or
    /// cannot hold: when each was last seen, the yearly pay's floor, and the circle of `near`
    /// for the documents of the cells with points on both sides of its edge.
    pub(super) fn keep_exact(&self, matching: &mut std::borrow::Cow<'_, Docs>, filter: &JobFilter) {
        if let Some(after) = filter.seen_after.map(nanos_clamped) {
            let mut kept = matching.to_vec();
            kept.retain(|&d| self.last_seen[d as usize] > after);
            *matching.to_mut() = bitmap::from_sorted(&kept);
        }
        if let Some(floor) = filter.salary_currency.and(filter.min_salary) {
            let mut kept = matching.to_vec();
            kept.retain(|&d| self.places.pays_at_least(d, floor));
            *matching.to_mut() = bitmap::from_sorted(&kept);
        }
        let Some(near) = filter.near else {
            return;
        };
        let circle = Circle::from(near);
        if let Some(measured) = self.places.cells_near(circle).measured() {
            let suspects = matching.as_ref() & &measured;
            let far: Vec<u32> = suspects
                .to_vec()
                .into_iter()
                .filter(|&d| !self.places.is_within(d, circle))
                .collect();
            if !far.is_empty() {
                *matching.to_mut() -= &bitmap::from_sorted(&far);
            }
        }
    }
}
