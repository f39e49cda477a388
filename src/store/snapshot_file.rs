//! The sled store's search index snapshot: one file beside sled's own, its bytes followed by
//! the jobs version they reflect, replaced atomically (written aside, synced, renamed).

use std::io::Write;
use std::path::Path;

use super::{IndexSnapshot, StoreError, StoreResult};

fn io_error(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::backend(format!("{what} {}", path.display()), e)
}

/// The snapshot in `path`; `None` when there is none.
pub(super) fn read(path: &Path) -> StoreResult<Option<IndexSnapshot>> {
    let mut bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("reading", path, e)),
    };
    let Some(at) = bytes.len().checked_sub(8) else {
        return Ok(None);
    };
    let version = bytes.split_off(at);
    let jobs_version = u64::from_le_bytes(version.try_into().unwrap_or_default());
    Ok(Some(IndexSnapshot {
        jobs_version,
        bytes,
    }))
}

/// Replaces the snapshot in `path`: a crash leaves the old one or the new one, never part.
pub(super) fn write(path: &Path, snapshot: &IndexSnapshot) -> StoreResult<()> {
    let aside = path.with_extension("partial");
    let mut file = std::fs::File::create(&aside).map_err(|e| io_error("creating", &aside, e))?;
    file.write_all(&snapshot.bytes)
        .and_then(|()| file.write_all(&snapshot.jobs_version.to_le_bytes()))
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("writing", &aside, e))?;
    std::fs::rename(&aside, path).map_err(|e| io_error("renaming", &aside, e))?;
    // The rename itself is durable once the folder is synced.
    if let Some(folder) = path.parent() {
        std::fs::File::open(folder)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_error("syncing", folder, e))?;
    }
    Ok(())
}
