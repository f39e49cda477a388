//! Arbitrary bytes as one JSON Lines import line, read the way `import` reads it: as a `Job`
//! and as a `Company` (`serde_json::from_slice`, then `validate`). Nothing panics; a job that
//! validates has a non-blank role, a `posted_at` that fits the index's nanosecond range and a
//! confidence from 0 to 1; and every record that validates is written and read back by the
//! store's JSON encoding unchanged. When the input is a JSON object, its fields are also laid
//! over a valid job and a valid company and the result read the same way, so field values are
//! fuzzed without first having to find every required field.
//!
//! Run from the `fuzz` folder, on a stable toolchain:
//! `cargo fuzz run -s none import_line -- -dict=dicts/import_line.dict -max_total_time=600 -max_len=4096`
#![no_main]

use job_listings::domain::{Company, Job};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    read_line(data);
    if let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(data) {
        let job = json!({
            "id": "0d9f3c1a-6b2e-4f7d-8c5a-1e2d3f4a5b6c",
            "role": "Senior Rust Engineer",
            "company_id": "5b2f1c9e-3a47-4e0b-9a7d-2f1e8c6b4a10",
            "description": "Build our Rust search engine",
            "source_url": "https://acme.example.com/careers/42",
            "posted_at": "2026-11-01T09:30:00Z",
            "confidence": 0.93,
        });
        let company = json!({
            "id": "5b2f1c9e-3a47-4e0b-9a7d-2f1e8c6b4a10",
            "name": "Acme AI",
            "domain": "acme.example.com",
            "funding_stage": "series_a",
        });
        for mut template in [job, company] {
            if let Value::Object(base) = &mut template {
                base.extend(fields.clone());
            }
            read_line(&serde_json::to_vec(&template).expect("JSON"));
        }
    }
});

fn read_line(line: &[u8]) {
    if let Ok(job) = serde_json::from_slice::<Job>(line) {
        if job.validate().is_ok() {
            assert!(!job.role.trim().is_empty(), "{job:?}");
            assert!(job.posted_at.timestamp_nanos_opt().is_some(), "{job:?}");
            assert!((0.0..=1.0).contains(&job.confidence.get()), "{job:?}");
            round_trip(&job);
        }
    }
    if let Ok(company) = serde_json::from_slice::<Company>(line) {
        if company.validate().is_ok() {
            assert!(!company.name.trim().is_empty(), "{company:?}");
            round_trip(&company);
        }
    }
}

fn round_trip<T>(value: &T)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let stored = serde_json::to_vec(value).expect("a validated record serialises");
    let back = serde_json::from_slice::<T>(&stored);
    assert!(
        back.as_ref().is_ok_and(|b| b == value),
        "{value:?} stored as {} read back as {back:?}",
        String::from_utf8_lossy(&stored)
    );
}
