//! What the server in front of the service reports of its public listener: the connections
//! it keeps, and whether it has stopped taking new ones. `GET /livez` and `/metrics` read it.
//!
//! The service knows no sockets; a frontend's accept loop writes this report (the bundled
//! [`Server`](crate::server::Server) does for the listener of the [`Api`](crate::api::Api)
//! that owns the service). A listener that leaves a waiting connection unaccepted for too
//! long cannot serve anyone new while the process looks healthy in every other way: only a
//! liveness probe that says so gets it restarted.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use chrono::{DateTime, Utc};

/// The public listener's state, as its accept loop last reported it.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ListenerReport {
    open: AtomicU64,
    kept: AtomicU64,
    stalled_since: Mutex<Option<DateTime<Utc>>>,
}

impl ListenerReport {
    /// The connections served and not told to close (`open`), and those kept in all, open
    /// or closing (`kept`).
    pub fn connections(&self, open: usize, kept: usize) {
        self.open.store(open as u64, Relaxed);
        self.kept.store(kept as u64, Relaxed);
    }

    /// A connection has waited since `since` for a slot that no request gave back: the
    /// listener takes no one new. Not live until [`ListenerReport::accepting`].
    pub fn stalled(&self, since: DateTime<Utc>) {
        *self.lock() = Some(since);
    }

    /// The listener takes connections again.
    pub fn accepting(&self) {
        *self.lock() = None;
    }

    /// Since when the listener has taken no one new while a connection waits, if it has not.
    pub fn stalled_since(&self) -> Option<DateTime<Utc>> {
        *self.lock()
    }

    /// The connections as last reported: (open, kept).
    pub fn connection_counts(&self) -> (u64, u64) {
        (self.open.load(Relaxed), self.kept.load(Relaxed))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<DateTime<Utc>>> {
        self.stalled_since.lock().unwrap_or_else(|e| e.into_inner())
    }
}
