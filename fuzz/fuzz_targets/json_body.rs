//! Arbitrary bytes as the `application/json` body of `POST /webhooks` (the API's only route
//! that reads a body), sent with an agent-pro key and answered by `Api::handle`: no panic, no
//! 5xx, every non-2xx answer a problem document whose `status` is the HTTP status, and the
//! answer is either `201` (the subscription is deleted again, so the key never fills up) or a
//! `400`.
//!
//! Run from the `fuzz` folder, on a stable toolchain:
//! `cargo fuzz run -s none json_body -- -dict=dicts/json_body.dict -max_total_time=600 -max_len=4096`
#![no_main]

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Method, Request};
use job_listings_fuzz::{check, fixture};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/webhooks")
        .header("x-api-key", f.agent_pro.expose())
        .header(CONTENT_TYPE, "application/json")
        .body(Bytes::copy_from_slice(data))
        .expect("a request");
    let resp = f.send(req);
    let what = String::from_utf8_lossy(data);
    check(&resp, &what);
    let status = resp.status().as_u16();
    assert!(
        status == 201 || status == 400,
        "{what:?}: unexpected {status} {}",
        String::from_utf8_lossy(resp.body())
    );
    f.forget_created_webhook(&resp);
});
