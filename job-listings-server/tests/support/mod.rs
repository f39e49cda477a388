//! What the binary's test files share: the `job-listings` binary run on a data folder as an
//! operator runs it, free of the developer's own `JOB_LISTINGS_*` settings; what it said;
//! JSON Lines files for it to read; and the store it leaves behind.

// Each test file is a test binary of its own, and each uses only a part of these.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use job_listings::domain::Job;
use job_listings::store::Store;

/// The prefix of the variables the binary reads its settings from.
const SETTINGS_PREFIX: &[u8] = b"JOB_LISTINGS_";

/// `job-listings --data-dir DATA`, the binary `cargo test` builds beside the tests, for a test
/// to add the command to: every `JOB_LISTINGS_*` variable of the environment the tests run in
/// is removed, so none of a developer's settings (a `JOB_LISTINGS_DATABASE_URL`, say) points
/// the binary elsewhere; a test sets the ones it means to.
pub fn binary(data: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_job-listings"));
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(SETTINGS_PREFIX) {
            command.env_remove(name);
        }
    }
    command.arg("--data-dir").arg(data);
    command
}

/// `job-listings --data-dir DATA ARGS…`, quiet but for warnings, without backtraces.
pub fn command(data: &Path, args: &[&str]) -> Command {
    let mut command = binary(data);
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .env("RUST_BACKTRACE", "0");
    command
}

/// Runs `job-listings --data-dir DATA ARGS…` (see [`command`]) to its end.
pub fn run(data: &Path, args: &[&str]) -> Output {
    command(data, args)
        .output()
        .expect("the job-listings binary runs")
}

pub fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a command that must have failed said on stderr.
#[track_caller]
pub fn refused(output: &Output) -> String {
    assert!(!output.status.success(), "{}", text_of(&output.stdout));
    text_of(&output.stderr)
}

/// What a command that must have succeeded said on stdout.
#[track_caller]
pub fn succeeded(output: &Output) -> String {
    let said = text_of(&output.stdout);
    assert!(output.status.success(), "{said}{}", text_of(&output.stderr));
    said
}

/// A path as an argument of the binary.
pub fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Each record as a line of JSON.
pub fn json_lines<T: serde::Serialize>(records: &[T]) -> Vec<String> {
    records
        .iter()
        .map(|r| serde_json::to_string(r).expect("encode"))
        .collect()
}

/// Writes `lines` to `path`, each ended by a newline.
pub fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).expect("write the file");
}

/// Every job of a store, page by page.
pub async fn all_jobs(store: &dyn Store) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    loop {
        let page = store
            .scan_jobs(jobs.last().map(|j| j.id), 250)
            .await
            .expect("a scan");
        if page.is_empty() {
            return jobs;
        }
        jobs.extend(page);
    }
}

/// Waits until sled has let go of the data folder `data` whose store this process dropped
/// (it holds a lock on its `db` file until its last thread is done), so the binary can open
/// it.
pub async fn sled_let_go(data: &Path) {
    let db = std::fs::File::open(data.join("db")).expect("the db file");
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.try_lock().is_err() {
        assert!(Instant::now() < deadline, "sled still holds the folder");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    db.unlock().expect("unlocked");
}
