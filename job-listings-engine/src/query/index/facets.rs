//! Facet counts: the whole result's bitmap intersected with each value's posting, counted
//! without writing the intersection out.

use std::borrow::Cow;

use super::*;
use crate::query::facets::{ranked, Facet, FacetCounts, RemoteCounts, ValueCount};

impl JobIndex {
    /// Answers a query that asks for facets. The page is read from the bitmap of all the
    /// matches, which the counts need anyway, rather than by the shortcuts of
    /// [`JobIndex::search`] that avoid building it.
    pub(super) fn search_faceted(&self, query: &JobQuery) -> SearchResult {
        let matching = self.all_matches(&query.filter);
        let offset = query.offset();
        let want = offset + query.per_page.get() as usize;
        let ids = if self.unordered.is_empty() {
            self.page_of_ordered(&matching, offset, want)
        } else if matching.cardinality() == self.live.cardinality() {
            let apart = self.unordered_ranked.values().copied();
            self.page_merged(&matching, &self.unordered, apart, offset, want)
        } else {
            let apart = self.top_unordered(&matching, want);
            self.page_merged(&matching, &self.unordered, apart.into_iter(), offset, want)
        };
        SearchResult {
            total: matching.cardinality(),
            ids,
            facets: self.facet_counts(&matching, &query.facets),
        }
    }

    /// Every live document a filter matches, out-of-order ones included.
    pub(super) fn all_matches(&self, filter: &JobFilter) -> Cow<'_, Docs> {
        let Some(terms) = self.terms(filter) else {
            return Cow::Owned(Docs::new());
        };
        let mut matching = self.intersect(terms);
        if let Some(min) = filter.min_confidence {
            self.confidence
                .retain_at_least(matching.to_mut(), min.get(), |d| {
                    self.confidences[d as usize]
                });
        }
        self.keep_exact(&mut matching, filter);
        if let Some(after) = filter.posted_after.map(nanos_clamped) {
            let docs = matching.to_mut();
            // Numbered documents are cut by range; the out-of-order ones are read one by one.
            let apart = &*docs & &self.unordered;
            *docs -= &apart;
            self.keep_numbered_after(docs, after);
            let mut passing = apart.to_vec();
            passing.retain(|&d| self.slots[d as usize].posted_nanos > after);
            docs.add_many(&passing);
        }
        matching
    }

    /// The counts of `facets` among `matching`, live documents only.
    pub(super) fn facet_counts(&self, matching: &Docs, facets: &[Facet]) -> FacetCounts {
        // Countries are counted by their postings, whatever the others are counted by: a
        // document's combination of values does not hold its countries.
        let (by_country, others): (Vec<Facet>, Vec<Facet>) =
            facets.iter().partition(|f| **f == Facet::Country);
        let everything = matching.cardinality() == self.live.cardinality();
        let postings = others
            .iter()
            .map(|f| match f {
                Facet::Domain => self.domains.len() as u64,
                Facet::Seniority => self.seniority.len() as u64,
                Facet::Remote | Facet::Country => 1,
            })
            .sum();
        let mut counts = if others.is_empty() {
            FacetCounts::default()
        } else if !everything && !matching.is_empty() && self.count_one_by_one(matching, postings) {
            self.facet_counts_one_by_one(matching, &others)
        } else {
            self.facet_counts_by_postings(matching, &others)
        };
        if !by_country.is_empty() {
            let countries = self.places.countries().filter_map(|(country, docs)| {
                let n = self.count_among(matching, everything, docs);
                (n > 0).then(|| ValueCount {
                    value: country.as_str().to_owned(),
                    count: n,
                })
            });
            counts.country = Some(ranked(countries.collect()));
        }
        counts
    }

    /// How many documents of `docs` are in `matching` (live documents; `everything` when
    /// they are all the live ones, whose count the posting gives more cheaply).
    fn count_among(&self, matching: &Docs, everything: bool, docs: &Docs) -> u64 {
        if everything {
            self.live_among(docs)
        } else {
            matching.and_cardinality(docs)
        }
    }

    /// The counts of `facets` among `matching`, each value's posting intersected with it.
    pub(super) fn facet_counts_by_postings(
        &self,
        matching: &Docs,
        facets: &[Facet],
    ) -> FacetCounts {
        let everything = matching.cardinality() == self.live.cardinality();
        // Postings hold dead documents until compaction, but `matching` holds none; when it is
        // every live document, the postings' own live counts are the answer and cheaper.
        let count = |docs: &Docs| self.count_among(matching, everything, docs);
        let values = |postings: &HashMap<String, Docs>| {
            let counts = postings
                .iter()
                .filter_map(|(value, docs)| {
                    let n = count(docs);
                    (n > 0).then(|| ValueCount {
                        value: value.clone(),
                        count: n,
                    })
                })
                .collect();
            ranked(counts)
        };
        let mut out = FacetCounts::default();
        if matching.is_empty() {
            for facet in facets {
                match facet {
                    Facet::Domain => out.domain = Some(Vec::new()),
                    Facet::Seniority => out.seniority = Some(Vec::new()),
                    Facet::Remote => out.remote = Some(RemoteCounts::default()),
                    Facet::Country => out.country = Some(Vec::new()),
                }
            }
            return out;
        }
        for facet in facets {
            match facet {
                Facet::Domain if out.domain.is_none() => out.domain = Some(values(&self.domains)),
                Facet::Seniority if out.seniority.is_none() => {
                    out.seniority = Some(values(&self.seniority))
                }
                Facet::Remote if out.remote.is_none() => {
                    let remote = count(&self.remote);
                    out.remote = Some(RemoteCounts {
                        remote,
                        on_site: matching.cardinality() - remote,
                    });
                }
                _ => {}
            }
        }
        out
    }

    /// Every domain tag at least one active job has, with how many have it, most first;
    /// a label that is not here matches nothing.
    pub fn domain_values(&self) -> Vec<ValueCount> {
        self.facet_counts(&self.canonical, &[Facet::Domain])
            .domain
            .unwrap_or_default()
    }

    /// Every seniority level at least one active job has, with how many have it, most first.
    pub fn seniority_values(&self) -> Vec<ValueCount> {
        self.facet_counts(&self.canonical, &[Facet::Seniority])
            .seniority
            .unwrap_or_default()
    }

    /// How many active jobs have a domain tag (as normalised: [`DomainTag`]'s label).
    pub fn jobs_with_domain(&self, tag: &DomainTag) -> u64 {
        self.domains
            .get(tag.as_str())
            .map_or(0, |docs| self.canonical_among(docs))
    }

    /// How many active jobs have a seniority level.
    pub fn jobs_with_seniority(&self, level: &Seniority) -> u64 {
        self.seniority
            .get(level.as_str())
            .map_or(0, |docs| self.canonical_among(docs))
    }
}

/// Each document's combination of facet values, numbered: for a few matches, counting
/// them one by one by combination costs less than intersecting them with every value's
/// posting. Kept as documents are added, renumbered by compaction; dead documents keep
/// theirs, unread.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub(in crate::query) struct Combos {
    /// Per document number, its combination.
    pub(in crate::query) of_doc: Vec<u32>,
    list: Vec<Combo>,
    numbers: HashMap<Combo, u32>,
    domains: Values,
    seniority: Values,
}

/// Facet values numbered in the order first seen.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Values {
    names: Vec<Box<str>>,
    numbers: HashMap<Box<str>, u32>,
}

impl Values {
    fn number(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.numbers.get(name) {
            return n;
        }
        let n = self.names.len() as u32;
        self.names.push(name.into());
        self.numbers.insert(name.into(), n);
        n
    }
}

#[derive(Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
struct Combo {
    domains: Box<[u32]>,
    seniority: Box<[u32]>,
    remote: bool,
}

impl Combos {
    /// The combination number of a job's values, numbering it if it is new.
    pub(in crate::query) fn number<'a>(
        &mut self,
        domains: impl Iterator<Item = &'a str>,
        seniority: impl Iterator<Item = &'a str>,
        remote: bool,
    ) -> u32 {
        let numbered = |values: &mut Values, names: &mut dyn Iterator<Item = &'a str>| {
            let mut v: Vec<u32> = names.map(|n| values.number(n)).collect();
            v.sort_unstable();
            v.dedup();
            v.into_boxed_slice()
        };
        let combo = Combo {
            domains: numbered(&mut self.domains, &mut { domains }),
            seniority: numbered(&mut self.seniority, &mut { seniority }),
            remote,
        };
        if let Some(&n) = self.numbers.get(&combo) {
            return n;
        }
        let n = self.list.len() as u32;
        self.list.push(combo.clone());
        self.numbers.insert(combo, n);
        n
    }

    /// The summed weights of the domain tags and seniority levels of `weights` that a
    /// combination holds.
    pub(in crate::query) fn weight_of(
        &self,
        combo: u32,
        domains: &[(&str, f64)],
        seniority: &[(&str, f64)],
    ) -> f64 {
        let Some(c) = self.list.get(combo as usize) else {
            return 0.0;
        };
        let sum = |held: &[u32], values: &Values, weights: &[(&str, f64)]| -> f64 {
            held.iter()
                .filter_map(|&v| {
                    let name = values.names.get(v as usize)?;
                    weights.iter().find(|(n, _)| **n == **name).map(|(_, w)| *w)
                })
                .sum()
        };
        sum(&c.domains, &self.domains, domains) + sum(&c.seniority, &self.seniority, seniority)
    }

    /// Whether every document's combination is one there is (a snapshot's check).
    pub(in crate::query) fn fits(&self, docs: usize) -> bool {
        let (d, s) = (
            self.domains.names.len() as u32,
            self.seniority.names.len() as u32,
        );
        self.of_doc.len() == docs
            && self.of_doc.iter().all(|&c| (c as usize) < self.list.len())
            && self
                .list
                .iter()
                .all(|c| c.domains.iter().all(|&v| v < d) && c.seniority.iter().all(|&v| v < s))
    }

    /// Bytes of heap held, about.
    pub(in crate::query) fn heap_bytes(&self) -> u64 {
        let combo = std::mem::size_of::<Combo>() * 2 + 16;
        (self.of_doc.capacity() * 4 + self.list.len() * combo) as u64
            + (self.domains.names.len() + self.seniority.names.len()) as u64 * 64
    }
}

/// A counting pass costs about this many times what a posting's intersection costs, per
/// matching document kept as a sorted array.
const PER_DOC_COST: u64 = 3;

/// CRoaring keeps a container of more than this many documents as 1,024 words.
const ARRAY_AT_MOST: u64 = 4_096;

/// What counting the intersection of two such word containers costs, in documents of a
/// sorted array (each a lookup in the other posting).
const DENSE_CONTAINER_COST: u64 = 600;

impl JobIndex {
    /// Whether counting `matching` document by document should cost less than intersecting
    /// it with `postings` postings.
    fn count_one_by_one(&self, matching: &Docs, postings: u64) -> bool {
        let n = matching.cardinality();
        let containers = (self.slots.len() as u64 >> 16) + 1;
        // Taking the matches to be spread evenly over the containers.
        let per_posting = if n / containers > ARRAY_AT_MOST {
            containers * DENSE_CONTAINER_COST
        } else {
            n
        };
        let by_postings = postings * per_posting;
        self.combos.of_doc.len() == self.slots.len() && n * PER_DOC_COST < by_postings
    }

    /// The counts of `facets` among `matching`, read one document at a time.
    pub(super) fn facet_counts_one_by_one(&self, matching: &Docs, facets: &[Facet]) -> FacetCounts {
        let combos = &self.combos;
        let mut per_combo = vec![0u64; combos.list.len()];
        for doc in matching.to_vec() {
            per_combo[combos.of_doc[doc as usize] as usize] += 1;
        }
        let mut domains = vec![0u64; combos.domains.names.len()];
        let mut seniority = vec![0u64; combos.seniority.names.len()];
        let mut remote = 0;
        for (combo, &n) in combos.list.iter().zip(&per_combo) {
            if n == 0 {
                continue;
            }
            for &d in &*combo.domains {
                domains[d as usize] += n;
            }
            for &s in &*combo.seniority {
                seniority[s as usize] += n;
            }
            if combo.remote {
                remote += n;
            }
        }
        let listed = |names: &[Box<str>], counts: Vec<u64>| {
            let counts = names
                .iter()
                .zip(counts)
                .filter(|(_, n)| *n > 0)
                .map(|(value, count)| ValueCount {
                    value: value.to_string(),
                    count,
                })
                .collect();
            ranked(counts)
        };
        let mut out = FacetCounts::default();
        for facet in facets {
            match facet {
                Facet::Domain => out.domain = Some(listed(&combos.domains.names, domains.clone())),
                Facet::Seniority => {
                    out.seniority = Some(listed(&combos.seniority.names, seniority.clone()))
                }
                Facet::Remote => {
                    out.remote = Some(RemoteCounts {
                        remote,
                        on_site: matching.cardinality() - remote,
                    })
                }
                Facet::Country => {}
            }
        }
        out
    }
}
