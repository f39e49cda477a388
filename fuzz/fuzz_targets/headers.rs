//! Arbitrary header names and values, with `X-API-Key`, `Authorization`, `Content-Type`,
//! `Content-Length`, `Accept` and `X-Request-Id` made likely and a real key often spliced into
//! a value, on `GET /jobs`, `GET /companies`, `GET /webhooks`, `GET /usage` and
//! `POST /webhooks`, answered by `Api::handle_body` (which also reads `Content-Length`): no
//! panic, no 5xx, and every non-2xx answer a problem document whose `status` is the HTTP
//! status. Inputs the `http` crate refuses to build are skipped.
//!
//! Run from the `fuzz` folder, on a stable toolchain:
//! `cargo fuzz run -s none headers -- -dict=dicts/headers.dict -max_total_time=600 -max_len=4096`
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{Method, Request};
use http_body_util::Full;
use job_listings_fuzz::{check, fixture};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Name {
    XApiKey,
    Authorization,
    ContentType,
    ContentLength,
    Accept,
    XRequestId,
    Other(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Value {
    Raw(Vec<u8>),
    /// `before` + a real key (agent-pro when `pro`) + `after`.
    Key {
        before: Vec<u8>,
        pro: bool,
        after: Vec<u8>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    route: u8,
    headers: Vec<(Name, Value)>,
    body: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let f = fixture();
    let (method, uri) = match input.route % 5 {
        0 => (Method::GET, "/api/v1/jobs?per_page=2"),
        1 => (Method::GET, "/api/v1/companies?per_page=2"),
        2 => (Method::GET, "/api/v1/webhooks"),
        3 => (Method::GET, "/api/v1/usage"),
        _ => (Method::POST, "/api/v1/webhooks"),
    };
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .body(Full::new(Bytes::from(input.body.clone())))
        .expect("a request");
    for (name, value) in &input.headers {
        let name = match name {
            Name::XApiKey => HeaderName::from_static("x-api-key"),
            Name::Authorization => http::header::AUTHORIZATION,
            Name::ContentType => http::header::CONTENT_TYPE,
            Name::ContentLength => http::header::CONTENT_LENGTH,
            Name::Accept => http::header::ACCEPT,
            Name::XRequestId => HeaderName::from_static("x-request-id"),
            Name::Other(raw) => match HeaderName::from_bytes(raw) {
                Ok(name) => name,
                Err(_) => return,
            },
        };
        let bytes = match value {
            Value::Raw(raw) => raw.clone(),
            Value::Key { before, pro, after } => {
                let key = if *pro { &f.agent_pro } else { &f.developer };
                [before.as_slice(), key.expose().as_bytes(), after].concat()
            }
        };
        let Ok(value) = HeaderValue::from_bytes(&bytes) else {
            return;
        };
        req.headers_mut().append(name, value);
    }
    let resp = f.send_body(req);
    check(&resp, &input);
    f.forget_created_webhook(&resp);
});
