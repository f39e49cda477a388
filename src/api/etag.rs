//! Entity tags of answers, and `If-None-Match` (RFC 9110, 8.8.3 and 13.1.2).
//!
//! A tag names what was asked and the version of what was answered: a hash of the
//! representation, the route and the query as sent ([`Asked`]), then the answer's
//! [`Version`], which the service gives every read (a hash of what the answer is made of: each
//! record's id and `updated_at`, counts, facets, warnings). So a tag is known before anything
//! is rendered, changes exactly when the answer would, and a tag a client sends back gives
//! the version it holds, which the service compares with the answer's. Both hashes are
//! SipHash with fixed keys, the same in every process of one build, so replicas behind one
//! address agree on tags.
//!
//! Each content coding is its own representation, so its tag is the answer's tag with the
//! coding's name appended (`"…-br"`), as RFC 9110 (8.8.3.3) shows. `If-None-Match` compares
//! tags without that suffix: a client that holds the answer in any coding holds the answer.

use std::hash::{DefaultHasher, Hash, Hasher};

use http::header::{HeaderMap, HeaderValue, IF_NONE_MATCH};

use super::encoding::Coding;
use crate::service::{Held, Version};

/// Changes with the wire format of answers: bump it when a view gains or loses a field, so
/// that tags of the old form no longer match. The crate's version changes it too.
const REPRESENTATION: &str = concat!("v1:", env!("CARGO_PKG_VERSION"));

/// Hex digits of a tag: those of what was asked, then those of the version.
const TAG_HEX: usize = 32;

/// What a request asks for, as far as its answer's tag goes: the representation, the route
/// and the query as sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Asked(u64);

impl Asked {
    /// A request of `route` with `query`.
    pub(crate) fn new(route: &str, query: Option<&str>) -> Self {
        let mut h = DefaultHasher::new();
        REPRESENTATION.hash(&mut h);
        route.hash(&mut h);
        query.hash(&mut h);
        Self(h.finish())
    }

    /// The tag of this request's answer in `version`.
    pub(crate) fn tag(self, version: Version) -> ETag {
        ETag {
            asked: self,
            version,
        }
    }

    /// The versions of this request's answer that the request's `If-None-Match` names: any
    /// for `*`; the versions of the tags it lists, in any coding, weak or strong (RFC 9110 has
    /// `If-None-Match` compare weakly), that were tags of this same request (perhaps none);
    /// nothing without the header. An item that is not an entity tag is ignored, so a
    /// malformed field never matches by mistake; the worst it costs is a full answer.
    pub(crate) fn held(self, headers: &HeaderMap) -> Held {
        if !headers.contains_key(IF_NONE_MATCH) {
            return Held::Nothing;
        }
        let mut versions = Vec::new();
        for field in headers.get_all(IF_NONE_MATCH) {
            for item in list_items(field.as_bytes()) {
                if item == b"*" {
                    return Held::Any;
                }
                versions.extend(self.version_in(item));
            }
        }
        Held::Versions(versions)
    }

    /// The version an entity tag names, if it is a tag of this request.
    fn version_in(self, item: &[u8]) -> Option<Version> {
        let item = item.strip_prefix(b"W/").unwrap_or(item);
        let opaque = item.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        let base = ["-zstd", "-br", "-gzip"]
            .iter()
            .find_map(|s| opaque.strip_suffix(s.as_bytes()))
            .unwrap_or(opaque);
        if base.len() != TAG_HEX {
            return None;
        }
        let (asked, version) = base.split_at(TAG_HEX / 2);
        if parse_hex(asked)? != self.0 {
            return None;
        }
        Some(Version::from_bits(parse_hex(version)?))
    }
}

/// An answer's entity tag, before any coding suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ETag {
    asked: Asked,
    version: Version,
}

impl ETag {
    /// An answer known only by its bytes (the usage report, the OpenAPI document): small or
    /// made once, so hashing them costs little.
    pub(crate) fn of_bytes(route: &str, body: &[u8]) -> ETag {
        let mut h = DefaultHasher::new();
        body.hash(&mut h);
        Asked::new(route, None).tag(Version::from_bits(h.finish()))
    }

    /// The `ETag` header of this answer in `coding` (`None`: as it is).
    pub(crate) fn header(self, coding: Option<Coding>) -> HeaderValue {
        let mut hex = [0u8; TAG_HEX];
        self.hex(&mut hex);
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

    /// Whether a request's `If-None-Match` names this answer ([`Asked::held`]).
    pub(crate) fn matched_by(self, headers: &HeaderMap) -> bool {
        self.asked.held(headers).holds(self.version)
    }

    fn hex(self, out: &mut [u8; TAG_HEX]) {
        let (asked, version) = out.split_at_mut(TAG_HEX / 2);
        hex_of(self.asked.0, asked);
        hex_of(self.version.to_bits(), version);
    }
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

/// Writes `n` as 16 lower-case hex digits.
fn hex_of(n: u64, out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, slot) in out.iter_mut().take(16).enumerate() {
        *slot = DIGITS[((n >> (60 - 4 * i)) & 0xf) as usize];
    }
}

/// Reads 16 lower-case hex digits, as [`hex_of`] writes them.
fn parse_hex(digits: &[u8]) -> Option<u64> {
    if digits.len() != 16 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let digit = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(n << 4 | u64::from(digit))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inm(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        h
    }

    const TAG: ETag = ETag {
        asked: Asked(0x0123_4567_89ab_cdef),
        version: Version::from_bits(0xfedc_ba98_7654_3210),
    };

    #[test]
    fn the_header_is_a_quoted_tag_with_the_coding_appended() {
        assert_eq!(TAG.header(None), "\"0123456789abcdeffedcba9876543210\"");
        assert_eq!(
            TAG.header(Some(Coding::Brotli)),
            "\"0123456789abcdeffedcba9876543210-br\""
        );
    }

    #[test]
    fn if_none_match_compares_weakly_in_any_coding() {
        for matching in [
            "\"0123456789abcdeffedcba9876543210\"",
            "W/\"0123456789abcdeffedcba9876543210\"",
            "\"0123456789abcdeffedcba9876543210-gzip\"",
            "\"0123456789abcdeffedcba9876543210-zstd\"",
            "\"other\", W/\"0123456789abcdeffedcba9876543210-br\"",
            "\"with,comma\",\"0123456789abcdeffedcba9876543210\"",
            "*",
        ] {
            assert!(TAG.matched_by(&inm(matching)), "{matching}");
        }
    }

    #[test]
    fn other_or_malformed_tags_do_not_match() {
        for other in [
            "\"0123456789abcdeffedcba9876543211\"",
            "\"1123456789abcdeffedcba9876543210\"",
            "\"0123456789abcdef\"",
            "\"0123456789ABCDEFFEDCBA9876543210\"",
            "0123456789abcdeffedcba9876543210",
            "\"0123456789abcdeffedcba9876543210",
            "w/\"0123456789abcdeffedcba9876543210\"",
            "\"0123456789abcdeffedcba9876543210-deflate\"",
            "\"\"",
            ",,,",
            "\"*\"",
        ] {
            assert!(!TAG.matched_by(&inm(other)), "{other}");
        }
        assert!(!TAG.matched_by(&HeaderMap::new()));
    }

    #[test]
    fn a_tag_gives_the_version_it_names_only_to_the_request_it_answered() {
        let asked = Asked::new("jobs", Some("q=rust"));
        let version = Version::from_bits(42);
        let header = asked.tag(version).header(Some(Coding::Gzip));
        let held = asked.held(&inm(header.to_str().unwrap()));
        assert_eq!(held, Held::Versions(vec![version]));
        let other = Asked::new("jobs", Some("q=go"));
        assert_eq!(
            other.held(&inm(header.to_str().unwrap())),
            Held::Versions(Vec::new())
        );
        assert_eq!(asked.held(&HeaderMap::new()), Held::Nothing);
        assert_eq!(asked.held(&inm("\"x\", *")), Held::Any);
    }

    #[test]
    fn every_field_of_the_header_counts() {
        let mut h = inm("\"nope\"");
        h.append(
            IF_NONE_MATCH,
            HeaderValue::from_static("\"0123456789abcdeffedcba9876543210\""),
        );
        assert!(TAG.matched_by(&h));
    }
}
