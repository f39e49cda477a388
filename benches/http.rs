//! One HTTP request through the whole stack below the socket: `Api::handle` parses the
//! request, authenticates and meters the key, queries the engine, reads the store and writes
//! JSON. Run with `cargo bench --bench http`.

// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use std::sync::Arc;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use http::Request;
use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::Plan;
use job_listings::service::{JobListingsService, NewKey, Quotas, ServiceConfig};
use job_listings::store::{SledConfig, SledStore};

/// The bundled server's allocator, so the figures are the server's (the `job-listings` binary's).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn http(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let data = Dataset::generate(1, 500, 20_000);
    let first_active = data
        .jobs
        .iter()
        .find(|j| j.is_active())
        .map(|j| j.id)
        .unwrap_or_else(|| panic!("the dataset has active jobs"));
    let (api, key) = rt.block_on(async {
        let store =
            SledStore::open(&SledConfig::new(dir.path())).unwrap_or_else(|e| panic!("sled: {e}"));
        let config = ServiceConfig::default().quotas(Quotas::default().enterprise(1 << 39));
        let service = JobListingsService::builder()
            .store(Arc::new(store))
            .config(config)
            .build()
            .await
            .unwrap_or_else(|e| panic!("service: {e}"));
        service
            .upsert_companies(data.companies.clone())
            .await
            .unwrap_or_else(|e| panic!("companies: {e}"));
        for chunk in data.jobs.chunks(2_000) {
            service
                .upsert_jobs(chunk.to_vec())
                .await
                .unwrap_or_else(|e| panic!("jobs: {e}"));
        }
        let (key, _) = service
            .create_key(NewKey::new(Plan::Enterprise))
            .await
            .unwrap_or_else(|e| panic!("key: {e}"));
        (Api::new(service), key)
    });

    let request = |uri: &str| {
        Request::get(uri)
            .header("x-api-key", key.expose())
            .body(Bytes::new())
            .unwrap_or_else(|e| panic!("request: {e}"))
    };
    let search = request("/api/v1/jobs?domain=engineering&remote_only=true&q=rust&per_page=20");
    let browse = request("/api/v1/jobs?per_page=20&page=3");
    let detail = request(&format!("/api/v1/jobs/{first_active}"));

    let mut group = c.benchmark_group("http_20k");
    group.bench_function("get_jobs_search", |b| {
        b.to_async(&rt).iter(|| api.handle(search.clone()))
    });
    group.bench_function("get_jobs_browse_page_3", |b| {
        b.to_async(&rt).iter(|| api.handle(browse.clone()))
    });
    group.bench_function("get_job_by_id", |b| {
        b.to_async(&rt).iter(|| api.handle(detail.clone()))
    });
    group.finish();
}

criterion_group!(benches, http);
criterion_main!(benches);
