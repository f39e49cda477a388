//! Loading many jobs at once: a part of the jobs at a time is read (decoded, when the jobs
//! come as stored JSON) and its words gathered on another thread, while this one numbers the
//! documents of the part before, and each word's posting list is then extended once per part.
//!
//! Adding one document to one posting list at a time touches a random place in memory for
//! every word of every job (the list's entry in a table of hundreds of thousands of words,
//! then its bitmap), and the bitmap's `add` searches the bitmap's last container on top: that
//! was most of the time of rebuilding an index. A part's words fit in cache, and a posting
//! list's new documents are appended in one sorted run. Reading the jobs and gathering their
//! words needs only the jobs, not the index, and is most of what is left, so it runs beside
//! the numbering.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap as HashMap};

use super::bitmap::Docs;
use super::bm25::{Field, Planes, WordCounts};
use super::index::{for_each_job_word, JobIndex};
use super::indexed::IndexedJob;
use crate::domain::Job;

/// Jobs whose words are gathered before they are added to the posting lists. Larger parts
/// extend each list fewer times; smaller ones keep the part's words in cache.
const PART_JOBS: usize = 8_192;

/// Below this many jobs, a part's words are gathered on the calling thread: starting another
/// would cost more than it saves.
const GATHER_APART_FROM: usize = 512;

/// Each word of a part of the jobs, with the positions in the part of the active jobs it
/// occurs in, ascending, and how many words each job has (0 for one that is not active).
#[derive(Default)]
struct PartWords {
    text: WordPositions,
    company_words: WordPositions,
    lengths: Vec<u32>,
}

impl PartWords {
    fn gather(part: &[impl IndexedJob]) -> Self {
        let mut gathered = Self::default();
        let (text, company_words) = (&mut gathered.text, &mut gathered.company_words);
        gathered.lengths.reserve_exact(part.len());
        for (position, job) in part.iter().enumerate() {
            // Only active jobs are given a document.
            if !job.fields().active {
                gathered.lengths.push(0);
                continue;
            }
            let position = position as u32;
            let mut length = 0u32;
            for_each_job_word(job, |word, field| {
                if field == Field::CompanyName {
                    company_words.add(word, position, 1);
                }
                length = length.saturating_add(field.weight());
                text.add(word, position, field.weight());
            });
            gathered.lengths.push(length);
        }
        gathered
    }

    /// Adds the words to the index's posting lists, each position turned into the document
    /// its job was given (`docs`, ascending where present).
    fn add_to(self, index: &mut JobIndex, docs: &[Option<u32>]) {
        extend_postings(&mut index.text, self.text, docs, Some(&mut index.counts));
        extend_postings(&mut index.company_words, self.company_words, docs, None);
    }
}

/// Words with the positions they occur at: a hash table probed once for every word of every
/// job, which is most of gathering.
///
/// Each probe that reached into the heap waited on memory: for the word to compare and for
/// the last position (a word repeated within a job is kept once, and counted). So an entry
/// also holds its word's length and first eight bytes, which settle most comparisons, and
/// its last position with the count there.
#[derive(Default)]
struct WordPositions {
    words: HashTable<WordEntry>,
    hasher: FxBuildHasher,
}

struct WordEntry {
    head: u64,
    len: usize,
    last: u32,
    /// How many times the word counts at `last` so far.
    count: u32,
    word: Box<str>,
    positions: Vec<u32>,
    /// The positions before `last` where the word counts more than once, with the counts.
    repeated: Vec<(u32, u32)>,
}

impl WordEntry {
    fn is(&self, word: &str, head: u64) -> bool {
        self.head == head
            && self.len == word.len()
            && (word.len() <= 8 || self.word.as_bytes()[8..] == word.as_bytes()[8..])
    }
}

/// A word's first eight bytes, zero-padded. Built in a register: copying a short word into
/// a buffer and reading it back as one number stalled on the copy.
fn head_of(word: &str) -> u64 {
    match word.as_bytes().first_chunk::<8>() {
        Some(head) => u64::from_le_bytes(*head),
        None => word
            .bytes()
            .rev()
            .fold(0, |head, byte| (head << 8) | u64::from(byte)),
    }
}

impl WordPositions {
    /// Adds an occurrence of `word` at `position` that counts `weight` times.
    fn add(&mut self, word: &str, position: u32, weight: u32) {
        let Self { words, hasher } = self;
        let hash = hasher.hash_one(word);
        let head = head_of(word);
        match words.find_mut(hash, |entry| entry.is(word, head)) {
            // A word seen again in the same job.
            Some(entry) if entry.last == position => {
                entry.count = entry.count.saturating_add(weight);
            }
            Some(entry) => {
                if entry.count > 1 {
                    entry.repeated.push((entry.last, entry.count));
                }
                entry.positions.push(position);
                entry.last = position;
                entry.count = weight;
            }
            None => {
                let entry = WordEntry {
                    head,
                    len: word.len(),
                    last: position,
                    count: weight,
                    word: word.into(),
                    positions: vec![position],
                    repeated: Vec::new(),
                };
                words.insert_unique(hash, entry, |e| hasher.hash_one(&*e.word));
            }
        }
    }
}

/// Adds the words' positions, as documents, to `postings`, and the counts above one to
/// `counts` where given.
fn extend_postings(
    postings: &mut HashMap<Box<str>, Docs>,
    words: WordPositions,
    docs: &[Option<u32>],
    mut counts: Option<&mut WordCounts>,
) {
    let mut numbered = Vec::new();
    let mut repeated_docs = Vec::new();
    let mut planes = Planes::default();
    for WordEntry {
        word,
        positions,
        mut repeated,
        last,
        count,
        ..
    } in words.words
    {
        numbered.clear();
        numbered.extend(positions.iter().filter_map(|&p| docs[p as usize]));
        if numbered.is_empty() {
            continue;
        }
        if let Some(counts) = counts.as_deref_mut() {
            if count > 1 {
                repeated.push((last, count));
            }
            repeated_docs.clear();
            repeated_docs.extend(
                repeated
                    .iter()
                    .filter_map(|&(p, count)| Some((docs[p as usize]?, count))),
            );
            counts.add_repeats(&word, &repeated_docs, &mut planes);
        }
        // Every document of the part was numbered after every one already indexed, so they
        // append to the last container.
        postings.entry(word).or_default().add_many(&numbered);
    }
}

/// Jobs made ready to add to an index: their words gathered, which is most of indexing a job
/// and needs no index. Made by [`JobIndex::prepare`] wherever it suits (on another thread,
/// while the jobs are written to storage, say), then added by [`JobIndex::add_prepared`] in
/// a fraction of the time [`JobIndex::upsert`] takes for each: a writer holds a lock on a
/// live index that much shorter.
pub struct PreparedJobs {
    jobs: Vec<Job>,
    words: PartWords,
}

impl PreparedJobs {
    /// How many jobs it holds.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

impl std::fmt::Debug for PreparedJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedJobs")
            .field("jobs", &self.jobs.len())
            .finish_non_exhaustive()
    }
}

impl JobIndex {
    /// Gathers the words of `jobs`, for [`JobIndex::add_prepared`]. Takes no index: a
    /// writer calls it before it locks one.
    pub fn prepare(jobs: Vec<Job>) -> PreparedJobs {
        let words = PartWords::gather(&jobs);
        PreparedJobs { jobs, words }
    }

    /// Adds or replaces the jobs [`JobIndex::prepare`] made ready, in their order, as one
    /// [`JobIndex::upsert`] each would (a job that is not active is removed), and then
    /// compacts if due; returns the jobs.
    pub fn add_prepared(&mut self, prepared: PreparedJobs) -> Vec<Job> {
        let PreparedJobs { jobs, words } = prepared;
        self.add_part(&jobs, words);
        self.compact_if_due();
        jobs
    }

    /// Adds or replaces every job, as one [`JobIndex::upsert`] each would but without
    /// compacting, a part at a time.
    pub(super) fn insert_in_parts<'a>(&mut self, jobs: impl IntoIterator<Item = &'a Job>) {
        let jobs: Vec<&Job> = jobs.into_iter().collect();
        let read: Result<(), std::convert::Infallible> =
            self.insert_read_in_parts(&jobs, |_, job| Ok(*job));
        if let Err(never) = read {
            match never {}
        }
    }

    /// Adds or replaces the job `read` makes of each item (given its position in `items`), as
    /// [`JobIndex::insert_in_parts`] does; stops at the first item it cannot read, with the
    /// jobs of the parts before it added.
    ///
    /// A part's jobs are read and their words gathered on another thread, while this one
    /// numbers the documents of the part before and adds its words to the posting lists. So
    /// reading (decoding stored JSON, say) takes no time of its own on two cores or more.
    pub(crate) fn insert_read_in_parts<'a, T, J, E>(
        &mut self,
        items: &'a [T],
        read: impl Fn(usize, &'a T) -> Result<J, E> + Sync,
    ) -> Result<(), E>
    where
        T: Sync,
        J: IndexedJob + Send,
        E: Send,
    {
        let read_part = |start: usize, part: &'a [T]| -> Result<(Vec<J>, PartWords), E> {
            let jobs = (start..)
                .zip(part)
                .map(|(position, item)| read(position, item))
                .collect::<Result<Vec<J>, E>>()?;
            let words = PartWords::gather(&jobs);
            Ok((jobs, words))
        };
        let outermost = self.ranks_to_add.is_none();
        self.start_bulk_load();
        let loaded = if items.len() < GATHER_APART_FROM {
            read_part(0, items).map(|(jobs, words)| self.add_part(&jobs, words))
        } else {
            std::thread::scope(|scope| {
                let read_part = &read_part;
                let mut parts = (0..).step_by(PART_JOBS).zip(items.chunks(PART_JOBS));
                let mut next = parts
                    .next()
                    .map(|(start, part)| scope.spawn(move || read_part(start, part)));
                while let Some(reading) = next {
                    next = parts
                        .next()
                        .map(|(start, part)| scope.spawn(move || read_part(start, part)));
                    match reading.join() {
                        Ok(read) => {
                            let (jobs, words) = read?;
                            self.add_part(&jobs, words);
                        }
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                }
                Ok(())
            })
        };
        if outermost {
            self.finish_bulk_load();
        }
        loaded
    }

    /// Until [`JobIndex::finish_bulk_load`], the out-of-order documents added are ranked
    /// all at once at its end, not one at a time; for a caller that loads many batches.
    /// The index must not be searched meanwhile.
    pub fn start_bulk_load(&mut self) {
        self.ranks_to_add.get_or_insert_default();
    }

    /// Ranks the out-of-order documents added since [`JobIndex::start_bulk_load`]; the index
    /// answers searches again.
    pub fn finish_bulk_load(&mut self) {
        self.rank_pending();
        self.ranks_to_add = None;
        // The vectors grew by doubling meanwhile (see `make_room_for`).
        self.slots.shrink_to_fit();
        self.confidences.shrink_to_fit();
        self.combos.of_doc.shrink_to_fit();
        self.ordered.shrink_to_fit();
        self.counts.lengths.shrink_to_fit();
        self.places.point_ends.shrink_to_fit();
        self.places.pay.shrink_to_fit();
        self.places.place_points.shrink_to_fit();
    }

    /// Adds or replaces one job, as a part of its own, without compacting.
    pub(super) fn insert_one(&mut self, job: &Job) {
        let words = PartWords::gather(std::slice::from_ref(job));
        self.add_part(std::slice::from_ref(job), words);
    }

    /// Numbers a part's documents in order, then adds its words under those numbers.
    fn add_part(&mut self, jobs: &[impl IndexedJob], words: PartWords) {
        self.make_room_for(jobs.len());
        let docs: Vec<Option<u32>> = jobs
            .iter()
            .zip(&words.lengths)
            .map(|(job, &length)| self.insert_attributes(job, length))
            .collect();
        words.add_to(self, &docs);
    }

    /// Running out of document numbers renumbers the index: not in the middle of a part,
    /// whose documents must keep the numbers they are given.
    fn make_room_for(&mut self, jobs: usize) {
        if self.slots.len() + jobs >= u32::MAX as usize {
            self.compact();
        }
        // A bulk load grows the vectors kept per document by doubling, not by the sixteenths
        // `push_per_doc` adds: a million documents moved them some forty times, each time into
        // fresh pages. The load trims them when it ends.
        if self.ranks_to_add.is_some() {
            let room = self.slots.len().max(jobs);
            for_room(&mut self.slots, jobs, room);
            for_room(&mut self.confidences, jobs, room);
            for_room(&mut self.combos.of_doc, jobs, room);
            for_room(&mut self.ordered, jobs, room);
            for_room(&mut self.counts.lengths, jobs, room);
            for_room(&mut self.places.point_ends, jobs, room);
            for_room(&mut self.places.pay, jobs, room);
        }
    }
}

/// Reserves `room` more when `docs` has no room for `coming` more.
fn for_room<T>(docs: &mut Vec<T>, coming: usize, room: usize) {
    if docs.capacity() - docs.len() < coming {
        docs.reserve_exact(room);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::domain::JobStatus;
    use crate::query::{text::words, JobFilter};

    /// Words are told apart by all their bytes, not only the first eight the table keeps
    /// beside each entry, and a word repeated within a job is kept once.
    #[test]
    fn words_that_share_their_first_eight_bytes_are_kept_apart() {
        let mut words: Vec<String> = [
            "internationalisation",
            "internationalization",
            "internat",
            "internati",
            "abcdefgh",
            "abcdefghi",
            "abcdefghj",
            "ab",
            "ba",
            "b",
        ]
        .map(String::from)
        .to_vec();
        // Enough words of one length and head that many meet in the table's probes.
        words.extend((0..4_000).map(|n| format!("abcdefgh{n:04}")));
        let mut table = WordPositions::default();
        for (position, word) in words.iter().enumerate() {
            table.add(word, position as u32, 1);
            table.add(word, position as u32, 1);
        }
        table.add("ab", 20, 1);
        table.add("internationalization", 21, 1);
        let mut found: Vec<(String, Vec<u32>)> = table
            .words
            .into_iter()
            .map(|e| (e.word.into(), e.positions))
            .collect();
        found.sort();
        let mut expected: Vec<(String, Vec<u32>)> = words
            .iter()
            .enumerate()
            .map(|(position, word)| (word.clone(), vec![position as u32]))
            .collect();
        expected[1].1.push(21);
        expected[7].1.push(20);
        expected.sort();
        assert_eq!(found, expected);
    }

    /// Loading in parts answers like adding one job at a time: over several parts, with
    /// jobs replaced within and across parts, closed ones, and a word repeated in a job.
    #[test]
    fn loading_in_parts_indexes_like_one_job_at_a_time() {
        let mut jobs = Dataset::generate(3, 40, PART_JOBS * 2 + 500).jobs;
        let replaced: Vec<Job> = jobs
            .iter()
            .step_by(7)
            .map(|j| {
                let mut j = j.clone();
                j.role = format!("Quokka quokka {}", j.role);
                j.status = JobStatus::Active;
                j
            })
            .collect();
        let closed: Vec<Job> = jobs
            .iter()
            .step_by(11)
            .map(|j| Job {
                status: JobStatus::Closed,
                ..j.clone()
            })
            .collect();
        jobs.extend(replaced);
        jobs.extend(closed);

        let mut in_parts = JobIndex::new();
        in_parts.set_auto_compact(false);
        in_parts.insert_in_parts(&jobs);
        let mut one_by_one = JobIndex::new();
        one_by_one.set_auto_compact(false);
        for job in &jobs {
            one_by_one.upsert(job);
        }

        let mut vocabulary: Vec<String> = jobs
            .iter()
            .step_by(97)
            .flat_map(|j| words(&format!("{} {}", j.role, j.company_name)).collect::<Vec<_>>())
            .collect();
        vocabulary.sort();
        vocabulary.dedup();
        assert!(vocabulary.contains(&"quokka".to_owned()));
        let mut filters = vec![JobFilter::default()];
        for word in &vocabulary {
            filters.push(JobFilter::default().with_q(word));
            filters.push(JobFilter::default().with_company(word));
        }
        for filter in &filters {
            let (a, b) = (
                in_parts.search_top(filter, 50),
                one_by_one.search_top(filter, 50),
            );
            assert_eq!(a, b, "{filter:?}");
        }
        assert_eq!(in_parts.len(), one_by_one.len());
        // The out-of-order documents, ranked at the end of the load, rank as one by one.
        assert!(in_parts.ranks_to_add.is_none());
        assert!(in_parts.unordered_ranked.len() > 1_000);
        assert_eq!(in_parts.unordered_ranked, one_by_one.unordered_ranked);
        let mut last_version = std::collections::HashMap::new();
        for job in &jobs {
            last_version.insert(job.id, job);
        }
        let quokkas = last_version
            .values()
            .filter(|j| j.is_active() && j.role.starts_with("Quokka"))
            .count();
        assert!(quokkas > 1_000);
        let found = in_parts.search_top(&JobFilter::default().with_q("quokka"), 0);
        assert_eq!(found.total, quokkas as u64);
    }
}
