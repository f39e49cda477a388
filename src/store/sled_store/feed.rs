//! The job change feed on sled: one small entry per change, and the job states those entries
//! refer to kept only once a later write replaces them.
//!
//! An entry (`feed`: position → kind, job id, time) names its job, not a copy of it: the
//! job's record is that state until the job is written again, and the record ends with the
//! entry's position (`job_record::with_feed_position`). The write that replaces it moves the
//! record it replaces under that position (`feed_states`). A bulk load of new jobs so writes
//! 25 bytes and 8 more per job, not each post twice.

use chrono::{DateTime, TimeZone, Utc};
use sled::transaction::{ConflictableTransactionResult, TransactionalTree};

use super::*;
use crate::domain::ChangeKind;
use crate::store::{FeedBounds, FeedEntry};

/// The meta key of the newest feed position: a big-endian `u64`.
pub(super) const FEED_HEAD: &[u8] = b"feed_head";
/// The meta key of the last position retention removed: a big-endian `u64`.
const FEED_PRUNED: &[u8] = b"feed_pruned_through";

/// Positions handed out within one transaction that writes jobs: the head and the retention
/// mark read from the meta tree once, the head written back once.
pub(super) struct FeedAppender<'t> {
    meta: &'t TransactionalTree,
    head: Option<u64>,
    pruned_through: Option<u64>,
}

impl<'t> FeedAppender<'t> {
    pub(super) fn new(meta: &'t TransactionalTree) -> Self {
        Self {
            meta,
            head: None,
            pruned_through: None,
        }
    }

    /// Records one change and returns its position, for the job's record to end with.
    pub(super) fn append(
        &mut self,
        feed: &TransactionalTree,
        kind: ChangeKind,
        id: JobId,
        at: DateTime<Utc>,
    ) -> ConflictableTransactionResult<u64, StoreError> {
        let head = match self.head {
            Some(head) => head,
            None => version_of(self.meta.get(FEED_HEAD)?.as_deref()),
        };
        let position = head + 1;
        self.head = Some(position);
        feed.insert(&position.to_be_bytes(), &encode_entry(kind, id, at)[..])?;
        Ok(position)
    }

    /// Keeps a record a write replaced as the state of the entry it ends with, unless
    /// retention has removed that entry.
    pub(super) fn keep_replaced(
        &mut self,
        states: &TransactionalTree,
        replaced: sled::IVec,
    ) -> ConflictableTransactionResult<(), StoreError> {
        let Some(position) = job_record::feed_position(&replaced) else {
            return Ok(());
        };
        let pruned_through = match self.pruned_through {
            Some(p) => p,
            None => version_of(self.meta.get(FEED_PRUNED)?.as_deref()),
        };
        self.pruned_through = Some(pruned_through);
        if position > pruned_through {
            states.insert(&position.to_be_bytes(), replaced)?;
        }
        Ok(())
    }

    /// Writes the newest position back, when any was handed out.
    pub(super) fn finish(self) -> ConflictableTransactionResult<(), StoreError> {
        if let Some(head) = self.head {
            self.meta.insert(FEED_HEAD, &head.to_be_bytes())?;
        }
        Ok(())
    }
}

/// An entry's value: the kind's code, the job id, and the time in nanoseconds since the
/// epoch, big-endian.
fn encode_entry(kind: ChangeKind, id: JobId, at: DateTime<Utc>) -> [u8; 25] {
    let mut out = [0u8; 25];
    out[0] = kind_code(kind);
    out[1..17].copy_from_slice(id.0.as_bytes());
    let nanos = at.timestamp_nanos_opt().unwrap_or(i64::MAX);
    out[17..].copy_from_slice(&nanos.to_be_bytes());
    out
}

fn kind_code(kind: ChangeKind) -> u8 {
    match kind {
        ChangeKind::New => 1,
        ChangeKind::Updated => 2,
        ChangeKind::Closed => 3,
        ChangeKind::Deleted => 4,
    }
}

fn decode_entry(position: u64, value: &[u8]) -> StoreResult<(ChangeKind, JobId, DateTime<Utc>)> {
    let corrupt = |reason: &str| StoreError::Corrupt {
        key: format!("feed/{position}"),
        reason: reason.to_owned(),
    };
    let value: &[u8; 25] = value
        .try_into()
        .map_err(|_| corrupt("an entry is 25 bytes"))?;
    let kind = match value[0] {
        1 => ChangeKind::New,
        2 => ChangeKind::Updated,
        3 => ChangeKind::Closed,
        4 => ChangeKind::Deleted,
        _ => return Err(corrupt("unknown kind")),
    };
    let mut id = [0u8; 16];
    id.copy_from_slice(&value[1..17]);
    let mut nanos = [0u8; 8];
    nanos.copy_from_slice(&value[17..]);
    Ok((
        kind,
        JobId(uuid::Uuid::from_bytes(id)),
        Utc.timestamp_nanos(i64::from_be_bytes(nanos)),
    ))
}

impl SledStore {
    /// The newest position handed out, on disk or not.
    pub(super) fn feed_head(&self) -> StoreResult<u64> {
        Ok(version_of(
            self.meta.get(FEED_HEAD).map_err(backend)?.as_deref(),
        ))
    }

    /// Takes every position handed out so far as on disk: at open, and after a flush.
    pub(super) fn mark_feed_durable(&self) -> StoreResult<()> {
        let head = self.feed_head()?;
        self.feed_durable
            .fetch_max(head, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// The newest position readers may see: the newest known to be on disk.
    fn feed_readable(&self) -> u64 {
        self.feed_durable.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The feed's entries after `after`, each with its job's state; only those on disk.
    pub(super) fn feed_entries_after(
        &self,
        after: u64,
        limit: usize,
    ) -> StoreResult<Vec<FeedEntry>> {
        let mut out = Vec::with_capacity(limit.min(1024));
        let (from, to) = (after.saturating_add(1), self.feed_readable());
        if from > to {
            return Ok(out);
        }
        for item in self
            .feed
            .range(from.to_be_bytes()..=to.to_be_bytes())
            .take(limit)
        {
            let (key, value) = item.map_err(backend)?;
            let position = version_of(Some(&key));
            let (kind, job_id, at) = decode_entry(position, &value)?;
            let job = match kind {
                ChangeKind::Deleted => None,
                // A deleted job's content is not served, whatever state an entry kept.
                _ => match self.cached_job(job_id)? {
                    None => None,
                    Some(current) => match self.feed_states.get(&key).map_err(backend)? {
                        Some(state) => Some(Arc::new(decode_job(job_id.0.as_bytes(), &state)?)),
                        None => Some(current),
                    },
                },
            };
            out.push(FeedEntry {
                position,
                kind,
                job_id,
                at,
                job,
            });
        }
        Ok(out)
    }

    pub(super) fn feed_bounds_now(&self) -> StoreResult<FeedBounds> {
        Ok(FeedBounds {
            pruned_through: version_of(self.meta.get(FEED_PRUNED).map_err(backend)?.as_deref()),
            head: self.feed_readable(),
        })
    }

    /// Removes up to `limit` of the oldest entries made before `before`, with their states,
    /// in one transaction (not flushed).
    pub(super) fn prune_feed_entries(
        &self,
        before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<usize> {
        let mut old = Vec::new();
        for item in self.feed.iter().take(limit) {
            let (key, value) = item.map_err(backend)?;
            let position = version_of(Some(&key));
            let (_, _, at) = decode_entry(position, &value)?;
            if at >= before {
                break;
            }
            old.push(position);
        }
        let Some(&last) = old.last() else {
            return Ok(0);
        };
        (&self.feed, &self.feed_states, &self.meta)
            .transaction(|(feed, states, meta)| {
                for position in &old {
                    let key = position.to_be_bytes();
                    feed.remove(&key)?;
                    states.remove(&key)?;
                }
                meta.insert(FEED_PRUNED, &last.to_be_bytes())?;
                Ok(())
            })
            .map_err(tx_error)?;
        Ok(old.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_as_written() {
        let id = JobId(uuid::Uuid::from_u128(7));
        let at = Utc.timestamp_nanos(1_764_000_000_123_456_789);
        for kind in ChangeKind::ALL {
            let decoded = decode_entry(3, &encode_entry(kind, id, at)).ok();
            assert_eq!(decoded, Some((kind, id, at)));
        }
        assert!(decode_entry(3, &[9u8; 25]).is_err());
        assert!(decode_entry(3, &[1u8; 24]).is_err());
    }
}
