//! The public API's endpoints, declared once: the router, `Allow`, the metrics' route labels
//! and the OpenAPI document's paths are read from this table.

use super::route_table::{Credential, Endpoint, Route, RouteTable, Verb};

/// What an endpoint of the public API does; the router calls one handler for each, and the
/// compiler refuses a variant without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    SearchJobs,
    GetJob,
    ListCompanies,
    GetCompany,
    ListChanges,
    ListWebhooks,
    CreateWebhook,
    GetWebhook,
    UpdateWebhook,
    DeleteWebhook,
    ListDeliveries,
    TestWebhook,
    GetUsage,
    GetOpenApi,
}

/// Where every path of the public API starts.
pub(crate) const PREFIX: &str = "/api/v1";

const fn at(verb: Verb, op: Operation) -> Endpoint<Operation> {
    Endpoint { op, verb }
}

/// A route that needs an API key.
const fn keyed(path: &'static str, endpoints: &'static [Endpoint<Operation>]) -> Route<Operation> {
    Route {
        path,
        credential: Credential::Required,
        endpoints,
    }
}

/// Every route of the public API, in the order of its metric labels.
pub(crate) const ROUTES: &[Route<Operation>] = &[
    keyed("/api/v1/jobs", &[at(Verb::Get, Operation::SearchJobs)]),
    keyed("/api/v1/jobs/{id}", &[at(Verb::Get, Operation::GetJob)]),
    keyed(
        "/api/v1/companies",
        &[at(Verb::Get, Operation::ListCompanies)],
    ),
    keyed(
        "/api/v1/companies/{id}",
        &[at(Verb::Get, Operation::GetCompany)],
    ),
    keyed("/api/v1/changes", &[at(Verb::Get, Operation::ListChanges)]),
    keyed(
        "/api/v1/webhooks",
        &[
            at(Verb::Get, Operation::ListWebhooks),
            at(Verb::Post, Operation::CreateWebhook),
        ],
    ),
    keyed(
        "/api/v1/webhooks/{id}",
        &[
            at(Verb::Get, Operation::GetWebhook),
            at(Verb::Patch, Operation::UpdateWebhook),
            at(Verb::Delete, Operation::DeleteWebhook),
        ],
    ),
    keyed(
        "/api/v1/webhooks/{id}/deliveries",
        &[at(Verb::Get, Operation::ListDeliveries)],
    ),
    keyed(
        "/api/v1/webhooks/{id}/test",
        &[at(Verb::Post, Operation::TestWebhook)],
    ),
    keyed("/api/v1/usage", &[at(Verb::Get, Operation::GetUsage)]),
    Route {
        path: "/api/v1/openapi.json",
        credential: Credential::None,
        endpoints: &[at(Verb::Get, Operation::GetOpenApi)],
    },
];

/// The router over [`ROUTES`].
pub(crate) static ENDPOINTS: RouteTable<Operation> = RouteTable::new(ROUTES);
