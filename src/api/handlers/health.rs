//! `GET /livez` and `GET /readyz`: health for load balancers and orchestrators, outside the
//! versioned API, with no key and nothing metered (see
//! [`JobListingsService::health`](crate::service::JobListingsService::health)).

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use serde_json::json;

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
    let mut body = json!({ "status": status });
    if let Some((error, since)) = health.store_writes_failing {
        body["store_writes"] = json!({ "error": error, "failing_since": since });
    }
    if let Some(since) = health.listener_stalled_since {
        body["listener"] = json!({ "accepting": false, "stalled_since": since });
    }
    if let (Probe::Ready, Some(behind)) = (probe, health.follower_behind) {
        body["follower_behind"] = json!(behind);
    }
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
