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
    fn all_matches(&self, filter: &JobFilter) -> Cow<'_, Docs> {
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
    fn facet_counts(&self, matching: &Docs, facets: &[Facet]) -> FacetCounts {
        let everything = matching.cardinality() == self.live.cardinality();
        // Postings hold dead documents until compaction, but `matching` holds none; when it is
        // every live document, the postings' own live counts are the answer and cheaper.
        let count = |docs: &Docs| {
            if everything {
                self.live_among(docs)
            } else {
                matching.and_cardinality(docs)
            }
        };
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
        self.facet_counts(&self.live, &[Facet::Domain])
            .domain
            .unwrap_or_default()
    }

    /// Every seniority level at least one active job has, with how many have it, most first.
    pub fn seniority_values(&self) -> Vec<ValueCount> {
        self.facet_counts(&self.live, &[Facet::Seniority])
            .seniority
            .unwrap_or_default()
    }

    /// How many active jobs have a domain tag (as normalised: [`DomainTag`]'s label).
    pub fn jobs_with_domain(&self, tag: &DomainTag) -> u64 {
        self.domains
            .get(tag.as_str())
            .map_or(0, |docs| self.live_among(docs))
    }

    /// How many active jobs have a seniority level.
    pub fn jobs_with_seniority(&self, level: &Seniority) -> u64 {
        self.seniority
            .get(level.as_str())
            .map_or(0, |docs| self.live_among(docs))
    }
}
