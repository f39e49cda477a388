//! The `job-listings` binary's log as an operator reads it on stderr: text or JSON lines
//! (`--log-format`) for every command, and `serve`'s access log, one line per request naming
//! the key by its id and never by the key (`--access-log`).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::Value;

use support::{binary, run, succeeded};

/// Issues a developer key in `data`: (key, id).
fn issue_key(data: &Path) -> (String, String) {
    let stdout = succeeded(&run(data, &["keys", "create", "--plan", "developer"]));
    let mut lines = stdout.lines();
    let key = lines.next().expect("the key").to_owned();
    let id = lines
        .next()
        .and_then(|l| l.strip_prefix("id "))
        .and_then(|l| l.split_whitespace().next())
        .expect("the key's id")
        .to_owned();
    (key, id)
}

/// The lines of stderr that are JSON objects.
fn json_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `serve` on a free port of 127.0.0.1, and its base URL's address once it listens.
fn serve(data: &Path, args: &[&str]) -> (Child, String) {
    let mut child = binary(data)
        .arg("--log-format")
        .arg("json")
        .args(["serve", "--no-demo", "--addr", "127.0.0.1:0", "--no-admin"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the job-listings binary starts");
    // Read to the end, so the server never writes to a closed pipe.
    let stdout = child.stdout.take().expect("stdout");
    let (listening, address) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("Listening on http://") {
                let _ = listening.send(addr.to_owned());
            }
        }
    });
    let addr = address
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the server says where it listens");
    (child, addr)
}

/// One HTTP/1.1 request with the key; the answer's status line.
fn get(addr: &str, path: &str, key: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connected");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-API-Key: {key}\r\nConnection: close\r\n\r\n"
    )
    .expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answered");
    answer.lines().next().unwrap_or_default().to_owned()
}

/// Stops the server and returns what it wrote on stderr.
fn stop(mut child: Child) -> String {
    child.kill().expect("stopped");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr read");
    child.wait().expect("waited");
    stderr
}

#[test]
fn every_command_logs_json_lines_when_asked() {
    let dir = tempfile::tempdir().expect("a folder");
    let out = binary(&dir.path().join("db"))
        .args([
            "keys",
            "create",
            "--plan",
            "developer",
            "--log-format",
            "json",
        ])
        .env("RUST_LOG", "info")
        .output()
        .expect("the job-listings binary runs");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let issued = json_lines(&stderr)
        .into_iter()
        .find(|l| l["message"] == "key issued")
        .unwrap_or_else(|| panic!("a JSON line for the key issued: {stderr}"));
    assert_eq!(issued["level"], "INFO");
    assert_eq!(issued["plan"], "developer");
    assert!(issued["key_id"].is_string());
}

#[test]
fn serve_logs_each_request_with_the_key_id_and_never_the_key() {
    let dir = tempfile::tempdir().expect("a folder");
    let data = dir.path().join("db");
    let (key, id) = issue_key(&data);
    let (server, addr) = serve(&data, &[]);
    assert!(get(&addr, "/api/v1/usage", &key).contains(" 200 "));
    assert!(get(&addr, "/api/v1/nowhere", &key).contains(" 404 "));
    let wrong = "jl_live_0000000000000000000000000000000000";
    assert!(get(&addr, "/api/v1/usage", wrong).contains(" 401 "));
    let stderr = stop(server);

    let access: Vec<Value> = json_lines(&stderr)
        .into_iter()
        .filter(|l| l["target"] == "job_listings::access")
        .collect();
    assert_eq!(access.len(), 3, "{stderr}");
    assert_eq!(access[0]["key_id"], id.as_str());
    assert_eq!(access[0]["route"], "/api/v1/usage");
    assert_eq!(access[0]["status"], 200);
    assert!(access[0]["request_id"].is_string());
    assert!(access[0]["bytes"].as_u64().is_some_and(|b| b > 0));
    assert!(access[0]["latency_ms"].is_number());
    assert_eq!(access[1]["route"], "unmatched");
    assert!(access[2].get("key_id").is_none(), "no valid key, no key id");
    for secret in [key.as_str(), wrong] {
        assert!(!stderr.contains(secret), "a key in the log: {stderr}");
    }
}

#[test]
fn serve_with_the_access_log_off_logs_no_request() {
    let dir = tempfile::tempdir().expect("a folder");
    let data = dir.path().join("db");
    let (key, _) = issue_key(&data);
    let (server, addr) = serve(&data, &["--access-log", "off"]);
    assert!(get(&addr, "/api/v1/usage", &key).contains(" 200 "));
    let stderr = stop(server);
    let lines = json_lines(&stderr);
    assert!(
        lines.iter().any(|l| l["message"] == "listening"),
        "{stderr}"
    );
    assert!(
        !lines.iter().any(|l| l["target"] == "job_listings::access"),
        "{stderr}"
    );
}
