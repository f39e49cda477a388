//! The public API's endpoints, declared once: the router, `Allow`, the metrics' route labels
//! and the OpenAPI document's paths are read from this table.

use serde_json::json;

use super::openapi::public as params;
use super::openapi::{params_of, Answer, Content, Doc, Param, RequestBody};
use super::params::FILTER_PARAMS;
use super::route_table::{Credential, Endpoint, Route, RouteTable, Verb};

/// What an endpoint of the public API does; the router calls one handler for each, and the
/// compiler refuses a variant without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    SearchJobs,
    GetJob,
    SimilarJobs,
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

const fn at(verb: Verb, op: Operation, doc: &'static Doc) -> Endpoint<Operation> {
    Endpoint { op, verb, doc }
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
    keyed(
        "/api/v1/jobs",
        &[at(Verb::Get, Operation::SearchJobs, &SEARCH_JOBS)],
    ),
    keyed(
        "/api/v1/jobs/{id}",
        &[at(Verb::Get, Operation::GetJob, &GET_JOB)],
    ),
    keyed(
        "/api/v1/jobs/{id}/similar",
        &[at(Verb::Get, Operation::SimilarJobs, &SIMILAR_JOBS)],
    ),
    keyed(
        "/api/v1/companies",
        &[at(Verb::Get, Operation::ListCompanies, &LIST_COMPANIES)],
    ),
    keyed(
        "/api/v1/companies/{id}",
        &[at(Verb::Get, Operation::GetCompany, &GET_COMPANY)],
    ),
    keyed(
        "/api/v1/changes",
        &[at(Verb::Get, Operation::ListChanges, &LIST_CHANGES)],
    ),
    keyed(
        "/api/v1/webhooks",
        &[
            at(Verb::Get, Operation::ListWebhooks, &LIST_WEBHOOKS),
            at(Verb::Post, Operation::CreateWebhook, &CREATE_WEBHOOK),
        ],
    ),
    keyed(
        "/api/v1/webhooks/{id}",
        &[
            at(Verb::Get, Operation::GetWebhook, &GET_WEBHOOK),
            at(Verb::Patch, Operation::UpdateWebhook, &UPDATE_WEBHOOK),
            at(Verb::Delete, Operation::DeleteWebhook, &DELETE_WEBHOOK),
        ],
    ),
    keyed(
        "/api/v1/webhooks/{id}/deliveries",
        &[at(
            Verb::Get,
            Operation::ListDeliveries,
            &LIST_WEBHOOK_DELIVERIES,
        )],
    ),
    keyed(
        "/api/v1/webhooks/{id}/test",
        &[at(Verb::Post, Operation::TestWebhook, &TEST_WEBHOOK)],
    ),
    keyed(
        "/api/v1/usage",
        &[at(Verb::Get, Operation::GetUsage, &GET_USAGE)],
    ),
    Route {
        path: "/api/v1/openapi.json",
        credential: Credential::None,
        endpoints: &[at(Verb::Get, Operation::GetOpenApi, &GET_OPEN_API)],
    },
];

/// The router over [`ROUTES`].
pub(crate) static ENDPOINTS: RouteTable<Operation> = RouteTable::new(ROUTES);

/// The parameters of `GET /api/v1/jobs`: the filters, then the order, the answer's shape, the
/// facets and the page.
const SEARCH_PARAMS: [&Param; FILTER_PARAMS.len() + 7] = params_of(
    &FILTER_PARAMS,
    &[
        &params::SORT,
        &params::HIGHLIGHT,
        &params::FIELDS,
        &params::JOB_FACETS,
        &params::PAGE,
        &params::PER_PAGE,
        &params::IF_NONE_MATCH,
    ],
);

/// The parameters of `GET /api/v1/changes`: where to start and how many, then the filters.
const CHANGE_PARAMS: [&Param; FILTER_PARAMS.len() + 2] =
    params_of(&[&params::AFTER, &params::LIMIT], &FILTER_PARAMS);

/// `GET /api/v1/jobs`.
pub(crate) const SEARCH_JOBS: Doc = Doc {
    id: "searchJobs",
    tag: "jobs",
    summary: "Search job listings",
    description: "Search active job listings with optional filters, paginated. Unknown query parameters are rejected with 400 (code unknown_parameter). Add `facets=domain,seniority,remote,country` for counts over all matches in `meta.facets`; `sort=relevance` (with `q`) answers the best BM25 match first, `highlight=true` adds why each job matched, and `fields=` sends only the fields named; a `domain` or `seniority` value no active job holds is answered with a warning in `meta.warnings` naming the known values.",
    params: &SEARCH_PARAMS,
    body: None,
    answers: &[Answer { status: 200, description: "A page of job listings.", content: Content::Schema("JobList") }],
    errors: &[304, 400, 401, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/jobs/{id}`.
pub(crate) const GET_JOB: Doc = Doc {
    id: "getJob",
    tag: "jobs",
    summary: "Get a job listing",
    description: "Fetch a single job listing with its company embedded. A closed job is answered too, with status closed (searches list only active jobs), so a client that kept an id learns that the job closed.",
    params: &[&params::ID, &params::IF_NONE_MATCH],
    body: None,
    answers: &[Answer { status: 200, description: "The job listing.", content: Content::Schema("JobDetail") }],
    errors: &[304, 400, 401, 404, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/jobs/{id}/similar`.
pub(crate) const SIMILAR_JOBS: Doc = Doc {
    id: "similarJobs",
    tag: "jobs",
    summary: "Find jobs like one",
    description: "Active job listings most like this one (which may be closed), best first: ranked by the rarer words of the job's role, company name and post they share (weighted by BM25's inverse document frequency, role words twice) and the domain tags and seniority levels they share; ties newest first. Never the job itself, its reposts or its canonical job, nor any repost. At most `per_page` (default 10), in the list envelope on one page. One call.",
    params: &[&params::ID, &params::SIMILAR_PER_PAGE, &params::IF_NONE_MATCH],
    body: None,
    answers: &[Answer { status: 200, description: "The jobs most like this one.", content: Content::Schema("JobList") }],
    errors: &[304, 400, 401, 404, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/companies`.
pub(crate) const LIST_COMPANIES: Doc = Doc {
    id: "listCompanies",
    tag: "companies",
    summary: "List companies",
    description: "List companies, optionally filtered by funding stage, paginated. Unknown query parameters are rejected with 400 (code unknown_parameter). Add `facets=funding_stage` for counts by stage in `meta.facets`; a `funding_stage` no company has is answered with a warning in `meta.warnings` naming the known stages.",
    params: &[&params::FUNDING_STAGE, &params::COMPANY_FACETS, &params::PAGE, &params::PER_PAGE, &params::IF_NONE_MATCH],
    body: None,
    answers: &[Answer { status: 200, description: "A page of companies.", content: Content::Schema("CompanyList") }],
    errors: &[304, 400, 401, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/companies/{id}`.
pub(crate) const GET_COMPANY: Doc = Doc {
    id: "getCompany",
    tag: "companies",
    summary: "Get a company",
    description: "Fetch a single company with its active job listings (at most 100).",
    params: &[&params::ID, &params::IF_NONE_MATCH],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The company.",
        content: Content::Schema("CompanyDetail"),
    }],
    errors: &[304, 400, 401, 404, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/webhooks`.
pub(crate) const LIST_WEBHOOKS: Doc = Doc {
    id: "listWebhooks",
    tag: "webhooks",
    summary: "List webhooks",
    description: "List the webhooks belonging to the calling API key, oldest first, paginated like every list. Unknown query parameters are rejected with 400 (code unknown_parameter).",
    params: &[&params::PAGE, &params::PER_PAGE],
    body: None,
    answers: &[Answer { status: 200, description: "A page of the webhooks of the calling API key.", content: Content::Schema("WebhookList") }],
    errors: &[400, 401, 406, 408, 413, 414, 429, 431, 500],
};

/// `POST /api/v1/webhooks`.
pub(crate) const CREATE_WEBHOOK: Doc = Doc {
    id: "createWebhook",
    tag: "webhooks",
    summary: "Create a webhook",
    description: "Create a webhook that is notified about new job listings. Requires the agent_pro plan or higher. The signing secret is returned only in this response. Send an Idempotency-Key header to retry safely: a repeat of the request with the same key from the same API key answers as the first one did (201, the same webhook and secret, with Idempotent-Replayed: true) for as long as that webhook exists, and registers nothing; the same key with different fields is a 409 (code idempotency_key_reused).",
    params: &[&params::IDEMPOTENCY_KEY],
    body: Some(RequestBody { required: true, description: "", media: &["application/json"], content: Content::Schema("NewWebhook") }),
    answers: &[Answer { status: 201, description: "The created webhook, including its signing secret.", content: Content::Schema("WebhookCreated") }],
    errors: &[400, 401, 403, 408, 409, 413, 414, 415, 429, 431, 500],
};

/// `GET /api/v1/webhooks/{id}`.
pub(crate) const GET_WEBHOOK: Doc = Doc {
    id: "getWebhook",
    tag: "webhooks",
    summary: "Get a webhook",
    description: "Fetch a webhook. Webhooks belonging to another API key yield 404.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The webhook.",
        content: Content::Schema("Webhook"),
    }],
    errors: &[400, 401, 404, 406, 408, 413, 414, 429, 431, 500],
};

/// `PATCH /api/v1/webhooks/{id}`.
pub(crate) const UPDATE_WEBHOOK: Doc = Doc {
    id: "updateWebhook",
    tag: "webhooks",
    summary: "Change a webhook",
    description: "Change a webhook's callback URL or filters, or its status: status active enables a webhook that was disabled (after a 410 Gone, days of failures, or by you) without a new id or secret; status disabled stops it (jobs that arrive while it is disabled are not sent later). Requires the agent_pro plan or higher. Webhooks belonging to another API key yield 404. The answer is the webhook, without its secret.",
    params: &[&params::ID],
    body: Some(RequestBody { required: true, description: "", media: &["application/json"], content: Content::Schema("WebhookPatch") }),
    answers: &[Answer { status: 200, description: "The changed webhook.", content: Content::Schema("Webhook") }],
    errors: &[400, 401, 403, 404, 408, 413, 414, 415, 429, 431, 500],
};

/// `DELETE /api/v1/webhooks/{id}`.
pub(crate) const DELETE_WEBHOOK: Doc = Doc {
    id: "deleteWebhook",
    tag: "webhooks",
    summary: "Delete a webhook",
    description: "Delete a webhook. Webhooks belonging to another API key yield 404.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer {
        status: 204,
        description: "The webhook was deleted.",
        content: Content::None,
    }],
    errors: &[400, 401, 404, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/webhooks/{id}/deliveries`.
pub(crate) const LIST_WEBHOOK_DELIVERIES: Doc = Doc {
    id: "listWebhookDeliveries",
    tag: "webhooks",
    summary: "List webhook deliveries",
    description: "List the 100 most recent deliveries of a webhook, latest scheduled attempt (next_attempt_at) first, each with its event type, when it was queued and its attempts, paginated like every list (total counts at most those 100). Webhooks belonging to another API key yield 404. Unknown query parameters are rejected with 400 (code unknown_parameter).",
    params: &[&params::ID, &params::PAGE, &params::PER_PAGE],
    body: None,
    answers: &[Answer { status: 200, description: "A page of recent deliveries.", content: Content::Schema("DeliveryList") }],
    errors: &[400, 401, 404, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/usage`.
pub(crate) const GET_USAGE: Doc = Doc {
    id: "getUsage",
    tag: "usage",
    summary: "Get usage",
    description: "Report the plan and usage of the calling API key for the current period. This call is not metered.",
    params: &[&params::IF_NONE_MATCH],
    body: None,
    answers: &[Answer { status: 200, description: "Usage report.", content: Content::Schema("UsageReport") }],
    errors: &[304, 400, 401, 406, 408, 413, 414, 429, 431, 500],
};

/// `GET /api/v1/openapi.json`.
pub(crate) const GET_OPEN_API: Doc = Doc {
    id: "getOpenApi",
    tag: "meta",
    summary: "Get the OpenAPI document",
    description: "Return this OpenAPI document. No authentication required; not metered.",
    params: &[&params::IF_NONE_MATCH],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The OpenAPI document.",
        content: Content::Inline(|| json!({"type": "object"})),
    }],
    errors: &[304, 400, 406, 408, 413, 414, 429, 431, 500],
};

/// `POST /api/v1/webhooks/{id}/test`.
pub(crate) const TEST_WEBHOOK: Doc = Doc {
    id: "testWebhook",
    tag: "webhooks",
    summary: "Send a test ping",
    description: "Queues a signed `webhook.test` event to this subscription and answers 202 with its pending delivery; the delivery worker sends it right away. A subscription takes at most 5 test pings a minute: more answer 429 (code rate_limited) with Retry-After, are not counted, and carry no burst in their RateLimit headers. Webhooks belonging to another API key yield 404.",
    params: &[&params::ID],
    body: Some(RequestBody { required: false, description: "None: the ping takes no fields. A client that always sends a body may send an empty JSON object. A body with a Content-Type other than JSON is a 415; one that is not a single JSON object is a 400 `invalid_body`, and a field a 400 `unknown_parameter`.", media: &["application/json"], content: Content::Inline(|| json!({"type": "object", "additionalProperties": false, "maxProperties": 0})) }),
    answers: &[Answer { status: 202, description: "The queued delivery.", content: Content::Schema("Delivery") }],
    errors: &[400, 401, 403, 404, 408, 409, 413, 414, 415, 429, 431, 500],
};

/// `GET /api/v1/changes`.
pub(crate) const LIST_CHANGES: Doc = Doc {
    id: "listChanges",
    tag: "jobs",
    summary: "Follow changes to job listings",
    description: "The change feed: every job that became active (`job.new`), changed (`job.updated`), closed (`job.closed`) or was deleted by the operator (`job.deleted`), in commit order, each with an opaque `cursor` and the job as the event left it. Follow it by asking again with `after` set to the page's `next_cursor`: empty pages carry it too, so poll from there; `has_more` says more events are waiting now. The filters of `GET /jobs` apply to the job as of each event, closed or not; `job.deleted` events (whose job is gone) are in every feed. Events are kept 30 days (the deployment may say otherwise; `meta.retention_days`); an older cursor is answered 410 `cursor_expired` with links to start again from a search. Every replica of a deployment answers the same cursors. Each page is metered as one call.",
    params: &CHANGE_PARAMS,
    body: None,
    answers: &[Answer { status: 200, description: "A page of the change feed.", content: Content::Schema("ChangePage") }],
    errors: &[400, 401, 406, 408, 410, 413, 414, 429, 431, 500],
};
