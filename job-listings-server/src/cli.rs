//! The command line: `serve` (the default), `import`, `keys`, `backup` and `restore`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use job_listings::api::{ApiConfig, CorsOrigin};
use job_listings::domain::{BillingStatus, KeyId, Plan};
use job_listings::mcp::McpConfig;
use job_listings::server::ServerConfig;
use job_listings::service::{Metering, Quotas, RateLimit, RateLimits, ServiceConfig};
use job_listings::webhooks::CallbackPolicy;

use crate::memory::CacheSizes;

/// The job-listings API server, and the tools to administer its data folder.
#[derive(Debug, Parser)]
#[command(
    name = "job-listings",
    version,
    after_help = "Without a command, `serve` runs. While a server runs on a data folder, \
                  `import` and `keys` on that folder go through its admin API; `backup` opens \
                  the folder itself, so stop the server first."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) store: StoreArgs,
    #[command(flatten)]
    pub(crate) log: LogArgs,
    /// Options of `serve`, accepted here too since it is the default command.
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Where the data lives; shared by every command.
#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    /// The sled database folder; created when missing. One process at a time may open it.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_DATA",
        default_value = "./data",
        value_name = "DIR"
    )]
    pub(crate) data_dir: PathBuf,
    /// Memory the caches may use in all, in MiB: 35 % for sled's page cache, 40 % for
    /// decoded jobs, 25 % for rendered answers, unless their own options say otherwise
    /// [default: a quarter of this machine's memory (or its container's limit), at least
    /// 384].
    #[arg(
        long = "memory",
        global = true,
        env = "JOB_LISTINGS_MEMORY_MB",
        value_name = "MIB"
    )]
    pub(crate) memory_mb: Option<u64>,
    /// Page cache sled may use, in MiB [default: 35 % of --memory].
    #[arg(long, global = true, env = "JOB_LISTINGS_CACHE_MB", value_name = "MIB")]
    pub(crate) cache_mb: Option<u64>,
    /// Decoded jobs kept in memory in front of sled for search pages and job details,
    /// in MiB, 0 for none [default: 40 % of --memory].
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_JOB_CACHE_MB",
        value_name = "MIB"
    )]
    pub(crate) job_cache_mb: Option<u64>,
    /// The key that seals webhook secrets at rest [default: DIR/secret.key]; made on first
    /// start. Back it up with the data: without it, stored webhook secrets cannot be read.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_SECRET_KEY_FILE",
        value_name = "FILE"
    )]
    pub(crate) secret_key_file: Option<PathBuf>,
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
    pub(crate) database_url: Option<String>,
    /// The PostgreSQL schema to use; created when missing.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_DATABASE_SCHEMA",
        default_value = "public",
        value_name = "NAME"
    )]
    pub(crate) database_schema: String,
    /// The file holding the admin token in clear, which `import` and `keys` send to a running
    /// server's admin API [default: DIR/admin.token]. The server makes it on first start
    /// (readable by its owner only); the token may instead come in JOB_LISTINGS_ADMIN_TOKEN.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_ADMIN_TOKEN_FILE",
        value_name = "FILE"
    )]
    pub(crate) admin_token_file: Option<PathBuf>,
    /// The admin API `import` and `keys` go through, e.g. http://127.0.0.1:8081 [default:
    /// the address a server running on --data-dir wrote to DIR/admin.addr; with none, the
    /// commands open the store themselves].
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_ADMIN_URL",
        value_name = "URL"
    )]
    pub(crate) admin_url: Option<String>,
}

/// How the log is written; shared by every command.
#[derive(Debug, Args)]
pub(crate) struct LogArgs {
    /// How log lines are written to stderr: `text` for a person at a terminal, `json` for a
    /// log pipeline (one JSON object per line, the event's fields at the top level).
    /// `RUST_LOG` still chooses what is logged.
    #[arg(
        long,
        global = true,
        env = "JOB_LISTINGS_LOG_FORMAT",
        value_enum,
        default_value = "text",
        value_name = "FORMAT"
    )]
    pub(crate) log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

// Parsed once at start and never moved around: boxing the serve options would only make the
// variant harder to build from the top-level options.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (the default command).
    Serve(ServeArgs),
    /// Import companies and jobs from JSON Lines files, through the running server's admin API
    /// when one runs on the data folder, else into the store directly.
    Import(ImportArgs),
    /// Issue, revoke and list API keys, through the running server's admin API when one runs
    /// on the data folder, else in the store directly.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Back up the data folder into a new folder: the data, the key sealing the webhook
    /// secrets and a manifest; through the running server's admin API when one runs on the
    /// data folder.
    Backup(BackupArgs),
    /// Close the active jobs the crawler last sent before a time (count them first with
    /// --dry-run); through the running server's admin API when one runs on the data folder.
    CloseUnseen(CloseUnseenArgs),
    /// Restore a backup into a new data folder: --data-dir must not exist or be empty.
    Restore(RestoreArgs),
    /// Speak MCP (the Model Context Protocol) on stdin and stdout for a desktop agent, every
    /// tool call forwarded to a running server's API with your key.
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The running server's base URL, such as https://jobs.example.com.
    #[arg(long, value_name = "URL")]
    pub(crate) url: String,
    /// Your API key (jl_live_…); better from the environment than on a command line.
    #[arg(
        long,
        env = "JOB_LISTINGS_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub(crate) key: String,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on.
    #[arg(
        long,
        env = "JOB_LISTINGS_ADDR",
        default_value = "127.0.0.1:8080",
        value_name = "IP:PORT"
    )]
    pub(crate) addr: SocketAddr,
    /// The admin API's address (`/admin/v1`, `/metrics`, health), apart from the public one.
    /// A loopback address unless --admin-allow-remote is given.
    #[arg(
        long,
        env = "JOB_LISTINGS_ADMIN_ADDR",
        default_value = "127.0.0.1:8081",
        value_name = "IP:PORT"
    )]
    pub(crate) admin_addr: SocketAddr,
    /// Let --admin-addr be an address other machines can reach. Put a firewall or a TLS proxy
    /// in front: the admin token is all that guards it.
    #[arg(long)]
    pub(crate) admin_allow_remote: bool,
    /// Serve no admin API; --admin-addr is then ignored. The data can then be changed only
    /// with the server stopped (or, on PostgreSQL, from another process).
    #[arg(long)]
    pub(crate) no_admin: bool,
    /// Rendered job and company JSON kept in memory for the answers that send them again
    /// (search pages, job details), in MiB, 0 for none; companies and compressed answers
    /// take 5/16 of it more [default: 25 % of --memory, less that 5/16].
    #[arg(long, env = "JOB_LISTINGS_RENDER_CACHE_MB", value_name = "MIB")]
    pub(crate) render_cache_mb: Option<u64>,
    /// Recent search results kept for the searches asked again, each until the data next
    /// changes; 0 for none.
    #[arg(
        long,
        env = "JOB_LISTINGS_SEARCH_MEMO",
        default_value_t = ServiceConfig::default().search_memo_entries,
        value_name = "RESULTS"
    )]
    pub(crate) search_memo: usize,
    /// Do not load the demo dataset into an empty store.
    #[arg(long)]
    pub(crate) no_demo: bool,
    /// Let webhooks call plain-http, loopback and private addresses (local development only).
    #[arg(long)]
    pub(crate) allow_local_webhooks: bool,
    /// Monthly calls of the developer plan [default: 10000].
    #[arg(long, value_name = "CALLS")]
    pub(crate) developer_quota: Option<u64>,
    /// Monthly calls of the agent_pro plan [default: 100000].
    #[arg(long, value_name = "CALLS")]
    pub(crate) agent_pro_quota: Option<u64>,
    /// Monthly calls of the enterprise plan [default: 1000000].
    #[arg(long, value_name = "CALLS")]
    pub(crate) enterprise_quota: Option<u64>,
    /// Turn off the per-key request rate limits (developer 10/s, agent_pro 50/s, enterprise
    /// 200/s, with bursts of 50/200/1000) and the budget of requests without a valid key, e.g.
    /// for load tests. The monthly quota still applies.
    #[arg(long)]
    pub(crate) no_rate_limits: bool,
    /// Requests a second each client address may send without a valid API key (OPTIONS, the
    /// OpenAPI document, 401s, 404s…), on top of a burst; beyond it they get 429
    /// rate_limited. 0 turns the budget off. Behind a proxy all clients share its address.
    #[arg(long, default_value_t = 20.0, value_name = "PER_SECOND")]
    pub(crate) unauthenticated_rate: f64,
    /// The burst of requests without a valid key allowed above --unauthenticated-rate.
    #[arg(long, default_value_t = 100, value_name = "REQUESTS")]
    pub(crate) unauthenticated_burst: u32,
    /// MCP sessions (at /mcp) one API key may hold open at once.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub(crate) mcp_sessions_per_key: usize,
    /// MCP sessions open at once over all keys.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub(crate) mcp_sessions: usize,
    /// Close an MCP session that has had no request for this many seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub(crate) mcp_idle_timeout: u64,
    /// Event streams one MCP session may hold open at once (GET streams and answers still
    /// being sent); one more is answered 429 too_many_streams.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub(crate) mcp_streams_per_session: usize,
    /// Close a connection, HTTP/1 or HTTP/2, that has had no request in flight for this many
    /// seconds (an idle HTTP/1 one is closed after 10 s anyway).
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub(crate) idle_timeout: u64,
    /// Most connections served at once; beyond it, the connection idle the longest is closed
    /// to serve a new one. The process needs a quarter more file descriptors (ulimit -n).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub(crate) max_connections: usize,
    /// Most connections open at once from one client address (an IPv6 client by its /64);
    /// more are closed when accepted. Behind a proxy, raise it to --max-connections.
    #[arg(long, default_value_t = 1_024, value_name = "N")]
    pub(crate) max_connections_per_address: usize,
    /// Seconds a new connection may wait for a slot while every connection has a request in
    /// flight before GET /livez answers 503 (the listener serves no one new: restart it).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub(crate) accept_stall_limit: u64,
    /// Where calls are counted. `in-memory`: written every 100 ms, fastest; a crash of the
    /// process loses at most the last 100 ms of counting. `in-store`: written durably before
    /// each answer; nothing is lost in a crash, at the cost of one disk flush per call.
    /// `off`: not counted and no quota enforced (to meter elsewhere, or to measure what
    /// metering costs).
    #[arg(long, value_enum, default_value = "in-memory")]
    pub(crate) metering: MeteringArg,
    /// Seconds the store may refuse every write (a full disk) before GET /livez answers 503
    /// so an orchestrator restarts the process; GET /readyz answers 503 from the first
    /// refused write.
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub(crate) write_failure_grace: u64,
    /// Log every answered request at info on the target job_listings::access: request id,
    /// key id (never the key), route pattern, method, status, body bytes and latency. `off`
    /// costs nothing per request; `RUST_LOG=job_listings::access=off` also silences it.
    #[arg(
        long,
        env = "JOB_LISTINGS_ACCESS_LOG",
        value_enum,
        default_value = "on",
        value_name = "ON_OFF"
    )]
    pub(crate) access_log: Switch,
    /// Let pages from this origin call the API from a browser (CORS), e.g.
    /// `https://app.example.com`; repeat it for more, or give `*` for any origin. Off when
    /// not given. Keys go in X-API-Key or Authorization, so credentials (cookies) are never
    /// allowed; the admin API answers no origin.
    #[arg(long = "cors-origin", value_name = "ORIGIN", value_parser = parse_cors_origin)]
    pub(crate) cors_origins: Vec<CorsOrigin>,
}

/// A setting turned on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Switch {
    On,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MeteringArg {
    InMemory,
    InStore,
    Off,
}

impl ServeArgs {
    /// The HTTP layer's settings.
    pub(crate) fn api_config(&self, caches: &CacheSizes) -> ApiConfig {
        let budget_on = !self.no_rate_limits && self.unauthenticated_rate > 0.0;
        ApiConfig::default()
            .render_cache_bytes(caches.render_mb.saturating_mul(1024 * 1024))
            .unauthenticated_rate(budget_on.then_some(RateLimit {
                per_second: self.unauthenticated_rate,
                burst: self.unauthenticated_burst,
            }))
            .access_log(self.access_log == Switch::On)
            .cors_origins(self.cors_origins.clone())
    }

    /// The MCP endpoint's session limits.
    pub(crate) fn mcp_config(&self) -> McpConfig {
        McpConfig::default()
            .max_sessions_per_key(self.mcp_sessions_per_key)
            .max_sessions(self.mcp_sessions)
            .idle_timeout(Duration::from_secs(self.mcp_idle_timeout))
            .max_streams_per_session(self.mcp_streams_per_session)
    }

    /// The server's connection limits.
    pub(crate) fn server_config(&self) -> ServerConfig {
        ServerConfig::default()
            .idle_timeout(Duration::from_secs(self.idle_timeout))
            .max_connections(self.max_connections)
            .max_connections_per_address(self.max_connections_per_address)
            .accept_stall_limit(Duration::from_secs(self.accept_stall_limit))
    }

    /// The admin listener's connection limits: few clients, all of them the operator's.
    pub(crate) fn admin_server_config(&self) -> ServerConfig {
        self.server_config()
            .max_connections(256)
            .max_connections_per_address(256)
    }

    pub(crate) fn service_config(&self) -> ServiceConfig {
        let defaults = Quotas::default();
        let mut config = ServiceConfig::default()
            .quotas(
                Quotas::default()
                    .developer(self.developer_quota.unwrap_or(defaults.developer))
                    .agent_pro(self.agent_pro_quota.unwrap_or(defaults.agent_pro))
                    .enterprise(self.enterprise_quota.unwrap_or(defaults.enterprise)),
            )
            .rate_limits((!self.no_rate_limits).then(RateLimits::default))
            .write_failure_grace(Duration::from_secs(self.write_failure_grace))
            .metering(match self.metering {
                MeteringArg::InMemory => Metering::default(),
                MeteringArg::InStore => Metering::InStore,
                MeteringArg::Off => Metering::Off,
            })
            .search_memo_entries(self.search_memo);
        if self.allow_local_webhooks {
            config.callback_policy = CallbackPolicy::local_development();
        }
        config
    }
}

#[derive(Debug, Args)]
#[group(id = "input", required = true, multiple = true, args = ["companies", "jobs"])]
#[command(
    after_help = "One JSON object per line, in the serde form of job_listings::domain::Company \
                  or Job; blank lines are skipped. first_seen_at, updated_at and status may be \
                  left out. Every line is checked first: if any is bad, nothing is imported. \
                  Companies are imported before jobs, and every job's company_id must name a \
                  company in --companies or already in the store."
)]
pub(crate) struct ImportArgs {
    /// Companies, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    pub(crate) companies: Option<PathBuf>,
    /// Jobs, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    pub(crate) jobs: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The backup is a consistent copy: the data as it was when the command ran, \
                  with the secret key file (without it the webhook secrets in the copy cannot \
                  be read) and, written last, backup-manifest.json, which lists every file \
                  with its size and checksum. Keep it as safe as the data folder itself: it \
                  holds the secret key. `restore --from DIR` turns it into a data folder. \
                  With PostgreSQL, use pg_dump instead."
)]
pub(crate) struct BackupArgs {
    /// The folder to write the backup to, outside the data folder, in a folder that exists:
    /// made when missing; an existing one must be empty.
    #[arg(long, value_name = "DIR")]
    pub(crate) to: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct CloseUnseenArgs {
    /// Close the active jobs (reposts too) last seen strictly before this RFC 3339 time,
    /// such as 2026-11-20T00:00:00Z: run it after the crawler's full pass, with a time from
    /// before that pass began.
    #[arg(long, value_name = "TIME")]
    pub(crate) seen_before: chrono::DateTime<chrono::Utc>,
    /// Only count them.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The backup is checked before anything is written: its manifest must be \
                  there (a backup cut short has none) and every file it lists present with \
                  its size; each file's checksum is checked as it is copied. Nothing is ever \
                  written over: --data-dir must not exist or be empty, and a \
                  --secret-key-file that exists must hold the backup's key. The restored \
                  folder is then opened and its contents compared with the manifest. With \
                  PostgreSQL, use pg_restore instead."
)]
pub(crate) struct RestoreArgs {
    /// The backup folder, as `backup --to` wrote it.
    #[arg(long, value_name = "DIR")]
    pub(crate) from: PathBuf,
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
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
pub(crate) enum PlanArg {
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
pub(crate) enum BillingArg {
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
pub(crate) fn parse_command_line() -> Cli {
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

/// A `--cors-origin`: `*` or an origin such as `https://app.example.com`.
fn parse_cors_origin(value: &str) -> Result<CorsOrigin, String> {
    CorsOrigin::parse(value).map_err(|e| e.reason)
}

pub(crate) fn parse_rfc3339(raw: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("{e}; expected a time such as 2026-01-15T00:00:00Z"))
}
