//! The admin API's document: its opening, the headers and shared answers, and the
//! parameters its endpoints take. The operations are declared with the routes
//! ([`ADMIN_ROUTES`](crate::api::admin::ADMIN_ROUTES)).

use std::sync::OnceLock;

use serde_json::json;

use super::spec::{Form, Head, Header, In, Param, Response, ACCEPT_ENCODING};
use super::{text_of, ApiDoc};
use crate::api::admin::{AdminOperation, ADMIN_ROUTES};

/// What the admin API's document is made from.
static ADMIN: ApiDoc<AdminOperation> = ApiDoc {
    head: &HEAD,
    routes: ADMIN_ROUTES,
    headers: HEADERS,
    responses: RESPONSES,
    schemas: super::components::admin_schemas,
    rate_limited: false,
    encoded: false,
};

/// The admin API's OpenAPI 3.1 document, served at `GET /admin/v1/openapi.json`.
pub fn admin_openapi_json() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    text_of(&TEXT, &ADMIN)
}

/// The document's opening: what the API is, where it is served and how callers prove who they are.
pub(crate) const HEAD: Head = Head {
    title: "job-listings admin API",
    version: "1.0.0",
    description: "The operator's API of a job-listings server: write jobs and companies, one at a time or streamed as JSON Lines with a report of every line refused; issue API keys, change their plan or billing status, revoke them and read their usage; enable or disable any key's webhook subscriptions. It works on the same service as the public API: a job written here is searchable when the call answers, and a new active one is announced to webhook subscribers as any ingest is.\n\n## Where it is served\nOn a listener of its own, never on the public API's (which answers 404 under `/admin`). The bundled server binds it to 127.0.0.1:8081 by default (`serve --admin-addr`): a loopback address, unless `--admin-allow-remote` is given; `--no-admin` serves none. Whoever reaches it with the token can change everything: keep it on loopback, or behind a firewall or TLS proxy.\n\n## Authentication\nEvery call but `GET /livez`, `GET /readyz` and this document needs `Authorization: Bearer <admin token>`. The admin token is one per deployment, apart from every API key (an API key does not open this API). The bundled server makes it on first start, prints it once and keeps it in `admin.token` in its data folder, readable by its owner only, and its hash in `admin-token.sha256`. No header, or another scheme, is 401 `missing_admin_token`; another token is 401 `invalid_admin_token`; both carry `WWW-Authenticate`. The token is checked before the method: a method a path does not take is 405 `method_not_allowed` with `Allow` only to a request with the token, and `OPTIONS` (204 with `Allow`) needs it too, but on the three open paths. A path that is no endpoint is 404 `not_found`, token or not; its detail lists the paths. `HEAD` is answered wherever `GET` is, without the body. Nothing here is metered or rate limited.\n\n## Bodies\nA call that takes a body takes one JSON object (`Content-Type: application/json`, uncompressed) of at most 1 MiB, all sent within 10 s of the headers. A field the call does not take is 400 `unknown_parameter`, a field of the wrong type or value 400 `invalid_parameter` (both name it in `param`), any other fault 400 `invalid_body`. Jobs and companies are the exception: their bodies are read as the `import` command reads a line of its files, with the same checks and messages, so any fault in them, an unknown field too, is 400 `invalid_body`. Calls that take no body (closing a job, revoking a key) take none or an empty object. The bulk uploads take JSON Lines, read as they arrive, with no limit on their size. A query parameter a call does not take is 400 `unknown_parameter`; a malformed `{id}` 400 `invalid_parameter`. The lists are whole, not paged: `{\"data\": [...]}`.\n\n## Errors\nRFC 9457 problem documents (`application/problem+json`) with `type`, `title`, `status`, `detail`, a stable `code` and `request_id`, and `param` and `allowed` where they apply. Every answer carries `X-Request-Id`. A request line over 16 KiB is 414 `uri_too_long`; a request line and headers over 16 KiB, 431 `headers_too_large`. A 500 `internal` says nothing of its cause: its `request_id` finds it in the server's log.",
    servers: || json!([{"url": "/", "description": "The admin listener this document is served from (the bundled server: http://127.0.0.1:8081 by default)."}]),
    security: || json!([{"AdminToken": []}]),
    security_schemes: || json!({"AdminToken": {"type": "http", "scheme": "bearer", "description": "The admin token, `jl_admin_` and 43 letters and digits, as `Authorization: Bearer <admin token>`. The bundled server makes it on first start, prints it once and keeps it in `admin.token` in its data folder, readable by its owner only. API keys do not open this API."}}),
    tags: &[("jobs", "Job listings: read, write, close, upload."), ("companies", "Companies: read, write, upload, look up."), ("keys", "API keys: issue, list, change, revoke, usage."), ("webhooks", "Every key's webhook subscriptions: health, enable, disable."), ("health", "Liveness and readiness, without the token."), ("meta", "This document."), ("operations", "Backups of the live store.")],
};

/// The headers answers carry.
pub(crate) const HEADERS: &[Header] = &[
    Header { name: "X-Request-Id", description: "The request's id: the client's X-Request-Id when it is short and plain, else a new one.", schema: || json!({"type": "string"}) },
    Header { name: "WWW-Authenticate", description: "Authentication challenge: Bearer realm=\"job-listings\".", schema: || json!({"type": "string"}) },
    Header { name: "Allow", description: "The methods the path takes.", schema: || json!({"type": "string"}) },
    Header { name: "Retry-After", description: "Seconds to wait before trying again.", schema: || json!({"type": "integer", "minimum": 1}) },
    ACCEPT_ENCODING,
];

/// The answers that are not an operation's own: errors, and `304`.
pub(crate) const RESPONSES: &[Response] = &[
    Response { name: "BadRequest", status: 400, description: "Invalid request (codes invalid_parameter, unknown_parameter, invalid_body): a malformed path id or query value, or a body field of the wrong type or value (invalid_parameter, naming it in `param`); a query parameter or body field the call does not take (unknown_parameter, naming it in `param`, with `allowed`); a body that is not what the call takes (invalid_body).", headers: &["X-Request-Id"], problem: true },
    Response { name: "Unauthorized", status: 401, description: "No admin token (code missing_admin_token: no Authorization header, or another scheme than Bearer), or not the server's admin token (code invalid_admin_token: an API key is not one).", headers: &["X-Request-Id", "WWW-Authenticate"], problem: true },
    Response { name: "NotFound", status: 404, description: "No such resource (code not_found); the detail names what was looked for.", headers: &["X-Request-Id"], problem: true },
    Response { name: "MethodNotAllowed", status: 405, description: "A method the path does not take (code method_not_allowed), with the methods it takes in `Allow`; answered only to a request with the admin token (on the open paths, to any).", headers: &["X-Request-Id", "Allow"], problem: true },
    Response { name: "RequestTimeout", status: 408, description: "A request body was started and not all sent within 10 s of the headers (code body_timeout); the connection is closed.", headers: &["X-Request-Id"], problem: true },
    Response { name: "PayloadTooLarge", status: 413, description: "The body is over 1 MiB (code body_too_large), refused at once when its Content-Length says so.", headers: &["X-Request-Id"], problem: true },
    Response { name: "UriTooLong", status: 414, description: "The request line (method and URL) alone is over 16 KiB (code uri_too_long).", headers: &["X-Request-Id"], problem: true },
    Response { name: "HeadersTooLarge", status: 431, description: "The request line and headers together are over 16 KiB (code headers_too_large).", headers: &["X-Request-Id"], problem: true },
    Response { name: "UnsupportedMediaType", status: 415, description: "The body is not of the media type the call reads (code unsupported_media_type; the detail names it), or was sent compressed: a Content-Encoding other than identity (code unsupported_content_encoding, with Accept-Encoding: identity).", headers: &["X-Request-Id", "Accept-Encoding"], problem: true },
    Response { name: "InternalError", status: 500, description: "Our fault, not the request's (code internal): the detail says nothing of the cause; the request_id finds it in the server's log.", headers: &["X-Request-Id"], problem: true },
    Response { name: "Conflict", status: 409, description: "The state forbids it: `company_has_jobs` while active jobs name the company (delete or close them first); `backup_in_progress` while another backup runs, the detail naming its folder (one runs at a time: try again once it has answered).", headers: &[], problem: true },
    Response { name: "NotImplemented", status: 501, description: "The store cannot do this (`unsupported`): with PostgreSQL, back up with pg_dump and keep the secret key file with the dump.", headers: &[], problem: true },
    Response { name: "TooManyUploads", status: 429, description: "As many bulk uploads as the server reads at once (4 by default, jobs and companies together) are under way (code too_many_uploads): retry after the `Retry-After` seconds, once one has finished. Refused before any of the body is read.", headers: &["X-Request-Id", "Retry-After"], problem: true },
    Response { name: "InsufficientStorage", status: 507, description: "The disk of the backup's folder has too little free space for a copy of the store (1.5 times the data folder's files) and the headroom the server keeps free (64 MiB by default) (code insufficient_storage); the detail gives both figures. Checked before any of the backup is written: nothing is left behind. Free space there, or back up onto another disk.", headers: &["X-Request-Id"], problem: true },
];

/// `id`, in the path.
pub(crate) const ID: Param = Param {
    component: Some("Id"),
    name: "id",
    at: In::Path,
    required: true,
    description: "Resource identifier (UUID; simple, braced and urn:uuid: forms are read too). A malformed id is a 400 invalid_parameter.",
    brief: "The record's id.",
    schema: || json!({"type": "string", "format": "uuid"}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `dry_run`, in the query.
pub(crate) const DRY_RUN: Param = Param {
    component: Some("DryRun"),
    name: "dry_run",
    at: In::Query,
    required: false,
    description: "Check every line and write nothing: true or false in any case, or 1 or 0.",
    brief: "true: check and count, change nothing.",
    schema: || json!({"type": "boolean", "default": false}),
    form: Form::Plain,
    example: None,
    examples: &[],
};
