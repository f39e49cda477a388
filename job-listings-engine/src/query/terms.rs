//! What a search intersects: the bitmaps a match must be in, and how they are combined.

use std::borrow::Cow;

use super::bitmap::{self, Docs};
use super::confidence::ConfidenceBitmaps;
use super::filter::{JobFilter, Reposts};
use super::index::JobIndex;
use super::places::{Circle, Label};
use crate::domain::RemoteRegion;

/// A bitmap a match must be in: one, or any of several (a list filter such as
/// `domain=a,b`).
pub(super) enum Term<'a> {
    One(&'a Docs),
    AnyOf(Vec<&'a Docs>),
}

impl<'a> Term<'a> {
    /// How many documents it holds, or about (a union counted with its overlaps).
    pub(super) fn size(&self) -> u64 {
        match self {
            Term::One(docs) => docs.cardinality(),
            Term::AnyOf(all) => all.iter().map(|docs| docs.cardinality()).sum(),
        }
    }

    /// Its documents: the bitmap itself, or the union built.
    pub(super) fn into_docs(self) -> Cow<'a, Docs> {
        match self {
            Term::One(docs) => Cow::Borrowed(docs),
            Term::AnyOf(all) => Cow::Owned(bitmap::union(&all)),
        }
    }
}

impl JobIndex {
    /// The bitmaps a match must be in, fewest documents first (dead ones among them);
    /// `None` when nothing can match.
    pub(super) fn terms(&self, filter: &JobFilter) -> Option<Vec<Term<'_>>> {
        let mut terms = Vec::new();
        for word in &filter.company_words {
            terms.push(Term::One(self.company_words.get(word.as_str())?));
        }
        for word in &filter.q_words {
            terms.push(Term::One(self.text.get(word.as_str())?));
        }
        if let Some(company) = filter.company_id {
            terms.push(Term::One(self.companies.get(&company)?));
        }
        if filter.remote_only {
            terms.push(Term::One(&self.remote));
        }
        if !filter.domains.is_empty() {
            terms.push(any_of(
                filter.domains.iter().map(|t| self.domains.get(t.as_str())),
            )?);
        }
        if !filter.seniority.is_empty() {
            terms.push(any_of(
                filter
                    .seniority
                    .iter()
                    .map(|s| self.seniority.get(s.as_str())),
            )?);
        }
        if !filter.countries.is_empty() {
            terms.push(any_of(
                filter
                    .countries
                    .iter()
                    .map(|c| self.places.posting(&Label::Country(*c))),
            )?);
        }
        if let Some(country) = filter.remote_from {
            let open = [RemoteRegion::Country(country), RemoteRegion::Worldwide];
            terms.push(any_of(
                open.iter()
                    .map(|r| self.places.posting(&Label::RemoteFrom(*r))),
            )?);
        }
        if let Some(currency) = filter.salary_currency {
            terms.push(Term::One(self.places.posting(&Label::Currency(currency))?));
        }
        if let Some(near) = filter.near {
            let cells = self.places.cells_near(Circle::from(near));
            terms.push(any_of(cells.reached.into_iter().map(Some))?);
        }
        if filter.reposts == Reposts::Hide && self.has_reposts() {
            terms.push(Term::One(&self.canonical));
        }
        terms.sort_by_cached_key(Term::size);
        Some(terms)
    }

    /// The bitmaps a search intersects: its terms and, with `min_confidence`, the
    /// documents of the threshold's grid step (fewest documents first); `None` when nothing
    /// can match. The documents of that step below the threshold are left to take out.
    pub(super) fn search_terms(&self, filter: &JobFilter) -> Option<Vec<Term<'_>>> {
        let mut terms = self.terms(filter)?;
        if let Some(min) = filter.min_confidence {
            let (step, _) = ConfidenceBitmaps::step_of(min.get());
            if step > 0 {
                terms.push(Term::One(self.confidence.at_least(step)?));
                terms.sort_by_cached_key(Term::size);
            }
        }
        Some(terms)
    }

    /// The live documents in every one of `terms` (all live documents when there are none).
    pub(super) fn intersect<'a>(&'a self, terms: Vec<Term<'a>>) -> Cow<'a, Docs> {
        let mut iter = terms.into_iter();
        let Some(mut acc) = iter.next().map(Term::into_docs) else {
            return Cow::Borrowed(&self.live);
        };
        for term in iter {
            if acc.is_empty() {
                break;
            }
            acc = Cow::Owned(self.intersect_step(acc, term));
        }
        self.without_dead(acc)
    }

    /// `acc` intersected with `term`: one step of an intersection.
    pub(super) fn intersect_step(&self, acc: Cow<'_, Docs>, term: Term<'_>) -> Docs {
        match (acc, term) {
            // `&` on a borrowed bitmap writes the result once; cloning it first would
            // copy it too.
            (Cow::Borrowed(acc), Term::One(docs)) => acc & docs,
            (Cow::Owned(mut acc), Term::One(docs)) => {
                acc &= docs;
                acc
            }
            // Few matches so far are intersected with each of the union's bitmaps rather
            // than the union built in full: after a word, `domain=a,b` costs two small
            // intersections, not a copy of both domains. Many are intersected with the
            // union, which costs less than intersecting them with each.
            (acc, Term::AnyOf(all)) if self.is_sparse(&acc) => {
                let parts: Vec<Docs> = all.iter().map(|docs| acc.as_ref() & *docs).collect();
                bitmap::union(&parts.iter().collect::<Vec<_>>())
            }
            (acc, Term::AnyOf(all)) => {
                let mut union = bitmap::union(&all);
                union &= acc.as_ref();
                union
            }
        }
    }

    /// `matching` without the dead documents.
    pub(super) fn without_dead<'a>(&self, matching: Cow<'a, Docs>) -> Cow<'a, Docs> {
        // Dead documents go last, when the fewest matches are left; right after a
        // compaction there are none, and a single posting is then used without a copy.
        if self.dead.is_empty() {
            return matching;
        }
        // A new bitmap even when `matching` is owned: CRoaring subtracts sorted arrays with
        // SIMD only into a new one, one element at a time in place.
        Cow::Owned(matching.as_ref() - &self.dead)
    }
}

/// A term for the bitmaps that exist; `None` when none does (nothing can match).
fn any_of<'a>(bitmaps: impl Iterator<Item = Option<&'a Docs>>) -> Option<Term<'a>> {
    let found: Vec<&Docs> = bitmaps.flatten().collect();
    match found.as_slice() {
        [] => None,
        [one] => Some(Term::One(one)),
        _ => Some(Term::AnyOf(found)),
    }
}
