use std::sync::Mutex;

use chrono::{DateTime, Utc};

/// Where the service reads the time. [`SystemClock`] is the default; [`ManualClock`] lets tests
/// move time (for example across a billing period).
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The operating system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until told to move.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Mutex::new(start))
    }

    /// Sets the time.
    pub fn set(&self, to: DateTime<Utc>) {
        if let Ok(mut t) = self.0.lock() {
            *t = to;
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.0.lock().map_or_else(|e| *e.into_inner(), |t| *t)
    }
}
