//! Document numbers by job id.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::index::Slot;
use crate::domain::JobId;

/// Live document numbers by job id, 4 bytes an entry: the ids themselves are read from the
/// slots, so the table does not hold a second copy of every 16-byte id.
#[derive(Clone, Default)]
pub(super) struct DocsById(HashTable<u32>);

fn hash(id: JobId) -> u64 {
    FxBuildHasher.hash_one(id)
}

impl DocsById {
    /// An empty table with room for `n` documents.
    pub(super) fn with_capacity(n: usize) -> Self {
        Self(HashTable::with_capacity(n))
    }

    /// The live document of `id`.
    pub(super) fn get(&self, slots: &[Slot], id: JobId) -> Option<u32> {
        self.0
            .find(hash(id), |&d| slots[d as usize].id == id)
            .copied()
    }

    /// Records `doc` under its slot's id, which must not be in the table yet.
    pub(super) fn insert(&mut self, slots: &[Slot], doc: u32) {
        let id = slots[doc as usize].id;
        self.0
            .insert_unique(hash(id), doc, |&d| hash(slots[d as usize].id));
    }

    /// Takes `id` out of the table, returning its document.
    pub(super) fn remove(&mut self, slots: &[Slot], id: JobId) -> Option<u32> {
        self.0
            .find_entry(hash(id), |&d| slots[d as usize].id == id)
            .ok()
            .map(|entry| entry.remove().0)
    }

    /// Heap bytes held: 4 a bucket plus one control byte.
    pub(super) fn heap_bytes(&self) -> u64 {
        self.0.capacity() as u64 * 5
    }
}
