//! A bounded cache of stored job JSON in front of the sled tree.
//!
//! A search page reads twenty jobs; from sled each is a B-tree walk under an epoch guard and a
//! copy, more than half of a page's work. Here a hit is one hash lookup and a reference count.
//!
//! The store fills the cache after a miss and empties an entry after each write. A fill that
//! read the tree before a write but lands after the write's invalidation would keep the old
//! JSON forever, so every fill carries the write count of its stripe read before the tree was:
//! a write since then refuses the fill. The count and the cache entry change together, under
//! the stripe's lock, so no interleaving leaves an old entry behind a newer write.

use std::sync::Mutex;

use bytes::Bytes;
use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::domain::JobId;

/// Stripes of write counts: enough that concurrent fills and writes rarely meet on one.
const STRIPES: usize = 64;

/// What an entry costs besides its bytes: the key, the `Bytes` handle and the table slot.
const ENTRY_OVERHEAD: u64 = 64;

/// Weighs an entry by its bytes, so the bound is in memory rather than in jobs.
#[derive(Clone, Copy)]
struct ByLength;

impl Weighter<JobId, Bytes> for ByLength {
    fn weight(&self, _id: &JobId, json: &Bytes) -> u64 {
        json.len() as u64 + ENTRY_OVERHEAD
    }
}

/// Stored JSON of recently read jobs, bounded in bytes. Capacity 0 turns it off.
pub(crate) struct JobJsonCache {
    entries: Option<Cache<JobId, Bytes, ByLength>>,
    writes: [Mutex<u64>; STRIPES],
}

/// Taken before reading the tree after a miss; [`JobJsonCache::fill`] honours it only if no
/// write to the job's stripe happened in between.
pub(crate) struct FillTicket {
    stripe: usize,
    writes_seen: u64,
}

impl JobJsonCache {
    /// A cache holding up to `capacity_bytes` of JSON.
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        let entries = (capacity_bytes > 0).then(|| {
            // A typical job is about a kilobyte; the estimate only sizes the tables up front.
            let estimated = usize::try_from(capacity_bytes / 1024).unwrap_or(usize::MAX);
            Cache::with_weighter(estimated.max(16), capacity_bytes, ByLength)
        });
        Self {
            entries,
            writes: std::array::from_fn(|_| Mutex::new(0)),
        }
    }

    /// The cached JSON of a job, if any.
    pub(crate) fn get(&self, id: &JobId) -> Option<Bytes> {
        self.entries.as_ref()?.get(id)
    }

    /// Call before reading a job that [`JobJsonCache::get`] missed.
    pub(crate) fn ticket(&self, id: &JobId) -> FillTicket {
        let stripe = stripe_of(id);
        FillTicket {
            stripe,
            writes_seen: *lock(&self.writes[stripe]),
        }
    }

    /// Keeps the JSON read from the tree, unless the job was written since the ticket.
    pub(crate) fn fill(&self, ticket: FillTicket, id: JobId, json: Bytes) {
        let Some(entries) = &self.entries else { return };
        let writes = lock(&self.writes[ticket.stripe]);
        if *writes == ticket.writes_seen {
            entries.insert(id, json);
        }
    }

    /// Call after a write of the job has committed.
    pub(crate) fn invalidate(&self, id: &JobId) {
        let Some(entries) = &self.entries else { return };
        let mut writes = lock(&self.writes[stripe_of(id)]);
        *writes = writes.wrapping_add(1);
        entries.remove(id);
    }
}

fn stripe_of(id: &JobId) -> usize {
    // Job ids are random (v4) or time-ordered (v7): the low bits are random in both.
    (id.0.as_u128() as usize) % STRIPES
}

fn lock(m: &Mutex<u64>) -> std::sync::MutexGuard<'_, u64> {
    // A u64 cannot be left half-written: a panic elsewhere does not make it unusable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn id(n: u128) -> JobId {
        JobId(Uuid::from_u128(n))
    }

    #[test]
    fn a_fill_is_served_until_the_job_is_written() {
        let cache = JobJsonCache::new(1 << 20);
        let ticket = cache.ticket(&id(1));
        cache.fill(ticket, id(1), Bytes::from_static(b"{\"v\":1}"));
        assert_eq!(cache.get(&id(1)).as_deref(), Some(&b"{\"v\":1}"[..]));
        cache.invalidate(&id(1));
        assert_eq!(cache.get(&id(1)), None);
    }

    #[test]
    fn a_fill_that_read_before_a_write_is_refused() {
        let cache = JobJsonCache::new(1 << 20);
        let ticket = cache.ticket(&id(7));
        // The write commits and invalidates while the reader still holds the old JSON.
        cache.invalidate(&id(7));
        cache.fill(ticket, id(7), Bytes::from_static(b"old"));
        assert_eq!(cache.get(&id(7)), None);
        // A reader that starts after the write fills as usual.
        let ticket = cache.ticket(&id(7));
        cache.fill(ticket, id(7), Bytes::from_static(b"new"));
        assert_eq!(cache.get(&id(7)).as_deref(), Some(&b"new"[..]));
    }

    #[test]
    fn the_bound_is_in_bytes() {
        let cache = JobJsonCache::new(64 * 1024);
        let json = Bytes::from(vec![b'x'; 1000]);
        for n in 0..1000 {
            let ticket = cache.ticket(&id(n));
            cache.fill(ticket, id(n), json.clone());
        }
        let kept = (0..1000).filter(|&n| cache.get(&id(n)).is_some()).count();
        assert!(kept > 0, "some jobs are kept");
        assert!(kept <= 64, "at most 64 KiB of ~1 KiB entries, kept {kept}");
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let cache = JobJsonCache::new(0);
        let ticket = cache.ticket(&id(1));
        cache.fill(ticket, id(1), Bytes::from_static(b"{}"));
        assert_eq!(cache.get(&id(1)), None);
    }
}
