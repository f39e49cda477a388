//! Renumbering an index in result order, which drops dead documents and puts out-of-order
//! ones back in place.

use std::hash::Hash;

use roaring::RoaringBitmap;
use rustc_hash::FxHashMap as HashMap;

use super::index::JobIndex;

/// Marks a document that has no new number (it is dead).
const GONE: u32 = u32::MAX;

impl JobIndex {
    /// Renumbers every document in result order: dead documents leave every bitmap and the
    /// out-of-order ones take their place, so searches are as fast as right after a bulk
    /// load. Takes time linear in the postings (about a second per million jobs).
    pub fn compact(&mut self) {
        *self = self.compacted();
    }

    /// A compacted copy ([`JobIndex::compact`]), built while `self` keeps answering searches.
    pub fn compacted(&self) -> JobIndex {
        let order = self.live_in_result_order();
        let n = order.len() as u32;
        let mut renumber = vec![GONE; self.slots.len()];
        let mut slots = Vec::with_capacity(order.len());
        // Result order runs from the highest number down.
        for (position, &doc) in order.iter().rev().enumerate() {
            renumber[doc as usize] = position as u32;
            slots.push(self.slots[doc as usize]);
        }
        let by_id = slots
            .iter()
            .enumerate()
            .map(|(doc, s)| (s.id, doc as u32))
            .collect();
        let mut live = RoaringBitmap::new();
        live.insert_range(0..n);
        let mut confidence = self.confidence.clone();
        for b in confidence.bitmaps_mut() {
            *b = remap(b, &renumber);
        }
        JobIndex {
            slots,
            by_id,
            live,
            unordered: RoaringBitmap::new(),
            ordered: (0..n).collect(),
            domains: remap_all(&self.domains, &renumber),
            seniority: remap_all(&self.seniority, &renumber),
            remote: remap(&self.remote, &renumber),
            text: remap_all(&self.text, &renumber),
            company_words: remap_all(&self.company_words, &renumber),
            companies: remap_all(&self.companies, &renumber),
            confidence,
            auto_compact: self.auto_compact,
        }
    }

    /// Every live document, first result first.
    fn live_in_result_order(&self) -> Vec<u32> {
        let rank = |d: &u32| self.slots[*d as usize].rank();
        let mut apart: Vec<u32> = self.unordered.iter().collect();
        apart.sort_unstable_by_key(rank);
        let numbered = self
            .ordered
            .iter()
            .rev()
            .copied()
            .filter(|&d| self.live.contains(d) && !self.unordered.contains(d));
        let mut merged = Vec::with_capacity(self.live.len() as usize);
        let mut apart = apart.into_iter().peekable();
        for doc in numbered {
            while let Some(&a) = apart.peek() {
                if rank(&a) < rank(&doc) {
                    merged.push(a);
                    apart.next();
                } else {
                    break;
                }
            }
            merged.push(doc);
        }
        merged.extend(apart);
        merged
    }
}

fn remap_all<K: Clone + Eq + Hash>(
    map: &HashMap<K, RoaringBitmap>,
    renumber: &[u32],
) -> HashMap<K, RoaringBitmap> {
    map.iter()
        .filter_map(|(k, b)| {
            let b = remap(b, renumber);
            (!b.is_empty()).then(|| (k.clone(), b))
        })
        .collect()
}

/// One bitmap under new numbers, without its dead documents.
fn remap(bitmap: &RoaringBitmap, renumber: &[u32]) -> RoaringBitmap {
    let mut docs: Vec<u32> = bitmap
        .iter()
        .map(|d| renumber[d as usize])
        .filter(|&d| d != GONE)
        .collect();
    docs.sort_unstable();
    RoaringBitmap::from_sorted_iter(docs).unwrap_or_default()
}
