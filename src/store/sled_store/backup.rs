//! [`Store::backup_to`] on sled: every tree copied into a new database while writes wait at
//! the write gate, then read back and compared, with the index snapshot file beside it.

use std::fs;
use std::time::{Duration, Instant};

use super::*;
use crate::store::BackupSummary;

/// Page cache of the copy: it is written once and read back once, so a small one does.
const COPY_CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// How long a finished copy's files may stay held by sled's background threads after the
/// copy is dropped, before the backup gives up waiting for them.
const RELEASE_WAIT: Duration = Duration::from_secs(30);

/// The file name of the index snapshot in a data folder ([`SledStore::open`] keeps it there).
const INDEX_SNAPSHOT: &str = "search-index";

fn io_error(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::backend(format!("{what} {}", path.display()), e)
}

/// Copies `store` into `dir` (see [`SledStore::backup_to`]). Blocking.
pub(super) fn copy(store: &SledStore, dir: &Path) -> StoreResult<BackupSummary> {
    let started = Instant::now();
    empty_folder(dir)?;
    match fs::copy(&store.index_snapshot, dir.join(INDEX_SNAPSHOT)) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error("copying", &store.index_snapshot, e)),
    }
    let copy = sled::Config::new()
        .path(dir)
        .cache_capacity(COPY_CACHE_BYTES)
        // No flusher thread: the copy is flushed once, at the end, and must be let go of
        // as soon as it is dropped.
        .flush_every_ms(None)
        .open()
        .map_err(backend)?;
    let paused = Instant::now();
    let copied = {
        let _no_writes = store.write_gate.write().unwrap_or_else(|e| e.into_inner());
        copy_trees(&store.db, &copy)?
    };
    let writes_paused = paused.elapsed();
    copy.flush().map_err(backend)?;
    let read_back = checksum(&copy)?;
    if read_back != copied.checksum {
        return Err(StoreError::backend(
            format!("backing up into {}", dir.display()),
            "the copy does not read back as it was written",
        ));
    }
    drop(copy);
    wait_until_let_go(dir)?;
    sync_folder(dir)?;
    Ok(BackupSummary {
        bytes: folder_bytes(dir)?,
        took: started.elapsed(),
        writes_paused,
        ..copied.summary
    })
}

/// Makes `dir` if it is missing; refuses one that holds anything.
fn empty_folder(dir: &Path) -> StoreResult<()> {
    fs::create_dir_all(dir).map_err(|e| io_error("creating", dir, e))?;
    let mut entries = fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))?;
    if entries.next().is_some() {
        return Err(StoreError::backend(
            format!("backing up into {}", dir.display()),
            "the folder is not empty: back up into a new or empty folder",
        ));
    }
    Ok(())
}

/// What [`copy_trees`] copied: the counts, and a checksum of every tree name, key and value
/// in tree-name order, to compare the copy with.
struct Copied {
    summary: BackupSummary,
    checksum: u32,
}

/// Copies every tree of `from` into `to`. The caller holds the write gate exclusively, so
/// `from` does not change meanwhile.
fn copy_trees(from: &Db, to: &Db) -> StoreResult<Copied> {
    let mut summary = BackupSummary::default();
    let mut hasher = crc32fast::Hasher::new();
    for name in sorted_tree_names(from) {
        let source = from.open_tree(&name).map_err(backend)?;
        let target = to.open_tree(&name).map_err(backend)?;
        hasher.update(&name);
        let mut records = 0u64;
        for item in source.iter() {
            let (key, value) = item.map_err(backend)?;
            hasher.update(&key);
            hasher.update(&value);
            // One insert at a time, not in batches: a sled batch or transaction holds a lock
            // that every sled call of the process waits for (the live store's readers too),
            // while an insert only shares it.
            target.insert(key, value).map_err(backend)?;
            records += 1;
        }
        match name.as_ref() {
            b"jobs" => summary.jobs = records,
            b"companies" => summary.companies = records,
            b"keys" => summary.keys = records,
            b"webhooks" => summary.webhooks = records,
            _ => {}
        }
    }
    Ok(Copied {
        summary,
        checksum: hasher.finalize(),
    })
}

/// The checksum [`copy_trees`] makes, of the copy as it reads back.
fn checksum(db: &Db) -> StoreResult<u32> {
    let mut hasher = crc32fast::Hasher::new();
    for name in sorted_tree_names(db) {
        hasher.update(&name);
        for item in db.open_tree(&name).map_err(backend)?.iter() {
            let (key, value) = item.map_err(backend)?;
            hasher.update(&key);
            hasher.update(&value);
        }
    }
    Ok(hasher.finalize())
}

fn sorted_tree_names(db: &Db) -> Vec<sled::IVec> {
    let mut names = db.tree_names();
    names.sort();
    names
}

/// Waits until no thread of sled holds the copy's files any more (it keeps a lock on its
/// `db` file while it does), so the files are whole when the caller reads them.
fn wait_until_let_go(dir: &Path) -> StoreResult<()> {
    let path = dir.join("db");
    let file = fs::File::open(&path).map_err(|e| io_error("opening", &path, e))?;
    let deadline = Instant::now() + RELEASE_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return file.unlock().map_err(|e| io_error("unlocking", &path, e)),
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(StoreError::backend(
                    format!("backing up into {}", dir.display()),
                    "the copy was still in use 30 s after it was closed",
                ))
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_error("locking", &path, e)),
        }
    }
}

/// Syncs every file below `dir` and the folders themselves, so the backup is on disk when
/// it is reported done, names included.
fn sync_folder(dir: &Path) -> StoreResult<()> {
    for entry in fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))? {
        let path = entry.map_err(|e| io_error("reading", dir, e))?.path();
        if path.is_dir() {
            sync_folder(&path)?;
        } else {
            fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(|e| io_error("syncing", &path, e))?;
        }
    }
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error("syncing", dir, e))
}

/// The bytes of every file below `dir`. A file removed while it is counted (sled replaces
/// its snapshot files as it runs) counts for nothing.
pub(super) fn folder_bytes(dir: &Path) -> StoreResult<u64> {
    let mut bytes = 0;
    for entry in fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))? {
        let entry = entry.map_err(|e| io_error("reading", dir, e))?;
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error("reading", &entry.path(), e)),
        };
        bytes += match meta.is_dir() {
            true => folder_bytes(&entry.path())?,
            false => meta.len(),
        };
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::Dataset;
    use crate::domain::{ApiKey, BillingStatus, EventId, Plan};
    use crate::store::{FanOut, SledConfig};

    type Write = std::pin::Pin<Box<dyn std::future::Future<Output = StoreResult<()>> + Send>>;

    /// Every write path enters the write gate: while a backup holds it, none goes through,
    /// and each does once it is let go. Reads and the health probe are served meanwhile.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_write_goes_through_while_a_backup_holds_the_gate() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store = SledStore::open(&SledConfig::new(dir.path().join("db"))).expect("opened");
        let data = Dataset::generate(3, 2, 4);
        let write = |job: usize| JobWrite {
            job: data.jobs[job].clone(),
            events: Vec::new(),
            change: Some(crate::domain::ChangeKind::New),
            decided_on: Default::default(),
        };
        store
            .put_companies(&data.companies[..1])
            .await
            .expect("written");
        store.write_jobs(&[write(0)]).await.expect("written");
        let version = store.jobs_version().await.expect("read");

        let (hold, held) = std::sync::mpsc::channel::<()>();
        let (taken, is_taken) = std::sync::mpsc::channel::<()>();
        let gate = store.write_gate.clone();
        let backup = std::thread::spawn(move || {
            let _no_writes = gate.write().unwrap_or_else(|e| e.into_inner());
            taken.send(()).expect("told");
            held.recv().expect("let go");
        });
        is_taken.recv().expect("the gate is held");

        let key = {
            let k = ApiKey::generate();
            ApiKeyRecord {
                id: KeyId(uuid::Uuid::new_v4()),
                hash: k.hash(),
                hint: k.hint(),
                label: String::new(),
                plan: Plan::Developer,
                billing_status: BillingStatus::Active,
                billing_anchor: Utc::now(),
                created_at: Utc::now(),
                revoked_at: None,
            }
        };
        let event = OutboxEvent {
            id: EventId(uuid::Uuid::new_v4()),
            kind: "job.test".to_owned(),
            created_at: Utc::now(),
            data: serde_json::Value::Null,
            deliveries: Vec::new(),
        };
        let s = || store.clone();
        let (j1, j2, j0) = (write(1), write(2), data.jobs[0].id);
        let (c1, c0) = (data.companies[1].clone(), data.companies[0].id);
        let counter = UsageCounter {
            key_id: key.id,
            period_start: Utc::now(),
            calls_used: 1,
        };
        let writes: Vec<(&str, Write)> = vec![
            ("write_jobs", {
                let st = s();
                Box::pin(async move { st.write_jobs(&[j1]).await })
            }),
            ("write_jobs_deferred", {
                let st = s();
                Box::pin(async move { st.write_jobs_deferred(&[j2]).await })
            }),
            ("delete_job", {
                let st = s();
                Box::pin(async move { st.delete_job(j0).await.map(drop) })
            }),
            ("put_companies", {
                let st = s();
                Box::pin(async move { st.put_companies(&[c1]).await })
            }),
            ("delete_company", {
                let st = s();
                Box::pin(async move { st.delete_company(c0).await.map(drop) })
            }),
            ("save_index_snapshot", {
                let st = s();
                let snapshot = IndexSnapshot {
                    jobs_version: 1,
                    bytes: vec![1],
                };
                Box::pin(async move { st.save_index_snapshot(snapshot).await })
            }),
            ("put_key", {
                let st = s();
                Box::pin(async move { st.put_key(&key).await })
            }),
            ("put_usage", {
                let st = s();
                Box::pin(async move { st.put_usage(&[counter]).await })
            }),
            ("swap_usage", {
                let st = s();
                Box::pin(async move { st.swap_usage(Some(counter), counter).await.map(drop) })
            }),
            ("put_event", {
                let st = s();
                Box::pin(async move { st.put_event(&event).await })
            }),
            ("delete_webhook", {
                let st = s();
                Box::pin(async move {
                    st.delete_webhook(WebhookId(uuid::Uuid::new_v4()))
                        .await
                        .map(drop)
                })
            }),
            ("fan_out", {
                let st = s();
                Box::pin(async move { st.fan_out(&FanOut::default()).await.map(drop) })
            }),
            ("prune", {
                let st = s();
                Box::pin(async move { st.prune(Utc::now(), Utc::now(), 10).await.map(drop) })
            }),
        ];
        let running: Vec<_> = writes
            .into_iter()
            .map(|(name, w)| (name, tokio::spawn(w)))
            .collect();

        // Whatever the scheduling, none may finish while the gate is held; a while is
        // enough for a write that ignores the gate to show.
        tokio::time::sleep(Duration::from_millis(200)).await;
        for (name, w) in &running {
            assert!(!w.is_finished(), "{name} went through a held gate");
        }
        assert_eq!(store.jobs_version().await.expect("read"), version);
        assert!(store.get_job(j0).await.expect("read").is_some());
        store
            .probe_write()
            .await
            .expect("the probe is not held back");

        hold.send(()).expect("let go");
        backup.join().expect("the holder");
        for (name, w) in running {
            w.await
                .expect("the write's task")
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert_ne!(store.jobs_version().await.expect("read"), version);
    }
}
