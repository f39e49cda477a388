//! The HTTP API end to end: the real hyper server on 127.0.0.1 over a sled store in a
//! temporary folder, seeded with the demo dataset and the hand-made records of
//! [`known`](crate::support::data::known), driven with reqwest.

mod auth;
mod changes;
mod companies;
mod compression;
mod conditional;
mod cors;
mod errors;
mod facets;
mod health;
mod jobs;
mod llms;
mod methods;
mod metrics;
mod openapi;
mod places;
mod rate_limits;
mod relevance;
mod reposts;
mod restart;
mod usage;
mod webhooks;

use job_listings::demo::Dataset;
use job_listings::service::ServiceConfig;

use crate::support::data::{demo_dataset, known};
use crate::support::TestApp;

/// Every job `GET /jobs` answers for `query`, page after page, and the total it gives.
pub async fn every_job(app: &TestApp, query: &str) -> (Vec<serde_json::Value>, u64) {
    let mut found = Vec::new();
    let mut total = 0;
    for page in 1.. {
        let r = app
            .get_jobs(&format!("{query}&per_page=50&page={page}"))
            .await;
        assert_eq!(r.status, 200, "{query}: {}", r.text);
        total = r.body["pagination"]["total"].as_u64().expect("a total");
        let jobs = r.body["data"].as_array().expect("data").clone();
        let done = jobs.len() < 50;
        found.extend(jobs);
        if done {
            break;
        }
    }
    (found, total)
}

/// The ids of jobs as answered.
pub fn ids_of(jobs: &[serde_json::Value]) -> Vec<String> {
    jobs.iter()
        .map(|j| j["id"].as_str().expect("an id").to_owned())
        .collect()
}

/// Starts the API suite's app with the default service configuration.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(ServiceConfig::default()).await
}

/// Starts the API suite's app with the given service configuration (quotas, rate limits,
/// webhook limit and policy).
pub async fn spawn_app_with(config: ServiceConfig) -> TestApp {
    let known = known();
    TestApp::builder()
        .config(config)
        .seed(demo_dataset())
        .seed(Dataset {
            companies: known.companies(),
            jobs: known.jobs(),
        })
        .spawn()
        .await
}
