//! The bitmaps of document numbers that every filter and posting list of the index is:
//! CRoaring's, through the `croaring` crate.
//!
//! CRoaring intersects two sparse posting lists (array containers) with SIMD merges and
//! gallops when one is much shorter; the pure-Rust `roaring` crate, used before, merged them
//! one branchy comparison at a time, about 18 times slower for two lists of 20,000 documents
//! at a million jobs, which made multi-word text queries the slowest class.

use croaring::bitmap::BitmapCursor;
use croaring::{Bitmap, Portable};

/// A set of document numbers.
pub(super) type Docs = Bitmap;

/// The documents of a set from the highest down, starting `skip` below the highest; `None`
/// when there are not that many.
pub(super) fn below_top(docs: &Docs, skip: usize) -> Option<Descending<'_>> {
    if skip as u64 >= docs.cardinality() {
        return None;
    }
    // Below the cardinality, so it fits: a set holds at most 2^32 documents.
    let skip = u32::try_from(skip).ok()?;
    let mut cursor = docs.cursor_to_last();
    // Whole containers are stepped over by their counts, not bit by bit.
    cursor.skip_backward(skip);
    Some(Descending::from(cursor))
}

/// The documents in any of `all`.
///
/// Two sets are joined with one plain union. CRoaring's many-way union (`fast_or`) defers
/// each container's count and turns two sparse lists it joins into a dense one first, then
/// back: for the usual `domain=a,b` on a small collection that was a tenth of all the work
/// of serving the GET /jobs mix. From three sets on the deferred work is done once rather than
/// at every step, so those still go to `fast_or`.
pub(super) fn union(all: &[&Docs]) -> Docs {
    match all {
        [] => Docs::new(),
        [one] => (*one).clone(),
        [a, b] => *a | *b,
        _ => Docs::fast_or(all),
    }
}

/// Every document of a set, highest first.
pub(super) fn descending(docs: &Docs) -> Descending<'_> {
    Descending::from(docs.cursor_to_last())
}

/// Documents read from a cursor downwards.
const DESCENDING_BATCH: usize = 32;

/// An iterator over documents from the highest down. It reads them a batch at a time: one
/// foreign call per document would cost more than what is done with most of them.
pub(super) struct Descending<'a> {
    cursor: BitmapCursor<'a>,
    batch: [u32; DESCENDING_BATCH],
    next: usize,
    read: usize,
}

impl<'a> From<BitmapCursor<'a>> for Descending<'a> {
    fn from(cursor: BitmapCursor<'a>) -> Self {
        Descending {
            cursor,
            batch: [0; DESCENDING_BATCH],
            next: 0,
            read: 0,
        }
    }
}

impl Iterator for Descending<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.next == self.read {
            self.read = self.cursor.read_many_rev(&mut self.batch);
            self.next = 0;
        }
        let doc = *self.batch[..self.read].get(self.next)?;
        self.next += 1;
        Some(doc)
    }
}

/// About how many bytes a set takes: its serialized size, close to its size in memory.
pub(super) fn heap_bytes(docs: &Docs) -> usize {
    docs.get_serialized_size_in_bytes::<Portable>()
}

/// A set built from distinct document numbers in ascending order, with no room to spare.
///
/// Built as bytes in the portable Roaring format and read back in one call: CRoaring adds a
/// list one number at a time (a container lookup and a type dispatch each), which was most of
/// the time of renumbering an index.
pub(super) fn from_sorted(docs: &[u32]) -> Docs {
    // CRoaring checks every container as it reads them; numbers that were not ascending and
    // distinct would be refused, and are then added one by one instead.
    Bitmap::try_deserialize::<Portable>(&portable_from_sorted(docs))
        .unwrap_or_else(|| Bitmap::of(docs))
}

/// A set built from a plain bit array (document `d` is bit `d % 64` of `words[d / 64]`), with
/// no room to spare: as [`from_sorted`] does, but a dense part's words are copied as they are
/// instead of each number being read out and set again.
pub(super) fn from_bits(words: &[u64]) -> Docs {
    let chunks: Vec<(u16, &[u64])> = words
        .chunks(CHUNK_WORDS)
        .enumerate()
        .filter(|(_, chunk)| chunk.iter().any(|&w| w != 0))
        .map(|(key, chunk)| (key as u16, chunk))
        .collect();
    let headers: Vec<(u16, usize)> = chunks
        .iter()
        .map(|(key, chunk)| (*key, chunk.iter().map(|w| w.count_ones() as usize).sum()))
        .collect();
    let bytes = write_portable(&headers, |i, bytes| {
        let chunk = chunks[i].1;
        if headers[i].1 > MAX_ARRAY {
            for word in chunk
                .iter()
                .copied()
                .chain(std::iter::repeat(0))
                .take(CHUNK_WORDS)
            {
                bytes.extend_from_slice(&word.to_le_bytes());
            }
        } else {
            for low in set_bits(chunk) {
                bytes.extend_from_slice(&(low as u16).to_le_bytes());
            }
        }
    });
    // Every container was written as CRoaring writes it, so the bytes are read back.
    Bitmap::try_deserialize::<Portable>(&bytes).unwrap_or_else(|| set_bits(words).collect())
}

/// The numbers of the set bits of a plain bit array, ascending.
pub(super) fn set_bits(words: &[u64]) -> impl Iterator<Item = u32> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        let base = w as u32 * 64;
        let mut rest = word;
        std::iter::from_fn(move || {
            let bit = (rest != 0).then(|| rest.trailing_zeros())?;
            rest &= rest - 1;
            Some(base + bit)
        })
    })
}

/// Above this many numbers, a container of the portable format is a bitset of 2^16 bits.
const MAX_ARRAY: usize = 4_096;
/// The 64-bit words of one container's bitset.
const CHUNK_WORDS: usize = 1_024;

/// Distinct ascending numbers in the portable Roaring format, with array and bitset
/// containers only.
fn portable_from_sorted(docs: &[u32]) -> Vec<u8> {
    let mut chunks: Vec<&[u32]> = Vec::new();
    let mut rest = docs;
    while let Some(&first) = rest.first() {
        let high = first >> 16;
        let len = rest.partition_point(|&d| d >> 16 == high);
        chunks.push(&rest[..len]);
        rest = &rest[len..];
    }
    let headers: Vec<(u16, usize)> = chunks
        .iter()
        .map(|chunk| ((chunk[0] >> 16) as u16, chunk.len()))
        .collect();
    write_portable(&headers, |i, bytes| {
        let chunk = chunks[i];
        if chunk.len() > MAX_ARRAY {
            let mut words = [0u64; CHUNK_WORDS];
            for &d in chunk {
                words[(d & 0xFFFF) as usize / 64] |= 1 << (d % 64);
            }
            for word in words {
                bytes.extend_from_slice(&word.to_le_bytes());
            }
        } else {
            for &d in chunk {
                bytes.extend_from_slice(&(d as u16).to_le_bytes());
            }
        }
    })
}

/// A set in the portable Roaring format, without run containers: `headers` holds each
/// container's key (the high 16 bits of its numbers) and count, ascending by key, and
/// `write(i, bytes)` appends the `i`-th container, a bitset above [`MAX_ARRAY`] numbers and
/// the sorted low 16 bits of each number otherwise.
fn write_portable(headers: &[(u16, usize)], mut write: impl FnMut(usize, &mut Vec<u8>)) -> Vec<u8> {
    /// The format's mark for a set without run containers.
    const NO_RUNS: u32 = 12_346;
    let size = |count: usize| {
        if count > MAX_ARRAY {
            8 * CHUNK_WORDS
        } else {
            2 * count
        }
    };
    let header = 8 + 8 * headers.len();
    let mut bytes =
        Vec::with_capacity(header + headers.iter().map(|&(_, count)| size(count)).sum::<usize>());
    bytes.extend_from_slice(&NO_RUNS.to_le_bytes());
    bytes.extend_from_slice(&(headers.len() as u32).to_le_bytes());
    for &(key, count) in headers {
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(&((count - 1) as u16).to_le_bytes());
    }
    let mut offset = header;
    for &(_, count) in headers {
        bytes.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += size(count);
    }
    for i in 0..headers.len() {
        write(i, &mut bytes);
    }
    bytes
}

/// Snapshot fields: sets as bytes in the portable Roaring format, alone (`with = "portable"`),
/// in a list or as the values of a map. Bytes that are not a valid set are refused when read
/// (CRoaring checks every container), never trusted.
pub(super) mod portable {
    use std::hash::Hash;

    use rustc_hash::FxHashMap as HashMap;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Bitmap, Docs, Portable};

    struct Out<'a>(&'a Docs);

    impl Serialize for Out<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(&self.0.serialize::<Portable>())
        }
    }

    struct In(Docs);

    impl<'de> Deserialize<'de> for In {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let bytes: &[u8] = Deserialize::deserialize(deserializer)?;
            Bitmap::try_deserialize::<Portable>(bytes)
                .map(In)
                .ok_or_else(|| D::Error::custom("a bitmap is not a valid portable Roaring set"))
        }
    }

    pub(in crate::query) fn serialize<S: Serializer>(docs: &Docs, s: S) -> Result<S::Ok, S::Error> {
        Out(docs).serialize(s)
    }

    pub(in crate::query) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Docs, D::Error> {
        In::deserialize(d).map(|set| set.0)
    }

    pub(in crate::query) mod list {
        use super::*;

        pub(in crate::query) fn serialize<S: Serializer>(
            list: &[Docs],
            s: S,
        ) -> Result<S::Ok, S::Error> {
            s.collect_seq(list.iter().map(Out))
        }

        pub(in crate::query) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Vec<Docs>, D::Error> {
            let list: Vec<In> = Deserialize::deserialize(d)?;
            Ok(list.into_iter().map(|set| set.0).collect())
        }
    }

    /// A map whose values are lists of sets.
    pub(in crate::query) mod map_of_lists {
        use super::*;

        struct OutList<'a>(&'a [Docs]);

        impl Serialize for OutList<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(Out))
            }
        }

        pub(in crate::query) fn serialize<K: Serialize, S: Serializer>(
            map: &HashMap<K, Vec<Docs>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            s.collect_map(map.iter().map(|(k, list)| (k, OutList(list))))
        }

        pub(in crate::query) fn deserialize<'de, K, D>(
            d: D,
        ) -> Result<HashMap<K, Vec<Docs>>, D::Error>
        where
            K: Deserialize<'de> + Eq + Hash,
            D: Deserializer<'de>,
        {
            let map: HashMap<K, Vec<In>> = Deserialize::deserialize(d)?;
            Ok(map
                .into_iter()
                .map(|(k, list)| (k, list.into_iter().map(|set| set.0).collect()))
                .collect())
        }
    }

    pub(in crate::query) mod map {
        use super::*;

        pub(in crate::query) fn serialize<K: Serialize, S: Serializer>(
            map: &HashMap<K, Docs>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            s.collect_map(map.iter().map(|(k, docs)| (k, Out(docs))))
        }

        pub(in crate::query) fn deserialize<'de, K, D>(d: D) -> Result<HashMap<K, Docs>, D::Error>
        where
            K: Deserialize<'de> + Eq + Hash,
            D: Deserializer<'de>,
        {
            let map: HashMap<K, In> = Deserialize::deserialize(d)?;
            Ok(map.into_iter().map(|(k, set)| (k, set.0)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_built_from_sorted_numbers_holds_exactly_them() {
        let dense_chunk: Vec<u32> = (65_536..65_536 + 5_000).collect();
        let full_array: Vec<u32> = (0..4_096).map(|d| d * 16).collect();
        let mixed: Vec<u32> = (0..300_000)
            .filter(|d| d % 7 == 0 || (70_000..90_000).contains(d))
            .chain([u32::MAX - 1, u32::MAX])
            .collect();
        for docs in [
            vec![],
            vec![0],
            vec![u32::MAX],
            dense_chunk,
            full_array,
            mixed,
        ] {
            // The bytes CRoaring itself writes for the set, so no fallback is taken.
            let expected = Bitmap::of(&docs).serialize::<Portable>();
            assert_eq!(portable_from_sorted(&docs), expected);
            let set = from_sorted(&docs);
            assert_eq!(set.to_vec(), docs);
            assert_eq!(set, Bitmap::of(&docs));

            // From a bit array too, where one of a workable size holds them.
            if docs.last().is_some_and(|&d| d >= 1 << 24) {
                continue;
            }
            let mut words = vec![0u64; docs.last().map_or(0, |&d| d as usize / 64 + 1)];
            for &d in &docs {
                words[d as usize / 64] |= 1 << (d % 64);
            }
            let set = from_bits(&words);
            assert_eq!(set.serialize::<Portable>(), expected);
            assert_eq!(set.to_vec(), docs);
        }
    }

    #[test]
    fn walks_down_from_any_place_below_the_top() {
        let docs: Vec<u32> = (0..200_000).filter(|d| d % 3 != 0 || d % 7 == 0).collect();
        let set = from_sorted(&docs);
        for skip in [
            0,
            1,
            5,
            4_095,
            4_096,
            65_535,
            65_536,
            70_000,
            docs.len() - 1,
        ] {
            let walked: Vec<u32> = below_top(&set, skip)
                .into_iter()
                .flatten()
                .take(3)
                .collect();
            let expected: Vec<u32> = docs.iter().rev().skip(skip).take(3).copied().collect();
            assert_eq!(walked, expected, "skip {skip}");
        }
        assert!(below_top(&set, docs.len()).is_none());
        assert!(below_top(&Docs::new(), 0).is_none());
        let all: Vec<u32> = descending(&set).collect();
        assert_eq!(all, docs.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(descending(&Docs::new()).next(), None);
    }
}
