//! The access log: one event per answered request, at `info`, on the target
//! [`ACCESS_LOG_TARGET`], so a subscriber can route it apart from the rest of the log or turn
//! it off (`job_listings::access=off`), as [`ApiConfig::access_log`](super::ApiConfig) does
//! at no cost at all.
//!
//! It names the caller by its key's id, never by the key: the log is read by more people than
//! the keys may be.

use std::time::Duration;

use http::{HeaderValue, Method, StatusCode};

use super::metrics::RouteLabel;
use crate::domain::KeyId;

/// The tracing target of the access log's events.
pub const ACCESS_LOG_TARGET: &str = "job_listings::access";

/// One answered request, as the access log tells it.
pub(crate) struct AccessRecord<'a> {
    pub(crate) request_id: Option<&'a HeaderValue>,
    pub(crate) key_id: Option<KeyId>,
    pub(crate) route: RouteLabel,
    pub(crate) method: &'a Method,
    pub(crate) status: StatusCode,
    pub(crate) bytes: usize,
    pub(crate) took: Duration,
}

/// Writes the record if a subscriber takes the access log's events: the fields are only
/// gathered then.
pub(crate) fn log(record: AccessRecord<'_>) {
    if !tracing::enabled!(target: ACCESS_LOG_TARGET, tracing::Level::INFO) {
        return;
    }
    // Plain ASCII either way (see `request_id`): the client's only when it is.
    let request_id = record
        .request_id
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info!(
        target: ACCESS_LOG_TARGET,
        request_id,
        key_id = record.key_id.as_ref().map(tracing::field::display),
        route = record.route.as_str(),
        method = record.method.as_str(),
        status = record.status.as_u16(),
        bytes = record.bytes,
        // Microseconds as a fraction of milliseconds: readable, and exact enough.
        latency_ms = (record.took.as_micros() as f64) / 1000.0,
        "request"
    );
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use bytes::Bytes;
    use serde_json::Value;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;

    use super::ACCESS_LOG_TARGET;
    use crate::api::{Api, ApiConfig};
    use crate::domain::Plan;
    use crate::service::{JobListingsService, NewKey};
    use crate::store::MemoryStore;

    /// What a subscriber wrote.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
        }
    }

    /// The access log's lines, as JSON, from a subscriber of this test's thread (the
    /// current-thread runtime answers every request on it).
    fn capture() -> (Buffer, tracing::subscriber::DefaultGuard) {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .json()
                .flatten_event(true)
                .with_writer(move || writer.clone())
                .with_filter(tracing_subscriber::filter::filter_fn(|event| {
                    event.target() == ACCESS_LOG_TARGET
                })),
        );
        (buffer, tracing::subscriber::set_default(subscriber))
    }

    async fn api(config: ApiConfig) -> (Api, String, String) {
        let service = JobListingsService::builder()
            .store(Arc::new(MemoryStore::new()))
            .build()
            .await
            .expect("a service");
        let (key, record) = service
            .create_key(NewKey::new(Plan::Developer))
            .await
            .expect("a key");
        let api = Api::with_config(service, config);
        (api, key.expose().to_owned(), record.id.to_string())
    }

    async fn get(api: &Api, path: &str, headers: &[(&str, &str)]) -> http::Response<Bytes> {
        let mut req = http::Request::get(path);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        api.handle(req.body(Bytes::new()).expect("a request")).await
    }

    #[tokio::test]
    async fn each_request_is_logged_with_its_key_id_route_and_status_never_its_key() {
        let (api, key, key_id) = api(ApiConfig::default()).await;
        let (log, _logging) = capture();
        let bearer = format!("Bearer {key}");
        let ok = get(
            &api,
            "/api/v1/usage",
            &[("authorization", &bearer), ("x-request-id", "log-test-1")],
        )
        .await;
        assert_eq!(ok.status(), 200);
        let unknown = uuid::Uuid::new_v4();
        get(
            &api,
            &format!("/api/v1/jobs/{unknown}"),
            &[("x-api-key", &key)],
        )
        .await;
        let wrong = "jl_live_0000000000000000000000000000000000";
        get(&api, "/api/v1/usage", &[("x-api-key", wrong)]).await;

        let text = log.text();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 3, "{text}");
        let first = &lines[0];
        assert_eq!(first["target"], ACCESS_LOG_TARGET);
        assert_eq!(first["level"], "INFO");
        assert_eq!(first["request_id"], "log-test-1");
        assert_eq!(first["key_id"], key_id.as_str());
        assert_eq!(first["route"], "/api/v1/usage");
        assert_eq!(first["method"], "GET");
        assert_eq!(first["status"], 200);
        assert_eq!(first["bytes"], ok.body().len());
        assert!(first["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0));
        assert_eq!(lines[1]["route"], "/api/v1/jobs/{id}");
        assert_eq!(lines[1]["status"], 404);
        assert_eq!(lines[1]["key_id"], key_id.as_str());
        assert_eq!(lines[2]["status"], 401);
        assert!(lines[2].get("key_id").is_none(), "no valid key, no key id");
        for secret in [key.as_str(), wrong, &unknown.to_string()] {
            assert!(!text.contains(secret), "{secret} in the access log: {text}");
        }
    }

    #[tokio::test]
    async fn turned_off_it_logs_nothing() {
        let (api, key, _) = api(ApiConfig {
            access_log: false,
            ..ApiConfig::default()
        })
        .await;
        let (log, _logging) = capture();
        get(&api, "/api/v1/usage", &[("x-api-key", &key)]).await;
        get(&api, "/nowhere", &[]).await;
        assert_eq!(log.text(), "");
    }
}
