//! Loading many jobs at once: their words are gathered a chunk of documents at a time and
//! each word's posting list is then extended once per chunk.
//!
//! Adding one document to one posting list at a time touches a random place in memory for
//! every word of every job (the list's entry in a table of hundreds of thousands of words,
//! then its bitmap), and the bitmap's `add` searches the bitmap's last container on top: that
//! was most of the time of rebuilding an index. A chunk's words fit in cache, and a posting
//! list's new documents are appended in one sorted run.

use rustc_hash::FxHashMap as HashMap;

use super::bitmap::Docs;
use super::index::{for_each_job_word, JobIndex};
use crate::domain::Job;

/// Documents gathered before their words are added to the posting lists. Larger chunks
/// extend each list fewer times; smaller ones keep the chunk's words in cache.
const CHUNK_DOCS: usize = 8_192;

/// Each word of a chunk of documents, with the documents it occurs in, ascending.
#[derive(Default)]
struct ChunkPostings {
    text: HashMap<Box<str>, Vec<u32>>,
    company_words: HashMap<Box<str>, Vec<u32>>,
    docs: usize,
}

impl ChunkPostings {
    fn add(&mut self, job: &Job, doc: u32) {
        let (text, company_words) = (&mut self.text, &mut self.company_words);
        for_each_job_word(job, |word, of_company| {
            if of_company {
                add_doc(company_words, word, doc);
            }
            add_doc(text, word, doc);
        });
        self.docs += 1;
    }

    /// Adds the chunk to the index's posting lists and empties it.
    fn flush_into(&mut self, index: &mut JobIndex) {
        extend_postings(&mut index.text, &mut self.text);
        extend_postings(&mut index.company_words, &mut self.company_words);
        self.docs = 0;
    }
}

fn add_doc(words: &mut HashMap<Box<str>, Vec<u32>>, word: &str, doc: u32) {
    match words.get_mut(word) {
        // A word seen again in the same document.
        Some(docs) if docs.last() == Some(&doc) => {}
        Some(docs) => docs.push(doc),
        None => {
            words.insert(word.into(), vec![doc]);
        }
    }
}

fn extend_postings(
    postings: &mut HashMap<Box<str>, Docs>,
    chunk: &mut HashMap<Box<str>, Vec<u32>>,
) {
    for (word, docs) in chunk.drain() {
        // Every document of the chunk was numbered after every one already indexed, so they
        // append to the last container.
        postings.entry(word).or_default().add_many(&docs);
    }
}

impl JobIndex {
    /// Adds or replaces every job, as one [`JobIndex::upsert`] each would but without
    /// compacting, gathering words a chunk at a time.
    pub(super) fn insert_in_chunks<'a>(&mut self, jobs: impl IntoIterator<Item = &'a Job>) {
        let mut chunk = ChunkPostings::default();
        for job in jobs {
            // Running out of document numbers renumbers the index, and with it the
            // documents of the chunk: add them first.
            if self.slots.len() >= u32::MAX as usize {
                chunk.flush_into(self);
            }
            if let Some(doc) = self.insert_attributes(job) {
                chunk.add(job, doc);
                if chunk.docs == CHUNK_DOCS {
                    chunk.flush_into(self);
                }
            }
        }
        chunk.flush_into(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::domain::JobStatus;
    use crate::query::{text::words, JobFilter};

    /// Loading in chunks answers like adding one job at a time: over several chunks, with
    /// jobs replaced within and across chunks, closed ones, and a word repeated in a job.
    #[test]
    fn chunked_loading_indexes_like_one_job_at_a_time() {
        let mut jobs = Dataset::generate(3, 40, CHUNK_DOCS * 2 + 500).jobs;
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

        let mut chunked = JobIndex::new();
        chunked.set_auto_compact(false);
        chunked.insert_in_chunks(&jobs);
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
                chunked.search_top(filter, 50),
                one_by_one.search_top(filter, 50),
            );
            assert_eq!(a, b, "{filter:?}");
        }
        assert_eq!(chunked.len(), one_by_one.len());
        let mut last_version = std::collections::HashMap::new();
        for job in &jobs {
            last_version.insert(job.id, job);
        }
        let quokkas = last_version
            .values()
            .filter(|j| j.is_active() && j.role.starts_with("Quokka"))
            .count();
        assert!(quokkas > 1_000);
        let found = chunked.search_top(&JobFilter::default().with_q("quokka"), 0);
        assert_eq!(found.total, quokkas as u64);
    }
}
