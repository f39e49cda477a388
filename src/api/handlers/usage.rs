//! `GET /usage`.

use bytes::Bytes;
use http::Request;

use super::{no_params, Handled};
use crate::api::etag::ETag;
use crate::api::Reply;
use crate::service::Caller;

/// The caller's usage in the current billing period; not counted as a call. Tagged by its
/// bytes: the report changes with every counted call, and a client polling it while making
/// none gets 304s.
pub(crate) async fn get(caller: &Caller, req: &Request<Bytes>) -> Handled {
    no_params(req)?;
    let usage = caller.usage().await?;
    let reply = Reply::json(&usage.value, Some(usage.quota));
    let tag = ETag::of_bytes("usage", reply.body.as_deref().unwrap_or_default());
    if tag.matched_by(req.headers()) {
        return Ok(Reply::not_modified(tag, usage.quota));
    }
    Ok(reply.tagged(tag))
}
