use std::cmp::Reverse;
use std::collections::BTreeMap;

// FxHash: the keys are our own ids and words from ingested jobs, not attacker-chosen, and
// hashing is a large share of indexing and lookups.
use rustc_hash::FxHashMap as HashMap;

use super::bitmap::{self, below_top, descending, Docs};
use super::bm25::{Field, WordCounts};
use super::confidence::ConfidenceBitmaps;
use super::filter::{JobFilter, JobQuery, SearchResult};
use super::ids::DocsById;
use super::indexed::IndexedJob;
use super::places::PlaceIndex;
use super::reposts::{self, RepostProbe, Shingles, Signature};
use super::terms::Term;
use super::text::for_each_word;
use crate::domain::{CompanyId, DomainTag, Job, JobId, Seniority};

mod dense;
pub(in crate::query) mod facets;
mod relevance;
mod search;
mod similar;

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
    /// Each document's combination of facet values, for counting few matches.
    pub(super) combos: facets::Combos,
    /// Places, remote regions and pay.
    pub(super) places: PlaceIndex,
    /// Term frequencies and document lengths, for relevance order.
    pub(super) counts: WordCounts,
    /// The live documents that are not reposts of another job: what a search that hides
    /// reposts (the default) matches among.
    pub(super) canonical: Docs,
    /// Each document's `last_seen_at`, in nanoseconds since the epoch, moved in place by
    /// [`JobIndex::touch`].
    pub(super) last_seen: Vec<i64>,
    /// Each document's role key ([`reposts::short_key`]): copies are looked for among the
    /// documents of the company holding the role's words, and kept by this.
    pub(super) role_keys: Vec<u32>,
    /// Each document's post signature, for telling which of its role's jobs may be copies.
    pub(super) signatures: Vec<Signature>,
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
            combos: facets::Combos::default(),
            places: PlaceIndex::default(),
            counts: WordCounts::default(),
            canonical: Docs::new(),
            last_seen: Vec::new(),
            role_keys: Vec::new(),
            signatures: Vec::new(),
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
        self.heap_parts().iter().map(|(_, bytes)| bytes).sum()
    }

    /// [`JobIndex::heap_bytes`] by part: what each kind of posting and per-document value
    /// holds, for finding what a change of the data or the index costs.
    pub fn heap_parts(&self) -> Vec<(&'static str, u64)> {
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
            + self.last_seen.capacity() * size_of::<i64>()
            + self.ordered.capacity() * size_of::<u32>()
            // A B-tree entry plus about a third of one for its node's spare room.
            + self.unordered_ranked.len() * (size_of::<(RankKey, u32)>() * 4 / 3);
        let bitmaps = [&self.live, &self.dead, &self.stepped_over]
            .into_iter()
            .chain([&self.unordered, &self.remote, &self.canonical])
            .chain(self.confidence.bitmaps())
            .map(|b| bitmap::heap_bytes(b) as u64)
            .sum::<u64>();
        vec![
            (
                "documents",
                vectors as u64 + self.by_id.heap_bytes() + bitmaps,
            ),
            (
                "labels",
                postings(&self.domains, String::len)
                    + postings(&self.seniority, String::len)
                    + postings(&self.companies, |_| 0)
                    + self.combos.heap_bytes(),
            ),
            ("words", postings(&self.text, |k| k.len())),
            ("company words", postings(&self.company_words, |k| k.len())),
            ("term frequencies", self.counts.heap_bytes()),
            ("places and pay", self.places.heap_bytes()),
            (
                "reposts",
                (self.role_keys.capacity() * size_of::<u32>()
                    + self.signatures.capacity() * size_of::<Signature>()) as u64,
            ),
        ]
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
        self.insert_one(job);
        self.compact_if_due();
    }

    /// Adds or replaces a job of `length` words, all but its words (which go into `text`,
    /// `company_words` and `counts` under the number returned). `None` when the job is not
    /// active: it is only removed.
    pub(super) fn insert_attributes(&mut self, job: &impl IndexedJob, length: u32) -> Option<u32> {
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
        push_per_doc(&mut self.last_seen, nanos_clamped(job.last_seen));
        push_per_doc(
            &mut self.signatures,
            Shingles::of(job.description).signature(),
        );
        let mut role_words: Vec<String> = Vec::new();
        let mut buf = String::new();
        for_each_word(job.role, &mut buf, |w| role_words.push(w.to_owned()));
        push_per_doc(
            &mut self.role_keys,
            reposts::short_key(reposts::role_key(job.company_id, &role_words)),
        );
        self.counts.push_length(doc, length);
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
        if !job.repost {
            self.canonical.add(doc);
        }
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
        let combo = self.combos.number(
            job.domains.iter().map(|d| d.as_str()),
            job.seniority.iter().map(|s| s.as_str()),
            job.remote,
        );
        push_per_doc(&mut self.combos.of_doc, combo);
        self.companies.entry(job.company_id).or_default().add(doc);
        self.places
            .insert(doc, job.places, job.remote, job.remote_regions, job.salary);
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
        self.canonical.remove(doc);
        self.counts.forget(doc);
        self.dead.add(doc);
        self.stepped_over.add(doc);
        if self.unordered.remove_checked(doc) {
            self.unordered_ranked
                .remove(&self.slots[doc as usize].rank());
        }
        true
    }

    /// Number of active jobs of one company, reposts not counted.
    pub fn active_jobs_of(&self, company: CompanyId) -> u64 {
        self.companies
            .get(&company)
            .map_or(0, |b| self.canonical_among(b))
    }

    /// Every company with at least one active job that is not a repost, with its count of
    /// them.
    pub fn companies_with_active_jobs(&self) -> impl Iterator<Item = (CompanyId, u64)> + '_ {
        self.companies.iter().filter_map(|(id, b)| {
            let n = self.canonical_among(b);
            (n > 0).then_some((*id, n))
        })
    }

    /// How many documents of a bitmap are live and not reposts: counted against the few
    /// dead ones and reposts rather than the many live ones.
    fn canonical_among(&self, docs: &Docs) -> u64 {
        if self.has_reposts() {
            docs.and_cardinality(&self.canonical)
        } else {
            self.live_among(docs)
        }
    }

    /// How many documents of a bitmap are live: counted against the few dead ones rather
    /// than the many live ones.
    pub(super) fn live_among(&self, docs: &Docs) -> u64 {
        if self.dead.is_empty() {
            docs.cardinality()
        } else {
            docs.cardinality() - docs.and_cardinality(&self.dead)
        }
    }

    /// Whether any live document is a repost.
    pub(super) fn has_reposts(&self) -> bool {
        self.canonical.cardinality() != self.live.cardinality()
    }

    /// Active jobs that may be copies of the probe's job ([`is_repost`](super::is_repost)): of
    /// its company and role, posted within the window, with a post whose signature is close to
    /// its own; never that job itself. Decide each with [`is_repost`](super::is_repost): a
    /// few are not.
    pub fn repost_candidates(&self, probe: &RepostProbe) -> Vec<JobId> {
        let Some(company) = self.companies.get(&probe.company) else {
            return Vec::new();
        };
        // The company's jobs that hold the role's words (anywhere): an intersection of
        // postings, not a walk through the company's jobs.
        let mut docs = std::borrow::Cow::Borrowed(company);
        for word in &probe.role_words {
            match self.text.get(word.as_str()) {
                Some(posting) => docs = std::borrow::Cow::Owned(docs.as_ref() & posting),
                None => return Vec::new(),
            }
        }
        let key = reposts::short_key(probe.role);
        docs.to_vec()
            .into_iter()
            .filter(|&d| {
                let slot = &self.slots[d as usize];
                self.role_keys[d as usize] == key
                    && self.live.contains(d)
                    && probe.may_match(slot.id, slot.posted_nanos, &self.signatures[d as usize])
            })
            .map(|d| self.slots[d as usize].id)
            .collect()
    }

    /// The active jobs last seen strictly before `before`, reposts included.
    pub fn unseen_since(&self, before: chrono::DateTime<chrono::Utc>) -> Vec<JobId> {
        let before = nanos_clamped(before);
        self.live
            .iter()
            .filter(|&d| self.last_seen[d as usize] < before)
            .map(|d| self.slots[d as usize].id)
            .collect()
    }

    /// Moves an indexed job's `last_seen_at` (the crawler sent it again, unchanged); returns
    /// whether the job is indexed.
    pub fn touch(&mut self, id: JobId, last_seen: chrono::DateTime<chrono::Utc>) -> bool {
        match self.by_id.get(&self.slots, id) {
            Some(doc) => {
                self.last_seen[doc as usize] = nanos_clamped(last_seen);
                true
            }
            None => false,
        }
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
pub(in crate::query) fn push_per_doc<T>(docs: &mut Vec<T>, value: T) {
    if docs.len() == docs.capacity() {
        let len = docs.len();
        docs.reserve_exact(if len < 1 << 16 { len.max(64) } else { len / 16 });
    }
    docs.push(value);
}

/// Nanoseconds since the epoch, clamped to `i64` so instants outside 1678..2262 keep their
/// order against every indexed job.
pub(super) fn nanos_clamped(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_nanos_opt().unwrap_or(if t.timestamp() < 0 {
        i64::MIN
    } else {
        i64::MAX
    })
}

/// Calls `f` with every searchable word of a job and the field it was found in (a word of
/// the company's name is searchable by `company` as well as by `q`).
pub(super) fn for_each_job_word(job: &impl IndexedJob, mut f: impl FnMut(&str, Field)) {
    let job = job.fields();
    let mut buf = String::new();
    for (text, field) in [
        (job.company_name, Field::CompanyName),
        (job.role, Field::Role),
        (job.description, Field::Post),
    ] {
        for_each_word(text, &mut buf, |w| f(w, field));
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
mod tests;
