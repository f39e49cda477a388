//! Exact, lock-free quota metering.
//!
//! Each key has one `AtomicU64` holding its billing period number and calls used. A call
//! reserves a unit with a compare-and-swap before it runs and gives it back if it fails, so with
//! Q calls left exactly Q succeed however many race, and no lock is shared between keys.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Months, Utc};

use crate::store::{KeyStore, UsageCounter};

const USED_BITS: u32 = 40;
const USED_MASK: u64 = (1 << USED_BITS) - 1;

fn pack(period: u64, used: u64) -> u64 {
    (period << USED_BITS) | (used & USED_MASK)
}

fn unpack(v: u64) -> (u64, u64) {
    (v >> USED_BITS, v & USED_MASK)
}

/// When period number `n` (counted from 0 at `anchor`) starts.
pub(crate) fn period_start(anchor: DateTime<Utc>, n: u64) -> DateTime<Utc> {
    u32::try_from(n)
        .ok()
        .and_then(|n| anchor.checked_add_months(Months::new(n)))
        .unwrap_or(anchor)
}

/// The billing period `now` falls in, counted in months from `anchor`: its number and bounds.
pub(crate) fn period_at(
    anchor: DateTime<Utc>,
    now: DateTime<Utc>,
) -> (u64, DateTime<Utc>, DateTime<Utc>) {
    let start_of = |n: u32| anchor.checked_add_months(Months::new(n)).unwrap_or(anchor);
    if now < anchor {
        return (0, anchor, start_of(1));
    }
    use chrono::Datelike;
    let guess = (now.year() - anchor.year()) * 12 + now.month() as i32 - anchor.month() as i32;
    // Each bound is worked out once (month arithmetic is most of a call's cost): two in the
    // usual case, where the guess is right.
    let mut n = guess.max(0) as u32;
    let mut start = start_of(n);
    while n > 0 && start > now {
        n -= 1;
        start = start_of(n);
    }
    let mut end = start_of(n + 1);
    while end <= now {
        n += 1;
        start = end;
        end = start_of(n + 1);
    }
    (u64::from(n), start, end)
}

/// One key's usage counter.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    state: AtomicU64,
    dirty: AtomicBool,
}

impl Meter {
    /// A meter that has counted `used` calls in period `period`.
    pub(crate) fn with(period: u64, used: u64) -> Self {
        Self {
            state: AtomicU64::new(pack(period, used)),
            dirty: AtomicBool::new(false),
        }
    }

    /// Calls used in `period` (0 when the meter is still on an earlier period).
    pub(crate) fn used_in(&self, period: u64) -> u64 {
        let (p, used) = unpack(self.state.load(Ordering::Acquire));
        if p == period {
            used
        } else {
            0
        }
    }

    /// Reserves one call in `period` (or in the meter's own period, if another caller has
    /// already moved it on) if fewer than `quota` are used there. Returns the period the call
    /// was counted in and the calls used after it.
    pub(crate) fn try_reserve(&self, period: u64, quota: u64) -> Option<(u64, u64)> {
        let mut cur = self.state.load(Ordering::Acquire);
        loop {
            let (p, used) = unpack(cur);
            let (counted_in, used) = if p < period { (period, 0) } else { (p, used) };
            if used >= quota {
                return None;
            }
            let next = pack(counted_in, used + 1);
            match self
                .state
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some((counted_in, used + 1)),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Gives back a call counted in `period`.
    pub(crate) fn release(&self, period: u64) {
        let released = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |cur| {
                let (p, used) = unpack(cur);
                (p == period && used > 0).then(|| pack(p, used - 1))
            });
        if released.is_ok() {
            self.mark_dirty();
        }
    }

    /// Records what the store counted in `period`, for a meter that counts nothing itself
    /// (with in-store metering): what a caller reads of its quota without asking the store
    /// again. Never marks the meter changed, so it is never written back.
    pub(crate) fn observe(&self, period: u64, used: u64) {
        self.state.store(pack(period, used), Ordering::Release);
    }

    /// The period the meter is on and the calls used in it.
    pub(crate) fn snapshot(&self) -> (u64, u64) {
        unpack(self.state.load(Ordering::Acquire))
    }

    /// Marks the counter as changed since it was last written to the store.
    pub(crate) fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    /// Clears the changed mark, returning whether it was set.
    pub(crate) fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::AcqRel)
    }
}

/// Where a reserved call was counted.
#[derive(Debug)]
enum Counted {
    /// On a key's in-memory meter, in period number `period`.
    InMemory { meter: Arc<Meter>, period: u64 },
    /// By the store, on this counter.
    InStore {
        store: Arc<dyn KeyStore>,
        counter: UsageCounter,
    },
    /// Nowhere: metering is off.
    Nowhere,
}

/// Gives back a call the store counted. Should that fail, the call stays counted: a failure
/// may overcount by one call, never undercount.
async fn uncount(store: &dyn KeyStore, counter: UsageCounter) {
    if let Err(e) = store
        .uncount_call(counter.key_id, counter.period_start)
        .await
    {
        tracing::error!(key_id = %counter.key_id, error = %e, "giving back a failed call failed; it stays counted");
    }
}

/// A reserved call: committed when the call succeeds, given back when dropped uncommitted
/// (the call failed, or its caller went away before the answer).
#[derive(Debug)]
pub(crate) struct Reservation {
    counted: Counted,
    committed: bool,
}

impl Reservation {
    pub(crate) fn in_memory(meter: Arc<Meter>, period: u64) -> Self {
        Self {
            counted: Counted::InMemory { meter, period },
            committed: false,
        }
    }

    pub(crate) fn in_store(store: Arc<dyn KeyStore>, counter: UsageCounter) -> Self {
        Self {
            counted: Counted::InStore { store, counter },
            committed: false,
        }
    }

    /// A call that is not counted (metering is off).
    pub(crate) fn uncounted() -> Self {
        Self {
            counted: Counted::Nowhere,
            committed: false,
        }
    }

    /// Gives the call back now (it failed), waiting for the store when it counted it.
    pub(crate) async fn give_back(mut self) {
        self.committed = true;
        match &self.counted {
            Counted::InMemory { meter, period } => meter.release(*period),
            Counted::InStore { store, counter } => uncount(store.as_ref(), *counter).await,
            Counted::Nowhere => {}
        }
    }

    /// Keeps the call counted.
    pub(crate) fn commit(mut self) {
        self.committed = true;
        if let Counted::InMemory { meter, .. } = &self.counted {
            meter.mark_dirty();
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        match &self.counted {
            Counted::InMemory { meter, period } => meter.release(*period),
            Counted::InStore { store, counter } => {
                // The caller went away mid-call and Drop cannot wait: give the call back in
                // the background.
                let (store, counter) = (store.clone(), *counter);
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move { uncount(store.as_ref(), counter).await });
                }
            }
            Counted::Nowhere => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, 12, 0, 0)
            .single()
            .unwrap_or_default()
    }

    #[test]
    fn periods_are_months_from_the_anchor_clamped_to_month_end() {
        let anchor = at(2026, 1, 31);
        assert_eq!(period_at(anchor, at(2026, 1, 31)).0, 0);
        let (n, start, end) = period_at(anchor, at(2026, 3, 1));
        assert_eq!(n, 1);
        assert_eq!(start, at(2026, 2, 28));
        assert_eq!(end, at(2026, 3, 31));
        assert_eq!(period_at(anchor, at(2027, 1, 31)).0, 12);
    }

    #[test]
    fn reservations_stop_at_the_quota_and_reset_in_a_new_period() {
        let m = Meter::default();
        assert_eq!(m.try_reserve(0, 2), Some((0, 1)));
        assert_eq!(m.try_reserve(0, 2), Some((0, 2)));
        assert_eq!(m.try_reserve(0, 2), None);
        m.release(0);
        assert_eq!(m.used_in(0), 1);
        assert_eq!(m.try_reserve(1, 2), Some((1, 1)));
        assert_eq!(m.used_in(0), 0);
        // A caller still on period 1 while another has moved the meter to 2 is counted in 2,
        // and its release gives the unit back there.
        assert_eq!(m.try_reserve(2, 2), Some((2, 1)));
        assert_eq!(m.try_reserve(1, 2), Some((2, 2)));
        m.release(2);
        assert_eq!(m.snapshot(), (2, 1));
    }
}
