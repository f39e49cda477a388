//! Cross-origin calls from browsers: off by default; with `cors_origins`, preflights are
//! answered for the origins allowed, answers expose the quota and request-id headers, and
//! credentials are never allowed.

use job_listings::api::{ApiConfig, CorsOrigin};
use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::data::{demo_dataset, known};
use crate::support::{Auth, Resp, TestApp};

const APP: &str = "https://app.example.com";

async fn with_origins(origins: &[&str]) -> TestApp {
    let known = known();
    TestApp::builder()
        .api_config(
            ApiConfig::default().cors_origins(
                origins
                    .iter()
                    .map(|o| CorsOrigin::parse(o).expect("an origin"))
                    .collect(),
            ),
        )
        .seed(demo_dataset())
        .seed(job_listings::demo::Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .spawn()
        .await
}

async fn preflight(app: &TestApp, origin: &str) -> Resp {
    app.request(
        Method::OPTIONS,
        "/api/v1/jobs",
        Auth::None,
        &[
            ("origin", origin),
            ("access-control-request-method", "GET"),
            ("access-control-request-headers", "x-api-key, if-none-match"),
        ],
        None,
    )
    .await
}

async fn get_from(app: &TestApp, origin: &str, key: Option<&str>) -> Resp {
    let auth = key.map_or(Auth::None, Auth::XApiKey);
    app.request(
        Method::GET,
        "/api/v1/jobs",
        auth,
        &[("origin", origin)],
        None,
    )
    .await
}

fn vary(r: &Resp) -> Vec<String> {
    r.headers
        .get_all("vary")
        .iter()
        .flat_map(|v| v.to_str().unwrap().split(','))
        .map(|v| v.trim().to_ascii_lowercase())
        .collect()
}

#[tokio::test]
async fn without_configured_origins_no_answer_carries_cors_headers() {
    let app = spawn_app().await;
    let p = preflight(&app, APP).await;
    assert_eq!(p.status, StatusCode::NO_CONTENT);
    assert!(p.header("allow").is_some());
    assert_eq!(p.header("access-control-allow-origin"), None);
    assert_eq!(p.header("access-control-allow-methods"), None);
    let r = get_from(&app, APP, Some(&app.keys.enterprise.raw)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("access-control-allow-origin"), None);
    assert_eq!(r.header("access-control-expose-headers"), None);
}

#[tokio::test]
async fn an_allowed_origin_gets_its_preflight_and_reads_the_quota_headers() {
    let app = with_origins(&[APP, "http://localhost:5173"]).await;
    let p = preflight(&app, APP).await;
    assert_eq!(p.status, StatusCode::NO_CONTENT);
    assert_eq!(p.header("access-control-allow-origin"), Some(APP));
    assert_eq!(
        p.header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    let headers = p
        .header("access-control-allow-headers")
        .expect("allowed headers")
        .to_ascii_lowercase();
    for name in [
        "x-api-key",
        "authorization",
        "if-none-match",
        "content-type",
    ] {
        assert!(headers.contains(name), "{name} in {headers}");
    }
    assert!(p.header("access-control-max-age").is_some());
    assert_eq!(p.header("access-control-allow-credentials"), None);
    assert!(vary(&p).contains(&"origin".to_owned()));

    let other = with_origins(&["http://localhost:5173"]).await;
    assert_eq!(
        preflight(&other, "http://localhost:5173")
            .await
            .header("access-control-allow-origin"),
        Some("http://localhost:5173")
    );

    let r = get_from(&app, APP, Some(&app.keys.enterprise.raw)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("access-control-allow-origin"), Some(APP));
    let exposed = r
        .header("access-control-expose-headers")
        .expect("exposed")
        .to_ascii_lowercase();
    for name in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "ratelimit",
        "ratelimit-policy",
        "x-request-id",
        "retry-after",
        "etag",
    ] {
        assert!(
            exposed.split(", ").any(|e| e == name),
            "{name} in {exposed}"
        );
    }
    assert_eq!(r.header("access-control-allow-credentials"), None);
    let v = vary(&r);
    assert!(
        v.contains(&"origin".to_owned()) && v.contains(&"accept-encoding".to_owned()),
        "{v:?}"
    );

    // A refusal is readable by the page too: it says what went wrong.
    let refused = get_from(&app, APP, None).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(refused.header("access-control-allow-origin"), Some(APP));
}

#[tokio::test]
async fn an_origin_not_allowed_gets_no_cors_headers() {
    let app = with_origins(&[APP]).await;
    for origin in [
        "https://evil.example.com",
        "https://app.example.com.evil.example",
        "http://app.example.com",
        "null",
    ] {
        let p = preflight(&app, origin).await;
        assert_eq!(p.status, StatusCode::NO_CONTENT, "{origin}");
        assert_eq!(p.header("access-control-allow-origin"), None, "{origin}");
        assert_eq!(p.header("access-control-allow-methods"), None, "{origin}");
        let r = get_from(&app, origin, Some(&app.keys.enterprise.raw)).await;
        assert_eq!(r.status, StatusCode::OK, "{origin}");
        assert_eq!(r.header("access-control-allow-origin"), None, "{origin}");
        assert!(vary(&r).contains(&"origin".to_owned()));
    }
}

#[tokio::test]
async fn a_star_allows_any_origin_and_never_credentials() {
    let app = with_origins(&["*"]).await;
    for origin in [APP, "https://anything.example.org", "null"] {
        let p = preflight(&app, origin).await;
        assert_eq!(
            p.header("access-control-allow-origin"),
            Some("*"),
            "{origin}"
        );
        assert_eq!(p.header("access-control-allow-credentials"), None);
        let r = get_from(&app, origin, Some(&app.keys.enterprise.raw)).await;
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        assert_eq!(r.header("access-control-allow-credentials"), None);
        assert!(!vary(&r).contains(&"origin".to_owned()));
    }
    // A request with no Origin is no CORS request.
    let plain = app.get("/api/v1/jobs").await;
    assert_eq!(plain.header("access-control-allow-origin"), None);
}
