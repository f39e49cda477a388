//! How the sled store keeps a job: a record format of the store's own, versioned, so that what
//! the API sends (the api's views) can change without touching stored data.
//!
//! A record is one version byte and the job in postcard, a compact binary form. Versions 3 and
//! 4 hold the job's `places` and `remote_regions`, its last two fields; versions 1 and 2 end
//! before them, and are read as jobs with neither. Version 4 (and 2) adds the position of the
//! job's newest change feed entry, as 8 big-endian bytes at the end, so the write that
//! replaces the record knows which entry the record it replaces belongs to without a lookup;
//! version 3 (and 1) is the same without it (a job written before the feed, or by a store that
//! keeps none). Records from before versioning are the job's JSON (they begin with `{`) and are
//! still read; each is written in the current version the next time its job is. A change to
//! [`Job`]'s fields needs a new version here, and a decoder for the ones before.

use crate::domain::Job;

/// The version byte of the records this build writes.
const CURRENT: u8 = 3;

/// The version byte of a record that ends with its feed position.
const WITH_FEED_POSITION: u8 = 4;

/// The version bytes of records written before jobs had places: without and with a feed
/// position.
const BEFORE_PLACES: u8 = 1;
const BEFORE_PLACES_WITH_FEED_POSITION: u8 = 2;

/// What postcard writes for the fields versions 1 and 2 lack: two empty lists.
const NO_PLACES: [u8; 2] = [0, 0];

/// The first byte of a record written before records had versions: the JSON of the job.
const JSON_RECORD: u8 = b'{';

/// A record of any postcard version as one that ends with `position`: version 4 for versions
/// 3 and 4, version 2 for versions 1 and 2.
pub(crate) fn with_feed_position(record: &[u8], position: u64) -> Vec<u8> {
    let (version, payload) = match record.first() {
        Some(&v @ (WITH_FEED_POSITION | BEFORE_PLACES_WITH_FEED_POSITION)) => {
            (v, &record[1..record.len().saturating_sub(8).max(1)])
        }
        Some(&BEFORE_PLACES) => (
            BEFORE_PLACES_WITH_FEED_POSITION,
            record.get(1..).unwrap_or_default(),
        ),
        _ => (WITH_FEED_POSITION, record.get(1..).unwrap_or_default()),
    };
    let mut out = Vec::with_capacity(payload.len() + 9);
    out.push(version);
    out.extend_from_slice(payload);
    out.extend_from_slice(&position.to_be_bytes());
    out
}

/// The feed position a record ends with, if it is of version 2 or 4.
pub(crate) fn feed_position(record: &[u8]) -> Option<u64> {
    match record.first() {
        Some(&(WITH_FEED_POSITION | BEFORE_PLACES_WITH_FEED_POSITION)) if record.len() >= 9 => {
            record[record.len() - 8..]
                .try_into()
                .ok()
                .map(u64::from_be_bytes)
        }
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
    let before_places = |payload: &[u8]| {
        let mut whole = Vec::with_capacity(payload.len() + NO_PLACES.len());
        whole.extend_from_slice(payload);
        whole.extend_from_slice(&NO_PLACES);
        postcard::from_bytes(&whole).map_err(|e| e.to_string())
    };
    match record.first() {
        Some(&CURRENT) => postcard::from_bytes(&record[1..]).map_err(|e| e.to_string()),
        Some(&WITH_FEED_POSITION) if record.len() >= 9 => {
            postcard::from_bytes(&record[1..record.len() - 8]).map_err(|e| e.to_string())
        }
        Some(&BEFORE_PLACES) => before_places(&record[1..]),
        Some(&BEFORE_PLACES_WITH_FEED_POSITION) if record.len() >= 9 => {
            before_places(&record[1..record.len() - 8])
        }
        Some(&JSON_RECORD) => serde_json::from_slice(record).map_err(|e| e.to_string()),
        Some(other) => Err(format!(
            "record version {other} is not one this build reads (it writes {CURRENT}): a newer \
             build wrote it"
        )),
        None => Err("the record is empty".to_owned()),
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

    /// A record of version 1 or 2 is the current form without the last two fields.
    #[test]
    fn a_record_from_before_places_reads_as_the_job_without_places() {
        use crate::domain::{Country, Place, RemoteRegion};
        for mut job in Dataset::generate(8, 3, 20).jobs {
            job.places = Vec::new();
            job.remote_regions = Vec::new();
            let current = encode(&job).unwrap();
            let mut old = current[..current.len() - NO_PLACES.len()].to_vec();
            old[0] = BEFORE_PLACES;
            assert_eq!(decode(&old).unwrap(), job);
            let old_positioned = with_feed_position(&old, 42);
            assert_eq!(old_positioned[0], BEFORE_PLACES_WITH_FEED_POSITION);
            assert_eq!(feed_position(&old_positioned), Some(42));
            assert_eq!(decode(&old_positioned).unwrap(), job);

            let de = Country::parse("DE").unwrap();
            let mut place = Place::new(de);
            place.city = Some("Berlin".into());
            (place.lat, place.lon) = (Some(52.52), Some(13.405));
            job.places = vec![place];
            job.remote_regions = vec![RemoteRegion::Country(de), RemoteRegion::Worldwide];
            let record = with_feed_position(&encode(&job).unwrap(), 7);
            assert_eq!(record[0], WITH_FEED_POSITION);
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
