//! # The bundled job-listings server
//!
//! ```text
//! cargo run --release --example server            # serve on 127.0.0.1:8080, data in ./data
//! cargo run --release --example server -- --help  # every option
//! cargo run --release --example server -- --data-dir /srv/jl serve --addr 127.0.0.1:9000
//! cargo run --release --example server -- import --companies companies.jsonl --jobs jobs.jsonl
//! cargo run --release --example server -- keys create --plan developer --label alice@example.com
//! cargo run --release --example server -- keys list
//! ```
//!
//! One binary runs the whole API on the crate's default parts — a [`SledStore`] on disk, the
//! [`JobListingsService`], the framework-agnostic [`Api`] and the hyper [`Server`] — and
//! administers the same data folder from the command line.
//!
//! ## `serve` (the default command)
//!
//! 1. opens (or creates) the sled folder and loads it into the service: companies, active jobs
//!    into the search index, keys, usage counters and webhooks;
//! 2. when the store is empty, loads the deterministic demo dataset (600 companies, 6,000
//!    jobs) and issues one demo key per plan, printing each key once on stdout with a `curl`
//!    command to try (use `--no-demo` to start empty);
//! 3. starts the webhook delivery worker (feature `webhooks`, on by default), which sends the
//!    `job.new` events queued in the outbox to subscribers' callback URLs;
//! 4. installs Ctrl-C and SIGTERM handlers, binds the address and serves until one fires; open
//!    requests then get up to ten seconds to finish and usage counters are written.
//!
//! Keys are stored as hashes only, so a key is shown when it is created and never again; the
//! logs name keys by id, never by value. Logs go to stderr at `info` (`RUST_LOG` overrides,
//! e.g. `RUST_LOG=job_listings=debug`); stdout carries only what a person needs to copy.
//!
//! ## `import` and `keys`
//!
//! `import` loads companies and jobs from JSON Lines files, one record per line in the serde
//! form of [`Company`] and [`Job`]; `first_seen_at`, `updated_at` and `status` may be left out.
//! Every line is checked before anything is written, so a file with a bad line imports nothing.
//! Webhook deliveries an import queues are sent by the server when it next runs. `keys` issues,
//! revokes and lists API keys and sets their billing status.
//!
//! sled allows one process per folder: stop the server before running `import` or `keys` on
//! its folder, and start it again afterwards to serve the new data.
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
//! `JOB_LISTINGS_JOB_CACHE_MB` (`--job-cache-mb`) and `JOB_LISTINGS_ADDR` (`--addr`) stand in
//! for the options of the same meaning.

use std::fmt::Write as _;
use std::future::Future;
use std::io::IsTerminal;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, ApiKeyRecord, BillingStatus, KeyId, Plan};
use job_listings::server::{Server, ServerConfig};
use job_listings::service::{
    JobListingsService, Metering, NewKey, Quotas, RateLimits, SecretKey, ServiceBuilder,
    ServiceConfig,
};
use job_listings::store::{PgConfig, PgStore, SledConfig, SledStore, Store, StoreError};
use job_listings::webhooks::CallbackPolicy;

#[path = "support/import.rs"]
mod import;

/// mimalloc for everything, C's `malloc` included (its `override` feature): the query index's
/// CRoaring bitmaps allocate through `malloc` on every search, and glibc's took a fifth of a
/// filtered text search at a million jobs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The demo dataset: seed, companies, jobs.
const DEMO: (u64, usize, usize) = (42, 600, 6_000);

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

/// The job-listings API server, and the tools to administer its data folder.
#[derive(Debug, Parser)]
#[command(
    name = "server",
    version,
    after_help = "Without a command, `serve` runs. sled lets only one process open a data \
                  folder: stop the server before running `import` or `keys` on its folder."
)]
struct Cli {
    #[command(flatten)]
    store: StoreArgs,
    /// Options of `serve`, accepted here too since it is the default command.
    #[command(flatten)]
    serve: ServeArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Where the data lives; shared by every command.
#[derive(Debug, Args)]
struct StoreArgs {
    /// The sled database folder; created when missing. One process at a time may open it.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_DATA",
        default_value = "./data",
        value_name = "DIR"
    )]
    data_dir: PathBuf,
    /// Page cache sled may use, in MiB.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_CACHE_MB",
        default_value_t = 256,
        value_name = "MIB"
    )]
    cache_mb: u64,
    /// Stored job JSON kept in memory in front of sled for search pages and job details,
    /// in MiB (0: off).
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_JOB_CACHE_MB",
        default_value_t = 64,
        value_name = "MIB"
    )]
    job_cache_mb: u64,
    /// The key that seals webhook secrets at rest [default: DIR/secret.key]; made on first
    /// start. Back it up with the data: without it, stored webhook secrets cannot be read.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_SECRET_KEY_FILE",
        value_name = "FILE"
    )]
    secret_key_file: Option<PathBuf>,
    /// Keep the state in PostgreSQL instead of the sled folder, e.g.
    /// postgres://jobs@127.0.0.1:5432/jobs, so several replicas can share it (each replica
    /// then needs the same --secret-key-file). Migrations are applied at start-up.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    database_url: Option<String>,
    /// The PostgreSQL schema to use; created when missing.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_DATABASE_SCHEMA",
        default_value = "public",
        value_name = "NAME"
    )]
    database_schema: String,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the API (the default command).
    Serve(ServeArgs),
    /// Import companies and jobs from JSON Lines files. Stop the server first.
    Import(ImportArgs),
    /// Issue, revoke and list API keys. Stop the server first.
    #[command(subcommand)]
    Keys(KeysCommand),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The address to listen on.
    #[arg(
        long,
        env = "JOB_LISTINGS_ADDR",
        default_value = "127.0.0.1:8080",
        value_name = "IP:PORT"
    )]
    addr: SocketAddr,
    /// Do not load the demo dataset into an empty store.
    #[arg(long)]
    no_demo: bool,
    /// Let webhooks call plain-http, loopback and private addresses (local development only).
    #[arg(long)]
    allow_local_webhooks: bool,
    /// Monthly calls of the developer plan [default: 10000].
    #[arg(long, value_name = "CALLS")]
    developer_quota: Option<u64>,
    /// Monthly calls of the agent_pro plan [default: 100000].
    #[arg(long, value_name = "CALLS")]
    agent_pro_quota: Option<u64>,
    /// Monthly calls of the enterprise plan [default: 1000000].
    #[arg(long, value_name = "CALLS")]
    enterprise_quota: Option<u64>,
    /// Turn off the per-key request rate limits (developer 10/s, agent_pro 50/s, enterprise
    /// 200/s, with bursts of 50/200/1000), e.g. for load tests. The monthly quota still applies.
    #[arg(long)]
    no_rate_limits: bool,
    /// Where calls are counted. `in-memory`: written every 100 ms, fastest; a crash of the
    /// process loses at most the last 100 ms of counting. `in-store`: written durably before
    /// each answer; nothing is lost in a crash, at the cost of one disk flush per call.
    /// `off`: not counted and no quota enforced (to meter elsewhere, or to measure what
    /// metering costs).
    #[arg(long, value_enum, default_value = "in-memory")]
    metering: MeteringArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MeteringArg {
    InMemory,
    InStore,
    Off,
}

impl ServeArgs {
    fn service_config(&self) -> ServiceConfig {
        let defaults = Quotas::default();
        let mut config = ServiceConfig {
            quotas: Quotas {
                developer: self.developer_quota.unwrap_or(defaults.developer),
                agent_pro: self.agent_pro_quota.unwrap_or(defaults.agent_pro),
                enterprise: self.enterprise_quota.unwrap_or(defaults.enterprise),
            },
            rate_limits: (!self.no_rate_limits).then(RateLimits::default),
            metering: match self.metering {
                MeteringArg::InMemory => Metering::default(),
                MeteringArg::InStore => Metering::InStore,
                MeteringArg::Off => Metering::Off,
            },
            ..ServiceConfig::default()
        };
        if self.allow_local_webhooks {
            config.callback_policy = CallbackPolicy::local_development();
        }
        config
    }
}

#[derive(Debug, Args)]
#[command(
    arg_required_else_help = true,
    after_help = "One JSON object per line, in the serde form of job_listings::domain::Company \
                  or Job; blank lines are skipped. first_seen_at, updated_at and status may be \
                  left out. Every line is checked first: if any is bad, nothing is imported. \
                  Companies are imported before jobs, and every job's company_id must name a \
                  company in --companies or already in the store."
)]
struct ImportArgs {
    /// Companies, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    companies: Option<PathBuf>,
    /// Jobs, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    jobs: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Issue a key. It is printed once, alone on the first line; only its hash is kept.
    Create {
        /// The plan bought.
        #[arg(long, value_enum)]
        plan: PlanArg,
        /// A free-form label, such as the customer's e-mail.
        #[arg(long, default_value = "")]
        label: String,
        /// When monthly periods start counting, now or earlier, e.g. 2026-01-15T00:00:00Z
        /// [default: now].
        #[arg(long, value_name = "RFC3339", value_parser = parse_rfc3339)]
        anchor: Option<DateTime<Utc>>,
    },
    /// Revoke a key for good.
    Revoke {
        /// The key's id, as `keys list` shows it.
        #[arg(long, value_name = "UUID")]
        id: KeyId,
    },
    /// Set a key's billing status; only `active` keys are accepted by the API.
    Billing {
        /// The key's id, as `keys list` shows it.
        #[arg(long, value_name = "UUID")]
        id: KeyId,
        /// The new status.
        #[arg(long, value_enum)]
        status: BillingArg,
    },
    /// Move a key to another plan: its quota and rate limit follow at once, and its webhook
    /// subscriptions are sent nothing on a plan without webhooks.
    Plan {
        /// The key's id, as `keys list` shows it.
        #[arg(long, value_name = "UUID")]
        id: KeyId,
        /// The new plan.
        #[arg(long, value_enum)]
        plan: PlanArg,
    },
    /// List every key: id, hint, plan, billing, dates and label; never the key itself.
    List,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
#[value(rename_all = "snake_case")]
enum PlanArg {
    Developer,
    AgentPro,
    Enterprise,
}

impl From<PlanArg> for Plan {
    fn from(p: PlanArg) -> Plan {
        match p {
            PlanArg::Developer => Plan::Developer,
            PlanArg::AgentPro => Plan::AgentPro,
            PlanArg::Enterprise => Plan::Enterprise,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
#[value(rename_all = "snake_case")]
enum BillingArg {
    Active,
    PastDue,
    Canceled,
}

impl From<BillingArg> for BillingStatus {
    fn from(b: BillingArg) -> BillingStatus {
        match b {
            BillingArg::Active => BillingStatus::Active,
            BillingArg::PastDue => BillingStatus::PastDue,
            BillingArg::Canceled => BillingStatus::Canceled,
        }
    }
}

/// Parses the command line. `serve`'s options may come without the word `serve` (it is the
/// default command) but not before another command, where they would mean nothing.
fn parse_command_line() -> Cli {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Some(command) = &cli.command {
        let serve_options = ServeArgs::augment_args(clap::Command::new("serve"));
        let misplaced = serve_options.get_arguments().find(|arg| {
            matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
        });
        if let Some(arg) = misplaced {
            let name = arg.get_long().unwrap_or_default();
            let message = match command {
                Command::Serve(_) => format!("put --{name} after `serve`, not before it"),
                _ => format!("--{name} is an option of `serve` only"),
            };
            Cli::command()
                .error(clap::error::ErrorKind::ArgumentConflict, message)
                .exit();
        }
    }
    cli
}

fn parse_rfc3339(raw: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("{e}; expected a time such as 2026-01-15T00:00:00Z"))
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

#[tokio::main]
async fn main() -> Result<()> {
    let started = Instant::now();
    let cli = parse_command_line();
    let store = cli.store;
    match cli.command.unwrap_or(Command::Serve(cli.serve)) {
        Command::Serve(args) => {
            init_logging("info");
            let service = open_service(&store, args.service_config(), Deliver::Webhooks).await?;
            let outcome = serve(&service, &store, &args, started).await;
            close(&service, outcome).await
        }
        Command::Import(args) => {
            init_logging("warn");
            // Read and check the files before taking the store's lock.
            let mut input = import::read_import(&args)?;
            if store.database_url.is_none() && !store.data_dir.exists() {
                input = import::checked_for_a_new_store(input)?;
            }
            let service =
                match open_service(&store, ServiceConfig::default(), Deliver::Nothing).await {
                    Ok(service) => service,
                    Err(e) => return Err(import::refuse_unopened(input, e)),
                };
            let outcome = import::import(&service, input).await;
            close(&service, outcome).await
        }
        Command::Keys(command) => {
            init_logging("warn");
            // Only `create` may make the folder: one that lists or changes keys in a folder
            // that is not there was given the wrong one.
            let creates = matches!(command, KeysCommand::Create { .. });
            if !creates && store.database_url.is_none() && !store.data_dir.exists() {
                bail!(
                    "there is no data folder at {}: give the server's --data-dir (or \
                     JOB_LISTINGS_DATA); `keys create` makes a new one",
                    store.data_dir.display()
                );
            }
            let service = open_service(&store, ServiceConfig::default(), Deliver::Nothing).await?;
            let outcome = keys(&service, command).await;
            close(&service, outcome).await
        }
    }
}

/// Logs to stderr; `RUST_LOG` overrides the default level.
fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// Whether the service should send webhooks, or only queue them in the outbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deliver {
    /// Start the delivery worker (the server).
    Webhooks,
    /// Leave deliveries in the outbox for the server to send (admin commands).
    Nothing,
}

/// Opens the sled folder and loads the service from it.
async fn open_service(
    args: &StoreArgs,
    mut config: ServiceConfig,
    deliver: Deliver,
) -> Result<JobListingsService> {
    let store = open_store(args).await?;
    let key_file = args
        .secret_key_file
        .clone()
        .unwrap_or_else(|| args.data_dir.join("secret.key"));
    let key_was_there = key_file.exists();
    config.secret_key = Some(
        SecretKey::load_or_create(&key_file)
            .with_context(|| format!("the secret key file {}", key_file.display()))?,
    );
    let policy = config.callback_policy;
    let builder = JobListingsService::builder().store(store).config(config);
    let builder = match deliver {
        Deliver::Webhooks => with_notifier(builder, policy)?,
        Deliver::Nothing => builder,
    };
    match builder.build().await {
        Ok(service) => Ok(service),
        Err(e) => {
            let mut failed = anyhow::Error::new(e)
                .context(format!("loading the data from {}", describe_store(args)));
            // A key made just now for data that may need another one would only mislead
            // the next start.
            if !key_was_there && std::fs::remove_file(&key_file).is_ok() {
                failed = failed.context(format!(
                    "{} was made for this start and removed again; if the data holds webhook \
                     secrets written with another key, give --secret-key-file that key's file",
                    key_file.display()
                ));
            }
            Err(failed)
        }
    }
}

/// PostgreSQL when a database URL is given, else the sled folder.
async fn open_store(args: &StoreArgs) -> Result<Arc<dyn Store>> {
    if let Some(url) = &args.database_url {
        let config = PgConfig {
            schema: args.database_schema.clone(),
            ..PgConfig::new(url.clone())
        };
        let store = PgStore::open(&config)
            .await
            .with_context(|| format!("opening {}", describe_store(args)))?;
        return Ok(Arc::new(store));
    }
    let sled = SledConfig {
        path: args.data_dir.clone(),
        cache_bytes: args.cache_mb.saturating_mul(1024 * 1024),
        job_cache_bytes: args.job_cache_mb.saturating_mul(1024 * 1024),
    };
    let store = SledStore::open(&sled).map_err(|e| explain_open_error(&args.data_dir, e))?;
    Ok(Arc::new(store))
}

/// Where the data lives, for messages: never the database URL itself (it may hold a password).
fn describe_store(args: &StoreArgs) -> String {
    match &args.database_url {
        Some(_) => format!("the PostgreSQL database (schema {})", args.database_schema),
        None => format!("the data folder {}", args.data_dir.display()),
    }
}

/// Adds the webhook sender. It enforces the same address policy as registration, on the
/// addresses it actually connects to.
#[cfg(feature = "webhooks")]
fn with_notifier(builder: ServiceBuilder, policy: CallbackPolicy) -> Result<ServiceBuilder> {
    use job_listings::webhooks::{HttpNotifier, HttpNotifierConfig};
    let notifier = HttpNotifier::new(policy, HttpNotifierConfig::default())?;
    Ok(builder.notifier(Arc::new(notifier)))
}

/// Without the `webhooks` feature there is no sender: deliveries wait in the outbox.
#[cfg(not(feature = "webhooks"))]
fn with_notifier(builder: ServiceBuilder, _policy: CallbackPolicy) -> Result<ServiceBuilder> {
    tracing::warn!("built without the `webhooks` feature: webhook deliveries stay in the outbox");
    Ok(builder)
}

/// A folder held by another process gets advice; anything else keeps its cause.
fn explain_open_error(dir: &Path, e: StoreError) -> anyhow::Error {
    if matches!(e, StoreError::Locked { .. }) {
        anyhow!(
            "the data folder {} is in use by another process, most likely a running server. \
             sled lets one process at a time open a folder: stop the server, run this \
             command, then start the server again.",
            dir.display()
        )
    } else {
        anyhow::Error::new(e).context(format!("opening the data folder {}", dir.display()))
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

// ---------------------------------------------------------------------------------------------
// serve
// ---------------------------------------------------------------------------------------------

async fn serve(
    service: &JobListingsService,
    store: &StoreArgs,
    args: &ServeArgs,
    started: Instant,
) -> Result<()> {
    // 1. The service is loaded (see `open_service`). An empty store — no company, no key —
    //    is a first start.
    let first_start =
        service.list_keys().is_empty() && service.store().scan_companies(None, 1).await?.is_empty();

    // 2. Install the signal handlers before binding, so a stop request is never lost, then
    //    bind: port 0 lets the system pick a free port. Before the demo keys are issued, so
    //    a port in use stops the start before it makes keys it could never show.
    let shutdown = shutdown_signal()?;
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?;

    // 3. On a first start, load the demo dataset and issue one key per plan. A stop request
    //    meanwhile lets the load finish, so that the keys it made are shown, then stops: cut
    //    short, it would leave demo data without keys, and the next start would not be a
    //    first start.
    let demo_keys = if first_start && !args.no_demo {
        Some(seed_demo(service).await?)
    } else {
        None
    };
    let server = Server::new(listener, Api::new(service.clone()), ServerConfig::default())?;
    let base = base_url(server.local_addr());

    // 4. Tell the person at the terminal what they can do now. Keys go to stdout only.
    match demo_keys {
        Some(keys) => {
            println!("Demo API keys (shown only now; the store keeps their hashes):");
            for (plan, key) in &keys {
                println!("  {:<11} {}", plan.as_str(), key.expose());
            }
            if let Some((_, key)) = keys.iter().find(|(plan, _)| *plan == Plan::Developer) {
                println!("Try:");
                println!(
                    "  curl -s -H \"X-API-Key: {}\" \
                     \"{base}/api/v1/jobs?q=rust&remote_only=true&per_page=2\"",
                    key.expose()
                );
            }
        }
        None if first_start => {
            println!(
                "The store is empty (--no-demo). Stop the server and run `{}` to add data, \
                 and `{}` to issue a key.",
                admin_command(store, "import --companies FILE --jobs FILE"),
                admin_command(store, "keys create --plan developer"),
            );
        }
        None => {
            println!(
                "Keys are shown only when they are created. To issue one, run (with sled, stop \
                 the server first): {}",
                admin_command(store, "keys create --plan developer")
            );
        }
    }
    println!("Listening on {base}");
    println!("OpenAPI:      {base}/api/v1/openapi.json");
    tracing::info!(
        addr = %server.local_addr(),
        store = %describe_store(store),
        startup = ?started.elapsed(),
        index = ?service.index_origin(),
        "listening"
    );

    // 5. Serve until Ctrl-C or SIGTERM; `run` lets open requests finish before it returns.
    server.run(shutdown).await?;
    tracing::info!("server stopped");
    Ok(())
}

/// Loads the demo dataset into the (empty) store and issues one key per plan.
async fn seed_demo(service: &JobListingsService) -> Result<Vec<(Plan, ApiKey)>> {
    let started = Instant::now();
    let (seed, companies, jobs) = DEMO;
    tracing::info!(companies, jobs, "empty store: loading the demo dataset");
    let data = Dataset::generate(seed, companies, jobs);
    let companies = import::load_companies(service, data.companies)
        .await
        .map_err(|refused| anyhow::Error::new(refused.error).context("loading the demo data"))?;
    let bar = import::progress_bar(data.jobs.len() as u64, "demo jobs");
    let jobs = service
        .import_jobs(data.jobs, |n| bar.set_position(n as u64))
        .await
        .context("loading the demo data")?;
    bar.finish_and_clear();
    tracing::info!(
        companies = companies.created,
        jobs = jobs.created,
        took = ?started.elapsed(),
        "demo dataset loaded"
    );

    let mut keys = Vec::new();
    for plan in Plan::ALL {
        let (key, _record) = service
            .create_key(NewKey {
                plan,
                billing_anchor: None,
                label: "demo".into(),
            })
            .await?;
        keys.push((plan, key));
    }
    Ok(keys)
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM. The handlers are installed when this is
/// called, not when the future is first polled.
fn shutdown_signal() -> Result<impl Future<Output = ()> + Send> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        // On Unix, Ctrl-C is SIGINT: the signal `tokio::signal::ctrl_c` listens for.
        let mut interrupt =
            signal(SignalKind::interrupt()).context("installing a SIGINT handler")?;
        let mut terminate =
            signal(SignalKind::terminate()).context("installing a SIGTERM handler")?;
        Ok(async move {
            let name = tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            };
            tracing::info!(signal = name, "shutting down; letting open requests finish");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            if let Err(e) = tokio::signal::ctrl_c().await {
                tracing::error!(error = %e, "cannot listen for Ctrl-C; serving until killed");
                std::future::pending::<()>().await;
            }
            tracing::info!("shutting down; letting open requests finish");
        })
    }
}

/// The URL clients on this machine should use: an unspecified address (0.0.0.0, ::) is
/// reachable as loopback.
fn base_url(addr: SocketAddr) -> String {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

/// The command line that runs an admin command on the same data.
fn admin_command(store: &StoreArgs, command: &str) -> String {
    let mut line = "cargo run --release --example server --".to_owned();
    if store.database_url.is_some() {
        // The URL may hold a password: name the option, not its value.
        let _ = write!(line, " --database-url <URL>");
        if store.database_schema != "public" {
            let _ = write!(line, " --database-schema {}", store.database_schema);
        }
    }
    if store.data_dir != Path::new("./data") {
        let _ = write!(line, " --data-dir {}", store.data_dir.display());
    }
    let _ = write!(line, " {command}");
    line
}

// ---------------------------------------------------------------------------------------------
// keys
// ---------------------------------------------------------------------------------------------

async fn keys(service: &JobListingsService, command: KeysCommand) -> Result<()> {
    match command {
        KeysCommand::Create {
            plan,
            label,
            anchor,
        } => {
            let (key, record) = service
                .create_key(NewKey {
                    plan: plan.into(),
                    billing_anchor: anchor,
                    label,
                })
                .await?;
            // The key alone on the first line, so scripts can take it with `head -n1`.
            println!("{}", key.expose());
            println!("id {}  plan {}", record.id, record.plan);
            eprintln!("This is the only time the key is shown; the store keeps only its hash.");
        }
        KeysCommand::Revoke { id } => {
            let before = find_key(service, id)?;
            let record = service.revoke_key(id).await?;
            match before.revoked_at {
                Some(at) => println!(
                    "Key {id} ({}) was already revoked at {}.",
                    record.hint,
                    time(at)
                ),
                None => println!("Revoked key {id} ({}).", record.hint),
            }
        }
        KeysCommand::Billing { id, status } => {
            find_key(service, id)?;
            let record = service.set_billing_status(id, status.into()).await?;
            println!(
                "Key {id} ({}) billing is now {}.",
                record.hint,
                billing(record.billing_status)
            );
        }
        KeysCommand::Plan { id, plan } => {
            find_key(service, id)?;
            let record = service.set_plan(id, plan.into()).await?;
            println!(
                "Key {id} ({}) is now on the {} plan.",
                record.hint, record.plan
            );
        }
        KeysCommand::List => print_keys(&service.list_keys()),
    }
    Ok(())
}

fn find_key(service: &JobListingsService, id: KeyId) -> Result<ApiKeyRecord> {
    service
        .list_keys()
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| anyhow!("no key has the id {id}; `keys list` shows every key"))
}

fn print_keys(records: &[ApiKeyRecord]) {
    if records.is_empty() {
        println!("No keys yet. Issue one with `keys create --plan developer`.");
        return;
    }
    println!(
        "{:<36}  {:<13}  {:<10}  {:<8}  {:<20}  {:<20}  LABEL",
        "ID", "HINT", "PLAN", "BILLING", "CREATED", "REVOKED"
    );
    for r in records {
        println!(
            "{:<36}  {:<13}  {:<10}  {:<8}  {:<20}  {:<20}  {}",
            r.id.to_string(),
            r.hint,
            r.plan.as_str(),
            billing(r.billing_status),
            time(r.created_at),
            r.revoked_at.map_or_else(|| "-".to_owned(), time),
            r.label
        );
    }
}

fn billing(status: BillingStatus) -> &'static str {
    match status {
        BillingStatus::Active => "active",
        BillingStatus::PastDue => "past_due",
        BillingStatus::Canceled => "canceled",
    }
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}
