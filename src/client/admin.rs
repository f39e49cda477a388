//! A typed client of the admin API: the operator's calls on a running server, with the admin
//! token, over the same machinery as [`Client`](super::Client) (time limits, retries, problem
//! documents as [`ClientError::Api`]), sending and reading the admin API's own wire types.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::Method;

use super::{respond, Call, ClientError, Inner, Response, Result};
use crate::api::admin::wire::{
    AdminKey, BackupRequest, BackupWritten, CloseUnseen, CompanyLookup, DataList, KeyChange,
    LookedUp, NewKeyRequest, UnseenClosedView,
};
use crate::domain::{CompanyId, KeyId};
use crate::service::{BulkReport, RecordKind};

/// A client of the admin API, built with [`ClientBuilder::build_admin`]. Cheap to clone.
///
/// [`ClientBuilder::build_admin`]: super::ClientBuilder::build_admin
#[derive(Clone)]
pub struct AdminClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AdminClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("AdminClient")
            .field("base", &self.inner.base)
            .finish_non_exhaustive()
    }
}

impl AdminClient {
    pub(super) fn new(inner: Arc<Inner>) -> Self {
        Self { inner }
    }

    /// Where the admin API is: its origin, without a trailing slash.
    pub fn base(&self) -> &str {
        &self.inner.base
    }

    /// `GET /livez`: whether the server answers at all (no token needed).
    pub async fn live(&self) -> Result<()> {
        let url = self.inner.url("/livez", &[])?;
        self.inner.send(Call::new(Method::GET, url)).await?;
        Ok(())
    }

    /// `POST /admin/v1/keys`: issues a key; the answer holds the key itself, shown only here.
    pub async fn create_key(&self, new: &NewKeyRequest) -> Result<Response<AdminKey>> {
        let call = Call::new(Method::POST, self.inner.url("/admin/v1/keys", &[])?).json(new);
        self.inner.json(call).await
    }

    /// `GET /admin/v1/keys`: every issued key, oldest first.
    pub async fn list_keys(&self) -> Result<Response<Vec<AdminKey>>> {
        let url = self.inner.url("/admin/v1/keys", &[])?;
        let list: Response<DataList<AdminKey>> =
            self.inner.json(Call::new(Method::GET, url)).await?;
        Ok(Response {
            value: list.value.data,
            quota: list.quota,
            request_id: list.request_id,
        })
    }

    /// `GET /admin/v1/keys/{id}`: one key's record.
    pub async fn get_key(&self, id: KeyId) -> Result<Response<AdminKey>> {
        let url = self.inner.url(&format!("/admin/v1/keys/{id}"), &[])?;
        self.inner.json(Call::new(Method::GET, url)).await
    }

    /// `PATCH /admin/v1/keys/{id}`: changes a key's plan, billing status or both.
    pub async fn change_key(&self, id: KeyId, change: &KeyChange) -> Result<Response<AdminKey>> {
        let url = self.inner.url(&format!("/admin/v1/keys/{id}"), &[])?;
        self.inner
            .json(Call::new(Method::PATCH, url).json(change))
            .await
    }

    /// `DELETE /admin/v1/keys/{id}`: revokes a key for good (again: the same answer).
    pub async fn revoke_key(&self, id: KeyId) -> Result<Response<AdminKey>> {
        let url = self.inner.url(&format!("/admin/v1/keys/{id}"), &[])?;
        self.inner.json(Call::new(Method::DELETE, url)).await
    }

    /// `POST /admin/v1/companies/lookup`: which of up to 10,000 company ids are stored.
    pub async fn lookup_companies(&self, ids: &[CompanyId]) -> Result<Response<LookedUp>> {
        let url = self.inner.url("/admin/v1/companies/lookup", &[])?;
        let body = CompanyLookup { ids: ids.to_vec() };
        self.inner
            .json(Call::new(Method::POST, url).json(&body))
            .await
    }

    /// `POST /admin/v1/jobs/close-unseen`: closes the active jobs last seen before `before`,
    /// or only counts them on a `dry_run`.
    pub async fn close_unseen_jobs(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        dry_run: bool,
    ) -> Result<Response<UnseenClosedView>> {
        let url = self.inner.url("/admin/v1/jobs/close-unseen", &[])?;
        let body = CloseUnseen {
            seen_before: before,
            dry_run,
        };
        self.inner
            .json(Call::new(Method::POST, url).json(&body))
            .await
    }

    /// `POST /admin/v1/backup`: has the server back its store up into `to`, an absolute path
    /// on its machine. Takes as long as the backup does: no time limit.
    pub async fn backup(&self, to: &Path) -> Result<Response<BackupWritten>> {
        let url = self.inner.url("/admin/v1/backup", &[])?;
        let body = BackupRequest { to: to.to_owned() };
        let mut call = Call::new(Method::POST, url).json(&body);
        call.unbounded = true;
        self.inner.json(call).await
    }

    /// `POST /admin/v1/jobs/bulk` or `/admin/v1/companies/bulk`: streams `lines` (JSON Lines,
    /// in pieces of any size) to the server's import of lines, which checks and writes them as
    /// they arrive; the report numbers lines in the order sent. Takes as long as the upload
    /// does (no time limit), and is never retried: the body is sent once.
    pub async fn bulk_upload<S>(
        &self,
        kind: RecordKind,
        dry_run: bool,
        lines: S,
    ) -> Result<Response<BulkReport>>
    where
        S: futures_util::TryStream + Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        Bytes: From<S::Ok>,
    {
        let path = match kind {
            RecordKind::Jobs => "/admin/v1/jobs/bulk",
            RecordKind::Companies => "/admin/v1/companies/bulk",
        };
        let pairs = [("dry_run", dry_run.to_string())];
        let url = self.inner.url(path, if dry_run { &pairs } else { &[] })?;
        let request = self
            .inner
            .http
            .post(url)
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/x-ndjson")
            .body(reqwest::Body::wrap_stream(lines));
        let request = self.inner.authorize(request);
        let answer = self
            .inner
            .answer(request.send().await?)
            .await?
            .map_err(ClientError::Api)?;
        let value = serde_json::from_slice(&answer.body).map_err(|source| ClientError::Decode {
            status: answer.status,
            source,
        })?;
        Ok(respond(value, &answer.headers))
    }
}
