//! The admin API's requests to handlers, by the routes of [`ADMIN_ENDPOINTS`].

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body::Body;

use super::endpoints::{AdminOperation as Op, ADMIN_ENDPOINTS};
use super::{backup, bulk, companies, jobs, keys, webhooks, AdminApi};
use crate::api::error::ApiError;
use crate::api::handlers::health::{self, Probe};
use crate::api::handlers::{no_params, Handled};
use crate::api::metrics::RouteLabel;
use crate::api::openapi::admin_openapi_json;
use crate::api::route_table::{split, Called, Credential, NotAllowed};
use crate::api::Reply;

/// The route a path matches, before its method is looked at.
pub(super) struct Route {
    index: usize,
    id: String,
}

/// A route with its method: what to call.
pub(super) enum Call {
    /// `OPTIONS`: the path's methods, answered without a token.
    Options(&'static str),
    /// An endpoint; `HEAD` is called as `GET`.
    Endpoint { op: Op, id: String },
}

impl Route {
    /// The route of a request's path; 404 for any other.
    pub(super) fn of(parts: &http::request::Parts) -> Result<Self, ApiError> {
        let matched = split(parts.uri.path())
            .and_then(|segments| ADMIN_ENDPOINTS.find(&segments))
            .ok_or(ApiError::NoAdminRoute)?;
        Ok(Self {
            index: matched.index,
            id: matched.id.to_owned(),
        })
    }

    /// The route as a metric and access-log label.
    pub(super) fn label(&self) -> RouteLabel {
        RouteLabel::admin(self.index)
    }

    /// Whether the route needs the admin token: all but the health probes and the OpenAPI
    /// document, which say nothing of the data.
    pub(super) fn needs_token(&self) -> bool {
        ADMIN_ENDPOINTS.route(self.index).credential == Credential::Required
    }

    /// The call a method makes on this route; 405 for a method it does not take.
    pub(super) fn with_method(self, method: &http::Method) -> Result<Call, ApiError> {
        match ADMIN_ENDPOINTS.call(self.index, method) {
            Ok(Called::Options(allow)) => Ok(Call::Options(allow)),
            Ok(Called::Endpoint(endpoint)) => Ok(Call::Endpoint {
                op: endpoint.op,
                id: self.id,
            }),
            Err(NotAllowed(allow)) => Err(ApiError::MethodNotAllowed { allow }),
        }
    }
}

impl Call {
    /// Whether the call reads its body as it arrives (the bulk uploads).
    pub(super) fn streams_body(&self) -> bool {
        matches!(self, Call::Endpoint { op, .. } if op.streams_body())
    }
}

/// Calls an endpoint whose body has been read.
pub(super) async fn call(admin: &AdminApi, req: &Request<Bytes>, call: Call) -> Handled {
    let (op, id) = match call {
        Call::Options(allow) => return Ok(Reply::options(allow)),
        Call::Endpoint { op, id } => (op, id),
    };
    let service = admin.service();
    let id = id.as_str();
    match op {
        Op::Livez => health::answer(admin.api(), req, Probe::Live).await,
        Op::Readyz => health::answer(admin.api(), req, Probe::Ready).await,
        Op::GetOpenApi => {
            no_params(req)?;
            Ok(Reply::new(
                StatusCode::OK,
                Some(Bytes::from_static(admin_openapi_json().as_bytes())),
                None,
            ))
        }
        Op::PutJob => jobs::put(service, id, req).await,
        Op::DeleteJob => jobs::delete(service, id, req).await,
        Op::GetJob => jobs::get(service, id, req).await,
        Op::CloseJob => jobs::close(service, id, req).await,
        Op::CloseUnseenJobs => jobs::close_unseen(service, req).await,
        Op::LookupCompanies => companies::lookup(service, req).await,
        Op::PutCompany => companies::put(service, id, req).await,
        Op::DeleteCompany => companies::delete(service, id, req).await,
        Op::GetCompany => companies::get(service, id, req).await,
        Op::CreateKey => keys::create(service, req).await,
        Op::ListKeys => keys::list(service, req).await,
        Op::UpdateKey => keys::update(service, id, req).await,
        Op::RevokeKey => keys::revoke(service, id, req).await,
        Op::GetKey => keys::get(service, id, req).await,
        Op::GetKeyUsage => keys::usage(service, id, req).await,
        Op::ListWebhooks => webhooks::list(service, req).await,
        Op::UpdateWebhook => webhooks::update(service, id, req).await,
        Op::GetWebhook => webhooks::get(service, id, req).await,
        Op::Backup => backup::create(service, req).await,
        Op::Stats => {
            no_params(req)?;
            Ok(Reply::json(&service.stats()?, None))
        }
        Op::Metrics => {
            no_params(req)?;
            let text = admin.api().metrics_text();
            Ok(Reply::text(text, crate::api::METRICS_CONTENT_TYPE))
        }
        // Their bodies are read as they arrive ([`call_streaming`]), never whole.
        Op::UploadJobs | Op::UploadCompanies => Err(ApiError::NoAdminRoute.into()),
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
    let kind = match call {
        Call::Endpoint {
            op: Op::UploadJobs, ..
        } => bulk::Kind::Jobs,
        Call::Endpoint {
            op: Op::UploadCompanies,
            ..
        } => bulk::Kind::Companies,
        _ => return Err(ApiError::NoAdminRoute.into()),
    };
    bulk::upload(admin, parts, body, kind).await
}
