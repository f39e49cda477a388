//! Paths and methods to handlers.

use std::borrow::Cow;

use bytes::Bytes;
use http::{Request, StatusCode};

use super::endpoints::{Operation, ENDPOINTS, PREFIX};
use super::error::ApiError;
use super::etag::ETag;
use super::handlers::{changes, companies, health, jobs, no_params, usage, webhooks, Handled};
use super::llms;
use super::metrics::RouteLabel;
use super::route_table::{Called, Credential, NotAllowed};
use super::{api_key, openapi_json, Api, Reply, Trace};
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
        Ok(Step::Call { op, id }) => return call(api, req, op, id, trace).await,
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
    ENDPOINTS
        .find(&segments)
        .map_or(RouteLabel::UNMATCHED, |m| RouteLabel::route(m.index))
}

/// The segments of a path under `/api/v1/` (after its leading `/`), percent-decoded; `None`
/// for any other path.
///
/// A segment is read percent-decoded: RFC 3986 (6.2.2.2) makes an encoded unreserved
/// character the character itself, and a client library may encode more, such as the braces
/// of a braced id (`%7B…%7D`). One whose bytes are not UTF-8 stays as sent, which matches no
/// path and is no id, and so is named as sent.
fn segments(path: &str) -> Option<Vec<Cow<'_, str>>> {
    let rest = path.strip_prefix(PREFIX)?.strip_prefix('/')?;
    let prefix = PREFIX.trim_start_matches('/').split('/').map(Cow::Borrowed);
    Some(
        prefix
            .chain(rest.split('/').map(|s| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8()
                    .unwrap_or(Cow::Borrowed(s))
            }))
            .collect(),
    )
}

/// Where a request goes once its path and method are known, before its key is looked at.
enum Step<'r> {
    /// An endpoint, called through the request's caller with the path's `{id}` segment.
    Call { op: Operation, id: &'r str },
    /// Answered without a key: `OPTIONS` and the OpenAPI document.
    Answered(Reply),
}

/// Reads the path and method: no such path, no such method, or what needs no key, are
/// answered here.
fn before_key<'r>(
    req: &Request<Bytes>,
    decoded: Option<&'r [Cow<'r, str>]>,
    trace: &mut Trace,
) -> Result<Step<'r>, Failure> {
    let no_route = || ApiError::NoRoute {
        under_api: req.uri().path().starts_with(PREFIX),
    };
    let segments: Vec<&'r str> = decoded
        .ok_or_else(no_route)?
        .iter()
        .map(|s| s.as_ref())
        .collect();
    let matched = ENDPOINTS.find(&segments).ok_or_else(no_route)?;
    trace.route(RouteLabel::route(matched.index));
    let endpoint = match ENDPOINTS.call(matched.index, req.method()) {
        // Says what the path takes, like the 405 does: no key needed, nothing metered.
        Ok(Called::Options(allow)) => return Ok(Step::Answered(Reply::options(allow))),
        Ok(Called::Endpoint(endpoint)) => endpoint,
        Err(NotAllowed(allow)) => return Err(ApiError::MethodNotAllowed { allow }.into()),
    };
    if ENDPOINTS.route(matched.index).credential == Credential::None {
        return Ok(Step::Answered(openapi_document(req)?));
    }
    Ok(Step::Call {
        op: endpoint.op,
        id: matched.id,
    })
}

/// `GET /openapi.json`, the one endpoint that needs no key.
fn openapi_document(req: &Request<Bytes>) -> Result<Reply, ApiError> {
    no_params(req)?;
    static TAG: std::sync::OnceLock<ETag> = std::sync::OnceLock::new();
    Ok(static_document(req, &TAG, "openapi", openapi_json(), None))
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
    op: Operation,
    id: &str,
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
    match op {
        Operation::SearchJobs => jobs::search(api, &caller, req).await,
        Operation::GetJob => jobs::get(api, &caller, id, req).await,
        Operation::SimilarJobs => jobs::similar(api, &caller, id, req).await,
        Operation::ListCompanies => companies::list(api, &caller, req).await,
        Operation::GetCompany => companies::get(api, &caller, id, req).await,
        Operation::ListChanges => changes::list(api, &caller, req).await,
        Operation::ListWebhooks => webhooks::list(&caller, req).await,
        Operation::CreateWebhook => webhooks::create(&caller, req).await,
        Operation::GetWebhook => webhooks::get(&caller, id, req).await,
        Operation::UpdateWebhook => webhooks::update(&caller, id, req).await,
        Operation::DeleteWebhook => webhooks::delete(&caller, id, req).await,
        Operation::ListDeliveries => webhooks::deliveries(&caller, id, req).await,
        Operation::TestWebhook => webhooks::test(&caller, id, req).await,
        Operation::GetUsage => usage::get(&caller, req).await,
        Operation::GetOpenApi => openapi_document(req).map_err(Failure::from),
    }
}
