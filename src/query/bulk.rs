//! Loading many jobs at once: their words are gathered a part of the jobs at a time, on
//! another thread while this one numbers the part's documents, and each word's posting list
//! is then extended once per part.
//!
//! Adding one document to one posting list at a time touches a random place in memory for
//! every word of every job (the list's entry in a table of hundreds of thousands of words,
//! then its bitmap), and the bitmap's `add` searches the bitmap's last container on top: that
//! was most of the time of rebuilding an index. A part's words fit in cache, and a posting
//! list's new documents are appended in one sorted run. Gathering them needs only the jobs,
//! not the index, and is most of what is left, so it runs beside the numbering.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap as HashMap};

use super::bitmap::Docs;
use super::index::{for_each_job_word, JobIndex};
use crate::domain::Job;

/// Jobs whose words are gathered before they are added to the posting lists. Larger parts
/// extend each list fewer times; smaller ones keep the part's words in cache.
const PART_JOBS: usize = 8_192;

/// Below this many jobs, a part's words are gathered on the calling thread: starting another
/// would cost more than it saves.
const GATHER_APART_FROM: usize = 512;

/// Each word of a part of the jobs, with the positions in the part of the active jobs it
/// occurs in, ascending.
#[derive(Default)]
struct PartWords {
    text: WordPositions,
    company_words: WordPositions,
}

impl PartWords {
    fn gather(part: &[&Job]) -> Self {
        let mut gathered = Self::default();
        let (text, company_words) = (&mut gathered.text, &mut gathered.company_words);
        for (position, job) in part.iter().enumerate() {
            // Only active jobs are given a document.
            if !job.is_active() {
                continue;
            }
            let position = position as u32;
            for_each_job_word(job, |word, of_company| {
                if of_company {
                    company_words.add(word, position);
                }
                text.add(word, position);
            });
        }
        gathered
    }

    /// Adds the words to the index's posting lists, each position turned into the document
    /// its job was given (`docs`, ascending where present).
    fn add_to(self, index: &mut JobIndex, docs: &[Option<u32>]) {
        extend_postings(&mut index.text, self.text, docs);
        extend_postings(&mut index.company_words, self.company_words, docs);
    }
}

/// Words with the positions they occur at: a hash table probed once for every word of every
/// job, which is most of gathering.
///
/// Each probe that reached into the heap waited on memory: for the word to compare and for
/// the last position (a word repeated within a job is kept once). So an entry also holds its
/// word's length and first eight bytes, which settle most comparisons, and its last position.
#[derive(Default)]
struct WordPositions {
    words: HashTable<WordEntry>,
    hasher: FxBuildHasher,
}

struct WordEntry {
    head: u64,
    len: usize,
    last: u32,
    word: Box<str>,
    positions: Vec<u32>,
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
    fn add(&mut self, word: &str, position: u32) {
        let Self { words, hasher } = self;
        let hash = hasher.hash_one(word);
        let head = head_of(word);
        match words.find_mut(hash, |entry| entry.is(word, head)) {
            // A word seen again in the same job.
            Some(entry) if entry.last == position => {}
            Some(entry) => {
                entry.positions.push(position);
                entry.last = position;
            }
            None => {
                let entry = WordEntry {
                    head,
                    len: word.len(),
                    last: position,
                    word: word.into(),
                    positions: vec![position],
                };
                words.insert_unique(hash, entry, |e| hasher.hash_one(&*e.word));
            }
        }
    }
}

fn extend_postings(
    postings: &mut HashMap<Box<str>, Docs>,
    words: WordPositions,
    docs: &[Option<u32>],
) {
    let mut numbered = Vec::new();
    for WordEntry {
        word, positions, ..
    } in words.words
    {
        numbered.clear();
        numbered.extend(positions.iter().filter_map(|&p| docs[p as usize]));
        if numbered.is_empty() {
            continue;
        }
        // Every document of the part was numbered after every one already indexed, so they
        // append to the last container.
        postings.entry(word).or_default().add_many(&numbered);
    }
}

impl JobIndex {
    /// Adds or replaces every job, as one [`JobIndex::upsert`] each would but without
    /// compacting, a part at a time.
    ///
    /// A part's words are gathered on another thread while this one numbers its documents,
    /// and the next part's while this one adds them to the posting lists.
    pub(super) fn insert_in_parts<'a>(&mut self, jobs: impl IntoIterator<Item = &'a Job>) {
        let jobs: Vec<&Job> = jobs.into_iter().collect();
        if jobs.len() < GATHER_APART_FROM {
            self.make_room_for(jobs.len());
            let docs = self.number_all(&jobs);
            return PartWords::gather(&jobs).add_to(self, &docs);
        }
        std::thread::scope(|scope| {
            let mut parts = jobs.chunks(PART_JOBS);
            let mut next = parts
                .next()
                .map(|part| (part, scope.spawn(|| PartWords::gather(part))));
            while let Some((part, gathering)) = next {
                self.make_room_for(part.len());
                let docs = self.number_all(part);
                next = parts
                    .next()
                    .map(|part| (part, scope.spawn(|| PartWords::gather(part))));
                match gathering.join() {
                    Ok(words) => words.add_to(self, &docs),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
    }

    /// Running out of document numbers renumbers the index: not in the middle of a part,
    /// whose documents must keep the numbers they are given.
    fn make_room_for(&mut self, jobs: usize) {
        if self.slots.len() + jobs >= u32::MAX as usize {
            self.compact();
        }
    }

    /// Indexes each job's attributes, in order; the document each active one was given.
    fn number_all(&mut self, part: &[&Job]) -> Vec<Option<u32>> {
        part.iter().map(|job| self.insert_attributes(job)).collect()
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
            table.add(word, position as u32);
            table.add(word, position as u32);
        }
        table.add("ab", 20);
        table.add("internationalization", 21);
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
