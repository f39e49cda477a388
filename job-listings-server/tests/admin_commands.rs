//! The `job-listings` binary administering a running server: `serve` with its admin listener,
//! then `keys` and `import` on the same data folder, which find the server and go through its
//! admin API, with the output they give without one.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use job_listings::demo::Dataset;

use support::{binary, command, json_lines, path, refused, run, succeeded, write_lines};

/// A `serve` child process on ports the system picks, stopped with SIGTERM when dropped.
struct Serving {
    child: Child,
    data: PathBuf,
    /// `http://127.0.0.1:PORT` of the public API.
    base: String,
    /// Everything it printed on stdout until it listened.
    stdout: Vec<String>,
}

impl Serving {
    fn start(data: &Path, extra: &[&str]) -> Self {
        let mut child = binary(data)
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--admin-addr",
                "127.0.0.1:0",
            ])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut lines = BufReader::new(child.stdout.take().expect("its stdout")).lines();
        let mut stdout = Vec::new();
        let base = loop {
            let line = lines
                .next()
                .expect("the server prints until it listens")
                .expect("a line");
            stdout.push(line.clone());
            if let Some(base) = line.strip_prefix("Listening on ") {
                break base.to_owned();
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            child,
            data: data.to_owned(),
            base,
            stdout,
        }
    }

    /// Stops the server with SIGTERM and returns what it logged on stderr.
    fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().expect("its state").is_none() {
            assert!(Instant::now() < deadline, "the server did not stop");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut stderr = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().expect("its stderr"), &mut stderr)
            .expect("its stderr");
        stderr
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn search_total(base: &str, key: &str, q: &str) -> u64 {
    let body: serde_json::Value = reqwest::blocking::Client::new()
        .get(format!("{base}/api/v1/jobs?q={q}"))
        .header("x-api-key", key)
        .send()
        .expect("answered")
        .json()
        .expect("JSON");
    body["pagination"]["total"].as_u64().expect("a total")
}

#[test]
fn keys_and_import_go_through_the_running_server_and_it_serves_at_once() {
    let dir = tempfile::tempdir().expect("a folder");
    let data = dir.path().join("data");
    let server = Serving::start(&data, &["--no-demo"]);
    let token = std::fs::read_to_string(data.join("admin.token")).expect("the token file");
    assert!(
        server.stdout.iter().any(|l| l.contains(token.trim())),
        "the new token is shown once on stdout"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("admin.token"))
            .expect("the token file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(data.join("admin.addr").exists());

    // `keys create` while the server holds the folder: through the admin API.
    let created = succeeded(&run(
        &server.data,
        &["keys", "create", "--plan", "developer"],
    ));
    let key = created.lines().next().expect("the key").to_owned();
    assert!(key.starts_with("jl_live_"), "{key}");
    let listed = succeeded(&run(&server.data, &["keys", "list"]));
    assert!(listed.contains("developer"));
    assert!(!listed.contains(&key));

    // `import` with a bad line refuses everything, as without a server.
    let dataset = Dataset::generate(5, 3, 40);
    let companies = dir.path().join("companies.jsonl");
    let jobs = dir.path().join("jobs.jsonl");
    write_lines(&companies, &json_lines(&dataset.companies));
    let mut bad: Vec<serde_json::Value> = dataset
        .jobs
        .iter()
        .map(|j| serde_json::to_value(j).expect("JSON"))
        .collect();
    bad[3]["confidence"] = serde_json::json!("high");
    write_lines(&jobs, &json_lines(&bad));
    let paths = [
        "import",
        "--companies",
        path(&companies),
        "--jobs",
        path(&jobs),
    ];
    let said = refused(&run(&server.data, &paths));
    assert!(said.contains("jobs.jsonl:4: "), "{said}");
    assert!(said.contains("nothing was imported"), "{said}");
    assert_eq!(search_total(&server.base, &key, "engineer"), 0);

    write_lines(&jobs, &json_lines(&dataset.jobs));
    let said = succeeded(&run(&server.data, &paths));
    assert!(
        said.contains("Imported 3 companies (3 new, 0 updated) and 40 jobs (40 new, 0 updated)"),
        "{said}"
    );
    let active = dataset
        .jobs
        .iter()
        .filter(|j| j.status == job_listings::domain::JobStatus::Active)
        .count() as u64;
    let body: serde_json::Value = reqwest::blocking::Client::new()
        .get(format!("{}/api/v1/jobs", server.base))
        .header("x-api-key", &key)
        .send()
        .expect("answered")
        .json()
        .expect("JSON");
    assert_eq!(body["pagination"]["total"].as_u64(), Some(active));

    // `backup` while the server runs: the server writes it, and it restores elsewhere.
    let backup = dir.path().join("backup");
    let backed_up = succeeded(&run(&server.data, &["backup", "--to", path(&backup)]));
    assert!(backed_up.contains("Backed up 40 jobs"), "{backed_up}");
    let restored = dir.path().join("restored");
    succeeded(&run(&restored, &["restore", "--from", path(&backup)]));

    // `close-unseen` through the server: a dry run counts and closes nothing; a time before
    // the import finds nothing.
    let far = "2100-01-01T00:00:00Z";
    let counted = succeeded(&run(
        &server.data,
        &["close-unseen", "--seen-before", far, "--dry-run"],
    ));
    assert!(
        counted.starts_with(&format!("{active} active jobs last seen before 2100")),
        "{counted}"
    );
    assert!(counted.contains("dry run: none closed"), "{counted}");
    let none = succeeded(&run(
        &server.data,
        &["close-unseen", "--seen-before", "2000-01-01T00:00:00Z"],
    ));
    assert!(
        none.contains("0 active jobs") && none.contains("; 0 closed"),
        "{none}"
    );
    assert!(search_total(&server.base, &key, "engineer") > 0);

    // The token never reaches the logs; the address file goes with the server.
    let logged = server.stop();
    assert!(!logged.contains(token.trim()), "{logged}");
    assert!(!data.join("admin.addr").exists());

    // With the server stopped, the same commands open the store themselves.
    let listed = succeeded(&run(&data, &["keys", "list"]));
    assert!(listed.contains("developer"));
    let closed = succeeded(&run(&data, &["close-unseen", "--seen-before", far]));
    assert!(closed.contains(&format!("; {active} closed")), "{closed}");
}

#[test]
fn backup_through_the_running_server_refuses_a_folder_inside_its_data() {
    let dir = tempfile::tempdir().expect("a folder");
    let data = dir.path().join("data");
    let _server = Serving::start(&data, &["--no-demo"]);
    let inside = data.join("backup");
    let said = refused(&run(&data, &["backup", "--to", path(&inside)]));
    assert!(
        said.contains("is inside the live data folder") && said.contains("invalid_parameter"),
        "{said}"
    );
    assert!(!inside.exists());
}

#[test]
fn a_stale_address_file_is_passed_over() {
    let dir = tempfile::tempdir().expect("a folder");
    let data = dir.path().join("data");
    succeeded(&run(&data, &["keys", "create", "--plan", "developer"]));
    // As a crashed server leaves it: nobody listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("its address")
        .port();
    std::fs::write(
        data.join("admin.addr"),
        format!("http://127.0.0.1:{port}\n"),
    )
    .expect("written");
    let listed = succeeded(&run(&data, &["keys", "list"]));
    assert!(listed.contains("developer"));
}

#[test]
fn the_admin_listener_refuses_an_address_other_machines_reach_unless_told() {
    let dir = tempfile::tempdir().expect("a folder");
    let said = refused(&run(
        &dir.path().join("data"),
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--admin-addr",
            "0.0.0.0:0",
            "--no-demo",
        ],
    ));
    assert!(said.contains("--admin-allow-remote"), "{said}");
}

#[test]
fn a_wrong_admin_token_is_refused_and_not_echoed() {
    let dir = tempfile::tempdir().expect("a folder");
    let data = dir.path().join("data");
    let server = Serving::start(&data, &["--no-demo"]);
    let wrong = job_listings::api::admin::AdminToken::generate();
    let output = command(&server.data, &["keys", "list"])
        .env("JOB_LISTINGS_ADMIN_TOKEN", wrong.expose())
        .output()
        .expect("runs");
    let said = refused(&output);
    assert!(said.contains("invalid_admin_token"), "{said}");
    assert!(!said.contains(wrong.expose()), "{said}");
}
