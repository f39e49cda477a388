//! Arbitrary text to `CallbackUrl::parse` and the default `CallbackPolicy`: nothing panics;
//! every URL the parser accepts parses again from its normalised text (`as_str()`, the form
//! the store keeps) to the same URL; and every URL the policy accepts is `https` and, when its
//! host is an IP literal, a public address (`is_public_ip`).
//!
//! Run from the `fuzz` folder, on a stable toolchain:
//! `cargo fuzz run -s none callback_url -- -dict=dicts/callback_url.dict -max_total_time=600 -max_len=4096`
#![no_main]

use std::net::IpAddr;

use job_listings::domain::CallbackUrl;
use job_listings::webhooks::{is_public_ip, CallbackPolicy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(url) = CallbackUrl::parse(raw) else {
        return;
    };
    let again = CallbackUrl::parse(url.as_str());
    assert!(
        again.as_ref().is_ok_and(|a| a == &url),
        "{raw:?} parsed as {url:?}, which parses again as {again:?}"
    );
    if CallbackPolicy::default().check(&url).is_err() {
        return;
    }
    let u = url.url();
    assert_eq!(u.scheme(), "https", "{raw:?} accepted as {url:?}");
    let ip = match u.host() {
        Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        _ => None,
    };
    if let Some(ip) = ip {
        assert!(is_public_ip(ip), "{raw:?} accepted with the address {ip}");
    }
});
