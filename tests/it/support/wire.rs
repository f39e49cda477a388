//! Requests and answers: the HTTP client of the tests, how a key travels, and an answer with
//! its body read as JSON, whether it came over a socket or from `Api::handle`.

use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::Value;

/// The HTTP client of the tests: no redirects, no proxy, and a 60 s bound per request, so a
/// hang fails the test instead of blocking it (no answer is expected to be slow).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("an HTTP client")
}

/// How the key travels.
#[derive(Clone, Copy, Debug)]
pub enum Auth<'a> {
    None,
    XApiKey(&'a str),
    Bearer(&'a str),
    /// A raw `Authorization` header value.
    Authorization(&'a str),
}

impl Auth<'_> {
    /// The header that carries the key, if any.
    pub fn header(self) -> Option<(&'static str, String)> {
        match self {
            Auth::None => None,
            Auth::XApiKey(k) => Some(("x-api-key", k.to_owned())),
            Auth::Bearer(k) => Some(("authorization", format!("Bearer {k}"))),
            Auth::Authorization(v) => Some(("authorization", v.to_owned())),
        }
    }
}

/// An answer, body parsed as JSON when it is JSON (`Null` otherwise).
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    pub body: Value,
}

impl Resp {
    /// An answer from its parts.
    pub fn new(status: StatusCode, headers: HeaderMap, text: String) -> Self {
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Self {
            status,
            headers,
            text,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// A header that must be there and hold a whole number.
    #[track_caller]
    pub fn header_u64(&self, name: &str) -> u64 {
        self.header(name)
            .unwrap_or_else(|| panic!("header {name} missing: {:?} {}", self.headers, self.text))
            .parse()
            .unwrap_or_else(|_| panic!("header {name} is not an integer: {:?}", self.headers))
    }

    /// The problem document's `code`.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// The problem document's `param`.
    pub fn param(&self) -> &str {
        self.body["param"].as_str().unwrap_or("")
    }

    /// The ids in a list envelope's `data`, in order.
    pub fn ids(&self) -> Vec<String> {
        self.body["data"]
            .as_array()
            .expect("a list envelope with data")
            .iter()
            .map(|j| j["id"].as_str().expect("an id").to_owned())
            .collect()
    }

    /// The names of an object's fields, sorted; panics unless `value` is an object.
    pub fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys
    }

    pub fn total(&self) -> u64 {
        self.body["pagination"]["total"]
            .as_u64()
            .expect("pagination.total")
    }

    /// Asserts an RFC 9457 problem with this status, code and (when given) param.
    #[track_caller]
    pub fn assert_problem(&self, status: u16, code: &str, param: Option<&str>) {
        assert_eq!(self.status.as_u16(), status, "status; body: {}", self.text);
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "content type; body: {}",
            self.text
        );
        assert_eq!(self.code(), code, "code; body: {}", self.text);
        assert_eq!(self.body["status"].as_u64(), Some(u64::from(status)));
        for field in ["type", "title", "detail", "request_id"] {
            assert!(
                self.body[field].as_str().is_some_and(|s| !s.is_empty()),
                "problem field {field} missing in {}",
                self.text
            );
        }
        if let Some(param) = param {
            assert_eq!(self.param(), param, "param; body: {}", self.text);
        }
    }

    /// Asserts a `429 quota_exceeded` problem with a positive `Retry-After` that the body
    /// repeats, and the quota headers with nothing remaining; returns `Retry-After`.
    #[track_caller]
    pub fn assert_quota_exceeded(&self, quota: u64) -> u64 {
        assert_eq!(self.status, 429, "{}", self.text);
        assert_eq!(self.code(), "quota_exceeded", "{}", self.text);
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{}",
            self.text
        );
        assert_eq!(self.body["status"].as_u64(), Some(429), "{}", self.text);
        let retry_after = self.header_u64("retry-after");
        assert!(retry_after > 0, "Retry-After must be positive");
        assert_eq!(
            self.body["retry_after"].as_u64(),
            Some(retry_after),
            "the body repeats Retry-After: {}",
            self.text
        );
        assert_eq!(self.header_u64("x-ratelimit-limit"), quota);
        assert_eq!(self.header_u64("x-ratelimit-remaining"), 0);
        retry_after
    }
}
