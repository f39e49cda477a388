//! Query strings into typed queries. Unknown parameters are refused so a typo never silently
//! widens a search.

use chrono::{DateTime, NaiveDate, Utc};

use super::error::ApiError;
use crate::api::endpoints::{
    LIST_CHANGES, LIST_COMPANIES, LIST_WEBHOOKS, SEARCH_JOBS, SIMILAR_JOBS,
};
use crate::api::job_shape::JobShape;
use crate::api::render::JOB_FIELDS;
use crate::domain::{after_leap_second, DomainError, FeedCursor, FundingStage, Page, PerPage};
use crate::query::{Facet, JobQuery, Sort};
use crate::service::{ChangesQuery, CompanyQuery, FeedStart};

mod filters;

#[cfg(feature = "client")]
pub(crate) use filters::filter_pairs;
pub(crate) use filters::{read_near, salary_floor, FILTER_PARAMS};

/// The names of the query parameters an endpoint declares, or of its list parameters only.
macro_rules! query_names {
    ($doc:expr, $lists_only:expr) => {
        &$doc.query_names::<{ $doc.query_count($lists_only) }>($lists_only)
    };
}

/// The query parameters an endpoint takes, as its declaration lists them.
#[derive(Clone, Copy)]
pub(crate) struct Takes {
    /// Every one: any other is refused as `unknown_parameter`.
    pub(crate) all: &'static [&'static str],
    /// The comma lists, which may also be repeated.
    pub(crate) lists: &'static [&'static str],
}

impl Takes {
    /// No query parameter at all.
    pub(crate) const NONE: Takes = Takes {
        all: &[],
        lists: &[],
    };
}

/// What an endpoint's declaration says it takes.
macro_rules! takes {
    ($doc:expr) => {
        $crate::api::params::Takes {
            all: $crate::api::params::query_names!($doc, false),
            lists: $crate::api::params::query_names!($doc, true),
        }
    };
}
pub(crate) use {query_names, takes};

/// What `GET /jobs` takes.
pub(crate) const JOB_QUERY: Takes = takes!(SEARCH_JOBS);
/// What `GET /jobs/{id}/similar` takes.
pub(crate) const SIMILAR_QUERY: Takes = takes!(SIMILAR_JOBS);
/// What `GET /changes` takes.
pub(crate) const CHANGE_QUERY: Takes = takes!(LIST_CHANGES);
/// What `GET /companies` takes.
pub(crate) const COMPANY_QUERY: Takes = takes!(LIST_COMPANIES);
/// What the lists that only page take (`GET /webhooks`, `GET /webhooks/{id}/deliveries`).
pub(crate) const PAGE_QUERY: Takes = takes!(LIST_WEBHOOKS);

/// The query parameters `GET /jobs` takes; any other is refused as `unknown_parameter`.
/// Public so that tests and fuzz targets generate queries from this list, not a copy of it.
pub const JOB_PARAMS: &[&str] = JOB_QUERY.all;

/// The query parameters `GET /companies` takes; any other is refused as `unknown_parameter`.
pub const COMPANY_PARAMS: &[&str] = COMPANY_QUERY.all;

/// The query parameters of the lists that only page (`GET /webhooks`,
/// `GET /webhooks/{id}/deliveries`), for the MCP tools that list them.
#[cfg(feature = "mcp")]
pub const PAGE_PARAMS: &[&str] = PAGE_QUERY.all;

/// The query parameters `GET /jobs/{id}/similar` takes (`per_page`), for the MCP tool.
#[cfg(feature = "mcp")]
pub const SIMILAR_PARAMS: &[&str] = SIMILAR_QUERY.all;

/// The query parameters `GET /changes` takes: a cursor, a page size and the filters of
/// `GET /jobs`; any other is refused as `unknown_parameter`.
pub const CHANGE_PARAMS: &[&str] = CHANGE_QUERY.all;

/// The facets `GET /companies` counts by.
const COMPANY_FACETS: &[&str] = &["funding_stage"];

/// Longest free-text value accepted, in characters.
const MAX_TEXT: usize = 500;

/// A query-string component percent-decoded, with `+` as a space (form encoding, as browsers
/// and HTTP clients send it). Bytes that are not UTF-8 are refused rather than replaced, so a
/// garbled `q` is an error instead of a search for nothing that matches everything; `Err`
/// holds the lossy text, for naming an unknown parameter.
fn decode(component: &str) -> Result<String, String> {
    let spaced = match component.contains('+') {
        true => std::borrow::Cow::Owned(component.replace('+', " ")),
        false => std::borrow::Cow::Borrowed(component),
    };
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(&spaced).collect();
    String::from_utf8(bytes).map_err(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Decoded query pairs, checked against the parameters an endpoint takes.
pub(crate) struct Params {
    pairs: Vec<(String, String)>,
}

impl Params {
    /// Decodes a query string; refuses parameters an endpoint does not take, and repeated
    /// ones that are not lists.
    pub(crate) fn parse(query: Option<&str>, takes: &Takes) -> Result<Self, ApiError> {
        let Takes {
            all: allowed,
            lists,
        } = *takes;
        let mut pairs: Vec<(String, String)> = Vec::new();
        for piece in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            let name = match decode(name) {
                Ok(name) if allowed.contains(&name.as_str()) => name,
                Ok(name) | Err(name) => return Err(ApiError::unknown_parameter(&name, allowed)),
            };
            let Ok(value) = decode(value) else {
                let field = allowed
                    .iter()
                    .copied()
                    .find(|a| *a == name)
                    .unwrap_or("query");
                return Err(DomainError::new(
                    field,
                    "is not UTF-8 once percent-decoded; percent-encode the text's UTF-8 bytes",
                )
                .into());
            };
            pairs.push((name, value));
        }
        for (i, (name, _)) in pairs.iter().enumerate() {
            if !lists.contains(&name.as_str()) && pairs[..i].iter().any(|(n, _)| n == name) {
                let field = allowed
                    .iter()
                    .copied()
                    .find(|a| a == name)
                    .unwrap_or("query");
                return Err(
                    DomainError::new(field, "is given more than once; give it once").into(),
                );
            }
        }
        Ok(Self { pairs })
    }

    /// The value of a scalar parameter, if given (an empty value is given, and usually
    /// invalid: `page=` is an error, not page 1).
    fn one(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of a filter parameter for which empty means "no filter".
    fn filter(&self, name: &str) -> Option<&str> {
        self.one(name).filter(|v| !v.trim().is_empty())
    }

    /// Every comma-separated entry of a list parameter, over all its occurrences.
    fn list<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, DomainError>,
    ) -> Result<Vec<T>, DomainError> {
        let mut out = Vec::new();
        for (_, value) in self.pairs.iter().filter(|(n, _)| n == name) {
            for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                out.push(parse(part)?);
            }
        }
        Ok(out)
    }

    fn text(&self, field: &'static str) -> Result<Option<&str>, DomainError> {
        let text = self.filter(field);
        text.map(|t| check_search_text(field, t)).transpose()?;
        Ok(text)
    }

    /// A boolean parameter (`true` or `false`), if given.
    pub(crate) fn bool(&self, field: &'static str) -> Result<Option<bool>, DomainError> {
        self.one(field).map(|v| parse_bool(field, v)).transpose()
    }

    /// `per_page` alone, for a list of one page that is `default` long unless it says.
    pub(crate) fn per_page_or(&self, default: u32) -> Result<PerPage, DomainError> {
        self.one("per_page")
            .map(PerPage::parse)
            .unwrap_or_else(|| PerPage::new(default))
    }

    pub(crate) fn page(&self) -> Result<(Page, PerPage), DomainError> {
        let page = self
            .one("page")
            .map(Page::parse)
            .transpose()?
            .unwrap_or_default();
        let per = self
            .one("per_page")
            .map(PerPage::parse)
            .transpose()?
            .unwrap_or_default();
        Ok((page, per))
    }

    /// The pairs other than `page`, re-encoded, for building page links.
    pub(crate) fn without_page(&self) -> String {
        self.without("page")
    }

    /// The pairs other than `name`, re-encoded, for building page links.
    pub(crate) fn without(&self, name: &str) -> String {
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in self.pairs.iter().filter(|(k, _)| k != name) {
            ser.append_pair(k, v);
        }
        ser.finish()
    }
}

/// `true` or `false` in any case (Python's `requests` sends `True`), or `1` or `0`.
fn parse_bool(field: &'static str, raw: &str) -> Result<bool, DomainError> {
    if raw.eq_ignore_ascii_case("true") || raw == "1" {
        Ok(true)
    } else if raw.eq_ignore_ascii_case("false") || raw == "0" {
        Ok(false)
    } else {
        Err(DomainError::new(
            field,
            "must be true or false (in any case), or 1 or 0",
        ))
    }
}

/// Reads RFC 3339 (`2026-11-01T09:30:00Z`), ISO 8601 with an offset written without its colon
/// (`2026-11-01T09:30:00+0100`), or a bare date (its midnight UTC).
fn parse_instant(field: &'static str, raw: &str) -> Result<DateTime<Utc>, DomainError> {
    let raw = raw.trim();
    let with_offset = DateTime::parse_from_rfc3339(raw)
        .or_else(|_| DateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f%z"));
    if let Ok(t) = with_offset {
        return Ok(within_rfc3339_years(after_leap_second(
            t.with_timezone(&Utc),
        )));
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| within_rfc3339_years(t.and_utc()))
        .ok_or_else(|| DomainError::new(field, instant_advice(raw)))
}

/// The instant, moved into the years 0000 to 9999 of UTC, which RFC 3339 can write:
/// `9999-12-31T23:59:59-01:00` is in the year 10000 once in UTC, and the filters echo their
/// instants in UTC. No job is posted near either end (posting times lie between the years
/// 1678 and 2261), so the move changes no answer.
fn within_rfc3339_years(t: DateTime<Utc>) -> DateTime<Utc> {
    let first = NaiveDate::from_ymd_opt(0, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0));
    let last = NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 999_999_999));
    match (first, last) {
        (Some(first), Some(last)) => t.clamp(first.and_utc(), last.and_utc()),
        _ => t,
    }
}

/// What to fix in a date-time that did not parse, for the mistakes clients make most.
fn instant_advice(raw: &str) -> &'static str {
    let time = raw.split_once('T').map(|(_, time)| time);
    match time {
        // A `+` sent unencoded in a query string arrives as a space.
        Some(time) if time.contains(' ') => {
            "must be an RFC 3339 date-time; its `+` offset arrived as a space, so encode it as %2B (2026-11-01T09:30:00%2B02:00) or use Z"
        }
        Some(time) if !time.ends_with(['Z', 'z']) && !time.contains(['+', '-']) => {
            "must be an RFC 3339 date-time with an offset: add Z for UTC (2026-11-01T09:30:00Z) or one such as +02:00"
        }
        _ => "must be an RFC 3339 date-time such as 2026-11-01T09:30:00Z, or a date such as 2026-11-01",
    }
}

/// Search text, in a query or a saved search: at most 500 characters, and no control
/// characters but whitespace (a NUL or a bell is a client's encoding slip, never words; tabs
/// and line breaks separate words like spaces).
pub(crate) fn check_search_text(field: &'static str, text: &str) -> Result<(), DomainError> {
    if text.chars().count() > MAX_TEXT {
        return Err(DomainError::new(
            field,
            format!("must be at most {MAX_TEXT} characters"),
        ));
    }
    if text.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return Err(DomainError::new(
            field,
            "must not contain control characters (such as %00 or \\u0000) other than tabs and line breaks; send the words only",
        ));
    }
    Ok(())
}

/// `GET /changes` parameters into a feed query.
pub(crate) fn changes_query(params: &Params) -> Result<ChangesQuery, ApiError> {
    let start = match params.one("after") {
        None => FeedStart::Oldest,
        Some("now") => FeedStart::Now,
        Some(cursor) => FeedStart::After(FeedCursor::decode(cursor)?),
    };
    let limit = match params.one("limit") {
        None => ChangesQuery::DEFAULT_LIMIT,
        Some(raw) => raw
            .parse::<usize>()
            .map_err(|_| {
                DomainError::new(
                    "limit",
                    format!(
                        "must be a whole number from 1 to {}",
                        ChangesQuery::MAX_LIMIT
                    ),
                )
            })
            .and_then(ChangesQuery::checked_limit)?,
    };
    Ok(ChangesQuery {
        start,
        limit,
        filter: filters::read_filter(params)?,
    })
}

/// `GET /jobs` parameters into a query.
pub(crate) fn job_query(params: &Params) -> Result<JobQuery, ApiError> {
    let filter = filters::read_filter(params)?;
    let (page, per_page) = params.page()?;
    let mut facets = params.list("facets", |name| {
        Facet::from_name(&name.to_ascii_lowercase())
            .ok_or_else(|| unknown_facet(name, &Facet::NAMES))
    })?;
    facets.sort();
    facets.dedup();
    let sort = match params.one("sort") {
        None => Sort::default(),
        Some(name) => Sort::parse(name).ok_or_else(|| ApiError::not_one_of("sort", name, SORTS))?,
    };
    if sort == Sort::Relevance && filter.q_words.is_empty() {
        return Err(DomainError::new(
            "sort",
            "is relevance, which ranks by the words of `q`: give `q` as well, or sort=posted_at",
        )
        .into());
    }
    Ok(JobQuery::new(filter)
        .sort(sort)
        .page(page)
        .per_page(per_page)
        .facets(facets))
}

/// The orders `sort` names.
const SORTS: &[&str] = &["posted_at", "relevance"];

/// `GET /jobs`' `fields` and `highlight`: how each job of the page is written.
pub(crate) fn job_shape(params: &Params) -> Result<JobShape, ApiError> {
    let names = params
        .list("fields", |name| Ok(name.to_owned()))
        .map_err(ApiError::from)?;
    let fields = match names.is_empty() {
        true => None,
        false => Some(match JobShape::keep(names.iter().map(String::as_str)) {
            Some(bits) => bits,
            None => {
                let unknown = names.iter().find(|n| !JOB_FIELDS.contains(&n.as_str()));
                let unknown = unknown.map_or("", String::as_str);
                return Err(ApiError::not_one_of("fields", unknown, JOB_FIELDS));
            }
        }),
    };
    let highlight = params
        .bool("highlight")?
        .unwrap_or(false)
        .then(|| params.one("q").unwrap_or_default().to_owned());
    Ok(JobShape { fields, highlight })
}

/// The error for a facet name an endpoint does not count by.
fn unknown_facet(name: &str, allowed: &[&str]) -> DomainError {
    DomainError::new(
        "facets",
        format!(
            "must be a comma list of facet names, any of: {}; `{name}` is not one",
            allowed.join(", ")
        ),
    )
}

/// `GET /companies` parameters into a query.
pub(crate) fn company_query(params: &Params) -> Result<CompanyQuery, ApiError> {
    let (page, per_page) = params.page()?;
    Ok(CompanyQuery {
        funding_stage: params
            .filter("funding_stage")
            .map(FundingStage::parse)
            .transpose()?,
        page,
        per_page,
        funding_stage_facet: !params
            .list("facets", |name| {
                let name = name.to_ascii_lowercase();
                COMPANY_FACETS
                    .contains(&name.as_str())
                    .then_some(())
                    .ok_or_else(|| unknown_facet(&name, COMPANY_FACETS))
            })?
            .is_empty(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(q: &str) -> Result<JobQuery, ApiError> {
        job_query(&Params::parse(Some(q), &JOB_QUERY)?)
    }

    #[test]
    fn lists_are_comma_separated_and_normalised() {
        let q = jobs("domain=AI,engineering&domain=ai&seniority=Senior").ok();
        let f = q.map(|q| q.filter).unwrap_or_default();
        let d: Vec<&str> = f.domains.iter().map(|t| t.as_str()).collect();
        assert_eq!(d, ["ai", "engineering"]);
        assert_eq!(f.seniority.len(), 1);
    }

    #[test]
    fn typos_and_bad_values_are_refused() {
        assert!(matches!(
            jobs("domains=ai"),
            Err(ApiError::UnknownParameter { .. })
        ));
        assert!(jobs("per_page=51").is_err());
        assert!(jobs("page=0").is_err());
        assert!(jobs("min_confidence=2").is_err());
        assert!(jobs("remote_only=yes").is_err());
        assert!(jobs("posted_after=yesterday").is_err());
        assert!(jobs("q=a&q=b").is_err());
    }

    #[test]
    fn search_text_with_control_characters_is_refused_by_name() {
        for query in ["q=rust%00", "company=acme%07corp", "q=%1B"] {
            match jobs(query) {
                Err(ApiError::InvalidParameter(e)) => {
                    assert!(e.reason.contains("control characters"), "{query}: {e:?}")
                }
                other => panic!("{query}: {other:?}"),
            }
        }
        assert!(jobs("q=r%C3%A9sum%C3%A9%20rust%09go%0Ad").is_ok());
    }

    /// A date-time that does not parse is answered with what to fix: an offset whose `+`
    /// arrived as a space, or no offset at all.
    #[test]
    fn a_date_time_that_does_not_parse_says_what_to_fix() {
        let reason = |q: &str| match jobs(q) {
            Err(ApiError::InvalidParameter(e)) => e.reason,
            other => panic!("{q}: {other:?}"),
        };
        assert!(reason("posted_after=2026-10-01T00:00:00+02:00").contains("%2B"));
        assert!(reason("posted_after=2026-10-01T00:00:00").contains("add Z"));
        assert!(reason("posted_after=yesterday").contains("such as 2026-11-01"));
        for offset in ["%2B02:00", "%2B0200"] {
            let q = jobs(&format!("posted_after=2026-10-01T00:00:00{offset}")).ok();
            assert_eq!(
                q.and_then(|q| q.filter.posted_after)
                    .map(|t| t.to_rfc3339()),
                Some("2026-09-30T22:00:00+00:00".to_owned()),
                "{offset}"
            );
        }
        assert!(reason("posted_after=2026-10-01T00:00:00%2B25:00").contains("RFC 3339"));
    }

    #[test]
    fn values_are_form_decoded_and_bytes_that_are_not_utf8_are_refused() {
        let q = jobs("q=caf%C3%A9+bar%2Bbaz&company=100%").ok();
        let words = q.map(|q| (q.filter.q_words, q.filter.company_words));
        assert_eq!(
            words,
            Some((
                vec!["bar".into(), "baz".into(), "café".into()],
                vec!["100".into()]
            ))
        );
        match jobs("domain=ai&q=%FF") {
            Err(ApiError::InvalidParameter(e)) => assert_eq!(e.field, "q"),
            other => panic!(
                "expected q to be refused, got {:?}",
                other.map(|q| q.filter)
            ),
        }
        match jobs("q%FF=python") {
            Err(ApiError::UnknownParameter { param, .. }) => assert_eq!(param, "q\u{fffd}"),
            other => panic!(
                "expected an unknown parameter, got {:?}",
                other.map(|q| q.filter)
            ),
        }
    }

    /// The instant a `posted_after` value is read as, in RFC 3339.
    fn posted_after(raw: &str) -> Option<String> {
        let query = jobs(&format!("posted_after={raw}")).ok()?;
        query.filter.posted_after.map(|t| t.to_rfc3339())
    }

    #[test]
    fn instants_outside_the_years_rfc3339_writes_are_moved_inside_them() {
        for (raw, echoed) in [
            (
                "9999-12-31T23:59:59-01:00",
                "9999-12-31T23:59:59.999999999+00:00",
            ),
            ("0000-01-01T00:00:00%2B01:00", "0000-01-01T00:00:00+00:00"),
            // chrono reads a bare date's year with a sign and any number of digits.
            ("-0001-01-01", "0000-01-01T00:00:00+00:00"),
            ("%2B10000-01-01", "9999-12-31T23:59:59.999999999+00:00"),
        ] {
            assert_eq!(posted_after(raw).as_deref(), Some(echoed), "{raw}");
        }
    }

    /// chrono reads `:60` in any minute as a leap second; it is echoed as the next minute's
    /// start, which every date-time parser reads.
    #[test]
    fn a_leap_second_is_read_as_the_start_of_the_next_minute() {
        for (raw, echoed) in [
            ("2026-10-01T00:00:60Z", "2026-10-01T00:01:00+00:00"),
            ("2016-12-31T23:59:60.5Z", "2017-01-01T00:00:00.500+00:00"),
            ("2026-10-01T01:59:60%2B02:00", "2026-10-01T00:00:00+00:00"),
            (
                "9999-12-31T23:59:60Z",
                "9999-12-31T23:59:59.999999999+00:00",
            ),
        ] {
            assert_eq!(posted_after(raw).as_deref(), Some(echoed), "{raw}");
        }
    }

    #[test]
    fn bare_dates_mean_midnight_utc() {
        assert_eq!(
            posted_after("2026-10-01").as_deref(),
            Some("2026-10-01T00:00:00+00:00")
        );
    }
}
