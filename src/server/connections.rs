//! What each connection is doing: how many requests it has in flight, and since when it has
//! had none, so that the server can close connections that stay idle. A request touches only
//! its own connection's counters: two atomic adds and a clock read.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One connection's requests.
pub(super) struct Conn {
    epoch: Instant,
    in_flight: AtomicU32,
    /// When a request last started or ended, in milliseconds since `epoch`.
    last_active: AtomicU64,
}

impl Conn {
    /// A connection accepted now, with no request yet.
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            epoch: Instant::now(),
            in_flight: AtomicU32::new(0),
            last_active: AtomicU64::new(0),
        })
    }

    fn millis(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Since when no request has been in flight; `None` while one is.
    fn idle_since(&self) -> Option<Instant> {
        (self.in_flight.load(Ordering::Acquire) == 0)
            .then(|| self.epoch + Duration::from_millis(self.last_active.load(Ordering::Acquire)))
    }

    /// Counts a request as in flight until the returned guard is dropped.
    pub(super) fn request(self: &Arc<Self>) -> InFlight {
        InFlight::new(self.clone())
    }

    /// Resolves once no request has been in flight for `limit`.
    pub(super) async fn idle_for(&self, limit: Duration) {
        loop {
            let now = Instant::now();
            let since = self.idle_since();
            let Some(wake) = since.unwrap_or(now).checked_add(limit) else {
                // A limit too far away to name an instant: never.
                return std::future::pending().await;
            };
            if since.is_some() && now >= wake {
                return;
            }
            tokio::time::sleep_until(wake.into()).await;
        }
    }
}

/// A request in flight on a connection; dropping it (answered, or abandoned by the client)
/// ends it.
pub(super) struct InFlight(Arc<Conn>);

impl InFlight {
    fn new(conn: Arc<Conn>) -> Self {
        conn.last_active.store(conn.millis(), Ordering::Release);
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(conn)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.last_active.store(self.0.millis(), Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_idle_only_with_no_request_in_flight() {
        let conn = Conn::new();
        assert!(conn.idle_since().is_some());
        let first = conn.request();
        let second = conn.request();
        drop(first);
        assert!(conn.idle_since().is_none());
        drop(second);
        assert!(conn.idle_since().is_some());
    }
}
