//! Cross-origin calls from browsers (the Fetch standard's CORS protocol), off unless origins
//! are configured ([`ApiConfig::cors_origins`](super::ApiConfig::cors_origins)).
//!
//! Keys travel in `X-API-Key` or `Authorization`, set by the page's script, never in cookies:
//! so no answer ever says `Access-Control-Allow-Credentials`, and `*` is safe to offer. The
//! admin API, on its own listener, answers no origin at all.

use http::header::{
    HeaderMap, HeaderValue, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE,
    ACCESS_CONTROL_REQUEST_METHOD, ALLOW, ORIGIN, VARY,
};
use http::Method;

use crate::domain::DomainError;

/// The request headers a page's script may send: REST's, and those of MCP's streamable HTTP
/// (the session, the protocol version, the event to resume a stream after, and the method
/// and name headers of protocol 2026-07-28).
const ALLOWED_HEADERS: &str =
    "Authorization, X-API-Key, Content-Type, If-None-Match, Idempotency-Key, X-Request-Id, \
     Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name";
/// The answer headers a page's script may read besides the CORS-safelisted ones: MCP's
/// session id among them, which a client must send back.
const EXPOSED_HEADERS: &str = "ETag, Location, Retry-After, X-Request-Id, X-RateLimit-Limit, \
     X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Idempotent-Replayed, \
     Allow, Mcp-Session-Id, MCP-Protocol-Version";
/// How long a browser may keep a preflight's answer: two hours, the most Chromium keeps.
const MAX_AGE_SECONDS: &str = "7200";

/// An origin allowed to call the API from a browser: `*` (any), or a scheme, host and
/// optional port as browsers send them in `Origin` (`https://app.example.com`,
/// `http://localhost:5173`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorsOrigin(String);

impl CorsOrigin {
    /// Reads an origin: `*`, or `http`/`https`, `://`, a host and an optional port, with no
    /// path (a trailing `/` is dropped), in lowercase as browsers send it.
    pub fn parse(value: &str) -> Result<CorsOrigin, DomainError> {
        let value = value.trim();
        if value == "*" {
            return Ok(CorsOrigin(value.to_owned()));
        }
        let invalid = |why: &str| DomainError::new("cors_origin", why.to_owned());
        let lower = value.trim_end_matches('/').to_ascii_lowercase();
        let Some((scheme, authority)) = lower.split_once("://") else {
            return Err(invalid(
                "must be `*` or an origin such as `https://app.example.com`",
            ));
        };
        if scheme != "http" && scheme != "https" {
            return Err(invalid("must use the http or https scheme"));
        }
        let sound = !authority.is_empty()
            && authority
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
        if !sound {
            return Err(invalid(
                "must be a scheme, a host and an optional port, without a path, query or user",
            ));
        }
        Ok(CorsOrigin(lower))
    }

    /// `*`: any origin.
    pub fn any() -> CorsOrigin {
        CorsOrigin("*".to_owned())
    }

    /// The origin as `Origin` carries it, or `*`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The CORS policy in force: off, any origin, or these.
#[derive(Debug)]
pub(crate) struct Cors {
    any: bool,
    origins: Vec<HeaderValue>,
}

impl Cors {
    pub(crate) fn new(origins: &[CorsOrigin]) -> Cors {
        Cors {
            any: origins.iter().any(|o| o.0 == "*"),
            origins: origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(&o.0).ok())
                .collect(),
        }
    }

    /// Adds the CORS headers an answer needs: none when off or for a request from an origin
    /// not allowed (the browser then keeps the answer from the page); the allowed methods and
    /// headers for a preflight (`OPTIONS` with `Access-Control-Request-Method`); the headers
    /// a script may read otherwise.
    pub(crate) fn apply(&self, request: &http::request::Parts, h: &mut HeaderMap) {
        if self.origins.is_empty() {
            return;
        }
        if !self.any {
            // The answer depends on `Origin`, whether or not this one is allowed.
            h.append(VARY, HeaderValue::from_static("origin"));
        }
        let Some(origin) = request.headers.get(ORIGIN) else {
            return;
        };
        let allow_origin = if self.any {
            HeaderValue::from_static("*")
        } else if self.origins.contains(origin) {
            origin.clone()
        } else {
            return;
        };
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, allow_origin);
        let preflight = request.method == Method::OPTIONS
            && request.headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD);
        if preflight {
            if let Some(methods) = h.get(ALLOW).cloned() {
                h.insert(ACCESS_CONTROL_ALLOW_METHODS, methods);
            }
            h.insert(
                ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(ALLOWED_HEADERS),
            );
            h.insert(
                ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static(MAX_AGE_SECONDS),
            );
        } else {
            h.insert(
                ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static(EXPOSED_HEADERS),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_as_browsers_send_them() {
        assert_eq!(
            CorsOrigin::parse("https://App.Example.com/")
                .unwrap()
                .as_str(),
            "https://app.example.com"
        );
        assert_eq!(
            CorsOrigin::parse("http://localhost:5173").unwrap().as_str(),
            "http://localhost:5173"
        );
        assert_eq!(CorsOrigin::parse(" * ").unwrap(), CorsOrigin::any());
        for bad in [
            "",
            "app.example.com",
            "ftp://example.com",
            "https://",
            "https://example.com/path",
            "https://user@example.com",
            "https://example.com?x",
        ] {
            assert!(CorsOrigin::parse(bad).is_err(), "{bad}");
        }
    }
}
