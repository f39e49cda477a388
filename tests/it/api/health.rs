//! GET /livez and GET /readyz: no key, nothing metered, 200 while the store takes writes; a
//! store that refuses writes makes the server not ready at once and not live after the grace.
//! A real full disk is shown by `bash benches/load/full_disk.sh`, which needs root for its
//! small tmpfs; here a sled store refuses writes through a tap.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use job_listings::service::ServiceConfig;
use job_listings::store::StoreError;
use reqwest::{Method, StatusCode};

use super::spawn_app;
use crate::support::store::open_sled;
use crate::support::tap::{Tap, TappedStore};
use crate::support::{eventually, Auth, Resp, StoreKind, TestApp};

/// A disk that can be filled and emptied: while full, every write is refused.
#[derive(Default)]
struct Disk {
    full: AtomicBool,
}

impl Tap for Disk {
    fn refuse_write(&self) -> Option<StoreError> {
        self.full
            .load(Ordering::SeqCst)
            .then(|| StoreError::backend("writing", "No space left on device (os error 28)"))
    }
}

/// A server on a sled store behind `disk`, with `grace` before writes failing make it not
/// live; and the folder that holds the store.
async fn on_disk(disk: Arc<Disk>, grace: Duration) -> (TestApp, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a folder");
    let sled = Arc::new(open_sled(dir.path()).await.expect("sled opens"));
    let app = TestApp::builder()
        .store(StoreKind::Given(Arc::new(TappedStore::new(sled, disk))))
        .config(ServiceConfig::default().write_failure_grace(grace))
        .spawn()
        .await;
    (app, dir)
}

async fn health(app: &TestApp, path: &str) -> Resp {
    app.request(Method::GET, path, Auth::None, &[], None).await
}

#[tokio::test]
async fn readyz_is_503_from_the_first_refused_write_and_livez_only_after_the_grace() {
    let disk = Arc::new(Disk::default());
    let (app, _dir) = on_disk(disk.clone(), Duration::from_secs(3_600)).await;
    assert_eq!(health(&app, "/readyz").await.status, StatusCode::OK);
    disk.full.store(true, Ordering::SeqCst);
    // The probe's last answer is kept for up to a second: wait for the next probe.
    let refused = eventually(Duration::from_secs(30), || async {
        health(&app, "/readyz").await.status == StatusCode::SERVICE_UNAVAILABLE
    })
    .await;
    assert!(
        refused,
        "/readyz still answers 200 with every write refused"
    );
    let ready = health(&app, "/readyz").await;
    assert_eq!(ready.body["status"], "not_ready", "{}", ready.body);
    let failing = &ready.body["store_writes"];
    assert!(
        failing["error"]
            .as_str()
            .is_some_and(|e| e.contains("No space left")),
        "{failing}"
    );
    assert!(failing["failing_since"].is_string(), "{failing}");
    // Within the grace (an hour) the process is still live: no restart yet.
    let live = health(&app, "/livez").await;
    assert_eq!(live.status, StatusCode::OK, "{}", live.body);
    // Writes taken again: ready again.
    disk.full.store(false, Ordering::SeqCst);
    let back = eventually(Duration::from_secs(30), || async {
        health(&app, "/readyz").await.status == StatusCode::OK
    })
    .await;
    assert!(back, "/readyz stays 503 once writes are taken again");
}

#[tokio::test]
async fn livez_is_503_once_writes_have_failed_for_longer_than_the_grace() {
    let disk = Arc::new(Disk::default());
    // No grace: the first refused write is already past it.
    let (app, _dir) = on_disk(disk.clone(), Duration::ZERO).await;
    assert_eq!(health(&app, "/livez").await.status, StatusCode::OK);
    disk.full.store(true, Ordering::SeqCst);
    let dead = eventually(Duration::from_secs(30), || async {
        health(&app, "/livez").await.status == StatusCode::SERVICE_UNAVAILABLE
    })
    .await;
    assert!(
        dead,
        "/livez still answers 200 with writes refused past the grace"
    );
    let live = health(&app, "/livez").await;
    assert_eq!(
        live.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        live.body
    );
    assert!(
        live.body["store_writes"]["failing_since"].is_string(),
        "{}",
        live.body
    );
    assert_eq!(
        health(&app, "/readyz").await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
}

#[tokio::test]
async fn livez_and_readyz_answer_without_a_key_and_cost_nothing() {
    let app = spawn_app().await;
    let key = &app.keys.developer.raw;
    let before = app.calls_used(key).await;
    for (path, status) in [("/livez", "live"), ("/readyz", "ready")] {
        let r = app.request(Method::GET, path, Auth::None, &[], None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        assert_eq!(r.body["status"], status, "{path}");
        assert!(r.body.get("store_writes").is_none(), "{}", r.body);
        // With a key too: still not metered.
        let keyed = app.get_as(key, path).await;
        assert_eq!(keyed.status, StatusCode::OK);
        let head = app.request(Method::HEAD, path, Auth::None, &[], None).await;
        assert_eq!(head.status, StatusCode::OK);
        assert!(head.text.is_empty());
    }
    let after = app.calls_used(key).await;
    assert_eq!(after, before, "the probes were not counted");
}

#[tokio::test]
async fn health_takes_only_get_and_no_parameters() {
    let app = spawn_app().await;
    let post = app
        .request(Method::POST, "/readyz", Auth::None, &[], None)
        .await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED, "{}", post.text);
    assert_eq!(post.header("allow"), Some("GET, HEAD, OPTIONS"));
    let params = app.get("/livez?verbose=1").await;
    assert_eq!(params.status, StatusCode::BAD_REQUEST, "{}", params.text);
    assert_eq!(params.body["code"], "unknown_parameter", "{}", params.body);
}
