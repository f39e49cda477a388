//! Property-based fuzzing of everything that parses client input, with modest case counts so it
//! runs in CI.
//!
//! The HTTP layer is called without a socket: `job_listings::api::Api` over a service on a
//! `MemoryStore` with a small demo dataset and keys whose quota cannot run out, driven with
//! `Api::handle(http::Request<Bytes>)` (and `Api::handle_body` for the body limit). Whatever the
//! query string, body, content type, key header or path segment:
//! - nothing panics and nothing is a 5xx;
//! - every non-2xx answer is `application/problem+json` with a string `code` and an integer
//!   `status` equal to the HTTP status;
//! - every 2xx list answer is the documented envelope.
//!
//! The domain parsers are fuzzed directly: `CallbackUrl::parse` with the default
//! `CallbackPolicy` (whatever it accepts is https and, for an IP literal, in none of the
//! special-purpose blocks of the IANA registries, written out here), `ApiKey::parse` (a key is
//! accepted exactly when it has the documented form and CRC-32 checksum, worked out here; a
//! one-character typo of a real key is always refused) and JSON Lines import lines as the import
//! reads them (`parse_record`): arbitrary text never panics, lines of the documented form are
//! accepted as written, and a valid line spoilt one way is refused, naming what is wrong.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{Method, Request, Response};
use http_body_util::Full;
use job_listings::api::{COMPANY_PARAMS, JOB_PARAMS};
use job_listings::domain::jsonl::parse_record;
use job_listings::domain::{ApiKey, CallbackUrl, Job};
use job_listings::webhooks::CallbackPolicy;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::fixture::{check_answer, Fixture};
use crate::support::{scaled, TestApp};

// ---------------------------------------------------------------------------------------------
// Fixture: one API over a memory store, shared by every property
// ---------------------------------------------------------------------------------------------

/// The API of every property: its agent-pro key holds 20 subscriptions, whose ids the path
/// segments use. Where an answer depends on what a key holds (creating subscriptions), each
/// case takes a key of its own holding a known number ([`take_key_holding`]), so it starts
/// from a known state whatever the cases before it did. A runtime with a worker of its own runs the
/// service's background tasks between the properties' calls.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        Fixture::build(rt, 20)
    })
}

/// The most subscriptions a key may hold, as the fixture's service is configured.
fn webhook_limit() -> usize {
    fixture().api.service().config().max_webhooks_per_key
}

/// Answers one request with `Api::handle`.
fn send(req: Request<Bytes>) -> Response<Bytes> {
    fixture().send(req)
}

/// A request, or `None` when the generated URI is not one `http` can carry.
fn build(
    method: Method,
    uri: &str,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
) -> Option<Request<Bytes>> {
    let mut req = Request::builder().method(method).uri(uri).body(body).ok()?;
    for (name, value) in headers {
        req.headers_mut().append(name, value);
    }
    Some(req)
}

fn x_api_key(key: &str) -> (HeaderName, HeaderValue) {
    (
        HeaderName::from_static("x-api-key"),
        HeaderValue::from_str(key).expect("a key is a header value"),
    )
}

/// The checks every answer must pass ([`check_answer`]); returns the body as JSON (`Null`
/// when empty).
fn check(resp: &Response<Bytes>, what: &str) -> Result<Value, TestCaseError> {
    check_answer(resp).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))
}

/// A list answer is `{data, pagination, links, meta}` with consistent numbers.
fn check_envelope(body: &Value, path: &str) -> Result<(), TestCaseError> {
    let obj = body.as_object();
    prop_assert!(obj.is_some(), "an object: {body}");
    for key in ["data", "pagination", "links", "meta"] {
        prop_assert!(
            body.get(key).is_some(),
            "envelope key {key} missing: {body}"
        );
    }
    let data = body["data"].as_array();
    prop_assert!(data.is_some(), "data is an array");
    let p = &body["pagination"];
    let (page, per_page, total, total_pages) = (
        p["page"].as_u64(),
        p["per_page"].as_u64(),
        p["total"].as_u64(),
        p["total_pages"].as_u64(),
    );
    let (Some(page), Some(per_page), Some(total), Some(total_pages)) =
        (page, per_page, total, total_pages)
    else {
        return Err(TestCaseError::fail(format!("pagination numbers: {p}")));
    };
    prop_assert!((1..=50).contains(&per_page));
    prop_assert!(page >= 1);
    prop_assert!(data.map_or(0, Vec::len) as u64 <= per_page);
    prop_assert_eq!(total_pages, total.div_ceil(per_page));
    for link in ["next", "prev"] {
        let l = &body["links"][link];
        prop_assert!(
            l.is_null() || l.as_str().is_some_and(|s| s.starts_with(path)),
            "links.{link}: {l}"
        );
    }
    prop_assert!(body["meta"]["filters"].is_object(), "meta.filters: {body}");
    Ok(())
}

/// Modest case counts at default settings, scaled by `PROPTEST_CASES` for a long run
/// ([`scaled`]); failures are reported, not written next to the sources.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: scaled(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Percent-encodes every byte that is not unreserved, so the text always fits in a URI.
fn pct(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

const VALUES: &[&str] = &[
    "",
    " ",
    "0",
    "1",
    "-1",
    "+5",
    "20",
    "50",
    "51",
    "1000000",
    "1000001",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "999999999999999999999999999999",
    "1e309",
    "-1e309",
    "1e-400",
    "NaN",
    "inf",
    "-0",
    "0.5",
    "0.30000000000000004",
    "1.0000000000000002",
    "true",
    "false",
    "TRUE",
    "yes",
    "2026-10-01",
    "2026-02-30",
    "2026-10-01T09:30:00Z",
    "2026-10-01T09:30:00+14:00",
    "2026-06-30T23:59:60Z",
    "9999-12-31T23:59:59Z",
    "9999-12-31T23:59:59-23:59",
    "0000-01-01T00:00:00+23:59",
    "+275760-09-13T00:00:00Z",
    "1677-09-21T00:12:43Z",
    "ai",
    "ai,engineering",
    "AI,,Engineering,",
    ",,,",
    "not a tag",
    "senior,staff",
    "series_a",
    "Series A",
    "series-a",
    "a/b",
    "rust",
    "node.js",
    "C++",
    "Zürich",
    "ﬁ",
    "İ",
    "\u{200b}",
    "🦀",
    "\u{0}",
    "%",
    "%%",
    "%zz",
];

/// A query value, already encoded.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(VALUES).prop_map(|s| pct(s.as_bytes())),
        2 => (1_u32..60).prop_map(|n| n.to_string()),
        2 => "\\PC{0,24}".prop_map(|s| pct(s.as_bytes())),
        2 => prop::collection::vec(any::<u8>(), 0..24).prop_map(|b| pct(&b)),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| pct(n.to_string().as_bytes())),
        1 => any::<f64>().prop_map(|f| pct(f.to_string().as_bytes())),
        // Raw text that may hold broken escapes and `+`.
        1 => "[A-Za-z0-9%+._~-]{0,16}",
        // Around the 500-character limit on free text.
        1 => (495_usize..505).prop_map(|n| "a".repeat(n)),
        1 => (495_usize..505).prop_map(|n| pct("é".repeat(n).as_bytes())),
    ]
}

/// Names no endpoint takes, some of them near one that it does.
const WRONG_NAMES: &[&str] = &[
    "domains", "Page", "per-page", "limit", "offset", "", "q ", "api_key",
];

/// Every parameter name of either list endpoint, and the wrong ones.
fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = JOB_PARAMS.to_vec();
    for name in COMPANY_PARAMS.iter().chain(WRONG_NAMES) {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
}

/// A query parameter name, already encoded: mostly one the endpoint takes.
fn name(allowed: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        16 => prop::sample::select(allowed).prop_map(|s| pct(s.as_bytes())),
        1 => prop::sample::select(names()).prop_map(|s| pct(s.as_bytes())),
        1 => "\\PC{0,12}".prop_map(|s| pct(s.as_bytes())),
        1 => prop::collection::vec(any::<u8>(), 0..8).prop_map(|b| pct(&b)),
    ]
}

/// A whole query string: pairs (some without `=`), joined by `&` (sometimes doubled).
fn query(allowed: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        prop::collection::vec((name(allowed), prop::option::weighted(0.95, value())), 0..5),
        prop::sample::select(&["&", "&", "&", "&&", "&amp;"][..]),
    )
        .prop_map(|(pairs, sep)| {
            pairs
                .into_iter()
                .map(|(n, v)| match v {
                    Some(v) => format!("{n}={v}"),
                    None => n,
                })
                .collect::<Vec<_>>()
                .join(sep)
        })
}

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "\\PC{0,20}".prop_map(Value::String),
        prop::sample::select(VALUES).prop_map(|s| Value::String(s.to_owned())),
        url().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(field_name(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const FIELDS: &[&str] = &[
    "callback_url",
    "domain_filters",
    "remote_only",
    "seniority",
    "q",
    "company",
    "min_confidence",
    "secret",
    "id",
    "",
];

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(FIELDS).prop_map(str::to_owned),
        1 => "\\PC{0,10}",
    ]
}

const HOSTS: &[&str] = &[
    "hooks.example.com",
    "example.com.",
    "localhost",
    "LOCALHOST.",
    "api.localhost",
    "printer.local",
    "intranet",
    "metadata.google.internal",
    "127.0.0.1",
    "127.1",
    "0177.0.0.1",
    "0x7f.1",
    "2130706433",
    "10.0.0.1",
    "100.64.0.1",
    "169.254.169.254",
    "192.168.1.1",
    "0.0.0.0",
    "255.255.255.255",
    "93.184.216.34",
    "[::1]",
    "[::]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",
    "[fe80::1]",
    "[fd00::1]",
    "[64:ff9b::a00:1]",
    "[2001:db8::1]",
    "[2606:4700::1111]",
    "１２７.０.０.１",
    "xn--nxasmq6b.example",
    "ünïcode.example",
    "",
    "user:pw@example.com",
    "example.com:0",
    "example.com:65535",
    "example.com:65536",
];

/// URL-ish text: schemes, hosts (names, IP literals in many spellings), ports, paths.
fn url() -> impl Strategy<Value = String> {
    let host = prop_oneof![
        4 => prop::sample::select(HOSTS).prop_map(str::to_owned),
        2 => any::<[u8; 4]>().prop_map(|o| format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3])),
        2 => any::<[u16; 8]>().prop_map(|s| {
            format!("[{}]", std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]))
        }),
        4 => near_special_ip().prop_map(|ip| match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        }),
        1 => any::<u32>().prop_map(|n| n.to_string()),
        1 => any::<u32>().prop_map(|n| format!("0x{n:x}")),
        1 => "[a-z0-9.-]{0,20}",
        1 => "\\PC{0,12}",
    ];
    let scheme = prop::sample::select(
        &[
            "https://",
            "https://",
            "https://",
            "http://",
            "HTTPS://",
            "ftp://",
            "https:",
            "https:/",
            "javascript:",
            "",
            " https://",
            "https:\\\\",
        ][..],
    );
    let rest = prop_oneof![
        Just(String::new()),
        Just("/".to_owned()),
        "/[a-z0-9/._~%-]{0,20}",
        "/\\PC{0,20}",
        Just("/#frag".to_owned()),
        Just("?a=b".to_owned()),
        (0_u32..70_000).prop_map(|p| format!(":{p}/x")),
        Just(format!("/{}", "a".repeat(2100))),
        // Long paths of characters that grow when the URL is normalised (percent-encoded).
        "/[ é<>\"`{}|^]{300,700}",
    ];
    (scheme, host, rest).prop_map(|(s, h, r)| format!("{s}{h}{r}"))
}

/// A `POST /webhooks` body: mostly near-valid objects, also any JSON and any bytes.
fn webhook_body() -> impl Strategy<Value = Vec<u8>> {
    let field_value = |name: &'static str| -> BoxedStrategy<Value> {
        match name {
            "callback_url" => prop_oneof![
                3 => ("[a-z0-9-]{1,12}", "/[a-zA-Z0-9/._~%-]{0,20}")
                    .prop_map(|(h, p)| Value::String(format!("https://{h}.example.com{p}"))),
                3 => url().prop_map(Value::String),
                1 => json_value(),
            ]
            .boxed(),
            "domain_filters" | "seniority" => prop_oneof![
                4 => prop::collection::vec("[a-z][a-z0-9._+-]{0,9}", 0..6).prop_map(|v| json!(v)),
                2 => prop::collection::vec(
                    prop_oneof![
                        prop::sample::select(VALUES).prop_map(|s| s.to_owned()),
                        "[a-zA-Z0-9._+-]{0,45}",
                        "\\PC{0,8}",
                    ],
                    0..60,
                )
                .prop_map(|v| json!(v)),
                1 => json_value(),
            ]
            .boxed(),
            "remote_only" => prop_oneof![
                4 => any::<bool>().prop_map(Value::Bool),
                1 => json_value(),
            ]
            .boxed(),
            "min_confidence" => prop_oneof![
                3 => (0.0_f64..=1.0).prop_map(|f| json!(f)),
                1 => any::<f64>().prop_map(|f| json!(f)),
                1 => json_value(),
            ]
            .boxed(),
            _ => prop_oneof![
                4 => "\\PC{0,40}".prop_map(Value::String),
                1 => (495_usize..505).prop_map(|n| Value::String("q".repeat(n))),
                1 => json_value(),
            ]
            .boxed(),
        }
    };
    let object = (
        prop::option::weighted(0.9, field_value("callback_url")),
        prop::option::weighted(0.4, field_value("domain_filters")),
        prop::option::weighted(0.4, field_value("remote_only")),
        prop::option::weighted(0.3, field_value("seniority")),
        prop::option::weighted(0.3, field_value("q")),
        prop::option::weighted(0.3, field_value("company")),
        prop::option::weighted(0.3, field_value("min_confidence")),
        prop::option::weighted(0.05, (field_name(), json_value())),
    )
        .prop_map(|(url, domains, remote, levels, q, company, conf, extra)| {
            let mut m = serde_json::Map::new();
            for (k, v) in [
                ("callback_url", url),
                ("domain_filters", domains),
                ("remote_only", remote),
                ("seniority", levels),
                ("q", q),
                ("company", company),
                ("min_confidence", conf),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            if let Some((k, v)) = extra {
                m.insert(k, v);
            }
            serde_json::to_vec(&Value::Object(m)).unwrap_or_default()
        });
    let texts = prop::sample::select(
        &[
            "",
            "null",
            "{}",
            "[]",
            "\"https://hooks.example.com/x\"",
            "{\"callback_url\":\"https://a.example.com/x\",\"callback_url\":\"https://b.example.com/x\"}",
            "{\"callback_url\":\"https://a.example.com/x\",\"min_confidence\":1e400}",
            "{\"callback_url\":\"https://a.example.com/x\",\"min_confidence\":-0.0}",
            "{\"callback_url\":\"https://a.example.com/x\"} trailing",
            "{\"callback_url\":\"https://a.example.com/\\ud800\"}",
            "\u{feff}{\"callback_url\":\"https://a.example.com/x\"}",
            "{\"callback_url\":null}",
        ][..],
    )
    .prop_map(|s| s.as_bytes().to_vec());
    prop_oneof![
        6 => object,
        2 => json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        2 => prop::collection::vec(any::<u8>(), 0..64),
        2 => texts,
        1 => (1_usize..3_000).prop_map(|depth| {
            let mut s = "[".repeat(depth);
            s.push_str(&"]".repeat(depth));
            s.into_bytes()
        }),
    ]
}

/// Bytes that `http` accepts as a header value (visible ASCII, space, tab, obs-text).
fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..64).prop_map(|mut b| {
        b.retain(|&c| c == b'\t' || (c >= 0x20 && c != 0x7f));
        b
    })
}

fn content_type() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        10 => prop::sample::select(
            &[
                "application/json",
                "application/json",
                "application/json; charset=utf-8",
                "APPLICATION/JSON",
                " application/json ",
                "application/problem+json",
                "application/vnd.api+json",
            ][..],
        )
        .prop_map(|s| Some(s.as_bytes().to_vec())),
        3 => prop::sample::select(
            &[
                "application/jsonp",
                "application/json-seq",
                "text/json",
                "text/plain",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x",
                "",
                ";",
                "+json",
            ][..],
        )
        .prop_map(|s| Some(s.as_bytes().to_vec())),
        1 => Just(None),
        1 => header_bytes().prop_map(Some),
    ]
}

/// Text for one path segment, already fit for a URI path.
fn segment() -> impl Strategy<Value = String> {
    let f = fixture();
    let real: Vec<String> = f
        .job_ids
        .iter()
        .chain(&f.company_ids)
        .chain(&f.webhook_ids)
        .cloned()
        .collect();
    let real = prop::sample::select(real);
    prop_oneof![
        3 => real.clone(),
        1 => real.clone().prop_map(|id| id.to_uppercase()),
        1 => real.clone().prop_map(|id| id.replace('-', "")),
        1 => real.clone().prop_map(|id| format!("urn:uuid:{id}")),
        1 => real.clone().prop_map(|id| format!("{id}x")),
        1 => real.prop_map(|id| pct(format!(" {id}").as_bytes())),
        1 => prop::sample::select(
            &["", ".", "..", "%2e%2e", "%2F", "00000000-0000-0000-0000-000000000000", "null"][..]
        )
        .prop_map(str::to_owned),
        2 => "\\PC{0,40}".prop_map(|s| pct(s.as_bytes())),
        2 => prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| pct(&b)),
        2 => "[A-Za-z0-9._~!$&'()*+,;=:@%-]{0,40}",
        1 => uuid_text(),
    ]
}

fn uuid_text() -> impl Strategy<Value = String> {
    any::<u128>().prop_map(|n| uuid::Uuid::from_u128(n).to_string())
}

fn method() -> impl Strategy<Value = Method> {
    prop::sample::select(vec![
        Method::GET,
        Method::GET,
        Method::GET,
        Method::POST,
        Method::DELETE,
        Method::PUT,
        Method::PATCH,
        Method::HEAD,
        Method::OPTIONS,
    ])
}

// ---------------------------------------------------------------------------------------------
// (a) query strings on /jobs and /companies
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn any_query_string_on_jobs_and_companies_is_answered_200_or_a_400_problem(
        (companies, q) in any::<bool>().prop_flat_map(|companies| {
            (Just(companies), query(if companies { COMPANY_PARAMS } else { JOB_PARAMS }))
        }),
        bearer in any::<bool>(),
    ) {
        let f = fixture();
        let (path, allowed) = if companies {
            ("/api/v1/companies", COMPANY_PARAMS)
        } else {
            ("/api/v1/jobs", JOB_PARAMS)
        };
        let auth = if bearer {
            (AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {}", f.developer.expose())).expect("a value"))
        } else {
            x_api_key(f.developer.expose())
        };
        let uri = format!("{path}?{q}");
        let req = build(Method::GET, &uri, vec![auth], Bytes::new());
        prop_assume!(req.is_some());
        let resp = send(req.expect("checked"));
        let body = check(&resp, &uri)?;
        match resp.status().as_u16() {
            200 => {
                check_envelope(&body, path)?;
                // Unknown parameters are refused, so an answer means every name was known.
                for (name, _) in url::form_urlencoded::parse(q.as_bytes()) {
                    prop_assert!(allowed.contains(&name.as_ref()), "{uri}: {name:?} accepted");
                }
            }
            400 => {
                let code = body["code"].as_str().unwrap_or("");
                prop_assert!(
                    code == "invalid_parameter" || code == "unknown_parameter",
                    "{uri}: {body}"
                );
                let param = body["param"].as_str();
                prop_assert!(param.is_some(), "{uri}: the problem names the parameter: {body}");
                if code == "invalid_parameter" {
                    prop_assert!(allowed.contains(&param.unwrap_or("")), "{uri}: {body}");
                }
            }
            other => prop_assert!(false, "{uri}: unexpected status {other}: {body}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (b) POST /webhooks bodies and content types
// ---------------------------------------------------------------------------------------------

/// A `POST /webhooks` body every plan with webhooks accepts while the key has room: an https
/// callback on a public name, and filters of the documented forms.
fn valid_webhook_body() -> impl Strategy<Value = Vec<u8>> {
    (
        ("[a-z0-9]{1,12}", "(/[a-zA-Z0-9._~-]{1,8}){0,3}"),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::collection::vec("[a-z][a-z0-9._+-]{0,9}", 0..5)),
        prop::option::of(0.0_f64..=1.0),
    )
        .prop_map(|((host, path), remote, domains, confidence)| {
            let mut body = json!({ "callback_url": format!("https://{host}.example.com{path}") });
            if let Some(remote) = remote {
                body["remote_only"] = json!(remote);
            }
            if let Some(domains) = domains {
                body["domain_filters"] = json!(domains);
            }
            if let Some(confidence) = confidence {
                body["min_confidence"] = json!(confidence);
            }
            serde_json::to_vec(&body).expect("JSON")
        })
}

/// Agent-pro keys of the webhook-body property, by how many subscriptions each holds: a case
/// takes a key holding the number it wants (a new one if there is none) and gives it back
/// under its new count, so each case starts from a known state without making a key and its
/// subscriptions every time.
fn keys_holding() -> &'static Mutex<BTreeMap<usize, Vec<ApiKey>>> {
    static KEYS: OnceLock<Mutex<BTreeMap<usize, Vec<ApiKey>>>> = OnceLock::new();
    KEYS.get_or_init(Mutex::default)
}

/// An agent-pro key holding exactly `held` subscriptions.
fn take_key_holding(held: usize) -> ApiKey {
    let pooled = keys_holding()
        .lock()
        .expect("the pool")
        .get_mut(&held)
        .and_then(Vec::pop);
    pooled.unwrap_or_else(|| fixture().agent_pro_holding(held))
}

/// Gives back a key that now holds `held` subscriptions.
fn give_back_key(key: ApiKey, held: usize) {
    let mut pool = keys_holding().lock().expect("the pool");
    pool.entry(held).or_default().push(key);
}

/// How many subscriptions the key of a case holds before it: mostly room to spare, often
/// one short of the limit or at it.
fn held(limit: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => Just(0),
        1 => 0..limit,
        1 => Just(limit - 1),
        1 => Just(limit),
    ]
}

proptest! {
    #![proptest_config(config(400))]

    /// Each case's agent-pro key holds a known number of subscriptions, so what a body may be
    /// answered does not depend on the cases before it: a created subscription (201) needs
    /// room under the limit, a 409 means the key is at it, and a valid JSON body is created
    /// exactly while there is room.
    #[test]
    fn any_webhook_body_and_content_type_is_answered_without_a_5xx(
        (body, valid, content) in prop_oneof![
            5 => (webhook_body(), content_type()).prop_map(|(b, c)| (b, false, c)),
            2 => valid_webhook_body().prop_map(|b| (b, true, Some(b"application/json".to_vec()))),
        ],
        pro in prop::bool::weighted(0.8),
        held in held(webhook_limit()),
    ) {
        let f = fixture();
        let limit = webhook_limit();
        let own = pro.then(|| take_key_holding(held));
        let key = own.as_ref().map_or(f.developer.expose(), ApiKey::expose);
        let mut headers = vec![x_api_key(key)];
        if let Some(ct) = content.as_ref().and_then(|c| HeaderValue::from_bytes(c).ok()) {
            headers.push((CONTENT_TYPE, ct));
        }
        let req = build(Method::POST, "/api/v1/webhooks", headers, Bytes::from(body.clone()));
        let resp = send(req.expect("a fixed URI"));
        let what = format!("POST /webhooks {:?}", String::from_utf8_lossy(&body));
        let answer = check(&resp, &what)?;
        let code = answer["code"].as_str().unwrap_or("");
        let status = resp.status().as_u16();
        if pro && valid {
            let expected = if held < limit { 201 } else { 409 };
            prop_assert_eq!(status, expected, "{} holding {}: {}", what, held, answer);
        }
        if let Some(own) = own {
            give_back_key(own, if status == 201 { held + 1 } else { held });
        }
        match status {
            201 => {
                prop_assert!(pro, "{what}: created on the developer plan");
                prop_assert!(held < limit, "{what}: created holding {held} of {limit}");
                prop_assert!(answer["secret"].as_str().is_some_and(|s| s.starts_with("whsec_")));
                let id = answer["id"].as_str().unwrap_or("");
                let location = resp.headers().get("location").and_then(|v| v.to_str().ok());
                let expected = format!("/api/v1/webhooks/{id}");
                prop_assert_eq!(location, Some(expected.as_str()));
                prop_assert!(
                    answer["callback_url"].as_str().is_some_and(|u| u.starts_with("https://")),
                    "{what}: {answer}"
                );
            }
            400 => prop_assert!(
                ["invalid_body", "invalid_parameter", "unknown_parameter"].contains(&code),
                "{what}: {answer}"
            ),
            403 => prop_assert!(!pro && code == "plan_upgrade_required", "{what}: {answer}"),
            409 => {
                prop_assert_eq!(code, "webhook_limit_reached");
                prop_assert!(pro && held == limit, "{what}: 409 holding {held} of {limit}");
            }
            415 => prop_assert_eq!(code, "unsupported_media_type"),
            other => prop_assert!(false, "{what}: unexpected status {other}: {answer}"),
        }
    }

    /// Through `handle_body`: 413 exactly when the body or its declared length is over 64 KiB.
    #[test]
    fn bodies_over_the_limit_are_413_whatever_content_length_says(
        len in prop_oneof![Just(0_usize), 1_usize..200, Just(65_536), Just(65_537), 65_537_usize..70_000],
        declared in prop_oneof![
            Just(None),
            Just(Some("0".to_owned())),
            (0_u64..100_000).prop_map(|n| Some(n.to_string())),
            Just(Some("18446744073709551616".to_owned())),
            Just(Some("-1".to_owned())),
            Just(Some("abc".to_owned())),
        ],
    ) {
        let f = fixture();
        let mut req = Request::builder()
            .method(Method::POST)
            .uri("/api/v1/webhooks")
            .header("x-api-key", f.agent_pro.expose())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(vec![b' '; len])))
            .expect("a request");
        if let Some(d) = &declared {
            req.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from_str(d).expect("ascii"));
        }
        let resp = f.send_body(req);
        let body = check(&resp, "POST /webhooks (sized)")?;
        let limit = 64 * 1024;
        let declared_over = declared
            .as_deref()
            .and_then(|d| d.parse::<u64>().ok())
            .is_some_and(|n| n > limit as u64);
        if len > limit || declared_over {
            prop_assert_eq!(resp.status().as_u16(), 413, "{}", body);
            prop_assert_eq!(body["code"].as_str(), Some("body_too_large"));
        } else {
            // Whitespace only: not a JSON object.
            prop_assert_eq!(resp.status().as_u16(), 400, "{}", body);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (c) X-API-Key and Authorization values
// ---------------------------------------------------------------------------------------------

const KEY_PREFIX: &str = "jl_live_";

/// The checksum of a key's 32-character body as the key format spells it (docs/api.md, "Keys,
/// plans and quotas"; `ApiKey`): its CRC-32 (IEEE), written as 6 base62 digits (`0-9`, `A-Z`,
/// `a-z`), most significant first.
fn key_checksum(body: &str) -> String {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut n = crc32fast::hash(body.as_bytes());
    let mut sum = [b'0'; 6];
    for digit in sum.iter_mut().rev() {
        *digit = DIGITS[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8(sum.to_vec()).expect("ASCII")
}

/// Whether `raw` is `jl_live_` + 32 base62 characters + their checksum.
fn is_well_formed_key(raw: &str) -> bool {
    raw.strip_prefix(KEY_PREFIX).is_some_and(|rest| {
        rest.len() == 38
            && rest.bytes().all(|b| b.is_ascii_alphanumeric())
            && rest[32..] == key_checksum(&rest[..32])
    })
}

/// A key of the documented form with its checksum: one the service could have made.
fn valid_key() -> impl Strategy<Value = String> {
    "[A-Za-z0-9]{32}".prop_map(|body| format!("{KEY_PREFIX}{body}{}", key_checksum(&body)))
}

/// A valid key broken once: another checksum, a character more (anywhere, or a few at the
/// end), less or out of the alphabet, another prefix, a space around it.
fn near_key() -> impl Strategy<Value = String> {
    prop_oneof![
        (valid_key(), "[A-Za-z0-9]{6}").prop_map(|(key, sum)| format!("{}{sum}", &key[..40])),
        (valid_key(), 8_usize..=46, "[A-Za-z0-9]").prop_map(|(mut key, at, c)| {
            key.insert_str(at, &c);
            key
        }),
        (valid_key(), "[A-Za-z0-9]{1,4}").prop_map(|(key, more)| format!("{key}{more}")),
        (valid_key(), 8_usize..46).prop_map(|(mut key, at)| {
            key.remove(at);
            key
        }),
        (valid_key(), 8_usize..46, "[^A-Za-z0-9]").prop_map(|(mut key, at, c)| {
            key.replace_range(at..=at, &c);
            key
        }),
        valid_key().prop_map(|key| key.replacen("jl_live_", "JL_LIVE_", 1)),
        valid_key().prop_map(|key| key.replacen("jl_live_", "jl_test_", 1)),
        valid_key().prop_map(|key| format!(" {key}")),
        valid_key().prop_map(|key| format!("{key}\n")),
    ]
}

/// Key-header values: the real key spelled many ways, near-keys, and arbitrary bytes.
fn key_value() -> impl Strategy<Value = Vec<u8>> {
    let real = fixture().developer.expose().to_owned();
    let near = {
        let real = real.clone();
        (0..46_usize, any::<u8>()).prop_map(move |(i, c)| {
            let mut b = real.clone().into_bytes();
            b[i] = c;
            b
        })
    };
    prop_oneof![
        2 => Just(real.clone().into_bytes()),
        1 => Just(format!(" {real}\t").into_bytes()),
        1 => Just(real.to_uppercase().into_bytes()),
        1 => Just(real.as_bytes()[..45].to_vec()),
        1 => Just(format!("{real}{real}").into_bytes()),
        2 => near,
        1 => "jl_live_[A-Za-z0-9]{38}".prop_map(String::into_bytes),
        // Well formed, with the right checksum, but no key of the service.
        1 => valid_key().prop_map(String::into_bytes),
        1 => "jl_live_\\PC{0,40}".prop_map(String::into_bytes),
        2 => header_bytes(),
    ]
}

fn authorization_value() -> impl Strategy<Value = Vec<u8>> {
    let scheme = prop::sample::select(
        &[
            "Bearer ", "bearer ", "BEARER ", "Bearer  ", "Bearer", "Basic ", "Token ", " Bearer ",
            "",
        ][..],
    );
    prop_oneof![
        4 => (scheme, key_value()).prop_map(|(s, k)| {
            let mut v = s.as_bytes().to_vec();
            v.extend(k);
            v
        }),
        1 => header_bytes(),
    ]
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn any_key_header_is_answered_200_only_for_the_real_key_else_a_401_problem(
        x in prop::option::weighted(0.6, key_value()),
        auth in prop::option::weighted(0.6, authorization_value()),
    ) {
        let f = fixture();
        let mut headers = Vec::new();
        if let Some(v) = x.as_ref().and_then(|v| HeaderValue::from_bytes(v).ok()) {
            headers.push((HeaderName::from_static("x-api-key"), v));
        }
        if let Some(v) = auth.as_ref().and_then(|v| HeaderValue::from_bytes(v).ok()) {
            headers.push((AUTHORIZATION, v));
        }
        let presented: Vec<String> = headers
            .iter()
            .map(|(_, v)| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let only_x_exact = headers.len() == 1
            && headers[0].0 == "x-api-key"
            && presented[0] == f.developer.expose();
        let only_bearer_exact = headers.len() == 1
            && headers[0].0 == AUTHORIZATION
            && presented[0] == format!("Bearer {}", f.developer.expose());
        let req = build(Method::GET, "/api/v1/jobs?per_page=1", headers, Bytes::new());
        let resp = send(req.expect("a fixed URI"));
        let what = format!("key headers {presented:?}");
        let body = check(&resp, &what)?;
        match resp.status().as_u16() {
            200 => {
                prop_assert!(
                    presented.iter().any(|p| p.contains(f.developer.expose())),
                    "{what}: accepted without the real key"
                );
                check_envelope(&body, "/api/v1/jobs")?;
            }
            401 => {
                let code = body["code"].as_str().unwrap_or("");
                prop_assert!(code == "missing_api_key" || code == "invalid_api_key", "{what}: {body}");
                prop_assert!(resp.headers().contains_key("www-authenticate"), "{what}");
                prop_assert!(!only_x_exact && !only_bearer_exact, "{what}: the real key refused");
            }
            other => prop_assert!(false, "{what}: unexpected status {other}: {body}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (d) path segments
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn any_path_segment_and_method_is_answered_without_a_5xx(
        seg in segment(),
        (route, method) in (0_usize..5).prop_flat_map(|route| {
            let own: &'static [&'static str] = match route {
                0 | 1 | 4 => &["GET"],
                2 => &["GET", "PATCH", "DELETE"],
                _ => &["POST"],
            };
            let own = prop::sample::select(own)
                .prop_map(|m| Method::from_bytes(m.as_bytes()).expect("a method"));
            (Just(route), prop_oneof![4 => own, 1 => method()])
        }),
        pro in prop::bool::weighted(0.8),
    ) {
        let f = fixture();
        let (path, route_methods): (String, &[&str]) = match route {
            0 => (format!("/api/v1/jobs/{seg}"), &["GET"]),
            1 => (format!("/api/v1/companies/{seg}"), &["GET"]),
            2 => (format!("/api/v1/webhooks/{seg}"), &["GET", "PATCH", "DELETE"]),
            3 => (format!("/api/v1/webhooks/{seg}/test"), &["POST"]),
            _ => (format!("/api/v1/webhooks/{seg}/deliveries"), &["GET"]),
        };
        let key = if pro { f.agent_pro.expose() } else { f.developer.expose() };
        let request = |method: Method| build(method, &path, vec![x_api_key(key)], Bytes::new());
        let req = request(method.clone());
        prop_assume!(req.is_some());
        let mut resp = send(req.expect("checked"));
        let what = format!("{method} {path}");
        if method == Method::HEAD {
            // The GET's answer without its body, and with its length.
            let get = send(request(Method::GET).expect("built once already"));
            prop_assert!(resp.body().is_empty(), "{}: a body", what);
            prop_assert_eq!(resp.status(), get.status(), "{}", what);
            let length = resp.headers().get("content-length").and_then(|v| v.to_str().ok());
            let get_length = get.body().len().to_string();
            prop_assert_eq!(length, Some(get_length.as_str()), "{}", what);
            resp = get;
        }
        let body = check(&resp, &what)?;
        let status = resp.status().as_u16();
        // OPTIONS is answered everywhere, HEAD wherever GET is.
        let allowed = route_methods.contains(&method.as_str())
            || method == Method::OPTIONS
            || (method == Method::HEAD && route_methods.contains(&"GET"));
        if seg.contains('/') || seg.contains('?') || seg.contains('#') {
            // Not one segment after all: any routing answer will do.
            return Ok(());
        }
        if seg.is_empty() {
            // A trailing slash names no endpoint, whatever the method.
            prop_assert_eq!(status, 404, "{}: {}", what, body);
            return Ok(());
        }
        if !allowed {
            prop_assert_eq!(status, 405, "{}: {}", what, body);
            prop_assert!(resp.headers().contains_key("allow"));
        } else {
            // A PATCH without a body: once its id reads, the plan (403), then the body (415).
            let patch_refusal = method == Method::PATCH && matches!(status, 403 | 415);
            // A test ping needs a plan with webhooks, whichever subscription it names.
            let ping_refusal = !pro
                && method == Method::POST
                && path.ends_with("/test")
                && status == 403
                && body["code"] == "plan_upgrade_required";
            prop_assert!(
                matches!(status, 200 | 202 | 204 | 400 | 404) || patch_refusal || ping_refusal,
                "{what}: unexpected status {status}: {body}"
            );
            if status == 400 {
                prop_assert_eq!(body["param"].as_str(), Some("id"), "{}", what);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Addresses a callback may not name, written out from the IANA registries
// ---------------------------------------------------------------------------------------------

/// IPv4 blocks that are not globally reachable, from the IANA IPv4 Special-Purpose Address
/// Registry, and the multicast space (IPv4 Multicast Address Space Registry).
const SPECIAL_V4: &[(&str, &str)] = &[
    ("0.0.0.0/8", "this network (RFC 791)"),
    ("10.0.0.0/8", "private use (RFC 1918)"),
    ("100.64.0.0/10", "shared address space, CGNAT (RFC 6598)"),
    ("127.0.0.0/8", "loopback (RFC 1122)"),
    ("169.254.0.0/16", "link local (RFC 3927)"),
    ("172.16.0.0/12", "private use (RFC 1918)"),
    ("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
    ("192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"),
    ("192.168.0.0/16", "private use (RFC 1918)"),
    ("198.18.0.0/15", "benchmarking (RFC 2544)"),
    ("198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)"),
    ("203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)"),
    ("224.0.0.0/4", "multicast (RFC 5771)"),
    ("240.0.0.0/4", "reserved (RFC 1112)"),
    ("255.255.255.255/32", "limited broadcast (RFC 8190)"),
];

/// The registry's globally reachable blocks inside [`SPECIAL_V4`]: a policy may accept them.
const REACHABLE_V4: &[(&str, &str)] = &[
    ("192.0.0.9/32", "Port Control Protocol anycast (RFC 7723)"),
    ("192.0.0.10/32", "TURN anycast (RFC 8155)"),
];

/// IPv6 blocks that are not globally reachable, from the IANA IPv6 Special-Purpose Address
/// Registry, with the multicast space and the deprecated site-local block (IPv6 Address Space
/// registry). Addresses that carry an IPv4 address are judged by it ([`embedded_v4`]).
const SPECIAL_V6: &[(&str, &str)] = &[
    ("::/128", "unspecified (RFC 4291)"),
    ("::1/128", "loopback (RFC 4291)"),
    (
        "64:ff9b:1::/48",
        "local-use IPv4/IPv6 translation (RFC 8215)",
    ),
    ("100::/64", "discard-only (RFC 6666)"),
    ("100:0:0:1::/64", "dummy prefix (RFC 9780)"),
    ("2001::/23", "IETF protocol assignments (RFC 2928)"),
    ("2001::/32", "Teredo (RFC 4380)"),
    ("2001:2::/48", "benchmarking (RFC 5180)"),
    ("2001:10::/28", "deprecated ORCHID (RFC 4843)"),
    ("2001:db8::/32", "documentation (RFC 3849)"),
    ("3fff::/20", "documentation (RFC 9637)"),
    ("5f00::/16", "segment routing SIDs (RFC 9602)"),
    ("fc00::/7", "unique local (RFC 4193)"),
    ("fe80::/10", "link-local unicast (RFC 4291)"),
    ("fec0::/10", "deprecated site-local (RFC 3879)"),
    ("ff00::/8", "multicast (RFC 4291)"),
];

/// The registry's globally reachable blocks inside [`SPECIAL_V6`]: a policy may accept them.
const REACHABLE_V6: &[(&str, &str)] = &[
    ("2001:1::1/128", "Port Control Protocol anycast (RFC 7723)"),
    ("2001:1::2/128", "TURN anycast (RFC 8155)"),
    (
        "2001:1::3/128",
        "DNS-SD service registration protocol anycast (RFC 9665)",
    ),
    ("2001:3::/32", "AMT (RFC 7450)"),
    ("2001:4:112::/48", "AS112-v6 (RFC 7535)"),
    ("2001:20::/28", "ORCHIDv2 (RFC 7343)"),
    ("2001:30::/28", "drone remote ID entity tags (RFC 9374)"),
];

/// A CIDR block as its first address and prefix length, as a 128-bit number for both
/// families (IPv4 in the low 32 bits).
fn cidr(block: &str) -> (u128, u32, u32) {
    let (addr, len) = block.split_once('/').expect("a CIDR block");
    let len: u32 = len.parse().expect("a prefix length");
    match addr.parse::<IpAddr>().expect("an address") {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), len, 32),
        IpAddr::V6(v6) => (u128::from(v6), len, 128),
    }
}

/// Whether `ip` (of `bits` bits) lies in `block`.
fn within(block: &str, ip: u128, bits: u32) -> bool {
    let (net, len, family) = cidr(block);
    family == bits && (len == 0 || (ip ^ net) >> (bits - len) == 0)
}

/// The block of `blocks` that holds `ip` and none of `reachable` does, by its description.
fn refused_by(
    blocks: &[(&'static str, &'static str)],
    reachable: &[(&str, &str)],
    ip: u128,
    bits: u32,
) -> Option<&'static str> {
    if reachable.iter().any(|(b, _)| within(b, ip, bits)) {
        return None;
    }
    blocks
        .iter()
        .find(|(b, _)| within(b, ip, bits))
        .map(|(_, what)| *what)
}

/// The IPv4 address an IPv6 address carries, where it is the one reached: IPv4-mapped
/// (::ffff:0:0/96) and the deprecated IPv4-compatible form (::/96) are that address; the
/// NAT64 well-known prefix (64:ff9b::/96) must not carry a non-global one (RFC 6052, 3.1);
/// 6to4 (2002::/16) reaches the one in its bits 16 to 48 (RFC 3056).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let n = u128::from(v6);
    let low = Ipv4Addr::from(n as u32);
    if n >> 32 == 0xffff || (n >> 32 == 0 && n > 1) || n >> 32 == 0x0064_ff9b << 64 {
        Some(low)
    } else if n >> 112 == 0x2002 {
        Some(Ipv4Addr::from((n >> 80) as u32))
    } else {
        None
    }
}

/// The special-purpose block `ip` is in, by its description; `None` for a global address.
fn special_block(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_by(SPECIAL_V4, REACHABLE_V4, u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => special_block(IpAddr::V4(v4)),
            None => refused_by(SPECIAL_V6, REACHABLE_V6, u128::from(v6), 128),
        },
    }
}

/// Whether a callback may name `ip`: in no special-purpose block.
fn may_be_a_callback(ip: IpAddr) -> bool {
    special_block(ip).is_none()
}

/// An address in, at the edges of or just outside one of the blocks above, of either family,
/// or an IPv6 address carrying one of those IPv4 addresses.
fn near_special_ip() -> impl Strategy<Value = IpAddr> {
    fn pick(block: &str, at: u8, r: u128) -> u128 {
        let (net, len, bits) = cidr(block);
        let host = if len == bits {
            0
        } else {
            u128::MAX >> (128 - (bits - len))
        };
        let mask = u128::MAX >> (128 - bits);
        let last = net | host;
        match at {
            0 => net,
            1 => last,
            2 => net.wrapping_sub(1) & mask,
            3 => last.wrapping_add(1) & mask,
            _ => net | (r & host),
        }
    }
    let blocks = |lists: &[&[(&'static str, &'static str)]]| -> Vec<&'static str> {
        lists
            .iter()
            .flat_map(|l| l.iter().map(|(b, _)| *b))
            .collect()
    };
    let v4 = (
        prop::sample::select(blocks(&[SPECIAL_V4, REACHABLE_V4])),
        0_u8..8,
        any::<u128>(),
    )
        .prop_map(|(block, at, r)| Ipv4Addr::from(pick(block, at, r) as u32));
    let v6 = (
        prop::sample::select(blocks(&[SPECIAL_V6, REACHABLE_V6])),
        0_u8..8,
        any::<u128>(),
    )
        .prop_map(|(block, at, r)| Ipv6Addr::from(pick(block, at, r)));
    let carried = (
        prop_oneof![v4.clone(), any::<u32>().prop_map(Ipv4Addr::from)],
        0_u8..4,
        any::<u16>(),
    )
        .prop_map(|(v4, form, subnet)| {
            let n = u128::from(u32::from(v4));
            Ipv6Addr::from(match form {
                0 => 0xffff << 32 | n,
                1 => n,
                2 => 0x0064_ff9b << 96 | n,
                _ => 0x2002 << 112 | n << 80 | u128::from(subnet) << 64 | 1,
            })
        });
    prop_oneof![
        3 => v4.prop_map(IpAddr::V4),
        3 => v6.prop_map(IpAddr::V6),
        2 => carried.prop_map(IpAddr::V6),
    ]
}

// ---------------------------------------------------------------------------------------------
// Domain parsers
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(2_000))]

    #[test]
    fn callback_urls_accepted_by_the_default_policy_are_https_and_public(
        raw in prop_oneof![3 => url(), 1 => "\\PC{0,60}", 1 => any::<String>()],
    ) {
        let Ok(url) = CallbackUrl::parse(&raw) else {
            return Ok(());
        };
        let u = url.url();
        prop_assert!(u.scheme() == "https" || u.scheme() == "http", "{raw:?}");
        prop_assert!(u.username().is_empty() && u.password().is_none(), "{raw:?}");
        prop_assert!(u.fragment().is_none(), "{raw:?}");
        if CallbackPolicy::default().check(&url).is_ok() {
            prop_assert_eq!(u.scheme(), "https", "{:?}", raw);
            let ip = match u.host() {
                Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
                Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
                _ => None,
            };
            if let Some(ip) = ip {
                prop_assert!(
                    may_be_a_callback(ip),
                    "{:?} -> {} in {:?}",
                    raw,
                    ip,
                    special_block(ip)
                );
            }
            if let Some(url::Host::Domain(name)) = u.host() {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                prop_assert!(name != "localhost" && name.contains('.'), "{raw:?}");
            }
        }
    }

    /// An IP literal, mostly in, at the edges of or just outside a special-purpose block:
    /// accepted by the default policy only outside every such block (the lists above, written
    /// from the IANA registries), and every IPv4 address outside them is accepted.
    #[test]
    fn ip_literal_callbacks_are_refused_in_every_special_purpose_block(
        ip in prop_oneof![
            4 => near_special_ip(),
            1 => any::<u32>().prop_map(|n| IpAddr::V4(Ipv4Addr::from(n))),
            1 => any::<u128>().prop_map(|n| IpAddr::V6(Ipv6Addr::from(n))),
        ],
    ) {
        let raw = match ip {
            IpAddr::V4(v4) => format!("https://{v4}/hook"),
            IpAddr::V6(v6) => format!("https://[{v6}]/hook"),
        };
        let url = CallbackUrl::parse(&raw);
        prop_assert!(url.is_ok(), "{}: {:?}", raw, url.err());
        let accepted = CallbackPolicy::default().check(&url.expect("checked")).is_ok();
        if accepted {
            prop_assert!(may_be_a_callback(ip), "{} accepted: {:?}", raw, special_block(ip));
        }
        if let IpAddr::V4(v4) = ip {
            let reachable = REACHABLE_V4
                .iter()
                .any(|(b, _)| within(b, u128::from(u32::from(v4)), 32));
            if special_block(ip).is_none() && !reachable {
                prop_assert!(accepted, "{} refused though global", raw);
            }
        }
    }

    /// The store keeps a subscription's callback URL as its normalised text and parses it again
    /// when it reads the subscription back (`CallbackUrl` is `serde(try_from = "String")`), so
    /// every URL accepted at registration must be accepted again in its normalised form (the
    /// 2048-character limit applies to that form: percent-encoding can make a URL three times
    /// longer). See `a_registered_webhook_survives_a_restart_on_sled` for the server's side.
    #[test]
    fn accepted_callback_urls_read_back_from_their_stored_form(
        raw in prop_oneof![3 => url(), 1 => "\\PC{0,60}"],
    ) {
        if let Ok(url) = CallbackUrl::parse(&raw) {
            let stored = serde_json::to_string(&url).expect("a string");
            let back = serde_json::from_str::<CallbackUrl>(&stored);
            prop_assert!(
                back.as_ref().is_ok_and(|b| b == &url),
                "{} bytes accepted, stored as {} bytes, read back as {:?}",
                raw.len(),
                url.as_str().len(),
                back.map(|b| b.as_str().len()).map_err(|e| e.to_string())
            );
        }
    }

    /// Keys with the right checksum (most cases), near-keys and any text: a key is accepted
    /// exactly when it has the documented form and checksum, worked out here.
    #[test]
    fn api_key_parse_accepts_exactly_the_keys_with_the_documented_form_and_checksum(
        raw in prop_oneof![
            4 => valid_key(),
            4 => near_key(),
            1 => any::<String>(),
            1 => "jl_live_[A-Za-z0-9]{36,40}",
            1 => "jl_live_\\PC{0,40}",
            1 => "[jJ][lL]_live_[A-Za-z0-9]{38}",
        ],
    ) {
        let parsed = ApiKey::parse(&raw);
        prop_assert_eq!(parsed.is_ok(), is_well_formed_key(&raw), "{:?}", raw);
        if let Ok(key) = parsed {
            prop_assert_eq!(key.expose(), raw.as_str());
        }
    }

    #[test]
    fn a_one_character_typo_of_a_real_key_is_always_refused(
        at in 8_usize..46,
        with in prop::sample::select(
            b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".to_vec()
        ),
        swap in any::<bool>(),
    ) {
        let key = ApiKey::generate();
        let raw = key.expose().as_bytes().to_vec();
        prop_assert!(is_well_formed_key(key.expose()), "not of the form: {}", key.expose());
        prop_assert!(ApiKey::parse(key.expose()).is_ok());
        let mut typo = raw.clone();
        if swap && at < 45 {
            typo.swap(at, at + 1);
        } else {
            typo[at] = with;
        }
        prop_assume!(typo != raw);
        let typo = String::from_utf8(typo).expect("ascii");
        prop_assert!(ApiKey::parse(&typo).is_err(), "{typo} accepted");
    }
}

/// A webhook registered through the API (201) is still there after a restart on the same sled
/// folder, and the service starts. The limit applies to the stored (percent-encoded) form, so
/// a URL that only outgrows it once encoded is refused up front instead of being stored in a
/// form that could not be read back.
#[tokio::test]
async fn a_registered_webhook_survives_a_restart_on_sled() {
    // In-process: `Api::handle` answers, over sled in a temporary folder.
    let app = TestApp::builder().build().await;
    let key = app.keys.agent_pro.raw.clone();
    let hook = |callback: String| json!({ "callback_url": callback });
    // 1,426 bytes as sent, 4,226 characters once percent-encoded: refused.
    let too_long = format!("https://hooks.example.com/{}", "é".repeat(700));
    assert!(too_long.len() <= CallbackUrl::MAX_LEN);
    let refused = app.post_webhook(&key, &hook(too_long)).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.body["param"], "callback_url");
    // Under the limit once encoded: accepted, and read back after the restart.
    let callback = format!("https://hooks.example.com/{}", "é".repeat(300));
    let created = app.post_webhook(&key, &hook(callback)).await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.body["id"].as_str().expect("an id").to_owned();

    // Graceful stop, then a start on the same folder once sled's lock is released.
    let app = app.restart().await;
    let listed = app
        .service
        .list_webhooks(&app.keys.agent_pro.key)
        .await
        .expect("the list");
    let ids: Vec<String> = listed.value.iter().map(|w| w.id.to_string()).collect();
    assert_eq!(ids, vec![id]);
}

/// The dictionary of the `query_string` fuzz target names every parameter the list endpoints
/// take, as the library lists them, so the fuzzer starts from each of them.
#[test]
fn the_query_string_fuzz_dictionary_names_every_parameter() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/dicts/query_string.dict");
    let dict = std::fs::read_to_string(path).expect("the fuzz dictionary");
    let missing: Vec<&str> = JOB_PARAMS
        .iter()
        .chain(COMPANY_PARAMS)
        .filter(|name| !dict.lines().any(|l| l.trim() == format!("\"{name}=\"")))
        .copied()
        .collect();
    assert!(missing.is_empty(), "{path} lacks {missing:?}");
}

/// Whether `policy` takes `raw` as a callback URL.
fn accepts(policy: &CallbackPolicy, raw: &str) -> bool {
    CallbackUrl::parse(raw)
        .map(|u| policy.check(&u).is_ok())
        .unwrap_or(false)
}

/// docs/api.md: callback URLs are "never a loopback, private, link-local or reserved address". The
/// default policy refuses the IPv4 benchmarking range (198.18.0.0/15) and the IPv6
/// documentation prefix 2001:db8::/32, but not their IPv6 twins registered as not globally
/// reachable in the IANA special-purpose registry.
#[test]
fn the_default_policy_refuses_reserved_ipv6_ranges_like_their_ipv4_twins() {
    let policy = CallbackPolicy::default();
    let accepted: Vec<&str> = [
        // Benchmarking, RFC 5180 (the IPv4 twin 198.18.0.0/15 is refused).
        "https://[2001:2::1]/hook",
        // Documentation, RFC 9637 (like 2001:db8::/32, which is refused).
        "https://[3fff::1]/hook",
        // Segment Routing SIDs, RFC 9602: not globally reachable.
        "https://[5f00::1]/hook",
    ]
    .into_iter()
    .filter(|raw| accepts(&policy, raw))
    .collect();
    assert!(
        accepted.is_empty(),
        "reserved IPv6 addresses accepted as callbacks: {accepted:?}"
    );
    // The twins that are refused today, for comparison.
    for raw in ["https://198.18.0.1/hook", "https://[2001:db8::1]/hook"] {
        let url = CallbackUrl::parse(raw).expect("a URL");
        assert!(policy.check(&url).is_err(), "{raw}");
    }
}

/// The IETF protocol assignments block 2001::/23 is not globally reachable but for the
/// sub-blocks the IANA registry lists as reachable (AMT, AS112-v6, ORCHIDv2, DETs, three
/// anycast addresses); the default policy refuses only its Teredo and benchmarking parts.
#[test]
fn the_default_policy_refuses_all_of_2001_0_23_but_its_reachable_blocks() {
    let policy = CallbackPolicy::default();
    let accepted: Vec<&str> = [
        // Deprecated ORCHID, RFC 4843.
        "https://[2001:10::1]/hook",
        // Unassigned within the block.
        "https://[2001:1::4]/hook",
        "https://[2001:5::1]/hook",
        "https://[2001:1ff:ffff::1]/hook",
    ]
    .into_iter()
    .filter(|raw| accepts(&policy, raw))
    .collect();
    assert!(
        accepted.is_empty(),
        "not globally reachable, accepted as callbacks: {accepted:?}"
    );
}

/// A JSON Lines import line: mostly job-shaped objects with hostile field values.
fn job_line() -> impl Strategy<Value = String> {
    let date = prop_oneof![
        prop::sample::select(VALUES).prop_map(|s| json!(s)),
        (-300_000_i64..300_000).prop_map(|y| json!(format!("{y:04}-01-01T00:00:00Z"))),
        json_value(),
    ];
    let job = (
        prop_oneof![uuid_text().prop_map(|s| json!(s)), json_value()],
        prop_oneof![
            "\\PC{0,20}".prop_map(|s| json!(s)),
            (299_usize..302).prop_map(|n| json!("r".repeat(n))),
            json_value()
        ],
        prop_oneof![uuid_text().prop_map(|s| json!(s)), json_value()],
        prop_oneof!["\\PC{0,40}".prop_map(|s| json!(s)), json_value()],
        prop_oneof![
            prop::collection::vec("[a-zA-Z0-9._+-]{0,42}", 0..40).prop_map(|v| json!(v)),
            json_value()
        ],
        prop_oneof![
            prop::collection::vec("[a-zA-Z ]{0,42}", 0..20).prop_map(|v| json!(v)),
            json_value()
        ],
        prop_oneof![url().prop_map(|s| json!(s)), json_value()],
        date.clone(),
        prop_oneof![
            any::<f64>().prop_map(|f| json!(f)),
            (0.0_f64..=1.0).prop_map(|f| json!(f)),
            json_value()
        ],
        prop_oneof![
            Just(json!(null)),
            (any::<Option<u64>>(), any::<Option<u64>>())
                .prop_map(|(a, b)| json!({"min": a, "max": b, "currency": "USD"})),
            json_value(),
        ],
        (
            prop_oneof![Just(json!("active")), Just(json!("closed")), json_value()],
            prop::option::of(date),
            prop::option::weighted(0.1, (field_name(), json_value())),
        ),
    )
        .prop_map(
            |(
                id,
                role,
                company,
                desc,
                domains,
                levels,
                source,
                posted,
                conf,
                salary,
                (status, seen, extra),
            )| {
                let mut v = json!({
                    "id": id, "role": role, "company_id": company, "description": desc,
                    "domains": domains, "seniority": levels, "source_url": source,
                    "posted_at": posted, "confidence": conf, "salary": salary, "status": status,
                });
                if let Some(seen) = seen {
                    v["first_seen_at"] = seen;
                }
                if let Some((k, val)) = extra {
                    v[k] = val;
                }
                v.to_string()
            },
        );
    prop_oneof![
        6 => job,
        1 => any::<String>(),
        1 => json_value().prop_map(|v| v.to_string()),
    ]
}

/// An import line as the import reads it (`parse_record`, then `Job::validate`).
fn import(line: &str) -> Option<Result<Job, String>> {
    parse_record::<Job>(line.as_bytes(), false, Job::validate)
}

/// An instant inside the range a job's times may take (the years 1678 to 2261), in RFC 3339.
fn valid_time() -> impl Strategy<Value = String> {
    (
        1678_i32..=2261,
        1_u32..=12,
        1_u32..=28,
        0_u32..24,
        0_u32..60,
        0_u32..60,
    )
        .prop_map(|(y, mo, d, h, mi, s)| format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"))
}

/// A job import line of the documented form (docs/operating.md, "Importing your own data"):
/// every required field valid, the optional ones now and then.
fn valid_job_line() -> impl Strategy<Value = Value> {
    let label = "[a-zA-Z0-9][a-zA-Z0-9._+-]{0,39}";
    let salary = (
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        "[A-Z]{3}",
        prop::option::of(prop::sample::select(
            &["year", "month", "week", "day", "hour"][..],
        )),
    )
        .prop_map(|(a, b, currency, period)| {
            let (min, max) = match (a, b) {
                (Some(a), Some(b)) => (Some(a.min(b)), Some(a.max(b))),
                other => other,
            };
            let mut salary = json!({ "min": min, "max": max, "currency": currency });
            if let Some(period) = period {
                salary["period"] = json!(period);
            }
            salary
        });
    let required = (
        uuid_text(),
        ("[A-Za-z]", "\\PC{0,30}").prop_map(|(a, b)| format!("{a}{b}")),
        uuid_text(),
        "\\PC{0,60}",
        "https://example\\.com/[a-z0-9/]{1,20}",
        valid_time(),
        prop_oneof![
            0.0_f64..=1.0,
            prop::sample::select(&[0.0, -0.0, 1.0, 0.7, 0.300_000_000_000_000_04][..]),
        ],
    );
    let optional = (
        prop::option::of("\\PC{0,40}"),
        prop::option::of(prop::collection::vec(label, 0..6)),
        prop::option::of(prop::collection::vec(label, 0..4)),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::option::of("\\PC{0,40}")),
        prop::option::of(prop::option::of(salary)),
        prop::option::of(prop::sample::select(&["active", "closed"][..])),
        prop::option::of(valid_time()),
    );
    (required, optional).prop_map(
        |(
            (id, role, company, description, source, posted, confidence),
            (company_name, domains, levels, remote, location, salary, status, seen),
        )| {
            let mut v = json!({
                "id": id, "role": role, "company_id": company, "description": description,
                "source_url": source, "posted_at": posted, "confidence": confidence,
            });
            let optional = [
                ("company_name", company_name.map(|n| json!(n))),
                ("domains", domains.map(|d| json!(d))),
                ("seniority", levels.map(|l| json!(l))),
                ("remote", remote.map(|r| json!(r))),
                ("location", location.map(|l| json!(l))),
                ("salary", salary.map(|s| json!(s))),
                ("status", status.map(|s| json!(s))),
                ("first_seen_at", seen.map(|t| json!(t))),
            ];
            for (name, value) in optional {
                if let Some(value) = value {
                    v[name] = value;
                }
            }
            v
        },
    )
}

/// The fields a job line must have.
const REQUIRED_FIELDS: &[&str] = &[
    "id",
    "role",
    "company_id",
    "description",
    "source_url",
    "posted_at",
    "confidence",
];

/// How many ways [`spoil`] knows to spoil a line.
const SPOILS: usize = 28;

/// A valid line spoilt one way (`how`, with `pick` choosing among bad values), and the
/// field the refusal must name.
fn spoil(mut v: Value, how: usize, pick: usize) -> (String, &'static str) {
    let one_of = |values: Vec<Value>| values[pick % values.len()].clone();
    let labels = |n: usize| json!(vec!["ai"; n]);
    let mut set = |field: &'static str, value: Value| {
        v[field] = value;
        field
    };
    let field = match how {
        0 => {
            let field = REQUIRED_FIELDS[pick % REQUIRED_FIELDS.len()];
            v.as_object_mut().expect("an object").remove(field);
            field
        }
        1 => set(
            "role",
            one_of(vec![
                json!(""),
                json!("  \t\n"),
                json!("\u{3000}\u{a0}"),
                json!(format!("{}a", "é".repeat(150))),
                json!(null),
                json!(7),
            ]),
        ),
        2 => set("description", json!("d".repeat(100_001))),
        3 => set(
            "source_url",
            one_of(vec![json!(""), json!(" "), json!("u".repeat(2_001))]),
        ),
        4 => set("location", json!("l".repeat(301))),
        5 => set("company_name", json!("c".repeat(301))),
        6 => set("domains", labels(33)),
        7 => set("seniority", labels(17)),
        8 => set(
            "domains",
            one_of(vec![
                json!(["a b"]),
                json!([""]),
                json!(["x".repeat(41)]),
                json!(["ünï"]),
                json!("ai"),
                json!([1]),
            ]),
        ),
        9 => set(
            "seniority",
            one_of(vec![json!(["senior", "st aff"]), json!([""]), json!({})]),
        ),
        10 => set(
            "posted_at",
            one_of(vec![
                json!("2262-04-12T00:00:00Z"),
                json!("1677-09-20T00:00:00Z"),
                json!("+275760-09-13T00:00:00Z"),
                json!("not a date"),
                json!("2026-02-30T00:00:00Z"),
                json!("2026-10-01"),
                json!(1_700_000_000),
                json!(null),
            ]),
        ),
        11 => set(
            "confidence",
            one_of(vec![
                json!(-0.1),
                json!(1.000_000_000_000_000_2),
                json!(2),
                json!("0.5"),
                json!(null),
                json!(true),
            ]),
        ),
        12 => set(
            "salary",
            one_of(vec![
                json!({ "min": 2, "max": 1, "currency": "USD" }),
                json!({ "min": 1, "max": 2, "currency": "U".repeat(17) }),
                json!({ "min": 1, "currency": "USD", "period": "p".repeat(33) }),
                json!({ "min": 1, "max": 2 }),
                json!({ "min": -1, "currency": "USD" }),
                json!("100k"),
            ]),
        ),
        13 => set(
            "status",
            one_of(vec![json!("open"), json!("Active"), json!(1)]),
        ),
        14 => set(
            "id",
            one_of(vec![json!("not-a-uuid"), json!(42), json!("")]),
        ),
        15 => set("company_id", one_of(vec![json!("acme"), json!(null)])),
        16 => set("remote", one_of(vec![json!("yes"), json!(1), json!(null)])),
        17 => set("rol", json!("a misspelt field")),
        18 => set("first_seen_at", json!("yesterday")),
        19 => {
            v["salary"] = json!({ "min": 1, "currency": "USD", "bonus": 5 });
            "bonus"
        }
        20 => set("activated_at", json!("2026-13-01T00:00:00Z")),
        21 => set("updated_at", json!(false)),
        // Below: the text of the line, not a field.
        22 => return (format!("{v} trailing"), "column"),
        23 => return (format!("[{v}]"), "object"),
        24 => {
            let text = v.to_string();
            return (format!("{{\"role\":\"x\",{}", &text[1..]), "role");
        }
        25 => return (format!("{v}{v}"), "column"),
        26 => return (v.to_string()[..pick % 20 + 1].to_owned(), "column"),
        _ => set("location", json!(["Hobart"])),
    };
    (v.to_string(), field)
}

proptest! {
    #![proptest_config(config(1_500))]

    #[test]
    fn job_import_lines_parse_and_validate_without_panicking(line in job_line()) {
        if let Some(Ok(job)) = import(&line) {
            prop_assert!(!job.role.trim().is_empty());
            prop_assert!(job.posted_at.timestamp_nanos_opt().is_some());
            prop_assert!((0.0..=1.0).contains(&job.confidence.get()));
        }
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// Lines of the documented form are imported, with the values they hold.
    #[test]
    fn valid_job_import_lines_are_accepted_as_written(v in valid_job_line()) {
        let line = v.to_string();
        let job = match import(&line) {
            Some(Ok(job)) => job,
            other => return Err(TestCaseError::fail(format!("{line}: {other:?}"))),
        };
        prop_assert_eq!(job.id.to_string(), v["id"].as_str().unwrap_or_default());
        prop_assert_eq!(job.company_id.to_string(), v["company_id"].as_str().unwrap_or_default());
        prop_assert_eq!(&job.role, v["role"].as_str().unwrap_or_default());
        prop_assert_eq!(&job.description, v["description"].as_str().unwrap_or_default());
        prop_assert_eq!(job.confidence.get(), v["confidence"].as_f64().unwrap_or(-1.0));
        prop_assert_eq!(
            job.posted_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            v["posted_at"].as_str().unwrap_or_default()
        );
        let lowered = |field: &str| -> Vec<String> {
            v[field]
                .as_array()
                .map(|a| a.iter().filter_map(|l| l.as_str()).map(str::to_ascii_lowercase).collect())
                .unwrap_or_default()
        };
        let domains: Vec<String> = job.domains.iter().map(|d| d.as_str().to_owned()).collect();
        prop_assert_eq!(domains, lowered("domains"));
        let levels: Vec<String> = job.seniority.iter().map(|s| s.as_str().to_owned()).collect();
        prop_assert_eq!(levels, lowered("seniority"));
        prop_assert_eq!(job.is_active(), v["status"] != "closed");
    }

    /// A valid line spoilt one way (a required field missing, a value out of range or of the
    /// wrong type, a misspelt field, text around the object) is refused, and the refusal names
    /// what is wrong.
    #[test]
    fn spoilt_job_import_lines_are_refused_naming_the_field(
        v in valid_job_line(),
        how in 0..SPOILS,
        pick in any::<usize>(),
    ) {
        let (line, field) = spoil(v, how, pick);
        match import(&line) {
            Some(Err(message)) => prop_assert!(
                message.contains(field),
                "{}: the refusal does not name {}: {}",
                line,
                field,
                message
            ),
            other => prop_assert!(false, "{}: not refused: {:?}", line, other),
        }
    }
}
