//! Health for load balancers and orchestrators: ready while the store takes writes (and, on
//! a store shared by replicas, while this one's follower is within a bound of the change
//! feed's head), live until the store has refused writes for longer than the configured grace.
//!
//! sled keeps an I/O error (such as a full disk) and fails every later write even after the
//! cause is gone; only a new process recovers. So a store that keeps refusing writes makes the
//! process not ready at once (traffic goes to other replicas) and not live after the grace (the
//! orchestrator restarts it).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{JobListingsService, ListenerReport};

/// How often the store is probed at most: health checks in between get the last answer.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// What the last probes found.
#[derive(Debug, Default)]
pub(super) struct HealthState {
    last: Mutex<Option<Probe>>,
    /// What the server in front reports of its public listener.
    listener: Arc<ListenerReport>,
}

#[derive(Clone, Debug)]
struct Probe {
    at: Instant,
    /// The failure, and when failures began (the first of an unbroken run).
    failing: Option<(String, Instant, DateTime<Utc>)>,
}

/// The service's health, as `GET /readyz` and `GET /livez` report it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Health {
    /// The store takes writes: send traffic here.
    pub ready: bool,
    /// Writes have not failed for longer than the grace, and the public listener takes new
    /// connections: no restart needed.
    pub live: bool,
    /// Why writes fail and since when, while they do.
    pub store_writes_failing: Option<(String, DateTime<Utc>)>,
    /// On a store shared by replicas, the changes of other replicas this one has yet to
    /// apply, when more than [`ServiceConfig::max_follower_lag`](super::ServiceConfig):
    /// not ready until it catches up.
    pub follower_behind: Option<u64>,
    /// Since when the public listener has left a waiting connection unaccepted, with every
    /// connection slot busy (see [`ServerConfig::accept_stall_limit`]), while it has: not
    /// live.
    ///
    /// [`ServerConfig::accept_stall_limit`]: crate::server::ServerConfig::accept_stall_limit
    pub listener_stalled_since: Option<DateTime<Utc>>,
}

impl JobListingsService {
    /// Where a frontend's accept loop reports the public listener's connections and stalls
    /// (the bundled server does, for the listener of the `Api` that owns this service).
    pub fn listener_report(&self) -> Arc<ListenerReport> {
        self.inner.health.listener.clone()
    }

    /// Probes the store with a small durable write (at most once a second; calls in between
    /// get the last result) and reports readiness and liveness (see the module notes).
    pub async fn health(&self) -> Health {
        let grace = self.inner.shared.config.write_failure_grace;
        let state = &self.inner.health;
        let cached = state
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|p| p.at.elapsed() < PROBE_EVERY);
        let probe = match cached {
            Some(p) => p,
            None => {
                let outcome = self.inner.store.probe_write().await;
                let mut last = state.last.lock().unwrap_or_else(|e| e.into_inner());
                let since = last.as_ref().and_then(|p| p.failing.clone());
                let probe = Probe {
                    at: Instant::now(),
                    failing: outcome.err().map(|e| match since {
                        Some((_, began, began_utc)) => (e.to_string(), began, began_utc),
                        None => {
                            tracing::error!(error = %e, "the store refuses writes: not ready");
                            (e.to_string(), Instant::now(), Utc::now())
                        }
                    }),
                };
                if probe.failing.is_none() && since.is_some() {
                    tracing::info!("the store takes writes again: ready");
                }
                *last = Some(probe.clone());
                probe
            }
        };
        let follower_behind = self
            .inner
            .shared
            .stats
            .follower
            .lag()
            .filter(|&lag| lag > self.inner.shared.config.max_follower_lag);
        let listener_stalled_since = state.listener.stalled_since();
        Health {
            ready: probe.failing.is_none() && follower_behind.is_none(),
            live: listener_stalled_since.is_none()
                && probe
                    .failing
                    .as_ref()
                    .is_none_or(|(_, began, _)| began.elapsed() < grace),
            listener_stalled_since,
            store_writes_failing: probe.failing.map(|(error, _, at)| (error, at)),
            follower_behind,
        }
    }
}
