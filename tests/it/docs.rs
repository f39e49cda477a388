//! The docs quote behaviour, and these tests keep them true: the metrics table of
//! `docs/operating.md` names exactly the metric families a server serves on `/metrics`, and
//! the error table of `docs/api.md` names exactly the problem codes the API answers with.
//! One small server for the metrics; the codes come from their one declaration,
//! `ErrorCode::ALL`, and the OpenAPI documents.

use std::collections::BTreeSet;
use std::path::Path;

use job_listings::api::admin::{admin_openapi_json, AdminApi, AdminToken};
use job_listings::api::{openapi_json, ErrorCode};
use job_listings::demo::Dataset;
use reqwest::{Method, StatusCode};

use crate::support::server::{server_config, RunningServer};
use crate::support::{Auth, TestApp};

/// A file of the repository, by its path from the root.
fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

/// The cells of each row of the table whose header row starts with `header`, the first such
/// table after the line `heading`.
fn table(doc: &str, heading: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = doc
        .lines()
        .skip_while(|l| *l != heading)
        .skip_while(|l| !l.starts_with(header));
    assert!(
        lines.next().is_some(),
        "no table with the header `{header}` under `{heading}`"
    );
    let rows: Vec<Vec<String>> = lines
        .skip(1) // |---|---|
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            row.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect();
    assert!(!rows.is_empty(), "the table under `{heading}` has no rows");
    rows
}

/// What is written between backticks in `text`.
fn quoted(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The metric families of a Prometheus text exposition, by the names their samples carry:
/// a counter's with `_total` (which the 0.0.4 format's `TYPE` line has, and OpenMetrics' not).
fn families(exposition: &str) -> BTreeSet<String> {
    exposition
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| match l.split_once(' ') {
            Some((name, "counter")) if !name.ends_with("_total") => format!("{name}_total"),
            Some((name, _)) => name.to_owned(),
            None => panic!("a TYPE line without a type: {l}"),
        })
        .collect()
}

#[tokio::test]
async fn the_metrics_table_in_the_operating_docs_names_exactly_the_families_on_metrics() {
    let app = TestApp::builder()
        .seed(Dataset::generate(11, 5, 20))
        .spawn()
        .await;
    // A family with nothing counted yet may be left out: count a problem answer.
    app.request(Method::GET, "/api/v1/jobs", Auth::None, &[], None)
        .await
        .assert_problem(401, "missing_api_key", None);
    // The snapshot's age is served once known: once a snapshot reflects every job.
    app.service
        .save_index_snapshot()
        .await
        .expect("the index saved");
    let token = AdminToken::generate();
    let admin = RunningServer::start(
        AdminApi::new(app.api.clone(), token.hash()),
        server_config(),
    )
    .await;
    let answer = reqwest::Client::new()
        .get(format!("{}/metrics", admin.base))
        .bearer_auth(token.expose())
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::OK);
    let served = families(&answer.text().await.expect("a body"));
    assert!(served.len() > 10, "{served:?}");

    let doc = read("docs/operating.md");
    let mut named = BTreeSet::new();
    let mut postgres_only = BTreeSet::new();
    for row in table(&doc, "## Metrics and logs", "| metric |") {
        for name in quoted(&row[0]).filter(|n| n.starts_with("job_listings_")) {
            named.insert(name.to_owned());
            if row.join(" ").contains("PostgreSQL only") {
                postgres_only.insert(name.to_owned());
            }
        }
    }

    let unnamed: Vec<_> = served.difference(&named).collect();
    assert!(
        unnamed.is_empty(),
        "served on /metrics, missing from docs/operating.md's metrics table: {unnamed:?}"
    );
    let unserved: Vec<_> = named
        .difference(&served)
        .filter(|n| !postgres_only.contains(*n))
        .collect();
    assert!(
        unserved.is_empty(),
        "in docs/operating.md's metrics table, not served on /metrics: {unserved:?}"
    );
    // What the table says is PostgreSQL's alone, a server on sled does not serve.
    let on_sled: Vec<_> = postgres_only.intersection(&served).collect();
    assert!(
        on_sled.is_empty(),
        "said to be PostgreSQL only, served on sled: {on_sled:?}"
    );
}

/// The codes the API answers with: the one list, `ErrorCode::ALL`.
fn codes_of_the_error_table() -> BTreeSet<String> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect()
}

/// The codes an OpenAPI document declares for its problem documents.
fn declared_codes(document: &str) -> BTreeSet<String> {
    let doc: serde_json::Value = serde_json::from_str(document).expect("JSON");
    doc["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
        .as_array()
        .expect("an enum of codes")
        .iter()
        .map(|c| c.as_str().expect("a code").to_owned())
        .collect()
}

#[test]
fn the_error_table_in_the_api_docs_names_exactly_the_codes_the_api_answers_with() {
    let given = codes_of_the_error_table();
    let doc = read("docs/api.md");
    let tabled: BTreeSet<String> = table(&doc, "## Errors", "| status |")
        .iter()
        .flat_map(|row| quoted(&row[1]).map(str::to_owned).collect::<Vec<_>>())
        .collect();

    let untabled: Vec<_> = given.difference(&tabled).collect();
    assert!(
        untabled.is_empty(),
        "answered by the API, missing from docs/api.md's error table: {untabled:?}"
    );
    // Each row's status is the code's: one status for every code of the row, or one each.
    for row in table(&doc, "## Errors", "| status |") {
        let codes: Vec<&str> = quoted(&row[1]).collect();
        let statuses: Vec<u16> = row[0].split(", ").filter_map(|s| s.parse().ok()).collect();
        for (i, code) in codes.iter().enumerate() {
            let listed = if statuses.len() == codes.len() {
                statuses[i]
            } else {
                statuses[0]
            };
            let declared = ErrorCode::ALL.iter().find(|c| c.as_str() == *code);
            if let Some(declared) = declared {
                assert_eq!(
                    declared.status().as_u16(),
                    listed,
                    "docs/api.md gives `{code}` status {listed}"
                );
            }
        }
    }
    let unknown: Vec<_> = tabled.difference(&given).collect();
    assert!(
        unknown.is_empty(),
        "in docs/api.md's error table, never answered by the API: {unknown:?}"
    );
    // The codes the OpenAPI documents declare are the table's too.
    for (api, document) in [("public", openapi_json()), ("admin", admin_openapi_json())] {
        let declared = declared_codes(document);
        let missing: Vec<_> = declared.difference(&tabled).collect();
        assert!(
            missing.is_empty(),
            "declared by the {api} OpenAPI document, missing from docs/api.md: {missing:?}"
        );
    }
}
