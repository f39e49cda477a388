//! Every error code the API answers with, declared once: its status, title and when it is
//! given. The error table (`error.rs`) builds every answer from one of these; the docs' error
//! table and the OpenAPI documents are checked against [`ErrorCode::ALL`].

use http::StatusCode;

/// Declares the codes, each as `Variant = status, "code", "Title", "when it is given"`.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $status:ident, $code:literal, $title:literal, $when:literal;)+) => {
        /// A stable error code of the API's problem documents (`code`), with the status and
        /// title it always comes with.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* #[doc = $when] $variant,)+
        }

        impl ErrorCode {
            /// Every code, in the order declared.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The code as problem documents carry it, such as `quota_exceeded`.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code,)+ }
            }

            /// The HTTP status an answer with this code has.
            pub const fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::$status,)+ }
            }

            /// The problem document's `title`.
            pub const fn title(self) -> &'static str {
                match self { $(ErrorCode::$variant => $title,)+ }
            }

            /// When the API answers with it, in a sentence.
            pub const fn when(self) -> &'static str {
                match self { $(ErrorCode::$variant => $when,)+ }
            }

            /// A problem document of this code, saying `detail`.
            pub fn problem(self, detail: impl Into<String>) -> crate::wire::Problem {
                crate::wire::Problem::new(self.as_str(), self.status().as_u16(), self.title(), detail)
            }
        }
    };
}

error_codes! {
    InvalidParameter = BAD_REQUEST, "invalid_parameter", "Invalid parameter",
        "A query, path or body value is malformed or out of range; `param` names it.";
    UnknownParameter = BAD_REQUEST, "unknown_parameter", "Unknown parameter",
        "A query parameter or body field the endpoint does not take; `allowed` lists those it does.";
    InvalidBody = BAD_REQUEST, "invalid_body", "Invalid request body",
        "The body is not the JSON the endpoint takes, or could not be read.";
    MissingApiKey = UNAUTHORIZED, "missing_api_key", "Missing API key",
        "Neither `X-API-Key` nor `Authorization: Bearer` was sent.";
    InvalidApiKey = UNAUTHORIZED, "invalid_api_key", "Invalid API key",
        "The key is malformed, unknown or revoked.";
    MissingAdminToken = UNAUTHORIZED, "missing_admin_token", "Missing admin token",
        "An admin call without `Authorization: Bearer <admin token>`.";
    InvalidAdminToken = UNAUTHORIZED, "invalid_admin_token", "Invalid admin token",
        "An admin call with a token that is not the admin token.";
    BillingInactive = UNAUTHORIZED, "billing_inactive", "Billing inactive",
        "The key's billing is past due or cancelled.";
    PlanUpgradeRequired = FORBIDDEN, "plan_upgrade_required", "Plan upgrade required",
        "The key's plan does not include the endpoint.";
    QuotaExceeded = TOO_MANY_REQUESTS, "quota_exceeded", "Monthly quota exceeded",
        "The key has used every call of its billing period; `Retry-After` runs to its end.";
    RateLimited = TOO_MANY_REQUESTS, "rate_limited", "Rate limited",
        "Over the key's per-second rate, or over the budget of requests without a valid key.";
    TooManySessions = TOO_MANY_REQUESTS, "too_many_sessions", "Too many MCP sessions",
        "`/mcp` only: a new session would be one more than the key or server may hold.";
    TooManyStreams = TOO_MANY_REQUESTS, "too_many_streams", "Too many MCP event streams",
        "`/mcp` only: one more event stream than a session may hold.";
    TooManyUploads = TOO_MANY_REQUESTS, "too_many_uploads", "Too many bulk uploads",
        "Admin API only: more bulk uploads at once than the server reads.";
    NotFound = NOT_FOUND, "not_found", "Not found",
        "No such path, resource or MCP session.";
    MethodNotAllowed = METHOD_NOT_ALLOWED, "method_not_allowed", "Method not allowed",
        "The path does not take the method; `Allow` lists those it does.";
    IdempotencyKeyReused = CONFLICT, "idempotency_key_reused", "Idempotency key reused",
        "An `Idempotency-Key` first sent with other fields.";
    WebhookDisabled = CONFLICT, "webhook_disabled", "Webhook disabled",
        "A test delivery to a disabled subscription.";
    WebhookLimitReached = CONFLICT, "webhook_limit_reached", "Limit reached",
        "The key holds as many subscriptions as it may.";
    CompanyHasJobs = CONFLICT, "company_has_jobs", "Company has jobs",
        "Admin API only: deleting a company that active jobs still name.";
    BackupInProgress = CONFLICT, "backup_in_progress", "Backup in progress",
        "Admin API only: a backup while another is being written.";
    CursorExpired = GONE, "cursor_expired", "Cursor expired",
        "A change feed cursor older than the events kept.";
    Unsupported = NOT_IMPLEMENTED, "unsupported", "Not supported",
        "Admin API only: what the store cannot do (a backup of PostgreSQL, say).";
    InsufficientStorage = INSUFFICIENT_STORAGE, "insufficient_storage", "Insufficient storage",
        "Admin API only: the backup would not fit on the target's disk.";
    BodyTimeout = REQUEST_TIMEOUT, "body_timeout", "Request body timed out",
        "The body did not arrive in time.";
    BodyTooLarge = PAYLOAD_TOO_LARGE, "body_too_large", "Body too large",
        "The body is larger than the limit.";
    HeadersTooLarge = REQUEST_HEADER_FIELDS_TOO_LARGE, "headers_too_large", "Request headers too large",
        "The request line and headers are larger than the limit.";
    UriTooLong = URI_TOO_LONG, "uri_too_long", "URI too long",
        "The request line alone is larger than the limit.";
    UnsupportedMediaType = UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", "Unsupported media type",
        "The body is not of the media type the endpoint reads.";
    UnsupportedContentEncoding = UNSUPPORTED_MEDIA_TYPE, "unsupported_content_encoding", "Unsupported content encoding",
        "The body was sent compressed.";
    NotAcceptable = NOT_ACCEPTABLE, "not_acceptable", "Not acceptable",
        "`Accept-Encoding` refuses every coding the answer could have.";
    Internal = INTERNAL_SERVER_ERROR, "internal", "Internal error",
        "A failure of ours: the body carries the request id, the detail is in the log.";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_declared_once_and_is_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(s.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{s}");
            assert!(code.status().is_client_error() || code.status().is_server_error());
        }
    }
}
