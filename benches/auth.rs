//! Key checks: `JobListingsService::authenticate` for a valid key, a well-formed key that was
//! never issued and a revoked key, with 1,000 issued keys in the registry. The three should
//! cost about the same (one SHA-256, one map lookup, one constant-time compare), so timing
//! does not tell a caller whether a key exists. Run with `cargo bench --bench auth`.

// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use job_listings::domain::{ApiKey, Plan};
use job_listings::service::{JobListingsService, NewKey};
use job_listings::store::MemoryStore;

/// The bundled server's allocator, so the figures are the server's (the `job-listings` binary's).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Keys issued before measuring, so the lookup is in a registry of realistic size.
const ISSUED: usize = 1_000;

fn auth(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
    // The service's background tasks need the runtime's context while it lives.
    let _guard = rt.enter();
    let (service, valid, revoked) = rt.block_on(async {
        let service = JobListingsService::builder()
            .store(Arc::new(MemoryStore::new()))
            .build()
            .await
            .unwrap_or_else(|e| panic!("service: {e}"));
        let issue = |plan| {
            let service = service.clone();
            async move {
                service
                    .create_key(NewKey::new(plan))
                    .await
                    .unwrap_or_else(|e| panic!("key: {e}"))
            }
        };
        for _ in 0..ISSUED {
            issue(Plan::Developer).await;
        }
        let (valid, _) = issue(Plan::Enterprise).await;
        let (revoked, record) = issue(Plan::Enterprise).await;
        service
            .revoke_key(record.id)
            .await
            .unwrap_or_else(|e| panic!("revoke: {e}"));
        (service, valid, revoked)
    });
    let unknown = ApiKey::generate();
    assert!(service.caller(&valid).is_ok());
    assert!(service.caller(&unknown).is_err());
    assert!(service.caller(&revoked).is_err());

    let mut group = c.benchmark_group("authenticate");
    group.bench_function("valid_key", |b| {
        b.iter(|| black_box(service.caller(black_box(&valid))))
    });
    group.bench_function("unknown_well_formed_key", |b| {
        b.iter(|| black_box(service.caller(black_box(&unknown))))
    });
    group.bench_function("revoked_key", |b| {
        b.iter(|| black_box(service.caller(black_box(&revoked))))
    });
    group.finish();
}

criterion_group!(benches, auth);
criterion_main!(benches);
