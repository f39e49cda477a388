//! The handlers of the public API, one file per resource. Each reads its request into typed
//! values, makes one call through the request's [`Caller`](crate::service::Caller), and
//! renders the answer; errors go back to [`super::Api`] to be answered from the one table in
//! `api/error.rs`.

pub(crate) mod changes;
pub(crate) mod companies;
pub(crate) mod health;
pub(crate) mod jobs;
pub(crate) mod usage;
mod webhook_bodies;

pub(crate) mod webhooks;

use bytes::Bytes;
use http::Request;
use serde::Deserialize;

use super::error::ApiError;
use super::etag::{Asked, ETag};
use super::params::{Params, Takes};
use super::routes::Failure;
use super::Reply;
use crate::domain::DomainError;
use crate::service::{Metered, QuotaState, Read};

/// An endpoint that takes no query parameters.
pub(super) fn no_params(req: &Request<Bytes>) -> Result<(), ApiError> {
    Params::parse(req.uri().query(), &Takes::NONE).map(drop)
}

/// An endpoint that takes no body: none, or an empty JSON object, as a client library that
/// always sends one may.
pub(super) fn no_body(req: &Request<Bytes>) -> Result<(), ApiError> {
    /// An object without fields.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoFields {}
    if req.body().trim_ascii().is_empty() {
        return Ok(());
    }
    json_object::<NoFields>(req, &[], "without fields (or no body at all)").map(drop)
}

/// Refuses a body sent compressed (`Content-Encoding` other than `identity`): the API reads
/// bodies as sent.
pub(super) fn refuse_compressed(headers: &http::HeaderMap) -> Result<(), ApiError> {
    let compressed = headers
        .get_all(http::header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .find(|coding| !coding.is_empty() && !coding.eq_ignore_ascii_case(b"identity"));
    match compressed {
        Some(coding) => Err(ApiError::UnsupportedContentEncoding {
            coding: String::from_utf8_lossy(coding).chars().take(64).collect(),
        }),
        None => Ok(()),
    }
}

/// What a handler answers.
pub(crate) type Handled = Result<super::Reply, Failure>;

/// A 200 carrying the JSON of the answer tagged `tag`, kept by tag in the render cache, so
/// an answer asked for again is not put together again.
pub(super) fn kept_json(
    api: &super::Api,
    tag: ETag,
    quota: QuotaState,
    render: impl FnOnce() -> Vec<u8>,
) -> Reply {
    Reply::json_bytes(api.rendered().json(tag, render), Some(quota)).tagged(tag)
}

/// A conditional read whose answer is the client's copy: a 304 with this tag and quota.
pub(super) struct NotModified(ETag, QuotaState);

impl From<NotModified> for Reply {
    fn from(NotModified(tag, quota): NotModified) -> Reply {
        Reply::not_modified(tag, quota)
    }
}

/// A read's answer with its quota and tag, or the 304 that says the client's copy is
/// current: the tag names what `asked` asked for, in the version read.
pub(super) fn fresh<T>(
    asked: Asked,
    found: Metered<Read<T>>,
) -> Result<(T, QuotaState, ETag), NotModified> {
    let Metered { value: read, quota } = found;
    let tag = asked.tag(read.version);
    if read.held {
        Err(NotModified(tag, quota))
    } else {
        Ok((read.value, quota, tag))
    }
}

/// A JSON object body read as `T`, which takes the fields `takes`; `fields` says what they
/// are, for the error.
pub(super) fn json_object<T: serde::de::DeserializeOwned>(
    req: &Request<Bytes>,
    takes: &'static [&'static str],
    fields: &str,
) -> Result<T, ApiError> {
    refuse_compressed(req.headers())?;
    let json = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/json" || v.ends_with("+json"));
    if !json {
        return Err(ApiError::UnsupportedMediaType {
            expected: "application/json",
        });
    }
    // serde would also read a positional array into the struct: only an object is a body.
    if !req.body().trim_ascii_start().starts_with(b"{") {
        return Err(ApiError::InvalidBody(format!(
            "the body must be a JSON object {fields}"
        )));
    }
    let mut body = serde_json::Deserializer::from_slice(req.body());
    let value = serde_path_to_error::deserialize(&mut body).map_err(|e| {
        // A field of the wrong type or value is named, and so is a field the endpoint does
        // not take, as a query parameter would be; whatever else is wrong (the syntax, the
        // nesting) is the body's. Within a field's value a syntax error counts as a wrong
        // value: serde_json reports a number where a word such as `status` belongs as
        // "expected value", although the JSON itself is sound.
        let (data, syntax) = (e.inner().is_data(), e.inner().is_syntax());
        let key = match e.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.as_str()),
            _ => None,
        };
        match key.map(|k| (k, takes.iter().find(|f| **f == k))) {
            Some((_, Some(field))) if data || syntax => ApiError::InvalidParameter(
                DomainError::new(field, format!("has the wrong type or value: {}", e.inner())),
            ),
            Some((key, None)) if data => ApiError::unknown_parameter(key, takes),
            _ => ApiError::InvalidBody(format!(
                "the body must be a JSON object {fields}: {}",
                e.inner()
            )),
        }
    })?;
    // Whatever follows the object would otherwise be dropped unread, a second object too.
    body.end().map_err(|e| {
        ApiError::InvalidBody(format!(
            "the body must be one JSON object {fields}, with nothing after it: {e}"
        ))
    })?;
    Ok(value)
}
