//! The admin API's endpoints, declared once: the router, `Allow`, the metrics' route labels
//! and the OpenAPI document's paths are read from this table.

use crate::api::route_table::{Credential, Endpoint, Route, RouteTable, Verb};

/// What an endpoint of the admin API does; the router calls one handler for each, and the
/// compiler refuses a variant without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AdminOperation {
    UploadJobs,
    GetJob,
    PutJob,
    DeleteJob,
    CloseJob,
    UploadCompanies,
    LookupCompanies,
    GetCompany,
    PutCompany,
    DeleteCompany,
    ListKeys,
    CreateKey,
    GetKey,
    UpdateKey,
    RevokeKey,
    GetKeyUsage,
    ListWebhooks,
    GetWebhook,
    UpdateWebhook,
    Backup,
    Stats,
    GetOpenApi,
    Metrics,
    Livez,
    Readyz,
}

impl AdminOperation {
    /// Whether it reads its body as the body arrives (the bulk uploads) rather than whole.
    pub(crate) fn streams_body(self) -> bool {
        matches!(self, Self::UploadJobs | Self::UploadCompanies)
    }
}

use AdminOperation as Op;

const fn at(verb: Verb, op: Op) -> Endpoint<Op> {
    Endpoint { op, verb }
}

/// A route that needs the admin token.
const fn token(path: &'static str, endpoints: &'static [Endpoint<Op>]) -> Route<Op> {
    Route {
        path,
        credential: Credential::Required,
        endpoints,
    }
}

/// The health probes and the OpenAPI document say nothing of the data: no token.
const fn open(path: &'static str, endpoints: &'static [Endpoint<Op>]) -> Route<Op> {
    Route {
        path,
        credential: Credential::None,
        endpoints,
    }
}

/// Every route of the admin API, in the order of its metric labels.
pub(crate) const ADMIN_ROUTES: &[Route<Op>] = &[
    token("/admin/v1/jobs/bulk", &[at(Verb::Post, Op::UploadJobs)]),
    token(
        "/admin/v1/jobs/{id}",
        &[
            at(Verb::Get, Op::GetJob),
            at(Verb::Put, Op::PutJob),
            at(Verb::Delete, Op::DeleteJob),
        ],
    ),
    token("/admin/v1/jobs/{id}/close", &[at(Verb::Post, Op::CloseJob)]),
    token(
        "/admin/v1/companies/bulk",
        &[at(Verb::Post, Op::UploadCompanies)],
    ),
    token(
        "/admin/v1/companies/lookup",
        &[at(Verb::Post, Op::LookupCompanies)],
    ),
    token(
        "/admin/v1/companies/{id}",
        &[
            at(Verb::Get, Op::GetCompany),
            at(Verb::Put, Op::PutCompany),
            at(Verb::Delete, Op::DeleteCompany),
        ],
    ),
    token(
        "/admin/v1/keys",
        &[at(Verb::Get, Op::ListKeys), at(Verb::Post, Op::CreateKey)],
    ),
    token(
        "/admin/v1/keys/{id}",
        &[
            at(Verb::Get, Op::GetKey),
            at(Verb::Patch, Op::UpdateKey),
            at(Verb::Delete, Op::RevokeKey),
        ],
    ),
    token(
        "/admin/v1/keys/{id}/usage",
        &[at(Verb::Get, Op::GetKeyUsage)],
    ),
    token("/admin/v1/webhooks", &[at(Verb::Get, Op::ListWebhooks)]),
    token(
        "/admin/v1/webhooks/{id}",
        &[
            at(Verb::Get, Op::GetWebhook),
            at(Verb::Patch, Op::UpdateWebhook),
        ],
    ),
    token("/admin/v1/backup", &[at(Verb::Post, Op::Backup)]),
    token("/admin/v1/stats", &[at(Verb::Get, Op::Stats)]),
    open("/admin/v1/openapi.json", &[at(Verb::Get, Op::GetOpenApi)]),
    token("/metrics", &[at(Verb::Get, Op::Metrics)]),
    open("/livez", &[at(Verb::Get, Op::Livez)]),
    open("/readyz", &[at(Verb::Get, Op::Readyz)]),
];

/// The router over [`ADMIN_ROUTES`].
pub(crate) static ADMIN_ENDPOINTS: RouteTable<Op> = RouteTable::new(ADMIN_ROUTES);
