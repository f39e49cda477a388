//! Entity tags of answers, and `If-None-Match` (RFC 9110, 8.8.3 and 13.1.2).
//!
//! A tag is a hash of what an answer is made of, not of its bytes: the route, the query as
//! sent, and for each record its id and `updated_at` (the service gives every change of a
//! record a new `updated_at`, which is also what the render cache keys on). So a tag is known
//! before anything is rendered or counted, costs a hash of a few hundred bytes, and changes
//! exactly when the answer would. The hash is SipHash with fixed keys, the same in every
//! process of one build, so replicas behind one address agree on tags.
//!
//! Each content coding is its own representation, so its tag is the answer's tag with the
//! coding's name appended (`"…-br"`), as RFC 9110 (8.8.3.3) shows. `If-None-Match` compares
//! tags without that suffix: a client that holds the answer in any coding holds the answer.

use std::hash::{DefaultHasher, Hash, Hasher};

use http::header::{HeaderMap, HeaderValue, IF_NONE_MATCH};

use super::encoding::Coding;
use crate::service::{CompanyDetail, CompanyPage, JobDetail, JobPage};

/// Changes with the wire format of answers: bump it when a view gains or loses a field, so
/// that tags of the old form no longer match. The crate's version changes it too.
const REPRESENTATION: &str = concat!("v1:", env!("CARGO_PKG_VERSION"));

/// An answer's entity tag, before any coding suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ETag(u64);

/// Builds a tag from the parts of an answer.
struct Tagger(DefaultHasher);

impl Tagger {
    fn new(route: &str, query: Option<&str>) -> Self {
        let mut h = DefaultHasher::new();
        REPRESENTATION.hash(&mut h);
        route.hash(&mut h);
        query.hash(&mut h);
        Self(h)
    }

    fn add(mut self, part: impl Hash) -> Self {
        part.hash(&mut self.0);
        self
    }

    fn finish(self) -> ETag {
        ETag(self.0.finish())
    }
}

impl ETag {
    /// A page of `GET /jobs`: its query (filters, page and size) and what it found.
    pub(crate) fn job_page(query: Option<&str>, page: &JobPage) -> ETag {
        let mut t = Tagger::new("jobs", query).add(page.total);
        for job in &page.jobs {
            t = t.add((job.id, job.updated_at));
        }
        // Counts over the whole result and the known values a warning names can change
        // while the page stays the same, and they are part of the answer.
        t.add(&page.facets).add(&page.warnings).finish()
    }

    /// `GET /jobs/{id}`: the job and its company.
    pub(crate) fn job_detail(detail: &JobDetail) -> ETag {
        Tagger::new("job", None)
            .add((detail.job.id, detail.job.updated_at))
            .add(detail.company.as_ref().map(|c| (c.id, c.updated_at)))
            .finish()
    }

    /// A page of `GET /companies`.
    pub(crate) fn company_page(query: Option<&str>, page: &CompanyPage) -> ETag {
        let mut t = Tagger::new("companies", query).add(page.total);
        for summary in &page.companies {
            let c = &summary.company;
            t = t.add((c.id, c.updated_at, summary.active_jobs_total));
        }
        t.add(&page.funding_stage_counts)
            .add(&page.warnings)
            .finish()
    }

    /// `GET /companies/{id}`: the company, its count of active jobs and the jobs listed.
    pub(crate) fn company_detail(detail: &CompanyDetail) -> ETag {
        let c = &detail.company;
        let mut t = Tagger::new("company", None)
            .add((c.id, c.updated_at))
            .add(detail.active_jobs_total);
        for job in &detail.active_jobs {
            t = t.add((job.id, job.updated_at));
        }
        t.finish()
    }

    /// An answer known only by its bytes (the usage report, the OpenAPI document): small or
    /// made once, so hashing them costs little.
    pub(crate) fn of_bytes(route: &str, body: &[u8]) -> ETag {
        Tagger::new(route, None).add(body).finish()
    }

    /// The `ETag` header of this answer in `coding` (`None`: as it is).
    pub(crate) fn header(self, coding: Option<Coding>) -> HeaderValue {
        let mut hex = [0u8; 16];
        hex_of(self.0, &mut hex);
        let suffix = coding.map_or("", |c| match c {
            Coding::Zstd => "-zstd",
            Coding::Brotli => "-br",
            Coding::Gzip => "-gzip",
        });
        let mut value = Vec::with_capacity(2 + hex.len() + suffix.len());
        value.push(b'"');
        value.extend_from_slice(&hex);
        value.extend_from_slice(suffix.as_bytes());
        value.push(b'"');
        HeaderValue::from_maybe_shared(bytes::Bytes::from(value))
            .unwrap_or_else(|_| HeaderValue::from_static("\"\""))
    }

    /// Whether a request's `If-None-Match` names this answer: `*`, or a list holding its tag
    /// in any coding, weak or strong (RFC 9110 has `If-None-Match` compare weakly). An item
    /// that is not an entity tag is ignored, so a malformed field never matches by mistake;
    /// the worst it costs is a full answer.
    pub(crate) fn matched_by(self, headers: &HeaderMap) -> bool {
        let mut hex = [0u8; 16];
        hex_of(self.0, &mut hex);
        headers.get_all(IF_NONE_MATCH).iter().any(|field| {
            list_items(field.as_bytes()).any(|item| {
                if item == b"*" {
                    return true;
                }
                let item = item.strip_prefix(b"W/").unwrap_or(item);
                let Some(opaque) = item.strip_prefix(b"\"").and_then(|i| i.strip_suffix(b"\""))
                else {
                    return false;
                };
                let base = ["-zstd", "-br", "-gzip"]
                    .iter()
                    .find_map(|s| opaque.strip_suffix(s.as_bytes()))
                    .unwrap_or(opaque);
                base == hex
            })
        })
    }
}

/// Whether a request asks conditionally with `If-None-Match`.
pub(crate) fn is_conditional(headers: &HeaderMap) -> bool {
    headers.contains_key(IF_NONE_MATCH)
}

/// The items of a comma-separated list of entity tags, trimmed; a comma inside quotes (which
/// an entity tag may hold) does not split.
fn list_items(field: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = field;
    std::iter::from_fn(move || loop {
        if rest.is_empty() {
            return None;
        }
        let mut quoted = false;
        let end = rest
            .iter()
            .position(|&b| {
                if b == b'"' {
                    quoted = !quoted;
                }
                b == b',' && !quoted
            })
            .unwrap_or(rest.len());
        let item = rest[..end].trim_ascii();
        rest = rest.get(end + 1..).unwrap_or_default();
        if !item.is_empty() {
            return Some(item);
        }
    })
}

fn hex_of(n: u64, out: &mut [u8; 16]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = DIGITS[((n >> (60 - 4 * i)) & 0xf) as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inm(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        h
    }

    const TAG: ETag = ETag(0x0123_4567_89ab_cdef);

    #[test]
    fn the_header_is_a_quoted_tag_with_the_coding_appended() {
        assert_eq!(TAG.header(None), "\"0123456789abcdef\"");
        assert_eq!(TAG.header(Some(Coding::Brotli)), "\"0123456789abcdef-br\"");
    }

    #[test]
    fn if_none_match_compares_weakly_in_any_coding() {
        for matching in [
            "\"0123456789abcdef\"",
            "W/\"0123456789abcdef\"",
            "\"0123456789abcdef-gzip\"",
            "\"0123456789abcdef-zstd\"",
            "\"other\", W/\"0123456789abcdef-br\"",
            "\"with,comma\",\"0123456789abcdef\"",
            "*",
        ] {
            assert!(TAG.matched_by(&inm(matching)), "{matching}");
        }
    }

    #[test]
    fn other_or_malformed_tags_do_not_match() {
        for other in [
            "\"0123456789abcdee\"",
            "0123456789abcdef",
            "\"0123456789abcdef",
            "w/\"0123456789abcdef\"",
            "\"0123456789abcdef-deflate\"",
            "\"\"",
            ",,,",
            "\"*\"",
        ] {
            assert!(!TAG.matched_by(&inm(other)), "{other}");
        }
        assert!(!TAG.matched_by(&HeaderMap::new()));
    }

    #[test]
    fn every_field_of_the_header_counts() {
        let mut h = inm("\"nope\"");
        h.append(
            IF_NONE_MATCH,
            HeaderValue::from_static("\"0123456789abcdef\""),
        );
        assert!(TAG.matched_by(&h));
    }
}
