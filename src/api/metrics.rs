//! The HTTP layer's metrics: requests by route pattern, method and status with how long they
//! took, and problem answers by their stable code.
//!
//! Every request is counted, so counting must cost next to nothing: a request's route,
//! method and status are small indexes (the router already knows the route's place in
//! [`ROUTES`]) into arrays of atomics made when the [`Api`](super::Api) is built, instead of a
//! label set hashed and looked up under a lock. Label values are bounded: a path that matches
//! no route counts as `unmatched`, never as itself.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::admin::ADMIN_ROUTES;
use super::endpoints::ROUTES;
use super::handlers::health::Probe;
use crate::service::DurationHistogram;

/// The route a request matched, as a metric label: a pattern of [`ROUTES`] or of the admin
/// API's, a health probe, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RouteLabel(usize);

/// Labels after the public API's routes: the admin API's (whose health probes count as the
/// public ones do), then the probes and none.
const ADMIN: usize = ROUTES.len();
const LIVEZ: usize = ADMIN + ADMIN_ROUTES.len();
const READYZ: usize = LIVEZ + 1;
const LLMS_TXT: usize = LIVEZ + 2;
const UNMATCHED: usize = LIVEZ + 3;
const ROUTE_LABELS: usize = LIVEZ + 4;

impl RouteLabel {
    /// A path that matches no route.
    pub(crate) const UNMATCHED: RouteLabel = RouteLabel(UNMATCHED);
    /// `/llms.txt`.
    pub(crate) const LLMS_TXT: RouteLabel = RouteLabel(LLMS_TXT);

    /// The route at `index` in [`ROUTES`].
    pub(crate) fn route(index: usize) -> Self {
        if index < ADMIN {
            Self(index)
        } else {
            Self::UNMATCHED
        }
    }

    /// The admin route at `index` in [`ADMIN_ROUTES`]; its health probes count as the
    /// public API's.
    pub(crate) fn admin(index: usize) -> Self {
        let Some(route) = ADMIN_ROUTES.get(index) else {
            return Self::UNMATCHED;
        };
        Probe::of(route.path).map_or(Self(ADMIN + index), Self::probe)
    }

    /// A health probe's path.
    pub(crate) fn probe(probe: Probe) -> Self {
        match probe {
            Probe::Live => Self(LIVEZ),
            Probe::Ready => Self(READYZ),
        }
    }

    /// The label's value: the route's pattern, such as `/api/v1/jobs/{id}`.
    pub(crate) fn as_str(self) -> &'static str {
        match self.0 {
            LIVEZ => "/livez",
            READYZ => "/readyz",
            LLMS_TXT => super::llms::PATH,
            i if i < ADMIN => ROUTES[i].path,
            i if i < LIVEZ => ADMIN_ROUTES[i - ADMIN].path,
            _ => "unmatched",
        }
    }
}

/// Methods counted apart; any other counts as `other`.
const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other",
];

fn method_index(method: &Method) -> usize {
    match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::PATCH => 4,
        Method::DELETE => 5,
        Method::OPTIONS => 6,
        _ => 7,
    }
}

/// Statuses counted apart: every one the API answers, and the common others a frontend or a
/// future endpoint might; any other counts as `other`.
const STATUSES: [u16; 36] = [
    200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 406, 408, 409,
    410, 411, 412, 413, 414, 415, 416, 422, 428, 429, 431, 500, 501, 502, 503, 504, 507,
];
const OTHER_STATUS: usize = STATUSES.len();

fn status_index(status: StatusCode) -> usize {
    STATUSES
        .binary_search(&status.as_u16())
        .unwrap_or(OTHER_STATUS)
}

/// The counts behind the HTTP layer's metrics, shared by the [`Api`](super::Api) that counts
/// and the registry that writes them out.
#[derive(Debug)]
pub(crate) struct HttpMetrics {
    /// Requests by route, method and status, flattened in that order.
    requests: Box<[AtomicU64]>,
    /// How long requests took, by route and method.
    durations: Box<[DurationHistogram]>,
    /// Problem answers by code: not on the hot path, and their codes are the table's.
    problems: Family<[(&'static str, &'static str); 1], Counter>,
}

impl HttpMetrics {
    /// The metrics of a new API, registered in `registry`.
    pub(crate) fn registered(registry: &mut Registry) -> Arc<Self> {
        let metrics = Arc::new(Self {
            requests: (0..ROUTE_LABELS * METHODS.len() * (STATUSES.len() + 1))
                .map(|_| AtomicU64::new(0))
                .collect(),
            durations: (0..ROUTE_LABELS * METHODS.len())
                .map(|_| DurationHistogram::default())
                .collect(),
            problems: Family::default(),
        });
        registry.register_collector(Box::new(RequestCollector(metrics.clone())));
        registry.register(
            "job_listings_http_problems",
            // The client adds the final full stop.
            "Answers that were problem documents (4xx and 5xx), by their stable code, such as \
             quota_exceeded or rate_limited",
            metrics.problems.clone(),
        );
        metrics
    }

    /// Counts an answered request.
    pub(crate) fn request(
        &self,
        route: RouteLabel,
        method: &Method,
        status: StatusCode,
        took: Duration,
    ) {
        let route_method = route.0 * METHODS.len() + method_index(method);
        let at = route_method * (STATUSES.len() + 1) + status_index(status);
        self.requests[at].fetch_add(1, Relaxed);
        self.durations[route_method].observe(took);
    }

    /// Counts a problem answer.
    pub(crate) fn problem(&self, code: &'static str) {
        self.problems.get_or_create(&[("code", code)]).inc();
    }
}

/// Writes the request counts and durations at each scrape; a series appears once its first
/// request is counted.
#[derive(Debug)]
struct RequestCollector(Arc<HttpMetrics>);

impl Collector for RequestCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let metrics = &self.0;
        let mut requests = encoder.encode_descriptor(
            "job_listings_http_requests",
            "Requests answered, by route pattern (unmatched for no route), method and status.",
            None,
            MetricType::Counter,
        )?;
        let statuses = STATUSES.len() + 1;
        for (at, count) in metrics.requests.iter().enumerate() {
            let count = count.load(Relaxed);
            if count == 0 {
                continue;
            }
            let (route_method, status) = (at / statuses, at % statuses);
            let mut code = itoa::Buffer::new();
            let status = STATUSES.get(status).map_or("other", |s| code.format(*s));
            let labels = [
                ("route", route_label(route_method)),
                ("method", METHODS[route_method % METHODS.len()]),
                ("status", status),
            ];
            requests
                .encode_family(&labels)?
                .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
        }
        let mut durations = encoder.encode_descriptor(
            "job_listings_http_request_duration_seconds",
            "How long requests took, from the request's head to the answer made, by route \
             pattern and method.",
            None,
            MetricType::Histogram,
        )?;
        for (route_method, histogram) in metrics.durations.iter().enumerate() {
            if histogram.count() == 0 {
                continue;
            }
            let labels = [
                ("route", route_label(route_method)),
                ("method", METHODS[route_method % METHODS.len()]),
            ];
            histogram.encode(durations.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// The route of a route-and-method index.
fn route_label(route_method: usize) -> &'static str {
    RouteLabel(route_method / METHODS.len()).as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statuses_are_sorted_for_the_binary_search() {
        assert!(STATUSES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(status_index(StatusCode::OK), 0);
        assert_eq!(status_index(StatusCode::IM_A_TEAPOT), OTHER_STATUS);
    }

    #[test]
    fn every_route_has_a_label_of_its_own() {
        let labels: Vec<RouteLabel> = (0..ROUTES.len())
            .map(RouteLabel::route)
            .chain((0..ADMIN_ROUTES.len()).map(RouteLabel::admin))
            .chain([
                RouteLabel::probe(Probe::Live),
                RouteLabel::probe(Probe::Ready),
                RouteLabel::LLMS_TXT,
                RouteLabel::UNMATCHED,
            ])
            .collect();
        let patterns: std::collections::HashSet<&str> = ROUTES
            .iter()
            .map(|r| r.path)
            .chain(ADMIN_ROUTES.iter().map(|r| r.path))
            .chain(["/llms.txt", "unmatched"])
            .collect();
        let distinct: std::collections::HashSet<RouteLabel> = labels.iter().copied().collect();
        assert_eq!(distinct.len(), patterns.len(), "one label per pattern");
        for label in labels {
            assert!(patterns.contains(label.as_str()), "{}", label.as_str());
        }
        assert_eq!(RouteLabel::UNMATCHED.as_str(), "unmatched");
        assert_eq!(RouteLabel::route(1).as_str(), "/api/v1/jobs/{id}");
        let admin = |path: &str| {
            let index = ADMIN_ROUTES.iter().position(|r| r.path == path);
            RouteLabel::admin(index.unwrap_or(usize::MAX))
        };
        assert_eq!(admin("/livez"), RouteLabel::probe(Probe::Live));
        assert_eq!(admin("/admin/v1/jobs/{id}").as_str(), "/admin/v1/jobs/{id}");
        assert_eq!(admin("/nowhere"), RouteLabel::UNMATCHED);
    }
}
