//! Delivery leases for stores one process uses: kept in memory, since a restart ends every
//! attempt in flight anyway.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::domain::DeliveryId;

/// Which deliveries are leased, and until when.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    until: Mutex<HashMap<DeliveryId, DateTime<Utc>>>,
}

impl Leases {
    /// Whether `id` is leased at `now`.
    pub(crate) fn held(&self, id: DeliveryId, now: DateTime<Utc>) -> bool {
        self.until
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .is_some_and(|until| *until > now)
    }

    /// Leases `id` until `until` unless it is leased at `now`; returns whether it was taken.
    pub(crate) fn take(&self, id: DeliveryId, now: DateTime<Utc>, until: DateTime<Utc>) -> bool {
        let mut map = self.until.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(&id).is_some_and(|held| *held > now) {
            return false;
        }
        map.insert(id, until);
        true
    }

    /// Ends the lease on `id`.
    pub(crate) fn end(&self, id: DeliveryId) {
        self.until
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }
}
