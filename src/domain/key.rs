use std::fmt;

use chrono::{DateTime, Utc};
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{DomainError, KeyId, Plan};

const PREFIX: &str = "jl_live_";
const BODY_LEN: usize = 32;
const CHECKSUM_LEN: usize = 6;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A secret API key: `jl_live_` + 32 random base62 characters + a 6-character CRC32 checksum.
///
/// The checksum lets a typo be rejected before any lookup. `Debug` and `Display` never show the
/// secret; use [`ApiKey::expose`] where the key must be shown (once, at creation).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    raw: String,
    /// Hashed once when the key is made: a request looks its key up more than once.
    hash: KeyHash,
}

impl ApiKey {
    /// Makes a new random key from the operating system's random source.
    pub fn generate() -> Self {
        let body = random_base62(BODY_LEN);
        let checksum = checksum(&body);
        Self::of(format!("{PREFIX}{body}{checksum}"))
    }

    /// Checks the form and checksum of a presented key. Says nothing about whether it exists.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        let invalid = || {
            DomainError::new(
                "api_key",
                "is not a job-listings key: keys start with jl_live_ and are 46 characters long",
            )
        };
        let rest = raw.strip_prefix(PREFIX).ok_or_else(invalid)?;
        if rest.len() != BODY_LEN + CHECKSUM_LEN || !rest.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(invalid());
        }
        let (body, sum) = rest.split_at(BODY_LEN);
        if !bool::from(checksum(body).as_bytes().ct_eq(sum.as_bytes())) {
            return Err(DomainError::new(
                "api_key",
                "has a wrong checksum: check it was copied whole and without typos",
            ));
        }
        Ok(Self::of(raw.to_owned()))
    }

    fn of(raw: String) -> Self {
        let hash = KeyHash(Sha256::digest(raw.as_bytes()).into());
        Self { raw, hash }
    }

    /// The key in clear, for showing it to its owner once.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// The SHA-256 hash under which the key is stored.
    pub fn hash(&self) -> KeyHash {
        self.hash
    }

    /// A short, non-secret hint such as `jl_live_Ab3d…` to tell keys apart in listings.
    pub fn hint(&self) -> String {
        format!("{}…", &self.raw[..PREFIX.len() + 4])
    }
}

/// `"jl_live_…".parse::<ApiKey>()`, as [`ApiKey::parse`].
impl std::str::FromStr for ApiKey {
    type Err = DomainError;
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        Self::parse(raw)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(jl_live_[redacted])")
    }
}

/// `len` random base62 characters from the operating system's random source.
pub(crate) fn random_base62(len: usize) -> String {
    let mut rng = rand::rngs::OsRng;
    (0..len)
        .map(|_| BASE62[rng.gen_range(0..62)] as char)
        .collect()
}

fn checksum(body: &str) -> String {
    let mut n = u64::from(crc32fast::hash(body.as_bytes()));
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    out.iter().map(|&b| b as char).collect()
}

/// The SHA-256 hash of an API key: the only form in which keys are stored.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyHash(#[serde(with = "hex32")] pub [u8; 32]);

impl KeyHash {
    /// Compares two hashes in constant time.
    pub fn ct_eq(&self, other: &KeyHash) -> bool {
        // As four words: `subtle` compares each without a branch either way, and a byte at a
        // time was eight times the work on every request.
        let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or_default());
        let pairs = self.0.chunks_exact(8).zip(other.0.chunks_exact(8));
        let equal = pairs.fold(subtle::Choice::from(1), |equal, (a, b)| {
            equal & word(a).ct_eq(&word(b))
        });
        bool::from(equal)
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({:02x}{:02x}…)", self.0[0], self.0[1])
    }
}

mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::KeyHash(*bytes).to_hex())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let hex = String::deserialize(d)?;
        super::KeyHash::from_hex(&hex)
            .map(|h| h.0)
            .ok_or_else(|| serde::de::Error::custom("key hash must be 64 hex digits"))
    }
}

impl KeyHash {
    /// The hash as 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A hash written by [`KeyHash::to_hex`]; `None` unless `hex` is 64 hex digits.
    pub fn from_hex(hex: &str) -> Option<Self> {
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Self(out))
    }
}

/// Billing state of a key; only `active` keys are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(inline)]
#[serde(rename_all = "snake_case")]
pub enum BillingStatus {
    /// Paid up.
    Active,
    /// A payment failed; calls are refused until it is settled.
    PastDue,
    /// The subscription ended.
    Canceled,
}

impl std::str::FromStr for BillingStatus {
    type Err = DomainError;
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        match raw.trim().to_lowercase().replace('-', "_").as_str() {
            "active" => Ok(Self::Active),
            "past_due" => Ok(Self::PastDue),
            "canceled" | "cancelled" => Ok(Self::Canceled),
            _ => Err(DomainError::new(
                "billing_status",
                "must be one of active, past_due, canceled",
            )),
        }
    }
}

/// What the service keeps about a key: its hash, never the key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiKeyRecord {
    /// The record's identifier.
    pub id: KeyId,
    /// SHA-256 of the key.
    pub hash: KeyHash,
    /// A non-secret hint such as `jl_live_Ab3d…`.
    pub hint: String,
    /// A free-form label, such as the customer's e-mail.
    #[serde(default)]
    pub label: String,
    /// The paid plan.
    pub plan: Plan,
    /// Billing state.
    pub billing_status: BillingStatus,
    /// The instant monthly periods are counted from.
    pub billing_anchor: DateTime<Utc>,
    /// When the key was made.
    pub created_at: DateTime<Utc>,
    /// When the key was revoked, if it was.
    #[serde(default)]
    pub revoked_at: Option<DateTime<Utc>>,
}

impl ApiKeyRecord {
    /// Whether the key's webhook subscriptions are sent anything now: the key is not revoked,
    /// its billing is active and its plan includes webhooks. Subscriptions are only ever used
    /// through the key that registered them, so they stop with it.
    pub fn receives_webhooks(&self) -> bool {
        self.revoked_at.is_none()
            && self.billing_status == BillingStatus::Active
            && self.plan.includes_webhooks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_and_typos_do_not() {
        let key = ApiKey::generate();
        let raw = key.expose().to_owned();
        assert_eq!(raw.len(), 46);
        assert!(ApiKey::parse(&raw).is_ok());
        let mut typo = raw.clone().into_bytes();
        typo[12] = if typo[12] == b'a' { b'b' } else { b'a' };
        let typo = String::from_utf8(typo).unwrap_or_default();
        assert!(ApiKey::parse(&typo).is_err());
        assert!(ApiKey::parse(&raw[..45]).is_err());
        assert!(ApiKey::parse("").is_err());
        assert_eq!(raw.parse::<ApiKey>().ok(), Some(key));
        assert!(typo.parse::<ApiKey>().is_err());
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let key = ApiKey::generate();
        let shown = format!("{key:?}");
        assert!(!shown.contains(&key.expose()[8..]));
    }

    #[test]
    fn key_hash_round_trips_through_json() {
        let hash = ApiKey::generate().hash();
        let json = serde_json::to_string(&hash).unwrap_or_default();
        let back: KeyHash = serde_json::from_str(&json).unwrap_or(KeyHash([0; 32]));
        assert!(back.ct_eq(&hash));
    }
}
