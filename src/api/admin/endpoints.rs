//! The admin API's endpoints, declared once: the router, `Allow`, the metrics' route labels
//! and the OpenAPI document's paths are read from this table.

use serde_json::json;

use crate::api::openapi::admin as params;
use crate::api::openapi::{Answer, Content, Doc, RequestBody};
use crate::api::route_table::{Credential, Endpoint, Route, RouteTable, Verb};

/// What an endpoint of the admin API does; the router calls one handler for each, and the
/// compiler refuses a variant without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AdminOperation {
    UploadJobs,
    CloseUnseenJobs,
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

const fn at(verb: Verb, op: Op, doc: &'static Doc) -> Endpoint<Op> {
    Endpoint { op, verb, doc }
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
    token(
        "/admin/v1/jobs/bulk",
        &[at(Verb::Post, Op::UploadJobs, &BULK_JOBS)],
    ),
    token(
        "/admin/v1/jobs/close-unseen",
        &[at(Verb::Post, Op::CloseUnseenJobs, &CLOSE_UNSEEN_JOBS)],
    ),
    token(
        "/admin/v1/jobs/{id}",
        &[
            at(Verb::Get, Op::GetJob, &GET_JOB),
            at(Verb::Put, Op::PutJob, &PUT_JOB),
            at(Verb::Delete, Op::DeleteJob, &DELETE_JOB),
        ],
    ),
    token(
        "/admin/v1/jobs/{id}/close",
        &[at(Verb::Post, Op::CloseJob, &CLOSE_JOB)],
    ),
    token(
        "/admin/v1/companies/bulk",
        &[at(Verb::Post, Op::UploadCompanies, &BULK_COMPANIES)],
    ),
    token(
        "/admin/v1/companies/lookup",
        &[at(Verb::Post, Op::LookupCompanies, &LOOKUP_COMPANIES)],
    ),
    token(
        "/admin/v1/companies/{id}",
        &[
            at(Verb::Get, Op::GetCompany, &GET_COMPANY),
            at(Verb::Put, Op::PutCompany, &PUT_COMPANY),
            at(Verb::Delete, Op::DeleteCompany, &DELETE_COMPANY),
        ],
    ),
    token(
        "/admin/v1/keys",
        &[
            at(Verb::Get, Op::ListKeys, &LIST_KEYS),
            at(Verb::Post, Op::CreateKey, &CREATE_KEY),
        ],
    ),
    token(
        "/admin/v1/keys/{id}",
        &[
            at(Verb::Get, Op::GetKey, &GET_KEY),
            at(Verb::Patch, Op::UpdateKey, &UPDATE_KEY),
            at(Verb::Delete, Op::RevokeKey, &REVOKE_KEY),
        ],
    ),
    token(
        "/admin/v1/keys/{id}/usage",
        &[at(Verb::Get, Op::GetKeyUsage, &GET_KEY_USAGE)],
    ),
    token(
        "/admin/v1/webhooks",
        &[at(Verb::Get, Op::ListWebhooks, &LIST_WEBHOOKS)],
    ),
    token(
        "/admin/v1/webhooks/{id}",
        &[
            at(Verb::Get, Op::GetWebhook, &GET_WEBHOOK),
            at(Verb::Patch, Op::UpdateWebhook, &SET_WEBHOOK_STATUS),
        ],
    ),
    token("/admin/v1/backup", &[at(Verb::Post, Op::Backup, &BACKUP)]),
    token("/admin/v1/stats", &[at(Verb::Get, Op::Stats, &STATS)]),
    open(
        "/admin/v1/openapi.json",
        &[at(Verb::Get, Op::GetOpenApi, &GET_ADMIN_OPEN_API)],
    ),
    token("/metrics", &[at(Verb::Get, Op::Metrics, &METRICS)]),
    open("/livez", &[at(Verb::Get, Op::Livez, &LIVEZ)]),
    open("/readyz", &[at(Verb::Get, Op::Readyz, &READYZ)]),
];

/// The router over [`ADMIN_ROUTES`].
pub(crate) static ADMIN_ENDPOINTS: RouteTable<Op> = RouteTable::new(ADMIN_ROUTES);

/// `GET /admin/v1/jobs/{id}`.
pub(crate) const GET_JOB: Doc = Doc {
    id: "getJob",
    tag: "jobs",
    summary: "Get a job as stored",
    description: "One job as stored, active or closed: the record alone, in the form `PUT` takes back (the public API's job detail adds its company).",
    params: &[&params::ID],
    body: None,
    answers: &[Answer { status: 200, description: "The job.", content: Content::Schema("Job") }],
    errors: &[400, 401, 404, 408, 413, 414, 431, 500],
};

/// `PUT /admin/v1/jobs/{id}`.
pub(crate) const PUT_JOB: Doc = Doc {
    id: "putJob",
    tag: "jobs",
    summary: "Create or replace a job",
    description: "Creates the job (201) or replaces it whole (200). The body is a job as a line of the `import` command's jobs file, read with the same checks and messages (any fault in it is a 400 `invalid_body`), its `id` left out or the path's (another is a 400 `invalid_parameter`). Its company must be stored: else 400 `invalid_parameter` with `param` company_id. The service sets `company_name` (the company's), `activated_at`, `first_seen_at` and `updated_at`; values sent for them are ignored, so a job read with `GET` can be sent back as it is. The answer is the job as stored; once it comes, the job is durable, and searchable if active. A job active for the first time is announced to the webhook subscriptions it matches, as any ingest is.",
    params: &[&params::ID],
    body: Some(RequestBody { required: true, description: "The job, as a line of the `import` command's jobs file.", media: &["application/json"], content: Content::Schema("JobRecord") }),
    answers: &[Answer { status: 200, description: "The job replaced, as stored.", content: Content::Schema("Job") }, Answer { status: 201, description: "The job created, as stored.", content: Content::Schema("Job") }],
    errors: &[400, 401, 408, 413, 414, 415, 431, 500],
};

/// `DELETE /admin/v1/jobs/{id}`.
pub(crate) const DELETE_JOB: Doc = Doc {
    id: "deleteJob",
    tag: "jobs",
    summary: "Delete a job",
    description: "Deletes a job for good: it leaves searches at once and its detail answers 404. Unlike closing, nothing of it stays. Webhook deliveries already queued for it are still sent.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer { status: 204, description: "Deleted.", content: Content::None }],
    errors: &[400, 401, 404, 408, 413, 414, 415, 431, 500],
};

/// `POST /admin/v1/jobs/{id}/close`.
pub(crate) const CLOSE_JOB: Doc = Doc {
    id: "closeJob",
    tag: "jobs",
    summary: "Close a job",
    description: "Closes a job: it leaves searches at once and stays on record with status closed (`GET` answers it; the public API's detail says it is closed). Closing a closed job answers the same, its `updated_at` moved on. Sending it again with status active (`PUT`) opens it again.",
    params: &[&params::ID],
    body: Some(RequestBody { required: false, description: "None: the call takes no fields. A client that always sends a body may send an empty JSON object; a body that is not JSON is a 415, one that is not a single JSON object a 400 `invalid_body`, and a field a 400 `unknown_parameter`.", media: &["application/json"], content: Content::Inline(|| json!({"type": "object", "additionalProperties": false, "maxProperties": 0})) }),
    answers: &[Answer { status: 200, description: "The closed job, as stored.", content: Content::Schema("Job") }],
    errors: &[400, 401, 404, 408, 413, 414, 415, 431, 500],
};

/// `POST /admin/v1/jobs/close-unseen`.
pub(crate) const CLOSE_UNSEEN_JOBS: Doc = Doc {
    id: "closeUnseenJobs",
    tag: "jobs",
    summary: "Close the jobs the crawler stopped seeing",
    description: "Closes every active job (reposts included) whose `last_seen_at` is strictly before `seen_before`: the crawler sends a job again, changed or not, while its post is up, so a job it has not sent since then is gone at the source. Each closing is a `job.closed` in the change feed and to webhooks, and hands the lead of its group of copies to the next open one, as closing one job does. With `dry_run: true` it only counts them (`closed` 0). One write per 512 jobs; ingest waits meanwhile.",
    params: &[],
    body: Some(RequestBody { required: true, description: "", media: &["application/json"], content: Content::Schema("CloseUnseen") }),
    answers: &[Answer { status: 200, description: "How many were found and closed.", content: Content::Schema("UnseenClosed") }],
    errors: &[400, 401, 408, 413, 414, 415, 431, 500],
};

/// `POST /admin/v1/jobs/bulk`.
pub(crate) const BULK_JOBS: Doc = Doc {
    id: "bulkJobs",
    tag: "jobs",
    summary: "Write jobs from JSON Lines",
    description: "Writes jobs sent as JSON Lines, one `JobLine` a line: the form of `PUT /admin/v1/jobs/{id}`, each with its `id`. A line is refused when it is not a job or names a company that is not stored. The body is read as it arrives and written 4,096 lines (or 8 MiB of lines, whichever comes first) at a time, with no limit on its total size. At most 4 uploads are read at once, jobs and companies together: one more is refused at once, before its body is read, with 429 `too_many_uploads` and `Retry-After`. A bad line is refused alone, with what is wrong in the words of the `import` command, and the others are written; of lines with the same id, the last one wins. With `dry_run=true` every line is checked and nothing is written, so a client that wants all or nothing checks first. The answer (200) counts what was written and lists the lines refused; once it comes, every record it counts as written is durable, and searchable if active; new active jobs are announced to the webhook subscriptions they match. The upload stops at a line over 1 MiB, when no byte arrives for 30 s, or when the body cannot be read: a 400 `invalid_body` whose detail gives the line and how many records had been written (those of the batches written before it stay written; the lines of the batch under way are not). A storage failure is a 500, the batches written before it staying written too.",
    params: &[&params::DRY_RUN],
    body: Some(RequestBody { required: true, description: "JSON Lines, one job per line in the form of the `JobLine` schema (the record `PUT` takes, with its `id`). Blank lines are skipped, a byte order mark before the first line is dropped, and a line may end in CRLF. Sent under any of these media types; any other `Content-Type`, or a `Content-Encoding` other than identity, is a 415.", media: &["application/x-ndjson", "application/ndjson", "application/jsonl", "application/jsonlines", "application/x-jsonlines"], content: Content::Inline(|| json!({"type": "string", "contentMediaType": "application/x-ndjson", "description": "JSON Lines: one job per line, as in `JobLine`."})) }),
    answers: &[Answer { status: 200, description: "What was written (or, on a dry run, would be) and every line refused.", content: Content::Schema("JobBulkReport") }],
    errors: &[400, 401, 414, 415, 429, 431, 500],
};

/// `GET /admin/v1/companies/{id}`.
pub(crate) const GET_COMPANY: Doc = Doc {
    id: "getCompany",
    tag: "companies",
    summary: "Get a company as stored",
    description: "One company as stored, whether it has active jobs or not: the record alone, in the form `PUT` takes back.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer { status: 200, description: "The company.", content: Content::Schema("Company") }],
    errors: &[400, 401, 404, 408, 413, 414, 431, 500],
};

/// `PUT /admin/v1/companies/{id}`.
pub(crate) const PUT_COMPANY: Doc = Doc {
    id: "putCompany",
    tag: "companies",
    summary: "Create or replace a company",
    description: "Creates the company (201) or replaces it whole (200). The body is a company as a line of the `import` command's companies file, read with the same checks and messages (any fault in it is a 400 `invalid_body`), its `id` left out or the path's (another is a 400 `invalid_parameter`). The service sets `updated_at`; a value sent for it is ignored, so a company read with `GET` can be sent back as it is. Its jobs take a new name with their next write (`PUT`, a bulk upload or an import). The answer is the company as stored.",
    params: &[&params::ID],
    body: Some(RequestBody { required: true, description: "The company, as a line of the `import` command's companies file.", media: &["application/json"], content: Content::Schema("CompanyRecord") }),
    answers: &[Answer { status: 200, description: "The company replaced, as stored.", content: Content::Schema("Company") }, Answer { status: 201, description: "The company created, as stored.", content: Content::Schema("Company") }],
    errors: &[400, 401, 408, 413, 414, 415, 431, 500],
};

/// `DELETE /admin/v1/companies/{id}`.
pub(crate) const DELETE_COMPANY: Doc = Doc {
    id: "deleteCompany",
    tag: "companies",
    summary: "Delete a company",
    description: "Deletes a company. Refused with 409 `company_has_jobs` while active jobs name it: delete or close them first. Closed jobs of a deleted company keep the name they were written with and are answered with `company: null`.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer { status: 204, description: "Deleted.", content: Content::None }],
    errors: &[400, 401, 404, 408, 409, 413, 414, 415, 431, 500],
};

/// `POST /admin/v1/companies/bulk`.
pub(crate) const BULK_COMPANIES: Doc = Doc {
    id: "bulkCompanies",
    tag: "companies",
    summary: "Write companies from JSON Lines",
    description: "Writes companies sent as JSON Lines, one `CompanyLine` a line: the form of `PUT /admin/v1/companies/{id}`, each with its `id`. The body is read as it arrives and written 4,096 lines (or 8 MiB of lines, whichever comes first) at a time, with no limit on its total size. At most 4 uploads are read at once, jobs and companies together: one more is refused at once, before its body is read, with 429 `too_many_uploads` and `Retry-After`. A bad line is refused alone, with what is wrong in the words of the `import` command, and the others are written; of lines with the same id, the last one wins. With `dry_run=true` every line is checked and nothing is written, so a client that wants all or nothing checks first. The answer (200) counts what was written and lists the lines refused; once it comes, every record it counts as written is durable. The upload stops at a line over 1 MiB, when no byte arrives for 30 s, or when the body cannot be read: a 400 `invalid_body` whose detail gives the line and how many records had been written (those of the batches written before it stay written; the lines of the batch under way are not). A storage failure is a 500, the batches written before it staying written too.",
    params: &[&params::DRY_RUN],
    body: Some(RequestBody { required: true, description: "JSON Lines, one company per line in the form of the `CompanyLine` schema (the record `PUT` takes, with its `id`). Blank lines are skipped, a byte order mark before the first line is dropped, and a line may end in CRLF. Sent under any of these media types; any other `Content-Type`, or a `Content-Encoding` other than identity, is a 415.", media: &["application/x-ndjson", "application/ndjson", "application/jsonl", "application/jsonlines", "application/x-jsonlines"], content: Content::Inline(|| json!({"type": "string", "contentMediaType": "application/x-ndjson", "description": "JSON Lines: one company per line, as in `CompanyLine`."})) }),
    answers: &[Answer { status: 200, description: "What was written (or, on a dry run, would be) and every line refused.", content: Content::Schema("CompanyBulkReport") }],
    errors: &[400, 401, 414, 415, 429, 431, 500],
};

/// `POST /admin/v1/companies/lookup`.
pub(crate) const LOOKUP_COMPANIES: Doc = Doc {
    id: "lookupCompanies",
    tag: "companies",
    summary: "Which companies are stored",
    description: "Which of up to 10,000 company ids name a stored company: what an import checks its jobs' companies against before it writes anything. More than 10,000 ids is a 400 `invalid_parameter` (`param` ids).",
    params: &[],
    body: Some(RequestBody { required: true, description: "The ids to look up.", media: &["application/json"], content: Content::Schema("CompanyLookup") }),
    answers: &[Answer { status: 200, description: "The ids found and missing, each in the order asked.", content: Content::Schema("CompanyLookupResult") }],
    errors: &[400, 401, 408, 413, 414, 415, 431, 500],
};

/// `GET /admin/v1/keys`.
pub(crate) const LIST_KEYS: Doc = Doc {
    id: "listKeys",
    tag: "keys",
    summary: "List keys",
    description: "Every issued key, revoked ones too, oldest first, without the keys themselves.",
    params: &[],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The keys.",
        content: Content::Schema("KeyList"),
    }],
    errors: &[400, 401, 408, 413, 414, 431, 500],
};

/// `POST /admin/v1/keys`.
pub(crate) const CREATE_KEY: Doc = Doc {
    id: "createKey",
    tag: "keys",
    summary: "Issue a key",
    description: "Issues an API key on a plan. The key is in the 201 answer only: the server keeps its hash, so it cannot be shown again. Its billing starts active.",
    params: &[],
    body: Some(RequestBody { required: true, description: "The plan and, optionally, a label and a billing anchor.", media: &["application/json"], content: Content::Schema("NewKey") }),
    answers: &[Answer { status: 201, description: "The key issued, with the key itself.", content: Content::Schema("IssuedKey") }],
    errors: &[400, 401, 408, 413, 414, 415, 431, 500],
};

/// `GET /admin/v1/keys/{id}`.
pub(crate) const GET_KEY: Doc = Doc {
    id: "getKey",
    tag: "keys",
    summary: "Get a key",
    description: "One key's record, without the key itself.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The key.",
        content: Content::Schema("Key"),
    }],
    errors: &[400, 401, 404, 408, 413, 414, 431, 500],
};

/// `PATCH /admin/v1/keys/{id}`.
pub(crate) const UPDATE_KEY: Doc = Doc {
    id: "updateKey",
    tag: "keys",
    summary: "Change a key's plan or billing status",
    description: "Moves a key to another plan, sets its billing status, or both. A new plan's quota and rate apply from the next call, with the period's usage kept; a key whose billing is not active is refused by the public API (401 billing_inactive) and the MCP event streams opened with it end. While its plan has no webhooks or its billing is not active, its webhook subscriptions are sent nothing. A revoked key's record changes too, and it stays revoked.",
    params: &[&params::ID],
    body: Some(RequestBody { required: true, description: "What to change.", media: &["application/json"], content: Content::Schema("KeyPatch") }),
    answers: &[Answer { status: 200, description: "The key, changed.", content: Content::Schema("Key") }],
    errors: &[400, 401, 404, 408, 413, 414, 415, 431, 500],
};

/// `DELETE /admin/v1/keys/{id}`.
pub(crate) const REVOKE_KEY: Doc = Doc {
    id: "revokeKey",
    tag: "keys",
    summary: "Revoke a key",
    description: "Revokes a key for good: the public API refuses it from then on (401 invalid_api_key), the MCP event streams opened with it end, and its webhook subscriptions are sent nothing. Revoking a revoked key changes nothing and answers the same. The record stays, with `revoked_at`.",
    params: &[&params::ID],
    body: Some(RequestBody { required: false, description: "None: the call takes no fields. A client that always sends a body may send an empty JSON object; a body that is not JSON is a 415, one that is not a single JSON object a 400 `invalid_body`, and a field a 400 `unknown_parameter`.", media: &["application/json"], content: Content::Inline(|| json!({"type": "object", "additionalProperties": false, "maxProperties": 0})) }),
    answers: &[Answer { status: 200, description: "The key's record, revoked.", content: Content::Schema("Key") }],
    errors: &[400, 401, 404, 408, 413, 414, 415, 431, 500],
};

/// `GET /admin/v1/keys/{id}/usage`.
pub(crate) const GET_KEY_USAGE: Doc = Doc {
    id: "getKeyUsage",
    tag: "keys",
    summary: "Get a key's usage",
    description: "A key's usage in its current billing period, as its owner's `GET /api/v1/usage` reports it; not counted as a call of the key.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer { status: 200, description: "The usage report.", content: Content::Schema("UsageReport") }],
    errors: &[400, 401, 404, 408, 413, 414, 431, 500],
};

/// `GET /admin/v1/webhooks`.
pub(crate) const LIST_WEBHOOKS: Doc = Doc {
    id: "listWebhooks",
    tag: "webhooks",
    summary: "List every webhook subscription",
    description: "Every webhook subscription of every key, oldest first, with its owner and delivery health; never a secret.",
    params: &[],
    body: None,
    answers: &[Answer { status: 200, description: "The subscriptions.", content: Content::Schema("WebhookList") }],
    errors: &[400, 401, 408, 413, 414, 431, 500],
};

/// `GET /admin/v1/webhooks/{id}`.
pub(crate) const GET_WEBHOOK: Doc = Doc {
    id: "getWebhook",
    tag: "webhooks",
    summary: "Get a webhook subscription",
    description: "One subscription, whoever's, with its owner and delivery health.",
    params: &[&params::ID],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The subscription.",
        content: Content::Schema("Webhook"),
    }],
    errors: &[400, 401, 404, 408, 413, 414, 431, 500],
};

/// `PATCH /admin/v1/webhooks/{id}`.
pub(crate) const SET_WEBHOOK_STATUS: Doc = Doc {
    id: "setWebhookStatus",
    tag: "webhooks",
    summary: "Enable or disable a webhook subscription",
    description: "Enables or disables any key's subscription, as its owner's `PATCH /api/v1/webhooks/{id}` with `status` does. Disabled, it is queued nothing and its pending deliveries fail, so nothing from that time is sent later; its `disabled_reason` is `disabled by the operator`, and its owner may enable it again. Enabled again, it keeps its id and secret and its failure streak starts over. Setting the status it has changes nothing.",
    params: &[&params::ID],
    body: Some(RequestBody { required: true, description: "The new status.", media: &["application/json"], content: Content::Schema("WebhookStatus") }),
    answers: &[Answer { status: 200, description: "The subscription, changed.", content: Content::Schema("Webhook") }],
    errors: &[400, 401, 404, 408, 413, 414, 415, 431, 500],
};

/// `POST /admin/v1/backup`.
pub(crate) const BACKUP: Doc = Doc {
    id: "backup",
    tag: "operations",
    summary: "Back up the live store",
    description: "Writes a consistent copy of the live sled store, with the secret key file, into a new or empty folder on the server's machine, and a manifest last. Searches and other reads go on meanwhile; writes wait while the copy is made. The folder is checked before anything is written, and a refused backup leaves nothing behind: its parent folder must exist, and `to` be missing (it is made) or an empty folder the server can write, outside the server's data folder (symbolic links followed); else 400 `invalid_parameter` on `to`, the detail naming the folder and what is wrong. Its disk must have room for a copy of the store with the server's headroom left free, else 507 `insufficient_storage`. One backup runs at a time: another asked for meanwhile is refused with 409 `backup_in_progress`, not queued; a backup whose caller stops waiting still runs to its end. With PostgreSQL: 501 `unsupported` (use pg_dump).",
    params: &[],
    body: Some(RequestBody { required: true, description: "", media: &["application/json"], content: Content::Schema("BackupRequest") }),
    answers: &[Answer { status: 200, description: "The backup, complete: restore it with `job-listings restore --from DIR`. It holds the secret key that seals webhook secrets: keep it as safe as the data.", content: Content::Schema("Backup") }],
    errors: &[400, 401, 408, 409, 413, 414, 415, 431, 500, 501, 507],
};

/// `GET /admin/v1/stats`.
pub(crate) const STATS: Doc = Doc {
    id: "stats",
    tag: "operations",
    summary: "The service's state in numbers",
    description: "Jobs (active, closed), companies, keys by plan, subscriptions, the outbox backlog, index memory, the index snapshot's age and, on PostgreSQL, the follower's lag. The same figures are gauges of /metrics.",
    params: &[],
    body: None,
    answers: &[Answer { status: 200, description: "The state now.", content: Content::Schema("Stats") }],
    errors: &[400, 401, 414, 431, 500],
};

/// `GET /admin/v1/openapi.json`.
pub(crate) const GET_ADMIN_OPEN_API: Doc = Doc {
    id: "getAdminOpenApi",
    tag: "meta",
    summary: "Get this OpenAPI document",
    description: "This document. No token needed.",
    params: &[],
    body: None,
    answers: &[Answer {
        status: 200,
        description: "The admin API's OpenAPI document.",
        content: Content::Inline(|| json!({"type": "object"})),
    }],
    errors: &[400, 408, 413, 414, 431],
};

/// `GET /metrics`.
pub(crate) const METRICS: Doc = Doc {
    id: "metrics",
    tag: "operations",
    summary: "Metrics in the Prometheus text format",
    description: "Requests of the public API by route pattern, method and status with their durations; problem answers by code; jobs ingested; webhook deliveries by outcome, their latency and attempts; store write latency; and the gauges of /admin/v1/stats. Scrape it with the admin token (Prometheus: `authorization: { credentials_file: DATA/admin.token }`).",
    params: &[],
    body: None,
    answers: &[Answer { status: 200, description: "The metrics now.", content: Content::Media("text/plain", &Content::Inline(|| json!({"type": "string"}))) }],
    errors: &[400, 401, 414, 431, 500],
};

/// `GET /livez`.
pub(crate) const LIVEZ: Doc = Doc {
    id: "livez",
    tag: "health",
    summary: "Liveness",
    description: "Whether the process needs a restart: 200 live, or 503 not_live once the store has refused every write for the write-failure grace (`serve --write-failure-grace`, 60 s by default). No token needed; the same as the public listener's `/livez`.",
    params: &[],
    body: None,
    answers: &[Answer { status: 200, description: "Live.", content: Content::Schema("Health") }, Answer { status: 503, description: "Not live: restart the process.", content: Content::Schema("Health") }],
    errors: &[400, 408, 413, 414, 431],
};

/// `GET /readyz`.
pub(crate) const READYZ: Doc = Doc {
    id: "readyz",
    tag: "health",
    summary: "Readiness",
    description: "Whether traffic should come here: 200 ready while the store takes a small durable write (probed at most once a second), else 503 not_ready with `store_writes`. No token needed; the same as the public listener's `/readyz`.",
    params: &[],
    body: None,
    answers: &[Answer { status: 200, description: "Ready.", content: Content::Schema("Health") }, Answer { status: 503, description: "Not ready: take the server out of the load balancer.", content: Content::Schema("Health") }],
    errors: &[400, 408, 413, 414, 431],
};
