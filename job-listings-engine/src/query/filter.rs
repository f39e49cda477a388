use chrono::{DateTime, Utc};
use serde::Serialize;

use super::facets::{Facet, FacetCounts};
use super::text::{has_all_words, words};
use crate::domain::{CompanyId, Confidence, DomainTag, Job, JobId, Page, PerPage, Seniority};

/// Which active jobs a search or a webhook subscription wants. Every field narrows the result;
/// a list matches when any of its entries matches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(
        rename = "JobFilters",
        description = "The filters applied to a job search, after normalization."
    )
)]
pub struct JobFilter {
    /// Any of these domain tags (empty: any).
    pub domains: Vec<DomainTag>,
    /// Any of these seniority levels (empty: any).
    pub seniority: Vec<Seniority>,
    /// Only remote jobs when true.
    pub remote_only: bool,
    /// Every one of these words is a word of the company name. Words as the index keeps
    /// them (lowercased, split as [`search_terms`] splits text): set them from free text
    /// with [`JobFilter::with_company`].
    #[cfg_attr(
        feature = "schema",
        schemars(
            description = "The terms every job's company name must contain: the normalized words of the company search. Text with no word in it is kept whole as one term, which matches nothing."
        )
    )]
    pub company_words: Vec<String>,
    /// Every one of these words is a word of the role, company name or post text. Words as
    /// the index keeps them (lowercased, split as [`search_terms`] splits text): set them
    /// from free text with [`JobFilter::with_q`]; `"Python"` set here matches nothing.
    #[cfg_attr(
        feature = "schema",
        schemars(
            description = "The terms every job matched must contain: the normalized words of the free-text search. Text with no word in it (such as `!!!`) is kept whole as one term, which no job contains, so it matches nothing."
        )
    )]
    pub q_words: Vec<String>,
    /// Confidence at least this.
    pub min_confidence: Option<Confidence>,
    /// Posted strictly after this instant.
    pub posted_after: Option<DateTime<Utc>>,
    /// Only this company's jobs (`GET /jobs?company_id=`, and the company detail view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_id: Option<CompanyId>,
}

impl JobFilter {
    /// Sets the `q` words from free text (see [`search_terms`] for text without words).
    pub fn with_q(mut self, text: &str) -> Self {
        self.q_words = search_terms(text);
        self
    }

    /// Sets the company-name words from free text (see [`search_terms`] for text without
    /// words).
    pub fn with_company(mut self, text: &str) -> Self {
        self.company_words = search_terms(text);
        self
    }

    /// Whether one job matches, exactly as [`JobIndex::search`](super::JobIndex::search) would
    /// decide. Closed jobs never match.
    pub fn matches(&self, job: &Job) -> bool {
        job.is_active() && self.matches_content(job)
    }

    /// Whether one job matches as [`JobFilter::matches`] decides, whether it is active or
    /// closed: for the change feed, which reports closings too.
    pub fn matches_content(&self, job: &Job) -> bool {
        if !self.domains.is_empty() && !job.domains.iter().any(|d| self.domains.contains(d)) {
            return false;
        }
        if !self.seniority.is_empty() && !job.seniority.iter().any(|s| self.seniority.contains(s)) {
            return false;
        }
        if self.remote_only && !job.remote {
            return false;
        }
        if self.company_id.is_some_and(|c| c != job.company_id) {
            return false;
        }
        if self
            .min_confidence
            .is_some_and(|m| job.confidence.get() < m.get())
        {
            return false;
        }
        if self.posted_after.is_some_and(|t| job.posted_at <= t) {
            return false;
        }
        if !self.company_words.is_empty()
            && !has_all_words(&self.company_words, &[&job.company_name])
        {
            return false;
        }
        self.q_words.is_empty()
            || has_all_words(
                &self.q_words,
                &[&job.role, &job.company_name, &job.description],
            )
    }

    /// Whether the filter asks for words, so that deciding on a job reads its text.
    pub fn reads_text(&self) -> bool {
        !self.q_words.is_empty() || !self.company_words.is_empty()
    }
}

/// The terms a search text asks for: its [`words`], sorted and once each.
///
/// Text that is not blank but has no word in it (`!!!`, `++`, an emoji) is kept whole as its
/// one term. No job has that term, since every indexed word holds a letter or digit and such
/// text holds none, so the search matches nothing, as Elasticsearch's `match` does by
/// default, instead of dropping the condition and matching every job. Blank text gives no
/// terms: no condition.
pub fn search_terms(text: &str) -> Vec<String> {
    let terms = dedup(words(text).collect());
    match text.trim() {
        wordless if terms.is_empty() && !wordless.is_empty() => vec![wordless.to_owned()],
        _ => terms,
    }
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    v.sort_unstable();
    v.dedup();
    v
}

/// A filter plus the page wanted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JobQuery {
    /// Which jobs.
    pub filter: JobFilter,
    /// Which page, from 1.
    pub page: Page,
    /// How many per page.
    pub per_page: PerPage,
    /// The facets to count over all the matches (empty: none, and no cost). Each counts once
    /// however often it is listed.
    pub facets: Vec<Facet>,
}

impl JobQuery {
    /// The first page of the default size for a filter.
    pub fn new(filter: JobFilter) -> Self {
        Self {
            filter,
            ..Self::default()
        }
    }

    /// How many matches come before the requested page.
    pub fn offset(&self) -> usize {
        (self.page.get() as usize - 1) * self.per_page.get() as usize
    }
}

/// The answer to a [`JobQuery`]: how many jobs match and the ids on the requested page, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// Matches in all.
    pub total: u64,
    /// The page's job ids, newest first, ties by id ascending.
    pub ids: Vec<JobId>,
    /// The counts of the facets the query asked for, over all the matches.
    pub facets: FacetCounts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_terms_are_the_words_or_wordless_text_whole_or_nothing_for_blank_text() {
        assert_eq!(search_terms("Node.js  node RUST"), ["js", "node", "rust"]);
        assert_eq!(search_terms("++c++"), ["c"]);
        assert_eq!(search_terms("  !!! "), ["!!!"]);
        assert_eq!(search_terms("🦘"), ["🦘"]);
        assert!(search_terms(" \t ").is_empty());
        assert!(search_terms("").is_empty());
        // A wordless term can never be a word: every word holds a letter or digit.
        assert!(words("!!!").next().is_none());
        assert_eq!(search_terms("\u{301}"), ["\u{301}"]);
        assert!(
            words("a_\u{301}_b 5\u{fe0f}\u{20e3}").all(|w| w.chars().any(char::is_alphanumeric))
        );
    }
}
