//! Problem documents: bad parameters, unknown paths, wrong methods and request ids.

use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::data::known;
use crate::support::Auth;

/// One test per refused `GET /jobs` query: 400, `application/problem+json`, the code and the
/// parameter at fault.
macro_rules! get_jobs_refuses {
    ($($name:ident: $query:literal => $code:literal, $param:literal;)*) => {$(
        #[tokio::test]
        async fn $name() {
            let app = spawn_app().await;
            let r = app.get_jobs($query).await;
            r.assert_problem(400, $code, Some($param));
            assert!(
                r.body["detail"].as_str().is_some_and(|d| d.contains($param)),
                "the detail names {}: {}", $param, r.text
            );
        }
    )*};
}

get_jobs_refuses! {
    get_jobs_returns_400_when_per_page_is_0: "per_page=0" => "invalid_parameter", "per_page";
    get_jobs_returns_400_when_per_page_is_51: "per_page=51" => "invalid_parameter", "per_page";
    get_jobs_returns_400_when_per_page_is_not_a_number: "per_page=x" => "invalid_parameter", "per_page";
    get_jobs_returns_400_when_page_is_0: "page=0" => "invalid_parameter", "page";
    get_jobs_returns_400_when_page_is_negative: "page=-1" => "invalid_parameter", "page";
    get_jobs_returns_400_when_min_confidence_is_above_1: "min_confidence=1.5" => "invalid_parameter", "min_confidence";
    get_jobs_returns_400_when_min_confidence_is_below_0: "min_confidence=-0.1" => "invalid_parameter", "min_confidence";
    get_jobs_returns_400_when_min_confidence_is_not_a_number: "min_confidence=abc" => "invalid_parameter", "min_confidence";
    get_jobs_returns_400_when_min_confidence_is_nan: "min_confidence=NaN" => "invalid_parameter", "min_confidence";
    get_jobs_returns_400_when_posted_after_is_not_a_date: "posted_after=last-tuesday" => "invalid_parameter", "posted_after";
    get_jobs_returns_400_when_posted_after_is_an_impossible_date: "posted_after=2026-02-30" => "invalid_parameter", "posted_after";
    get_jobs_returns_400_when_remote_only_is_yes: "remote_only=yes" => "invalid_parameter", "remote_only";
    get_jobs_returns_400_when_a_domain_tag_is_malformed: "domain=ai,not%20a%20tag" => "invalid_parameter", "domain";
    get_jobs_returns_400_when_a_scalar_parameter_is_repeated: "q=rust&q=go" => "invalid_parameter", "q";
    get_jobs_returns_400_for_the_unknown_parameter_domains: "domains=ai" => "unknown_parameter", "domains";
    get_jobs_returns_400_for_an_unknown_parameter_even_when_empty: "limit=" => "unknown_parameter", "limit";
    get_jobs_returns_400_when_q_is_not_utf8_once_decoded: "q=caf%E9" => "invalid_parameter", "q";
    get_jobs_returns_400_when_a_company_is_not_utf8_once_decoded: "domain=ai&company=%FF%FE" => "invalid_parameter", "company";
    get_jobs_returns_400_when_a_country_is_not_two_letters: "country=DE,D1" => "invalid_parameter", "country";
    get_jobs_returns_400_when_a_country_has_three_letters: "country=DEU" => "invalid_parameter", "country";
    get_jobs_returns_400_when_near_is_not_two_numbers: "near=berlin" => "invalid_parameter", "near";
    get_jobs_returns_400_when_near_is_off_the_earth: "near=91,13" => "invalid_parameter", "near";
    get_jobs_returns_400_when_radius_km_is_0: "near=52.5,13.4&radius_km=0" => "invalid_parameter", "radius_km";
    get_jobs_returns_400_when_radius_km_is_over_1000: "near=52.5,13.4&radius_km=1001" => "invalid_parameter", "radius_km";
    get_jobs_returns_400_when_radius_km_comes_without_near: "radius_km=10" => "invalid_parameter", "radius_km";
    get_jobs_returns_400_when_remote_from_is_not_a_country: "remote_from=worldwide" => "invalid_parameter", "remote_from";
    get_jobs_returns_400_when_min_salary_comes_without_a_currency: "min_salary=50000" => "invalid_parameter", "salary_currency";
    get_jobs_returns_400_when_min_salary_is_negative: "min_salary=-5&salary_currency=EUR" => "invalid_parameter", "min_salary";
    get_jobs_returns_400_when_min_salary_is_empty: "min_salary=&salary_currency=EUR" => "invalid_parameter", "min_salary";
    get_jobs_returns_400_when_a_currency_is_not_three_letters: "min_salary=5&salary_currency=EURO" => "invalid_parameter", "salary_currency";
}

#[tokio::test]
async fn get_jobs_unknown_parameter_problem_lists_the_allowed_parameters() {
    let app = spawn_app().await;
    let r = app.get_jobs("domains=ai").await;
    r.assert_problem(400, "unknown_parameter", Some("domains"));
    let allowed: Vec<&str> = r.body["allowed"]
        .as_array()
        .expect("allowed is a list")
        .iter()
        .map(|a| a.as_str().expect("a parameter name"))
        .collect();
    assert_eq!(allowed, job_listings::api::JOB_PARAMS, "{allowed:?}");
    for p in [
        "domain",
        "seniority",
        "remote_only",
        "company",
        "company_id",
        "q",
        "min_confidence",
        "posted_after",
        "page",
        "per_page",
        "country",
        "near",
        "radius_km",
        "remote_from",
        "min_salary",
        "salary_currency",
    ] {
        assert!(allowed.contains(&p), "{p} in {allowed:?}");
    }
}

#[tokio::test]
async fn an_endpoint_without_query_parameters_says_so_when_given_one() {
    let app = spawn_app().await;
    for path in ["/api/v1/usage?x=1", "/api/v1/openapi.json?x=1"] {
        let r = app.get(path).await;
        r.assert_problem(400, "unknown_parameter", None);
        assert!(r.body.get("allowed").is_none(), "{path}: {}", r.body);
        let detail = r.body["detail"].as_str().unwrap_or("");
        assert!(detail.ends_with("which takes none"), "{path}: {detail}");
    }
}

#[tokio::test]
async fn get_jobs_problem_bodies_carry_the_request_id_of_the_header() {
    let app = spawn_app().await;
    let r = app.get_jobs("per_page=51").await;
    let header = r.header("x-request-id").expect("X-Request-Id");
    assert_eq!(r.body["request_id"], header);
    assert!(r.body["type"]
        .as_str()
        .is_some_and(|t| t.ends_with("invalid_parameter")));
}

#[tokio::test]
async fn an_unknown_path_returns_404() {
    let app = spawn_app().await;
    for path in [
        "/api/v1/nowhere",
        "/api/v1/jobs/a/b",
        "/jobs",
        "/api/v2/jobs",
        "/",
    ] {
        let r = app.get(path).await;
        r.assert_problem(404, "not_found", None);
    }
}

/// A trailing slash names no endpoint (not an empty id), and a path under `/api/v1` that is
/// no endpoint is answered with the list of those that are.
#[tokio::test]
async fn a_path_under_the_api_that_is_no_endpoint_lists_the_endpoints() {
    let app = spawn_app().await;
    let id = known().jobs()[0].id;
    for path in [
        "/api/v1/jobs/".to_owned(),
        "/api/v1/webhooks/".to_owned(),
        "/api/v1/usage/".to_owned(),
        "/api/v1/JOBS".to_owned(),
        format!("/api/v1/jobs/{id}/"),
        format!("/api/v1/jobs/{id}/extra"),
        "/api/v1//jobs".to_owned(),
    ] {
        let r = app.get(&path).await;
        r.assert_problem(404, "not_found", None);
        let detail = r.body["detail"].as_str().unwrap_or("");
        assert!(
            detail.contains("no trailing slash") && detail.contains("/api/v1/jobs/{id}"),
            "{path}: {detail}"
        );
    }
    let outside = app.get("/jobs").await;
    let detail = outside.body["detail"].as_str().unwrap_or("");
    assert!(detail.contains("lives under /api/v1"), "{detail}");
}

/// A URL too long for the limit on the request line and headers is a 414 that says to
/// shorten the URL, not a 431 about headers.
#[tokio::test]
async fn a_url_over_the_head_limit_is_414_uri_too_long() {
    let app = spawn_app().await;
    let r = app.get_jobs(&format!("q={}", "a".repeat(20_000))).await;
    r.assert_problem(414, "uri_too_long", None);
    let detail = r.body["detail"].as_str().unwrap_or("");
    assert!(detail.contains("shorten the query string"), "{detail}");
}

#[tokio::test]
async fn a_wrong_method_returns_405_with_allow() {
    let app = spawn_app().await;
    let key = app.keys.agent_pro.raw.clone();
    let id = uuid::Uuid::new_v4();
    let get = "GET, HEAD, OPTIONS";
    for (method, path, allow) in [
        (Method::POST, "/api/v1/jobs".to_owned(), get),
        (Method::DELETE, format!("/api/v1/jobs/{id}"), get),
        (Method::PUT, "/api/v1/companies".to_owned(), get),
        (
            Method::PUT,
            format!("/api/v1/webhooks/{id}"),
            "GET, HEAD, PATCH, DELETE, OPTIONS",
        ),
        (
            Method::DELETE,
            "/api/v1/webhooks".to_owned(),
            "GET, HEAD, POST, OPTIONS",
        ),
        (Method::POST, "/api/v1/usage".to_owned(), get),
        (
            Method::GET,
            format!("/api/v1/webhooks/{id}/test"),
            "POST, OPTIONS",
        ),
    ] {
        let r = app
            .request(method.clone(), &path, Auth::XApiKey(&key), &[], None)
            .await;
        r.assert_problem(405, "method_not_allowed", None);
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
    }
}

#[tokio::test]
async fn x_request_id_is_echoed_when_the_client_sends_one() {
    let app = spawn_app().await;
    let r = app
        .request(
            Method::GET,
            "/api/v1/jobs?per_page=1",
            Auth::XApiKey(&app.keys.developer.raw),
            &[("x-request-id", "trace-42.a:b_c")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("x-request-id"), Some("trace-42.a:b_c"));
    let r = app
        .request(
            Method::GET,
            "/api/v1/jobs/not-a-uuid",
            Auth::XApiKey(&app.keys.developer.raw),
            &[("x-request-id", "trace-43")],
            None,
        )
        .await;
    assert_eq!(r.header("x-request-id"), Some("trace-43"));
    assert_eq!(r.body["request_id"], "trace-43");
}

#[tokio::test]
async fn x_request_id_is_generated_when_missing_or_unusable() {
    let app = spawn_app().await;
    let plain = app.get_jobs("per_page=1").await;
    let generated = plain.header("x-request-id").expect("an id");
    assert!(uuid::Uuid::parse_str(generated).is_ok(), "{generated}");
    let other = app.get_jobs("per_page=1").await;
    assert_ne!(other.header("x-request-id"), Some(generated), "ids differ");

    let too_long = "x".repeat(65);
    for unusable in ["has space", too_long.as_str(), "semi;colon"] {
        let r = app
            .request(
                Method::GET,
                "/api/v1/jobs?per_page=1",
                Auth::XApiKey(&app.keys.developer.raw),
                &[("x-request-id", unusable)],
                None,
            )
            .await;
        let id = r.header("x-request-id").expect("an id");
        assert_ne!(id, unusable);
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    }
}
