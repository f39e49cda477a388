//! # job-listings: the operator's server
//!
//! ```text
//! job-listings         # serve on 127.0.0.1:8080, data in ./data
//! job-listings --help  # every option
//! job-listings --data-dir /srv/jl serve --addr 127.0.0.1:9000
//! job-listings import --companies companies.jsonl --jobs jobs.jsonl
//! job-listings keys create --plan developer --label alice@example.com
//! job-listings keys list
//! job-listings backup --to /backups/jl-2026-11-26
//! job-listings close-unseen --seen-before 2026-11-20T00:00:00Z --dry-run
//! job-listings --data-dir /srv/jl-restored restore --from /backups/jl-2026-11-26
//! JOB_LISTINGS_API_KEY=jl_live_… job-listings mcp --url https://jobs.example.com
//! ```
//!
//! The operator's program beside the `job-listings` library: it runs the whole API on the
//! library's default parts — a `SledStore` on disk, the `JobListingsService`, the
//! framework-agnostic `Api` and the hyper `Server` — and administers the same data from the
//! command line. Install it with `cargo install --path job-listings-server`.
//!
//! ## `serve` (the default command)
//!
//! 1. opens (or creates) the sled folder and loads it into the service: companies, active jobs
//!    into the search index, keys, usage counters and webhooks;
//! 2. when the store is empty, loads the deterministic demo dataset (600 companies, 6,000
//!    jobs) and issues one demo key per plan, printing each key once on stdout with a `curl`
//!    command to try (use `--no-demo` to start empty);
//! 3. starts the webhook delivery worker, which sends the
//!    `job.new` events queued in the outbox to subscribers' callback URLs;
//! 4. installs Ctrl-C and SIGTERM handlers, binds the address and serves until one fires; open
//!    requests then get up to ten seconds to finish and usage counters are written.
//!
//! Keys are stored as hashes only, so a key is shown when it is created and never again; the
//! logs name keys by id, never by value. Logs go to stderr at `info` (`RUST_LOG` overrides,
//! e.g. `RUST_LOG=job_listings=debug`), as text or, with `--log-format json`, one JSON object
//! a line; stdout carries only what a person needs to copy. `serve` logs every answered
//! request on the target `job_listings::access` (`--access-log off` turns it off).
//!
//! ## `import`, `keys`, `backup` and `restore`
//!
//! `import` loads companies and jobs from JSON Lines files, one record per line in the serde
//! form of `job_listings::domain::Company` and `Job`; `first_seen_at`, `updated_at` and `status` may be left out.
//! Every line is checked before anything is written, so a file with a bad line imports nothing.
//! `keys` issues, revokes and lists API keys and sets their billing status.
//!
//! While a server runs on the data folder, `import` and `keys` go through its admin API
//! (`serve` writes its address to `DIR/admin.addr` and the admin token to
//! `DIR/admin.token`): what they write is
//! served at once, and new jobs are announced to webhook subscribers. With no server running
//! they open the store themselves (sled allows one process per folder); the server then serves
//! the data, and sends the webhook deliveries an import queued, when it next starts.
//!
//! `backup --to DIR` copies the data folder into a new folder with the key that seals the
//! webhook secrets and, written last, a manifest of every file; `restore --from DIR` checks a
//! backup against its manifest and turns it into a new data folder (`--data-dir`, which must
//! not exist or be empty), never writing over anything. With a server running on the folder, `backup`
//! asks its admin API to make the copy; otherwise it opens the folder itself.
//!
//! `close-unseen --seen-before TIME` closes the active jobs the crawler last sent before TIME
//! (`--dry-run` only counts them), through the running server's admin API when one runs.
//!
//! ## `mcp`
//!
//! `serve` answers MCP (the Model Context Protocol, streamable HTTP) at `/mcp` beside the REST
//! API. `mcp --url URL` speaks the same tools on stdin and stdout for a desktop agent that
//! launches its MCP servers as processes, forwarding every call to the server at `URL` with
//! the key from `--key` or `JOB_LISTINGS_API_KEY`.
//!
//! ## The admin listener
//!
//! `serve` also serves the admin API (`/admin/v1`: jobs, companies, keys, webhook
//! subscriptions; `/livez`, `/readyz`) on `--admin-addr`, a loopback address by default, behind
//! the admin token made on first start and printed once.
//!
//! ## Several replicas on PostgreSQL
//!
//! With `--database-url postgres://...` (or `JOB_LISTINGS_DATABASE_URL`) the state lives in
//! PostgreSQL instead of the sled folder, and any number of servers may share it: each keeps
//! its own search index, fed by the database's change feed, counts calls in the database and
//! claims webhook deliveries with a lease. `import` and `keys` then run while the servers do.
//! Give every replica the same `--secret-key-file`.
//!
//! ## Environment
//!
//! `JOB_LISTINGS_DATA` (`--data-dir`), `JOB_LISTINGS_CACHE_MB` (`--cache-mb`),
//! `JOB_LISTINGS_JOB_CACHE_MB` (`--job-cache-mb`), `JOB_LISTINGS_ADDR` (`--addr`),
//! `JOB_LISTINGS_LOG_FORMAT` (`--log-format`) and `JOB_LISTINGS_ACCESS_LOG` (`--access-log`)
//! stand in for the options of the same meaning.

mod admin_files;
mod backup;
mod cli;
mod import;
mod keys;
mod memory;
mod open;
mod serve;
mod unseen;

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use job_listings::service::{JobListingsService, ServiceConfig};

use cli::{Command, KeysCommand, LogFormat};
use import::Target;
use keys::Keys;
use open::{open_service, Deliver};

/// mimalloc for everything, C's `malloc` included (its `override` feature): the query index's
/// CRoaring bitmaps allocate through `malloc` on every search, and glibc's took a fifth of a
/// filtered text search at a million jobs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long the runtime waits, once the command is done, for blocking work still running
/// (a search or a file write on a blocking thread) before the process exits anyway: a stop
/// request must stop the process even when such work does not end.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

fn main() -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let outcome = runtime.block_on(run());
    runtime.shutdown_timeout(EXIT_GRACE);
    outcome
}

async fn run() -> Result<()> {
    let started = Instant::now();
    let cli = cli::parse_command_line();
    let store = cli.store;
    let log_format = cli.log.log_format;
    match cli.command.unwrap_or(Command::Serve(cli.serve)) {
        Command::Serve(args) => {
            init_logging("info", log_format);
            let service = open_service(&store, args.service_config(), Deliver::Webhooks).await?;
            let outcome = serve::serve(&service, &store, &args, started).await;
            close(&service, outcome).await
        }
        Command::Import(args) => {
            init_logging("warn", log_format);
            // Read and check the files before taking the store's lock.
            let mut input = import::read_import(&args)?;
            if let Some(admin) = admin_files::find_server(&store).await? {
                return import::import(Target::Remote(&admin), input).await;
            }
            if store.database_url.is_none() && !store.data_dir.exists() {
                input = import::checked_for_a_new_store(input)?;
            }
            let service =
                match open_service(&store, ServiceConfig::default(), Deliver::Nothing).await {
                    Ok(service) => service,
                    Err(e) => return Err(import::refuse_unopened(input, e)),
                };
            let outcome = import::import(Target::Local(&service), input).await;
            close(&service, outcome).await
        }
        Command::Keys(command) => {
            init_logging("warn", log_format);
            // Only `create` may make the folder: one that lists or changes keys in a folder
            // that is not there was given the wrong one.
            if let Some(admin) = admin_files::find_server(&store).await? {
                return keys::keys(Keys::Remote(&admin), command).await;
            }
            let creates = matches!(command, KeysCommand::Create { .. });
            if !creates && store.database_url.is_none() && !store.data_dir.exists() {
                bail!(
                    "there is no data folder at {}: give the server's --data-dir (or \
                     JOB_LISTINGS_DATA); `keys create` makes a new one",
                    store.data_dir.display()
                );
            }
            let service = open_service(&store, ServiceConfig::default(), Deliver::Nothing).await?;
            let outcome = keys::keys(Keys::Direct(&service), command).await;
            close(&service, outcome).await
        }
        Command::Backup(args) => {
            init_logging("warn", log_format);
            if let Some(admin) = admin_files::find_server(&store).await? {
                return backup::backup_remote(&admin, &args).await;
            }
            backup::check_backup(&store, &args)?;
            let service = open_service(&store, ServiceConfig::default(), Deliver::Nothing).await?;
            let outcome = backup::backup(&service, &args).await;
            close(&service, outcome).await
        }
        Command::CloseUnseen(args) => {
            init_logging("warn", log_format);
            if let Some(admin) = admin_files::find_server(&store).await? {
                return unseen::close_unseen_remote(&admin, &args).await;
            }
            let service = open_service(&store, ServiceConfig::default(), Deliver::Nothing).await?;
            let outcome = unseen::close_unseen(&service, &args).await;
            close(&service, outcome).await
        }
        Command::Restore(args) => {
            init_logging("warn", log_format);
            backup::restore(&store, &args).await
        }
        Command::Mcp(args) => {
            // stdout carries the protocol; logs go to stderr as always.
            init_logging("warn", log_format);
            let client = job_listings::client::Client::builder(args.url)
                .api_key(args.key)
                .build()
                .context("making the API client")?;
            job_listings::mcp::serve_stdio(client)
                .await
                .context("serving MCP on stdio")
        }
    }
}

/// Logs to stderr as text or JSON lines; `RUST_LOG` overrides the default level.
fn init_logging(default: &str, format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => log.with_ansi(std::io::stderr().is_terminal()).init(),
        // The event's fields beside its time, level and target, as pipelines index them.
        LogFormat::Json => log.json().flatten_event(true).init(),
    }
}

/// Every path that opened the service ends here: stop the usage writer and write the usage
/// counters one last time, then report the command's own outcome first.
async fn close(service: &JobListingsService, outcome: Result<()>) -> Result<()> {
    let flushed = service
        .shutdown()
        .await
        .context("writing usage counters on the way out");
    outcome.and(flushed)
}
