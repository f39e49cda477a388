//! Admission of a request for another frontend served beside the REST routes on the same
//! listener (the MCP endpoint): the same head limit, key check, rate limit and body limits as
//! REST, and refusals answered with the same problem documents, so a client meets one API
//! whichever door it knocks on.

use std::error::Error;

use bytes::Bytes;
use http::header::{HeaderMap, ORIGIN};
use http::{Request, Response};
use http_body::Body;

use super::error::ApiError;
use super::routes::Failure;
use super::{api_key, read_body, Api, Reply, Trace};
use crate::domain::KeyId;
use crate::service::Caller;

/// A request the API let through: its head, its body, and the key it is served for.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// The request line and headers; its extensions hold a [`RateTokenTaken`].
    pub(crate) parts: http::request::Parts,
    /// The whole body, within [`super::ApiConfig::max_body_bytes`].
    pub(crate) body: Bytes,
    /// The valid key the request carries, its rate-limit token taken.
    pub(crate) caller: Caller,
}

/// In an admitted request's extensions: its key's rate-limit token is taken. A REST call the
/// frontend makes in this process for that request (an MCP tool call) carries it on, and is
/// not charged a second token ([`with_admitted_token`]). Only this crate makes one, so no
/// request from outside can claim it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RateTokenTaken {
    key_id: KeyId,
}

/// The caller of a REST call: marked as having its token when the call carries the
/// [`RateTokenTaken`] of an admitted request of the same key.
pub(crate) fn with_admitted_token(extensions: &http::Extensions, caller: Caller) -> Caller {
    match extensions.get::<RateTokenTaken>() {
        Some(taken) if taken.key_id == caller.key_id() => caller.rate_token_taken(),
        _ => caller,
    }
}

impl Api {
    /// Checks a request as REST checks its own: its head within `max_header_bytes`, then a
    /// valid key (a missing or bad one is the same 401 before anything else is read), then
    /// one token of the key's rate limit (the same bucket REST's requests take from: 429
    /// `rate_limited` beyond it), then its body read within `max_body_bytes` and
    /// `body_timeout`. A refusal is the problem response REST gives, with the key's quota
    /// headers once the key is known. Nothing is counted against the quota here.
    pub(crate) async fn admit<B>(&self, req: Request<B>) -> Result<Admitted, Response<Bytes>>
    where
        B: Body,
        B::Error: Into<Box<dyn Error + Send + Sync>>,
    {
        let mut trace = Trace::new();
        let (mut parts, body) = req.into_parts();
        if let Err(e) = self.check_head(&parts) {
            return Err(self.refuse_unrouted(&parts, e, trace).await);
        }
        let caller = api_key(&parts.headers)
            .and_then(|key| self.service().caller(&key).map_err(ApiError::from));
        let caller = match caller {
            Ok(caller) => caller,
            Err(refused) => {
                let refused = self
                    .charge_keyless(&parts.extensions)
                    .err()
                    .unwrap_or(refused);
                return Err(self.respond(&parts, Err(refused.into()), &trace).await);
            }
        };
        trace.key(&caller);
        // Every message, not only the tool calls REST meters: a protocol message costs the
        // server as much as a call, so a flood of them must meet the key's rate as REST's do.
        if let Err(e) = caller.check_rate() {
            return Err(self.respond(&parts, Err(e.into()), &trace).await);
        }
        parts.extensions.insert(RateTokenTaken {
            key_id: caller.key_id(),
        });
        let config = &self.inner.config;
        match read_body(&parts, body, config.max_body_bytes, config.body_timeout).await {
            Ok(body) => Ok(Admitted {
                parts,
                body,
                caller,
            }),
            Err(error) => Err(self.respond(&parts, Err(error.into()), &trace).await),
        }
    }

    /// Answers `OPTIONS` at the frontend's path before any admission, as REST answers it at
    /// its own: 204 with the path's methods in `Allow` and, to a browser's preflight from an
    /// allowed origin, the CORS headers. A preflight carries no key (browsers send none), so
    /// none is asked for and none is charged; one without a valid key counts against its
    /// address's budget, as REST's do ([`super::ApiConfig::unauthenticated_rate`]).
    pub(crate) async fn options(
        &self,
        parts: &http::request::Parts,
        allow: &'static str,
    ) -> Response<Bytes> {
        let mut trace = Trace::new();
        if let Err(e) = self.check_head(parts) {
            return self.refuse_unrouted(parts, e, trace).await;
        }
        let answer = match self.identify(&parts.headers, &parts.extensions, &mut trace) {
            Ok(()) => Ok(Reply::options(allow)),
            Err(over_budget) => Err(over_budget.into()),
        };
        self.respond(parts, answer, &trace).await
    }

    /// Adds the CORS headers to an answer the frontend made itself (not through the API's
    /// problem documents, which have them already), for the request whose [`cors_head`] is
    /// `head`.
    pub(crate) fn cors(&self, head: &http::request::Parts, headers: &mut HeaderMap) {
        self.inner.cors.apply(head, headers);
    }

    /// A refusal of a request already admitted for `caller`, answered as REST answers
    /// `error`, with the caller's quota as it was checked.
    pub(crate) async fn refuse(
        &self,
        parts: &http::request::Parts,
        caller: &Caller,
        error: ApiError,
    ) -> Response<Bytes> {
        let quota = Some(caller.quota_at_check());
        self.respond(parts, Err(Failure { error, quota }), &Trace::new())
            .await
    }
}

/// What the CORS policy reads of a request, its method and `Origin`, kept for the answer to
/// a request handed on whole (to the MCP SDK).
pub(crate) fn cors_head(parts: &http::request::Parts) -> http::request::Parts {
    let mut head = Request::new(());
    *head.method_mut() = parts.method.clone();
    if let Some(origin) = parts.headers.get(ORIGIN) {
        head.headers_mut().insert(ORIGIN, origin.clone());
    }
    head.into_parts().0
}
