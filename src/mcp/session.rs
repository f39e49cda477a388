//! The ledger of open MCP sessions: which key opened each, when each was last used, and the
//! bounds on how many are open, per key and in all. The SDK's session manager holds the
//! sessions themselves; this says who may use one and whether another may open.
//!
//! A new session reserves its place before the SDK opens it, so concurrent `initialize`
//! requests cannot together pass a bound; a reservation the SDK did not turn into a session
//! gives its place back when dropped. Each session's open event streams are counted the same
//! way, against a bound of their own: every stream held in memory costs the server, and a
//! client could otherwise open them without end on one session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::api::ApiError;
use crate::domain::KeyId;

/// One open session.
#[derive(Clone, Copy, Debug)]
struct Entry {
    owner: KeyId,
    last_used: Instant,
    /// Event streams open, and being opened, in the session.
    streams: usize,
}

#[derive(Debug, Default)]
struct State {
    sessions: HashMap<Arc<str>, Entry>,
    /// Open sessions and reservations, per key.
    per_key: HashMap<KeyId, usize>,
    /// Open sessions and reservations in all.
    total: usize,
}

impl State {
    fn release(&mut self, owner: KeyId) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.per_key.get_mut(&owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_key.remove(&owner);
            }
        }
    }
}

/// The bounds a [`Ledger`] keeps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) per_key: usize,
    pub(crate) total: usize,
    pub(crate) idle_timeout: Duration,
    /// Event streams one session may hold at once.
    pub(crate) streams_per_session: usize,
}

/// Who owns which session, and how many are open.
#[derive(Clone, Debug)]
pub(crate) struct Ledger {
    state: Arc<Mutex<State>>,
    limits: Limits,
}

/// What a request naming a session finds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The session is open and the key's; it counts as used now.
    Owned,
    /// No session of this key by that id (never, closed, or another key's).
    Unknown,
    /// The key's session, idle past the timeout: it is closed now and must be closed in the
    /// SDK too.
    Expired,
}

/// A place held for one event stream of a session, from before the SDK opens it until its
/// body is dropped (sent whole, or its connection gone); then the place is free again.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    ledger: Ledger,
    session: Arc<str>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some(entry) = self.ledger.lock().sessions.get_mut(&self.session) {
            entry.streams = entry.streams.saturating_sub(1);
        }
    }
}

/// A place held for a session being opened.
#[derive(Debug)]
pub(crate) struct Reservation {
    ledger: Ledger,
    owner: KeyId,
    kept: bool,
}

impl Ledger {
    /// An empty ledger keeping `limits`.
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            state: Arc::default(),
            limits,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent at every step, so a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The sessions idle past the timeout, taken out of the ledger: the caller closes them
    /// in the SDK.
    pub(crate) fn expire_idle(&self, now: Instant) -> Vec<Arc<str>> {
        let timeout = self.limits.idle_timeout;
        let mut state = self.lock();
        let expired: Vec<(Arc<str>, KeyId)> = state
            .sessions
            .iter()
            .filter(|(_, e)| now.saturating_duration_since(e.last_used) >= timeout)
            .map(|(id, e)| (id.clone(), e.owner))
            .collect();
        for (id, owner) in &expired {
            state.sessions.remove(id);
            state.release(*owner);
        }
        expired.into_iter().map(|(id, _)| id).collect()
    }

    /// Holds a place for a new session of `owner`, or says which bound it would pass.
    pub(crate) fn reserve(&self, owner: KeyId) -> Result<Reservation, ApiError> {
        let mut state = self.lock();
        let retry_after = self.limits.idle_timeout;
        if state.per_key.get(&owner).copied().unwrap_or(0) >= self.limits.per_key {
            return Err(ApiError::TooManySessions {
                limit: self.limits.per_key,
                per_key: true,
                retry_after,
            });
        }
        if state.total >= self.limits.total {
            return Err(ApiError::TooManySessions {
                limit: self.limits.total,
                per_key: false,
                retry_after,
            });
        }
        state.total += 1;
        *state.per_key.entry(owner).or_default() += 1;
        Ok(Reservation {
            ledger: self.clone(),
            owner,
            kept: false,
        })
    }

    /// Whether `owner` may use session `id`, marking it used.
    pub(crate) fn touch(&self, id: &str, owner: KeyId, now: Instant) -> Lookup {
        let mut state = self.lock();
        let Some(entry) = state.sessions.get_mut(id).filter(|e| e.owner == owner) else {
            return Lookup::Unknown;
        };
        if now.saturating_duration_since(entry.last_used) >= self.limits.idle_timeout {
            state.sessions.remove(id);
            state.release(owner);
            return Lookup::Expired;
        }
        entry.last_used = now;
        Lookup::Owned
    }

    /// Holds a place for one more event stream of session `id` (which the caller found its
    /// key's with [`Ledger::touch`]), or says the session holds as many as it may.
    pub(crate) fn hold_stream(&self, id: &str) -> Result<StreamSlot, ApiError> {
        let limit = self.limits.streams_per_session;
        let mut state = self.lock();
        let Some((session, _)) = state.sessions.get_key_value(id) else {
            // Closed since it was touched: no stream to hold a place for.
            return Err(ApiError::UnknownSession);
        };
        let session = session.clone();
        let Some(entry) = state.sessions.get_mut(id) else {
            return Err(ApiError::UnknownSession);
        };
        if entry.streams >= limit {
            return Err(ApiError::TooManyStreams { limit });
        }
        entry.streams += 1;
        Ok(StreamSlot {
            ledger: self.clone(),
            session,
        })
    }

    /// Session `id` of `owner` is closed (by its client).
    pub(crate) fn close(&self, id: &str, owner: KeyId) {
        let mut state = self.lock();
        if state.sessions.get(id).is_some_and(|e| e.owner == owner) {
            state.sessions.remove(id);
            state.release(owner);
        }
    }

    /// How many sessions are open (and being opened).
    pub(crate) fn open(&self) -> usize {
        self.lock().total
    }
}

impl Reservation {
    /// The session opened as `id`: its place is its own now.
    pub(crate) fn keep(mut self, id: &str, now: Instant) {
        let mut state = self.ledger.lock();
        let entry = Entry {
            owner: self.owner,
            last_used: now,
            streams: 0,
        };
        if state.sessions.insert(Arc::from(id), entry).is_some() {
            // The SDK made an id it had made already: the place is counted once.
            state.release(self.owner);
        }
        self.kept = true;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.kept {
            self.ledger.lock().release(self.owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(per_key: usize, total: usize) -> Ledger {
        Ledger::new(Limits {
            per_key,
            total,
            idle_timeout: Duration::from_secs(60),
            streams_per_session: 2,
        })
    }

    #[test]
    fn a_session_holds_its_bound_of_streams_and_a_dropped_one_frees_its_place() {
        let ledger = ledger(4, 4);
        let a = KeyId::new_random();
        let now = Instant::now();
        ledger.reserve(a).expect("reserved").keep("s", now);
        ledger.reserve(a).expect("reserved").keep("t", now);
        let first = ledger.hold_stream("s").expect("the first");
        let _second = ledger.hold_stream("s").expect("the second");
        assert!(matches!(
            ledger.hold_stream("s"),
            Err(ApiError::TooManyStreams { limit: 2 })
        ));
        assert!(
            ledger.hold_stream("t").is_ok(),
            "the bound is the session's"
        );
        drop(first);
        let _third = ledger.hold_stream("s").expect("the first's place");
        ledger.close("s", a);
        assert!(matches!(
            ledger.hold_stream("s"),
            Err(ApiError::UnknownSession)
        ));
    }

    #[test]
    fn a_key_holds_at_most_its_share_and_all_keys_the_total() {
        let ledger = ledger(2, 3);
        let (a, b) = (KeyId::new_random(), KeyId::new_random());
        let now = Instant::now();
        ledger.reserve(a).expect("first").keep("a1", now);
        ledger.reserve(a).expect("second").keep("a2", now);
        assert!(matches!(
            ledger.reserve(a),
            Err(ApiError::TooManySessions { per_key: true, .. })
        ));
        ledger.reserve(b).expect("b's first").keep("b1", now);
        assert!(matches!(
            ledger.reserve(b),
            Err(ApiError::TooManySessions { per_key: false, .. })
        ));
        ledger.close("a1", a);
        assert!(ledger.reserve(b).is_ok());
    }

    #[test]
    fn a_reservation_not_kept_gives_its_place_back() {
        let ledger = ledger(1, 1);
        let a = KeyId::new_random();
        drop(ledger.reserve(a).expect("reserved"));
        assert_eq!(ledger.open(), 0);
        assert!(ledger.reserve(a).is_ok());
    }

    #[test]
    fn only_the_owner_finds_its_session_and_idle_ones_expire() {
        let ledger = ledger(4, 4);
        let (a, b) = (KeyId::new_random(), KeyId::new_random());
        let start = Instant::now();
        ledger.reserve(a).expect("reserved").keep("s", start);
        assert_eq!(ledger.touch("s", b, start), Lookup::Unknown);
        assert_eq!(ledger.touch("s", a, start), Lookup::Owned);
        ledger.close("s", b);
        assert_eq!(ledger.open(), 1, "another key cannot close it");
        let later = start + Duration::from_secs(61);
        assert_eq!(ledger.expire_idle(later), vec![Arc::<str>::from("s")]);
        assert_eq!(
            (ledger.open(), ledger.touch("s", a, later)),
            (0, Lookup::Unknown)
        );
    }
}
