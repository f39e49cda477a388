//! Answers in the content coding `Accept-Encoding` asks for: zstd, brotli, gzip or as they
//! are, with `Vary: Accept-Encoding`; never for a short body, a 304, a 204 or `HEAD`.

use std::io::Read;

use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::data::{id_of, known};
use crate::support::TestApp;

/// An answer's status, headers and bytes as they came over the wire, not decoded.
pub(super) struct Raw {
    pub(super) status: StatusCode,
    pub(super) headers: reqwest::header::HeaderMap,
    bytes: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body with its `Content-Encoding` undone.
    fn decoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self.header("content-encoding") {
            None => out.clone_from(&self.bytes),
            Some("zstd") => out = zstd::stream::decode_all(&self.bytes[..]).expect("zstd"),
            Some("br") => {
                brotli::Decompressor::new(&self.bytes[..], 4096)
                    .read_to_end(&mut out)
                    .expect("brotli");
            }
            Some("gzip") => {
                flate2::read::GzDecoder::new(&self.bytes[..])
                    .read_to_end(&mut out)
                    .expect("gzip");
            }
            Some(other) => panic!("unexpected coding {other}"),
        }
        out
    }
}

pub(super) async fn raw(
    app: &TestApp,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> Raw {
    let mut req = app
        .client
        .request(method, app.url(path))
        .header("x-api-key", &app.keys.enterprise.raw);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let response = req.send().await.expect("answered");
    Raw {
        status: response.status(),
        headers: response.headers().clone(),
        bytes: response.bytes().await.expect("a body").to_vec(),
    }
}

const PAGE: &str = "/api/v1/jobs?per_page=50";

#[tokio::test]
async fn each_coding_decodes_to_the_very_bytes_sent_without_one() {
    let app = spawn_app().await;
    let detail = format!("/api/v1/jobs/{}", id_of(&known().rust_staff));
    let company = format!("/api/v1/companies/{}", known().quokka.id);
    for path in [
        PAGE,
        "/api/v1/jobs?per_page=20",
        detail.as_str(),
        "/api/v1/companies?per_page=50",
        company.as_str(),
        "/api/v1/openapi.json",
    ] {
        let plain = raw(&app, Method::GET, path, &[]).await;
        assert_eq!(plain.status, StatusCode::OK);
        assert_eq!(plain.header("content-encoding"), None, "{path}");
        assert!(
            plain.bytes.len() > 1024,
            "{path} is long enough to compress"
        );
        for coding in ["zstd", "br", "gzip"] {
            let coded = raw(&app, Method::GET, path, &[("accept-encoding", coding)]).await;
            assert_eq!(coded.status, StatusCode::OK, "{path} {coding}");
            assert_eq!(coded.header("content-encoding"), Some(coding), "{path}");
            assert_eq!(coded.header("vary"), Some("accept-encoding"), "{path}");
            assert!(coded.bytes.len() < plain.bytes.len() / 2, "{path} {coding}");
            assert_eq!(coded.decoded(), plain.bytes, "{path} {coding}");
        }
    }
}

#[tokio::test]
async fn quality_values_choose_the_coding() {
    let app = spawn_app().await;
    for (accept, expected) in [
        ("gzip;q=0.5, br;q=1", Some("br")),
        ("gzip, br, zstd", Some("zstd")),
        ("zstd;q=0.2, gzip;q=0.9", Some("gzip")),
        ("*", Some("zstd")),
        ("*;q=0.5, zstd;q=0", Some("br")),
        ("zstd;q=0, br;q=0, gzip;q=0", None),
        ("gzip;q=0.5, identity", None),
        ("identity", None),
        ("deflate, compress", None),
        ("", None),
        ("gzip;q=banana", None),
    ] {
        let r = raw(&app, Method::GET, PAGE, &[("accept-encoding", accept)]).await;
        assert_eq!(r.status, StatusCode::OK, "{accept}");
        assert_eq!(r.header("content-encoding"), expected, "{accept}");
        assert_eq!(r.header("vary"), Some("accept-encoding"), "{accept}");
        assert!(r.decoded().starts_with(b"{\"data\":["), "{accept}");
    }
}

#[tokio::test]
async fn refusing_identity_and_every_coding_we_send_is_a_406_problem() {
    let app = spawn_app().await;
    for accept in [
        "identity;q=0",
        "*;q=0",
        "deflate, identity;q=0",
        "br;q=0, *;q=0",
    ] {
        let r = raw(&app, Method::GET, PAGE, &[("accept-encoding", accept)]).await;
        assert_eq!(r.status, StatusCode::NOT_ACCEPTABLE, "{accept}");
        assert_eq!(r.header("content-type"), Some("application/problem+json"));
        let problem: serde_json::Value = serde_json::from_slice(&r.bytes).expect("a problem");
        assert_eq!(problem["code"], "not_acceptable");
    }
    // Refusing identity with a coding we send is no refusal at all: even a short body comes
    // compressed then.
    let r = raw(
        &app,
        Method::GET,
        "/api/v1/usage",
        &[("accept-encoding", "gzip, identity;q=0")],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert!(r.decoded().starts_with(b"{"));
}

#[tokio::test]
async fn short_bodies_heads_304s_and_204s_are_not_compressed() {
    let app = spawn_app().await;
    let all = [("accept-encoding", "zstd, br, gzip")];
    let usage = raw(&app, Method::GET, "/api/v1/usage", &all).await;
    assert_eq!(usage.status, StatusCode::OK);
    assert!(usage.bytes.len() < 1024);
    assert_eq!(usage.header("content-encoding"), None);

    let head = raw(&app, Method::HEAD, PAGE, &all).await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(head.header("content-encoding"), None);
    assert!(head.bytes.is_empty());
    let plain = raw(&app, Method::GET, PAGE, &[]).await;
    assert_eq!(
        head.header("content-length"),
        Some(plain.bytes.len().to_string().as_str())
    );
    assert_eq!(head.header("vary"), Some("accept-encoding"));

    let page = raw(&app, Method::GET, PAGE, &all).await;
    let etag = page.header("etag").expect("an ETag").to_owned();
    let not_modified = raw(&app, Method::GET, PAGE, &[all[0], ("if-none-match", &etag)]).await;
    assert_eq!(not_modified.status, StatusCode::NOT_MODIFIED);
    assert_eq!(not_modified.header("content-encoding"), None);
    assert_eq!(not_modified.header("vary"), Some("accept-encoding"));
    assert!(not_modified.bytes.is_empty());

    let options = raw(&app, Method::OPTIONS, PAGE, &all).await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    assert_eq!(options.header("content-encoding"), None);
}

#[tokio::test]
async fn errors_and_writes_are_sent_as_they_are() {
    let app = spawn_app().await;
    let all = [("accept-encoding", "zstd, br, gzip")];
    let bad = raw(&app, Method::GET, "/api/v1/jobs?per_page=500", &all).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.header("content-encoding"), None);
}
