//! Paths and methods to handlers.

use std::borrow::Cow;

use bytes::Bytes;
use http::{Method, Request, StatusCode};

use super::error::ApiError;
use super::etag::ETag;
use super::handlers::{changes, companies, health, jobs, no_params, usage, webhooks, Handled};
use super::llms;
use super::metrics::RouteLabel;
use super::{api_key, Api, Reply, Trace, OPENAPI_JSON};
use crate::domain::DomainError;
use crate::service::{QuotaState, Refused, ServiceError};

/// An error answer, with the caller's quota for its headers when the caller is known.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: ApiError,
    /// `None` when no caller was authenticated, or its quota could not be read.
    pub(crate) quota: Option<QuotaState>,
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Self {
        Self { error, quota: None }
    }
}

impl From<DomainError> for Failure {
    fn from(e: DomainError) -> Self {
        ApiError::from(e).into()
    }
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Self {
        ApiError::from(e).into()
    }
}

/// A refusal of the service carries the quota as the service left it.
impl From<Refused> for Failure {
    fn from(refused: Refused) -> Self {
        Self {
            error: refused.error.into(),
            quota: refused.quota,
        }
    }
}

const PREFIX: &str = "/api/v1";

/// Every route: its path pattern, the methods the OpenAPI document lists for it (the
/// OpenAPI test reads these), and its `Allow` header: those methods, `HEAD` wherever `GET` is
/// (answered as `GET` without the body) and `OPTIONS`.
pub(crate) const ROUTES: &[(&str, &str, &str)] = &[
    ("/api/v1/jobs", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/jobs/{id}", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/companies", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/companies/{id}", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/changes", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/webhooks", "GET, POST", "GET, HEAD, POST, OPTIONS"),
    (
        "/api/v1/webhooks/{id}",
        "GET, PATCH, DELETE",
        "GET, HEAD, PATCH, DELETE, OPTIONS",
    ),
    (
        "/api/v1/webhooks/{id}/deliveries",
        "GET",
        "GET, HEAD, OPTIONS",
    ),
    ("/api/v1/webhooks/{id}/test", "POST", "POST, OPTIONS"),
    ("/api/v1/usage", "GET", "GET, HEAD, OPTIONS"),
    ("/api/v1/openapi.json", "GET", "GET, HEAD, OPTIONS"),
];

/// The route pattern a path matches, with the path's `{id}` segment.
fn pattern_of<'p>(segments: &[&'p str]) -> Option<(&'static str, Option<&'p str>)> {
    // A trailing slash (or `//`) names no endpoint, not an empty id.
    if segments.contains(&"") {
        return None;
    }
    Some(match segments {
        ["openapi.json"] => ("/api/v1/openapi.json", None),
        ["jobs"] => ("/api/v1/jobs", None),
        ["jobs", id] => ("/api/v1/jobs/{id}", Some(*id)),
        ["companies"] => ("/api/v1/companies", None),
        ["companies", id] => ("/api/v1/companies/{id}", Some(*id)),
        ["changes"] => ("/api/v1/changes", None),
        ["webhooks"] => ("/api/v1/webhooks", None),
        ["webhooks", id] => ("/api/v1/webhooks/{id}", Some(*id)),
        ["webhooks", id, "deliveries"] => ("/api/v1/webhooks/{id}/deliveries", Some(*id)),
        ["webhooks", id, "test"] => ("/api/v1/webhooks/{id}/test", Some(*id)),
        ["usage"] => ("/api/v1/usage", None),
        _ => return None,
    })
}

/// Finds the handler of a request and calls it with the request's caller: the key is
/// checked once, here, and every handler's call goes through that caller. What is answered
/// without a caller is charged to the client's address
/// ([`ApiConfig::unauthenticated_rate`](super::ApiConfig::unauthenticated_rate)).
pub(crate) async fn route(api: &Api, req: &Request<Bytes>, trace: &mut Trace) -> Handled {
    if let Some(probe) = health::Probe::of(req.uri().path()) {
        trace.route(RouteLabel::probe(probe));
        return health::answer(api, req, probe).await;
    }
    if req.uri().path() == llms::PATH {
        trace.route(RouteLabel::LLMS_TXT);
        let answered = llms::answer(req);
        api.identify(req.headers(), req.extensions(), trace)?;
        return answered;
    }
    let segments = segments(req.uri().path());
    let answered = match before_key(req, segments.as_deref(), trace) {
        Ok(Step::Call {
            pattern,
            id,
            method,
        }) => return call(api, req, pattern, id.unwrap_or_default(), method, trace).await,
        Ok(Step::Answered(reply)) => Ok(reply),
        Err(refused) => Err(refused),
    };
    api.identify(req.headers(), req.extensions(), trace)?;
    answered
}

/// The route label of a path, for a request refused before it was routed (its head or body
/// too large, its body too slow).
pub(crate) fn label_of(path: &str) -> RouteLabel {
    if let Some(probe) = health::Probe::of(path) {
        return RouteLabel::probe(probe);
    }
    if path == llms::PATH {
        return RouteLabel::LLMS_TXT;
    }
    let Some(decoded) = segments(path) else {
        return RouteLabel::UNMATCHED;
    };
    let segments: Vec<&str> = decoded.iter().map(|s| s.as_ref()).collect();
    pattern_of(&segments)
        .and_then(|(pattern, _)| ROUTES.iter().position(|(p, _, _)| *p == pattern))
        .map_or(RouteLabel::UNMATCHED, RouteLabel::route)
}

/// The segments of a path under `/api/v1/`, percent-decoded; `None` for any other path.
///
/// A segment is read percent-decoded: RFC 3986 (6.2.2.2) makes an encoded unreserved
/// character the character itself, and a client library may encode more, such as the braces
/// of a braced id (`%7B…%7D`). One whose bytes are not UTF-8 stays as sent, which matches no
/// path and is no id, and so is named as sent.
fn segments(path: &str) -> Option<Vec<Cow<'_, str>>> {
    let rest = path.strip_prefix(PREFIX)?.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|s| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8()
                    .unwrap_or(Cow::Borrowed(s))
            })
            .collect(),
    )
}

/// Where a request goes once its path and method are known, before its key is looked at.
enum Step<'r> {
    /// An endpoint, called through the request's caller.
    Call {
        pattern: &'static str,
        id: Option<&'r str>,
        method: &'r Method,
    },
    /// Answered without a key: `OPTIONS` and the OpenAPI document.
    Answered(Reply),
}

/// Reads the path and method: no such path, no such method, or what needs no key, are
/// answered here.
fn before_key<'r>(
    req: &'r Request<Bytes>,
    decoded: Option<&'r [Cow<'r, str>]>,
    trace: &mut Trace,
) -> Result<Step<'r>, Failure> {
    let no_route = || ApiError::NoRoute {
        under_api: req.uri().path().starts_with(PREFIX),
    };
    let segments: Vec<&str> = decoded
        .ok_or_else(no_route)?
        .iter()
        .map(|s| s.as_ref())
        .collect();
    let (pattern, id) = pattern_of(&segments).ok_or_else(no_route)?;
    let index = ROUTES
        .iter()
        .position(|(p, _, _)| *p == pattern)
        .ok_or_else(no_route)?;
    let (_, methods, allow) = ROUTES[index];
    trace.route(RouteLabel::route(index));
    if req.method() == Method::OPTIONS {
        // Says what the path takes, like the 405 does: no key needed, nothing metered.
        return Ok(Step::Answered(Reply::options(allow)));
    }
    let method = match req.method() {
        &Method::HEAD => &Method::GET,
        other => other,
    };
    if !methods.split(", ").any(|m| m == method.as_str()) {
        return Err(ApiError::MethodNotAllowed { allow }.into());
    }
    if pattern == "/api/v1/openapi.json" {
        no_params(req)?;
        static TAG: std::sync::OnceLock<ETag> = std::sync::OnceLock::new();
        return Ok(Step::Answered(static_document(
            req,
            &TAG,
            "openapi",
            OPENAPI_JSON,
            None,
        )));
    }
    Ok(Step::Call {
        pattern,
        id,
        method,
    })
}

/// A document the build holds, answered without a key and tagged: `304` while the client's
/// copy is current. `content_type` `None` is JSON.
pub(crate) fn static_document(
    req: &Request<Bytes>,
    tag: &'static std::sync::OnceLock<ETag>,
    name: &str,
    body: &'static str,
    content_type: Option<&'static str>,
) -> Reply {
    let tag = *tag.get_or_init(|| ETag::of_bytes(name, body.as_bytes()));
    let mut reply = if tag.matched_by(req.headers()) {
        Reply::new(StatusCode::NOT_MODIFIED, None, None)
    } else {
        Reply::new(
            StatusCode::OK,
            Some(Bytes::from_static(body.as_bytes())),
            None,
        )
    };
    reply.content_type = content_type.or(reply.content_type);
    reply.tagged(tag)
}

/// Calls an endpoint's handler through the request's caller.
async fn call(
    api: &Api,
    req: &Request<Bytes>,
    pattern: &'static str,
    id: &str,
    method: &Method,
    trace: &mut Trace,
) -> Handled {
    // A missing or invalid key is a 401 before any parameter is looked at.
    let caller = match api_key(req.headers())
        .map_err(Failure::from)
        .and_then(|key| api.service().caller(&key).map_err(Failure::from))
    {
        Ok(caller) => {
            trace.key(&caller);
            // A call an admitted MCP request makes in this process: its token is taken.
            #[cfg(feature = "mcp")]
            let caller = super::admission::with_admitted_token(req.extensions(), caller);
            caller
        }
        Err(refused) => {
            api.charge_keyless(req.extensions())?;
            return Err(refused);
        }
    };
    match (pattern, method) {
        ("/api/v1/jobs", _) => jobs::search(api, &caller, req).await,
        ("/api/v1/jobs/{id}", _) => jobs::get(api, &caller, id, req).await,
        ("/api/v1/companies", _) => companies::list(api, &caller, req).await,
        ("/api/v1/companies/{id}", _) => companies::get(api, &caller, id, req).await,
        ("/api/v1/changes", _) => changes::list(api, &caller, req).await,
        ("/api/v1/webhooks", &Method::POST) => webhooks::create(&caller, req).await,
        ("/api/v1/webhooks", _) => webhooks::list(&caller, req).await,
        ("/api/v1/webhooks/{id}", &Method::PATCH) => webhooks::update(&caller, id, req).await,
        ("/api/v1/webhooks/{id}", &Method::DELETE) => webhooks::delete(&caller, id, req).await,
        ("/api/v1/webhooks/{id}", _) => webhooks::get(&caller, id, req).await,
        ("/api/v1/webhooks/{id}/deliveries", _) => webhooks::deliveries(&caller, id, req).await,
        ("/api/v1/webhooks/{id}/test", _) => webhooks::test(&caller, id, req).await,
        ("/api/v1/usage", _) => usage::get(&caller, req).await,
        _ => Err(ApiError::NoRoute { under_api: true }.into()),
    }
}
