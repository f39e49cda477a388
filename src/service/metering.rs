//! Exact, lock-free quota metering: the metering rule, applied in memory or in the store.
//!
//! The rule: a key may make `quota` calls in each billing period; a call counts one, a failed
//! call gives its unit back, and a new period starts over from 0. A count already on a later
//! period (another caller with a clock ahead) counts the call there.
//!
//! In memory, each key has one `AtomicU64` holding its billing period number and calls used. A
//! call reserves a unit with a compare-and-swap before it runs and gives it back if it fails, so
//! with Q calls left exactly Q succeed however many race, and no lock is shared between keys.
//! In the store, the same rule is applied to the key's [`UsageCounter`] with the store's
//! compare-and-swap ([`UsageStore::swap_usage`]), so replicas sharing the store count exactly
//! together; the store itself knows nothing of periods or quotas. Within one process the calls
//! of a key change its stored counter one at a time, from the counter the last one left: they
//! never lose a swap to each other (a lost swap costs a read and another swap), and need no
//! read before their swap. Only another replica's call makes one read again.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Months, Utc};

use super::Access;
use crate::domain::KeyId;
use crate::store::{StoreResult, UsageCounter, UsageStore};

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

/// The counter after one more call in the period starting `period_start`, or `None` when
/// `quota` calls are already counted there. A counter on an earlier period starts over; a
/// counter already on a later period (a caller with a stale clock) counts the call there.
fn counted(
    stored: Option<UsageCounter>,
    key_id: KeyId,
    period_start: DateTime<Utc>,
    quota: u64,
) -> Option<UsageCounter> {
    let current = match stored {
        Some(c) if c.period_start >= period_start => c,
        _ => UsageCounter {
            key_id,
            period_start,
            calls_used: 0,
        },
    };
    (current.calls_used < quota).then_some(UsageCounter {
        calls_used: current.calls_used + 1,
        ..current
    })
}

/// The counter after giving back one call counted in the period starting `period_start`;
/// `None` when there is nothing to give back there.
fn uncounted(stored: Option<UsageCounter>, period_start: DateTime<Utc>) -> Option<UsageCounter> {
    stored
        .filter(|c| c.period_start == period_start && c.calls_used > 0)
        .map(|c| UsageCounter {
            calls_used: c.calls_used - 1,
            ..c
        })
}

/// Applies `change` to one key's counter in the store until a swap succeeds, starting from
/// the counter `meter` last saw there: a lost swap means another replica changed the counter
/// meanwhile, so the change is decided again on what it left. Returns the counter written, or
/// `None` (nothing written) when `change` declines on the counter as stored now.
async fn change_in_store(
    store: &dyn UsageStore,
    key_id: KeyId,
    meter: &Meter,
    change: impl Fn(Option<UsageCounter>) -> Option<UsageCounter>,
) -> StoreResult<Option<UsageCounter>> {
    // Held across the store's round trips: the key's other calls here wait their turn
    // rather than race this one and lose.
    let mut seen = meter.in_store.lock().await;
    let (mut stored, mut fresh) = match *seen {
        Some(known) => (known, false),
        None => (store.get_usage(key_id).await?, true),
    };
    // Until the store answers, what this process saw is unknown.
    *seen = None;
    loop {
        let next = change(stored);
        let swapped = match next {
            Some(next) => store.swap_usage(stored, next).await?,
            None => false,
        };
        match next {
            Some(next) if swapped => {
                *seen = Some(Some(next));
                return Ok(Some(next));
            }
            // Declined on what the store holds: else on what it held, which may have
            // changed since (a reset by the operator).
            None if fresh => {
                *seen = Some(stored);
                return Ok(None);
            }
            _ => {}
        }
        stored = store.get_usage(key_id).await?;
        fresh = true;
    }
}

impl Access {
    /// Counts one call for `key_id` in the period starting `period_start` in the store,
    /// durably, unless `quota` calls are counted there already. Returns the counter after the
    /// call, or `None` when the quota is used up. Several processes sharing one store may
    /// count concurrently and exactly `quota` succeed.
    pub(super) async fn count_call(
        &self,
        key_id: KeyId,
        meter: &Meter,
        period_start: DateTime<Utc>,
        quota: u64,
    ) -> StoreResult<Option<UsageCounter>> {
        change_in_store(self.store.as_ref(), key_id, meter, |stored| {
            counted(stored, key_id, period_start, quota)
        })
        .await
    }
}

/// One key's usage counter.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    state: AtomicU64,
    dirty: AtomicBool,
    /// With in-store metering, the key's counter in the store as this process last read or
    /// wrote it (`None` until known), behind the lock its changes here take in turn.
    in_store: tokio::sync::Mutex<Option<Option<UsageCounter>>>,
}

impl Meter {
    /// A meter that has counted `used` calls in period `period`.
    pub(crate) fn with(period: u64, used: u64) -> Self {
        Self {
            state: AtomicU64::new(pack(period, used)),
            dirty: AtomicBool::new(false),
            in_store: tokio::sync::Mutex::new(None),
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
    /// By the store, on this counter, of the key `meter` meters.
    InStore {
        store: Arc<dyn UsageStore>,
        meter: Arc<Meter>,
        counter: UsageCounter,
    },
    /// Nowhere: metering is off.
    Nowhere,
}

/// Gives back a call the store counted. Should that fail, the call stays counted: a failure
/// may overcount by one call, never undercount.
async fn uncount(store: &dyn UsageStore, meter: &Meter, counter: UsageCounter) {
    let given_back = change_in_store(store, counter.key_id, meter, |stored| {
        uncounted(stored, counter.period_start)
    });
    if let Err(e) = given_back.await {
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

    pub(crate) fn in_store(
        store: Arc<dyn UsageStore>,
        meter: Arc<Meter>,
        counter: UsageCounter,
    ) -> Self {
        Self {
            counted: Counted::InStore {
                store,
                meter,
                counter,
            },
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
            Counted::InStore {
                store,
                meter,
                counter,
            } => uncount(store.as_ref(), meter, *counter).await,
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
            Counted::InStore {
                store,
                meter,
                counter,
            } => {
                // The caller went away mid-call and Drop cannot wait: give the call back in
                // the background.
                let (store, meter, counter) = (store.clone(), meter.clone(), *counter);
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move { uncount(store.as_ref(), &meter, counter).await });
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

    fn access() -> Access {
        Access {
            shared: crate::service::Shared::for_tests(),
            keys: Default::default(),
            store: Arc::new(crate::store::MemoryStore::new()),
        }
    }

    fn key_id(n: u128) -> KeyId {
        KeyId(uuid::Uuid::from_u128(n))
    }

    async fn used(access: &Access, key: KeyId) -> Option<(u64, DateTime<Utc>)> {
        let counter = access.store.get_usage(key).await.expect("read");
        counter.map(|c| (c.calls_used, c.period_start))
    }

    #[tokio::test]
    async fn the_store_counts_up_to_the_quota_and_starts_over_in_a_new_period() {
        let (access, key, meter) = (access(), key_id(1), Meter::default());
        let (t0, next) = (at(2026, 11, 1), at(2026, 12, 1));
        for n in 1..=3 {
            let c = access
                .count_call(key, &meter, t0, 3)
                .await
                .expect("counted");
            assert_eq!(c.map(|c| (c.calls_used, c.period_start)), Some((n, t0)));
        }
        let refused = access.count_call(key, &meter, t0, 3).await.expect("read");
        assert_eq!(refused, None);
        assert_eq!(used(&access, key).await, Some((3, t0)));
        let c = access
            .count_call(key, &meter, next, 3)
            .await
            .expect("counted");
        assert_eq!(c.map(|c| (c.calls_used, c.period_start)), Some((1, next)));
        // A caller whose clock is still in the old period counts in the newer one.
        let c = access
            .count_call(key, &meter, t0, 3)
            .await
            .expect("counted");
        assert_eq!(c.map(|c| (c.calls_used, c.period_start)), Some((2, next)));
        let other = Meter::default();
        assert_eq!(
            access
                .count_call(key_id(2), &other, t0, 0)
                .await
                .expect("read"),
            None
        );
        assert_eq!(
            used(&access, key_id(2)).await,
            None,
            "nothing written at quota 0"
        );
    }

    /// Each meter stands for a process counting one key in a shared store: a meter that
    /// last saw an old counter loses its swap and reads again, and a refusal is decided on
    /// the counter as stored, even when the meter saw it used up (the operator reset it).
    #[tokio::test]
    async fn processes_counting_one_key_in_the_store_count_together() {
        let (access, key, t0) = (access(), key_id(3), at(2026, 11, 1));
        let (here, there) = (Meter::default(), Meter::default());
        let mut expected = 0;
        for step in 0..40u64 {
            let meter = if step % 3 == 0 { &there } else { &here };
            let c = access
                .count_call(key, meter, t0, 25)
                .await
                .expect("counted");
            if expected < 25 {
                expected += 1;
                assert_eq!(c.map(|c| c.calls_used), Some(expected), "step {step}");
            } else {
                assert_eq!(c, None, "step {step}");
            }
            assert_eq!(
                used(&access, key).await,
                Some((expected, t0)),
                "step {step}"
            );
        }
        let stored = access.store.get_usage(key).await.expect("read");
        let reset = UsageCounter {
            key_id: key,
            period_start: t0,
            calls_used: 0,
        };
        assert!(access.store.swap_usage(stored, reset).await.expect("reset"));
        let c = access
            .count_call(key, &here, t0, 25)
            .await
            .expect("counted");
        assert_eq!(c.map(|c| c.calls_used), Some(1), "counted after the reset");
    }

    #[tokio::test]
    async fn a_call_given_back_to_the_store_leaves_its_own_period_only() {
        let (access, key, meter) = (access(), key_id(1), Meter::default());
        let (t0, next) = (at(2026, 11, 1), at(2026, 12, 1));
        let counter = |period_start| UsageCounter {
            key_id: key,
            period_start,
            calls_used: 1,
        };
        uncount(access.store.as_ref(), &meter, counter(t0)).await;
        assert_eq!(used(&access, key).await, None, "nothing to give back");
        for _ in 0..2 {
            access
                .count_call(key, &meter, t0, 5)
                .await
                .expect("counted");
        }
        for _ in 0..3 {
            uncount(access.store.as_ref(), &meter, counter(t0)).await;
        }
        assert_eq!(used(&access, key).await, Some((0, t0)), "never below zero");
        access
            .count_call(key, &meter, next, 5)
            .await
            .expect("counted");
        uncount(access.store.as_ref(), &meter, counter(t0)).await;
        assert_eq!(
            used(&access, key).await,
            Some((1, next)),
            "the new period kept"
        );
    }

    /// Calls of one key from three processes (three meters) sharing the store.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_calls_counted_in_the_store_succeed_exactly_quota_times() {
        let (access, key) = (Arc::new(access()), key_id(1));
        let t0 = at(2026, 11, 1);
        let meters: Vec<Arc<Meter>> = (0..3).map(|_| Arc::default()).collect();
        let calls = (0..60).map(|n| {
            let (access, meter) = (access.clone(), meters[n % 3].clone());
            tokio::spawn(async move { access.count_call(key, &meter, t0, 25).await })
        });
        let mut handed: Vec<u64> = Vec::new();
        for call in calls {
            if let Some(c) = call.await.expect("joined").expect("no store error") {
                handed.push(c.calls_used);
            }
        }
        handed.sort_unstable();
        assert_eq!(handed, (1..=25).collect::<Vec<u64>>());
        assert_eq!(used(&access, key).await, Some((25, t0)));
    }
}
