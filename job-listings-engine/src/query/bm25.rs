//! What relevance order needs beyond the postings: how often each word occurs in each
//! document (its term frequency) and each document's length, and the BM25 formula over them.
//!
//! A document's words, for BM25, are its role's words twice, then its company name's and its
//! post's: the words `q` matches, the role counted double. A word occurs once in most of the
//! documents that hold it, and then its posting says all there is to know; a count is kept
//! only where it is more, as bits: document `d` is in the `k`-th of a word's `repeats` when bit
//! `k` of (count − 1) is set. A repeated word costs its document a bit or two a plane where it
//! is common (the planes are dense) and two bytes a set bit where it is rare.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

use super::bitmap::{self, Docs};

/// BM25's term-frequency saturation.
pub(crate) const K1: f64 = 1.2;
/// BM25's length normalisation.
pub(crate) const B: f64 = 0.75;

/// Term frequencies above one and document lengths; see the [module docs](self).
#[derive(Clone, Default, Serialize, Deserialize)]
pub(crate) struct WordCounts {
    /// For each word repeated in some document, the bits of (count − 1), lowest first.
    #[serde(with = "super::bitmap::portable::map_of_lists")]
    pub(crate) repeats: HashMap<Box<str>, Vec<Docs>>,
    /// Each document's length: how many words BM25 counts in it.
    pub(crate) lengths: Vec<u32>,
    /// The documents of each length, dead ones among them until the next compaction.
    #[serde(skip)]
    pub(crate) by_length: BTreeMap<u32, Docs>,
    /// The sum of the live documents' lengths.
    #[serde(skip)]
    pub(crate) live_length: u64,
}

/// Where a word of a job was found: what it weighs in the job's term frequencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    /// The company's name, also searched by `company`.
    CompanyName,
    /// The role, counted twice.
    Role,
    /// The post.
    Post,
}

impl Field {
    /// How many times a word of this field counts.
    pub(crate) fn weight(self) -> u32 {
        match self {
            Field::Role => 2,
            Field::CompanyName | Field::Post => 1,
        }
    }
}

impl WordCounts {
    /// Records a new document's length. Documents are numbered in turn: `doc` is the next.
    pub(crate) fn push_length(&mut self, doc: u32, length: u32) {
        debug_assert_eq!(doc as usize, self.lengths.len());
        super::index::push_per_doc(&mut self.lengths, length);
        self.by_length.entry(length).or_default().add(doc);
        self.live_length += u64::from(length);
    }

    /// A document left the live ones.
    pub(crate) fn forget(&mut self, doc: u32) {
        self.live_length -= u64::from(self.lengths[doc as usize]);
    }

    /// Adds `docs` (ascending) with their counts of `word`, each more than one.
    pub(crate) fn add_repeats(&mut self, word: &str, repeated: &[(u32, u32)], planes: &mut Planes) {
        if repeated.is_empty() {
            return;
        }
        planes.fill(repeated);
        let bitmaps = match self.repeats.get_mut(word) {
            Some(bitmaps) => bitmaps,
            None => self.repeats.entry(word.into()).or_default(),
        };
        for (k, docs) in planes.docs.iter().enumerate() {
            if docs.is_empty() {
                continue;
            }
            if bitmaps.len() <= k {
                bitmaps.resize_with(k + 1, Docs::new);
            }
            bitmaps[k].add_many(docs);
        }
    }

    /// Builds what is derived from the lengths: the documents by length, and the live
    /// documents' total.
    pub(crate) fn derive(&mut self, live: &Docs) {
        let mut by_length: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (doc, &length) in self.lengths.iter().enumerate() {
            by_length.entry(length).or_default().push(doc as u32);
        }
        self.by_length = by_length
            .into_iter()
            .map(|(length, docs)| (length, bitmap::from_sorted(&docs)))
            .collect();
        self.live_length = live
            .iter()
            .map(|d| u64::from(self.lengths[d as usize]))
            .sum();
    }

    /// The counts under new document numbers, given each live document's old number in
    /// new order; `remap` renumbers a bitmap.
    pub(crate) fn remapped(
        &self,
        old_of_new: impl Iterator<Item = u32>,
        live: &Docs,
        remap: impl Fn(&Docs) -> Docs + Sync,
    ) -> Self {
        let lengths: Vec<u32> = old_of_new.map(|d| self.lengths[d as usize]).collect();
        let repeats = self
            .repeats
            .iter()
            .filter_map(|(word, planes)| {
                let planes: Vec<Docs> = planes.iter().map(&remap).collect();
                let last = planes.iter().rposition(|p| !p.is_empty())?;
                Some((word.clone(), planes[..=last].to_vec()))
            })
            .collect();
        let mut counts = Self {
            repeats,
            lengths,
            ..Self::default()
        };
        counts.derive(live);
        counts
    }

    /// About how many bytes of heap it holds.
    pub(crate) fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let repeats: usize = self
            .repeats
            .iter()
            .map(|(word, planes)| {
                word.len()
                    + planes.capacity() * size_of::<Docs>()
                    + planes.iter().map(bitmap::heap_bytes).sum::<usize>()
            })
            .sum::<usize>()
            + self.repeats.capacity() * (size_of::<(Box<str>, Vec<Docs>)>() + 1);
        let by_length: usize = self
            .by_length
            .values()
            .map(|docs| bitmap::heap_bytes(docs) + size_of::<(u32, Docs)>() * 4 / 3)
            .sum();
        (repeats + self.lengths.capacity() * size_of::<u32>() + by_length) as u64
    }

    /// Whether every document number it holds is below `docs`.
    pub(crate) fn fits(&self, docs: usize) -> bool {
        let max_doc = |b: &Docs| b.maximum().map_or(0, |d| d as usize + 1);
        self.lengths.len() == docs && self.repeats.values().flatten().all(|b| max_doc(b) <= docs)
    }
}

/// Scratch room for the documents of each bit plane of one word's counts.
#[derive(Default)]
pub(crate) struct Planes {
    docs: Vec<Vec<u32>>,
}

impl Planes {
    fn fill(&mut self, repeated: &[(u32, u32)]) {
        self.docs.iter_mut().for_each(Vec::clear);
        for &(doc, count) in repeated {
            let mut extra = count - 1;
            while extra != 0 {
                let k = extra.trailing_zeros() as usize;
                if self.docs.len() <= k {
                    self.docs.resize_with(k + 1, Vec::new);
                }
                self.docs[k].push(doc);
                extra &= extra - 1;
            }
        }
    }
}

/// The figures one search's scores are computed from: each word's weight (its inverse
/// document frequency) and the collection's mean length.
pub(crate) struct Scorer {
    idfs: Vec<f64>,
    mean_length: f64,
}

/// BM25's inverse document frequency of a word held by `holding` of `live` documents:
/// ln(1 + (N − n + 0.5)/(n + 0.5)).
pub(crate) fn idf(holding: u64, live: u64) -> f64 {
    let (n, n_docs) = (holding as f64, live as f64);
    (1.0 + (n_docs - n + 0.5) / (n + 0.5)).ln()
}

impl Scorer {
    /// For words held by `holding[i]` live documents each, among `live` documents whose
    /// lengths add up to `total_length`.
    pub(crate) fn new(holding: &[u64], live: u64, total_length: u64) -> Self {
        Self {
            idfs: holding.iter().map(|&n| idf(n, live)).collect(),
            mean_length: total_length as f64 / (live as f64).max(1.0),
        }
    }

    /// The BM25 score of a document of `length` words holding the words `counts[i]` times
    /// each, summed in the words' order.
    pub(crate) fn score(&self, counts: &[u32], length: u32) -> f64 {
        let norm = K1 * (1.0 - B + B * f64::from(length) / self.mean_length);
        self.idfs
            .iter()
            .zip(counts)
            .map(|(idf, &tf)| {
                let tf = f64::from(tf);
                idf * tf * (K1 + 1.0) / (tf + norm)
            })
            .sum()
    }
}
