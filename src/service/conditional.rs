//! Conditional reads: every read's answer has a [`Version`], and a client that still holds
//! the answer's version says so with [`Held`], so that re-reading what it has costs it no
//! call of its quota.
//!
//! The service knows nothing of how a frontend names versions to its clients (HTTP's entity
//! tags): it answers the version, and takes back the versions the frontend read from the
//! request.

use std::hash::{DefaultHasher, Hash, Hasher};

/// The version of a read's answer: a hash of what the answer is made of (each record's id
/// and `updated_at`, the counts, facets and warnings), so it changes exactly when the answer
/// does. The hash has fixed keys, so every process of one build gives an answer the same
/// version, and replicas agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Version(u64);

impl Version {
    /// The version whose bits are `bits`, as a client sent them back.
    pub const fn from_bits(bits: u64) -> Self {
        Self(bits)
    }

    /// The version's bits, to hand a client.
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// The version of what `parts` hash to.
    #[cfg(test)]
    fn of(parts: impl Hash) -> Self {
        Versioner::new().add(parts).finish()
    }
}

/// Works out a version from the parts of an answer, one by one.
pub(super) struct Versioner(DefaultHasher);

impl Versioner {
    pub(super) fn new() -> Self {
        Self(DefaultHasher::new())
    }

    pub(super) fn add(mut self, part: impl Hash) -> Self {
        part.hash(&mut self.0);
        self
    }

    pub(super) fn finish(self) -> Version {
        Version(self.0.finish())
    }
}

/// The versions of a read's answer that the client holds a copy of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Held {
    /// None: the read is counted as any call is.
    #[default]
    Nothing,
    /// A copy of whatever version the answer has (HTTP's `If-None-Match: *`).
    Any,
    /// Copies of these versions (perhaps none: a client that asks whether its copy is
    /// current, of a copy that is not one of this answer).
    Versions(Vec<Version>),
}

impl Held {
    /// Whether the client holds `version` of the answer.
    pub fn holds(&self, version: Version) -> bool {
        match self {
            Held::Nothing => false,
            Held::Any => true,
            Held::Versions(versions) => versions.contains(&version),
        }
    }
}

/// A read's answer with its version. It derefs to the value, so `page.jobs` reads the jobs of
/// a `Read<JobPage>`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Read<T> {
    /// What the read found.
    pub value: T,
    /// The version of `value`.
    pub version: Version,
    /// Whether the client holds this version already ([`Held`]). Such a read is not counted,
    /// even with the quota used up (it is still within the key's rate limit, which guards the
    /// server rather than bills the client); any other is counted as one call.
    pub held: bool,
}

impl<T> std::ops::Deref for Read<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_what_it_names_or_anything_for_any() {
        let (a, b) = (Version::of(1u8), Version::of(2u8));
        assert_ne!(a, b);
        assert_eq!(a, Version::of(1u8), "the same parts, the same version");
        assert!(!Held::Nothing.holds(a));
        assert!(Held::Any.holds(a));
        let held = Held::Versions(vec![b]);
        assert!(held.holds(b) && !held.holds(a));
        assert_eq!(Version::from_bits(a.to_bits()), a);
    }
}
