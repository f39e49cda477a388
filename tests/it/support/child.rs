//! A test that re-executes its own binary: the parent starts it again running only one test,
//! the child's entry point, which does nothing unless the parent's variables are set.

use std::ffi::OsString;
use std::process::Stdio;

use tokio::process::{Child, Command};

/// A variable the parent set for the child; panics when it is missing.
pub fn child_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is set for the child"))
}

/// Starts this test binary again running only `entry_point` (exactly that test, its output
/// not captured, on one thread) with `envs` set and no backtraces: stdout piped for the parent
/// to read, stderr passed through, and the child killed when the value is dropped.
pub fn re_exec(
    entry_point: &str,
    envs: impl IntoIterator<Item = (&'static str, OsString)>,
) -> Child {
    let exe = std::env::current_exe().expect("the test binary");
    Command::new(exe)
        .args(["--exact", entry_point, "--nocapture", "--test-threads=1"])
        .envs(envs)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the child process")
}
