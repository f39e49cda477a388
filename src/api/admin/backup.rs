//! `POST /admin/v1/backup`: a consistent copy of the live store, written into a folder on the
//! server's machine, while the server keeps serving.

use std::path::PathBuf;

use bytes::Bytes;
use http::Request;
use serde::{Deserialize, Serialize};

use crate::api::handlers::{json_object, no_params, Handled};
use crate::api::Reply;
use crate::domain::DomainError;
use crate::service::{JobListingsService, ServiceError};

/// The body of `POST /admin/v1/backup`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "BackupRequest")]
pub(crate) struct BackupTo {
    /// The absolute path, on the server's machine, of a new or empty folder to write the
    /// backup into: in a folder that exists, outside the server's data folder.
    to: PathBuf,
}

/// What a backup holds and what it cost.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Backup", deny_unknown_fields)]
pub(crate) struct BackupView {
    /// Where the backup was written.
    to: PathBuf,
    /// Jobs copied, active and closed.
    jobs: u64,
    /// Companies copied.
    companies: u64,
    /// API key records copied.
    keys: u64,
    /// Webhook subscriptions copied.
    webhooks: u64,
    /// Bytes written.
    bytes: u64,
    /// How long the backup took.
    took_ms: u128,
    /// How long writes waited while the copy was made; reads never wait.
    writes_paused_ms: u128,
}

/// Backs the store up into `to`, an absolute path on the server's machine to a folder that
/// is missing or empty, outside the data folder, on a disk with room for the copy: the
/// service checks all of it before it writes anything (400 `invalid_parameter` on `to`, 507
/// `insufficient_storage`), and runs one backup at a time (409 `backup_in_progress`).
pub(super) async fn create(service: &JobListingsService, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let asked: BackupTo = json_object(
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
        &BackupView {
            to: asked.to,
            jobs: summary.jobs,
            companies: summary.companies,
            keys: summary.keys,
            webhooks: summary.webhooks,
            bytes: summary.bytes,
            took_ms: summary.took.as_millis(),
            writes_paused_ms: summary.writes_paused.as_millis(),
        },
        None,
    ))
}
