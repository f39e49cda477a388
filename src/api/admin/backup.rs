//! `POST /admin/v1/backup`: a consistent copy of the live store, written into a folder on the
//! server's machine, while the server keeps serving.

use bytes::Bytes;
use http::Request;

use super::wire::{BackupRequest, BackupWritten};
use crate::api::handlers::{json_object, no_params, Handled};
use crate::api::Reply;
use crate::domain::DomainError;
use crate::service::{JobListingsService, ServiceError};

/// Backs the store up into `to`, an absolute path on the server's machine to a folder that
/// is missing or empty, outside the data folder, on a disk with room for the copy: the
/// service checks all of it before it writes anything (400 `invalid_parameter` on `to`, 507
/// `insufficient_storage`), and runs one backup at a time (409 `backup_in_progress`).
pub(super) async fn create(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let asked: BackupRequest = json_object(
        req,
        &["to"],
        "with `to`, the absolute path of a new or empty folder on the server's machine",
    )?;
    if !asked.to.is_absolute() {
        return Err(DomainError::new(
            "to",
            "must be an absolute path on the server's machine, to a new or empty folder",
        )
        .into());
    }
    let summary = service.backup(&asked.to).await.map_err(|e| match e {
        // The service names the folder `dir`; here it is the body's `to`.
        ServiceError::InvalidInput(e) => {
            ServiceError::InvalidInput(DomainError::new("to", e.reason))
        }
        e => e,
    })?;
    Ok(Reply::json(
        &BackupWritten {
            to: asked.to,
            jobs: summary.jobs,
            companies: summary.companies,
            keys: summary.keys,
            webhooks: summary.webhooks,
            bytes: summary.bytes,
            took_ms: millis(summary.took),
            writes_paused_ms: millis(summary.writes_paused),
        },
        None,
    ))
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
