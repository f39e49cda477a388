//! How the sled store keeps a job: a record format of the store's own, versioned, so that what
//! the API sends (the api's views) can change without touching stored data.
//!
//! A record is one version byte and the job in postcard, a compact binary form. Each version
//! comes plain and with a feed position: the position of the job's newest change feed entry,
//! as 8 big-endian bytes at the end, so the write that replaces the record knows which entry
//! the record it replaces belongs to without a lookup (plain: a job written before the feed,
//! or by a store that keeps none).
//!
//! | plain, positioned | the job's fields |
//! |---|---|
//! | 1, 2 | up to `updated_at` |
//! | 3, 4 | and `places`, `remote_regions` |
//! | 5, 6 | and `last_seen_at`, `last_posted_at`, `repost_of`, `reposts` |
//!
//! An older record is read as the current form with its missing last fields empty (postcard
//! writes an empty list or a `None` as one zero byte). Records from before versioning are the
//! job's JSON (they begin with `{`) and are still read; each is written in the current version
//! the next time its job is. A change to [`Job`]'s fields needs a new version here, and a
//! decoder for the ones before.

use crate::domain::Job;

/// The version byte of the records this build writes.
const CURRENT: u8 = 5;

/// The versions this build reads: plain, positioned, and how many fields each lacks of the
/// current form (each an empty list or a `None`, one zero byte in postcard).
const VERSIONS: [(u8, u8, usize); 3] = [(1, 2, 6), (3, 4, 4), (CURRENT, 6, 0)];

/// The first byte of a record written before records had versions: the JSON of the job.
const JSON_RECORD: u8 = b'{';

/// A record's version: whether it ends with a feed position, and the fields it lacks.
fn version_of(record: &[u8]) -> Option<(bool, usize)> {
    let v = *record.first()?;
    VERSIONS.iter().find_map(|&(plain, positioned, lacks)| {
        (v == plain)
            .then_some((false, lacks))
            .or((v == positioned).then_some((true, lacks)))
    })
}

/// The positioned version byte of a record's version.
fn positioned(record: &[u8]) -> u8 {
    let v = record.first().copied().unwrap_or(CURRENT);
    VERSIONS
        .iter()
        .find(|&&(plain, positioned, _)| v == plain || v == positioned)
        .map_or(VERSIONS[VERSIONS.len() - 1].1, |&(_, positioned, _)| {
            positioned
        })
}

/// A record of any postcard version as one that ends with `position`, in its own version.
pub(crate) fn with_feed_position(record: &[u8], position: u64) -> Vec<u8> {
    let payload = match version_of(record) {
        Some((true, _)) => &record[1..record.len().saturating_sub(8).max(1)],
        _ => record.get(1..).unwrap_or_default(),
    };
    let mut out = Vec::with_capacity(payload.len() + 9);
    out.push(positioned(record));
    out.extend_from_slice(payload);
    out.extend_from_slice(&position.to_be_bytes());
    out
}

/// The feed position a record ends with, if it is of a positioned version.
pub(crate) fn feed_position(record: &[u8]) -> Option<u64> {
    match version_of(record) {
        Some((true, _)) if record.len() >= 9 => record[record.len() - 8..]
            .try_into()
            .ok()
            .map(u64::from_be_bytes),
        _ => None,
    }
}

/// A job as a record of the current version.
pub(crate) fn encode(job: &Job) -> Result<Vec<u8>, postcard::Error> {
    // One allocation for the whole record: the texts are most of it.
    let room = ROOM_BESIDE_TEXT + job.role.len() + job.description.len();
    postcard::to_extend(job, {
        let mut record = Vec::with_capacity(room);
        record.push(CURRENT);
        record
    })
}

/// Bytes of a record beside its role and description, with room to spare.
const ROOM_BESIDE_TEXT: usize = 512;

/// A job from a record of any version this build reads.
pub(crate) fn decode(record: &[u8]) -> Result<Job, String> {
    match version_of(record) {
        Some((with_position, lacks)) => {
            if with_position && record.len() < 9 {
                return Err("the record is cut short".to_owned());
            }
            let payload = &record[1..record.len() - if with_position { 8 } else { 0 }];
            if lacks == 0 {
                return postcard::from_bytes(payload).map_err(|e| e.to_string());
            }
            let mut whole = Vec::with_capacity(payload.len() + lacks);
            whole.extend_from_slice(payload);
            whole.resize(payload.len() + lacks, 0);
            postcard::from_bytes(&whole).map_err(|e| e.to_string())
        }
        None => match record.first() {
            Some(&JSON_RECORD) => serde_json::from_slice(record).map_err(|e| e.to_string()),
            Some(other) => Err(format!(
                "record version {other} is not one this build reads (it writes {CURRENT}): a \
                 newer build wrote it"
            )),
            None => Err("the record is empty".to_owned()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;

    #[test]
    fn a_job_reads_back_as_it_was_written() {
        for mut job in Dataset::generate(3, 5, 40).jobs {
            job.description = format!("{} \"quoted\" — ünïcode\n", job.description);
            let record = encode(&job).unwrap();
            assert_eq!(record[0], CURRENT);
            assert_eq!(decode(&record).unwrap(), job);
        }
    }

    #[test]
    fn a_record_with_a_feed_position_reads_back_as_the_job_and_the_position() {
        let job = Dataset::generate(5, 2, 3).jobs.remove(0);
        let plain = encode(&job).unwrap();
        assert_eq!(feed_position(&plain), None);
        let first = with_feed_position(&plain, 7);
        assert_eq!(feed_position(&first), Some(7));
        assert_eq!(decode(&first).unwrap(), job);
        let moved = with_feed_position(&first, u64::MAX);
        assert_eq!(feed_position(&moved), Some(u64::MAX));
        assert_eq!(decode(&moved).unwrap(), job);
        assert_eq!(moved.len(), plain.len() + 8);
    }

    /// A record of an older version is the current form without its last fields, and reads
    /// as the job with them empty.
    #[test]
    fn a_record_of_an_older_version_reads_as_the_job_without_its_last_fields() {
        use crate::domain::{Country, Place, RemoteRegion, Repost};
        for mut job in Dataset::generate(8, 3, 20).jobs {
            for (plain, positioned, lacks) in VERSIONS {
                let mut older = job.clone();
                if lacks >= 4 {
                    (older.last_seen_at, older.last_posted_at) = (None, None);
                    (older.repost_of, older.reposts) = (None, Vec::new());
                }
                if lacks >= 6 {
                    (older.places, older.remote_regions) = (Vec::new(), Vec::new());
                }
                let current = encode(&older).unwrap();
                let mut old = current[..current.len() - lacks].to_vec();
                old[0] = plain;
                assert_eq!(decode(&old).unwrap(), older);
                let old_positioned = with_feed_position(&old, 42);
                assert_eq!(old_positioned[0], positioned);
                assert_eq!(feed_position(&old_positioned), Some(42));
                assert_eq!(decode(&old_positioned).unwrap(), older);
            }

            let de = Country::parse("DE").unwrap();
            let mut place = Place::new(de);
            place.city = Some("Berlin".into());
            (place.lat, place.lon) = (Some(52.52), Some(13.405));
            job.places = vec![place];
            job.remote_regions = vec![RemoteRegion::Country(de), RemoteRegion::Worldwide];
            job.last_seen_at = Some(job.updated_at);
            job.last_posted_at = Some(job.posted_at);
            job.reposts = vec![Repost::new(
                crate::domain::JobId::new_random(),
                "https://x.com/a/status/1",
                job.posted_at,
            )];
            let record = with_feed_position(&encode(&job).unwrap(), 7);
            assert_eq!(record[0], 6);
            assert_eq!(decode(&record).unwrap(), job);
        }
    }

    #[test]
    fn a_record_from_before_versions_is_read_as_json() {
        let job = Dataset::generate(4, 2, 3).jobs.remove(0);
        let json = serde_json::to_vec(&job).unwrap();
        assert_eq!(decode(&json).unwrap(), job);
    }

    #[test]
    fn an_unknown_version_or_an_empty_record_is_refused() {
        assert!(decode(&[9, 1, 2]).unwrap_err().contains("version 9"));
        assert!(decode(&[]).is_err());
    }
}
