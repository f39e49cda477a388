//! `backup` and `restore`: a sled data folder copied into a backup folder, and a backup folder
//! turned into a new data folder.

use std::path::Path;

use anyhow::{bail, Context, Result};

use job_listings::client::AdminClient;
use job_listings::service::{
    check_backup_target, restore_backup, BackupManifest, JobListingsService, ServiceConfig,
    ServiceError,
};
use job_listings::store::BackupSummary;

use crate::cli::{BackupArgs, RestoreArgs, StoreArgs};
use crate::open::{open_service, Deliver};

/// Refuses what can be refused before the store is opened (and locked): PostgreSQL, a data
/// folder that is not there, a backup folder that is not a new or empty folder outside the
/// data folder (the checks the service makes again, with those of room and writing, before
/// it writes the backup).
pub(crate) fn check_backup(store: &StoreArgs, args: &BackupArgs) -> Result<()> {
    if store.database_url.is_some() {
        bail!(
            "`backup` copies a sled data folder; with PostgreSQL, back up the database with \
             pg_dump (and restore it with pg_restore), and keep a copy of the secret key file \
             with the dump"
        );
    }
    if !store.data_dir.exists() {
        bail!(
            "there is no data folder at {}: give the server's --data-dir (or JOB_LISTINGS_DATA)",
            store.data_dir.display()
        );
    }
    check_backup_target(&args.to, Some(&store.data_dir)).map_err(said_plainly)
}

/// Writes the backup and says what it holds.
pub(crate) async fn backup(service: &JobListingsService, args: &BackupArgs) -> Result<()> {
    let summary = service
        .backup(&args.to)
        .await
        .map_err(said_plainly)
        .with_context(|| format!("backing up into {}", args.to.display()))?;
    say_backed_up(&summary, &args.to);
    Ok(())
}

fn say_backed_up(summary: &BackupSummary, to: &Path) {
    println!(
        "Backed up {} into {} ({}) in {:.2?}; writes waited {:.2?}.",
        contents(summary),
        to.display(),
        size(summary.bytes),
        summary.took,
        summary.writes_paused,
    );
    println!("It holds the secret key: keep it as safe as the data folder.");
}

/// Has the running server write the backup (into a folder on its machine: an absolute path,
/// made from the one given relative to here), and says what it holds as [`backup`] does.
pub(crate) async fn backup_remote(admin: &AdminClient, args: &BackupArgs) -> Result<()> {
    let to = std::path::absolute(&args.to)
        .with_context(|| format!("making {} an absolute path", args.to.display()))?;
    let written = admin
        .backup(&to)
        .await
        .with_context(|| format!("backing up into {}", to.display()))?;
    let summary = BackupSummary {
        jobs: written.jobs,
        companies: written.companies,
        keys: written.keys,
        webhooks: written.webhooks,
        bytes: written.bytes,
        took: std::time::Duration::from_millis(written.took_ms),
        writes_paused: std::time::Duration::from_millis(written.writes_paused_ms),
    };
    say_backed_up(&summary, &to);
    Ok(())
}

/// Restores the backup into the data folder, then opens the folder and checks it holds what
/// the manifest says.
pub(crate) async fn restore(store: &StoreArgs, args: &RestoreArgs) -> Result<()> {
    if store.database_url.is_some() {
        bail!(
            "`restore` makes a sled data folder; with PostgreSQL, restore the database with \
             pg_restore and give the servers the secret key file kept with the dump"
        );
    }
    let (from, data, key) = (
        args.from.clone(),
        store.data_dir.clone(),
        store.secret_key_file.clone(),
    );
    let manifest =
        tokio::task::spawn_blocking(move || restore_backup(&from, &data, key.as_deref()))
            .await?
            .map_err(said_plainly)
            .with_context(|| {
                format!(
                    "restoring {} into {}",
                    args.from.display(),
                    store.data_dir.display()
                )
            })?;
    let service = open_service(store, ServiceConfig::default(), Deliver::Nothing)
        .await
        .context("opening the restored data folder")?;
    let checked = check_restored(&service, &manifest);
    let closed = service
        .shutdown()
        .await
        .context("closing the restored data");
    checked.and(closed)?;
    println!(
        "Restored {} (backed up at {}) into {}. Start the server with --data-dir {}.",
        contents_of(&manifest),
        manifest.created_at.format("%Y-%m-%d %H:%M:%S UTC"),
        store.data_dir.display(),
        store.data_dir.display()
    );
    Ok(())
}

/// The restored folder, as the service loaded it, holds the manifest's companies and keys.
fn check_restored(service: &JobListingsService, manifest: &BackupManifest) -> Result<()> {
    let companies = service.company_count() as u64;
    let keys = service.list_keys().len() as u64;
    if (companies, keys) != (manifest.companies, manifest.keys) {
        bail!(
            "the restored folder holds {companies} companies and {keys} keys where the backup's \
             manifest says {} and {}: remove the folder and restore again",
            manifest.companies,
            manifest.keys
        );
    }
    Ok(())
}

/// A refusal of what was given says only why: its field is a library name, not the option's.
fn said_plainly(e: ServiceError) -> anyhow::Error {
    match e {
        ServiceError::InvalidInput(e) => anyhow::anyhow!(e.reason),
        e => e.into(),
    }
}

fn contents(s: &BackupSummary) -> String {
    records(s.jobs, s.companies, s.keys, s.webhooks)
}

fn contents_of(m: &BackupManifest) -> String {
    records(m.jobs, m.companies, m.keys, m.webhooks)
}

fn records(jobs: u64, companies: u64, keys: u64, webhooks: u64) -> String {
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}, {}, {} and {}",
        count(jobs, "job", "jobs"),
        count(companies, "company", "companies"),
        count(keys, "key", "keys"),
        count(webhooks, "webhook", "webhooks")
    )
}

/// Bytes in the unit a person reads them in.
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    match bytes {
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / MIB),
    }
}
