//! `serve`: the API on the public listener until Ctrl-C or SIGTERM.

use std::fmt::Write as _;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use job_listings::api::admin::AdminApi;
use job_listings::api::Api;
use job_listings::demo::Dataset;
use job_listings::domain::{ApiKey, Plan};
use job_listings::mcp::{Mcp, WithMcp};
use job_listings::server::Server;
use job_listings::service::{JobListingsService, NewKey};

use crate::admin_files::{self, AddressFile};
use crate::cli::{ServeArgs, StoreArgs};
use crate::import;
use crate::memory::CacheSizes;
use crate::open::describe_store;

/// The listen queue asked for: room for a burst of new connections beside the connections
/// served (the kernel caps it at `net.core.somaxconn`, 4,096 by default on Linux).
const LISTEN_BACKLOG: u32 = 4_096;

/// The admin listener's queue: a few operators and scrapers.
const ADMIN_BACKLOG: u32 = 128;

/// The demo dataset: seed, companies, jobs.
const DEMO: (u64, usize, usize) = (42, 600, 6_000);

pub(crate) async fn serve(
    service: &JobListingsService,
    store: &StoreArgs,
    args: &ServeArgs,
    started: Instant,
) -> Result<()> {
    // 1. The service is loaded (see `open_service`). An empty store — no company, no key —
    //    is a first start.
    let first_start = service.list_keys().is_empty() && service.company_count() == 0;

    // 2. Install the signal handlers before binding, so a stop request is never lost, then
    //    bind: port 0 lets the system pick a free port. Before the demo keys are issued, so
    //    a port in use stops the start before it makes keys it could never show.
    let shutdown = shutdown_signal()?;
    let listener = job_listings::server::bind(args.addr, LISTEN_BACKLOG)
        .with_context(|| format!("listening on {}", args.addr))?;
    let admin_listener = bind_admin(args)?;

    // 3. On a first start, load the demo dataset and issue one key per plan. A stop request
    //    meanwhile lets the load finish, so that the keys it made are shown, then stops: cut
    //    short, it would leave demo data without keys, and the next start would not be a
    //    first start.
    let demo_keys = if first_start && !args.no_demo {
        Some(seed_demo(service).await?)
    } else {
        None
    };
    let caches = CacheSizes::of(store, Some(args));
    tracing::info!(
        budget_mib = caches.budget_mb,
        budget_from = caches.budget_from,
        sled_cache_mib = caches.sled_mb,
        job_cache_mib = caches.jobs_mb,
        render_cache_mib = caches.render_mb,
        "cache sizes"
    );
    let api = Api::with_config(service.clone(), args.api_config(&caches));
    let admin = match admin_listener {
        Some(listener) => Some(admin_server(listener, &api, store, args)?),
        None => None,
    };
    // MCP at /mcp beside REST, on the same keys, quotas and limits.
    let mcp = Mcp::new(api.clone(), args.mcp_config());
    let server = Server::new(listener, WithMcp::new(api, mcp), args.server_config())?;
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
                println!(
                    "Webhooks need the agent_pro or enterprise key (README, Calling the API)."
                );
            }
        }
        None if first_start && args.no_admin => {
            println!(
                "The store is empty (--no-demo). To add data and keys without an admin API, \
                 stop the server and run `{}` and `{}`.",
                admin_command(store, "import --companies FILE --jobs FILE"),
                admin_command(store, "keys create --plan developer"),
            );
        }
        None if first_start => {
            println!(
                "The store is empty (--no-demo). Run `{}` to add data, and `{}` to issue a \
                 key.",
                admin_command(store, "import --companies FILE --jobs FILE"),
                admin_command(store, "keys create --plan developer"),
            );
        }
        None => {
            println!(
                "Keys are shown only when they are created. To issue one, run: {}",
                admin_command(store, "keys create --plan developer")
            );
        }
    }
    println!("Listening on {base}");
    println!("OpenAPI:      {base}/api/v1/openapi.json");
    println!("MCP:          {base}{}", job_listings::mcp::PATH);
    tracing::info!(
        addr = %server.local_addr(),
        store = %describe_store(store),
        startup = ?started.elapsed(),
        index = ?service.index_origin(),
        "listening"
    );

    // 5. Serve until Ctrl-C or SIGTERM; `run` lets open requests finish before it returns.
    //    The admin listener stops with the public one; the address file goes with it.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let admin = admin.map(|(server, address_file)| {
        let mut stopped = stopped.clone();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }));
        (task, address_file)
    });
    let served = server
        .run(async move {
            shutdown.await;
            let _ = stop.send(true);
        })
        .await;
    if let Some((task, address_file)) = admin {
        drop(address_file);
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "the admin listener failed"),
            Err(e) => tracing::error!(error = %e, "the admin listener panicked"),
        }
    }
    served?;
    tracing::info!("server stopped");
    Ok(())
}

/// Binds the admin listener, unless `--no-admin`; refuses an address other machines can
/// reach unless `--admin-allow-remote` says so.
fn bind_admin(args: &ServeArgs) -> Result<Option<tokio::net::TcpListener>> {
    if args.no_admin {
        return Ok(None);
    }
    let addr = args.admin_addr;
    if !addr.ip().is_loopback() && !args.admin_allow_remote {
        bail!(
            "refusing to serve the admin API on {addr}, which other machines may reach: give a \
             loopback address such as 127.0.0.1:8081 to --admin-addr, or --admin-allow-remote \
             if a firewall or TLS proxy guards it"
        );
    }
    job_listings::server::bind(addr, ADMIN_BACKLOG)
        .map(Some)
        .with_context(|| format!("listening on {addr} for the admin API (--admin-addr)"))
}

/// The admin API's server on its listener, and the address file that lets the commands find
/// it; prints the admin token when it was made just now.
fn admin_server(
    listener: tokio::net::TcpListener,
    api: &Api,
    store: &StoreArgs,
    args: &ServeArgs,
) -> Result<(Server<AdminApi>, AddressFile)> {
    let (hash, made) = admin_files::token_hash(store)?;
    let server = Server::new(
        listener,
        AdminApi::new(api.clone(), hash),
        args.admin_server_config(),
    )?;
    let url = base_url(server.local_addr());
    let address_file = AddressFile::write(store, &url)?;
    if let Some(token) = made {
        println!(
            "Admin token (shown only now; also kept in {}, readable by you only):",
            admin_files::token_file(store).display()
        );
        println!("  {}", token.expose());
    }
    println!("Admin API:    {url}/admin/v1 (Authorization: Bearer <admin token>)");
    Ok((server, address_file))
}

/// Loads the demo dataset into the (empty) store and issues one key per plan.
async fn seed_demo(service: &JobListingsService) -> Result<Vec<(Plan, ApiKey)>> {
    let started = Instant::now();
    let (seed, companies, jobs) = DEMO;
    tracing::info!(companies, jobs, "empty store: loading the demo dataset");
    let data = Dataset::generate(seed, companies, jobs);
    let (companies, _) = service
        .import_companies(data.companies)
        .await
        .context("loading the demo data")?;
    let bar = import::progress_bar(data.jobs.len() as u64, "demo jobs");
    let jobs = service
        .import_jobs(data.jobs, |n| bar.set_position(n as u64))
        .await
        .context("loading the demo data")?;
    bar.finish_and_clear();
    tracing::info!(
        companies,
        jobs = jobs.created,
        took = ?started.elapsed(),
        "demo dataset loaded"
    );

    let mut keys = Vec::new();
    for plan in Plan::ALL {
        let (key, _record) = service
            .create_key(NewKey::new(plan).label("demo".into()))
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
    let mut line = "job-listings".to_owned();
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
