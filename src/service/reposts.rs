//! Copies of one job grouped as they are written: the same company, the same role words, a
//! near-identical post, posted within 60 days (see [`crate::query::is_repost`]).
//!
//! A group's members are its canonical job, which lists the others in `reposts`, and the
//! reposts, which name it in `repost_of`. Every write of a batch that makes a job active for
//! the first time looks for its copies among the active jobs (the index names the few that may
//! be; their posts are compared exactly); every write that changes a member of a group
//! settles the group again: the earliest posted open member leads (when none is open, the
//! one that led stays), and each member whose group fields that changes is written too, in
//! the same batch. So the group lives in the records: it survives restarts, reaches replicas
//! through the store, and is rebuilt with the index from the jobs alone.
//!
//! Announcing: a job that joins a group already there is never a second `job.new`. As a
//! repost it is the change feed's `job.new` only for those who ask for reposts, and webhooks
//! hear of it as the canonical job's `job.updated`; as the group's new leader (posted earlier
//! than the one that led), it is a `job.updated`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::ingest::{IngestOutcome, WriteTally};
use super::{Catalog, ServiceResult};
use crate::domain::{changed_at, ChangeKind, Job, JobId, Repost};
use crate::query::{repost_similarity, CopyFinder, RepostProbe, Shingles, REPOST_JACCARD};
use crate::store::{DecidedOn, JobWrite};
use crate::webhooks::job_event;

/// A batch of writes on its way to the store, with what grouping them needs to know.
pub(super) struct Batch<'a> {
    pub(super) writes: &'a mut Vec<JobWrite>,
    /// What each write did, in the order of `writes` (none for a write this grouping adds).
    pub(super) outcomes: &'a mut Vec<IngestOutcome>,
    pub(super) tally: &'a mut WriteTally,
    /// The jobs of the batch as stored before it.
    pub(super) stored: &'a HashMap<JobId, Arc<Job>>,
    /// Jobs the batch deletes, as stored.
    pub(super) deleted: Vec<Arc<Job>>,
    /// The kinds of event anyone listens for.
    pub(super) announcing: &'a [ChangeKind],
    pub(super) now: DateTime<Utc>,
    /// Jobs written but not yet in the index (a bulk import's).
    pub(super) pending: Option<&'a mut Pending>,
}

/// What a bulk import has written that the index does not hold yet: copies are looked for
/// among its jobs too, and the last batch's jobs are read from here, its write perhaps still
/// on its way to the store.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) finder: CopyFinder,
    /// The jobs of the batch written last, as it leaves them.
    pub(super) recent: HashMap<JobId, Job>,
}

/// The jobs a grouping reads and changes.
#[derive(Default)]
struct Members {
    /// Every job read, as the batch leaves it so far.
    now: HashMap<JobId, Job>,
    /// The same jobs as stored before the batch (`None`: new).
    stored: HashMap<JobId, Option<Arc<Job>>>,
    /// Jobs whose group fields changed.
    regrouped: Vec<JobId>,
    /// Jobs that joined a group that was there before them.
    joined: HashSet<JobId>,
    /// Jobs deleted: members of no group.
    gone: HashSet<JobId>,
}

impl Catalog {
    /// Finds the copies among a batch's new jobs and settles every group the batch touches,
    /// adding the writes of the members outside the batch whose group fields change.
    pub(super) async fn group_copies(&self, batch: Batch<'_>) -> ServiceResult<()> {
        let Batch {
            writes,
            outcomes,
            tally,
            stored,
            deleted,
            announcing,
            now,
            pending,
        } = batch;
        let mut last_of: HashMap<JobId, usize> = HashMap::new();
        for (i, w) in writes.iter().enumerate() {
            last_of.insert(w.job.id, i);
        }
        let order: Vec<JobId> = writes
            .iter()
            .enumerate()
            .filter(|(i, w)| last_of[&w.job.id] == *i)
            .map(|(_, w)| w.job.id)
            .collect();
        // The new jobs that may be copies.
        let arriving: Vec<JobId> = match self.shared.config.group_reposts {
            true => order
                .iter()
                .copied()
                .filter(|id| {
                    let job = &writes[last_of[id]].job;
                    let was_active = stored.get(id).is_some_and(|s| s.is_active());
                    job.is_active() && !was_active && !is_grouped(job)
                })
                .collect(),
            false => Vec::new(),
        };
        // Nothing new and no group changed (a crawler sending its jobs again): nothing read.
        let regroups = writes
            .iter()
            .any(|w| w.change.is_some() && is_grouped(&w.job));
        if arriving.is_empty() && !regroups && deleted.is_empty() {
            if let Some(pending) = pending {
                pending.recent = writes.iter().map(|w| (w.job.id, w.job.clone())).collect();
            }
            return Ok(());
        }
        let mut members = Members::default();
        for id in &order {
            let job = &writes[last_of[id]].job;
            members.now.insert(*id, job.clone());
            members.stored.insert(*id, stored.get(id).cloned());
        }
        for job in &deleted {
            members.gone.insert(job.id);
            members.stored.insert(job.id, Some(job.clone()));
            members.now.insert(job.id, (**job).clone());
        }

        // Each post is split into shingles once, here.
        let probes: Vec<RepostProbe> = arriving
            .iter()
            .map(|id| RepostProbe::of(&members.now[id]))
            .collect();
        let mut candidates: HashMap<JobId, Vec<JobId>> = HashMap::new();
        {
            let index = self.read_index();
            for (id, probe) in arriving.iter().zip(&probes) {
                let mut found = index.repost_candidates(probe);
                if let Some(pending) = pending.as_deref() {
                    found.extend(pending.finder.candidates(probe));
                }
                candidates.insert(*id, found);
            }
        }
        let recent = pending.as_deref().map(|p| &p.recent);
        // Copies within the batch: among its earlier new jobs.
        let mut in_batch = CopyFinder::default();
        for (id, probe) in arriving.iter().zip(&probes) {
            candidates
                .entry(*id)
                .or_default()
                .extend(in_batch.candidates(probe));
            in_batch.insert(probe);
        }
        let wanted: Vec<JobId> = candidates.values().flatten().copied().collect();
        self.read_members(&mut members, &wanted, recent).await?;

        for id in &arriving {
            if candidates[id].is_empty() {
                continue;
            }
            let job = members.now[id].clone();
            let shingles = Shingles::of(&job.description);
            let best = candidates[id]
                .iter()
                .filter_map(|c| members.now.get(c))
                .filter(|c| c.is_active() && !members.gone.contains(&c.id))
                .filter_map(|c| Some((repost_similarity(&job, &shingles, c)?, c)))
                .filter(|(similarity, _)| *similarity >= REPOST_JACCARD)
                .max_by(|(a, x), (b, y)| {
                    a.total_cmp(b)
                        .then_with(|| (y.posted_at, y.id).cmp(&(x.posted_at, x.id)))
                })
                .map(|(_, c)| c.repost_of.unwrap_or(c.id));
            if let Some(root) = best {
                members.joined.insert(*id);
                self.settle(&mut members, root, Some(*id), recent).await?;
            }
        }
        // Every other group a write of the batch changes (a member closed, reopened, edited
        // or deleted).
        let touched: Vec<JobId> = order
            .iter()
            .filter(|id| {
                let i = last_of[*id];
                writes[i].change.is_some() && is_grouped(&members.now[*id])
            })
            .chain(deleted.iter().map(|d| &d.id))
            .copied()
            .collect();
        for id in touched {
            let root = members.now[&id].repost_of.unwrap_or(id);
            self.settle(&mut members, root, None, recent).await?;
        }

        // The regrouped jobs' writes: in the batch, changed in place; outside it, added.
        let mut seen = HashSet::new();
        for id in members.regrouped.clone() {
            if !seen.insert(id) || members.gone.contains(&id) {
                continue;
            }
            let job = members.now[&id].clone();
            let before = members.stored[&id].clone();
            match last_of.get(&id) {
                Some(&i) => {
                    let w = &mut writes[i];
                    w.job.repost_of = job.repost_of;
                    w.job.reposts = job.reposts;
                    w.job.last_posted_at = job.last_posted_at;
                    if w.change.is_none() {
                        // Only its group changed: a change all the same.
                        w.job.updated_at =
                            changed_at(before.as_ref().map_or(now, |b| b.updated_at), now);
                    }
                    w.change = ChangeKind::of_write(before.as_deref(), &w.job);
                }
                None => {
                    let Some(before) = before else { continue };
                    let mut job = job;
                    job.updated_at = changed_at(before.updated_at, now);
                    tally.add(&job, Some(before.is_active()), false);
                    writes.push(JobWrite {
                        change: ChangeKind::of_write(Some(&before), &job),
                        job,
                        events: Vec::new(),
                        decided_on: DecidedOn::Read(Some(before.updated_at)),
                    });
                }
            }
        }
        // What each regrouped or joining job announces.
        for (i, w) in writes.iter_mut().enumerate() {
            let regrouped = seen.contains(&w.job.id);
            let joined = members.joined.contains(&w.job.id);
            if !regrouped && !joined {
                continue;
            }
            if joined && w.job.repost_of.is_none() && w.change == Some(ChangeKind::New) {
                w.change = Some(ChangeKind::Updated);
            }
            let announced = match w.change {
                // A repost is announced as its canonical job's update.
                Some(ChangeKind::New) if joined => None,
                kind => kind,
            };
            w.events = announced
                .filter(|kind| announcing.contains(kind))
                .map(|kind| vec![job_event(kind, now)])
                .unwrap_or_default();
            if let Some(outcome) = outcomes.get_mut(i) {
                outcome.announced = !w.events.is_empty();
            }
        }
        if let Some(pending) = pending {
            for probe in &probes {
                pending.finder.insert(probe);
            }
            pending.recent = writes.iter().map(|w| (w.job.id, w.job.clone())).collect();
        }
        Ok(())
    }

    /// Reads the jobs not read yet: from `recent` (a write perhaps still on its way), else as
    /// stored.
    async fn read_members(
        &self,
        members: &mut Members,
        ids: &[JobId],
        recent: Option<&HashMap<JobId, Job>>,
    ) -> ServiceResult<()> {
        let mut missing: HashSet<JobId> = HashSet::new();
        for id in ids {
            if members.now.contains_key(id) {
                continue;
            }
            match recent.and_then(|r| r.get(id)) {
                Some(job) => {
                    members.now.insert(*id, job.clone());
                    members.stored.insert(*id, Some(Arc::new(job.clone())));
                }
                None => {
                    missing.insert(*id);
                }
            }
        }
        let missing: Vec<JobId> = missing.into_iter().collect();
        if missing.is_empty() {
            return Ok(());
        }
        for job in self.store.get_jobs(&missing).await? {
            members.now.insert(job.id, (*job).clone());
            members.stored.insert(job.id, Some(job));
        }
        Ok(())
    }

    /// Settles the group led by `root`, with `joining` added to it: the earliest posted open
    /// member leads and lists the others, newest first; the others name it.
    async fn settle(
        &self,
        members: &mut Members,
        root: JobId,
        joining: Option<JobId>,
        recent: Option<&HashMap<JobId, Job>>,
    ) -> ServiceResult<()> {
        self.read_members(members, &[root], recent).await?;
        // A canonical job no longer stored (deleted on another replica meanwhile): nothing
        // to settle.
        let Some(leader_now) = members.now.get(&root) else {
            return Ok(());
        };
        let listed: Vec<JobId> = leader_now.reposts.iter().map(|r| r.id).collect();
        self.read_members(members, &listed, recent).await?;
        let mut group: Vec<JobId> = std::iter::once(root)
            .chain(listed)
            .chain(joining)
            .filter(|id| members.now.contains_key(id) && !members.gone.contains(id))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        group.sort_by_key(|id| {
            let j = &members.now[id];
            (j.posted_at, j.id)
        });
        let Some(&first) = group.first() else {
            return Ok(());
        };
        let leader = group
            .iter()
            .copied()
            .find(|id| members.now[id].is_active())
            .unwrap_or(if group.contains(&root) { root } else { first });
        let mut others: Vec<Repost> = group
            .iter()
            .filter(|&&id| id != leader)
            .map(|id| {
                let j = &members.now[id];
                Repost::new(j.id, j.source_url.clone(), j.posted_at)
            })
            .collect();
        others.sort_by(|a, b| b.posted_at.cmp(&a.posted_at).then(a.id.cmp(&b.id)));
        // The newest posting of the group, on its leader when it has copies.
        let newest = group
            .iter()
            .map(|id| members.now[id].posted_at)
            .max()
            .filter(|_| !others.is_empty());
        for id in group {
            let job = members
                .now
                .get_mut(&id)
                .unwrap_or_else(|| unreachable!("the group's members were read"));
            let (repost_of, reposts, last_posted_at) = if id == leader {
                (None, others.clone(), newest)
            } else {
                (Some(leader), Vec::new(), None)
            };
            if (job.repost_of, &job.reposts, job.last_posted_at)
                != (repost_of, &reposts, last_posted_at)
            {
                job.repost_of = repost_of;
                job.reposts = reposts;
                job.last_posted_at = last_posted_at;
                members.regrouped.push(id);
            }
        }
        Ok(())
    }
}

/// Whether a job is a member of a group of copies.
fn is_grouped(job: &Job) -> bool {
    job.repost_of.is_some() || !job.reposts.is_empty()
}
