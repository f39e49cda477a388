use std::borrow::Cow;
use std::cmp::{Ordering, Reverse};
use std::collections::BTreeMap;

// FxHash: the keys are our own ids and words from ingested jobs, not attacker-chosen, and
// hashing is a large share of indexing and lookups.
use rustc_hash::FxHashMap as HashMap;

use roaring::RoaringBitmap;

use super::filter::{JobFilter, JobQuery, SearchResult};
use super::text::for_each_word;
use crate::domain::{CompanyId, Job, JobId};

/// The attributes of one indexed job that are checked per document rather than by bitmap.
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: JobId,
    posted_nanos: i64,
    confidence: f64,
}

impl Slot {
    /// Newest first, then id ascending.
    fn rank(&self) -> (Reverse<i64>, JobId) {
        (Reverse(self.posted_nanos), self.id)
    }
}

type RankKey = (Reverse<i64>, JobId);

/// An in-memory index over active jobs; see the [module docs](super).
///
/// Documents get dense `u32` numbers; every filter is a roaring bitmap of document numbers, and
/// a B-tree keeps all live documents in result order. A changed or closed job's old document is
/// only marked dead (one bitmap write, so a writer holds a lock for one job's update at most);
/// dead documents are swept from every bitmap in bulk once they pile up, and their numbers are
/// then reused.
#[derive(Default)]
pub struct JobIndex {
    slots: Vec<Slot>,
    live: RoaringBitmap,
    dead: RoaringBitmap,
    free: Vec<u32>,
    by_id: HashMap<JobId, u32>,
    order: BTreeMap<RankKey, u32>,
    domains: HashMap<String, RoaringBitmap>,
    seniority: HashMap<String, RoaringBitmap>,
    remote: RoaringBitmap,
    text: HashMap<Box<str>, RoaringBitmap>,
    company_words: HashMap<Box<str>, RoaringBitmap>,
    companies: HashMap<CompanyId, RoaringBitmap>,
}

impl std::fmt::Debug for JobIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobIndex")
            .field("active_jobs", &self.live.len())
            .field("dead_docs", &self.dead.len())
            .field("words", &self.text.len())
            .finish_non_exhaustive()
    }
}

/// Below this many candidates, sorting them beats walking the global order.
const SORT_BELOW: u64 = 2_048;

impl JobIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of active jobs indexed.
    pub fn len(&self) -> u64 {
        self.live.len()
    }

    /// Whether no active job is indexed.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Whether the job is indexed (that is, active).
    pub fn contains(&self, id: JobId) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Adds or replaces a job. A job that is not active is removed instead.
    pub fn upsert(&mut self, job: &Job) {
        self.remove(job.id);
        if !job.is_active() {
            return;
        }
        let slot = Slot {
            id: job.id,
            posted_nanos: nanos_clamped(job.posted_at),
            confidence: job.confidence.get(),
        };
        let doc = match self.free.pop() {
            Some(doc) => {
                self.slots[doc as usize] = slot;
                doc
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.live.insert(doc);
        self.by_id.insert(job.id, doc);
        self.order.insert(slot.rank(), doc);
        for tag in &job.domains {
            self.domains
                .entry(tag.as_str().to_owned())
                .or_default()
                .insert(doc);
        }
        for level in &job.seniority {
            self.seniority
                .entry(level.as_str().to_owned())
                .or_default()
                .insert(doc);
        }
        if job.remote {
            self.remote.insert(doc);
        }
        self.companies
            .entry(job.company_id)
            .or_default()
            .insert(doc);
        let mut buf = String::new();
        for_each_word(&job.company_name, &mut buf, |w| {
            add_posting(&mut self.company_words, w, doc);
            add_posting(&mut self.text, w, doc);
        });
        for text in [&job.role, &job.description] {
            for_each_word(text, &mut buf, |w| add_posting(&mut self.text, w, doc));
        }
    }

    /// Removes a job if it is indexed; returns whether it was.
    pub fn remove(&mut self, id: JobId) -> bool {
        let Some(doc) = self.by_id.remove(&id) else {
            return false;
        };
        let slot = self.slots[doc as usize];
        self.order.remove(&slot.rank());
        self.live.remove(doc);
        self.dead.insert(doc);
        if self.dead.len() > 4_096 && self.dead.len() * 4 > self.live.len() {
            self.sweep();
        }
        true
    }

    /// Clears dead documents out of every bitmap and frees their numbers for reuse.
    fn sweep(&mut self) {
        let dead = std::mem::take(&mut self.dead);
        self.remote -= &dead;
        for map in [&mut self.domains, &mut self.seniority] {
            map.values_mut().for_each(|b| *b -= &dead);
            map.retain(|_, b| !b.is_empty());
        }
        for map in [&mut self.text, &mut self.company_words] {
            map.values_mut().for_each(|b| *b -= &dead);
            map.retain(|_, b| !b.is_empty());
        }
        self.companies.values_mut().for_each(|b| *b -= &dead);
        self.companies.retain(|_, b| !b.is_empty());
        self.free.extend(dead.iter());
    }

    /// Number of active jobs of one company.
    pub fn active_jobs_of(&self, company: CompanyId) -> u64 {
        self.companies
            .get(&company)
            .map_or(0, |b| b.intersection_len(&self.live))
    }

    /// Every company with at least one active job, with its count of active jobs.
    pub fn companies_with_active_jobs(&self) -> impl Iterator<Item = (CompanyId, u64)> + '_ {
        self.companies.iter().filter_map(|(id, b)| {
            let n = b.intersection_len(&self.live);
            (n > 0).then_some((*id, n))
        })
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
        self.search_range(filter, 0, limit)
    }

    /// The number of matches and the ids ranked `offset..want`.
    fn search_range(&self, filter: &JobFilter, offset: usize, want: usize) -> SearchResult {
        let Some(candidates) = self.candidates(filter) else {
            return SearchResult::default();
        };
        let residual = filter.min_confidence.is_some() || filter.posted_after.is_some();

        if residual {
            let min_conf = filter.min_confidence.map_or(f64::NEG_INFINITY, |c| c.get());
            let after = filter.posted_after.map_or(i64::MIN, nanos_clamped);
            let docs: Vec<u32> = candidates
                .iter()
                .filter(|&d| {
                    let s = &self.slots[d as usize];
                    s.confidence >= min_conf && s.posted_nanos > after
                })
                .collect();
            let total = docs.len() as u64;
            return SearchResult {
                total,
                ids: self.top_sorted(docs, offset, want),
            };
        }

        let total = candidates.len();
        let everything = self.live.len().max(1);
        // Walking the global order visits about want * everything / total documents; sorting
        // touches all `total` candidates. Pick the cheaper.
        let walk_cost = (want as u64).saturating_mul(everything) / total.max(1);
        let ids = if total <= SORT_BELOW || walk_cost > total.saturating_mul(4) {
            self.top_sorted(candidates.iter().collect(), offset, want)
        } else {
            self.order
                .values()
                .filter(|&&d| candidates.contains(d))
                .skip(offset)
                .take(want.saturating_sub(offset))
                .map(|&d| self.slots[d as usize].id)
                .collect()
        };
        SearchResult { total, ids }
    }

    /// Sorts the first `want` documents into result order and returns the ids from `offset`.
    fn top_sorted(&self, mut docs: Vec<u32>, offset: usize, want: usize) -> Vec<JobId> {
        if offset >= docs.len() || want <= offset {
            return Vec::new();
        }
        let cmp = |a: &u32, b: &u32| -> Ordering {
            self.slots[*a as usize]
                .rank()
                .cmp(&self.slots[*b as usize].rank())
        };
        if want < docs.len() {
            docs.select_nth_unstable_by(want - 1, cmp);
            docs.truncate(want);
        }
        docs.sort_unstable_by(cmp);
        docs[offset..]
            .iter()
            .map(|&d| self.slots[d as usize].id)
            .collect()
    }

    /// The live documents passing every bitmap filter; `None` when nothing can match.
    fn candidates(&self, filter: &JobFilter) -> Option<Cow<'_, RoaringBitmap>> {
        let mut terms: Vec<Cow<'_, RoaringBitmap>> = Vec::new();
        if !filter.domains.is_empty() {
            terms.push(union(
                filter.domains.iter().map(|t| self.domains.get(t.as_str())),
            )?);
        }
        if !filter.seniority.is_empty() {
            terms.push(union(
                filter
                    .seniority
                    .iter()
                    .map(|s| self.seniority.get(s.as_str())),
            )?);
        }
        if filter.remote_only {
            terms.push(Cow::Borrowed(&self.remote));
        }
        if let Some(company) = filter.company_id {
            terms.push(Cow::Borrowed(self.companies.get(&company)?));
        }
        for word in &filter.company_words {
            terms.push(Cow::Borrowed(self.company_words.get(word.as_str())?));
        }
        for word in &filter.q_words {
            terms.push(Cow::Borrowed(self.text.get(word.as_str())?));
        }
        if terms.is_empty() {
            return Some(Cow::Borrowed(&self.live));
        }
        terms.sort_by_key(|b| b.len());
        let mut iter = terms.into_iter();
        let mut acc = iter.next()?.into_owned();
        acc &= &self.live;
        for term in iter {
            if acc.is_empty() {
                break;
            }
            acc &= term.as_ref();
        }
        Some(Cow::Owned(acc))
    }
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

fn add_posting(map: &mut HashMap<Box<str>, RoaringBitmap>, word: &str, doc: u32) {
    match map.get_mut(word) {
        Some(b) => {
            b.insert(doc);
        }
        None => {
            let mut b = RoaringBitmap::new();
            b.insert(doc);
            map.insert(Box::from(word), b);
        }
    }
}

/// The union of the bitmaps that exist; `None` when none does (nothing can match).
fn union<'a>(
    bitmaps: impl Iterator<Item = Option<&'a RoaringBitmap>>,
) -> Option<Cow<'a, RoaringBitmap>> {
    let found: Vec<&RoaringBitmap> = bitmaps.flatten().collect();
    match found.as_slice() {
        [] => None,
        [one] => Some(Cow::Borrowed(*one)),
        many => {
            let mut acc = RoaringBitmap::new();
            for b in many {
                acc |= *b;
            }
            Some(Cow::Owned(acc))
        }
    }
}
