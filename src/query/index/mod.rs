use std::cmp::Reverse;
use std::collections::BTreeMap;

// FxHash: the keys are our own ids and words from ingested jobs, not attacker-chosen, and
// hashing is a large share of indexing and lookups.
use rustc_hash::FxHashMap as HashMap;

use super::bitmap::{self, below_top, descending, Docs};
use super::confidence::ConfidenceBitmaps;
use super::filter::{JobFilter, JobQuery, SearchResult};
use super::ids::DocsById;
use super::indexed::IndexedJob;
use super::terms::Term;
use super::text::for_each_word;
use crate::domain::{CompanyId, Job, JobId};

/// The attributes of one indexed job that are read per document rather than by bitmap.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Slot {
    pub(super) id: JobId,
    pub(super) posted_nanos: i64,
}

impl Slot {
    /// Result order: newest first, then id ascending.
    pub(super) fn rank(&self) -> RankKey {
        (Reverse(self.posted_nanos), self.id)
    }
}

/// A job's place in result order: newest first, then id ascending.
pub(super) type RankKey = (Reverse<i64>, JobId);

/// An in-memory index over active jobs; see the [module docs](super).
///
/// Documents get dense `u32` numbers **in result order**: a higher number is a job that comes
/// earlier in the results (newer, or as new with a smaller id). Every filter is a Roaring
/// bitmap of document numbers, so a page is the highest numbers of the matching bitmap, found
/// without sorting, and `posted_after` is a range of numbers.
///
/// A job added out of that order (older than the newest already indexed, as happens when
/// loading in bulk or when a job is updated) is kept in a small *unordered* set whose members
/// are sorted per query; a changed or closed job's old document is only marked dead, so a
/// writer holds a lock for one job's update at most. Once dead or unordered documents pile
/// up, [`JobIndex::compact`] renumbers everything in result order again; by default
/// [`JobIndex::upsert`] and [`JobIndex::remove`] do that themselves when it is due.
#[derive(Clone)]
pub struct JobIndex {
    pub(super) slots: Vec<Slot>,
    /// Each document's confidence, apart from `slots` so the `min_confidence` check reads
    /// 8 bytes a document instead of a whole slot.
    pub(super) confidences: Vec<f64>,
    pub(super) by_id: DocsById,
    pub(super) live: Docs,
    /// Numbered documents that are not live (closed or replaced jobs): they stay in the
    /// other bitmaps until the next compaction, and are taken out of every search's matches.
    pub(super) dead: Docs,
    /// The dead and the out-of-order documents: those a walk down the numbers, in result
    /// order, steps over.
    pub(super) stepped_over: Docs,
    /// Live documents whose number does not follow result order.
    pub(super) unordered: Docs,
    /// The same documents, in result order.
    pub(super) unordered_ranked: BTreeMap<RankKey, u32>,
    /// While a bulk load runs, the out-of-order documents it adds, put in `unordered_ranked`
    /// all at once when it ends: one B-tree insert each was a twentieth of a rebuild, which
    /// numbers nearly every document out of order.
    pub(super) ranks_to_add: Option<Vec<(RankKey, u32)>>,
    /// Documents whose number does follow result order, ascending (some may be dead since).
    pub(super) ordered: Vec<u32>,
    pub(super) domains: HashMap<String, Docs>,
    pub(super) seniority: HashMap<String, Docs>,
    pub(super) remote: Docs,
    pub(super) text: HashMap<Box<str>, Docs>,
    pub(super) company_words: HashMap<Box<str>, Docs>,
    pub(super) companies: HashMap<CompanyId, Docs>,
    pub(super) confidence: ConfidenceBitmaps,
    pub(super) auto_compact: bool,
}

impl Default for JobIndex {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            confidences: Vec::new(),
            by_id: DocsById::default(),
            live: Docs::new(),
            dead: Docs::new(),
            stepped_over: Docs::new(),
            unordered: Docs::new(),
            unordered_ranked: BTreeMap::new(),
            ranks_to_add: None,
            ordered: Vec::new(),
            domains: HashMap::default(),
            seniority: HashMap::default(),
            remote: Docs::new(),
            text: HashMap::default(),
            company_words: HashMap::default(),
            companies: HashMap::default(),
            confidence: ConfidenceBitmaps::default(),
            auto_compact: true,
        }
    }
}

impl std::fmt::Debug for JobIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobIndex")
            .field("active_jobs", &self.live.cardinality())
            .field("dead_docs", &self.dead_docs())
            .field("unordered_docs", &self.unordered.cardinality())
            .field("words", &self.text.len())
            .finish_non_exhaustive()
    }
}

impl JobIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of active jobs indexed.
    pub fn len(&self) -> u64 {
        self.live.cardinality()
    }

    /// Whether no active job is indexed.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Whether the job is indexed (that is, active).
    pub fn contains(&self, id: JobId) -> bool {
        self.by_id.get(&self.slots, id).is_some()
    }

    /// About how many bytes of heap the index holds: vectors and tables by capacity, each
    /// bitmap by its serialized size (close to its size in memory), map keys by length. For
    /// reporting; allocator overhead is not included.
    pub fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        fn postings<K>(map: &HashMap<K, Docs>, key_heap: impl Fn(&K) -> usize) -> u64 {
            let entry = size_of::<K>() + size_of::<Docs>() + 1;
            let heap: usize = map
                .iter()
                .map(|(k, b)| bitmap::heap_bytes(b) + key_heap(k))
                .sum();
            (map.capacity() * entry + heap) as u64
        }
        let vectors = self.slots.capacity() * size_of::<Slot>()
            + self.confidences.capacity() * size_of::<f64>()
            + self.ordered.capacity() * size_of::<u32>()
            // A B-tree entry plus about a third of one for its node's spare room.
            + self.unordered_ranked.len() * (size_of::<(RankKey, u32)>() * 4 / 3);
        let bitmaps = [&self.live, &self.dead, &self.stepped_over]
            .into_iter()
            .chain([&self.unordered, &self.remote])
            .chain(self.confidence.bitmaps())
            .map(|b| bitmap::heap_bytes(b) as u64)
            .sum::<u64>();
        vectors as u64
            + self.by_id.heap_bytes()
            + bitmaps
            + postings(&self.domains, String::len)
            + postings(&self.seniority, String::len)
            + postings(&self.text, |k| k.len())
            + postings(&self.company_words, |k| k.len())
            + postings(&self.companies, |_| 0)
    }

    /// Whether [`JobIndex::upsert`] and [`JobIndex::remove`] compact the index themselves when
    /// it is due (the default). Turn it off to compact at a time of your choosing, e.g. on a
    /// copy while readers keep using the original ([`JobIndex::compacted`]).
    pub fn set_auto_compact(&mut self, on: bool) {
        self.auto_compact = on;
    }

    /// Whether enough documents are dead or out of order that [`JobIndex::compact`] would
    /// pay for itself: more than a quarter of the live count dead, or more than 1/64 out of
    /// order (each such document costs every search that matches it a little sorting, and
    /// makes a deep page walk down from the top). The floors keep a small index from being
    /// renumbered over and over; renumbering it is cheap.
    pub fn needs_compaction(&self) -> bool {
        let live = self.live.cardinality();
        let dead = self.dead_docs();
        let unordered = self.unordered.cardinality();
        (dead > 4_096 && dead * 4 > live)
            || (unordered > 128 && unordered * 64 > live)
            || self.slots.len() >= u32::MAX as usize
    }

    pub(super) fn dead_docs(&self) -> u64 {
        self.slots.len() as u64 - self.live.cardinality()
    }

    pub(super) fn compact_if_due(&mut self) {
        if self.auto_compact && self.needs_compaction() {
            self.compact();
        }
    }

    /// Adds or replaces a job. A job that is not active is removed instead.
    pub fn upsert(&mut self, job: &Job) {
        self.insert(job);
        self.compact_if_due();
    }

    /// Adds or replaces a job without compacting.
    fn insert(&mut self, job: &Job) {
        if let Some(doc) = self.insert_attributes(job) {
            let (text, company_words) = (&mut self.text, &mut self.company_words);
            for_each_job_word(job, |word, of_company| {
                if of_company {
                    add_posting(company_words, word, doc);
                }
                add_posting(text, word, doc);
            });
        }
    }

    /// Adds or replaces a job, all but its words (which go into `text` and `company_words`
    /// under the number returned). `None` when the job is not active: it is only removed.
    pub(super) fn insert_attributes(&mut self, job: &impl IndexedJob) -> Option<u32> {
        let job = job.fields();
        self.forget(job.id);
        if !job.active {
            return None;
        }
        if self.slots.len() >= u32::MAX as usize {
            self.compact();
        }
        let slot = Slot {
            id: job.id,
            posted_nanos: nanos_clamped(job.posted_at),
        };
        let doc = self.slots.len() as u32;
        let in_order = self
            .ordered
            .last()
            .is_none_or(|&last| slot.rank() < self.slots[last as usize].rank());
        push_per_doc(&mut self.slots, slot);
        push_per_doc(&mut self.confidences, job.confidence);
        if in_order {
            push_per_doc(&mut self.ordered, doc);
        } else {
            self.unordered.add(doc);
            self.stepped_over.add(doc);
            match &mut self.ranks_to_add {
                Some(pending) => pending.push((slot.rank(), doc)),
                None => {
                    self.unordered_ranked.insert(slot.rank(), doc);
                }
            }
        }
        self.live.add(doc);
        self.by_id.insert(&self.slots, doc);
        for tag in job.domains {
            add_posting(&mut self.domains, tag.as_str(), doc);
        }
        for level in job.seniority {
            add_posting(&mut self.seniority, level.as_str(), doc);
        }
        if job.remote {
            self.remote.add(doc);
        }
        self.confidence.insert(doc, job.confidence);
        self.companies.entry(job.company_id).or_default().add(doc);
        Some(doc)
    }

    /// Puts the out-of-order documents a bulk load has added so far in `unordered_ranked`,
    /// but for those replaced or closed since (no longer unordered).
    pub(super) fn rank_pending(&mut self) {
        let Some(pending) = self.ranks_to_add.as_mut() else {
            return;
        };
        let pending = std::mem::take(pending);
        let unordered = &self.unordered;
        // Sorted and built as one tree (a bulk build), then merged in one pass.
        let mut ranked: BTreeMap<RankKey, u32> = pending
            .into_iter()
            .filter(|&(_, doc)| unordered.contains(doc))
            .collect();
        self.unordered_ranked.append(&mut ranked);
    }

    /// Removes a job if it is indexed; returns whether it was.
    pub fn remove(&mut self, id: JobId) -> bool {
        let removed = self.forget(id);
        self.compact_if_due();
        removed
    }

    /// Marks a job's document dead; it leaves the other bitmaps at the next compaction.
    fn forget(&mut self, id: JobId) -> bool {
        let Some(doc) = self.by_id.remove(&self.slots, id) else {
            return false;
        };
        self.live.remove(doc);
        self.dead.add(doc);
        self.stepped_over.add(doc);
        if self.unordered.remove_checked(doc) {
            self.unordered_ranked
                .remove(&self.slots[doc as usize].rank());
        }
        true
    }

    /// Number of active jobs of one company.
    pub fn active_jobs_of(&self, company: CompanyId) -> u64 {
        self.companies
            .get(&company)
            .map_or(0, |b| self.live_among(b))
    }

    /// Every company with at least one active job, with its count of active jobs.
    pub fn companies_with_active_jobs(&self) -> impl Iterator<Item = (CompanyId, u64)> + '_ {
        self.companies.iter().filter_map(|(id, b)| {
            let n = self.live_among(b);
            (n > 0).then_some((*id, n))
        })
    }

    /// How many documents of a bitmap are live: counted against the few dead ones rather
    /// than the many live ones.
    fn live_among(&self, docs: &Docs) -> u64 {
        if self.dead.is_empty() {
            docs.cardinality()
        } else {
            docs.cardinality() - docs.and_cardinality(&self.dead)
        }
    }

    /// Answers a query: the number of matches and the requested page of ids.
    pub fn search(&self, query: &JobQuery) -> SearchResult {
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
        let Some(terms) = self.terms(filter) else {
            return SearchResult::default();
        };
        if filter.min_confidence.is_none() && filter.posted_after.is_none() {
            if let Some(found) = self.page_in_place(&terms, offset, want) {
                return found;
            }
        }
        let mut matching = self.intersect(terms);
        if let Some(min) = filter.min_confidence {
            self.confidence
                .retain_at_least(matching.to_mut(), min.get(), |d| {
                    self.confidences[d as usize]
                });
        }
        let after = filter.posted_after.map(nanos_clamped);
        if self.unordered.is_empty() {
            if let Some(after) = after {
                self.keep_numbered_after(matching.to_mut(), after);
            }
            return SearchResult {
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
    pub(super) fn is_sparse(&self, docs: &Docs) -> bool {
        docs.cardinality() * 16 < self.slots.len() as u64
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
    fn keep_numbered_after(&self, docs: &mut Docs, after: i64) {
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
    /// those in `docs`, whichever should cost less.
    fn top_unordered(&self, docs: &Docs, want: usize) -> Vec<u32> {
        let expected = self.unordered_among(docs);
        let walk =
            (want as u64).saturating_mul(self.live.cardinality()) / docs.cardinality().max(1);
        let sort = expected.saturating_mul(u64::from(expected.max(2).ilog2()));
        if walk <= sort {
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
    fn top_sorted(&self, docs: Vec<u32>, want: usize) -> Vec<u32> {
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
    fn page_of_ordered(&self, docs: &Docs, offset: usize, want: usize) -> Vec<JobId> {
        let Some(from_top) = below_top(docs, offset) else {
            return Vec::new();
        };
        self.merge_ranked(from_top, std::iter::empty(), 0, want.saturating_sub(offset))
    }

    /// Ranks `offset..want` of the numbered documents of `docs` merged with `apart`, the
    /// out-of-order ones in result order (read only as far as needed); `unordered` may be in
    /// `docs`, and are not numbered ones.
    fn page_merged(
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

impl<'a> Extend<&'a Job> for JobIndex {
    /// Adds or replaces many jobs, in any order, and then compacts once if due: the way to
    /// load an index, much faster than one [`JobIndex::upsert`] each.
    fn extend<I: IntoIterator<Item = &'a Job>>(&mut self, jobs: I) {
        self.insert_in_parts(jobs);
        self.compact_if_due();
    }
}

/// Pushes onto one of the vectors that hold something per document. Past 64k documents they
/// grow by a sixteenth at a time instead of doubling: compaction leaves them exactly full,
/// and the first job added after it would otherwise reserve room for as many again (at a
/// million jobs, 36 bytes a job that may never be used). One reallocation per sixteenth of
/// the index added is still rare.
fn push_per_doc<T>(docs: &mut Vec<T>, value: T) {
    if docs.len() == docs.capacity() {
        let len = docs.len();
        docs.reserve_exact(if len < 1 << 16 { len.max(64) } else { len / 16 });
    }
    docs.push(value);
}

/// Nanoseconds since the epoch, clamped to `i64` so instants outside 1678..2262 keep their
/// order against every indexed job.
fn nanos_clamped(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_nanos_opt().unwrap_or(if t.timestamp() < 0 {
        i64::MIN
    } else {
        i64::MAX
    })
}

/// Calls `f` with every searchable word of a job, and whether it is a word of the company's
/// name (searchable by `company` as well as by `q`).
pub(super) fn for_each_job_word(job: &impl IndexedJob, mut f: impl FnMut(&str, bool)) {
    let job = job.fields();
    let mut buf = String::new();
    for_each_word(job.company_name, &mut buf, |w| f(w, true));
    for text in [job.role, job.description] {
        for_each_word(text, &mut buf, |w| f(w, false));
    }
}

fn add_posting<K>(map: &mut HashMap<K, Docs>, key: &str, doc: u32)
where
    K: std::borrow::Borrow<str> + for<'k> From<&'k str> + Eq + std::hash::Hash,
{
    match map.get_mut(key) {
        Some(b) => {
            b.add(doc);
        }
        None => {
            let mut b = Docs::new();
            b.add(doc);
            map.insert(K::from(key), b);
        }
    }
}

/// Up to about this many steps, a page of one or two postings is found by walking down the
/// first: each step is a lookup or two in a bitmap, where writing out the matches costs
/// about as much as hundreds of steps for every thousand documents of the posting.
const STEP_OVER_AT_MOST: u64 = 2_048;

/// Up to this many places, a page is found by walking down from the top one document at a
/// time (each step a check or two against other bitmaps); deeper, by counting whole
/// containers.
const WALK_AT_MOST: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::domain::JobStatus;

    /// The first `in_order` jobs loaded and compacted, the rest upserted one by one after,
    /// so that they are kept out of order.
    fn with_the_rest_out_of_order(jobs: &[Job], in_order: usize) -> JobIndex {
        let (first, rest) = jobs.split_at(in_order);
        let mut index = JobIndex::new();
        index.set_auto_compact(false);
        index.extend(first);
        index.compact();
        for job in rest {
            index.upsert(job);
        }
        index
    }

    /// `usize::MAX` asks for every match, with jobs in and out of order: it is answered,
    /// not a capacity overflow.
    #[test]
    fn the_top_usize_max_is_every_match() {
        let data = Dataset::generate(3, 10, 600);
        let index = with_the_rest_out_of_order(&data.jobs, 400);
        let active = data.jobs.iter().filter(|j| j.is_active()).count();
        for filter in [
            JobFilter::default(),
            JobFilter::default().with_q(&data.jobs[0].role),
        ] {
            let all = index.search_top(&filter, usize::MAX);
            assert_eq!(all.ids.len() as u64, all.total, "{filter:?}");
            assert_eq!(all.ids, index.search_top(&filter, active).ids);
        }
        assert_eq!(
            index.search_top(&JobFilter::default(), usize::MAX).total,
            active as u64
        );
    }

    /// Every page, at every depth, of an index where many jobs came out of order: the
    /// search for where a deep page starts among them must land on each possible place
    /// (before, between and after them, at every bound it doubles through).
    #[test]
    fn every_page_is_in_result_order_when_many_jobs_came_out_of_order() {
        use crate::domain::{DomainTag, Page, PerPage};
        let data = Dataset::generate(9, 30, 2_400);
        let index = with_the_rest_out_of_order(&data.jobs, 1_200);
        assert!(index.unordered.cardinality() > WALK_AT_MOST as u64);

        let engineering = DomainTag::parse("engineering").ok();
        for filter in [
            JobFilter::default(),
            JobFilter {
                domains: engineering.into_iter().collect(),
                ..JobFilter::default()
            },
        ] {
            let mut expected: Vec<&Job> = data
                .jobs
                .iter()
                .filter(|j| j.is_active() && filter.matches(j))
                .collect();
            expected.sort_by_key(|j| (Reverse(nanos_clamped(j.posted_at)), j.id));
            let expected: Vec<JobId> = expected.iter().map(|j| j.id).collect();
            for per_page in [1, 7, 50] {
                let pages = expected.len() / per_page as usize + 2;
                for page in 1..=pages as u32 {
                    let query = JobQuery {
                        filter: filter.clone(),
                        page: Page::new(page).expect("page in range"),
                        per_page: PerPage::new(per_page).expect("per page in range"),
                    };
                    let from = ((page - 1) * per_page) as usize;
                    let to = (from + per_page as usize).min(expected.len());
                    let found = index.search(&query);
                    assert_eq!(found.total, expected.len() as u64);
                    assert_eq!(
                        found.ids,
                        expected.get(from..to).unwrap_or_default(),
                        "{filter:?} page {page} of {per_page}"
                    );
                }
            }
        }
    }

    /// A compaction leaves the per-document vectors exactly full; the next job must not
    /// reserve room for as many documents again.
    #[test]
    fn a_job_added_after_a_compaction_grows_the_document_vectors_by_a_sixteenth() {
        let data = Dataset::generate(5, 40, 90_000);
        let mut index = JobIndex::new();
        index.set_auto_compact(false);
        index.insert_in_parts(data.jobs.iter().filter(|j| j.is_active()));
        index.compact();
        let docs = index.slots.len();
        assert!(
            docs > 1 << 16,
            "the test needs more documents than doubling applies to"
        );
        assert_eq!(index.slots.capacity(), docs);

        let newest = data.jobs.iter().map(|j| j.posted_at).max();
        let newer = Job {
            id: JobId::new_random(),
            posted_at: newest.unwrap_or_else(chrono::Utc::now) + chrono::Duration::hours(1),
            status: JobStatus::Active,
            ..data.jobs[0].clone()
        };
        let before = index.heap_bytes();
        index.upsert(&newer);

        let room = docs + docs / 16;
        assert_eq!(index.slots.capacity(), room);
        assert_eq!(index.confidences.capacity(), room);
        assert_eq!(index.ordered.capacity(), room);
        // 36 bytes a document of vectors; doubling would have added all of them.
        let grown = index.heap_bytes() - before;
        assert!(
            grown < (36 * docs / 8) as u64,
            "one job grew the index by {grown} bytes"
        );
        let found = index.search_top(&JobFilter::default(), 1);
        assert_eq!(found.ids, vec![newer.id]);
    }
}
