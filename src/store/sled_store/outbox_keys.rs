//! The outbox's key layouts on sled, and the one function that writes a delivery with every
//! index entry it has, so no write path can leave an index behind.

use super::*;

/// A time as eight bytes whose order is time order, negatives included.
pub(super) fn time_key(at: DateTime<Utc>) -> [u8; 8] {
    let nanos = at.timestamp_nanos_opt().unwrap_or(if at.timestamp() < 0 {
        i64::MIN
    } else {
        i64::MAX
    });
    ((nanos as u64) ^ (1 << 63)).to_be_bytes()
}

/// A pending delivery in the due index: `webhook id ++ due time ++ delivery id`, so one
/// subscription's due deliveries are one range, soonest first.
pub(super) fn due_key(d: &Delivery) -> Vec<u8> {
    let mut key = d.webhook_id.0.as_bytes().to_vec();
    key.extend_from_slice(&time_key(d.next_attempt_at));
    key.extend_from_slice(d.id.0.as_bytes());
    key
}

/// A settled delivery in the retention index: `settled time ++ delivery id` → its key in
/// the by-subscription index.
pub(super) fn settled_key(d: &Delivery) -> Vec<u8> {
    let mut key = time_key(d.settled_at()).to_vec();
    key.extend_from_slice(d.id.0.as_bytes());
    key
}

/// An event in the retention index: `created time ++ event id`.
pub(super) fn event_time_key(e: &OutboxEvent) -> Vec<u8> {
    let mut key = time_key(e.created_at).to_vec();
    key.extend_from_slice(e.id.0.as_bytes());
    key
}

/// A delivery's key in the by-subscription index: `webhook id ++ next attempt time ++
/// delivery id`, so a subscription's latest are read first, and only as many as asked for.
pub(super) fn by_webhook_key(d: &Delivery) -> Vec<u8> {
    let mut key = d.webhook_id.0.as_bytes().to_vec();
    key.extend_from_slice(&time_key(d.next_attempt_at));
    key.extend_from_slice(d.id.0.as_bytes());
    key
}

/// The first key after every key that starts with `prefix` (a 16-byte id); `None` after
/// the last id.
pub(super) fn after_prefix(prefix: &[u8]) -> Option<Vec<u8>> {
    let id = u128::from_be_bytes(prefix.get(..16)?.try_into().ok()?);
    id.checked_add(1).map(|next| next.to_be_bytes().to_vec())
}

/// The trees a delivery lives in, inside a transaction.
pub(super) struct DeliveryTrees<'a> {
    pub(super) deliveries: &'a TransactionalTree,
    pub(super) due: &'a TransactionalTree,
    pub(super) by_webhook: &'a TransactionalTree,
    pub(super) settled: &'a TransactionalTree,
}

impl DeliveryTrees<'_> {
    /// Writes a delivery in place of its stored version, moving its index entries: due while
    /// pending, in the retention index once settled.
    pub(super) fn write(
        &self,
        new: &Delivery,
    ) -> Result<(), ConflictableTransactionError<StoreError>> {
        let key = new.id.0.as_bytes();
        if let Some(bytes) = self.deliveries.get(key)? {
            let old: Delivery = decode(key, &bytes).map_err(abort)?;
            self.due.remove(due_key(&old))?;
            self.settled.remove(settled_key(&old))?;
            self.by_webhook.remove(by_webhook_key(&old))?;
        }
        self.deliveries
            .insert(key.as_slice(), encode(new).map_err(abort)?)?;
        self.by_webhook.insert(by_webhook_key(new), &[] as &[u8])?;
        if new.status == DeliveryStatus::Pending {
            self.due.insert(due_key(new), &[] as &[u8])?;
        } else {
            self.settled.insert(settled_key(new), by_webhook_key(new))?;
        }
        Ok(())
    }
}

/// A log entry as stored, in a segment: all the entries one job write logged, under the
/// position of the first (postcard), so a write of 512 jobs adds one key, not 512.
#[derive(Serialize, serde::Deserialize)]
pub(super) struct StoredLogEntry {
    pub(super) job_id: JobId,
    pub(super) id: EventId,
    pub(super) kind: String,
    pub(super) created_at: DateTime<Utc>,
}

impl StoredLogEntry {
    pub(super) fn of(job_id: JobId, event: &JobEvent) -> Self {
        Self {
            job_id,
            id: event.id,
            kind: event.kind.clone(),
            created_at: event.created_at,
        }
    }

    pub(super) fn logged(self, position: u64) -> LoggedEvent {
        LoggedEvent {
            position,
            job_id: self.job_id,
            event: JobEvent {
                id: self.id,
                kind: self.kind,
                created_at: self.created_at,
            },
        }
    }
}

/// Encodes a log segment.
pub(super) fn encode_segment(entries: &[StoredLogEntry]) -> StoreResult<Vec<u8>> {
    postcard::to_stdvec(entries).map_err(backend)
}

/// Decodes the log segment stored under `key`.
pub(super) fn decode_segment(key: &[u8], bytes: &[u8]) -> StoreResult<Vec<StoredLogEntry>> {
    postcard::from_bytes(bytes).map_err(|e| StoreError::Corrupt {
        key: format!("outbox_log/{}", version_of(Some(key))),
        reason: e.to_string(),
    })
}
