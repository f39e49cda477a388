//! Backups while the service runs, and restoring one into a new data folder.
//!
//! A backup is a folder: the store's own copy ([`Store::backup_to`]: for sled, a data folder
//! with its index snapshot), the secret key that seals the webhook secrets (`secret.key`, so
//! the copy can be served; it must be protected like the data), and last a manifest
//! ([`BACKUP_MANIFEST`]) listing every file with its size and checksum. A folder without the
//! manifest is a backup cut short and is never restored; a file that does not match it is
//! damaged and stops the restore before anything is written.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{JobListingsService, SecretKey, ServiceError, ServiceResult};
use crate::domain::DomainError;
use crate::store::{BackupSource, BackupSummary, StoreError};

/// The file a finished backup ends with: a [`BackupManifest`] as JSON.
pub const BACKUP_MANIFEST: &str = "backup-manifest.json";

/// The name of the secret key in a backup, as in a data folder.
const SECRET_KEY_FILE: &str = "secret.key";

/// The manifest format this build writes and reads.
const FORMAT: u32 = 1;

/// What a backup holds, written last into it ([`BACKUP_MANIFEST`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BackupManifest {
    /// The manifest's format; a build refuses a backup of a format it does not know.
    pub format: u32,
    /// When the backup was finished, by the service's clock.
    pub created_at: DateTime<Utc>,
    /// Jobs in the backup, active and closed.
    pub jobs: u64,
    /// Companies in the backup.
    pub companies: u64,
    /// API keys in the backup.
    pub keys: u64,
    /// Webhook subscriptions in the backup.
    pub webhooks: u64,
    /// Whether the backup holds the key sealing the webhook secrets (`secret.key`); without
    /// one configured, the secrets are stored in clear.
    pub secret_key: bool,
    /// Every file of the backup but the manifest.
    pub files: Vec<BackupFile>,
}

/// One file of a backup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupFile {
    /// Its path in the backup, `/`-separated.
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// The CRC-32 of its bytes, to find a file damaged since it was written.
    pub crc32: u32,
}

impl JobListingsService {
    /// Backs up the store, while the service runs, into the folder `dir`: a consistent copy
    /// holding every write acknowledged before the call (usage counted in memory is written
    /// first), with the key that seals the webhook secrets and a manifest written last
    /// ([`BACKUP_MANIFEST`]). [`restore_backup`] turns it into a data folder.
    ///
    /// `dir` is checked before any of the backup is written ([`check_backup_target`]): its
    /// parent folder must exist, and `dir` be missing (it is made) or an empty folder, outside
    /// the store's live data folder ([`Store::backup_source`]), that the service can write;
    /// else [`ServiceError::InvalidInput`] says what is wrong with it. Its disk must have room
    /// for a copy of the store ([`BackupSource::bytes`]) with
    /// [`ServiceConfig::backup_headroom_bytes`] left over, else
    /// [`ServiceError::InsufficientStorage`]. A refused backup leaves nothing behind.
    ///
    /// One backup runs at a time: another asked for meanwhile is refused with
    /// [`ServiceError::BackupInProgress`] rather than queued, as two copies at once would
    /// hold writes back twice as long and need twice the space. A backup runs to its end (or
    /// its clean-up) even when its caller stops waiting for it, and holds its place until then.
    ///
    /// Searches and reads are served meanwhile. Writes may wait while the store is copied:
    /// on sled, every write (ingest, key changes, counted calls with in-store metering,
    /// webhook deliveries) waits until the copy is made, about as long as reading the whole
    /// database takes ([`BackupSummary::writes_paused`]). A backup that fails removes what
    /// it wrote.
    ///
    /// The backup holds the secret key beside the data: protect it as the data itself. A
    /// store that cannot copy itself refuses with [`ServiceError::Unsupported`] (PostgreSQL:
    /// use `pg_dump`).
    ///
    /// [`Store::backup_source`]: crate::store::Store::backup_source
    /// [`ServiceConfig::backup_headroom_bytes`]: super::ServiceConfig::backup_headroom_bytes
    pub async fn backup(&self, dir: &Path) -> ServiceResult<BackupSummary> {
        let place = self.inner.backups.take(dir, self.now())?;
        let this = self.clone();
        let dir = dir.to_owned();
        tokio::spawn(async move {
            let written = this.backup_now(&dir).await;
            drop(place);
            written
        })
        .await
        .map_err(|e| StoreError::backend("backing up", e))?
    }

    /// Checks the target, then writes the backup; removes what it made on failure.
    async fn backup_now(&self, dir: &Path) -> ServiceResult<BackupSummary> {
        let started = std::time::Instant::now();
        let source = self.inner.store.backup_source().await?;
        let headroom = self.inner.shared.config.backup_headroom_bytes;
        let target = dir.to_owned();
        let made = tokio::task::spawn_blocking(move || prepare_target(&target, &source, headroom))
            .await
            .map_err(|e| StoreError::backend("checking the backup's folder", e))??;
        let written = match self.flush_usage().await {
            Ok(()) => self.write_backup(dir).await,
            Err(e) => Err(e),
        };
        match written {
            Ok(mut summary) => {
                summary.took = started.elapsed();
                tracing::info!(
                    dir = %dir.display(),
                    jobs = summary.jobs,
                    bytes = summary.bytes,
                    writes_paused = ?summary.writes_paused,
                    took = ?summary.took,
                    "backup written"
                );
                Ok(summary)
            }
            Err(e) => {
                remove_written(dir, made);
                Err(e)
            }
        }
    }

    async fn write_backup(&self, dir: &Path) -> ServiceResult<BackupSummary> {
        let summary = self.inner.store.backup_to(dir).await?;
        let key = self.inner.shared.config.secret_key.clone();
        let created_at = self.now();
        let dir = dir.to_owned();
        tokio::task::spawn_blocking(move || finish(&dir, key.as_ref(), created_at, summary))
            .await
            .map_err(|e| StoreError::backend("writing the backup", e))?
    }
}

/// The backup under way, if any: one runs at a time ([`JobListingsService::backup`]).
#[derive(Debug, Default)]
pub(super) struct BackupPlace(Arc<Mutex<Option<Running>>>);

/// A backup under way.
#[derive(Debug)]
struct Running {
    to: PathBuf,
    since: DateTime<Utc>,
}

/// The place of the backup under way, given up when dropped.
struct Taken(Arc<Mutex<Option<Running>>>);

impl BackupPlace {
    /// Takes the place for a backup into `to`; refuses while another holds it.
    fn take(&self, to: &Path, now: DateTime<Utc>) -> ServiceResult<Taken> {
        let mut running = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(other) = running.as_ref() {
            return Err(ServiceError::BackupInProgress {
                to: other.to.clone(),
                since: other.since,
            });
        }
        *running = Some(Running {
            to: to.to_owned(),
            since: now,
        });
        Ok(Taken(self.0.clone()))
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Checks the folder `dir` as the target of a backup of a store whose live data is in the
/// folder `live`, without writing anything: its parent folder exists, and `dir` is missing
/// or an empty folder, neither inside `live` nor holding it (symbolic links followed). A
/// relative `dir` is taken from the current folder. Blocking.
///
/// [`JobListingsService::backup`] makes these checks, then tries writing in the folder and
/// asks its disk for room, before it writes the backup. A command that opens the store
/// itself checks this first, so what is wrong is said before the store is opened.
///
/// Errors: what is wrong with `dir` is [`ServiceError::InvalidInput`] (field `dir`), its
/// reason naming the folder and what to give instead.
pub fn check_backup_target(dir: &Path, live: Option<&Path>) -> ServiceResult<()> {
    resolve_target(dir, live).map(drop)
}

/// A backup's folder, resolved.
struct Target {
    /// The folder with every symbolic link above it (and it, when it exists) followed.
    path: PathBuf,
    /// Whether it exists (and so is an empty folder).
    exists: bool,
}

fn resolve_target(dir: &Path, live: Option<&Path>) -> ServiceResult<Target> {
    let shown = dir.display();
    let absolute = std::path::absolute(dir)
        .map_err(|e| invalid("dir", format!("{shown} cannot be made absolute ({e})")))?;
    let (path, exists) = match fs::canonicalize(&absolute) {
        Ok(path) => (path, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
                return Err(unreachable(dir, &e));
            };
            match fs::canonicalize(parent) {
                Ok(parent) if parent.is_dir() => (parent.join(name), false),
                Ok(_) => {
                    let reason = format!(
                        "{shown} cannot be made: {} is a file, not a folder; give a new or \
                         empty folder in a folder that exists",
                        parent.display()
                    );
                    return Err(invalid("dir", reason));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let reason = format!(
                        "{shown} cannot be made: its parent folder {} does not exist; make it \
                         first, or give a folder in one that does",
                        parent.display()
                    );
                    return Err(invalid("dir", reason));
                }
                Err(e) => return Err(unreachable(dir, &e)),
            }
        }
        Err(e) => return Err(unreachable(dir, &e)),
    };
    if let Some(live) = live {
        let live = fs::canonicalize(live).unwrap_or_else(|_| live.to_owned());
        if path.starts_with(&live) {
            return Err(invalid(
                "dir",
                format!(
                    "{shown} is inside the live data folder {}; give a folder outside it (a \
                     backup there would put a copy of the secret key among the data, and be \
                     copied into every later backup)",
                    live.display()
                ),
            ));
        }
        if live.starts_with(&path) {
            return Err(invalid(
                "dir",
                format!(
                    "{shown} holds the live data folder {}; give a new or empty folder outside it",
                    live.display()
                ),
            ));
        }
    }
    if exists {
        if !path.is_dir() {
            return Err(invalid(
                "dir",
                format!(
                    "{shown} is a file, not a folder; give a new or empty folder: nothing is \
                     ever written over"
                ),
            ));
        }
        let mut entries = fs::read_dir(&path).map_err(|e| unreachable(dir, &e))?;
        if entries.next().is_some() {
            return Err(invalid(
                "dir",
                format!(
                    "{shown} exists and is not empty; give a new or empty folder: nothing is \
                     ever written over"
                ),
            ));
        }
    }
    Ok(Target { path, exists })
}

/// Checks `dir` as [`check_backup_target`] does, makes it when it is missing, and checks that
/// it can be written and has room for a copy of `source` with `headroom` bytes left free.
/// Returns whether it made the folder; a refused folder is left as it was. Blocking.
fn prepare_target(dir: &Path, source: &BackupSource, headroom: u64) -> ServiceResult<bool> {
    let target = resolve_target(dir, source.folder.as_deref())?;
    let needed = source.bytes.saturating_add(headroom);
    let made = !target.exists;
    if made {
        fs::create_dir(&target.path).map_err(|e| unwritable(dir, "made", &e, needed))?;
    }
    let checked = writable_with_room(dir, &target.path, needed);
    if checked.is_err() && made {
        let _ = fs::remove_dir_all(&target.path);
    }
    checked.map(|()| made)
}

/// Checks that a file can be made in the folder `path` (and removes it), and that its disk
/// has `needed` bytes free.
fn writable_with_room(dir: &Path, path: &Path, needed: u64) -> ServiceResult<()> {
    let probe = path.join(".backup-write-check");
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| unwritable(dir, "written", &e, needed))?;
    fs::remove_file(&probe).map_err(|e| io_error("removing", &probe, e))?;
    let available =
        fs4::available_space(path).map_err(|e| io_error("reading the free space of", path, e))?;
    match available >= needed {
        true => Ok(()),
        false => Err(ServiceError::InsufficientStorage {
            path: dir.to_owned(),
            needed,
            available,
        }),
    }
}

/// `dir` cannot be `what` ("made", "written"): a full disk says so, anything else is the
/// folder's fault.
fn unwritable(dir: &Path, what: &str, e: &std::io::Error, needed: u64) -> ServiceError {
    if e.kind() == std::io::ErrorKind::StorageFull {
        return ServiceError::InsufficientStorage {
            path: dir.to_owned(),
            needed,
            available: 0,
        };
    }
    invalid(
        "dir",
        format!(
            "{} cannot be {what} ({e}); give a folder the server can write",
            dir.display()
        ),
    )
}

/// `dir`, or a folder above it, cannot be reached.
fn unreachable(dir: &Path, e: &std::io::Error) -> ServiceError {
    let why = match e.kind() {
        std::io::ErrorKind::NotADirectory => "a part of its path is a file, not a folder".into(),
        _ => e.to_string(),
    };
    invalid(
        "dir",
        format!(
            "{} cannot be reached ({why}); give a new or empty folder in a folder that exists",
            dir.display()
        ),
    )
}

/// Adds the secret key and the manifest to the store's copy in `dir`. Blocking.
fn finish(
    dir: &Path,
    key: Option<&SecretKey>,
    created_at: DateTime<Utc>,
    mut summary: BackupSummary,
) -> ServiceResult<BackupSummary> {
    if let Some(key) = key {
        let path = dir.join(SECRET_KEY_FILE);
        key.write_new_file(&path)
            .map_err(|e| io_error("writing", &path, e))?;
    }
    let mut files = Vec::new();
    list_files(dir, dir, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let manifest = BackupManifest {
        format: FORMAT,
        created_at,
        jobs: summary.jobs,
        companies: summary.companies,
        keys: summary.keys,
        webhooks: summary.webhooks,
        secret_key: key.is_some(),
        files,
    };
    let bytes = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| StoreError::backend("writing the backup manifest", e))?;
    // Written aside and renamed: a manifest is whole or absent.
    let aside = dir.join(format!("{BACKUP_MANIFEST}.partial"));
    let mut file = fs::File::create(&aside).map_err(|e| io_error("creating", &aside, e))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("writing", &aside, e))?;
    let path = dir.join(BACKUP_MANIFEST);
    fs::rename(&aside, &path).map_err(|e| io_error("renaming", &aside, e))?;
    sync_dir(dir)?;
    summary.bytes = manifest.files.iter().map(|f| f.bytes).sum::<u64>() + bytes.len() as u64;
    Ok(summary)
}

/// Restores the backup in `from` into the data folder `data_dir`, which must not exist or
/// be empty; nothing there is ever overwritten. The backup's secret key goes to
/// `secret_key_file` when given (a file already there must hold the same key), else to
/// `secret.key` in `data_dir`, where the bundled server looks for it. Blocking.
///
/// The backup is checked before anything is written: its manifest must be there (a backup
/// cut short has none) and of a known format, and every file it lists present with its size.
/// Each file's checksum is checked as it is copied; a mismatch stops the restore and removes
/// what it wrote, as any failure does. Returns the manifest, whose counts the restored store
/// should show.
///
/// Errors: a folder that is not a whole backup, a data folder that is not empty or a key
/// file that holds another key are [`ServiceError::InvalidInput`]; failing reads and writes
/// are [`ServiceError::Store`].
pub fn restore_backup(
    from: &Path,
    data_dir: &Path,
    secret_key_file: Option<&Path>,
) -> ServiceResult<BackupManifest> {
    let manifest = read_manifest(from)?;
    let key_target = match secret_key_file {
        Some(path) => path.to_owned(),
        None => data_dir.join(SECRET_KEY_FILE),
    };
    let mut plan = Vec::new();
    for file in &manifest.files {
        let source = from.join(relative(&file.path)?);
        let found = fs::metadata(&source).map(|m| m.len());
        if found.as_ref().ok() != Some(&file.bytes) {
            return Err(invalid(
                "from",
                format!(
                    "{} is not a whole backup: {} is {}, the manifest says {} bytes; restore \
                     another backup",
                    from.display(),
                    file.path,
                    match found {
                        Ok(bytes) => format!("{bytes} bytes"),
                        Err(_) => "missing".to_owned(),
                    },
                    file.bytes
                ),
            ));
        }
        let target = match file.path == SECRET_KEY_FILE {
            true => key_target.clone(),
            false => data_dir.join(relative(&file.path)?),
        };
        plan.push((file, source, target));
    }
    // A key file kept outside the data folder may be there already (replicas share one):
    // the same key is left as it is, another refused before anything is written.
    let key_outside = !key_target.starts_with(data_dir);
    let key_there = match plan.iter().find(|(f, _, _)| f.path == SECRET_KEY_FILE) {
        Some((_, source, target)) if key_outside => same_key_there(source, target)?,
        _ => false,
    };
    let made = prepare_empty(data_dir, "data_dir")?;
    let mut key_written = false;
    let mut restore = || {
        for (file, source, target) in &plan {
            if file.path == SECRET_KEY_FILE && key_outside {
                if key_there {
                    continue;
                }
                copy_checked(file, source, target)?;
                key_written = true;
                if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
                    sync_dir(parent)?;
                }
                continue;
            }
            copy_checked(file, source, target)?;
        }
        sync_tree(data_dir)
    };
    match restore() {
        Ok(()) => Ok(manifest),
        Err(e) => {
            if key_written {
                let _ = fs::remove_file(&key_target);
            }
            remove_written(data_dir, made);
            Err(e)
        }
    }
}

/// The manifest of the backup in `from`, checked.
fn read_manifest(from: &Path) -> ServiceResult<BackupManifest> {
    let path = from.join(BACKUP_MANIFEST);
    let text = match fs::read(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(invalid(
                "from",
                format!(
                    "{} holds no {BACKUP_MANIFEST}: it is not a backup, or one that did not \
                     finish; restore another backup",
                    from.display()
                ),
            ))
        }
        Err(e) => return Err(io_error("reading", &path, e)),
    };
    let manifest: BackupManifest = serde_json::from_slice(&text).map_err(|e| {
        invalid(
            "from",
            format!(
                "{} cannot be read ({e}); restore another backup",
                path.display()
            ),
        )
    })?;
    if manifest.format != FORMAT {
        return Err(invalid(
            "from",
            format!(
                "{} is of format {}, which this build does not read (it reads {FORMAT}); \
                 restore it with the build that wrote it",
                path.display(),
                manifest.format
            ),
        ));
    }
    Ok(manifest)
}

/// A manifest path as a relative path that stays inside the folder it is joined to.
fn relative(path: &str) -> ServiceResult<PathBuf> {
    let relative: PathBuf = path.split('/').collect();
    let inside = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    match inside && !path.is_empty() {
        true => Ok(relative),
        false => Err(invalid(
            "from",
            format!("the backup manifest names a file outside the backup: {path}"),
        )),
    }
}

/// Whether the key file `target` exists and holds the key in `source`; a file there with
/// another key is refused, as it must not be overwritten.
fn same_key_there(source: &Path, target: &Path) -> ServiceResult<bool> {
    let there = match fs::read(target) {
        Ok(there) => there,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_error("reading", target, e)),
    };
    let backed_up = fs::read(source).map_err(|e| io_error("reading", source, e))?;
    match there.trim_ascii() == backed_up.trim_ascii() {
        true => Ok(true),
        false => Err(invalid(
            "secret_key_file",
            format!(
                "{} holds another key than the backup's; give a path where no key file is \
                 yet, and that file to the server",
                target.display()
            ),
        )),
    }
}

/// Copies one file of a backup to a new file, checking its checksum, and syncs it.
fn copy_checked(file: &BackupFile, source: &Path, target: &Path) -> ServiceResult<()> {
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error("creating", parent, e))?;
    }
    let mut input = fs::File::open(source).map_err(|e| io_error("reading", source, e))?;
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if file.path == SECRET_KEY_FILE {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    let mut output = options
        .open(target)
        .map_err(|e| io_error("creating", target, e))?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0; 1 << 20];
    loop {
        let n = input
            .read(&mut buffer)
            .map_err(|e| io_error("reading", source, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        output
            .write_all(&buffer[..n])
            .map_err(|e| io_error("writing", target, e))?;
    }
    output
        .sync_all()
        .map_err(|e| io_error("syncing", target, e))?;
    if hasher.finalize() != file.crc32 {
        return Err(invalid(
            "from",
            format!(
                "{} is damaged: its checksum is not the one in the manifest; restore another \
                 backup",
                source.display()
            ),
        ));
    }
    Ok(())
}

/// Makes `dir` when it is missing (returning `true`); refuses one that holds anything.
fn prepare_empty(dir: &Path, field: &'static str) -> ServiceResult<bool> {
    match fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(invalid(
            field,
            format!(
                "{} exists and is not empty; give a new or empty folder: nothing is ever \
                 written over",
                dir.display()
            ),
        )),
        Ok(false) => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(|e| io_error("creating", dir, e))?;
            Ok(true)
        }
        Err(e) => Err(io_error("reading", dir, e)),
    }
}

/// Removes what a failed backup or restore wrote into `dir`: the folder, when it `made` it,
/// else (it was empty) what is in it now. Best effort: the failure is what is reported.
fn remove_written(dir: &Path, made: bool) {
    if made {
        let _ = fs::remove_dir_all(dir);
        return;
    }
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = match path.is_dir() {
                true => fs::remove_dir_all(&path),
                false => fs::remove_file(&path),
            };
        }
    }
}

/// Adds every file below `dir` to `files`, named relative to `root`, with its size and
/// checksum.
fn list_files(root: &Path, dir: &Path, files: &mut Vec<BackupFile>) -> ServiceResult<()> {
    for entry in fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))? {
        let path = entry.map_err(|e| io_error("reading", dir, e))?.path();
        if path.is_dir() {
            list_files(root, &path, files)?;
            continue;
        }
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let (bytes, crc32) = checksum(&path)?;
        files.push(BackupFile {
            path: name,
            bytes,
            crc32,
        });
    }
    Ok(())
}

/// The size and CRC-32 of a file.
fn checksum(path: &Path) -> ServiceResult<(u64, u32)> {
    let mut file = fs::File::open(path).map_err(|e| io_error("reading", path, e))?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|e| io_error("reading", path, e))?;
        if n == 0 {
            return Ok((bytes, hasher.finalize()));
        }
        bytes += n as u64;
        hasher.update(&buffer[..n]);
    }
}

/// Syncs `dir` and every folder below it, so the files' names are durable.
fn sync_tree(dir: &Path) -> ServiceResult<()> {
    for entry in fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))? {
        let path = entry.map_err(|e| io_error("reading", dir, e))?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        }
    }
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> ServiceResult<()> {
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error("syncing", dir, e))
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> ServiceError {
    StoreError::backend(format!("{what} {}", path.display()), e).into()
}

fn invalid(field: &'static str, reason: String) -> ServiceError {
    ServiceError::InvalidInput(DomainError::new(field, reason))
}
