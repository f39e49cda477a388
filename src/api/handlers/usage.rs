//! `GET /usage`.

use bytes::Bytes;
use http::Request;

use super::{no_params, Handled};
use crate::api::Reply;
use crate::service::Caller;

/// The caller's usage in the current billing period; not counted as a call.
pub(crate) async fn get(caller: &Caller, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let usage = caller.usage().await?;
    Ok(Reply::json(&usage.value, Some(usage.quota)))
}
