//! The admin API's paths and methods to handlers.

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body::Body;

use super::{backup, bulk, companies, jobs, keys, webhooks, AdminApi, ADMIN_OPENAPI_JSON};
use crate::api::error::ApiError;
use crate::api::handlers::health::{self, Probe};
use crate::api::handlers::{no_params, Handled};
use crate::api::metrics::RouteLabel;
use crate::api::Reply;

/// Every admin route: its path pattern, the methods it takes, and its `Allow` header.
pub(crate) const ROUTES: &[(&str, &str, &str)] = &[
    ("/admin/v1/jobs/bulk", "POST", "POST, OPTIONS"),
    (
        "/admin/v1/jobs/{id}",
        "GET, PUT, DELETE",
        "GET, HEAD, PUT, DELETE, OPTIONS",
    ),
    ("/admin/v1/jobs/{id}/close", "POST", "POST, OPTIONS"),
    ("/admin/v1/companies/bulk", "POST", "POST, OPTIONS"),
    ("/admin/v1/companies/lookup", "POST", "POST, OPTIONS"),
    (
        "/admin/v1/companies/{id}",
        "GET, PUT, DELETE",
        "GET, HEAD, PUT, DELETE, OPTIONS",
    ),
    ("/admin/v1/keys", "GET, POST", "GET, HEAD, POST, OPTIONS"),
    (
        "/admin/v1/keys/{id}",
        "GET, PATCH, DELETE",
        "GET, HEAD, PATCH, DELETE, OPTIONS",
    ),
    ("/admin/v1/keys/{id}/usage", "GET", "GET, HEAD, OPTIONS"),
    ("/admin/v1/webhooks", "GET", "GET, HEAD, OPTIONS"),
    (
        "/admin/v1/webhooks/{id}",
        "GET, PATCH",
        "GET, HEAD, PATCH, OPTIONS",
    ),
    ("/admin/v1/backup", "POST", "POST, OPTIONS"),
    ("/admin/v1/stats", "GET", "GET, HEAD, OPTIONS"),
    ("/admin/v1/openapi.json", "GET", "GET, HEAD, OPTIONS"),
    ("/metrics", "GET", "GET, HEAD, OPTIONS"),
    ("/livez", "GET", "GET, HEAD, OPTIONS"),
    ("/readyz", "GET", "GET, HEAD, OPTIONS"),
];

/// The route a path matches, before its method is looked at.
pub(super) struct Route {
    pattern: &'static str,
    methods: &'static str,
    allow: &'static str,
    id: String,
}

/// A route with its method: what to call.
pub(super) enum Call {
    /// `OPTIONS`: the path's methods, answered without a token.
    Options(&'static str),
    /// An endpoint; `HEAD` is called as `GET`.
    Endpoint {
        pattern: &'static str,
        method: Method,
        id: String,
    },
}

impl Route {
    /// The route of a request's path; 404 for any other.
    pub(super) fn of(parts: &http::request::Parts) -> Result<Self, ApiError> {
        let path = parts.uri.path();
        let (pattern, id) = pattern_of(path).ok_or(ApiError::NoAdminRoute)?;
        let (_, methods, allow) = ROUTES
            .iter()
            .find(|(p, _, _)| *p == pattern)
            .ok_or(ApiError::NoAdminRoute)?;
        Ok(Self {
            pattern,
            methods,
            allow,
            id: id.to_owned(),
        })
    }

    /// The route as a metric and access-log label.
    pub(super) fn label(&self) -> RouteLabel {
        RouteLabel::admin(self.pattern)
    }

    /// Whether the route needs the admin token: all but the health probes and the OpenAPI
    /// document, which say nothing of the data.
    pub(super) fn needs_token(&self) -> bool {
        !matches!(
            self.pattern,
            "/livez" | "/readyz" | "/admin/v1/openapi.json"
        )
    }

    /// The call a method makes on this route; 405 for a method it does not take.
    pub(super) fn with_method(self, method: &Method) -> Result<Call, ApiError> {
        if method == Method::OPTIONS {
            return Ok(Call::Options(self.allow));
        }
        let method = if method == Method::HEAD {
            Method::GET
        } else {
            method.clone()
        };
        if !self.methods.split(", ").any(|m| m == method.as_str()) {
            return Err(ApiError::MethodNotAllowed { allow: self.allow });
        }
        Ok(Call::Endpoint {
            pattern: self.pattern,
            method,
            id: self.id,
        })
    }
}

impl Call {
    /// Whether the call reads its body as it arrives (the bulk uploads).
    pub(super) fn streams_body(&self) -> bool {
        matches!(
            self,
            Call::Endpoint { pattern, .. } if pattern.ends_with("/bulk")
        )
    }
}

/// The pattern a path matches, with its `{id}` segment (empty when it has none).
fn pattern_of(path: &str) -> Option<(&'static str, &str)> {
    match path {
        "/livez" => return Some(("/livez", "")),
        "/readyz" => return Some(("/readyz", "")),
        "/metrics" => return Some(("/metrics", "")),
        _ => {}
    }
    let rest = path.strip_prefix("/admin/v1/")?;
    let segments: Vec<&str> = rest.split('/').collect();
    if segments.contains(&"") {
        return None;
    }
    Some(match segments.as_slice() {
        ["openapi.json"] => ("/admin/v1/openapi.json", ""),
        ["jobs", "bulk"] => ("/admin/v1/jobs/bulk", ""),
        ["jobs", id] => ("/admin/v1/jobs/{id}", id),
        ["jobs", id, "close"] => ("/admin/v1/jobs/{id}/close", id),
        ["companies", "bulk"] => ("/admin/v1/companies/bulk", ""),
        ["companies", "lookup"] => ("/admin/v1/companies/lookup", ""),
        ["companies", id] => ("/admin/v1/companies/{id}", id),
        ["keys"] => ("/admin/v1/keys", ""),
        ["keys", id] => ("/admin/v1/keys/{id}", id),
        ["keys", id, "usage"] => ("/admin/v1/keys/{id}/usage", id),
        ["backup"] => ("/admin/v1/backup", ""),
        ["stats"] => ("/admin/v1/stats", ""),
        ["webhooks"] => ("/admin/v1/webhooks", ""),
        ["webhooks", id] => ("/admin/v1/webhooks/{id}", id),
        _ => return None,
    })
}

/// Calls an endpoint whose body has been read.
pub(super) async fn call(admin: &AdminApi, req: &Request<Bytes>, call: Call) -> Handled {
    let (pattern, method, id) = match call {
        Call::Options(allow) => return Ok(Reply::options(allow)),
        Call::Endpoint {
            pattern,
            method,
            id,
        } => (pattern, method, id),
    };
    let service = admin.service();
    let id = id.as_str();
    match (pattern, method) {
        ("/livez", Method::GET) => health::answer(admin.api(), req, Probe::Live).await,
        ("/readyz", Method::GET) => health::answer(admin.api(), req, Probe::Ready).await,
        ("/admin/v1/openapi.json", Method::GET) => {
            no_params(req)?;
            Ok(Reply::new(
                StatusCode::OK,
                Some(Bytes::from_static(ADMIN_OPENAPI_JSON.as_bytes())),
                None,
            ))
        }
        ("/admin/v1/jobs/{id}", Method::PUT) => jobs::put(service, id, req).await,
        ("/admin/v1/jobs/{id}", Method::DELETE) => jobs::delete(service, id, req).await,
        ("/admin/v1/jobs/{id}", Method::GET) => jobs::get(service, id, req).await,
        ("/admin/v1/jobs/{id}/close", Method::POST) => jobs::close(service, id, req).await,
        ("/admin/v1/companies/lookup", Method::POST) => companies::lookup(service, req).await,
        ("/admin/v1/companies/{id}", Method::PUT) => companies::put(service, id, req).await,
        ("/admin/v1/companies/{id}", Method::DELETE) => companies::delete(service, id, req).await,
        ("/admin/v1/companies/{id}", Method::GET) => companies::get(service, id, req).await,
        ("/admin/v1/keys", Method::POST) => keys::create(service, req).await,
        ("/admin/v1/keys", Method::GET) => keys::list(service, req).await,
        ("/admin/v1/keys/{id}", Method::PATCH) => keys::update(service, id, req).await,
        ("/admin/v1/keys/{id}", Method::DELETE) => keys::revoke(service, id, req).await,
        ("/admin/v1/keys/{id}", Method::GET) => keys::get(service, id, req).await,
        ("/admin/v1/keys/{id}/usage", Method::GET) => keys::usage(service, id, req).await,
        ("/admin/v1/webhooks", Method::GET) => webhooks::list(service, req).await,
        ("/admin/v1/backup", Method::POST) => backup::create(service, req).await,
        ("/admin/v1/stats", Method::GET) => {
            no_params(req)?;
            Ok(Reply::json(&service.stats()?, None))
        }
        ("/metrics", Method::GET) => {
            no_params(req)?;
            let text = admin.api().metrics_text();
            Ok(Reply::text(text, crate::api::METRICS_CONTENT_TYPE))
        }
        ("/admin/v1/webhooks/{id}", Method::PATCH) => webhooks::update(service, id, req).await,
        ("/admin/v1/webhooks/{id}", Method::GET) => webhooks::get(service, id, req).await,
        // Every pattern and method of ROUTES has its arm above.
        _ => Err(ApiError::NoAdminRoute.into()),
    }
}

/// Calls a bulk upload with its body as it arrives.
pub(super) async fn call_streaming<B>(
    admin: &AdminApi,
    parts: &http::request::Parts,
    call: Call,
    body: B,
) -> Handled
where
    B: Body + Send + Unpin,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match call {
        Call::Endpoint {
            pattern: "/admin/v1/jobs/bulk",
            ..
        } => bulk::upload(admin, parts, body, bulk::Kind::Jobs).await,
        Call::Endpoint {
            pattern: "/admin/v1/companies/bulk",
            ..
        } => bulk::upload(admin, parts, body, bulk::Kind::Companies).await,
        _ => Err(ApiError::NoAdminRoute.into()),
    }
}
