//! The `job-listings` binary's `import` command, run as a user runs it: JSON Lines files in, a sled
//! folder out. Every line is checked before anything is written; the jobs are then read again
//! in id order, a batch at a time, and a later line with the same id wins.
//!

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use job_listings::demo::Dataset;
use job_listings::domain::{CompanyId, Job, JobId, Page, PerPage, Plan};
use job_listings::query::{JobFilter, JobQuery};
use job_listings::service::{Held, JobListingsService, NewKey};
use job_listings::store::{SledConfig, SledStore, Store};

use support::{command, json_lines, path, refused, run, succeeded, text_of, write_lines};

/// `job-listings --data-dir DIR import --companies C --jobs J`.
fn import_command(data: &Path, companies: &Path, jobs: &Path) -> Command {
    let args = [
        "import",
        "--companies",
        path(companies),
        "--jobs",
        path(jobs),
    ];
    command(data, &args)
}

/// Runs `job-listings --data-dir DIR import --companies C --jobs J`.
fn import(data: &Path, companies: &Path, jobs: &Path) -> Output {
    import_command(data, companies, jobs)
        .output()
        .expect("the job-listings binary runs")
}

/// The folder the command wrote, once the command has let go of it: its store, and the
/// service on it.
struct Opened {
    store: Arc<dyn Store>,
    service: JobListingsService,
}

async fn open(data: &Path) -> Opened {
    let store: Arc<dyn Store> =
        Arc::new(SledStore::open(&SledConfig::new(data)).expect("sled opens"));
    let service = JobListingsService::builder()
        .store(store.clone())
        .build()
        .await
        .expect("service builds");
    Opened { store, service }
}

/// Those of `jobs` the store holds, as it holds them.
async fn stored(opened: &Opened, jobs: &[Job]) -> Vec<Job> {
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
    let found = opened.store.get_jobs(&ids).await.expect("read");
    found.into_iter().map(Arc::unwrap_or_clone).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_line_is_imported_in_id_order_the_later_of_two_lines_wins_and_all_are_searchable() {
    let dir = tempfile::tempdir().expect("tempdir");
    // More jobs than one batch holds, so that several are read again and written in turn.
    let data = Dataset::generate(31, 30, 10_000);
    let (companies, jobs) = (
        dir.path().join("companies.jsonl"),
        dir.path().join("jobs.jsonl"),
    );
    write_lines(&companies, &json_lines(&data.companies));
    let mut lines = json_lines(&data.jobs);
    // A byte-order mark, a blank line, and a job repeated further down with a new role.
    lines[0].insert(0, '\u{feff}');
    lines.insert(5_000, String::new());
    let mut renamed = data.jobs[1_234].clone();
    renamed.role = "Principal Reliability Engineer".to_owned();
    lines.push(serde_json::to_string(&renamed).expect("encode"));
    write_lines(&jobs, &lines);

    let said = succeeded(&import(&dir.path().join("db"), &companies, &jobs));
    assert!(
        said.contains("30 companies (30 new, 0 updated) and 10001 jobs (10000 new, 1 updated)"),
        "{said}"
    );

    let opened = open(&dir.path().join("db")).await;
    let service = &opened.service;
    let mut expected = data.jobs.clone();
    expected[1_234].role = renamed.role.clone();
    let mut found = stored(&opened, &expected).await;
    assert_eq!(found.len(), 10_000);
    found.sort_by_key(|j| j.id);
    expected.sort_by_key(|j| j.id);
    for (got, want) in found.iter().zip(&expected) {
        assert_eq!(got.id, want.id);
        assert_eq!(got.role, want.role);
        assert_eq!(got.description, want.description);
        assert_eq!(got.domains, want.domains);
        assert_eq!(got.posted_at, want.posted_at);
        assert_eq!(got.status, want.status);
    }

    // Searchable when the server opens the folder: every active job, and the renamed one
    // under its new role.
    let (key, _) = service
        .create_key(NewKey::new(Plan::Enterprise))
        .await
        .expect("key");
    let search = |filter: JobFilter| {
        let (service, key) = (service.clone(), key.clone());
        async move {
            let query = JobQuery::new(filter)
                .page(Page::new(1).expect("page"))
                .per_page(PerPage::new(50).expect("per_page"));
            service
                .search_jobs(&key, query, Held::Nothing)
                .await
                .expect("search")
                .value
        }
    };
    let active = expected.iter().filter(|j| j.is_active()).count() as u64;
    assert_eq!(search(JobFilter::default()).await.total, active);
    let principal = search(JobFilter::default().with_q("principal reliability")).await;
    assert!(
        principal.jobs.iter().any(|j| j.id == renamed.id) == renamed.is_active(),
        "{:?}",
        principal.jobs.iter().map(|j| &j.role).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_line_or_an_unknown_company_imports_nothing_and_names_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = Dataset::generate(32, 10, 6_000);
    let companies = dir.path().join("companies.jsonl");
    write_lines(&companies, &json_lines(&data.companies));

    // Line 4,500 is cut short.
    let mut lines = json_lines(&data.jobs);
    lines[4_499].truncate(40);
    let broken = dir.path().join("broken.jsonl");
    write_lines(&broken, &lines);
    let output = import(&dir.path().join("db"), &companies, &broken);
    let said = refused(&output);
    assert!(said.contains("broken.jsonl:4500: column"), "{said}");
    assert!(said.contains("not valid JSON"), "{said}");
    assert!(said.contains("nothing was imported"), "{said}");

    // Line 5,001 names a company that neither the file nor the store knows.
    let mut jobs = data.jobs.clone();
    jobs[5_000].company_id = CompanyId(uuid::Uuid::from_u128(99));
    let orphan = dir.path().join("orphan.jsonl");
    write_lines(&orphan, &json_lines(&jobs));
    let output = import(&dir.path().join("db"), &companies, &orphan);
    let said = refused(&output);
    assert!(said.contains("orphan.jsonl:5001: company_id"), "{said}");
    assert!(said.contains("is unknown"), "{said}");

    // Line 12 has a misspelt field, and line 3 a company with a field no company has.
    let mut lines = json_lines(&data.jobs);
    lines[11] = lines[11].replacen("\"remote\":", "\"remote_ony\":", 1);
    lines[20] = lines[20].replacen(
        "\"salary\":null",
        "\"salary\":{\"min\":1,\"currency\":\"EUR\",\"perod\":\"year\"}",
        1,
    );
    let misspelt = dir.path().join("misspelt.jsonl");
    write_lines(&misspelt, &lines);
    let mut company_lines = json_lines(&data.companies);
    company_lines[2] = company_lines[2].replacen('{', "{\"ceo\":\"A. Person\",", 1);
    let odd_companies = dir.path().join("odd_companies.jsonl");
    write_lines(&odd_companies, &company_lines);
    let output = import(&dir.path().join("db"), &odd_companies, &misspelt);
    let said = refused(&output);
    assert!(
        said.contains("misspelt.jsonl:12: unknown field `remote_ony`"),
        "{said}"
    );
    assert!(
        said.contains("odd_companies.jsonl:3: unknown field `ceo`"),
        "{said}"
    );
    assert!(
        said.contains("misspelt.jsonl:21: unknown field `salary.perod`"),
        "{said}"
    );
    assert!(said.contains("3 bad lines; nothing was imported"), "{said}");

    // No run wrote a job (nor, with a bad line, a company).
    let service = open(&dir.path().join("db")).await;
    assert!(stored(&service, &data.jobs).await.is_empty());
    let companies_stored = service
        .store
        .scan_companies(None, 100)
        .await
        .expect("companies");
    assert!(companies_stored.is_empty(), "{companies_stored:?}");
}

/// One run reports every kind of bad line: a value of the wrong kind names its field, a line
/// that is not an object says so, and a job whose company is unknown is reported beside them,
/// not only once the other lines are fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_run_reports_every_bad_line_and_names_the_field_of_a_bad_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = Dataset::generate(34, 5, 200);
    let companies = dir.path().join("companies.jsonl");
    write_lines(&companies, &json_lines(&data.companies));
    let mut lines = json_lines(&data.jobs);
    let record = |line: usize| -> serde_json::Value {
        serde_json::from_str(&lines[line]).expect("a job's JSON")
    };
    let mut salary = record(3);
    salary["salary"] = serde_json::json!({"min": -5, "currency": "USD", "period": "year"});
    let mut posted = record(6);
    posted["posted_at"] = "not a date".into();
    let mut misspelt = record(7);
    let text = misspelt["description"].take();
    misspelt.as_object_mut().map(|o| o.remove("description"));
    misspelt["descripton"] = text;
    let mut confidence = record(8);
    confidence["confidence"] = 1.5.into();
    let mut domains = record(9);
    domains["domains"] = serde_json::json!(["ai", 5]);
    let mut orphan = record(12);
    orphan["company_id"] = uuid::Uuid::from_u128(99).to_string().into();
    for (line, value) in [
        (3, salary),
        (6, posted),
        (7, misspelt),
        (8, confidence),
        (9, domains),
        (12, orphan),
    ] {
        lines[line] = value.to_string();
    }
    lines[15] = "[\"an array\"]".to_owned();
    let jobs = dir.path().join("jobs.jsonl");
    write_lines(&jobs, &lines);

    let output = import(&dir.path().join("db"), &companies, &jobs);
    let said = refused(&output);
    for expected in [
        "jobs.jsonl:4: column",
        "not a valid record: salary.min: invalid value: integer `-5`",
        "jobs.jsonl:7: column",
        "not a valid record: posted_at: `not a date` is not an RFC 3339 date and time, such as",
        "jobs.jsonl:8: column",
        "missing field `description`; unknown field `descripton`",
        "jobs.jsonl:9: column",
        "not a valid record: confidence: must be a number from 0 to 1",
        "not a valid record: domains[1]: invalid type: integer `5`, expected a string",
        "jobs.jsonl:13: company_id: company 00000000-0000-0000-0000-000000000063 is unknown",
        "jobs.jsonl:16: a record must be a JSON object, one per line",
        "7 bad lines; nothing was imported",
    ] {
        assert!(said.contains(expected), "missing {expected:?} in:\n{said}");
    }
    assert!(!said.contains("confidence: confidence"), "{said}");
    // A refused import into a folder that did not exist leaves none behind, even when the
    // only bad line is a job whose company is unknown.
    assert!(!dir.path().join("db").exists());
    let orphan_only = dir.path().join("orphan-only.jsonl");
    write_lines(&orphan_only, &[lines[0].clone(), lines[12].clone()]);
    let output = import(&dir.path().join("db"), &companies, &orphan_only);
    let said = text_of(&output.stderr);
    assert!(said.contains("orphan-only.jsonl:2: company_id"), "{said}");
    assert!(said.contains("1 bad line; nothing was imported"), "{said}");
    assert!(!dir.path().join("db").exists());

    // Into a store that holds the company (imported with the first line), the same lines
    // but for that company's job are told, the store checked for the rest.
    let existing = dir.path().join("existing");
    write_lines(&jobs, &[lines[0].clone()]);
    succeeded(&import(&existing, &companies, &jobs));
    let only_jobs = dir.path().join("no-companies.jsonl");
    write_lines(&only_jobs, &[]);
    write_lines(&jobs, &lines);
    let output = import(&existing, &only_jobs, &jobs);
    let said = refused(&output);
    assert!(
        said.contains("jobs.jsonl:13: company_id: company"),
        "{said}"
    );
    assert!(said.contains("7 bad lines; nothing was imported"), "{said}");

    // A store that cannot be opened (the server has it) still gets the bad lines told, and
    // why the companies were not checked.
    let service = open(&existing).await;
    let output = import(&existing, &only_jobs, &jobs);
    let said = refused(&output);
    assert!(said.contains("jobs.jsonl:4: column"), "{said}");
    assert!(!said.contains("jobs.jsonl:13:"), "{said}");
    assert!(
        said.contains("6 bad lines; nothing was imported. Fix them and run again. The jobs' companies were not checked, as the store could not be opened: "),
        "{said}"
    );
    assert_eq!(stored(&service, &data.jobs).await.len(), 1);
}

/// Jobs piped in (`--jobs /dev/stdin`) cannot be read twice: the command keeps a copy of what
/// it read and reads the lines again from that.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_piped_in_on_stdin_are_imported_as_from_a_file() {
    use std::io::Write as _;
    use std::process::Stdio;

    let dir = tempfile::tempdir().expect("tempdir");
    let data = Dataset::generate(33, 20, 9_000);
    let companies = dir.path().join("companies.jsonl");
    write_lines(&companies, &json_lines(&data.companies));
    let mut lines = json_lines(&data.jobs);
    lines.insert(100, "   ".to_owned());
    let mut later = data.jobs[7].clone();
    later.role = "Staff Data Platform Engineer".to_owned();
    lines.push(serde_json::to_string(&later).expect("encode"));
    let mut text = lines.join("\n");
    text.push('\n');

    let mut child = import_command(&dir.path().join("db"), &companies, Path::new("/dev/stdin"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the job-listings binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from a thread of its own: the command reads while it is written.
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = child.wait_with_output().expect("the import ends");
    writer
        .join()
        .expect("writer")
        .expect("the jobs are written");
    let said = succeeded(&output);
    assert!(said.contains("9001 jobs (9000 new, 1 updated)"), "{said}");

    let service = open(&dir.path().join("db")).await;
    let found = stored(&service, &data.jobs).await;
    assert_eq!(found.len(), 9_000);
    let seventh = found.iter().find(|j| j.id == later.id).expect("stored");
    assert_eq!(seventh.role, later.role);
}

/// `keys create`, `keys plan` and `keys list`, as an operator runs them on a stopped server's
/// folder: the plan a key is moved to is the one the service then holds it to.
#[test]
fn keys_plan_moves_a_key_to_another_plan() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("db");
    let keys = |args: &[&str]| -> String { succeeded(&run(&data, &[&["keys"], args].concat())) };
    keys(&[
        "create",
        "--plan",
        "developer",
        "--label",
        "ops@example.com",
    ]);
    let listed = keys(&["list"]);
    let id = listed
        .lines()
        .find(|l| l.contains("ops@example.com"))
        .and_then(|l| l.split_whitespace().next())
        .expect("the key's row")
        .to_owned();

    let moved = keys(&["plan", "--id", &id, "--plan", "agent_pro"]);
    assert!(moved.contains("is now on the agent_pro plan"), "{moved}");
    let row = keys(&["list"])
        .lines()
        .find(|l| l.starts_with(&id))
        .map(str::to_owned)
        .expect("the key's row");
    assert!(row.contains("agent_pro"), "{row}");
    assert!(!row.contains("developer"), "{row}");
}

/// `keys create --anchor` takes a time now or earlier, and refuses a later one with a message
/// that says why, issuing nothing: the key's first calls would fall in no period yet.
#[test]
fn keys_create_refuses_a_billing_anchor_in_the_future() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("db");
    let later = (chrono::Utc::now() + chrono::Duration::days(30))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let future = run(
        &data,
        &["keys", "create", "--plan", "developer", "--anchor", &later],
    );
    let said = refused(&future);
    assert!(said.contains("billing_anchor"), "{said}");
    assert_eq!(
        said.matches("is in the future").count(),
        1,
        "said once: {said}"
    );
    assert!(text_of(&future.stdout).is_empty(), "no key is printed");

    succeeded(&run(
        &data,
        &[
            "keys",
            "create",
            "--plan",
            "developer",
            "--anchor",
            "2026-01-31T10:00:00Z",
        ],
    ));
    let rows: Vec<String> = text_of(&run(&data, &["keys", "list"]).stdout)
        .lines()
        .filter(|l| l.contains("developer"))
        .map(str::to_owned)
        .collect();
    assert_eq!(rows.len(), 1, "only the key anchored in the past: {rows:?}");
}

/// A first start on a port already in use stops before it issues the demo keys, which it
/// could never show: the folder holds no key, so the next start is a first start again.
#[test]
fn a_first_start_on_a_port_in_use_issues_no_demo_keys() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("db");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = taken.local_addr().expect("its address").to_string();
    let output = run(&data, &["serve", "--addr", &addr]);
    let said = refused(&output);
    assert!(said.contains(&format!("listening on {addr}")), "{said}");
    assert!(text_of(&output.stdout).is_empty(), "nothing is printed");
    let listed = run(&data, &["keys", "list"]);
    assert!(
        text_of(&listed.stdout).contains("No keys yet"),
        "{}",
        text_of(&listed.stdout)
    );
}

/// `import --companies FILE` alone imports the companies; a companies file with a bad line
/// refuses the import and says the jobs' companies were not checked against it (a company on
/// the bad line would have been taken for an unknown one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn companies_alone_import_and_a_bad_companies_file_says_what_was_not_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = Dataset::generate(35, 6, 40);
    let companies = dir.path().join("companies.jsonl");
    write_lines(&companies, &json_lines(&data.companies));
    let said = succeeded(&run(
        &dir.path().join("db"),
        &["import", "--companies", path(&companies)],
    ));
    assert!(
        said.contains("Imported 6 companies (6 new, 0 updated)"),
        "{said}"
    );

    let mut company_lines = json_lines(&data.companies);
    company_lines[1] = "{\"id\": 7}".to_owned();
    let bad_companies = dir.path().join("bad-companies.jsonl");
    write_lines(&bad_companies, &company_lines);
    let mut jobs = data.jobs.clone();
    jobs[3].company_id = CompanyId(uuid::Uuid::from_u128(98));
    let jobs_file = dir.path().join("jobs.jsonl");
    write_lines(&jobs_file, &json_lines(&jobs));
    let output = import(&dir.path().join("fresh"), &bad_companies, &jobs_file);
    let said = refused(&output);
    assert!(said.contains("bad-companies.jsonl:2: column"), "{said}");
    assert!(!said.contains("jobs.jsonl:4:"), "{said}");
    assert!(
        said.contains(
            "1 bad line; nothing was imported. Fix it and run again. The jobs' companies were not checked, as the companies file has bad lines."
        ),
        "{said}"
    );
    assert!(!dir.path().join("fresh").exists());
}

/// `keys list` (or any `keys` command but `create`) on a folder that is not there says so,
/// and makes none: a mistyped `--data-dir` is not an empty store.
#[test]
fn keys_commands_other_than_create_do_not_make_a_missing_folder() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let missing = dir.path().join("mistyped");
    let said = refused(&run(&missing, &["keys", "list"]));
    assert!(said.contains("there is no data folder at"), "{said}");
    assert!(said.contains("`keys create` makes a new one"), "{said}");
    assert!(!missing.exists());
}

/// `import` with neither file says which options it needs, instead of printing all its help.
#[test]
fn import_without_files_names_the_options_it_needs() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let output = run(&dir.path().join("db"), &["import"]);
    let said = refused(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("--companies <FILE>|--jobs <FILE>"), "{said}");
    assert!(!dir.path().join("db").exists(), "no folder is made");
}
