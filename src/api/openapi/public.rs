//! The public API's document: its opening, the headers and shared answers, and the
//! parameters its endpoints take. The operations are declared with the routes
//! ([`ROUTES`](crate::api::endpoints::ROUTES)).

use std::sync::OnceLock;

use serde_json::json;

use super::spec::{Form, Head, Header, In, Param, Response, ACCEPT_ENCODING};
use super::{text_of, ApiDoc};
use crate::api::endpoints::{Operation, ROUTES};

/// What the public API's document is made from.
static PUBLIC: ApiDoc<Operation> = ApiDoc {
    head: &HEAD,
    routes: ROUTES,
    headers: HEADERS,
    responses: RESPONSES,
    schemas: super::components::public_schemas,
    rate_limited: true,
    encoded: true,
};

/// The public API's OpenAPI 3.1 document, served at `GET /api/v1/openapi.json`.
pub fn openapi_json() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    text_of(&TEXT, &PUBLIC)
}

/// The document's opening: what the API is, where it is served and how callers prove who they are.
pub(crate) const HEAD: Head = Head {
    title: "job-listings",
    version: "1.0.0",
    description: "HTTP API for searching job listings and companies, and for subscribing to new listings with webhooks.\n\n## Authentication\nSend your API key in the `X-API-Key` header, or as `Authorization: Bearer <key>`.\n\n## Plans and metering\n- `developer`: 10,000 calls/month\n- `agent_pro`: 100,000 calls/month (required for webhooks)\n- `enterprise`: 1,000,000 calls/month\n\nEach successful (2xx) call counts as one call against the monthly quota, except `GET /api/v1/usage` and the OpenAPI document (`GET /api/v1/openapi.json`), which are not metered. Authenticated successful responses carry the `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (unix seconds when the period ends), `RateLimit-Policy` and `RateLimit` headers. When the quota is exhausted, requests fail with 429 and a `Retry-After` header.\n\n## Errors\nErrors are RFC 9457 problem details (`application/problem+json`) with the fields `type`, `title`, `status`, `detail`, a machine-readable `code` (e.g. `invalid_parameter`, `unknown_parameter`, `not_found`, `quota_exceeded`) and `request_id`, plus optionally `param`, `allowed` and `retry_after`. Every response carries an `X-Request-Id` header. Unknown query parameters and unknown body fields are rejected with 400 `unknown_parameter`, naming them in `param`. A request body not all sent within 10 s of the headers is answered 408 `body_timeout`. A path with a trailing slash is no endpoint (404). A request line over the limit on the request line and headers (16 KiB by default) is answered 414 `uri_too_long`, headers over it 431 `headers_too_large`; a method a path does not take, 405 `method_not_allowed` with an `Allow` header.\n\nWebhook deliveries follow Standard Webhooks: headers `webhook-id` (the same on every retry), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of \"{id}.{timestamp}.{body}\">` keyed by the subscription's `whsec_` secret; body `{\"type\": \"job.new\", \"timestamp\", \"data\": {job}}`. Only 2xx is success; redirects are not followed; 410 disables the subscription; failures are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (with jitter, honouring Retry-After). A subscription is sent nothing while the API key that registered it is revoked, its billing is not active or its plan no longer includes webhooks: new jobs are not announced to it then, and deliveries that come due fail with a `last_error` saying so. A disabled subscription takes no test pings (409 `webhook_disabled`); `PATCH /api/v1/webhooks/{id}` with `{\"status\": \"active\"}` enables it again, with the same id and secret.\n\nBesides the monthly quota (429 `quota_exceeded`), a server may apply a per-key request rate by plan (the bundled server: developer 10/s, agent_pro 50/s, enterprise 200/s, with bursts of 50/200/1000); going faster is answered 429 `rate_limited` with `Retry-After`, and such calls are not counted. Requests without a valid key (`OPTIONS`, this document, and whatever is refused without one: 401, 404, 405…) have a budget per client address (the bundled server: 20 a second with bursts of 100); beyond it they are answered 429 `rate_limited` with `Retry-After` too.\n\n## Compression\nAnswers to `GET` with a JSON body of 1 KiB or more are compressed as the request's `Accept-Encoding` asks, quality values honoured: `zstd`, `br` (brotli) or `gzip`; equal ones in that order of preference; `identity` (as it is) when none is accepted or when `identity` is rated above them. Such answers carry `Vary: accept-encoding`. `HEAD` answers, 304s, 204s and problem documents are never compressed. A request that refuses `identity` and every coding offered is answered 406 `not_acceptable`. Request bodies are read only as sent (415 `unsupported_content_encoding` otherwise).\n\n## Conditional requests\n`GET /jobs`, `GET /jobs/{id}`, `GET /companies`, `GET /companies/{id}`, `GET /usage` and this document carry a strong `ETag` that changes exactly when the answer does. Send it back in `If-None-Match` (a list, `*` or a `W/` tag also work; tags are compared weakly and in any coding): while nothing on it changed the answer is `304 Not Modified` without a body, with the quota headers, and counted in neither the monthly quota nor `GET /usage`, even with the quota used up. A 304 is still within the key's per-second rate limit, which protects the server rather than bills the client. Tagged answers say `Cache-Control: private, no-cache`.\n\n## CORS\nOff unless the server is started with allowed origins (`--cors-origin`, repeatable, or `*`). For an allowed `Origin`, preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered 204 with `Access-Control-Allow-Methods` (the path's methods), `Access-Control-Allow-Headers` (`Authorization, X-API-Key, Content-Type, If-None-Match, Idempotency-Key, X-Request-Id`, and for MCP at `/mcp` `Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name`) and `Access-Control-Max-Age`, without a key; other answers carry `Access-Control-Allow-Origin` and `Access-Control-Expose-Headers` (the quota headers, `Retry-After`, `ETag`, `Location`, `X-Request-Id`, `Mcp-Session-Id`, `MCP-Protocol-Version`). Credentials (cookies) are never allowed: send the key in a header.\n\n## Vocabularies and facets\nDomain tags, seniority levels and funding stages are open vocabularies: an operator may import any well-formed label, so the values listed in this document are examples of typical data (the demo data uses domains engineering, ai, design, product, data, devops, security, marketing, sales, finance, operations, research; seniority intern, junior, mid, senior, staff, principal, lead, manager, director; funding stages pre_seed, seed, series_a, series_b, series_c, series_d, growth, public, bootstrapped), not a closed list. To learn the labels a server holds now, ask for facets: `GET /api/v1/jobs?facets=domain,seniority,remote` and `GET /api/v1/companies?facets=funding_stage` answer `meta.facets` with every value the matches hold and how many hold it, counted over the whole filtered result (not only the page), at no extra charge: it is the same one call. A filter value that nothing holds (no active job for `domain` and `seniority`, no company for `funding_stage`) is not an error, since the vocabulary is open: the answer is a 200 (usually empty) whose `meta.warnings` carries one `unknown_value` warning per such value, naming the known values (at most the 100 most common). `meta.warnings` is absent when there is nothing to warn about.",
    servers: || json!([{"url": "/"}]),
    security: || json!([{"ApiKeyHeader": []}, {"BearerAuth": []}]),
    security_schemes: || json!({"ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "API key in the X-API-Key header."}, "BearerAuth": {"type": "http", "scheme": "bearer", "description": "API key as a bearer token."}}),
    tags: &[("jobs", "Job listings."), ("companies", "Companies and their active jobs."), ("webhooks", "Webhook subscriptions for new job listings."), ("usage", "Plan and quota usage."), ("meta", "API metadata.")],
};

/// The headers answers carry.
pub(crate) const HEADERS: &[Header] = &[
    Header { name: "X-RateLimit-Limit", description: "Monthly call quota of the plan.", schema: || json!({"type": "integer"}) },
    Header { name: "X-RateLimit-Remaining", description: "Calls remaining in the current period.", schema: || json!({"type": "integer"}) },
    Header { name: "X-RateLimit-Reset", description: "Unix time (seconds) when the current period ends.", schema: || json!({"type": "integer"}) },
    Header { name: "RateLimit-Policy", description: "Quota policy (IETF RateLimit headers draft).", schema: || json!({"type": "string"}) },
    Header { name: "RateLimit", description: "Current quota state (IETF RateLimit headers draft).", schema: || json!({"type": "string"}) },
    Header { name: "X-Request-Id", description: "Unique identifier of the request.", schema: || json!({"type": "string"}) },
    Header { name: "WWW-Authenticate", description: "Authentication challenge.", schema: || json!({"type": "string"}) },
    Header { name: "Retry-After", description: "Seconds to wait before retrying.", schema: || json!({"type": "integer"}) },
    Header { name: "Location", description: "URL of the created resource.", schema: || json!({"type": "string"}) },
    Header { name: "Idempotent-Replayed", description: "true on an answer repeated for an Idempotency-Key already used; absent otherwise.", schema: || json!({"type": "string", "enum": ["true"]}) },
    Header { name: "ETag", description: "Strong entity tag of this answer: a hash of what it is made of (the query, and the ids and update times of the records on it), the coding's name appended when the body is compressed (`\"…-br\"`). Send it back in `If-None-Match` to be answered 304 while nothing on it changed.", schema: || json!({"type": "string"}) },
    Header { name: "Vary", description: "`accept-encoding`: the body's coding follows the request's `Accept-Encoding`. With CORS origins configured (not `*`), also `origin`.", schema: || json!({"type": "string"}) },
    Header { name: "Content-Encoding", description: "The body's content coding when compressed: `zstd`, `br` or `gzip`, as the request's `Accept-Encoding` and its quality values chose. Bodies under 1 KiB, `HEAD` answers, 304s and problem documents are sent as they are.", schema: || json!({"type": "string", "enum": ["zstd", "br", "gzip"]}) },
    Header { name: "Cache-Control", description: "`private, no-cache` on tagged answers: the client's own cache may keep them, to revalidate with `If-None-Match`.", schema: || json!({"type": "string"}) },
    ACCEPT_ENCODING,
];

/// The answers that are not an operation's own: errors, and `304`.
pub(crate) const RESPONSES: &[Response] = &[
    Response { name: "BadRequest", status: 400, description: "Invalid request: malformed or unknown parameter, or invalid body (codes invalid_parameter, unknown_parameter, invalid_body).", headers: &["X-Request-Id"], problem: true },
    Response { name: "Unauthorized", status: 401, description: "Missing or invalid API key, or inactive billing (codes missing_api_key, invalid_api_key, billing_inactive).", headers: &["WWW-Authenticate", "X-Request-Id"], problem: true },
    Response { name: "Forbidden", status: 403, description: "The plan of the API key does not allow this operation (code plan_upgrade_required).", headers: &["X-Request-Id"], problem: true },
    Response { name: "NotFound", status: 404, description: "Resource not found (code not_found).", headers: &["X-Request-Id"], problem: true },
    Response { name: "Conflict", status: 409, description: "Conflict with the current state: the webhook limit per API key was reached (code webhook_limit_reached), the Idempotency-Key was first sent with other fields (code idempotency_key_reused; send a new key for a new request), or the webhook is disabled (code webhook_disabled; enable it again with PATCH /api/v1/webhooks/{id} and {\"status\": \"active\"} once its receiver works).", headers: &["X-Request-Id"], problem: true },
    Response { name: "PayloadTooLarge", status: 413, description: "Request body too large (code body_too_large).", headers: &["X-Request-Id"], problem: true },
    Response { name: "RequestTimeout", status: 408, description: "A request body was started and not all sent within the body timeout (10 s by default) of the headers (code body_timeout); the connection is closed. Any method: a body is read before the request is looked at.", headers: &["X-Request-Id"], problem: true },
    Response { name: "UnsupportedMediaType", status: 415, description: "Request body is not application/json (code unsupported_media_type), or was sent compressed: a Content-Encoding other than identity (code unsupported_content_encoding; the answer's Accept-Encoding says identity).", headers: &["X-Request-Id", "Accept-Encoding"], problem: true },
    Response { name: "TooManyRequests", status: 429, description: "Monthly quota exceeded or rate limited (codes quota_exceeded, rate_limited; a request without a valid key, beyond its address's budget, gets rate_limited too). A rate_limited answer's RateLimit-Policy and RateLimit list the per-second bucket after the monthly quota, as \"burst\";q=<burst>;w=<seconds a refill takes> and \"burst\";r=0;t=<seconds until a retry>.", headers: &["Retry-After", "RateLimit-Policy", "RateLimit", "X-Request-Id"], problem: true },
    Response { name: "UriTooLong", status: 414, description: "The request line (method and URL) alone is over the limit on the request line and headers, 16 KiB by default (code uri_too_long): shorten the query string.", headers: &["X-Request-Id"], problem: true },
    Response { name: "HeadersTooLarge", status: 431, description: "The request line and headers together are over the limit, 16 KiB by default (code headers_too_large): send fewer or shorter headers.", headers: &["X-Request-Id"], problem: true },
    Response { name: "InternalError", status: 500, description: "Our fault, not the request's (code internal): the detail leaks nothing of the cause, and the request_id finds it in the server's logs.", headers: &["X-Request-Id"], problem: true },
    Response { name: "NotModified", status: 304, description: "The copy named in `If-None-Match` is still the answer: no body, not counted in the quota or the usage (the key's per-second rate still applies). Carries the answer's `ETag`, `Vary` and, for a key, the quota headers.", headers: &["ETag", "Vary", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit", "X-Request-Id"], problem: false },
    Response { name: "NotAcceptable", status: 406, description: "`Accept-Encoding` refuses `identity` (`identity;q=0`, or `*;q=0` without naming it) and accepts none of `zstd`, `br` and `gzip` (code not_acceptable).", headers: &["X-Request-Id"], problem: true },
    Response { name: "Gone", status: 410, description: "The change feed cannot go on from this cursor (code cursor_expired): it is older than the retention window, or after the newest event (data restored from an older backup, or another deployment's cursor). Take a new cursor with `after=now`, sync with `GET /jobs`, then follow from the new cursor.", headers: &["X-Request-Id"], problem: true },
];

/// `page`, in the query.
pub(crate) const PAGE: Param = Param {
    component: Some("Page"),
    name: "page",
    at: In::Query,
    required: false,
    description: "Page number (1-based).",
    brief: "Page, from 1.",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": 1000000, "default": 1}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `per_page`, in the query.
pub(crate) const PER_PAGE: Param = Param {
    component: Some("PerPage"),
    name: "per_page",
    at: In::Query,
    required: false,
    description: "Items per page.",
    brief: "Results per page.",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": 50, "default": 20}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `per_page` of `GET /jobs/{id}/similar`: fewer by default than a search's.
pub(crate) const SIMILAR_PER_PAGE: Param = Param {
    component: None,
    name: "per_page",
    at: In::Query,
    required: false,
    description: "How many similar jobs, 1 to 50.",
    brief: "How many similar jobs (default 10).",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": 50, "default": 10}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `id`, in the path.
pub(crate) const ID: Param = Param {
    component: Some("Id"),
    name: "id",
    at: In::Path,
    required: true,
    description: "Resource identifier (UUID). A malformed id yields 400.",
    brief: "Its id (UUID).",
    schema: || json!({"type": "string", "format": "uuid"}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `If-None-Match`, in the header.
pub(crate) const IF_NONE_MATCH: Param = Param {
    component: Some("IfNoneMatch"),
    name: "If-None-Match",
    at: In::Header,
    required: false,
    description: "Entity tags of copies the client holds (from `ETag`), comma-separated, or `*`. Compared weakly (a `W/` prefix is ignored) and in any coding. When one names the current answer, the answer is 304 Not Modified without a body, counted in neither the quota nor the usage. An item that is not an entity tag is ignored.",
    brief: "Entity tags of copies held: 304 when one is current.",
    schema: || json!({"type": "string"}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `facets`, in the query.
pub(crate) const JOB_FACETS: Param = Param {
    component: None,
    name: "facets",
    at: In::Query,
    required: false,
    description: "Comma-separated facets to count over all the matches (not only this page), answered in `meta.facets`: any of `domain`, `seniority`, `remote`, `country`. The counts list every value the matches hold, so they are also how to discover the labels in use. Names are case-insensitive; another name is answered 400 `invalid_parameter` naming the facets there are. Counted as part of the one call.",
    brief: "Count by: domain, seniority, remote, country.",
    schema: job_facets_schema,
    form: Form::List,
    example: Some("domain,seniority,remote"),
    examples: &[],
};

/// A comma list of facet names in any case, as a pattern made from the engine's names.
fn job_facets_schema() -> serde_json::Value {
    let any_case = |name: &str| -> String {
        name.chars()
            .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c))
            .collect()
    };
    let names: Vec<String> = crate::query::Facet::NAMES
        .iter()
        .map(|n| any_case(n))
        .collect();
    let name = format!("(?:{})", names.join("|"));
    json!({"type": "string", "pattern": format!("^ *{name}? *(, *{name}? *)*$")})
}

/// `sort`, in the query.
pub(crate) const SORT: Param = Param {
    component: None,
    name: "sort",
    at: In::Query,
    required: false,
    description: "Order of the results: `posted_at` (newest first, ties by id) or `relevance` (needs `q`: highest BM25 score first, ties newest first then by id; the same matches and total). BM25 over a job's words: its role's twice, then its company name's and its post's; k1 1.2, b 0.75; idf ln(1 + (N - n + 0.5)/(n + 0.5)) over the N active jobs, n of which hold the word.",
    brief: "posted_at (newest first) or relevance (best q match).",
    schema: || json!({"type": "string", "enum": ["posted_at", "relevance"], "default": "posted_at"}),
    form: Form::Plain,
    example: Some("relevance"),
    examples: &[],
};

/// `highlight`, in the query.
pub(crate) const HIGHLIGHT: Param = Param {
    component: None,
    name: "highlight",
    at: In::Query,
    required: false,
    description: "When true, each job gets `match`: `terms`, the words of `q` it holds (in `q`'s order), and `snippet`, at most 240 characters of its post around the first of them with each found word wrapped in `**`.",
    brief: "true: add match {terms, snippet} to each job.",
    schema: || json!({"type": "boolean", "default": false}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `fields`, in the query.
pub(crate) const FIELDS: Param = Param {
    component: None,
    name: "fields",
    at: In::Query,
    required: false,
    description: "Comma-separated top-level job fields to send, and no others (`id` always comes); any other name is answered 400 `invalid_parameter` with the names in `allowed`. Smaller answers for agents that pay per token.",
    brief: "Only these job fields (id always), e.g. role, salary.",
    schema: fields_schema,
    form: Form::List,
    example: Some("id,role,company_name"),
    examples: &[],
};

/// A comma list of job fields, as a pattern made from the fields a job is rendered with.
fn fields_schema() -> serde_json::Value {
    let name = format!("(?:{})", crate::api::render::JOB_FIELDS.join("|"));
    json!({"type": "string", "pattern": format!("^ *{name}? *(, *{name}? *)*$")})
}

/// `funding_stage`, in the query.
pub(crate) const FUNDING_STAGE: Param = Param {
    component: None,
    name: "funding_stage",
    at: In::Query,
    required: false,
    description: "Filter by funding stage. Case-insensitive; spaces and hyphens count as underscores (\"Series A\" = series_a). Empty means no filter. The vocabulary is open; typical stages: pre_seed, seed, series_a, series_b, series_c, series_d, growth, public, bootstrapped. `facets=funding_stage` lists the stages in use with their counts; a stage no company has gives a warning in `meta.warnings`.",
    brief: "Only companies at this funding stage, e.g. seed, series_a.",
    schema: || json!({"type": "string", "pattern": "^[A-Za-z0-9 _-]{0,40}$"}),
    form: Form::Exploded,
    example: Some("series_a"),
    examples: &[],
};

/// `facets`, in the query.
pub(crate) const COMPANY_FACETS: Param = Param {
    component: None,
    name: "facets",
    at: In::Query,
    required: false,
    description: "`funding_stage` (any case) to count the listed companies (all pages) by funding stage, answered in `meta.facets`; another name is answered 400 `invalid_parameter`. Counted as part of the one call.",
    brief: "Count companies by: funding_stage.",
    schema: || json!({"type": "string", "pattern": "^ *(?:[Ff][Uu][Nn][Dd][Ii][Nn][Gg]_[Ss][Tt][Aa][Gg][Ee])? *(, *(?:[Ff][Uu][Nn][Dd][Ii][Nn][Gg]_[Ss][Tt][Aa][Gg][Ee])? *)*$"}),
    form: Form::Exploded,
    example: Some("funding_stage"),
    examples: &[],
};

/// `Idempotency-Key`, in the header.
pub(crate) const IDEMPOTENCY_KEY: Param = Param {
    component: None,
    name: "Idempotency-Key",
    at: In::Header,
    required: false,
    description: "A key of your choosing, unique per request you mean to make once (a UUID is a good choice): 1 to 255 visible ASCII characters without spaces.",
    brief: "A key that makes a retried create happen once.",
    schema: || json!({"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}),
    form: Form::Plain,
    example: None,
    examples: &[],
};

/// `after`, in the query.
pub(crate) const AFTER: Param = Param {
    component: None,
    name: "after",
    at: In::Query,
    required: false,
    description: "Where to continue from: the `next_cursor` of the previous page (or an event's `cursor`), as given. Left out, the feed starts at the oldest event it still holds; `now` starts at the newest, giving an empty page whose `next_cursor` is where to follow from (take it before a full `GET /jobs` sync, then follow from it). A cursor the feed cannot go on from is answered 410 `cursor_expired`: one older than the retention window, or one after the newest event (the data was restored from an older backup, or the cursor is another deployment's).",
    brief: "Cursor to continue from: now, or a next_cursor.",
    schema: || json!({"type": "string", "pattern": "^(now|A[Q-Za-f][A-Za-z0-9_-]{10})$"}),
    form: Form::Exploded,
    example: None,
    examples: &[("start_now", "now")],
};

/// `limit`, in the query.
pub(crate) const LIMIT: Param = Param {
    component: None,
    name: "limit",
    at: In::Query,
    required: false,
    description: "Most events on the page, 1 to 500; default 100. A page may hold fewer while `has_more` is true: one request reads at most 4,096 events, and at most 2 MiB of their jobs' text for `q` or `company`, to find matches for its filters.",
    brief: "Events per page.",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": 500, "default": 100}),
    form: Form::Exploded,
    example: None,
    examples: &[],
};
