//! Locks by record id: a write to one subscription waits only for other writes to the same
//! subscription (or, for registration, the same key's), never for another tenant's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;
use uuid::Uuid;

/// One async lock per id in use; an id's lock is dropped when nobody holds or waits for it,
/// so the map holds only the ids being written.
#[derive(Debug, Default)]
pub(super) struct KeyedLocks {
    locks: Mutex<HashMap<Uuid, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds one id's lock; releases it, and forgets the lock when unused, on drop.
pub(super) struct KeyedGuard<'a> {
    locks: &'a KeyedLocks,
    id: Uuid,
    guard: Option<OwnedMutexGuard<()>>,
}

impl KeyedLocks {
    /// Waits for the lock of `id`.
    pub(super) async fn lock(&self, id: Uuid) -> KeyedGuard<'_> {
        let lock = self
            .locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id)
            .or_default()
            .clone();
        KeyedGuard {
            locks: self,
            id,
            guard: Some(lock.lock_owned().await),
        }
    }
}

impl Drop for KeyedGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut locks = self.locks.locks.lock().unwrap_or_else(|e| e.into_inner());
        // Only the map's own reference left: nobody holds or waits for it.
        if locks
            .get(&self.id)
            .is_some_and(|l| Arc::strong_count(l) == 1)
        {
            locks.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_id_waits_for_itself_only_and_unused_locks_are_forgotten() {
        let locks = KeyedLocks::default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let held = locks.lock(a).await;
        // Another id is free at once.
        drop(locks.lock(b).await);
        // The same id is not, until released.
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), locks.lock(a));
        assert!(waiting.await.is_err());
        drop(held);
        drop(locks.lock(a).await);
        assert!(locks.locks.lock().expect("the map").is_empty());
    }
}
