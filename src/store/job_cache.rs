//! A bounded cache of decoded jobs in front of the sled tree.
//!
//! A search page reads twenty jobs; from sled each is a B-tree walk under an epoch guard, a
//! copy and a decoding, more than half of a page's work. Here a hit is one hash lookup and a
//! reference count.
//!
//! The store fills the cache after a miss and empties an entry after each write. A fill that
//! read the tree before a write but lands after the write's invalidation would keep the old
//! job forever, so every fill carries the write count of its stripe read before the tree was:
//! a write since then refuses the fill. The count and the cache entry change together, under
//! the stripe's lock, so no interleaving leaves an old entry behind a newer write.

use std::sync::{Arc, Mutex};

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::domain::{Job, JobId};

/// Stripes of write counts: enough that concurrent fills and writes rarely meet on one.
const STRIPES: usize = 64;

/// What an entry costs besides its texts: the key, the `Arc`, the job's fixed fields, its
/// tags and the table slot.
const ENTRY_OVERHEAD: u64 = 320;

/// Weighs an entry by the memory its job holds, so the bound is in bytes rather than in jobs.
#[derive(Clone, Copy)]
struct BySize;

impl Weighter<JobId, Arc<Job>> for BySize {
    fn weight(&self, _id: &JobId, job: &Arc<Job>) -> u64 {
        let texts = job.role.len()
            + job.company_name.len()
            + job.description.len()
            + job.source_url.len()
            + job.location.as_ref().map_or(0, String::len);
        texts as u64 + ENTRY_OVERHEAD
    }
}

/// Recently read jobs, bounded in bytes. Capacity 0 turns it off.
pub(crate) struct JobCache {
    entries: Option<Cache<JobId, Arc<Job>, BySize>>,
    writes: [Mutex<u64>; STRIPES],
}

/// Taken before reading the tree after a miss; [`JobCache::fill`] honours it only if no
/// write to the job's stripe happened in between.
pub(crate) struct FillTicket {
    stripe: usize,
    writes_seen: u64,
}

impl JobCache {
    /// A cache holding jobs of up to `capacity_bytes` in all.
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        let entries = (capacity_bytes > 0).then(|| {
            // A typical job is about a kilobyte; the estimate only sizes the tables up front.
            let estimated = usize::try_from(capacity_bytes / 1024).unwrap_or(usize::MAX);
            Cache::with_weighter(estimated.max(16), capacity_bytes, BySize)
        });
        Self {
            entries,
            writes: std::array::from_fn(|_| Mutex::new(0)),
        }
    }

    /// The cached job, if any.
    pub(crate) fn get(&self, id: &JobId) -> Option<Arc<Job>> {
        self.entries.as_ref()?.get(id)
    }

    /// Call before reading a job that [`JobCache::get`] missed.
    pub(crate) fn ticket(&self, id: &JobId) -> FillTicket {
        let stripe = stripe_of(id);
        FillTicket {
            stripe,
            writes_seen: *lock(&self.writes[stripe]),
        }
    }

    /// Keeps the job read from the tree, unless it was written since the ticket.
    pub(crate) fn fill(&self, ticket: FillTicket, id: JobId, job: Arc<Job>) {
        let Some(entries) = &self.entries else { return };
        let writes = lock(&self.writes[ticket.stripe]);
        if *writes == ticket.writes_seen {
            entries.insert(id, job);
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
    use super::*;
    use crate::demo::Dataset;

    fn jobs(n: usize) -> Vec<Arc<Job>> {
        Dataset::generate(11, 5, n)
            .jobs
            .into_iter()
            .map(Arc::new)
            .collect()
    }

    #[test]
    fn a_fill_is_served_until_the_job_is_written() {
        let cache = JobCache::new(1 << 20);
        let job = jobs(1).remove(0);
        let ticket = cache.ticket(&job.id);
        cache.fill(ticket, job.id, job.clone());
        assert_eq!(cache.get(&job.id).as_deref(), Some(job.as_ref()));
        cache.invalidate(&job.id);
        assert_eq!(cache.get(&job.id), None);
    }

    #[test]
    fn a_fill_that_read_before_a_write_is_refused() {
        let cache = JobCache::new(1 << 20);
        let mut two = jobs(2);
        let (old, mut new) = (two.remove(0), two.remove(0));
        Arc::make_mut(&mut new).id = old.id;
        let ticket = cache.ticket(&old.id);
        // The write commits and invalidates while the reader still holds the old job.
        cache.invalidate(&old.id);
        cache.fill(ticket, old.id, old.clone());
        assert_eq!(cache.get(&old.id), None);
        // A reader that starts after the write fills as usual.
        let ticket = cache.ticket(&old.id);
        cache.fill(ticket, old.id, new.clone());
        assert_eq!(cache.get(&old.id).as_deref(), Some(new.as_ref()));
    }

    #[test]
    fn the_bound_is_in_bytes() {
        let cache = JobCache::new(64 * 1024);
        let all = jobs(1000);
        for job in &all {
            let ticket = cache.ticket(&job.id);
            cache.fill(ticket, job.id, job.clone());
        }
        let kept = all.iter().filter(|j| cache.get(&j.id).is_some()).count();
        let smallest = all
            .iter()
            .map(|j| BySize.weight(&j.id, j))
            .min()
            .unwrap_or(1);
        assert!(kept > 0, "some jobs are kept");
        assert!(
            kept as u64 <= 64 * 1024 / smallest,
            "at most 64 KiB of jobs of at least {smallest} bytes, kept {kept}"
        );
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let cache = JobCache::new(0);
        let job = jobs(1).remove(0);
        let ticket = cache.ticket(&job.id);
        cache.fill(ticket, job.id, job.clone());
        assert_eq!(cache.get(&job.id), None);
    }
}
