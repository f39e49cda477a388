//! Renumbering an index in result order, which drops dead documents and puts out-of-order
//! ones back in place.

use std::hash::Hash;

use rustc_hash::FxHashMap as HashMap;

use super::bitmap::{from_bits, from_sorted, Docs};
use super::ids::DocsById;
use super::index::JobIndex;

/// Marks a document that has no new number (it is dead).
const GONE: u32 = u32::MAX;

impl JobIndex {
    /// Renumbers every document in result order: dead documents leave every bitmap and the
    /// out-of-order ones take their place, so searches are as fast as right after a bulk
    /// load. Takes time linear in the postings (about a second per million jobs).
    pub fn compact(&mut self) {
        self.rank_pending();
        *self = self.compacted();
    }

    /// A compacted copy ([`JobIndex::compact`]), built while `self` keeps answering searches.
    pub fn compacted(&self) -> JobIndex {
        let order = self.live_in_result_order();
        let n = order.len() as u32;
        let mut renumber = vec![GONE; self.slots.len()];
        let mut slots = Vec::with_capacity(order.len());
        let mut confidences = Vec::with_capacity(order.len());
        let mut last_seen = Vec::with_capacity(order.len());
        let mut signatures = Vec::with_capacity(order.len());
        let mut role_keys = Vec::with_capacity(order.len());
        let mut combos = self.combos.clone();
        combos.of_doc = Vec::with_capacity(order.len());
        // Result order runs from the highest number down.
        for (position, &doc) in order.iter().rev().enumerate() {
            renumber[doc as usize] = position as u32;
            slots.push(self.slots[doc as usize]);
            confidences.push(self.confidences[doc as usize]);
            last_seen.push(self.last_seen[doc as usize]);
            signatures.push(self.signatures[doc as usize]);
            role_keys.push(self.role_keys[doc as usize]);
            combos.of_doc.push(self.combos.of_doc[doc as usize]);
        }
        let mut by_id = DocsById::with_capacity(slots.len());
        for doc in 0..n {
            by_id.insert(&slots, doc);
        }
        let mut live = Docs::from_range(0..n);
        // As one run per container it would split into thousands of runs as jobs close,
        // and intersecting runs costs more than plain bits.
        live.remove_run_compression();
        let mut confidence = self.confidence.clone();
        for b in confidence.bitmaps_mut() {
            *b = remap(b, &renumber);
        }
        JobIndex {
            slots,
            confidences,
            by_id,
            dead: Docs::new(),
            stepped_over: Docs::new(),
            unordered: Docs::new(),
            unordered_ranked: Default::default(),
            // Compacted in the middle of a bulk load (out of document numbers): it goes on.
            ranks_to_add: self.ranks_to_add.as_ref().map(|_| Vec::new()),
            ordered: (0..n).collect(),
            domains: remap_all(&self.domains, &renumber),
            seniority: remap_all(&self.seniority, &renumber),
            remote: remap(&self.remote, &renumber),
            text: remap_all(&self.text, &renumber),
            company_words: remap_all(&self.company_words, &renumber),
            companies: remap_all(&self.companies, &renumber),
            confidence,
            combos,
            places: self
                .places
                .remapped(&renumber, order.iter().rev().copied(), |b| {
                    remap(b, &renumber)
                }),
            counts: self
                .counts
                .remapped(order.iter().rev().copied(), &live, |b| remap(b, &renumber)),
            canonical: remap(&self.canonical, &renumber),
            last_seen,
            role_keys,
            signatures,
            live,
            auto_compact: self.auto_compact,
        }
    }

    /// Every live document, first result first.
    fn live_in_result_order(&self) -> Vec<u32> {
        let rank = |d: &u32| self.slots[*d as usize].rank();
        let numbered = self
            .ordered
            .iter()
            .rev()
            .copied()
            .filter(|&d| self.live.contains(d) && !self.unordered.contains(d));
        let mut merged = Vec::with_capacity(self.live.cardinality() as usize);
        let mut apart = self.unordered_ranked.values().copied().peekable();
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

fn remap_all<K: Clone + Eq + Hash + Send + Sync>(
    map: &HashMap<K, Docs>,
    renumber: &[u32],
) -> HashMap<K, Docs> {
    let entries: Vec<(&K, &Docs)> = map.iter().collect();
    let remap_part = |part: &[(&K, &Docs)]| -> Vec<(K, Docs)> {
        part.iter()
            .filter_map(|(k, b)| {
                let b = remap(b, renumber);
                (!b.is_empty()).then(|| ((*k).clone(), b))
            })
            .collect()
    };
    // The bitmaps are independent: remap them on every core, in parts of about equal
    // postings.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let total: u64 = entries.iter().map(|(_, b)| b.cardinality()).sum();
    let mut parts = Vec::with_capacity(threads);
    let (mut from, mut seen) = (0, 0);
    for (i, (_, b)) in entries.iter().enumerate() {
        seen += b.cardinality();
        if seen * threads as u64 >= total * (parts.len() as u64 + 1) && parts.len() + 1 < threads {
            parts.push(&entries[from..=i]);
            from = i + 1;
        }
    }
    parts.push(&entries[from..]);
    let Some((first, rest)) = parts.split_first() else {
        return HashMap::default();
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = rest
            .iter()
            .map(|part| scope.spawn(move || remap_part(part)))
            .collect();
        let mut out: HashMap<K, Docs> = remap_part(first).into_iter().collect();
        for handle in others {
            match handle.join() {
                Ok(part) => out.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

/// One bitmap under new numbers, without its dead documents.
fn remap(bitmap: &Docs, renumber: &[u32]) -> Docs {
    // Read out in one call: iterating a CRoaring set costs a foreign call per document.
    let old = bitmap.to_vec();
    let mapped = old
        .iter()
        .map(|&d| renumber[d as usize])
        .filter(|&d| d != GONE);
    // A dense bitmap is rebuilt through a plain bit array, which needs no sort.
    if old.len() * 32 > renumber.len() {
        let mut bits = vec![0u64; renumber.len().div_ceil(64)];
        for d in mapped {
            bits[d as usize / 64] |= 1 << (d % 64);
        }
        return from_bits(&bits);
    }
    let mut docs: Vec<u32> = mapped.collect();
    docs.sort_unstable();
    from_sorted(&docs)
}
