//! An index saved as bytes and loaded back, so a program restarts without indexing every job
//! again: loading is reading bitmaps, where indexing is splitting and posting every word.
//!
//! The bytes name the version of this crate that wrote them, and of its rule for splitting
//! text into words (a new version may split words or number documents differently, so its
//! index must be rebuilt), and end with a CRC32 of the rest, so a torn or damaged file is
//! refused rather than answering wrongly.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

use super::bitmap::{portable, Docs};
use super::bm25::WordCounts;
use super::confidence::ConfidenceBitmaps;
use super::ids::DocsById;
use super::index::facets::Combos;
use super::index::{JobIndex, Slot};
use super::places::PlaceIndex;
use super::reposts::Signature;
use crate::domain::CompanyId;

/// The version a snapshot is written with and must have to load: the crate's, that of its
/// rule for splitting words, which changes when the rule does (`words-2` composes text
/// before splitting it), and that of its layout (`combos-1` adds each document's facet
/// combination, `reposts-1` which documents are reposts, when each was last seen and what
/// may be copies of it), whether or not a release follows.
const SNAPSHOT_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+words-2+combos-1+places-2+counts-1+reposts-1"
);

/// Why saved bytes could not be loaded as an index; rebuild it from the jobs instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Another version of this crate wrote it.
    #[error("the index snapshot was written by job-listings {found}, not {SNAPSHOT_VERSION}")]
    OtherVersion {
        /// The version that wrote it.
        found: String,
    },
    /// The bytes are cut short, altered or not a snapshot at all.
    #[error("the index snapshot is damaged: {0}")]
    Damaged(String),
}

/// Every part of an index that is not derived from the others, borrowed to be written.
#[derive(Serialize)]
struct SnapshotRef<'a> {
    version: &'a str,
    slots: &'a [Slot],
    confidences: &'a [f64],
    #[serde(with = "portable")]
    live: &'a Docs,
    #[serde(with = "portable")]
    unordered: &'a Docs,
    ordered: &'a [u32],
    #[serde(with = "portable::map")]
    domains: &'a HashMap<String, Docs>,
    #[serde(with = "portable::map")]
    seniority: &'a HashMap<String, Docs>,
    #[serde(with = "portable")]
    remote: &'a Docs,
    #[serde(with = "portable::map")]
    text: &'a HashMap<Box<str>, Docs>,
    #[serde(with = "portable::map")]
    company_words: &'a HashMap<Box<str>, Docs>,
    #[serde(with = "portable::map")]
    companies: &'a HashMap<CompanyId, Docs>,
    confidence: &'a ConfidenceBitmaps,
    combos: &'a Combos,
    places: &'a PlaceIndex,
    counts: &'a WordCounts,
    #[serde(with = "portable")]
    canonical: &'a Docs,
    last_seen: &'a [i64],
    role_keys: &'a [u32],
    signatures: &'a [Signature],
}

/// The same, owned, as it is read back.
#[derive(Deserialize)]
struct Snapshot {
    /// Checked through [`Header`] before this is decoded.
    _version: String,
    slots: Vec<Slot>,
    confidences: Vec<f64>,
    #[serde(with = "portable")]
    live: Docs,
    #[serde(with = "portable")]
    unordered: Docs,
    ordered: Vec<u32>,
    #[serde(with = "portable::map")]
    domains: HashMap<String, Docs>,
    #[serde(with = "portable::map")]
    seniority: HashMap<String, Docs>,
    #[serde(with = "portable")]
    remote: Docs,
    #[serde(with = "portable::map")]
    text: HashMap<Box<str>, Docs>,
    #[serde(with = "portable::map")]
    company_words: HashMap<Box<str>, Docs>,
    #[serde(with = "portable::map")]
    companies: HashMap<CompanyId, Docs>,
    confidence: ConfidenceBitmaps,
    combos: Combos,
    places: PlaceIndex,
    counts: WordCounts,
    #[serde(with = "portable")]
    canonical: Docs,
    last_seen: Vec<i64>,
    role_keys: Vec<u32>,
    signatures: Vec<Signature>,
}

/// Just the version, read first so that another version's layout is never decoded.
#[derive(Deserialize)]
struct Header {
    version: String,
}

impl JobIndex {
    /// The index as bytes, for [`JobIndex::from_snapshot`]; about the size of the index in
    /// memory. Whether it compacts itself is not saved (it is the loader's choice).
    pub fn to_snapshot(&self) -> Vec<u8> {
        let parts = SnapshotRef {
            version: SNAPSHOT_VERSION,
            slots: &self.slots,
            confidences: &self.confidences,
            live: &self.live,
            unordered: &self.unordered,
            ordered: &self.ordered,
            domains: &self.domains,
            seniority: &self.seniority,
            remote: &self.remote,
            text: &self.text,
            company_words: &self.company_words,
            companies: &self.companies,
            confidence: &self.confidence,
            combos: &self.combos,
            places: &self.places,
            counts: &self.counts,
            canonical: &self.canonical,
            last_seen: &self.last_seen,
            role_keys: &self.role_keys,
            signatures: &self.signatures,
        };
        // Into room for about all of it from the start: grown by doubling, the buffer was
        // copied again and again, each time into fresh pages. Serializing into a Vec fails
        // only on a length beyond `usize`.
        let room = Vec::with_capacity(usize::try_from(self.heap_bytes()).unwrap_or(0));
        let mut bytes = postcard::to_extend(&parts, room).unwrap_or_default();
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// Loads an index saved by [`JobIndex::to_snapshot`] (by the same version of this
    /// crate). It compacts itself, as a new index does.
    pub fn from_snapshot(bytes: &[u8]) -> Result<JobIndex, SnapshotError> {
        let damaged = |what: &str| SnapshotError::Damaged(what.to_owned());
        let Some((body, crc)) = bytes.split_last_chunk::<4>() else {
            return Err(damaged("shorter than its checksum"));
        };
        if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
            return Err(damaged("its checksum does not match"));
        }
        let header: Header = postcard::from_bytes(body).map_err(|e| damaged(&e.to_string()))?;
        if header.version != SNAPSHOT_VERSION {
            return Err(SnapshotError::OtherVersion {
                found: header.version,
            });
        }
        let s: Snapshot = postcard::from_bytes(body).map_err(|e| damaged(&e.to_string()))?;
        let docs = s.slots.len();
        let max_doc = |b: &Docs| b.maximum().map_or(0, |d| d as usize + 1);
        let bitmaps_fit = [&s.live, &s.unordered, &s.remote, &s.canonical]
            .into_iter()
            .chain(s.confidence.bitmaps())
            .chain(s.domains.values())
            .chain(s.seniority.values())
            .chain(s.text.values())
            .chain(s.company_words.values())
            .chain(s.companies.values())
            .all(|b| max_doc(b) <= docs);
        if s.confidences.len() != docs
            || s.last_seen.len() != docs
            || s.signatures.len() != docs
            || s.role_keys.len() != docs
            || !s.combos.fits(docs)
            || !s.places.fits(docs)
            || !s.counts.fits(docs)
            || !bitmaps_fit
            || s.ordered.iter().any(|&d| d as usize >= docs)
            || !s.ordered.is_sorted()
        {
            return Err(damaged("a document number is out of range"));
        }

        let mut by_id = DocsById::with_capacity(s.live.cardinality() as usize);
        for doc in s.live.iter() {
            by_id.insert(&s.slots, doc);
        }
        // Every numbered document that is not live is dead.
        let mut dead = Docs::from_range(0..docs as u32);
        dead -= &s.live;
        dead.remove_run_compression();
        let unordered_ranked: BTreeMap<_, _> = s
            .unordered
            .iter()
            .map(|d| (s.slots[d as usize].rank(), d))
            .collect();
        let mut counts = s.counts;
        counts.derive(&s.live);
        let mut places = s.places;
        places.derive();
        Ok(JobIndex {
            slots: s.slots,
            confidences: s.confidences,
            by_id,
            live: s.live,
            stepped_over: &dead | &s.unordered,
            dead,
            unordered: s.unordered,
            unordered_ranked,
            ranks_to_add: None,
            ordered: s.ordered,
            domains: s.domains,
            seniority: s.seniority,
            remote: s.remote,
            text: s.text,
            company_words: s.company_words,
            companies: s.companies,
            confidence: s.confidence,
            combos: s.combos,
            places,
            counts,
            canonical: s.canonical,
            last_seen: s.last_seen,
            role_keys: s.role_keys,
            signatures: s.signatures,
            auto_compact: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::query::JobFilter;

    fn index_with_every_kind_of_document() -> JobIndex {
        let mut jobs = Dataset::generate(5, 20, 3_000).jobs;
        // Reposts, and jobs seen at times of their own.
        for (n, job) in jobs.iter_mut().enumerate() {
            if n % 7 == 0 {
                job.repost_of = Some(job.id);
            }
            job.last_seen_at = Some(job.posted_at + chrono::Duration::hours(n as i64 % 50));
        }
        let mut index = JobIndex::new();
        index.set_auto_compact(false);
        index.extend(&jobs[..2_000]);
        index.compact();
        // Then some out of order and some dead.
        for job in jobs[2_000..].iter().rev() {
            index.upsert(job);
        }
        for job in jobs.iter().step_by(9) {
            index.remove(job.id);
        }
        index
    }

    #[test]
    fn a_loaded_snapshot_answers_like_the_index_it_was_taken_from() {
        let index = index_with_every_kind_of_document();
        assert!(!index.unordered.is_empty() && index.dead_docs() > 0);
        let loaded = JobIndex::from_snapshot(&index.to_snapshot()).unwrap();
        assert_eq!(loaded.len(), index.len());
        assert_eq!(loaded.unordered_ranked, index.unordered_ranked);
        let filters = [
            JobFilter::default(),
            JobFilter::default().with_q("rust"),
            JobFilter {
                remote_only: true,
                ..JobFilter::default()
            }
            .with_q("engineer"),
            JobFilter::default().reposts(crate::query::Reposts::Include),
            JobFilter::default().seen_after(
                index.slots[100..]
                    .iter()
                    .map(|s| chrono::DateTime::from_timestamp_nanos(s.posted_nanos))
                    .min(),
            ),
        ];
        for filter in &filters {
            for limit in [0, 20, 500] {
                assert_eq!(
                    loaded.search_top(filter, limit),
                    index.search_top(filter, limit)
                );
            }
        }
        let some = index.slots[10].id;
        assert_eq!(loaded.contains(some), index.contains(some));
        let a_job = Dataset::generate(5, 20, 3_000).jobs.remove(3);
        let probe = crate::query::RepostProbe::of(&a_job);
        assert_eq!(
            loaded.repost_candidates(&probe),
            index.repost_candidates(&probe)
        );
    }

    #[test]
    fn damaged_or_foreign_bytes_are_refused() {
        let bytes = index_with_every_kind_of_document().to_snapshot();
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 1;
        for bad in [&bytes[..bytes.len() - 1], &flipped[..], &[][..], b"nope"] {
            assert!(matches!(
                JobIndex::from_snapshot(bad),
                Err(SnapshotError::Damaged(_))
            ));
        }

        let mut other = postcard::to_stdvec(&("0.0.1-elsewhere", 1u8)).unwrap();
        let crc = crc32fast::hash(&other);
        other.extend_from_slice(&crc.to_le_bytes());
        let Err(SnapshotError::OtherVersion { found }) = JobIndex::from_snapshot(&other) else {
            panic!("another version's snapshot was not refused as such");
        };
        assert_eq!(found, "0.0.1-elsewhere");

        // The same crate version with the rule for words before it.
        let mut older_words = bytes[..bytes.len() - 4].to_vec();
        let version = env!("CARGO_PKG_VERSION");
        let mut earlier = postcard::to_stdvec(&version).unwrap();
        let written = postcard::to_stdvec(&SNAPSHOT_VERSION).unwrap();
        assert!(older_words.starts_with(&written));
        earlier.extend_from_slice(&older_words[written.len()..]);
        older_words = earlier;
        let crc = crc32fast::hash(&older_words);
        older_words.extend_from_slice(&crc.to_le_bytes());
        let Err(SnapshotError::OtherVersion { found }) = JobIndex::from_snapshot(&older_words)
        else {
            panic!("a snapshot of the earlier rule for words was not refused");
        };
        assert_eq!(found, version);
    }
}
