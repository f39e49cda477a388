//! Reposts: the same job posted again (by the founder, a recruiter, or a week later when nobody
//! applied).
//!
//! Two listings are copies of one job when they are of the same company, their roles are the
//! same words ([`words`]: "Senior Backend Engineer" and "senior backend engineer!" are), their
//! posts are near-identical — the Jaccard similarity of their sets of word 3-shingles (three
//! consecutive words) is at least [`REPOST_JACCARD`] — and they were posted within
//! [`REPOST_WINDOW_DAYS`] of each other. A post of one or two words is one shingle of them all;
//! two empty posts are identical.
//!
//! The index keeps, per company and role, which jobs it holds and a small MinHash signature of
//! each post, so [`JobIndex::repost_candidates`](super::JobIndex::repost_candidates) names the
//! few jobs that may be copies without reading any post; [`is_repost`] decides exactly.

use chrono::{DateTime, Duration, Utc};
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

use super::text::for_each_word;
use crate::domain::{CompanyId, Job};

/// The lowest word 3-shingle Jaccard similarity of two copies' posts.
pub const REPOST_JACCARD: f64 = 0.6;

/// The most days apart two copies can be posted.
pub const REPOST_WINDOW_DAYS: i64 = 60;

/// How many MinHash values a signature keeps.
const SIGNATURE_LEN: usize = 16;

/// The fewest signature values two posts must share to be compared exactly. Each value is
/// shared with a probability of about the posts' similarity (a little more: only 8 bits of
/// each are kept), so posts at 0.6 share fewer than 4 of 16 about once in 3,000 times.
const SHARED_AT_LEAST: usize = 4;

/// A post's MinHash signature: the low byte of the least hash of its shingles under each of
/// [`SIGNATURE_LEN`] hash functions.
pub(super) type Signature = [u8; SIGNATURE_LEN];

/// A post's word 3-shingles, hashed, sorted and once each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shingles(Vec<u64>);

impl Shingles {
    /// The shingles of a post's words.
    pub fn of(post: &str) -> Self {
        let mut words: Vec<u64> = Vec::new();
        let mut buf = String::new();
        for_each_word(post, &mut buf, |w| words.push(hash_of(w)));
        let mut shingles: Vec<u64> = match words.len() {
            0 => Vec::new(),
            1 | 2 => vec![hash_of(&words)],
            _ => words.windows(3).map(hash_of).collect(),
        };
        shingles.sort_unstable();
        shingles.dedup();
        Self(shingles)
    }

    /// The Jaccard similarity of two sets of shingles: shared over either's; 1 for two empty
    /// posts.
    pub fn jaccard(&self, other: &Shingles) -> f64 {
        let (a, b) = (&self.0, &other.0);
        if a.is_empty() && b.is_empty() {
            return 1.0;
        }
        let (mut i, mut j, mut shared) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        shared as f64 / (a.len() + b.len() - shared) as f64
    }

    pub(super) fn signature(&self) -> Signature {
        let mut least = [u64::MAX; SIGNATURE_LEN];
        for &s in &self.0 {
            for (i, l) in least.iter_mut().enumerate() {
                *l = (*l).min(mix(s ^ SEEDS[i]));
            }
        }
        least.map(|l| l as u8)
    }
}

/// Whether `a` and `b` are copies of one job, whatever their status: of the same company, their
/// roles the same words ([`words`](super::words)), the Jaccard similarity of their posts' sets
/// of word 3-shingles at least [`REPOST_JACCARD`] (a post of one or two words is one shingle
/// of them all; two empty posts are identical), posted at most [`REPOST_WINDOW_DAYS`] apart. Each job's post is split again; a caller comparing one job with many keeps its
/// [`Shingles`] and calls [`is_repost_of`].
pub fn is_repost(a: &Job, b: &Job) -> bool {
    is_repost_of(a, &Shingles::of(&a.description), b)
}

/// [`is_repost`] with `a`'s shingles already made.
pub fn is_repost_of(a: &Job, a_shingles: &Shingles, b: &Job) -> bool {
    repost_similarity(a, a_shingles, b).is_some_and(|s| s >= REPOST_JACCARD)
}

/// The similarity of two jobs' posts (their shingles' Jaccard similarity) when they are of
/// the same company and role and posted within the window, so that they are copies if it is
/// at least [`REPOST_JACCARD`]; `None` otherwise.
pub fn repost_similarity(a: &Job, a_shingles: &Shingles, b: &Job) -> Option<f64> {
    (a.company_id == b.company_id
        && within_window(a.posted_at, b.posted_at)
        && same_role(&a.role, &b.role))
    .then(|| a_shingles.jaccard(&Shingles::of(&b.description)))
}

/// Whether two roles are the same words.
pub fn same_role(a: &str, b: &str) -> bool {
    let mut buf = String::new();
    let mut of = |text: &str| {
        let mut ws = Vec::new();
        for_each_word(text, &mut buf, |w| ws.push(w.to_owned()));
        ws
    };
    of(a) == of(b)
}

/// Whether two posting times are at most [`REPOST_WINDOW_DAYS`] apart.
pub(super) fn within_window(a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
    (a - b).abs() <= Duration::days(REPOST_WINDOW_DAYS)
}

/// The key of a company's role, from the role's words: the jobs that may be copies of each
/// other share it.
pub(super) fn role_key(company: CompanyId, role_words: &[impl AsRef<str>]) -> u64 {
    let mut h = FxHasher::default();
    company.hash(&mut h);
    for w in role_words {
        w.as_ref().hash(&mut h);
    }
    h.finish()
}

/// A role key as the index keeps it per document: its low 32 bits (the company and the
/// role's words are checked again on the candidates).
pub(super) fn short_key(key: u64) -> u32 {
    key as u32
}

/// Whether two signatures share enough values for their posts to be compared exactly.
pub(super) fn may_be_copies(a: &Signature, b: &Signature) -> bool {
    a.iter().zip(b).filter(|(x, y)| x == y).count() >= SHARED_AT_LEAST
}

/// What a job's copies are looked for by: its id, its role's key, when it was posted and its
/// post's signature. Made once a job, it serves every place copies are looked for in.
#[derive(Clone, Debug)]
pub struct RepostProbe {
    id: crate::domain::JobId,
    pub(super) company: CompanyId,
    /// The role's words, which the index narrows the company's jobs by.
    pub(super) role_words: Vec<String>,
    pub(super) role: u64,
    posted_nanos: i64,
    signature: Signature,
}

impl RepostProbe {
    /// The probe of a job (its post split into shingles once).
    pub fn of(job: &Job) -> Self {
        let mut role_words = Vec::new();
        let mut buf = String::new();
        for_each_word(&job.role, &mut buf, |w| role_words.push(w.to_owned()));
        Self {
            id: job.id,
            company: job.company_id,
            role: role_key(job.company_id, &role_words),
            role_words,
            posted_nanos: super::index::nanos_clamped(job.posted_at),
            signature: Shingles::of(&job.description).signature(),
        }
    }

    /// Whether another job of the same role, posted then with that signature, may be a
    /// copy.
    pub(super) fn may_match(
        &self,
        id: crate::domain::JobId,
        posted_nanos: i64,
        signature: &Signature,
    ) -> bool {
        const WINDOW_NANOS: u64 = REPOST_WINDOW_DAYS as u64 * 86_400 * 1_000_000_000;
        id != self.id
            && self.posted_nanos.abs_diff(posted_nanos) <= WINDOW_NANOS
            && may_be_copies(&self.signature, signature)
    }
}

/// Jobs that copies are looked for among, by id, apart from a [`JobIndex`]: for jobs on their
/// way into one (a bulk import indexes its jobs at the end).
///
/// [`JobIndex`]: super::JobIndex
#[derive(Default)]
pub struct CopyFinder {
    roles: rustc_hash::FxHashMap<u64, Vec<(crate::domain::JobId, i64, Signature)>>,
}

impl std::fmt::Debug for CopyFinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyFinder")
            .field("roles", &self.roles.len())
            .finish_non_exhaustive()
    }
}

impl CopyFinder {
    /// Adds the job of a probe to look among.
    pub fn insert(&mut self, probe: &RepostProbe) {
        self.roles.entry(probe.role).or_default().push((
            probe.id,
            probe.posted_nanos,
            probe.signature,
        ));
    }

    /// The jobs added that may be copies of the probe's, as
    /// [`JobIndex::repost_candidates`](super::JobIndex::repost_candidates) names them; never
    /// that job itself.
    pub fn candidates(&self, probe: &RepostProbe) -> Vec<crate::domain::JobId> {
        self.roles.get(&probe.role).map_or_else(Vec::new, |jobs| {
            jobs.iter()
                .filter(|(id, posted, signature)| probe.may_match(*id, *posted, signature))
                .map(|(id, _, _)| *id)
                .collect()
        })
    }
}

fn hash_of(value: impl Hash) -> u64 {
    let mut h = FxHasher::default();
    value.hash(&mut h);
    mix(h.finish())
}

/// SplitMix64's finaliser: every input bit moves every output bit, which FxHash alone does not.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One seed per hash function of a signature: fixed, so signatures saved in a snapshot stay
/// comparable with new ones.
const SEEDS: [u64; SIGNATURE_LEN] = {
    let mut seeds = [0u64; SIGNATURE_LEN];
    let mut i = 0;
    let mut z: u64 = 0x9e37_79b9_7f4a_7c15;
    while i < SIGNATURE_LEN {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        seeds[i] = z;
        i += 1;
    }
    seeds
};

#[cfg(test)]
mod tests {
    use super::*;

    fn post(words: &[&str]) -> String {
        words.join(" ")
    }

    #[test]
    fn jaccard_counts_shared_shingles_over_either_posts() {
        // 6 words: 4 shingles each; one word changed at the end leaves 3 of 5 shared.
        let a = Shingles::of("we are hiring a rust engineer");
        let b = Shingles::of("we are hiring a rust developer");
        assert!((a.jaccard(&b) - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(a.jaccard(&a), 1.0);
        // Case and punctuation are not words.
        assert_eq!(
            a.jaccard(&Shingles::of("We are HIRING, a Rust engineer!")),
            1.0
        );
        assert_eq!(Shingles::of("").jaccard(&Shingles::of("  ")), 1.0);
        assert_eq!(Shingles::of("").jaccard(&a), 0.0);
        // Short posts are one shingle.
        assert_eq!(Shingles::of("rust").jaccard(&Shingles::of("Rust")), 1.0);
        assert_eq!(
            Shingles::of("rust go").jaccard(&Shingles::of("go rust")),
            0.0
        );
    }

    #[test]
    fn roles_are_the_same_when_their_words_are() {
        assert!(same_role(
            "Senior Backend Engineer",
            "senior backend engineer!"
        ));
        assert!(!same_role("Senior Backend Engineer", "Backend Engineer"));
        assert!(!same_role(
            "Backend Senior Engineer",
            "Senior Backend Engineer"
        ));
    }

    #[test]
    fn signatures_of_near_copies_agree_and_of_other_posts_mostly_do_not() {
        let base: Vec<String> = (0..200).map(|i| format!("w{}", i % 97 * 7 + i)).collect();
        let words: Vec<&str> = base.iter().map(String::as_str).collect();
        let a = Shingles::of(&post(&words));
        let mut edited = words.clone();
        edited[100] = "changed";
        let b = Shingles::of(&post(&edited));
        assert!(a.jaccard(&b) > 0.9);
        assert!(may_be_copies(&a.signature(), &b.signature()));
        let other: Vec<String> = (0..200).map(|i| format!("x{i}")).collect();
        let c = Shingles::of(&post(&other.iter().map(String::as_str).collect::<Vec<_>>()));
        assert!(!may_be_copies(&a.signature(), &c.signature()));
    }

    #[test]
    fn the_window_is_sixty_days_either_way_inclusive() {
        let t = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .to_utc();
        assert!(within_window(t, t + Duration::days(60)));
        assert!(within_window(t + Duration::days(60), t));
        assert!(!within_window(
            t,
            t + Duration::days(60) + Duration::nanoseconds(1)
        ));
    }
}
