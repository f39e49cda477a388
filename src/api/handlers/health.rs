//! `GET /livez` and `GET /readyz`: health for load balancers and orchestrators, outside the
//! versioned API, with no key and nothing metered (see
//! [`JobListingsService::health`](crate::service::JobListingsService::health)).

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{Method, Request, StatusCode};
use schemars::JsonSchema;
use serde::Serialize;

use super::{no_params, Handled};
use crate::api::error::ApiError;
use crate::api::{Api, Reply};

/// Which check a path asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// `/livez`: does the process need a restart?
    Live,
    /// `/readyz`: should traffic come here?
    Ready,
}

impl Probe {
    /// The probe a path names, if any.
    pub(crate) fn of(path: &str) -> Option<Self> {
        match path {
            "/livez" => Some(Probe::Live),
            "/readyz" => Some(Probe::Ready),
            _ => None,
        }
    }
}

const ALLOW: &str = "GET, HEAD, OPTIONS";

/// The answer of a probe.
// Members in name order, as they were sent when this was a JSON map.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Health")]
pub(crate) struct HealthView<'a> {
    /// `/readyz` of a replica of a shared store: how many changes of other replicas it has
    /// yet to apply, while more than it may lag (not ready until it catches up).
    #[serde(skip_serializing_if = "Option::is_none")]
    follower_behind: Option<u64>,
    /// While the public listener leaves waiting connections unaccepted, every connection
    /// slot busy: since when (not live).
    #[serde(skip_serializing_if = "Option::is_none")]
    listener: Option<ListenerStall>,
    /// `live` or `not_live` (`/livez`), `ready` or `not_ready` (`/readyz`).
    #[schemars(with = "ProbeStatus")]
    status: &'static str,
    /// While the store refuses writes: why, and since when.
    #[serde(skip_serializing_if = "Option::is_none")]
    store_writes: Option<StoreWrites<'a>>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct ListenerStall {
    /// Always false: the listener is not accepting connections.
    accepting: bool,
    /// When it stopped accepting them.
    stalled_since: DateTime<Utc>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
struct StoreWrites<'a> {
    /// The store's error.
    error: &'a str,
    /// When writes started failing.
    failing_since: DateTime<Utc>,
}

/// What a probe answers.
#[derive(JsonSchema)]
#[schemars(inline, rename_all = "snake_case")]
#[allow(dead_code)] // A schema only: the status is written as a string.
enum ProbeStatus {
    Live,
    NotLive,
    Ready,
    NotReady,
}

/// Answers a health probe: 200, or 503 saying why.
pub(crate) async fn answer(api: &Api, req: &Request<Bytes>, probe: Probe) -> Handled {
    match *req.method() {
        Method::OPTIONS => return Ok(Reply::options(ALLOW)),
        Method::GET | Method::HEAD => {}
        _ => return Err(ApiError::MethodNotAllowed { allow: ALLOW }.into()),
    }
    no_params(req)?;
    let health = api.service().health().await;
    let ok = match probe {
        Probe::Live => health.live,
        Probe::Ready => health.ready,
    };
    let status = match (probe, ok) {
        (Probe::Live, true) => "live",
        (Probe::Live, false) => "not_live",
        (Probe::Ready, true) => "ready",
        (Probe::Ready, false) => "not_ready",
    };
    let body = HealthView {
        follower_behind: health.follower_behind.filter(|_| probe == Probe::Ready),
        listener: health
            .listener_stalled_since
            .map(|stalled_since| ListenerStall {
                accepting: false,
                stalled_since,
            }),
        status,
        store_writes: health
            .store_writes_failing
            .as_ref()
            .map(|(error, failing_since)| StoreWrites {
                error,
                failing_since: *failing_since,
            }),
    };
    let code = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    Ok(Reply::new(
        code,
        Some(Bytes::from(serde_json::to_vec(&body).unwrap_or_default())),
        None,
    ))
}
