//! The files beside the data that tie the command line to a running server's admin API:
//!
//! - `admin.token`: the admin token, readable by its owner only, for the commands on the same
//!   machine (and for a Prometheus scraper's `credentials_file`). The operator may move it
//!   elsewhere: the server does not need it.
//! - `admin-token.sha256`: the token's hash, which is all the server keeps and checks against.
//! - `admin.addr`: the URL the running server's admin API listens on, written once it listens
//!   and removed when it stops, so `import` and `keys` can find it.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use job_listings::api::admin::AdminToken;
use job_listings::client::{AdminClient, Client, ClientError};
use job_listings::domain::KeyHash;

use crate::cli::StoreArgs;

/// The environment variable that may carry the admin token itself.
pub(crate) const TOKEN_ENV: &str = "JOB_LISTINGS_ADMIN_TOKEN";

/// Where the admin token is kept in clear.
pub(crate) fn token_file(store: &StoreArgs) -> PathBuf {
    store
        .admin_token_file
        .clone()
        .unwrap_or_else(|| store.data_dir.join("admin.token"))
}

fn hash_file(store: &StoreArgs) -> PathBuf {
    store.data_dir.join("admin-token.sha256")
}

fn address_file(store: &StoreArgs) -> PathBuf {
    store.data_dir.join("admin.addr")
}

/// The hash of the admin token the server accepts, and the token itself when it was made
/// just now (to be shown once). A token file without a hash file (one the operator wrote) is
/// adopted.
pub(crate) fn token_hash(store: &StoreArgs) -> Result<(KeyHash, Option<AdminToken>)> {
    let hashed = hash_file(store);
    match std::fs::read_to_string(&hashed) {
        Ok(text) => {
            let hash = KeyHash::from_hex(text.trim()).ok_or_else(|| {
                anyhow!(
                    "{} does not hold a token hash (64 hex digits); delete it and {} to make \
                     a new admin token at the next start",
                    hashed.display(),
                    token_file(store).display()
                )
            })?;
            return Ok((hash, None));
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", hashed.display())),
    }
    let path = token_file(store);
    let (token, made) = match std::fs::read_to_string(&path) {
        Ok(text) => (
            AdminToken::parse(&text).with_context(|| format!("reading {}", path.display()))?,
            false,
        ),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let token = AdminToken::generate();
            write_new(&path, &format!("{}\n", token.expose()))?;
            (token, true)
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    write_new(&hashed, &format!("{}\n", token.hash().to_hex()))?;
    Ok((token.hash(), made.then_some(token)))
}

/// The admin token for a command: `JOB_LISTINGS_ADMIN_TOKEN`, else the token file.
pub(crate) fn read_token(store: &StoreArgs) -> Result<AdminToken> {
    if let Ok(raw) = std::env::var(TOKEN_ENV) {
        return AdminToken::parse(&raw).with_context(|| format!("reading {TOKEN_ENV}"));
    }
    let path = token_file(store);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading the admin token from {} (give --admin-token-file, or the token in {TOKEN_ENV})",
            path.display()
        )
    })?;
    AdminToken::parse(&text).with_context(|| format!("reading {}", path.display()))
}

/// The running server of `store`, if one runs, through the library's admin client: the one
/// at `--admin-url`, else the one whose address file is in the data folder and that answers
/// there. An address file left by a server that is gone (a crash) is passed over: the
/// commands then open the store themselves.
pub(crate) async fn find_server(store: &StoreArgs) -> Result<Option<AdminClient>> {
    let (base, explicit) = match &store.admin_url {
        Some(url) => (url.trim_end_matches('/').to_owned(), true),
        None => match read_address(store) {
            Some(url) => (url, false),
            None => return Ok(None),
        },
    };
    let builder = || {
        Client::builder(base.clone())
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(30))
    };
    // `/livez` takes no token: whether a server answers is known before the token is read.
    let probe = builder()
        .build_admin(String::new())
        .context("setting up the admin API client")?;
    match probe.live().await {
        Ok(()) => {}
        Err(ClientError::Transport(e)) if !explicit && e.is_connect() => return Ok(None),
        Err(e) => bail!("the admin API at {base} does not answer: {e}"),
    }
    let token = read_token(store)?;
    let admin = builder()
        .build_admin(token.expose())
        .context("setting up the admin API client")?;
    Ok(Some(admin))
}

/// The admin URL the running server wrote, if there is one.
pub(crate) fn read_address(store: &StoreArgs) -> Option<String> {
    let text = std::fs::read_to_string(address_file(store)).ok()?;
    let url = text.trim();
    (!url.is_empty()).then(|| url.to_owned())
}

/// `admin.addr` while the server runs: written whole (a reader never sees half of it), and
/// removed when dropped.
pub(crate) struct AddressFile(PathBuf);

impl AddressFile {
    pub(crate) fn write(store: &StoreArgs, url: &str) -> Result<Self> {
        let path = address_file(store);
        let partial = path.with_extension("addr.partial");
        std::fs::write(&partial, format!("{url}\n"))
            .and_then(|()| std::fs::rename(&partial, &path))
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for AddressFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes a file that must not exist yet, readable by its owner only, flushed to disk.
fn write_new(path: &Path, contents: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(contents.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", path.display()))
}
