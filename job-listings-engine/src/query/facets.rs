//! Facets: for a field, how many of a search's matches hold each of its values, counted over
//! the whole result rather than the page.

/// A field a search can count its matches by ([`JobQuery::facets`](super::JobQuery::facets)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Facet {
    /// The jobs' domain tags: a job with two tags counts under each.
    Domain,
    /// The jobs' seniority levels: a job with two levels counts under each.
    Seniority,
    /// Remote or not.
    Remote,
    /// The countries of the jobs' places: a job with places in two countries counts under
    /// each, a job without places under none.
    Country,
}

impl Facet {
    /// Every facet, in the order of their names in [`Facet::NAMES`].
    pub const ALL: [Facet; 4] = [
        Facet::Domain,
        Facet::Seniority,
        Facet::Remote,
        Facet::Country,
    ];

    /// The names of the facets as the API spells them, the same as their filters'.
    pub const NAMES: [&'static str; 4] = ["domain", "seniority", "remote", "country"];

    /// The facet's name as the API spells it.
    pub fn name(self) -> &'static str {
        match self {
            Facet::Domain => "domain",
            Facet::Seniority => "seniority",
            Facet::Remote => "remote",
            Facet::Country => "country",
        }
    }

    /// The facet of that name, if any (names are matched exactly: they are identifiers).
    pub fn from_name(name: &str) -> Option<Facet> {
        Facet::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// One value of a facet and how many matches hold it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueCount {
    /// The value, as the index keeps it (normalised, as the filters take it).
    pub value: String,
    /// How many matches hold it; never 0 in a facet's list.
    pub count: u64,
}

/// How many matches are remote and how many are not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RemoteCounts {
    /// Remote jobs among the matches.
    pub remote: u64,
    /// The other matches.
    pub on_site: u64,
}

/// The facet counts of a search: each facet asked for is `Some`, the others `None`.
///
/// Lists hold only values with at least one match, by count descending and then by value, so
/// the same result always lists the same way.
///
/// A new facet adds a field, so it is built from [`FacetCounts::default`] with the setters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FacetCounts {
    /// Matches by domain tag.
    pub domain: Option<Vec<ValueCount>>,
    /// Matches by seniority level.
    pub seniority: Option<Vec<ValueCount>>,
    /// Matches by remote or not.
    pub remote: Option<RemoteCounts>,
    /// Matches by the country of a place (ISO 3166-1 alpha-2).
    pub country: Option<Vec<ValueCount>>,
}

impl FacetCounts {
    /// Sets the counts by domain tag.
    #[must_use]
    pub fn domain(mut self, counts: impl Into<Option<Vec<ValueCount>>>) -> Self {
        self.domain = counts.into();
        self
    }

    /// Sets the counts by seniority level.
    #[must_use]
    pub fn seniority(mut self, counts: impl Into<Option<Vec<ValueCount>>>) -> Self {
        self.seniority = counts.into();
        self
    }

    /// Sets the counts by remote or not.
    #[must_use]
    pub fn remote(mut self, counts: impl Into<Option<RemoteCounts>>) -> Self {
        self.remote = counts.into();
        self
    }

    /// Sets the counts by country.
    #[must_use]
    pub fn country(mut self, counts: impl Into<Option<Vec<ValueCount>>>) -> Self {
        self.country = counts.into();
        self
    }

    /// Whether no facet was asked for.
    pub fn is_empty(&self) -> bool {
        self.domain.is_none()
            && self.seniority.is_none()
            && self.remote.is_none()
            && self.country.is_none()
    }
}

/// Puts counts in facet order: most matches first, then by value.
pub(super) fn ranked(mut counts: Vec<ValueCount>) -> Vec<ValueCount> {
    counts.sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_apis_and_parse_back() {
        for (facet, name) in Facet::ALL.into_iter().zip(Facet::NAMES) {
            assert_eq!(facet.name(), name);
            assert_eq!(Facet::from_name(name), Some(facet));
        }
        assert_eq!(Facet::from_name("salary"), None);
        assert_eq!(Facet::from_name(""), None);
    }

    #[test]
    fn lists_run_from_the_most_matches_then_by_value() {
        let v = |value: &str, count| ValueCount {
            value: value.to_owned(),
            count,
        };
        let sorted = ranked(vec![v("b", 2), v("c", 5), v("a", 2)]);
        assert_eq!(sorted, [v("c", 5), v("a", 2), v("b", 2)]);
        assert!(FacetCounts::default().is_empty());
    }
}
