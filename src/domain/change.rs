//! The job change feed's vocabulary: what happened to a job, and where a reader of the feed
//! stands in it.

use std::fmt;

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::DomainError;

/// What happened to a job, as the change feed (`GET /changes`) and webhook subscriptions
/// name it.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[schemars(inline)]
pub enum ChangeKind {
    /// The job became active for the first time.
    #[serde(rename = "job.new")]
    New,
    /// An active job changed (or a closed one that had been active changed, or was opened
    /// again).
    #[serde(rename = "job.updated")]
    Updated,
    /// An active job closed: it is no longer searchable.
    #[serde(rename = "job.closed")]
    Closed,
    /// The job was deleted for good by the operator; nothing of it is kept.
    #[serde(rename = "job.deleted")]
    Deleted,
}

impl ChangeKind {
    /// Every kind, in the order they are documented.
    pub const ALL: [ChangeKind; 4] = [Self::New, Self::Updated, Self::Closed, Self::Deleted];

    /// The kind's name: `job.new`, `job.updated`, `job.closed` or `job.deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "job.new",
            Self::Updated => "job.updated",
            Self::Closed => "job.closed",
            Self::Deleted => "job.deleted",
        }
    }

    /// The kinds a webhook subscription may ask for: a deletion has no job to send.
    pub const WEBHOOK: [ChangeKind; 3] = [Self::New, Self::Updated, Self::Closed];

    /// The events a webhook subscription gets unless it asks for others: `job.new`.
    pub fn webhook_default() -> Vec<ChangeKind> {
        vec![Self::New]
    }

    /// The kind named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The kind a job write is, from the job before it (`None`: not stored) and after it;
    /// `None` when the write changes nothing a reader of the feed sees. A job never active
    /// (first seen closed) is not in the feed until it becomes active.
    pub fn of_write(before: Option<&super::Job>, after: &super::Job) -> Option<Self> {
        let was_active = before.is_some_and(|b| b.is_active());
        let ever_active = after.activated_at.is_some() || after.is_active();
        let unchanged = before.is_some_and(|b| b.same_content(after));
        match (was_active, after.is_active()) {
            _ if unchanged || !ever_active => None,
            (false, true) if before.is_none_or(|b| b.activated_at.is_none()) => Some(Self::New),
            (true, false) => Some(Self::Closed),
            _ => Some(Self::Updated),
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in the change feed: the position of the last event a reader has seen. Opaque to
/// clients, who get it from a feed page and send it back as `after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedCursor(pub u64);

/// The first byte of an encoded cursor: its format, so a later format can tell old cursors.
const CURSOR_FORMAT: u8 = 1;

impl FeedCursor {
    /// The cursor as clients see it: URL-safe base64 of its format and position.
    pub fn encode(self) -> String {
        let mut bytes = [0u8; 9];
        bytes[0] = CURSOR_FORMAT;
        bytes[1..].copy_from_slice(&self.0.to_be_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Reads a cursor as [`FeedCursor::encode`] writes it.
    pub fn decode(raw: &str) -> Result<Self, DomainError> {
        let bad = || {
            DomainError::new(
                "after",
                "is not a cursor of this feed; pass the `next_cursor` of a page as it was \
                 given, or leave `after` out to start at the oldest retained event",
            )
        };
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(raw)
            .map_err(|_| bad())?;
        match bytes.split_first() {
            Some((&CURSOR_FORMAT, position)) => position
                .try_into()
                .map(|p| Self(u64::from_be_bytes(p)))
                .map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

/// Sent as clients see it ([`FeedCursor::encode`]).
impl Serialize for FeedCursor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

/// Opaque to clients: a string they send back as it is.
impl schemars::JsonSchema for FeedCursor {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FeedCursor".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

/// Read as clients see it ([`FeedCursor::decode`]): the typed client reads answers' cursors.
impl<'de> Deserialize<'de> for FeedCursor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        FeedCursor::decode(&raw).map_err(|e| serde::de::Error::custom(e.reason))
    }
}

impl fmt::Display for FeedCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        for position in [0, 1, 42, u64::MAX] {
            let c = FeedCursor(position);
            assert_eq!(FeedCursor::decode(&c.encode()).ok(), Some(c));
        }
        for bad in ["", "abc", "AQAAAAAAAAAq!", "AgAAAAAAAAAq", "AQAAAAAAAA"] {
            assert!(FeedCursor::decode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kinds_are_named_as_in_the_api() {
        for kind in ChangeKind::ALL {
            assert_eq!(ChangeKind::parse(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(json, format!("\"{kind}\""));
        }
        assert_eq!(ChangeKind::parse("job.created"), None);
    }
}
