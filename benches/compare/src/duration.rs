//! Durations on the command line of the examples: `250ms`, `10s`, `1.5m`, `2h`; a bare number
//! is seconds. Shared by `load` and `ingest_while_serving` through `#[path]`.

use std::time::Duration;

/// Parses a duration such as `10s`; for clap's `value_parser`.
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let (number, unit) = match raw.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => raw.split_at(at),
        None => (raw, "s"),
    };
    let n: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("bad duration `{raw}`"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("bad unit in `{raw}`; use ms, s, m or h")),
    };
    Duration::try_from_secs_f64(secs).map_err(|e| format!("bad duration `{raw}`: {e}"))
}
