//! Arbitrary bytes as the query string of `GET /jobs`, `/companies`, `/jobs/{id}` and
//! `/companies/{id}` (the first byte picks the route and the id), answered by `Api::handle`:
//! no panic, no 5xx, and every non-2xx answer a problem document whose `status` is the HTTP
//! status. A query the `http` crate refuses as it is is sent percent-encoded instead.
//!
//! Run from the `fuzz` folder, on a stable toolchain:
//! `cargo fuzz run -s none query_string -- -dict=dicts/query_string.dict -max_total_time=600 -max_len=4096`
#![no_main]

use bytes::Bytes;
use http::{Method, Request};
use job_listings_fuzz::{check, fixture};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, query)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let path = match pick % 4 {
        0 => "/api/v1/jobs".to_owned(),
        1 => "/api/v1/companies".to_owned(),
        2 => format!(
            "/api/v1/jobs/{}",
            f.job_ids[usize::from(pick / 4) % f.job_ids.len()]
        ),
        _ => format!(
            "/api/v1/companies/{}",
            f.company_ids[usize::from(pick / 4) % f.company_ids.len()]
        ),
    };
    let req = |uri: &str| {
        Request::builder()
            .method(Method::GET)
            .uri(uri)
            .header("x-api-key", f.developer.expose())
            .body(Bytes::new())
            .ok()
    };
    let raw = std::str::from_utf8(query).ok();
    let req = match raw.and_then(|q| req(&format!("{path}?{q}"))) {
        Some(req) => req,
        None => req(&format!("{path}?{}", encode(query))).expect("an encoded query is a URI"),
    };
    let what = req.uri().clone();
    check(&f.send(req), &what);
});

/// Keeps letters, digits, `-._~` and the bytes that mean something in a query (`%&=+`) as they
/// are and percent-encodes the rest, which the query decoder turns back into the same bytes.
fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~%&=+".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
