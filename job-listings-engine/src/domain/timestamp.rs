//! Reading timestamps from JSON faster than chrono's own `Deserialize`, which goes through its
//! general, relaxed parser: with four timestamps a job, that parser was a tenth of decoding
//! stored jobs.
//!
//! RFC 3339 (what every timestamp is written as) takes chrono's dedicated RFC 3339 parser;
//! anything else still goes to the relaxed parser, so the same strings are accepted, with the
//! same values and (for strings) the same errors, as with chrono's `Deserialize`, but for a
//! second written `:60`, which is read as the next minute's start ([`after_leap_second`]).

use std::fmt;

use chrono::{DateTime, FixedOffset, TimeDelta, Timelike, Utc};
use serde::de::{Deserializer, Error, Visitor};

/// Parses as chrono's `Deserialize` for `DateTime<Utc>` does, then moves a leap second on.
fn parse(s: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s)
        .or_else(|_| s.parse::<DateTime<FixedOffset>>())
        .map(|t| after_leap_second(t.with_timezone(&Utc)))
}

/// A second written as `:60` read as the start of the next minute. chrono takes `:60` in any
/// minute, as a leap second, and writes it back as `:60`, which most date-time parsers refuse
/// (and no leap second has been inserted since the end of 2016).
pub fn after_leap_second(t: DateTime<Utc>) -> DateTime<Utc> {
    const SECOND: u32 = 1_000_000_000;
    match t.nanosecond().checked_sub(SECOND) {
        Some(within) => t
            .with_nanosecond(within)
            .and_then(|t| t.checked_add_signed(TimeDelta::seconds(1)))
            .unwrap_or(t),
        None => t,
    }
}

struct TimestampVisitor;

impl Visitor<'_> for TimestampVisitor {
    type Value = DateTime<Utc>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an RFC 3339 date and time, such as 2026-11-01T09:30:00Z")
    }

    fn visit_str<E: Error>(self, s: &str) -> Result<Self::Value, E> {
        // chrono's own message ("input contains invalid characters") names no form to write.
        parse(s).map_err(|e| {
            E::custom(format_args!(
                "`{s}` is not an RFC 3339 date and time, such as 2026-11-01T09:30:00Z ({e})"
            ))
        })
    }
}

/// For `#[serde(deserialize_with)]` on a `DateTime<Utc>`.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    d.deserialize_str(TimestampVisitor)
}

/// For `#[serde(deserialize_with)]` on an `Option<DateTime<Utc>>`.
pub(super) fn deserialize_option<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    struct OptionVisitor;

    impl<'de> Visitor<'de> for OptionVisitor {
        type Value = Option<DateTime<Utc>>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("null or an RFC 3339 date and time, such as 2026-11-01T09:30:00Z")
        }

        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            deserialize(d).map(Some)
        }
    }

    d.deserialize_option(OptionVisitor)
}

/// When a record last changed at `before` changes now: `now`, or just after `before` when the
/// clock has not moved past it (a coarse or manual clock, two writes in one tick). So every
/// change of a record has its own `updated_at`, which answers can be cached and validated by.
pub fn changed_at(before: DateTime<Utc>, now: DateTime<Utc>) -> DateTime<Utc> {
    if now > before {
        now
    } else {
        before + chrono::Duration::nanoseconds(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Stamps {
        #[serde(deserialize_with = "deserialize")]
        at: DateTime<Utc>,
        #[serde(default, deserialize_with = "deserialize_option")]
        maybe: Option<DateTime<Utc>>,
    }

    #[derive(serde::Deserialize, Debug)]
    struct ChronoStamps {
        at: DateTime<Utc>,
        #[serde(default)]
        maybe: Option<DateTime<Utc>>,
    }

    /// The same strings are accepted, with the same values, as by chrono's `Deserialize`:
    /// strict RFC 3339, the relaxed forms, offsets and fractions; and the same are refused. A
    /// leap second is the one value that differs: it is moved on to the next minute.
    #[test]
    fn reads_what_chrono_reads_and_refuses_what_it_refuses() {
        let inputs = [
            "2026-11-01T09:30:00Z",
            "2026-11-01T09:30:00.123456789Z",
            "2026-11-01T09:30:00+02:00",
            "2026-11-01t09:30:00z",
            "2026-11-01 09:30:00Z",
            "2026-11-01T09:30:00.5-05:30",
            "2026-11-01T09:30:60Z",
            "1677-01-01T00:00:00Z",
            "2026-11-01",
            "2026-13-01T09:30:00Z",
            "not a time",
            "",
        ];
        for input in inputs {
            for json in [
                format!(r#"{{"at":"{input}","maybe":"{input}"}}"#),
                format!(r#"{{"at":"{input}","maybe":null}}"#),
                format!(r#"{{"at":"{input}"}}"#),
            ] {
                let ours = serde_json::from_str::<Stamps>(&json);
                let chrono = serde_json::from_str::<ChronoStamps>(&json);
                match (ours, chrono) {
                    (Ok(a), Ok(b)) => assert_eq!(
                        (a.at, a.maybe),
                        (after_leap_second(b.at), b.maybe.map(after_leap_second)),
                        "{json}"
                    ),
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{json}: ours {a:?}, chrono {b:?}"),
                }
            }
        }
        let read: Stamps = serde_json::from_str(r#"{"at":"2026-11-01T09:30:00Z"}"#).unwrap();
        assert_eq!(read.at.to_rfc3339(), "2026-11-01T09:30:00+00:00");
        assert_eq!(read.maybe, None);
        assert!(serde_json::from_str::<Stamps>(r#"{"at":5}"#).is_err());
        let leap: Stamps =
            serde_json::from_str(r#"{"at":"2026-11-01T09:30:60.25+01:00"}"#).unwrap();
        assert_eq!(leap.at.to_rfc3339(), "2026-11-01T08:31:00.250+00:00");
    }
}
